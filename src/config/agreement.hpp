// What the ranks of a communicator must have alike to decide alike.
//
// A decision is a pure function of the call and of the configuration: the
// model (by content), the overrides, the decision table, the disable switch
// and hetcoll's version — every setting the settings table marks `agreed`,
// and the version. Ranks whose configurations differ would run different
// algorithms and hang or return wrong results, so when hetcoll sets a
// communicator up its ranks exchange one 64-bit digest of their
// configuration (with the host keys it gathers anyway: no extra collective),
// and where the digests differ every rank of that communicator runs the
// native collectives, and its rank 0 says which setting differs between
// which ranks (interpose/comm_state.cpp does the exchange; this file is the
// data and the words, without MPI).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hetcoll {

// One input of every decision, as one rank has it in effect.
struct ConfigPart {
  std::string name;     // a setting ("HETCOLL_ALGO") or "the hetcoll version"
  uint64_t digest = 0;  // of its effective value, by content (a file's text, not its path)
  std::string shown;    // the value as a message names it ("allreduce:0-inf:@ring_allreduce", a path)
};

struct Fingerprint {
  std::vector<ConfigPart> parts;
  // All parts in one number: what the ranks of a communicator exchange.
  uint64_t digest() const;
  // The text form the ranks send to rank 0 when the digests differ: a line
  // a part, "name<TAB>digest<TAB>shown". Robust to another hetcoll version
  // on the other side: unknown names are compared like the others.
  std::string encode() const;
  // Reads encode()'s form; lines that do not parse are skipped.
  static Fingerprint decode(std::string_view text);
};

// Longest value a message shows (longer ones are cut, with "...").
constexpr size_t kShownChars = 100;

// The parts that differ between the ranks, and between which ranks, in one
// line: "HETCOLL_ALGO is 'allreduce:0-inf:@ring_allreduce' on rank 0 but
// 'none' on ranks 1-2". by_rank[i] is rank i's fingerprint; world_ranks
// (empty: the same) names the ranks in MPI_COMM_WORLD where they differ
// from the communicator's. "" when nothing differs.
std::string describe_disagreement(const std::vector<Fingerprint>& by_rank, const std::vector<int>& world_ranks = {});

// Ranks as ranges: {0, 2, 3, 4, 9} -> "0,2-4,9", {1, 2} -> "1-2" (sorted, distinct).
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace hetcoll

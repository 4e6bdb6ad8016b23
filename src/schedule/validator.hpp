// The validator proves a schedule does what its collective promises.
//
//  1. structure: peers in the group, no self-messages, slices inside their
//     buffers, nothing written to `in`, reductions on whole elements;
//  2. matching: the k-th send i→j and the k-th recv at j from i agree in size,
//     and every message has both ends;
//  3. deadlock: no cycle even when every send completes only after its
//     receive is posted (rendezvous, as MPI does for large messages);
//  4. races: two ops of a rank that touch the same bytes, one writing, are
//     ordered by dependencies;
//  5. symbolic data flow: executing the schedule on symbols (each byte holds
//     a combination of contributions, kept as a hash-consed expression tree)
//     ends with every rank holding exactly what the collective promises:
//     each contribution exactly once, at the right element, and bytes outside
//     the result untouched. For barrier: every rank has heard, causally, from
//     every other rank.
//
// It also reports whether all ranks of an allreduce hold the identical
// combination tree (same association order), which is what floating-point
// reproducibility across ranks needs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "schedule/schedule.hpp"

namespace hetcoll {

struct ValidationOptions {
  // In-place calls: per rank, the byte offset of `in` relative to `out` when
  // both live in one user buffer (in = out + offset; negative: out lies inside
  // in). Empty, or nullopt for a rank: separate buffers.
  std::vector<std::optional<int64_t>> in_minus_out;
  bool check_races = true;
  size_t max_errors = 12;
  // Pieces of byte contents read and written, and accesses checked for
  // races, at most (0: no bound): past it validate() throws TooLarge. A
  // message carrying every rank's block (an allgather at thousands of
  // ranks) is thousands of pieces: the work follows them, not the ops.
  uint64_t work_limit = 0;
};

struct ValidationReport {
  bool ok = true;
  std::vector<std::string> errors;
  bool rank_consistent = true;  // allreduce: identical combination trees on all ranks
  uint64_t messages = 0;
  uint64_t bytes = 0;
  std::string summary() const;  // "ok: 14 messages, 1400 bytes" or the first errors
};

ValidationReport validate(const Schedule& s, const ValidationOptions& opt = {});

// Throws ScheduleError with the report's summary if the schedule is not valid.
void validate_or_throw(const Schedule& s, const ValidationOptions& opt = {});

// Message matching (also used by the simulator and the executor): for every
// send its recv's global op id, for every recv its send's; ~0 if unmatched.
struct Matching {
  std::vector<uint64_t> partner;  // indexed by global op id
  std::vector<std::string> errors;
};
Matching match_messages(const Schedule& s, size_t max_errors = 12);

}  // namespace hetcoll

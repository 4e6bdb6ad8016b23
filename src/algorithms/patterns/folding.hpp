// Recursive halving and doubling with the extra ranks of a group that is
// no power of two folded into the core (Fold, PairFold in common.hpp): the
// steps and layouts that several generators of that family share.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "algorithms/patterns/common.hpp"

namespace hetcoll {

// The fold= parameter of the algorithms that fold by Fold or PairFold.
ParamSpec fold_param();

// Rabenseifner's first half (rabenseifner_reduce, rabenseifner_allreduce):
// core member v's recursive-halving reduce-scatter of its `work`, the
// vector in f.core even `blocks`. Its extra partner's vector is received
// into a scratch slot and combined first; then, at distances core/2, …, 1
// between positions (pos: a member's position, its own inverse), it sends
// the half of its range that the partner keeps and combines the half it
// receives, so that position pos(v) ends with its block combined over all.
// rank_of: a member's schedule rank.
void fold_and_halve(Builder& b, const Fold& f, int v, const Slice& work, const Blocks& blocks,
                    const std::function<int(int)>& rank_of, const std::function<int(int)>& pos);
// Their cost where p is a power of two dividing the count (else nullopt):
// 2 log2 p α + 2(p-1)/p nβ + (p-1)/p nγ.
std::optional<Terms> rabenseifner_terms(const Collective& c);

// Blocks held by "virtual ranks" (recursive_doubling_allgather,
// recursive_halving_reduce_scatter): position k of the core holds core rank
// q = core_rank(k)'s block and then, if q has one (partner(q) >= 0), its
// extra partner's, contiguously, positions ascending.
struct FoldedLayout {
  std::vector<uint64_t> voff;  // per position: where its blocks start; voff[core]: the end
  std::vector<uint64_t> at;    // per rank: where its block lies
  uint64_t total() const { return voff.back(); }
  // Bytes [voff[a], voff[e]) of positions a … e-1.
  uint64_t span(int a, int e) const { return voff[size_t(e)] - voff[size_t(a)]; }
};
FoldedLayout folded_layout(const Blocks& blocks, int core, const std::function<int(int)>& core_rank,
                           const std::function<int(int)>& partner);
// What their rounds price: the call's blocks, the fold, all the bytes, the
// largest block and `per`, a core position's share (total / core, rounded
// up). nullopt where a block is empty: the schedule leaves its messages
// out, which rounds do not describe.
struct FoldedSizes {
  Blocks blocks;
  Fold f;
  uint64_t total, bl, per;
};
std::optional<FoldedSizes> folded_sizes(const Collective& c);

}  // namespace hetcoll

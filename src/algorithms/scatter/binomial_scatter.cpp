// binomial_scatter — InterCom's MST scatter (§4.1) for scatter and scatterv.
//
// Like the broadcast, but at each stage the holder sends only the blocks
// that end up in the other half: the holder of blocks [lo, hi) keeps the
// half with itself (⌈len/2⌉ blocks) and sends the rest, one contiguous
// message, to a leader there. Ranks that pass blocks on stage them in
// scratch; scatterv with displacements that are not in rank order is packed
// first.
// Steps: ⌈log2 p⌉; p-1 messages; the root sends (p-1) blocks in all.
// Cost: ceil(log2 p) alpha + (p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/rooted_blocks.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) { return mst_blocks(ctx, "binomial_scatter"); }
}  // namespace

Algorithm binomial_scatter_algorithm() {
  return Algorithm{{CollOp::scatter, CollOp::scatterv}, generate, mst_blocks_terms};
}
}  // namespace hetcoll

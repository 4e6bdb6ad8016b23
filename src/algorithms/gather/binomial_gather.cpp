// binomial_gather — InterCom's MST gather (§4.1), the scatter reversed, for
// gather and gatherv.
//
// Leaders collect their half's blocks (in scratch) and send them to the
// holder as one message. The root receives straight into `out` when the
// displacements are in rank order, else into scratch and copies.
// Steps: ⌈log2 p⌉; p-1 messages; the root receives (p-1) blocks in all.
// Cost: ceil(log2 p) alpha + (p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/rooted_blocks.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) { return mst_blocks(ctx, "binomial_gather"); }
}  // namespace

Algorithm binomial_gather_algorithm() {
  return Algorithm{{CollOp::gather, CollOp::gatherv}, generate, mst_blocks_terms};
}
}  // namespace hetcoll

// binomial_tree — broadcast by recursive halving (Bruck et al. §2.1).
//
// The source keeps ⌈n/2⌉ nodes, sends to the first node of the other ⌊n/2⌋,
// and both halves go on concurrently. Any n, any root.
// Steps: ⌈log2 n⌉ rounds in the one-port model; n-1 messages of m bytes; the
//        source sends ⌈log2 n⌉ of them. In the postal model with λ = 2 and
//        n = 8 it finishes at 6 where the λ-tree needs 5 (Figs. 1b, 2).
// Same tree as α-partition with α = 0.5 and as InterCom's MST broadcast.
// Cost: ceil(log2 p)(alpha + m beta)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/registry.hpp"

namespace hetcoll {

Tree binomial_tree(int n) {
  return partition_tree(n, [](uint64_t k) { return (k + 1) / 2; });
}

namespace {
Schedule generate_binomial(const GenContext& ctx) {
  return bcast_along_tree(ctx, "binomial_tree", binomial_tree(ctx.coll.nranks), false);
}
}  // namespace

Algorithm binomial_tree_algorithm() {
  Algorithm a{{CollOp::bcast}, generate_binomial};
  // The last leaf hears ⌈log2 p⌉ hops from the root, λ each (Fig. 1b: 3λ for 8).
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    return postal_estimate(ctx, [&](double lambda) { return double(ceil_log2(uint64_t(ctx.coll.nranks))) * lambda; });
  };
  return a;
}

}  // namespace hetcoll

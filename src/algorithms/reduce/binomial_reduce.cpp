// binomial_reduce — combine-to-one along the binomial tree reversed
// (InterCom §4.1 "MST combine-to-one": the broadcast's communication in
// reverse order, interleaved with the combine).
//
// Every rank receives its children's partial results (smallest subtree
// first), combines them into its own, and sends the result to its parent.
// Steps: ⌈log2 p⌉ levels; p-1 messages of m bytes; p-1 combines of m bytes.
// Cost: ceil(log2 p)(alpha + m beta + m gamma)
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  return reduce_to_root(ctx, "binomial_reduce", binomial_tree(ctx.coll.nranks));
}
}  // namespace

Algorithm binomial_reduce_algorithm() {
  Algorithm a{{CollOp::reduce}, generate};
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    return tree_reduce_estimate(ctx, double(ceil_log2(uint64_t(ctx.coll.nranks))), 1);
  };
  return a;
}
}  // namespace hetcoll

// binomial_reduce — combine-to-one along the binomial tree reversed
// (InterCom §4.1 "MST combine-to-one": the broadcast's communication in
// reverse order, interleaved with the combine).
//
// Every rank receives its children's partial results (smallest subtree
// first), combines them into its own, and sends the result to its parent.
// Steps: ⌈log2 p⌉ levels; p-1 messages of m bytes; p-1 combines of m bytes.
// Cost: ⌈log2 p⌉(α + mβ + mγ).
#include "algorithms/all.hpp"
#include "algorithms/broadcast_trees.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  Builder b = make_builder(ctx, "binomial_reduce");
  reduce_along_tree(b, binomial_tree(ctx.coll.nranks), ctx.coll.root, vector_bytes(ctx.coll), false);
  return b.finish();
}
}  // namespace

Algorithm binomial_reduce_algorithm() {
  Algorithm a;
  a.name = "binomial_reduce";
  a.ops = {CollOp::reduce};
  a.description = "binomial tree reversed: combine children's results, pass up (InterCom's MST combine-to-one)";
  a.steps = "ceil(log2 p)";
  a.bytes = "m per message, p-1 messages";
  a.cost = "ceil(log2 p)(alpha + m beta + m gamma)";
  a.source = "InterCom §4.1; Bruck et al. §2.1 tree";
  a.generate = generate;
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    return tree_reduce_estimate(ctx, double(ceil_log2(uint64_t(ctx.coll.nranks))), 1);
  };
  return a;
}
}  // namespace hetcoll

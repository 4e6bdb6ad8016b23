// reduce_bcast — combine-to-all as combine-to-one followed by broadcast
// (InterCom §5.1, the short-vector combine-to-all).
//
// Binomial combine to rank 0, then binomial broadcast of the result. Every
// rank ends with the root's bits, so floating-point results are identical.
// Steps: 2⌈log2 p⌉; 2(p-1) messages of m bytes.
// Cost: 2 ceil(log2 p) alpha + 2 ceil(log2 p) m beta + ceil(log2 p) m gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  const uint64_t m = vector_bytes(ctx.coll);
  Builder b = make_builder(ctx, "reduce_bcast");
  Tree t = binomial_tree(p);
  reduce_along_tree(b, t, 0, m, true);
  tree_bcast(b, Group::all(p), t, 0, {Buf::out, 0, m});
  return b.finish();
}
// Exact for powers of two (InterCom §5.1); otherwise one-port receives
// overlap the combines and the tree is faster than the formula.
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  if (floor_pow2(p) != p) return std::nullopt;
  const double L = ceil_log2(uint64_t(p)), n = double(vector_bytes(ctx.coll));
  return Terms{2 * L, 2 * L * n, L * n, 2 * uint64_t(p - 1)};
}
}  // namespace

Algorithm reduce_bcast_algorithm() {
  return Algorithm{{CollOp::allreduce}, generate, closed};
}
}  // namespace hetcoll

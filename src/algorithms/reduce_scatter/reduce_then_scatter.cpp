// reduce_then_scatter — InterCom's short-vector distributed combine (§5.1):
// combine-to-one at rank 0 (binomial), then MST scatter of the result; for
// reduce_scatter_block and reduce_scatter.
//
// Steps: 2⌈log2 p⌉. Cost (equal blocks, n = p·b bytes):
// 2⌈log2 p⌉α + ((p-1)/p + ⌈log2 p⌉)·nβ + ⌈log2 p⌉·nγ.
// Cost: 2 ceil(log2 p) alpha + ((p-1)/p + ceil(log2 p)) n beta + ceil(log2 p) n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "reduce_then_scatter");
  Blocks blocks = coll_blocks(c);
  const uint64_t total = blocks.span(0, p);
  Slice root_vec{Buf::tmp, b.wants(0) ? b.alloc_tmp(0, total) : 0, total};
  reduce_along_tree(b, binomial_tree(p), 0, total, false, &root_vec);
  mst_scatter_blocks(
      b, Group::all(p), 0, blocks, [&](int x, int y) { return root_vec.sub(blocks.off[size_t(x)], blocks.span(x, y)); },
      [&](int m) { return Slice{Buf::out, 0, blocks.len[size_t(m)]}; });
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  const int p = ctx.coll.nranks;
  // ⌈log2 p⌉(α + nβ + nγ) for the combine holds for powers of two; otherwise
  // one-port receives overlap combines and the tree finishes earlier.
  if (!blocks.equal_sizes() || blocks.len[0] == 0 || floor_pow2(p) != p) return std::nullopt;
  const double L = ceil_log2(uint64_t(p)), n = double(blocks.span(0, p));
  return Terms{2 * L, n * (p - 1) / p + L * n, L * n};
}
}  // namespace

Algorithm reduce_then_scatter_algorithm() {
  return Algorithm{{CollOp::reduce_scatter_block, CollOp::reduce_scatter}, generate, closed};
}
}  // namespace hetcoll

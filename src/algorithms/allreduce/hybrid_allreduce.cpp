// hybrid_allreduce — InterCom's hybrid combine-to-all (§6, Fig. 3 template):
// on a logical mesh d1 × ... × dk, bucket distributed combine along
// dimensions 1, 2, ... (each line combines and splits its piece), then MST
// combine-to-one + broadcast of the last piece along dimension k (strategy
// S..SMC..C) or one more distributed combine (S..SC..C), then bucket collect
// back along the dimensions in reverse order.
//
// Each element is combined at one rank and then copied: all ranks hold
// identical bits.
// Cost: sum_i 2(di-1) alpha + 2(di-1)/di n_i beta + (di-1)/di n_i gamma [+ ceil(log2 dk)(2 alpha + 2 n_k beta + n_k
//   gamma)]
// Parameters: mesh (e.g. 2x3x5:SSMCC); default: the best by closed form.
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/levels.hpp"
#include "algorithms/patterns/hybrid_mesh.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  if (param_int(ctx, "levels", 0)) return in_level_order(ctx, generate);
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint32_t e = c.elem_size;
  const uint64_t m = vector_bytes(c);
  if (p == 1) return one_rank_copy(ctx, "hybrid_allreduce", m);
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_allreduce");
  Builder b = hybrid_builder(ctx, "hybrid_allreduce", mesh);
  const int k = int(mesh.dims.size()), scatters = mesh.has_m() ? k - 1 : k;
  for (int r = 0; r < p; ++r)
    if (b.wants(r)) b.copy(r, {Buf::out, 0, m}, {Buf::in, 0, m});
  for (int i = 0; i < scatters; ++i)
    for (int r = 0; r < p; ++r)
      if (mesh.coord(i, r) == 0) ring_reduce_scatter(b, mesh.line(i, r), mesh_split_place(mesh, r, i, c.count, e));
  if (mesh.has_m()) {
    Tree t = binomial_tree(mesh.dims[size_t(k - 1)]);
    for (int r = 0; r < p; ++r)
      if (mesh.coord(k - 1, r) == 0) {
        Piece pc = mesh_piece(mesh, r, k - 1, c.count);
        Slice piece{Buf::out, pc.off * e, pc.count * e};
        Group line = mesh.line(k - 1, r);
        tree_reduce(b, line, t, 0, [&](int) { return piece; });
        tree_bcast(b, line, t, 0, piece);
      }
  }
  mesh_collect_back(b, mesh, scatters, c.count, e);
  return b.finish();
}
}  // namespace

Algorithm hybrid_allreduce_algorithm() {
  Algorithm a{{CollOp::allreduce}, generate};
  hybrid_registry_entry<CollOp::allreduce>(a);  // mesh and levels, closed form, estimate, variants
  return a;
}
}  // namespace hetcoll

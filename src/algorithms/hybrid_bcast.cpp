// hybrid_bcast — InterCom's hybrid broadcast (§6, Table 2, Fig. 3) on a
// logical mesh d1 × ... × dk: scatter the vector along dimensions 1, 2, ...
// (each line splits its piece further), MST-broadcast the last piece along
// dimension k (strategy S..SMC..C) or scatter there too (S..SC..C), then
// bucket-collect back along the dimensions in reverse order.
//
// Between the MST broadcast (short vectors, ⌈log2 p⌉α) and scatter+collect
// (long vectors, 2(p-1)/p·nβ) the mesh trades start-ups for bandwidth;
// the planner enumerates every factorisation of p and both strategies.
// Cost, per S/C dimension i with piece n_i: (⌈log2 di⌉ + di - 1)α +
// 2(di-1)/di·n_i·β; for M: ⌈log2 dk⌉(α + n_k·β) (conflict-free; InterCom's
// linear array multiplies the β terms by d1···d(i-1)).
// Parameters: mesh (e.g. 2x3x5:SSMCC); default: the best by closed form.
#include "algorithms/all.hpp"
#include "algorithms/broadcast_trees.hpp"
#include "algorithms/common.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/hybrid_mesh.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  if (param_int(ctx, "levels", 0)) return in_level_order(ctx, generate);
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  const uint32_t e = c.elem_size;
  if (p == 1) return make_builder(ctx, "hybrid_bcast").finish();
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_bcast");
  Builder b = make_builder(ctx, "hybrid_bcast[mesh=" + mesh.str() + "]");
  const int k = int(mesh.dims.size()), scatters = mesh.has_m() ? k - 1 : k;
  auto split_place = [&](int r, int level) {
    Piece pc = mesh_piece(mesh, r, level, c.count);
    return vector_place(Buf::out, even_blocks(pc.count, e, mesh.dims[size_t(level)], pc.off * e));
  };
  // Scatter along dimension i in the lines that hold data: coordinates
  // after i equal the root's; the line's root has the root's coordinate i.
  for (int i = 0; i < scatters; ++i)
    for (int r = 0; r < p; ++r) {
      bool line_root = mesh.coord(i, r) == mesh.coord(i, root);
      for (int j = i + 1; j < k && line_root; ++j) line_root = mesh.coord(j, r) == mesh.coord(j, root);
      if (line_root) mst_scatter(b, mesh.line(i, r), mesh.coord(i, root), split_place(r, i));
    }
  if (mesh.has_m()) {
    Tree t = binomial_tree(mesh.dims[size_t(k - 1)]);
    for (int r = 0; r < p; ++r)
      if (mesh.coord(k - 1, r) == mesh.coord(k - 1, root)) {
        Piece pc = mesh_piece(mesh, r, k - 1, c.count);
        tree_bcast(b, mesh.line(k - 1, r), t, mesh.coord(k - 1, root), {Buf::out, pc.off * e, pc.count * e});
      }
  }
  for (int i = scatters - 1; i >= 0; --i)
    for (int r = 0; r < p; ++r)
      if (mesh.coord(i, r) == 0) ring_allgather(b, mesh.line(i, r), split_place(r, i));
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  if (ctx.coll.nranks == 1) return Terms{};
  return hybrid_cost(CollOp::bcast, hybrid_mesh_for(ctx, "hybrid_bcast"), ctx.coll.count, ctx.coll.elem_size, false);
}
}  // namespace

Algorithm hybrid_bcast_algorithm() {
  Algorithm a;
  a.name = "hybrid_bcast";
  a.ops = {CollOp::bcast};
  a.description = "InterCom hybrid on a logical mesh: scatters, MST broadcast or scatter, collects";
  a.steps = "sum over dimensions: ceil(log2 di) + di - 1 (S/C), ceil(log2 dk) (M)";
  a.bytes = "2(di-1)/di of the piece per S/C dimension, the piece per M step";
  a.cost = "sum_i (ceil(log2 di) + di - 1) alpha + 2 (di-1)/di n_i beta [+ ceil(log2 dk)(alpha + n_k beta)]";
  a.source = "InterCom §6, Table 2, Fig. 3";
  a.params = {{"mesh", ParamKind::mesh, 0, 0, false, "logical mesh d1x..xdk (product = p) and the strategy letters per dimension"},
              {"levels", ParamKind::integer, 0, 1, false,
               "1: ranks numbered subnet by subnet, host by host, so that the mesh's last dimensions lie inside subnets"}};
  a.generate = generate;
  a.closed_form = closed;
  a.estimate = hybrid_estimate_hook<CollOp::bcast>;
  a.variants = hybrid_variants_hook<CollOp::bcast>;
  return a;
}
}  // namespace hetcoll

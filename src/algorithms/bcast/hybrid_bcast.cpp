// hybrid_bcast — InterCom's hybrid broadcast (§6, Table 2, Fig. 3) on a
// logical mesh d1 × ... × dk: scatter the vector along dimensions 1, 2, ...
// (each line splits its piece further), MST-broadcast the last piece along
// dimension k (strategy S..SMC..C) or scatter there too (S..SC..C), then
// bucket-collect back along the dimensions in reverse order.
//
// Between the MST broadcast (short vectors, ⌈log2 p⌉α) and scatter+collect
// (long vectors, 2(p-1)/p·nβ) the mesh trades start-ups for bandwidth;
// the planner enumerates every factorisation of p and both strategies.
// Cost: sum_i (ceil(log2 di) + di - 1) alpha + 2 (di-1)/di n_i beta [+ ceil(log2 dk)(alpha + n_k beta)]
// (Conflict-free; InterCom's linear array multiplies the β terms by
// d1···d(i-1).)
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
  const int p = c.nranks, root = c.root;
  const uint32_t e = c.elem_size;
  if (p == 1) return make_builder(ctx, "hybrid_bcast").finish();
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_bcast");
  Builder b = hybrid_builder(ctx, "hybrid_bcast", mesh);
  const int k = int(mesh.dims.size()), scatters = mesh.has_m() ? k - 1 : k;
  // Scatter along dimension i in the lines that hold data: coordinates
  // after i equal the root's; the line's root has the root's coordinate i.
  for (int i = 0; i < scatters; ++i)
    for (int r = 0; r < p; ++r) {
      bool line_root = mesh.coord(i, r) == mesh.coord(i, root);
      for (int j = i + 1; j < k && line_root; ++j) line_root = mesh.coord(j, r) == mesh.coord(j, root);
      if (line_root) mst_scatter(b, mesh.line(i, r), mesh.coord(i, root), mesh_split_place(mesh, r, i, c.count, e));
    }
  if (mesh.has_m()) {
    Tree t = binomial_tree(mesh.dims[size_t(k - 1)]);
    for (int r = 0; r < p; ++r)
      if (mesh.coord(k - 1, r) == mesh.coord(k - 1, root)) {
        Piece pc = mesh_piece(mesh, r, k - 1, c.count);
        tree_bcast(b, mesh.line(k - 1, r), t, mesh.coord(k - 1, root), {Buf::out, pc.off * e, pc.count * e});
      }
  }
  mesh_collect_back(b, mesh, scatters, c.count, e);
  return b.finish();
}
}  // namespace

Algorithm hybrid_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate};
  hybrid_registry_entry<CollOp::bcast>(a);  // mesh and levels, closed form, estimate, variants
  return a;
}
}  // namespace hetcoll

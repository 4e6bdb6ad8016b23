// hybrid_allreduce — InterCom's hybrid combine-to-all (§6, Fig. 3 template):
// on a logical mesh d1 × ... × dk, bucket distributed combine along
// dimensions 1, 2, ... (each line combines and splits its piece), then MST
// combine-to-one + broadcast of the last piece along dimension k (strategy
// S..SMC..C) or one more distributed combine (S..SC..C), then bucket collect
// back along the dimensions in reverse order.
//
// Each element is combined at one rank and then copied: all ranks hold
// identical bits.
// Cost, per S/C dimension i with piece n_i: 2(di-1)α + 2(di-1)/di·n_i·β +
// (di-1)/di·n_i·γ; for M: ⌈log2 dk⌉(2α + 2n_k·β + n_k·γ).
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
  const int p = c.nranks;
  const uint32_t e = c.elem_size;
  const uint64_t m = vector_bytes(c);
  if (p == 1) {
    Builder b = make_builder(ctx, "hybrid_allreduce");
    b.copy(0, {Buf::out, 0, m}, {Buf::in, 0, m});
    return b.finish();
  }
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_allreduce");
  Builder b = make_builder(ctx, "hybrid_allreduce[mesh=" + mesh.str() + "]");
  const int k = int(mesh.dims.size()), scatters = mesh.has_m() ? k - 1 : k;
  auto split_place = [&](int r, int level) {
    Piece pc = mesh_piece(mesh, r, level, c.count);
    return vector_place(Buf::out, even_blocks(pc.count, e, mesh.dims[size_t(level)], pc.off * e));
  };
  for (int r = 0; r < p; ++r)
    if (b.wants(r)) b.copy(r, {Buf::out, 0, m}, {Buf::in, 0, m});
  for (int i = 0; i < scatters; ++i)
    for (int r = 0; r < p; ++r)
      if (mesh.coord(i, r) == 0) ring_reduce_scatter(b, mesh.line(i, r), split_place(r, i));
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
  for (int i = scatters - 1; i >= 0; --i)
    for (int r = 0; r < p; ++r)
      if (mesh.coord(i, r) == 0) ring_allgather(b, mesh.line(i, r), split_place(r, i));
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  if (ctx.coll.nranks == 1) return Terms{};
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_allreduce");
  // The MST combine-to-one is exact for power-of-two lines only.
  int dk = mesh.dims.back();
  if (mesh.has_m() && floor_pow2(dk) != dk) return std::nullopt;
  return hybrid_cost(CollOp::allreduce, mesh, ctx.coll.count, ctx.coll.elem_size, false);
}
}  // namespace

Algorithm hybrid_allreduce_algorithm() {
  Algorithm a;
  a.name = "hybrid_allreduce";
  a.ops = {CollOp::allreduce};
  a.description = "InterCom hybrid on a logical mesh: distributed combines, MST combine-to-all or combine, collects";
  a.steps = "sum over dimensions: 2(di - 1) (S/C), 2 ceil(log2 dk) (M)";
  a.bytes = "2(di-1)/di of the piece per S/C dimension";
  a.cost = "sum_i 2(di-1) alpha + 2(di-1)/di n_i beta + (di-1)/di n_i gamma [+ ceil(log2 dk)(2 alpha + 2 n_k beta + n_k gamma)]";
  a.source = "InterCom §6, Fig. 3";
  a.params = {{"mesh", ParamKind::mesh, 0, 0, false, "logical mesh d1x..xdk (product = p) and the strategy letters per dimension"},
              {"levels", ParamKind::integer, 0, 1, false,
               "1: ranks numbered subnet by subnet, host by host, so that the mesh's last dimensions lie inside subnets"}};
  a.generate = generate;
  a.closed_form = closed;
  a.estimate = hybrid_estimate_hook<CollOp::allreduce>;
  a.variants = hybrid_variants_hook<CollOp::allreduce>;
  return a;
}
}  // namespace hetcoll

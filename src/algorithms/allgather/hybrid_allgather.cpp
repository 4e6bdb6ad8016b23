// hybrid_allgather — InterCom's hybrid collect (§6, Fig. 3 template with a
// void first stage): on a logical mesh d1 × ... × dk whose last dimension
// holds consecutive ranks, collect along dimension k first — MST gather +
// broadcast (strategy MC..C) or bucket collect (C..C) — then bucket-collect
// the gathered chunks along dimensions k-1, ..., 1.
//
// Cost: [M: 2 ceil(log2 dk) alpha + (dk-1) b beta + ceil(log2 dk) dk b beta] + sum_i (di-1)(alpha + chunk_i beta)
// Parameters: mesh (e.g. 2x15:MC); default: the best by closed form.
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/hybrid_mesh.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t blk = c.count * c.elem_size;
  if (p == 1) return one_rank_copy(ctx, "hybrid_allgather", blk);
  Mesh mesh = hybrid_mesh_for(ctx, "hybrid_allgather");
  Builder b = hybrid_builder(ctx, "hybrid_allgather", mesh);
  const int k = int(mesh.dims.size());
  for (int r = 0; r < p; ++r)
    if (b.wants(r)) b.copy(r, {Buf::out, uint64_t(r) * blk, blk}, {Buf::in, 0, blk});
  // Along dimension i, member j of a line holds the blocks of the ranks that
  // share its coordinates up to i: [first + j·stride, first + (j+1)·stride)
  // with first = ⌊r/stride⌋·stride, one contiguous chunk of `out`.
  for (int i = k - 1; i >= 0; --i) {
    const uint64_t chunk = uint64_t(mesh.stride(i)) * blk;
    for (int r = 0; r < p; ++r) {
      if (mesh.coord(i, r) != 0) continue;
      Group line = mesh.line(i, r);
      Place place = [&, first = uint64_t(r / mesh.stride(i) * mesh.stride(i))](int, int x, int y) {
        return Slice{Buf::out, first * blk + uint64_t(x) * chunk, uint64_t(y - x) * chunk};
      };
      if (i == k - 1 && mesh.strategy[0] == 'M') {
        mst_gather(b, line, 0, place);
        tree_bcast(b, line, binomial_tree(line.size()), 0, place(0, 0, line.size()));
      } else {
        ring_allgather(b, line, place);
      }
    }
  }
  return b.finish();
}
}  // namespace

Algorithm hybrid_allgather_algorithm() {
  Algorithm a{{CollOp::allgather}, generate};
  hybrid_registry_entry<CollOp::allgather>(a);  // mesh, closed form, estimate, variants
  return a;
}
}  // namespace hetcoll

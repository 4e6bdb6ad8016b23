// scatter_collect — InterCom's long-vector broadcast (§5.2): MST scatter of
// the vector in p blocks, then bucket collect.
//
// Both stages work in `out`: after the scatter rank i holds block i, after
// the collect everybody holds all. (van de Geijn's scatter-allgather.)
// Steps: ⌈log2 p⌉ + p-1. Cost (equal blocks, n bytes):
// (⌈log2 p⌉ + p-1)α + 2(p-1)/p·nβ.
// Cost: (ceil(log2 p) + p - 1) alpha + 2(p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "scatter_collect");
  Blocks blocks = even_blocks(c.count, c.elem_size, p);
  Group g = Group::all(p);
  Place place = vector_place(Buf::out, blocks);
  mst_scatter(b, g, c.root, place);
  ring_allgather(b, g, place);
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  const std::optional<double> bl = equal_block_bytes(ctx.coll);
  if (!bl) return std::nullopt;
  return Terms{double(ceil_log2(uint64_t(p)) + p - 1), 2.0 * (p - 1) * *bl, 0};
}
}  // namespace

Algorithm scatter_collect_algorithm() {
  return Algorithm{{CollOp::bcast}, generate, closed};
}
}  // namespace hetcoll

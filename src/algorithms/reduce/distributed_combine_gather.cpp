// distributed_combine_gather — InterCom's long-vector combine-to-one (§5.2):
// bucket distributed combine (ring reduce-scatter), then MST gather of the
// combined blocks to the root.
//
// Steps: (p-1) + ⌈log2 p⌉. Cost (equal blocks, n bytes):
// (p-1+⌈log2 p⌉)α + 2(p-1)/p·nβ + (p-1)/p·nγ. InterCom writes 2(p-1)α: a
// bucket gather; the MST gather it names as the long-vector primitive needs
// ⌈log2 p⌉ start-ups.
// Cost: (p - 1 + ceil(log2 p)) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "distributed_combine_gather");
  Blocks blocks = even_blocks(c.count, c.elem_size, p);
  auto base = ring_reduce_scatter_in_scratch(b, blocks, p);
  auto place = [&](int m, int x, int y) {
    if (m == c.root) return Slice{Buf::out, blocks.off[size_t(x)], blocks.span(x, y)};
    return Slice{Buf::tmp, base[size_t(m)] + blocks.off[size_t(x)], blocks.span(x, y)};
  };
  if (b.wants(c.root) && blocks.len[size_t(c.root)])
    b.copy(c.root, place(c.root, c.root, c.root + 1),
           {Buf::tmp, base[size_t(c.root)] + blocks.off[size_t(c.root)], blocks.len[size_t(c.root)]});
  mst_gather(b, Group::all(p), c.root, place);
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  const std::optional<double> bl = equal_block_bytes(ctx.coll);
  if (!bl) return std::nullopt;
  return Terms{double(p - 1 + ceil_log2(uint64_t(p))), 2.0 * (p - 1) * *bl, (p - 1) * *bl};
}
}  // namespace

Algorithm distributed_combine_gather_algorithm() {
  return Algorithm{{CollOp::reduce}, generate, closed};
}
}  // namespace hetcoll

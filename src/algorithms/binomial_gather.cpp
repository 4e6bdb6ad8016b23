// binomial_gather — InterCom's MST gather (§4.1), the scatter reversed, for
// gather and gatherv.
//
// Leaders collect their half's blocks (in scratch) and send them to the
// holder as one message. The root receives straight into `out` when the
// displacements are in rank order, else into scratch and copies.
// Steps: ⌈log2 p⌉; p-1 messages; the root receives (p-1) blocks in all.
// Cost (equal blocks of b bytes): ⌈log2 p⌉α + (p-1)bβ.
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  Builder b = make_builder(ctx, "binomial_gather");
  Blocks blocks = coll_blocks(c), pk = packed(blocks);
  Group g = Group::all(p);
  bool pack = !contiguous(blocks);
  uint64_t pack_base = pack && b.wants(root) ? b.alloc_tmp(root, pk.span(0, p)) : 0;
  auto at_root = [&](int x, int y) {
    return pack ? Slice{Buf::tmp, pack_base + pk.off[size_t(x)], pk.span(x, y)}
                : Slice{Buf::out, blocks.off[size_t(x)], blocks.span(x, y)};
  };
  auto own = [&](int m) { return Slice{Buf::in, 0, blocks.len[size_t(m)]}; };
  Place place = mst_staging(b, g, root, pk, at_root, own);
  for (int m = 0; m < p; ++m) {
    Slice mine = place(m, m, m + 1);
    if (b.wants(m) && mine.len && mine.buf != Buf::in) b.copy(m, mine, own(m));
  }
  mst_gather(b, g, root, place);
  if (pack && b.wants(root))
    for (int i = 0; i < p; ++i)
      if (blocks.len[size_t(i)])
        b.copy(root, {Buf::out, blocks.off[size_t(i)], blocks.len[size_t(i)]},
               {Buf::tmp, pack_base + pk.off[size_t(i)], pk.len[size_t(i)]});
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || !contiguous(blocks)) return std::nullopt;
  int p = ctx.coll.nranks;
  return Terms{double(ceil_log2(uint64_t(p))), double(uint64_t(p - 1) * blocks.len[0]), 0, uint64_t(p - 1)};
}
}  // namespace

Algorithm binomial_gather_algorithm() {
  Algorithm a;
  a.name = "binomial_gather";
  a.ops = {CollOp::gather, CollOp::gatherv};
  a.description = "InterCom's MST gather: the MST scatter reversed";
  a.steps = "ceil(log2 p)";
  a.bytes = "(p-1)/p n into the root, p-1 messages";
  a.cost = "ceil(log2 p) alpha + (p-1)/p n beta";
  a.source = "InterCom §4.1";
  a.generate = generate;
  a.closed_form = closed;
  return a;
}
}  // namespace hetcoll

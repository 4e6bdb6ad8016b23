// binomial_scatter — InterCom's MST scatter (§4.1) for scatter and scatterv.
//
// Like the broadcast, but at each stage the holder sends only the blocks
// that end up in the other half: the holder of blocks [lo, hi) keeps the
// half with itself (⌈len/2⌉ blocks) and sends the rest, one contiguous
// message, to a leader there. Ranks that pass blocks on stage them in
// scratch; scatterv with displacements that are not in rank order is packed
// first.
// Steps: ⌈log2 p⌉; p-1 messages; the root sends (p-1) blocks in all.
// Cost (equal blocks of b bytes): ⌈log2 p⌉α + (p-1)bβ = ⌈log2 p⌉α + (p-1)/p·nβ.
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  Builder b = make_builder(ctx, "binomial_scatter");
  Blocks blocks = coll_blocks(c), pk = packed(blocks);
  Group g = Group::all(p);
  // The root's blocks as one contiguous vector: its `in`, or a packed copy.
  uint64_t pack_base = 0;
  bool pack = !contiguous(blocks);
  if (pack && b.wants(root)) {
    pack_base = b.alloc_tmp(root, pk.span(0, p));
    for (int i = 0; i < p; ++i)
      if (blocks.len[size_t(i)])
        b.copy(root, {Buf::tmp, pack_base + pk.off[size_t(i)], pk.len[size_t(i)]},
               {Buf::in, blocks.off[size_t(i)], blocks.len[size_t(i)]});
  }
  auto at_root = [&](int x, int y) {
    return pack ? Slice{Buf::tmp, pack_base + pk.off[size_t(x)], pk.span(x, y)}
                : Slice{Buf::in, blocks.off[size_t(x)], blocks.span(x, y)};
  };
  auto own = [&](int m) { return Slice{Buf::out, 0, blocks.len[size_t(m)]}; };
  Place place = mst_staging(b, g, root, pk, at_root, own);
  mst_scatter(b, g, root, place);
  for (int m = 0; m < p; ++m) {
    Slice held = place(m, m, m + 1);
    if (b.wants(m) && held.len && held.buf != Buf::out) b.copy(m, own(m), held);
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || !contiguous(blocks)) return std::nullopt;
  int p = ctx.coll.nranks;
  return Terms{double(ceil_log2(uint64_t(p))), double(uint64_t(p - 1) * blocks.len[0]), 0, uint64_t(p - 1)};
}
}  // namespace

Algorithm binomial_scatter_algorithm() {
  Algorithm a;
  a.name = "binomial_scatter";
  a.ops = {CollOp::scatter, CollOp::scatterv};
  a.description = "InterCom's MST scatter: halve the range, send the other half's blocks to a leader there";
  a.steps = "ceil(log2 p)";
  a.bytes = "(p-1)/p n from the root, p-1 messages";
  a.cost = "ceil(log2 p) alpha + (p-1)/p n beta";
  a.source = "InterCom §4.1";
  a.generate = generate;
  a.closed_form = closed;
  return a;
}
}  // namespace hetcoll

#include "algorithms/patterns/rooted_blocks.hpp"

#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {

bool towards_root(const Collective& c) { return base_form(c.op) == CollOp::gather; }

Schedule star_blocks(const GenContext& ctx, const char* name) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  const bool to_root = towards_root(c);
  Builder b = make_builder(ctx, name);
  Blocks blocks = coll_blocks(c);
  for (int j = 0; j < p; ++j) {
    const int r = (root + j) % p;
    const uint64_t len = blocks.len[size_t(r)], at = blocks.off[size_t(r)];
    // The root's side holds every block at its offset; the rank's, its own.
    const Slice dst{Buf::out, to_root ? at : 0, len}, src{Buf::in, to_root ? 0 : at, len};
    if (len == 0) continue;
    const int from = to_root ? r : root, to = to_root ? root : r;
    if (r == root) {
      if (b.wants(root)) b.copy(root, dst, src);
    } else {
      if (b.wants(from)) b.send(from, to, src);
      if (b.wants(to)) b.recv(to, from, dst);
    }
  }
  return b.finish();
}

std::optional<Terms> star_blocks_terms(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  return double(ctx.coll.nranks - 1) * message_terms(blocks.len[0]);
}

std::vector<Round> star_blocks_rounds(const GenContext& ctx) {
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty() || ctx.coll.nranks < 2) return {};
  const uint64_t bl = blocks.largest();
  const Round::Pattern pattern = towards_root(ctx.coll) ? Round::Pattern::gather : Round::Pattern::scatter;
  return {local_round(bl), Round{pattern, ctx.coll.root, ctx.coll.nranks, bl, 0, 1}};
}

void star_blocks_entry(Algorithm& a) {
  a.rounds = star_blocks_rounds;
  a.closed_form = star_blocks_terms;
  a.local_counts = true;
}

Schedule mst_blocks(const GenContext& ctx, const char* name) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  const bool to_root = towards_root(c);
  Builder b = make_builder(ctx, name);
  Blocks blocks = coll_blocks(c), pk = packed(blocks);
  Group g = Group::all(p);
  // The root's blocks as one contiguous vector: its own buffer (gather:
  // `out`, scatter: `in`), or a packed copy in scratch.
  const Buf root_buf = to_root ? Buf::out : Buf::in, own_buf = to_root ? Buf::in : Buf::out;
  const bool pack = !contiguous(blocks);
  const uint64_t pack_base = pack && b.wants(root) ? b.alloc_tmp(root, pk.span(0, p)) : 0;
  // The packed copy filled from the root's buffer (scatter, first) or
  // emptied into it (gather, last).
  auto move_packed = [&] {
    for (int i = 0; i < p; ++i) {
      if (blocks.len[size_t(i)] == 0) continue;
      const Slice at{root_buf, blocks.off[size_t(i)], blocks.len[size_t(i)]};
      const Slice staged{Buf::tmp, pack_base + pk.off[size_t(i)], pk.len[size_t(i)]};
      if (to_root) b.copy(root, at, staged);
      else b.copy(root, staged, at);
    }
  };
  if (pack && b.wants(root) && !to_root) move_packed();
  auto at_root = [&](int x, int y) {
    return pack ? Slice{Buf::tmp, pack_base + pk.off[size_t(x)], pk.span(x, y)}
                : Slice{root_buf, blocks.off[size_t(x)], blocks.span(x, y)};
  };
  auto own = [&](int m) { return Slice{own_buf, 0, blocks.len[size_t(m)]}; };
  if (to_root) mst_gather_blocks(b, g, root, pk, at_root, own);
  else mst_scatter_blocks(b, g, root, pk, at_root, own);
  if (pack && b.wants(root) && to_root) move_packed();
  return b.finish();
}

std::optional<Terms> mst_blocks_terms(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || !contiguous(blocks)) return std::nullopt;
  int p = ctx.coll.nranks;
  return Terms{double(ceil_log2(uint64_t(p))), double(uint64_t(p - 1) * blocks.len[0]), 0, uint64_t(p - 1)};
}

}  // namespace hetcoll

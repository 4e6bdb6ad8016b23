// recursive_doubling_allgather — allgather and allgatherv by recursive
// doubling: in step k every rank exchanges everything it has with the rank
// whose number differs in bit k, so the data held doubles each step.
//
// Non-powers of two: the p - 2^⌊log2 p⌋ extra ranks first hand their block
// to a partner among the first 2^⌊log2 p⌋ and receive the result at the end.
// The doubling works on "virtual ranks" (a core rank with its extra's block)
// laid out contiguously in scratch, then unpacked into `out`; with a power of
// two and blocks in rank order it works in `out` directly.
// Steps: log2 p (+2 with extra ranks). Cost (p = 2^k, equal blocks of b
// bytes): log2 p·α + (p-1)bβ. Source: Thakur, Rabenseifner & Gropp 2005;
// MPICH.
// Cost: log2 p alpha + (p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/folding.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "recursive_doubling_allgather");
  Blocks blocks = coll_blocks(c);
  Fold f(p);
  // Virtual rank v owns block v and, if it has an extra partner, block v+core.
  const FoldedLayout V = folded_layout(blocks, f.core, [](int v) { return v; }, [&](int v) { return f.partner(v); });
  const uint64_t total = V.total();
  const bool direct = f.extra == 0 && contiguous(blocks);
  std::vector<uint64_t> base(static_cast<size_t>(p), 0);
  for (int r = 0; r < p; ++r)
    if (!direct && b.wants(r) && total) base[size_t(r)] = b.alloc_tmp(r, total);
  auto work = [&](int r, uint64_t off, uint64_t len) {
    return direct ? Slice{Buf::out, off, len} : Slice{Buf::tmp, base[size_t(r)] + off, len};
  };
  auto vrange = [&](int r, int a, int e) { return work(r, V.voff[size_t(a)], V.span(a, e)); };
  auto block_at = [&](int r, int i) { return work(r, V.at[size_t(i)], blocks.len[size_t(i)]); };

  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    const Slice in{Buf::in, 0, blocks.len[size_t(r)]};
    if (f.is_extra(r)) {
      int core = f.partner(r);
      if (in.len) b.send(r, core, in);
      if (total) b.recv(r, core, work(r, 0, total));
    } else {
      if (in.len) b.copy(r, block_at(r, r), in);
      int ex = f.partner(r);
      if (ex >= 0 && blocks.len[size_t(ex)]) b.recv(r, ex, block_at(r, ex));
      for (int d = 1; d < f.core; d *= 2) {
        int q = r ^ d, mine = r & ~(d - 1), theirs = q & ~(d - 1);
        Slice out_s = vrange(r, mine, mine + d), in_s = vrange(r, theirs, theirs + d);
        if (out_s.len) b.send(r, q, out_s);
        if (in_s.len) b.recv(r, q, in_s);
      }
      if (ex >= 0 && total) b.send(r, ex, work(r, 0, total));
    }
    if (!direct)
      for (int i = 0; i < p; ++i)
        if (blocks.len[size_t(i)])
          b.copy(r, {Buf::out, blocks.off[size_t(i)], blocks.len[size_t(i)]}, block_at(r, i));
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  const int p = ctx.coll.nranks;
  if (Fold(p).extra || !blocks.equal_sizes() || !contiguous(blocks) || blocks.len[0] == 0) return std::nullopt;
  return Terms{double(ceil_log2(uint64_t(p))), double(uint64_t(p - 1) * blocks.len[0]), 0,
               uint64_t(p) * uint64_t(ceil_log2(uint64_t(p)))};
}
std::vector<Round> rounds(const GenContext& ctx) {
  const std::optional<FoldedSizes> s = folded_sizes(ctx.coll);
  if (!s) return {};
  const Fold& f = s->f;
  const uint64_t total = s->total, bl = s->bl, per = s->per;
  std::vector<Round> v{local_round(bl)};
  // With extra ranks folded in, the group holding rank 0 has the most: its
  // d ranks hold min(extra, d) blocks more (rank 0's chain is the longest).
  add_exchange_rounds(
      v, f, false, [&](int d) { return f.extra ? bl * uint64_t(d + std::min(f.extra, d)) : per * uint64_t(d); },
      [](int) { return uint64_t(0); }, bl, false, total);
  if (f.extra || !contiguous(s->blocks)) v.push_back(local_round(total));
  return v;
}
}  // namespace

Algorithm recursive_doubling_allgather_algorithm() {
  return Algorithm{{CollOp::allgather, CollOp::allgatherv}, generate, closed, rounds};
}
}  // namespace hetcoll

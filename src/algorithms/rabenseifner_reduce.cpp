// rabenseifner_reduce — reduce as recursive-halving reduce-scatter followed
// by an MST gather of the combined blocks to the root (Rabenseifner 1997).
//
// Ranks are numbered relative to the root, so the root is never one of the
// extra ranks that fold into a core partner for non-powers of two.
// Steps: 2 log2 p (+1). Cost (p = 2^k, n divisible by p):
// 2 log2 p·α + 2(p-1)/p·nβ + (p-1)/p·nγ.
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  const uint64_t m = vector_bytes(c);
  Builder b = make_builder(ctx, "rabenseifner_reduce");
  Fold f(p);
  Blocks blocks = even_blocks(c.count, c.elem_size, f.core);
  auto rank_of = [&](int v) { return (v + root) % p; };
  const Slice in{Buf::in, 0, m};
  std::vector<Slice> work(static_cast<size_t>(p));
  for (int v = 0; v < p; ++v) {
    int r = rank_of(v);
    if (!b.wants(r)) continue;
    if (f.is_extra(v)) {
      b.send(r, rank_of(f.partner(v)), in);
      continue;
    }
    Slice w = v == 0 ? Slice{Buf::out, 0, m} : Slice{Buf::tmp, b.alloc_tmp(r, m), m};
    work[size_t(v)] = w;
    b.copy(r, w, in);
    const uint64_t slot = b.alloc_tmp(r, m);
    int ex = f.partner(v);
    if (ex >= 0) {
      b.recv(r, rank_of(ex), {Buf::tmp, slot, m});
      b.reduce(r, w, {Buf::tmp, slot, m});
    }
    int lo = 0, hi = f.core;
    for (int d = f.core / 2; d >= 1; d /= 2) {
      int q = v ^ d, mid = lo + d;
      bool lower = (v & d) == 0;
      auto range = [&](int a, int e) { return w.sub(blocks.off[size_t(a)], blocks.span(a, e)); };
      Slice give = lower ? range(mid, hi) : range(lo, mid), keep = lower ? range(lo, mid) : range(mid, hi);
      if (give.len) b.send(r, rank_of(q), give);
      if (keep.len) {
        b.recv(r, rank_of(q), {Buf::tmp, slot, keep.len});
        b.reduce(r, keep, {Buf::tmp, slot, keep.len});
      }
      if (lower) hi = mid; else lo = mid;
    }
  }
  Group core;
  for (int v = 0; v < f.core; ++v) core.ranks.push_back(rank_of(v));
  mst_gather(b, core, 0, [&](int v, int x, int y) { return work[size_t(v)].sub(blocks.off[size_t(x)], blocks.span(x, y)); });
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  if (Fold(p).extra || c.count % uint64_t(p)) return std::nullopt;
  double moved = double((p - 1) * (c.count / uint64_t(p)) * c.elem_size);
  return Terms{2.0 * ceil_log2(uint64_t(p)), 2 * moved, moved};
}
}  // namespace

Algorithm rabenseifner_reduce_algorithm() {
  Algorithm a;
  a.name = "rabenseifner_reduce";
  a.ops = {CollOp::reduce};
  a.description = "recursive-halving reduce-scatter, then MST gather to the root";
  a.steps = "2 log2 p (+1 for non-powers of two)";
  a.bytes = "2(p-1)/p n through the root";
  a.cost = "2 log2 p alpha + 2(p-1)/p n beta + (p-1)/p n gamma";
  a.source = "Rabenseifner 1997; Thakur, Rabenseifner, Gropp 2005";
  a.generate = generate;
  a.closed_form = closed;
  return a;
}
}  // namespace hetcoll

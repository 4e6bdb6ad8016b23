#include "algorithms/patterns/folding.hpp"

namespace hetcoll {

ParamSpec fold_param() {
  return {"fold", ParamKind::integer, 0, 1, false,
          "1: MPICH's fold, the first 2(p - 2^k) ranks in pairs, even into odd (near ranks numbered together fold "
          "together); 0: the last p - 2^k ranks into the first"};
}

void fold_and_halve(Builder& b, const Fold& f, int v, const Slice& work, const Blocks& blocks,
                    const std::function<int(int)>& rank_of, const std::function<int(int)>& pos) {
  const int r = rank_of(v);
  const uint64_t m = work.len;
  const uint64_t slot = b.alloc_tmp(r, m);
  const int ex = f.partner(v);
  if (ex >= 0) {
    b.recv(r, rank_of(ex), {Buf::tmp, slot, m});
    b.reduce(r, work, {Buf::tmp, slot, m});
  }
  auto range = [&](int a, int e) { return work.sub(blocks.off[size_t(a)], blocks.span(a, e)); };
  const int me = pos(v);
  int lo = 0, hi = f.core;
  for (int d = f.core / 2; d >= 1; d /= 2) {
    const int q = rank_of(pos(me ^ d)), mid = lo + d;
    const bool lower = (me & d) == 0;
    Slice give = lower ? range(mid, hi) : range(lo, mid), keep = lower ? range(lo, mid) : range(mid, hi);
    if (give.len) b.send(r, q, give);
    if (keep.len) {
      b.recv(r, q, {Buf::tmp, slot, keep.len});
      b.reduce(r, keep, {Buf::tmp, slot, keep.len});
    }
    if (lower) hi = mid; else lo = mid;
  }
}

std::optional<Terms> rabenseifner_terms(const Collective& c) {
  const int p = c.nranks;
  if (Fold(p).extra || c.count % uint64_t(p)) return std::nullopt;
  double moved = double((p - 1) * (c.count / uint64_t(p)) * c.elem_size);
  return Terms{2.0 * ceil_log2(uint64_t(p)), 2 * moved, moved};
}

FoldedLayout folded_layout(const Blocks& blocks, int core, const std::function<int(int)>& core_rank,
                           const std::function<int(int)>& partner) {
  FoldedLayout l;
  l.voff.assign(size_t(core) + 1, 0);
  l.at.assign(size_t(blocks.size()), 0);
  for (int k = 0; k < core; ++k) {
    const int q = core_rank(k), ex = partner(q);
    l.at[size_t(q)] = l.voff[size_t(k)];
    uint64_t len = blocks.len[size_t(q)];
    if (ex >= 0) {
      l.at[size_t(ex)] = l.voff[size_t(k)] + len;
      len += blocks.len[size_t(ex)];
    }
    l.voff[size_t(k) + 1] = l.voff[size_t(k)] + len;
  }
  return l;
}

std::optional<FoldedSizes> folded_sizes(const Collective& c) {
  Blocks blocks = coll_blocks(c);
  const Fold f(c.nranks);
  if (blocks.any_empty()) return std::nullopt;
  const uint64_t total = blocks.total();
  const uint64_t bl = blocks.largest(), per = (total + uint64_t(f.core) - 1) / uint64_t(f.core);
  return FoldedSizes{std::move(blocks), f, total, bl, per};
}

}  // namespace hetcoll

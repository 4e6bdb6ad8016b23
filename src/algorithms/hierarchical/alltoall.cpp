// hierarchical, alltoall: blocks through the leaders of hosts and subnets.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Alltoall through subnet leaders: each subnet's ranks gather their whole
// send buffers at the leader, leaders exchange one message per pair of
// subnets (the blocks from one subnet's ranks to the other's), and each
// leader scatters to its ranks their blocks in source-rank order. Every
// block crosses the slow links once, as in any alltoall, but in S(S-1)
// messages instead of p(p-1): for latency-bound sizes.
Schedule alltoall_leaders(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  const int p = c.nranks, S = int(M.size());
  const uint64_t blk = c.count * c.elem_size, row = uint64_t(p) * blk;
  // G[s]: at leader s, member i's send buffer at i * row.
  std::vector<Slice> G(static_cast<size_t>(S));
  for (int s = 0; s < S; ++s) {
    const auto& g = M[size_t(s)];
    const int lead = g[0];
    if (g.size() == 1) {
      G[size_t(s)] = {Buf::in, 0, row};
      continue;
    }
    G[size_t(s)] = {Buf::tmp, b.alloc_tmp(lead, g.size() * row), g.size() * row};
    run_phase(b, ctx, g, sub_call(CollOp::gather, int(g.size()), uint64_t(p) * c.count, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? sl : G[size_t(s)].sub(sl.off, sl.len);
    });
  }
  // P[t]: at leader t, member j's receive buffer (blocks in source-rank
  // order) at j * row.
  std::vector<Slice> P(static_cast<size_t>(S));
  for (int t = 0; t < S; ++t) {
    const auto& g = M[size_t(t)];
    P[size_t(t)] = g.size() == 1 ? Slice{Buf::out, 0, row}
                                 : Slice{Buf::tmp, b.alloc_tmp(g[0], g.size() * row), g.size() * row};
  }
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < S; ++t) {
      const auto& from = M[size_t(s)];
      const auto& to = M[size_t(t)];
      const int ls = from[0], lt = to[0];
      // Blocks (i in s, j in t), i major.
      const uint64_t len = from.size() * to.size() * blk;
      Slice sent = G[size_t(s)], got = G[size_t(s)];
      if (s != t) {
        sent = {Buf::tmp, b.alloc_tmp(ls, len), len};
        got = {Buf::tmp, b.alloc_tmp(lt, len), len};
        if (b.wants(ls))
          for (size_t i = 0; i < from.size(); ++i)
            for (size_t j = 0; j < to.size(); ++j)
              b.copy(ls, sent.sub((i * to.size() + j) * blk, blk),
                     G[size_t(s)].sub(i * row + uint64_t(to[j]) * blk, blk));
        if (b.wants(ls)) b.send(ls, lt, sent);
        if (b.wants(lt)) b.recv(lt, ls, got);
      }
      if (!b.wants(lt)) continue;
      for (size_t i = 0; i < from.size(); ++i)
        for (size_t j = 0; j < to.size(); ++j) {
          const Slice src = s == t ? G[size_t(s)].sub(i * row + uint64_t(to[j]) * blk, blk)
                                   : got.sub((i * to.size() + j) * blk, blk);
          b.copy(lt, P[size_t(t)].sub(j * row + uint64_t(from[i]) * blk, blk), src);
        }
    }
  for (int t = 0; t < S; ++t) {
    const auto& g = M[size_t(t)];
    if (g.size() == 1) continue;
    run_phase(b, ctx, g, sub_call(CollOp::scatter, int(g.size()), uint64_t(p) * c.count, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? P[size_t(t)].sub(sl.off, sl.len) : sl;
    });
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

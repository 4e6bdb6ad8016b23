// hierarchical, allgather(v): up, among the leaders and down; or across to counterparts (direct=1).
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Allgather and allgatherv: host gathers → subnet gathervs → a top
// allgatherv of the subnets' blocks; then, where the blocks lie in rank
// order without gaps (allgather, a packed allgatherv), each subnet leader
// puts them in place and the whole output is broadcast inside subnets and
// hosts; otherwise the staged blocks are broadcast and every rank puts them
// in place (bytes between blocks are never written).
Schedule allgather(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const int p = c.nranks;
  const uint64_t e = c.elem_size;
  const Blocks blocks = coll_blocks(c);
  auto count = [&](int r) { return blocks.len[size_t(r)] / e; };
  auto own = [&](int r) { return Slice{Buf::in, 0, blocks.len[size_t(r)]}; };
  auto bytes_of = [&](const std::vector<int>& ranks) {
    uint64_t n = 0;
    for (int r : ranks) n += blocks.len[size_t(r)];
    return n;
  };
  // Staging: a leader's blocks of its group, in group order.
  std::vector<Slice> host_stage(static_cast<size_t>(p)), subnet_stage(static_cast<size_t>(p));
  std::vector<std::vector<int>> host_order(static_cast<size_t>(p)), subnet_order(static_cast<size_t>(p));
  for (auto& g : L.hosts) {
    const int lead = g[0];
    host_order[size_t(lead)] = g;
    if (g.size() == 1) {
      host_stage[size_t(lead)] = own(lead);
      continue;
    }
    const uint64_t len = bytes_of(g);
    const Slice st{Buf::tmp, b.alloc_tmp(lead, len), len};
    std::vector<uint64_t> counts;
    for (int r : g) counts.push_back(count(r));
    run_phase(b, ctx, g, blocks_call(CollOp::gather, CollOp::gatherv, counts, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return own(g[size_t(k)]).sub(s.off, s.len);
      return st.sub(s.off, s.len);
    }, &L.like(g));
    host_stage[size_t(lead)] = st;
  }
  for (auto& g : L.subnets) {
    const int lead = g[0];
    std::vector<uint64_t> counts;
    std::vector<int> order;
    for (int h : g) {
      counts.push_back(bytes_of(host_order[size_t(h)]) / e);
      order.insert(order.end(), host_order[size_t(h)].begin(), host_order[size_t(h)].end());
    }
    subnet_order[size_t(lead)] = order;
    if (g.size() == 1) {
      subnet_stage[size_t(lead)] = host_stage[size_t(lead)];
      continue;
    }
    const uint64_t len = bytes_of(order);
    const Slice st{Buf::tmp, b.alloc_tmp(lead, len), len};
    Collective sub = Collective::make_v(CollOp::gatherv, counts, 0, c.elem_size);
    run_phase(b, ctx, g, sub, [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return host_stage[size_t(g[size_t(k)])].sub(s.off, s.len);
      return st.sub(s.off, s.len);
    }, &L.like(g));
    subnet_stage[size_t(lead)] = st;
  }
  // Top: every subnet leader gets all blocks, in the order of `order`.
  std::vector<uint64_t> counts;
  std::vector<int> order;
  for (int s : L.top) {
    counts.push_back(bytes_of(subnet_order[size_t(s)]) / e);
    order.insert(order.end(), subnet_order[size_t(s)].begin(), subnet_order[size_t(s)].end());
  }
  const uint64_t total = bytes_of(order);
  const std::vector<uint64_t> at = offsets_in_order(blocks, order);  // where order[i]'s block lies in the staging
  std::vector<Slice> all(static_cast<size_t>(p));
  if (L.top.size() > 1) {
    Collective sub = Collective::make_v(CollOp::allgatherv, counts, 0, c.elem_size);
    for (int s : L.top) all[size_t(s)] = {Buf::tmp, b.alloc_tmp(s, total), total};
    run_phase(b, ctx, L.top, sub, [&](int k, const Slice& s) {
      const int r = L.top[size_t(k)];
      if (s.buf == Buf::in) return subnet_stage[size_t(r)].sub(s.off, s.len);
      return all[size_t(r)].sub(s.off, s.len);
    });
  } else {
    all[size_t(L.top[0])] = subnet_stage[size_t(L.top[0])];
  }
  // Rank r puts the staged blocks (in `from`) where they belong, its own
  // straight from its input.
  auto unpack = [&](int r, const Slice& from) {
    if (!b.wants(r)) return;
    for (size_t i = 0; i < order.size(); ++i) {
      const int owner = order[i];
      const Slice dst{Buf::out, blocks.off[size_t(owner)], blocks.len[size_t(owner)]};
      if (dst.len == 0) continue;
      b.copy(r, dst, owner == r ? own(r) : from.sub(at[i], dst.len));
    }
  };
  auto same = [](int, const Slice& s) { return s; };
  if (contiguous(blocks)) {
    for (int s : L.top) unpack(s, all[size_t(s)]);
    for (auto& g : L.subnets) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c), same, &L.like(g));
    for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c), same, &L.like(g));
    return b.finish();
  }
  // Gaps or blocks out of rank order: broadcast the staging, unpack everywhere.
  std::vector<Slice> staged = all;
  auto spread = [&](const std::vector<int>& g) {
    if (g.size() <= 1) return;
    for (size_t k = 1; k < g.size(); ++k) staged[size_t(g[k])] = {Buf::tmp, b.alloc_tmp(g[k], total), total};
    run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c),
              [&](int k, const Slice& s) { return staged[size_t(g[size_t(k)])].sub(s.off, s.len); }, &L.like(g));
  };
  for (auto& g : L.subnets) spread(g);
  for (auto& g : L.hosts) spread(g);
  for (int r = 0; r < p; ++r) unpack(r, staged[size_t(r)]);
  return b.finish();
}

// Allgather, direct: an allgather inside every subnet, then every rank
// takes the other subnets' blocks from its counterpart there (rank j of
// subnet t from rank j mod |s| of subnet s) and puts all in rank order. One
// crossing of the slow links, but every rank's: for small blocks.
Schedule allgather_direct(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical[direct=1]");
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  const uint64_t blk = c.count * c.elem_size;
  const int S = int(M.size());
  // have[r][s]: where rank r holds subnet s's blocks (in member order).
  std::vector<std::vector<Slice>> have(static_cast<size_t>(c.nranks), std::vector<Slice>(size_t(S)));
  for (int s = 0; s < S; ++s) {
    const auto& g = M[size_t(s)];
    const uint64_t len = g.size() * blk;
    for (int r : g) have[size_t(r)][size_t(s)] = {Buf::tmp, b.alloc_tmp(r, len), len};
    if (g.size() == 1) {
      if (b.wants(g[0])) b.copy(g[0], have[size_t(g[0])][size_t(s)], {Buf::in, 0, blk});
      continue;
    }
    run_phase(b, ctx, g, sub_call(CollOp::allgather, int(g.size()), c.count, c), [&](int k, const Slice& sl) {
      if (sl.buf == Buf::in) return sl;
      return have[size_t(g[size_t(k)])][size_t(s)].sub(sl.off, sl.len);
    });
  }
  for (int t = 0; t < S; ++t)
    for (int s = 0; s < S; ++s) {
      if (s == t) continue;
      const auto& from = M[size_t(s)];
      const auto& to = M[size_t(t)];
      const uint64_t len = from.size() * blk;
      for (size_t j = 0; j < to.size(); ++j) {
        const int dst = to[j], src = from[j % from.size()];
        have[size_t(dst)][size_t(s)] = {Buf::tmp, b.alloc_tmp(dst, len), len};
        if (b.wants(src)) b.send(src, dst, have[size_t(src)][size_t(s)]);
        if (b.wants(dst)) b.recv(dst, src, have[size_t(dst)][size_t(s)]);
      }
    }
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    for (int s = 0; s < S; ++s)
      for (size_t i = 0; i < M[size_t(s)].size(); ++i) {
        const int owner = M[size_t(s)][i];
        const Slice dst{Buf::out, uint64_t(owner) * blk, blk};
        b.copy(r, dst, owner == r ? Slice{Buf::in, 0, blk} : have[size_t(r)][size_t(s)].sub(i * blk, blk));
      }
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

// hierarchical, reduce_scatter(_block): combined up the levels, shares scattered down.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Reduce-scatter (equal blocks, or reduce_scatter's counts): every rank
// lays its vector out in level order; combine up to the subnet leaders
// (host reduces, subnet reduces), a reduce-scatter among the subnet leaders
// hands each its subnet's blocks, then scatters inside each subnet and
// each host deliver the blocks.
Schedule reduce_scatter(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const int p = c.nranks;
  const uint64_t e = c.elem_size;
  const Blocks blocks = coll_blocks(c);
  auto len = [&](int r) { return blocks.len[size_t(r)]; };
  const uint64_t all = blocks.span(0, p);
  const std::vector<int> order = level_order(L);
  const std::vector<uint64_t> at = offsets_in_order(blocks, order);  // where order[i]'s block lies in level order
  // The permuted input of every rank.
  std::vector<Slice> partial(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    partial[size_t(r)] = {Buf::tmp, b.alloc_tmp(r, all), all};
    if (!b.wants(r)) continue;
    for (size_t i = 0; i < order.size(); ++i)
      if (len(order[i]))
        b.copy(r, partial[size_t(r)].sub(at[i], len(order[i])), {Buf::in, blocks.off[size_t(order[i])], len(order[i])});
  }
  auto reduce_to_leader = [&](const std::vector<int>& g) {
    if (g.size() <= 1) return;
    const Slice dest{Buf::tmp, b.alloc_tmp(g[0], all), all};
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), all / e, c), [&](int k, const Slice& sl) {
      if (sl.buf == Buf::in) return partial[size_t(g[size_t(k)])].sub(sl.off, sl.len);
      return dest.sub(sl.off, sl.len);
    }, &L.like(g));
    partial[size_t(g[0])] = dest;
  };
  for (auto& g : L.hosts) reduce_to_leader(g);
  for (auto& g : L.subnets) reduce_to_leader(g);
  // Bytes per host and per subnet (by leader), and the hosts' ranks.
  std::map<int, uint64_t> host_bytes, subnet_bytes;
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) {
    host_of_leader[g[0]] = &g;
    for (int r : g) host_bytes[g[0]] += len(r);
  }
  for (auto& g : L.subnets)
    for (int h : g) subnet_bytes[g[0]] += host_bytes[h];
  // Top: subnet leader s gets its subnet's blocks (contiguous in level order).
  std::vector<Slice> mine(static_cast<size_t>(p));
  for (int s : L.top) {
    const uint64_t n = subnet_bytes[s];
    mine[size_t(s)] = L.top.size() > 1 ? Slice{Buf::tmp, b.alloc_tmp(s, n), n} : partial[size_t(s)].sub(0, n);
  }
  if (L.top.size() > 1) {
    std::vector<uint64_t> counts;
    for (int s : L.top) counts.push_back(subnet_bytes[s] / e);
    Collective rs = Collective::make_v(CollOp::reduce_scatter, counts, 0, c.elem_size);
    rs.order_free = c.order_free;
    run_phase(b, ctx, L.top, rs, [&](int k, const Slice& sl) {
      const int r = L.top[size_t(k)];
      return sl.buf == Buf::in ? partial[size_t(r)].sub(sl.off, sl.len) : mine[size_t(r)].sub(sl.off, sl.len);
    });
  }
  // Inside each subnet: the leader's blocks to its hosts' leaders.
  for (auto& g : L.subnets) {
    if (g.size() <= 1) continue;
    std::vector<uint64_t> counts;
    for (int h : g) counts.push_back(host_bytes[h] / e);
    for (size_t k = 1; k < g.size(); ++k) mine[size_t(g[k])] = {Buf::tmp, b.alloc_tmp(g[k], host_bytes[g[k]]), host_bytes[g[k]]};
    const Slice from = mine[size_t(g[0])];
    std::vector<Slice> to(g.size());
    for (size_t k = 0; k < g.size(); ++k)
      to[k] = k == 0 ? Slice{Buf::tmp, b.alloc_tmp(g[0], host_bytes[g[0]]), host_bytes[g[0]]} : mine[size_t(g[k])];
    run_phase(b, ctx, g, blocks_call(CollOp::scatter, CollOp::scatterv, counts, c), [&](int k, const Slice& sl) {
      return sl.buf == Buf::in ? from.sub(sl.off, sl.len) : to[size_t(k)].sub(sl.off, sl.len);
    }, &L.like(g));
    mine[size_t(g[0])] = to[0];
  }
  // Inside each host: each rank its block, into out.
  for (auto& g : L.hosts) {
    const Slice from = mine[size_t(g[0])];
    if (g.size() == 1) {
      if (b.wants(g[0]) && len(g[0])) b.copy(g[0], {Buf::out, 0, len(g[0])}, from.sub(0, len(g[0])));
      continue;
    }
    std::vector<uint64_t> counts;
    for (int r : g) counts.push_back(len(r) / e);
    run_phase(b, ctx, g, blocks_call(CollOp::scatter, CollOp::scatterv, counts, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? from.sub(sl.off, sl.len) : sl;
    }, &L.like(g));
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

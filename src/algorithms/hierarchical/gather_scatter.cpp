// hierarchical, gather and scatter: blocks up or down the levels.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Gather: host gathers → subnet gathervs → a gatherv of the subnets' blocks
// among the subnet leaders to the root (which leads them all) → the root
// puts the blocks in rank order. Scatter is the same backwards. Across the
// slow links one message per subnet.
Schedule gather_or_scatter(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const bool gather = c.op == CollOp::gather;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  const uint64_t blk = c.count * c.elem_size;
  const int p = c.nranks, root = c.root;
  const std::vector<int> order = level_order(L);  // the root's staging, block i from/to order[i]
  std::map<int, const std::vector<int>*> host_of_leader, subnet_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  for (auto& g : L.subnets) subnet_of_leader[g[0]] = &g;
  auto ranks_under = [&](int subnet_leader) {
    uint64_t n = 0;
    for (int h : *subnet_of_leader[subnet_leader]) n += host_of_leader[h]->size();
    return n;
  };
  // stage[r]: a leader's blocks of everything under it, in level order.
  std::vector<Slice> host_stage(static_cast<size_t>(p)), subnet_stage(static_cast<size_t>(p));
  for (auto& g : L.hosts) {
    const uint64_t len = g.size() * blk;
    host_stage[size_t(g[0])] = g.size() == 1 ? Slice{gather ? Buf::in : Buf::out, 0, blk}
                                             : Slice{Buf::tmp, b.alloc_tmp(g[0], len), len};
  }
  for (auto& g : L.subnets) {
    const uint64_t len = ranks_under(g[0]) * blk;
    subnet_stage[size_t(g[0])] = g.size() == 1 ? host_stage[size_t(g[0])] : Slice{Buf::tmp, b.alloc_tmp(g[0], len), len};
  }
  const Slice all = L.top.size() == 1 ? subnet_stage[size_t(root)] : Slice{Buf::tmp, b.alloc_tmp(root, uint64_t(p) * blk), uint64_t(p) * blk};
  auto host_phase = [&] {
    for (auto& g : L.hosts) {
      if (g.size() == 1) continue;
      const Slice st = host_stage[size_t(g[0])];
      run_phase(b, ctx, g, sub_call(c.op, int(g.size()), c.count, c), [&](int, const Slice& sl) {
        if ((sl.buf == Buf::out) == gather) return st.sub(sl.off, sl.len);  // the root's side
        return sl;
      }, &L.like(g));
    }
  };
  auto subnet_phase = [&] {
    for (auto& g : L.subnets) {
      if (g.size() == 1) continue;
      std::vector<uint64_t> counts;
      for (int h : g) counts.push_back(host_of_leader[h]->size() * c.count);
      const Slice st = subnet_stage[size_t(g[0])];
      Collective sub = Collective::make_v(gather ? CollOp::gatherv : CollOp::scatterv, counts, 0, c.elem_size);
      run_phase(b, ctx, g, sub, [&](int k, const Slice& sl) {
        const bool root_side = (sl.buf == Buf::out) == gather;
        return root_side ? st.sub(sl.off, sl.len) : host_stage[size_t(g[size_t(k)])].sub(sl.off, sl.len);
      }, &L.like(g));
    }
  };
  auto top_phase = [&] {
    if (L.top.size() == 1) return;
    std::vector<uint64_t> counts;
    for (int s : L.top) counts.push_back(ranks_under(s) * c.count);
    Collective sub = Collective::make_v(gather ? CollOp::gatherv : CollOp::scatterv, counts, 0, c.elem_size);
    run_phase(b, ctx, L.top, sub, [&](int k, const Slice& sl) {
      const bool root_side = (sl.buf == Buf::out) == gather;
      return root_side ? all.sub(sl.off, sl.len) : subnet_stage[size_t(L.top[size_t(k)])].sub(sl.off, sl.len);
    });
  };
  // The root's blocks between rank order (its buffer) and level order (all).
  auto permute = [&] {
    if (!b.wants(root)) return;
    for (size_t i = 0; i < order.size(); ++i) {
      const Slice user{gather ? Buf::out : Buf::in, uint64_t(order[i]) * blk, blk};
      if (gather) b.copy(root, user, order[i] == root ? Slice{Buf::in, 0, blk} : all.sub(i * blk, blk));
      else b.copy(root, all.sub(i * blk, blk), user);  // the root's own block too: the phases deliver it
    }
  };
  if (gather) {
    host_phase();
    subnet_phase();
    top_phase();
    permute();
  } else {
    permute();
    top_phase();
    subnet_phase();
    host_phase();
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

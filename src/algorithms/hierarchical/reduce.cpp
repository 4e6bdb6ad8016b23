// hierarchical, reduce: the vector up the levels, pipelined in pieces.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Combines everybody's input up the hierarchy to the leaders of `upto`'s
// groups; returns where each rank's partial result lies (its input where it
// combined nothing). The root's partial at level `final_level` goes to
// `root_out` when given.
std::vector<Slice> reduce_up(Builder& b, const GenContext& ctx, const Levels& L, bool include_top,
                             const Slice* root_out, const Piece& pc) {
  const Collective& c = ctx.coll;
  const uint64_t m = pc.count * c.elem_size;
  std::vector<Slice> partial(size_t(c.nranks), Slice{Buf::in, pc.first * c.elem_size, m});
  // The last phase the root leads with others in it writes to root_out.
  const int root = c.root;
  int last = -1;  // 0 host, 1 subnet, 2 top
  if (L.hosts[0].size() > 1) last = 0;
  if (L.subnets[0].size() > 1) last = 1;
  if (include_top && L.top.size() > 1) last = 2;
  auto phase = [&](const std::vector<int>& g, int level) {
    if (g.size() <= 1) return;
    const int leader = g[0];
    Slice dest = root_out && leader == root && level == last ? *root_out
                                                             : Slice{Buf::tmp, b.alloc_tmp(leader, m), m};
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), pc.count, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return partial[size_t(g[size_t(k)])].sub(s.off, s.len);
      return dest.sub(s.off, s.len);  // out: the leader's
    }, &L.like(g));
    partial[size_t(leader)] = dest;
  };
  for (auto& g : L.hosts) phase(g, 0);
  for (auto& g : L.subnets) phase(g, 1);
  if (include_top) phase(L.top, 2);
  return partial;
}

Schedule reduce(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  for (const Piece& pc : pieces_of(ctx)) {
    const Slice out{Buf::out, pc.first * c.elem_size, pc.count * c.elem_size};
    std::vector<Slice> partial = reduce_up(b, ctx, L, true, &out, pc);
    if (partial[size_t(c.root)].buf == Buf::in && b.wants(c.root)) b.copy(c.root, out, partial[size_t(c.root)]);
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

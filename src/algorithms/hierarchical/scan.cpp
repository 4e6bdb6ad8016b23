// hierarchical, scan and exscan: prefixes inside the levels, then across them.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

// Scan and exscan (every host's and subnet's ranks consecutive): inside
// each host an exscan (the ranks before, on the host) and a reduce (the
// host's sum); among each subnet's hosts an exscan and a reduce of those
// sums; among the subnets an exscan of theirs; then each subnet's offset
// is broadcast to its hosts, each host's to its ranks, and every rank adds
// the three parts (and, for scan, its own input). Across the slow links one
// exscan among the subnet leaders.
Schedule scan(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const bool ex = c.op == CollOp::exscan;
  Builder b = make_builder(ctx, "hierarchical");
  Levels L = levels_of(ctx.model, c.nranks, 0, true);
  if (!consecutive(L))
    throw InputError("hierarchical scan/exscan needs every host's and every subnet's ranks to be consecutive");
  // Groups in rank order (leaders the lowest ranks), whatever order the
  // ring gave the leaders.
  for (auto& g : L.subnets) std::sort(g.begin(), g.end());
  L.subnet_like = alike_groups(ctx.model, L.subnets);  // found again for the groups as now ordered
  L.top.clear();
  for (auto& g : L.subnets) L.top.push_back(g[0]);
  std::sort(L.top.begin(), L.top.end());
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  auto fresh = [&](int r) { return Slice{Buf::tmp, b.alloc_tmp(r, m), m}; };
  using Part = std::optional<Slice>;  // nothing: the identity (no ranks before)
  // x ⊕ y at rank r, where both may be the identity.
  auto combine = [&](int r, const Part& x, const Part& y) -> Part {
    if (!x) return y;
    if (!y) return x;
    const Slice d = fresh(r);
    if (b.wants(r)) {
      b.copy(r, d, *x);
      b.reduce(r, d, *y);
    }
    return d;
  };
  // The exscan (into excl[]) and the sum at the leader (into sum[g[0]]) of
  // the parts `of` of a group's members, in rank order.
  auto prefix_and_sum = [&](const std::vector<int>& g, std::vector<Slice>& of, std::vector<Part>& excl,
                            std::vector<Slice>* sum) {
    if (g.size() == 1) {
      if (sum) (*sum)[size_t(g[0])] = of[size_t(g[0])];
      return;
    }
    const Slice scratch = fresh(g[0]);  // member 0's exscan output is undefined
    for (size_t k = 1; k < g.size(); ++k) excl[size_t(g[k])] = fresh(g[k]);
    run_phase(b, ctx, g, sub_call(CollOp::exscan, int(g.size()), c.count, c), [&](int k, const Slice& s) {
      const int r = g[size_t(k)];
      if (s.buf == Buf::in) return of[size_t(r)].sub(s.off, s.len);
      return (k == 0 ? scratch : *excl[size_t(r)]).sub(s.off, s.len);
    }, &L.like(g));
    if (!sum) return;
    const Slice total = fresh(g[0]);
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), c.count, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return of[size_t(g[size_t(k)])].sub(s.off, s.len);
      return total.sub(s.off, s.len);
    }, &L.like(g));
    (*sum)[size_t(g[0])] = total;
  };
  std::vector<Slice> input(static_cast<size_t>(p), in), host_sum(static_cast<size_t>(p)), subnet_sum(static_cast<size_t>(p));
  std::vector<Part> in_host(static_cast<size_t>(p)), in_subnet(static_cast<size_t>(p)), among(static_cast<size_t>(p));
  const bool top = L.top.size() > 1;
  for (auto& g : L.hosts) prefix_and_sum(g, input, in_host, &host_sum);  // root 0: members in rank order
  for (auto& g : L.subnets) prefix_and_sum(g, host_sum, in_subnet, top ? &subnet_sum : nullptr);
  if (top) prefix_and_sum(L.top, subnet_sum, among, nullptr);
  // Offsets down: a subnet's (the subnets before it) to its host leaders,
  // each host's (subnets and hosts before it) to its ranks.
  auto spread = [&](const std::vector<int>& g, std::vector<Part>& part) {
    const Part from = part[size_t(g[0])];
    if (!from || g.size() == 1) return;
    for (size_t k = 1; k < g.size(); ++k) part[size_t(g[k])] = fresh(g[k]);
    run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), c.count, c),
              [&](int k, const Slice& s) { return part[size_t(g[size_t(k)])]->sub(s.off, s.len); }, &L.like(g));
  };
  std::vector<Part> host_offset(static_cast<size_t>(p));
  for (auto& g : L.subnets) {
    spread(g, among);
    for (int h : g) host_offset[size_t(h)] = combine(h, among[size_t(h)], in_subnet[size_t(h)]);
  }
  for (auto& g : L.hosts) spread(g, host_offset);
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    const Part excl = combine(r, host_offset[size_t(r)], in_host[size_t(r)]);
    if (ex) {
      if (excl) b.copy(r, out, *excl);  // rank 0's output is undefined
    } else if (!excl) {
      if (!c.in_place) b.copy(r, out, in);
    } else if (c.in_place) {
      b.reduce(r, out, *excl);  // out holds the input
    } else {
      b.copy(r, out, in);
      b.reduce(r, out, *excl);
    }
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

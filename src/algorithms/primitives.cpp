#include "algorithms/primitives.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace hetcoll {

namespace {
int node_of(int member, int root, int k) { return (member - root + k) % k; }
int member_of(int node, int root, int k) { return (node + root) % k; }
}  // namespace

void tree_bcast(Builder& b, const Group& g, const Tree& t, int root, Slice data) {
  const int k = g.size();
  if (data.len == 0) return;
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    int v = node_of(m, root, k);
    bool has_parent = t.parent[size_t(v)] >= 0;
    // Explicit dependencies, so that builders without inference (the λ-tree
    // for millions of ranks) get them too.
    uint32_t got = has_parent ? b.recv(g[m], g[member_of(t.parent[size_t(v)], root, k)], data) : 0;
    for (uint32_t c = t.child_begin[size_t(v)]; c < t.child_begin[size_t(v) + 1]; ++c) {
      int to = g[member_of(t.children[c], root, k)];
      if (has_parent) b.send(g[m], to, data, {got});
      else b.send(g[m], to, data);
    }
  }
}

void tree_reduce(Builder& b, const Group& g, const Tree& t, int root, const SliceOf& work) {
  const int k = g.size();
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    Slice w = work(m);
    if (w.len == 0) continue;
    int v = node_of(m, root, k);
    uint32_t c0 = t.child_begin[size_t(v)], c1 = t.child_begin[size_t(v) + 1];
    uint32_t nchild = c1 - c0;
    // Two scratch slots: a third child's data waits until the first is combined.
    uint32_t slots = std::min<uint32_t>(nchild, 2);
    uint64_t base = slots ? b.alloc_tmp(g[m], uint64_t(slots) * w.len) : 0;
    for (uint32_t j = 0; j < nchild; ++j) {
      int child = member_of(t.children[c1 - 1 - j], root, k);  // smallest subtree first
      Slice slot{Buf::tmp, base + uint64_t(j % slots) * w.len, w.len};
      b.recv(g[m], g[child], slot);
      b.reduce(g[m], w, slot);
    }
    if (t.parent[size_t(v)] >= 0) b.send(g[m], g[member_of(t.parent[size_t(v)], root, k)], w);
  }
}

std::vector<RangeEdge> mst_edges(int k, int root) {
  std::vector<RangeEdge> edges;
  struct Task {
    int lo, hi, holder;
  };
  std::vector<Task> stack{{0, k, root}};
  while (!stack.empty()) {
    Task t = stack.back();
    stack.pop_back();
    if (t.hi - t.lo <= 1) continue;
    // The holder keeps the larger half ⌈len/2⌉: then its own chain of sends
    // is the critical path, ⌈log2 len⌉ steps carrying (len-1) blocks.
    int len = t.hi - t.lo, keep = (len + 1) / 2;
    Task own, other;
    if (t.holder - t.lo < keep) {
      own = {t.lo, t.lo + keep, t.holder};
      other = {t.lo + keep, t.hi, std::min(t.hi - 1, t.lo + keep + (t.holder - t.lo))};
    } else {
      own = {t.hi - keep, t.hi, t.holder};
      other = {t.lo, t.hi - keep, t.lo + (t.holder - (t.hi - keep)) % (len - keep)};
    }
    edges.push_back({t.holder, other.holder, other.lo, other.hi});
    stack.push_back(other);
    stack.push_back(own);  // the holder's next send comes before the leader's
  }
  return edges;
}

std::vector<std::pair<int, int>> mst_ranges(int k, int root) {
  std::vector<std::pair<int, int>> r(static_cast<size_t>(k), {0, 0});
  if (k > 0) r[size_t(root)] = {0, k};
  for (auto& e : mst_edges(k, root)) r[size_t(e.to)] = {e.a, e.b};
  return r;
}

namespace {
struct MemberEdges {
  std::vector<const RangeEdge*> sends;
  const RangeEdge* recv = nullptr;
};
std::vector<MemberEdges> by_member(const std::vector<RangeEdge>& edges, int k) {
  std::vector<MemberEdges> v(static_cast<size_t>(k));
  for (auto& e : edges) {
    v[size_t(e.from)].sends.push_back(&e);
    v[size_t(e.to)].recv = &e;
  }
  return v;
}
}  // namespace

void mst_scatter(Builder& b, const Group& g, int root, const Place& place) {
  const int k = g.size();
  auto edges = mst_edges(k, root);
  auto mine = by_member(edges, k);
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    if (const RangeEdge* r = mine[size_t(m)].recv) {
      Slice s = place(m, r->a, r->b);
      if (s.len) b.recv(g[m], g[r->from], s);
    }
    for (const RangeEdge* e : mine[size_t(m)].sends) {
      Slice s = place(m, e->a, e->b);
      if (s.len) b.send(g[m], g[e->to], s);
    }
  }
}

void mst_gather(Builder& b, const Group& g, int root, const Place& place) {
  const int k = g.size();
  auto edges = mst_edges(k, root);
  auto mine = by_member(edges, k);
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    auto& sends = mine[size_t(m)].sends;
    for (auto it = sends.rbegin(); it != sends.rend(); ++it) {
      Slice s = place(m, (*it)->a, (*it)->b);
      if (s.len) b.recv(g[m], g[(*it)->to], s);
    }
    if (const RangeEdge* r = mine[size_t(m)].recv) {
      Slice s = place(m, r->a, r->b);
      if (s.len) b.send(g[m], g[r->from], s);
    }
  }
}

Place mst_staging(Builder& b, const Group& g, int root, const Blocks& blocks,
                  const std::function<Slice(int a, int b)>& at_root, const SliceOf& own) {
  const int k = g.size();
  auto ranges = mst_ranges(k, root);
  std::vector<uint64_t> base(static_cast<size_t>(k), 0);
  for (int m = 0; m < k; ++m) {
    auto [a, e] = ranges[size_t(m)];
    if (m != root && e - a > 1) base[size_t(m)] = b.alloc_tmp(g[m], blocks.span(a, e));
  }
  return [=](int m, int x, int y) -> Slice {
    if (m == root) return at_root(x, y);
    auto [a, e] = ranges[size_t(m)];
    if (e - a == 1) return own(m);
    return Slice{Buf::tmp, base[size_t(m)] + blocks.off[size_t(x)] - blocks.off[size_t(a)], blocks.span(x, y)};
  };
}

void ring_allgather(Builder& b, const Group& g, const Place& place) {
  const int k = g.size();
  for (int m = 0; m < k && k > 1; ++m) {
    if (!b.wants(g[m])) continue;
    int right = g[(m + 1) % k], left = g[(m - 1 + k) % k];
    for (int s = 1; s < k; ++s) {
      int out_blk = ((m - s + 1) % k + k) % k, in_blk = ((m - s) % k + k) % k;
      Slice so = place(m, out_blk, out_blk + 1), si = place(m, in_blk, in_blk + 1);
      if (so.len) b.send(g[m], right, so);
      if (si.len) b.recv(g[m], left, si);
    }
  }
}

void ring_reduce_scatter(Builder& b, const Group& g, const Place& work) {
  const int k = g.size();
  for (int m = 0; m < k && k > 1; ++m) {
    if (!b.wants(g[m])) continue;
    int right = g[(m + 1) % k], left = g[(m - 1 + k) % k];
    uint64_t maxlen = 0;
    for (int j = 0; j < k; ++j) maxlen = std::max(maxlen, work(m, j, j + 1).len);
    uint64_t slots = maxlen ? b.alloc_tmp(g[m], 2 * maxlen) : 0;
    for (int s = 1; s < k; ++s) {
      int out_blk = ((m - s) % k + k) % k, in_blk = ((m - s - 1) % k + k) % k;
      Slice so = work(m, out_blk, out_blk + 1), wi = work(m, in_blk, in_blk + 1);
      if (so.len) b.send(g[m], right, so);
      if (wi.len) {
        Slice slot{Buf::tmp, slots + uint64_t(s % 2) * maxlen, wi.len};
        b.recv(g[m], left, slot);
        b.reduce(g[m], wi, slot);
      }
    }
  }
}

}  // namespace hetcoll

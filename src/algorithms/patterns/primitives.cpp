#include "algorithms/patterns/primitives.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace hetcoll {

namespace {
int node_of(int member, int root, int k) { return (member - root + k) % k; }
int member_of(int node, int root, int k) { return (node + root) % k; }
}  // namespace

void tree_bcast(Builder& b, const Group& g, const Tree& t, int root, Slice data, bool serial) {
  const int k = g.size();
  if (data.len == 0) return;
  // A node's children in turn, one send at a time (the tree's order is the
  // point: the first child forwards while the node sends to the next).
  struct Serial {
    Builder& b;
    Serial(Builder& x, bool on) : b(x) { b.serial_sends(on); }
    ~Serial() { b.serial_sends(false); }
  } one_at_a_time(b, serial);
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

void mst_scatter_blocks(Builder& b, const Group& g, int root, const Blocks& blocks,
                        const std::function<Slice(int a, int b)>& at_root, const SliceOf& own) {
  Place place = mst_staging(b, g, root, blocks, at_root, own);
  mst_scatter(b, g, root, place);
  for (int m = 0; m < g.size(); ++m) {
    const Slice held = place(m, m, m + 1), mine = own(m);
    if (b.wants(g[m]) && held.len && held.buf != mine.buf) b.copy(g[m], mine, held);
  }
}

void mst_gather_blocks(Builder& b, const Group& g, int root, const Blocks& blocks,
                       const std::function<Slice(int a, int b)>& at_root, const SliceOf& own) {
  Place place = mst_staging(b, g, root, blocks, at_root, own);
  for (int m = 0; m < g.size(); ++m) {
    const Slice staged = place(m, m, m + 1), mine = own(m);
    if (b.wants(g[m]) && staged.len && staged.buf != mine.buf) b.copy(g[m], staged, mine);
  }
  mst_gather(b, g, root, place);
}

namespace {
// Ring sends go out in step order: each waits for the previous one. With
// data-driven order a rank whose own block arrives late forwards the others
// first and delays the ring by a step; in step order the ring finishes at
// (last rank ready) + (k-1) steps, which no order can beat. Likewise the
// ring's receives are posted once the rank's own data is there, so that an
// early ring message cannot take the receive port from the message that
// brings it (one-port receive).
int64_t send_in_order(Builder& b, int rank, int to, Slice s, int64_t prev) {
  if (prev >= 0) return b.send(rank, to, s, {uint32_t(prev)});
  return b.send(rank, to, s);
}
}  // namespace

namespace {
// Ring steps that move a non-empty block, in step order: for member m the
// block sent in step s is (m-s+1) mod k and the one received (m-s) mod k
// (reduce-scatter: shift one more). Iterating over the non-empty blocks keeps
// the cost O(k·blocks) when most blocks are empty.
struct RingStep {
  int step, block;
  bool send;
};
std::vector<RingStep> ring_steps(int m, int k, const std::vector<int>& nonempty, int shift) {
  std::vector<RingStep> v;
  for (int j : nonempty) {
    int s_send = ((m - j + 1 - shift) % k + k) % k, s_recv = ((m - j - shift) % k + k) % k;
    if (s_send >= 1) v.push_back({s_send, j, true});
    if (s_recv >= 1) v.push_back({s_recv, j, false});
  }
  std::sort(v.begin(), v.end(), [](const RingStep& a, const RingStep& b) {
    return a.step != b.step ? a.step < b.step : a.send > b.send;
  });
  return v;
}
}  // namespace

void ring_allgather(Builder& b, const Group& g, const Place& place) {
  const int k = g.size();
  if (k < 2) return;
  // Block sizes are the same on every member: look them up once.
  std::vector<int> nonempty;
  for (int j = 0; j < k; ++j)
    if (place(0, j, j + 1).len) nonempty.push_back(j);
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    int right = g[(m + 1) % k], left = g[(m - 1 + k) % k];
    const std::vector<uint32_t> own_ready = b.last_writers(g[m], place(m, m, m + 1));
    int64_t prev_send = -1;
    for (const RingStep& st : ring_steps(m, k, nonempty, 0)) {
      Slice s = place(m, st.block, st.block + 1);
      if (st.send) prev_send = send_in_order(b, g[m], right, s, prev_send);
      else b.recv_after(g[m], left, s, own_ready);
    }
  }
}

void ring_reduce_scatter(Builder& b, const Group& g, const Place& work) {
  const int k = g.size();
  if (k < 2) return;
  std::vector<int> nonempty;
  uint64_t maxlen = 0;
  for (int j = 0; j < k; ++j) {
    uint64_t len = work(0, j, j + 1).len;
    if (len) nonempty.push_back(j);
    maxlen = std::max(maxlen, len);
  }
  if (maxlen == 0) return;
  for (int m = 0; m < k; ++m) {
    if (!b.wants(g[m])) continue;
    int right = g[(m + 1) % k], left = g[(m - 1 + k) % k];
    uint64_t slots = b.alloc_tmp(g[m], 2 * maxlen);
    const std::vector<uint32_t> own_ready = b.last_writers(g[m], work(m, 0, k));
    int64_t prev_send = -1;
    for (const RingStep& st : ring_steps(m, k, nonempty, 1)) {
      Slice w = work(m, st.block, st.block + 1);
      if (st.send) {
        prev_send = send_in_order(b, g[m], right, w, prev_send);
      } else {
        Slice slot{Buf::tmp, slots + uint64_t(st.step % 2) * maxlen, w.len};
        b.recv_after(g[m], left, slot, own_ready);
        b.reduce(g[m], w, slot);
      }
    }
  }
}

}  // namespace hetcoll

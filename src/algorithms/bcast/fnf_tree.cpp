// fnf_tree — broadcast and reduce over a tree grown greedily on the
// machine's per-node and per-pair costs: fastest node first, each to the
// sender that gets the data to it earliest.
//
// Nodes are taken fastest first (a node's own send and receive costs for a
// message of this size: Banikazemi's S(i) + R(i)); each goes to the
// informed node whose send would complete at it earliest — the sender's
// port free time plus send + arrival + receive for that pair (eqs. 1-4),
// among the 32 senders whose ports free first. The sender's port is then
// busy one send longer and the node can send once it has the data. On a
// postal or Hockney model all nodes are alike and the tree is the greedy
// λ-tree (Bruck §2.3); on a heterogeneous one fast nodes get the data early
// and do most of the forwarding (Banikazemi §4: "choosing trees").
// Reduce: the same greedy backwards in time, on messages towards the root:
// a parent's receive port and CPU (receive + combine) are what children
// queue for. Gather and scatter: the tree grown on one block (gather
// towards the root), each node passing on its subtree's blocks in one
// message (depth-first order, so a child's part is contiguous).
// Steps: depends on the machine; n-1 messages of m bytes.
// Constraints: any n, any root.
// Source: Banikazemi et al. 1999 §4; Banikazemi, Moorthy & Panda, ICPP 1998
// (Fastest Node First); Bhat, Raghavendra & Prasanna 1999 (earliest
// completing edge first).
// Cost: the greedy's completion time (eqs. 6-7 on the tree it builds)
#include <algorithm>
#include <cmath>
#include <queue>

#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {

constexpr size_t kSendersTried = 32;

// Nodes are relative ranks (node v is rank (v + root) mod n). toward_root:
// price messages from child to parent (reduce) instead.
// completion: where given, when the greedy has the last node done (the
// tree's time on the model's per-pair costs, links not shared).
Tree fnf(const MachineModel& m, int n, int root, uint64_t bytes, bool toward_root, double* completion = nullptr) {
  auto rank = [&](int v) { return (v + root) % n; };
  auto cost = [&](int parent, int child) {
    return toward_root ? m.message(rank(child), rank(parent), bytes) : m.message(rank(parent), rank(child), bytes);
  };
  // Broadcast: the parent's send port is busy `send` per child, the child
  // has the data arrive + recv after the send starts. Reduce, read backwards
  // in time: the parent's receive port (and CPU) is busy recv + combine per
  // child, and the child's subtree must be done arrive + recv + combine
  // before the parent finishes with it.
  auto busy = [&](int parent, int child) {
    const MessageCost c = cost(parent, child);
    return toward_root ? c.recv + m.reduce_time(rank(parent), bytes) : c.send;
  };
  auto reach = [&](int parent, int child) {
    const MessageCost c = cost(parent, child);
    return c.arrive + c.recv + (toward_root ? m.reduce_time(rank(parent), bytes) : 0.0);
  };
  // Fastest first: a node's own overheads for a message to and from the root.
  std::vector<int> order;
  std::vector<double> speed(static_cast<size_t>(n), 0);
  for (int v = 1; v < n; ++v) {
    const MessageCost out = cost(v, 0), in = cost(0, v);
    speed[size_t(v)] = out.send + in.recv;
    order.push_back(v);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return speed[size_t(a)] < speed[size_t(b)]; });
  // Informed senders by the time their port is free.
  using Item = std::pair<double, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> free_at;
  free_at.push({0.0, 0});
  std::vector<std::pair<int32_t, int32_t>> edges;
  std::vector<Item> tried;
  for (int v : order) {
    tried.clear();
    double best = INFINITY;
    size_t pick = 0;
    while (!free_at.empty() && tried.size() < kSendersTried) {
      tried.push_back(free_at.top());
      free_at.pop();
      const Item& s = tried.back();
      const double done = s.first + reach(s.second, v);
      if (done < best) best = done, pick = tried.size() - 1;
    }
    const int s = tried[pick].second;
    edges.push_back({s, v});
    for (size_t i = 0; i < tried.size(); ++i)
      free_at.push(i == pick ? Item{tried[i].first + busy(s, v), s} : tried[i]);
    free_at.push({best, v});
    if (completion) *completion = std::max(*completion, best);
  }
  return Tree::from_edges(n, edges);
}

// Gather and scatter along the tree: a node keeps its subtree's blocks in
// depth-first order (itself, then each child's subtree in send order), so
// that a child's part is one contiguous piece; the root puts them in (or
// takes them from) rank order.
Schedule gather_scatter(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const bool gather = c.op == CollOp::gather;
  const int n = c.nranks, root = c.root;
  const uint64_t blk = c.count * c.elem_size;
  const Tree t = fnf(ctx.model, n, root, blk, gather);
  auto rank = [&](int v) { return (v + root) % n; };
  // Subtree sizes and each node's depth-first order.
  std::vector<uint64_t> size(static_cast<size_t>(n), 1);
  std::vector<int> order{0};  // breadth first: parents before children
  for (size_t k = 0; k < order.size(); ++k)
    for (uint32_t e = t.child_begin[size_t(order[k])]; e < t.child_begin[size_t(order[k]) + 1]; ++e)
      order.push_back(t.children[e]);
  for (size_t k = order.size(); k-- > 1;) size[size_t(t.parent[size_t(order[k])])] += size[size_t(order[k])];
  Builder b = make_builder(ctx, "fnf_tree");
  // stage[v]: node v's subtree blocks (a leaf's own buffer).
  std::vector<Slice> stage(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) {
    const bool leaf = t.child_begin[size_t(v)] == t.child_begin[size_t(v) + 1];
    stage[size_t(v)] = leaf && v != 0 ? Slice{gather ? Buf::in : Buf::out, 0, blk}
                                      : Slice{Buf::tmp, b.alloc_tmp(rank(v), size[size_t(v)] * blk), size[size_t(v)] * blk};
  }
  // Where child c's subtree lies in its parent's stage.
  auto child_part = [&](int v, uint32_t e) {
    uint64_t off = blk;  // the node's own block first
    for (uint32_t x = t.child_begin[size_t(v)]; x < e; ++x) off += size[size_t(t.children[x])] * blk;
    return stage[size_t(v)].sub(off, size[size_t(t.children[e])] * blk);
  };
  // The root's depth-first order of ranks.
  std::vector<int> dfs;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    dfs.push_back(v);
    for (uint32_t e = t.child_begin[size_t(v) + 1]; e-- > t.child_begin[size_t(v)];) stack.push_back(t.children[e]);
  }
  const Slice own_in{Buf::in, 0, blk}, own_out{Buf::out, 0, blk};
  if (!gather && b.wants(root))
    for (size_t i = 0; i < dfs.size(); ++i)
      b.copy(root, stage[0].sub(i * blk, blk), {Buf::in, uint64_t(rank(dfs[i])) * blk, blk});
  for (int v : gather ? std::vector<int>(order.rbegin(), order.rend()) : order) {
    const int r = rank(v);
    if (!b.wants(r)) continue;
    const bool leaf = t.child_begin[size_t(v)] == t.child_begin[size_t(v) + 1];
    if (gather) {
      if (!leaf || v == 0) b.copy(r, stage[size_t(v)].sub(0, blk), own_in);
      for (uint32_t e = t.child_begin[size_t(v)]; e < t.child_begin[size_t(v) + 1]; ++e)
        b.recv(r, rank(t.children[e]), child_part(v, e));
      if (v != 0) b.send(r, rank(t.parent[size_t(v)]), stage[size_t(v)]);
    } else {
      if (v != 0) b.recv(r, rank(t.parent[size_t(v)]), stage[size_t(v)]);
      for (uint32_t e = t.child_begin[size_t(v)]; e < t.child_begin[size_t(v) + 1]; ++e)
        b.send(r, rank(t.children[e]), child_part(v, e));
      if (!leaf || v == 0) b.copy(r, own_out, stage[size_t(v)].sub(0, blk));
    }
  }
  if (gather && b.wants(root))
    for (size_t i = 0; i < dfs.size(); ++i)
      b.copy(root, {Buf::out, uint64_t(rank(dfs[i])) * blk, blk}, stage[0].sub(i * blk, blk));
  return b.finish();
}

Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  if (c.op == CollOp::gather || c.op == CollOp::scatter) return gather_scatter(ctx);
  const uint64_t m = vector_bytes(c);
  if (c.op == CollOp::bcast)
    return bcast_along_tree(ctx, "fnf_tree", fnf(ctx.model, c.nranks, c.root, m, false), false);
  return reduce_to_root(ctx, "fnf_tree", fnf(ctx.model, c.nranks, c.root, m, true));
}

// The greedy's own completion time (bcast, reduce): what it builds the
// tree by, the model's per-pair costs with nothing shared — for thousands of
// ranks, where simulating the tree does not fit a decision.
std::optional<Terms> estimate(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  if (c.op != CollOp::bcast && c.op != CollOp::reduce) return std::nullopt;
  Terms t;
  double done = 0;
  fnf(ctx.model, c.nranks, c.root, vector_bytes(c), c.op == CollOp::reduce, &done);
  t.fixed = done;
  t.messages = uint64_t(std::max(0, c.nranks - 1));
  return t;
}

// Worth a look where nodes differ (a model of particular ranks).
bool distinct(const Collective&, const MachineModel& m) { return m.ranks() > 0; }

}  // namespace

Algorithm fnf_tree_algorithm() {
  Algorithm a{{CollOp::bcast, CollOp::reduce, CollOp::gather, CollOp::scatter}, generate};
  a.distinct = distinct;
  a.estimate = estimate;
  return a;
}

}  // namespace hetcoll

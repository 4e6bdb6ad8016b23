// hierarchical, barrier: in and out of the levels; or across to counterparts (direct=1).
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

namespace {

constexpr int kStarTop = 16;  // subnets up to which the barrier's top phase is a star

// Empty messages of a barrier, with explicit dependencies (they carry no data
// to infer them from): a rank's send waits for everything it heard and for
// its previous send.
class Tokens {
 public:
  Tokens(Builder& b, int nranks) : b_(b), wait_(static_cast<size_t>(nranks)) {}
  void send(int r, int to) {
    if (!b_.wants(r)) return;
    Op o;
    o.kind = OpKind::send;
    o.peer = to;
    o.buf = Buf::tmp;
    wait_[size_t(r)] = {b_.add(r, o, wait_[size_t(r)].data(), wait_[size_t(r)].size())};
  }
  void recv(int r, int from) {
    if (!b_.wants(r)) return;
    Op o;
    o.kind = OpKind::recv;
    o.peer = from;
    o.buf = Buf::tmp;
    wait_[size_t(r)].push_back(b_.add(r, o, nullptr, 0));
  }

 private:
  Builder& b_;
  std::vector<std::vector<uint32_t>> wait_;  // each rank's next send waits for these
};

}  // namespace

// Barrier: explicit dependencies (empty messages carry no data to infer them from).
Schedule barrier(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical", false);
  const Levels L = levels_of(ctx.model, c.nranks, 0);
  Tokens tokens(b, c.nranks);
  auto send = [&](int r, int to) { tokens.send(r, to); };
  auto recv = [&](int r, int from) { tokens.recv(r, from); };
  // Binomial fan-in to the group's member 0 and fan-out back.
  auto fan = [&](const std::vector<int>& g, bool in) {
    const Tree t = binomial_tree(int(g.size()));
    std::vector<int> nodes{0};  // breadth first
    for (size_t k = 0; k < nodes.size(); ++k)
      for (uint32_t e = t.child_begin[size_t(nodes[k])]; e < t.child_begin[size_t(nodes[k]) + 1]; ++e)
        nodes.push_back(t.children[e]);
    if (in) {
      for (size_t k = nodes.size(); k-- > 1;) {  // deepest first: children before their parents send
        const int v = nodes[k];
        recv(g[size_t(t.parent[size_t(v)])], g[size_t(v)]);
        send(g[size_t(v)], g[size_t(t.parent[size_t(v)])]);
      }
    } else {
      for (size_t k = 1; k < nodes.size(); ++k) {
        const int v = nodes[k];
        send(g[size_t(t.parent[size_t(v)])], g[size_t(v)]);
        recv(g[size_t(v)], g[size_t(t.parent[size_t(v)])]);
      }
    }
  };
  for (auto& g : L.hosts) fan(g, true);
  for (auto& g : L.subnets) fan(g, true);
  // Among the subnet leaders: a star through the first (two crossings, each
  // on the leader's own uplink) for a few subnets, dissemination beyond.
  const int S = int(L.top.size());
  if (S <= kStarTop) {
    for (int k = 1; k < S; ++k) {
      recv(L.top[0], L.top[size_t(k)]);
      send(L.top[size_t(k)], L.top[0]);
    }
    for (int k = 1; k < S; ++k) {
      send(L.top[0], L.top[size_t(k)]);
      recv(L.top[size_t(k)], L.top[0]);
    }
  } else {
    for (int d = 1; d < S; d *= 2) {
      for (int k = 0; k < S; ++k) send(L.top[size_t(k)], L.top[size_t((k + d) % S)]);
      for (int k = 0; k < S; ++k) recv(L.top[size_t(k)], L.top[size_t((k - d % S + S) % S)]);
    }
  }
  for (auto& g : L.subnets) fan(g, false);
  for (auto& g : L.hosts) fan(g, false);
  return b.finish();
}

// Barrier, direct: a dissemination barrier inside every subnet, then one
// among the subnets in which every rank takes part — in round d, rank j of
// subnet t hears from rank j mod |s| of subnet s = t - d — so that no
// fan-out is needed: the slow links are crossed ⌈log2 S⌉ times in all.
Schedule barrier_direct(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical[direct=1]", false);
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  Tokens tokens(b, c.nranks);
  auto send = [&](int r, int to) { tokens.send(r, to); };
  auto recv = [&](int r, int from) { tokens.recv(r, from); };
  for (auto& g : M) {
    const int n = int(g.size());
    for (int d = 1; d < n; d *= 2) {
      for (int k = 0; k < n; ++k) send(g[size_t(k)], g[size_t((k + d) % n)]);
      for (int k = 0; k < n; ++k) recv(g[size_t(k)], g[size_t((k - d % n + n) % n)]);
    }
  }
  const int S = int(M.size());
  for (int d = 1; d < S; d *= 2) {
    for (int src = 0; src < S; ++src) {
      const auto& from = M[size_t(src)];
      const auto& to = M[size_t((src + d) % S)];
      for (size_t k = 0; k < from.size(); ++k)
        for (size_t j = k; j < to.size(); j += from.size()) send(from[k], to[j]);
    }
    for (int t = 0; t < S; ++t) {
      const auto& from = M[size_t((t - d % S + S) % S)];
      const auto& to = M[size_t(t)];
      for (size_t j = 0; j < to.size(); ++j) recv(to[j], from[j % from.size()]);
    }
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical

#include "model/subnets.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.hpp"

namespace hetcoll {

namespace {
double edge(const std::vector<double>& cost, size_t n, size_t i, size_t j) {
  return std::max(cost[i * n + j], cost[j * n + i]);
}

void check_costs(const std::vector<double>& cost, size_t n) {
  if (cost.size() != n * n) throw InputError(cat("cost matrix has ", cost.size(), " entries for ", n, " hosts"));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j && !(std::isfinite(cost[i * n + j]) && cost[i * n + j] >= 0))
        throw InputError(cat("cost of host pair (", i, ", ", j, ") is ", cost[i * n + j],
                             ": costs must be finite and not negative"));
}

struct Dsu {
  std::vector<int> parent;
  std::vector<double> min_edge;  // of the subnet, at its root
  explicit Dsu(size_t n) : parent(n), min_edge(n, std::numeric_limits<double>::infinity()) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int find(int x) {
    while (parent[size_t(x)] != x) {
      parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
      x = parent[size_t(x)];
    }
    return x;
  }
};
}  // namespace

SubnetPartition partition_subnets(const std::vector<double>& cost, size_t n, double threshold) {
  check_costs(cost, n);
  if (!(threshold >= 0 && threshold <= 10))
    throw InputError(cat("subnet threshold ", threshold, " is outside [0, 10] (ECO uses 0.2)"));
  const double f = 1.0 + threshold;
  std::vector<double> node_min(n, std::numeric_limits<double>::infinity());
  struct Edge {
    double w;
    int a, b;
  };
  std::vector<Edge> edges;
  edges.reserve(n * (n - (n ? 1 : 0)) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      double w = edge(cost, n, i, j);
      edges.push_back({w, int(i), int(j)});
      node_min[i] = std::min(node_min[i], w);
      node_min[j] = std::min(node_min[j], w);
    }
  // Ties broken by host numbers, so the partition is a function of the matrix.
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    if (x.w != y.w) return x.w < y.w;
    if (x.a != y.a) return x.a < y.a;
    return x.b < y.b;
  });
  Dsu d(n);
  std::vector<bool> grouped(n, false);  // "in a subnet": joined by an edge
  for (const Edge& e : edges) {
    int ra = d.find(e.a), rb = d.find(e.b);
    if (ra == rb) continue;
    if (e.w > f * node_min[size_t(e.a)] || e.w > f * node_min[size_t(e.b)]) continue;
    if (grouped[size_t(e.a)] && e.w > f * d.min_edge[size_t(ra)]) continue;
    if (grouped[size_t(e.b)] && e.w > f * d.min_edge[size_t(rb)]) continue;
    double m = std::min({e.w, d.min_edge[size_t(ra)], d.min_edge[size_t(rb)]});
    d.parent[size_t(rb)] = ra;
    d.min_edge[size_t(ra)] = m;
    grouped[size_t(e.a)] = grouped[size_t(e.b)] = true;
  }
  SubnetPartition p;
  p.threshold = threshold;
  p.subnet_of.assign(n, -1);
  std::vector<int> id_of_root(n, -1);
  for (size_t h = 0; h < n; ++h) {
    int r = d.find(int(h));
    if (id_of_root[size_t(r)] < 0) {
      id_of_root[size_t(r)] = p.count();
      p.groups.emplace_back();
    }
    p.subnet_of[h] = id_of_root[size_t(r)];
    p.groups[size_t(p.subnet_of[h])].push_back(int(h));
  }
  double inside = 0, between = std::numeric_limits<double>::infinity();
  for (const Edge& e : edges) {
    if (p.subnet_of[size_t(e.a)] == p.subnet_of[size_t(e.b)]) inside = std::max(inside, e.w);
    else between = std::min(between, e.w);
  }
  p.max_inside = inside;
  p.min_between = std::isfinite(between) ? between : 0;
  p.gap = (p.count() > 1 && inside > 0) ? between / inside : 0;
  return p;
}

SubnetPartition significant_subnets(const std::vector<double>& cost, size_t n, double threshold) {
  SubnetPartition p = partition_subnets(cost, n, threshold);
  for (double t : {0.5, 1.0, 2.0}) {
    if (p.count() <= 1 || p.gap >= kMinSubnetGap) break;
    if (t <= threshold) continue;
    p = partition_subnets(cost, n, t);
  }
  return p;
}

RingOrder ring_order(const std::vector<double>& cost, size_t n, const std::vector<int>& subnet_of) {
  check_costs(cost, n);
  if (subnet_of.size() != n) throw InputError(cat("ring order: ", subnet_of.size(), " subnets given for ", n, " hosts"));
  RingOrder ring;
  if (n == 0) return ring;
  int k = 0;
  for (int s : subnet_of) {
    if (s < 0) throw InputError("ring order: a host without a subnet");
    k = std::max(k, s + 1);
  }
  std::vector<std::vector<int>> groups(static_cast<size_t>(k));
  for (size_t h = 0; h < n; ++h) groups[size_t(subnet_of[h])].push_back(int(h));
  // Median cost between two subnets.
  auto between = [&](int a, int b) {
    std::vector<double> w;
    for (int x : groups[size_t(a)])
      for (int y : groups[size_t(b)]) w.push_back(edge(cost, n, size_t(x), size_t(y)));
    if (w.empty()) return std::numeric_limits<double>::infinity();
    std::nth_element(w.begin(), w.begin() + long(w.size() / 2), w.end());
    return w[w.size() / 2];
  };
  std::vector<int> order{subnet_of[0]};
  std::vector<bool> used(size_t(k), false);
  used[size_t(subnet_of[0])] = true;
  for (int step = 1; step < k; ++step) {
    int best = -1;
    double bw = 0;
    for (int s = 0; s < k; ++s) {
      if (used[size_t(s)] || groups[size_t(s)].empty()) continue;
      double w = between(order.back(), s);
      if (best < 0 || w < bw) best = s, bw = w;
    }
    if (best < 0) break;
    used[size_t(best)] = true;
    order.push_back(best);
  }
  for (int s : order) {
    std::vector<int>& g = groups[size_t(s)];
    // Start at host 0 in its subnet, else at the host nearest the ring's end.
    size_t start = 0;
    if (!ring.hosts.empty()) {
      int last = ring.hosts.back();
      for (size_t i = 1; i < g.size(); ++i)
        if (edge(cost, n, size_t(last), size_t(g[i])) < edge(cost, n, size_t(last), size_t(g[start]))) start = i;
    }
    std::vector<bool> taken(g.size(), false);
    size_t cur = start;
    for (size_t step = 0; step < g.size(); ++step) {
      taken[cur] = true;
      ring.hosts.push_back(g[cur]);
      size_t next = g.size();
      for (size_t i = 0; i < g.size(); ++i)
        if (!taken[i] && (next == g.size() || edge(cost, n, size_t(g[cur]), size_t(g[i])) <
                                                  edge(cost, n, size_t(g[cur]), size_t(g[next]))))
          next = i;
      if (next == g.size()) break;
      cur = next;
    }
  }
  for (size_t i = 0; i < ring.hosts.size(); ++i)
    if (subnet_of[size_t(ring.hosts[i])] != subnet_of[size_t(ring.hosts[(i + 1) % ring.hosts.size()])]) ++ring.crossings;
  return ring;
}

}  // namespace hetcoll

#include "model/topology.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "util/error.hpp"

namespace hetcoll {

Topology::Topology() {
  NetNode root;
  root.name = "network";
  nodes.push_back(root);
}

int Topology::add_link(std::string name, double bandwidth, double latency) {
  links.push_back({std::move(name), bandwidth, latency});
  return int(links.size()) - 1;
}

int Topology::add_switch(int parent, std::string name, int up, int down, int fabric) {
  NetNode n;
  n.name = std::move(name);
  n.parent = parent;
  n.up = up;
  n.down = down;
  n.fabric = fabric;
  n.depth = parent >= 0 && parent < int(nodes.size()) ? nodes[size_t(parent)].depth + 1 : 0;
  nodes.push_back(std::move(n));
  return int(nodes.size()) - 1;
}

int Topology::add_host(int parent, std::string name, int up, int down) {
  const int id = add_switch(parent, std::move(name), up, down);
  nodes[size_t(id)].host = hosts();
  node_of_host.push_back(id);
  return hosts() - 1;
}

int Topology::depth() const {
  int d = 0;
  for (int n : node_of_host) d = std::max(d, nodes[size_t(n)].depth);
  return d;
}

int Topology::ancestor(int n, int d) const {
  while (nodes[size_t(n)].depth > d) n = nodes[size_t(n)].parent;
  return n;
}

namespace {
// Walks the path from leaf x to leaf y: calls visit(link) for the edges up
// from x, every switch's fabric on the way, the edges down to y — in order,
// a link more than once where it stands in several places.
template <class Visit>
void walk(const std::vector<NetNode>& nodes, int x, int y, Visit&& visit) {
  int below[2 * Topology::kMaxDepth + 2];  // y's side, bottom up: its down edges and switches' fabrics
  int nb = 0;
  auto climb_x = [&] {
    visit(nodes[size_t(x)].up);
    x = nodes[size_t(x)].parent;
    visit(nodes[size_t(x)].fabric);
  };
  auto climb_y = [&] {
    below[nb++] = nodes[size_t(y)].down;
    y = nodes[size_t(y)].parent;
    below[nb++] = nodes[size_t(y)].fabric;
  };
  while (nodes[size_t(x)].depth > nodes[size_t(y)].depth) climb_x();
  while (nodes[size_t(y)].depth > nodes[size_t(x)].depth) climb_y();
  while (x != y) {
    climb_x();
    climb_y();
  }
  while (nb > 0) visit(below[--nb]);
}
}  // namespace

int Topology::route_hosts(int ha, int hb, int out[kMaxRoute]) const {
  if (ha == hb) return 0;
  int n = 0;
  walk(nodes, node_of_host[size_t(ha)], node_of_host[size_t(hb)], [&](int l) {
    if (l < 0 || (!never_limits.empty() && never_limits[size_t(l)])) return;
    for (int i = 0; i < n; ++i)
      if (out[i] == l) return;
    if (n == kMaxRoute) throw std::logic_error("topology: a route longer than kMaxRoute (check() bounds the depth)");
    out[n++] = l;
  });
  return n;
}

double Topology::path_latency(int ha, int hb) const {
  if (ha == hb) return 0;
  int seen[kMaxRoute];
  int n = 0;
  double sum = 0;
  walk(nodes, node_of_host[size_t(ha)], node_of_host[size_t(hb)], [&](int l) {
    if (l < 0) return;
    for (int i = 0; i < n; ++i)
      if (seen[i] == l) return;
    if (n < kMaxRoute) seen[n++] = l;
    sum += links[size_t(l)].latency;
  });
  return sum;
}

double Topology::path_bandwidth(int ha, int hb) const {
  double least = INFINITY;
  if (ha != hb)
    walk(nodes, node_of_host[size_t(ha)], node_of_host[size_t(hb)], [&](int l) {
      if (l >= 0) least = std::min(least, links[size_t(l)].bandwidth);
    });
  return least;
}

double Topology::connection_between(int a, int b) const {
  if (connection.empty() || host_of(a) == host_of(b)) return 0;
  return connection[size_t(group_of(a)) * size_t(groups()) + size_t(group_of(b))];
}

// The groups hang off the highest switch where the tree branches: the
// root, or below it where it has one child only, a switch with switches
// below (one subnet whose racks the probe found: the racks).
int Topology::branching_top() const {
  int top = 0;
  for (;;) {
    int only = -1, children = 0;
    bool hosts_here = false;
    for (size_t n = 1; n < nodes.size(); ++n)
      if (nodes[n].parent == top) ++children, only = int(n), hosts_here |= nodes[n].host >= 0;
    if (children != 1 || hosts_here) return top;
    bool switches_below = false;
    for (size_t n = 1; n < nodes.size() && !switches_below; ++n)
      switches_below = nodes[n].parent == only && nodes[n].host < 0;
    if (!switches_below) return top;
    top = only;
  }
}

void Topology::number_groups() {
  // The branching switch's switch children in node order, then the hosts
  // hanging off it, one group.
  const int top = branching_top();
  group_nodes_.clear();
  std::vector<int> group_of_node(nodes.size(), -1);
  for (size_t n = 1; n < nodes.size(); ++n)
    if (nodes[n].parent == top && nodes[n].host < 0) {
      group_of_node[n] = int(group_nodes_.size());
      group_nodes_.push_back(int(n));
    }
  int loose = -1;
  group_of_leaf_.assign(node_of_host.size(), 0);
  const int depth = nodes[size_t(top)].depth + 1;
  for (size_t h = 0; h < node_of_host.size(); ++h) {
    const int below = ancestor(node_of_host[h], depth);
    if (group_of_node[size_t(below)] >= 0) {
      group_of_leaf_[h] = group_of_node[size_t(below)];
      continue;
    }
    if (loose < 0) {
      loose = int(group_nodes_.size());
      group_nodes_.push_back(top);
    }
    group_of_leaf_[h] = loose;
  }
}

// Only the hosts the group reaches and the switches above them, renumbered
// in the order of the base's ids: a group of a few ranks of a machine of
// thousands of hosts (a phase of a hierarchical collective) does not copy
// the machine. What the group's messages cross, at what bandwidth, is
// unchanged; the probe's ring keeps its order.
std::shared_ptr<const Topology> Topology::mapped(const std::vector<int>& map) const {
  auto t = std::make_shared<Topology>();
  t->nodes.clear();
  for (int r : map)
    if (r < 0 || r >= ranks())
      throw InputError(cat("rank map entry ", r, " is not a rank of the topology (", ranks(), " ranks)"));
  std::vector<int> used_hosts;
  used_hosts.reserve(map.size());
  for (int r : map) used_hosts.push_back(host_of(r));
  std::sort(used_hosts.begin(), used_hosts.end());
  used_hosts.erase(std::unique(used_hosts.begin(), used_hosts.end()), used_hosts.end());
  // The nodes on the way up from them, ascending: parents before children.
  std::vector<char> used(nodes.size(), 0);
  for (int h : used_hosts)
    for (int n = node_of_host[size_t(h)]; n >= 0 && !used[size_t(n)]; n = nodes[size_t(n)].parent) used[size_t(n)] = 1;
  std::vector<int> new_node(nodes.size(), -1);
  std::vector<int> kept;
  for (size_t n = 0; n < nodes.size(); ++n)
    if (used[n]) {
      new_node[n] = int(kept.size());
      kept.push_back(int(n));
    }
  std::unordered_map<int, int> link_new;
  auto link = [&](int l) -> int {
    if (l < 0) return -1;
    auto [it, fresh] = link_new.emplace(l, int(t->links.size()));
    if (fresh) {
      t->links.push_back(links[size_t(l)]);
      if (!never_limits.empty()) t->never_limits.push_back(never_limits[size_t(l)]);
    }
    return it->second;
  };
  for (int n : kept) {
    NetNode x = nodes[size_t(n)];
    x.parent = x.parent >= 0 ? new_node[size_t(x.parent)] : -1;
    x.up = x.down = x.fabric = -1;
    x.host = -1;
    t->nodes.push_back(std::move(x));
  }
  // Links numbered switches' edges first, then the hosts', then fabrics.
  for (size_t k = 0; k < kept.size(); ++k) {
    const NetNode& x = nodes[size_t(kept[k])];
    if (x.host >= 0) continue;
    t->nodes[k].up = link(x.up);
    t->nodes[k].down = link(x.down);
  }
  for (int h : used_hosts) {
    const int n = node_of_host[size_t(h)];
    NetNode& x = t->nodes[size_t(new_node[size_t(n)])];
    x.up = link(nodes[size_t(n)].up);
    x.down = link(nodes[size_t(n)].down);
    x.host = t->hosts();
    t->node_of_host.push_back(new_node[size_t(n)]);
  }
  for (size_t k = 0; k < kept.size(); ++k) t->nodes[k].fabric = link(nodes[size_t(kept[k])].fabric);
  auto new_host = [&](int old) {
    return int(std::lower_bound(used_hosts.begin(), used_hosts.end(), old) - used_hosts.begin());
  };
  t->latency_sharing = latency_sharing;
  t->host_of_rank.resize(map.size());
  for (size_t i = 0; i < map.size(); ++i) t->host_of_rank[i] = new_host(host_of(map[i]));
  t->number_groups();
  if (!connection.empty()) {
    const size_t G = size_t(t->groups()), B = size_t(groups());
    std::vector<int> old_group(G);
    for (int h = 0; h < t->hosts(); ++h) old_group[size_t(t->group_of_host(h))] = group_of_host(used_hosts[size_t(h)]);
    t->connection.resize(G * G);
    for (size_t a = 0; a < G; ++a)
      for (size_t b = 0; b < G; ++b) t->connection[a * G + b] = connection[size_t(old_group[a]) * B + size_t(old_group[b])];
  }
  if (!ring_position.empty()) {  // the group's hosts in the ring's order
    std::vector<int> order(used_hosts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return ring_position[size_t(used_hosts[size_t(a)])] < ring_position[size_t(used_hosts[size_t(b)])];
    });
    t->ring_position.resize(used_hosts.size());
    for (size_t k = 0; k < order.size(); ++k) t->ring_position[size_t(order[k])] = int(k);
  }
  return t;
}

void Topology::settle() {
  number_groups();
  never_limits.assign(links.size(), 0);
  auto bw = [&](int l) { return l < 0 ? INFINITY : links[size_t(l)].bandwidth; };
  // What the interfaces below each node can feed, each way (children after
  // their parents: one pass from the last node up).
  std::vector<double> up(nodes.size(), 0.0), down(nodes.size(), 0.0);
  std::vector<char> feeds(links.size(), 0);  // a host's own edge: never marked
  for (int n : node_of_host) {
    up[size_t(n)] = bw(nodes[size_t(n)].up);
    down[size_t(n)] = bw(nodes[size_t(n)].down);
    for (int l : {nodes[size_t(n)].up, nodes[size_t(n)].down})
      if (l >= 0) feeds[size_t(l)] = 1;
  }
  for (size_t n = nodes.size(); n-- > 1;) {
    up[size_t(nodes[n].parent)] += up[n];
    down[size_t(nodes[n].parent)] += down[n];
  }
  // The most each link can be asked to carry: an edge, what its subtree's
  // interfaces send out (up) or take in (down), both where one link
  // serves both ways; a fabric, what the subtrees of the topmost switches
  // having it send and take in, never more than all interfaces send or
  // take in (every message leaves through one and enters through one).
  std::vector<double> demand(links.size(), 0.0);
  for (size_t n = 1; n < nodes.size(); ++n) {
    const NetNode& x = nodes[n];
    if (x.host >= 0) continue;
    if (x.up >= 0) demand[size_t(x.up)] += up[n];
    if (x.down >= 0) demand[size_t(x.down)] += down[n];
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const int f = nodes[n].fabric;
    if (f < 0) continue;
    bool topmost = true;
    for (int a = nodes[n].parent; a >= 0 && topmost; a = nodes[size_t(a)].parent) topmost = nodes[size_t(a)].fabric != f;
    if (topmost) demand[size_t(f)] += std::min(up[n] + down[n], std::min(up[0], down[0]));
  }
  for (size_t l = 0; l < links.size(); ++l)
    if (!feeds[l] && demand[l] > 0 && bw(int(l)) >= demand[l]) never_limits[l] = 1;
}

void Topology::check() const {
  const int H = hosts(), N = int(nodes.size()), L = int(links.size());
  auto link_ok = [&](int l) { return l >= -1 && l < L; };
  if (N == 0 || nodes[0].parent != -1 || nodes[0].depth != 0 || nodes[0].host >= 0)
    throw InputError("topology: node 0 must be the root, a switch");
  for (int n = 1; n < N; ++n) {
    const NetNode& x = nodes[size_t(n)];
    if (x.parent < 0 || x.parent >= n)
      throw InputError(cat("topology: node ", x.name, " has parent ", x.parent, " (a node before it is needed)"));
    if (nodes[size_t(x.parent)].host >= 0)
      throw InputError(cat("topology: node ", x.name, " hangs off host ", nodes[size_t(x.parent)].name));
    if (x.depth != nodes[size_t(x.parent)].depth + 1) throw InputError(cat("topology: node ", x.name, " has a wrong depth"));
    if (x.depth > kMaxDepth) throw InputError(cat("topology: node ", x.name, " is deeper than ", kMaxDepth, " levels"));
  }
  for (int n = 0; n < N; ++n) {
    const NetNode& x = nodes[size_t(n)];
    if (!link_ok(x.up) || !link_ok(x.down) || !link_ok(x.fabric))
      throw InputError(cat("topology: node ", x.name, " names a link that does not exist"));
    if (x.host >= 0 && (x.host >= H || node_of_host[size_t(x.host)] != n))
      throw InputError(cat("topology: leaf ", x.name, " is not host ", x.host, "'s"));
  }
  for (int h = 0; h < H; ++h) {
    const int n = node_of_host[size_t(h)];
    if (n <= 0 || n >= N || nodes[size_t(n)].host != h) throw InputError(cat("topology: host ", h, " has no leaf of its own"));
  }
  for (int h : host_of_rank)
    if (h < 0 || h >= H) throw InputError(cat("topology: rank on host ", h, " of ", H));
  if (!ring_position.empty()) {
    if (int(ring_position.size()) != H) throw InputError("topology: the ring needs one position per host");
    std::vector<bool> seen(size_t(H), false);
    for (int x : ring_position) {
      if (x < 0 || x >= H || seen[size_t(x)]) throw InputError("topology: the ring's positions must be 0 … hosts-1, each once");
      seen[size_t(x)] = true;
    }
  }
  if (!(latency_sharing >= 0 && latency_sharing <= kMaxLatencySharing))
    throw InputError(cat("topology: latency sharing exponent ", latency_sharing, " (must be 0 … ", kMaxLatencySharing, ")"));
  if (!connection.empty()) {
    // Groups as settle() numbers them: switches under the branching one,
    // then one for hosts directly under it.
    size_t G = 0;
    bool loose = false;
    const int top = branching_top();
    for (int n = 1; n < N; ++n)
      if (nodes[size_t(n)].parent == top) (nodes[size_t(n)].host < 0 ? ++G : (loose = true, G));
    G += loose;
    if (connection.size() != G * G) throw InputError("topology: one connection rate per pair of groups is needed");
    for (size_t a = 0; a < G; ++a)
      for (size_t b = 0; b < G; ++b) {
        const double x = connection[a * G + b];
        if (!(x >= 0) || !std::isfinite(x) || x != connection[b * G + a])
          throw InputError(cat("topology: the connection rate between groups ", a, " and ", b, " is ", x,
                               " (must be finite, not negative, the same both ways)"));
      }
  }
  for (const NetLink& l : links) {
    if (!(l.bandwidth > 0) || !std::isfinite(l.bandwidth))
      throw InputError(cat("topology: link ", l.name, " has bandwidth ", l.bandwidth, " (must be positive)"));
    if (!(l.latency >= 0) || !std::isfinite(l.latency))
      throw InputError(cat("topology: link ", l.name, " has latency ", l.latency, " (must be finite, not negative)"));
  }
}

bool Topology::multi_host() const {
  for (int h : host_of_rank)
    if (h != host_of_rank[0]) return true;
  return false;
}

bool Topology::multi_group() const {
  for (size_t r = 0; r < host_of_rank.size(); ++r)
    if (group_of(int(r)) != group_of(0)) return true;
  return false;
}

}  // namespace hetcoll

#include "model/tree_packing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "util/error.hpp"

namespace hetcoll {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The hosts' routes (the topology's: links that never limit left out) and
// the links' lengths.
class Net {
 public:
  Net(const Topology& t, TreeDirection dir) : t_(t), dir_(dir), H_(t.hosts()) {
    len_.resize(t.links.size());
    for (size_t l = 0; l < len_.size(); ++l) len_[l] = 1 / std::max(t.links[l].bandwidth, 1e-300);
  }
  int hosts() const { return H_; }
  double longest() const {
    double mx = 0;
    for (double v : len_) mx = std::max(mx, v);
    return mx;
  }
  // The links a tree edge parent → child crosses (its data flows parent →
  // child when out, child → parent when in), into ids; returns how many.
  int links(int parent, int child, int ids[Topology::kMaxRoute]) const {
    const int a = dir_ == TreeDirection::out ? parent : child, b = dir_ == TreeDirection::out ? child : parent;
    return t_.route_hosts(a, b, ids);
  }
  double cost(int parent, int child) const {
    int ids[Topology::kMaxRoute];
    int n = links(parent, child, ids);
    double c = 0;
    for (int i = 0; i < n; ++i) c += len_[size_t(ids[i])];
    return c;
  }
  double cost(const std::vector<int>& parent) const {
    double c = 0;
    for (int h = 0; h < H_; ++h)
      if (parent[size_t(h)] >= 0) c += cost(parent[size_t(h)], h);
    return c;
  }
  // How many of the tree's edges cross each link.
  std::vector<int> usage(const std::vector<int>& parent) const {
    std::vector<int> u(len_.size(), 0);
    int ids[Topology::kMaxRoute];
    for (int h = 0; h < H_; ++h) {
      if (parent[size_t(h)] < 0) continue;
      int n = links(parent[size_t(h)], h, ids);
      for (int i = 0; i < n; ++i) ++u[size_t(ids[i])];
    }
    return u;
  }
  double capacity(int l) const { return t_.links[size_t(l)].bandwidth; }
  // The rate the tree carries alone: its busiest link at its bandwidth.
  double alone(const std::vector<int>& u) const {
    double f = kInf;
    for (size_t l = 0; l < u.size(); ++l)
      if (u[l] > 0) f = std::min(f, capacity(int(l)) / u[l]);
    return f;
  }
  // Lengthens the links the tree used by the part of their capacity that
  // `rate` on it takes.
  void lengthen(const std::vector<int>& u, double rate, double eps) {
    for (size_t l = 0; l < u.size(); ++l)
      if (u[l] > 0) len_[l] *= 1 + eps * std::min(1.0, rate * u[l] / capacity(int(l)));
  }
  // Keeps lengths finite and comparable (only their ratios matter).
  void normalise() {
    double mx = 0;
    for (double v : len_) mx = std::max(mx, v);
    if (mx > 1e100)
      for (double& v : len_) v /= mx;
  }

 private:
  const Topology& t_;
  TreeDirection dir_;
  int H_;
  std::vector<double> len_;
};

// Costs that differ by less than this fraction of the longest link's
// length count as a tie, and a tie goes to the shallower parent: among the
// many trees that cost about the same (a subnet's interfaces far from full
// beside its uplink), the one with the shortest paths fills its pipeline
// soonest.
constexpr double kTie = 0.05;

// Is joining under a (cost w, depth da) better than under b (cost v, depth db)?
bool better(double w, int da, double v, int db, double tie) {
  if (w < v - tie) return true;
  if (w > v + tie) return false;
  return da < db || (da == db && w < v * (1 - 1e-12));
}

// Prim's from the root: each host joins under the host already in the tree
// whose edge to it is cheapest (ties: the shallower, then the lower host).
std::vector<int> prim(const Net& n, int root) {
  const int H = n.hosts();
  std::vector<int> parent(static_cast<size_t>(H), -1), depth(static_cast<size_t>(H), 0);
  std::vector<char> in(static_cast<size_t>(H), 0);
  std::vector<double> best(static_cast<size_t>(H), kInf);
  const double tie = kTie * n.longest();
  in[size_t(root)] = 1;
  for (int b = 0; b < H; ++b)
    if (b != root) {
      best[size_t(b)] = n.cost(root, b);
      parent[size_t(b)] = root;
    }
  for (int added = 1; added < H; ++added) {
    int pick = -1;
    for (int b = 0; b < H; ++b)
      if (!in[size_t(b)] && (pick < 0 || best[size_t(b)] < best[size_t(pick)])) pick = b;
    in[size_t(pick)] = 1;
    depth[size_t(pick)] = depth[size_t(parent[size_t(pick)])] + 1;
    for (int c = 0; c < H; ++c) {
      if (in[size_t(c)]) continue;
      double w = n.cost(pick, c);
      if (better(w, depth[size_t(pick)], best[size_t(c)], depth[size_t(parent[size_t(c)])], tie)) {
        best[size_t(c)] = w;
        parent[size_t(c)] = pick;
      }
    }
  }
  return parent;
}

// Entry and exit times of a depth-first walk from the root (a host's
// subtree is the hosts entered between them).
void walk(const std::vector<int>& parent, int root, std::vector<int>& tin, std::vector<int>& tout) {
  const int H = int(parent.size());
  std::vector<std::vector<int>> kids(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h)
    if (parent[size_t(h)] >= 0) kids[size_t(parent[size_t(h)])].push_back(h);
  tin.assign(size_t(H), 0);
  tout.assign(size_t(H), 0);
  int clock = 0;
  std::vector<std::pair<int, size_t>> stack{{root, 0}};
  tin[size_t(root)] = clock++;
  while (!stack.empty()) {
    auto& [h, i] = stack.back();
    if (i < kids[size_t(h)].size()) {
      int c = kids[size_t(h)][i++];
      tin[size_t(c)] = clock++;
      stack.push_back({c, 0});
    } else {
      tout[size_t(h)] = clock++;
      stack.pop_back();
    }
  }
}

// Moves each host under a clearly cheaper parent outside its own subtree.
void improve(const Net& n, int root, std::vector<int>& parent) {
  const int H = n.hosts();
  std::vector<int> tin, tout;
  walk(parent, root, tin, tout);
  for (int b = 0; b < H; ++b) {
    if (b == root) continue;
    double cur = n.cost(parent[size_t(b)], b);
    int best = -1;
    double best_c = cur - kTie * n.longest();
    for (int a = 0; a < H; ++a) {
      if (a == b || (tin[size_t(a)] >= tin[size_t(b)] && tout[size_t(a)] <= tout[size_t(b)])) continue;
      double c = n.cost(a, b);
      if (c < best_c) {
        best_c = c;
        best = a;
      }
    }
    if (best >= 0) {
      parent[size_t(b)] = best;
      walk(parent, root, tin, tout);
    }
  }
}

int depth_of(const std::vector<int>& parent) {
  int d = 0;
  for (size_t h = 0; h < parent.size(); ++h) {
    int k = 0;
    for (int x = int(h); parent[size_t(x)] >= 0; x = parent[size_t(x)]) ++k;
    d = std::max(d, k);
  }
  return d;
}

}  // namespace

TreePacking pack_trees(const Topology& t, int root_host, TreeDirection dir, int max_trees) {
  const int H = t.hosts();
  if (root_host < 0 || root_host >= H) throw InputError(cat("tree packing: root host ", root_host, " of ", H));
  max_trees = std::max(1, max_trees);
  TreePacking out;
  if (H == 1) {
    out.trees.push_back({std::vector<int>(1, -1), 1.0, 0});
    out.rate = kInf;
    return out;
  }
  Net net(t, dir);
  // Multiplicative weights over the cheapest trees.
  constexpr double eps = 0.2;
  const int rounds = std::min(96, 24 + 4 * t.groups());
  std::map<std::vector<int>, size_t> index;
  std::vector<std::vector<int>> found;
  std::vector<double> weight;
  for (int it = 0; it < rounds; ++it) {
    std::vector<int> parent = prim(net, root_host);
    improve(net, root_host, parent);
    std::vector<int> u = net.usage(parent);
    double f = net.alone(u);
    if (!std::isfinite(f)) f = 1;  // no link limits this tree
    auto [pos, fresh] = index.emplace(parent, found.size());
    if (fresh) {
      found.push_back(parent);
      weight.push_back(0);
    }
    weight[pos->second] += f;
    net.lengthen(u, f, eps);
    net.normalise();
  }
  // The heaviest trees, their shares settled again among themselves.
  std::vector<size_t> order(found.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  order.resize(std::min(order.size(), size_t(max_trees)));
  std::vector<std::vector<int>> kept, usage;
  for (size_t i : order) {
    kept.push_back(found[i]);
    usage.push_back(net.usage(found[i]));
  }
  Net again(t, dir);
  std::vector<double> share(kept.size(), 0);
  for (int it = 0; it < 400; ++it) {
    size_t pick = 0;
    double pick_c = kInf;
    for (size_t k = 0; k < kept.size(); ++k) {
      double c = again.cost(kept[k]);
      if (c < pick_c * (1 - 1e-12)) {
        pick_c = c;
        pick = k;
      }
    }
    double f = again.alone(usage[pick]);
    if (!std::isfinite(f)) f = 1;
    share[pick] += f;
    again.lengthen(usage[pick], f, 0.05);
    again.normalise();
  }
  double total = 0;
  for (double s : share) total += s;
  // The rate: the busiest link carries its bandwidth.
  std::vector<double> load(t.links.size(), 0);
  for (size_t k = 0; k < kept.size(); ++k)
    for (size_t l = 0; l < load.size(); ++l) load[l] += share[k] / total * usage[k][l];
  double worst = 0;
  for (size_t l = 0; l < load.size(); ++l) {
    if (load[l] <= 0) continue;
    double x = load[l] / t.links[l].bandwidth;
    if (x > worst) {
      worst = x;
      out.bottleneck = t.links[l].name;
    }
  }
  out.rate = worst > 0 ? 1 / worst : kInf;
  for (size_t k = 0; k < kept.size(); ++k)
    if (share[k] > 0) out.trees.push_back({kept[k], share[k] / total, depth_of(kept[k])});
  std::stable_sort(out.trees.begin(), out.trees.end(),
                   [](const PackedTree& a, const PackedTree& b) { return a.share > b.share; });
  return out;
}

}  // namespace hetcoll

#include "algorithms/packed_trees.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

namespace hetcoll {
namespace {

// Packings are a function of (model, group, root host, direction, trees):
// every rank of a call and every evaluation of a candidate finds the same,
// so they are kept (bounded) rather than packed again.
TreePacking cached_packing(const MachineModel& m, const Topology& t, int root_host, TreeDirection dir, int trees) {
  static std::mutex mu;
  static std::map<std::string, TreePacking> cache;
  const std::string key = cat(m.spec(), "|", m.content_digest(), "|", t.ranks(), "|", root_host, "|", int(dir), "|",
                              trees);
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  TreePacking p = pack_trees(t, root_host, dir, trees);
  std::lock_guard<std::mutex> g(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(key, p);
  return p;
}

// Hosts in their subtrees, from a breadth-first order walked backwards.
std::vector<int> subtree_sizes(const std::vector<std::vector<int>>& kids, int root) {
  std::vector<int> order{root};
  for (size_t i = 0; i < order.size(); ++i)
    for (int c : kids[size_t(order[i])]) order.push_back(c);
  std::vector<int> size(kids.size(), 1);
  for (size_t i = order.size(); i-- > 1;)
    for (int c : kids[size_t(order[i])]) size[size_t(order[i])] += size[size_t(c)];
  for (int c : kids[size_t(root)]) size[size_t(root)] += size[size_t(c)];
  return size;
}

// Segments of unequal lengths, cycling through window sizes w, w+1, …,
// 2w-1: a peer's messages in flight then finish one after another, and
// while one pays its latency the others keep the wire busy (equal ones
// would share the wire, finish together and leave it idle for a latency
// each round). The shortest is 1/stagger_spread(w) of the mean.
double stagger_spread(int w) { return w <= 1 ? 1.0 : (1.5 * w - 0.5) / w; }

Blocks staggered_blocks(uint64_t count, uint32_t elem, uint64_t n, int w, uint64_t base) {
  if (w <= 1 || n < 2) return even_blocks(count, elem, int(n), base);
  std::vector<uint64_t> weight(n);
  uint64_t total = 0;
  for (uint64_t j = 0; j < n; ++j) total += weight[j] = uint64_t(w) + j % uint64_t(w);
  std::vector<uint64_t> elems(n);
  uint64_t given = 0;
  for (uint64_t j = 0; j < n; ++j) {
    elems[j] = j + 1 == n ? count - given : uint64_t((unsigned __int128)count * weight[j] / total);
    given += elems[j];
  }
  return blocks_of(elems, elem, base);
}

}  // namespace

uint32_t PeerSends::send(int to, const Slice& piece, uint32_t first) {
  std::vector<uint32_t>& v = sent_[to];
  uint32_t after[2];
  size_t n = 0;
  if (v.size() >= window_) after[n++] = v[v.size() - window_];
  if (first != kNoSend) after[n++] = first;
  v.push_back(n == 0   ? b_.send(rank_, to, piece)
              : n == 1 ? b_.send(rank_, to, piece, {after[0]})
                       : b_.send(rank_, to, piece, {after[0], after[1]}));
  return v.back();
}

uint64_t PackedLayout::largest_segment() const {
  uint64_t s = 0;
  for (const Blocks& b : segments) s = std::max(s, b.largest());
  return s;
}

std::vector<ParamSpec> packed_params() {
  return {{"trees", ParamKind::integer, 1, 64, false, cat("most trees packed (default ", kPackedTrees, ")")},
          {"seg", ParamKind::bytes, 1, 4.6e18, false, "segment size in bytes (rounded to whole elements)"},
          {"window", ParamKind::integer, 1, 1024, false,
           cat("messages in flight to one peer (default ", kPackedWindow, "): the next waits for the one that many before")}};
}

std::vector<std::string> packed_variants(const std::string& name) {
  return {name, name + "[trees=3]", name + "[window=2]"};
}

bool packed_distinct(const Collective& c, const MachineModel& m) {
  TopologyPtr t = m.topology();
  if (!t || !t->multi_host()) return false;
  // A vector of fewer than two of the smallest segments (at least the eager
  // size over a network with one) has nothing to pipeline or share out:
  // one tree of whole messages, what the catalog's trees already are.
  const double least = m.eager_bytes() > 0 ? double(m.eager_bytes()) * stagger_spread(kPackedWindow) : 4096.0;
  if (double(vector_bytes(c)) < 2 * least) return false;
  // The group's hosts: at most kPackedHosts.
  std::vector<int> hosts;
  for (int r = 0; r < std::min(c.nranks, t->ranks()); ++r) hosts.push_back(t->host_of(r));
  std::sort(hosts.begin(), hosts.end());
  return std::unique(hosts.begin(), hosts.end()) - hosts.begin() <= kPackedHosts;
}

// Each host's order of the segments (PackedLayout::order).
std::vector<std::vector<int64_t>> segment_due(const PackedLayout& L, const GenContext& ctx, TreeDirection dir,
                                              bool ahead) {
  const int T = int(L.packing.trees.size()), H = int(L.rep.size());
  const uint64_t bytes = vector_bytes(ctx.coll);
  // When segment i of tree k is due at host h: one segment each share of
  // the packing's period, shifted by the host's distance from the root
  // along tree k (data flowing out: it arrives that much later; towards the
  // root: it must leave that much earlier). Distances add one cost per edge
  // and direction that is the same in every tree, in whole nanoseconds, so
  // that two hosts see the segments of the trees they share an edge in in
  // the same order — the order in which a rank sends them is the order its
  // peer receives them in (a pair's messages match in order).
  auto ns = [](double t) { return int64_t(std::llround(std::min(std::max(t, 0.0), 1e6) * 1e9)); };
  const double period = std::isfinite(L.packing.rate) && L.packing.rate > 0 ? double(bytes) / L.packing.rate : 0;
  std::vector<std::vector<int64_t>> distance(static_cast<size_t>(T));
  for (int k = 0; k < T; ++k) {
    const auto& par = L.packing.trees[size_t(k)].parent;
    const auto& kids = L.children[size_t(k)];
    std::vector<int> bfs{L.root_host};
    for (size_t i = 0; i < bfs.size(); ++i)
      for (int ch : kids[size_t(bfs[i])]) bfs.push_back(ch);
    std::vector<int64_t>& d = distance[size_t(k)];
    d.assign(size_t(H), 0);
    for (int h : bfs) {
      const int a = par[size_t(h)];
      if (a < 0) continue;
      const int from = dir == TreeDirection::out ? L.rep[size_t(a)] : L.rep[size_t(h)];
      const int to = dir == TreeDirection::out ? L.rep[size_t(h)] : L.rep[size_t(a)];
      // A hop takes about T lone messages' time: the trees' flows share the links.
      d[size_t(h)] = d[size_t(a)] + ns(ctx.model.message(from, to, L.seg).total() * T);
    }
  }
  // With `ahead`, deep trees start early: each tree's segments leave the
  // root ahead by its longest path, so that all trees' last segments land
  // together (the tail is not one slow relay's).
  std::vector<std::vector<int64_t>> due(static_cast<size_t>(H), std::vector<int64_t>(L.all.size()));
  const int64_t sign = dir == TreeDirection::out ? 1 : -1;
  for (size_t j = 0; j < L.all.size(); ++j) {
    const auto [k, i] = L.all[j];
    const auto& d = distance[size_t(k)];
    const int64_t early = ahead ? *std::max_element(d.begin(), d.end()) : 0;
    const int64_t at = ns(period * double(i + 1) / L.segments[size_t(k)].size()) - early;
    for (int h = 0; h < H; ++h) due[size_t(h)][j] = at + sign * d[size_t(h)];
  }
  return due;
}

// Each host's order of the segments (PackedLayout::order).
void order_segments(PackedLayout& L, const GenContext& ctx, TreeDirection dir) {
  const std::vector<std::vector<int64_t>> due = segment_due(L, ctx, dir, dir == TreeDirection::out);
  const int H = int(L.rep.size());
  L.order.assign(size_t(H), {});
  std::vector<size_t> idx(L.all.size());
  for (int h = 0; h < H; ++h) {
    for (size_t j = 0; j < idx.size(); ++j) idx[j] = j;
    const auto& key = due[size_t(h)];
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
    auto& o = L.order[size_t(h)];
    o.reserve(idx.size());
    for (size_t j : idx) o.push_back(L.all[j]);
  }
}

PackedLayout packed_layout(const GenContext& ctx, TreeDirection dir, bool combine) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  PackedLayout L;
  L.trees_asked = param_int(ctx, "trees", kPackedTrees);
  L.window = param_int(ctx, "window", kPackedWindow);
  TopologyPtr topo = ctx.model.topology();
  if (topo && topo->ranks() > p) {  // a model of more ranks than the group: its hosts only
    std::vector<int> first(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) first[size_t(r)] = r;
    topo = topo->mapped(first);
  }
  const bool hosts = topo && topo->multi_host() && topo->ranks() == p;
  L.host.resize(size_t(p));
  int H = p;
  if (hosts) {
    for (int r = 0; r < p; ++r) L.host[size_t(r)] = topo->host_of(r);
    H = topo->hosts();
  } else {
    for (int r = 0; r < p; ++r) L.host[size_t(r)] = r;
  }
  L.subnet.assign(size_t(H), 0);
  if (hosts)
    for (int h = 0; h < H; ++h) L.subnet[size_t(h)] = topo->subnet_of_host[size_t(h)];
  L.root_host = L.host[size_t(c.root)];
  L.rep.assign(size_t(H), -1);
  L.local.assign(size_t(H), {});
  L.rep[size_t(L.root_host)] = c.root;
  for (int r = 0; r < p; ++r) {
    int h = L.host[size_t(r)];
    if (L.rep[size_t(h)] < 0) L.rep[size_t(h)] = r;
    else if (L.rep[size_t(h)] != r) L.local[size_t(h)].push_back(r);
  }
  // The planner weighs packed trees up to kPackedHosts hosts; past them a
  // bounded build is refused before the packing (rounds × hosts²) is paid
  // for nothing.
  if (hosts && ctx.op_limit > 0 && H > kPackedHosts)
    throw TooLarge(cat("packing trees over ", H, " hosts: weighed up to ", kPackedHosts, " hosts"));
  if (hosts) {
    L.packing = cached_packing(ctx.model, *topo, L.root_host, dir, L.trees_asked);
  } else {  // one chain of ranks from the root
    PackedTree chain;
    chain.parent.assign(size_t(H), -1);
    for (int v = 1; v < p; ++v) chain.parent[size_t((c.root + v) % p)] = (c.root + v - 1) % p;
    chain.share = 1;
    chain.depth = p - 1;
    L.packing.trees.push_back(chain);
  }
  const int T = int(L.packing.trees.size());
  L.children.assign(size_t(T), std::vector<std::vector<int>>(size_t(H)));
  for (int k = 0; k < T; ++k) {
    auto& kids = L.children[size_t(k)];
    const auto& par = L.packing.trees[size_t(k)].parent;
    for (int h = 0; h < H; ++h)
      if (par[size_t(h)] >= 0) kids[size_t(par[size_t(h)])].push_back(h);
    const std::vector<int> size = subtree_sizes(kids, L.root_host);
    for (auto& v : kids)
      std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return size[size_t(a)] > size[size_t(b)]; });
  }
  // Each tree's bytes: whole elements in proportion to its share.
  const uint64_t count = c.count, e = c.elem_size;
  std::vector<uint64_t> elems(size_t(T), 0);
  uint64_t given = 0;
  for (int k = 0; k < T; ++k) {
    uint64_t n = k + 1 == T ? count - given
                            : std::min<uint64_t>(count - given, uint64_t(std::llround(L.packing.trees[size_t(k)].share *
                                                                                       double(count))));
    elems[size_t(k)] = n;
    given += n;
  }
  int depth = 1;
  uint64_t widest = 0;
  for (int k = 0; k < T; ++k) {
    depth = std::max(depth, L.packing.trees[size_t(k)].depth);
    widest = std::max(widest, elems[size_t(k)] * e);
  }
  bool locals = false;
  for (const auto& l : L.local) locals = locals || !l.empty();
  L.seg = ctx.params.count("seg") ? param_bytes(ctx, "seg", count * e)
                                  : best_segment(ctx.model, std::max<uint64_t>(widest, e), c.elem_size,
                                                 depth + (locals ? 1 : 0), combine);
  // The model's choice: at most kMaxSegments segments in all; over a
  // network with an eager protocol, no segment below it — eager messages
  // all leave at once and share the wire (SimGrid's detached sends), so
  // only rendezvous messages, one peer's two at a time, pipeline.
  if (!ctx.params.count("seg")) {
    L.seg = std::max<uint64_t>(L.seg, (count * e + kMaxSegments - 1) / kMaxSegments);
    if (hosts && ctx.model.eager_bytes() > 0)
      L.seg = std::max<uint64_t>(L.seg, uint64_t(double(ctx.model.eager_bytes()) * stagger_spread(L.window)) + e);
  }
  L.seg = std::max<uint64_t>(e, L.seg / e * e);
  uint64_t base = 0, total_segments = 0;
  L.segments.resize(size_t(T));
  for (int k = 0; k < T; ++k) {
    const uint64_t bytes = elems[size_t(k)] * e;
    // Segments of at least seg bytes (below it, a message may turn eager).
    const uint64_t nseg = bytes == 0 ? 0 : std::max<uint64_t>(1, bytes / L.seg);
    L.segments[size_t(k)] = nseg ? staggered_blocks(elems[size_t(k)], c.elem_size, nseg, L.window, base) : Blocks{};
    base += bytes;
    total_segments += nseg;
  }
  const double ops = 2.0 * double(total_segments) * double(p);
  if (ctx.op_limit && ops > double(ctx.op_limit))
    throw TooLarge(cat(T, " packed trees of ", p, " ranks in ", total_segments, " segments: ", ops, " ops"));
  for (int k = 0; k < int(L.segments.size()); ++k)
    for (int i = 0; i < L.segments[size_t(k)].size(); ++i) L.all.push_back({k, i});
  order_segments(L, ctx, dir);
  return L;
}

}  // namespace hetcoll

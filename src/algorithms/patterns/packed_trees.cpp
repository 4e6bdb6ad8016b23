#include "algorithms/patterns/packed_trees.hpp"

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

// The smallest segment the model's default picks: the eager size (times
// the stagger's spread) over a network with one, else 4 KiB.
double smallest_segment(const MachineModel& m) {
  return m.eager_bytes() > 0 ? double(m.eager_bytes()) * stagger_spread(kPackedWindow) : 4096.0;
}

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

Builder packed_builder(const GenContext& ctx, const char* name, const PackedLayout& L) {
  return make_builder(ctx, cat(name, "[seg=", L.seg, ",trees=", L.trees_asked, ",window=", L.window, "]"));
}

size_t packed_fan_in(const PackedLayout& L, const std::vector<std::vector<std::vector<int>>>& per_tree, int h) {
  size_t fan_in = 0;
  for (const auto& peers : per_tree) fan_in = std::max(fan_in, peers[size_t(h)].size());
  return fan_in + L.local[size_t(h)].size();
}

CombineSlots::CombineSlots(Builder& b, int rank, size_t fan_in, uint64_t slot_len)
    : b_(b), rank_(rank), nslots_(2 * fan_in), slot_len_(slot_len) {
  base_ = nslots_ ? b.alloc_tmp(rank, nslots_ * slot_len) : 0;
}

uint32_t CombineSlots::take(int from, const Slice& piece, uint32_t first) {
  const Slice slot{Buf::tmp, base_ + (next_++ % nslots_) * slot_len_, piece.len};
  const uint32_t got =
      first == PeerSends::kNoSend ? b_.recv(rank_, from, slot) : b_.recv_after(rank_, from, slot, {first});
  b_.reduce(rank_, piece, slot);
  return got;
}

uint64_t PackedLayout::largest_segment() const {
  uint64_t s = 0;
  for (const Blocks& b : segments) s = std::max(s, b.largest());
  return s;
}

std::vector<ParamSpec> packed_params() {
  return {{"trees", ParamKind::integer, 1, 64, false, cat("most trees packed (default ", kPackedTrees, ")")},
          seg_param(),
          {"window", ParamKind::integer, 1, 1024, false,
           cat("messages in flight to one peer (default ", kPackedWindow, "): the next waits for the one that many before")}};
}

void packed_registry_entry(Algorithm& a, bool forest, Variants variants) {
  a.params = packed_params();
  a.distinct = forest ? forest_distinct : packed_distinct;
  a.variants = variants;
}

std::vector<std::string> packed_variants(const std::string& name, const MachineModel& m, uint64_t bytes) {
  if (double(bytes) < 2 * smallest_segment(m)) return {name};  // one segment: nothing for a window or trees to share
  return {name, name + "[trees=3]", name + "[window=2]"};
}

namespace {
// Hosts joined by links, at most kPackedHosts of them in the group; and
// `bytes` enough for two of the smallest segments (at least the eager size
// over a network with one), or at most kPackedSmallHosts hosts. Less has
// nothing to pipeline or share out: one tree of whole messages — yet a
// tree cut to the links' bandwidths, which beats the catalog's trees in a
// hierarchy's phases on uneven hosts (slow_hosts, 8-byte allreduce: 53 µs
// against 71 without), and on a few hosts its packing costs little (32
// hosts: well under a millisecond; 256: 76 ms, more than a small call's
// whole decision should).
bool worth_packing(const Collective& c, const MachineModel& m, uint64_t bytes) {
  TopologyPtr t = m.topology();
  if (!t || !t->multi_host()) return false;
  std::vector<int> hosts;
  for (int r = 0; r < std::min(c.nranks, t->ranks()); ++r) hosts.push_back(t->host_of(r));
  std::sort(hosts.begin(), hosts.end());
  const long H = std::unique(hosts.begin(), hosts.end()) - hosts.begin();
  if (double(bytes) < 2 * smallest_segment(m)) return H <= kPackedSmallHosts;
  return H <= kPackedHosts;
}
}  // namespace

bool packed_distinct(const Collective& c, const MachineModel& m) { return worth_packing(c, m, vector_bytes(c)); }

bool forest_distinct(const Collective& c, const MachineModel& m) { return worth_packing(c, m, c.total_bytes()); }

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

namespace {

// The group's hosts, the rank standing for each, and the trees packed from
// `root`'s host (L's fields but segments and order); whether the group has
// a topology of several hosts.
bool place_hosts(const GenContext& ctx, int root, TreeDirection dir, PackedLayout& L) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
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
    for (int h = 0; h < H; ++h) L.subnet[size_t(h)] = topo->group_of_host(h);
  L.root_host = L.host[size_t(root)];
  L.rep.assign(size_t(H), -1);
  L.local.assign(size_t(H), {});
  L.rep[size_t(L.root_host)] = root;
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
    for (int v = 1; v < p; ++v) chain.parent[size_t((root + v) % p)] = (root + v - 1) % p;
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
  return hosts;
}

// Whole elements of `count` in proportion to the trees' shares (the last
// tree takes what rounding leaves).
std::vector<uint64_t> tree_elems(const TreePacking& tp, uint64_t count) {
  const size_t T = tp.trees.size();
  std::vector<uint64_t> elems(T, 0);
  uint64_t given = 0;
  for (size_t k = 0; k < T; ++k) {
    elems[k] = k + 1 == T ? count - given
                          : std::min<uint64_t>(count - given, uint64_t(std::llround(tp.trees[k].share * double(count))));
    given += elems[k];
  }
  return elems;
}

// The model's segment size, unless seg= is given: at least `chosen`, at
// most kMaxSegments segments of `total` bytes in all, and over a network
// with an eager protocol no segment below it — eager messages all leave at
// once and share the wire (SimGrid's detached sends), so only rendezvous
// messages, one peer's `window` at a time, pipeline.
uint64_t segment_bytes(const GenContext& ctx, const PackedLayout& L, uint64_t chosen, uint64_t total, bool hosts) {
  const uint32_t e = ctx.coll.elem_size;
  uint64_t seg = chosen;
  if (ctx.params.count("seg")) {
    seg = param_bytes(ctx, "seg", std::max<uint64_t>(total, e));
  } else {
    seg = std::max<uint64_t>(seg, (total + kMaxSegments - 1) / kMaxSegments);
    if (hosts && ctx.model.eager_bytes() > 0)
      seg = std::max<uint64_t>(seg, uint64_t(double(ctx.model.eager_bytes()) * stagger_spread(L.window)) + e);
  }
  return std::max<uint64_t>(e, seg / e * e);
}

}  // namespace

PackedLayout packed_layout(const GenContext& ctx, TreeDirection dir, bool combine) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  PackedLayout L;
  const bool hosts = place_hosts(ctx, c.root, dir, L);
  const int T = int(L.packing.trees.size());
  // Each tree's bytes: whole elements in proportion to its share.
  const uint64_t count = c.count, e = c.elem_size;
  const std::vector<uint64_t> elems = tree_elems(L.packing, count);
  int depth = 1;
  uint64_t widest = 0;
  for (int k = 0; k < T; ++k) {
    depth = std::max(depth, L.packing.trees[size_t(k)].depth);
    widest = std::max(widest, elems[size_t(k)] * e);
  }
  bool locals = false;
  for (const auto& l : L.local) locals = locals || !l.empty();
  L.seg = segment_bytes(ctx, L,
                        best_segment(ctx.model, std::max<uint64_t>(widest, e), c.elem_size, depth + (locals ? 1 : 0),
                                     combine),
                        count * e, hosts);
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

PackedForest packed_forest(const GenContext& ctx, const Blocks& blocks, TreeDirection dir, bool combine) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint32_t e = c.elem_size;
  PackedForest F;
  F.blocks = blocks;
  PackedLayout& L = F.L;
  const bool hosts = place_hosts(ctx, 0, dir, L);
  const int T = int(L.packing.trees.size()), H = int(L.rep.size());
  // Each block in segments of the size the model picks for the largest
  // block over the deepest tree hung anywhere (at most twice as deep), at
  // least the eager size (as packed_layout). Each segment rides one tree:
  // the one furthest below its share of the bytes so far, so that the
  // blocks of every run of ranks (a subnet's) spread over the trees as
  // their shares say, in messages no smaller than a segment — the shares
  // of a small block would each be a message below the eager size, and
  // eager messages leave all at once.
  int depth = 1;
  for (const PackedTree& t : L.packing.trees) depth = std::max(depth, 2 * t.depth);
  bool locals = false;
  for (const auto& l : L.local) locals = locals || !l.empty();
  L.seg = segment_bytes(ctx, L, best_segment(ctx.model, std::max<uint64_t>(blocks.largest(), e), e,
                                             depth + (locals ? 1 : 0), combine),
                        blocks.total(), hosts);
  uint64_t pieces = 0;
  for (int s = 0; s < p; ++s)
    pieces += blocks.len[size_t(s)] == 0 ? 0 : std::max<uint64_t>(1, blocks.len[size_t(s)] / L.seg);
  const double ops = 2.0 * double(pieces) * double(p);
  if (ctx.op_limit && ops > double(ctx.op_limit))
    throw TooLarge(cat(T, " packed trees of ", p, " ranks in ", pieces, " pieces: ", ops, " ops"));
  std::vector<double> when;  // per item: its place in its block's period (0, 1]
  std::vector<double> carried(static_cast<size_t>(T), 0.0);
  F.items.reserve(pieces);
  when.reserve(pieces);
  for (int s = 0; s < p; ++s) {
    const uint64_t n = blocks.len[size_t(s)] / e;
    if (n == 0) continue;
    const uint64_t nseg = std::max<uint64_t>(1, n * e / L.seg);
    const Blocks seg = staggered_blocks(n, e, nseg, L.window, 0);
    for (int i = 0; i < seg.size(); ++i) {
      int k = 0;
      double best = HUGE_VAL;
      for (int t = 0; t < T; ++t) {
        const double share = L.packing.trees[size_t(t)].share;
        if (share <= 0) continue;
        const double over = (carried[size_t(t)] + double(seg.len[size_t(i)])) / share;
        if (over < best) best = over, k = t;
      }
      carried[size_t(k)] += double(seg.len[size_t(i)]);
      F.items.push_back({s, k, seg.off[size_t(i)], seg.len[size_t(i)]});
      when.push_back(double(i + 1) / double(nseg));
    }
  }
  // The trees undirected, each host's neighbours across subnets first.
  F.adj.assign(size_t(T), std::vector<std::vector<int>>(size_t(H)));
  for (int k = 0; k < T; ++k) {
    auto& adj = F.adj[size_t(k)];
    const auto& par = L.packing.trees[size_t(k)].parent;
    for (int h = 0; h < H; ++h)
      if (par[size_t(h)] >= 0) {
        adj[size_t(h)].push_back(par[size_t(h)]);
        adj[size_t(par[size_t(h)])].push_back(h);
      }
    for (int h = 0; h < H; ++h) {
      auto& v = adj[size_t(h)];
      std::sort(v.begin(), v.end());
      std::stable_partition(v.begin(), v.end(), [&](int x) { return L.subnet[size_t(x)] != L.subnet[size_t(h)]; });
    }
  }
  // Hung from every host: parents, and when an item is due at each host —
  // its place in the period, shifted by the host's distance from the
  // block's host (out: arrives that much later; in: must leave that much
  // earlier). A hop costs about T lone messages (the trees share links),
  // one cost per pair and direction, in whole nanoseconds: along an edge
  // the dues of its two ends differ by that one constant for every item.
  //
  // Towards the blocks' hosts every hop costs the same, the dearest: a
  // host's receives of an item wait for slots its earlier items free, and
  // its sends leave one at a time in its order (schedule/validator.hpp).
  // With one cost per hop, a message's due at its sender orders all of
  // them — every rank's sends, and everything a receive or a send waits
  // for comes before it — so that none can wait in a cycle. Out of the
  // blocks' hosts, receives wait for nothing.
  auto ns = [](double t) { return int64_t(std::llround(std::min(std::max(t, 0.0), 1e6) * 1e9)); };
  auto hop_cost = [&](int from, int to) { return ns(ctx.model.message(from, to, L.seg).total() * T); };
  int64_t dearest = 0;
  if (dir == TreeDirection::in)
    for (int k = 0; k < T; ++k)
      for (int h = 0; h < H; ++h)
        for (int v : F.adj[size_t(k)][size_t(h)]) dearest = std::max(dearest, hop_cost(L.rep[size_t(v)], L.rep[size_t(h)]));
  const double period = std::isfinite(L.packing.rate) && L.packing.rate > 0 ? double(blocks.total()) / L.packing.rate : 0;
  std::vector<std::vector<uint32_t>> of_host(static_cast<size_t>(H));  // items whose block's rank is on the host
  for (uint32_t j = 0; j < F.items.size(); ++j) of_host[size_t(L.host[size_t(F.items[j].rank)])].push_back(j);
  std::vector<std::vector<int64_t>> due(static_cast<size_t>(H), std::vector<int64_t>(F.items.size()));
  F.parent.assign(size_t(T), std::vector<std::vector<int>>(size_t(H)));
  std::vector<int64_t> dist(static_cast<size_t>(H));
  std::vector<int> bfs;
  const int64_t sign = dir == TreeDirection::out ? 1 : -1;
  for (int k = 0; k < T; ++k)
    for (int g = 0; g < H; ++g) {
      std::vector<int>& par = F.parent[size_t(k)][size_t(g)];
      par.assign(size_t(H), -1);
      dist.assign(size_t(H), 0);
      bfs.assign(1, g);
      for (size_t i = 0; i < bfs.size(); ++i) {
        const int u = bfs[i];
        for (int v : F.adj[size_t(k)][size_t(u)]) {
          if (v == par[size_t(u)]) continue;
          par[size_t(v)] = u;
          dist[size_t(v)] = dist[size_t(u)] + (dir == TreeDirection::out ? hop_cost(L.rep[size_t(u)], L.rep[size_t(v)])
                                                                           : dearest);
          bfs.push_back(v);
        }
      }
      for (uint32_t j : of_host[size_t(g)]) {
        if (F.items[j].tree != k) continue;
        const int64_t at = ns(period * when[j]);
        for (int h = 0; h < H; ++h) due[size_t(h)][j] = at + sign * dist[size_t(h)];
      }
    }
  F.order.assign(size_t(H), {});
  for (int h = 0; h < H; ++h) {
    auto& o = F.order[size_t(h)];
    o.resize(F.items.size());
    for (uint32_t j = 0; j < o.size(); ++j) o[j] = j;
    const auto& key = due[size_t(h)];
    std::stable_sort(o.begin(), o.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
  }
  return F;
}

}  // namespace hetcoll

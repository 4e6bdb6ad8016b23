#include "algorithms/patterns/levels.hpp"

#include <mutex>
#include <string>

#include <algorithm>
#include <cmath>
#include <map>

#include "algorithms/patterns/hybrid_mesh.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll {

bool Levels::trivial() const {
  int levels = 0;
  bool host = false, subnet = false;
  for (auto& g : hosts) host = host || g.size() > 1;
  for (auto& g : subnets) subnet = subnet || g.size() > 1;
  levels = int(host) + int(subnet) + int(top.size() > 1);
  return levels <= 1;
}

const std::vector<int>& Levels::like(const std::vector<int>& g) const {
  if (!hosts.empty() && &g >= hosts.data() && &g < hosts.data() + hosts.size() && host_like.size() == hosts.size())
    return hosts[host_like[size_t(&g - hosts.data())]];
  if (!subnets.empty() && &g >= subnets.data() && &g < subnets.data() + subnets.size() &&
      subnet_like.size() == subnets.size())
    return subnets[subnet_like[size_t(&g - subnets.data())]];
  return g;
}

std::vector<size_t> alike_groups(const MachineModel& m, const std::vector<std::vector<int>>& groups) {
  std::vector<size_t> like(groups.size());
  std::map<std::pair<size_t, uint64_t>, size_t> first;
  for (size_t i = 0; i < groups.size(); ++i) {
    like[i] = i;
    if (groups[i].size() <= 1) continue;
    auto [it, fresh] = first.emplace(std::make_pair(groups[i].size(), cost_fingerprint(m, groups[i])), i);
    if (!fresh) like[i] = it->second;
  }
  return like;
}

uint64_t cost_fingerprint(const MachineModel& m, const std::vector<int>& g) {
  Fnv f;
  f.add(int64_t(g.size()));
  const uint64_t sizes[] = {0, 1024, uint64_t(1) << 20};
  for (int r : g)
    for (uint64_t x : sizes) {
      f.add(m.reduce_time(r, x));
      f.add(m.copy_time(r, x));
    }
  TopologyPtr t = m.topology();
  std::map<int, int64_t> renumber;  // link ids in order of first use
  for (int a : g)
    for (int b : g) {
      if (a == b) continue;
      for (uint64_t x : sizes) {
        const MessageCost c = m.message(a, b, x);
        f.add(c.send);
        f.add(c.arrive);
        f.add(c.recv);
        f.add(c.wire);
      }
      if (!t || a >= t->ranks() || b >= t->ranks()) continue;
      int links[Topology::kMaxRoute];
      const int k = t->route(a, b, links);
      f.add(int64_t(k));
      for (int i = 0; i < k; ++i) {
        auto [it, fresh] = renumber.emplace(links[i], int64_t(renumber.size()));
        f.add(it->second);
        if (fresh) f.add(t->links[size_t(links[i])].bandwidth);
      }
    }
  return f.h;
}

namespace {
Levels compute_levels(const MachineModel& m, int n, int root, bool want_alike);
}  // namespace

// Cached per (model, ranks, root): a decision at thousands of ranks asks for
// the same levels once per setting of every composite it weighs, and the
// likeness of groups (cost_fingerprint) is most of their cost.
Levels levels_of(const MachineModel& m, int n, int root, bool want_alike) {
  static std::mutex mu;
  static std::map<std::string, Levels> cache;
  const std::string key = cat(n, ':', root, ':', int(want_alike), '|', m.spec());
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  Levels L = compute_levels(m, n, root, want_alike);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(key, L);
  return L;
}

namespace {
Levels compute_levels(const MachineModel& m, int n, int root, bool want_alike) {
  TopologyPtr t = m.topology();
  if (t && t->ranks() < n) t = nullptr;
  auto host = [&](int r) { return t ? t->host_of(r) : r; };
  auto subnet = [&](int r) { return t ? t->group_of(r) : 0; };
  // Groups in the order of their lowest rank, the root's first; members in
  // rank order, the leader (the root where it is a member) first.
  auto group_by = [&](const std::vector<int>& members, const std::function<int(int)>& key) {
    std::vector<std::vector<int>> groups;
    std::map<int, size_t> index;
    auto place = [&](int r) {
      auto [it, fresh] = index.emplace(key(r), groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(r);
    };
    if (std::find(members.begin(), members.end(), root) != members.end()) place(root);
    for (int r : members)
      if (r != root) place(r);
    return groups;
  };
  std::vector<int> all(size_t(std::max(n, 0)));
  for (int r = 0; r < n; ++r) all[size_t(r)] = r;
  Levels L;
  L.hosts = group_by(all, host);
  std::vector<int> host_leaders;
  for (auto& g : L.hosts) host_leaders.push_back(g[0]);
  // With the probe's ring, a subnet's hosts and the subnets follow it from
  // the root's host on (ECO §6): a ring-shaped phase among leaders then
  // crosses each slow link once.
  const bool ring = t && !t->ring_position.empty() && n > 0;
  if (ring) {
    const int H = t->hosts();
    const int start = t->ring_position[size_t(host(root))];
    auto along = [&](int r) { return (t->ring_position[size_t(host(r))] - start + H) % H; };
    std::stable_sort(host_leaders.begin(), host_leaders.end(), [&](int a, int b) { return along(a) < along(b); });
  }
  L.subnets = group_by(host_leaders, subnet);
  for (auto& g : L.subnets) L.top.push_back(g[0]);
  if (want_alike) {
    L.host_like = alike_groups(m, L.hosts);
    L.subnet_like = alike_groups(m, L.subnets);
  }
  return L;
}
}  // namespace

std::vector<int> level_order(const Levels& L) {
  std::map<int, const std::vector<int>*> host_of_leader, subnet_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  for (auto& g : L.subnets) subnet_of_leader[g[0]] = &g;
  std::vector<int> order;
  for (int s : L.top)
    for (int h : *subnet_of_leader[s])
      for (int r : *host_of_leader[h]) order.push_back(r);
  return order;
}

Schedule in_level_order(const GenContext& ctx, Generator gen) {
  const Collective& c = ctx.coll;
  const int root = has_root(c.op) ? c.root : 0;
  const std::vector<int> order = level_order(levels_of(ctx.model, c.nranks, root));
  ModelPtr gm = map_model(ModelPtr(ModelPtr(), &ctx.model), order);
  Collective sub = c;
  sub.root = 0;  // the root leads: first in level order
  Params params = ctx.params;
  params.erase("levels");
  int only = -1;
  if (ctx.only_rank >= 0) only = int(std::find(order.begin(), order.end(), ctx.only_rank) - order.begin());
  const GenContext sctx{sub, *gm, params, only, ctx.op_limit, ctx.phases};
  Schedule s = gen(sctx);
  std::string name = s.algorithm;  // "hybrid_bcast[mesh=…]": add levels=1 in key order
  const size_t open = name.find('[');
  name = open == std::string::npos ? name + "[levels=1]" : name.substr(0, open + 1) + "levels=1," + name.substr(open + 1);
  Builder b(c, name);
  b.only_rank(ctx.only_rank);
  b.limit(ctx.op_limit);
  b.append(s, order);
  return b.finish();
}

PhaseChoice phase_choice(const GenContext& ctx, const std::vector<int>& decider, const Collective& sub) {
  if (decider.size() <= 1) return {};
  if (!ctx.phases) throw std::logic_error("a composite's phase was built without the planner's chooser");
  ModelPtr gm = map_model(ModelPtr(ModelPtr(), &ctx.model), decider);
  return ctx.phases->choose(sub, *gm);
}

std::string run_phase(Builder& b, const GenContext& ctx, const std::vector<int>& group, const Collective& sub,
                      const PhaseMap& map, const std::vector<int>* decider) {
  if (group.size() <= 1) return {};
  // A rank building its own program plans only the phases it is in.
  int only = -1;
  if (ctx.only_rank >= 0) {
    auto it = std::find(group.begin(), group.end(), ctx.only_rank);
    if (it == group.end()) return {};
    only = int(it - group.begin());
  }
  ModelPtr gm = map_model(ModelPtr(ModelPtr(), &ctx.model), group);
  const std::string spec = phase_choice(ctx, decider && decider->size() == group.size() ? *decider : group, sub).spec;
  Schedule s = generate(spec, sub, *gm, only, ctx.op_limit, ctx.phases);
  std::vector<uint64_t> base(group.size(), 0);
  for (size_t k = 0; k < group.size(); ++k)
    if (s.tmp_bytes(int(k))) base[k] = b.alloc_tmp(group[k], s.tmp_bytes(int(k)));
  b.append(s, group, [&](int k, const Slice& sl) {
    if (sl.buf == Buf::tmp) return Slice{Buf::tmp, sl.off + base[size_t(k)], sl.len};
    return map(k, sl);
  });
  return spec;
}

}  // namespace hetcoll

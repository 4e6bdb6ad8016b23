#include "algorithms/hierarchy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "algorithms/hybrid_mesh.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

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

namespace {

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    auto* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void add(double x) { add(&x, sizeof x); }
  void add(int64_t x) { add(&x, sizeof x); }
};

// For each group, the index of the first group with its fingerprint (groups
// of one rank run nothing: each its own).
std::vector<size_t> alike(const MachineModel& m, const std::vector<std::vector<int>>& groups) {
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

}  // namespace

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

Levels levels_of(const MachineModel& m, int n, int root, bool want_alike) {
  TopologyPtr t = m.topology();
  if (t && t->ranks() < n) t = nullptr;
  auto host = [&](int r) { return t ? t->host_of(r) : r; };
  auto subnet = [&](int r) { return t ? t->subnet_of(r) : 0; };
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
    L.host_like = alike(m, L.hosts);
    L.subnet_like = alike(m, L.subnets);
  }
  return L;
}

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
  const GenContext sctx{sub, *gm, params, only, ctx.op_limit};
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

namespace {

std::string call_key(const Collective& c, const MachineModel& gm) {
  std::string k = cat(int(c.op), ':', c.nranks, ':', c.count, ':', c.elem_size, ':', c.root, ':', int(c.order_free));
  for (uint64_t x : c.counts) k += cat(',', x);
  return k + '|' + gm.spec();
}

}  // namespace

namespace {

// Work a phase's choice may simulate (steps: SimOptions::work_limit; about
// 20 ns each here): each candidate at most kCandidateWork, all of them
// together kPhaseWork. A count, not a clock, so a choice is a function of
// the phase alone, as its cache and every rank building its own program
// need. Without the bounds a model that prices messages at nothing had one
// choice simulate millions of steps.
constexpr uint64_t kCandidateWork = uint64_t(1) << 15;
constexpr uint64_t kPhaseWork = uint64_t(1) << 16;
constexpr size_t kPhaseOps = size_t(1) << 16;  // a candidate's schedule at most
constexpr size_t kSettings = 6;                // settings of one algorithm weighed

// A cache of phase results, bounded.
template <class V>
struct PhaseCache {
  std::mutex mu;
  std::map<std::string, V> map;
  template <class F>
  V get(const std::string& key, F&& make) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = map.find(key);
      if (it != map.end()) return it->second;
    }
    V v = make();
    std::lock_guard<std::mutex> lock(mu);
    if (map.size() > 4096) map.clear();
    return map.emplace(key, std::move(v)).first->second;
  }
};

// One algorithm on one phase, simulated within kCandidateWork (time
// INFINITY when that is not enough or the setting does not fit), cached.
struct Priced {
  double time = INFINITY;
  uint64_t messages = 0, work = 0;
};
Priced price(const std::string& spec, const Collective& sub, const MachineModel& gm) {
  static PhaseCache<Priced> cache;
  return cache.get(spec + '@' + call_key(sub, gm), [&] {
    Priced pr;
    try {
      const Schedule s = generate(spec, sub, gm, -1, std::min<size_t>(kPhaseOps, kCandidateWork / kStepsPerOp));
      const uint64_t built = s.total_ops() * kStepsPerOp;
      SimOptions quiet;
      quiet.timeline = false;
      quiet.work_limit = kCandidateWork - std::min(kCandidateWork - 1, built);
      const SimResult r = simulate(s, gm, quiet);
      pr.time = r.makespan;
      pr.messages = s.message_count();
      pr.work = built + r.work;
    } catch (const TooLarge&) {
      pr.work = kCandidateWork;
    } catch (const InputError&) {  // the setting does not fit this phase
    }
    return pr;
  });
}

// The α-β-γ estimate of a setting on the phase's view (INFINITY: none).
double estimate_of(const Algorithm& a, const std::string& spec, const Collective& sub, const MachineModel& gm) {
  const ClosedForm rank = a.estimate ? a.estimate : a.closed_form;
  if (!rank) return INFINITY;
  try {
    const HockneyParams est = hockney_estimate(gm, sub.size_bytes());
    const AlgorithmChoice ch = choose_algorithm(spec, sub.op);
    const GenContext ctx{sub, gm, ch.params, -1};
    if (auto t = rank(ctx, est)) return est.time(*t);
  } catch (const InputError&) {  // does not fit this phase
  }
  return INFINITY;
}

// The phase's algorithm for `rep`: candidates simulated best estimate
// first (the group's α-β-γ view) within the work bounds; if none fits
// them, the best estimate.
std::string phase_spec(const Collective& rep, const MachineModel& gm) {
  struct Pending {
    double estimate;  // INFINITY: none (after those that have one)
    std::string spec;
  };
  std::vector<Pending> pending;
  for (const Algorithm* a : algorithms_for(rep.op)) {
    if (a->composite) continue;
    if (rep.op == CollOp::allreduce && !rep.order_free && !a->rank_consistent) continue;
    if (a->distinct && !a->distinct(rep, gm)) continue;
    std::vector<std::string> specs;
    if (a->variants) specs = a->variants(rep, gm);
    if (specs.empty()) specs.push_back(a->name);
    if (specs.size() > kSettings) specs.resize(kSettings);
    for (const std::string& spec : specs) pending.push_back({estimate_of(*a, spec, rep, gm), spec});
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.estimate < y.estimate; });
  std::string best;
  double best_time = INFINITY;
  uint64_t work = 0;
  for (const Pending& pnd : pending) {
    if (work >= kPhaseWork) break;
    const Priced pr = price(pnd.spec, rep, gm);
    work += pr.work;
    if (pr.time < best_time * (1 - 1e-9)) best = pnd.spec, best_time = pr.time;
  }
  // Nothing could be simulated within the bounds (a phase of hundreds of
  // ranks): the best estimate.
  if (best.empty() && !pending.empty() && std::isfinite(pending.front().estimate)) best = pending.front().spec;
  if (best.empty()) throw InputError(cat("no algorithm fits the phase ", rep.describe()));
  return best;
}

}  // namespace

// The choice is made for the phase's size class, on its representative
// (schedule/collective.hpp): calls of one class — the many nearly equal
// pieces and shares of a hierarchical schedule among them — share it.
PhaseChoice phase_choice(const Collective& sub, const MachineModel& gm) {
  static PhaseCache<std::string> specs;
  const Collective rep = representative(sub);
  std::string spec = specs.get(call_key(rep, gm), [&] { return phase_spec(rep, gm); });
  // The class's choice, priced on this phase itself (by its estimate where
  // simulating it would take more than a candidate may).
  Priced pr = price(spec, sub, gm);
  if (!std::isfinite(pr.time) && pr.work < kCandidateWork) {  // does not fit this very call: choose for it alone
    spec = phase_spec(sub, gm);
    pr = price(spec, sub, gm);
  }
  PhaseChoice pc{spec, pr.time, pr.messages};
  if (!std::isfinite(pc.time)) {
    for (const Algorithm* a : algorithms_for(sub.op))
      if (spec.compare(0, a->name.size(), a->name) == 0 && (spec.size() == a->name.size() || spec[a->name.size()] == '['))
        pc.time = estimate_of(*a, spec, sub, gm);
  }
  return pc;
}

std::string best_flat(const Collective& sub, const MachineModel& gm) { return phase_choice(sub, gm).spec; }

PhaseChoice phase_choice(const GenContext& ctx, const std::vector<int>& decider, const Collective& sub) {
  if (decider.size() <= 1) return {};
  ModelPtr gm = map_model(ModelPtr(ModelPtr(), &ctx.model), decider);
  return phase_choice(sub, *gm);
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
  const std::string spec =
      decider && decider != &group && decider->size() == group.size() ? phase_choice(ctx, *decider, sub).spec
                                                                        : best_flat(sub, *gm);
  Schedule s = generate(spec, sub, *gm, only, ctx.op_limit);
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

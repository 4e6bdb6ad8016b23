// hierarchical — every collective in phases that follow the machine: inside
// each host (shared memory), among the hosts of each subnet, among the
// subnets (one leader each, the root's subnet leading). Each phase is a
// collective on that level's groups whose algorithm the model picks by
// simulating the group's candidates on the group's view of the machine
// (patterns/levels.hpp: best_flat) — a pipelined chain across slow uplinks, a
// binomial tree inside a subnet, whatever is fastest there.
//
//   bcast      top bcast → subnet bcasts → host bcasts
//   reduce     host reduces → subnet reduces → top reduce to the root
//   allreduce  host reduces → subnet reduces → top allreduce among subnet
//              leaders → subnet bcasts → host bcasts (every rank gets the
//              top allreduce's bits: identical results)
//   allgather(v)  host gathers → subnet gathervs → top allgatherv of subnet
//              blocks → leaders put blocks in rank order → subnet and host
//              bcasts of the whole vector (blocks with gaps or out of rank
//              order: of the staged blocks, every rank puts them in place)
//   reduce_scatter(_block)  vectors laid out subnet by subnet → host and
//              subnet reduces → reduce-scatter among subnet leaders (each
//              gets its subnet's blocks) → scatters inside subnets and hosts
//   scan, exscan  (hosts' and subnets' ranks consecutive) exscan + reduce
//              inside hosts, the same among each subnet's hosts, an exscan
//              among subnets → offsets broadcast down → each rank combines
//   gather     host gathers → subnet gathervs → a gatherv of subnet blocks
//              to the root → the root puts them in rank order; scatter the
//              same backwards
//   alltoall   gathers at subnet leaders → one message per pair of subnets
//              → scatters (every block still crosses once; S(S-1) messages
//              cross instead of p(p-1))
//   barrier    binomial fan-in inside hosts and subnets → a star through
//              the first subnet leader (dissemination beyond 16 subnets) →
//              fan-out
//
// direct=1 (barrier, allgather): inside each subnet first, then every rank
// hears from its counterpart in the other subnets (rank j of subnet t from
// rank j mod |s| of subnet s): one crossing, no fan-out — for latency-bound
// sizes.
// slices=1 (allreduce): reduce-scatter inside each subnet, the k-th hosts
// of all subnets allreduce slice k (K allreduces across the uplinks at
// once), allgather inside: an allreduce of slices.
// shares=1 (allreduce): each subnet owns a share of the vector sized to its
// uplink (the slowest owns none); the others' partial sums of it go to the
// owner, its result back to them, piece by piece (pieces=K) so that one
// piece goes up while the one before comes down, through different pairs
// of ranks (allreduce_shares). Across a subnet's uplink (1 + (S-2)x) of
// the vector each way for a share x: one vector for the slowest subnet.
// pieces=K (bcast, reduce, allreduce): the vector in K pieces, each through
// every phase, so that one piece crosses the slow links while the one before
// it spreads inside the subnets; the planner tries 1-16 for 64 KiB and more.
//
// Steps: the sum of the phases'. Bytes: across subnets only the top phase's
// (one vector per subnet for bcast/reduce/allreduce, the subnet's blocks for
// allgather), which is what makes it win where uplinks are slow and shared.
// Constraints: a model with a topology of several levels (hosts with
// several ranks, or several subnets); otherwise it is a flat algorithm and
// the planner skips it. Scan and exscan: every host's and every subnet's
// ranks consecutive (a block layout). Not for gatherv, scatterv and
// alltoallv: their leaders would forward blocks whose sizes MPI gives only
// to the root (or to their owner), and a schedule is built before any byte
// moves. Reductions combine in the hierarchy's order (any
// order is allowed for MPI's predefined operations; hetcoll declines user
// operations). In-place calls run in place (the builder orders the
// accesses to the shared bytes; tests/algorithms/test_in_place.cpp), but
// alltoall, whose input is copied aside.
// Source: ECO (Lowekamp & Beguelin 1996) §4-5 (operations across subnets,
// rooted at the originator's subnet, then inside); Banikazemi et al. 1999
// §4 (trees that follow node and network speeds); the host level as in
// MPICH's SMP-aware and Open MPI's han collectives.
// Cost: the phases' costs; the top phase crosses the slow links once
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll {
namespace {

using namespace hierarchical;

Schedule generate(const GenContext& ctx) {
  const bool direct = param_int(ctx, "direct", 0) != 0;
  if (direct && ctx.coll.op == CollOp::barrier) return barrier_direct(ctx);
  if (direct && ctx.coll.op == CollOp::allgather) return allgather_direct(ctx);
  switch (ctx.coll.op) {
    case CollOp::bcast: return bcast(ctx);
    case CollOp::reduce: return reduce(ctx);
    case CollOp::allreduce: return param_int(ctx, "slices", 0) ? allreduce_slices(ctx) : allreduce(ctx);
    case CollOp::allgather:
    case CollOp::allgatherv: return allgather(ctx);
    case CollOp::reduce_scatter_block:
    case CollOp::reduce_scatter: return reduce_scatter(ctx);
    case CollOp::scan:
    case CollOp::exscan: return scan(ctx);
    case CollOp::alltoall: return alltoall_leaders(ctx);
    case CollOp::gather:
    case CollOp::scatter: return gather_or_scatter(ctx);
    case CollOp::barrier: return barrier(ctx);
    default: throw InputError(cat("hierarchical does not implement ", coll_op_name(ctx.coll.op)));
  }
}

// What the phases cost: each level's slowest group (phases of one level run
// at once, on disjoint links but for the uplinks the top phase alone
// uses), levels one after another; K pieces pipeline, so the slowest
// level's time beyond its latency (its time for one element) is paid K-1
// more times — an allreduce's pieces pay their whole time again (each
// piece's top allreduce waits for the one before on the leaders: what the
// simulation of whole schedules shows). Every group's algorithm as chosen by its decider's
// simulation: an estimate built from simulations, for where the whole
// schedule is beyond the decision's budget (thousands of ranks).
struct LevelCost {
  double time = 0, latency = 0;  // latency: the same phases for one element
  uint64_t messages = 0;
};
using SubFor = std::function<Collective(const std::vector<int>&)>;
LevelCost level_cost(const GenContext& ctx, const Levels& L, const std::vector<std::vector<int>>& groups,
                     const SubFor& sub, bool pipelined) {
  LevelCost lc;
  for (auto& g : groups) {
    if (g.size() <= 1) continue;
    const Collective call = sub(g);
    const PhaseChoice pc = phase_choice(ctx, L.like(g), call);
    lc.time = std::max(lc.time, pc.time);
    lc.messages += pc.messages;
    if (pipelined) {
      Collective one = call;
      one.count = std::min<uint64_t>(one.count, 1);
      lc.latency = std::max(lc.latency, phase_choice(ctx, L.like(g), one).time);
    }
  }
  return lc;
}

// Alltoall through subnet leaders (alltoall_leaders): the gathers inside
// every subnet, the leaders' exchange (an alltoall among them of the
// blocks between two subnets), the copies that pack and unpack those blocks
// at the busiest leader (2·|s|·p blocks), the scatters inside subnets. Alike
// subnets (the levels' subnet_like) are priced once.
std::optional<Terms> alltoall_estimate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const std::vector<std::vector<int>> M = subnet_members(L);
  const int p = c.nranks, S = int(M.size());
  if (S < 2) return std::nullopt;  // one subnet: nothing to compose (not a candidate: distinct)
  const uint64_t blk = c.count * c.elem_size;
  double gather = 0, scatter = 0, copies = 0;
  uint64_t messages = uint64_t(S) * uint64_t(S - 1), ops = 0;
  std::vector<bool> priced(M.size(), false);
  for (size_t s = 0; s < M.size(); ++s) {
    const std::vector<int>& g = M[s];
    messages += 2 * (g.size() - 1);
    ops += 4 * g.size() * uint64_t(p);  // packed and unpacked at the leader, and the copies the phases make
    const size_t like = s < L.subnet_like.size() ? L.subnet_like[s] : s;
    if (g.size() <= 1 || priced[like]) continue;
    priced[like] = true;
    const std::vector<int>& d = M[like];
    gather = std::max(gather, phase_choice(ctx, d, sub_call(CollOp::gather, int(d.size()), uint64_t(p) * c.count, c)).time);
    scatter = std::max(scatter, phase_choice(ctx, d, sub_call(CollOp::scatter, int(d.size()), uint64_t(p) * c.count, c)).time);
    copies = std::max(copies, 2 * double(d.size()) * double(p) * ctx.model.copy_time(d[0], blk));
  }
  // The leaders' exchange as an alltoall of the largest pair's blocks
  // (|s|·|t| of them, s ≠ t).
  std::vector<int> leaders;
  uint64_t pair = 0;
  for (const auto& g : M) leaders.push_back(g[0]);
  for (size_t s = 0; s < M.size(); ++s)
    for (size_t t = s + 1; t < M.size(); ++t) pair = std::max<uint64_t>(pair, M[s].size() * M[t].size());
  const double exchange = phase_choice(ctx, leaders, sub_call(CollOp::alltoall, S, pair * c.count, c)).time;
  Terms t;
  t.fixed = gather + exchange + copies + scatter;
  t.messages = std::max<uint64_t>(1, messages);
  t.ops = 2 * messages + ops;
  return t;
}

// Allreduce by shares (allreduce_shares): the host and subnet reduces; the
// way up, where each subnet's `up` rank sends the others' shares one after
// another and each owner takes S-1 partial sums of its share and combines
// them; the way down, where each owner sends its result to the S-1 other
// subnets one after another; the subnet and host broadcasts. K pieces pay
// the slowest of these K-1 more times (as the other allreduces here).
std::optional<Terms> shares_estimate(const GenContext& ctx, const Levels& L, uint64_t pieces,
                                     const std::function<LevelCost(const std::vector<std::vector<int>>&, CollOp, uint64_t)>& level) {
  const Collective& c = ctx.coll;
  const MachineModel& m = ctx.model;
  const size_t S = L.subnets.size();
  const ShareRoles R = share_roles(m, L);
  const uint64_t n = (c.count + pieces - 1) / pieces, E = c.elem_size;
  const std::vector<uint64_t> part = split_by_shares(n, R.share);
  std::vector<LevelCost> levels;
  levels.push_back(level(L.hosts, CollOp::reduce, n));
  levels.push_back(level(L.subnets, CollOp::reduce, n));
  LevelCost up, down;
  // On a network the shares cross the uplinks (and NICs) together: each
  // way's bytes through its busiest link at its bandwidth bound it too.
  const TopologyPtr topo = m.topology();
  std::vector<double> up_load(topo ? topo->links.size() : 0, 0.0), down_load(up_load.size(), 0.0);
  int route[Topology::kMaxRoute];
  auto carry = [&](std::vector<double>& load, int a, int b, uint64_t bytes) {
    if (!topo) return;
    const int k = topo->route(a, b, route);
    for (int i = 0; i < k; ++i) load[size_t(route[i])] += double(bytes);
  };
  for (size_t t = 0; t < S; ++t) {
    double sent = 0, recv = 0;  // t's up rank's serial sends; t's owner's receives
    for (size_t o = 0; o < S; ++o) {
      if (o == t || !part[o]) continue;
      const MessageCost k = m.message(R.up[t], R.own[o], part[o] * E);
      carry(up_load, R.up[t], R.own[o], part[o] * E);
      sent += k.send;
      up.time = std::max(up.time, sent - k.send + k.arrive + k.recv);
      ++up.messages;
    }
    if (part[t]) {
      for (size_t u = 0; u < S; ++u)
        if (u != t) recv += m.message(R.up[u], R.own[t], part[t] * E).recv + m.reduce_time(R.own[t], part[t] * E);
      up.time = std::max({up.time, sent, recv});
      double out = 0;  // t's owner sends its result to every other subnet, one after another
      for (size_t u = 0; u < S; ++u) {
        if (u == t) continue;
        const MessageCost k = m.message(R.own[t], R.down[u], part[t] * E);
        carry(down_load, R.own[t], R.down[u], part[t] * E);
        down.time = std::max(down.time, out + k.arrive + k.recv);
        out += k.send;
        ++down.messages;
      }
    }
  }
  for (size_t l = 0; topo && l < topo->links.size(); ++l)
    if (topo->links[l].bandwidth > 0) {
      up.time = std::max(up.time, up_load[l] / topo->links[l].bandwidth);
      down.time = std::max(down.time, down_load[l] / topo->links[l].bandwidth);
    }
  levels.push_back(level(L.subnets, CollOp::bcast, n));
  levels.push_back(level(L.hosts, CollOp::bcast, n));
  // Every piece goes up before any comes down, over the same uplinks: the
  // two ways are one stage of the pipeline.
  double sum = up.time + down.time, slowest = up.time + down.time;
  uint64_t messages = up.messages + down.messages;
  for (const LevelCost& lc : levels) {
    sum += lc.time;
    slowest = std::max(slowest, lc.time);
    messages += lc.messages;
  }
  Terms t;
  t.fixed = sum + double(pieces - 1) * slowest;
  t.messages = std::max<uint64_t>(1, messages * pieces);
  t.rough = true;  // 25-65 % low at 1 MiB (tests/plan/test_composite_prices.cpp)
  return t;
}

// Scan and exscan (scan.cpp): an exscan and a reduce inside every host,
// the same among each subnet's hosts, an exscan among the subnets, the
// offsets broadcast down to the hosts and their ranks, and every rank's
// combining of its parts (three copies and combines at most).
std::optional<Terms> scan_estimate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Levels L = levels_of(ctx.model, c.nranks, 0, true);
  if (!consecutive(L)) return std::nullopt;
  for (auto& g : L.subnets) std::sort(g.begin(), g.end());
  L.subnet_like = alike_groups(ctx.model, L.subnets);  // as scan() orders them
  L.top.clear();
  for (auto& g : L.subnets) L.top.push_back(g[0]);
  std::sort(L.top.begin(), L.top.end());
  const bool top = L.top.size() > 1;
  std::vector<LevelCost> levels;
  auto add = [&](const std::vector<std::vector<int>>& groups, CollOp o) {
    levels.push_back(
        level_cost(ctx, L, groups, [&](const std::vector<int>& g) { return sub_call(o, int(g.size()), c.count, c); }, false));
  };
  add(L.hosts, CollOp::exscan);
  add(L.hosts, CollOp::reduce);
  add(L.subnets, CollOp::exscan);
  if (top) {
    add(L.subnets, CollOp::reduce);
    add({L.top}, CollOp::exscan);
  }
  add(L.subnets, CollOp::bcast);
  add(L.hosts, CollOp::bcast);
  const uint64_t m = vector_bytes(c);
  Terms t;
  for (const LevelCost& lc : levels) t.fixed += lc.time, t.messages += lc.messages;
  t.fixed += 3 * (ctx.model.copy_time(0, m) + ctx.model.reduce_time(0, m));
  t.messages = std::max<uint64_t>(1, t.messages);
  return t;
}

// Barrier (barrier.cpp): fan-in and fan-out inside the hosts, the same
// among each subnet's hosts, a star or dissemination among the subnets —
// about a barrier of each level's groups, one level after another.
std::optional<Terms> barrier_estimate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  if (param_int(ctx, "direct", 0)) return std::nullopt;
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  Terms t;
  for (const auto* groups : {&L.hosts, &L.subnets}) {
    const LevelCost lc = level_cost(ctx, L, *groups, [&](const std::vector<int>& g) { return Collective::make(CollOp::barrier, int(g.size()), 0); }, false);
    t.fixed += lc.time;
  }
  if (L.top.size() > 1) t.fixed += phase_choice(ctx, L.top, Collective::make(CollOp::barrier, int(L.top.size()), 0)).time;
  t.messages = 2 * uint64_t(std::max(0, c.nranks - 1));
  return t;
}

// Gather and scatter (gather_scatter.cpp), and reduce-scatter
// (reduce_scatter.cpp): blocks up or down the levels — each level's groups
// gathering (scattering) what is under each member, the root putting the
// blocks in rank order (or the ranks laying their vectors out in level
// order) — priced level by level.
std::optional<Terms> blocks_estimate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const CollOp op = c.op;
  const bool rs = op == CollOp::reduce_scatter || op == CollOp::reduce_scatter_block;
  if (op == CollOp::reduce_scatter && c.counts.size() != size_t(c.nranks)) return std::nullopt;
  const Levels L = levels_of(ctx.model, c.nranks, rs ? 0 : c.root, true);
  const uint64_t e = c.elem_size;
  auto block = [&](int r) { return op == CollOp::reduce_scatter ? c.counts[size_t(r)] : c.count; };  // elements
  std::map<int, uint64_t> under;  // elements under each host leader, then each subnet leader
  for (auto& g : L.hosts)
    for (int r : g) under[g[0]] += block(r);
  std::map<int, uint64_t> subnet_under;
  for (auto& g : L.subnets)
    for (int h : g) subnet_under[g[0]] += under[h];
  uint64_t all = 0;
  for (int r = 0; r < c.nranks; ++r) all += block(r);
  std::vector<LevelCost> levels;
  auto add = [&](const std::vector<std::vector<int>>& groups, const SubFor& sub) {
    levels.push_back(level_cost(ctx, L, groups, sub, false));
  };
  auto counts_of = [&](const std::vector<int>& g, const std::map<int, uint64_t>* per) {
    std::vector<uint64_t> v;
    for (int x : g) v.push_back(per ? per->at(x) : block(x));
    return v;
  };
  const std::vector<std::vector<int>> top{L.top};
  if (rs) {  // combine up to the subnet leaders, share out among them, scatter down
    auto reduce_all = [&](const std::vector<int>& g) { return sub_call(CollOp::reduce, int(g.size()), all, c); };
    add(L.hosts, reduce_all);
    add(L.subnets, reduce_all);
    if (L.top.size() > 1)
      add(top, [&](const std::vector<int>& g) {
        Collective x = Collective::make_v(CollOp::reduce_scatter, counts_of(g, &subnet_under), 0, e);
        x.order_free = c.order_free;
        return x;
      });
    add(L.subnets, [&](const std::vector<int>& g) { return blocks_call(CollOp::scatter, CollOp::scatterv, counts_of(g, &under), c); });
    add(L.hosts, [&](const std::vector<int>& g) { return blocks_call(CollOp::scatter, CollOp::scatterv, counts_of(g, nullptr), c); });
  } else {
    const bool gather = op == CollOp::gather;
    const CollOp one = gather ? CollOp::gather : CollOp::scatter, v = gather ? CollOp::gatherv : CollOp::scatterv;
    std::vector<std::pair<const std::vector<std::vector<int>>*, const std::map<int, uint64_t>*>> steps{
        {&L.hosts, nullptr}, {&L.subnets, &under}, {&top, &subnet_under}};
    if (!gather) std::reverse(steps.begin(), steps.end());
    for (auto& [groups, per] : steps)
      add(*groups, [&, per = per](const std::vector<int>& g) { return blocks_call(one, v, counts_of(g, per), c); });
  }
  Terms t;
  for (const LevelCost& lc : levels) t.fixed += lc.time, t.messages += lc.messages;
  // The blocks put in (or taken from) rank order at the root; a
  // reduce-scatter's every rank lays out its vector.
  const int at = rs ? 0 : c.root;
  t.fixed += rs ? ctx.model.copy_time(at, all * e) : double(c.nranks) * ctx.model.copy_time(at, c.count * e);
  t.messages = std::max<uint64_t>(1, t.messages);
  return t;
}

// Allreduce by slices (allreduce_slices): host reduces, a reduce-scatter
// of K slices inside each subnet (K: the fewest hosts a subnet has), the
// k-th hosts of all subnets allreducing slice k (K allreduces across the
// uplinks at once: the slowest of them, and on a network the bytes each
// uplink carries for all K), allgathers inside the subnets, host bcasts.
std::optional<Terms> slices_estimate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  size_t K = SIZE_MAX;
  for (auto& g : L.subnets) K = std::min(K, g.size());
  if (K == SIZE_MAX || K == 0) return std::nullopt;
  const Blocks slices = even_blocks(c.count, c.elem_size, int(K));
  auto counts_for = [&](size_t members) {
    std::vector<uint64_t> v(members, 0);
    for (size_t k = 0; k < K; ++k) v[k] = slices.len[k] / c.elem_size;
    return v;
  };
  std::vector<LevelCost> levels;
  auto add = [&](const std::vector<std::vector<int>>& groups, const SubFor& sub) {
    levels.push_back(level_cost(ctx, L, groups, sub, false));
  };
  add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::reduce, int(g.size()), c.count, c); });
  add(L.subnets, [&](const std::vector<int>& g) {
    Collective x = Collective::make_v(CollOp::reduce_scatter, counts_for(g.size()), 0, c.elem_size);
    x.order_free = c.order_free;
    return x;
  });
  std::vector<std::vector<int>> across(K);
  for (size_t k = 0; k < K; ++k)
    for (auto& g : L.subnets) across[k].push_back(g[k]);
  // Groups across that cost alike are priced once.
  const std::vector<size_t> like = alike_groups(ctx.model, across);
  std::vector<std::vector<int>> distinct_across;
  for (size_t k = 0; k < K; ++k)
    if (like[k] == k) distinct_across.push_back(across[k]);
  LevelCost top = level_cost(ctx, L, distinct_across, [&](const std::vector<int>& g) {
    return sub_call(CollOp::allreduce, int(g.size()), slices.largest() / c.elem_size, c);
  }, false);
  // The K allreduces share the uplinks: each carries about two slices out and
  // in for each of them (a reduce-scatter and an allgather of the slice).
  if (const TopologyPtr topo = ctx.model.topology(); topo && L.subnets.size() > 1)
    for (auto& g : L.subnets) {
      const NetNode& sw = topo->nodes[size_t(topo->group_node(topo->group_of(g[0])))];
      const int up = sw.up;
      if (up < 0) continue;
      const double bw = topo->links[size_t(up)].bandwidth;
      const bool shared = sw.down == up;  // both ways through one link
      const double bytes = 2.0 * double(vector_bytes(c)) * double(L.subnets.size() - 1) / double(L.subnets.size());
      if (bw > 0) top.time = std::max(top.time, (shared ? 2 : 1) * bytes / bw);
    }
  levels.push_back(top);
  add(L.subnets, [&](const std::vector<int>& g) {
    return Collective::make_v(CollOp::allgatherv, counts_for(g.size()), 0, c.elem_size);
  });
  add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::bcast, int(g.size()), c.count, c); });
  Terms t;
  for (const LevelCost& lc : levels) t.fixed += lc.time, t.messages += lc.messages;
  t.messages = std::max<uint64_t>(1, t.messages);
  // Within 4 % at 1 MiB, 40 % low at 64 KiB on 64-96 ranks
  // (tests/plan/test_composite_prices.cpp), 17 % low at 1024 (scripts/regret.py
  // seed 3): a price of its phases up to kNetworkBudgetRanks, rough past them.
  t.rough = c.nranks > kNetworkBudgetRanks;
  return t;
}

std::optional<Terms> estimate(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const CollOp op = c.op;
  if (op == CollOp::scan || op == CollOp::exscan) return scan_estimate(ctx);
  if (op == CollOp::allreduce && param_int(ctx, "slices", 0)) return slices_estimate(ctx);
  if (op == CollOp::gather || op == CollOp::scatter || op == CollOp::reduce_scatter ||
      op == CollOp::reduce_scatter_block)
    return blocks_estimate(ctx);
  if (op == CollOp::barrier) return barrier_estimate(ctx);
  if (op == CollOp::alltoall && !param_int(ctx, "direct", 0)) return alltoall_estimate(ctx);
  if (op == CollOp::allreduce && param_int(ctx, "shares", 0) && !param_int(ctx, "slices", 0)) {
    const Levels L = levels_of(ctx.model, c.nranks, 0, true);
    if (L.subnets.size() < 2) return std::nullopt;
    const uint64_t pieces = std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(param_int(ctx, "pieces", 1)), c.count));
    return shares_estimate(ctx, L, pieces, [&](const std::vector<std::vector<int>>& groups, CollOp o, uint64_t count) {
      return level_cost(ctx, L, groups, [&](const std::vector<int>& g) { return sub_call(o, int(g.size()), count, c); },
                        false);
    });
  }
  const bool vec = op == CollOp::bcast || op == CollOp::reduce || op == CollOp::allreduce;
  if ((!vec && op != CollOp::allgather) || param_int(ctx, "slices", 0) || param_int(ctx, "direct", 0) ||
      param_int(ctx, "shares", 0))
    return std::nullopt;
  const Levels L = levels_of(ctx.model, c.nranks, has_root(op) ? c.root : 0, true);
  const std::vector<std::vector<int>> top{L.top};
  std::vector<LevelCost> levels;
  const uint64_t pieces =
      vec ? std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(param_int(ctx, "pieces", 1)), c.count)) : 1;
  auto add = [&](const std::vector<std::vector<int>>& groups, const SubFor& sub) {
    levels.push_back(level_cost(ctx, L, groups, sub, pieces > 1 && op != CollOp::allreduce));
  };
  if (vec) {
    const uint64_t n = (c.count + pieces - 1) / pieces;
    auto of = [&](CollOp o) { return [&, o](const std::vector<int>& g) { return sub_call(o, int(g.size()), n, c); }; };
    if (op == CollOp::bcast) {
      add(top, of(CollOp::bcast));
      add(L.subnets, of(CollOp::bcast));
      add(L.hosts, of(CollOp::bcast));
    } else if (op == CollOp::reduce) {
      add(L.hosts, of(CollOp::reduce));
      add(L.subnets, of(CollOp::reduce));
      add(top, of(CollOp::reduce));
    } else {
      const bool has_top = L.top.size() > 1, subnet = !has_top && L.subnets[0].size() > 1;
      add(L.hosts, of(CollOp::reduce));
      if (has_top) add(L.subnets, of(CollOp::reduce));
      add({has_top ? L.top : subnet ? L.subnets[0] : L.hosts[0]}, of(CollOp::allreduce));
      if (has_top) add(L.subnets, of(CollOp::bcast));
      if (has_top || subnet) add(L.hosts, of(CollOp::bcast));
    }
  } else {  // allgather
    std::map<int, uint64_t> host_ranks;
    for (auto& g : L.hosts) host_ranks[g[0]] = g.size();
    add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::gather, int(g.size()), c.count, c); });
    add(L.subnets, [&](const std::vector<int>& g) {
      std::vector<uint64_t> counts;
      for (int h : g) counts.push_back(host_ranks[h] * c.count);
      return Collective::make_v(CollOp::gatherv, counts, 0, c.elem_size);
    });
    std::vector<uint64_t> counts;
    for (auto& g : L.subnets) {
      uint64_t n = 0;
      for (int h : g) n += host_ranks[h] * c.count;
      counts.push_back(n);
    }
    add(top, [&](const std::vector<int>&) { return Collective::make_v(CollOp::allgatherv, counts, 0, c.elem_size); });
    const uint64_t whole = uint64_t(c.nranks) * c.count;
    add(L.subnets, [&](const std::vector<int>& g) { return sub_call(CollOp::bcast, int(g.size()), whole, c); });
    add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::bcast, int(g.size()), whole, c); });
  }
  double sum = 0, slowest = 0;
  uint64_t messages = 0;
  for (const LevelCost& lc : levels) {
    sum += lc.time;
    slowest = std::max(slowest, lc.time - lc.latency);
    messages += lc.messages;
  }
  Terms t;
  t.fixed = sum + double(pieces - 1) * slowest;
  t.messages = std::max<uint64_t>(1, messages * pieces);
  return t;
}

// Only where the machine has levels to follow.
bool distinct(const Collective& c, const MachineModel& m) {
  const Levels L = levels_of(m, c.nranks, has_root(c.op) ? c.root : 0);
  if (L.trivial()) return false;
  return (c.op != CollOp::scan && c.op != CollOp::exscan) || consecutive(L);
}

// Vectors of 64 KiB and more also in 2 … 16 pieces; allreduce also by
// slices and, across several subnets, by shares (1, 4, 8, 16 pieces).
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  if ((c.op != CollOp::bcast && c.op != CollOp::reduce && c.op != CollOp::allreduce) ||
      c.count * c.elem_size < (uint64_t(64) << 10))
    return {};
  std::vector<std::string> v{"hierarchical"};
  for (int k : {2, 4, 8, 16})
    if (uint64_t(k) <= c.count) v.push_back(cat("hierarchical[pieces=", k, "]"));
  if (c.op == CollOp::allreduce) {
    v.push_back("hierarchical[slices=1]");
    if (levels_of(m, c.nranks, 0).top.size() > 1)
      for (int k : {1, 4, 8, 16})
        if (uint64_t(k) <= c.count) v.push_back(k > 1 ? cat("hierarchical[pieces=", k, ",shares=1]") : "hierarchical[shares=1]");
  }
  return v;
}

// Which settings the planner tries.
std::vector<std::string> all_variants(const Collective& c, const MachineModel& m) {
  if (c.op == CollOp::barrier || c.op == CollOp::allgather) return {"hierarchical", "hierarchical[direct=1]"};
  return variants(c, m);
}

}  // namespace

Algorithm hierarchical_algorithm() {
  Algorithm a{{CollOp::bcast, CollOp::reduce, CollOp::allreduce, CollOp::allgather, CollOp::allgatherv,
               CollOp::reduce_scatter_block, CollOp::reduce_scatter, CollOp::alltoall, CollOp::gather, CollOp::scatter,
               CollOp::barrier, CollOp::scan, CollOp::exscan},
              generate};
  a.composite = true;
  a.estimate = estimate;
  a.copy_in_place = {CollOp::alltoall};
  a.params = {{"pieces", ParamKind::integer, 1, 64, false,
                "bcast, reduce, allreduce: the vector in this many pieces, each through all phases (pipelined)"},
              {"slices", ParamKind::integer, 0, 1, false,
               "allreduce: 1 = reduce-scatter inside subnets, allreduce of each slice across them, allgather back"},
              {"shares", ParamKind::integer, 0, 1, false,
               "allreduce: 1 = each subnet owns a share of the vector sized to its uplink (reduce-scatter and "
               "allgather among subnets)"},
              {"direct", ParamKind::integer, 0, 1, false,
               "barrier, allgather: 1 = every rank crosses to its counterpart in the other subnets (no fan-out)"}};
  a.distinct = distinct;
  a.variants = all_variants;
  return a;
}

}  // namespace hetcoll

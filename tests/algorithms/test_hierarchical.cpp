// hierarchical on machines with structure (cluster: models): valid for
// every op, group size, root, size and layout (ranks interleaved across
// hosts, several ranks a host, one subnet, one host a subnet), and faster
// than every flat algorithm where subnets are joined by slow shared uplinks.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "../support/collectives.hpp"
#include "plan/build_schedule.hpp"
#include "plan/phase_choice.hpp"
#include "util/error.hpp"
#include "algorithms/patterns/levels.hpp"
#include "algorithms/registry.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "model/machine_model.hpp"
#include "plan/planner.hpp"
#include "schedule/passes.hpp"
#include "schedule/validator.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;
using hetcoll::testing::has_variants;
using hetcoll::testing::make_test_collective;

TEST(Hierarchical, ValidOnEveryLayout) {
  const char* machines[] = {
      "cluster:subnets=3+2+2",
      "cluster:subnets=3+2+2,ranks=2,layout=round",
      "cluster:subnets=1+1+1,ranks=3",
      "cluster:subnets=4,ranks=3,layout=round",
      "cluster:subnets=2+3,ranks=2",
      "cluster:subnets=1+4+2,ranks=2,layout=round",
  };
  size_t checked = 0, declined = 0;
  for (const char* spec : machines) {
    ModelPtr m = parse_model(spec);
    for (CollOp op : find_algorithm("hierarchical").ops) {
      for (int p = 1; p <= m->ranks(); ++p) {
        // The group: ranks p-1 … 0 of the machine (a permuted sub-communicator).
        std::vector<int> map;
        for (int r = p - 1; r >= 0; --r) map.push_back(r);
        ModelPtr g = map_model(m, map);
        for (int root = 0; root < (has_root(op) ? p : 1); ++root) {
          for (uint64_t count : {0u, 1u, 7u, 4096u, 100000u})
          for (int variant = 0; variant < (has_variants(op) ? 3 : 1); ++variant) {
            // Large vectors at the first and last root only: the phases' structure
            // does not depend on the size beyond this (CI time).
            if (count > 7 && root != 0 && root != p - 1) continue;
            Collective c = make_test_collective(op, p, root, op == CollOp::barrier ? 0 : count, variant);
            if (op == CollOp::allreduce) c = Collective::make(op, p, count, root, 8);
            // Only scans decline a layout: hosts or subnets whose ranks are not consecutive.
            if ((op == CollOp::scan || op == CollOp::exscan) && count > 0 && !levels_of(*g, p, 0).trivial() &&
                !find_algorithm("hierarchical").distinct(c, *g)) {
              EXPECT_THROW(build_schedule("hierarchical", c, *g), InputError) << spec << " " << c.describe();
              ++declined;
              continue;
            }
            for (const char* algo : {"hierarchical", "hierarchical[pieces=3]", "hierarchical[slices=1]",
                                     "hierarchical[shares=1]", "hierarchical[pieces=3,shares=1]",
                                     "hierarchical[direct=1]"}) {
              Schedule s = build_schedule(algo, c, *g);
              ValidationReport rep = validate(s);
              ASSERT_TRUE(rep.ok) << spec << " " << algo << " " << c.describe() << ": " << rep.summary();
              if (op == CollOp::allreduce) {
                ASSERT_TRUE(rep.rank_consistent) << spec << " " << c.describe();
              }
              ValidationReport frep = validate(optimize_for_execution(s));
              ASSERT_TRUE(frep.ok) << "optimized " << spec << " " << algo << " " << c.describe() << ": "
                                   << frep.summary();
              // A rank's own program is what it runs: the same ops as in the whole.
              if (p > 1 && count == 7) {
                const int r = p / 2;
                Schedule own = build_schedule(algo, c, *g, r);
                ASSERT_EQ(own.num_ops(r), s.num_ops(r)) << spec << " " << algo << " " << c.describe();
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(declined, 10u);
}

TEST(Hierarchical, LevelsFollowTheTopology) {
  ModelPtr m = parse_model("cluster:subnets=2+1,ranks=2,layout=round");  // hosts a0 a1 b0; rank r on host r % 3
  Levels L = levels_of(*m, 6, 4);
  // Root 4 is on host 1 (a1), subnet A; its host has ranks 1 and 4.
  ASSERT_EQ(L.hosts[0], (std::vector<int>{4, 1}));
  EXPECT_EQ(L.subnets[0], (std::vector<int>{4, 0}));  // A's host leaders, the root first
  EXPECT_EQ(L.top, (std::vector<int>{4, 2}));
  EXPECT_FALSE(L.trivial());
  EXPECT_TRUE(levels_of(*parse_model("hockney:alpha=1us,beta=1ns"), 8, 0).trivial());
}

TEST(Hierarchical, LeadersFollowTheProbesRing) {
  // The probe's ring on SimGrid's three subnets enters subnet b at b3 and
  // subnet c at c3: hosts 0…7, 11, 8, 9, 10, 15, 12, 13, 14.
  ModelPtr m = parse_model(std::string("profile:") + HETCOLL_SOURCE_DIR +
                           "/bench/results/smpi_harness/profiles/three_subnets.json");
  ASSERT_TRUE(m->topology() && !m->topology()->ring_position.empty());
  Levels L = levels_of(*m, 16, 0);
  EXPECT_EQ(L.top, (std::vector<int>{0, 11, 15}));
  EXPECT_EQ(L.subnets[1], (std::vector<int>{11, 8, 9, 10}));
  // From another root, along the ring from its host (and back round).
  L = levels_of(*m, 16, 9);
  EXPECT_EQ(L.top, (std::vector<int>{9, 15, 0}));
  EXPECT_EQ(L.subnets[0], (std::vector<int>{9, 10, 11, 8}));
  // Every collective stays valid with leaders in ring order.
  for (CollOp op : find_algorithm("hierarchical").ops)
    for (int root : {0, 9}) {
      Collective c = make_test_collective(op, 16, has_root(op) ? root : 0, op == CollOp::barrier ? 0 : 24, 2);
      ValidationReport rep = validate(build_schedule("hierarchical", c, *m));
      EXPECT_TRUE(rep.ok) << c.describe() << ": " << rep.summary();
    }
  // A ring that names a host twice is refused.
  Topology t = *m->topology();
  t.ring_position[3] = t.ring_position[4];
  EXPECT_THROW(t.check(), InputError);
}

TEST(Hierarchical, WinsAcrossSlowSharedUplinks) {
  // Three subnets of 8, 4 and 4 hosts, 1 Gbit/s inside, 100 Mbit/s shared
  // uplinks, 3 ms across (the SimGrid platform three_subnets, hand-set).
  // Where the bytes crossing the uplinks decide (large allreduce) or the
  // crossings themselves (barrier), the hierarchy wins (a small allgather
  // is won by direct_allgather: one crossing, every rank at once); where a
  // flat algorithm already crosses each uplink once (a chain or a λ-tree in
  // rank order, subnet by subnet), it ties or loses by the phases' seams
  // and the planner keeps the flat one. Either way the planner's choice is
  // never slower than the best flat algorithm.
  ModelPtr m = parse_model("cluster:subnets=8+4+4");
  struct Case {
    CollOp op;
    uint64_t bytes;
    bool wins;
  };
  const Case cases[] = {
      {CollOp::allreduce, 1048576, true}, {CollOp::allgather, 8, false},  {CollOp::barrier, 0, true},
      {CollOp::allgather, 65536, false},  {CollOp::bcast, 8, false},      {CollOp::bcast, 1048576, false},
      {CollOp::reduce, 1048576, false},   {CollOp::allreduce, 8, false},
  };
  for (const Case& k : cases) {
    const CollOp op = k.op;
    const uint64_t count = op == CollOp::barrier ? 0 : op == CollOp::allgather ? k.bytes / 8 : k.bytes / 8;
    Collective c = Collective::make(op, 16, std::max<uint64_t>(count, op == CollOp::barrier ? 0 : 1), 0, 8);
    const double hier = simulate(build_schedule("hierarchical", c, *m), *m).makespan;
    double best_flat_t = INFINITY;
    std::string best;
    for (const Algorithm* a : algorithms_for(op)) {
      if (a->composite || (op == CollOp::allreduce && !a->rank_consistent)) continue;
      const double t = simulate(build_schedule(a->name, c, *m), *m).makespan;
      if (t < best_flat_t) best_flat_t = t, best = a->name;
    }
    std::printf("%-10s %8llu B: hierarchical %9.3f ms, best flat %-28s %9.3f ms (%.2fx)\n", coll_op_name(op),
                (unsigned long long)k.bytes, hier * 1e3, best.c_str(), best_flat_t * 1e3, best_flat_t / hier);
    PlanResult r = plan(c, *m);
    EXPECT_LE(r.best().predicted, best_flat_t * (1 + 1e-9)) << coll_op_name(op) << " " << k.bytes;
    if (k.wins) {
      EXPECT_LT(hier, 0.95 * best_flat_t) << coll_op_name(op) << " " << k.bytes << " B: best flat " << best;
      EXPECT_EQ(r.best().algorithm.rfind("hierarchical", 0), 0u) << coll_op_name(op) << " " << k.bytes << ": " << r.best().algorithm;
    }
  }
}

TEST(Hierarchical, HybridMeshesFollowTheSubnets) {
  // levels=1: the same mesh on the ranks numbered subnet by subnet — valid
  // for every mesh, root and size, offered only where there are subnets.
  ModelPtr m = parse_model("cluster:subnets=3+3,ranks=2,layout=round");  // 12 ranks, interleaved
  for (CollOp op : {CollOp::bcast, CollOp::allreduce}) {
    const Algorithm& a = find_algorithm(std::string("hybrid_") + coll_op_name(op));
    Collective probe = Collective::make(op, 12, 1000, 0, 8);
    size_t levels = 0;
    for (const std::string& spec : a.variants(probe, *m)) {
      if (spec.find("levels=1") == std::string::npos) continue;
      ++levels;
      for (int root : {0, 5, 11})
        for (uint64_t count : {1u, 7u, 1000u}) {
          Collective c = Collective::make(op, 12, count, op == CollOp::bcast ? root : 0, 8);
          Schedule s = build_schedule(spec, c, *m);
          ValidationReport rep = validate(s);
          ASSERT_TRUE(rep.ok) << spec << " " << c.describe() << ": " << rep.summary();
          EXPECT_EQ(s.algorithm, choose_algorithm(spec, op).spec());
          Schedule own = build_schedule(spec, c, *m, 7);
          ASSERT_EQ(own.num_ops(7), s.num_ops(7)) << spec;
        }
    }
    EXPECT_GT(levels, 3u);
    EXPECT_EQ(a.variants(probe, *parse_model("hockney:alpha=1us,beta=1ns")).size() * 2, a.variants(probe, *m).size());
  }
}

TEST(Hierarchical, EstimateFromPhasesIsCloseToTheSimulation) {
  // Beyond the decision's budget the planner prices hierarchical by its
  // phases' simulations (each level's slowest group, levels in turn, pieces
  // pipelined). Held to the simulation of the whole schedule where both
  // can be had.
  const Algorithm& a = find_algorithm("hierarchical");
  std::vector<double> errors;
  for (const char* spec : {"cluster:subnets=8+4+4", "cluster:subnets=16+16+16+16", "cluster:subnets=6+6+6,ranks=2"}) {
    ModelPtr m = parse_model(spec);
    const int p = m->ranks();
    for (CollOp op : {CollOp::bcast, CollOp::reduce, CollOp::allreduce, CollOp::allgather})
      for (uint64_t bytes : {8u, 65536u, 1048576u}) {
        const uint64_t count = op == CollOp::allgather ? std::max<uint64_t>(1, bytes / 8 / uint64_t(p)) : bytes / 8;
        Collective c = Collective::make(op, p, count, 0, 8);
        for (const char* v : {"hierarchical", "hierarchical[pieces=4]"}) {
          if (op == CollOp::allgather && std::string(v) != "hierarchical") continue;
          AlgorithmChoice ch = choose_algorithm(v, op);
          GenContext ctx{c, *m, ch.params, -1, 0, &planned_phases()};
          std::optional<Terms> t = a.estimate(ctx, HockneyParams{0, 0, 0});
          ASSERT_TRUE(t) << spec << " " << v << " " << c.describe();
          const double est = t->fixed;
          const double sim = simulate(build_schedule(v, c, *m), *m).makespan;
          errors.push_back(std::fabs(est - sim) / sim);
          std::printf("%-32s %-24s %-10s %8llu B  estimate %9.3f ms  simulated %9.3f ms  (%+.0f%%)\n", spec, v,
                      coll_op_name(op), (unsigned long long)bytes, est * 1e3, sim * 1e3, (est / sim - 1) * 100);
          EXPECT_LT(std::fabs(est - sim), 0.2 * sim) << spec << " " << v << " " << c.describe();
        }
      }
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.05);  // median
}

namespace {
// Bytes a schedule sends out of and into each subnet, and whether some pair
// of ranks in different subnets sends both ways.
struct Crossing {
  std::vector<uint64_t> out, in;
  bool both_ways = false;
};
Crossing crossing(const Schedule& s, const Topology& t) {
  Crossing x;
  x.out.assign(size_t(t.groups()), 0);
  x.in.assign(size_t(t.groups()), 0);
  std::set<std::pair<int, int>> pairs;
  for (int r = 0; r < s.nranks(); ++r)
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      if (o.kind != OpKind::send || t.group_of(r) == t.group_of(o.peer)) continue;
      x.out[size_t(t.group_of(r))] += o.len;
      x.in[size_t(t.group_of(o.peer))] += o.len;
      pairs.insert({r, o.peer});
    }
  for (auto& p : pairs) x.both_ways |= pairs.count({p.second, p.first}) > 0;
  return x;
}
}  // namespace

TEST(Hierarchical, SharesCrossEachUplinkAsTheClosedFormSays) {
  // The emulated cluster as probed (testbed/netns/topologies/demo8.toml):
  // A and B behind 100 Mbit/s uplinks, C behind 50. A share x costs a
  // subnet (1 + (S-2)x) vectors each way: C owns nothing and carries one
  // vector each way (the least any allreduce can), A and B own about half
  // each and carry about 1.5. Three roles per subnet: no pair sends both
  // ways.
  Profile probed = load_profile(std::string(HETCOLL_SOURCE_DIR) + "/bench/results/netns/profile.json", false);
  ModelPtr m = group_model(std::make_shared<ProfileModel>(probed, "profile:test"), {}, 11);
  const Topology& t = *m->topology();
  ASSERT_EQ(t.groups(), 3);
  const uint64_t M = 1 << 20;
  for (int pieces : {1, 4, 16}) {
    const Collective c = Collective::make(CollOp::allreduce, 11, M / 8, 0, 8);
    const std::string spec = pieces > 1 ? cat("hierarchical[pieces=", pieces, ",shares=1]") : "hierarchical[shares=1]";
    const Schedule s = build_schedule(spec, c, *m);
    ASSERT_TRUE(validate(s).ok) << spec;
    const Crossing x = crossing(s, t);
    int slow = 0;
    for (int k = 1; k < 3; ++k)
      if (x.out[size_t(k)] < x.out[size_t(slow)]) slow = k;
    // The slowest: one vector each way. The owners: 1 + x each way for
    // their shares x (half each where their uplinks are alike), 3 together.
    double owners = 0;
    for (int k = 0; k < 3; ++k) {
      const double out = double(x.out[size_t(k)]) / double(M), in = double(x.in[size_t(k)]) / double(M);
      EXPECT_NEAR(in, out, 1e-4) << spec << " subnet " << k;
      if (k == slow) {
        EXPECT_NEAR(out, 1.0, 1e-4) << spec;
      } else {
        EXPECT_GT(out, 1.2) << spec << " subnet " << k;
        EXPECT_LT(out, 1.8) << spec << " subnet " << k;
        owners += out;
      }
    }
    EXPECT_NEAR(owners, 3.0, 1e-4) << spec;
    EXPECT_EQ(t.group_of(8), slow) << "the 50 Mbit/s subnet (ranks 8-10) owns nothing";
    EXPECT_FALSE(x.both_ways) << spec;
  }
  // Where it is priced: below the ring, whose pairs of subnets carry 4/3 of
  // the vector, and below slices=1 (allreduces of slices across subnets).
  const Collective c = Collective::make(CollOp::allreduce, 11, M / 8, 0, 8);
  const double shares = simulate(build_schedule("hierarchical[pieces=4,shares=1]", c, *m), *m).makespan;
  EXPECT_LT(shares, 0.95 * simulate(build_schedule("hierarchical[slices=1]", c, *m), *m).makespan);
  EXPECT_LT(shares, 0.8 * simulate(build_schedule("ring_allreduce", c, *m), *m).makespan);
  // Alike uplinks: a third each, 4/3 of the vector each way (a ring's).
  ModelPtr alike = parse_model("cluster:subnets=3+3+3,up_bw=12.5MB/s,up_latency=1ms");
  const Crossing y = crossing(build_schedule("hierarchical[pieces=2,shares=1]", Collective::make(CollOp::allreduce, 9, 3000, 0, 8), *alike),
                              *alike->topology());
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(y.out[size_t(k)], 3000u * 8 * 4 / 3) << k;
    EXPECT_EQ(y.in[size_t(k)], 3000u * 8 * 4 / 3) << k;
  }
  EXPECT_FALSE(y.both_ways);
}

// Rounds (sim/rounds.hpp) against the simulator, and the decisions they
// price at scale: the four calls of issue 24 that chose a schedule 1.6-10x
// slower than one the planner itself listed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "algorithms/registry.hpp"
#include "plan/build_schedule.hpp"
#include "plan/phase_choice.hpp"
#include "plan/planner.hpp"
#include "sim/rounds.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {

std::optional<double> rounds_of(const AlgorithmChoice& ch, const Collective& c, const MachineModel& m) {
  GenContext ctx{c, m, ch.params, -1, 0, &planned_phases()};
  const std::vector<Round> r = ch.algorithm->rounds(ctx);
  if (r.empty()) return std::nullopt;
  return price_rounds(m, c.nranks, r).time;
}

double simulated(const std::string& spec, const Collective& c, const MachineModel& m) {
  SimOptions o;
  o.timeline = false;
  return simulate(build_schedule(spec, c, m, -1, kMaxScheduleOps), m, o).makespan;
}

}  // namespace

// Where a round's ranks cost alike and every step waits for the last one's
// data, the rounds are the simulation: exact on the α-β-γ model.
TEST(Rounds, ExactOnHockneyForSynchronisedSchedules) {
  ModelPtr m = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (const char* name : {"ring_allreduce", "recursive_doubling_allreduce", "rabenseifner_allreduce",
                           "rabenseifner_allreduce[doubling=1]", "recursive_halving_reduce_scatter",
                           "recursive_halving_reduce_scatter[doubling=1]", "bucket_collect", "dissemination_barrier",
                           "pairwise_exchange", "bruck_allgather"}) {
    const Algorithm& a = *choose_algorithm(name).algorithm;
    for (int p : {2, 4, 8, 16, 64}) {
      for (uint64_t count : {uint64_t(64), uint64_t(1) << 14}) {
        const CollOp op = a.ops.front();
        Collective c = op == CollOp::barrier ? Collective::make(op, p, 0)
                       : op == CollOp::reduce_scatter_block ? Collective::make(op, p, count, 0, 8)
                                                           : Collective::make(op, p, count * uint64_t(p), 0, 8);
        const AlgorithmChoice ch = choose_algorithm(name, op);
        auto r = rounds_of(ch, c, *m);
        ASSERT_TRUE(r) << name << " p=" << p;
        const double s = simulated(name, c, *m);
        EXPECT_NEAR(*r, s, 1e-9 * s) << name << " p=" << p << " count=" << count;
      }
    }
  }
}

// Across two subnets (a slow uplink between them, ranks in blocks) the
// doubling order crosses it with the least data: the reduce-scatter's and
// Rabenseifner's exchanges then cross with 1/p of the vector each, not
// half, as the rounds price it too.
TEST(Rounds, DoublingCrossesTheSlowLinkLast) {
  ModelPtr m = parse_model("cluster:subnets=4+4,up_bw=12.5MB/s");
  for (const char* name : {"recursive_halving_reduce_scatter", "rabenseifner_allreduce"}) {
    const Algorithm& a = find_algorithm(name);
    const CollOp op = a.ops.front();
    Collective c = op == CollOp::reduce_scatter_block ? Collective::make(op, 8, 1 << 14, 0, 8)
                                                      : Collective::make(op, 8, 1 << 17, 0, 8);
    const std::string doubled = std::string(name) + "[doubling=1]";
    const double halving = simulated(name, c, *m), doubling = simulated(doubled, c, *m);
    EXPECT_LT(doubling, 0.45 * halving) << name;
    auto r = rounds_of(choose_algorithm(doubled, op), c, *m);
    ASSERT_TRUE(r);
    EXPECT_NEAR(*r, doubling, 0.15 * doubling) << doubled;
  }
}

// Over every algorithm with rounds, models with and without a network,
// ranks and sizes: the error the planner's prices carry when it cannot
// simulate (docs/results.md quotes the matrix).
TEST(Rounds, CloseToTheSimulatorAcrossModels) {
  std::vector<double> errors;
  std::vector<std::vector<double>> by_model;
  std::vector<std::string> names;
  double worst = 0;
  std::string worst_what;
  // Probed profiles: the SimGrid harness's, measured by hetcoll's probe.
  const std::string probed = std::string(HETCOLL_SOURCE_DIR) + "/bench/results/smpi_harness/profiles/";
  for (const std::string spec : {std::string("postal:lambda=1.6"), std::string("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns"),
                                 std::string("loggp:L=2us,o=1us,g=1us,G=0.8ns"), std::string("cluster:subnets=8+8+8+8,ranks=2"),
                                 std::string("cluster:subnets=16+4+4,ranks=4,up_bw=1GB/s"),
                                 "profile:" + probed + "cluster64_4subnets.json", "profile:" + probed + "slow_hosts.json"}) {
    ModelPtr m = load_model(spec);
    by_model.emplace_back();
    names.push_back(spec.substr(0, spec.find(".json") == std::string::npos ? 40 : 0) +
                    (spec.find(".json") == std::string::npos ? "" : spec.substr(spec.rfind('/') + 1)));
    for (const Algorithm& a : registry()) {
      if (!a.rounds) continue;
      for (CollOp op : a.ops) {
        if (!counts_known_everywhere(op)) continue;
        for (int p : {5, 16, 48}) {
          if (m->ranks() > 0 && p > m->ranks()) continue;
          for (uint64_t bytes : {uint64_t(8), uint64_t(65536), uint64_t(1) << 20}) {
            if (op == CollOp::barrier && bytes != 8) continue;
            Collective c = op == CollOp::barrier ? Collective::make(op, p, 0) : Collective::make(op, p, bytes / 8, 0, 8);
            const AlgorithmChoice ch = choose_algorithm(a.name, op);
            auto r = rounds_of(ch, c, *m);
            if (!r) continue;
            const double s = simulated(a.name, c, *m);
            const double e = std::fabs(*r / s - 1);
            errors.push_back(e);
            by_model.back().push_back(e);
            if (e > worst) worst = e, worst_what = cat(spec, " ", a.name, " p=", p, " bytes=", bytes);
          }
        }
      }
    }
  }
  ASSERT_GT(errors.size(), 300u);
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, size_t(double(v.size()) * q))];
  };
  for (size_t i = 0; i < names.size(); ++i)
    std::printf("  %-44s %4zu prices  median %6.2f %%  90th %6.2f %%  worst %6.1f %%\n", names[i].c_str(),
                by_model[i].size(), 100 * quantile(by_model[i], 0.5), 100 * quantile(by_model[i], 0.9),
                100 * quantile(by_model[i], 1.0));
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2], p90 = errors[errors.size() * 9 / 10];
  std::printf("rounds vs simulation: %zu prices, median error %.3g, 90th percentile %.3g, worst %.3g (%s)\n",
              errors.size(), median, p90, worst, worst_what.c_str());
  EXPECT_LE(median, 0.05);
  EXPECT_LE(p90, 0.15);  // issue 24's targets (docs/results.md has the table)
}

// Issue 24's four calls: each chose a schedule 1.57-9.97x slower than a
// candidate it listed. Now the listed optimum wins, and its price is the
// simulation's.
TEST(Rounds, IssueRegressionCallsChooseTheFastest) {
  struct Call {
    CollOp op;
    int p;
    uint64_t bytes;
    const char* model;
    const char* best;
  };
  for (const Call& k : {Call{CollOp::bcast, 1552, 8, "postal:lambda=1.224", "lambda_tree"},
                        Call{CollOp::barrier, 1552, 0, "postal:lambda=1.224", "dissemination_barrier"},
                        Call{CollOp::reduce_scatter_block, 600, 1 << 20, "loggp:L=2us,o=1us,g=1us,G=0.8ns",
                             "bucket_distributed_combine"},
                        Call{CollOp::reduce_scatter_block, 1536, 1 << 20,
                             "cluster:subnets=256+256+128+128,ranks=2", "bucket_distributed_combine"}}) {
    ModelPtr m = parse_model(k.model);
    Planner planner(m);
    Collective c = k.op == CollOp::barrier ? Collective::make(k.op, k.p, 0)
                                           : Collective::make(k.op, k.p, std::max<uint64_t>(1, k.bytes / 8), 0, 8);
    const Decision d = planner.decide(c);
    EXPECT_EQ(d.algorithm, k.best) << coll_op_name(k.op) << " p=" << k.p << " on " << k.model;
    // The explained plan lists the same winner (explaining changes nothing).
    PlanOptions o;
    o.explain = true;
    EXPECT_EQ(plan(representative(c), *m, o).best().algorithm, d.algorithm);
  }
}

// Two sites of 9 and 8 ranks behind a 5 ms link: `name`[fold=1] crosses it
// once, `name` (the last ranks folding into the first) three times or
// more, and the planner does at least as well as the fold.
void expect_one_wan_crossing(CollOp op, const std::string& name) {
  ModelPtr wan = parse_model("cluster:subnets=9+8,alpha=5us,bw=1GB/s,up_latency=5ms,up_bw=100MB/s");
  const Collective c = Collective::make(op, 17, 1, 0, 8);
  const double pairs = simulated(name + "[fold=1]", c, *wan);
  const double last = simulated(name, c, *wan);
  EXPECT_GT(pairs, 5e-3) << name;  // one crossing of the 5 ms link
  EXPECT_LT(pairs, 6e-3) << name;
  EXPECT_GT(last, 2.5 * pairs) << name;
  const PlanResult best = plan(c, *wan);
  EXPECT_LT(best.best().predicted, 1.05 * pairs) << best.best().algorithm;
}

// MPICH's fold (recursive_doubling_allreduce[fold=1]): the same exchanges
// with the ranks renamed — the same time where every pair is alike, its
// rounds (Fold's) within 2 % as for Fold; and on two sites of 9 and 8 ranks behind a 5 ms link it crosses
// once where Fold's crosses three times (the last rank folds across into
// rank 0, and the core's halves straddle the sites), so the planner takes it
// there (issue 39: a generated WAN platform, 0.51x SMPI's MPICH selector).
TEST(Rounds, PairFoldRenamesTheRanksAndCrossesTheWanOnce) {
  ModelPtr h = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (int p : {3, 5, 6, 12, 17}) {
    const Collective c = Collective::make(CollOp::allreduce, p, 64, 0, 8);
    const double folded = simulated("recursive_doubling_allreduce[fold=1]", c, *h);
    EXPECT_NEAR(folded, simulated("recursive_doubling_allreduce", c, *h), 1e-9 * folded) << p;
    auto r = rounds_of(choose_algorithm("recursive_doubling_allreduce[fold=1]", CollOp::allreduce), c, *h);
    ASSERT_TRUE(r);
    EXPECT_NEAR(*r, folded, 0.02 * folded) << p;
  }
  expect_one_wan_crossing(CollOp::allreduce, "recursive_doubling_allreduce");
}

// The same fold for recursive halving's reduce_scatter: the same time where
// every pair is alike (with and without doubling), and on the two sites it
// crosses once (the first halving step) where Fold's crosses three times
// (issue 39: wan_sites_2site_17h reduce_scatter 8 B ran 0.52x SMPI's MPICH
// selector).
TEST(Rounds, PairFoldOfReduceScatterCrossesTheWanOnce) {
  ModelPtr h = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (int p : {3, 5, 6, 12, 17})
    for (const char* d : {"", "doubling=1,"}) {
      const Collective c = Collective::make(CollOp::reduce_scatter_block, p, 64, 0, 8);
      const std::string base = "recursive_halving_reduce_scatter", spec = base + "[" + d + "fold=1]";
      const double folded = simulated(spec, c, *h);
      const double last = simulated(*d ? base + "[doubling=1]" : base, c, *h);
      EXPECT_NEAR(folded, last, 1e-9 * folded) << p << " " << spec;
    }
  expect_one_wan_crossing(CollOp::reduce_scatter_block, "recursive_halving_reduce_scatter");
}

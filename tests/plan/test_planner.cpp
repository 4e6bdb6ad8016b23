// The planner: minimum of the candidates, closed forms or simulation, ties,
// the move from latency- to bandwidth-optimal algorithms, the cache and
// overrides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "../support/collectives.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "plan/planner.hpp"
#include "util/error.hpp"

using namespace hetcoll;
using hetcoll::testing::make_test_collective;

TEST(Planner, PicksTheLambdaTreeWhenLambdaExceedsOne) {
  auto m = parse_model("postal:lambda=2");
  PlanResult r = plan(Collective::make(CollOp::bcast, 8, 16), *m);
  ASSERT_GE(r.candidates.size(), 3u);
  EXPECT_DOUBLE_EQ(r.best().predicted, 5.0);
  for (size_t i = 1; i < r.candidates.size(); ++i) EXPECT_LE(r.candidates[i - 1].predicted, r.candidates[i].predicted);
}

TEST(Planner, CombineFollowsTheRecursions) {
  for (double lam : {1.2, 1.6, 2.3, 2.7}) {
    auto m = parse_model("postal:lambda=" + std::to_string(lam));
    Collective c = Collective::make(CollOp::allreduce, 200, 4, 0, 4);
    c.order_free = true;  // integer sums: the BKS combine qualifies
    PlanResult r = plan(c, *m);
    EXPECT_LE(r.best().predicted, postal::T_delay_receive(lam, 200) + 1e-9);
    EXPECT_LE(r.best().predicted, postal::T_delay_send(lam, 200) + 1e-9);
  }
}

TEST(Planner, ClosedFormsAndSimulationAgreeInTheTable) {
  auto m = parse_model("hockney:alpha=5us,beta=0.2ns,gamma=0.1ns");
  PlanOptions explain;
  explain.explain = true;
  PlanResult r = plan(Collective::make(CollOp::allreduce, 16, 4096, 0, 8), *m, explain);
  size_t closed = 0;
  for (auto& c : r.candidates) {
    closed += c.closed_form;
    EXPECT_TRUE(c.has_terms) << c.algorithm;
    EXPECT_NEAR(c.split.latency + c.split.bandwidth + c.split.compute, c.predicted, 1e-12) << c.algorithm;
    EXPECT_GT(c.messages, 0u) << c.algorithm;
  }
  EXPECT_GT(closed, 3u);
}

// On a Hockney model the choice moves from the fewest start-ups to the
// fewest bytes on the critical path as the size grows, for every operation.
TEST(Planner, LatencyOptimalSmallBandwidthOptimalLarge) {
  auto m = parse_model("hockney:alpha=10us,beta=0.1ns,gamma=0.05ns");
  PlanOptions explain;
  explain.explain = true;
  for (CollOp op : all_coll_ops()) {
    if (op == CollOp::barrier) continue;
    for (int p : {16, 24}) {
      PlanResult small = plan(make_test_collective(op, p, 1, 8), *m, explain);
      PlanResult large = plan(make_test_collective(op, p, 1, uint64_t(64) << 20), *m, explain);
      double min_alpha = INFINITY, min_bytes = INFINITY;
      // Over the candidates whose critical path is known (simulated or closed forms; those priced
      // by their rounds without simulating lost by half or more).
      for (auto& c : small.candidates)
        if (!c.holds && !c.estimated) min_alpha = std::min(min_alpha, c.split.latency);
      for (auto& c : large.candidates)
        if (!c.holds && !c.estimated) min_bytes = std::min(min_bytes, c.split.bandwidth + c.split.compute);
      EXPECT_NEAR(small.best().split.latency, min_alpha, 1e-12) << coll_op_name(op) << " p=" << p << " small: "
                                                                << small.best().algorithm;
      EXPECT_NEAR(large.best().split.bandwidth + large.best().split.compute, min_bytes, 1e-9 * min_bytes)
          << coll_op_name(op) << " p=" << p << " large: " << large.best().algorithm;
    }
  }
}

TEST(Planner, FloatingPointAllreduceOnlyConsidersRankConsistentAlgorithms) {
  auto m = parse_model("postal:lambda=2.2");
  Collective c = Collective::make(CollOp::allreduce, 48, 4, 0, 8);
  for (auto& cand : plan(c, *m).candidates) EXPECT_EQ(cand.algorithm.rfind("bks_", 0), std::string::npos) << cand.algorithm;
  c.order_free = true;
  bool bks = false;
  for (auto& cand : plan(c, *m).candidates) bks |= cand.algorithm.rfind("bks_", 0) == 0;
  EXPECT_TRUE(bks);
}

// The decision cache must keep integer and floating-point allreduces of the
// same size apart: a decision for order-free data may be an algorithm that
// is not rank-consistent.
TEST(Planner, DecisionCacheSeparatesOrderFreeFromFloatingPoint) {
  Planner planner(parse_model("postal:lambda=2.2"));
  Collective ints = Collective::make(CollOp::allreduce, 48, 4, 0, 8);
  ints.order_free = true;
  Collective floats = ints;
  floats.order_free = false;
  Decision a = planner.decide(ints);
  Decision b = planner.decide(floats);
  EXPECT_EQ(planner.cached(), 2u);
  EXPECT_EQ(a.algorithm.rfind("bks_", 0), 0u) << a.algorithm;  // the postal model's choice for free order
  EXPECT_TRUE(b.choice.algorithm->rank_consistent) << b.algorithm;
}

TEST(Planner, SizeClasses) {
  EXPECT_EQ(size_class(0), 0);
  EXPECT_EQ(size_class(1), 1);
  EXPECT_EQ(size_class(2), 5);
  EXPECT_EQ(size_class(3), 7);
  EXPECT_EQ(size_class(1024), 41);
  EXPECT_EQ(size_class(1100), 41);
  EXPECT_EQ(size_class(1279), 41);
  EXPECT_EQ(size_class(1280), 42);
  EXPECT_EQ(size_class(UINT64_MAX), 1 + 4 * 63 + 3);
  // Every size lies in [floor(class), floor(class + 1)), classes rise with
  // the size, and one octave has four classes.
  uint64_t prev = 0;
  for (uint64_t b = 1; b < 100000; b += 1 + b / 50) {
    int c = size_class(b);
    EXPECT_LE(size_class_floor(c), b);
    EXPECT_EQ(size_class(size_class_floor(c)), c);
    if (b >= 4) {
      EXPECT_GT(size_class_floor(c + 1), b);
    }
    EXPECT_GE(c, size_class(prev));
    prev = b;
  }
  for (int k = 2; k < 60; ++k) EXPECT_EQ(size_class(uint64_t(1) << (k + 1)) - size_class(uint64_t(1) << k), 4);
}

// A decision is a pure function of the call: whichever call of a size class
// a planner sees first, every call of the class gets the same decision — the
// one planned on the class's representative. (Before, the first call's own
// size was planned and cached for the whole class: ranks whose histories
// differed chose differently for the same call.)
TEST(Planner, DecisionsDoNotDependOnWhichCallCameFirst) {
  const char* models[] = {"hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0", "hockney:alpha=10us,beta=1ns,gamma=0.2ns",
                          "postal:lambda=1.7", "loggp:L=4us,o=1us,g=1.5us,G=0.2ns"};
  size_t differs = 0;  // classes where the exact sizes would have chosen differently
  for (const char* spec : models) {
    auto model = parse_model(spec);
    for (CollOp op : {CollOp::bcast, CollOp::allreduce, CollOp::reduce, CollOp::allgather, CollOp::alltoall,
                      CollOp::reduce_scatter_block, CollOp::gather, CollOp::scan}) {
      const uint32_t elem = is_reduction(op) ? 8 : 1;
      for (int p : {3, 12}) {
        for (uint64_t lo = 64; lo < (uint64_t(1) << 22); lo *= 2) {
          // The smallest and the largest whole-element size of one class.
          const int cls = size_class(lo * 5 / 4);
          const uint64_t a = (size_class_floor(cls) + elem - 1) / elem, b = (size_class_floor(cls + 1) - 1) / elem;
          Collective small = Collective::make(op, p, a, 0, elem), large = Collective::make(op, p, b, 0, elem);
          small.order_free = large.order_free = elem == 8 && op != CollOp::allreduce;
          Planner first_small(model), first_large(model);
          Decision s1 = first_small.decide(small), l1 = first_small.decide(large);
          Decision l2 = first_large.decide(large), s2 = first_large.decide(small);
          ASSERT_EQ(s1.algorithm, l1.algorithm) << spec << " " << small.describe() << " vs " << large.describe();
          ASSERT_EQ(l1.algorithm, l2.algorithm) << spec << " " << large.describe();
          ASSERT_EQ(s1.algorithm, s2.algorithm) << spec << " " << small.describe();
          EXPECT_EQ(first_small.cached(), 1u);
          differs += plan(small, *model).best().algorithm != plan(large, *model).best().algorithm;
        }
      }
    }
  }
  // The test means something only if exact sizes would have disagreed somewhere.
  EXPECT_GT(differs, 0u);
}

TEST(Planner, CachesPerClassAndIsThreadSafe) {
  Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"));
  Decision a = planner.decide(Collective::make(CollOp::bcast, 64, 1100));
  EXPECT_EQ(planner.cached(), 1u);
  Decision b = planner.decide(Collective::make(CollOp::bcast, 64, 1150));  // same class
  EXPECT_EQ(planner.cached(), 1u);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_TRUE(a.fresh);
  EXPECT_FALSE(b.fresh);
  planner.decide(Collective::make(CollOp::bcast, 64, 1 << 22));
  EXPECT_EQ(planner.cached(), 2u);
  EXPECT_FALSE(a.runner_up.empty());
  EXPECT_LE(a.predicted, a.runner_up_predicted);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&planner, t] {
      for (int i = 0; i < 50; ++i)
        planner.decide(Collective::make(i % 2 ? CollOp::allreduce : CollOp::allgather, 8 + t, uint64_t(64) << (i % 8), 0, 8));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(planner.cached(), 2u + 4 * 8);  // per thread: 2 ops × 4 sizes
}

// Ranks agree on the representative whatever they know: it depends on the
// class, not the size.
TEST(Planner, RepresentativeOfAClass) {
  for (uint64_t n : {uint64_t(1000), uint64_t(1023), uint64_t(1024), uint64_t(1279), uint64_t(1280)}) {
    Collective c = Collective::make(CollOp::allreduce, 6, n, 0, 8);
    c.in_place = true;
    Collective r = representative(c);
    EXPECT_FALSE(r.in_place);
    EXPECT_EQ(size_class(r.size_bytes()), size_class(c.size_bytes())) << n;
    EXPECT_EQ(r.count * 8, (size_class_floor(size_class(n * 8)) + 7) / 8 * 8) << n;
  }
  // gatherv: the counts are not known everywhere: one representative for all.
  Collective g1 = Collective::make_v(CollOp::gatherv, {1, 2, 3}, 1, 4), g2 = Collective::make_v(CollOp::gatherv, {0, 99, 0}, 1, 4);
  EXPECT_EQ(representative(g1).counts, representative(g2).counts);
  EXPECT_EQ(representative(g1).root, 1);
}

// The fewer-messages tie-break, on candidates built to tie: a later
// registry entry with fewer messages wins; equal messages keep registry order.
TEST(Planner, TiesGoToFewerMessagesThenRegistryOrder) {
  std::vector<Candidate> c(4);
  c[0].algorithm = "a";  // registry 0, 10 messages
  c[0].predicted = 5.0;
  c[0].messages = 10;
  c[1].algorithm = "b";  // registry 1, 7 messages, tied within 1e-9
  c[1].predicted = 5.0 * (1 + 1e-12);
  c[1].messages = 7;
  c[2].algorithm = "c";  // registry 2, 7 messages: ties with b, later in the registry
  c[2].predicted = 5.0;
  c[2].messages = 0;     // unknown: counted on demand
  c[3].algorithm = "d";  // faster than nothing: slower
  c[3].predicted = 5.1;
  c[3].messages = 1;
  rank_candidates(c, {0, 1, 2, 3}, [](const Candidate& x) { return x.algorithm == "c" ? uint64_t(7) : uint64_t(99); });
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].algorithm, "b");
  EXPECT_EQ(c[1].algorithm, "c");
  EXPECT_EQ(c[2].algorithm, "a");
  EXPECT_EQ(c[3].algorithm, "d");
}

// A real tie where the rule decides: on λ = 2, an alltoall of 4 ranks takes
// as long by spread_alltoall (12 messages, earlier in the registry) as by
// Bruck's (8 messages); the fewer messages win. And on λ = 1 the
// reduce-scatter of 5 ranks: bucket (20 messages, earlier) vs recursive
// halving (10).
TEST(Planner, RealTiesPreferFewerMessages) {
  struct Case {
    const char* model;
    CollOp op;
    int p;
    uint64_t count;
    uint32_t elem;
    const char* winner;
    const char* earlier_loser;
  };
  for (const Case& k : {Case{"postal:lambda=2", CollOp::alltoall, 4, 1024, 1, "bruck_alltoall[k=2]", "spread_alltoall"},
                        Case{"postal:lambda=1", CollOp::reduce_scatter_block, 5, 128, 8, "recursive_halving_reduce_scatter",
                             "bucket_distributed_combine"}}) {
    auto m = parse_model(k.model);
    PlanOptions explain;
    explain.explain = true;
    PlanResult r = plan(Collective::make(k.op, k.p, k.count, 0, k.elem), *m, explain);
    EXPECT_EQ(r.best().algorithm, k.winner);
    // The test means something: the loser ties, has more messages and comes first in the registry.
    auto loser = std::find_if(r.candidates.begin(), r.candidates.end(),
                              [&](const Candidate& c) { return c.algorithm == k.earlier_loser; });
    ASSERT_NE(loser, r.candidates.end());
    EXPECT_NEAR(loser->predicted, r.best().predicted, 1e-9);
    EXPECT_GT(loser->messages, r.best().messages);
    auto pos = [](const std::string& spec) {
      const std::string name = parse_algorithm_spec(spec).name;
      return &find_algorithm(name) - registry().data();
    };
    EXPECT_LT(pos(loser->algorithm), pos(r.best().algorithm));
  }
}

TEST(Overrides, GrammarAndMatching) {
  Overrides o = Overrides::parse("bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect#allreduce:@ring_allreduce");
  ASSERT_EQ(o.rules().size(), 3u);
  EXPECT_EQ(*o.match(CollOp::bcast, 1000), 0u);
  EXPECT_EQ(*o.match(CollOp::bcast, 65536), 1u);
  EXPECT_EQ(o.rules()[1].algorithm.spec(), "scatter_collect");
  EXPECT_EQ(*o.match(CollOp::allreduce, 12), 2u);
  EXPECT_FALSE(o.match(CollOp::gather, 3));
  EXPECT_FALSE(o.match(CollOp::bcast, std::nullopt));  // no rule for all sizes
  Overrides h = Overrides::parse("bcast:@hybrid_bcast[mesh=2x3x5:SSMCC]");
  EXPECT_EQ(h.rules()[0].algorithm.spec(), "hybrid_bcast[mesh=2x3x5:SSMCC]");
  Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"), o);
  Decision d = planner.decide(Collective::make(CollOp::bcast, 8, 1000));
  EXPECT_TRUE(d.forced);
  EXPECT_EQ(d.algorithm, "lambda_tree");
}

// Rules match the call's own size, before the cache: two calls of one size
// class on both sides of a rule's boundary get their own rules in either
// order (they used to get whichever came first).
TEST(Overrides, BoundaryInsideASizeClass) {
  ASSERT_EQ(size_class(990), size_class(1010));
  const std::string rules = "bcast:0-1000:@star_bcast#1000-inf:@binomial_tree";
  for (bool small_first : {true, false}) {
    Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"), Overrides::parse(rules));
    Collective small = Collective::make(CollOp::bcast, 5, 990), large = Collective::make(CollOp::bcast, 5, 1010);
    Decision a = planner.decide(small_first ? small : large), b = planner.decide(small_first ? large : small);
    const Decision& ds = small_first ? a : b;
    const Decision& dl = small_first ? b : a;
    EXPECT_EQ(ds.algorithm, "star_bcast");
    EXPECT_EQ(dl.algorithm, "binomial_tree");
  }
}

// An override that cannot run this call is not followed: the planner
// chooses, and says why — the same on every rank, since it depends only on
// the call.
TEST(Overrides, ThatDoNotFitAreExplained) {
  Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"),
                  Overrides::parse("bcast:@hybrid_bcast[mesh=2x3:SMC]#allreduce:@bks_combine#reduce:@chain_reduce[seg=1]"));
  Decision fits = planner.decide(Collective::make(CollOp::bcast, 6, 600));
  EXPECT_TRUE(fits.forced);
  EXPECT_EQ(fits.algorithm, "hybrid_bcast[mesh=2x3:SMC]");
  Decision misfit = planner.decide(Collective::make(CollOp::bcast, 7, 600));
  EXPECT_FALSE(misfit.forced);
  EXPECT_NE(misfit.note.find("has 6 ranks, the group 7"), std::string::npos) << misfit.note;
  // The BKS combine gives ranks different bits on floating point.
  Decision fp = planner.decide(Collective::make(CollOp::allreduce, 6, 600, 0, 8));
  EXPECT_FALSE(fp.forced);
  EXPECT_NE(fp.note.find("identical results"), std::string::npos) << fp.note;
  Collective ints = Collective::make(CollOp::allreduce, 6, 600, 0, 8);
  ints.order_free = true;
  EXPECT_TRUE(planner.decide(ints).forced);
  // One-byte segments of 64 MiB: more work than any override may ask for.
  Decision huge = planner.decide(Collective::make(CollOp::reduce, 4, uint64_t(64) << 20));
  EXPECT_FALSE(huge.forced);
  EXPECT_NE(huge.note.find("operations"), std::string::npos) << huge.note;
}

// gatherv, scatterv and alltoallv: no rank knows every count, so the
// decision cannot depend on them, and only the local-count algorithms run.
TEST(Planner, LocalCountCollectives) {
  auto m = parse_model("hockney:alpha=2us,beta=0.1ns");
  Planner planner(m);
  for (CollOp op : {CollOp::gatherv, CollOp::scatterv, CollOp::alltoallv}) {
    std::string first;
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(100000)}) {
      Collective c = op == CollOp::alltoallv ? Collective::make_alltoallv(5, std::vector<uint64_t>(25, n))
                                             : Collective::make_v(op, {n, 2 * n, 0, n, 7}, 2);
      Decision d = planner.decide(c);
      EXPECT_TRUE(d.choice.algorithm->local_counts) << d.algorithm;
      if (first.empty()) first = d.algorithm;
      EXPECT_EQ(d.algorithm, first) << coll_op_name(op);
    }
    for (auto& cand : plan(Collective::make(op == CollOp::alltoallv ? CollOp::alltoallv : op, 4, 10), *m).candidates)
      EXPECT_TRUE(find_algorithm(parse_algorithm_spec(cand.algorithm).name).local_counts) << cand.algorithm;
  }
}

TEST(Overrides, ClearErrors) {
  auto expect_error = [](const std::string& text, const std::string& what) {
    try {
      Overrides::parse(text);
      FAIL() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("bcast:0-64k:@nonsense", "valid: binomial_tree");
  expect_error("bcast:0-64k:@ring_allreduce", "does not implement bcast");
  expect_error("bcast:0-64x:@lambda_tree", "is not a size");
  expect_error("bcast:64k-0:@lambda_tree", "empty range");
  expect_error("0-64k:@lambda_tree", "which collective");
  expect_error("bcast:0-64k:lambda_tree", "no '@ALGORITHM'");
  expect_error("broadcastx:@lambda_tree", "unknown collective");
  expect_error("bcast:@lambda_tree##", "empty rule");
  expect_error("bcast:@knomial_bcast[r=2]", "no parameter 'r'");
  // Parameter values are checked when the rules are parsed.
  expect_error("bcast:@chain_bcast[seg=0]", "seg='0' must be a size");
  expect_error("bcast:@chain_bcast[seg=-5]", "seg='-5'");
  expect_error("bcast:@knomial_bcast[k=1]", "k='1' must be an integer from 2");
  expect_error("bcast:@knomial_bcast[k=2.5]", "k='2.5'");
  expect_error("bcast:@knomial_bcast[k=99999999999999999999]", "must be an integer");
  expect_error("bcast:@lambda_tree[lambda=1e9]", "lambda='1e9'");
  expect_error("bcast:@lambda_tree[lambda=nan]", "lambda='nan'");
  expect_error("bcast:@alpha_partition[alpha=1]", "strictly between 0 and 1");
  expect_error("bcast:@hybrid_bcast[mesh=2x3]", "mesh='2x3'");
  expect_error("allreduce:@bks_combine[L=0]", "L='0'");
  // gatherv, scatterv, alltoallv: no ranges, local-count algorithms only.
  expect_error("gatherv:0-1k:@star_gather", "takes no size range");
  expect_error("gatherv:@binomial_gather", "needs every rank's counts");
  expect_error("alltoallv:@bruck_alltoall", "does not implement alltoallv");
}

// Tune's winner rule (measured_winner): the smallest median, native kept
// unless the winner's median and minimum are both kNativeMargin below it.
TEST(MeasuredWinner, ACandidateReplacesNativeOnlyWhenItsMedianAndMinimumAreClearlyBelow) {
  auto t = [](const char* name, double median, double min) { return TunedTime{name, Measure{min, median}, 0}; };
  const double m = 1 - kNativeMargin;
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9)}), 0u);
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 1.2, 0.5)}), 0u);            // slower median
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 0.8, 0.89)}), 0u);           // same best case
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 0.8, 0.8)}), 1u);            // both clearly below
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 1.0 * m, 0.9 * m * 0.99)}), 0u);  // median at the margin
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 0.7, 0.6), t("b", 0.6, 0.55)}), 2u);
  // The smallest median wins even when it fails the margin and another passes it: native then.
  EXPECT_EQ(measured_winner({t("native", 1.0, 0.9), t("a", 0.8, 0.7), t("b", 0.79, 0.88)}), 0u);
}

TEST(Planner, APriceThatHoldsDoesNotKeepAChoiceFarWorseThanAnEstimate) {
  // Reduce over 1552 ranks on the postal model: star_reduce is priced by its
  // rounds (1551 steps, a price that holds), the trees only estimated
  // (13.5): a known price is no reason to keep a choice 100x worse.
  auto m = parse_model("postal:lambda=1.224");
  const PlanResult r = plan(Collective::make(CollOp::reduce, 1552, 1 << 20), *m);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_NE(r.best().algorithm, "star_reduce");
  double star = 0;
  for (const Candidate& c : r.candidates)
    if (c.algorithm == "star_reduce") star = c.predicted;
  EXPECT_GT(star, 0);
  EXPECT_LT(r.best().predicted * kRoughMargin, star);
  // Within the margin the priced candidate still ranks first: a model
  // whose rounds hold and whose estimates are rough at 4 ranks.
  const PlanResult small = plan(Collective::make(CollOp::reduce, 4, 1 << 20), *m);
  EXPECT_FALSE(small.best().estimated);
}

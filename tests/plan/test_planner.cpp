// The planner: minimum of the candidates, closed forms or simulation, ties,
// the move from latency- to bandwidth-optimal algorithms, the cache and
// overrides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "../support/collectives.hpp"
#include "algorithms/postal_math.hpp"
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

TEST(Planner, TiesPreferFewerMessagesThenRegistryOrder) {
  // λ = 1: the binomial tree, the λ-tree and α-partition tie with p-1
  // messages; the k-nomial and star trees are slower.
  auto m = parse_model("postal:lambda=1");
  PlanResult r = plan(Collective::make(CollOp::bcast, 16, 16), *m);
  EXPECT_EQ(r.best().algorithm, "binomial_tree");
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
      for (auto& c : small.candidates) min_alpha = std::min(min_alpha, c.split.latency);
      for (auto& c : large.candidates) min_bytes = std::min(min_bytes, c.split.bandwidth + c.split.compute);
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
  EXPECT_TRUE(find_algorithm(parse_algorithm_spec(b.algorithm).name).rank_consistent) << b.algorithm;
}

TEST(Planner, SizeBins) {
  EXPECT_EQ(size_bin(0), 0);
  EXPECT_EQ(size_bin(1), 1);
  EXPECT_EQ(size_bin(2), 5);
  EXPECT_EQ(size_bin(1024), 41);
  EXPECT_EQ(size_bin(1100), 41);
  EXPECT_EQ(size_bin(1300), 42);
}

TEST(Planner, CachesPerBinAndIsThreadSafe) {
  Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"));
  Decision a = planner.decide(Collective::make(CollOp::bcast, 64, 1100));
  EXPECT_EQ(planner.cached(), 1u);
  Decision b = planner.decide(Collective::make(CollOp::bcast, 64, 1150));  // same bin
  EXPECT_EQ(planner.cached(), 1u);
  EXPECT_EQ(a.algorithm, b.algorithm);
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

TEST(Overrides, GrammarAndMatching) {
  Overrides o = Overrides::parse("bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect#allreduce:@ring_allreduce");
  ASSERT_EQ(o.rules().size(), 3u);
  EXPECT_EQ(*o.match(Collective::make(CollOp::bcast, 8, 1000)), "lambda_tree");
  EXPECT_EQ(*o.match(Collective::make(CollOp::bcast, 8, 65536)), "scatter_collect");
  EXPECT_EQ(*o.match(Collective::make(CollOp::allreduce, 8, 3, 0, 4)), "ring_allreduce");
  EXPECT_FALSE(o.match(Collective::make(CollOp::gather, 8, 3)));
  Overrides h = Overrides::parse("bcast:@hybrid_bcast[mesh=2x3x5:SSMCC]");
  EXPECT_EQ(*h.match(Collective::make(CollOp::bcast, 30, 90)), "hybrid_bcast[mesh=2x3x5:SSMCC]");
  Planner planner(parse_model("hockney:alpha=2us,beta=0.1ns"), o);
  Decision d = planner.decide(Collective::make(CollOp::bcast, 8, 1000));
  EXPECT_TRUE(d.forced);
  EXPECT_EQ(d.algorithm, "lambda_tree");
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
}

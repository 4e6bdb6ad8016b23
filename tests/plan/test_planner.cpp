// The planner takes the minimum of the simulated candidates.
#include <gtest/gtest.h>

#include "algorithms/postal_math.hpp"
#include "model/machine_model.hpp"
#include "plan/planner.hpp"
#include "util/error.hpp"

using namespace hetcoll;

TEST(Planner, PicksTheLambdaTreeWhenLambdaExceedsOne) {
  auto m = parse_model("postal:lambda=2");
  PlanResult r = plan(Collective::make(CollOp::bcast, 8, 16), *m);
  ASSERT_GE(r.candidates.size(), 3u);
  EXPECT_DOUBLE_EQ(r.best().predicted, 5.0);
  EXPECT_NE(r.best().algorithm, "binomial_tree");
  for (size_t i = 1; i < r.candidates.size(); ++i) EXPECT_LE(r.candidates[i - 1].predicted, r.candidates[i].predicted);
}

TEST(Planner, TiesPreferFewerMessagesThenRegistryOrder) {
  // λ = 1: binomial, λ-tree and α-partition all take ⌈log2 n⌉ with n-1 messages.
  auto m = parse_model("postal:lambda=1");
  PlanResult r = plan(Collective::make(CollOp::bcast, 16, 16), *m);
  EXPECT_EQ(r.best().algorithm, "binomial_tree");
}

TEST(Planner, CombineFollowsTheBreakEvenRule) {
  for (double lam : {1.2, 1.6, 2.3, 2.7}) {
    auto m = parse_model("postal:lambda=" + std::to_string(lam));
    PlanResult r = plan(Collective::make(CollOp::allreduce, 200, 4, 0, 4), *m);
    EXPECT_LE(r.best().predicted, postal::T_delay_receive(lam, 200) + 1e-9);
    EXPECT_LE(r.best().predicted, postal::T_delay_send(lam, 200) + 1e-9);
  }
}

TEST(Planner, NoAlgorithmForAnOperationIsAClearError) {
  auto m = parse_model("postal:lambda=2");
  EXPECT_THROW(plan(Collective::make(CollOp::alltoall, 4, 1), *m), InputError);
}

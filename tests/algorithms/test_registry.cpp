// The registry: complete entries, clear errors, and a schedule's name is a
// spec that rebuilds the same schedule.
#include <gtest/gtest.h>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "schedule/validator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

TEST(Registry, EveryEntryIsDocumented) {
  for (auto& a : registry()) {
    EXPECT_FALSE(a.name.empty());
    EXPECT_FALSE(a.ops.empty()) << a.name;
    EXPECT_FALSE(a.description.empty()) << a.name;
    EXPECT_FALSE(a.steps.empty()) << a.name;
    EXPECT_FALSE(a.bytes.empty()) << a.name;
    EXPECT_FALSE(a.source.empty()) << a.name;
    EXPECT_NE(a.generate, nullptr) << a.name;
  }
}

TEST(Registry, ScheduleNameIsASpecThatRebuildsIt) {
  for (const char* model_spec : {"postal:lambda=1.37", "postal:lambda=2.9", "hockney:alpha=3us,beta=1ns"}) {
    auto m = parse_model(model_spec);
    for (auto& a : registry())
      for (CollOp op : a.ops) {
        Collective c = Collective::make(op, 11, 6, 3, 4);
        Schedule s = build_schedule(a.name, c, *m);
        Schedule again = build_schedule(s.algorithm, c, *m);
        EXPECT_EQ(again.algorithm, s.algorithm);
        EXPECT_EQ(to_text(again), to_text(s)) << a.name << " on " << model_spec;
      }
  }
}

TEST(Registry, RankConsistencyFlagMatchesTheValidator) {
  auto m = parse_model("postal:lambda=2.2");
  for (auto& a : registry()) {
    if (!a.supports(CollOp::allreduce)) continue;
    bool consistent = true;
    for (int n : {2, 3, 5, 8, 13}) {
      auto rep = validate(build_schedule(a.name, Collective::make(CollOp::allreduce, n, 4, 0, 8), *m));
      ASSERT_TRUE(rep.ok) << a.name << ": " << rep.summary();
      consistent = consistent && rep.rank_consistent;
    }
    EXPECT_EQ(consistent, a.rank_consistent) << a.name;
  }
}

TEST(Registry, ClearErrors) {
  auto m = parse_model("postal:lambda=2");
  Collective c = Collective::make(CollOp::bcast, 4, 8);
  auto expect_error = [&](const std::string& spec, const std::string& what) {
    try {
      build_schedule(spec, c, *m);
      FAIL() << spec;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("nope", "known: binomial_tree");
  expect_error("bks_combine", "does not implement bcast");
  expect_error("lambda_tree[foo=1]", "no parameter 'foo'");
  expect_error("alpha_partition[alpha=1.5]", "strictly between 0 and 1");
  expect_error("alpha_partition[alpha=x]", "alpha='x' must be a number");
  expect_error("lambda_tree[lambda=20000]", "from 1 to 10000");
  expect_error("knomial_bcast[k=0]", "k='0' must be an integer from 2");
  expect_error("chain_bcast[seg=0k]", "seg='0k' must be a size");
  expect_error("alpha_partition[alpha=0.5", "must end with ']'");
  expect_error("alpha_partition[alpha]", "not KEY=VALUE");
  expect_error("binomial_tree[x=1]", "takes none");
}

// Parameters at the top of their range cost no more than they must: a
// radix beyond the group is the group (the same schedule), a mesh whose
// product overflows is refused.
TEST(Registry, ExtremeParametersStayBounded) {
  auto m = parse_model("hockney:alpha=1us,beta=1ns");
  Collective a2a = Collective::make(CollOp::alltoall, 5, 8);
  Schedule huge = build_schedule("bruck_alltoall[k=1073741824]", a2a, *m);
  EXPECT_EQ(huge.message_count(), build_schedule("bruck_alltoall[k=5]", a2a, *m).message_count());
  EXPECT_TRUE(validate(huge).ok);
  Collective ag = Collective::make(CollOp::allgather, 5, 8);
  EXPECT_TRUE(validate(build_schedule("bruck_allgather[k=1073741824]", ag, *m)).ok);
  EXPECT_THROW(build_schedule("hybrid_allreduce[mesh=4x25x13x41x61x1321:SSSSSSCCCCCC]",
                        Collective::make(CollOp::allreduce, 4, 8), *m),
               InputError);
}

TEST(Registry, ZeroBytesGiveAnEmptySchedule) {
  auto m = parse_model("postal:lambda=2");
  for (auto& a : registry())
    for (CollOp op : a.ops) {
      if (op == CollOp::barrier) continue;  // its messages are empty by nature
      Schedule s = build_schedule(a.name, Collective::make(op, 6, 0), *m);
      EXPECT_EQ(s.total_ops(), 0u) << a.name;
      EXPECT_TRUE(validate(s).ok);
    }
}

// The decision budget (a first decision costs about the same at any group
// size) and decision tables (decisions computed ahead of time, loaded into
// the planner's cache).
#include <gtest/gtest.h>

#include <cmath>

#include "config/settings.hpp"
#include "model/machine_model.hpp"
#include "plan/decision_table.hpp"
#include "plan/planner.hpp"
#include "plan/table_builder.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {
const char* kShm = "hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0";
}

TEST(Budget, BoundsTheOpsADecisionSimulates) {
  auto m = parse_model(kShm);
  for (int p : {4096, 65536}) {
    for (CollOp op : {CollOp::allreduce, CollOp::bcast, CollOp::allgather, CollOp::alltoall}) {
      PlanResult r = plan(representative(Collective::make(op, p, 16384, 0, 8)), *m);
      // Probes of two ranks' programs and one generation stopped at the limit on top.
      EXPECT_LE(r.simulated_ops, 3 * kDecisionSimOps) << coll_op_name(op) << " p=" << p;
      ASSERT_FALSE(r.candidates.empty());
      size_t estimated = 0;
      for (auto& c : r.candidates) {
        estimated += c.estimated || c.holds;  // priced without simulating: roughly, or by rounds
        EXPECT_TRUE(std::isfinite(c.predicted) && c.predicted > 0) << c.algorithm;
      }
      EXPECT_GT(estimated, 0u) << coll_op_name(op) << " p=" << p << ": nothing was left to the estimates";
    }
  }
}

TEST(Budget, SmallGroupsAreSimulatedInFull) {
  auto m = parse_model(kShm);
  for (CollOp op : {CollOp::allreduce, CollOp::bcast, CollOp::reduce, CollOp::alltoall})
    for (int p : {2, 5, 8}) {
      PlanResult r = plan(representative(Collective::make(op, p, 1024, 0, 8)), *m);
      for (auto& c : r.candidates) EXPECT_FALSE(c.estimated) << c.algorithm << " p=" << p;
    }
}

TEST(Budget, WithoutABudgetEverythingIsSimulated) {
  auto m = parse_model(kShm);
  PlanOptions opt;
  opt.sim_budget = 0;
  opt.work_budget = 0;
  PlanResult r = plan(representative(Collective::make(CollOp::allreduce, 256, 16384, 0, 8)), *m, opt);
  for (auto& c : r.candidates) EXPECT_FALSE(c.estimated || c.holds) << c.algorithm;
  PlanOptions small;
  small.sim_budget = 2000;
  PlanResult s = plan(representative(Collective::make(CollOp::allreduce, 256, 16384, 0, 8)), *m, small);
  size_t estimated = 0;
  for (auto& c : s.candidates) estimated += c.estimated;
  EXPECT_GT(estimated, 0u);
}

TEST(Budget, PostalTreesAreEstimatedExactly) {
  // Past the budget the λ-tree is priced by T_λ(p), Bruck's optimum: a
  // price that holds (exact on the postal model), not a rough estimate.
  auto m = parse_model("postal:lambda=1.8");
  PlanResult r = plan(Collective::make(CollOp::bcast, 1000000, 8), *m);
  EXPECT_EQ(r.best().algorithm, "lambda_tree");
  EXPECT_TRUE(r.best().holds);
  EXPECT_FALSE(r.best().estimated);
  EXPECT_NEAR(r.best().predicted, 28.2, 1e-9);
}

TEST(DecisionTable, LoadedDecisionsEqualPlannedOnes) {
  auto m = parse_model(kShm);
  const std::vector<CollOp> ops = {CollOp::bcast, CollOp::allreduce, CollOp::gatherv, CollOp::barrier,
                                   CollOp::reduce_scatter, CollOp::alltoall};
  DecisionTable t = build_decision_table(m, {4, 6}, ops, 1 << 16, {1, 8});
  ASSERT_GT(t.entries.size(), 100u);
  auto again = std::make_shared<const DecisionTable>(DecisionTable::from_json(json::parse(t.to_json().dump())));
  ASSERT_EQ(again->entries.size(), t.entries.size());
  Planner loaded(m, {}, again), fresh(m);
  EXPECT_EQ(loaded.preloaded(), t.entries.size());
  size_t compared = 0;
  for (int p : {4, 6})
    for (CollOp op : {CollOp::bcast, CollOp::allreduce, CollOp::alltoall})
      for (uint64_t count : {0, 1, 3, 100, 1000, 5000}) {
        Collective c = Collective::make(op, p, count, 0, 8);
        Decision a = loaded.decide(c), b = fresh.decide(c);
        EXPECT_FALSE(a.fresh) << c.describe() << ": not from the table";
        EXPECT_EQ(a.algorithm, b.algorithm) << c.describe();
        EXPECT_DOUBLE_EQ(a.predicted, b.predicted) << c.describe();
        ++compared;
      }
  EXPECT_EQ(compared, 36u);
}

TEST(DecisionTable, UsedOnlyWhereItIsExact) {
  auto m = parse_model(kShm);
  auto t = std::make_shared<DecisionTable>(build_decision_table(m, {4}, {CollOp::bcast}, 1 << 10, {1}));
  EXPECT_EQ(Planner(parse_model("hockney:alpha=1us,beta=1ns"), {}, t).preloaded(), 0u);  // another model
  EXPECT_NE(table_mismatch(*t, *parse_model("hockney:alpha=1us,beta=1ns"), 0), "");
  EXPECT_EQ(Planner(m, Overrides::parse("bcast:@binomial_tree"), t).preloaded(), 0u);    // overrides
  EXPECT_GT(Planner(m, {}, t).preloaded(), 0u);
  t->version = "0.0.1";
  EXPECT_EQ(Planner(m, {}, t).preloaded(), 0u);  // another hetcoll
  EXPECT_NE(table_mismatch(*t, *m, 0).find("0.0.1"), std::string::npos);
}

TEST(DecisionTable, HostileFilesAreRefused) {
  auto m = parse_model(kShm);
  json::Value good = build_decision_table(m, {4}, {CollOp::bcast}, 64, {1}).to_json();
  auto broken = [&](auto mutate) {
    json::Value v = json::parse(good.dump());
    mutate(v);
    return v;
  };
  auto row = [](json::Value& v) -> json::Value& { return const_cast<json::Value&>(v.at("entries")[0]); };
  std::vector<json::Value> bad = {
      json::parse("[]"),
      json::parse("{\"hetcoll_decision_table\": 2}"),
      broken([](json::Value& v) { v["columns"] = json::Value::array(); }),
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[0]) = "bcastx"; }),
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[2]) = -3; }),
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[3]) = 4; }),  // root outside 4 ranks
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[6]) = "no_such_algorithm"; }),
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[6]) = "ring_allreduce"; }),  // not a bcast
      broken([&](json::Value& v) { const_cast<json::Value&>(row(v)[7]) = -1.0; }),
  };
  for (auto& v : bad) EXPECT_THROW(DecisionTable::from_json(v), InputError) << v.dump();
  EXPECT_NO_THROW(DecisionTable::from_json(good));
  EXPECT_THROW(load_decision_table("/dev/zero"), InputError);
  EXPECT_THROW(load_decision_table("/nonexistent/table.json"), InputError);
}

TEST(DecisionTable, EntriesKeepTheRulesOverridesKeep) {
  // A table edited by hand: entries an override could not name are planned
  // instead, with the reason — never run.
  auto m = parse_model(kShm);
  DecisionTable t = build_decision_table(m, {3}, {CollOp::allreduce, CollOp::bcast}, 4 << 20, {1, 8});
  for (TableEntry& e : t.entries) {
    if (e.op == CollOp::allreduce) e.algorithm = "bks_combine";
    if (e.op == CollOp::bcast) e.algorithm = "chain_bcast[seg=1]";
  }
  auto table = std::make_shared<const DecisionTable>(DecisionTable::from_json(json::parse(t.to_json().dump())));
  Planner loaded(m, {}, table), fresh(m);
  ASSERT_GT(loaded.preloaded(), 0u);
  // Floating point: bks_combine combines in a different order on each rank.
  Collective fp = Collective::make(CollOp::allreduce, 3, 1000, 0, 8);
  Decision d = loaded.decide(fp);
  EXPECT_EQ(d.algorithm, fresh.decide(fp).algorithm);
  EXPECT_NE(d.note.find("HETCOLL_TABLE's bks_combine"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("different order"), std::string::npos) << d.note;
  // Integers (order-free): it may run.
  Collective ints = fp;
  ints.order_free = true;
  EXPECT_EQ(loaded.decide(ints).algorithm.rfind("bks_combine", 0), 0u);
  // 4 MiB in 1-byte segments: past the operation cap.
  Collective big = Collective::make(CollOp::bcast, 3, 4 << 20, 0, 1);
  d = loaded.decide(big);
  EXPECT_EQ(d.algorithm, fresh.decide(big).algorithm);
  EXPECT_NE(d.note.find("operations"), std::string::npos) << d.note;
  // Within the cap it is followed (the executor runs it in linear time).
  EXPECT_EQ(loaded.decide(Collective::make(CollOp::bcast, 3, 1000, 0, 1)).algorithm, "chain_bcast[seg=1]");
}

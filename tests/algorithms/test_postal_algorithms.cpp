// Property tests over many (n, root, λ), non-integer λ included: every
// schedule is valid; the λ-tree finishes at T_λ(n) and never after the
// binomial tree; the α-partition with its look-up table matches the λ-tree;
// global combine matches the recursions N'_λ and N''_λ.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/registry.hpp"
#include "model/postal_model.hpp"
#include "schedule/validator.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;

namespace {
const double kLambdas[] = {1.0, 1.05, 1.3, 1.44, 1.5, 1.8, 1.95, 2.0, 2.5, 2.518, 3.0,
                           3.7, 4.2, 5.0, 6.6, 7.63, 8.0, 9.1, 10.0};

std::vector<int> sizes(std::mt19937& rng) {
  std::vector<int> v;
  for (int n = 1; n <= 40; ++n) v.push_back(n);
  for (int n : {55, 64, 89, 100, 144, 233, 377, 610, 987, 1597, 2000}) v.push_back(n);
  std::uniform_int_distribution<int> d(41, 2000);
  for (int k = 0; k < 12; ++k) v.push_back(d(rng));
  return v;
}

double run(const Schedule& s, const MachineModel& m) { return simulate(s, m, {false, false, {}}).makespan; }
}  // namespace

TEST(PostalBroadcast, LambdaTreeIsOptimalAndAlphaPartitionMatchesIt) {
  std::mt19937 rng(12345);
  auto ns = sizes(rng);
  for (double lam : kLambdas) {
    PostalModel model(lam);
    for (int n : ns) {
      std::uniform_int_distribution<int> pick(0, n - 1);
      for (int root : {0, n - 1, pick(rng)}) {
        Collective c = Collective::make(CollOp::bcast, n, 64, root);
        Schedule lt = generate("lambda_tree", c, model);
        Schedule bt = generate("binomial_tree", c, model);
        Schedule ap = generate("alpha_partition", c, model);
        for (const Schedule* s : {&lt, &bt, &ap}) {
          auto rep = validate(*s);
          ASSERT_TRUE(rep.ok) << s->algorithm << " n=" << n << " root=" << root << " lambda=" << lam << ": "
                              << rep.summary();
          ASSERT_EQ(rep.messages, uint64_t(n - 1));
        }
        double T = postal::T(lam, uint64_t(n));
        double t_lt = run(lt, model), t_bt = run(bt, model), t_ap = run(ap, model);
        EXPECT_NEAR(t_lt, T, 1e-9) << "lambda_tree n=" << n << " lambda=" << lam;
        EXPECT_LE(t_lt, t_bt + 1e-9) << "n=" << n << " lambda=" << lam;
        EXPECT_NEAR(t_ap, T, 1e-9) << "alpha_partition n=" << n << " lambda=" << lam;
      }
    }
  }
}

TEST(PostalBroadcast, FixedAlphaHalfIsTheBinomialTree) {
  PostalModel model(1.7);
  for (int n = 1; n <= 300; ++n) {
    Collective c = Collective::make(CollOp::bcast, n, 8, n / 2);
    EXPECT_NEAR(run(generate("alpha_partition[alpha=0.5]", c, model), model),
                run(generate("binomial_tree", c, model), model), 1e-12);
  }
}

TEST(PostalBroadcast, LambdaTwoOneFixedAlphaIsOptimalUpTo250) {
  // Fig. 6: for λ = 2 a straight line fits between the curves.
  postal::AlphaTable table(2.0, 250);
  ASSERT_EQ(table.entries().size(), 1u);
  std::string spec = "alpha_partition[alpha=" + std::to_string(table.entries()[0].alpha) + "]";
  PostalModel model(2.0);
  for (int n = 2; n <= 250; ++n)
    EXPECT_NEAR(run(generate(spec, Collective::make(CollOp::bcast, n, 8), model), model), postal::T(2.0, uint64_t(n)),
                1e-9);
}

TEST(PostalCombine, SchedulesAreValidAndMatchTheRecursions) {
  std::mt19937 rng(777);
  std::vector<int> ns;
  for (int n = 1; n <= 34; ++n) ns.push_back(n);
  std::uniform_int_distribution<int> d(35, 2000);
  for (int k = 0; k < 6; ++k) ns.push_back(d(rng));
  ns.push_back(2000);
  for (double lam : {1.0, 1.3, 1.44, 1.5, 1.95, 2.0, 2.5, 2.6, 3.0, 3.4, 4.7, 6.0, 9.5}) {
    PostalModel real(lam);
    double up = std::ceil(lam - 1e-12), down = std::floor(lam + 1e-12);
    PostalModel receive_machine(up);                                   // receives idle to ⌈λ⌉
    PostalModel send_machine(SizeTable(down), SizeTable(lam / down), false);  // sends take λ/⌊λ⌋
    for (int n : ns) {
      if (n > 200 && lam > 3) continue;  // keep the test quick; large n covered for small λ
      Collective c = Collective::make(CollOp::allreduce, n, 3, 0, 4);
      Schedule recv_s = generate("bks_delay_receive", c, real);
      Schedule send_s = generate("bks_delay_send", c, real);
      for (const Schedule* s : {&recv_s, &send_s}) {
        auto rep = validate(*s);
        ASSERT_TRUE(rep.ok) << s->algorithm << " n=" << n << " lambda=" << lam << ": " << rep.summary();
      }
      double Tp = postal::T_delay_receive(lam, uint64_t(n)), Tpp = postal::T_delay_send(lam, uint64_t(n));
      EXPECT_NEAR(run(recv_s, receive_machine), Tp, 1e-9) << "delay-receive n=" << n << " lambda=" << lam;
      EXPECT_NEAR(run(send_s, send_machine), Tpp, 1e-9) << "delay-send n=" << n << " lambda=" << lam;
      // Without forced idling the same schedules can only be faster.
      EXPECT_LE(run(recv_s, real), Tp + 1e-9);
      EXPECT_LE(run(send_s, real), Tpp + 1e-9);
      // The automatic variant follows the break-even rule.
      Schedule a = generate("bks_combine", c, real);
      int L = int(postal::prefer_delay_send(lam) ? down : up);
      EXPECT_EQ(a.algorithm, "bks_combine[L=" + std::to_string(L) + "]");
    }
  }
}

TEST(PostalCombine, NotRankConsistentButCorrect) {
  PostalModel model(2.0);
  Schedule s = generate("bks_combine", Collective::make(CollOp::allreduce, 13, 2, 0, 8), model);
  auto rep = validate(s);
  EXPECT_TRUE(rep.ok) << rep.summary();
  EXPECT_FALSE(rep.rank_consistent);
  EXPECT_FALSE(find_algorithm("bks_combine").rank_consistent);
}

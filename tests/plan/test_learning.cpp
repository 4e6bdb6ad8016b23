// The rule a call site follows to learn its choice in the job
// (plan/learning.hpp), driven by a fake machine: candidate c takes times[c]
// seconds on the slowest rank, times a noise factor. Every property the
// rule promises is checked here — it finds the fastest, within how many
// calls, what exploring costs, drift followed — and, with ranks whose own
// clocks differ, that every rank runs the same candidate at every call.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "plan/learning.hpp"

namespace hetcoll {
namespace {

// One job's calls of one site: `ranks` LearnedChoices (one per rank), each
// rank's time of a call its own (rank r slowed by slow[r]); the exchange is
// the slowest rank's sum, as MPI_Allreduce(MPI_MAX) gives every rank.
struct Job {
  std::vector<LearnedChoice> ranks;
  std::vector<double> slow;
  std::mt19937 rng{7};
  double noise = 0;
  std::vector<int> ran;  // the candidate of every call (rank 0's; checked equal)
  std::vector<int> kept;  // after every call: the candidate settled on, -1 while exploring
  std::vector<size_t> exchanges;  // the calls (their number, from 1) that ended in an exchange
  double time = 0;       // the slowest rank's time, all calls
  Job(int candidates, int nranks, LearningRules rules = {}) : slow(size_t(nranks), 1.0) {
    for (int r = 0; r < nranks; ++r) ranks.emplace_back(candidates, rules);
  }
  void run(const std::vector<double>& times, int calls) {
    std::uniform_real_distribution<double> u(1 - noise, 1 + noise);
    for (int i = 0; i < calls; ++i) {
      const LearnedChoice::Step s = ranks[0].next();
      double slowest = 0;
      for (size_t r = 0; r < ranks.size(); ++r) {
        const LearnedChoice::Step t = ranks[r].next();
        ASSERT_EQ(t.candidate, s.candidate) << "rank " << r << " at call " << ran.size();
        ASSERT_EQ(t.exchange_after, s.exchange_after);
        const double local = times[size_t(s.candidate)] * slow[r] * u(rng);
        slowest = std::max(slowest, local);
        ranks[r].record(local);
      }
      ran.push_back(s.candidate);
      time += slowest;
      if (s.exchange_after) {
        exchanges.push_back(ran.size());
        double agreed = 0;
        for (const LearnedChoice& c : ranks) agreed = std::max(agreed, c.pending());
        for (LearnedChoice& c : ranks) c.agreed(agreed);
      }
      kept.push_back(ranks[0].phase() == LearnedChoice::Phase::settled ? ranks[0].best() : -1);
    }
  }
  const LearnedChoice& rule() const { return ranks[0]; }
  // The calls, from call `from`, until the rule first settled on `c`
  // (all calls: never).
  size_t settled_on(int c, size_t from = 0) const {
    for (size_t i = from; i < kept.size(); ++i)
      if (kept[i] == c) return i + 1 - from;
    return kept.size();
  }
};

TEST(Learning, TheModelRightKeepsItsChoiceAndExploringCostsLittle) {
  // 0: the planner's choice, fastest; 1: native 1.6x; 2: a runner-up 1.2x.
  Job job(3, 4);
  job.noise = 0.05;
  job.run({1e-3, 1.6e-3, 1.2e-3}, 20000);
  EXPECT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
  EXPECT_EQ(job.rule().best(), 0);
  EXPECT_EQ(job.rule().reopened(), 0);
  EXPECT_LE(job.settled_on(0), 200u);
  // Exploring's cost against running the choice alone, all calls (the
  // slowest of 4 ranks under ±5 %: 1.03 of the time, on average).
  const double alone = 20000 * 1e-3 * (1 - 0.05 + 0.1 * 4 / 5);
  EXPECT_LE(job.time / alone - 1, job.rule().rules().budget * 1.1);
  EXPECT_LE(job.rule().lost(), job.rule().rules().budget * job.rule().total() + 1e-12);
}

// The settled windows (calls between exchanges) from call `from` on.
std::vector<size_t> windows_after(const Job& job, size_t from) {
  std::vector<size_t> w;
  for (size_t i = 1; i < job.exchanges.size(); ++i)
    if (job.exchanges[i - 1] >= from) w.push_back(job.exchanges[i] - job.exchanges[i - 1]);
  return w;
}

TEST(Learning, ASettledWindowLastsAboutASecondWhateverTheCall) {
  // Settled, a window doubles from 16 calls to 256 — but past 16 only while
  // it lasts at most window_seconds (1 s): 1 ms calls reach 256, 10 ms calls
  // stop at 100, 100 ms calls stay at 16.
  for (const auto& [call, most] : std::vector<std::pair<double, size_t>>{{1e-3, 256}, {1e-2, 100}, {1e-1, 16}}) {
    Job job(2, 2);
    job.run({call, 3 * call}, 1500);  // before the recheck (2048 settled calls)
    ASSERT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
    const std::vector<size_t> w = windows_after(job, job.settled_on(0));
    ASSERT_GE(w.size(), 4u);
    EXPECT_EQ(*std::max_element(w.begin(), w.end()), most) << call;
    EXPECT_EQ(w.back(), most) << call;
    EXPECT_GE(*std::min_element(w.begin(), w.end()), 16u) << call;
  }
  // A change is then seen within about a second and a window: 20 ms calls
  // twice as slow from call 3000 — the choice opened again within 50 + 16
  // calls of the old time's window (and within 272 before the cap).
  Job job(2, 2);
  job.run({2e-2, 1e-1}, 3000);
  ASSERT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
  job.run({4e-2, 1e-1}, 200);
  EXPECT_EQ(job.rule().reopened(), 1);
  size_t opened = 0;
  for (size_t i = 3000; i < job.kept.size() && !opened; ++i)
    if (job.kept[i] < 0) opened = i + 1 - 3000;
  EXPECT_GT(opened, 0u);
  EXPECT_LE(opened, 50u + 50u + 16u);
}

TEST(Learning, AWrongModelIsLeftForTheFastestWithinFewCalls) {
  // The planner's choice 2.7x slower than native (a fat tree drawn flat).
  Job job(3, 8);
  job.noise = 0.05;
  job.run({2.7e-3, 1e-3, 1.3e-3}, 2000);
  EXPECT_EQ(job.rule().best(), 1);
  // warm 4, probes 2, one round of batches (4 each): at most 3 rounds.
  const size_t n = job.settled_on(1);
  EXPECT_LE(n, 4u + 2 + 3 * 3 * 4);
  // Exploring found time: within 5 % of native's alone (the slowest of 8
  // ranks under ±5 %: 1.039 of it), the rechecks included.
  EXPECT_LE(job.rule().lost(), job.rule().rules().budget * job.rule().total());
  EXPECT_LT(job.time, 2000 * 1e-3 * (1 - 0.05 + 0.1 * 8 / 9) * 1.05);
}

TEST(Learning, CloseCandidatesAreMeasuredAgainThenOneIsKept) {
  // Within 3% of each other under 5% noise: more rounds, then a settled
  // choice within a few per cent of the fastest.
  Job job(3, 2);
  job.noise = 0.05;
  const std::vector<double> times = {1.02e-3, 1e-3, 1.03e-3};
  job.run(times, 5000);
  EXPECT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
  EXPECT_LE(times[size_t(job.rule().best())], 1.05e-3);
  EXPECT_LE(job.settled_on(job.rule().best()), 4u + 2 + job.rule().rules().max_rounds * 3 * 4 + 64);
}

TEST(Learning, ACandidateFarSlowerIsDroppedAtItsProbeAndTheBudgetWaits) {
  // Candidate 1 is 20x slower: its probe loses 19 calls' time. Candidate 2
  // (1.2x) is probed at once (probes are not held to the budget), but its
  // batch waits until the site's time makes that loss 2 %.
  LearningRules rules;
  Job job(3, 1, rules);
  job.run({1e-3, 20e-3, 1.2e-3}, 300);
  EXPECT_TRUE(job.rule().measured()[1].dropped);
  EXPECT_EQ(job.rule().measured()[1].calls, 1);
  EXPECT_EQ(job.rule().measured()[2].calls, 1);  // probed, its batch not yet run
  EXPECT_EQ(job.rule().phase(), LearnedChoice::Phase::exploring);
  job.run({1e-3, 20e-3, 1.2e-3}, 2000);
  EXPECT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
  EXPECT_EQ(job.rule().best(), 0);
  EXPECT_GT(job.rule().measured()[2].calls, 1);
  // At every point the loss is the budget's share, but for the probes.
  EXPECT_LE(job.rule().lost(), rules.budget * job.rule().total() + 19e-3 + 0.2e-3);
}

TEST(Learning, ACandidateDroppedAtABatchComesBackWhenTheBestMeasuresSlowerSince) {
  // One rank, no noise, times scripted by each candidate's run: the
  // decision (0) runs 100 us in its warm batch, then 120 us; candidate 1
  // runs 104 us but for its first batch, 115 us (dropped: its mean 112.8 is
  // above 1.1 x 100); candidate 2 runs 108 us at its probe, then 125 us, its
  // batch waiting for budget while the decision's windows raise its mean to
  // 116.7. Without coming back, the site settled on the decision at 116.7,
  // candidate 1 dropped at 112.8 (and at 104 since).
  LearnedChoice rule(3);
  std::vector<int> runs(3, 0);
  auto time_of = [&](int c) {
    const int n = ++runs[size_t(c)];
    if (c == 0) return n <= 5 ? 100e-6 : 120e-6;
    if (c == 1) return n >= 2 && n <= 5 ? 115e-6 : 104e-6;
    return n == 1 ? 108e-6 : 125e-6;
  };
  bool was_dropped = false;
  for (int i = 0; i < 1000 && rule.phase() != LearnedChoice::Phase::settled; ++i) {  // to its first settling
    const LearnedChoice::Step s = rule.next();
    const double t = time_of(s.candidate);
    rule.record(t);
    if (s.exchange_after) rule.agreed(rule.pending());
    was_dropped = was_dropped || rule.measured()[1].dropped;
  }
  ASSERT_TRUE(was_dropped);
  ASSERT_EQ(rule.phase(), LearnedChoice::Phase::settled);
  EXPECT_EQ(rule.best(), 1);
  // Kept: never a mean above a candidate measured and dropped.
  for (size_t c = 0; c < 3; ++c) {
    if (rule.measured()[c].dropped) {
      EXPECT_GT(rule.measured()[c].mean(), rule.measured()[size_t(rule.best())].mean()) << c;
    }
  }
}

TEST(Learning, AFastCandidateBehindASlowOneIsFoundAtOnce) {
  // The model wrong (a fat tree drawn flat): native, probed first, is 2.5x
  // slower than the decision; the runner-up 3.2x faster. It is found at its
  // probe, not after the budget has paid for native's.
  Job job(4, 4);
  job.run({12e-3, 30e-3, 12e-3, 3.75e-3}, 200);
  EXPECT_EQ(job.rule().best(), 3);
  EXPECT_LE(job.settled_on(3), 40u);
}

TEST(Learning, DriftOpensTheChoiceAgainAndTheNewFastestIsKept) {
  Job job(3, 4);
  job.noise = 0.03;
  job.run({1e-3, 1.5e-3, 1.3e-3}, 3000);
  ASSERT_EQ(job.rule().best(), 0);
  const size_t before = job.ran.size();
  // The uplink the choice leans on slows 3x (the others less).
  job.run({3e-3, 1.6e-3, 2e-3}, 3000);
  EXPECT_EQ(job.rule().best(), 1);
  EXPECT_GE(job.rule().reopened(), 1);
  const size_t followed = job.settled_on(1, before);
  // Windows double to 256 while stable: two windows out of band (the one
  // under way and one of 16 to confirm), then the exploration.
  EXPECT_LE(followed, size_t(job.rule().rules().window_most + 16 + 64));
  // And back: the uplink restored, the first choice again — native's own
  // time barely moves (no drift to see), the recheck finds it.
  const size_t back = job.ran.size();
  job.run({1e-3, 1.5e-3, 1.3e-3}, 5000);
  EXPECT_EQ(job.rule().best(), 0);
  EXPECT_GE(job.rule().rechecked(), 1);
  EXPECT_LE(job.settled_on(0, back), size_t(job.rule().rules().recheck_calls + job.rule().rules().window_most + 64));
}

// The emulated cluster's allreduce of 256 KiB (11 ranks, 2026-11-28): ring
// 83 ms, hierarchical 130, native 190, a hub 240; a subnet's uplink 10x
// slower: ring 500, hierarchical 430, native 530, the hub 2.2 s.
const std::vector<double> kUplinkFast = {83e-3, 130e-3, 190e-3, 240e-3};
const std::vector<double> kUplinkSlow = {500e-3, 430e-3, 530e-3, 2.2};

// Its job on 4 ranks with 5 % noise, 330 calls on the fast uplink.
Job uplink_job_before_the_change() {
  Job job(4, 4);
  job.noise = 0.05;
  job.run(kUplinkFast, 330);
  return job;
}

TEST(Learning, AChoiceMovedBySlowUplinkGoesBackWhenTheUplinkIsRestored) {
  // The hub's probe alone, on the slow uplink, lost more than the budget's
  // 2 % of what the site had run. The choice moves to hierarchical;
  // restored, it must come back to ring within a few windows, not stay on
  // hierarchical for want of budget (the slow machine's exploring is not
  // held against the restored one).
  Job job = uplink_job_before_the_change();
  const std::vector<double>& fast = kUplinkFast;
  const std::vector<double>& slow = kUplinkSlow;
  ASSERT_EQ(job.rule().best(), 0);
  const size_t slowed = job.ran.size();
  job.run(slow, 100);
  EXPECT_EQ(job.rule().best(), 1);
  // Its last 50 calls run hierarchical (the others' batches may still wait
  // for budget: their probes were dear).
  EXPECT_GE(std::count(job.ran.begin() + long(slowed) + 50, job.ran.end(), 1), 48);
  const size_t restored = job.ran.size();
  // Restored: hierarchical's window sees the change and the choice opens
  // again; ring's probe (the first after it) is one unlucky call, 145 ms —
  // above hierarchical's 130, so ring needs its batch, which the budget
  // must allow.
  const int opened = job.rule().reopened();
  while (job.rule().reopened() == opened && job.ran.size() < restored + 200) job.run(fast, 1);
  ASSERT_GT(job.rule().reopened(), opened);
  job.run({145e-3, 130e-3, 190e-3, 240e-3}, 1);
  job.run(fast, 400);
  EXPECT_EQ(job.rule().best(), 0);
  EXPECT_LE(job.settled_on(0, restored), 100u);
}

TEST(Learning, ACandidateFarSlowerBeforeWaitsForTheBudgetWhenMeasuredAgain) {
  // The same cluster: after the uplink slowed, the choice opens again. The
  // hub measured 2.9x ring's time before: its probe is priced at 1.9 times
  // the best's time now (430 ms) and waits until the budget (2 % of the
  // site's time) affords it, while the best runs; the first time, every
  // probe ran at once. Hierarchical (1.6x before, cheap at that price) and
  // ring are probed at once, fastest-before first.
  Job job = uplink_job_before_the_change();
  const std::vector<double>& slow = kUplinkSlow;
  ASSERT_EQ(job.rule().best(), 0);
  EXPECT_EQ(std::count(job.ran.begin(), job.ran.end(), 3), 1);  // its probe, at once the first time
  const int opened = job.rule().reopened();
  const size_t slowed = job.ran.size();
  while (job.rule().reopened() == opened && job.ran.size() < slowed + 100) job.run(slow, 1);
  ASSERT_GT(job.rule().reopened(), opened);
  const size_t reopened_at = job.ran.size();
  job.run(slow, 1);
  EXPECT_EQ(job.ran.back(), 0);  // ring measured fastest before: probed first
  job.run(slow, 29);
  EXPECT_EQ(std::count(job.ran.begin() + long(reopened_at), job.ran.end(), 3), 0);
  EXPECT_EQ(job.rule().best(), 1);
  // When the hub's probe runs, the budget had room for its price.
  const double site_time_then = job.rule().total();
  while (job.ran.back() != 3 && job.ran.size() < reopened_at + 2000) job.run(slow, 1);
  ASSERT_EQ(job.ran.back(), 3) << "the dear probe never ran";
  EXPECT_GE(job.rule().total(), site_time_then);
  EXPECT_GE(job.ran.size() - reopened_at, 40u);
  // And the choice is not moved: hierarchical stays.
  job.run(slow, 200);
  EXPECT_EQ(job.rule().best(), 1);
}

TEST(Learning, AChangeWhileExploringDiscardsWhatWasMeasuredBefore) {
  // The model right at first: candidates 1 and 2 dropped by their batches,
  // 3 probed (1.22x: kept) with its batch waiting for budget while the best
  // runs windows. Then the uplinks slow: every candidate 4x slower, 3 the
  // most. Whenever the change comes, the best's window that saw it must not
  // make a stale probe the best (and drop the true one): what was measured
  // before is another machine's. (SMPI's two_subnets_drift did exactly that
  // to a bcast before this rule.)
  for (int change = 10; change <= 400; change += 10) {
    Job job(4, 4);
    job.run({1e-3, 1.13e-3, 1.13e-3, 1.22e-3}, change);
    job.run({4e-3, 4.2e-3, 4.2e-3, 6e-3}, 1500);
    EXPECT_EQ(job.rule().best(), 0) << "changed at call " << change;
    EXPECT_FALSE(job.rule().measured()[0].dropped) << "changed at call " << change;
  }
}

TEST(Learning, AWindowThatStraddlesTheChangeIsNotTakenForTheNewMachine) {
  // Native (1) settled on; then the uplinks come back and every candidate
  // gets faster, native the most. The window that shows the change is half
  // slow: taken as native's new time, the others' fresh times would beat
  // it. (SMPI's two_subnets_drift did that to an alltoall: spread_alltoall
  // kept at 9.4 ms beside native's 4.2.)
  // The change comes anywhere: settled, or while a recheck explores and the
  // best waits for budget in windows that double.
  for (int change = 300; change <= 3000; change += 37) {
    Job job(4, 4);
    job.run({3e-3, 1e-3, 2.2e-3, 1.3e-3}, change);
    ASSERT_EQ(job.rule().best(), 1) << "changed at call " << change;
    job.run({0.9e-3, 0.2e-3, 0.45e-3, 0.42e-3}, 3000);
    EXPECT_EQ(job.rule().best(), 1) << "changed at call " << change;
  }
}

TEST(Learning, NoiseWithinTheBandNeverOpensTheChoice) {
  Job job(4, 4);
  job.noise = 0.15;  // ±15% a call: a window's mean stays within 25 %
  job.run({1e-3, 2e-3, 1.4e-3, 1.6e-3}, 30000);
  EXPECT_EQ(job.rule().best(), 0);
  EXPECT_EQ(job.rule().reopened(), 0);
}

TEST(Learning, RanksWhoseClocksDifferRunTheSameCandidateAtEveryCall) {
  // One rank 3x slower than the others (it arrives late): its own times
  // differ, the agreed ones do not; Job::run asserts the ranks' steps are
  // equal at every call.
  Job job(3, 6);
  job.slow[4] = 3.0;
  job.noise = 0.2;
  job.run({1.4e-3, 1e-3, 1.2e-3}, 4000);
  std::vector<double> pendings;
  for (const LearnedChoice& c : job.ranks) {
    EXPECT_EQ(c.best(), job.rule().best());
    EXPECT_EQ(c.calls(), 4000u);
    pendings.push_back(c.pending());
  }
  EXPECT_NE(pendings[4], pendings[0]);  // their own clocks did differ
}

TEST(Learning, ASingleCandidateSettlesAfterItsWarmCalls) {
  Job job(1, 2);
  job.run({1e-3}, 100);
  EXPECT_EQ(job.rule().phase(), LearnedChoice::Phase::settled);
  EXPECT_EQ(job.settled_on(0), size_t(LearningRules{}.warm_calls) + 1);  // the first call, then its warm calls
}

TEST(Learning, TheSitesFirstCallIsNotTimed) {
  // A site's first call makes connections and touches memory first (under
  // SMPI, 99 us where the next take 20): it must not be the decision's time.
  LearnedChoice c(3);
  EXPECT_TRUE(c.next().candidate == 0 && !c.next().exchange_after);
  c.record(1.0);
  for (int i = 0; i < LearningRules{}.warm_calls; ++i) c.record(1e-3);
  EXPECT_DOUBLE_EQ(c.pending(), LearningRules{}.warm_calls * 1e-3);
  c.agreed(c.pending());
  EXPECT_DOUBLE_EQ(c.measured()[0].mean(), 1e-3);
  EXPECT_EQ(c.measured()[0].calls, LearningRules{}.warm_calls);
}

TEST(Learning, HostileTimesAreTakenAsZeroAndBadRulesRefused) {
  LearnedChoice c(2);
  c.record(std::nan(""));
  c.record(-1);
  c.record(INFINITY);
  EXPECT_EQ(c.pending(), 0);
  EXPECT_EQ(c.agreed(std::nan("")), LearnedChoice::Change::none);
  LearningRules bad;
  bad.window_most = 1;
  EXPECT_THROW(LearnedChoice(2, bad), std::invalid_argument);
  bad = LearningRules{};
  bad.batch_calls = 0;
  EXPECT_THROW(LearnedChoice(2, bad), std::invalid_argument);
  for (double s : {0.0, -1.0, std::nan("")}) {
    bad = LearningRules{};
    bad.window_seconds = s;
    EXPECT_THROW(LearnedChoice(2, bad), std::invalid_argument) << s;
  }
}

}  // namespace
}  // namespace hetcoll

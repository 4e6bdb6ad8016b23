// Choices measured in the job (HETCOLL_LEARN, docs/learning.md): the rule
// one call site follows — a communicator's calls of one representative call
// (a collective, its group, its size class, root and element) — to time the
// planner's choice, the native MPI and the model's next candidates, keep the
// fastest, and open the choice again when its time drifts.
//
// Pure: no clock and no MPI. The MPI layer (interpose/learning.cpp) asks
// next() before a call, gives record() this rank's time of it, and after a
// call whose step says exchange_after, gives agreed() the slowest rank's
// sum of the batch (an MPI_Allreduce with MPI_MAX on the communicator's
// private duplicate). Everything the rule decides comes from agreed() and
// the count of calls, so every rank switches at the same call to the same
// candidate, whatever its own clock said.
//
// Candidates are indices: 0 is the planner's decision; the caller orders the
// rest (the MPI layer: native, then the model's runners-up).
//
// The rule (STAR-MPI's "time the candidates during the first calls, keep the
// fastest" — Faraj, Yuan & Lowenthal, ICS 2006 — with a budget and drift):
//  1. warm: the decision runs warm_calls calls, timed, after the site's
//     first call (untimed: first touches, connections made);
//  2. probe: each other candidate runs one call; one slower than probe_drop ×
//     the best so far is dropped (a single call is noisy: a generous bar);
//  3. batches: the candidates left run batch_calls calls each, per round; a
//     batch slower than batch_drop × the best drops its candidate; when the
//     runner-up is clear_margin slower than the best, or after max_rounds,
//     the best is settled on;
//  4. budget: a batch of a candidate that is not the best starts only while
//     the time exploration has lost (each tried call's time above the best's
//     mean) is at most `budget` of the site's time so far (a probe is not
//     held to it: one call of each candidate, early); else the best runs
//     a window first (window_first calls, doubling to window_most while it
//     waits, and past window_first only while a window lasts at most
//     window_seconds at the best's mean: each window ends in an exchange).
//     Exploring pays when it finds
//     a faster candidate (no loss) and waits when it does not;
//  5. drift: settled, the choice runs windows of window_first calls (doubling
//     to window_most while stable, and past window_first only while a window
//     lasts at most window_seconds at the settled mean: a slow call's change
//     is seen within seconds, not within 256 of its calls), each ending in
//     an exchange; when
//     drift_windows windows in a row leave the settled mean by more than
//     `drift`, the candidates are measured again (from 2) — and so they are
//     when, exploring, one window of the best (waiting for budget) leaves its
//     mean by that much: what the others measured was another machine, and
//     what exploring it lost is forgiven (the budget's account starts anew);
//  6. recheck: settled for recheck_calls calls, the others are measured
//     again while the budget allows — the running choice's own time cannot
//     show that another candidate got faster (an uplink restored).
//  Measured again (5 or 6), the probes go fastest-before first, and one the
//  last exploration found k times the best's time is held to the budget,
//  priced at (k - 1) times the best's time now: a candidate far slower
//  before is not run at once on a machine where it may be far dearer (the
//  emulated cluster: a hub's one call took 2.2 s on a slowed uplink, 18
//  calls of the best); the best runs while it waits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hetcoll {

struct LearningRules {
  int warm_calls = 4;
  int batch_calls = 4;
  double probe_drop = 1.5;
  double batch_drop = 1.10;
  double clear_margin = 0.05;
  int max_rounds = 3;
  double budget = 0.02;
  double drift = 0.25;
  int drift_windows = 2;
  int window_first = 16;
  int window_most = 256;
  double window_seconds = 1.0;
  int recheck_calls = 2048;
};

class LearnedChoice {
 public:
  enum class Phase { exploring, settled };
  // What the next call runs, and whether the call ends with an exchange
  // (agreed() before the call after it).
  struct Step {
    int candidate = 0;
    bool exchange_after = false;
  };
  // What a candidate measured: agreed means (the slowest rank's), calls.
  struct Measured {
    double sum = 0;  // agreed sums of its batches (s)
    int calls = 0;
    bool dropped = false;
    double mean() const { return calls ? sum / calls : 0; }
  };

  explicit LearnedChoice(int candidates, LearningRules rules = {});

  Step next() const { return {current_, done_in_batch_ + 1 >= batch_}; }
  // This rank's time of the call next() named (s).
  void record(double seconds);
  // This rank's sum since the last exchange: what it contributes.
  double pending() const { return pending_; }
  // The slowest rank's sum of the batch just ended, and what it changed
  // (HETCOLL_DEBUG=explain says it).
  enum class Change { none, settled, reopened, rechecked };
  Change agreed(double slowest_sum);

  Phase phase() const { return phase_; }
  int best() const { return best_; }
  int running() const { return current_; }
  const std::vector<Measured>& measured() const { return measured_; }
  uint64_t calls() const { return calls_; }
  // The site's agreed time so far and what exploring lost of it (s).
  double total() const { return total_; }
  double lost() const { return lost_; }
  int reopened() const { return reopened_; }  // by drift
  int rechecked() const { return rechecked_; }
  const LearningRules& rules() const { return rules_; }

 private:
  void start_batch(int candidate, int calls, bool trial);
  Change explore_next();
  Change after_settled_window(double mean);
  Change reopen();
  // The window after one of `calls` calls of a candidate of this mean (s):
  // doubled, within window_most and window_seconds, never below window_first.
  int next_window(int calls, double mean) const;
  void measure_again();
  bool clear() const;
  int best_measured() const;
  bool probe_affordable(int c) const;

  LearningRules rules_;
  std::vector<Measured> measured_;
  std::vector<int> rounds_done_;  // batches (after the probe) each candidate ran this exploration
  std::vector<double> prior_;     // its mean over the best's when last measured (0: never)
  Phase phase_ = Phase::exploring;
  int current_ = 0, batch_ = 1, done_in_batch_ = 0;
  int uncounted_ = 0;  // the batch's first calls not timed (the site's very first call)
  bool trial_ = false;  // the batch is a trial (a probe or a round's batch), not the best waiting for budget
  double best_mean_at_start_ = 0;
  double pending_ = 0;
  int best_ = 0;
  int round_ = 0;
  uint64_t calls_ = 0;
  double total_ = 0, lost_ = 0;
  // Settled: the mean it settled on, the window, windows out of band in a row.
  double settled_mean_ = 0;
  int window_ = 0, strikes_ = 0;
  int wait_window_ = 0;  // exploring, the budget spent: the best's next window
  uint64_t settled_calls_ = 0;  // since settled
  int reopened_ = 0, rechecked_ = 0;
};

}  // namespace hetcoll

#include "plan/learning.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hetcoll {

LearnedChoice::LearnedChoice(int candidates, LearningRules rules)
    : rules_(rules),
      measured_(size_t(std::max(candidates, 1))),
      rounds_done_(measured_.size(), 0),
      prior_(measured_.size(), 0) {
  if (rules_.warm_calls < 1 || rules_.batch_calls < 1 || rules_.window_first < 1 ||
      rules_.window_most < rules_.window_first || rules_.max_rounds < 1 || rules_.drift_windows < 1 ||
      rules_.recheck_calls < 1 || !(rules_.window_seconds > 0))
    throw std::invalid_argument(
        "learning rules: counts must be at least 1, window_most at least window_first, window_seconds above 0");
  round_ = 1;
  wait_window_ = rules_.window_first;
  start_batch(0, rules_.warm_calls, true);
  ++batch_;  // and the site's first call before them, untimed (first touches, connections)
  uncounted_ = 1;
}

void LearnedChoice::start_batch(int candidate, int calls, bool trial) {
  current_ = candidate;
  batch_ = calls;
  uncounted_ = 0;
  trial_ = trial;
  done_in_batch_ = 0;
  pending_ = 0;
  best_mean_at_start_ = measured_[size_t(best_)].calls ? measured_[size_t(best_)].mean() : 0;
}

void LearnedChoice::record(double seconds) {
  if (done_in_batch_ >= uncounted_) pending_ += std::isfinite(seconds) && seconds > 0 ? seconds : 0;
  ++done_in_batch_;
  ++calls_;
}

int LearnedChoice::best_measured() const {
  int b = -1;
  for (size_t c = 0; c < measured_.size(); ++c) {
    const Measured& m = measured_[c];
    if (m.dropped || !m.calls) continue;
    if (b < 0 || m.mean() < measured_[size_t(b)].mean()) b = int(c);
  }
  return b < 0 ? 0 : b;
}

// Every other candidate still in is clear_margin slower than the best.
bool LearnedChoice::clear() const {
  const double bar = measured_[size_t(best_)].mean() * (1 + rules_.clear_margin);
  for (size_t c = 0; c < measured_.size(); ++c)
    if (int(c) != best_ && !measured_[c].dropped && measured_[c].calls && measured_[c].mean() <= bar) return false;
  return true;
}

LearnedChoice::Change LearnedChoice::agreed(double slowest_sum) {
  const double sum = std::isfinite(slowest_sum) && slowest_sum > 0 ? slowest_sum : 0;
  const int counted = batch_ - uncounted_;
  const double mean = sum / counted;
  total_ += sum;
  if (phase_ == Phase::settled) return after_settled_window(mean);
  // The best's window while the budget waits, out of band: the machine
  // changed under the exploration — what the others measured is stale.
  if (!trial_ && current_ == best_ && measured_[size_t(best_)].calls > 0) {
    const double was = measured_[size_t(best_)].mean();
    if (was > 0 && std::fabs(mean / was - 1) > rules_.drift) return reopen();
  }
  // What trying a candidate that was not the best lost against the best.
  if (trial_ && current_ != best_ && best_mean_at_start_ > 0)
    lost_ += std::max(0.0, sum - best_mean_at_start_ * counted);
  Measured& m = measured_[size_t(current_)];
  m.sum += sum;
  m.calls += counted;
  const bool probe = trial_ && counted == 1 && !uncounted_;  // the warm batch is a round, whatever its size
  if (trial_ && !probe) ++rounds_done_[size_t(current_)];
  best_ = best_measured();
  // Every candidate measured well above the best is dropped: a probe's one
  // call against probe_drop, a batch's against batch_drop (a candidate fine
  // against the best of its time may not be against a faster one found since).
  const double best_mean = measured_[size_t(best_)].mean();
  for (size_t c = 0; c < measured_.size(); ++c) {
    Measured& o = measured_[c];
    if (int(c) == best_ || o.dropped || !o.calls) continue;
    if (o.mean() > (o.calls == 1 ? rules_.probe_drop : rules_.batch_drop) * best_mean) o.dropped = true;
  }
  return explore_next();
}

// The next batch while exploring: probes first, then the round's batches;
// the round complete, settled or another round.
LearnedChoice::Change LearnedChoice::explore_next() {
  for (;;) {
    int next = -1, calls = 0;
    // The probe first: of the candidates not yet run, the one the last
    // exploration measured fastest (the first time: in order).
    int probe = -1;
    for (size_t c = 0; c < measured_.size(); ++c)
      if (!measured_[c].dropped && !measured_[c].calls && (probe < 0 || prior_[c] < prior_[size_t(probe)]))
        probe = int(c);
    const bool probe_waits = probe >= 0 && !probe_affordable(probe);
    if (probe >= 0 && !probe_waits) next = probe, calls = 1;
    for (size_t c = 0; c < measured_.size() && next < 0; ++c)
      if (!measured_[c].dropped && measured_[c].calls && rounds_done_[c] < round_)
        next = int(c), calls = rules_.batch_calls;
    if (next < 0 && probe_waits) {  // only a dear probe left: the best runs while the budget grows
      start_batch(best_, wait_window_, false);
      wait_window_ = next_window(wait_window_, measured_[size_t(best_)].mean());
      return Change::none;
    }
    if (next >= 0) {
      // A probe (one call) is not held to the budget: every candidate gets
      // one early, so a fast one is found at once; its batches are.
      if (calls > 1 && next != best_ && lost_ > rules_.budget * total_) {
        // The budget is spent: the best runs meanwhile, in windows that
        // double (each ends in an exchange, as dear as a small call).
        start_batch(best_, wait_window_, false);
        wait_window_ = next_window(wait_window_, measured_[size_t(best_)].mean());
      } else {
        start_batch(next, calls, true);
        wait_window_ = rules_.window_first;
      }
      return Change::none;
    }
    // A candidate dropped against a best that has since measured slower
    // gets its batch after all: dropped at its probe, in this round (one
    // call is noisy); at a batch, in the next round (the best's windows
    // while the budget waited may have raised its mean past it).
    bool reinstated = false;
    for (size_t c = 0; c < measured_.size(); ++c) {
      Measured& m = measured_[c];
      if (m.dropped && m.calls && m.mean() <= rules_.batch_drop * measured_[size_t(best_)].mean())
        m.dropped = false, reinstated = true;
    }
    if (reinstated) continue;
    if (clear() || round_ >= rules_.max_rounds) break;
    ++round_;
  }
  best_ = best_measured();  // a candidate reinstated in the last round may have measured faster
  phase_ = Phase::settled;
  settled_mean_ = measured_[size_t(best_)].mean();
  window_ = rules_.window_first;
  strikes_ = 0;
  settled_calls_ = 0;
  start_batch(best_, window_, false);
  return Change::settled;
}

LearnedChoice::Change LearnedChoice::after_settled_window(double mean) {
  settled_calls_ += uint64_t(batch_);
  const bool out = settled_mean_ > 0 ? std::fabs(mean / settled_mean_ - 1) > rules_.drift : mean > 0;
  if (!out) {
    strikes_ = 0;
    if (settled_calls_ >= uint64_t(rules_.recheck_calls) && measured_.size() > 1 && lost_ <= rules_.budget * total_) {
      ++rechecked_;
      measure_again();
      return Change::rechecked;
    }
    window_ = next_window(window_, settled_mean_);
    start_batch(best_, window_, false);
    return Change::none;
  }
  if (++strikes_ < rules_.drift_windows) {
    window_ = rules_.window_first;  // confirm it soon
    start_batch(best_, window_, false);
    return Change::none;
  }
  return reopen();
}

// The machine changed: exploring starts afresh, and so does its account —
// what exploring the old machine lost (its probes are not held to the
// budget, and a slow machine's probes are dear) is not held against the new
// one; the budget stays a share of the site's whole time. (Else a choice
// opened again on a slow uplink could not afford to go back when it was
// restored: seen on the emulated cluster.)
LearnedChoice::Change LearnedChoice::reopen() {
  ++reopened_;
  lost_ = 0;
  measure_again();
  return Change::reopened;
}

int LearnedChoice::next_window(int calls, double mean) const {
  int w = std::min(2 * calls, rules_.window_most);
  if (mean > 0 && w * mean > rules_.window_seconds)
    w = int(std::max(double(rules_.window_first), std::min(double(w), std::floor(rules_.window_seconds / mean))));
  return std::max(w, rules_.window_first);
}

// A probe runs at once the first time; measured again, one the last
// exploration found `prior_` times the best's time is held to the budget,
// priced at that many times the best's time now.
bool LearnedChoice::probe_affordable(int c) const {
  const Measured& best = measured_[size_t(best_)];
  const double prior = prior_[size_t(c)];
  if (prior <= 1 || !best.calls) return true;
  return lost_ + (prior - 1) * best.mean() <= rules_.budget * total_;
}

// Exploring again: every candidate measured anew, the running one too (the
// window that showed the change may have straddled it: half of another
// machine). What each measured against the best is kept as its prior: it
// orders the probes and prices the dear ones.
void LearnedChoice::measure_again() {
  const double best_mean = measured_[size_t(best_)].calls ? measured_[size_t(best_)].mean() : 0;
  for (size_t c = 0; c < measured_.size(); ++c)
    if (measured_[c].calls && best_mean > 0) prior_[c] = measured_[c].mean() / best_mean;
  for (size_t c = 0; c < measured_.size(); ++c) measured_[c] = Measured{}, rounds_done_[c] = 0;
  phase_ = Phase::exploring;
  round_ = 1;
  wait_window_ = rules_.window_first;
  explore_next();
}

}  // namespace hetcoll

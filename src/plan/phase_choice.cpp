#include "plan/phase_choice.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "sim/simulator.hpp"
#include "util/error.hpp"
#include "util/work_meter.hpp"

namespace hetcoll {

namespace {

std::string call_key(const Collective& c, const MachineModel& gm) {
  std::string k = cat(int(c.op), ':', c.nranks, ':', c.count, ':', c.elem_size, ':', c.root, ':', int(c.order_free));
  for (uint64_t x : c.counts) k += cat(',', x);
  return k + '|' + gm.spec();
}



// Work a phase's choice may simulate (steps: SimOptions::work_limit; about
// 20 ns each here): each candidate at most kCandidateWork, all of them
// together kPhaseWork. A count, not a clock, so a choice is a function of
// the phase alone, as its cache and every rank building its own program
// need. Without the bounds a model that prices messages at nothing had one
// choice simulate millions of steps.
constexpr uint64_t kCandidateWork = uint64_t(1) << 15;
constexpr uint64_t kPhaseWork = uint64_t(1) << 16;
constexpr size_t kPhaseOps = size_t(1) << 16;  // a candidate's schedule at most
constexpr size_t kSettings = 6;                // settings of one algorithm weighed

// A cache of phase results, bounded.
template <class V>
struct PhaseCache {
  std::mutex mu;
  std::map<std::string, V> map;
  template <class F>
  V get(const std::string& key, F&& make) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = map.find(key);
      if (it != map.end()) return it->second;
    }
    V v = make();
    std::lock_guard<std::mutex> lock(mu);
    if (map.size() > 4096) map.clear();
    return map.emplace(key, std::move(v)).first->second;
  }
};

// One algorithm on one phase, simulated within kCandidateWork (time
// INFINITY when that is not enough or the setting does not fit), cached.
struct Priced {
  double time = INFINITY;
  uint64_t messages = 0, work = 0;
};
Priced price(const std::string& spec, const Collective& sub, const MachineModel& gm) {
  static PhaseCache<Priced> cache;
  return cache.get(spec + '@' + call_key(sub, gm), [&] {
    Priced pr;
    try {
      const Schedule s = generate(spec, sub, gm, -1, std::min<size_t>(kPhaseOps, kCandidateWork / kStepsPerOp));
      const uint64_t built = s.total_ops() * kStepsPerOp;
      SimOptions quiet;
      quiet.timeline = false;
      quiet.work_limit = kCandidateWork - std::min(kCandidateWork - 1, built);
      const SimResult r = simulate(s, gm, quiet);
      pr.time = r.makespan;
      pr.messages = s.message_count();
      pr.work = built + r.work;
    } catch (const TooLarge&) {
      pr.work = kCandidateWork;
    } catch (const InputError&) {  // the setting does not fit this phase
    }
    return pr;
  });
}

// The α-β-γ estimate of a setting on the phase's view (INFINITY: none).
double estimate_of(const Algorithm& a, const std::string& spec, const Collective& sub, const MachineModel& gm) {
  const ClosedForm rank = a.estimate ? a.estimate : a.closed_form;
  if (!rank) return INFINITY;
  try {
    const HockneyParams est = hockney_estimate(gm, sub.size_bytes());
    const AlgorithmChoice ch = choose_algorithm(spec, sub.op);
    const GenContext ctx{sub, gm, ch.params, -1};
    if (auto t = rank(ctx, est)) return est.time(*t);
  } catch (const InputError&) {  // does not fit this phase
  }
  return INFINITY;
}

// The phase's algorithm for `rep`: candidates simulated best estimate
// first (the group's α-β-γ view) within the work bounds; if none fits
// them, the best estimate.
std::string phase_spec(const Collective& rep, const MachineModel& gm) {
  struct Pending {
    double estimate;  // INFINITY: none (after those that have one)
    std::string spec;
  };
  std::vector<Pending> pending;
  for (const Algorithm* a : algorithms_for(rep.op)) {
    if (a->composite) continue;
    if (rep.op == CollOp::allreduce && !rep.order_free && !a->rank_consistent) continue;
    if (a->distinct && !a->distinct(rep, gm)) continue;
    std::vector<std::string> specs;
    if (a->variants) specs = a->variants(rep, gm);
    if (specs.empty()) specs.push_back(a->name);
    if (specs.size() > kSettings) specs.resize(kSettings);
    for (const std::string& spec : specs) pending.push_back({estimate_of(*a, spec, rep, gm), spec});
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.estimate < y.estimate; });
  std::string best;
  double best_time = INFINITY;
  uint64_t work = 0;
  for (const Pending& pnd : pending) {
    if (work >= kPhaseWork) break;
    const Priced pr = price(pnd.spec, rep, gm);
    work += pr.work;
    if (pr.time < best_time * (1 - 1e-9)) best = pnd.spec, best_time = pr.time;
  }
  // Nothing could be simulated within the bounds (a phase of hundreds of
  // ranks): the best estimate.
  if (best.empty() && !pending.empty() && std::isfinite(pending.front().estimate)) best = pending.front().spec;
  if (best.empty()) throw InputError(cat("no algorithm fits the phase ", rep.describe()));
  return best;
}

// The choice is made for the phase's size class, on its representative
// (schedule/collective.hpp): calls of one class — the many nearly equal
// pieces and shares of a hierarchical schedule among them — share it.
PhaseChoice choose_phase(const Collective& sub, const MachineModel& gm) {
  static PhaseCache<std::string> specs;
  const Collective rep = representative(sub);
  std::string spec = specs.get(call_key(rep, gm), [&] { return phase_spec(rep, gm); });
  // The class's choice, priced on this phase itself (by its estimate where
  // simulating it would take more than a candidate may).
  Priced pr = price(spec, sub, gm);
  if (!std::isfinite(pr.time) && pr.work < kCandidateWork) {  // does not fit this very call: choose for it alone
    spec = phase_spec(sub, gm);
    pr = price(spec, sub, gm);
  }
  PhaseChoice pc{spec, pr.time, pr.messages};
  if (!std::isfinite(pc.time)) {
    for (const Algorithm* a : algorithms_for(sub.op))
      if (spec.compare(0, a->name.size(), a->name) == 0 && (spec.size() == a->name.size() || spec[a->name.size()] == '['))
        pc.time = estimate_of(*a, spec, sub, gm);
  }
  return pc;
}

struct Planned final : PhaseChooser {
  PhaseChoice choose(const Collective& sub, const MachineModel& gm) const override { return choose_phase(sub, gm); }
};

}  // namespace

const PhaseChooser& planned_phases() {
  static const Planned chooser;
  return chooser;
}

}  // namespace hetcoll

#include "plan/pricing.hpp"

#include <algorithm>
#include <cmath>

#include "model/hockney_model.hpp"
#include "model/profile_model.hpp"
#include "model/units.hpp"
#include "plan/build_schedule.hpp"
#include "plan/phase_choice.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

bool tied(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1e-30, std::fabs(a), std::fabs(b)}); }

// The parameter settings of `a` to evaluate for this call.
std::vector<std::string> specs_of(const Algorithm& a, const Collective& c, const MachineModel& m) {
  std::vector<std::string> v;
  if (a.variants) v = a.variants(c, m);
  if (v.empty()) v.push_back(a.name);
  return v;
}

// A setting's algorithm and the names of its parameters, without their
// values: "hierarchical[pieces=4,shares=1]" -> "hierarchical[pieces,shares]".
// Settings of one family are priced by one estimate.
std::string parameters_named(const std::string& spec) {
  std::string out;
  bool value = false;
  for (char ch : spec) {
    if (ch == '=') value = true;
    else if (ch == ',' || ch == ']') value = false;
    if (!value) out += ch;
  }
  return out;
}

// The decision's steps of simulation ran out inside a candidate.
struct WorkSpent {};

// ops: set to the number of ops generated and simulated; work: the steps
// of the simulation (at most work_limit, else WorkSpent).
Candidate simulate_candidate(const std::string& spec, const Collective& c, const MachineModel& m,
                             const PlanOptions& opt, size_t op_limit, uint64_t work_limit, uint64_t& ops,
                             uint64_t& work) {
  Schedule s = build_schedule(spec, c, m, -1, op_limit);
  ops = s.total_ops();
  SimOptions so;
  so.timeline = false;
  so.critical_path = opt.explain;
  so.rank_map = opt.rank_map;
  const uint64_t built = ops * kStepsPerOp;
  if (work_limit && built >= work_limit) throw WorkSpent{};
  so.work_limit = work_limit ? work_limit - built : 0;
  SimResult r;
  try {
    r = simulate(s, m, so);
  } catch (const TooLarge&) {
    throw WorkSpent{};
  }
  work = built + r.work;
  Candidate cand;
  cand.algorithm = s.algorithm;
  cand.predicted = r.makespan;
  cand.split = r.path;
  cand.messages = s.message_count();
  if (auto* h = dynamic_cast<const HockneyModel*>(&m); h && opt.explain) {
    cand.has_terms = true;
    cand.terms = {h->alpha() > 0 ? r.path.latency / h->alpha() : 0, h->beta() > 0 ? r.path.bandwidth / h->beta() : 0,
                  h->gamma() > 0 ? r.path.compute / h->gamma() : 0};
  }
  return cand;
}

// About how many ops a candidate's schedule has, from the programs of two
// ranks (the first and the last), built alone: the first rank's plus the
// last's for every other rank. Capped at limit + 1 (more than the budget).
uint64_t likely_ops(const std::string& spec, const Collective& c, const MachineModel& m, size_t limit) {
  const int p = c.nranks;
  try {
    const uint64_t first = build_schedule(spec, c, m, 0, limit).num_ops(0);
    if (p == 1) return first;
    const uint64_t last = build_schedule(spec, c, m, p - 1, limit).num_ops(p - 1);
    return std::min<uint64_t>(uint64_t(limit) + 1, first + last * uint64_t(p - 1));
  } catch (const TooLarge&) {
    return uint64_t(limit) + 1;
  } catch (const InputError&) {  // does not fit the call: unknown, and the simulation says why
    return 0;
  }
}

}  // namespace

std::optional<std::string> disqualified(const Algorithm& a, const Collective& c) {
  if (!a.supports(c.op)) return cat(a.name, " does not implement ", coll_op_name(c.op));
  if (!counts_known_everywhere(c.op) && !a.local_counts)
    return cat(a.name, " needs every rank's counts, which ", coll_op_name(c.op), " does not give every rank");
  if (c.op == CollOp::allreduce && !c.order_free && !a.rank_consistent)
    return cat(a.name, " combines in a different order on each rank: a floating-point allreduce needs identical results");
  return std::nullopt;
}

std::vector<size_t> candidate_order(std::vector<Candidate>& cands, const std::vector<size_t>& registry_index,
                                    const std::function<uint64_t(const Candidate&)>& messages) {
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return cands[x].predicted < cands[y].predicted && !tied(cands[x].predicted, cands[y].predicted);
  });
  size_t ties = 1;
  while (ties < order.size() && tied(cands[order[ties]].predicted, cands[order[0]].predicted)) ++ties;
  if (ties > 1) {
    for (size_t i = 0; i < ties; ++i) {
      Candidate& c = cands[order[i]];
      if (c.messages == 0) c.messages = messages(c);
    }
    std::stable_sort(order.begin(), order.begin() + long(ties), [&](size_t x, size_t y) {
      if (cands[x].messages != cands[y].messages) return cands[x].messages < cands[y].messages;
      return registry_index[x] < registry_index[y];
    });
  }
  return order;
}

void rank_candidates(std::vector<Candidate>& cands, const std::vector<size_t>& registry_index,
                     const std::function<uint64_t(const Candidate&)>& messages) {
  const std::vector<size_t> order = candidate_order(cands, registry_index, messages);
  std::vector<Candidate> sorted;
  sorted.reserve(cands.size());
  for (size_t i : order) sorted.push_back(std::move(cands[i]));
  cands = std::move(sorted);
}

namespace {

// One call's candidates being weighed (plan()): those priced exactly by a
// closed form go straight into `res`; the others wait in `pending` to be
// simulated, best estimate first, or priced by their estimates.
struct Weighing {
  const Collective& coll;
  const MachineModel& model;
  const PlanOptions& opt;
  std::optional<HockneyParams> closed;  // the model as Hockney's, where closed forms apply
  HockneyParams hockney{0, 0, 0};
  PlanResult res;
  std::vector<size_t> registry_index;  // per candidate of res, its algorithm's registry index
  struct Pending {
    const Algorithm* a;
    std::string spec;
    double estimate;      // INFINITY: unknown
    uint64_t likely_ops;  // from the estimate's terms; 0: unknown
    // The estimate is a price that holds on this model (rounds priced on
    // the model itself, or a postal tree's exact estimate on the postal
    // model): unsimulated, it competes as it is, neither scaled nor
    // ranked after the simulated candidates.
    bool holds = false;
    uint64_t messages = 0;  // from the rounds (0: unknown)
    // A composite's estimate known to be rough (Terms::rough): ranked as an
    // estimate, after the priced candidates, not as its phases' price.
    bool rough = false;
    uint64_t parts_messages = 0;  // a composite's messages by its estimate (0: unknown)
  };
  std::vector<Pending> pending;
  // A composite's price from its phases against its schedule's simulation
  // (a setting of the algorithm simulated here), and the candidates still
  // priced by their phases (index in res.candidates, the phases' price):
  // scale_parts() puts the second on the first's scale.
  struct PartsSeen {
    std::string family;  // parameters_named()
    uint64_t messages;
    double ratio;      // simulated / phases' price
  };
  struct PartsPriced {
    size_t index;
    uint64_t messages;
    double price;
  };
  std::vector<PartsSeen> parts_seen;
  std::vector<PartsPriced> parts_priced;
  std::vector<double> ratios;     // simulated / estimated, for the candidates that have both
  std::vector<size_t> estimated;  // indices in res.candidates priced by their estimates
  // The budgets (set_budgets()): a machine with a network (shared links,
  // subnets) simulates more; ops generated and simulated in all; steps of
  // simulation in all (0: no limit).
  bool networked = false;
  uint64_t budget = UINT64_MAX, work_budget = 0;
  // Steps left for simulating the first candidates (simulate_first()):
  // kVerifyFactor more work_budgets, shared by all of them (0 with no limit).
  uint64_t first_work = 0;
  bool first_spent = false;

  Weighing(const Collective& c, const MachineModel& m, const PlanOptions& o) : coll(c), model(m), opt(o) {}
  void collect();
  void set_budgets();
  void simulate_pending();
  void finish();
  std::vector<size_t> order();
  bool simulated(const Candidate& c) const;  // its price its schedule's simulation (or exact)
  bool simulate_first(size_t i);
  void scale_parts();
};

// Every setting of every algorithm for the call: closed forms priced now,
// the others (the best few by estimate, where there are many) pending.
void Weighing::collect() {
  for (const Algorithm* a : algorithms_for(coll.op)) {
    if (!qualifies(*a, coll)) continue;
    if (a->distinct && !a->distinct(coll, model)) continue;
    std::vector<std::string> exact, others;
    std::vector<Terms> exact_terms;
    for (auto& spec : specs_of(*a, coll, model)) {
      std::optional<Terms> cf;
      if (closed && a->closed_form) cf = closed_form(choose_algorithm(spec, coll.op), coll, model);
      if (cf) {
        exact.push_back(spec);
        exact_terms.push_back(*cf);
      } else {
        others.push_back(spec);
      }
    }
    // Settings without an exact closed form are simulated; with many of
    // them only the best few by the estimate (or closed form) on the model's
    // α-β-γ view.
    struct Ranked {
      double e;
      std::string spec;
      uint64_t ops;
      bool holds;
      uint64_t messages;
      bool rough;
      uint64_t parts_messages;
    };
    std::vector<Ranked> ranked;
    ClosedForm rank = a->estimate ? a->estimate : a->closed_form;
    HockneyParams est = hockney_estimate(model, coll.size_bytes());
    const bool postal = model.kind() == "postal";
    for (auto& s : others) {
      Ranked r{INFINITY, s, 0, false, 0, false, 0};
      AlgorithmChoice ch = choose_algorithm(s, coll.op);
      GenContext ctx{coll, model, ch.params, -1, 0, &planned_phases()};
      try {
        std::vector<Round> rounds;
        if (a->rounds) rounds = a->rounds(ctx);
        if (!rounds.empty()) {  // priced on the model itself
          const RoundsPrice rp = price_rounds(model, coll.nranks, rounds);
          r.e = rp.time;
          r.holds = true;
          r.messages = rp.messages;
          r.ops = 2 * rp.messages;
        } else if (rank) {
          if (auto t = rank(ctx, est)) {
            r.e = est.time(*t);
            // A postal tree's estimate is exact on the postal model.
            r.holds = postal && t->postal_exact;
            r.rough = t->rough;
            r.parts_messages = t->messages;
            // A send and a receive per message; without a count, every rank
            // takes part in each step on the critical path.
            r.ops = t->ops         ? t->ops
                    : t->messages ? 2 * t->messages
                                  : 2 * uint64_t(coll.nranks) * uint64_t(std::max(1.0, std::ceil(t->alpha)));
          }
        }
      } catch (const InputError&) {  // the setting does not fit the call: the simulation says so below
      } catch (const TooLarge&) {    // more pieces than a schedule may have: the simulation says so too
      }
      ranked.push_back(std::move(r));
    }
    if (ranked.size() > opt.max_simulated_variants && rank) {
      // The best estimates kept; a rough one counts as none (its setting's
      // rank among the others is unknown): such settings keep their order.
      auto key = [](const Ranked& r) { return r.rough ? INFINITY : r.e; };
      std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
      ranked.resize(opt.max_simulated_variants);
    }
    for (auto& r : ranked) pending.push_back({a, r.spec, r.e, r.ops, r.holds, r.messages, r.rough, r.parts_messages});
    for (size_t i = 0; i < exact.size(); ++i) {
      const Terms& t = exact_terms[i];
      Candidate cand;
      cand.algorithm = exact[i];
      cand.closed_form = true;
      cand.has_terms = true;
      cand.terms = t;
      cand.predicted = hockney.time(t);
      cand.split = {t.alpha * hockney.alpha, t.beta * hockney.beta, t.gamma * hockney.gamma, 0};
      cand.messages = t.messages;
      if (opt.explain && !cand.messages) {
        try {
          cand.messages = build_schedule(exact[i], coll, model, -1, opt.op_limit).message_count();
        } catch (const TooLarge&) {
        }
      }
      res.candidates.push_back(std::move(cand));
      registry_index.push_back(size_t(a - registry().data()));
    }
  }
}

void Weighing::set_budgets() {
  // A machine with a network (shared links, subnets): estimates cannot see
  // the sharing, so more is simulated.
  networked = model.topology() != nullptr;
  const uint64_t factor =
      networked ? std::max<uint64_t>(1, kNetworkBudgetFactor * kNetworkBudgetRanks / uint64_t(std::max(coll.nranks, kNetworkBudgetRanks)))
                : 1;
  budget = opt.sim_budget ? opt.sim_budget * factor : UINT64_MAX;
  // And the steps simulated: past kNetworkBudgetRanks on a network they
  // fall as 1/p too (a message there is a step for every link it shares),
  // to a quarter at most: the trees and composites that only the simulator
  // prices still fit (a hierarchical barrier of 4096 ranks).
  work_budget = networked && opt.work_budget && coll.nranks > kNetworkBudgetRanks
                    ? opt.work_budget * uint64_t(kNetworkBudgetRanks) / uint64_t(std::min(coll.nranks, 4 * kNetworkBudgetRanks))
                    : opt.work_budget;
  first_work = work_budget * kVerifyFactor;
}

// The pending candidates simulated within the budgets, or priced by estimate.
void Weighing::simulate_pending() {
  // Simulate, best estimate first, skipping (unless explaining; on Hockney
  // models only) settings whose estimate is 1.5× the best time known so far
  // or more: they are not going to win. Candidates without an estimate go first (only the
  // simulator can price them). The budget bounds the ops generated and
  // simulated; past it a candidate is priced by its estimate.
  double best = INFINITY;
  for (auto& c : res.candidates) best = std::min(best, c.predicted);
  // A rough estimate (Terms::rough) is not put ahead of better-priced
  // settings by a price that may be a third off: up to kNetworkBudgetRanks
  // it orders like none (with those only the simulator can price, in
  // registry order, first); past them, where little is simulated, after
  // every setting with a better price.
  const bool few = coll.nranks <= kNetworkBudgetRanks;
  std::stable_sort(pending.begin(), pending.end(), [few](const Pending& x, const Pending& y) {
    const bool ux = std::isinf(x.estimate) || (few && x.rough), uy = std::isinf(y.estimate) || (few && y.rough);
    if (ux != uy) return ux;
    if (ux) return false;
    if (x.rough != y.rough) return y.rough;
    return x.estimate < y.estimate;
  });
  std::vector<const Algorithm*> too_large;  // algorithms with a setting too large for the budget
  uint64_t work = 0;                        // steps simulated (work_budget)
  for (auto& pnd : pending) {
    // Only where the model's prices are its closed forms (Hockney): there a
    // setting priced 1.5x the best or more needs no simulation to lose — an
    // estimate is dropped, a price that holds listed as it is. Elsewhere
    // rounds can be off by 2x (eager sends sharing a network): what fits the
    // budget is simulated. (Explaining changes nothing: the decision is the
    // MPI layer's.)
    const bool outpriced = closed && std::isfinite(pnd.estimate) && pnd.estimate > 1.5 * best;
    if (outpriced && !pnd.holds) continue;
    // Past kNetworkBudgetRanks on a network, a price that holds is taken as
    // it is: simulating such a schedule (p·log p messages and more, every
    // one sharing the links again) would spend the decision on it.
    const bool held = pnd.holds && networked && coll.nranks > kNetworkBudgetRanks;
    const uint64_t left = budget - std::min(budget, res.simulated_ops);
    // Within the steps left too: a schedule is not built to be simulated
    // when building it alone would take them.
    const uint64_t steps_left = work_budget ? (work_budget - std::min(work_budget, work)) / kStepsPerOp : left;
    const size_t limit = size_t(std::min<uint64_t>({opt.op_limit, left, steps_left}));
    bool priced = false;
    // A setting of an algorithm whose better setting did not fit will not
    // either (their sizes differ little); looking costs a generation.
    const bool sibling_too_large = std::find(too_large.begin(), too_large.end(), pnd.a) != too_large.end();
    // Every rank takes part in some message: at least a send and a receive per rank.
    const uint64_t at_least = 2 * uint64_t(coll.nranks - 1);
    if ((outpriced && pnd.holds && budget != UINT64_MAX) || (held && budget != UINT64_MAX)) {
      // priced below, by the estimate
    } else if (limit > 0 && budget != UINT64_MAX &&
        (sibling_too_large || pnd.likely_ops > limit || at_least > limit ||
         (!pnd.likely_ops && likely_ops(pnd.spec, coll, model, limit) > limit))) {
      res.simulated_ops += 2;  // looked at two ranks' programs: too large to simulate now
      too_large.push_back(pnd.a);
    } else if (limit > 0 && (!work_budget || work < work_budget)) {
      // A candidate with an estimate to fall back on takes at most half the
      // steps left: a schedule beyond them (thousands of messages sharing a
      // network's links) does not leave the candidates after it
      // unsimulated. One without (only the simulator prices it; a rough
      // one, which orders like none up to kNetworkBudgetRanks) may take
      // them all.
      const bool unpriced = !std::isfinite(pnd.estimate) || (few && pnd.rough);
      const uint64_t left_work = work_budget - std::min(work_budget, work);
      const uint64_t share = !work_budget ? 0 : unpriced ? left_work : std::max<uint64_t>(1, left_work / 2);
      try {
        uint64_t ops = 0, steps = 0;
        res.candidates.push_back(simulate_candidate(pnd.spec, coll, model, opt, limit, share, ops, steps));
        res.simulated_ops += ops;
        work += steps;
        priced = true;
        if (std::isfinite(pnd.estimate) && pnd.estimate > 0 && !pnd.holds) {
          ratios.push_back(res.candidates.back().predicted / pnd.estimate);
          if (pnd.a->composite && !pnd.rough)
            parts_seen.push_back({parameters_named(pnd.spec), pnd.parts_messages,
                                  res.candidates.back().predicted / pnd.estimate});
        }
      } catch (const TooLarge&) {
        res.simulated_ops += limit;  // generated up to the limit before giving up
        too_large.push_back(pnd.a);
      } catch (const WorkSpent&) {
        work += share;  // spent: the candidate is priced by its estimate
      } catch (const InputError&) {  // the setting does not fit this call (a structure the model lacks)
        res.skipped.push_back(pnd.spec);
        continue;
      }
    }
    if (!priced) {
      if (!std::isfinite(pnd.estimate)) {
        res.skipped.push_back(pnd.spec);
        continue;
      }
      Candidate cand;
      cand.algorithm = choose_algorithm(pnd.spec, coll.op).spec();
      cand.holds = pnd.holds;
      cand.estimated = !pnd.holds;
      cand.from_parts = pnd.a->composite && !pnd.rough;
      cand.predicted = pnd.estimate;
      cand.messages = pnd.messages;
      if (cand.estimated && !cand.from_parts) estimated.push_back(res.candidates.size());
      if (cand.from_parts) parts_priced.push_back({res.candidates.size(), pnd.parts_messages, pnd.estimate});
      res.candidates.push_back(std::move(cand));
    }
    best = std::min(best, res.candidates.back().predicted);
    registry_index.push_back(size_t(pnd.a - registry().data()));
  }
}

// The order the candidates rank in (indices into res.candidates): by price,
// ties to fewer messages; off Hockney models the estimated after the
// priced (below).
std::vector<size_t> Weighing::order() {
  // Ties go to fewer messages: counted by building the schedule, within the limits.
  std::vector<size_t> ord = candidate_order(res.candidates, registry_index, [&](const Candidate& c) -> uint64_t {
    if (c.holds) return c.messages ? c.messages : UINT64_MAX;  // from its rounds
    if (c.estimated) return UINT64_MAX;  // too large to build within the budget: unknown
    try {
      return build_schedule(c.algorithm, coll, model, -1, opt.sim_budget ? std::min(opt.sim_budget, opt.op_limit) : opt.op_limit)
          .message_count();
    } catch (const TooLarge&) {
      return UINT64_MAX;
    }
  });
  // Off Hockney models an estimate is no price (it cannot see shared links,
  // overlapping overheads): where anything was simulated, estimated
  // candidates rank after it.
  // But a price known to hold is no reason to keep a choice many times
  // worse than a rough one: without a network (whose sharing estimates
  // cannot see: there they run 10x and more below the simulation), an
  // estimate below 1/kRoughMargin of the best priced candidate wins even if
  // it is that far off (reduce over 1552 ranks on the postal model:
  // star_reduce's 1551 rounds against binomial_reduce's estimated 13.5).
  auto priced = [](const Candidate& c) { return !c.estimated || c.from_parts || c.holds; };
  const auto& cands = res.candidates;
  if (!closed && std::any_of(cands.begin(), cands.end(), priced)) {
    double best_priced = INFINITY;
    for (const Candidate& c : cands)
      if (priced(c)) best_priced = std::min(best_priced, c.predicted);
    auto ahead = [&](size_t i) {
      return priced(cands[i]) || (!networked && cands[i].predicted * kRoughMargin < best_priced);
    };
    std::stable_partition(ord.begin(), ord.end(), ahead);
  }
  return ord;
}

// Candidate i, ranked first (or close to it) and not simulated, simulated:
// its schedule's price replaces the one it was ranked by. False where it needs no
// simulation (simulated, an exact closed form, a price that holds off a
// network) or may not have one: a price that holds past kNetworkBudgetRanks
// on a network (simulate_pending()), or a schedule beyond the decision's
// ops, or beyond the steps left of kVerifyFactor work_budgets that all such
// simulations share.
bool Weighing::simulated(const Candidate& c) const {
  return !(c.estimated || c.from_parts || (c.holds && networked));
}

bool Weighing::simulate_first(size_t i) {
  const Candidate& c = res.candidates[i];
  if (simulated(c) || (c.holds && coll.nranks > kNetworkBudgetRanks) || first_spent) return false;
  const size_t limit = size_t(std::min<uint64_t>(opt.op_limit, budget));
  try {
    uint64_t ops = 0, steps = 0;
    if (budget != UINT64_MAX && likely_ops(c.algorithm, coll, model, limit) > limit) return false;
    Candidate sim = simulate_candidate(c.algorithm, coll, model, opt, limit, first_work, ops, steps);
    res.simulated_ops += ops;
    for (const PartsPriced& pp : parts_priced)
      if (pp.index == i && c.from_parts && pp.price > 0)
        parts_seen.push_back({parameters_named(c.algorithm), pp.messages, sim.predicted / pp.price});
    if (first_work) first_work -= std::min(first_work, steps), first_spent = first_work == 0;
    res.candidates[i] = std::move(sim);
    return true;
  } catch (const TooLarge&) {
  } catch (const WorkSpent&) {
    first_spent = work_budget != 0;  // spent inside it: the steps are gone
  } catch (const InputError&) {
  }
  return false;
}

// A composite still priced by its phases, where a setting of its family
// (parameters_named(): the same parameters, other values) with as many
// messages or fewer was simulated here and ran slower than its
// phases' price: priced as that much slower (the largest such ratio). The
// phases' price assumes a piece's phases overlap the next piece's; on
// links both use they take turns, and more pieces are most often no less
// off (hierarchical[pieces=16] priced 7.1 ms by its phases on a fat tree
// whose racks share their uplinks, simulated at 19.2 and run in SimGrid at
// 20.8, where pieces=2 simulated 1.54x its phases' price). Never scaled
// down: a price that held for fewer pieces says nothing of more. A guess,
// not a price (on fat_tree32, bcast 1 MiB, pieces=2 was 1.57x off and
// pieces=16 1.15x): finish() simulates such a candidate where its unscaled
// price is close to the first's.
void Weighing::scale_parts() {
  for (const PartsPriced& pp : parts_priced) {
    Candidate& c = res.candidates[pp.index];
    if (!c.from_parts) continue;  // simulated since
    double scale = 1;
    const std::string family = parameters_named(c.algorithm);
    for (const PartsSeen& s : parts_seen)
      if (s.family == family && (!pp.messages || s.messages <= pp.messages))
        scale = std::max(scale, s.ratio);
    c.predicted = pp.price * scale;
    c.parts_scale = scale;
  }
}

// Estimated prices put on the simulator's scale, and the candidates ranked;
// the first, where it was not simulated, simulated and ranked again, and so
// those priced within kCloseToFirst of it (up to kSimulatedFirst in all):
// the choice is made on the price of what it runs.
void Weighing::finish() {
  // Estimates and the simulator disagree by a factor that depends on the
  // model (receives that share the CPU, per-size costs): put the estimated
  // candidates on the simulator's scale by the median ratio seen here.
  if (!estimated.empty() && !ratios.empty()) {
    std::nth_element(ratios.begin(), ratios.begin() + long(ratios.size() / 2), ratios.end());
    const double scale = ratios[ratios.size() / 2];
    for (size_t i : estimated) res.candidates[i].predicted *= scale;
  }
  if (res.candidates.empty()) {
    if (!res.skipped.empty())
      throw TooLarge(cat("no ", coll_op_name(coll.op), " schedule for ", coll.nranks,
                         " ranks can be priced: each is larger than the ", opt.sim_budget ? opt.sim_budget : opt.op_limit,
                         " operations a decision simulates, and none has a closed-form estimate"));
    throw InputError(cat("no algorithm implements ", coll_op_name(coll.op)));
  }
  scale_parts();
  std::vector<size_t> ord = order();
  std::vector<bool> tried(res.candidates.size(), false);
  for (int k = 0; k < kSimulatedFirst; ++k) {
    // The first candidate, or one priced within kCloseToFirst of it, not
    // simulated yet: a price that may be a few percent off decides a near tie.
    const double close = res.candidates[ord[0]].predicted * (1 + kCloseToFirst);
    // A phases' price scaled by its siblings' (scale_parts()) is close where
    // its unscaled price is: the scale is their error, not its own.
    auto hopeful = [&](const Candidate& c) { return c.from_parts ? c.predicted / c.parts_scale : c.predicted; };
    auto next = std::find_if(ord.begin(), ord.end(), [&](size_t i) {
      return !tried[i] && (i == ord[0] || hopeful(res.candidates[i]) <= close) && !simulated(res.candidates[i]);
    });
    if (next == ord.end()) break;
    tried[*next] = true;
    if (simulate_first(*next)) scale_parts(), ord = order();
  }
  std::vector<Candidate> sorted;
  sorted.reserve(ord.size());
  for (size_t i : ord) sorted.push_back(std::move(res.candidates[i]));
  res.candidates = std::move(sorted);
}

}  // namespace

PlanResult plan(const Collective& coll, const MachineModel& model, const PlanOptions& opt) {
  coll.check();
  // Generators and the simulator see the group's ranks as model ranks (the
  // topology of a hierarchical algorithm is the group's).
  if (!opt.rank_map.empty() || model.maps_hosts()) {
    ModelPtr gm = group_model(ModelPtr(ModelPtr(), &model), opt.rank_map, coll.nranks);
    PlanOptions o = opt;
    o.rank_map.clear();
    return plan(coll, *gm, o);
  }
  check_model_fits(coll, model);  // a property of the call, not of a candidate: said, not skipped
  Weighing w{coll, model, opt};
  w.res.unit = model.unit();
  // Closed forms describe ranks as the model has them, in order.
  w.closed = opt.rank_map.empty() ? closed_form_model(model) : std::nullopt;
  w.hockney = w.closed.value_or(HockneyParams{0, 0, 0});
  w.collect();
  w.set_budgets();
  w.simulate_pending();
  w.finish();
  return std::move(w.res);
}

}  // namespace hetcoll

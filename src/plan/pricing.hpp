// Pricing the candidates of one call: every registered algorithm that may
// run it, every parameter setting it asks to be tried, each priced, sorted
// cheapest first. The planner (plan/planner.hpp) decides from this and
// keeps the decisions.
//
// plan() evaluates, for one call, every registered algorithm that qualifies
// for it (qualifies()). Evaluation: the exact closed form where the
// algorithm has one for this call and closed forms apply to the model
// (closed_form_model()), otherwise the simulator on the schedule itself. An
// algorithm with many variants without closed forms is pruned to the best
// few by its estimate on the model's α-β-γ view first. Ties (within 1e-9)
// go to fewer messages, then to the earlier registry entry.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "model/cost_terms.hpp"
#include "sim/simulator.hpp"

namespace hetcoll {

struct Candidate {
  std::string algorithm;     // a spec that rebuilds the schedule
  double predicted = 0;      // in the model's unit
  bool closed_form = false;  // from an exact closed form (else simulated)
  // Not simulated: the decision's simulation budget was spent. predicted is
  // the algorithm's α-β-γ estimate on the model, scaled by how the
  // simulated candidates of the same decision compared with theirs.
  bool estimated = false;
  // The estimate adds up simulations of the algorithm's parts (a composite:
  // each phase's choice simulated on its group): a price like a simulated
  // one, neither scaled nor ranked after the simulated candidates.
  bool from_parts = false;
  // from_parts: its phases' price times this, how much slower than their
  // phases' prices the algorithm's settings with as many messages or fewer
  // were simulated in the same decision (1: none slower).
  double parts_scale = 1;
  // Not simulated, priced by an estimate that holds on this model: the
  // algorithm's rounds priced on the model itself (sim/rounds.hpp), or a
  // postal tree's exact formula on the postal model. It competes as it is.
  bool holds = false;
  CostSplit split;           // latency / bandwidth / compute (explain)
  bool has_terms = false;    // Hockney: terms in α, β-bytes, γ-bytes
  Terms terms;
  uint64_t messages = 0;     // all messages of the schedule (0: not built)
};

// Ops a decision generates and simulates at most (PlanOptions::sim_budget):
// a few milliseconds of work on one core.
constexpr size_t kDecisionSimOps = size_t(1) << 15;
// On a model with a topology (shared links) a decision simulates up to this
// many times more: there rough estimates miss the sharing. The factor falls
// as 1/p past kNetworkBudgetRanks ranks (at 2048 and more: none), where the
// large regular schedules are priced by their rounds and simulating costs
// more per candidate.
constexpr size_t kNetworkBudgetFactor = 8;
// (kNetworkBudgetRanks: algorithms/registry.hpp)
// An estimated candidate ranks after the candidates priced otherwise,
// unless (on a model without a network) its estimate is below
// 1/kRoughMargin of their best.
constexpr double kRoughMargin = 4;
// Steps of simulation (SimOptions::work_limit) a decision's candidates take
// at most in all, 40-80 ms here: on a network a schedule of few ops can
// take many steps (every message that starts or ends shares the links
// again). A candidate past it is priced by its estimate. A count, not a
// clock: a decision stays a function of the call.
constexpr uint64_t kDecisionWork = uint64_t(1) << 21;
// A candidate ranked first by a price that is not its schedule's simulation
// (an estimate, its phases' prices, its rounds on a network) is simulated,
// within the decision's ops and kVerifyWork steps that all such
// simulations share, and the candidates ranked again: up to this many
// times. Its price is then what it runs (a composite's phases
// priced 15.8 ms simulated at 57 ms: scripts/regret.py --generated).
// So is a candidate priced within kCloseToFirst of the first (a near tie
// decided by a price a few percent off: direct_allgather's rounds 1.03 ms,
// simulated 0.96, behind a simulated 1.03).
constexpr int kSimulatedFirst = 6;
// Twice a decision's work: the candidates ranked first are the ones whose
// price decides, and a composite of many pieces on a network needs more
// steps than the others (hierarchical[pieces=16], 9 216 messages over a
// fat tree's shared uplinks: 2.2 M steps, 80 ms).
// (A decision's own work, PlanOptions::work_budget, times kVerifyFactor.)
constexpr uint64_t kVerifyFactor = 2;
constexpr uint64_t kVerifyWork = kVerifyFactor * kDecisionWork;
constexpr double kCloseToFirst = 0.10;

struct PlanOptions {
  bool explain = false;                 // critical-path split and message counts for every candidate
  size_t max_simulated_variants = 8;    // per algorithm, without closed forms
  std::vector<int> rank_map;            // group rank → model rank
  size_t op_limit = kMaxScheduleOps;    // candidates with more ops are not simulated
  // Ops generated and simulated per decision, over all candidates (0: no
  // limit). Candidates are simulated best estimate first; once the budget
  // is spent the rest are ranked by their estimates. This bounds a first
  // decision's cost at any number of ranks.
  size_t sim_budget = kDecisionSimOps;
  uint64_t work_budget = kDecisionWork;  // steps of simulation in all (0: no limit)
};

struct PlanResult {
  std::string unit;
  uint64_t simulated_ops = 0;         // ops generated and simulated for this plan
  std::vector<Candidate> candidates;  // best first
  std::vector<std::string> skipped;   // too large to simulate (more than op_limit ops)
  const Candidate& best() const { return candidates.front(); }
};

// Whether `a` may run this call: it implements the collective; for
// gatherv, scatterv and alltoallv it needs only a rank's own counts; for a
// floating-point allreduce every rank gets identical bits. The reason when
// not, else nullopt.
std::optional<std::string> disqualified(const Algorithm& a, const Collective& c);
inline bool qualifies(const Algorithm& a, const Collective& c) { return !disqualified(a, c); }

PlanResult plan(const Collective& coll, const MachineModel& model, const PlanOptions& opt = {});

// Candidates best first: by predicted time; among ties (relative 1e-9) by
// fewer messages (`messages` fills in a candidate's count when asked for it),
// then by registry position.
void rank_candidates(std::vector<Candidate>& cands, const std::vector<size_t>& registry_index,
                     const std::function<uint64_t(const Candidate&)>& messages);
// The same order as indices into cands (which it leaves in place).
std::vector<size_t> candidate_order(std::vector<Candidate>& cands, const std::vector<size_t>& registry_index,
                                    const std::function<uint64_t(const Candidate&)>& messages);

}  // namespace hetcoll

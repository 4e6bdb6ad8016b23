// The planner: the one place where hetcoll chooses an algorithm.
//
// plan() evaluates, for one call, every registered algorithm that qualifies
// for it (qualifies()) — every parameter setting it asks to be tried — and
// sorts them, cheapest first. Evaluation: the exact closed form where the
// algorithm has one for this call and closed forms apply to the model
// (closed_form_model()), otherwise the simulator on the schedule itself. An
// algorithm with many variants without closed forms is pruned to the best
// few by its estimate on the model's α-β-γ view first. Ties (within 1e-9)
// go to fewer messages, then to the earlier registry entry.
//
// Planner::decide() is the policy every caller uses — the MPI layer for a
// real call, the command line for `hetcoll plan`: overrides first, then a
// measured decision of the profile for the call's size class and the
// group's layout on the hosts (hetcoll tune; the native MPI may be its
// winner), then the cheapest predicted candidate for the call's size class. A decision is a pure
// function of what every rank of the call knows (op, group, root, element
// size, order-freedom, the size, model, overrides), never of which calls a
// rank saw before: a call is planned as the *representative* of its size
// class (representative()), so every call of one class gets the same
// decision whichever of them came first, and the cache only remembers it.
// Each decision simulates at most PlanOptions::sim_budget ops in all
// (candidates in order of their α-β-γ estimates, the most promising first);
// candidates beyond it are ranked by their estimates, scaled to the
// simulated ones (Candidate::estimated). So a first decision costs about
// the same at 4 ranks and at 65,536. When no candidate can be evaluated at
// all (no estimate and every schedule over the limits), the decision is
// the native MPI's.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/registry.hpp"
#include "model/profile.hpp"
#include "plan/decision_table.hpp"
#include "plan/overrides.hpp"
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

// Size classes and the representative of a call: schedule/collective.hpp.


struct Decision {
  AlgorithmChoice choice;   // the algorithm and its parameters; none: the native MPI's
  std::string algorithm;    // choice.spec(), or "native"
  bool native() const { return choice.algorithm == nullptr; }
  double predicted = 0;     // of the representative call (0 when forced)
  std::string runner_up;    // empty if there was no other candidate
  double runner_up_predicted = 0;
  bool forced = false;      // by an override
  std::string note;         // why an override that matched was not followed
  bool fresh = false;       // planned by this call (not from the cache)
  bool from_table = false;  // taken from a decision table (HETCOLL_TABLE)
  // Held to the rules every decision keeps (Planner::unfit): a table's
  // entries are held to them when first used.
  bool checked = true;
  // Taken from a measured decision of the profile (hetcoll tune): the
  // winner's and the native collective's measured medians (s).
  bool measured = false;
  double measured_time = 0, native_time = 0;
  // The candidates weighed for the representative call, best first (when
  // planned; what `hetcoll plan` lists).
  std::shared_ptr<const PlanResult> weighed;
};

// How a measured decision (hetcoll tune) is won, the rule beside the
// planner that follows it: the smallest median, but a candidate replaces
// the native collective (times[0]) only when its median and its minimum are
// both kNativeMargin below native's — on this machine the same call moves by
// several per cent from one repeat to the next (alltoall by up to 2×), and a
// difference the measurement cannot tell from noise keeps the MPI's own.
constexpr double kNativeMargin = 0.05;
// The winner's index in times (0: native). times is not empty.
size_t measured_winner(const std::vector<TunedTime>& times);

class Planner {
 public:
  // table: decisions computed ahead of time (plan/decision_table.hpp),
  // taken into the cache when it fits (table_mismatch() is empty).
  explicit Planner(ModelPtr model, Overrides overrides = {}, std::shared_ptr<const DecisionTable> table = nullptr);
  // Decisions taken from the table.
  size_t preloaded() const { return preloaded_; }
  // The decision for this call. Thread-safe. group_key tells apart groups
  // that sit on different ranks of the model (0: ranks as they are);
  // rank_map maps group ranks to model ranks for models of particular ranks.
  Decision decide(const Collective& call, uint64_t group_key = 0, const std::vector<int>& rank_map = {});
  // The same decision, shared with the cache (no copy: what the MPI layer
  // uses). fresh, when given, says whether this call planned it.
  std::shared_ptr<const Decision> decide_shared(const Collective& call, uint64_t group_key = 0,
                                                const std::vector<int>& rank_map = {}, bool* fresh = nullptr);
  const MachineModel& model() const { return *model_; }
  const ModelPtr& model_ptr() const { return model_; }
  // The model a group of n ranks (rank_map: group rank → model rank, as
  // decide takes it) generates its schedules with: group_model.
  ModelPtr model_for(const std::vector<int>& rank_map, int n) const;
  const Overrides& overrides() const { return overrides_; }
  size_t cached() const;

 private:
  struct Key {
    uint8_t op;
    bool order_free;  // floating-point allreduce has fewer candidates
    int32_t nranks, root;
    uint32_t elem;
    int32_t cls;      // size class (-1: counts not known everywhere)
    int32_t rule;     // the override rule that matched (-1: none)
    uint64_t group;
    bool operator==(const Key& o) const {
      return op == o.op && order_free == o.order_free && nranks == o.nranks && root == o.root && elem == o.elem &&
             cls == o.cls && rule == o.rule && group == o.group;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  Decision planned(const Collective& rep, const std::vector<int>& rank_map) const;
  // Why `choice` may not run the call `rep` (its group mapped by rank_map),
  // or "": the rules every decision keeps, whatever proposed it — an
  // override, a measured decision, a decision table, the model: the
  // algorithm implements the collective with the counts every rank has; a
  // floating-point allreduce gets identical bits on every rank; its
  // parameters are in range; its schedule builds for the call and stays
  // within kMaxScheduleOps operations.
  std::string unfit(const AlgorithmChoice& choice, const Collective& rep, const std::vector<int>& rank_map) const;
  // A measured decision of a profile model for this call (into d): true
  // when the profile has one for the call's layout and size class.
  bool measured(const Collective& rep, const std::vector<int>& rank_map, int cls, Decision& d) const;
  ModelPtr model_;
  Overrides overrides_;
  size_t preloaded_ = 0;
  mutable std::mutex mu_;
  std::unordered_map<Key, std::shared_ptr<const Decision>, KeyHash> cache_;
};

}  // namespace hetcoll

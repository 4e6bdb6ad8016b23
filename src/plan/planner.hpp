// The planner: the one place where hetcoll chooses an algorithm, with its
// caches. (Pricing the candidates of one call: plan/pricing.hpp.)
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
#include "plan/pricing.hpp"

namespace hetcoll {

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
  std::string measured_how;  // the entry's timing (kTunedTimings): tune's, or learned in a job
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

// The planner: for a collective on a machine model, evaluate every
// registered algorithm that implements it — every parameter setting it asks
// to be tried (variants) — and take the cheapest.
//
// An allreduce that is not order_free (floating point) only considers
// algorithms that give every rank identical bits.
// Evaluation: the exact closed form where the algorithm has one for this
// call on a Hockney model, otherwise the simulator on the schedule itself.
// An algorithm with many variants on a model without closed forms is pruned
// to the best few by its closed form on the model's α-β-γ estimate first.
// Ties (within 1e-9) go to fewer messages, then to the earlier registry
// entry. Planner adds a decision cache per (op, group, root, element size,
// size bin) and user overrides.
#pragma once
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/registry.hpp"
#include "plan/overrides.hpp"
#include "sim/simulator.hpp"

namespace hetcoll {

struct Candidate {
  std::string algorithm;     // a spec that rebuilds the schedule
  double predicted = 0;      // in the model's unit
  bool closed_form = false;  // from an exact closed form (else simulated)
  CostSplit split;           // latency / bandwidth / compute (explain)
  bool has_terms = false;    // Hockney: terms in α, β-bytes, γ-bytes
  Terms terms;
  uint64_t messages = 0;     // all messages of the schedule (0: not built)
};

struct PlanOptions {
  bool explain = false;                 // critical-path split and message counts for every candidate
  size_t max_simulated_variants = 8;    // per algorithm, without closed forms
  std::vector<int> rank_map;            // group rank → model rank
  size_t op_limit = 4000000;            // candidates with more ops are not simulated
};

struct PlanResult {
  std::string unit;
  std::vector<Candidate> candidates;  // best first
  std::string forced_by;              // non-empty when an override chose
  std::vector<std::string> skipped;   // too large to simulate (more than op_limit ops)
  const Candidate& best() const { return candidates.front(); }
};

PlanResult plan(const Collective& coll, const MachineModel& model, const PlanOptions& opt = {});

struct Decision {
  std::string algorithm;
  double predicted = 0;
  std::string runner_up;  // empty if there was no other candidate
  double runner_up_predicted = 0;
  bool forced = false;    // by an override
  bool fresh = false;     // planned by this call (not from the cache)
};

// Size bins of the cache: 0 for 0 bytes, then four per octave.
int size_bin(uint64_t bytes);

class Planner {
 public:
  explicit Planner(ModelPtr model, Overrides overrides = {});
  // The cached decision for this call's (op, group, root, elem, size bin);
  // planned on first use. Thread-safe. group_key tells apart groups that sit
  // on different ranks of the model (0: ranks as they are).
  Decision decide(const Collective& c, uint64_t group_key = 0, const std::vector<int>& rank_map = {});
  const MachineModel& model() const { return *model_; }
  const Overrides& overrides() const { return overrides_; }
  size_t cached() const;

 private:
  struct Key {
    uint8_t op;
    bool order_free;  // floating-point allreduce has fewer candidates
    int32_t nranks, root;
    uint32_t elem;
    int32_t bin;
    uint64_t group;
    bool operator==(const Key& o) const {
      return op == o.op && order_free == o.order_free && nranks == o.nranks && root == o.root && elem == o.elem && bin == o.bin && group == o.group;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  ModelPtr model_;
  Overrides overrides_;
  mutable std::mutex mu_;
  std::unordered_map<Key, Decision, KeyHash> cache_;
};

}  // namespace hetcoll

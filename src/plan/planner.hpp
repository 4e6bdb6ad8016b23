// The planner: for a collective on a machine model, evaluate every registered
// algorithm that implements it (by simulating its schedule), sort by
// predicted time, and take the minimum; ties go to fewer messages, then to
// the earlier registry entry.
#pragma once
#include <string>
#include <vector>

#include "algorithms/registry.hpp"

namespace hetcoll {

struct Candidate {
  std::string algorithm;  // the schedule's name, parameters included
  double predicted = 0;   // model time units (see unit)
  uint64_t messages = 0;
  uint64_t bytes = 0;
};

struct PlanResult {
  std::string unit;
  std::vector<Candidate> candidates;  // sorted, best first
  const Candidate& best() const { return candidates.front(); }
};

PlanResult plan(const Collective& coll, const MachineModel& model);

}  // namespace hetcoll

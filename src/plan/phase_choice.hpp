// The planner's choice of each phase of a composite algorithm
// (hierarchical): the fastest non-composite algorithm for the phase's group
// on the group's view of the model. Generation is given this chooser
// (GenContext::phases, by plan/build_schedule.hpp), so the one decision
// point that picks a call's algorithm also picks its phases'; generators
// never simulate.
#pragma once
#include <string>

#include "algorithms/registry.hpp"

namespace hetcoll {

// The planner's chooser: candidates simulated best estimate first within a
// fixed count of work (deterministic, so every rank building its own
// program chooses alike), the choice made once per size class of the phase
// (schedule/collective.hpp: representative) and cached.
const PhaseChooser& planned_phases();

}  // namespace hetcoll

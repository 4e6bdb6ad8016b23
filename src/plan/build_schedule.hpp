// A call's schedule, generated with the planner's phase choices
// (plan/phase_choice.hpp): what every layer above algorithms calls to build
// a schedule, composite or not (a composite's phases are chosen by the same
// planner that chose the algorithm).
#pragma once
#include <string>

#include "algorithms/registry.hpp"

namespace hetcoll {

// generate() with planned_phases().
Schedule build_schedule(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model, int only_rank = -1,
                        size_t op_limit = 0);
Schedule build_schedule(const std::string& spec, const Collective& coll, const MachineModel& model, int only_rank = -1,
                        size_t op_limit = 0);

}  // namespace hetcoll

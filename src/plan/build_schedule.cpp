#include "plan/build_schedule.hpp"

#include "plan/phase_choice.hpp"

namespace hetcoll {

Schedule build_schedule(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model, int only_rank,
               size_t op_limit) {
  return generate(choice, coll, model, only_rank, op_limit, &planned_phases());
}

Schedule build_schedule(const std::string& spec, const Collective& coll, const MachineModel& model, int only_rank,
               size_t op_limit) {
  return generate(spec, coll, model, only_rank, op_limit, &planned_phases());
}

}  // namespace hetcoll

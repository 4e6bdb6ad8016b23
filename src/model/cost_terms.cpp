#include "model/cost_terms.hpp"

#include <algorithm>

namespace hetcoll {

HockneyParams hockney_estimate(const MachineModel& model, uint64_t bytes) {
  int dst = model.other_rank();
  uint64_t B = std::max<uint64_t>(bytes, 1);
  double a = model.message(0, dst, 0).total();
  double b = (model.message(0, dst, B).total() - a) / double(B);
  return {a, std::max(0.0, b), model.reduce_time(0, B) / double(B)};
}

}  // namespace hetcoll

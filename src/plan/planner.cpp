#include "plan/planner.hpp"

#include <algorithm>

#include "sim/simulator.hpp"
#include "util/error.hpp"

namespace hetcoll {

PlanResult plan(const Collective& coll, const MachineModel& model) {
  coll.check();
  PlanResult res;
  res.unit = model.unit();
  for (const Algorithm* a : algorithms_for(coll.op)) {
    Schedule s = generate(a->name, coll, model);
    SimResult r = simulate(s, model, {false, {}});
    res.candidates.push_back({s.algorithm, r.makespan, s.message_count(), s.bytes_sent()});
  }
  if (res.candidates.empty())
    throw InputError(cat("no algorithm implements ", coll_op_name(coll.op), " yet"));
  std::stable_sort(res.candidates.begin(), res.candidates.end(), [](const Candidate& x, const Candidate& y) {
    const double tol = 1e-12 * std::max(1.0, std::max(x.predicted, y.predicted));
    if (x.predicted < y.predicted - tol) return true;
    if (y.predicted < x.predicted - tol) return false;
    return x.messages < y.messages;
  });
  return res;
}

}  // namespace hetcoll

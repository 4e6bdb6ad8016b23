// Costs on the α-β-γ (Hockney) model as coefficients (InterCom's form),
// and the α, β, γ of any model as Hockney's model would see it: what the
// closed forms and estimates of algorithms/ are written in, and what the
// planner prices them with.
#pragma once
#include <cstdint>

#include "model/machine_model.hpp"

namespace hetcoll {

// A cost on the α-β-γ (Hockney) model, as coefficients: the number of
// message start-ups α, the bytes times β and the bytes times γ on the
// critical path. InterCom's formulas are written this way.
struct Terms {
  double alpha = 0, beta = 0, gamma = 0;
  uint64_t messages = 0;  // all messages of the schedule, when the closed form knows (0: unknown)
  // Model time that is no multiple of α, β or γ: estimates of trees on the
  // postal view of the model (postal_estimate in algorithms/patterns/common.hpp).
  double fixed = 0;
  // `fixed` is the exact time on the postal model (a tree whose postal
  // time the paper states: binomial, λ-tree, star), not an estimate there.
  bool postal_exact = false;
  uint64_t ops = 0;  // all the schedule's ops, where many are not messages (0: about two a message)
  // An estimate known to be rough (off by a third or more against the
  // simulation on some machines): simulated after the others, and a
  // composite's ranked as an estimate, after every candidate priced
  // otherwise, not as a price of its phases.
  bool rough = false;
  Terms& operator+=(const Terms& o) {
    alpha += o.alpha;
    beta += o.beta;
    gamma += o.gamma;
    messages += o.messages;
    ops += o.ops;
    fixed += o.fixed;
    return *this;
  }
  friend Terms operator+(Terms a, const Terms& b) { return a += b; }
  friend Terms operator*(double k, Terms a) { return {k * a.alpha, k * a.beta, k * a.gamma, 0, k * a.fixed}; }
};
struct HockneyParams {
  double alpha, beta, gamma;
  double time(const Terms& t) const { return t.alpha * alpha + t.beta * beta + t.gamma * gamma + t.fixed; }
};

// α, β, γ as a Hockney model would see the given model at `bytes` (rank 0
// to rank 1): α = time of an empty message, β the slope, γ per byte.
HockneyParams hockney_estimate(const MachineModel& model, uint64_t bytes);

}  // namespace hetcoll

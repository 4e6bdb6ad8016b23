// The postal model (Bar-Noy & Kipnis; Bruck et al. §1): a node sends one
// message per unit t0 and receives one per unit; a message sent at time s is
// usable by the receiver at s + λ·t0. λ ≥ 1 is real and may depend on the
// message size (measured as in Bruck §2.2, Fig. 3). Combining is free.
#pragma once
#include "model/machine_model.hpp"
#include "model/size_table.hpp"

namespace hetcoll {

// The largest λ hetcoll plans for: the lattice of times a + bλ up to
// T_λ(n) grows with λ, and no network has a latency 10^4 times its send
// overhead. Models and parameters above it are refused.
constexpr double kMaxLambda = 1e4;

class PostalModel : public MachineModel {
 public:
  // t0_in_seconds: false means t0 is in model steps (the unit is "steps").
  PostalModel(SizeTable lambda, SizeTable t0, bool t0_in_seconds);
  explicit PostalModel(double lambda) : PostalModel(SizeTable(lambda), SizeTable(1.0), false) {}

  std::string kind() const override { return "postal"; }
  std::string spec() const override;
  std::string unit() const override { return seconds_ ? "s" : "steps"; }
  MessageCost message(int src, int dst, uint64_t bytes) const override;
  double reduce_time(int, uint64_t) const override { return 0; }
  double copy_time(int, uint64_t) const override { return 0; }
  json::Value to_json() const override;

  double lambda(uint64_t bytes) const { return lambda_.at(bytes); }
  double t0(uint64_t bytes) const { return t0_.at(bytes); }

 private:
  SizeTable lambda_, t0_;
  bool seconds_;
};

}  // namespace hetcoll

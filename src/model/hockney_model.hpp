// The α-β-γ (Hockney) model of InterCom §2: a message of m bytes costs
// α + mβ and occupies the sender's and the receiver's port for that time
// (one message in and one out at a time); reducing m bytes costs mγ.
// With overlap=false the receive is work of the receiver's CPU (shared
// memory), so it does not overlap that rank's reductions and copies.
// ports=K lets K of a rank's sends be in flight at once (default 1).
#pragma once
#include "model/machine_model.hpp"

namespace hetcoll {

class HockneyModel : public MachineModel {
 public:
  HockneyModel(double alpha, double beta, double gamma, double copy = 0, bool overlap = true, int ports = 1);
  static constexpr int kMaxPorts = 1024;

  std::string kind() const override { return "hockney"; }
  std::string spec() const override;
  std::string unit() const override { return "s"; }
  MessageCost message(int, int, uint64_t bytes) const override {
    double t = alpha_ + beta_ * double(bytes);
    return {t, 0.0, t};
  }
  double reduce_time(int, uint64_t bytes) const override { return gamma_ * double(bytes); }
  double copy_time(int, uint64_t bytes) const override { return copy_ * double(bytes); }
  bool receive_uses_cpu() const override { return !overlap_; }
  int send_ports() const override { return ports_; }
  json::Value to_json() const override;

  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  double gamma() const { return gamma_; }
  double copy() const { return copy_; }
  bool overlap() const { return overlap_; }

 private:
  double alpha_, beta_, gamma_, copy_;
  bool overlap_;
  int ports_;
};

}  // namespace hetcoll

// LogGP (Alexandrov et al.; a generalisation of the postal model): sender
// overhead o_s, gap g between messages, gap G per byte, wire latency L,
// receiver overhead o_r. The send port is busy max(o_s + (m-1)G, g), the
// message is at the receiver o_s + (m-1)G + L after the send starts, and the
// receiver is busy o_r. Reducing m bytes costs mγ.
#pragma once
#include "model/machine_model.hpp"

namespace hetcoll {

class LogGPModel : public MachineModel {
 public:
  LogGPModel(double L, double o_s, double o_r, double g, double G, double gamma);

  std::string kind() const override { return "loggp"; }
  std::string spec() const override;
  std::string unit() const override { return "s"; }
  MessageCost message(int, int, uint64_t bytes) const override;
  double reduce_time(int, uint64_t bytes) const override { return gamma_ * double(bytes); }
  double copy_time(int, uint64_t) const override { return 0; }
  json::Value to_json() const override;

 private:
  double L_, os_, or_, g_, G_, gamma_;
};

}  // namespace hetcoll

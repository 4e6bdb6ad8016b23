// The heterogeneous model of Banikazemi et al. §2 (eqs. 1-4): per node the
// send overhead S_c + S_m·m and the receive overhead R_c + R_m·m, per pair
// the transmission X_c(i,j) + X_m(i,j)·m, per node the reduction cost γ·m.
// One-way time of a message: S(i) + X(i,j) + R(j).
#pragma once
#include <vector>

#include "model/machine_model.hpp"

namespace hetcoll {

struct NodeCost {
  std::string name;  // "fast", "slow", a host name, ...
  double Sc = 0, Sm = 0, Rc = 0, Rm = 0, gamma = 0;
};

class HeterogeneousModel : public MachineModel {
 public:
  // Xc, Xm: n*n row-major (sender i, receiver j).
  HeterogeneousModel(std::vector<NodeCost> nodes, std::vector<double> Xc, std::vector<double> Xm,
                     std::string spec);

  // Banikazemi's testbed (Table 1, X = 16us + m/12.5 us): a string of F
  // (fast, Pentium II 300) and S (slow, Pentium Pro 200), one letter a rank.
  static std::shared_ptr<HeterogeneousModel> banikazemi(const std::string& letters, double gamma);
  static std::shared_ptr<HeterogeneousModel> from_json(const json::Value& v, const std::string& spec);

  std::string kind() const override { return "heterogeneous"; }
  std::string spec() const override { return spec_; }
  std::string unit() const override { return "s"; }
  MessageCost message(int src, int dst, uint64_t bytes) const override;
  double reduce_time(int rank, uint64_t bytes) const override;
  double copy_time(int, uint64_t) const override { return 0; }
  int ranks() const override { return static_cast<int>(nodes_.size()); }
  json::Value to_json() const override;

  const NodeCost& node(int i) const { return nodes_.at(static_cast<size_t>(i)); }

 private:
  void check_rank(int r) const;
  std::vector<NodeCost> nodes_;
  std::vector<double> Xc_, Xm_;
  std::string spec_;
};

}  // namespace hetcoll

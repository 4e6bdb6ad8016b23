#include <cmath>

#include "model/heterogeneous_model.hpp"

#include "util/error.hpp"

namespace hetcoll {

HeterogeneousModel::HeterogeneousModel(std::vector<NodeCost> nodes, std::vector<double> Xc,
                                       std::vector<double> Xm, std::string spec)
    : nodes_(std::move(nodes)), Xc_(std::move(Xc)), Xm_(std::move(Xm)), spec_(std::move(spec)) {
  size_t n = nodes_.size();
  if (n == 0) throw InputError("heterogeneous model: no nodes");
  if (Xc_.size() != n * n || Xm_.size() != n * n)
    throw InputError(cat("heterogeneous model: Xc and Xm must be ", n, "x", n, " matrices"));
  auto cost = [](double v) { return v >= 0 && std::isfinite(v); };
  for (auto& nd : nodes_)
    if (!cost(nd.Sc) || !cost(nd.Sm) || !cost(nd.Rc) || !cost(nd.Rm) || !cost(nd.gamma))
      throw InputError(cat("heterogeneous model: node '", nd.name, "' has a negative or infinite cost"));
  for (size_t k = 0; k < n * n; ++k)
    if (!cost(Xc_[k]) || !cost(Xm_[k])) throw InputError("heterogeneous model: negative or infinite transmission cost");
}

std::shared_ptr<HeterogeneousModel> HeterogeneousModel::banikazemi(const std::string& letters, double gamma) {
  const double us = 1e-6;
  std::vector<NodeCost> nodes;
  for (char c : letters) {
    if (c == 'F' || c == 'f') nodes.push_back({"fast", 60 * us, 0.05 * us, 110 * us, 0.03 * us, gamma});
    else if (c == 'S' || c == 's') nodes.push_back({"slow", 90 * us, 0.18 * us, 140 * us, 0.08 * us, gamma});
    else throw InputError(cat("hetero:nodes: '", c, "' is not F (fast) or S (slow)"));
  }
  size_t n = nodes.size();
  std::vector<double> Xc(n * n, 16 * us), Xm(n * n, us / 12.5);
  std::string spec = "hetero:nodes=" + letters;
  if (gamma > 0) spec += ",gamma=" + std::to_string(gamma);
  return std::make_shared<HeterogeneousModel>(std::move(nodes), std::move(Xc), std::move(Xm), spec);
}

namespace {
std::vector<double> matrix(const json::Value& v, size_t n, const char* what) {
  if (v.is_number()) return std::vector<double>(n * n, json::as_double(v, what));
  auto& rows = json::as_array(v, what);
  if (rows.size() != n) throw InputError(cat(what, ": expected ", n, " rows, got ", rows.size()));
  std::vector<double> m;
  for (auto& row : rows) {
    auto& cols = json::as_array(row, what);
    if (cols.size() != n) throw InputError(cat(what, ": expected ", n, " columns, got ", cols.size()));
    for (auto& x : cols) m.push_back(json::as_double(x, what));
  }
  return m;
}
}  // namespace

std::shared_ptr<HeterogeneousModel> HeterogeneousModel::from_json(const json::Value& v, const std::string& spec) {
  std::vector<NodeCost> nodes;
  for (auto& nd : json::as_array(json::at(v, "nodes"), "nodes")) {
    NodeCost c;
    if (auto* name = json::find(nd, "name")) c.name = json::as_string(*name, "name");
    c.Sc = json::as_double(json::at(nd, "Sc"), "Sc");
    c.Sm = json::as_double(json::at(nd, "Sm"), "Sm");
    c.Rc = json::as_double(json::at(nd, "Rc"), "Rc");
    c.Rm = json::as_double(json::at(nd, "Rm"), "Rm");
    if (auto* g = json::find(nd, "gamma")) c.gamma = json::as_double(*g, "gamma");
    nodes.push_back(c);
  }
  size_t n = nodes.size();
  auto Xc = matrix(json::at(v, "Xc"), n, "Xc");
  auto Xm = matrix(json::at(v, "Xm"), n, "Xm");
  return std::make_shared<HeterogeneousModel>(std::move(nodes), std::move(Xc), std::move(Xm), spec);
}

void HeterogeneousModel::check_rank(int r) const {
  if (r < 0 || r >= ranks())
    throw InputError(cat("heterogeneous model describes ", ranks(), " ranks; rank ", r, " is not one of them"));
}

MessageCost HeterogeneousModel::message(int src, int dst, uint64_t bytes) const {
  check_rank(src);
  check_rank(dst);
  double m = double(bytes);
  const NodeCost& s = nodes_[size_t(src)];
  const NodeCost& r = nodes_[size_t(dst)];
  size_t k = size_t(src) * nodes_.size() + size_t(dst);
  double send = s.Sc + s.Sm * m;
  return {send, send + Xc_[k] + Xm_[k] * m, r.Rc + r.Rm * m};
}

double HeterogeneousModel::reduce_time(int rank, uint64_t bytes) const {
  check_rank(rank);
  return nodes_[size_t(rank)].gamma * double(bytes);
}

json::Value HeterogeneousModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "heterogeneous";
  v["unit"] = "s";
  json::Value nodes = json::Value::array();
  for (auto& n : nodes_) {
    json::Value o = json::Value::object();
    o["name"] = n.name;
    o["Sc"] = n.Sc;
    o["Sm"] = n.Sm;
    o["Rc"] = n.Rc;
    o["Rm"] = n.Rm;
    o["gamma"] = n.gamma;
    nodes.push_back(o);
  }
  v["nodes"] = nodes;
  size_t n = nodes_.size();
  json::Value xc = json::Value::array(), xm = json::Value::array();
  for (size_t i = 0; i < n; ++i) {
    json::Value rc = json::Value::array(), rm = json::Value::array();
    for (size_t j = 0; j < n; ++j) {
      rc.push_back(Xc_[i * n + j]);
      rm.push_back(Xm_[i * n + j]);
    }
    xc.push_back(rc);
    xm.push_back(rm);
  }
  v["Xc"] = xc;
  v["Xm"] = xm;
  return v;
}

}  // namespace hetcoll

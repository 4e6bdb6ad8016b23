#include <cmath>

#include "model/hockney_model.hpp"

#include <sstream>

#include "util/error.hpp"

namespace hetcoll {

HockneyModel::HockneyModel(double alpha, double beta, double gamma, double copy, bool overlap, int ports)
    : alpha_(alpha), beta_(beta), gamma_(gamma), copy_(copy), overlap_(overlap), ports_(ports) {
  if (ports < 1 || ports > kMaxPorts)
    throw InputError(cat("hockney model: ports must be 1 to ", kMaxPorts, ", got ", ports));
  for (double v : {alpha, beta, gamma, copy})
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError("hockney model: alpha, beta, gamma and copy must be non-negative and finite");
  if (alpha == 0 && beta == 0) throw InputError("hockney model: alpha and beta cannot both be zero");
}

std::string HockneyModel::spec() const {
  std::ostringstream os;
  os.precision(12);
  os << "hockney:alpha=" << alpha_ << ",beta=" << beta_ << ",gamma=" << gamma_;
  if (copy_ > 0) os << ",copy=" << copy_;
  if (!overlap_) os << ",overlap=0";
  if (ports_ != 1) os << ",ports=" << ports_;
  return os.str();
}

json::Value HockneyModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "hockney";
  v["unit"] = "s";
  v["alpha"] = alpha_;
  v["beta"] = beta_;
  v["gamma"] = gamma_;
  v["copy"] = copy_;
  v["overlap"] = overlap_;
  v["ports"] = ports_;
  return v;
}

}  // namespace hetcoll

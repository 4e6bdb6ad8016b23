#include <cmath>

#include "model/loggp_model.hpp"

#include <algorithm>
#include <sstream>

#include "util/error.hpp"

namespace hetcoll {

LogGPModel::LogGPModel(double L, double o_s, double o_r, double g, double G, double gamma)
    : L_(L), os_(o_s), or_(o_r), g_(g), G_(G), gamma_(gamma) {
  for (double v : {L, o_s, o_r, g, G, gamma})
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError("loggp model: L, o, g, G and gamma must be non-negative and finite");
  if (std::max(o_s, g) <= 0) throw InputError("loggp model: o or g must be positive");
}

MessageCost LogGPModel::message(int, int, uint64_t bytes) const {
  double stream = bytes > 1 ? double(bytes - 1) * G_ : 0.0;
  return {std::max(os_ + stream, g_), os_ + stream + L_, or_};
}

std::string LogGPModel::spec() const {
  std::ostringstream os;
  os.precision(12);
  os << "loggp:L=" << L_ << ",os=" << os_ << ",or=" << or_ << ",g=" << g_ << ",G=" << G_ << ",gamma=" << gamma_;
  return os.str();
}

json::Value LogGPModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "loggp";
  v["unit"] = "s";
  v["L"] = L_;
  v["os"] = os_;
  v["or"] = or_;
  v["g"] = g_;
  v["G"] = G_;
  v["gamma"] = gamma_;
  return v;
}

}  // namespace hetcoll

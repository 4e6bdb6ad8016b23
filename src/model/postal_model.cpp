#include "model/postal_model.hpp"

#include <cmath>
#include <iomanip>

#include "model/units.hpp"
#include "util/error.hpp"

namespace hetcoll {

PostalModel::PostalModel(SizeTable lambda, SizeTable t0, bool t0_in_seconds)
    : lambda_(std::move(lambda)), t0_(std::move(t0)), seconds_(t0_in_seconds) {
  for (auto& p : lambda_.points())
    if (!(p.second >= 1.0))
      throw InputError(cat("postal model: lambda = ", std::setprecision(12), p.second,
                           " is below 1 (the postal model needs lambda >= 1)"));
    else if (!(p.second <= kMaxLambda))
      throw InputError(cat("postal model: lambda = ", p.second, " is more than hetcoll plans for (",
                           kMaxLambda, ": a latency of 10^4 send overheads)"));
  for (auto& p : t0_.points())
    if (!(p.second > 0) || !std::isfinite(p.second))
      throw InputError(cat("postal model: t0 = ", p.second, " must be positive and finite"));
}

std::string PostalModel::spec() const {
  std::string s = "postal:lambda=" + lambda_.str();
  if (seconds_ || !(t0_.constant() && t0_.points()[0].second == 1.0)) {
    s += ",t0=" + t0_.str();
    if (seconds_ && t0_.constant()) s += "s";
  }
  return s;
}

MessageCost PostalModel::message(int, int, uint64_t bytes) const {
  double t0 = t0_.at(bytes), lam = lambda_.at(bytes);
  return {t0, (lam - 1.0) * t0, t0};
}

json::Value PostalModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "postal";
  v["unit"] = unit();
  v["lambda"] = lambda_.to_json();
  v["t0"] = t0_.to_json();
  return v;
}

}  // namespace hetcoll

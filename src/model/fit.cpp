#include "model/fit.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace hetcoll {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw InputError("a line fit needs at least two points");
  const double n = double(x.size());
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0)) throw InputError("a line fit needs at least two different x");
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  return f;
}

PostalFit fit_bruck(int experiment, const std::vector<double>& ks, const std::vector<double>& times) {
  if (experiment != 1 && experiment != 2) throw InputError(cat("Bruck's experiment ", experiment, ": 1 or 2"));
  LineFit f = fit_line(ks, times);
  PostalFit p;
  p.r2 = f.r2;
  if (experiment == 1) {
    p.t0 = f.slope;
    // T at k = 1 is t0 (2λ): intercept + slope = 2 λ t0.
    p.lambda = p.t0 > 0 ? (f.intercept / p.t0 + 1.0) / 2.0 : 0;
  } else {
    p.t0 = f.slope / 2.0;
    p.lambda = p.t0 > 0 ? f.intercept / (2.0 * p.t0) + 1.0 : 0;
  }
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) throw InputError("median of nothing");
  auto mid = v.begin() + long((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace hetcoll

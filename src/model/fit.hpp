// Fits of measured times to the models' parameters.
//
// fit_line: least squares y = intercept + slope·x.
// Bruck et al. §2.2, the two experiments for λ and t0 at one message size,
// k = number of destinations:
//   experiment 1 (P0 sends to P1…Pk, Pk answers P0):  T = t0 (k - 1 + 2λ)
//                slope t0, intercept t0 (2λ - 1)   →  λ = (intercept / t0 + 1) / 2
//   experiment 2 (P0 sends to P1…Pk, Pk sends to Pk-1…P0): T = 2 t0 (k - 1 + λ)
//                slope 2 t0, intercept 2 t0 (λ - 1) →  λ = intercept / (2 t0) + 1
#pragma once
#include <vector>

namespace hetcoll {

struct LineFit {
  double slope = 0, intercept = 0;
  double r2 = 0;  // coefficient of determination (1 when the points are on the line)
};
// Needs at least two distinct x. Throws InputError otherwise.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

struct PostalFit {
  double t0 = 0, lambda = 0, r2 = 0;
};
// experiment: 1 or 2; ks and times of equal length, at least two distinct k.
PostalFit fit_bruck(int experiment, const std::vector<double>& ks, const std::vector<double>& times);

double median(std::vector<double> v);  // of a non-empty vector (the lower middle for even sizes)

}  // namespace hetcoll

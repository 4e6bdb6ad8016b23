#include "algorithms/patterns/postal_math.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace hetcoll::postal {

namespace {

void check_lambda(double lambda) {
  if (!(lambda >= 1.0) || !std::isfinite(lambda))
    throw InputError(cat("lambda = ", lambda, " is not allowed: the postal model needs lambda >= 1"));
  if (lambda > kMaxLambda) throw InputError(cat("lambda = ", lambda, " is more than hetcoll plans for (", kMaxLambda, ")"));
}

uint64_t sat_add(uint64_t a, uint64_t b) { return std::min(kSaturate, a + b); }

// Memoised recursion: f(a, b) = N_λ(t - a - bλ).
class Recursion {
 public:
  Recursion(double lambda, double t)
      : lambda_(lambda), t_(t), A_(size_t(std::max(0.0, std::floor(t + kEps))) + 2),
        B_(size_t(std::max(0.0, std::floor(t / lambda + kEps))) + 2), memo_(A_ * B_, 0) {}

  uint64_t at(size_t a, size_t b) {
    double x = t_ - double(a) - double(b) * lambda_;
    if (x < lambda_ - kEps) return 1;
    uint64_t& m = memo_[a * B_ + b];
    if (m) return m;
    m = sat_add(at(a + 1, b), at(a, b + 1));
    return m;
  }

 private:
  double lambda_, t_;
  size_t A_, B_;
  std::vector<uint64_t> memo_;
};

// All lattice times a + bλ (b ≥ 1) up to `limit`, sorted, near-equal merged.
std::vector<double> lattice(double lambda, double limit) {
  std::vector<double> v{0.0};
  for (int b = 1; b * lambda <= limit + kEps; ++b)
    for (int a = 0; a + b * lambda <= limit + kEps; ++a) v.push_back(a + b * lambda);
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  for (double x : v)
    if (out.empty() || x > out.back() + kEps) out.push_back(x);
  return out;
}

// A bound on T_λ(n): the binomial tree needs at most ⌈log2 n⌉ levels, each
// costing at most λ plus the sends before it.
double upper_bound_T(double lambda, uint64_t n) {
  double levels = std::ceil(std::log2(double(std::max<uint64_t>(n, 2))));
  return levels * (lambda + levels) + lambda;
}

}  // namespace

uint64_t N(double lambda, double t) {
  check_lambda(lambda);
  if (t < lambda - kEps) return 1;
  return Recursion(lambda, t).at(0, 0);
}

double T(double lambda, uint64_t n) {
  if (!(lambda >= 1.0) || !std::isfinite(lambda)) check_lambda(lambda);
  if (n == 0) throw InputError("n must be at least 1");
  if (n == 1) return 0.0;
  // Beyond n - 2 the root's sends reach everybody first: N(t) = t - λ + 2
  // on [λ, 2λ), so T = λ + n - 2 — for any λ, even past what the lattice
  // below is built for.
  if (lambda > double(n) - 2) return lambda + double(n) - 2;
  check_lambda(lambda);
  std::vector<double> times = lattice(lambda, upper_bound_T(lambda, n));
  size_t lo = 0, hi = times.size() - 1;  // N(times[hi]) >= n
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (N(lambda, times[mid]) >= n) hi = mid; else lo = mid + 1;
  }
  return times[lo];
}

double gamma(double lambda) {
  check_lambda(lambda);
  // g(x) = x^λ - x^(λ-1) - 1 is increasing on x > 1, g(1) = -1, g(2) ≥ 0.
  double lo = 1.0, hi = 2.0;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    double g = std::pow(mid, lambda) - std::pow(mid, lambda - 1.0) - 1.0;
    if (g < 0) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

double break_even(int k) {
  if (k < 1) throw InputError(cat("floor(lambda) = ", k, ": must be at least 1"));
  return k * std::log(gamma(k)) / std::log(gamma(k + 1));
}

bool prefer_delay_send(double lambda) {
  check_lambda(lambda);
  double fl = std::floor(lambda + kEps);
  if (std::fabs(lambda - fl) < kEps) return false;
  return lambda < break_even(int(fl));
}

double T_delay_receive(double lambda, uint64_t n) {
  check_lambda(lambda);
  return T(std::ceil(lambda - kEps), n);
}

double T_delay_send(double lambda, uint64_t n) {
  check_lambda(lambda);
  double fl = std::floor(lambda + kEps);
  return lambda / fl * T(fl, n);
}

uint64_t N_delay_receive(double lambda, double t) {
  check_lambda(lambda);
  return N(std::ceil(lambda - kEps), t);
}

uint64_t N_delay_send(double lambda, double t) {
  check_lambda(lambda);
  double fl = std::floor(lambda + kEps);
  return N(fl, t * fl / lambda);
}

// ------------------------------------------------------------ Table

Table::Table(double lambda, uint64_t max_n) : lambda_(lambda), max_n_(std::max<uint64_t>(max_n, 1)) {
  check_lambda(lambda);
  // Grow the lattice until N reaches max_n.
  double limit = std::max(4.0 * lambda, 8.0);
  for (;;) {
    times_ = lattice(lambda, limit);
    values_.assign(times_.size(), 1);
    auto value_at = [&](double x, size_t upto) -> uint64_t {
      if (x < lambda - kEps) return 1;
      // largest lattice time ≤ x among the first `upto` entries
      auto it = std::upper_bound(times_.begin(), times_.begin() + long(upto), x + kEps);
      return values_[size_t(it - times_.begin()) - 1];
    };
    for (size_t k = 0; k < times_.size(); ++k) {
      double t = times_[k];
      if (t < lambda - kEps) { values_[k] = 1; continue; }
      values_[k] = sat_add(value_at(t - 1.0, k), value_at(t - lambda, k));
    }
    if (values_.back() >= max_n_) break;
    limit *= 1.5;
  }
}

uint64_t Table::N(double t) const {
  if (t < lambda_ - kEps) return 1;
  if (t > times_.back() + kEps) throw InputError(cat("postal table covers t <= ", times_.back(), ", asked ", t));
  auto it = std::upper_bound(times_.begin(), times_.end(), t + kEps);
  return values_[size_t(it - times_.begin()) - 1];
}

double Table::T(uint64_t n) const {
  if (n <= 1) return 0.0;
  if (n > max_n_) throw InputError(cat("postal table covers n <= ", max_n_, ", asked ", n));
  auto it = std::lower_bound(values_.begin(), values_.end(), n);
  return times_[size_t(it - values_.begin())];
}

// ------------------------------------------------------------ α ranges

uint64_t alpha_split(double alpha, uint64_t n) {
  double r = std::floor(alpha * double(n) + 0.5);
  uint64_t k = r < 1.0 ? 1 : uint64_t(r);
  return std::min(k, n - 1);
}

std::vector<AlphaRange> alpha_ranges(double lambda, uint64_t max_n) {
  Table tab(lambda, max_n);
  std::vector<AlphaRange> out;
  for (uint64_t n = 2; n <= max_n; ++n) {
    AlphaRange a;
    a.n = n;
    a.t = tab.T(n);
    a.n_max = std::min(tab.N(a.t - 1.0), n - 1);
    uint64_t second = tab.N(a.t - lambda);
    a.n_min = n > second ? std::max<uint64_t>(n - second, 1) : 1;
    a.tight = tab.N(a.t) == n;
    double nn = double(n);
    a.alpha_lo = std::max(0.0, (double(a.n_min) - 0.5) / nn);
    a.alpha_hi = a.n_max >= n - 1 ? 1.0 : std::min(1.0, (double(a.n_max) + 0.5) / nn);
    out.push_back(a);
  }
  return out;
}

AlphaTable::AlphaTable(double lambda, uint64_t max_n) : max_n_(std::max<uint64_t>(max_n, 2)) {
  auto ranges = alpha_ranges(lambda, max_n_);
  double lo = 0, hi = 1;
  uint64_t from = 2;
  for (auto& r : ranges) {
    double nlo = std::max(lo, r.alpha_lo), nhi = std::min(hi, r.alpha_hi);
    if (nlo >= nhi - 1e-12 && r.n > from) {
      entries_.push_back({from, r.n - 1, 0.5 * (lo + hi)});
      from = r.n;
      nlo = r.alpha_lo;
      nhi = r.alpha_hi;
    }
    lo = nlo;
    hi = nhi;
    sizes_.push_back(uint32_t(entries_.size() + 1));
  }
  entries_.push_back({from, max_n_, 0.5 * (lo + hi)});
}

double AlphaTable::alpha(uint64_t n) const {
  if (n < 2 || n > max_n_) throw InputError(cat("alpha table covers 2..", max_n_, ", asked ", n));
  auto it = std::upper_bound(entries_.begin(), entries_.end(), n,
                             [](uint64_t v, const AlphaEntry& e) { return v < e.n_from; });
  return (it - 1)->alpha;
}

// ------------------------------------------------------------ deficiency

Deficiency deficiency(int lambda, uint64_t n) {
  if (lambda < 1) throw InputError(cat("integer lambda must be at least 1, got ", lambda));
  if (n == 0) throw InputError("n must be at least 1");
  Deficiency d;
  d.lambda = lambda;
  const int L = lambda;
  // Integer λ: N_L(r) forward until it reaches n; t = T_L(n).
  std::vector<uint64_t> full{1};
  while (full.back() < n) {
    int r = int(full.size());
    full.push_back(r < L ? 1 : sat_add(full[size_t(r - 1)], full[size_t(r - L)]));
  }
  d.t = int(full.size()) - 1;
  const int t = d.t;
  if (t >= L) {
    d.eps.assign(size_t(t - L + 1), 0);
    // Δ = N(t) - n = Σ_j ε_j N(t-λ-j); greedy from the largest term.
    uint64_t delta = full[size_t(t)] - n;
    for (int k = t - L; k >= 0; --k)
      if (full[size_t(k)] <= delta) {
        d.eps[size_t(t - L - k)] = 1;
        delta -= full[size_t(k)];
      }
    if (delta != 0) throw ScheduleError(cat("deficiency sequence: cannot represent n = ", n));
  }
  d.M.assign(size_t(t) + 1, 1);
  for (int r = L; r <= t; ++r)
    d.M[size_t(r)] = d.M[size_t(r - 1)] + d.M[size_t(r - L)] - d.eps[size_t(r - L)];
  if (d.M[size_t(t)] != n) throw ScheduleError(cat("deficiency sequence: M(t) = ", d.M[size_t(t)], " != ", n));
  return d;
}

}  // namespace hetcoll::postal

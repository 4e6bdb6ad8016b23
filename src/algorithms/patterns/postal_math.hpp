// The mathematics of the postal model (Bruck et al. 1996), for real λ ≥ 1.
//
//   N_λ(t) = N_λ(t-1) + N_λ(t-λ) for t ≥ λ, else 1      (eq. 1)
//   T_λ(n) = min{t : N_λ(t) ≥ n}
//   γ(λ)   = lim N_λ(t+1)/N_λ(t): the root > 1 of x^λ = x^(λ-1) + 1 (Table 1)
//   delay-receive combine: N'_λ = N_⌈λ⌉,       T'_λ(n) = T_⌈λ⌉(n)      (§3.2)
//   delay-send combine:    N''_λ(t) = N_⌊λ⌋(t⌊λ⌋/λ), T''_λ(n) = (λ/⌊λ⌋)·T_⌊λ⌋(n) (§3.3)
//   break-even λ for ⌊λ⌋ = k: λ = k·log γ(k) / log γ(k+1)                (Table 2)
//
// Times are exact lattice points a + bλ; comparisons use a tolerance of
// 1e-9 so that rational λ (1.8, 2.5) behaves as the paper's integer scaling.
#pragma once
#include <cstdint>
#include <vector>

#include "model/postal_model.hpp"

namespace hetcoll::postal {

constexpr double kEps = 1e-9;
using hetcoll::kMaxLambda;  // model/postal_model.hpp
constexpr uint64_t kSaturate = uint64_t(1) << 62;  // N saturates here

// N_λ(t) by the recursion itself (memoised over the lattice t - a - bλ).
uint64_t N(double lambda, double t);
// T_λ(n), searching the lattice with N above; λ + n - 2 when λ > n - 2
// (any λ: the root alone reaches everybody first).
double T(double lambda, uint64_t n);

double gamma(double lambda);
double break_even(int floor_lambda);
// §3.3 rule: delay-send beats delay-receive when λ is below the break-even
// point of ⌊λ⌋ (integer λ: the two coincide; we answer false).
bool prefer_delay_send(double lambda);

double T_delay_receive(double lambda, uint64_t n);
double T_delay_send(double lambda, uint64_t n);
uint64_t N_delay_receive(double lambda, double t);
uint64_t N_delay_send(double lambda, double t);

// N_λ at every lattice time up to T_λ(max_n), computed forward once; T and N
// for all n ≤ max_n in O(log) each. Used by the α tables and generators.
class Table {
 public:
  Table(double lambda, uint64_t max_n);
  double lambda() const { return lambda_; }
  uint64_t N(double t) const;  // N_λ(t), for t up to T(max_n)
  double T(uint64_t n) const;  // requires n ≤ max_n

 private:
  double lambda_;
  uint64_t max_n_;
  std::vector<double> times_;
  std::vector<uint64_t> values_;
};

// The legal α range of §2.5 for one n ≥ 2: any α with
// min(round(αn), n-1) ∈ [n_min, n_max] gives an optimal first split.
struct AlphaRange {
  uint64_t n;
  double t;                 // T_λ(n)
  uint64_t n_min, n_max;    // legal sizes of S' (the source's part)
  double alpha_lo, alpha_hi;  // legal α: alpha_lo ≤ α < alpha_hi (clipped to (0,1])
  bool tight;               // n = N_λ(t): a triangle top (n_min = n_max)
};
std::vector<AlphaRange> alpha_ranges(double lambda, uint64_t max_n);

// A look-up table α(n) (§2.4, Figs. 8-9): consecutive runs of n share one α
// chosen inside the intersection of their legal ranges. With it the
// α-partition broadcast is optimal for every n ≤ max_n.
struct AlphaEntry {
  uint64_t n_from, n_to;  // inclusive
  double alpha;
};
class AlphaTable {
 public:
  AlphaTable(double lambda, uint64_t max_n);
  double alpha(uint64_t n) const;  // n in [2, max_n]
  const std::vector<AlphaEntry>& entries() const { return entries_; }
  // sizes()[k] = number of entries needed to cover 2..k+2 (Fig. 9).
  const std::vector<uint32_t>& sizes() const { return sizes_; }
  uint64_t max_n() const { return max_n_; }

 private:
  uint64_t max_n_;
  std::vector<AlphaEntry> entries_;
  std::vector<uint32_t> sizes_;
};

// The α-partition split of §2.4: n' = min(round(αn), n-1), at least 1.
uint64_t alpha_split(double alpha, uint64_t n);

// BKS global combine for integer λ: the deficiency sequence ε_0..ε_{t-λ}
// with N_{λ,ε}(t) = n (§3.1), and the resulting M(r) = N_{λ,ε}(r), r = 0..t.
struct Deficiency {
  int lambda;
  int t;
  std::vector<uint8_t> eps;  // ε_j, j = 0..t-λ
  std::vector<uint64_t> M;   // M(r), r = 0..t
};
Deficiency deficiency(int lambda, uint64_t n);

}  // namespace hetcoll::postal

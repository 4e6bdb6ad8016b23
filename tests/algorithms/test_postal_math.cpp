// The postal-model mathematics against Bruck et al. 1996: Tables 1 and 2,
// N_2 = Fibonacci, the §2.4 examples, and the forward table against the
// recursion itself.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/patterns/postal_math.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {
double round3(double x) { return std::round(x * 1000.0) / 1000.0; }
}  // namespace

TEST(PostalMath, Table1GammaToThreeDecimals) {
  const double paper[] = {2.000, 1.618, 1.466, 1.380, 1.325, 1.285, 1.255, 1.232, 1.213, 1.197};
  for (int lam = 1; lam <= 10; ++lam) EXPECT_DOUBLE_EQ(round3(postal::gamma(lam)), paper[lam - 1]) << "lambda " << lam;
}

TEST(PostalMath, Table2BreakEvenToThreeDecimals) {
  const double paper[] = {1.440, 2.518, 3.558, 4.584, 5.604, 6.618, 7.630, 8.640, 9.649};
  for (int k = 1; k <= 9; ++k) EXPECT_DOUBLE_EQ(round3(postal::break_even(k)), paper[k - 1]) << "floor " << k;
}

TEST(PostalMath, BreakEvenEqualisesTheAsymptoticTimes) {
  // At the break-even λ the growth exponents of N' and N'' coincide (§3.3).
  for (int k = 1; k <= 9; ++k) {
    double lam = postal::break_even(k);
    double rate_receive = std::log(postal::gamma(k + 1));       // N' ≈ γ(⌈λ⌉)^t
    double rate_send = std::log(postal::gamma(k)) * k / lam;     // N'' ≈ γ(⌊λ⌋)^(t⌊λ⌋/λ)
    EXPECT_NEAR(rate_receive, rate_send, 1e-12);
  }
}

TEST(PostalMath, LambdaTwoIsFibonacci) {
  uint64_t a = 1, b = 1;  // N_2(0), N_2(1)
  EXPECT_EQ(postal::N(2, 0), 1u);
  EXPECT_EQ(postal::N(2, 1), 1u);
  for (int t = 2; t <= 60; ++t) {
    uint64_t c = a + b;
    EXPECT_EQ(postal::N(2, t), c) << "t = " << t;
    a = b;
    b = c;
  }
}

TEST(PostalMath, LambdaOneIsPowersOfTwo) {
  for (int t = 0; t <= 40; ++t) EXPECT_EQ(postal::N(1, t), uint64_t(1) << t);
  for (uint64_t n = 1; n <= 1100; ++n) EXPECT_DOUBLE_EQ(postal::T(1, n), std::ceil(std::log2(double(n))));
}

TEST(PostalMath, SectionTwoFourExamples) {
  // λ = 2: T(8) = 5 (Fig. 2), and the partitions of n = 13 and n = 14.
  EXPECT_DOUBLE_EQ(postal::T(2, 8), 5.0);
  auto ranges = postal::alpha_ranges(2.0, 14);
  const auto& r13 = ranges[13 - 2];
  EXPECT_EQ(r13.n_min, 8u);
  EXPECT_EQ(r13.n_max, 8u);  // (8, 5) is the only optimal partition
  EXPECT_TRUE(r13.tight);
  const auto& r14 = ranges[14 - 2];
  EXPECT_EQ(r14.n_min, 6u);  // (6, 8) ... (13, 1): Δ = 21 - 14 = 7, eight choices
  EXPECT_EQ(r14.n_max, 13u);
  EXPECT_FALSE(r14.tight);
  // round(13α) = 8 ⇔ 7.5/13 ≤ α < 8.5/13
  EXPECT_DOUBLE_EQ(r13.alpha_lo, 7.5 / 13);
  EXPECT_DOUBLE_EQ(r13.alpha_hi, 8.5 / 13);
}

TEST(PostalMath, ForwardTableAgreesWithTheRecursion) {
  for (double lam : {1.0, 1.1, 1.293, 1.5, 1.8, 1.95, 2.0, 2.5, 3.0, 3.7, 5.0, 7.25, 10.0}) {
    postal::Table tab(lam, 3000);
    for (uint64_t n = 1; n <= 3000; n += (n < 200 ? 1 : 37)) {
      double t = postal::T(lam, n);
      EXPECT_NEAR(tab.T(n), t, 1e-9) << "lambda " << lam << " n " << n;
      EXPECT_GE(postal::N(lam, t), n);
      EXPECT_EQ(tab.N(t), postal::N(lam, t));
    }
  }
}

TEST(PostalMath, RationalLambdaScalesToIntegers) {
  // §2.5: λ = 1.8, f = 5: N_1.8(t) = N'(5t) with N'(t') = N'(t'-5) + N'(t'-9).
  std::vector<uint64_t> Np(200, 1);
  for (size_t t = 9; t < Np.size(); ++t) Np[t] = Np[t - 5] + Np[t - 9];
  for (int k = 0; k < 190; ++k) EXPECT_EQ(postal::N(1.8, k / 5.0), Np[size_t(k)]) << "t' = " << k;
}

TEST(PostalMath, DelayVariantsFollowTheirRecursions) {
  for (double lam : {1.2, 1.44, 1.7, 2.5, 3.3}) {
    double up = std::ceil(lam), down = std::floor(lam);
    for (uint64_t n : {2u, 7u, 30u, 100u, 1000u}) {
      EXPECT_DOUBLE_EQ(postal::T_delay_receive(lam, n), postal::T(up, n));
      EXPECT_NEAR(postal::T_delay_send(lam, n), lam / down * postal::T(down, n), 1e-12);
    }
    // N'' by its own recursion N''(t) = N''(t - λ/⌊λ⌋) + N''(t - λ), 1 below λ.
    for (int k = 0; k < 40; ++k) {
      double t = k * lam / down;
      EXPECT_EQ(postal::N_delay_send(lam, t), postal::N(down, k));
    }
  }
  EXPECT_TRUE(postal::prefer_delay_send(1.3));
  EXPECT_FALSE(postal::prefer_delay_send(1.5));
  EXPECT_TRUE(postal::prefer_delay_send(2.51));
  EXPECT_FALSE(postal::prefer_delay_send(2.52));
  EXPECT_FALSE(postal::prefer_delay_send(3.0));
}

TEST(PostalMath, DeficiencyRepresentsEveryN) {
  for (int L = 1; L <= 5; ++L) {
    postal::Table tab(L, 3000);
    for (uint64_t n = 1; n <= 3000; ++n) {
      auto d = postal::deficiency(L, n);
      EXPECT_EQ(d.M.back(), n);
      EXPECT_DOUBLE_EQ(double(d.t), tab.T(n));
      if (n % 97 == 0) {
        EXPECT_DOUBLE_EQ(double(d.t), postal::T(L, n));
      }
    }
  }
}

TEST(PostalMath, AlphaTableIsSmallAndLegal) {
  for (double lam : {1.293, 1.95, 2.0, 3.5}) {
    postal::AlphaTable table(lam, 2000);
    auto ranges = postal::alpha_ranges(lam, 2000);
    for (auto& r : ranges) {
      double a = table.alpha(r.n);
      uint64_t split = postal::alpha_split(a, r.n);
      EXPECT_GE(split, r.n_min) << "lambda " << lam << " n " << r.n;
      EXPECT_LE(split, r.n_max) << "lambda " << lam << " n " << r.n;
    }
    // Only triangle tops constrain: far fewer entries than n (Fig. 9).
    EXPECT_LT(table.entries().size(), 60u) << "lambda " << lam;
    EXPECT_EQ(table.sizes().size(), 1999u);
  }
  // λ = 2: one α works for all n ≤ 250 (Fig. 6).
  EXPECT_EQ(postal::AlphaTable(2.0, 250).entries().size(), 1u);
}

TEST(PostalMath, RejectsLambdaBelowOne) {
  EXPECT_THROW(postal::N(0.5, 3), InputError);
  EXPECT_THROW(postal::T(0.99, 3), InputError);
  EXPECT_THROW(postal::gamma(0.0), InputError);
}

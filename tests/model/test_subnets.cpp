// What the probe's measurements become, without MPI: ECO's subnet
// partition and ring, Bruck's λ fits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/fit.hpp"
#include "model/subnets.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {

// n hosts in subnets of the given sizes: latency `inside[s]` inside subnet
// s, `between` across, with relative noise.
std::vector<double> subnet_costs(const std::vector<int>& sizes, const std::vector<double>& inside, double between,
                                 double noise, unsigned seed, std::vector<int>* truth = nullptr) {
  std::vector<int> of;
  for (size_t s = 0; s < sizes.size(); ++s) of.insert(of.end(), size_t(sizes[s]), int(s));
  const size_t n = of.size();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(1 - noise, 1 + noise);
  std::vector<double> c(n * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) c[i * n + j] = c[j * n + i] = (of[i] == of[j] ? inside[size_t(of[i])] : between) * u(rng);
  if (truth) *truth = of;
  return c;
}

}  // namespace

TEST(Subnets, RecoversThreeSubnetsOfDifferentSpeeds) {
  std::vector<int> truth;
  auto c = subnet_costs({8, 4, 4}, {30e-6, 60e-6, 45e-6}, 3e-3, 0.05, 1, &truth);
  SubnetPartition p = partition_subnets(c, truth.size());
  ASSERT_EQ(p.count(), 3);
  EXPECT_EQ(p.subnet_of, truth);
  EXPECT_GT(p.gap, 40);
  EXPECT_EQ(p.groups[1], (std::vector<int>{8, 9, 10, 11}));
}

TEST(Subnets, HomogeneousIsOneSubnet) {
  auto c = subnet_costs({16}, {10e-6}, 0, 0.08, 2);
  SubnetPartition p = partition_subnets(c, 16);
  EXPECT_EQ(p.count(), 1);
  EXPECT_EQ(p.gap, 0);
}

TEST(Subnets, ThresholdDecides) {
  // Two groups 1.5x apart: split at 20 %, one subnet at 60 %.
  auto c = subnet_costs({4, 4}, {10e-6, 10e-6}, 15e-6, 0.0, 3);
  EXPECT_EQ(partition_subnets(c, 8, 0.2).count(), 2);
  EXPECT_EQ(partition_subnets(c, 8, 0.6).count(), 1);
  EXPECT_THROW(partition_subnets(c, 8, -1), InputError);
  EXPECT_THROW(partition_subnets(c, 8, NAN), InputError);
}

TEST(Subnets, LoadNoiseIsNotASubnet) {
  // What the probe measured on the emulated cluster (8 hosts, 3 subnets
  // 1 ms apart): host 0 carries mpirun and two ranks, and every latency
  // from it reads 1.4x its subnet's. ECO's 20 % splits it off — a
  // partition without a gap (1.0x); widened, the three subnets stand.
  std::vector<int> truth;
  auto c = subnet_costs({3, 3, 2}, {37e-6, 39e-6, 50e-6}, 1.1e-3, 0.02, 7, &truth);
  for (size_t j = 1; j < 3; ++j) c[j] = c[j * 8] = 52e-6;
  const SubnetPartition eco = partition_subnets(c, 8);
  EXPECT_EQ(eco.count(), 4);
  EXPECT_LT(eco.gap, kMinSubnetGap);
  const SubnetPartition p = significant_subnets(c, 8);
  EXPECT_EQ(p.subnet_of, truth);
  EXPECT_EQ(p.threshold, 0.5);
  EXPECT_GT(p.gap, 15);
  // Where ECO's partition has its gap, it is the answer (threshold kept).
  auto clean = subnet_costs({8, 4, 4}, {30e-6, 60e-6, 45e-6}, 3e-3, 0.05, 1);
  EXPECT_EQ(significant_subnets(clean, 16).threshold, kEcoThreshold);
  EXPECT_EQ(significant_subnets(clean, 16).subnet_of, partition_subnets(clean, 16).subnet_of);
  // Noise alone: one subnet.
  auto flat = subnet_costs({12}, {10e-6}, 0, 0.35, 9);
  EXPECT_EQ(significant_subnets(flat, 12).count(), 1);
}

TEST(Subnets, AFewBadMeasurementsDoNotSplitASubnet) {
  // ECO §4.1: a host joining is not checked against every member.
  std::vector<int> truth;
  auto c = subnet_costs({6, 6}, {10e-6, 10e-6}, 1e-3, 0.02, 4, &truth);
  c[0 * 12 + 5] = c[5 * 12 + 0] = 14e-6;  // one slow measurement inside subnet 0
  SubnetPartition p = partition_subnets(c, 12);
  EXPECT_EQ(p.subnet_of, truth);
}

TEST(Subnets, BadCostsAreRefused) {
  std::vector<double> c(9, 1.0);
  c[1] = -1;
  EXPECT_THROW(partition_subnets(c, 3), InputError);
  c[1] = INFINITY;
  EXPECT_THROW(partition_subnets(c, 3), InputError);
  EXPECT_THROW(partition_subnets(std::vector<double>(8, 1.0), 3), InputError);
  EXPECT_EQ(partition_subnets({}, 0).count(), 0);
  EXPECT_EQ(partition_subnets({0.0}, 1).count(), 1);
}

TEST(Ring, CrossesEachSubnetBoundaryOnce) {
  // Hosts of three subnets interleaved: the ring makes each subnet contiguous.
  const std::vector<int> of = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  const size_t n = of.size();
  std::vector<double> c(n * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j) c[i * n + j] = of[i] == of[j] ? 1e-5 : (std::abs(of[i] - of[j]) == 1 ? 1e-3 : 5e-3);
  RingOrder r = ring_order(c, n, of);
  ASSERT_EQ(r.hosts.size(), n);
  EXPECT_EQ(r.hosts[0], 0);
  EXPECT_EQ(r.crossings, 3);
  std::vector<int> sorted = r.hosts;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], int(i));
  // Subnets in nearest order: 0, then 1 (1 ms), then 2.
  EXPECT_EQ(of[size_t(r.hosts[4])], 1);
  // One subnet: no crossing.
  EXPECT_EQ(ring_order(c, n, std::vector<int>(n, 0)).crossings, 0);
}

TEST(Fit, LineAndBruckExperimentsRecoverLambdaAndT0) {
  for (double lambda : {1.0, 1.3, 1.8, 2.5, 7.0})
    for (double t0 : {1e-6, 3e-5}) {
      std::vector<double> k, e1, e2;
      for (int q = 1; q <= 6; ++q) {
        k.push_back(q);
        e1.push_back(t0 * (q - 1 + 2 * lambda));  // Bruck §2.2, experiment 1
        e2.push_back(2 * t0 * (q - 1 + lambda));  // experiment 2
      }
      PostalFit f1 = fit_bruck(1, k, e1), f2 = fit_bruck(2, k, e2);
      EXPECT_NEAR(f1.lambda, lambda, 1e-9);
      EXPECT_NEAR(f2.lambda, lambda, 1e-9);
      EXPECT_NEAR(f1.t0, t0, t0 * 1e-9);
      EXPECT_NEAR(f2.t0, t0, t0 * 1e-9);
      EXPECT_NEAR(f1.r2, 1.0, 1e-12);
    }
  EXPECT_THROW(fit_line({1}, {2}), InputError);
  EXPECT_THROW(fit_line({1, 1}, {2, 3}), InputError);
  EXPECT_THROW(fit_bruck(3, {1, 2}, {1, 2}), InputError);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2);
}

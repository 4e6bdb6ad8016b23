// The radix heap against std::priority_queue, including pushes at the time of
// the last pop (zero-duration ops), which the simulator relies on.
#include <gtest/gtest.h>

#include <queue>
#include <random>

#include "sim/radix_heap.hpp"

using namespace hetcoll;

TEST(RadixHeap, AgreesWithABinaryHeap) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dur(0.0, 3.0);
  std::uniform_int_distribution<int> coin(0, 3);
  RadixHeap h;
  std::priority_queue<double, std::vector<double>, std::greater<double>> ref;
  for (int i = 0; i < 50; ++i) {
    double t = i % 4 ? dur(rng) : 1.3;
    h.push(t, 0);
    ref.push(t);
  }
  for (int step = 0; !ref.empty(); ++step) {
    auto [t, v] = h.pop();
    ASSERT_EQ(t, ref.top()) << "step " << step;
    ref.pop();
    EXPECT_EQ(h.has_now(), !ref.empty() && ref.top() == t);
    int k = coin(rng);
    for (int j = 0; j < k && step < 150000; ++j) {
      double nt = j == 0 ? t : t + (j == 1 ? 0.3 : dur(rng));  // j == 0: same instant
      h.push(nt, 0);
      ref.push(nt);
    }
  }
  EXPECT_TRUE(h.empty());
}

#include "model/racks.hpp"

#include <algorithm>
#include <cstddef>

namespace hetcoll {
// Per host, the best rate it sent or received at in any shift.
std::vector<double> best_rates(const ShiftRates& s, int hosts) {
  std::vector<double> best(static_cast<size_t>(hosts), 0.0);
  for (size_t e = 0; e < s.ks.size(); ++e)
    for (const auto& m : s.members) {
      const int n = int(m.size());
      if (n < 4 || s.ks[e] >= n) continue;
      for (int i = 0; i < n; ++i) {
        const int a = m[size_t(i)], b = m[size_t((i + s.ks[e]) % n)];
        best[size_t(a)] = std::max(best[size_t(a)], s.rates[e][size_t(a)]);
        best[size_t(b)] = std::max(best[size_t(b)], s.rates[e][size_t(a)]);
      }
    }
  return best;
}

namespace {

// Subnet m at experiment e: which senders (by position) are slow; `count`.
std::vector<char> slow_senders(const ShiftRates& s, const std::vector<int>& m, size_t e,
                               const std::vector<double>& best, int& count) {
  const int n = int(m.size()), k = s.ks[e];
  std::vector<char> slow(static_cast<size_t>(n), 0);
  count = 0;
  for (int i = 0; i < n; ++i) {
    const int a = m[size_t(i)], b = m[size_t((i + k) % n)];
    slow[size_t(i)] = s.rates[e][size_t(a)] < kRackSlow * std::min(best[size_t(a)], best[size_t(b)]);
    count += slow[size_t(i)];
  }
  return slow;
}

}  // namespace

bool any_slow_flow(const ShiftRates& s, int hosts) {
  const std::vector<double> best = best_rates(s, hosts);
  for (size_t e = 0; e < s.ks.size(); ++e)
    for (const auto& m : s.members) {
      if (m.size() < 4 || s.ks[e] >= int(m.size())) continue;
      int count = 0;
      slow_senders(s, m, e, best, count);
      if (count > 0) return true;
    }
  return false;
}

namespace {

// The experiments in increasing shift.
std::vector<size_t> by_shift(const ShiftRates& s) {
  std::vector<size_t> e(s.ks.size());
  for (size_t i = 0; i < e.size(); ++i) e[i] = i;
  std::stable_sort(e.begin(), e.end(), [&](size_t x, size_t y) { return s.ks[x] < s.ks[y]; });
  return e;
}

}  // namespace

std::vector<int> shift_targets(const std::vector<std::vector<int>>& members, int hosts, int k) {
  std::vector<int> to(static_cast<size_t>(hosts), -1);
  for (const auto& m : members) {
    const int n = int(m.size());
    if (n < 4 || k >= n) continue;
    for (int i = 0; i < n; ++i) to[size_t(m[size_t(i)])] = m[size_t((i + k) % n)];
  }
  return to;
}

int next_shift(const ShiftRates& s, int hosts) {
  const std::vector<double> best = best_rates(s, hosts);
  for (const auto& m : s.members) {
    const int n = int(m.size());
    if (n < 4) continue;
    int lo = 0, hi = n / 2 + 1;  // largest shift without a slow flow; smallest above it all slow
    bool mixed = false;
    for (size_t e : by_shift(s)) {
      const int k = s.ks[e];
      if (2 * k > n) continue;
      int count = 0;
      slow_senders(s, m, e, best, count);
      if (count > 0 && count < n) mixed = true;
      if (count == 0) lo = std::max(lo, k);
    }
    if (mixed) {
      // Runs of slow senders longer than the shift hide edges (racks
      // smaller than k, or of unequal sizes): a smaller shift above lo.
      int kmix = 0, longest = 0;
      for (size_t e : by_shift(s)) {
        const int k = s.ks[e];
        if (2 * k > n || kmix) continue;
        int count = 0;
        const std::vector<char> slow = slow_senders(s, m, e, best, count);
        if (count == 0 || count == n) continue;
        kmix = k;
        for (int i = 0, run = 0; i < 2 * n; ++i) {
          run = slow[size_t(i % n)] ? run + 1 : 0;
          longest = std::max(longest, std::min(run, n));
        }
      }
      const int mid = (lo + kmix) / 2;
      if (longest > kmix && mid > lo && mid < kmix && std::find(s.ks.begin(), s.ks.end(), mid) == s.ks.end())
        return mid;
      continue;
    }
    for (size_t e : by_shift(s)) {
      const int k = s.ks[e];
      if (k <= lo || 2 * k > n) continue;
      int count = 0;
      slow_senders(s, m, e, best, count);
      if (count == n) hi = std::min(hi, k);
    }
    const int mid = (lo + hi) / 2;
    if (lo > 0 && mid > lo && mid < hi && std::find(s.ks.begin(), s.ks.end(), mid) == s.ks.end()) return mid;
  }
  return 0;
}

// Only shifts of at most half the subnet: beyond, a flow's way round the
// cycle (i, i + k] can hold every edge while it ends in its own rack.
std::vector<int> racks_from_shifts(const ShiftRates& s, int hosts, int& count) {
  std::vector<int> rack_of(static_cast<size_t>(hosts), -1);
  count = 0;
  const std::vector<double> best = best_rates(s, hosts);
  for (const auto& m : s.members) {
    const int n = int(m.size());
    if (n < 4) continue;
    std::vector<int> edges;
    for (size_t e : by_shift(s)) {
      const int k = s.ks[e];
      if (2 * k > n) continue;
      int nslow = 0;
      const std::vector<char> slow = slow_senders(s, m, e, best, nslow);
      if (nslow == 0 || nslow == n) continue;
      std::vector<char> edge(static_cast<size_t>(n), 0);
      for (int i = 0; i < n; ++i) {
        if (!slow[size_t(i)] || slow[size_t((i + 1) % n)]) continue;  // b: the last slow sender of a run
        edge[size_t((i + 1) % n)] = 1;
        int a = i;
        while (slow[size_t((a - 1 + n) % n)] && (a - 1 + n) % n != i) a = (a - 1 + n) % n;
        edge[size_t((a + k) % n)] = 1;
      }
      for (int i = 0; i < n; ++i)
        if (edge[size_t(i)] && std::find(edges.begin(), edges.end(), i) == edges.end()) edges.push_back(i);
    }
    std::sort(edges.begin(), edges.end());
    if (edges.size() < 2) continue;
    for (size_t j = 0; j < edges.size(); ++j) {
      const int first = edges[j], last = edges[(j + 1) % edges.size()];
      for (int i = first; i != last; i = (i + 1) % n) rack_of[size_t(m[size_t(i)])] = count;
      ++count;
    }
  }
  return rack_of;
}

}  // namespace hetcoll

// Racks by bandwidth (model/racks.hpp) on shift rates computed from a fat
// tree's own max-min shares: racks of m hosts behind one uplink each way
// (or one both ways), hosts in runs, the probe's shifts and its halving.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/racks.hpp"

using namespace hetcoll;

namespace {

struct FatTree {
  std::vector<int> rack_of;  // per host
  double nic = 10, uplink = 10;
  bool shared = false;
  // A shift's rates: a flow crossing racks gets its share of its source's
  // uplink out and its destination's in (both, where one link carries both
  // ways), at most the interface.
  std::vector<double> rates(const std::vector<int>& to) const {
    const int H = int(rack_of.size());
    const int R = *std::max_element(rack_of.begin(), rack_of.end()) + 1;
    std::vector<int> out(size_t(R), 0), in(size_t(R), 0);
    for (int h = 0; h < H; ++h)
      if (to[size_t(h)] >= 0 && rack_of[size_t(h)] != rack_of[size_t(to[size_t(h)])])
        ++out[size_t(rack_of[size_t(h)])], ++in[size_t(rack_of[size_t(to[size_t(h)])])];
    std::vector<double> r(size_t(H), 0.0);
    for (int h = 0; h < H; ++h) {
      if (to[size_t(h)] < 0) continue;
      const int a = rack_of[size_t(h)], b = rack_of[size_t(to[size_t(h)])];
      double x = nic;
      if (a != b) {
        const double load_a = shared ? out[size_t(a)] + in[size_t(a)] : out[size_t(a)];
        const double load_b = shared ? out[size_t(b)] + in[size_t(b)] : in[size_t(b)];
        x = std::min({x, uplink / load_a, uplink / load_b});
      }
      r[size_t(h)] = x;
    }
    return r;
  }
};

// The probe's procedure on one subnet holding every host, in host order.
std::vector<int> probe(const FatTree& t, int& count, int& shifts) {
  const int H = int(t.rack_of.size());
  ShiftRates s;
  s.members.push_back({});
  for (int h = 0; h < H; ++h) s.members[0].push_back(h);
  for (int k = 1; k < H; k *= 2) {
    s.rates.push_back(t.rates(shift_targets(s.members, H, k)));
    s.ks.push_back(k);
  }
  for (int more = 0; more < 6; ++more) {
    const int k = next_shift(s, H);
    if (!k) break;
    s.rates.push_back(t.rates(shift_targets(s.members, H, k)));
    s.ks.push_back(k);
  }
  shifts = int(s.ks.size());
  return racks_from_shifts(s, H, count);
}

// Same rack numbers up to renaming.
bool same_partition(const std::vector<int>& a, const std::vector<int>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a.size(); ++j)
      if ((a[i] == a[j]) != (b[i] == b[j])) return false;
  return true;
}

}  // namespace

TEST(Racks, FoundByBandwidthForEveryOversubscriptionAndRackSize) {
  for (int m : {2, 3, 4, 5, 7, 8})
    for (int racks : {2, 3, 5, 8})
      for (double over : {2.0, 3.0, 4.0, 8.0})
        for (bool shared : {false, true}) {
          FatTree t;
          for (int r = 0; r < racks; ++r)
            for (int i = 0; i < m; ++i) t.rack_of.push_back(r);
          t.shared = shared;
          t.uplink = m * t.nic / over;
          // Racks are told apart where some shift k < m overloads a rack's
          // link (its k crossing flows, or 2k both ways on one link, below
          // kRackSlow of an interface each): oversubscription above about
          // m / (m - 1). Racks of 2 at 2:1 are not (at k = 1 one flow fits,
          // at k = 2 every flow crosses).
          bool visible = false;
          for (int k = 1; k < m; ++k) visible |= t.uplink / ((shared ? 2 : 1) * k) < kRackSlow * t.nic;
          int count = 0, shifts = 0;
          const std::vector<int> got = probe(t, count, shifts);
          SCOPED_TRACE(testing::Message() << m << " hosts a rack, " << racks << " racks, " << over << ":1"
                                          << (shared ? " shared" : ""));
          if (int(t.rack_of.size()) < 4 || !visible) {
            EXPECT_EQ(count, 0);
            continue;
          }
          EXPECT_EQ(count, racks);
          EXPECT_TRUE(same_partition(got, t.rack_of));
          int log = 0;
          for (int k = 1; k < int(t.rack_of.size()); k *= 2) ++log;
          EXPECT_LE(shifts, log + 6);
        }
}

TEST(Racks, NoneWhereNothingIsOversubscribedOrTheSubnetIsSmall) {
  FatTree t;
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 4; ++i) t.rack_of.push_back(r);
  t.uplink = 4 * t.nic;  // 1:1: racks no link tells apart
  int count = 0, shifts = 0;
  const std::vector<int> got = probe(t, count, shifts);
  EXPECT_EQ(count, 0);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](int r) { return r < 0; }));
  FatTree small;
  small.rack_of = {0, 0, 1};
  small.uplink = 1;
  EXPECT_EQ(probe(small, count, shifts), std::vector<int>(3, -1));
}

TEST(Racks, RacksOfUnequalSizesEachFound) {
  // Runs of slow senders of neighbouring racks merge at the first shift
  // that shows any: a smaller shift finds the edges they hid.
  for (double over : {2.0, 4.0})
    for (const std::vector<int>& sizes : {std::vector<int>{3, 4, 4, 3, 4}, std::vector<int>{5, 3, 6, 4}}) {
      FatTree t;
      for (size_t r = 0; r < sizes.size(); ++r)
        for (int i = 0; i < sizes[r]; ++i) t.rack_of.push_back(int(r));
      t.uplink = 3 * t.nic / over;  // the smallest racks' 3 hosts, oversubscribed
      int count = 0, shifts = 0;
      const std::vector<int> got = probe(t, count, shifts);
      SCOPED_TRACE(testing::Message() << over << ":1, " << sizes.size() << " racks");
      EXPECT_EQ(count, int(sizes.size()));
      EXPECT_TRUE(same_partition(got, t.rack_of));
    }
}

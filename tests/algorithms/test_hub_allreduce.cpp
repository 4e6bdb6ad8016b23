// hub_allreduce: every setting (hub, segment, window, chain) is a valid,
// rank-consistent allreduce; every rank but the hub sends the vector
// exactly once; it wins where one member's uplink is the slowest
// (the emulated cluster's three subnets, whose uplink C has half the rate
// of A's and B's) and loses to the ring where uplinks are alike; the
// default hub is never behind the slow uplink.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "model/profile.hpp"
#include "model/machine_model.hpp"
#include "model/profile_model.hpp"
#include "schedule/validator.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {

double sim(const std::string& spec, const Collective& c, const MachineModel& m) {
  return simulate(build_schedule(spec, c, m), m).makespan;
}

TEST(HubAllreduce, EverySettingIsValidAndRankConsistent) {
  auto m = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  size_t checked = 0;
  for (int p : {2, 3, 4, 7})
    for (uint32_t elem : {1u, 8u})
      for (uint64_t count : {1ull, 5ull, 96ull, 1000ull})
        for (bool in_place : {false, true})
          for (int hub = 0; hub < p; ++hub)
            for (int window : {1, 2, 5})
              for (int chain : {0, 1})
              for (uint64_t seg : {uint64_t(elem), uint64_t(3 * elem), count * elem / 4 + 1}) {
                Collective c = Collective::make(CollOp::allreduce, p, count, 0, elem);
                c.in_place = in_place;
                const std::string spec = "hub_allreduce[hub=" + std::to_string(hub) + ",window=" +
                                         std::to_string(window) + ",chain=" + std::to_string(chain) +
                                         ",seg=" + std::to_string(seg) + "]";
                ValidationReport rep = validate(build_schedule(spec, c, *m));
                ASSERT_TRUE(rep.ok) << spec << " " << c.describe() << ": " << rep.summary();
                ASSERT_TRUE(rep.rank_consistent) << spec << " " << c.describe();
                ++checked;
              }
  EXPECT_EQ(checked, size_t(2 * 4 * 2 * 3 * 2 * 3) * (2 + 3 + 4 + 7));
}

// Bytes each rank sends and receives, from the schedule.
struct Traffic {
  std::vector<uint64_t> sent, received;
};
Traffic traffic(const Schedule& s) {
  Traffic t{std::vector<uint64_t>(size_t(s.nranks()), 0), std::vector<uint64_t>(size_t(s.nranks()), 0)};
  for (int r = 0; r < s.nranks(); ++r)
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      if (o.kind == OpKind::send) t.sent[size_t(r)] += o.len;
      if (o.kind == OpKind::recv) t.received[size_t(r)] += o.len;
    }
  return t;
}

TEST(HubAllreduce, EveryRankButTheHubSendsTheVectorOnce) {
  auto m = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  const int p = 5, hub = 3;
  const uint64_t v = 4096 * 8;
  Collective c = Collective::make(CollOp::allreduce, p, 4096, 0, 8);
  // Straight to the hub: each other rank sends and receives the vector once.
  Schedule direct = build_schedule("hub_allreduce[hub=3,chain=0,seg=4096]", c, *m);
  Traffic t = traffic(direct);
  for (int r = 0; r < p; ++r) {
    const uint64_t expect = r == hub ? uint64_t(p - 1) * v : v;
    EXPECT_EQ(t.sent[size_t(r)], expect) << "rank " << r;
    EXPECT_EQ(t.received[size_t(r)], expect) << "rank " << r;
  }
  EXPECT_EQ(direct.message_count(), uint64_t(2 * (p - 1) * 8));  // 8 segments of 4 KiB each way
  // Along the chain (the default): each other rank still sends the vector
  // once; the chain's first rank receives only the result, the others also
  // their predecessor's partial sums; the hub gets one stream.
  Schedule chain = build_schedule("hub_allreduce[hub=3,seg=4096]", c, *m);
  t = traffic(chain);
  int first = 0;
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(t.sent[size_t(r)], r == hub ? uint64_t(p - 1) * v : v) << "rank " << r;
    if (r == hub) EXPECT_EQ(t.received[size_t(r)], v);
    else if (t.received[size_t(r)] == v) ++first;
    else EXPECT_EQ(t.received[size_t(r)], 2 * v) << "rank " << r;
  }
  EXPECT_EQ(first, 1);
  EXPECT_EQ(chain.message_count(), direct.message_count());
}

TEST(HubAllreduce, BadSettingsAreClearErrors) {
  auto m = parse_model("hockney:alpha=2us,beta=0.1ns");
  Collective c = Collective::make(CollOp::allreduce, 3, 100, 0, 4);
  EXPECT_THROW(build_schedule("hub_allreduce[hub=3]", c, *m), InputError);
  EXPECT_THROW(build_schedule("hub_allreduce[window=0]", c, *m), InputError);
  EXPECT_THROW(build_schedule("hub_allreduce[seg=0]", c, *m), InputError);
}

TEST(HubAllreduce, WinsWhereOneUplinkIsTheSlowestAndLosesWhereTheyAreAlike) {
  // The emulated cluster (testbed/netns/topologies/demo8.toml) as probed:
  // subnets A and B behind 100 Mbit/s uplinks, C behind 50 Mbit/s. Across
  // the three subnet leaders (ranks 0, 4, 8) the ring sends 4/3 of the
  // vector through C's uplink each way; through a hub in A or B it sends
  // the vector once — the least there is, where a pair's two directions
  // move at once.
  Profile probed = load_profile(std::string(HETCOLL_SOURCE_DIR) + "/bench/results/netns/profile.json", false);
  Profile at_once = probed;
  bool turns = false;
  for (PairClass& pc : at_once.classes) turns |= takes_turns(pc), pc.bandwidth_same_pair = 0;
  ASSERT_TRUE(turns) << "the probed cluster's pairs take turns (Open MPI over TCP)";
  const Collective c = Collective::make(CollOp::allreduce, 3, 1 << 18, 0, 4);  // 1 MiB
  const Algorithm& hub = find_algorithm("hub_allreduce");
  auto hub_and_ring = [&](const Profile& p) {
    ModelPtr base = group_model(std::make_shared<ProfileModel>(p, "profile:test"), {}, 11);
    ModelPtr leaders = map_model(base, {0, 4, 8});
    const std::vector<std::string> settings = hub.variants(c, *leaders);
    EXPECT_FALSE(settings.empty());
    if (!settings.empty())
      EXPECT_EQ(settings[0].find("hub=2"), std::string::npos) << settings[0] << ": the hub behind the slow uplink";
    double best = INFINITY;
    for (const std::string& s : settings) best = std::min(best, sim(s, c, *leaders));
    return std::make_pair(best, sim("ring_allreduce", c, *leaders));
  };
  const auto [best, ring] = hub_and_ring(at_once);
  EXPECT_LT(best, 0.92 * ring) << "hub " << best << " s, ring " << ring << " s";
  // As probed, the hub and its last feeder, streaming to each other, take
  // turns, and the ring, whose pairs send one way, wins — as measured
  // there: the ring 253 ms, the chain 259-265 ms.
  const auto [best_turns, ring_turns] = hub_and_ring(probed);
  EXPECT_GT(best_turns, ring_turns) << "hub " << best_turns << " s, ring " << ring_turns << " s";
  // Alike uplinks (one host per subnet, 100 Mbit/s each): the hub's link
  // carries two vectors each way, the ring's 4/3.
  auto alike = parse_model("cluster:subnets=1+1+1,up_bw=12.5MB/s,up_latency=1ms");
  double best_alike = INFINITY;
  for (const std::string& s : hub.variants(c, *alike)) best_alike = std::min(best_alike, sim(s, c, *alike));
  EXPECT_GT(best_alike, 1.2 * sim("ring_allreduce", c, *alike));
}

}  // namespace

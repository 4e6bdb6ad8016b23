// The network tree of a version 2 profile, without MPI: it round-trips and
// prices a message by its path; hostile trees are refused; the runtime
// leaves the pair matrices out; a version 1 profile drawn as a tree prices
// its messages alike. (The rest of the profile: test_profile.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "model/topology.hpp"
#include "schedule/builder.hpp"
#include "sim/simulator.hpp"
#include "../support/profile_edits.hpp"
#include "../support/sample_profile.hpp"

using namespace hetcoll;
using hetcoll::testing::edited;
using hetcoll::testing::expect_refused;
using hetcoll::testing::sample_network_profile;
using hetcoll::testing::sample_profile;

TEST(Profile, NetworkTreeRoundTripsAndPricesThePath) {
  // A version 2 profile: the tree, no pair matrices. It round-trips, and
  // its model prices a message by its path: latencies summed, the slowest
  // link's rate (less the receiver's copy, as for classes).
  const Profile p = sample_network_profile(4);
  const std::string text = profile_to_json(p);
  EXPECT_EQ(text.find("\"pairs\": {"), std::string::npos);
  const Profile q = parse_profile(text);
  EXPECT_EQ(profile_to_json(q), text);
  ASSERT_EQ(q.network.size(), 7u);
  EXPECT_EQ(q.network[1].name, "rack0");
  EXPECT_TRUE(q.network[1].shared);
  EXPECT_EQ(q.network[6].host, 3);
  EXPECT_EQ(q.network[3].up.how, "pair alone");
  ProfileModel m(q, "sample");
  const Topology& t = *m.topology();
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(t.group_of(0), t.group_of(1));
  EXPECT_NE(t.group_of(1), t.group_of(2));
  const uint64_t mb = 1'000'000;
  const double Rm = q.hosts[3].Rm;
  const MessageCost far = m.message(0, 3, mb), near = m.message(2, 3, mb);
  EXPECT_NEAR(far.arrive - far.send, 1e-6 + 2e-6 + 2e-6 + 1e-6, 1e-12);
  EXPECT_NEAR(near.arrive - near.send, 2e-6, 1e-12);
  EXPECT_NEAR(far.wire, (1 / 50e6 - Rm) * double(mb), 1e-9);
  EXPECT_NEAR(near.wire, (1 / 125e6 - Rm) * double(mb), 1e-9);
  // Both hosts of rack 0 sending across at once share its uplink; inside
  // rack 1 they do not. (Ranks: host 0 holds ranks 0 and 1, host h > 0
  // rank h + 1.)
  auto two = [&](int a, int b, int c, int d) {
    Builder s(Collective::make(CollOp::alltoall, 5, mb), "two");
    s.send(a, b, {Buf::in, 0, mb});
    s.recv(b, a, {Buf::out, 0, mb});
    s.send(c, d, {Buf::in, mb, mb});
    s.recv(d, c, {Buf::out, mb, mb});
    return simulate(s.finish(), m).makespan;
  };
  EXPECT_GT(two(0, 3, 2, 4), 1.9 * far.wire);
  EXPECT_LT(two(3, 4, 4, 3), 1.1 * near.arrive + near.recv);
}

TEST(Profile, HostileNetworksAreRefused) {
  const Profile p = sample_network_profile(4);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = profile_to_json(p);
    const size_t k = t.find(from);
    EXPECT_NE(k, std::string::npos) << from;
    if (k != std::string::npos) t.replace(k, from.size(), to);
    return t;
  };
  expect_refused(edit("\"parent\": -1", "\"parent\": 0"), "outside");
  expect_refused(edit("\"parent\": 0", "\"parent\": 5"), "outside");                    // a parent after its child
  expect_refused(edit("\"host\": 1", "\"host\": 0"), "two leaves");
  expect_refused(edit("\"host\": 3", "\"host\": 4"), "outside");
  expect_refused(edit("\"bandwidth\": 50000000.0", "\"bandwidth\": -1"), "outside");
  expect_refused(edit("\"latency\": 2e-06", "\"latency\": \"soon\""), "not a number");
  // A host's leaf missing.
  {
    Profile q = p;
    q.network.pop_back();
    expect_refused(profile_to_json(q), "has no leaf");
  }
  // A leaf under a host; a tree deeper than 16 levels.
  {
    Profile q = p;
    q.network[6].parent = 5;
    expect_refused(profile_to_json(q), "hangs off host");
    Profile d = sample_network_profile(1);
    NodeProfile leaf = d.network.back();
    d.network.pop_back();
    for (int i = 0; i < 17; ++i) {
      NodeProfile sw;
      sw.name = "level" + std::to_string(i);
      sw.parent = int(d.network.size()) - 1;
      sw.shared = true;
      sw.up = sw.down = {1e9, 0, ""};
      d.network.push_back(sw);
    }
    leaf.parent = int(d.network.size()) - 1;
    d.network.push_back(leaf);
    expect_refused(profile_to_json(d), "deeper than 16");
  }
}

TEST(Profile, TheRuntimeLeavesThePairMatricesOutOfTheParse) {
  // parse_profile(text, false) cuts the top-level "pairs" object out before
  // parsing (its brackets checked, its contents not read); a "pairs" key
  // elsewhere (every class has one) is read as always.
  const std::string text = profile_to_json(sample_profile(6));
  const Profile skipped = parse_profile(text, false);
  EXPECT_TRUE(skipped.small.empty());
  ASSERT_FALSE(skipped.classes.empty());
  EXPECT_EQ(skipped.classes.back().pairs, 1);
  EXPECT_EQ(profile_to_json(parse_profile(text, true)), text);
  std::string junk = text;
  junk.replace(junk.find("\"small_min\": ["), 14, "\"small_min\": [x, ");
  expect_refused(junk, "not valid JSON");
  EXPECT_TRUE(parse_profile(junk, false).small.empty());
  std::string unclosed = text;
  unclosed.erase(unclosed.find("\"small_min\": [") + 13, 1);  // one '[' fewer
  expect_refused(unclosed, "not valid JSON");
  EXPECT_THROW(parse_profile(unclosed, false), InputError);
}

TEST(Profile, AVersionOneProfileAsATreePricesItsMessagesAlike) {
  // network_from_classes: the tree the classes describe. Two subnets: a
  // message's latency and rate on the tree are its class's.
  Profile p = sample_profile(6, false);
  for (PairClass& c : p.classes)
    if (c.a >= 0 && c.a != c.b) c.slowdown = 2, c.bandwidth_alone = c.bandwidth;  // the uplinks the model draws
  const ProfileModel classes(p, "v1");
  Profile q = p;
  q.version = 2;
  q.network = network_from_classes(p, {});
  const Profile back = parse_profile(profile_to_json(q));
  const ProfileModel tree(back, "v2");
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b)
      for (uint64_t bytes : {uint64_t(8), uint64_t(1) << 20}) {
        const MessageCost x = classes.message(a, b, bytes), y = tree.message(a, b, bytes);
        EXPECT_NEAR(y.arrive, x.arrive, 1e-9 + 1e-9 * x.arrive) << a << "->" << b << " " << bytes;
        EXPECT_NEAR(y.wire, x.wire, 1e-12 + 1e-9 * x.wire) << a << "->" << b << " " << bytes;
      }
  // Racks inserted under subnet 0: its hosts hang off them, the rack's
  // uplink on their paths out.
  RackProfile r0, r1;
  r0.subnet = r1.subnet = 0;
  r0.hosts = {0, 1};
  r1.hosts = {2};
  r0.shared = r1.shared = true;
  r0.up = r1.up = {20e6, 0, "shift experiments"};
  q.network = network_from_classes(p, {r0, r1});
  const ProfileModel racked(parse_profile(profile_to_json(q)), "racks");
  const Topology& t = *racked.topology();
  EXPECT_EQ(t.depth(), 3);
  EXPECT_EQ(t.nodes[size_t(t.nodes[size_t(t.node_of_host[0])].parent)].name, "subnet 0 rack 1");
  EXPECT_EQ(t.nodes[size_t(t.node_of_host[1])].parent, t.nodes[size_t(t.node_of_host[0])].parent);
  EXPECT_NE(t.nodes[size_t(t.node_of_host[2])].parent, t.nodes[size_t(t.node_of_host[0])].parent);
  EXPECT_NEAR(1 / t.path_bandwidth(0, 2), 1 / 20e6, 1e-12);
  EXPECT_NEAR(1 / t.path_bandwidth(0, 1), 1 / classes.topology()->path_bandwidth(0, 1), 1e-12);
  EXPECT_EQ(t.group_of(0), t.group_of(2));  // one subnet: one group
}

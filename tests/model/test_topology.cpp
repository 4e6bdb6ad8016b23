// The network's tree (model/topology.hpp): routes, latencies and rates of a
// path, the links no traffic can fill, a group's view, the refusals of a
// malformed tree, and the `tree:` machine built on it — simulated and bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/bound.hpp"
#include "model/machine_model.hpp"
#include "model/topology.hpp"
#include "schedule/builder.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {

// A fat tree of `racks` racks of `per` hosts under one spine: interfaces
// of nic B/s each way (10 us), each rack's uplink one link of up B/s both
// ways (5 us); a fabric of the spine when given.
Topology fat_tree(int racks, int per, double nic, double up, double spine_fabric = 0) {
  Topology t;
  if (spine_fabric > 0) t.nodes[0].fabric = t.add_link("fabric(spine)", spine_fabric);
  for (int r = 0; r < racks; ++r) {
    const int u = t.add_link(cat("uplink(r", r, ")"), up, 5e-6);
    const int sw = t.add_switch(0, cat("r", r), u, u);
    for (int k = 0; k < per; ++k) {
      const std::string h = cat("r", r, "h", k);
      const int a = t.add_link(cat("nic_up(", h, ")"), nic, 10e-6);
      const int b = t.add_link(cat("nic_down(", h, ")"), nic, 10e-6);
      t.add_host(sw, h, a, b);
      t.host_of_rank.push_back(t.hosts() - 1);
    }
  }
  t.check();
  t.settle();
  return t;
}

std::vector<std::string> route_names(const Topology& t, int a, int b) {
  int links[Topology::kMaxRoute];
  const int n = t.route(a, b, links);
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(t.links[size_t(links[i])].name);
  return v;
}

}  // namespace

TEST(Topology, RoutesClimbToTheLowestCommonSwitch) {
  Topology t = fat_tree(2, 2, 10, 10);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(t.groups(), 2);
  EXPECT_EQ(t.group_of(3), 1);
  EXPECT_TRUE(route_names(t, 0, 0).empty());
  EXPECT_EQ(route_names(t, 0, 1), (std::vector<std::string>{"nic_up(r0h0)", "nic_down(r0h1)"}));
  EXPECT_EQ(route_names(t, 0, 3),
            (std::vector<std::string>{"nic_up(r0h0)", "uplink(r0)", "uplink(r1)", "nic_down(r1h1)"}));
  // Latency: every link of the path; rate: its slowest link.
  EXPECT_NEAR(t.path_latency(0, 3), 10e-6 + 5e-6 + 5e-6 + 10e-6, 1e-15);
  EXPECT_NEAR(t.path_latency(0, 1), 20e-6, 1e-15);
  EXPECT_EQ(t.path_bandwidth(0, 3), 10);
}

TEST(Topology, AFabricEverySwitchSharesIsCrossedOnce) {
  // The old backplane: one link every switch has.
  Topology t = fat_tree(2, 2, 10, 5, 15);
  for (NetNode& n : t.nodes)
    if (n.host < 0) n.fabric = t.nodes[0].fabric;
  t.settle();
  const auto across = route_names(t, 0, 2);
  EXPECT_EQ(std::count(across.begin(), across.end(), "fabric(spine)"), 1);
  EXPECT_EQ(route_names(t, 0, 1), (std::vector<std::string>{"nic_up(r0h0)", "fabric(spine)", "nic_down(r0h1)"}));
}

TEST(Topology, LinksNoTrafficCanFillAreLeftOut) {
  // A rack uplink as fast as its two hosts together never limits; one of
  // half that does. A spine fabric faster than every interface together
  // never limits; a slower one does.
  Topology wide = fat_tree(2, 2, 10, 40, 100);
  EXPECT_EQ(route_names(wide, 0, 3), (std::vector<std::string>{"nic_up(r0h0)", "nic_down(r1h1)"}));
  Topology narrow = fat_tree(2, 2, 10, 10, 15);
  EXPECT_EQ(route_names(narrow, 0, 3),
            (std::vector<std::string>{"nic_up(r0h0)", "uplink(r0)", "fabric(spine)", "uplink(r1)", "nic_down(r1h1)"}));
  // A link both ways carries what its subtree sends and receives: 2 hosts
  // × 10 B/s each way = 40.
  Topology just = fat_tree(2, 2, 10, 39);
  EXPECT_EQ(route_names(just, 0, 3).size(), 4u);
}

TEST(Topology, AGroupSeesItsHostsAndTheSwitchesAboveThem) {
  Topology t = fat_tree(3, 2, 10, 10);
  t.connection.assign(9, 0);
  t.connection[0 * 3 + 2] = t.connection[2 * 3 + 0] = 7;
  t.check();
  auto g = t.mapped({5, 0, 1});  // racks 2 and 0
  EXPECT_EQ(g->hosts(), 3);
  EXPECT_EQ(g->groups(), 2);
  EXPECT_EQ(g->nodes.size(), 1u + 2 + 3);
  EXPECT_EQ(g->group_of(0), 1);  // rank 0 is host r2h1: the second group kept
  EXPECT_EQ(g->host_name(g->host_of(0)), "r2h1");
  EXPECT_EQ(g->connection_between(0, 1), 7);
  int links[Topology::kMaxRoute];
  ASSERT_EQ(g->route(0, 1, links), 4);
  EXPECT_EQ(g->links[size_t(links[1])].name, "uplink(r2)");
  EXPECT_NO_THROW(g->check());
}

TEST(Topology, AMalformedTreeIsRefused) {
  Topology t = fat_tree(1, 2, 10, 10);
  Topology under_host = t;
  under_host.add_switch(under_host.node_of_host[0], "below a host");
  EXPECT_THROW(under_host.check(), InputError);
  Topology late_parent = t;
  late_parent.nodes[1].parent = 3;
  EXPECT_THROW(late_parent.check(), InputError);
  Topology no_link = t;
  no_link.nodes[1].up = 99;
  EXPECT_THROW(no_link.check(), InputError);
  Topology deep;
  int n = 0;
  for (int d = 0; d <= Topology::kMaxDepth; ++d) n = deep.add_switch(n, cat("s", d));
  deep.add_host(n, "h");
  deep.host_of_rank = {0};
  EXPECT_THROW(deep.check(), InputError);
  Topology bad_latency = t;
  bad_latency.links[0].latency = -1;
  EXPECT_THROW(bad_latency.check(), InputError);
}

TEST(TreeModel, AMessageCrossesItsPath) {
  // 2 pods × 2 racks × 2 hosts: hosts 1 us and 1 GB/s; racks 2 us, 100
  // MB/s one link both ways; pods 5 us, 50 MB/s each way.
  ModelPtr m = parse_model("tree:levels=2x2x2,bw=50MB/s:100MB/s:1GB/s,lat=5us:2us:1us,shared=0:1:0,o=1us");
  const Topology& t = *m->topology();
  EXPECT_EQ(t.hosts(), 8);
  EXPECT_EQ(t.depth(), 3);
  EXPECT_EQ(t.groups(), 2);
  const uint64_t mb = 1'000'000;
  // Same rack: 2 × 1 us at 1 GB/s.
  MessageCost in_rack = m->message(0, 1, mb);
  EXPECT_NEAR(in_rack.arrive - in_rack.send, 2e-6, 1e-12);
  EXPECT_NEAR(in_rack.wire, 1e-3, 1e-12);
  // Across pods: 1 + 2 + 5 + 5 + 2 + 1 us at 50 MB/s.
  MessageCost across = m->message(0, 7, mb);
  EXPECT_NEAR(across.arrive - across.send, 16e-6, 1e-12);
  EXPECT_NEAR(across.wire, 20e-3, 1e-12);
  EXPECT_THROW(parse_model("tree:levels=2x2,bw=1GB/s:1GB/s:1GB/s"), InputError);
  EXPECT_THROW(parse_model("tree:levels=2x0,bw=1GB/s"), InputError);
  EXPECT_THROW(parse_model("tree:levels=2x2,bw=1GB/s,shared=2"), InputError);
}

TEST(TreeModel, RacksShareTheirUplinkAndTheBoundSeesIt) {
  // 4 racks of 4 hosts, 100 MB/s interfaces, each rack's uplink 100 MB/s
  // both ways (4:1 oversubscribed). Two hosts of rack 0 sending to rack 1
  // at once share its uplink; two inside a rack do not.
  ModelPtr m = parse_model("tree:levels=4x4,bw=100MB/s,lat=1us,shared=1:0,o=0");
  const uint64_t mb = 1'000'000;
  auto two = [&](int a, int b, int c, int d) {
    Builder s(Collective::make(CollOp::alltoall, 16, mb), "two");
    s.send(a, b, {Buf::in, 0, mb});
    s.recv(b, a, {Buf::out, 0, mb});
    s.send(c, d, {Buf::in, mb, mb});
    s.recv(d, c, {Buf::out, mb, mb});
    return simulate(s.finish(), *m).makespan;
  };
  EXPECT_NEAR(two(0, 4, 1, 5), 2 * mb / 100e6, 1e-4);  // rack 0's uplink carries both
  EXPECT_NEAR(two(0, 2, 1, 3), mb / 100e6, 1e-4);      // inside rack 0
  // An allgather of 1 MiB a rank: every block enters the 3 other racks
  // (48 MiB of entries), and every entry into a rack is an exit from
  // another (the spine does not copy): 96 MiB over four uplinks carrying
  // both ways at 100 MB/s each — 24 MiB a rack, twice what entering alone
  // (12 MiB a rack) needs.
  const Bound b = lower_bound(Collective::make(CollOp::allgather, 16, 1u << 20), *m);
  EXPECT_NEAR(b.time, 24.0 * (1 << 20) / 100e6, 1e-3) << b.cut;
  EXPECT_NE(b.cut.find("uplink"), std::string::npos) << b.cut;
}

TEST(Topology, GroupsHangOffTheSwitchWhereTheTreeBranches) {
  // One subnet whose racks the probe found: root → subnet → 2 racks → hosts.
  // The groups are the racks; a subnet of hosts only stays one group.
  Topology t;
  const int subnet = t.add_switch(0, "subnet 0");
  const int r0 = t.add_switch(subnet, "rack 0", t.add_link("u0", 1e9), t.add_link("d0", 1e9));
  const int r1 = t.add_switch(subnet, "rack 1", t.add_link("u1", 1e9), t.add_link("d1", 1e9));
  for (int h = 0; h < 4; ++h) t.add_host(h < 2 ? r0 : r1, "h" + std::to_string(h), t.add_link("n", 1e8), -1);
  for (int h = 0; h < 4; ++h) t.host_of_rank.push_back(h);
  t.check();
  t.settle();
  EXPECT_EQ(t.groups(), 2);
  EXPECT_EQ(t.group_node(0), r0);
  EXPECT_EQ(t.group_of(1), 0);
  EXPECT_EQ(t.group_of(2), 1);
  EXPECT_TRUE(t.multi_group());
  Topology flat;
  const int only = flat.add_switch(0, "subnet 0");
  for (int h = 0; h < 3; ++h) flat.add_host(only, "h" + std::to_string(h), flat.add_link("n", 1e8), -1);
  for (int h = 0; h < 3; ++h) flat.host_of_rank.push_back(h);
  flat.check();
  flat.settle();
  EXPECT_EQ(flat.groups(), 1);
  EXPECT_FALSE(flat.multi_group());
}

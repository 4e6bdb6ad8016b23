// The simulator's network: messages that cross the same link at the same
// time share its bandwidth max-min fairly (model/topology.hpp), checked
// against hand-computed flow schedules; a model with a topology and no
// contention prices exactly as without one; mapped models see the group.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "model/topology.hpp"
#include "schedule/builder.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {

// o: sender overhead, cap: a message's own rate (B/s), L: latency, r:
// receive overhead. With a topology or without.
class FlowModel : public MachineModel {
 public:
  FlowModel(int n, double o, double cap, double L, double r, TopologyPtr t, uint64_t eager = 0)
      : n_(n), o_(o), cap_(cap), L_(L), r_(r), t_(std::move(t)), eager_(eager) {}
  uint64_t eager_bytes() const override { return eager_; }
  std::string kind() const override { return "test"; }
  std::string spec() const override { return "test"; }
  std::string unit() const override { return "s"; }
  MessageCost message(int, int, uint64_t bytes) const override {
    const double wire = double(bytes) / cap_;
    return {o_ + wire, o_ + wire + L_, r_, wire};
  }
  double reduce_time(int, uint64_t) const override { return 0; }
  double copy_time(int, uint64_t) const override { return 0; }
  int ranks() const override { return n_; }
  TopologyPtr topology() const override { return t_; }
  json::Value to_json() const override { return json::Value::object(); }

 private:
  int n_;
  double o_, cap_, L_, r_;
  TopologyPtr t_;
  uint64_t eager_;
};

// One rank per host; hosts in the given subnets (switches under one root);
// every host an interface of nic B/s each way; every subnet an uplink of
// up B/s (0: none), one link both ways when shared.
TopologyPtr cluster(const std::vector<int>& subnet_of_host, double nic, double up, bool shared = true) {
  auto t = std::make_shared<Topology>();
  int S = 0;
  for (int s : subnet_of_host) S = std::max(S, s + 1);
  std::vector<int> sw;
  for (int s = 0; s < S; ++s) sw.push_back(t->add_switch(0, cat("subnet ", s)));
  for (size_t h = 0; h < subnet_of_host.size(); ++h) {
    t->host_of_rank.push_back(int(h));
    const int u = t->add_link("up", nic), d = t->add_link("down", nic);
    t->add_host(sw[size_t(subnet_of_host[h])], cat("h", h), u, d);
  }
  for (int s = 0; s < S && up > 0; ++s) {
    NetNode& x = t->nodes[size_t(sw[size_t(s)])];
    x.up = x.down = t->add_link("uplink", up);
    if (!shared) x.down = t->add_link("uplink_in", up);
  }
  t->check();
  t->settle();
  t->never_limits.clear();  // every link may limit: the tests ask for them
  return t;
}

// Every rank in `from` sends `bytes` to its partner in `to` at time 0.
Schedule pairs(int n, const std::vector<std::pair<int, int>>& msgs, const std::vector<uint64_t>& bytes) {
  uint64_t most = 0;
  for (uint64_t b : bytes) most = std::max(most, b);
  Collective c = Collective::make(CollOp::alltoall, n, most);
  Builder b(c, "pairs");
  for (size_t k = 0; k < msgs.size(); ++k) {
    const auto [s, d] = msgs[k];
    b.send(s, d, {Buf::in, uint64_t(d) * most, bytes[k]});
    b.recv(d, s, {Buf::out, uint64_t(s) * most, bytes[k]});
  }
  return b.finish();
}

// Per pair of ranks its own latency (row-major n×n); otherwise FlowModel.
class LatencyModel : public FlowModel {
 public:
  LatencyModel(int n, std::vector<double> L, TopologyPtr t) : FlowModel(n, 0, 1e9, 0, 0, std::move(t)), n_(n), L_(std::move(L)) {}
  MessageCost message(int a, int b, uint64_t bytes) const override {
    MessageCost c = FlowModel::message(a, b, bytes);
    c.arrive += L_[size_t(a) * size_t(n_) + size_t(b)];
    return c;
  }

 private:
  int n_;
  std::vector<double> L_;
};

double recv_end(const Schedule& s, const SimResult& r, int rank, int nth = 0) {
  int seen = 0;
  for (size_t i = 0; i < s.num_ops(rank); ++i)
    if (s.op(rank, i).kind == OpKind::recv && seen++ == nth) return r.end[s.first_op(rank) + i];
  return -1;
}

}  // namespace

TEST(Network, TwoMessagesIntoOneInterfaceShareIt) {
  // 0 → 2 and 1 → 2, 1000 B each, interface 1000 B/s: both at 500 B/s,
  // through at o + 2 s; receives one after the other.
  auto m = FlowModel(3, 1e-3, 1e9, 5e-3, 1e-3, cluster({0, 0, 0}, 1000, 0));
  Schedule s = pairs(3, {{0, 2}, {1, 2}}, {1000, 1000});
  SimResult r = simulate(s, m);
  EXPECT_NEAR(r.rank_finish[0], 1e-3 + 2.0, 1e-12);  // the port is held until the bytes are out
  EXPECT_NEAR(r.rank_finish[1], 1e-3 + 2.0, 1e-12);
  EXPECT_NEAR(r.makespan, 1e-3 + 2.0 + 5e-3 + 2e-3, 1e-12);
}

TEST(Network, MaxMinFairness) {
  // Subnets {0,1} and {2,3}, interfaces 10 B/s, shared uplinks 2 B/s.
  // 0 → 1 (inside) and 2 → 1 (across) share 1's interface: the crossing
  // message is held to 2 B/s by the uplinks, the other gets the remaining
  // 8 B/s. 16 B each: the inside message is through at 2 s, then the
  // crossing one (12 B left at t = 2 s) keeps 2 B/s: through at 8 s.
  auto m = FlowModel(4, 0, 1e9, 0, 0, cluster({0, 0, 1, 1}, 10, 2));
  Schedule s = pairs(4, {{0, 1}, {2, 1}}, {16, 16});
  SimResult r = simulate(s, m);
  EXPECT_NEAR(r.rank_finish[0], 2.0, 1e-12);
  EXPECT_NEAR(r.rank_finish[2], 8.0, 1e-12);
}

TEST(Network, LongLatenciesGetLessWhereTheProbeFoundIt) {
  // Subnets {0,1} and {2,3}, interfaces 10 B/s. 0 → 1 (1 ms) and 2 → 1
  // (4 ms) share 1's interface, 16 B each. Shares in proportion to
  // latency^-a: a = 0, 5 B/s each, both through at 3.2 s; a = 0.5, 2:1,
  // the near one through at 16 / (20/3) = 2.4 s; a = 1 (SimGrid's CM02),
  // 4:1, at 16 / 8 = 2 s. The far one then has the interface: all 32 B
  // through at 3.2 s in every case.
  std::vector<double> L(16, 1e-3);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if ((a < 2) != (b < 2)) L[size_t(a * 4 + b)] = 4e-3;
  for (auto [a, near] : {std::pair{0.0, 3.2}, {0.5, 2.4}, {1.0, 2.0}}) {
    auto t = std::const_pointer_cast<Topology>(cluster({0, 0, 1, 1}, 10, 100));
    t->latency_sharing = a;
    LatencyModel m(4, L, t);
    Schedule s = pairs(4, {{0, 1}, {2, 1}}, {16, 16});
    SimResult r = simulate(s, m);
    EXPECT_NEAR(r.rank_finish[0], near, 1e-9) << "a = " << a;
    EXPECT_NEAR(r.rank_finish[2], 3.2, 1e-9) << "a = " << a;
  }
  // A flow held below its weighted share by a link of its own (the uplinks
  // at 1 B/s, below the 2 B/s of a = 1) leaves the rest to the other: the
  // near one at 9 B/s, through at 16/9 s.
  auto t = std::const_pointer_cast<Topology>(cluster({0, 0, 1, 1}, 10, 1));
  t->latency_sharing = 1;
  LatencyModel m(4, L, t);
  Schedule s = pairs(4, {{0, 1}, {2, 1}}, {16, 16});
  EXPECT_NEAR(simulate(s, m).rank_finish[0], 16.0 / 9, 1e-9);
}

TEST(Network, AFinishedMessageFreesBandwidth) {
  // 10 B and 30 B through one 10 B/s interface: 5 B/s each until the first
  // is through at 2 s; the second has 20 B left at 10 B/s: 4 s.
  auto m = FlowModel(3, 0, 1e9, 0, 0, cluster({0, 0, 0}, 10, 0));
  Schedule s = pairs(3, {{0, 2}, {1, 2}}, {10, 30});
  SimResult r = simulate(s, m);
  EXPECT_NEAR(r.rank_finish[0], 2.0, 1e-12);
  EXPECT_NEAR(r.rank_finish[1], 4.0, 1e-12);
}

TEST(Network, SharedUplinkCarriesBothDirections) {
  // 0 ↔ 2 across subnets: a shared uplink (one link both ways) halves each
  // direction; a full-duplex pair of uplinks does not.
  for (bool shared : {true, false}) {
    auto m = FlowModel(4, 0, 1e9, 0, 0, cluster({0, 0, 1, 1}, 100, 10, shared));
    Schedule s = pairs(4, {{0, 2}, {2, 0}}, {100, 100});
    SimResult r = simulate(s, m);
    EXPECT_NEAR(r.makespan, shared ? 20.0 : 10.0, 1e-9) << (shared ? "shared" : "duplex");
  }
}

TEST(Network, OwnRateCapsAMessage) {
  // A message alone never beats its own rate (the model's wire time).
  auto m = FlowModel(2, 0, 50, 0, 0, cluster({0, 0}, 1000, 0));
  Schedule s = pairs(2, {{0, 1}}, {100});
  EXPECT_NEAR(simulate(s, m).makespan, 2.0, 1e-12);
}

TEST(Network, NoContentionPricesAsWithoutTopology) {
  // A broadcast tree sends one message per link at a time: the network
  // changes nothing, for every tree algorithm and root.
  const int n = 13;
  std::vector<int> sub(n);
  for (int h = 0; h < n; ++h) sub[size_t(h)] = h % 3;
  auto with = FlowModel(n, 3e-6, 1e8, 20e-6, 2e-6, cluster(sub, 1e8, 0));
  auto without = FlowModel(n, 3e-6, 1e8, 20e-6, 2e-6, nullptr);
  for (const char* a : {"binomial_tree", "knomial_bcast", "chain_bcast", "star_bcast"})
    for (int root : {0, 5})
      for (uint64_t bytes : {8u, 100000u}) {
        Collective c = Collective::make(CollOp::bcast, n, bytes, root);
        Schedule s = generate(a, c, without);
        EXPECT_NEAR(simulate(s, with).makespan, simulate(s, without).makespan, 1e-12) << a << " root " << root;
      }
}

TEST(Network, ContentionMakesAFlatAllgatherSlower) {
  // Across two subnets joined by a slow shared uplink, a ring allgather
  // pushes two messages through it in every step: slower than the model
  // without the network says, by about the sharing.
  const int n = 8;
  auto net = cluster({0, 0, 0, 0, 1, 1, 1, 1}, 1e9, 1e7);
  auto with = FlowModel(n, 1e-6, 1e9, 10e-6, 1e-6, net);
  Collective c = Collective::make(CollOp::allgather, n, 1 << 16);
  Schedule s = generate("bucket_collect", c, with);
  const double t_with = simulate(s, with).makespan;
  // The same messages, each at the uplink's rate alone.
  auto alone = FlowModel(n, 1e-6, 1e7, 10e-6, 1e-6, nullptr);
  const double t_alone = simulate(s, alone).makespan;
  EXPECT_GT(t_with, 1.8 * t_alone);
}

TEST(Network, MappedModelSeesTheGroup) {
  // Group ranks 0, 1 are model ranks 3, 0: in different subnets.
  auto net = cluster({0, 0, 1, 1}, 100, 10);
  auto base = std::make_shared<FlowModel>(4, 0, 1e9, 0, 0, net);
  ModelPtr g = map_model(base, {3, 0});
  ASSERT_TRUE(g->topology());
  EXPECT_EQ(g->topology()->group_of(0), 1);
  EXPECT_EQ(g->topology()->group_of(1), 0);
  EXPECT_TRUE(g->topology()->multi_group());
  Schedule s = pairs(2, {{0, 1}}, {100});
  EXPECT_NEAR(simulate(s, *g).makespan, 10.0, 1e-12);  // through the uplinks
  EXPECT_NE(g->spec(), base->spec());
  EXPECT_THROW(map_model(base, {0, 4}), InputError);
}

TEST(Network, ManyFlows) {
  // 4,096 ranks in 16 subnets, an allgather by recursive doubling: every
  // step 4,096 messages, the upper ones all across the uplinks.
  const int n = 4096;
  std::vector<int> sub(n);
  for (int h = 0; h < n; ++h) sub[size_t(h)] = h / 256;
  auto m = FlowModel(n, 1e-6, 1e9, 10e-6, 1e-6, cluster(sub, 1e9, 1e8));
  Collective c = Collective::make(CollOp::allgather, n, 8);
  Schedule s = generate("recursive_doubling_allgather", c, m);
  SimResult r = simulate(s, m, {false});
  // 12 rounds, each at least a latency and an overhead apart (how long
  // simulating it takes is a benchmark's to say: bench_planner).
  EXPECT_GE(r.makespan, 12 * 1e-6);
}

TEST(Network, RendezvousWaitsForTheReceive) {
  // Rank 1 receives 10 B from rank 2 (1 s of overheads first), then 1000 B
  // from rank 0 into the same bytes, so that receive is posted at 1.01 s.
  // Eager (up to 100 B) the small one; the large one moves only once its
  // receive is posted: 1.01 + 1 s. Without a rendezvous it would have left
  // at 1 s (after its overheads) and been through at 2 s.
  auto build = [] {
    Collective c = Collective::make(CollOp::alltoall, 3, 1000);
    Builder b(c, "rendezvous");
    b.send(2, 1, {Buf::in, 0, 10});
    b.recv(1, 2, {Buf::out, 0, 10});
    b.send(0, 1, {Buf::in, 0, 1000});
    b.recv(1, 0, {Buf::out, 0, 1000});
    return b.finish();
  };
  auto net = cluster({0, 0, 0}, 1e9, 0);
  const Schedule s = build();
  EXPECT_NEAR(simulate(s, FlowModel(3, 1.0, 1000, 0, 0, net, 100)).makespan, 2.01, 1e-9);
  EXPECT_NEAR(simulate(s, FlowModel(3, 1.0, 1000, 0, 0, net, 0)).makespan, 2.0, 1e-9);
}

TEST(Network, SerialSendsGoOneAtATime) {
  // The root sends 1000 B to each of two subnets through its 10 B/s uplink.
  // Concurrent, both share it and arrive at 200 s; serial (Op::serial, a
  // tree's children in turn) the first has it alone: 100 s, then 200 s.
  auto net = cluster({0, 1, 2}, 1e9, 10);
  struct Ports : FlowModel {
    using FlowModel::FlowModel;
    int send_ports() const override { return 8; }
  } m(3, 0, 1e9, 0, 0, net);
  for (bool serial : {false, true}) {
    Collective c = Collective::make(CollOp::bcast, 3, 1000);
    Builder b(c, "two");
    b.serial_sends(serial);
    b.send(0, 1, {Buf::out, 0, 1000});
    b.send(0, 2, {Buf::out, 0, 1000});
    b.serial_sends(false);
    b.recv(1, 0, {Buf::out, 0, 1000});
    b.recv(2, 0, {Buf::out, 0, 1000});
    Schedule s = b.finish();
    SimResult r = simulate(s, m);
    EXPECT_NEAR(r.rank_finish[1], serial ? 100.0 : 200.0, 1e-9);
    EXPECT_NEAR(r.rank_finish[2], 200.0, 1e-9);
    // The flag survives the text and JSON forms.
    EXPECT_EQ(from_text(to_text(s)).op(0, 1).serial, serial);
    EXPECT_EQ(from_json(to_json(s)).op(0, 0).serial, serial);
  }
}

TEST(Network, AHandSetClusterSharesByLatencyWhenAsked) {
  // cluster:…,sharing=A: the topology's exponent, kept by a group's view;
  // out of range or not a number: refused, naming the key.
  ModelPtr m = parse_model("cluster:subnets=2+2,sharing=1");
  EXPECT_DOUBLE_EQ(m->topology()->latency_sharing, 1.0);
  EXPECT_DOUBLE_EQ(map_model(m, {3, 0})->topology()->latency_sharing, 1.0);
  EXPECT_DOUBLE_EQ(parse_model("cluster:subnets=2+2")->topology()->latency_sharing, 0.0);
  for (const char* bad : {"cluster:subnets=2+2,sharing=5", "cluster:subnets=2+2,sharing=-1", "cluster:subnets=2+2,sharing=x"}) {
    try {
      parse_model(bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("sharing="), std::string::npos) << e.what();
    }
  }
  // Priced as asked: a far and a near message into one host at once take
  // longer for the far one, and the same in all, with the exponent.
  Collective c = Collective::make(CollOp::gather, 4, 1 << 20, 0, 1);
  ModelPtr plain = parse_model("cluster:subnets=2+2");
  const double equal = simulate(generate("star_gather", c, *plain), *plain).makespan;
  const double weighted = simulate(generate("star_gather", c, *m), *m).makespan;
  EXPECT_GT(weighted, equal * 1.01);
}

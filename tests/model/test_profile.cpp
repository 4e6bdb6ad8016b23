// Profiles without MPI: round trip, hostile input, measured decisions and
// the runtime's model of them. (ECO's subnets and ring, Bruck's λ fits:
// test_subnets.cpp; the network tree of version 2: test_profile_network.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/fit.hpp"
#include "model/profile.hpp"
#include "model/profile_fields.hpp"
#include "model/subnets.hpp"
#include "model/profile_model.hpp"
#include "plan/planner.hpp"
#include "schedule/builder.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"
#include "../support/profile_edits.hpp"
#include "../support/sample_profile.hpp"

using namespace hetcoll;
using hetcoll::testing::sample_network_profile;
using hetcoll::testing::edited;
using hetcoll::testing::expect_refused;
using hetcoll::testing::sample_profile;

namespace {
// A profile's network as its tree holds it: a host's interface each way,
// a subnet's (group's) uplink each way, the backplane (the root's fabric).
int nic_up(const Topology& t, int h) { return t.nodes[size_t(t.node_of_host[size_t(h)])].up; }
int nic_down(const Topology& t, int h) { return t.nodes[size_t(t.node_of_host[size_t(h)])].down; }
int uplink_out(const Topology& t, int s) { return t.nodes[size_t(t.group_node(s))].up; }
int uplink_in(const Topology& t, int s) { return t.nodes[size_t(t.group_node(s))].down; }
int backplane(const Topology& t) { return t.nodes[0].fabric; }
}  // namespace


TEST(Profile, RoundTrip) {
  Profile p = sample_profile();
  const std::string text = profile_to_json(p);
  EXPECT_TRUE(looks_like_profile(text));
  Profile q = parse_profile(text);
  EXPECT_EQ(profile_to_json(q), text);
  EXPECT_EQ(q.hosts.size(), 4u);
  EXPECT_EQ(q.hosts[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(q.host_index("node2"), 2u);
  EXPECT_EQ(q.host_index("elsewhere"), 4u);
  ASSERT_NE(q.between(1, 0), nullptr);
  EXPECT_DOUBLE_EQ(q.between(1, 0)->latency, 1e-3);
  Profile no_pairs = parse_profile(text, false);
  EXPECT_TRUE(no_pairs.small.empty());
  EXPECT_EQ(no_pairs.classes.size(), q.classes.size());
}

TEST(Profile, HostileInputIsRefusedWithAClearMessage) {
  expect_refused("", "not valid JSON");
  expect_refused("{", "not valid JSON");
  const std::string good = profile_to_json(sample_profile());
  for (size_t cut : {size_t(1), good.size() / 3, good.size() / 2, good.size() - 3})
    expect_refused(good.substr(0, cut), "not valid JSON");
  expect_refused("[]", "top level");
  expect_refused("{\"format\": \"something else\"}", "not a hetcoll profile");
  expect_refused(edited("\"version\": 2", "\"version\": 3"), "schema version 3");
  expect_refused(edited("\"version\": 2", "\"version\": \"1\""), "version is not a whole number");
  expect_refused(std::string(100000, '[') + std::string(100000, ']'), "nested deeper");
  expect_refused(edited("\"ranks\": 5", "\"ranks\": 1e999"), "");
  expect_refused(edited("\"ranks\": 5", "\"ranks\": NaN"), "not valid JSON");
  expect_refused(edited("\"ranks\": 5", "\"ranks\": -5"), "outside");
  expect_refused(edited("\"ranks\": 5", "\"ranks\": 1000000000"), "outside");
  expect_refused(edited("\"latency\": 1e-06", "\"latency\": -1e-06"), "outside");
  expect_refused(edited("\"bandwidth\": 5000000000.0", "\"bandwidth\": 0"), "outside");
  expect_refused(edited("\"name\": \"node1\"", "\"name\": \"node0\""), "appears twice");
  expect_refused(edited("\"name\": \"node1\"", "\"name\": 7"), "not a string");
  expect_refused(edited("\"subnet\": 1", "\"subnet\": 9"), "outside");
  expect_refused(edited("\"mode\": \"concurrent\"", "\"mode\": \"psychic\""), "not concurrent");
  expect_refused(edited("\"small_min\": [", "\"small_min\": [0.0,"), "entries");
  expect_refused(edited("\"receives_use_cpu\": false", "\"receives_use_cpu\": 0"), "true or false");
  // A 70 000-host claim: refused by its count, before anything is built.
  {
    std::string hosts = "[";
    for (int i = 0; i < 70000; ++i) hosts += std::string(i ? "," : "") + "{}";
    hosts += "]";
    std::string t = profile_to_json(sample_profile());
    size_t a = t.find("\"hosts\": ["), b = t.find("\"pairs\"");
    t.replace(a, b - a, "\"hosts\": " + hosts + ",\n ");
    expect_refused(t, "at most 65536");
  }
  {
    std::string big = "{\"format\": \"hetcoll-profile\", \"version\": 1, \"x\": [" + std::string(20 << 20, ' ') + "1]}";
    expect_refused(big, "measured");
  }
  expect_refused(std::string(size_t(kMaxProfileFileBytes) + 1, ' '), "larger than");
}

TEST(Profile, RandomCorruptionsNeverCrash) {
  // Byte flips, deletions and insertions: every result is a profile or an InputError.
  const std::string good = profile_to_json(sample_profile());
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string t = good;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t k = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[k] = "{}[]\",:0123456789-eE.x \n"[rng() % 26]; break;
        case 1: t.erase(k, 1 + rng() % 8); break;
        default: t.insert(k, 1, "{}[]\",:9-e"[rng() % 10]);
      }
      if (t.empty()) t = "{";
    }
    try {
      parse_profile(t);
    } catch (const InputError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 1500);
}

// How long it takes is bench/bench_profile_load's to say (no test asserts a time).
TEST(Profile, ThousandHostsLoad) {
  Profile p = sample_profile(1024);
  Profile q = parse_profile(profile_to_json(p), false);
  ASSERT_EQ(q.hosts.size(), 1024u);
  EXPECT_EQ(q.hosts[1000].name, "node1000");
  ProfileModel m(q, "profile:test");
  EXPECT_EQ(m.ranks(), 1024);  // a profile model's ranks are its hosts
}

TEST(ProfileModel, BanikazemiCostsPerHostAndClass) {
  Profile p = sample_profile();
  ProfileModel m(p, "profile:test");
  EXPECT_TRUE(m.maps_hosts());
  EXPECT_EQ(m.ranks(), 4);
  EXPECT_EQ(m.host_index("node3"), 3);
  EXPECT_EQ(m.host_index("nobody"), -1);
  const uint64_t bytes = 1000;
  // Same subnet: S = 1.1 us + 1e-10·m (median S_c), X = class, R = 2.2 us + 2e-10·m.
  const PairClass* in0 = p.between(0, 0);
  MessageCost c = m.message(0, 1, bytes);
  EXPECT_NEAR(c.send, 1.1e-6 + (1e-10 + in0->Xm) * bytes, 1e-15);
  EXPECT_NEAR(c.arrive, c.send + in0->Xc, 1e-15);
  EXPECT_NEAR(c.recv, 2.2e-6 + 2e-10 * bytes, 1e-15);
  // Across subnets: the slower class.
  MessageCost x = m.message(0, 3, bytes);
  EXPECT_NEAR(x.arrive - x.send, p.between(0, 1)->Xc, 1e-15);
  EXPECT_GT(x.total(), 100 * c.total() / 10);
  // One host: shared memory.
  MessageCost s = m.message(2, 2, bytes);
  EXPECT_NEAR(s.arrive - s.send, 0.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(m.reduce_time(1, 100), 3e-8);
  EXPECT_THROW(m.message(0, 4, 1), InputError);
}

namespace {
// A measured decision for `op` on the sample profile's hosts 0 and 1.
Profile tuned_profile(const std::string& op, const std::string& winner, int lo, int hi) {
  Profile p = sample_profile();
  TunedLayout t;
  t.hosts = {0, 1};
  t.created = "now";
  t.repeats = 3;
  TunedEntry e;
  e.op = op;
  e.bytes = 64;
  e.class_lo = lo, e.class_hi = hi;
  e.winner = winner;
  e.times = {{"native", {1e-6, 1.2e-6}, 0}, {winner == "native" ? "binomial_tree" : winner, {0.9e-6, 1.1e-6}, 1e-6}};
  if (winner == "native") e.times[1].time = {2e-6, 2.2e-6};
  t.entries.push_back(e);
  p.tuned.push_back(t);
  return parse_profile(profile_to_json(p));  // through the file format
}
}  // namespace

TEST(MeasuredDecisions, TheProfileDecidesWhereItMeasuredAndTheModelElsewhere) {
  const Collective call = Collective::make(CollOp::bcast, 2, 64, 0, 1);
  const int cls = size_class(64);
  {
    auto m = std::make_shared<ProfileModel>(tuned_profile("bcast", "native", cls, cls + 1), "profile:t1");
    Planner pl(m);
    Decision d = pl.decide(call, 1, {0, 1});
    EXPECT_TRUE(d.native());
    EXPECT_TRUE(d.measured);
    EXPECT_NE(d.note.find("measured: native 1.2 us"), std::string::npos) << d.note;
    // Another size class, another layout, another collective: the model.
    EXPECT_FALSE(pl.decide(Collective::make(CollOp::bcast, 2, 1 << 20, 0, 1), 1, {0, 1}).measured);
    EXPECT_FALSE(pl.decide(call, 2, {0, 2}).measured);
    EXPECT_FALSE(pl.decide(Collective::make(CollOp::allgather, 2, 64, 0, 1), 1, {0, 1}).measured);
    // Without a map (the command line): the layout of the probe job, ranks 0 and 1 on hosts 0 and 0.
    EXPECT_FALSE(pl.decide(call).measured);
  }
  {
    auto m = std::make_shared<ProfileModel>(tuned_profile("bcast", "binomial_tree", cls, cls + 1), "profile:t2");
    Planner pl(m);
    Decision d = pl.decide(call, 1, {0, 1});
    EXPECT_FALSE(d.native());
    EXPECT_TRUE(d.measured);
    EXPECT_EQ(d.algorithm, "binomial_tree");
    EXPECT_DOUBLE_EQ(d.measured_time, 1.1e-6);
    EXPECT_DOUBLE_EQ(d.native_time, 1.2e-6);
    EXPECT_GT(d.predicted, 0);
  }
  {
    // A winner that does not fit the call (a 2x2 mesh on 2 ranks): planned, and said.
    auto m = std::make_shared<ProfileModel>(tuned_profile("bcast", "hybrid_bcast[mesh=2x2:SS]", cls, cls + 1),
                                            "profile:t3");
    Planner pl(m);
    Decision d = pl.decide(call, 1, {0, 1});
    EXPECT_FALSE(d.measured);
    EXPECT_NE(d.note.find("does not fit"), std::string::npos) << d.note;
  }
  // Overlapping ranges, a winner never timed, empty ranges: refused.
  Profile p = tuned_profile("bcast", "native", cls, cls + 1);
  p.tuned[0].entries.push_back(p.tuned[0].entries[0]);
  EXPECT_THROW(parse_profile(profile_to_json(p)), InputError);
  p = tuned_profile("bcast", "native", cls, cls + 1);
  p.tuned[0].entries[0].winner = "lambda_tree";
  EXPECT_THROW(parse_profile(profile_to_json(p)), InputError);
  p = tuned_profile("bcast", "native", cls, cls + 1);
  p.tuned[0].entries[0].class_hi = cls;
  EXPECT_THROW(parse_profile(profile_to_json(p)), InputError);
  p = tuned_profile("bcast", "native", cls, cls + 1);
  p.tuned[0].hosts = {0, 7};
  EXPECT_THROW(parse_profile(profile_to_json(p)), InputError);
}

namespace {
// The sample profile with its cross-subnet class slowed by concurrent
// traffic (a shared uplink seen) and the given both-ways rates (B/s each
// way; 0: not measured) for the class across and the classes inside.
Profile duplex_profile(double across_both_ways, double inside_both_ways) {
  Profile p = sample_profile();
  for (PairClass& c : p.classes) {
    if (c.a < 0) continue;
    if (c.a != c.b) {
      c.bandwidth_alone = c.bandwidth;  // 12.5 MB/s alone, 5 MB/s among all pairs
      c.bandwidth = 5e6;
      c.slowdown = c.bandwidth_alone / c.bandwidth;
      c.bandwidth_both_ways = across_both_ways;
    } else {
      c.bandwidth_alone = c.bandwidth;
      c.bandwidth_both_ways = inside_both_ways;
    }
  }
  return parse_profile(profile_to_json(p));  // through the file format
}
}  // namespace

TEST(ProfileModel, TheProbesBothWaysMeasurementSplitsLinks) {
  // Not measured (profiles before the probe did): one uplink link for both
  // directions, interfaces one each way.
  for (double across : {0.0, 6e6, 12e6}) {
    ProfileModel m(duplex_profile(across, 0), "profile:test");
    const Topology& t = *m.topology();
    const bool split = across >= 0.75 * 12.5e6;
    for (int s = 0; s < 2; ++s) {
      ASSERT_GE(uplink_out(t, s), 0);
      EXPECT_EQ(uplink_out(t, s) != uplink_in(t, s), split) << across;
      EXPECT_NEAR(t.links[size_t(uplink_in(t, s))].bandwidth, 12.5e6, 1) << across;
    }
    for (int h = 0; h < 4; ++h) EXPECT_NE(nic_up(t, h), nic_down(t, h));
    // Two messages crossing the uplinks in opposite directions at once: a
    // shared uplink halves each, split ones do not.
    const uint64_t mb = 1 << 20;
    Builder b(Collective::make(CollOp::alltoall, 4, mb), "exchange");
    b.send(0, 3, {Buf::in, 3 * mb, mb});
    b.recv(3, 0, {Buf::out, 0, mb});
    b.send(3, 0, {Buf::in, 0, mb});
    b.recv(0, 3, {Buf::out, 3 * mb, mb});
    const Schedule s = b.finish();
    const double one_way = double(1 << 20) / 12.5e6;
    const double t_ex = simulate(s, m).makespan;
    if (split)
      EXPECT_LT(t_ex, 1.3 * one_way) << across;
    else
      EXPECT_GT(t_ex, 1.8 * one_way) << across;
  }
  // Inside a subnet, both ways at a third of one way: each host's interface
  // one link for both directions.
  ProfileModel m(duplex_profile(0, 0.3 * 1.25e8), "profile:test");
  for (int h = 0; h < 4; ++h) EXPECT_EQ(nic_up(*m.topology(), h), nic_down(*m.topology(), h));
}

TEST(ProfileModel, EachHostHasItsOwnInterface) {
  // Issue 25's machine: one subnet's class mixes fast and slow interfaces,
  // and the pair the probe timed alone and both ways was a slow one. Host
  // node0's interface is ten times slower than its class; the slow pair
  // moved both ways at its own full rate.
  Profile p = sample_profile();
  p.hosts[0].nic_up = p.hosts[0].nic_down = 1.25e7;
  p.hosts[1].nic_up = p.hosts[1].nic_down = 1.25e8;
  for (PairClass& c : p.classes)
    if (c.a == 0 && c.b == 0) {
      c.bandwidth_alone = 1.25e7;       // the slow pair, alone
      c.bandwidth_both_ways = 1.2e7;    // the same pair both ways: full duplex for it
    }
  const Profile q = parse_profile(profile_to_json(p));  // through the file format
  EXPECT_EQ(q.hosts[0].nic_up, 1.25e7);
  ProfileModel m(q, "profile:nics");
  const Topology& t = *m.topology();
  // Full duplex (against the pair it measured, not the class's median).
  for (int h = 0; h < 2; ++h) EXPECT_NE(nic_up(t, h), nic_down(t, h));
  EXPECT_NEAR(t.links[size_t(nic_up(t, 0))].bandwidth, 1.25e7, 1);
  EXPECT_NEAR(t.links[size_t(nic_down(t, 0))].bandwidth, 1.25e7, 1);
  EXPECT_NEAR(t.links[size_t(nic_up(t, 1))].bandwidth, 1.25e8, 1);
  // A message from or to node0 moves at its interface; others at the class's.
  const uint64_t mb = 1 << 20;
  const double slow = double(mb) / 1.25e7, fast = double(mb) / 1.25e8;
  EXPECT_NEAR(m.message(0, 1, mb).wire, slow - q.hosts[1].Rm * double(mb), 1e-9);
  EXPECT_NEAR(m.message(1, 0, mb).wire, slow - q.hosts[0].Rm * double(mb), 1e-9);
  EXPECT_LT(m.message(1, 1, mb).wire, fast);
  // Older profiles (no interface rates): the class's rate for every host.
  Profile old = sample_profile();
  ProfileModel mo(parse_profile(profile_to_json(old)), "profile:old");
  EXPECT_NEAR(mo.topology()->links[size_t(nic_up(*mo.topology(), 0))].bandwidth, 1.25e8, 1);
  // Hostile values are refused, naming the field.
  expect_refused(edited("\"nic_up\": 0.0", "\"nic_up\": -5.0"), "nic_up");
}

TEST(Profile, OptionalFieldsOfOlderProfilesAndTheirBounds) {
  const std::string text = profile_to_json(duplex_profile(12e6, 0));
  // A profile written before the probe measured both ways reads as not measured.
  std::string old = text;
  for (size_t k; (k = old.find("\"bandwidth_both_ways\"")) != std::string::npos;) old.erase(k, old.find(',', k) + 1 - k);
  const Profile q = parse_profile(old);
  for (const PairClass& c : q.classes) EXPECT_EQ(c.bandwidth_both_ways, 0);
  ProfileModel m(q, "profile:old");
  EXPECT_EQ(uplink_out(*m.topology(), 0), uplink_in(*m.topology(), 0));
  expect_refused(edited("\"bandwidth_both_ways\": 0.0", "\"bandwidth_both_ways\": -1.0"), "outside");
  expect_refused(edited("\"bandwidth_both_ways\": 0.0", "\"bandwidth_both_ways\": \"fast\""), "not a number");
  // A measured decision's timing: Fig. 2 when absent, one of two names.
  Profile p = tuned_profile("bcast", "binomial_tree", 0, 3);
  EXPECT_EQ(p.tuned[0].entries[0].timing, "Fig. 2");
  p.tuned[0].entries[0].timing = "synchronized start";
  EXPECT_EQ(parse_profile(profile_to_json(p)).tuned[0].entries[0].timing, "synchronized start");
  expect_refused(edited("\"timing\": \"synchronized start\"", "\"timing\": \"by eye\"", p), "is none of");
  std::string no_timing = profile_to_json(p);
  no_timing.erase(no_timing.find("\"timing\""), no_timing.find(',', no_timing.find("\"timing\"")) + 1 - no_timing.find("\"timing\""));
  EXPECT_EQ(parse_profile(no_timing).tuned[0].entries[0].timing, "Fig. 2");
  // What hetcoll correct changed: empty (as measured) when absent, kept
  // through a round trip, its length bounded.
  std::string uncorrected = profile_to_json(p);
  const size_t k = uncorrected.find("\"corrected\"");
  ASSERT_NE(k, std::string::npos);
  uncorrected.erase(k, uncorrected.find(',', k) + 1 - k);
  EXPECT_EQ(parse_profile(uncorrected).corrected, "");
  p.corrected = "2026-11-28 hetcoll correct: link subnet 0 both ways x4.9";
  EXPECT_EQ(parse_profile(profile_to_json(p)).corrected, p.corrected);
  Profile long_note = p;
  long_note.corrected = std::string(5000, 'x');
  EXPECT_THROW(parse_profile(profile_to_json(long_note)), InputError);
}

// Every kind of field can be optional (docs/architecture.md: a profile
// field): absent, it keeps the value it had; present, it is read and its
// range held; a field that is not optional must be there.
TEST(Profile, EveryKindOfFieldCanBeOptional) {
  using namespace profile_io;
  struct Row {
    double real = -1;
    int whole = -1;
    uint64_t big = 7;
    std::string text = "unset";
    bool flag = true;
  };
  const std::vector<Field<Row>> optional_fields = {
      real<Row>("r", &Row::real, 0, 10, true), whole<Row>("w", &Row::whole, 0, 10, nullptr, true),
      big<Row>("b", &Row::big, 0, 1e13, true), text<Row>("t", &Row::text, 8, true),
      flag<Row>("f", &Row::flag, true)};
  const Profile none;
  auto read = [&](const std::string& json, const std::vector<Field<Row>>& fields) {
    const json::Document d(json);
    Row x;
    read_fields(Reader(d.root(), "row"), x, fields, none);
    return x;
  };
  const Row absent = read("{}", optional_fields);
  EXPECT_EQ(absent.real, -1);
  EXPECT_EQ(absent.whole, -1);
  EXPECT_EQ(absent.big, 7u);
  EXPECT_EQ(absent.text, "unset");
  EXPECT_TRUE(absent.flag);
  // Written and read back.
  Row set{2.5, 3, uint64_t(1) << 40, "x", false};
  ojson o;
  write_fields(o, set, optional_fields);
  const Row back = read(o.dump(), optional_fields);
  EXPECT_EQ(back.real, 2.5);
  EXPECT_EQ(back.whole, 3);
  EXPECT_EQ(back.big, uint64_t(1) << 40);
  EXPECT_EQ(back.text, "x");
  EXPECT_FALSE(back.flag);
  // Present, each is held to its range and kind.
  auto refused = [&](const std::string& json, const char* what) {
    try {
      read(json, optional_fields);
      ADD_FAILURE() << json << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(R"({"w": 11})", "row.w");
  refused(R"({"w": 1.5})", "row.w");
  refused(R"({"b": -1})", "row.b");
  refused(R"({"t": "too long for it"})", "row.t");
  refused(R"({"f": 1})", "row.f");
  // Not optional: absent is refused, naming it.
  const std::vector<Field<Row>> required = {whole<Row>("w", &Row::whole, 0, 10)};
  try {
    read("{}", required);
    ADD_FAILURE() << "a required field was not asked for";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"w\""), std::string::npos) << e.what();
  }
}

TEST(ProfileModel, APairThatTookTurnsTakesTurnsOnItsConnection) {
  // The sample: node0 (ranks 0, 1) and node1 (rank 2) in subnet 0, node2
  // (rank 3) and node3 (rank 4) in subnet 1; 12.5 MB/s between the subnets,
  // each host's interface one link per direction, no uplinks.
  const uint64_t mb = 1 << 20;
  auto exchange = [&](const ProfileModel& m, std::vector<std::pair<int, int>> flows, uint64_t bytes) {
    Builder b(Collective::make(CollOp::alltoall, 5, bytes * 5), "flows");
    uint64_t at = 0;
    for (auto [from, to] : flows) {
      b.send(from, to, {Buf::in, at, bytes});
      b.recv(to, from, {Buf::out, at, bytes});
      at += bytes;
    }
    return simulate(b.finish(), m).makespan;
  };
  // Two other pairs in opposite directions kept the one-way rate (full
  // duplex links); one pair both ways got `ratio` of it each way.
  auto with_same_pair = [&](double ratio, double both_ways = 1.0) {
    Profile p = sample_profile();
    for (PairClass& c : p.classes)
      if (c.a == 0 && c.b == 1) c.bandwidth_same_pair = ratio * c.bandwidth, c.bandwidth_both_ways = both_ways * c.bandwidth;
    return parse_profile(profile_to_json(p));
  };
  // Not measured (older profiles), both ways at 0.8 of one way, or links
  // that carry both directions at half rate anyway (the pair's figure says
  // nothing of a connection): the directions do not wait for each other.
  const Profile plain = parse_profile(profile_to_json(sample_profile()));
  for (const PairClass& c : plain.classes) EXPECT_EQ(c.bandwidth_same_pair, 0);
  const ProfileModel free_model(plain, "profile:test"), near(with_same_pair(0.8), "profile:near"),
      links(with_same_pair(0.5, 0.5), "profile:links");
  EXPECT_TRUE(free_model.topology()->connection.empty());
  EXPECT_TRUE(near.topology()->connection.empty());
  EXPECT_TRUE(links.topology()->connection.empty());
  const double one = exchange(free_model, {{2, 3}}, mb);
  EXPECT_NEAR(exchange(free_model, {{2, 3}, {3, 2}}, mb), one, 0.02 * one);
  EXPECT_NEAR(exchange(near, {{2, 3}, {3, 2}}, mb), one, 0.02 * one);
  // Took turns (half its one-way rate each way): a pair's two directions
  // take turns on one connection — an exchange takes twice a message's
  // time, the first message through in one message's time; alone, a
  // message is not slowed.
  const Profile turns = with_same_pair(0.5);
  const PairClass* across = turns.between(0, 1);
  ASSERT_NE(across, nullptr);
  EXPECT_DOUBLE_EQ(across->bandwidth_same_pair, 0.5 * across->bandwidth);
  const ProfileModel m(turns, "profile:turns");
  const Topology& t = *m.topology();
  ASSERT_EQ(t.connection.size(), 4u);
  EXPECT_EQ(t.connection[0], 0);  // inside subnet 0: not measured
  EXPECT_GT(t.connection[1], 0);
  // (The profile's topology has a rank per host: 0, 1 in subnet 0, 2, 3 in 1.)
  EXPECT_EQ(t.connection_between(1, 2), t.connection[1]);
  EXPECT_EQ(t.connection_between(2, 3), 0);
  EXPECT_EQ(t.mapped({1, 1})->connection_between(0, 1), 0);  // one host: shared memory
  EXPECT_NEAR(exchange(m, {{2, 3}}, mb), one, 0.01 * one);
  const double both = exchange(m, {{2, 3}, {3, 2}}, mb);
  EXPECT_NEAR(both, 2 * one, 0.05 * one);
  {
    Builder b(Collective::make(CollOp::alltoall, 5, 5 * mb), "flows");
    b.send(2, 3, {Buf::in, 0, mb});
    b.recv(3, 2, {Buf::out, 0, mb});
    b.send(3, 2, {Buf::in, mb, mb});
    b.recv(2, 3, {Buf::out, mb, mb});
    SimOptions opt;
    opt.timeline = true;
    const SimResult r = simulate(b.finish(), m, opt);
    std::vector<double> recv_end;
    for (size_t g = 0; g < r.end.size(); ++g) recv_end.push_back(r.end[g]);
    std::sort(recv_end.begin(), recv_end.end());
    // Strict turns, not sharing: the first message through at one
    // message's time (shared, both would end at twice it).
    EXPECT_NEAR(recv_end.front(), one, 0.05 * one);
    EXPECT_NEAR(recv_end.back(), 2 * one, 0.05 * one);
  }
  // A message joining its direction while the other direction waits
  // waits too (no direction starves): 2→3 moves; 3→2, a copy later, waits;
  // another 2→3, a longer copy later, queues behind 3→2 instead of joining
  // the first (which would put 3→2 last, at three messages' time).
  {
    Builder b(Collective::make(CollOp::alltoall, 5, 5 * mb), "flows");
    b.send(2, 3, {Buf::in, 0, mb});
    b.recv(3, 2, {Buf::out, 0, mb});
    const uint32_t c3 = b.copy(3, {Buf::out, 4 * mb, mb / 2}, {Buf::in, 4 * mb, mb / 2});
    b.send(3, 2, {Buf::in, mb, mb}, {c3});
    b.recv(2, 3, {Buf::out, mb, mb});
    const uint32_t c2 = b.copy(2, {Buf::out, 3 * mb, mb}, {Buf::in, 3 * mb, mb});
    b.send(2, 3, {Buf::in, 2 * mb, mb}, {c2});
    b.recv(3, 2, {Buf::out, 2 * mb, mb});
    const Schedule s = b.finish();
    SimOptions opt;
    opt.timeline = true;
    const SimResult r = simulate(s, m, opt);
    EXPECT_NEAR(r.makespan, 3 * one, 0.1 * one);
    EXPECT_NEAR(r.end[s.first_op(2) + 1], 2 * one, 0.1 * one);  // rank 2's receive: second through
  }
  // Other pairs in opposite directions, and two ranks of one host (two
  // connections), still move at once.
  EXPECT_NEAR(exchange(m, {{2, 3}, {4, 1}}, mb), one, 0.02 * one);
  EXPECT_NEAR(exchange(m, {{0, 3}, {3, 1}}, mb), one, 0.02 * one);
  // Eager messages need no go-ahead: they do not take turns.
  const uint64_t small = ProfileModel::kEagerBytes / 2;
  EXPECT_NEAR(exchange(m, {{2, 3}, {3, 2}}, small), exchange(free_model, {{2, 3}, {3, 2}}, small), 1e-9);
  // A group's view keeps the connections (a group of hosts node1 and node2).
  const ModelPtr group = map_model(std::make_shared<ProfileModel>(turns, "profile:turns"), {1, 2});
  Builder b(Collective::make(CollOp::alltoall, 2, 2 * mb), "group");
  b.send(0, 1, {Buf::in, 0, mb});
  b.recv(1, 0, {Buf::out, 0, mb});
  b.send(1, 0, {Buf::in, mb, mb});
  b.recv(0, 1, {Buf::out, mb, mb});
  EXPECT_NEAR(simulate(b.finish(), *group).makespan, both, 0.01 * both);
  // Bounds, and a topology whose connections disagree with themselves.
  Profile bad = with_same_pair(0.5);
  ASSERT_NE(profile_to_json(bad).find("\"bandwidth_same_pair\": 6250000.0"), std::string::npos);
  expect_refused(edited("\"bandwidth_same_pair\": 6250000.0", "\"bandwidth_same_pair\": -1.0", bad), "outside");
  expect_refused(edited("\"bandwidth_same_pair\": 6250000.0", "\"bandwidth_same_pair\": \"slow\"", bad),
                 "not a number");
  Topology skew = t;
  skew.connection[1] = 1;
  EXPECT_THROW(skew.check(), InputError);
  skew.connection.resize(3);
  EXPECT_THROW(skew.check(), InputError);
}

TEST(ProfileModel, TheProbesBackplaneIsALinkAllTrafficBetweenHostsShares) {
  // Without one (profiles before the probe measured it, or an aggregate
  // near the flows' own rates): no such link.
  {
    Profile p = sample_profile();
    p.backplane = {2, 2.4e8, 2.5e8, 0};
    const Profile q = parse_profile(profile_to_json(p));
    EXPECT_EQ(q.backplane.flows, 2);
    EXPECT_EQ(q.backplane.bandwidth, 0);
    EXPECT_EQ(backplane(*ProfileModel(q, "profile:test").topology()), -1);
    EXPECT_EQ(parse_profile(profile_to_json(sample_profile())).backplane.flows, 0);
  }
  // Found at 100 MB/s: the link, on every route between two hosts and on
  // none inside a host.
  Profile p = sample_profile();
  p.backplane = {2, 1e8, 2.5e8, 1e8};
  const Profile q = parse_profile(profile_to_json(p));
  EXPECT_DOUBLE_EQ(q.backplane.bandwidth, 1e8);
  ProfileModel m(q, "profile:test");
  const Topology& t = *m.topology();
  ASSERT_GE(backplane(t), 0);
  EXPECT_DOUBLE_EQ(t.links[size_t(backplane(t))].bandwidth, 1e8);
  int links[Topology::kMaxRoute];
  for (int a = 0; a < t.ranks(); ++a)
    for (int b = 0; b < t.ranks(); ++b) {
      const int k = t.route(a, b, links);
      const bool crosses = std::find(links, links + k, backplane(t)) != links + k;
      EXPECT_EQ(crosses, t.host_of(a) != t.host_of(b)) << a << "->" << b;
    }
  // Two messages inside different subnets at once — ranks 1 → 2 (hosts 0
  // and 1, subnet 0) and 3 → 4 (hosts 2 and 3, subnet 1): no interface is
  // shared, yet together they move at 50 MB/s each through the 100 MB/s
  // backplane (alone: the backplane, below the interfaces' 125 MB/s).
  const uint64_t mb = 1 << 20;
  auto pair_of_flows = [&](bool both) {
    Builder b(Collective::make(CollOp::alltoall, 5, mb), "two flows");
    b.send(1, 2, {Buf::in, 2 * mb, mb});
    b.recv(2, 1, {Buf::out, 1 * mb, mb});
    if (both) {
      b.send(3, 4, {Buf::in, 4 * mb, mb});
      b.recv(4, 3, {Buf::out, 3 * mb, mb});
    }
    return simulate(b.finish(), m).makespan;
  };
  const double one = pair_of_flows(false), two = pair_of_flows(true);
  EXPECT_NEAR(one, double(mb) / 1e8, 0.15 * double(mb) / 1e8);  // the backplane is the slowest link
  EXPECT_NEAR(two, 2 * double(mb) / 1e8, 0.15 * 2 * double(mb) / 1e8);
  ProfileModel without(parse_profile(profile_to_json(sample_profile())), "profile:test");
  Builder b(Collective::make(CollOp::alltoall, 5, mb), "two flows");
  b.send(1, 2, {Buf::in, 2 * mb, mb});
  b.recv(2, 1, {Buf::out, 1 * mb, mb});
  b.send(3, 4, {Buf::in, 4 * mb, mb});
  b.recv(4, 3, {Buf::out, 3 * mb, mb});
  EXPECT_LT(simulate(b.finish(), without).makespan, 0.6 * two);
  // Bounds: a negative or non-numeric figure, a flow count above the hosts.
  p.backplane = {2, 1e8, 2.5e8, 1e8};
  expect_refused(edited("\"bandwidth\": 100000000.0", "\"bandwidth\": -1.0", p), "outside");
  expect_refused(edited("\"aggregate\": 100000000.0", "\"aggregate\": \"fast\"", p), "not a number");
  expect_refused(edited("\"flows\": 2", "\"flows\": 99", p), "outside");
}

TEST(ProfileModel, TheProbesSharingWeighsLinksByLatency) {
  // Host 2 (subnet 1) → host 0 beside a stream 1 → 0 (subnet 0): the
  // model's wire latencies (X_c) are 7 µs inside a subnet and 997 µs
  // across. A far message that got C·w_f / (w_n + w_f) of the interface,
  // w = latency^-a, gives back a.
  const double Ln = 10e-6 - 3e-6, Lf = 1e-3 - 3e-6, C = 1.25e8;
  auto measured = [&](double a) {
    Profile::Sharing s;
    s.measured = 1;
    s.receiver = 0, s.near = 1, s.far = 2;
    s.near_latency = 10e-6, s.far_latency = 1e-3;
    s.near_alone = C, s.far_alone = 1.25e7;
    s.far_shared = C * std::pow(Lf, -a) / (std::pow(Ln, -a) + std::pow(Lf, -a));
    return s;
  };
  for (double a : {1.0, 0.6, 1.7}) EXPECT_NEAR(sharing_exponent(measured(a), Ln, Lf), a, 1e-9);
  // Nothing to fit: equal shares.
  Profile::Sharing s = measured(1);
  EXPECT_EQ(sharing_exponent(s, Ln, 1.2 * Ln), 0);  // latencies too alike to tell
  s.far_shared = 0.95 * s.far_alone;                // the far message was not held by the interface
  EXPECT_EQ(sharing_exponent(s, Ln, Lf), 0);
  s = measured(1);
  s.measured = 0;
  EXPECT_EQ(sharing_exponent(s, Ln, Lf), 0);
  s = measured(0.001);  // held, yet about equal shares: clamped at 0, never negative
  s.far_shared = 0.6 * C;
  s.far_alone = C;
  EXPECT_EQ(sharing_exponent(s, Ln, Lf), 0);
  // Through the profile: written, read back, the topology weighs by it;
  // a profile without it (written before the probe measured it) shares
  // equally; hostile values are refused.
  Profile p = sample_profile();
  p.sharing = measured(1);
  const Profile q = parse_profile(profile_to_json(p));
  EXPECT_EQ(q.sharing.far, 2);
  EXPECT_NEAR(ProfileModel(q, "profile:test").topology()->latency_sharing, 1.0, 1e-9);
  EXPECT_EQ(ProfileModel(sample_profile(), "profile:test").topology()->latency_sharing, 0);
  EXPECT_EQ(parse_profile(profile_to_json(sample_profile())).sharing.measured, 0);
  expect_refused(edited("\"far\": 2", "\"far\": 9", p), "outside");
  expect_refused(edited("\"far_shared\": ", "\"far_shared\": -", p), "outside");
  expect_refused(edited("\"measured\": 1", "\"measured\": 2", p), "outside");
}

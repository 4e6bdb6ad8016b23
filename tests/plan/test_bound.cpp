// The physical bound (model/bound.hpp): equal to the hand-derived bound on
// machines whose bound is known (docs/bound.md), and never above what any
// schedule the library can build takes on the simulator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "model/bound.hpp"
#include "plan/build_schedule.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {
constexpr double MiB = 1048576;
// cluster: per message o = 1 µs to send and to receive, 50 µs inside a
// subnet: a network message pays at least 52 µs of overheads; one between
// subnets 3 ms more (up_latency), the least a byte crossing an uplink pays.
constexpr double kOverheads = 52e-6;
constexpr double kCross = 52e-6 + 3e-3;
const char* kThree = "cluster:subnets=4+4+4,bw=125e6,up_bw=12.5e6";
const char* kThreeSplit = "cluster:subnets=4+4+4,bw=125e6,up_bw=12.5e6,duplex=split";

double bound(const char* spec, CollOp op, int p, uint64_t count, int root = 0) {
  return lower_bound(Collective::make(op, p, count, root), *parse_model(spec)).time;
}
}  // namespace

TEST(Bound, BroadcastAcrossSharedUplinks) {
  // 2 vectors must cross between 3 subnets; each crossing uses the uplink of
  // the subnet it leaves and of the one it enters, each a link both ways:
  // 4 vectors through 3 links of 12.5 MB/s.
  EXPECT_NEAR(bound(kThree, CollOp::bcast, 12, 1 << 20), kCross + 4 * MiB / 37.5e6, 1e-9);
  Bound b = lower_bound(Collective::make(CollOp::bcast, 12, 1 << 20), *parse_model(kThree));
  EXPECT_EQ(b.cut, "all uplink_in links together, both ways");
  EXPECT_TRUE(b.network);
}

TEST(Bound, BroadcastAcrossSplitUplinks) {
  // Each subnet without the root takes the vector in through its uplink.
  Bound b = lower_bound(Collective::make(CollOp::bcast, 12, 1 << 20, 5), *parse_model(kThreeSplit));
  EXPECT_NEAR(b.time, kCross + MiB / 12.5e6, 1e-9);
  EXPECT_EQ(b.bytes, MiB);
}

TEST(Bound, AllreduceIsTwiceTheCrossings) {
  // 2(k-1) vectors cross; split: 4 MiB over the 3 uplinks' inbound sides;
  // shared: 8 MiB over 3 links (the SimGrid harness's three_subnets: 223.7 ms).
  EXPECT_NEAR(bound(kThreeSplit, CollOp::allreduce, 12, 1 << 20), kCross + 4 * MiB / 37.5e6, 1e-9);
  EXPECT_NEAR(bound(kThree, CollOp::allreduce, 12, 1 << 20), kCross + 8 * MiB / 37.5e6, 1e-9);
}

TEST(Bound, AllgatherAndReduceScatterByBlocks) {
  // 12 blocks of b; each reaches the 2 other subnets: 24 b of crossings.
  const double b = 65536;
  EXPECT_NEAR(bound(kThreeSplit, CollOp::allgather, 12, 65536), kCross + 24 * b / 37.5e6, 1e-9);
  EXPECT_NEAR(bound(kThree, CollOp::allgather, 12, 65536), kCross + 48 * b / 37.5e6, 1e-9);
  EXPECT_NEAR(bound(kThreeSplit, CollOp::reduce_scatter_block, 12, 65536), kCross + 24 * b / 37.5e6, 1e-9);
  // Uneven subnets: the small one takes the others' 10 blocks in.
  EXPECT_NEAR(bound("cluster:subnets=2+10,bw=125e6,up_bw=12.5e6,duplex=split", CollOp::allgather, 12, 65536),
              kCross + 10 * b / 12.5e6, 1e-9);
}

TEST(Bound, HostsAndTheirInterfaces) {
  // One subnet of 4 hosts at 125 MB/s: a gather of 1 MiB blocks brings 3 MiB
  // through the root's interface.
  EXPECT_NEAR(bound("cluster:subnets=4,bw=125e6", CollOp::gather, 4, 1 << 20), kOverheads + 3 * MiB / 125e6, 1e-9);
  // Two ranks a host: the host's interface carries what its two ranks need.
  EXPECT_NEAR(bound("cluster:subnets=4,ranks=2,bw=125e6", CollOp::alltoall, 8, 1 << 20),
              kOverheads + 2 * 6 * MiB / 125e6, 1e-9);
}

TEST(Bound, HockneyPorts) {
  // No links: a rank's receive port takes α + bytes·β for what it receives.
  const char* h = "hockney:alpha=10us,beta=1ns";
  EXPECT_NEAR(bound(h, CollOp::bcast, 8, 1000), 10e-6 + 1000e-9, 1e-12);
  EXPECT_NEAR(bound(h, CollOp::gather, 4, 1000), 10e-6 + 3000e-9, 1e-12);
  EXPECT_NEAR(bound(h, CollOp::alltoall, 4, 1000), 10e-6 + 3000e-9, 1e-12);
  EXPECT_NEAR(bound(h, CollOp::scan, 5, 1000), 10e-6 + 1000e-9, 1e-12);
  EXPECT_NEAR(bound(h, CollOp::barrier, 5, 0), 10e-6, 1e-12);
  EXPECT_EQ(bound(h, CollOp::bcast, 1, 1000), 0);
}

TEST(Bound, RefusesAModelTooSmall) {
  EXPECT_THROW(lower_bound(Collective::make(CollOp::bcast, 20, 8), *parse_model(kThree)), InputError);
}

// No schedule of the registry runs faster than the bound on the simulator.
TEST(Bound, NoScheduleBeatsIt) {
  const std::string probed = std::string(HETCOLL_SOURCE_DIR) + "/bench/results/smpi_harness/profiles/";
  const std::vector<std::string> models{kThree, kThreeSplit, "cluster:subnets=3+5,ranks=2,bw=125e6,up_bw=25e6",
                                        "hockney:alpha=10us,beta=1ns,gamma=0.5ns", "postal:lambda=2.5",
                                        "profile:" + probed + "slow_hosts.json",
                                        "profile:" + probed + "three_subnets.json"};
  int checked = 0;
  for (const std::string& spec : models) {
    ModelPtr m = parse_model(spec);
    const int p = m->ranks() > 0 ? std::min(m->ranks(), 16) : 9;
    ModelPtr gm = group_model(m, {}, p);
    for (CollOp op : all_coll_ops()) {
      for (uint64_t count : {uint64_t(8), uint64_t(65536), uint64_t(1) << 20}) {
        if (op == CollOp::alltoall || op == CollOp::alltoallv) count /= 8;
        Collective c = Collective::make(op, p, op == CollOp::barrier ? 0 : count, p / 3, 1);
        if (op == CollOp::gatherv || op == CollOp::scatterv || op == CollOp::allgatherv ||
            op == CollOp::reduce_scatter) {
          std::vector<uint64_t> counts(static_cast<size_t>(p));
          for (int i = 0; i < p; ++i) counts[size_t(i)] = count / 4 * uint64_t(1 + i % 3);
          c = Collective::make_v(op, counts, p / 3, 1);
        } else if (op == CollOp::alltoallv) {
          std::vector<uint64_t> sc(size_t(p) * size_t(p));
          for (size_t i = 0; i < sc.size(); ++i) sc[i] = count / 4 * (i % 5);
          c = Collective::make_alltoallv(p, sc, 1);
        }
        const double lb = lower_bound(c, *gm).time;
        for (const Algorithm* a : algorithms_for(op)) {
          Schedule s;
          try {
            s = build_schedule(a->name, c, *gm, -1, 2000000);
          } catch (const std::exception&) {
            continue;  // does not fit the call, or too large
          }
          SimOptions o;
          o.timeline = false;
          const double t = simulate(s, *gm, o).makespan;
          EXPECT_GE(t, lb * (1 - 1e-9)) << a->name << " " << c.describe() << " on " << spec << ": bound "
                                        << lower_bound(c, *gm).str(gm->unit());
          ++checked;
        }
      }
    }
  }
  std::printf("%d schedules held to the bound\n", checked);
  EXPECT_GT(checked, 1500);
}

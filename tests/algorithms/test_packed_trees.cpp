// packed_bcast and packed_reduce on machines with structure: valid for every
// group, root, size, element size and setting (several ranks a host, ranks
// interleaved across hosts, one subnet, uneven subnets, a probed profile),
// each rank's own program the same as in the whole schedule; and the trees
// they pack (model/tree_packing.hpp) span the hosts and carry the rate the
// physical bound allows where the bound is known by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "model/bound.hpp"
#include "model/machine_model.hpp"
#include "model/tree_packing.hpp"
#include "plan/build_schedule.hpp"
#include "schedule/passes.hpp"
#include "schedule/validator.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;

namespace {
// Every tree: one root (the root host), every other host's parent a host,
// no cycle; the shares sum to 1.
void expect_spanning(const TreePacking& tp, int H, int root) {
  ASSERT_FALSE(tp.trees.empty());
  double shares = 0;
  for (const PackedTree& t : tp.trees) {
    ASSERT_EQ(int(t.parent.size()), H);
    EXPECT_EQ(t.parent[size_t(root)], -1);
    for (int h = 0; h < H; ++h) {
      if (h == root) continue;
      int steps = 0;
      for (int x = h; x != root; x = t.parent[size_t(x)]) {
        ASSERT_GE(t.parent[size_t(x)], 0) << "host " << x << " has no parent";
        ASSERT_LT(++steps, H) << "a cycle through host " << h;
      }
    }
    EXPECT_GT(t.share, 0);
    shares += t.share;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
}
}  // namespace

TEST(PackedTrees, ValidOnEveryLayout) {
  const std::string probed = std::string(HETCOLL_SOURCE_DIR) + "/bench/results/smpi_harness/profiles/";
  const std::vector<std::string> machines{
      "cluster:subnets=3+2+2",
      "cluster:subnets=3+2+2,ranks=2,layout=round",
      "cluster:subnets=1+1+1,ranks=3",
      "cluster:subnets=2+3,ranks=2",
      "cluster:subnets=4,ranks=2",
      "profile:" + probed + "three_subnets.json",
  };
  size_t checked = 0;
  for (const std::string& spec : machines) {
    ModelPtr m = parse_model(spec);
    const int top = std::min(m->ranks(), 16);
    for (int p : {1, 2, 5, top}) {
      if (p > top) continue;
      // The group: ranks p-1 … 0 of the machine (a permuted sub-communicator).
      std::vector<int> map;
      for (int r = p - 1; r >= 0; --r) map.push_back(r);
      ModelPtr g = map_model(m, map);
      for (const char* algo :
           {"packed_bcast", "packed_reduce", "packed_allreduce", "packed_allgather", "packed_reduce_scatter"}) {
        const std::string name = algo;
        const CollOp op = name == "packed_bcast"       ? CollOp::bcast
                          : name == "packed_reduce"    ? CollOp::reduce
                          : name == "packed_allreduce" ? CollOp::allreduce
                          : name == "packed_allgather" ? CollOp::allgather
                                                       : CollOp::reduce_scatter_block;
        const bool forest = op == CollOp::allgather || op == CollOp::reduce_scatter_block;
        for (int root : {0, p / 2, p - 1}) {
          for (uint32_t elem : {1u, 8u}) {
            if (forest && root != 0) continue;  // no root
            for (uint64_t count : {0u, 1u, 7u, 4096u, 200000u}) {
              if (forest) count /= 8;  // per rank
              for (const std::string params : {"", "[trees=1]", "[trees=3,window=1]", "[seg=3000,window=2]"}) {
                Collective c = Collective::make(op, p, count, root, elem);
                const std::string spec_a = std::string(algo) + params;
                Schedule s = build_schedule(spec_a, c, *g);
                ValidationReport rep = validate(s);
                ASSERT_TRUE(rep.ok) << spec << " " << spec_a << " " << c.describe() << ": " << rep.summary();
                if (op == CollOp::allreduce) ASSERT_TRUE(rep.rank_consistent) << spec << " " << c.describe();
                ValidationReport frep = validate(optimize_for_execution(s));
                ASSERT_TRUE(frep.ok) << "optimized " << spec << " " << spec_a << " " << c.describe();
                // A rank's own program is what it runs: the same ops as in the whole.
                if (p > 1 && count == 4096)
                  for (int r : {0, p / 2, p - 1}) {
                    Schedule own = build_schedule(spec_a, c, *g, r);
                    ASSERT_EQ(own.num_ops(r), s.num_ops(r)) << spec << " " << spec_a << " " << c.describe();
                  }
                ++checked;
              }
            }
          }
        }
      }
      // In place (reduce at the root, the others everywhere): the same result.
      if (p > 1) {
        for (CollOp op : {CollOp::reduce, CollOp::allreduce, CollOp::allgather, CollOp::reduce_scatter_block}) {
          Collective c = Collective::make(op, p, 5000, p - 1, 4);
          c.in_place = true;
          const char* algo = op == CollOp::reduce      ? "packed_reduce"
                             : op == CollOp::allreduce ? "packed_allreduce"
                             : op == CollOp::allgather ? "packed_allgather"
                                                       : "packed_reduce_scatter";
          ValidationReport rep = validate(build_schedule(algo, c, *g));
          ASSERT_TRUE(rep.ok) << spec << " " << algo << " in place: " << rep.summary();
        }
        // Uneven blocks (the v forms), some empty, the largest first.
        std::vector<uint64_t> counts;
        for (int r = 0; r < p; ++r) counts.push_back(r % 3 == 1 ? 0 : uint64_t(9000 - 37 * r));
        for (const char* params : {"", "[trees=2,seg=2000]"}) {
          Collective v = Collective::make_v(CollOp::allgatherv, counts, 0, 8);
          ValidationReport rep = validate(build_schedule(std::string("packed_allgather") + params, v, *g));
          ASSERT_TRUE(rep.ok) << spec << " allgatherv: " << rep.summary();
          Collective rs = Collective::make_v(CollOp::reduce_scatter, counts, 0, 8);
          rep = validate(build_schedule(std::string("packed_reduce_scatter") + params, rs, *g));
          ASSERT_TRUE(rep.ok) << spec << " reduce_scatter: " << rep.summary();
        }
      }
    }
  }
  EXPECT_GT(checked, 2000u);
}

TEST(PackedTrees, TreesSpanTheHosts) {
  for (const char* spec : {"cluster:subnets=4+4+4", "cluster:subnets=3+5,ranks=2", "cluster:subnets=1+1+1+1+1",
                           "cluster:subnets=16"}) {
    ModelPtr m = parse_model(spec);
    const Topology& t = *m->topology();
    for (int root : {0, t.hosts() - 1})
      for (TreeDirection d : {TreeDirection::out, TreeDirection::in}) {
        SCOPED_TRACE(spec);
        expect_spanning(pack_trees(t, root, d, 8), t.hosts(), root);
      }
  }
  // One host: one tree of nothing.
  ModelPtr one = parse_model("cluster:subnets=1,ranks=4");
  TreePacking tp = pack_trees(*one->topology(), 0, TreeDirection::out, 8);
  ASSERT_EQ(tp.trees.size(), 1u);
  EXPECT_EQ(tp.trees[0].parent, std::vector<int>{-1});
}

TEST(PackedTrees, RateMeetsTheBoundWhereItIsKnown) {
  // Three subnets behind shared 12.5 MB/s uplinks: the bound's 4 vectors
  // through 3 links allow 3/4 of an uplink (docs/bound.md); two subnets:
  // the one uplink crossed.
  struct Case {
    const char* spec;
    double rate;
  };
  for (Case k : {Case{"cluster:subnets=4+4+4,up_bw=12.5e6", 0.75 * 12.5e6},
                 Case{"cluster:subnets=4+4,up_bw=12.5e6", 12.5e6},
                 Case{"cluster:subnets=4+4+4,up_bw=12.5e6,duplex=split", 12.5e6},
                 Case{"cluster:subnets=4+4+4+4,up_bw=12.5e6", 12.5e6 * 4 / 6}}) {
    ModelPtr m = parse_model(k.spec);
    TreePacking tp = pack_trees(*m->topology(), 0, TreeDirection::out, 8);
    EXPECT_GE(tp.rate, 0.97 * k.rate) << k.spec;
    EXPECT_LE(tp.rate, k.rate * (1 + 1e-9)) << k.spec << ": faster than the bound allows";
    // And the same from the bound itself: 1 MiB at the packing's rate is no
    // faster than the bound's bandwidth part.
    const Bound b = lower_bound(Collective::make(CollOp::bcast, m->ranks(), 1 << 20), *m);
    EXPECT_GE(double(1 << 20) / tp.rate, (b.time - b.overheads) * (1 - 1e-9)) << k.spec;
  }
}

TEST(PackedTrees, SameTreesEveryTime) {
  ModelPtr m = parse_model("cluster:subnets=5+3+4+2,ranks=2");
  const Topology& t = *m->topology();
  TreePacking a = pack_trees(t, 3, TreeDirection::in, 8), b = pack_trees(t, 3, TreeDirection::in, 8);
  ASSERT_EQ(a.trees.size(), b.trees.size());
  for (size_t i = 0; i < a.trees.size(); ++i) {
    EXPECT_EQ(a.trees[i].parent, b.trees[i].parent);
    EXPECT_EQ(a.trees[i].share, b.trees[i].share);
  }
}

TEST(PackedTrees, BeatTheFlatTreesAcrossSharedUplinks) {
  // Where the root's uplink must not carry the vector once per subnet,
  // the packed broadcast is faster than any tree the catalog draws flat.
  ModelPtr m = parse_model("cluster:subnets=4+4+4,up_bw=12.5e6");
  Collective c = Collective::make(CollOp::bcast, 12, 1 << 20);
  SimOptions o;
  o.timeline = false;
  const double packed = simulate(build_schedule("packed_bcast", c, *m), *m, o).makespan;
  for (const char* flat : {"binomial_tree", "chain_bcast", "scatter_collect", "knomial_bcast[k=4]"})
    EXPECT_LT(packed, simulate(build_schedule(flat, c, *m), *m, o).makespan) << flat;
  EXPECT_LT(packed, 1.6 * lower_bound(c, *m).time);
}

// fnf_tree: on Banikazemi's fast and slow nodes the greedy tree is never
// slower than the fixed trees and informs the fast nodes first.
#include <gtest/gtest.h>

#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;

TEST(FnfTree, BeatsFixedTreesOnMixedNodes) {
  for (const char* nodes : {"FSSSSSSSFFFFSSSS", "SSSSSSSSSSSSFFFF", "SFSFSFSFSF", "FFFFFFFF"}) {
    ModelPtr m = parse_model(std::string("hetero:nodes=") + nodes);
    const int n = m->ranks();
    for (CollOp op : {CollOp::bcast, CollOp::reduce})
      for (int root : {0, n - 1})
        for (uint64_t bytes : {8u, 1024u}) {
          Collective c = Collective::make(op, n, bytes, root, 1);
          const double fnf = simulate(generate("fnf_tree", c, *m), *m).makespan;
          for (const char* other : op == CollOp::bcast ? std::vector<const char*>{"binomial_tree", "star_bcast"}
                                                       : std::vector<const char*>{"binomial_reduce", "star_reduce"}) {
            const double t = simulate(generate(other, c, *m), *m).makespan;
            EXPECT_LE(fnf, t * 1.0001) << nodes << " " << coll_op_name(op) << " root " << root << " " << bytes
                                       << " B vs " << other;
          }
        }
  }
}

TEST(FnfTree, FastNodesHearFirst) {
  // Root 0 fast; ranks 1-4 slow, 5-8 fast: the first two receivers are fast.
  ModelPtr m = parse_model("hetero:nodes=FSSSSFFFF");
  Schedule s = generate("fnf_tree", Collective::make(CollOp::bcast, 9, 64, 0, 1), *m);
  SimResult r = simulate(s, *m);
  std::vector<std::pair<double, int>> when;
  for (int v = 1; v < 9; ++v) when.push_back({r.rank_finish[size_t(v)], v});
  std::sort(when.begin(), when.end());
  EXPECT_GE(when[0].second, 5);
  EXPECT_GE(when[1].second, 5);
}

TEST(FnfTree, GatherAndScatterOfSmallBlocks) {
  // Latency-bound blocks: the greedy tree beats the sequential and the
  // binomial tree on mixed nodes (for large blocks the planner keeps the
  // sequential tree, which moves every block once).
  for (const char* nodes : {"FSSSSSSSFFFFSSSS", "SFSFSFSFSF", "FFFFFFFF"}) {
    ModelPtr m = parse_model(std::string("hetero:nodes=") + nodes);
    const int n = m->ranks();
    for (CollOp op : {CollOp::gather, CollOp::scatter})
      for (int root : {0, n / 2}) {
        Collective c = Collective::make(op, n, 8, root, 1);
        const double fnf = simulate(generate("fnf_tree", c, *m), *m).makespan;
        for (const char* other : op == CollOp::gather ? std::vector<const char*>{"star_gather", "binomial_gather"}
                                                      : std::vector<const char*>{"star_scatter", "binomial_scatter"})
          EXPECT_LE(fnf, simulate(generate(other, c, *m), *m).makespan * 1.0001)
              << nodes << " " << coll_op_name(op) << " root " << root << " vs " << other;
      }
  }
}

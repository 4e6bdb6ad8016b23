// Tree packing: spanning trees of a topology's hosts, each to carry a share
// of a broadcast's (or a reduction's) data, chosen so that together they
// use the links' capacities — the fastest way through an uneven network is
// several trees at once, each through different links (Blink, MLSys 2020;
// ForestColl, 2024).
//
// The trees are found by multiplicative weights (Garg & Könemann's
// fractional packing): every link has a length, at first 1/bandwidth; each
// round takes the cheapest spanning tree from the root host (a tree's cost:
// the lengths of the links its edges cross), gives it the rate its busiest
// link allows, and lengthens the links it used in proportion to how much of
// their capacity it took. Trees that cross the same links come out alike and
// are merged; the heaviest `max_trees` are kept and their shares scaled so
// that no link carries more than its bandwidth. The cheapest tree is
// Prim's from the root (each host joins through the host already in the
// tree that reaches it cheapest), improved by moving each host under a
// cheaper parent outside its subtree.
//
// Cost: rounds × O(hosts²). Only the topology is read: ranks of one host
// are one node (a host's ranks share its interface).
#pragma once
#include <cstdint>
#include <vector>

#include "model/topology.hpp"

namespace hetcoll {

struct PackedTree {
  std::vector<int> parent;  // per host; -1 at the root host
  double share = 0;         // fraction of the data (the shares sum to 1)
  int depth = 0;            // edges on the longest path from the root
};

struct TreePacking {
  std::vector<PackedTree> trees;  // heaviest first
  // Bytes per second the trees move together when each carries its share
  // (the busiest link at its bandwidth), and that link's name.
  double rate = 0;
  std::string bottleneck;
};

// Towards the leaves (broadcast: a tree edge parent → child crosses
// route(parent, child)) or towards the root (reduction: child → parent).
enum class TreeDirection { out, in };

TreePacking pack_trees(const Topology& t, int root_host, TreeDirection dir, int max_trees);

}  // namespace hetcoll

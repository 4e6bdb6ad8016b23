// Broadcast trees as pure rank arithmetic: node 0 is the source, other nodes
// are numbered 1..n-1; a node sends to its children in list order. Rank of a
// node: (node + root) mod n.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "schedule/builder.hpp"

namespace hetcoll {

struct Tree {
  std::vector<int32_t> parent;        // parent[0] = -1
  std::vector<uint32_t> child_begin;  // CSR over children, size n+1
  std::vector<int32_t> children;      // in send order

  int size() const { return int(parent.size()); }
  // Builds the CSR from parent[] and, per node, children in send order given
  // by the order of edges (u, v) in `edges`.
  static Tree from_edges(int n, const std::vector<std::pair<int32_t, int32_t>>& edges);
};

// Recursive partition (Bruck §2.1 and §2.4): the source keeps the first
// split(n) nodes, sends to the first node of the rest (the leader), and both
// halves continue. split(n) = ⌈n/2⌉ gives the binomial tree.
Tree partition_tree(int n, const std::function<uint64_t(uint64_t)>& split);

// k-nomial tree of radix k: in round i (largest first) every node holding
// the data sends to k-1 nodes at distance j·k^i (k = 2: a binomial tree).
Tree knomial_tree(int n, int k);
// k-ary tree, nodes numbered breadth first: children of v are kv+1 .. kv+k.
Tree kary_tree(int n, int k);
// Sequential tree: the source sends to every other node in turn.
Tree star_tree(int n);
// Chain: node v sends to v+1.
Tree chain_tree(int n);

}  // namespace hetcoll

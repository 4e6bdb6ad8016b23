// Group-level building blocks (InterCom §4): written once for local ranks of
// a Group, emitted into a Builder for the group's ranks. Generators compose
// them; hybrids run them on rows and columns of a logical mesh.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "algorithms/patterns/group.hpp"
#include "algorithms/patterns/tree.hpp"

namespace hetcoll {

using SliceOf = std::function<Slice(int member)>;

// ---- trees over relative ranks: tree node v is member (v + root) mod size

// The root's `data` reaches every member's `data` (same slice everywhere).
// serial: a node's sends to its children are one at a time (Op::serial),
// whatever the model's send ports — the tree's order is kept on a network
// whose links concurrent sends would share.
void tree_bcast(Builder& b, const Group& g, const Tree& t, int root, Slice data, bool serial = true);

// Combine along the reversed tree: work(m) holds member m's contribution;
// afterwards the root's work(root) holds the combination of all. Children
// are received into scratch and combined smallest subtree first.
void tree_reduce(Builder& b, const Group& g, const Tree& t, int root, const SliceOf& work);

// ---- InterCom's minimum spanning tree over contiguous ranges (§4.1)
// The holder of blocks [lo, hi) keeps the half with itself (the larger one)
// and sends the other half to a leader there; ⌈log2 k⌉ steps, any root, and
// every message carries one contiguous range of blocks.

struct RangeEdge {
  int from, to, a, b;  // `from` sends blocks [a, b) to `to`
};
// All edges, each member's sends in the order it makes them.
std::vector<RangeEdge> mst_edges(int k, int root);
// For each member, the range of blocks it holds during a scatter (its own
// receive), [0, k) for the root.
std::vector<std::pair<int, int>> mst_ranges(int k, int root);

// Root's blocks [0,k) at place(root,0,k) → member m's block m at place(m,m,m+1).
void mst_scatter(Builder& b, const Group& g, int root, const Place& place);
// The reverse: member m's block at place(m,m,m+1) → root's place(root,0,k).
void mst_gather(Builder& b, const Group& g, int root, const Place& place);

// A Place for scatter/gather staging in scratch: member m keeps the range it
// handles (mst_ranges) in fresh tmp space laid out like `blocks`, except that
// `own(m)` is used when a member only ever holds its own block and
// `at_root(a, b)` at the root.
Place mst_staging(Builder& b, const Group& g, int root, const Blocks& blocks,
                  const std::function<Slice(int a, int b)>& at_root, const SliceOf& own);

// The MST scatter of blocks into each member's own(m), staged by
// mst_staging: a member that only ever holds its own block receives it
// there; the root and the members that pass blocks on copy theirs to own(m)
// at the end. at_root(a, b): the root's blocks [a, b).
void mst_scatter_blocks(Builder& b, const Group& g, int root, const Blocks& blocks,
                        const std::function<Slice(int a, int b)>& at_root, const SliceOf& own);
// The reverse: the members that stage blocks (the root, those that collect
// others') first copy their own(m) into the staging, then the MST gather
// brings every block to at_root at the root.
void mst_gather_blocks(Builder& b, const Group& g, int root, const Blocks& blocks,
                       const std::function<Slice(int a, int b)>& at_root, const SliceOf& own);

// ---- bucket (ring) primitives (§4.2), p-1 steps to the right neighbour
// Block sizes must be the same on every member (vector places).

// Member m starts with block m at place(m,m,m+1); every member ends with all
// blocks at place(·, i, i+1).
void ring_allgather(Builder& b, const Group& g, const Place& place);

// Every member's work(m, ·) holds its whole contribution; member m ends with
// the combination of block m from all members at work(m, m, m+1).
void ring_reduce_scatter(Builder& b, const Group& g, const Place& work);

}  // namespace hetcoll

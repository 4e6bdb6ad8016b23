// What packed_bcast and packed_reduce share: the trees packed on the
// group's topology (model/tree_packing.hpp), which rank stands for each
// host, which bytes each tree carries and in what order the segments go;
// and what every packed algorithm shares: how a host's rank passes a piece
// on or takes it in (across subnets first) and combines what comes in.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "algorithms/patterns/common.hpp"
#include "model/tree_packing.hpp"

namespace hetcoll {

struct PackedLayout {
  TreePacking packing;
  int root_host = 0;
  std::vector<int> host;                  // per rank
  std::vector<int> subnet;                // per host (all 0 without a topology)
  std::vector<int> rep;                   // per host: the rank in the trees (the root on its host)
  std::vector<std::vector<int>> local;    // per host: its other ranks
  // Per tree, per host: the child hosts, larger subtrees first.
  std::vector<std::vector<std::vector<int>>> children;
  std::vector<Blocks> segments;           // per tree: its bytes, cut into segments
  // Per host: (tree, segment) in the order its ranks take them — the order
  // in which the segments reach the host (or, towards the root, can leave
  // it), so that a rank's sends, which leave in program order, never wait
  // for a segment of a slow tree while a fast tree's is there.
  std::vector<std::vector<std::pair<int, int>>> order;
  std::vector<std::pair<int, int>> all;   // (tree, segment), tree by tree
  uint64_t seg = 0;                       // segment bytes
  int trees_asked = 0;
  int window = 0;                         // messages in flight to one peer
  uint64_t largest_segment() const;
};

// The layout for the context's call: trees=K caps the trees (default
// kPackedTrees), seg=S the segment bytes (default: chosen by the model for
// the deepest tree). Without a topology of several hosts, one chain of
// ranks from the root (what chain_bcast/chain_reduce run).
PackedLayout packed_layout(const GenContext& ctx, TreeDirection dir, bool combine);
constexpr int kPackedTrees = 8;
constexpr int kPackedWindow = 3;
// The planner weighs packed trees on groups of at most this many hosts:
// packing 128 hosts takes about 20 ms of a decision, 256 about 80
// (bench/bench_packing.cpp). Bounded builds (the planner, the MPI layer,
// `plan`) refuse more, saying so; an unbounded one (bench_packing, the
// Python `generate` without op_limit) packs any number.
constexpr int kPackedHosts = 128;
// Vectors too short to pipeline (below two segments) are weighed on groups
// of at most this many hosts (packed_distinct).
constexpr int kPackedSmallHosts = 32;

// Per host h, per segment j of L.all: when it is due at h (whole ns) with
// the data flowing `dir` — the key of PackedLayout::order (`ahead`: deep
// trees first). Along every edge the keys of its two hosts differ by one
// constant: orders sorted by them match at both ends.
std::vector<std::vector<int64_t>> segment_due(const PackedLayout& L, const GenContext& ctx, TreeDirection dir,
                                              bool ahead);

inline int topology_subnet(const PackedLayout& L, int host) { return L.subnet[size_t(host)]; }

// One rank's sends of a packed schedule: at most `window` in flight to one
// peer (the next waits for the one `window` before it) — concurrent
// messages of one pair would share the wire and all arrive late (over TCP
// they queue anyway), while messages to different peers go at once — and,
// where given, after another send (`first`: the segment's copy across
// subnets; kNoSend: none).
class PeerSends {
 public:
  static constexpr uint32_t kNoSend = UINT32_MAX;
  PeerSends(Builder& b, int rank, int window) : b_(b), rank_(rank), window_(size_t(window)) {}
  uint32_t send(int to, const Slice& piece, uint32_t first = kNoSend);

 private:
  Builder& b_;
  int rank_;
  size_t window_;
  std::map<int, std::vector<uint32_t>> sent_;  // per peer, its sends so far
};

// A builder named for the spec that rebuilds the schedule: the layout's
// seg, trees and window.
Builder packed_builder(const GenContext& ctx, const char* name, const PackedLayout& L);

// Host h's rank passing a piece on to its peers in one tree, or taking it
// in from them: the hosts `hosts` (by their ranks in the trees, L.rep) but
// `skip_host`, and the other ranks of its host but `skip_rank` (-1: skip
// none).
// Across subnets first, act(rank, PeerSends::kNoSend) for each, the last
// of those acts' ids kept; then act(rank, that id) for the others — the
// host's own ranks before (`local_first`) or after the hosts of its subnet
// — so that they can wait until the crossing is under way: a flow of long
// latency gets a small share of an interface beside ones of short latency
// (TCP's and SimGrid's latency-weighted sharing), and the slow uplink path
// is the one that must not lose time.
template <class Act>
void across_subnets_first(const PackedLayout& L, int h, const std::vector<int>& hosts, int skip_host, int skip_rank,
                          bool local_first, Act act) {
  uint32_t far = PeerSends::kNoSend;
  const int sub = topology_subnet(L, h);
  for (int v : hosts)
    if (v != skip_host && topology_subnet(L, v) != sub) far = act(L.rep[size_t(v)], PeerSends::kNoSend);
  auto subnet = [&] {
    for (int v : hosts)
      if (v != skip_host && topology_subnet(L, v) == sub) act(L.rep[size_t(v)], far);
  };
  auto host = [&] {
    for (int l : L.local[size_t(h)])
      if (l != skip_rank) act(l, far);
  };
  if (local_first) {
    host();
    subnet();
  } else {
    subnet();
    host();
  }
}

// The most peers host h's rank takes a piece in from: its neighbours in
// one tree (per_tree[k][h]: children, or adjacent hosts), at most, and the
// other ranks of its host.
size_t packed_fan_in(const PackedLayout& L, const std::vector<std::vector<std::vector<int>>>& per_tree, int h);

// A rank's scratch for combining pieces as they come in: two slots of
// slot_len bytes per peer of its fan-in, taken in turn, so that receiving
// the next piece and combining the last overlap.
class CombineSlots {
 public:
  CombineSlots(Builder& b, int rank, size_t fan_in, uint64_t slot_len);
  // Receives piece.len bytes from `from` (after `first`, unless
  // PeerSends::kNoSend) into the next slot and combines them into `piece`;
  // returns the receive.
  uint32_t take(int from, const Slice& piece, uint32_t first);

 private:
  Builder& b_;
  int rank_;
  uint64_t nslots_, slot_len_, base_, next_ = 0;
};

// What packed_allgather and packed_reduce_scatter share: the trees packed
// from rank 0's host, taken as undirected trees and hung from every host in
// turn. Rank s's block goes out along (allgather) or is combined towards
// (reduce-scatter) each tree k hung from s's host, the tree's share of the
// block. An edge then carries, each way, the shares of the blocks of the
// hosts on its side: a cut between subnets crossed once per tree carries
// exactly the blocks that must cross it.
struct ForestItem {
  int rank = 0;      // whose block (allgather: its source; reduce-scatter: where it ends)
  int tree = 0;
  uint64_t off = 0;  // bytes [off, off + len) of the block
  uint64_t len = 0;
};

struct PackedForest {
  PackedLayout L;  // the hosts, their ranks, the trees, seg and window (segments, order: unused)
  Blocks blocks;   // per rank: its block (allgather: in the output; reduce-scatter: in the input)
  std::vector<ForestItem> items;
  // Per tree, per host: its neighbours, across subnets first.
  std::vector<std::vector<std::vector<int>>> adj;
  // Per tree, per host g: each host's parent with the tree hung from g.
  std::vector<std::vector<std::vector<int>>> parent;
  // Per host: the items (indices) in the order its ranks take them — by
  // when each is due there, which along every edge differs by one constant
  // at its two ends, so that a pair's messages match in order.
  std::vector<std::vector<uint32_t>> order;

  int parent_of(const ForestItem& it, int h) const {
    return parent[size_t(it.tree)][size_t(L.host[size_t(it.rank)])][size_t(h)];
  }
};

// The forest for the context's call, its blocks `blocks` (`dir`: out for
// an allgather, in for a reduce-scatter). Parameters as packed_layout.
PackedForest packed_forest(const GenContext& ctx, const Blocks& blocks, TreeDirection dir, bool combine);

// The registry's facts every packed algorithm shares: its parameters
// (packed_params), when it is worth weighing (packed_distinct; a forest:
// forest_distinct) and its settings (`variants`: packed_variants for its
// name, on the vector or, for a forest, all its blocks).
void packed_registry_entry(Algorithm& a, bool forest, Variants variants);
// The registry's facts about the algorithms' parameters.
std::vector<ParamSpec> packed_params();
// The settings the planner weighs for `bytes` (the vector; a forest's
// blocks together): the default, three trees, two messages in flight a peer
// (the SimGrid harness's platforms each pick one of them); below two
// segments only the default — one segment has nothing for them to share,
// and each setting simulated takes from the decision's budget.
std::vector<std::string> packed_variants(const std::string& name, const MachineModel& m, uint64_t bytes);
// Worth weighing: the model has hosts joined by links, at most
// kPackedHosts of them, and the vector is two segments or more (else at
// most kPackedSmallHosts hosts).
bool packed_distinct(const Collective& c, const MachineModel& m);
// The same for a forest, on all the blocks together.
bool forest_distinct(const Collective& c, const MachineModel& m);

}  // namespace hetcoll

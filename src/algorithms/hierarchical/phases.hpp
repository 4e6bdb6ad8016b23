// The phase machinery the hierarchical collectives share; one collective a
// file beside it (bcast.cpp, reduce.cpp, allreduce.cpp, gather_scatter.cpp,
// allgather.cpp, reduce_scatter.cpp, scan.cpp, barrier.cpp, alltoall.cpp).
// algorithms/hierarchical/hierarchical.cpp describes the algorithm, registers it and
// prices it; the levels and phases: algorithms/patterns/levels.hpp.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/levels.hpp"

namespace hetcoll::hierarchical {

inline Collective sub_call(CollOp op, int n, uint64_t count, const Collective& parent) {
  Collective c = Collective::make(op, n, count, 0, parent.elem_size);
  // An allreduce phase gives every member the same bits whatever the
  // operation (hierarchical is rank-consistent: padding bytes of a long
  // double included), so its algorithm must be rank-consistent.
  c.order_free = op == CollOp::allreduce ? false : parent.order_free;
  return c;
}

// A piece of the vector: elements [first, first + count).
struct Piece {
  uint64_t first = 0, count = 0;
};

// The vector in `pieces` nearly equal pieces of whole elements: each runs
// the phases on its own, so a piece crosses the slow links while the one
// before it spreads inside the subnets (the builder's data dependencies
// pipeline them).
inline std::vector<Piece> pieces_of(const GenContext& ctx) {
  const uint64_t n = ctx.coll.count;
  const uint64_t k = std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(param_int(ctx, "pieces", 1)), n));
  std::vector<Piece> v;
  for (uint64_t i = 0, at = 0; i < k; ++i) {
    const uint64_t len = n / k + (i < n % k ? 1 : 0);
    v.push_back({at, len});
    at += len;
  }
  return v;
}

// The schedule's name: the spec that rebuilds it.
inline std::string name_of(const GenContext& ctx) {
  const int k = param_int(ctx, "pieces", 1);
  std::string p;  // in the spec's order (by name)
  if (k > 1) p = cat("pieces=", k);
  if (param_int(ctx, "shares", 0)) p += cat(p.empty() ? "" : ",", "shares=1");
  return p.empty() ? std::string("hierarchical") : cat("hierarchical[", p, "]");
}

// Places a sub-collective's in/out bytes at the piece's offset.
inline Slice shift(const Slice& s, uint64_t by) { return {s.buf, s.off + by, s.len}; }

// The counts of `members`' blocks: a gather (equal counts) where they are
// alike, else a gatherv — or scatter/scatterv.
inline Collective blocks_call(CollOp regular, CollOp v, const std::vector<uint64_t>& counts, const Collective& parent) {
  bool equal = true;
  for (uint64_t x : counts) equal = equal && x == counts[0];
  if (equal && !counts.empty()) return sub_call(regular, int(counts.size()), counts[0], parent);
  Collective c = Collective::make_v(v, counts, 0, parent.elem_size);
  c.order_free = parent.order_free;
  return c;
}

// Are every host's ranks consecutive, and every subnet's? (A prefix over
// ranks then splits at hosts and subnets.)
inline bool consecutive(const Levels& L) {
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  auto span_ok = [](const std::vector<int>& ranks) {
    if (ranks.empty()) return true;
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    return size_t(*hi - *lo) + 1 == ranks.size();
  };
  for (auto& g : L.hosts)
    if (!span_ok(g)) return false;
  for (auto& g : L.subnets) {
    std::vector<int> ranks;
    for (int h : g) ranks.insert(ranks.end(), host_of_leader[h]->begin(), host_of_leader[h]->end());
    if (!span_ok(ranks)) return false;
  }
  return true;
}

// Every subnet's ranks (host by host, leaders first), subnets in top order.
inline std::vector<std::vector<int>> subnet_members(const Levels& L) {
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  std::vector<std::vector<int>> members;
  for (auto& g : L.subnets) {
    members.emplace_back();
    for (int h : g) members.back().insert(members.back().end(), host_of_leader[h]->begin(), host_of_leader[h]->end());
  }
  return members;
}

// Combines everybody's input up the hierarchy to the leaders of `upto`'s
// groups; returns where each rank's partial result lies (its input where it
// combined nothing). The root's partial at level `final_level` goes to
// `root_out` when given.
std::vector<Slice> reduce_up(Builder& b, const GenContext& ctx, const Levels& L, bool include_top, const Slice* root_out, const Piece& pc);

// shares=1: allreduce by shares. Each subnet owns a share of the vector,
// sized to its uplink; the others send it their partial sums of that share
// and it sends back the result (a reduce-scatter and an allgather among
// subnets). Across its uplink a subnet then carries (1 + (S-2)x) of the
// vector each way for a share x: the slowest subnet owns nothing and
// carries one vector each way (the least any allreduce can), the others
// split the vector so that none takes longer (S = 2: x in proportion to the
// uplinks, each carries one vector). Three ranks of a subnet play the roles
// (its host leaders, where it has them): `up` sends the subnet's partial
// sums of the others' shares, `own` combines its share and sends the
// result, `down` receives the others' results — so that no pair of ranks
// streams both ways (over TCP such a pair's two directions take turns:
// profile bandwidth_same_pair).
struct ShareRoles {
  std::vector<int> up, own, down;  // per subnet
  std::vector<double> share;       // per subnet, summing to 1
};

// Each subnet's share (sized to its uplink: the slowest subnet owns
// nothing when there are three or more) and the ranks in each role.
ShareRoles share_roles(const MachineModel& m, const Levels& L);
// A piece's elements split among the subnets by their shares (whole
// elements, largest remainders; non-owners get none).
std::vector<uint64_t> split_by_shares(uint64_t count, const std::vector<double>& share);

// The generators, one collective (or one variant) each.
Schedule bcast(const GenContext& ctx);
Schedule reduce(const GenContext& ctx);
Schedule allreduce(const GenContext& ctx);
Schedule allreduce_slices(const GenContext& ctx);
Schedule gather_or_scatter(const GenContext& ctx);
Schedule allgather(const GenContext& ctx);
Schedule reduce_scatter(const GenContext& ctx);
Schedule scan(const GenContext& ctx);
Schedule barrier(const GenContext& ctx);
Schedule barrier_direct(const GenContext& ctx);
Schedule allgather_direct(const GenContext& ctx);
Schedule alltoall_leaders(const GenContext& ctx);

}  // namespace hetcoll::hierarchical

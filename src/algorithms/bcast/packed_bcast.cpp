// packed_bcast — broadcast along several spanning trees of the hosts at
// once, each carrying a share of the vector sized to what the links allow.
//
// The trees come from the group's topology (model/tree_packing.hpp): the
// fractional packing of spanning trees from the root's host over the
// links' bandwidths — on subnets joined by uplinks, trees that enter each
// subnet through a different uplink path, so that no uplink carries the
// vector more often than it must. Tree k carries bytes [o_k, o_k + s_k·m).
// Each tree is pipelined in segments: a host's rank passes segment i on to
// its child hosts (larger subtrees first) and to the other ranks of its host
// as soon as it has it. Segments of all trees go in the order of how much of
// their tree they complete.
// Steps: about depth + k segment steps (k segments of the widest tree).
// Bytes: every rank receives m once; a host sends m·Σ_k s_k·children_k(h).
// Constraints: needs a topology of hosts to differ from a chain (without
// one, one chain of ranks from the root).
// Parameters: trees (most trees, default 8), seg (segment bytes; default by
// the model for the deepest tree, at most 512 segments in all).
// Source: packing spanning trees for broadcast (Edmonds 1973; Blink, MLSys
// 2020; ForestColl 2024), fractional packing by multiplicative weights
// (Garg & Könemann 1998); pipelining as InterCom §8.
// Cost: about m / (the packing's rate) + depth segment times
#include "algorithms/all.hpp"
#include "algorithms/patterns/packed_trees.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  PackedLayout L = packed_layout(ctx, TreeDirection::out, false);
  Builder b = packed_builder(ctx, "packed_bcast", L);
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    const int h = L.host[size_t(r)];
    const bool rep = L.rep[size_t(h)] == r;
    PeerSends sends(b, r, L.window);
    for (auto [k, i] : L.order[size_t(h)]) {
      const Blocks& seg = L.segments[size_t(k)];
      const Slice piece{Buf::out, seg.off[size_t(i)], seg.len[size_t(i)]};
      if (piece.len == 0) continue;
      if (!rep) {
        b.recv(r, L.rep[size_t(h)], piece);
        continue;
      }
      const int parent = L.packing.trees[size_t(k)].parent[size_t(h)];
      if (parent >= 0) b.recv(r, L.rep[size_t(parent)], piece);
      // Across subnets first; this segment's sends inside the subnet and
      // the host wait until it is under way.
      across_subnets_first(L, h, L.children[size_t(k)][size_t(h)], -1, -1, false,
                           [&](int to, uint32_t first) { return sends.send(to, piece, first); });
    }
  }
  return b.finish();
}
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  return packed_variants("packed_bcast", m, vector_bytes(c));
}
}  // namespace

Algorithm packed_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate};
  packed_registry_entry(a, false, variants);
  return a;
}
}  // namespace hetcoll

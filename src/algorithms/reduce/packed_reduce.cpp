// packed_reduce — combine-to-one along several spanning trees of the hosts
// at once, each combining a share of the vector sized to what the links
// allow: the broadcast's packing (packed_bcast.cpp) with the data flowing
// towards the root.
//
// Tree k combines bytes [o_k, o_k + s_k·m). Segment by segment, a host's
// rank takes in the other ranks of its host and its child hosts, combines
// each into its partial vector (a scratch copy of its input; the root's
// output) and passes the segment to its parent host. Two slots per
// incoming message keep receiving and combining overlapped.
// Steps: about depth + k segment steps. Bytes: every rank but the root
// sends m once; a host receives m·Σ_k s_k·children_k(h).
// Constraints: a commutative operator (MPI's built-in ones): contributions
// are combined in the order they arrive.
// Parameters: trees (most trees, default 8), seg (segment bytes).
// Source: as packed_bcast (in-trees: Edmonds' packing of the reversed
// graph); pipelined reduce as chain_reduce.
// Cost: about m / (the packing's rate) + depth segment times (combining overlapped)
#include "algorithms/all.hpp"
#include "algorithms/patterns/packed_trees.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const uint64_t m = vector_bytes(c);
  PackedLayout L = packed_layout(ctx, TreeDirection::in, true);
  Builder b = packed_builder(ctx, "packed_reduce", L);
  const Slice in{Buf::in, 0, m};
  const uint64_t slot_len = L.largest_segment();
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    const int h = L.host[size_t(r)];
    PeerSends sends(b, r, L.window);  // a peer's sends (window, see packed_trees.hpp)
    auto send = [&](int to, const Slice& piece) { sends.send(to, piece); };
    if (L.rep[size_t(h)] != r) {  // another rank of the host: its input to the host's rank
      for (auto [k, i] : L.order[size_t(h)]) {
        const Blocks& seg = L.segments[size_t(k)];
        if (seg.len[size_t(i)]) send(L.rep[size_t(h)], in.sub(seg.off[size_t(i)], seg.len[size_t(i)]));
      }
      continue;
    }
    const size_t fan_in = packed_fan_in(L, L.children, h);
    Slice work = in;
    if (r == c.root) work = Slice{Buf::out, 0, m};
    else if (fan_in > 0) work = Slice{Buf::tmp, b.alloc_tmp(r, m), m};
    if (work.buf != Buf::in) b.copy(r, work, in);
    CombineSlots slots(b, r, fan_in, slot_len);
    for (auto [k, i] : L.order[size_t(h)]) {
      const Blocks& seg = L.segments[size_t(k)];
      if (seg.len[size_t(i)] == 0) continue;
      const Slice piece = work.sub(seg.off[size_t(i)], seg.len[size_t(i)]);
      // Across subnets first: the receives inside the host and the subnet
      // are posted once it is in.
      across_subnets_first(L, h, L.children[size_t(k)][size_t(h)], -1, -1, true,
                           [&](int from, uint32_t first) { return slots.take(from, piece, first); });
      const int parent = L.packing.trees[size_t(k)].parent[size_t(h)];
      if (parent >= 0) send(L.rep[size_t(parent)], piece);
    }
  }
  return b.finish();
}
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  return packed_variants("packed_reduce", m, vector_bytes(c));
}
}  // namespace

Algorithm packed_reduce_algorithm() {
  Algorithm a{{CollOp::reduce}, generate};
  packed_registry_entry(a, false, variants);
  return a;
}
}  // namespace hetcoll

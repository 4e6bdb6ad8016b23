// packed_reduce_scatter — reduce_scatter_block (and reduce_scatter) along
// the packed spanning trees, each hung from every block's host: rank d's
// block is combined towards d's host along every tree k, the tree's share
// of it — packed_allgather with the data flowing the other way.
//
// Piece by piece (block, tree, segment), in the order each host must send
// it (packed_trees.hpp), a host's rank takes in the piece from the other
// ranks of its host and from its neighbours but the one towards the block's
// host (across subnets first), combines each into its scratch copy of the
// input, and passes the sum on towards the block's host; there it lands in
// the owner's output (another rank of the host: that rank adds its own).
// Two slots per incoming message keep receiving and combining overlapped.
// Steps: about depth + pieces. Bytes: every rank sends every block but its
// own once (towards the host's rank, or onwards); an edge carries each way
// the shares of the blocks whose hosts are on its far side.
// Constraints: a commutative operator (MPI's built-in ones): contributions
// are combined in the order they arrive; each block is combined on one
// rank, so every rank gets one answer.
// Parameters: trees, seg, window (as packed_bcast).
// Source: as packed_allgather (reduce-scatter forests: ForestColl 2024);
// combining as packed_reduce.
// Cost: about the input vector over the packing's rate (each cut its blocks) + depth piece times
#include "algorithms/all.hpp"
#include "algorithms/patterns/packed_trees.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const Blocks blocks = coll_blocks(c);
  const uint64_t m = blocks.total();
  const PackedForest F = packed_forest(ctx, blocks, TreeDirection::in, true);
  const PackedLayout& L = F.L;
  Builder b = packed_builder(ctx, "packed_reduce_scatter", L);
  uint64_t slot_len = 0;
  for (const ForestItem& it : F.items) slot_len = std::max(slot_len, it.len);
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r) || m == 0) continue;
    const int h = L.host[size_t(r)];
    const int rep = L.rep[size_t(h)];
    PeerSends sends(b, r, L.window);
    const size_t fan_in = rep == r ? packed_fan_in(L, F.adj, h) : 0;
    // What the rank combines into and sends from: a scratch copy of its
    // input where it combines or where the input shares the output's bytes
    // (in place), else the input itself.
    Slice work{Buf::in, 0, m};
    if (fan_in > 0 || c.in_place) {
      work = Slice{Buf::tmp, b.alloc_tmp(r, m), m};
      b.copy(r, work, {Buf::in, 0, m});
    }
    if (rep != r) {  // another rank of the host: its pieces to the host's rank; its own block's sum from it
      const uint64_t slot = b.alloc_tmp(r, slot_len);
      for (uint32_t j : F.order[size_t(h)]) {
        const ForestItem& it = F.items[j];
        const Slice piece = work.sub(blocks.off[size_t(it.rank)] + it.off, it.len);
        if (it.rank != r) {
          sends.send(rep, piece);
          continue;
        }
        const Slice got{Buf::tmp, slot, it.len}, out{Buf::out, it.off, it.len};
        b.recv(r, rep, got);
        b.copy(r, out, piece);
        b.reduce(r, out, got);
      }
      continue;
    }
    CombineSlots slots(b, r, fan_in, slot_len);
    for (uint32_t j : F.order[size_t(h)]) {
      const ForestItem& it = F.items[j];
      const Slice piece = work.sub(blocks.off[size_t(it.rank)] + it.off, it.len);
      // Across subnets first; the others are posted once it is in (as packed_reduce).
      const int parent = F.parent_of(it, h);
      across_subnets_first(L, h, F.adj[size_t(it.tree)][size_t(h)], parent, it.rank, true,
                           [&](int from, uint32_t first) { return slots.take(from, piece, first); });
      if (parent >= 0) sends.send(L.rep[size_t(parent)], piece);
      else if (it.rank == r) b.copy(r, {Buf::out, it.off, it.len}, piece);
      else sends.send(it.rank, piece);  // the sum but the owner's own part, to the owner on this host
    }
  }
  return b.finish();
}
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  return packed_variants("packed_reduce_scatter", m, c.total_bytes());
}
}  // namespace

Algorithm packed_reduce_scatter_algorithm() {
  Algorithm a{{CollOp::reduce_scatter_block, CollOp::reduce_scatter}, generate};
  packed_registry_entry(a, true, variants);
  return a;
}
}  // namespace hetcoll

// packed_allgather — allgather (and allgatherv) along the broadcast's
// packed spanning trees, each hung from every block's host: rank s's block
// goes out along every tree k from s's host, the tree's share of it.
//
// The trees are the broadcast's (model/tree_packing.hpp), packed from rank
// 0's host on the links' bandwidths and taken as undirected trees. Hung
// from host g, an edge carries g's shares away from g; over all blocks an
// edge carries, each way, the shares of the blocks on its side — a cut
// between subnets that a tree crosses once carries exactly the blocks that
// must cross it, and the trees spread that over the uplinks as the
// broadcast's packing spreads one vector. A host's rank takes every piece
// (block, tree, segment) in the order it is due there (packed_trees.hpp),
// passes it on to its neighbours but the one it came from (across subnets
// first, all at once: unlike packed_bcast's, a piece's copies inside the
// subnet do not wait for the one across — there many pieces cross at once
// and each host's next crossing must not wait for its last piece's local
// copies) and to the other ranks of its host; those send their own pieces
// to it. Segments: one block's, each riding one tree, at least the eager
// size (packed_trees.hpp).
// Steps: about depth + pieces. Bytes: every rank receives every other
// block once; a host sends Σ_k s_k·Σ_(neighbours v) (the blocks on its side of v).
// Constraints: needs a topology of hosts to differ from a chain (without
// one: one line of ranks, every block along it both ways).
// Parameters: trees, seg, window (as packed_bcast).
// Source: tree packing (Edmonds 1973; Blink, MLSys 2020), forests for
// allgather from a broadcast packing (ForestColl 2024); the pieces'
// pipelining as packed_bcast.
// Cost: about the gathered vector over the packing's rate (each cut its blocks) + depth piece times
#include "algorithms/all.hpp"
#include "algorithms/patterns/packed_trees.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const Blocks blocks = coll_blocks(c);
  const PackedForest F = packed_forest(ctx, blocks, TreeDirection::out, false);
  const PackedLayout& L = F.L;
  Builder b = packed_builder(ctx, "packed_allgather", L);
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    const int h = L.host[size_t(r)];
    const int rep = L.rep[size_t(h)];
    PeerSends sends(b, r, L.window);
    for (uint32_t j : F.order[size_t(h)]) {
      const ForestItem& it = F.items[j];
      const Slice piece{Buf::out, blocks.off[size_t(it.rank)] + it.off, it.len};
      const Slice mine{Buf::in, it.off, it.len};
      if (rep != r) {  // another rank of the host: its own pieces to the host's rank, the rest from it
        if (it.rank == r) sends.send(rep, mine);
        else b.recv(r, rep, piece);
        continue;
      }
      const int parent = F.parent_of(it, h);
      if (it.rank != r) b.recv(r, parent >= 0 ? L.rep[size_t(parent)] : it.rank, piece);
      const Slice src = it.rank == r ? mine : piece;
      // Across subnets first, the others not waiting for those.
      across_subnets_first(L, h, F.adj[size_t(it.tree)][size_t(h)], parent, it.rank, false,
                           [&](int to, uint32_t) { return sends.send(to, src); });
    }
    const uint64_t own = blocks.len[size_t(r)];
    if (own) b.copy(r, {Buf::out, blocks.off[size_t(r)], own}, {Buf::in, 0, own});
  }
  return b.finish();
}
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  return packed_variants("packed_allgather", m, c.total_bytes());
}
}  // namespace

Algorithm packed_allgather_algorithm() {
  Algorithm a{{CollOp::allgather, CollOp::allgatherv}, generate};
  packed_registry_entry(a, true, variants);
  return a;
}
}  // namespace hetcoll

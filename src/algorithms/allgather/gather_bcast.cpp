// gather_bcast — InterCom's short-vector collect (§5.1): MST gather to rank
// 0, then binomial broadcast of the whole vector; allgather and allgatherv.
//
// When the displacements are in rank order everything happens in `out`;
// otherwise the vector is assembled and broadcast in scratch and every rank
// copies the blocks into place (bytes between blocks stay untouched).
// Steps: 2⌈log2 p⌉. Cost (equal blocks, n = p·b):
// 2⌈log2 p⌉α + ((p-1)/p + ⌈log2 p⌉)·nβ.
// Cost: 2 ceil(log2 p) alpha + ((p-1)/p + ceil(log2 p)) n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "gather_bcast");
  Blocks blocks = coll_blocks(c), pk = packed(blocks);
  const bool direct = contiguous(blocks);
  const uint64_t total = pk.span(0, p);
  std::vector<uint64_t> base(static_cast<size_t>(p), 0);
  if (!direct)
    for (int r = 0; r < p; ++r)
      if (b.wants(r)) base[size_t(r)] = b.alloc_tmp(r, total);
  auto vec = [&](int m, int x, int y) {
    return direct ? Slice{Buf::out, blocks.off[size_t(x)], blocks.span(x, y)}
                  : Slice{Buf::tmp, base[size_t(m)] + pk.off[size_t(x)], pk.span(x, y)};
  };
  Group g = Group::all(p);
  for (int r = 0; r < p; ++r)
    if (b.wants(r) && blocks.len[size_t(r)]) b.copy(r, vec(r, r, r + 1), {Buf::in, 0, blocks.len[size_t(r)]});
  mst_gather(b, g, 0, vec);
  if (direct) {
    tree_bcast(b, g, binomial_tree(p), 0, {Buf::out, 0, total});
  } else {
    // Every rank's scratch vector sits at its own offset: broadcast rank by rank.
    Tree t = binomial_tree(p);
    for (int r = 0; r < p; ++r) {
      if (!b.wants(r) || total == 0) continue;
      Slice mine = vec(r, 0, p);
      if (t.parent[size_t(r)] >= 0) b.recv(r, t.parent[size_t(r)], mine);
      for (uint32_t k = t.child_begin[size_t(r)]; k < t.child_begin[size_t(r) + 1]; ++k)
        b.send(r, t.children[k], mine);
      for (int i = 0; i < p; ++i)
        if (blocks.len[size_t(i)]) b.copy(r, {Buf::out, blocks.off[size_t(i)], blocks.len[size_t(i)]}, vec(r, i, i + 1));
    }
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || !contiguous(blocks) || blocks.len[0] == 0) return std::nullopt;
  const int p = ctx.coll.nranks;
  const double L = ceil_log2(uint64_t(p)), bl = double(blocks.len[0]);
  return Terms{2 * L, (p - 1) * bl + L * p * bl, 0};
}
}  // namespace

Algorithm gather_bcast_algorithm() {
  return Algorithm{{CollOp::allgather, CollOp::allgatherv}, generate, closed};
}
}  // namespace hetcoll

// star_gather — linear gather and gatherv: every rank sends its block to the
// root, which receives them straight into `out` in rank order.
//
// Steps: p-1 receives at the root (one port: they serialise); p-1 messages.
// Cost: (p-1)(α + bβ) for blocks of b bytes. Source: the sequential tree of
// MPICH's gather, Banikazemi et al. §3.3 (eqs. 10-12).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  Builder b = make_builder(ctx, "star_gather");
  Blocks blocks = coll_blocks(c);
  for (int j = 0; j < p; ++j) {
    int r = (root + j) % p;
    Slice dst{Buf::out, blocks.off[size_t(r)], blocks.len[size_t(r)]}, src{Buf::in, 0, blocks.len[size_t(r)]};
    if (dst.len == 0) continue;
    if (r == root) {
      if (b.wants(root)) b.copy(root, dst, src);
    } else {
      if (b.wants(r)) b.send(r, root, src);
      if (b.wants(root)) b.recv(root, r, dst);
    }
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  return double(ctx.coll.nranks - 1) * message_terms(blocks.len[0]);
}
}  // namespace

Algorithm star_gather_algorithm() {
  Algorithm a;
  a.name = "star_gather";
  a.ops = {CollOp::gather, CollOp::gatherv};
  a.description = "sequential tree reversed: every rank sends its block to the root";
  a.steps = "p-1 receives at the root";
  a.bytes = "(p-1)/p n into the root, p-1 messages";
  a.cost = "(p-1)(alpha + (n/p) beta)";
  a.source = "Banikazemi et al. 1999 §3.3 (MPICH gather)";
  a.generate = generate;
  a.closed_form = closed;
  a.local_counts = true;
  return a;
}
}  // namespace hetcoll

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
Schedule generate(const GenContext& ctx) { return star_blocks(ctx, "star_gather", true); }

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) { return star_blocks_terms(ctx); }

// One round: every rank's block to the root (or from it), the root taking
// (sending) them one after another; the root's own block copied.
std::vector<Round> rounds(const GenContext& ctx) {
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty() || ctx.coll.nranks < 2) return {};
  const uint64_t bl = blocks.largest();
  return {local_round(bl), Round{Round::Pattern::gather, ctx.coll.root, ctx.coll.nranks, bl, 0, 1}};
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
  a.rounds = rounds;
  a.closed_form = closed;
  a.local_counts = true;
  return a;
}
}  // namespace hetcoll

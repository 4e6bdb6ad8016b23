// star_scatter — linear scatter and scatterv: the root sends each rank its
// block directly, in rank order after the root.
//
// Steps: p-1 sends by the root; p-1 messages, (p-1)/p·n bytes from the root.
// Cost: (p-1)(α + bβ) for blocks of b bytes. Source: the sequential tree of
// MPICH's scatter, Banikazemi et al. §3.2 (eqs. 8-9).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) { return star_blocks(ctx, "star_scatter", false); }

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) { return star_blocks_terms(ctx); }

// One round: every rank's block to the root (or from it), the root taking
// (sending) them one after another; the root's own block copied.
std::vector<Round> rounds(const GenContext& ctx) {
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty() || ctx.coll.nranks < 2) return {};
  const uint64_t bl = blocks.largest();
  return {local_round(bl), Round{Round::Pattern::scatter, ctx.coll.root, ctx.coll.nranks, bl, 0, 1}};
}
}  // namespace

Algorithm star_scatter_algorithm() {
  Algorithm a;
  a.name = "star_scatter";
  a.ops = {CollOp::scatter, CollOp::scatterv};
  a.description = "sequential tree: the root sends every block directly";
  a.steps = "p-1 sends by the root";
  a.bytes = "(p-1)/p n from the root, p-1 messages";
  a.cost = "(p-1)(alpha + (n/p) beta)";
  a.source = "Banikazemi et al. 1999 §3.2 (MPICH scatter)";
  a.generate = generate;
  a.rounds = rounds;
  a.closed_form = closed;
  a.local_counts = true;
  return a;
}
}  // namespace hetcoll

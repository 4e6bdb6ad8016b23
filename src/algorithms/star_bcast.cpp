// star_bcast — the sequential tree: the root sends to every other rank in
// turn (rank order after the root).
//
// Steps: p-1 sends by the root; p-1 messages of m bytes. The one algorithm
// whose depth is 1: good when the root is much faster than the others or the
// network is latency-free (Banikazemi et al. §3.2, the MPICH scatter tree).
// Source: Banikazemi et al. §3 ("sequential trees").
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  Builder b = make_builder(ctx, "star_bcast");
  tree_bcast(b, Group::all(ctx.coll.nranks), star_tree(ctx.coll.nranks), ctx.coll.root,
             {Buf::out, 0, vector_bytes(ctx.coll)}, false);
  return b.finish();
}
// One round: the root's sends, one after another (as its ports allow).
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t n = vector_bytes(ctx.coll);
  if (n == 0 || ctx.coll.nranks < 2) return {};
  return {Round{Round::Pattern::scatter, ctx.coll.root, ctx.coll.nranks, n, 0, 1}};
}
}  // namespace

Algorithm star_bcast_algorithm() {
  Algorithm a;
  a.name = "star_bcast";
  a.ops = {CollOp::bcast};
  a.description = "sequential tree: the root sends to each rank in turn";
  a.steps = "p-1 sends by the root";
  a.bytes = "m per message, p-1 messages";
  a.cost = "(p-1)(alpha + m beta)";
  a.source = "Banikazemi et al. 1999 §3 (sequential tree)";
  a.generate = generate;
  a.rounds = rounds;
  // The last rank's send starts p-2 sends in and arrives λ later.
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    return postal_estimate(ctx, [&](double lambda) { return ctx.coll.nranks < 2 ? 0.0 : double(ctx.coll.nranks) - 2 + lambda; });
  };
  return a;
}
}  // namespace hetcoll

// star_reduce — every rank sends its vector to the root, which combines them
// in rank order (relative to the root) as they arrive.
//
// Steps: p-1 receives at the root; p-1 messages of m bytes, p-1 combines.
// Cost: one-port: (p-1)(α + mβ) + mγ, or α + mβ + (p-1)mγ when combining
// is the slower part. Source: Banikazemi et al. §3 (sequential trees; the
// gather of MPICH reversed).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  Builder b = make_builder(ctx, "star_reduce");
  reduce_along_tree(b, star_tree(ctx.coll.nranks), ctx.coll.root, vector_bytes(ctx.coll), false);
  return b.finish();
}
// One round: every vector to the root, which takes and combines them in turn.
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t n = vector_bytes(ctx.coll);
  if (n == 0 || ctx.coll.nranks < 2) return {};
  return {Round{Round::Pattern::gather, ctx.coll.root, ctx.coll.nranks, n, n, 1}};
}
}  // namespace

Algorithm star_reduce_algorithm() {
  Algorithm a;
  a.name = "star_reduce";
  a.ops = {CollOp::reduce};
  a.description = "sequential tree reversed: all send to the root, which combines";
  a.steps = "p-1 receives at the root";
  a.bytes = "m per message, p-1 messages";
  a.cost = "max((p-1)(alpha + m beta) + m gamma, alpha + m beta + (p-1) m gamma)";
  a.source = "Banikazemi et al. 1999 §3 (sequential tree)";
  a.generate = generate;
  a.rounds = rounds;
  return a;
}
}  // namespace hetcoll

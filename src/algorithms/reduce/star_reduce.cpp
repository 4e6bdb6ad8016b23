// star_reduce — every rank sends its vector to the root, which combines them
// in rank order (relative to the root) as they arrive.
//
// Steps: p-1 receives at the root; p-1 messages of m bytes, p-1 combines.
// Cost: max((p-1)(alpha + m beta) + m gamma, alpha + m beta + (p-1) m gamma)
// Source: Banikazemi et al. §3 (sequential trees; the gather of MPICH
// reversed).
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  return reduce_to_root(ctx, "star_reduce", star_tree(ctx.coll.nranks));
}
// One round: every vector to the root, which takes and combines them in turn.
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t n = vector_bytes(ctx.coll);
  if (n == 0 || ctx.coll.nranks < 2) return {};
  return {Round{Round::Pattern::gather, ctx.coll.root, ctx.coll.nranks, n, n, 1}};
}
}  // namespace

Algorithm star_reduce_algorithm() {
  return Algorithm{{CollOp::reduce}, generate, nullptr, rounds};
}
}  // namespace hetcoll

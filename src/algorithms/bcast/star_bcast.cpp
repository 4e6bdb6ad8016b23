// star_bcast — the sequential tree: the root sends to every other rank in
// turn (rank order after the root).
//
// Steps: p-1 sends by the root; p-1 messages of m bytes. The one algorithm
// whose depth is 1: good when the root is much faster than the others or the
// network is latency-free (Banikazemi et al. §3.2, the MPICH scatter tree).
// Source: Banikazemi et al. §3 ("sequential trees").
// Cost: (p-1)(alpha + m beta)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  // Not serial: the root's sends go out as its ports allow.
  return bcast_along_tree(ctx, "star_bcast", star_tree(ctx.coll.nranks), true, false);
}
// One round: the root's sends, one after another (as its ports allow).
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t n = vector_bytes(ctx.coll);
  if (n == 0 || ctx.coll.nranks < 2) return {};
  return {Round{Round::Pattern::scatter, ctx.coll.root, ctx.coll.nranks, n, 0, 1}};
}
}  // namespace

Algorithm star_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate, nullptr, rounds};
  // The last rank's send starts p-2 sends in and arrives λ later.
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    return postal_estimate(ctx, [&](double lambda) { return ctx.coll.nranks < 2 ? 0.0 : double(ctx.coll.nranks) - 2 + lambda; });
  };
  return a;
}
}  // namespace hetcoll

// knomial_reduce — combine-to-one along a k-nomial tree reversed.
//
// Each rank combines up to (k-1)·rounds children, then sends to its parent.
// Steps: ⌈log_k p⌉ rounds; p-1 messages of m bytes. Parameters: k (default 4).
// Source: MPICH/UCC k-nomial reduce.
// Cost: (k-1) ceil(log_k p)(alpha + m beta + m gamma) along the root's path
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int k = param_int(ctx, "k", 4);
  return reduce_to_root(ctx, cat("knomial_reduce[k=", k, "]"), knomial_tree(ctx.coll.nranks, k));
}
std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"knomial_reduce[k=3]", "knomial_reduce[k=4]", "knomial_reduce[k=8]"};
}
}  // namespace

Algorithm knomial_reduce_algorithm() {
  Algorithm a{{CollOp::reduce}, generate};
  a.params = {{"k", ParamKind::integer, 2, 1 << 30, false, "radix: each rank receives from k-1 children per round"}};
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    const uint64_t k = uint64_t(std::max(2, param_int(ctx, "k", 2))), p = uint64_t(ctx.coll.nranks);
    double rounds = 0;
    for (uint64_t reach = 1; reach < p; reach = reach > p / k ? p : reach * k) ++rounds;
    return tree_reduce_estimate(ctx, rounds, double(k - 1));
  };
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

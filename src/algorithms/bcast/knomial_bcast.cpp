// knomial_bcast — broadcast along a k-nomial tree.
//
// Rounds i = ⌈log_k p⌉-1 .. 0: every rank that holds the data sends it to
// the k-1 ranks at distance j·k^i (relative to the root). Fewer rounds than
// the binomial tree (k = 2) at the price of k-1 sends per round.
// Steps: ⌈log_k p⌉ rounds of up to k-1 messages; p-1 messages of m bytes.
// Parameters: k (radix, default 4). Source: the k-nomial trees of MPICH and
// UCC (generalising the binomial tree of Bruck et al. §2.1).
// Cost: (k-1) ceil(log_k p)(alpha + m beta) along the root's path
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int k = param_int(ctx, "k", 4);
  return bcast_along_tree(ctx, cat("knomial_bcast[k=", k, "]"), knomial_tree(ctx.coll.nranks, k));
}
std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"knomial_bcast[k=3]", "knomial_bcast[k=4]", "knomial_bcast[k=8]"};
}
}  // namespace

Algorithm knomial_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate};
  a.params = {{"k", ParamKind::integer, 2, 1 << 30, false, "radix: each rank sends to k-1 children per round"}};
  a.variants = variants;
  // ⌈log_k p⌉ rounds; in each the last of k-1 children hears k-2+λ after its start.
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    const uint64_t k = uint64_t(param_int(ctx, "k", 2)), p = uint64_t(ctx.coll.nranks);
    double rounds = 0;
    for (uint64_t reach = 1; reach < p; reach = reach > p / k ? p : reach * k) ++rounds;
    return postal_estimate(ctx, [&](double lambda) { return rounds * (double(k) - 2 + lambda); }, false);
  };
  return a;
}
}  // namespace hetcoll

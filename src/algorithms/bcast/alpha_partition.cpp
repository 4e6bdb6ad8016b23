// alpha_partition — bcast(S, n, s, m, α) of Bruck et al. §2.4.
//
// Recursive partition without building a tree in advance: the source keeps
// n' = min(round(αn), n-1) nodes, sends m to the first node of the other
// n - n', and both parts continue with the same rule. α = 0.5 is the binomial
// tree. With α taken per n from the look-up table of §2.4-2.5 (the legal α
// ranges, "Christmas tree" of Figs. 6-7, table sizes of Fig. 9) the broadcast
// is optimal — it finishes at T_λ(n), the λ-tree's time — for every n.
// Steps: n-1 messages of m bytes.
// Parameters: alpha=A fixes α for all n (the paper's experiments, Figs. 10-13).
// Cost: T_lambda(p) with the look-up table (postal units)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/registry.hpp"
#include "util/error.hpp"

namespace hetcoll {

Tree alpha_partition_tree(int n, double alpha) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw InputError(cat("alpha_partition: alpha = ", alpha, " must lie in (0, 1)"));
  return partition_tree(n, [alpha](uint64_t k) { return postal::alpha_split(alpha, k); });
}

Tree alpha_partition_tree(int n, const postal::AlphaTable& table) {
  return partition_tree(n, [&table](uint64_t k) { return postal::alpha_split(table.alpha(k), k); });
}

namespace {
Schedule generate_alpha_partition(const GenContext& ctx) {
  const uint64_t m = ctx.coll.count * ctx.coll.elem_size;
  const int n = ctx.coll.nranks;
  Tree tree;
  std::string name = "alpha_partition";
  if (ctx.params.count("alpha")) {
    double alpha = param_real(ctx, "alpha", 0.5);
    tree = alpha_partition_tree(n, alpha);
    name += "[alpha=" + ctx.params.at("alpha") + "]";
  } else if (n >= 2) {
    tree = alpha_partition_tree(n, postal::AlphaTable(shaping_lambda(ctx.model, m, n), uint64_t(n)));
  } else {
    tree = binomial_tree(n);
  }
  return bcast_along_tree(ctx, name, tree, false);
}
}  // namespace

Algorithm alpha_partition_algorithm() {
  Algorithm a{{CollOp::bcast}, generate_alpha_partition};
  a.params = {{"alpha", ParamKind::real, 0, 1, true, "fixed split fraction: the source keeps round(alpha n) of n (default: the look-up table)"}};
  a.distinct = postal_lambda_above_one;
  // With the look-up table it attains T_λ(p) (§2.5); a fixed alpha: no estimate.
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    if (ctx.params.count("alpha")) return std::nullopt;
    return postal_estimate(ctx, [&](double lambda) { return postal::T(lambda, uint64_t(ctx.coll.nranks)); });
  };
  return a;
}

}  // namespace hetcoll

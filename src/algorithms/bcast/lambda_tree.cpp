// lambda_tree — the optimal broadcast tree of the postal model (Bruck et al.
// §2.3, after Bar-Noy & Kipnis).
//
// Greedy construction in O(n) with two queues of (node, time the node can
// send next): an old queue for nodes that have sent and a new queue for nodes
// just reached; both stay sorted by time. Repeatedly take the earlier head,
// say node i at time t: i sends to the next new node s at t, s can send from
// t + λ (new queue), i can send again at t + 1 (old queue).
// Steps: finishes at T_λ(n) = min{t : N_λ(t) ≥ n} for any real λ ≥ 1 (eq. 1);
//        n-1 messages of m bytes. λ = 1 gives the binomial tree.
// Constraint: λ is the model's postal λ for the message size.
// Cost: T_lambda(p) = min{t : N_lambda(t) >= p} (postal units)
#include <algorithm>
#include <cmath>

#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/patterns/primitives.hpp"
#include "algorithms/registry.hpp"
#include "util/error.hpp"

namespace hetcoll {

Tree lambda_tree(int n, double lambda) {
  if (!(lambda >= 1.0)) throw InputError(cat("lambda = ", lambda, ": the postal model needs lambda >= 1"));
  struct Entry { int32_t node; double t; };
  std::vector<Entry> fresh, old;  // queues with moving heads
  fresh.reserve(size_t(n));
  old.reserve(size_t(n));
  size_t fh = 0, oh = 0;
  std::vector<std::pair<int32_t, int32_t>> edges;
  edges.reserve(size_t(std::max(n - 1, 0)));
  fresh.push_back({0, 0.0});
  for (int32_t s = 1; s < n; ++s) {
    Entry e;
    if (oh < old.size() && (fh == fresh.size() || old[oh].t <= fresh[fh].t + postal::kEps)) e = old[oh++];
    else e = fresh[fh++];
    edges.emplace_back(e.node, s);
    fresh.push_back({s, e.t + lambda});
    old.push_back({e.node, e.t + 1.0});
  }
  return Tree::from_edges(n, edges);
}

bool postal_lambda_above_one(const Collective& c, const MachineModel& m) {
  return m.postal_lambda(c.count * c.elem_size) > 1.0 + postal::kEps;
}

namespace {
Schedule generate_lambda_tree(const GenContext& ctx) {
  const uint64_t m = ctx.coll.count * ctx.coll.elem_size;
  double lambda = ctx.params.count("lambda") ? param_real(ctx, "lambda", 1.0)
                                             : shaping_lambda(ctx.model, m, ctx.coll.nranks);
  Builder b = make_builder(ctx, "lambda_tree", false);
  b.reserve(2 * size_t(ctx.coll.nranks), size_t(ctx.coll.nranks));
  tree_bcast(b, Group::all(ctx.coll.nranks), lambda_tree(ctx.coll.nranks, lambda), ctx.coll.root, {Buf::out, 0, m});
  return b.finish();
}
}  // namespace

Algorithm lambda_tree_algorithm() {
  Algorithm a{{CollOp::bcast}, generate_lambda_tree};
  a.params = {{"lambda", ParamKind::real, 1, postal::kMaxLambda, false, "the postal latency to build the tree for (default: the model's)"}};
  a.distinct = postal_lambda_above_one;
  // Optimal on the postal model: T_λ(p) (built for another λ: no estimate).
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    if (ctx.params.count("lambda")) return std::nullopt;
    return postal_estimate(ctx, [&](double lambda) { return postal::T(lambda, uint64_t(ctx.coll.nranks)); });
  };
  return a;
}

}  // namespace hetcoll

// kary_reduce — combine-to-one along a k-ary tree reversed.
//
// Steps: k per level, ⌈log_k((k-1)p+1)⌉-1 levels; p-1 messages of m bytes.
// Parameters: k (default 2). Source: MPICH/Open MPI binary/k-ary reduce.
// Cost: k depth (alpha + m beta + m gamma)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int k = param_int(ctx, "k", 2);
  return reduce_to_root(ctx, cat("kary_reduce[k=", k, "]"), kary_tree(ctx.coll.nranks, k));
}
std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"kary_reduce[k=2]", "kary_reduce[k=3]", "kary_reduce[k=4]"};
}
}  // namespace

Algorithm kary_reduce_algorithm() {
  Algorithm a{{CollOp::reduce}, generate};
  a.params = {{"k", ParamKind::integer, 1, 1 << 30, false, "children per node"}};
  a.estimate = [](const GenContext& ctx, const HockneyParams&) -> std::optional<Terms> {
    const uint64_t k = uint64_t(std::max(1, param_int(ctx, "k", 1))), p = uint64_t(ctx.coll.nranks);
    double levels = 0;  // below the root: k, k², … ranks until all p are in
    for (uint64_t in = 1, width = 1; in < p; ++levels) width = width > p / k ? p : width * k, in += width;
    return tree_reduce_estimate(ctx, levels, double(std::min<uint64_t>(k, p - 1)));
  };
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

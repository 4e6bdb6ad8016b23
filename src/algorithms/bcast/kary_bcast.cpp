// kary_bcast — broadcast along a k-ary tree.
//
// Ranks in breadth-first order relative to the root; rank v forwards to
// kv+1 .. kv+k. Each interior rank sends k messages, the depth is
// ⌈log_k((k-1)p+1)⌉ - 1.
// Steps: depth × k sends on the critical path; p-1 messages of m bytes.
// Parameters: k (children per node, default 2). Source: MPICH/Open MPI k-ary
// (binary when k = 2) trees; Banikazemi et al. §3 ("k-trees").
// Cost: k depth (alpha + m beta)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int k = param_int(ctx, "k", 2);
  return bcast_along_tree(ctx, cat("kary_bcast[k=", k, "]"), kary_tree(ctx.coll.nranks, k));
}
std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"kary_bcast[k=2]", "kary_bcast[k=3]", "kary_bcast[k=4]"};
}
}  // namespace

Algorithm kary_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate};
  a.params = {{"k", ParamKind::integer, 1, 1 << 30, false, "children per node"}};
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

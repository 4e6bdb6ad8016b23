// kary_bcast — broadcast along a k-ary tree.
//
// Ranks in breadth-first order relative to the root; rank v forwards to
// kv+1 .. kv+k. Each interior rank sends k messages, the depth is
// ⌈log_k((k-1)p+1)⌉ - 1.
// Steps: depth × k sends on the critical path; p-1 messages of m bytes.
// Parameters: k (children per node, default 2). Source: MPICH/Open MPI k-ary
// (binary when k = 2) trees; Banikazemi et al. §3 ("k-trees").
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  int k = param_int(ctx, "k", 2);
  Builder b = make_builder(ctx, cat("kary_bcast[k=", k, "]"));
  tree_bcast(b, Group::all(ctx.coll.nranks), kary_tree(ctx.coll.nranks, k), ctx.coll.root,
             {Buf::out, 0, vector_bytes(ctx.coll)});
  return b.finish();
}
std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"kary_bcast[k=2]", "kary_bcast[k=3]", "kary_bcast[k=4]"};
}
}  // namespace

Algorithm kary_bcast_algorithm() {
  Algorithm a;
  a.name = "kary_bcast";
  a.ops = {CollOp::bcast};
  a.description = "k-ary tree in breadth-first order: every interior rank forwards to k children";
  a.steps = "k (ceil(log_k((k-1)p+1)) - 1) sends on the critical path";
  a.bytes = "m per message, p-1 messages";
  a.cost = "k depth (alpha + m beta)";
  a.source = "k-ary trees (MPICH, Open MPI; Banikazemi et al. §3)";
  a.params = {{"k", ParamKind::integer, 1, 1 << 30, false, "children per node"}};
  a.generate = generate;
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

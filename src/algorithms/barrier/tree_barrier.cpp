// tree_barrier — fan-in along the binomial tree to rank 0, then fan-out
// (a zero-byte reduce followed by a zero-byte broadcast).
// Steps: 2⌈log2 p⌉; 2(p-1) empty messages — fewer messages than
// dissemination, twice the depth. Source: MPICH/Open MPI tree barriers.
// Cost: 2 ceil(log2 p) alpha
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  Builder b = make_builder(ctx, "tree_barrier", false);
  Tree t = binomial_tree(p);
  const Slice token{Buf::tmp, 0, 0};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    std::vector<uint32_t> heard;
    uint32_t c0 = t.child_begin[size_t(r)], c1 = t.child_begin[size_t(r) + 1];
    for (uint32_t c = c1; c > c0; --c) heard.push_back(b.recv(r, t.children[c - 1], token));
    int parent = t.parent[size_t(r)];
    std::vector<uint32_t> after = heard;
    if (parent >= 0) {
      uint32_t up = 0;
      Op o;
      o.kind = OpKind::send;
      o.peer = parent;
      o.buf = Buf::tmp;
      up = b.add(r, o, heard.data(), heard.size());
      Op rv;
      rv.kind = OpKind::recv;
      rv.peer = parent;
      rv.buf = Buf::tmp;
      uint32_t down = b.add(r, rv, &up, 1);
      after = {down};
    }
    for (uint32_t c = c0; c < c1; ++c) {
      Op o;
      o.kind = OpKind::send;
      o.peer = t.children[c];
      o.buf = Buf::tmp;
      b.add(r, o, after.data(), after.size());
    }
  }
  return b.finish();
}
}  // namespace

Algorithm tree_barrier_algorithm() {
  return Algorithm{{CollOp::barrier}, generate};
}
}  // namespace hetcoll

// tree_scan — scan and exscan on the binomial tree rooted at rank 0, whose
// subtrees are contiguous rank ranges (Blelloch's up-sweep/down-sweep).
//
// Up: every rank combines its value with its children's subtree totals and
// sends the total of its range to its parent. Down: a rank receives the
// combination of all ranks before its range, P; it keeps P (exscan) or
// P ⊕ own (scan) and tells each child, in rank order, P ⊕ own ⊕ the totals
// of the children before it.
// Steps: 2⌈log2 p⌉ levels; 2(p-1) messages of m bytes — far fewer messages
// than recursive doubling. Source: Blelloch 1990; Sanders & Träff 2006.
// Cost: about 2 ceil(log2 p)(alpha + m beta + m gamma)
#include "algorithms/all.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const bool inclusive = c.op == CollOp::scan;
  Builder b = make_builder(ctx, "tree_scan");
  Tree t = binomial_tree(p);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    uint32_t c0 = t.child_begin[size_t(r)], c1 = t.child_begin[size_t(r) + 1];
    // Children in rank order are the send order reversed.
    std::vector<int> kids;
    for (uint32_t k = c1; k > c0; --k) kids.push_back(t.children[k - 1]);
    const int parent = t.parent[size_t(r)];
    // Up-sweep: subtree totals of the children, then my range's total.
    std::vector<Slice> total(kids.size());
    for (size_t j = 0; j < kids.size(); ++j) {
      total[j] = Slice{Buf::tmp, b.alloc_tmp(r, m), m};
      b.recv(r, kids[j], total[j]);
    }
    if (parent >= 0) {
      if (kids.empty()) {
        b.send(r, parent, in);
      } else {
        Slice sum{Buf::tmp, b.alloc_tmp(r, m), m};
        b.copy(r, sum, in);
        for (auto& s : total) b.reduce(r, sum, s);
        b.send(r, parent, sum);
      }
    }
    // Down-sweep. run = P ⊕ own, handed to the children in rank order.
    Slice run{Buf::tmp, b.alloc_tmp(r, m), m};
    if (parent >= 0) {
      // The prefix arrives in scratch: with MPI_IN_PLACE `out` still holds
      // this rank's value until the end.
      Slice before{Buf::tmp, b.alloc_tmp(r, m), m};
      b.recv(r, parent, before);
      b.copy(r, run, before);
      b.reduce(r, run, in);
      if (!inclusive) b.copy(r, out, before);
    } else {
      b.copy(r, run, in);
    }
    if (inclusive) b.copy(r, out, run);
    for (size_t j = 0; j < kids.size(); ++j) {
      b.send(r, kids[j], run);
      if (j + 1 < kids.size()) b.reduce(r, run, total[j]);
    }
  }
  return b.finish();
}
}  // namespace

Algorithm tree_scan_algorithm() {
  return Algorithm{{CollOp::scan, CollOp::exscan}, generate};
}
}  // namespace hetcoll

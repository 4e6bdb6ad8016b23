// linear_scan — scan and exscan along the chain 0 → 1 → ... → p-1: rank i
// receives the prefix of ranks 0..i-1, combines its own value and passes
// the new prefix on.
// Steps: p-1; p-1 messages of m bytes, p-1 combines.
// Cost: (p-1)(alpha + m beta + m gamma)
// Source: MPICH linear scan.
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const bool inclusive = c.op == CollOp::scan;
  Builder b = make_builder(ctx, "linear_scan");
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    if (inclusive) {
      b.copy(r, out, in);
      if (r > 0) {
        Slice prefix{Buf::tmp, b.alloc_tmp(r, m), m};
        b.recv(r, r - 1, prefix);
        b.reduce(r, out, prefix);
      }
      if (r + 1 < p) b.send(r, r + 1, out);
    } else {
      if (r == 0) {
        if (p > 1) b.send(r, 1, in);
        continue;
      }
      // Take the own value before the prefix lands in `out`: with
      // MPI_IN_PLACE they are the same bytes.
      Slice next{Buf::tmp, 0, m};
      if (r + 1 < p) {
        next.off = b.alloc_tmp(r, m);
        b.copy(r, next, in);
      }
      b.recv(r, r - 1, out);
      if (r + 1 < p) {
        b.reduce(r, next, out);
        b.send(r, r + 1, next);
      }
    }
  }
  return b.finish();
}
}  // namespace

Algorithm linear_scan_algorithm() {
  return Algorithm{{CollOp::scan, CollOp::exscan}, generate};
}
}  // namespace hetcoll

// recursive_doubling_scan — scan and exscan by recursive doubling (Hillis &
// Steele): in round k rank i sends its partial combination of ranks
// i-2^k+1..i to i+2^k and combines the one from i-2^k. For exscan a second
// value accumulates only what came from the left.
// Steps: ⌈log2 p⌉; up to p⌈log2 p⌉ messages of m bytes.
// Cost: ceil(log2 p)(alpha + m beta + m gamma)
// (Exscan: one more combine, m gamma, a step.)
// Source: Hillis & Steele 1986; MPICH scan.
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const bool inclusive = c.op == CollOp::scan;
  Builder b = make_builder(ctx, "recursive_doubling_scan");
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    // acc: combination of ranks r-2^k+1..r (inclusive partial); for scan it
    // is `out` itself.
    Slice acc = inclusive ? out : Slice{Buf::tmp, b.alloc_tmp(r, m), m};
    b.copy(r, acc, in);
    const uint64_t slots = b.alloc_tmp(r, 2 * m);
    bool have_left = false;
    int round = 0;
    for (int d = 1; d < p; d *= 2, ++round) {
      if (r + d < p) b.send(r, r + d, acc);
      if (r - d >= 0) {
        Slice got{Buf::tmp, slots + uint64_t(round % 2) * m, m};
        b.recv(r, r - d, got);
        if (!inclusive) {
          if (have_left) b.reduce(r, out, got);
          else b.copy(r, out, got);
          have_left = true;
        }
        b.reduce(r, acc, got);
      }
    }
  }
  return b.finish();
}
std::vector<Round> rounds(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  const uint64_t n = vector_bytes(ctx.coll);
  // An exclusive scan combines twice a round (`out`, then the running total
  // the next send carries), except in its first, where `out` is a copy.
  const bool exclusive = ctx.coll.op == CollOp::exscan;
  std::vector<Round> v{local_round(n)};
  for (int d = 1; d < p; d *= 2) v.push_back({Round::Pattern::open, d, p, n, exclusive && d > 1 ? 2 * n : n, 1});
  return v;
}
}  // namespace

Algorithm recursive_doubling_scan_algorithm() {
  return Algorithm{{CollOp::scan, CollOp::exscan}, generate, nullptr, rounds};
}
}  // namespace hetcoll

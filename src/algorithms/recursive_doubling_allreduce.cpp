// recursive_doubling_allreduce — in step k every rank exchanges its whole
// partial vector with the rank differing in bit k and combines.
//
// Both partners combine the same two operands, so every rank ends with the
// identical combination tree (floating-point results agree across ranks).
// Non-powers of two: extra ranks fold into a core partner first and get the
// result back at the end.
// Steps: log2 p (+2). Cost (p = 2^k): log2 p·(α + nβ + nγ).
// Source: Thakur, Rabenseifner & Gropp 2005 (short-message allreduce).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  Builder b = make_builder(ctx, "recursive_doubling_allreduce");
  Fold f(p);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    if (f.is_extra(r)) {
      b.send(r, f.partner(r), in);
      b.recv(r, f.partner(r), out);
      continue;
    }
    b.copy(r, out, in);
    const Slice slot{Buf::tmp, b.alloc_tmp(r, m), m};
    int ex = f.partner(r);
    if (ex >= 0) {
      b.recv(r, ex, slot);
      b.reduce(r, out, slot);
    }
    for (int d = 1; d < f.core; d *= 2) {
      b.send(r, r ^ d, out);
      b.recv(r, r ^ d, slot);
      b.reduce(r, out, slot);
    }
    if (ex >= 0) b.send(r, ex, out);
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  if (Fold(p).extra) return std::nullopt;
  double n = double(vector_bytes(ctx.coll));
  Terms t = double(ceil_log2(uint64_t(p))) * Terms{1, n, n};
  t.messages = uint64_t(p) * uint64_t(ceil_log2(uint64_t(p)));
  return t;
}
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t n = vector_bytes(ctx.coll);
  const Fold f(ctx.coll.nranks);
  std::vector<Round> v{local_round(n)};
  add_exchange_rounds(v, f, false, [&](int) { return n; }, [&](int) { return n; }, n, true, n);
  return v;
}
}  // namespace

Algorithm recursive_doubling_allreduce_algorithm() {
  Algorithm a;
  a.name = "recursive_doubling_allreduce";
  a.ops = {CollOp::allreduce};
  a.description = "exchange and combine whole vectors with the partner differing in bit k";
  a.steps = "log2 p (+2 for non-powers of two)";
  a.bytes = "n per message, log2 p messages per rank";
  a.cost = "log2 p (alpha + n beta + n gamma)";
  a.source = "Thakur, Rabenseifner, Gropp 2005 (MPICH)";
  a.generate = generate;
  a.rounds = rounds;
  a.closed_form = closed;
  return a;
}
}  // namespace hetcoll

// recursive_doubling_allreduce — in step k every rank exchanges its whole
// partial vector with the rank differing in bit k and combines.
//
// Both partners combine the same two operands, so every rank ends with the
// identical combination tree (floating-point results agree across ranks).
// Non-powers of two: extra ranks fold into a core partner first and get the
// result back at the end — the last p - 2^k ranks into the first (Fold), or
// fold=1: MPICH's, the first 2(p - 2^k) ranks in pairs, even into odd
// (PairFold), which keeps near ranks numbered together folding together.
// Steps: log2 p (+2). Cost (p = 2^k): log2 p·(α + nβ + nγ).
// Source: Thakur, Rabenseifner & Gropp 2005 (short-message allreduce).
// Cost: log2 p (alpha + n beta + n gamma)
#include "algorithms/all.hpp"
#include "algorithms/patterns/folding.hpp"

namespace hetcoll {
namespace {
int core_index(const Fold&, int v) { return v; }
int core_rank(const Fold&, int i) { return i; }
int core_index(const PairFold& f, int v) { return f.index(v); }
int core_rank(const PairFold& f, int i) { return f.rank(i); }

// The exchange over a fold's core: F is Fold or PairFold (core index of a
// core rank: its rank for Fold).
template <class F>
void exchange(Builder& b, const F& f, int r, uint64_t m) {
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  if (f.is_extra(r)) {
    b.send(r, f.partner(r), in);
    b.recv(r, f.partner(r), out);
    return;
  }
  b.copy(r, out, in);
  const Slice slot{Buf::tmp, b.alloc_tmp(r, m), m};
  int ex = f.partner(r);
  if (ex >= 0) {
    b.recv(r, ex, slot);
    b.reduce(r, out, slot);
  }
  for (int d = 1; d < f.core; d *= 2) {
    const int peer = core_rank(f, core_index(f, r) ^ d);
    b.send(r, peer, out);
    b.recv(r, peer, slot);
    b.reduce(r, out, slot);
  }
  if (ex >= 0) b.send(r, ex, out);
}

Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const bool pairs = param_int(ctx, "fold", 0) != 0;
  Builder b = make_builder(ctx, pairs ? "recursive_doubling_allreduce[fold=1]" : "recursive_doubling_allreduce");
  const Fold f(p);
  const PairFold pf(p);
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    if (pairs) exchange(b, pf, r, m);
    else exchange(b, f, r, m);
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  if (Fold(p).extra) return std::nullopt;  // (without extras fold=1 is the same schedule)
  double n = double(vector_bytes(ctx.coll));
  Terms t = double(ceil_log2(uint64_t(p))) * Terms{1, n, n};
  t.messages = uint64_t(p) * uint64_t(ceil_log2(uint64_t(p)));
  return t;
}
std::vector<Round> rounds(const GenContext& ctx) {
  // (fold=1 by Fold's rounds too: the same exchanges with the ranks renamed,
  // exact wherever every pair of ranks is alike; on a network up to
  // kNetworkBudgetRanks both are simulated, past them the tie goes to fold=0.)
  const uint64_t n = vector_bytes(ctx.coll);
  const Fold f(ctx.coll.nranks);
  std::vector<Round> v{local_round(n)};
  add_exchange_rounds(v, f, false, [&](int) { return n; }, [&](int) { return n; }, n, true, n);
  return v;
}
}  // namespace

Algorithm recursive_doubling_allreduce_algorithm() {
  Algorithm a{{CollOp::allreduce}, generate, closed, rounds};
  a.params = {fold_param()};
  a.variants = [](const Collective& c, const MachineModel&) {
    std::vector<std::string> v{"recursive_doubling_allreduce"};
    if (Fold(c.nranks).extra) v.push_back("recursive_doubling_allreduce[fold=1]");
    return v;
  };
  return a;
}
}  // namespace hetcoll

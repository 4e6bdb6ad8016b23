// rabenseifner_allreduce — allreduce as recursive-halving reduce-scatter
// followed by recursive-doubling allgather (Rabenseifner 1997).
//
// Non-powers of two: extra ranks send their vector to a core partner first
// and receive the result from it at the end. Each block is combined at one
// rank and then copied, so all ranks hold identical bits.
// doubling=1: the reduce-scatter's partners at distance 1, 2, 4, … and the
// allgather's back from the farthest (recursive_halving_reduce_scatter's
// doubling): ranks near in rank order — a host's, a subnet's — exchange the
// largest halves, so that a slow link between subnets carries the
// smallest. Core rank r works at position rev(r) (its bits reversed).
// Steps: 2 log2 p (+2). Cost (p = 2^k, n divisible by p):
// 2 log2 p·α + 2(p-1)/p·nβ + (p-1)/p·nγ. Source: Rabenseifner 1997;
// Thakur, Rabenseifner & Gropp 2005.
// Cost: 2 log2 p alpha + 2(p-1)/p n beta + (p-1)/p n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/folding.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const bool doubling = param_int(ctx, "doubling", 0) != 0;
  Builder b = make_builder(ctx, doubling ? "rabenseifner_allreduce[doubling=1]" : "rabenseifner_allreduce");
  Fold f(p);
  const int bits = ceil_log2(uint64_t(f.core));
  auto pos = [&](int x) { return doubling ? reverse_bits(x, bits) : x; };  // a core rank's position (its own inverse)
  Blocks blocks = even_blocks(c.count, c.elem_size, f.core);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  auto range = [&](int a, int e) { return Slice{Buf::out, blocks.off[size_t(a)], blocks.span(a, e)}; };
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    if (f.is_extra(r)) {
      b.send(r, f.partner(r), in);
      b.recv(r, f.partner(r), out);
      continue;
    }
    b.copy(r, out, in);
    // Reduce-scatter by halving (of positions), then allgather by doubling.
    fold_and_halve(b, f, r, out, blocks, [](int v) { return v; }, pos);
    const int me = pos(r), ex = f.partner(r);
    for (int d = 1; d < f.core; d *= 2) {
      const int q = pos(me ^ d), mine = me & ~(d - 1), theirs = (me ^ d) & ~(d - 1);
      Slice s = range(mine, mine + d), t = range(theirs, theirs + d);
      if (s.len) b.send(r, q, s);
      if (t.len) b.recv(r, q, t);
    }
    if (ex >= 0) b.send(r, ex, out);
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  std::optional<Terms> t = rabenseifner_terms(ctx.coll);
  const uint64_t p = uint64_t(ctx.coll.nranks);
  if (t) t->messages = 2 * p * uint64_t(ceil_log2(p));
  return t;
}
std::vector<Round> rounds(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const uint64_t n = vector_bytes(c);
  const Fold f(c.nranks);
  const Blocks blocks = even_blocks(c.count, c.elem_size, f.core);
  if (blocks.any_empty()) return {};
  const uint64_t bl = blocks.largest();
  // At distance d: bl·d (doubling=1: distance d carries bl·core/(2d), the
  // reduce-scatter's distances ascending, the allgather's descending).
  const bool doubling = param_int(ctx, "doubling", 0) != 0;
  auto moved = [&](int d) { return doubling ? bl * uint64_t(f.core / (2 * d)) : bl * uint64_t(d); };
  std::vector<Round> v{local_round(n)};
  add_exchange_rounds(v, f, !doubling, moved, moved, n, true, 0);
  add_exchange_rounds(v, Fold(f.core), doubling, moved, [](int) { return uint64_t(0); }, 0, false, 0);
  if (f.extra) v.push_back({Round::Pattern::fold_out, 0, f.core, n, 0, 1});
  return v;
}
}  // namespace

Algorithm rabenseifner_allreduce_algorithm() {
  Algorithm a{{CollOp::allreduce}, generate, closed, rounds};
  a.params = {{"doubling", ParamKind::integer, 0, 1, false,
               "1: reduce-scatter partners at distance 1, 2, 4, … (near ranks exchange the largest halves)"}};
  a.variants = [](const Collective&, const MachineModel&) {
    return std::vector<std::string>{"rabenseifner_allreduce", "rabenseifner_allreduce[doubling=1]"};
  };
  return a;
}
}  // namespace hetcoll

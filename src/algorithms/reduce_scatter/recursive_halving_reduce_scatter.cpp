// recursive_halving_reduce_scatter — reduce_scatter_block and reduce_scatter
// by recursive halving: in step k every rank sends the half of its current
// range that its partner (rank differing in bit k, highest bit first) keeps,
// receives the other half and combines it, so the range halves each step.
//
// Non-powers of two: extra ranks first send their whole vector to a core
// partner, which combines it; a core rank then works for "virtual rank" v
// owning blocks v and v+core (laid out contiguously in scratch) and finally
// passes block v+core to its extra partner.
// doubling=1: partners at distance 1, 2, 4, … instead (MPICH's order for
// non-commutative operators): ranks near in rank order — a host's, a
// subnet's, laid out in blocks — exchange the largest halves and distant
// ones the smallest, so that a slow link between subnets carries the last,
// smallest exchange. It is recursive halving over positions in
// bit-reversed order: core rank r works at position rev(r), and its
// partner at position rev(r) ^ d is rank r ^ rev(d).
// fold=1: MPICH's fold (PairFold): the first 2(p - 2^k) ranks in pairs, even
// into odd, so that near ranks numbered together fold together (two WAN
// sites of 9 and 8 ranks cross once, where the last rank folding into rank
// 0 crosses three times); the core is then numbered by PairFold's index.
// Steps: log2 p (+2). Cost (p = 2^k, equal blocks of b): log2 p·α +
// (p-1)b(β + γ). Source: Thakur, Rabenseifner & Gropp 2005.
// Cost: log2 p alpha + (p-1)/p n (beta + gamma)
#include "algorithms/all.hpp"
#include "algorithms/patterns/folding.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const bool doubling = param_int(ctx, "doubling", 0) != 0, pairs = param_int(ctx, "fold", 0) != 0;
  std::string name = "recursive_halving_reduce_scatter";
  if (doubling || pairs) name += doubling && pairs ? "[doubling=1,fold=1]" : doubling ? "[doubling=1]" : "[fold=1]";
  Builder b = make_builder(ctx, name);
  Blocks blocks = coll_blocks(c);
  const Fold f(p);
  const PairFold pf(p);
  // The fold: which ranks are extras, each one's partner, a core rank's
  // index in the core and the core's i-th rank (Fold's: the rank itself).
  auto is_extra = [&](int v) { return pairs ? pf.is_extra(v) : f.is_extra(v); };
  auto partner = [&](int v) { return pairs ? pf.partner(v) : f.partner(v); };
  auto index = [&](int v) { return pairs ? pf.index(v) : v; };
  auto rank_at = [&](int i) { return pairs ? pf.rank(i) : i; };
  const int bits = ceil_log2(uint64_t(f.core));
  // A core index's position (its own inverse): itself, or bit-reversed.
  auto pos = [&](int x) { return doubling ? reverse_bits(x, bits) : x; };
  // Virtual layout: position k holds core rank q = rank_at(pos(k))'s blocks
  // (q's, then its extra partner's) contiguous, positions ascending.
  const FoldedLayout V = folded_layout(blocks, f.core, [&](int k) { return rank_at(pos(k)); }, partner);
  const std::vector<uint64_t>& at = V.at;
  const uint64_t total = V.total();
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r) || total == 0) continue;
    if (is_extra(r)) {
      int core = partner(r);
      b.send(r, core, {Buf::in, 0, total});
      if (blocks.len[size_t(r)]) b.recv(r, core, {Buf::out, 0, blocks.len[size_t(r)]});
      continue;
    }
    const uint64_t base = b.alloc_tmp(r, total);
    auto vrange = [&](int a, int e) { return Slice{Buf::tmp, base + V.voff[size_t(a)], V.span(a, e)}; };
    // Scratch copy of `in` in virtual order (one copy when that is rank order).
    if (f.extra == 0 && !doubling) {  // (fold=1 without extras: the same)
      b.copy(r, {Buf::tmp, base, total}, {Buf::in, 0, total});
    } else {
      for (int i = 0; i < p; ++i)
        if (blocks.len[size_t(i)])
          b.copy(r, {Buf::tmp, base + at[size_t(i)], blocks.len[size_t(i)]}, {Buf::in, blocks.off[size_t(i)], blocks.len[size_t(i)]});
    }
    uint64_t slot = b.alloc_tmp(r, total);
    int ex = partner(r);
    if (ex >= 0) {  // the extra's whole vector, in rank order, combined block by block
      b.recv(r, ex, {Buf::tmp, slot, total});
      for (int i = 0; i < p; ++i)
        if (blocks.len[size_t(i)])
          b.reduce(r, {Buf::tmp, base + at[size_t(i)], blocks.len[size_t(i)]}, {Buf::tmp, slot + blocks.off[size_t(i)], blocks.len[size_t(i)]});
    }
    int lo = 0, hi = f.core;
    for (int d = f.core / 2; d >= 1; d /= 2) {
      const int me = pos(index(r)), q = rank_at(pos(me ^ d)), mid = lo + d;
      const bool lower = (me & d) == 0;
      Slice give = lower ? vrange(mid, hi) : vrange(lo, mid), keep = lower ? vrange(lo, mid) : vrange(mid, hi);
      if (give.len) b.send(r, q, give);
      if (keep.len) {
        Slice got{Buf::tmp, slot, keep.len};
        b.recv(r, q, got);
        b.reduce(r, keep, got);
      }
      if (lower) hi = mid; else lo = mid;
    }
    if (blocks.len[size_t(r)]) b.copy(r, {Buf::out, 0, blocks.len[size_t(r)]}, {Buf::tmp, base + at[size_t(r)], blocks.len[size_t(r)]});
    if (ex >= 0 && blocks.len[size_t(ex)]) b.send(r, ex, {Buf::tmp, base + at[size_t(ex)], blocks.len[size_t(ex)]});
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  const int p = ctx.coll.nranks;
  if (Fold(p).extra || !blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  double moved = double(uint64_t(p - 1) * blocks.len[0]);
  return Terms{double(ceil_log2(uint64_t(p))), moved, moved, uint64_t(p) * uint64_t(ceil_log2(uint64_t(p)))};
}
std::vector<Round> rounds(const GenContext& ctx) {
  const std::optional<FoldedSizes> s = folded_sizes(ctx.coll);
  if (!s) return {};
  const Fold& f = s->f;
  const uint64_t total = s->total, bl = s->bl, per = s->per;
  // Exchanges at distance d carry per·d (halving: d from core/2 down);
  // doubling=1: distance d first, carrying per·core/(2d). fold=1 by Fold's
  // rounds: the same exchanges with the ranks renamed (as for
  // recursive_doubling_allreduce[fold=1]).
  const bool doubling = param_int(ctx, "doubling", 0) != 0;
  auto moved = [&](int d) { return doubling ? per * uint64_t(f.core / (2 * d)) : per * uint64_t(d); };
  std::vector<Round> v{local_round(total)};
  add_exchange_rounds(v, f, !doubling, moved, moved, total, true, bl);
  v.push_back(local_round(bl));
  return v;
}
}  // namespace

Algorithm recursive_halving_reduce_scatter_algorithm() {
  Algorithm a{{CollOp::reduce_scatter_block, CollOp::reduce_scatter}, generate, closed, rounds};
  a.params = {{"doubling", ParamKind::integer, 0, 1, false,
               "1: partners at distance 1, 2, 4, … (near ranks exchange the largest halves)"},
              fold_param()};
  a.variants = [](const Collective& c, const MachineModel&) {
    std::vector<std::string> v{"recursive_halving_reduce_scatter", "recursive_halving_reduce_scatter[doubling=1]"};
    if (Fold(c.nranks).extra) {
      v.push_back("recursive_halving_reduce_scatter[fold=1]");
      v.push_back("recursive_halving_reduce_scatter[doubling=1,fold=1]");
    }
    return v;
  };
  return a;
}
}  // namespace hetcoll

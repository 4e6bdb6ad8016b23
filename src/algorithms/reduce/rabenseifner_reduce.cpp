// rabenseifner_reduce — reduce as recursive-halving reduce-scatter followed
// by an MST gather of the combined blocks to the root (Rabenseifner 1997).
//
// Ranks are numbered relative to the root, so the root is never one of the
// extra ranks that fold into a core partner for non-powers of two.
// Steps: 2 log2 p (+1). Cost (p = 2^k, n divisible by p):
// 2 log2 p·α + 2(p-1)/p·nβ + (p-1)/p·nγ.
// Cost: 2 log2 p alpha + 2(p-1)/p n beta + (p-1)/p n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/folding.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  const uint64_t m = vector_bytes(c);
  Builder b = make_builder(ctx, "rabenseifner_reduce");
  Fold f(p);
  Blocks blocks = even_blocks(c.count, c.elem_size, f.core);
  auto rank_of = [&](int v) { return (v + root) % p; };
  const Slice in{Buf::in, 0, m};
  std::vector<Slice> work(static_cast<size_t>(p));
  for (int v = 0; v < p; ++v) {
    int r = rank_of(v);
    if (!b.wants(r)) continue;
    if (f.is_extra(v)) {
      b.send(r, rank_of(f.partner(v)), in);
      continue;
    }
    Slice w = v == 0 ? Slice{Buf::out, 0, m} : Slice{Buf::tmp, b.alloc_tmp(r, m), m};
    work[size_t(v)] = w;
    b.copy(r, w, in);
    fold_and_halve(b, f, v, w, blocks, rank_of, [](int x) { return x; });
  }
  Group core;
  for (int v = 0; v < f.core; ++v) core.ranks.push_back(rank_of(v));
  mst_gather(b, core, 0, [&](int v, int x, int y) { return work[size_t(v)].sub(blocks.off[size_t(x)], blocks.span(x, y)); });
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) { return rabenseifner_terms(ctx.coll); }
}  // namespace

Algorithm rabenseifner_reduce_algorithm() {
  return Algorithm{{CollOp::reduce}, generate, closed};
}
}  // namespace hetcoll

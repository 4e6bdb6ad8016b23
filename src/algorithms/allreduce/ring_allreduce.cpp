// ring_allreduce — InterCom's long-vector combine-to-all (§5.2): bucket
// distributed combine then bucket collect (the "ring allreduce").
//
// Each block is combined once, along the ring, and then copied around, so
// every rank holds identical bits.
// Steps: 2(p-1). Cost (equal blocks, n bytes):
// 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ — β-optimal for large vectors.
// Cost: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  if (p == 1) return one_rank_copy(ctx, "ring_allreduce", vector_bytes(c));
  Builder b = make_builder(ctx, "ring_allreduce");
  Blocks blocks = even_blocks(c.count, c.elem_size, p);
  auto base = ring_reduce_scatter_in_scratch(b, blocks, p);
  for (int r = 0; r < p; ++r)
    if (b.wants(r) && blocks.len[size_t(r)])
      b.copy(r, {Buf::out, blocks.off[size_t(r)], blocks.len[size_t(r)]},
             {Buf::tmp, base[size_t(r)] + blocks.off[size_t(r)], blocks.len[size_t(r)]});
  ring_allgather(b, Group::all(p), vector_place(Buf::out, blocks));
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const int p = ctx.coll.nranks;
  const std::optional<double> bl = equal_block_bytes(ctx.coll);
  if (!bl) return std::nullopt;
  return Terms{2.0 * (p - 1), 2.0 * (p - 1) * *bl, (p - 1) * *bl, 2 * uint64_t(p) * uint64_t(p - 1)};
}
std::vector<Round> rounds(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const Blocks blocks = even_blocks(c.count, c.elem_size, p);
  if (blocks.any_empty()) return {};
  const uint64_t bl = blocks.largest();
  // (The copy of its own block into `out` overlaps the collect's first step.)
  return {local_round(vector_bytes(c)), shift_round(p, 1, bl, bl, p - 1), shift_round(p, 1, bl, 0, p - 1)};
}
}  // namespace

Algorithm ring_allreduce_algorithm() {
  return Algorithm{{CollOp::allreduce}, generate, closed, rounds};
}
}  // namespace hetcoll

// ring_allreduce — InterCom's long-vector combine-to-all (§5.2): bucket
// distributed combine then bucket collect (the "ring allreduce").
//
// Each block is combined once, along the ring, and then copied around, so
// every rank holds identical bits.
// Steps: 2(p-1). Cost (equal blocks, n bytes):
// 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ — β-optimal for large vectors.
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"
#include "algorithms/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "ring_allreduce");
  Blocks blocks = even_blocks(c.count, c.elem_size, p);
  if (p == 1) {
    b.copy(0, {Buf::out, 0, blocks.len[0]}, {Buf::in, 0, blocks.len[0]});
    return b.finish();
  }
  auto base = ring_reduce_scatter_in_scratch(b, blocks, p);
  for (int r = 0; r < p; ++r)
    if (b.wants(r) && blocks.len[size_t(r)])
      b.copy(r, {Buf::out, blocks.off[size_t(r)], blocks.len[size_t(r)]},
             {Buf::tmp, base[size_t(r)] + blocks.off[size_t(r)], blocks.len[size_t(r)]});
  ring_allgather(b, Group::all(p), vector_place(Buf::out, blocks));
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  if (c.count % uint64_t(p)) return std::nullopt;
  double bl = double(c.count / uint64_t(p) * c.elem_size);
  return Terms{2.0 * (p - 1), 2.0 * (p - 1) * bl, (p - 1) * bl, 2 * uint64_t(p) * uint64_t(p - 1)};
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
  Algorithm a;
  a.name = "ring_allreduce";
  a.ops = {CollOp::allreduce};
  a.description = "bucket distributed combine, then bucket collect (InterCom's long-vector combine-to-all)";
  a.steps = "2(p-1)";
  a.bytes = "2(p-1)/p n sent and received per rank";
  a.cost = "2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma";
  a.source = "InterCom §5.2";
  a.generate = generate;
  a.rounds = rounds;
  a.closed_form = closed;
  return a;
}
}  // namespace hetcoll

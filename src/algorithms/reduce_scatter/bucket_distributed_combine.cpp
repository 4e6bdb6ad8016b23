// bucket_distributed_combine — InterCom's bucket distributed combine (§4.2),
// the ring reduce-scatter, for reduce_scatter_block and reduce_scatter.
//
// Every rank copies its contribution to scratch; in step s it passes a
// partial block to its right neighbour, which combines it with its own copy
// of that block; after p-1 steps rank i holds block i combined over all.
// Each block is combined along one path, so every element's result is the
// same whoever computes it.
// Steps: p-1. Cost (equal blocks of b bytes): (p-1)(α + bβ + bγ).
// Cost: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "bucket_distributed_combine");
  Blocks blocks = coll_blocks(c);
  auto base = ring_reduce_scatter_in_scratch(b, blocks, p);
  for (int r = 0; r < p; ++r)
    if (b.wants(r) && blocks.len[size_t(r)])
      b.copy(r, {Buf::out, 0, blocks.len[size_t(r)]},
             {Buf::tmp, base[size_t(r)] + blocks.off[size_t(r)], blocks.len[size_t(r)]});
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  double bl = double(blocks.len[0]);
  return every_rank_steps(ctx.coll.nranks, Terms{1, bl, bl});
}
std::vector<Round> rounds(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const Blocks blocks = coll_blocks(c);
  if (blocks.any_empty()) return {};
  const uint64_t bl = blocks.largest();
  const uint64_t total = blocks.total();
  return {local_round(total), shift_round(p, 1, bl, bl, p - 1), local_round(bl)};
}
}  // namespace

Algorithm bucket_distributed_combine_algorithm() {
  return Algorithm{{CollOp::reduce_scatter_block, CollOp::reduce_scatter}, generate, closed, rounds};
}
}  // namespace hetcoll

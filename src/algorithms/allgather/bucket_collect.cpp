// bucket_collect — InterCom's bucket collect (§4.2), the ring allgather,
// for allgather and allgatherv.
//
// The ranks form a ring; in step s every rank passes the block it received
// in step s-1 (first its own) to its right neighbour. No link is used twice
// at a time, and every rank sends and receives (p-1)/p of the data.
// Steps: p-1; p(p-1) messages of one block.
// Cost: (p-1) alpha + (p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "bucket_collect");
  Blocks blocks = coll_blocks(c);
  for (int r = 0; r < p; ++r)
    if (b.wants(r) && blocks.len[size_t(r)])
      b.copy(r, {Buf::out, blocks.off[size_t(r)], blocks.len[size_t(r)]}, {Buf::in, 0, blocks.len[size_t(r)]});
  ring_allgather(b, Group::all(p), [&](int, int x, int) {
    return Slice{Buf::out, blocks.off[size_t(x)], blocks.len[size_t(x)]};
  });
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  return every_rank_steps(ctx.coll.nranks, message_terms(blocks.len[0]));
}
std::vector<Round> rounds(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty()) return {};
  const uint64_t bl = blocks.largest();
  return {local_round(bl), shift_round(p, 1, bl, 0, p - 1)};
}
}  // namespace

Algorithm bucket_collect_algorithm() {
  return Algorithm{{CollOp::allgather, CollOp::allgatherv}, generate, closed, rounds};
}
}  // namespace hetcoll

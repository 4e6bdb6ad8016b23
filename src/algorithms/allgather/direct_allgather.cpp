// direct_allgather — allgather (and allgatherv) in one step: every rank
// posts its receives from all others and sends its block to every other
// rank at once, destinations spread as r+1, r+2, … (MPICH's and SMPI's
// "spread"/NTSLR-like one-step exchange).
//
// Steps: 1; p-1 messages of a block each way per rank. Latency-optimal —
// one message time however many ranks, across slow links included — and
// bandwidth-poor: a rank's p-1 sends share its port (cost on one port:
// (p-1)(α + bβ)). For small blocks.
// Source: Thakur, Rabenseifner & Gropp 2005 (the direct exchange among the
// allgather algorithms); the alltoall counterpart is spread_alltoall.
// Cost: (p-1)(alpha + b beta) on one port
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "direct_allgather");
  const Blocks blocks = coll_blocks(c);
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    for (int s = 1; s < p; ++s) {
      const int from = (r - s + p) % p;
      const Slice in{Buf::out, blocks.off[size_t(from)], blocks.len[size_t(from)]};
      if (in.len) b.recv(r, from, in);
    }
    const Slice own{Buf::in, 0, blocks.len[size_t(r)]};
    for (int s = 1; s < p; ++s)
      if (own.len) b.send(r, (r + s) % p, own);
    if (own.len) b.copy(r, {Buf::out, blocks.off[size_t(r)], own.len}, own);
  }
  return b.finish();
}

// Exact for equal blocks (the sends of a rank one after another on its port).
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const Blocks blocks = coll_blocks(c);
  if (!blocks.equal_sizes()) return std::nullopt;
  if (c.nranks < 2) return Terms{};  // a copy, which the model does not price
  return every_rank_steps(c.nranks, message_terms(blocks.len[0]));
}
std::vector<Round> rounds(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty()) return {};
  const uint64_t bl = blocks.largest();
  std::vector<Round> v{local_round(bl)};
  add_shift_sweep(v, p, 1, p - 1, bl, p - 1);  // every send posted at once
  return v;
}
}  // namespace

Algorithm direct_allgather_algorithm() {
  return Algorithm{{CollOp::allgather, CollOp::allgatherv}, generate, closed, rounds};
}
}  // namespace hetcoll

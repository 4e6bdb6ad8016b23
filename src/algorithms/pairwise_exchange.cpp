// pairwise_exchange — alltoall and alltoallv in p-1 synchronised steps: in
// step s rank r sends its block for r+s and receives the block from r-s,
// and starts step s+1 only when step s's block has arrived (flow control:
// one message in flight per rank, as MPICH's pairwise algorithm).
//
// Steps: p-1; each rank sends and receives (p-1)/p of its data.
// Cost (equal blocks of b bytes): (p-1)(α + bβ).
// Source: Thakur, Rabenseifner & Gropp 2005 (MPICH pairwise exchange).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "pairwise_exchange");
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    Slice own = a2a_recv_block(c, r, r);
    if (own.len) b.copy(r, own, a2a_send_block(c, r, r));
    int64_t last_recv = -1;
    for (int s = 1; s < p; ++s) {
      Slice so = a2a_send_block(c, r, (r + s) % p), si = a2a_recv_block(c, r, (r - s + p) % p);
      if (so.len) {
        if (last_recv >= 0) b.send(r, (r + s) % p, so, {uint32_t(last_recv)});
        else b.send(r, (r + s) % p, so);
      }
      if (si.len) last_recv = b.recv(r, (r - s + p) % p, si);
    }
  }
  return b.finish();
}

std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  uint64_t m = uniform_a2a_block(c);
  if (m == 0) return std::nullopt;
  Terms t = double(c.nranks - 1) * message_terms(m);
  t.messages = uint64_t(c.nranks) * uint64_t(c.nranks - 1);
  return t;
}
std::vector<Round> rounds(const GenContext& ctx) {
  const uint64_t m = uniform_a2a_block(ctx.coll);
  if (m == 0) return {};
  std::vector<Round> v{local_round(m)};
  add_shift_sweep(v, ctx.coll.nranks, 1, ctx.coll.nranks - 1, m);
  return v;
}
}  // namespace

Algorithm pairwise_exchange_algorithm() {
  Algorithm a;
  a.name = "pairwise_exchange";
  a.ops = {CollOp::alltoall, CollOp::alltoallv};
  a.description = "p-1 steps: send to r+s, receive from r-s; the next send waits for the last receive";
  a.steps = "p-1";
  a.bytes = "(p-1)/p n sent and received per rank";
  a.cost = "(p-1)(alpha + (n/p) beta)";
  a.source = "Thakur, Rabenseifner, Gropp 2005 (MPICH)";
  a.generate = generate;
  a.rounds = rounds;
  a.closed_form = closed;
  a.local_counts = true;
  a.copy_in_place = {CollOp::alltoall, CollOp::alltoallv};  // a block is overwritten before it is sent
  return a;
}
}  // namespace hetcoll

// spread_alltoall — alltoall and alltoallv with every send and receive
// posted at once (MPICH's "isend/irecv" algorithm), destinations spread as
// r+1, r+2, ... so that no rank is everybody's first target.
//
// Steps: 1 (p-1 messages each way per rank, as fast as the ports allow).
// Cost (equal blocks of b bytes, one port): (p-1)(α + bβ).
#include "algorithms/all.hpp"
#include "algorithms/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  Builder b = make_builder(ctx, "spread_alltoall");
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    for (int s = 1; s < p; ++s) {
      Slice si = a2a_recv_block(c, r, (r - s + p) % p);
      if (si.len) b.recv(r, (r - s + p) % p, si);
    }
    for (int s = 1; s < p; ++s) {
      Slice so = a2a_send_block(c, r, (r + s) % p);
      if (so.len) b.send(r, (r + s) % p, so);
    }
    Slice own = a2a_recv_block(c, r, r);
    if (own.len) b.copy(r, own, a2a_send_block(c, r, r));
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
  add_shift_sweep(v, ctx.coll.nranks, 1, ctx.coll.nranks - 1, m, ctx.coll.nranks - 1);  // posted at once
  return v;
}
}  // namespace

Algorithm spread_alltoall_algorithm() {
  Algorithm a;
  a.name = "spread_alltoall";
  a.ops = {CollOp::alltoall, CollOp::alltoallv};
  a.description = "post all receives and sends at once, destinations r+1, r+2, ...";
  a.steps = "1 (p-1 messages per rank)";
  a.bytes = "(p-1)/p n sent and received per rank";
  a.cost = "(p-1)(alpha + (n/p) beta)";
  a.source = "MPICH isend/irecv alltoall";
  a.generate = generate;
  a.rounds = rounds;
  a.closed_form = closed;
  a.local_counts = true;
  a.copy_in_place = {CollOp::alltoall, CollOp::alltoallv};  // a block is overwritten before it is sent
  return a;
}
}  // namespace hetcoll

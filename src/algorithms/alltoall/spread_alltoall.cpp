// spread_alltoall — alltoall and alltoallv with every send and receive
// posted at once (MPICH's "isend/irecv" algorithm), destinations spread as
// r+1, r+2, ... so that no rank is everybody's first target.
//
// Steps: 1 (p-1 messages each way per rank, as fast as the ports allow).
// Cost: (p-1)(alpha + (n/p) beta)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

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

// The shifts all posted at once.
std::vector<Round> rounds(const GenContext& ctx) { return direct_a2a_rounds(ctx.coll, ctx.coll.nranks - 1); }
}  // namespace

Algorithm spread_alltoall_algorithm() {
  Algorithm a{{CollOp::alltoall, CollOp::alltoallv}, generate, nullptr, rounds};
  direct_a2a_entry(a);  // its closed form, local counts, in place on a copy
  return a;
}
}  // namespace hetcoll

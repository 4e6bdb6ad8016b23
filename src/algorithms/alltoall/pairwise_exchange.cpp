// pairwise_exchange — alltoall and alltoallv in p-1 synchronised steps: in
// step s rank r sends its block for r+s and receives the block from r-s,
// and starts step s+1 only when step s's block has arrived (flow control:
// one message in flight per rank, as MPICH's pairwise algorithm).
//
// Steps: p-1; each rank sends and receives (p-1)/p of its data.
// Cost: (p-1)(alpha + (n/p) beta)
// Source: Thakur, Rabenseifner & Gropp 2005 (MPICH pairwise exchange).
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

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

// The shifts one after another.
std::vector<Round> rounds(const GenContext& ctx) { return direct_a2a_rounds(ctx.coll, 1); }
}  // namespace

Algorithm pairwise_exchange_algorithm() {
  Algorithm a{{CollOp::alltoall, CollOp::alltoallv}, generate, nullptr, rounds};
  direct_a2a_entry(a);  // its closed form, local counts, in place on a copy
  return a;
}
}  // namespace hetcoll

// dissemination_barrier — ⌈log2 p⌉ rounds; in round k every rank sends an
// empty message to r + 2^k and waits for the one from r - 2^k before the
// next round (Hensgen, Finkel & Manber 1988). Works for any p, no root.
// A round's send depends on all earlier receives: with only the last one,
// news from round 0 could be overtaken (the validator shows the case).
// Steps: ⌈log2 p⌉; p⌈log2 p⌉ empty messages.
// Cost: ceil(log2 p) alpha
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  Builder b = make_builder(ctx, "dissemination_barrier", false);
  const Slice token{Buf::tmp, 0, 0};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    // A round's signal must carry everything heard so far: it waits for
    // every earlier receive, not only the last one.
    std::vector<uint32_t> heard;
    for (int d = 1; d < p; d *= 2) {
      Op signal;
      signal.kind = OpKind::send;
      signal.peer = (r + d) % p;
      signal.buf = Buf::tmp;
      b.add(r, signal, heard.data(), heard.size());
      heard.push_back(b.recv(r, (r - d % p + p) % p, token));
    }
  }
  return b.finish();
}
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  return Terms{double(ceil_log2(uint64_t(ctx.coll.nranks))), 0, 0};
}
std::vector<Round> rounds(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  std::vector<Round> v;
  for (int d = 1; d < p; d *= 2) v.push_back(shift_round(p, d, 0, 0, 1));
  return v;
}
}  // namespace

Algorithm dissemination_barrier_algorithm() {
  return Algorithm{{CollOp::barrier}, generate, closed, rounds};
}
}  // namespace hetcoll

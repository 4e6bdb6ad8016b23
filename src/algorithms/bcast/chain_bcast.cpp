// chain_bcast — pipelined broadcast along a chain.
//
// The vector is cut into k segments of about s bytes; rank v (relative to
// the root) receives segment i from v-1 and forwards it to v+1 while it
// receives segment i+1. With s chosen by the model the time approaches
// m·β + (p-2+k)·α-ish costs: the bandwidth term no longer grows with p.
// Steps: p-2+k segment steps; (p-1)k messages of s bytes.
// Parameters: seg (segment bytes); by default the model chooses s to minimise
// (k-1)·g(s) + (p-1)·c(s) (common.hpp: best_segment).
// Source: pipelined broadcast (InterCom §8, van de Geijn & Watts; MPICH,
// Open MPI "pipeline").
// Cost: (p-2+k)(alpha + (m/k) beta)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  uint64_t s = pipeline_segment(ctx, false);
  Blocks seg = pipeline_segments(ctx, s);
  Builder b = make_builder(ctx, cat("chain_bcast[seg=", s, "]"));
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    int v = (r - c.root + p) % p;
    int prev = (r - 1 + p) % p, next = (r + 1) % p;
    for (int i = 0; i < seg.size(); ++i) {
      Slice piece{Buf::out, seg.off[size_t(i)], seg.len[size_t(i)]};
      if (piece.len == 0) continue;
      if (v > 0) b.recv(r, prev, piece);
      if (v < p - 1) b.send(r, next, piece);
    }
  }
  return b.finish();
}

// Segment i reaches rank v at T(v,i) = max(S(v-1,i), T(v,i-1)) + c_i where
// rank v-1 sends it at S(v-1,i) = max(T(v-1,i), S(v-1,i-1) + c_{i-1}).
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams& h) {
  const int p = ctx.coll.nranks;
  const std::optional<Blocks> segments = recurrence_segments(ctx, false);
  if (!segments) return std::nullopt;
  const Blocks& seg = *segments;
  const int k = seg.size();
  std::vector<Terms> have(static_cast<size_t>(k)), prev_have(static_cast<size_t>(k));  // T(v-1, i), T(v, i)
  Terms last;
  for (int v = 1; v < p; ++v) {
    Terms send_free, recv_free;
    for (int i = 0; i < k; ++i) {
      Terms c = message_terms(seg.len[size_t(i)]);
      Terms start = costlier(h, prev_have[size_t(i)], send_free);
      have[size_t(i)] = costlier(h, start, recv_free) + c;
      send_free = start + c;
      recv_free = have[size_t(i)];
      last = costlier(h, last, have[size_t(i)]);
    }
    std::swap(have, prev_have);
  }
  return last;
}
}  // namespace

Algorithm chain_bcast_algorithm() {
  Algorithm a{{CollOp::bcast}, generate, closed};
  a.params = {seg_param()};
  return a;
}
}  // namespace hetcoll

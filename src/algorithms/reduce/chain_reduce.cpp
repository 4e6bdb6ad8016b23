// chain_reduce — pipelined combine-to-one along a chain.
//
// The vector is cut into k segments. The rank farthest from the root sends
// its segments one after the other; every other rank receives segment i from
// its successor, combines it with its own and passes it on, so receiving,
// combining and sending overlap. Two scratch slots per rank.
// Steps: p-2+k segment steps; (p-1)k messages of m/k bytes, (p-1)k combines.
// Parameters: seg (segment bytes); by default chosen by the model as for
// chain_bcast, counting the combine. Source: pipelined reduce (MPICH,
// Open MPI "pipeline"; the reverse of InterCom §8's pipelined broadcast).
// Cost: (p-2+k)(alpha + (m/k)(beta + gamma)) when each stage takes one step
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  uint64_t s = pipeline_segment(ctx, true);
  Blocks seg = pipeline_segments(ctx, s);
  const std::string name = cat("chain_reduce[seg=", s, "]");
  if (p == 1) return one_rank_copy(ctx, name, m);
  Builder b = make_builder(ctx, name);
  const Slice in{Buf::in, 0, m};
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    int v = (r - c.root + p) % p;
    int prev = (r - 1 + p) % p, next = (r + 1) % p;
    Slice work = in;
    uint64_t slots = 0, slot_len = seg.len[0];
    if (v < p - 1) {  // receives: combine into out (root) or scratch
      work = v == 0 ? Slice{Buf::out, 0, m} : Slice{Buf::tmp, b.alloc_tmp(r, m), m};
      b.copy(r, work, in);
      slots = b.alloc_tmp(r, 2 * slot_len);
    }
    for (int i = 0; i < seg.size(); ++i) {
      Slice piece = work.sub(seg.off[size_t(i)], seg.len[size_t(i)]);
      if (v < p - 1) {
        Slice slot{Buf::tmp, slots + uint64_t(i % 2) * slot_len, piece.len};
        b.recv(r, next, slot);
        b.reduce(r, piece, slot);
      }
      if (v > 0) b.send(r, prev, piece);
    }
  }
  return b.finish();
}

// Per rank, from the far end to the root: receive i starts when the sender
// started it, the slot's previous reduce (i-2) is done and the previous
// receive is done; combines are in order on the CPU; send i needs combine i
// and the previous send.
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams& h) {
  const int p = ctx.coll.nranks;
  const std::optional<Blocks> segments = recurrence_segments(ctx, true);
  if (!segments) return std::nullopt;
  const Blocks& seg = *segments;
  const int k = seg.size();
  std::vector<Terms> sent(static_cast<size_t>(k));  // S(v+1, i): when the successor starts sending i
  {
    Terms t;
    for (int i = 0; i < k; ++i) {
      sent[size_t(i)] = t;
      t = t + message_terms(seg.len[size_t(i)]);
    }
  }
  Terms finish;
  for (int v = p - 2; v >= 0; --v) {
    std::vector<Terms> reduced(static_cast<size_t>(k)), next_sent(static_cast<size_t>(k));
    Terms recv_free, cpu_free, send_free;
    for (int i = 0; i < k; ++i) {
      Terms posted = i >= 2 ? reduced[size_t(i - 2)] : Terms{};
      Terms got = costlier(h, costlier(h, sent[size_t(i)], posted), recv_free) + message_terms(seg.len[size_t(i)]);
      recv_free = got;
      reduced[size_t(i)] = costlier(h, got, cpu_free) + Terms{0, 0, double(seg.len[size_t(i)])};
      cpu_free = reduced[size_t(i)];
      next_sent[size_t(i)] = costlier(h, reduced[size_t(i)], send_free);
      send_free = next_sent[size_t(i)] + message_terms(seg.len[size_t(i)]);
    }
    finish = reduced[size_t(k - 1)];
    sent = std::move(next_sent);
  }
  return finish;
}
}  // namespace

Algorithm chain_reduce_algorithm() {
  Algorithm a{{CollOp::reduce}, generate, closed};
  a.params = {seg_param()};
  return a;
}
}  // namespace hetcoll

// bruck_allgather — Bruck's allgather with radix k (Bruck, Ho, Kipnis,
// Upfal, Weathersby 1997), for allgather and allgatherv, any p.
//
// Rank r keeps a scratch vector whose position i holds block (r+i) mod p.
// In round s (d = k^s) it sends positions [0, d) to ranks r - j·d and
// receives positions [j·d, j·d + d) from r + j·d, j = 1..k-1 (clipped at p).
// After ⌈log_k p⌉ rounds it has all blocks and rotates them into `out`.
// Steps: ⌈log_k p⌉ rounds of k-1 messages. Parameters: k (radix, default 2).
// Cost: (k-1) ceil(log_k p) alpha + (p-1)/p n beta
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const int k = bruck_radix(ctx);
  Builder b = make_builder(ctx, cat("bruck_allgather[k=", k, "]"));
  Blocks blocks = coll_blocks(c);
  const uint64_t total = blocks.total();
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r) || total == 0) continue;
    // pos[i]: offset of position i (block (r+i) mod p) in r's scratch.
    std::vector<uint64_t> pos(static_cast<size_t>(p) + 1, 0);
    for (int i = 0; i < p; ++i) pos[size_t(i) + 1] = pos[size_t(i)] + blocks.len[size_t((r + i) % p)];
    const uint64_t base = b.alloc_tmp(r, total);
    auto range = [&](int a, int e) { return Slice{Buf::tmp, base + pos[size_t(a)], pos[size_t(e)] - pos[size_t(a)]}; };
    if (blocks.len[size_t(r)]) b.copy(r, range(0, 1), {Buf::in, 0, blocks.len[size_t(r)]});
    for (int64_t d = 1; d < p; d *= k) {
      for (int64_t j = 1; j < k && j * d < p; ++j) {
        int cnt = int(std::min<int64_t>(d, p - j * d));
        int to = int(((r - j * d) % p + p) % p), from = int((r + j * d) % p);
        // The receiver's positions [j·d, j·d+cnt) are this rank's [0, cnt).
        Slice s = range(0, cnt), q = range(int(j * d), int(j * d) + cnt);
        if (s.len) b.send(r, to, s);
        if (q.len) b.recv(r, from, q);
      }
    }
    if (contiguous(blocks)) {  // blocks r..p-1, then 0..r-1: two copies
      b.copy(r, {Buf::out, blocks.off[size_t(r)], blocks.span(r, p)}, range(0, p - r));
      if (r > 0) b.copy(r, {Buf::out, 0, blocks.span(0, r)}, range(p - r, p));
    } else {
      for (int i = 0; i < p; ++i) {
        int blk = (r + i) % p;
        if (blocks.len[size_t(blk)]) b.copy(r, {Buf::out, blocks.off[size_t(blk)], blocks.len[size_t(blk)]}, range(i, i + 1));
      }
    }
  }
  return b.finish();
}

// Round s sends k-1 messages of min(d, p - j·d) blocks one after another;
// every rank does the same, so rounds take the sum of their messages.
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  const int p = ctx.coll.nranks, k = bruck_radix(ctx);
  Terms t;
  for (int64_t d = 1; d < p; d *= k)
    for (int64_t j = 1; j < k && j * d < p; ++j) {
      t += message_terms(uint64_t(std::min<int64_t>(d, p - j * d)) * blocks.len[0]);
      t.messages += uint64_t(p);
    }
  return t;
}

std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"bruck_allgather[k=2]", "bruck_allgather[k=3]", "bruck_allgather[k=4]"};
}
std::vector<Round> rounds(const GenContext& ctx) {
  const int p = ctx.coll.nranks;
  const int k = bruck_radix(ctx);
  const Blocks blocks = coll_blocks(ctx.coll);
  if (blocks.any_empty()) return {};
  const uint64_t total = blocks.total();
  const uint64_t bl = blocks.largest();
  std::vector<Round> v{local_round(bl)};
  // Each round's k-1 messages (to r - j·d) leave one after another. They
  // carry positions [0, cnt), all in after round u with k^(u+1) ≥ cnt: a
  // short last round sends what came in earlier (or the rank's own block).
  int t = 0;
  for (int64_t d = 1; d < p; d *= k, ++t) {
    const int64_t cnt = std::min<int64_t>(d, p - d);
    int u = 0;  // rounds it takes to hold cnt positions
    for (int64_t held = 1; held < cnt; held *= k) ++u;
    v.push_back(bruck_round(p, k, d, int(p - d), bl * uint64_t(cnt), u == 0 ? 0 : t - (u - 1)));
  }
  v.push_back(local_round(total));
  return v;
}
}  // namespace

Algorithm bruck_allgather_algorithm() {
  Algorithm a{{CollOp::allgather, CollOp::allgatherv}, generate, closed, rounds};
  a.params = {{"k", ParamKind::integer, 2, 1 << 30, false, "radix: k-1 blocks go out in each of the ceil(log_k p) steps"}};
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

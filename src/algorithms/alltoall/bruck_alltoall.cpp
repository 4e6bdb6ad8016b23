// bruck_alltoall — Bruck's alltoall with radix k (Bruck, Ho, Kipnis, Upfal,
// Weathersby 1997): few, larger messages for short blocks.
//
// Rank r rotates its blocks so that position i holds the block for r+i. In
// round s (d = k^s), for every digit value j = 1..k-1 it packs the positions
// whose s-th base-k digit is j, sends them to r + j·d, receives the same
// positions from r - j·d and unpacks them. After ⌈log_k p⌉ rounds position i
// holds the block from r-i, which is rotated into `out`.
// Steps: ⌈log_k p⌉ rounds of k-1 messages of about n/k bytes.
// Parameters: k (radix, default 2).
// Cost: ceil(log_k p)((k-1) alpha + about (p/k) b beta per message)
#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {
int digit(int64_t i, int64_t d, int k) { return int((i / d) % k); }

Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const int k = bruck_radix(ctx);
  const uint64_t m = c.count * c.elem_size;
  Builder b = make_builder(ctx, cat("bruck_alltoall[k=", k, "]"));
  // Positions with digit j in round s, the same on every rank.
  int64_t maxset = 0;
  std::vector<std::vector<std::vector<int>>> sets;  // [round][j] → positions
  for (int64_t d = 1; d < p; d *= k) {
    sets.emplace_back(size_t(k));
    for (int i = 0; i < p; ++i) {
      int j = digit(i, d, k);
      if (j) sets.back()[size_t(j)].push_back(i);
    }
    for (auto& v : sets.back()) maxset = std::max<int64_t>(maxset, int64_t(v.size()));
  }
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    const uint64_t pos = b.alloc_tmp(r, uint64_t(p) * m);
    auto at = [&](int i) { return Slice{Buf::tmp, pos + uint64_t(i) * m, m}; };
    // Per digit value a pack and an unpack buffer, reused across rounds.
    const uint64_t bufs = b.alloc_tmp(r, 2 * uint64_t(k) * uint64_t(maxset) * m);
    auto buf = [&](int j, bool unpack, size_t t, size_t n) {
      return Slice{Buf::tmp, bufs + (uint64_t(2 * j + (unpack ? 1 : 0)) * uint64_t(maxset) + t) * m, n * m};
    };
    for (int i = 0; i < p; ++i) b.copy(r, at(i), a2a_send_block(c, r, (r + i) % p));
    int64_t d = 1;
    for (auto& round : sets) {
      for (int j = 1; j < k; ++j) {
        const auto& set = round[size_t(j)];
        if (set.empty()) continue;
        for (size_t t = 0; t < set.size(); ++t) b.copy(r, buf(j, false, t, 1), at(set[t]));
        b.send(r, int((r + j * d) % p), buf(j, false, 0, set.size()));
        b.recv(r, int(((r - j * d) % p + p) % p), buf(j, true, 0, set.size()));
        for (size_t t = 0; t < set.size(); ++t) b.copy(r, at(set[t]), buf(j, true, t, 1));
      }
      d *= k;
    }
    for (int i = 0; i < p; ++i) b.copy(r, a2a_recv_block(c, r, ((r - i) % p + p) % p), at(i));
  }
  return b.finish();
}

// Round s sends, for each digit value j, the positions with digit j, one
// message after another; all ranks alike, rounds add up. Copies are free on
// the Hockney model.
std::optional<Terms> closed(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, k = bruck_radix(ctx);
  const uint64_t m = c.count * c.elem_size;
  Terms t;
  for (int64_t d = 1; d < p; d *= k)
    for (int j = 1; j < k; ++j) {
      uint64_t n = 0;
      for (int i = 0; i < p; ++i) n += digit(i, d, k) == j;
      if (n) {
        t += message_terms(n * m);
        t.messages += uint64_t(p);
      }
    }
  return t;
}

std::vector<std::string> variants(const Collective&, const MachineModel&) {
  return {"bruck_alltoall[k=2]", "bruck_alltoall[k=4]"};
}
// Per round (d = 1, k, k², …) and digit j, the blocks whose digit is j go
// to r + j·d, packed and unpacked; the k-1 messages leave one after another.
std::vector<Round> rounds(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, k = bruck_radix(ctx);
  const uint64_t bl = uniform_a2a_block(c);
  if (bl == 0 || p < 2) return {};
  std::vector<Round> v{local_round(bl * uint64_t(p))};
  // received[i]: the last round (1-based) that brought position i, 0 none.
  std::vector<int> received(size_t(p), 0);
  int t = 0;
  for (int64_t d = 1; d < p; d *= k) {
    uint64_t most = 0;  // blocks of the largest digit set
    int latest = 0;     // the last round that brought any of them
    for (int j = 1; j < k; ++j) {
      uint64_t n = 0;
      for (int i = 0; i < p; ++i)
        if ((i / d) % k == j) ++n, latest = std::max(latest, received[size_t(i)]);
      most = std::max(most, n);
    }
    if (!most) continue;
    ++t;
    for (int i = 0; i < p; ++i)
      if ((i / d) % k) received[size_t(i)] = t;
    // (needs: positions never received yet are the rank's own blocks.)
    const Round r = bruck_round(p, k, d, int(d), bl * most, latest ? t - latest : 0);
    v.push_back(local_round(bl * most * uint64_t(r.fan)));  // packed
    v.push_back(r);
    v.push_back(local_round(bl * most * uint64_t(r.fan)));  // unpacked
  }
  v.push_back(local_round(bl * uint64_t(p)));
  return v;
}
}  // namespace

Algorithm bruck_alltoall_algorithm() {
  Algorithm a{{CollOp::alltoall}, generate, closed, rounds};
  a.params = {{"k", ParamKind::integer, 2, 1 << 30, false, "radix of the digit-wise exchange"}};
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

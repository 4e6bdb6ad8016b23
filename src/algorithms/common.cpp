#include "algorithms/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "algorithms/primitives.hpp"
#include "model/postal_model.hpp"

namespace hetcoll {

int ceil_log2(uint64_t n) {
  int k = 0;
  while ((uint64_t(1) << k) < n) ++k;
  return k;
}

int reverse_bits(int x, int bits) {
  int y = 0;
  for (int i = 0; i < bits; ++i) y |= ((x >> i) & 1) << (bits - 1 - i);
  return y;
}

int floor_pow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

Builder make_builder(const GenContext& ctx, const std::string& name, bool infer_deps) {
  Builder b(ctx.coll, name, infer_deps);
  b.only_rank(ctx.only_rank);
  b.limit(ctx.op_limit);
  return b;
}

std::vector<Slice> reduce_along_tree(Builder& b, const Tree& tree, int root, uint64_t bytes, bool interior_in_out,
                                     const Slice* root_work) {
  const int n = tree.size();
  std::vector<Slice> work(static_cast<size_t>(n));
  const Slice in{Buf::in, 0, bytes}, out{Buf::out, 0, bytes};
  for (int r = 0; r < n; ++r) {
    int v = (r - root + n) % n;
    bool leaf = tree.child_begin[size_t(v)] == tree.child_begin[size_t(v) + 1];
    if (r == root && root_work) {
      work[size_t(r)] = *root_work;
    } else if (r == root || (interior_in_out && !leaf)) {
      work[size_t(r)] = out;
    } else if (leaf) {
      work[size_t(r)] = in;
    } else {
      work[size_t(r)] = Slice{Buf::tmp, b.wants(r) ? b.alloc_tmp(r, bytes) : 0, bytes};
    }
    if (work[size_t(r)].buf != Buf::in && b.wants(r)) b.copy(r, work[size_t(r)], in);
  }
  tree_reduce(b, Group::all(n), tree, root, [&](int m) { return work[size_t(m)]; });
  return work;
}

double shaping_lambda(const MachineModel& m, uint64_t bytes, int p) {
  return std::min({m.postal_lambda(bytes), std::max(1.0, double(p)), kMaxLambda});
}

uint64_t best_segment(const MachineModel& m, uint64_t bytes, uint32_t elem, int hops, bool combine) {
  if (bytes == 0 || hops <= 0) return std::max<uint64_t>(bytes, elem);
  auto cost = [&](uint64_t s) {
    uint64_t k = (bytes + s - 1) / s;
    MessageCost c = m.message(0, m.other_rank(), s);
    double usable = c.total() + (combine ? m.reduce_time(0, s) : 0.0);
    double busy = std::max(c.send, c.recv);
    if (combine) busy = std::max(busy, m.reduce_time(0, s));
    return double(k - 1) * busy + hops * usable;
  };
  // Candidates: powers of two and the analytic optimum of the α-β form,
  // rounded to whole elements.
  std::vector<uint64_t> cands{bytes};
  for (uint64_t s = elem; s < bytes; s *= 2) cands.push_back(s);
  MessageCost c0 = m.message(0, m.other_rank(), 0), c1 = m.message(0, m.other_rank(), bytes);
  double alpha = c0.total(), beta = (c1.total() - c0.total()) / double(bytes);
  if (alpha > 0 && beta > 0 && hops > 1) {
    double s = std::sqrt(double(bytes) * alpha / ((hops - 1) * beta));
    for (double f : {0.5, 1.0, 2.0}) {
      uint64_t x = uint64_t(s * f) / elem * elem;
      if (x >= elem && x < bytes) cands.push_back(x);
    }
  }
  uint64_t best = bytes;
  double best_t = cost(bytes);
  const uint64_t least = (bytes + kMaxSegments - 1) / kMaxSegments;
  for (uint64_t s : cands) {
    s = std::max<uint64_t>({elem, least, s}) / elem * elem;
    if (s < elem) s = elem;
    double t = cost(s);
    if (t < best_t - 1e-15 * best_t) {
      best_t = t;
      best = s;
    }
  }
  return best;
}

Slice a2a_send_block(const Collective& c, int r, int j) {
  const uint64_t e = c.elem_size, p = uint64_t(c.nranks);
  if (c.op == CollOp::alltoallv)
    return {Buf::in, c.sdispls[uint64_t(r) * p + uint64_t(j)] * e, c.sendcounts[uint64_t(r) * p + uint64_t(j)] * e};
  return {Buf::in, uint64_t(j) * c.count * e, c.count * e};
}

Slice a2a_recv_block(const Collective& c, int r, int i) {
  const uint64_t e = c.elem_size, p = uint64_t(c.nranks);
  if (c.op == CollOp::alltoallv)
    return {Buf::out, c.rdispls[uint64_t(r) * p + uint64_t(i)] * e, c.recvcounts[uint64_t(r) * p + uint64_t(i)] * e};
  return {Buf::out, uint64_t(i) * c.count * e, c.count * e};
}

uint64_t uniform_a2a_block(const Collective& c) {
  if (c.op == CollOp::alltoall) return c.count * c.elem_size;
  for (auto x : c.sendcounts)
    if (x != c.sendcounts[0]) return 0;
  return c.sendcounts.empty() ? 0 : c.sendcounts[0] * c.elem_size;
}

Terms costlier(const HockneyParams& h, const Terms& a, const Terms& b) { return h.time(b) > h.time(a) ? b : a; }

uint64_t pipeline_segment(const GenContext& ctx, bool combine, int hops) {
  const uint64_t m = vector_bytes(ctx.coll);
  const uint32_t e = ctx.coll.elem_size;
  uint64_t s = ctx.params.count("seg") ? param_bytes(ctx, "seg", m)
                                       : best_segment(ctx.model, m, e, hops < 0 ? ctx.coll.nranks - 1 : hops, combine);
  s = std::max<uint64_t>(e, s / e * e);
  return std::min(s, std::max<uint64_t>(m, e));
}

Blocks pipeline_segments(const GenContext& ctx, uint64_t seg) {
  const uint64_t m = vector_bytes(ctx.coll);
  const uint64_t k = std::max<uint64_t>(1, m / seg + (m % seg != 0));
  // Two ops (a receive and a send) per segment per rank.
  const double ops = 2.0 * double(k) * double(ctx.coll.nranks);
  if (k > uint64_t(INT32_MAX) || (ctx.op_limit && ops > double(ctx.op_limit)))
    throw TooLarge(cat("a chain of ", ctx.coll.nranks, " ranks in ", k, " segments of ", seg, " bytes: ", ops,
                       " ops"));
  return even_blocks(ctx.coll.count, ctx.coll.elem_size, int(k));
}

Schedule star_blocks(const GenContext& ctx, const char* name, bool to_root) {
  const Collective& c = ctx.coll;
  const int p = c.nranks, root = c.root;
  Builder b = make_builder(ctx, name);
  Blocks blocks = coll_blocks(c);
  for (int j = 0; j < p; ++j) {
    const int r = (root + j) % p;
    const uint64_t len = blocks.len[size_t(r)], at = blocks.off[size_t(r)];
    // The root's side holds every block at its offset; the rank's, its own.
    const Slice dst{Buf::out, to_root ? at : 0, len}, src{Buf::in, to_root ? 0 : at, len};
    if (len == 0) continue;
    const int from = to_root ? r : root, to = to_root ? root : r;
    if (r == root) {
      if (b.wants(root)) b.copy(root, dst, src);
    } else {
      if (b.wants(from)) b.send(from, to, src);
      if (b.wants(to)) b.recv(to, from, dst);
    }
  }
  return b.finish();
}

std::optional<Terms> star_blocks_terms(const GenContext& ctx) {
  Blocks blocks = coll_blocks(ctx.coll);
  if (!blocks.equal_sizes() || blocks.len[0] == 0) return std::nullopt;
  return double(ctx.coll.nranks - 1) * message_terms(blocks.len[0]);
}

}  // namespace hetcoll

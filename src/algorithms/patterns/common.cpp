#include "algorithms/patterns/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "algorithms/patterns/primitives.hpp"
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

Schedule one_rank_copy(const GenContext& ctx, const std::string& name, uint64_t bytes) {
  Builder b = make_builder(ctx, name);
  b.copy(0, {Buf::out, 0, bytes}, {Buf::in, 0, bytes});
  return b.finish();
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

Schedule bcast_along_tree(const GenContext& ctx, const std::string& name, const Tree& tree, bool infer_deps,
                          bool serial) {
  Builder b = make_builder(ctx, name, infer_deps);
  tree_bcast(b, Group::all(ctx.coll.nranks), tree, ctx.coll.root, {Buf::out, 0, vector_bytes(ctx.coll)}, serial);
  return b.finish();
}

Schedule reduce_to_root(const GenContext& ctx, const std::string& name, const Tree& tree) {
  Builder b = make_builder(ctx, name);
  reduce_along_tree(b, tree, ctx.coll.root, vector_bytes(ctx.coll), false);
  return b.finish();
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

std::vector<uint64_t> ring_reduce_scatter_in_scratch(Builder& b, const Blocks& blocks, int p) {
  std::vector<uint64_t> base(static_cast<size_t>(p), 0);
  const uint64_t total = blocks.span(0, p);
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r) || total == 0) continue;
    base[size_t(r)] = b.alloc_tmp(r, total);
    b.copy(r, {Buf::tmp, base[size_t(r)], total}, {Buf::in, 0, total});
  }
  ring_reduce_scatter(b, Group::all(p), [&](int m, int x, int) {
    return Slice{Buf::tmp, base[size_t(m)] + blocks.off[size_t(x)] - blocks.off[0], blocks.len[size_t(x)]};
  });
  return base;
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

std::optional<Terms> direct_a2a_terms(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  uint64_t m = uniform_a2a_block(c);
  if (m == 0) return std::nullopt;
  return every_rank_steps(c.nranks, message_terms(m));
}

std::vector<Round> direct_a2a_rounds(const Collective& c, int fan) {
  const uint64_t m = uniform_a2a_block(c);
  if (m == 0) return {};
  std::vector<Round> v{local_round(m)};
  add_shift_sweep(v, c.nranks, 1, c.nranks - 1, m, fan);
  return v;
}

void direct_a2a_entry(Algorithm& a) {
  a.closed_form = direct_a2a_terms;
  a.local_counts = true;
  a.copy_in_place = {CollOp::alltoall, CollOp::alltoallv};
}

std::optional<double> equal_block_bytes(const Collective& c) {
  const uint64_t p = uint64_t(c.nranks);
  if (c.count % p) return std::nullopt;
  return double(c.count / p * c.elem_size);
}

int bruck_radix(const GenContext& ctx) { return std::min(param_int(ctx, "k", 2), std::max(2, ctx.coll.nranks)); }

Terms costlier(const HockneyParams& h, const Terms& a, const Terms& b) { return h.time(b) > h.time(a) ? b : a; }

uint64_t pipeline_segment(const GenContext& ctx, bool combine, int hops) {
  const uint64_t m = vector_bytes(ctx.coll);
  const uint32_t e = ctx.coll.elem_size;
  uint64_t s = ctx.params.count("seg") ? param_bytes(ctx, "seg", m)
                                       : best_segment(ctx.model, m, e, hops < 0 ? ctx.coll.nranks - 1 : hops, combine);
  s = std::max<uint64_t>(e, s / e * e);
  return std::min(s, std::max<uint64_t>(m, e));
}

ParamSpec seg_param() {
  return {"seg", ParamKind::bytes, 1, 4.6e18, false, "segment size in bytes (rounded to whole elements)"};
}

std::optional<Blocks> recurrence_segments(const GenContext& ctx, bool combine) {
  Blocks seg = pipeline_segments(ctx, pipeline_segment(ctx, combine));
  if (uint64_t(ctx.coll.nranks) * uint64_t(seg.size()) > kMaxRecurrenceSteps) return std::nullopt;
  return seg;
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

}  // namespace hetcoll

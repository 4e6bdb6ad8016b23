// Helpers shared by the generators: builders, sizes, the reduction along a
// tree that several collectives use, pipelining segment sizes, cost terms.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/patterns/group.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/patterns/tree.hpp"
#include "util/error.hpp"

namespace hetcoll {

// Closed forms that walk a pipeline stage by stage (chain_bcast,
// chain_reduce) cost p·k steps; beyond this many they give no closed form
// (the planner then simulates within its budget, or passes).
constexpr uint64_t kMaxRecurrenceSteps = uint64_t(1) << 16;


inline uint64_t vector_bytes(const Collective& c) { return c.count * c.elem_size; }
int ceil_log2(uint64_t n);       // ⌈log2 n⌉, 0 for n ≤ 1
int floor_pow2(int n);           // largest power of two ≤ n (n ≥ 1)
int reverse_bits(int x, int bits);  // x's lowest `bits` bits in reverse order

// Non-power-of-two groups for recursive doubling and halving: the first
// `core` = 2^⌊log2 p⌋ ranks do the work; each of the `extra` = p - core other
// ranks is paired with core rank v - core and joins through it.
struct Fold {
  int p, core, extra;
  explicit Fold(int n) : p(n), core(floor_pow2(n)), extra(n - floor_pow2(n)) {}
  bool is_extra(int v) const { return v >= core; }
  int partner(int v) const { return v >= core ? v - core : (v < extra ? v + core : -1); }
};
// MPICH's fold (Thakur, Rabenseifner, Gropp 2005): the first 2·extra ranks
// pair up, each even one folding into the odd one after it; the core is
// those odd ranks and every rank from 2·extra on, in rank order (index(v):
// v's place in the core, rank(i): the core's i-th rank). Where near ranks
// are numbered together, the extras fold into a near partner and the core
// keeps the far ranks' halves apart (two sites of 9 and 8 hosts: one
// crossing of the WAN, where Fold's has three).
struct PairFold {
  int p, core, extra;
  explicit PairFold(int n) : p(n), core(floor_pow2(n)), extra(n - floor_pow2(n)) {}
  bool is_extra(int v) const { return v < 2 * extra && v % 2 == 0; }
  int partner(int v) const { return v < 2 * extra ? (v % 2 == 0 ? v + 1 : v - 1) : -1; }
  int index(int v) const { return v < 2 * extra ? v / 2 : v - extra; }
  int rank(int i) const { return i < extra ? 2 * i + 1 : i + extra; }
};

// A builder named `name` that honours the context's only_rank.
Builder make_builder(const GenContext& ctx, const std::string& name, bool infer_deps = true);
// The schedule of a group of one rank where the result is its own input:
// `bytes` of `in` copied to `out`.
Schedule one_rank_copy(const GenContext& ctx, const std::string& name, uint64_t bytes);

// Combine everybody's `in` (bytes long) towards `root` along `tree`: the
// root combines into `root_work` (by default its `out`); interior ranks into
// `out` when they have one (allreduce) or into fresh scratch (reduce);
// leaves send `in` as it is. Returns the slice each rank combined into.
std::vector<Slice> reduce_along_tree(Builder& b, const Tree& tree, int root, uint64_t bytes, bool interior_in_out,
                                     const Slice* root_work = nullptr);

// The whole vector along one tree of the group, by a builder named `name`
// (infer_deps: as make_builder): broadcast from the call's root
// (tree_bcast; serial: a node's sends one at a time), or combined to it
// (reduce_along_tree; interior ranks in scratch).
Schedule bcast_along_tree(const GenContext& ctx, const std::string& name, const Tree& tree, bool infer_deps = true,
                          bool serial = true);
Schedule reduce_to_root(const GenContext& ctx, const std::string& name, const Tree& tree);

// alltoall(v): rank r's block for rank j in `in`, and from rank i in `out`.
Slice a2a_send_block(const Collective& c, int r, int j);
Slice a2a_recv_block(const Collective& c, int r, int i);
// The block size when every alltoall(v) block has the same size, else 0.
uint64_t uniform_a2a_block(const Collective& c);
// The direct alltoall(v) — every block straight to its rank, r → r+s for
// s = 1 … p-1 (pairwise_exchange, spread_alltoall) — for uniform blocks:
// its cost, p-1 messages of a block (p(p-1) in all), and its rounds, the
// own block copied then the shifts, `fan` of them posted at once.
std::optional<Terms> direct_a2a_terms(const GenContext& ctx, const HockneyParams&);
std::vector<Round> direct_a2a_rounds(const Collective& c, int fan);
// The registry's facts of a direct alltoall beside its generator and
// rounds: its closed form, that a rank needs only its own counts, and that
// in place it works on a copy of the input (a block is overwritten before
// it is sent).
void direct_a2a_entry(Algorithm& a);

// Ring reduce-scatter of `blocks` of everybody's `in`, in a scratch copy
// (bucket_distributed_combine, ring_allreduce,
// distributed_combine_gather); returns each rank's scratch base: block i
// of rank r's partial vector is at tmp[base[r] + off(i)], and block r is
// fully combined at the end.
std::vector<uint64_t> ring_reduce_scatter_in_scratch(Builder& b, const Blocks& blocks, int p);

// Pipelining: the segment size (whole elements) minimising the predicted
// time of a chain of `hops` hops moving `bytes` in segments of s bytes,
// (k-1)·g(s) + hops·c(s) with k = ⌈bytes/s⌉, g the sender's busy time and c
// the time until the data is usable (plus the reduction when `combine`) —
// in at most kMaxSegments segments. Near the optimum the time is flat in s
// (1 µs a message at 10 GB/s, 1 GiB through 8 hops: 512 segments lose 1 %
// to the unbounded optimum of ~900), while a model that prices messages at
// nothing (a profile with no per-message cost) would otherwise cut the
// vector into single elements: schedules of millions of messages that cost
// minutes to plan and run.
constexpr uint64_t kMaxSegments = 512;
uint64_t best_segment(const MachineModel& m, uint64_t bytes, uint32_t elem, int hops, bool combine);
// A chain's segment size: its seg= parameter, else best_segment for `hops`
// hops (default: a chain through the whole group, p-1), in whole elements,
// at most the vector.
uint64_t pipeline_segment(const GenContext& ctx, bool combine, int hops = -1);
// The seg= parameter of the pipelined algorithms: the segment size.
ParamSpec seg_param();
// The segments of a chain's closed form that walks the pipeline stage by
// stage (combine: as pipeline_segment); nullopt beyond
// kMaxRecurrenceSteps, left to the simulator.
std::optional<Blocks> recurrence_segments(const GenContext& ctx, bool combine);
// The vector cut into segments of `seg` bytes. Throws TooLarge when there
// would be more than INT_MAX of them, or when a chain of all the group's
// ranks would exceed the context's op limit with them.
Blocks pipeline_segments(const GenContext& ctx, uint64_t seg);

// The closed forms of the algorithms that cut the vector into one block
// per rank (ring_allreduce, scatter_collect, distributed_combine_gather):
// a block's bytes where the count divides into equal blocks, else nullopt
// (uneven blocks: no closed form).
std::optional<double> equal_block_bytes(const Collective& c);

// One message of `bytes` on the Hockney model: α + bytes·β.
inline Terms message_terms(uint64_t bytes) { return {1.0, double(bytes), 0.0}; }
// p-1 steps in each of which every rank sends one message and the step
// costs `step` (rings, pairwise and direct exchanges): (p-1)·step, p(p-1)
// messages.
inline Terms every_rank_steps(int p, const Terms& step) {
  Terms t = double(p - 1) * step;
  t.messages = uint64_t(p) * uint64_t(p - 1);
  return t;
}
// The larger of two costs at the model's parameters (critical path choice).
Terms costlier(const HockneyParams& h, const Terms& a, const Terms& b);

// The model's λ for the whole vector (MachineModel::postal_lambda) as the
// postal algorithms shape their trees and rounds with it: beyond p - 2 the
// postal-optimal tree of p ranks is the star (the root's last send leaves
// before its first message could be forwarded), so λ is taken at most p —
// the same schedules, built in time that does not grow with λ, for any λ a
// model derives (a probed host whose receive costs 1 ns a byte sees λ in
// the hundreds of thousands for a megabyte). The prediction stays the
// simulator's, on the model itself.
double shaping_lambda(const MachineModel& m, uint64_t bytes, int p);

// An estimate of a broadcast tree on the postal view of the model: λ and
// the sender's busy time t0 for the whole vector (MachineModel::postal_lambda),
// the tree taking `time(λ)` units of t0 (e.g. ⌈log2 p⌉·λ for the binomial
// tree). Exact on the postal model when `exact` (the tree's postal time is
// time(λ)); an estimate elsewhere. p-1 messages.
template <class Time>
Terms postal_estimate(const GenContext& ctx, Time time, bool exact = true) {
  const uint64_t m = ctx.coll.count * ctx.coll.elem_size;
  const double lambda = ctx.model.postal_lambda(m);
  const double t0 = ctx.model.message(0, ctx.model.other_rank(), m).send;
  Terms t;
  t.fixed = time(lambda) * t0;
  t.messages = uint64_t(std::max(ctx.coll.nranks - 1, 0));
  t.postal_exact = exact;
  return t;
}

// A reduce tree's rough estimate (not exact anywhere: ranked as an
// estimate): `levels` levels on the root's path, in each `children`
// messages received one after another, the last λ after its start, and
// combined: levels·(children - 1 + λ) message times and levels·children
// vectors combined.
inline Terms tree_reduce_estimate(const GenContext& ctx, double levels, double children) {
  Terms t = postal_estimate(ctx, [&](double lambda) { return levels * (children - 1 + lambda); }, false);
  t.gamma = levels * children * double(ctx.coll.count * ctx.coll.elem_size);
  t.rough = true;  // weighed after the candidates priced better (planner.cpp)
  return t;
}

// Rounds (registry.hpp: Algorithm::rounds) of the common shapes.
inline Round local_round(uint64_t bytes) {
  Round r;
  r.pattern = Round::Pattern::local;
  r.bytes = bytes;
  return r;
}
// `times` rounds of r → r+distance around a ring of all p ranks.
inline Round shift_round(int p, int distance, uint64_t bytes, uint64_t reduce, double times) {
  return {Round::Pattern::shift, distance, p, bytes, reduce, times};
}
// Bruck's algorithms (bruck_allgather, bruck_alltoall), radix k: the k=
// parameter (default 2), clamped to p — a radix of p or more gives the same
// schedule as p (every rank is its own digit), while the work and memory
// grow with the radix.
int bruck_radix(const GenContext& ctx);
// Their round at distance d = k^s: the k-1 messages of `bytes` (fewer where
// j·d reaches p) to r + j·step, one after another (step: d, or p - d for
// r - j·d), carrying what came in `needs` rounds back (Round::needs).
inline Round bruck_round(int p, int k, int64_t d, int step, uint64_t bytes, int needs) {
  Round r = shift_round(p, step, bytes, 0, 1);
  r.fan = int(std::min<int64_t>(k - 1, (p - 1) / d));
  r.stride = step;
  r.needs = needs;
  return r;
}
// (Rounds price a round by its largest block, Blocks::largest, and do not
// describe calls with an empty block, Blocks::any_empty: the schedule
// leaves those messages out.)
// Recursive doubling or halving over the core of `f` (bytes(d), reduce(d)
// for the exchange at distance d, in the order given), with the extra
// ranks folded in first (fold_in bytes, combined when fold_reduce) and
// answered last (fold_out bytes).
template <class Bytes, class Reduce>
void add_exchange_rounds(std::vector<Round>& v, const Fold& f, bool halving, Bytes bytes, Reduce reduce,
                         uint64_t fold_in, bool fold_reduce, uint64_t fold_out) {
  if (f.extra) v.push_back({Round::Pattern::fold_in, 0, f.core, fold_in, fold_reduce ? fold_in : 0, 1});
  std::vector<int> ds;
  for (int d = 1; d < f.core; d *= 2) ds.push_back(d);
  if (halving) std::reverse(ds.begin(), ds.end());
  for (int d : ds) v.push_back({Round::Pattern::xor_, d, f.core, bytes(d), reduce(d), 1});
  if (f.extra && fold_out) v.push_back({Round::Pattern::fold_out, 0, f.core, fold_out, 0, 1});
}

}  // namespace hetcoll

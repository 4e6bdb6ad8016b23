// hub_allreduce — pipelined combine-to-all through one hub: the other ranks
// stream their vectors in segments along a chain, each combining its own
// into what it passes on, the last feeding the hub; the hub combines
// segment i and streams the result back to every rank while the next
// segments arrive.
//
// Every rank but the hub sends the vector once and gets the result once,
// at the same time — against 2(p-1)/p of it each way for the ring. Across a
// star of uplinks where one subnet's uplink is the slowest (three subnets,
// one behind half the others' rate) that is the least any allreduce can
// send through it: the slowest rank starts the chain (it only sends), the
// hub sits behind a fast uplink and carries (p-1) results out. Every rank
// ends with the hub's bits: rank-consistent.
// Why a chain and not every rank straight to the hub (chain=0): then each
// rank streams to and from the same peer at once, and on the emulated
// cluster (Open MPI 4.1 over TCP through shaped links) such a pair ran at
// 1-2x its one-way time from run to run — the three subnet leaders' 1 MiB
// allreduce took 257-376 ms (median 332) straight to the hub, 264-269 ms
// (median 265) along the chain. The chain leaves one pair streaming both
// ways: the hub and its last feeder, the two the model places best. Where
// the probe saw a pair take turns (profile bandwidth_same_pair: Open MPI
// over TCP, receives posted first) the model has that pair's two
// directions take turns, and across the emulated cluster's three leaders
// the ring then wins, as measured there (253 against 259-265 ms).
// Steps: (p-1) + k segment steps up and one down (k segments) when each
// takes one step; 2(p-1)k messages of m/k bytes, (p-1)k combines.
// Parameters: hub (the combining rank; by default the one the model's
// message times favour), seg (segment bytes; by default chosen by the model
// as for a two-hop chain, counting the combine), window (segments the
// chain's first rank has out before their result is back), chain.
// Constraints: any group; the planner tries the two best hubs at 4, 8 and
// 16 segments and the simulator decides.
// Source: the pipelined reduce and broadcast of InterCom §8 (pipelining)
// joined at one root, as NCCL's tree allreduce does (a chain up, the root's
// broadcast down); the hub's choice from the per-pair costs as Banikazemi
// et al. 1999 §4.
// Cost: about (p+k)(alpha + (m/k)(beta + gamma)) where the hub's link is (p-1)x faster
#include <algorithm>
#include <numeric>

#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"

namespace hetcoll {
namespace {

constexpr int kWindow = 4;  // segments in flight per stream by default

// How a hub at r fares on m bytes, by the model's pair costs: its own link
// carries a message to and from every other rank (summed: they share it),
// each other rank one each way (the slowest of them counts).
double hub_score(const MachineModel& m, int p, int r, uint64_t bytes) {
  double out = 0, in = 0, worst = 0;
  for (int o = 0; o < p; ++o) {
    if (o == r) continue;
    const double down = m.message(r, o, bytes).total(), up = m.message(o, r, bytes).total();
    out += down;
    in += up;
    worst = std::max(worst, std::max(down, up));
  }
  return std::max({out, in, worst});
}

// Groups up to this size have their hubs ranked by the model (p² pair
// costs); larger ones take rank order: their hub carries p-1 vectors, which
// no model makes competitive there.
constexpr int kMaxScoredGroup = 64;

// The ranks as hubs, best first (ties: lower rank).
std::vector<int> hubs_by_score(const MachineModel& m, int p, uint64_t bytes) {
  std::vector<int> order(static_cast<size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  if (p > kMaxScoredGroup) return order;
  std::vector<double> score(size_t(p), 0);
  for (int r = 0; r < p; ++r) score[size_t(r)] = hub_score(m, p, r, bytes);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score[size_t(a)] < score[size_t(b)]; });
  return order;
}

// The other ranks in the order a chain passes segments towards the hub:
// the one the model places worst as a hub first (it only sends its own
// vector), the hub's best neighbour last. `order`: hubs_by_score.
std::vector<int> chain_order(std::vector<int> order, int hub) {
  std::reverse(order.begin(), order.end());
  order.erase(std::find(order.begin(), order.end(), hub));
  return order;
}

Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const std::vector<int> ranked = hubs_by_score(ctx.model, p, m);
  const int hub = ctx.params.count("hub") ? param_int(ctx, "hub", 0) : ranked[0];
  if (hub >= p) throw InputError(cat("hub_allreduce: hub=", hub, " is not a rank of a group of ", p));
  const uint64_t s = pipeline_segment(ctx, true, 2);  // two hops: up the chain's last link, back down
  const Blocks seg = pipeline_segments(ctx, s);
  const int window = param_int(ctx, "window", kWindow);
  const bool chain = param_int(ctx, "chain", 1) != 0;
  const std::string name = cat("hub_allreduce[hub=", hub, chain ? "" : ",chain=0", ",seg=", s,
                               window != kWindow ? cat(",window=", window) : std::string(), "]");
  if (p == 1) return one_rank_copy(ctx, name, m);
  Builder b = make_builder(ctx, name);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  const int k = seg.size();
  const int depth = std::min(k, window);  // scratch slots per incoming stream
  const uint64_t slot_len = seg.len[0];
  auto part = [&](const Slice& v, int i) { return v.sub(seg.off[size_t(i)], seg.len[size_t(i)]); };
  // Who sends each rank its segments: every other rank sends to the hub
  // directly, or (chain) to the next rank along the chain, the last to the hub.
  std::vector<int> feeds(size_t(p), hub), fed_by(size_t(p), -1);
  if (chain) {
    const std::vector<int> order = chain_order(ranked, hub);
    for (size_t j = 0; j < order.size(); ++j) {
      feeds[size_t(order[j])] = j + 1 < order.size() ? order[j + 1] : hub;
      fed_by[size_t(feeds[size_t(order[j])])] = order[j];
    }
  }
  // A rank's segments leave one after another, as they would on its one
  // connection: segment i arrives before i+1 has begun, so it is combined
  // and returned while the rest stream in. The first rank of each stream
  // has at most `window` segments out whose result has not come back.
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r) || r == hub) continue;
    const int from = fed_by[size_t(r)];
    const uint64_t slots = from >= 0 ? b.alloc_tmp(r, uint64_t(depth) * slot_len) : 0;
    std::vector<uint32_t> got(size_t(k), 0);
    for (int i = 0; i < k; ++i) {
      Slice mine = part(in, i);
      b.serial_sends(true);
      if (from >= 0) {  // combine what the chain brought into out, pass it on
        const Slice acc = part(out, i), slot{Buf::tmp, slots + uint64_t(i % depth) * slot_len, mine.len};
        b.copy(r, acc, mine);
        b.recv(r, from, slot);
        b.reduce(r, acc, slot);
        b.send(r, feeds[size_t(r)], acc);
      } else if (i >= window) {
        b.send(r, feeds[size_t(r)], mine, {got[size_t(i - window)]});
      } else {
        b.send(r, feeds[size_t(r)], mine);
      }
      b.serial_sends(false);
      got[size_t(i)] = b.recv(r, hub, part(out, i));
    }
  }
  if (b.wants(hub)) {
    std::vector<int> sources;
    for (int o = 0; o < p; ++o)
      if (o != hub && feeds[size_t(o)] == hub) sources.push_back(o);
    // Scratch slots per incoming stream, reused every `depth` segments (the
    // builder orders a slot's receive after the combine that last read it).
    const uint64_t slots = b.alloc_tmp(hub, uint64_t(sources.size()) * uint64_t(depth) * slot_len);
    for (int i = 0; i < k; ++i) {
      const Slice piece = part(out, i);
      b.copy(hub, piece, part(in, i));
      std::vector<Slice> got;
      for (size_t j = 0; j < sources.size(); ++j) {
        Slice slot{Buf::tmp, slots + (uint64_t(j) * uint64_t(depth) + uint64_t(i % depth)) * slot_len, piece.len};
        b.recv(hub, sources[j], slot);
        got.push_back(slot);
      }
      for (const Slice& g : got) b.reduce(hub, piece, g);
      for (int o = 0; o < p; ++o)
        if (o != hub) b.send(hub, o, piece);
    }
  }
  return b.finish();
}

// The two hubs the model favours, each with the vector in 4, 8 and 16
// segments (the model's send costs decide: segments a sender streams one
// after another pipeline; segments it hands off at once share the link and
// arrive together).
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  std::vector<std::string> v;
  if (c.nranks < 2) return v;
  const uint64_t bytes = vector_bytes(c);
  if (c.nranks > kMaxScoredGroup) return v;  // the default: hub 0, the model's segment
  const std::vector<int> order = hubs_by_score(m, c.nranks, bytes);
  for (size_t i = 0; i < order.size() && i < 2; ++i)
    for (uint64_t parts : {8, 4, 16}) {
      const uint64_t seg = std::max<uint64_t>(c.elem_size, bytes / parts / c.elem_size * c.elem_size);
      std::string spec = cat("hub_allreduce[hub=", order[i], ",seg=", seg, "]");
      if (std::find(v.begin(), v.end(), spec) == v.end()) v.push_back(spec);
    }
  return v;
}
}  // namespace

Algorithm hub_allreduce_algorithm() {
  Algorithm a{{CollOp::allreduce}, generate};
  a.params = {{"hub", ParamKind::integer, 0, double(kMaxRanks), false, "the combining rank (of the group)"},
              {"window", ParamKind::integer, 1, 65536, false, "segments a rank has in flight (sent, result not yet back)"},
              {"chain", ParamKind::integer, 0, 1, false,
               "1 (default): the other ranks pass their segments along a chain, combining, the last to the hub; "
               "0: each sends to the hub directly"},
              seg_param()};
  a.variants = variants;
  return a;
}
}  // namespace hetcoll

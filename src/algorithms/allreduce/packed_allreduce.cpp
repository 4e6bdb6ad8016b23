// packed_allreduce — combine along the packed in-trees of the hosts and
// hand the result back down the same trees, both pipelined at once.
//
// The trees are packed_reduce's (model/tree_packing.hpp), towards the
// root's host, each combining a share of the vector. Segment by segment, a
// host's rank takes in its host's other ranks and its child hosts, combines
// them into its output and sends the partial segment up; the root's host
// has the whole sum of a segment as soon as its last contribution is in and
// sends it down at once, so the vector's last segments still go up while
// its first come down. Every rank gets the root's bits: the result is
// the same on every rank whatever the operator's rounding.
// Every host takes the segments in the root's order, each coming down a
// fixed lag after it went up (the longest round trip in segments), so
// that the way up of later segments overlaps the round trip of earlier
// ones and no send waits on itself.
// Steps: about 2·depth + k segment steps. Bytes: every rank sends m up
// (the root's host excepted) and receives m down; a host carries m times
// its children each way, averaged over the trees.
// Constraints: a commutative operator (MPI's built-in ones). Weighed by the
// planner where each host holds one rank of the group (see distinct()).
// Parameters: trees, seg, window (as packed_bcast).
// Source: reduce followed by broadcast (InterCom §7's composite), along
// packed trees (Blink, MLSys 2020: reduce-broadcast trees for AllReduce;
// ForestColl 2024), pipelined as chain_reduce/chain_bcast.
// Cost: about m / (the packing's rate) + 2 depth segment times, where links carry both ways at once
#include "algorithms/all.hpp"
#include "algorithms/patterns/packed_trees.hpp"

#include <algorithm>
#include <map>

namespace hetcoll {
namespace {

// One op group of a host: segment j of L.all going up (combine and send to
// the parent) or coming down (receive from the parent, send to the
// children).
struct Step {
  bool down;
  size_t j;
};

// Every host takes the segments in one order (the root's), each going up
// `lag` segments before it comes down: a segment's round trip overlaps the
// next `lag` segments' way up. With the same order and lag everywhere no
// host's send waits on a segment that waits on that send (a host sends
// segment i's sum down only after it sent segment i + lag up, and its
// parent sends i down only after i + lag came up from it), so the schedule
// finishes even when every send waits for its receive (schedule/validator).
std::vector<Step> steps_of(const PackedLayout& L, const GenContext& ctx) {
  const std::vector<std::vector<int64_t>> up = segment_due(L, ctx, TreeDirection::in, false);
  const std::vector<std::vector<int64_t>> down = segment_due(L, ctx, TreeDirection::out, false);
  const std::vector<std::pair<int, int>>& seq = L.order[size_t(L.root_host)];
  const size_t n = seq.size();
  std::vector<size_t> index_of(n);
  {
    std::map<std::pair<int, int>, size_t> where;
    for (size_t j = 0; j < L.all.size(); ++j) where[L.all[j]] = j;
    for (size_t x = 0; x < n; ++x) index_of[x] = where[seq[x]];
  }
  // The lag: the longest round trip (up to the root and back down to a
  // host), in segments of the packing's pace.
  int64_t trip = 0;
  for (size_t h = 0; h < up.size(); ++h)
    for (size_t j = 0; j < L.all.size(); ++j) trip = std::max(trip, down[h][j] - up[h][j]);
  int64_t span = 0;
  for (size_t j = 0; j < L.all.size(); ++j) span = std::max(span, up[size_t(L.root_host)][j]);
  const int64_t pace = n ? std::max<int64_t>(1, span / int64_t(n)) : 1;
  const size_t lag = std::clamp<size_t>(size_t((trip + pace - 1) / pace), 1, std::max<size_t>(n, 1));
  std::vector<Step> steps;
  steps.reserve(2 * n);
  for (size_t x = 0; x < n + lag; ++x) {
    if (x < n) steps.push_back({false, index_of[x]});
    if (x >= lag && x - lag < n) steps.push_back({true, index_of[x - lag]});
  }
  return steps;
}

Schedule generate(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const uint64_t m = vector_bytes(c);
  PackedLayout L = packed_layout(ctx, TreeDirection::in, true);
  const std::vector<Step> steps = steps_of(L, ctx);
  Builder b = packed_builder(ctx, "packed_allreduce", L);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  const uint64_t slot_len = L.largest_segment();
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    const int h = L.host[size_t(r)];
    PeerSends sends(b, r, L.window);  // a peer's sends (window, see packed_trees.hpp)
    auto send = [&](int to, const Slice& piece, uint32_t first = PeerSends::kNoSend) {
      return sends.send(to, piece, first);
    };
    const int rep = L.rep[size_t(h)];
    if (rep != r) {  // another rank of the host: its input up, the result down
      for (const Step& st : steps) {
        const auto [k, i] = L.all[st.j];
        const Blocks& seg = L.segments[size_t(k)];
        if (seg.len[size_t(i)] == 0) continue;
        if (st.down) b.recv(r, rep, out.sub(seg.off[size_t(i)], seg.len[size_t(i)]));
        else send(rep, in.sub(seg.off[size_t(i)], seg.len[size_t(i)]));
      }
      continue;
    }
    const size_t fan_in = packed_fan_in(L, L.children, h);
    b.copy(r, out, in);
    CombineSlots slots(b, r, fan_in, slot_len);
    for (const Step& st : steps) {
      const auto [k, i] = L.all[st.j];
      const Blocks& seg = L.segments[size_t(k)];
      if (seg.len[size_t(i)] == 0) continue;
      const Slice piece = out.sub(seg.off[size_t(i)], seg.len[size_t(i)]);
      const int parent = L.packing.trees[size_t(k)].parent[size_t(h)];
      // Across subnets first (as packed_reduce going up, as packed_bcast
      // coming down).
      const std::vector<int>& kids = L.children[size_t(k)][size_t(h)];
      if (!st.down) {
        across_subnets_first(L, h, kids, -1, -1, true,
                             [&](int from, uint32_t first) { return slots.take(from, piece, first); });
        if (parent >= 0) send(L.rep[size_t(parent)], piece);
      } else {
        if (parent >= 0) b.recv(r, L.rep[size_t(parent)], piece);
        across_subnets_first(L, h, kids, -1, -1, false, [&](int to, uint32_t first) { return send(to, piece, first); });
      }
    }
  }
  return b.finish();
}

// Weighed where hosts are joined by links and each holds one rank of the
// group: with several ranks a host, SimGrid ran it 9 % slower than the
// simulator priced it (the multicore platform, 1 MiB: 197.6 ms against
// 180.2) — the host's ranks' shared-memory flows beside its network ones —
// and so chose it over a faster hierarchical allreduce.
bool distinct(const Collective& c, const MachineModel& m) {
  if (!packed_distinct(c, m)) return false;
  const TopologyPtr t = m.topology();
  std::vector<char> seen(size_t(t->hosts()), 0);
  for (int r = 0; r < std::min(c.nranks, t->ranks()); ++r)
    if (seen[size_t(t->host_of(r))]++) return false;
  return true;
}
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  return packed_variants("packed_allreduce", m, vector_bytes(c));
}
}  // namespace

Algorithm packed_allreduce_algorithm() {
  Algorithm a{{CollOp::allreduce}, generate};
  packed_registry_entry(a, false, variants);
  a.distinct = distinct;  // one rank a host (above)
  return a;
}
}  // namespace hetcoll

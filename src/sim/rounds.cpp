#include "sim/rounds.hpp"

#include <algorithm>
#include <cmath>

namespace hetcoll {
namespace {

// Messages a sampled sweep prices at most (a few milliseconds).
constexpr int64_t kSweepMessages = int64_t(1) << 17;

// Every message of a round: fn(sender, receiver).
template <class Fn>
void for_each_message(const Round& rd, int p, Fn fn) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  switch (rd.pattern) {
    case Round::Pattern::shift:
      if (act < 2) return;
      for (int r = 0; r < act; ++r)
        for (int f = 0; f < rd.fan; ++f) {
          const int q = int(((int64_t(r) + rd.distance + int64_t(f) * rd.stride) % act + act) % act);
          if (q != r) fn(r, q);
        }
      return;
    case Round::Pattern::xor_:
      for (int r = 0; r < act; ++r)
        if ((r ^ rd.distance) < act) fn(r, r ^ rd.distance);
      return;
    case Round::Pattern::fold_in:
      for (int r = act; r < p; ++r) fn(r, r - act);
      return;
    case Round::Pattern::fold_out:
      for (int r = 0; r < p - act; ++r) fn(r, r + act);
      return;
    case Round::Pattern::open:
      for (int r = 0; r + rd.distance < act; ++r) fn(r, r + rd.distance);
      return;
    case Round::Pattern::local: return;
  }
}

// Does each message's receiver send back to its sender in the same round?
bool both_ways(const Round& rd, int p) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  if (rd.pattern == Round::Pattern::xor_) return true;
  if (rd.pattern == Round::Pattern::shift && rd.fan == 1) return act > 1 && (2 * int64_t(rd.distance)) % act == 0;
  return false;
}

// Steps around a ring (r → r+1 of every rank, one message at a time): a
// pipeline whose blocks each travel `times` hops.
bool is_ring(const Round& rd, int p) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  return rd.pattern == Round::Pattern::shift && rd.distance == 1 && rd.fan == 1 && act > 1 && rd.times > 1;
}

// The time of one round (a ring: of all its steps; is_ring).
double round_time(const MachineModel& m, int p, const Round& rd, uint64_t& messages, std::vector<double>& load) {
  messages = 0;
  if (rd.pattern == Round::Pattern::local) {  // copies: the slowest rank's
    if (!rd.bytes) return 0;
    if (m.ranks() == 0 && !m.topology()) return m.copy_time(0, rd.bytes);
    double t = 0;
    for (int r = 0; r < p; ++r) t = std::max(t, m.copy_time(r, rd.bytes));
    return t;
  }
  for_each_message(rd, p, [&](int, int) { ++messages; });
  if (!messages) return 0;
  const TopologyPtr topo = m.topology();
  const bool ring = is_ring(rd, p);
  // Sends of a rank in flight together, and receives it takes in turn.
  // (as many as the model's send ports; eager sends all: each is done once
  // its overheads are paid)
  const double fan = rd.pattern != Round::Pattern::shift ? 1
                     : rd.bytes < m.eager_bytes()      ? rd.fan
                                                        : std::min(rd.fan, std::max(1, m.send_ports()));
  const double in_turn = rd.pattern == Round::Pattern::shift ? rd.fan : 1;
  // Ranks that cost alike: one message says it all.
  if (!topo && m.ranks() == 0 && !ring) {
    int r0 = -1, q0 = -1;
    for_each_message(rd, p, [&](int r, int q) {
      if (r0 < 0) r0 = r, q0 = q;
    });
    const MessageCost c = m.message(r0, q0, rd.bytes);
    const double red = rd.reduce ? m.reduce_time(q0, rd.reduce) : 0.0;
    // Sends in waves of `fan`: the last starts after the waves before it.
    const double waves = std::ceil(rd.fan / fan);
    return std::max({waves * c.send, (waves - 1) * c.send + c.arrive + c.recv + red,
                     c.arrive + in_turn * (c.recv + red)});
  }
  const bool both = both_ways(rd, p);
  int route[Topology::kMaxRoute];
  if (topo) {
    load.assign(topo->links.size(), 0.0);
    for_each_message(rd, p, [&](int r, int q) {
      if (topo->host_of(r) == topo->host_of(q)) return;
      const int n = topo->route(r, q, route);
      for (int k = 0; k < n; ++k) load[size_t(route[k])] += double(rd.bytes);
    });
  }
  double worst = 0, sum = 0, port = 0;
  for_each_message(rd, p, [&](int r, int q) {
    const MessageCost c = m.message(r, q, rd.bytes);
    const double red = rd.reduce ? m.reduce_time(q, rd.reduce) : 0.0;
    double sent = std::ceil(rd.fan / fan) * c.send, usable = c.arrive + in_turn * c.recv;
    const double alone = c.arrive + c.recv;  // the hop by itself (a ring filling)
    if (topo && c.wire > 0 && rd.bytes > 0) {
      double net = c.wire;
      if (topo->host_of(r) != topo->host_of(q)) {
        const int n = topo->route(r, q, route);
        for (int k = 0; k < n; ++k) {
          const NetLink& l = topo->links[size_t(route[k])];
          if (l.bandwidth > 0) net = std::max(net, load[size_t(route[k])] / l.bandwidth);
        }
        if (both) {
          const double conn = topo->connection_between(r, q);
          if (conn > 0) net = std::max(net, 2 * double(rd.bytes) / conn);  // the directions take turns
        }
      }
      const double overhead = c.send - c.wire;
      sent = in_turn * overhead + net;
      usable = sent + (c.arrive - c.send) + in_turn * c.recv;
    }
    worst = std::max({worst, sent, usable + in_turn * red});
    port = std::max({port, sent, in_turn * (c.recv + red)});  // busy per step, at the slowest rank
    sum += (topo && c.wire > 0 && rd.bytes > 0 ? usable : alone) + red;
  });
  // A pipeline: each step's message needs the last step's, so a segment
  // (a block of a ring) is delayed by every hop it crosses (their times add
  // up), while the steps follow each other at the busiest port's pace.
  if (ring) {  // a ring: a block crosses `times` of its p hops
    const int act = rd.active > 0 ? std::min(rd.active, p) : p;
    return std::max(sum * rd.times / act, (rd.times - 1) * port + worst);
  }
  return worst;
}

bool same(const Round& a, const Round& b) {
  return a.pattern == b.pattern && a.distance == b.distance && a.stride == b.stride && a.active == b.active && a.bytes == b.bytes &&
         a.reduce == b.reduce && a.fan == b.fan && a.times == b.times;
}

}  // namespace

RoundsPrice price_rounds(const MachineModel& m, int p, const std::vector<Round>& rounds) {
  RoundsPrice out;
  struct Priced {
    Round rd;
    double time;
    uint64_t messages;
  };
  std::vector<Priced> seen;
  std::vector<double> load;
  for (const Round& rd : rounds) {
    if (rd.times <= 0) continue;
    const Priced* hit = nullptr;
    for (const Priced& x : seen)
      if (same(x.rd, rd)) hit = &x;
    if (!hit) {
      uint64_t msgs = 0;
      const double t = round_time(m, p, rd, msgs, load);
      seen.push_back({rd, t, msgs});
      hit = &seen.back();
    }
    const bool ring = is_ring(rd, p);  // its steps are in its time
    out.time += ring ? hit->time : rd.times * hit->time;
    out.messages += uint64_t(std::llround(rd.times * double(hit->messages)));
  }
  return out;
}

void add_shift_sweep(std::vector<Round>& out, int p, int first, int last, uint64_t bytes, int fan, int samples) {
  fan = std::max(1, std::min(fan, last - first + 1));
  // Pricing a batch passes over its p·fan messages: at most kSweepMessages
  // in all. Past that a batch is priced as a smaller one standing for
  // several (its latency counted again for each: an overestimate of huge
  // sweeps of tiny messages).
  fan = int(std::min<int64_t>(fan, std::max<int64_t>(1, kSweepMessages / (2 * int64_t(p)))));
  // Batches of `fan` distances, the last one possibly short.
  const int n = (last - first + 1 + fan - 1) / fan;
  if (n <= 0) return;
  samples = int(std::max<int64_t>(2, std::min<int64_t>(samples, kSweepMessages / (int64_t(p) * fan))));
  auto batch = [&](int i, double times) {
    const int d = first + i * fan;
    Round r{Round::Pattern::shift, d, p, bytes, 0, times};
    r.fan = std::min(fan, last - d + 1);
    out.push_back(r);
  };
  if (n <= samples) {
    for (int i = 0; i < n; ++i) batch(i, 1);
    return;
  }
  const double each = double(n) / samples;
  for (int i = 0; i < samples; ++i) batch(int(std::floor((i + 0.5) * each)), each);
}

}  // namespace hetcoll

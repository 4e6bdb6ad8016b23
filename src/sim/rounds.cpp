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
    case Round::Pattern::gather:
      for (int r = 0; r < act; ++r)
        if (r != rd.distance) fn(r, rd.distance);
      return;
    case Round::Pattern::scatter:
      for (int j = 1; j < act; ++j) fn(rd.distance, (rd.distance + j) % act);
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

// How one message of a round costs its two ranks, from the moment the
// sender is ready: its port is busy `sent`; the receiver has the first of
// the `in_turn` messages it takes this round (a fan: one from each of its
// senders) `first` after that and the last `last` after, and is busy `one`
// for each (its overheads and combining).
struct Leg {
  double sent, first, last, recv, red, in_turn;
  double one() const { return recv + red; }
  // When the receiver's port, free at rport, has taken them all (the
  // sender ready at tr).
  double received(double tr, double rport) const {
    return std::max(std::max(rport, tr + first) + in_turn * recv, tr + last + recv);
  }
  // When it has combined them too, its CPU free at cpu (the simulator's
  // CPU: copies and reductions in program order, receives too where the
  // model says so).
  double combined(double tr, double rport, double cpu) const {
    return std::max(std::max(cpu, tr + first + recv) + in_turn * red, received(tr, rport) + red);
  }
  // Both ready at tq.
  double done(double tr, double tq) const { return combined(tr, tq, tq); }
};

// The messages of one round with their costs: fn(r, q, leg).
template <class Fn>
void for_each_leg(const MachineModel& m, int p, const Round& rd, std::vector<double>& load, Fn fn) {
  const TopologyPtr topo = m.topology();
  // Sends of a rank in flight together, and receives it takes in turn
  // (as many as the model's send ports; eager sends all: each is done once
  // its overheads are paid).
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  const bool scatter = rd.pattern == Round::Pattern::scatter;
  // Messages a sender posts, and a receiver takes, this round.
  const double sends = rd.pattern == Round::Pattern::shift ? rd.fan : scatter ? act - 1 : 1;
  const double takes = rd.pattern == Round::Pattern::shift ? rd.fan : rd.pattern == Round::Pattern::gather ? act - 1 : 1;
  const double fan = rd.bytes < m.eager_bytes() ? sends : std::min(sends, double(std::max(1, m.send_ports())));
  const double waves = std::ceil(sends / std::max(1.0, fan));
  // A scatter's root sends in rank order from the root: the k-th message
  // leaves with the k/fan-th wave.
  auto wave_of = [&](int q) { return std::floor(double(((q - rd.distance - 1) % act + act) % act) / std::max(1.0, fan)); };
  auto leg_of = [&](const MessageCost& c, double red, double net, int q) {
    Leg g;
    if (net < 0) {  // at the message's own rate: sends in waves of `fan`, the last after the waves before it
      g.sent = waves * c.send;
      g.first = scatter ? wave_of(q) * c.send + c.arrive : c.arrive;
      g.last = scatter ? g.first : (waves - 1) * c.send + c.arrive;
    } else {  // the bytes through shared links: the overheads follow each other, the bytes share the links
      g.sent = sends * (c.send - c.wire) + net;
      g.first = g.last = g.sent + (c.arrive - c.send);
    }
    g.recv = c.recv;
    g.red = red;
    g.in_turn = takes;
    return g;
  };
  // Ranks that cost alike: one message says it all.
  if (!topo && m.ranks() == 0) {
    bool first = true;
    MessageCost c{};
    double red = 0;
    for_each_message(rd, p, [&](int r, int q) {
      if (first) {
        c = m.message(r, q, rd.bytes);
        red = rd.reduce ? m.reduce_time(q, rd.reduce) : 0.0;
        first = false;
      }
      fn(r, q, leg_of(c, red, -1, q));
    });
    return;
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
  for_each_message(rd, p, [&](int r, int q) {
    const MessageCost c = m.message(r, q, rd.bytes);
    const double red = rd.reduce ? m.reduce_time(q, rd.reduce) : 0.0;
    double net = -1;
    if (topo && c.wire > 0 && rd.bytes > 0) {
      net = c.wire;
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
    }
    fn(r, q, leg_of(c, red, net, q));
  });
}

// The time of a ring's steps (is_ring): a pipeline whose blocks each cross
// `times` of its hops. Each step's message needs the last step's, so a
// block is delayed by every hop it crosses (their times add up), while the
// steps follow each other at the busiest port's pace.
double ring_time(const MachineModel& m, int p, const Round& rd, std::vector<double>& load) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  double worst = 0, sum = 0, port = 0;
  for_each_leg(m, p, rd, load, [&](int, int, const Leg& g) {
    worst = std::max({worst, g.sent, g.done(0, 0)});
    port = std::max({port, g.sent, g.in_turn * g.one()});
    sum += g.last + g.in_turn * g.one();
  });
  // Past the eager size a step's message moves once its receive is posted:
  // the receiver is through with the step before, so steps do not overlap.
  if (m.topology() && m.eager_bytes() > 0 && rd.bytes >= m.eager_bytes()) port = worst;
  return std::max(sum * rd.times / act, (rd.times - 1) * port + worst);
}

bool same(const Round& a, const Round& b) {
  return a.pattern == b.pattern && a.distance == b.distance && a.stride == b.stride && a.active == b.active && a.bytes == b.bytes &&
         a.reduce == b.reduce && a.fan == b.fan && a.times == b.times && a.needs == b.needs;
}

// A link's queue: when it is through with the bytes it has taken, and when
// the latest of them started.
struct LinkQueue {
  double free = 0, last = 0;
};

// A ring's steps one by one, where its hops differ (a topology, ranks that
// cost differently): each step's message leaves once its sender has the
// last step's block and its port is free; each link of its route takes the
// bytes after those queued before them (a rank whose hop in is fast runs
// ahead and its sends wait for the slow link), then they travel the
// latency; the receiver takes and combines them. Steps past
// the first kSweepMessages/p are priced at the pace of the last half of
// those simulated. Returns when the last rank is through; the ranks' clocks
// and the links' (a ring after a ring finds the links still
// busy with its bytes) are moved on.
double ring_steps(const MachineModel& m, int p, const Round& rd, std::vector<double>& data, std::vector<double>& port,
                  std::vector<LinkQueue>& links) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  const TopologyPtr topo = m.topology();
  const bool eager = m.eager_bytes() > 0 && rd.bytes < m.eager_bytes();
  const bool rendezvous = topo && m.eager_bytes() > 0 && !eager;
  struct Hop {
    double overhead, bytes_time, latency, take;
    int links[Topology::kMaxRoute];
    int n;
  };
  std::vector<Hop> hops(static_cast<size_t>(act));
  for (int r = 0; r < act; ++r) {
    const int q = (r + 1) % act;
    const MessageCost c = m.message(r, q, rd.bytes);
    Hop& h = hops[size_t(r)];
    h.overhead = c.send - c.wire;
    h.bytes_time = c.wire;
    h.latency = c.arrive - c.send;
    h.take = c.recv + (rd.reduce ? m.reduce_time(q, rd.reduce) : 0.0);
    h.n = topo ? topo->route(r, q, h.links) : 0;
    for (int k = 0; k < h.n; ++k) {
      const double bw = topo->links[size_t(h.links[k])].bandwidth;
      if (bw > 0) h.bytes_time = std::max(h.bytes_time, double(rd.bytes) / bw);
    }
  }
  if (topo) links.resize(topo->links.size());
  const int total = int(std::llround(rd.times));
  const int steps = int(std::min<int64_t>(total, std::max<int64_t>(8, kSweepMessages / act)));
  std::vector<double> was(static_cast<size_t>(act));
  double half = 0, last = 0;
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < act; ++r) was[size_t(r)] = data[size_t(r)];
    for (int r = 0; r < act; ++r) {
      const Hop& h = hops[size_t(r)];
      const int q = (r + 1) % act;
      const double leave = std::max(port[size_t(r)], was[size_t(r)]);
      double start = leave + h.overhead;
      if (rendezvous) start = std::max(start, was[size_t(q)]);  // once the receive is posted
      // Each link takes the bytes at its bandwidth after the bytes queued
      // before them (links apart: the fair sharing of the simulator in
      // total, not a circuit through all of them at once). Messages are
      // met in step order, not in time: one that starts before the last
      // the link has taken went before it (its bytes delay what comes
      // after, not itself).
      double through = start + h.bytes_time;
      for (int k = 0; k < h.n; ++k) {
        const double bw = topo->links[size_t(h.links[k])].bandwidth;
        if (bw <= 0) continue;
        LinkQueue& lq = links[size_t(h.links[k])];
        const double busy = double(rd.bytes) / bw;
        if (start >= lq.last) {
          lq.free = std::max(start, lq.free) + busy;
          lq.last = start;
          through = std::max(through, lq.free);
        } else {
          lq.free += busy;
          through = std::max(through, start + busy);
        }
      }
      port[size_t(r)] = eager ? leave + h.overhead : through;
      data[size_t(q)] = std::max(data[size_t(q)], std::max(was[size_t(q)], through + h.latency) + h.take);
    }
    const double now = *std::max_element(data.begin(), data.begin() + act);
    if (s + 1 == steps / 2) half = now;
    last = now;
  }
  if (total > steps) {  // the rest at the pace of the last half of the steps simulated
    const double pace = (last - half) / double(steps - steps / 2);
    last += double(total - steps) * pace;
    for (int r = 0; r < act; ++r) data[size_t(r)] = port[size_t(r)] = last;
  }
  double end = 0;
  for (int r = 0; r < act; ++r) end = std::max({end, data[size_t(r)], port[size_t(r)]});
  return end;
}

// Does every rank take part in the round alike (sending and receiving one
// message of each of its fan)? Then ranks that start together end together
// on a model whose ranks cost alike.
bool every_rank_alike(const Round& rd, int p) {
  const int act = rd.active > 0 ? std::min(rd.active, p) : p;
  if (act != p) return false;
  if (rd.pattern == Round::Pattern::shift) return p > 1;
  if (rd.pattern == Round::Pattern::xor_) return rd.distance > 0 && (p & (p - 1)) == 0 && rd.distance < p;
  return false;
}

}  // namespace

// Each rank has a clock: when it is ready for its next round. A message
// r → q of a round leaves when r is ready; q takes it once it has arrived
// and q is ready. So a rank waits only for the partners it hears from, as
// in the simulator, and ranks a round leaves out (the extra ranks of a
// fold, the ranks past a prefix) go on. Rounds that stand for `times`
// alike (a sampled sweep) cost each rank its own share of a round again
// for each repetition after the first; a ring is priced as its pipeline,
// from the moment the last rank is ready. A round whose sends carry older
// data (Round::needs) sends once that data is in and the rank's last send
// is out, without waiting for the last round's receive.
RoundsPrice price_rounds(const MachineModel& m, int p, const std::vector<Round>& rounds) {
  RoundsPrice out;
  if (p <= 0) return out;
  const bool alike_ranks = !m.topology() && m.ranks() == 0;
  // Each rank's two clocks: when what it last received is in (and
  // combined), and when its last send is out.
  std::vector<double> data(size_t(p), 0.0), port(size_t(p), 0.0), next_data, next_port, once_send, once_take, start;
  // And when its receive port is free (its CPU's clock, `data`, where
  // receives use the CPU).
  const bool recv_on_cpu = m.receive_uses_cpu();
  std::vector<double> rport(recv_on_cpu ? 0 : size_t(p), 0.0), next_rport;
  std::vector<double>& receives = recv_on_cpu ? data : rport;
  // Where a round's sends carry older data: the data clocks after every
  // round with messages (before the first: the rank's own data, at its
  // clock then).
  const bool early = std::any_of(rounds.begin(), rounds.end(), [](const Round& rd) { return rd.needs != 1; });
  std::vector<std::vector<double>> after;  // [message round][rank]
  std::vector<double> own;                 // data clocks at the first round with messages
  bool uniform = true;                     // every clock of every rank reads the same
  std::vector<double> load;
  std::vector<LinkQueue> links;  // the bytes of the rings so far through each link
  struct Priced {
    Round rd;
    double time;
  };
  std::vector<Priced> seen;  // rounds priced from a common start where ranks cost alike
  auto all_at = [&](int act, double t) {
    for (int r = 0; r < act; ++r) data[size_t(r)] = port[size_t(r)] = receives[size_t(r)] = t;
  };
  for (const Round& rd : rounds) {
    if (rd.times <= 0) continue;
    if (rd.pattern == Round::Pattern::local) {  // copies, once what they copy is in
      if (!rd.bytes) continue;
      for (int r = 0; r < p; ++r) data[size_t(r)] += rd.times * m.copy_time(alike_ranks ? 0 : r, rd.bytes);
      uniform = false;
      continue;
    }
    uint64_t msgs = 0;
    for_each_message(rd, p, [&](int, int) { ++msgs; });
    out.messages += uint64_t(std::llround(rd.times * double(msgs)));
    if (!msgs) continue;
    if (early && own.empty()) own = data;
    if (is_ring(rd, p)) {
      const int act = rd.active > 0 ? std::min(rd.active, p) : p;
      if (alike_ranks) {  // a pipeline of hops alike, from the moment the last rank is ready
        double begin = 0;
        for (int r = 0; r < p; ++r) begin = std::max({begin, data[size_t(r)], port[size_t(r)]});
        all_at(act, begin + ring_time(m, p, rd, load));
        uniform = act == p;
      } else {
        ring_steps(m, p, rd, data, port, links);
        if (!recv_on_cpu)
          for (int r = 0; r < act; ++r) rport[size_t(r)] = std::max(rport[size_t(r)], data[size_t(r)]);
        uniform = false;
      }
      if (early) after.push_back(data);
      continue;
    }
    if (alike_ranks && uniform && rd.needs == 1 && every_rank_alike(rd, p)) {  // one message says it all, once for rounds alike
      const Priced* hit = nullptr;
      for (const Priced& x : seen)
        if (same(x.rd, rd)) hit = &x;
      if (!hit) {
        double t = 0;
        bool first = true;
        for_each_leg(m, p, rd, load, [&](int, int, const Leg& g) {
          if (first) t = std::max(g.sent, g.done(0, 0)), first = false;
        });
        seen.push_back({rd, t});
        hit = &seen.back();
      }
      all_at(p, data[0] + rd.times * hit->time);
      if (early) after.push_back(data);
      continue;
    }
    // When each rank's sends leave: its last send out and the data they carry in.
    start.resize(size_t(p));
    const int back = int(after.size()) - rd.needs;  // the round whose data they carry (needs > 1)
    for (int r = 0; r < p; ++r) {
      const double carried = rd.needs == 1 ? data[size_t(r)]
                             : rd.needs == 0 || back < 0 ? own[size_t(r)]
                                                         : after[size_t(back)][size_t(r)];
      start[size_t(r)] = std::max(port[size_t(r)], carried);
    }
    next_data = data;
    next_port = port;
    next_rport = receives;
    const bool repeated = rd.times != 1;
    if (repeated) once_send.assign(size_t(p), 0.0), once_take.assign(size_t(p), 0.0);
    // Past the eager size a message moves once its receive is posted: when
    // the receiver is through with the last round (a rendezvous).
    const bool rendezvous = m.topology() && m.eager_bytes() > 0 && rd.bytes >= m.eager_bytes();
    for_each_leg(m, p, rd, load, [&](int r, int q, const Leg& g) {
      const double tr = rendezvous ? std::max(start[size_t(r)], data[size_t(q)]) : start[size_t(r)];
      next_port[size_t(r)] = std::max(next_port[size_t(r)], tr + g.sent);
      next_rport[size_t(q)] = std::max(next_rport[size_t(q)], g.received(tr, receives[size_t(q)]));
      next_data[size_t(q)] = std::max(next_data[size_t(q)], g.combined(tr, receives[size_t(q)], data[size_t(q)]));
      if (repeated) {  // each rank's own share of a round, from a common start
        once_send[size_t(r)] = std::max(once_send[size_t(r)], g.sent);
        once_take[size_t(q)] = std::max(once_take[size_t(q)], g.done(0, 0));
      }
    });
    if (repeated)
      for (int r = 0; r < p; ++r) {  // the repetitions after the first, each rank at its own pace
        const double each = std::max(once_send[size_t(r)], once_take[size_t(r)]);
        next_port[size_t(r)] += (rd.times - 1) * each;
        next_data[size_t(r)] += (rd.times - 1) * each;
        if (!recv_on_cpu) next_rport[size_t(r)] += (rd.times - 1) * each;
      }
    data.swap(next_data);
    port.swap(next_port);
    if (!recv_on_cpu) rport.swap(next_rport);
    uniform = false;
    if (early) after.push_back(data);
  }
  for (int r = 0; r < p; ++r) out.time = std::max({out.time, data[size_t(r)], port[size_t(r)]});
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

#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "schedule/validator.hpp"
#include "sim/radix_heap.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

constexpr int64_t kNil = -1;
enum Resource { kSendPort = 0, kRecvPort = 1, kCpu = 2 };

// Event payload: gid << 2 | kind.
enum EventKind : uint64_t {
  kComplete = 0,   // op gid completes
  kArrival = 1,    // the message for recv gid reached the receiver
  kFlowStart = 2,  // send gid's bytes start through the network (topology)
  kFlowEnd = 3,    // send gid's bytes may be through (stale if rescheduled)
};

// A message's bytes crossing shared links (models with a topology).
struct Flow {
  uint64_t gid = 0;        // its send
  double remaining = 0;    // bytes
  double cap = 0;          // bytes/s: the message's own rate
  double rate = 0;         // bytes/s now
  double last = 0;         // when remaining was last brought up to date
  double finish = 0;       // when its bytes will be through at the present rate
  double queued = INFINITY;  // the earliest of its kFlowEnd events still to come
  double latency = 0;      // from the last byte out to the message at the receiver
  double weight = 1;       // its share of a link against others' (Topology::latency_sharing)
  int links[Topology::kMaxRoute + 1] = {};  // the route, then its pair's connection
  int nlinks = 0;
  uint32_t mark = 0;       // component search
  bool active = false;
  bool eager = false;      // its send completed when the bytes started
  bool parked = false;     // waiting for its receive to be posted (rendezvous)
  int conn = -1;           // its pair's connection where the pair takes turns (a link id)
  uint8_t dir = 0;         // 0: from the lower rank of the pair
};

// A connection whose two directions take turns: messages of one direction
// move while none of the other is moving or waiting.
struct Turns {
  uint32_t moving[2] = {0, 0};
  std::vector<uint32_t> waiting[2];  // flow ids, in the order they became ready
};

class Sim {
 public:
  Sim(const Schedule& s, const MachineModel& m, const SimOptions& opt)
      : s_(s),
        m_(m),
        opt_(opt),
        N_(s.total_ops()),
        p_(size_t(s.nranks())),
        recv_on_cpu_(m.receive_uses_cpu()),
        ports_(uint32_t(std::max(1, m.send_ports()))),
        topo_holder_(m.topology()),
        topo_(topo_holder_.get()),
        eager_(m.eager_bytes()),
        sharing_(topo_ ? topo_->latency_sharing : 0),
        limit_(opt.work_limit ? opt.work_limit : UINT64_MAX) {}

  SimResult run() {
    Matching match = match_messages(s_, 4);
    if (!match.errors.empty()) throw ScheduleError(cat("cannot simulate: ", match.errors.front()));
    partner_ = std::move(match.partner);
    deps_ = build_dependents(s_);
    if (!opt_.rank_map.empty() && opt_.rank_map.size() != p_)
      throw InputError(cat("rank map has ", opt_.rank_map.size(), " entries for a group of ", p_));

    rank_of_.resize(N_);
    remaining_.resize(N_);
    start_.assign(N_, -1);
    end_.assign(N_, -1);
    next_.assign(N_, kNil);
    recv_cost_.assign(N_, 0);
    flags_.assign(N_, 0);
    if (opt_.critical_path) {
      why_.assign(N_, kNone);
      why_from_.assign(N_, 0);
    }
    free_at_.assign(p_ * 3, 0);
    head_.assign(p_ * 3, kNil);
    tail_.assign(p_ * 3, kNil);
    send_at_.assign(p_ + 1, 0);
    next_send_.assign(p_, 0);
    sending_.assign(p_, 0);
    for (size_t r = 0; r < p_; ++r) {
      for (size_t i = 0; i < s_.num_ops(int(r)); ++i) {
        uint64_t g = s_.first_op(int(r)) + i;
        rank_of_[g] = uint32_t(r);
        remaining_[g] = s_.op_at(g).dep_count;
        if (s_.op_at(g).kind == OpKind::send) sends_.push_back(g);
      }
      send_at_[r + 1] = sends_.size();
      next_send_[r] = send_at_[r];
    }
    if (topo_) {
      if (topo_->ranks() > 0) {
        int need = 0;
        for (size_t r = 0; r < p_; ++r) need = std::max(need, phys(uint32_t(r)) + 1);
        if (need > topo_->ranks())
          throw InputError(cat("the topology places ", topo_->ranks(), " ranks but the schedule needs ", need));
      }
      flow_of_.assign(N_, -1);
      inject_free_.assign(p_, 0.0);
      link_bw_.clear();
      for (const NetLink& l : topo_->links) link_bw_.push_back(l.bandwidth);
      link_flows_.assign(link_bw_.size(), {});
      link_mark_.assign(link_bw_.size(), 0);
    }
    for (uint64_t g = 0; g < N_; ++g)
      if (remaining_[g] == 0) pending_.push_back(g);
    flush(0.0);

    // One instant at a time: apply every event of time t, then post the ops
    // that became ready in program order (so ties never depend on the order
    // of events), repeating while zero-duration ops finish at t.
    uint64_t done = 0;
    while (!events_.empty()) {
      auto [t, ev] = events_.pop();
      for (;;) {
        if (++work_ > limit_) {
          t_work_steps += work_;
          throw TooLarge(cat("simulating ", N_, " ops takes more than ", limit_, " steps"));
        }
        const uint64_t g = ev >> 2;
        switch (EventKind(ev & 3)) {
          case kArrival:
            flags_[g] |= kArrived;
            note(g, kArrive, partner_[g]);
            pending_.push_back(g);
            break;
          case kComplete:
            ++done;
            complete(g, t);
            break;
          case kFlowStart: flow_start(g, t); break;
          case kFlowEnd: flow_end(g, t); break;
        }
        if (!events_.has_now()) {
          // Rates change once per instant, after every flow of it started
          // or ended; ends due now come back through has_now.
          if (!dirty_flows_.empty() || !dirty_links_.empty()) share(t);
          if (!events_.has_now()) break;
        }
        ev = events_.pop().second;
      }
      flush(t);
    }
    if (done != N_) {
      for (uint64_t g = 0; g < N_; ++g)
        if (end_[g] < 0) {
          const Op& o = s_.op_at(g);
          throw ScheduleError(cat("cannot simulate: rank ", rank_of_[g], " op ", g - s_.first_op(int(rank_of_[g])), " (",
                                  op_kind_name(o.kind), ") never completes; ", N_ - done, " ops stuck"));
        }
    }

    SimResult res;
    res.unit = m_.unit();
    res.work = work_;
    t_work_steps += work_;
    res.rank_finish.assign(p_, 0.0);
    for (uint64_t g = 0; g < N_; ++g) {
      double& f = res.rank_finish[rank_of_[g]];
      f = std::max(f, end_[g]);
    }
    for (double f : res.rank_finish) res.makespan = std::max(res.makespan, f);
    if (opt_.critical_path) res.path = critical_path();
    if (opt_.timeline) {
      res.start = std::move(start_);
      res.end = std::move(end_);
    }
    return res;
  }

 private:
  static constexpr uint8_t kPosted = 1, kArrived = 2, kOffered = 4;
  // Why an op started when it did: the last event before its start.
  enum Why : uint8_t { kNone = 0, kDep = 1, kResource = 2, kArrive = 3 };

  void note(uint64_t g, Why why, uint64_t from) {
    if (!opt_.critical_path) return;
    why_[g] = why;
    why_from_[g] = from;
  }

  // Latency/bandwidth split of a message cost: the part at zero bytes, the rest.
  void split_message(const Op& o, uint32_t r, bool busy_of_send, bool arrive, CostSplit& acc) {
    MessageCost c0 = m_.message(phys(r), phys(uint32_t(o.peer)), 0), cm = m_.message(phys(r), phys(uint32_t(o.peer)), o.len);
    double a = arrive ? c0.arrive : busy_of_send ? c0.send : c0.recv;
    double b = arrive ? cm.arrive : busy_of_send ? cm.send : cm.recv;
    acc.latency += a;
    acc.bandwidth += b - a;
  }

  void add_busy(uint64_t g, CostSplit& acc) {
    const Op& o = s_.op_at(g);
    uint32_t r = rank_of_[g];
    switch (o.kind) {
      case OpKind::send: split_message(o, r, true, false, acc); ++acc.messages; break;
      case OpKind::recv: {
        const Op& so = s_.op_at(partner_[g]);
        split_message(so, rank_of_[partner_[g]], false, false, acc);
        break;
      }
      case OpKind::reduce: acc.compute += m_.reduce_time(phys(r), o.len); break;
      case OpKind::copy: acc.compute += m_.copy_time(phys(r), o.len); break;
    }
  }

  // Walks back from the op that ends last, through the event that let each
  // op start, adding the costs on the way.
  CostSplit critical_path() {
    CostSplit acc;
    if (N_ == 0) return acc;
    uint64_t g = 0;
    for (uint64_t x = 1; x < N_; ++x)
      if (end_[x] > end_[g]) g = x;
    add_busy(g, acc);
    while (why_[g] != kNone) {
      uint64_t from = why_from_[g];
      if (why_[g] == kArrive) {  // the receive started when the message arrived
        split_message(s_.op_at(from), rank_of_[from], false, true, acc);
        ++acc.messages;
      } else {
        add_busy(from, acc);
      }
      g = from;
    }
    return acc;
  }

  int phys(uint32_t r) const { return opt_.rank_map.empty() ? int(r) : opt_.rank_map[r]; }

  void push(double t, uint64_t g, bool arrive) { events_.push(t, g << 2 | (arrive ? kArrival : kComplete)); }
  void push_kind(double t, uint64_t g, EventKind k) { events_.push(t, g << 2 | k); }

  // ---- the network (models with a topology)

  // Send g's bytes leave: a flow over the route's links, at the message's
  // own rate or its fair share of a link, whichever is less.
  void flow_start(uint64_t g, double t) {
    Flow& f = flows_[size_t(flow_of_[g])];
    const Op& o = s_.op_at(g);
    // Beyond the eager size a message moves once its receive is posted (a
    // rendezvous; SimGrid matches before it transfers).
    if (!f.eager && eager_ > 0 && !(flags_[partner_[g]] & kPosted)) {
      f.parked = true;
      return;
    }
    f.parked = false;
    f.nlinks = topo_->route(phys(rank_of_[g]), phys(uint32_t(o.peer)), f.links);
    // Where the pair's two directions take turns (topology.hpp: connection),
    // a rendezvous also crosses its pair's connection, and waits while the
    // other direction has messages moving or waiting: the receiver's
    // go-ahead travels behind them.
    f.conn = -1;
    if (!f.eager) {
      const double c = topo_->connection_between(phys(rank_of_[g]), phys(uint32_t(o.peer)));
      if (c > 0) {
        const uint32_t link = connection_link(rank_of_[g], uint32_t(o.peer), c);
        f.links[f.nlinks++] = int(link);
        f.conn = int(link);
        f.dir = rank_of_[g] < uint32_t(o.peer) ? 0 : 1;
        Turns& tn = turns_[link];
        if (tn.moving[1 - f.dir] > 0 || !tn.waiting[1 - f.dir].empty()) {
          tn.waiting[f.dir].push_back(uint32_t(flow_of_[g]));
          return;
        }
        ++tn.moving[f.dir];
      }
    }
    activate(uint32_t(flow_of_[g]), t);
  }

  // Flow id's bytes start through its links now.
  void activate(uint32_t id, double t) {
    Flow& f = flows_[id];
    const uint64_t g = f.gid;
    f.last = t;
    if (f.nlinks == 0) {  // nothing shared: the message's own rate
      f.rate = f.cap;
      f.finish = t + f.remaining / f.cap;
      f.queued = f.finish;
      push_kind(f.finish, g, kFlowEnd);
      return;
    }
    f.active = true;
    for (int k = 0; k < f.nlinks; ++k) link_flows_[size_t(f.links[k])].push_back(id);
    dirty_flows_.push_back(id);
  }

  // The link of the connection between ranks a and b (both directions),
  // made the first time a message uses it.
  uint32_t connection_link(uint32_t a, uint32_t b, double rate) {
    const uint64_t key = uint64_t(std::min(a, b)) * p_ + std::max(a, b);
    auto it = connection_of_.find(key);
    if (it != connection_of_.end()) return it->second;
    const uint32_t id = uint32_t(link_bw_.size());
    link_bw_.push_back(rate);
    link_flows_.emplace_back();
    link_mark_.push_back(0);
    connection_of_.emplace(key, id);
    return id;
  }

  void flow_end(uint64_t g, double t) {
    const uint32_t id = uint32_t(flow_of_[g]);
    Flow& f = flows_[id];
    // An event of a flow that is gone (the slot may serve another send now),
    // or one later than the flow's earliest: stale.
    if (f.gid != g || t != f.queued || (!f.eager && end_[g] >= 0)) return;
    f.queued = INFINITY;
    if (f.finish > t) {  // slowed down since this event was queued: its end is later
      f.queued = f.finish;
      push_kind(f.finish, g, kFlowEnd);
      return;
    }
    if (f.active) {
      f.active = false;
      for (int k = 0; k < f.nlinks; ++k) {
        auto& v = link_flows_[size_t(f.links[k])];
        for (size_t i = 0; i < v.size(); ++i)
          if (v[i] == id) {
            v[i] = v.back();
            v.pop_back();
            break;
          }
        dirty_links_.push_back(uint32_t(f.links[k]));
      }
    }
    // The last of its direction through: the other direction's turn.
    if (f.conn >= 0) {
      Turns& tn = turns_[uint32_t(f.conn)];
      const int other = 1 - f.dir;
      f.conn = -1;
      if (--tn.moving[f.dir] == 0 && !tn.waiting[other].empty()) {
        std::vector<uint32_t> next;
        next.swap(tn.waiting[other]);
        tn.moving[other] = uint32_t(next.size());
        for (uint32_t w : next) activate(w, t);
      }
    }
    if (!f.eager) {
      // A rendezvous send is done when its bytes have arrived (SimGrid's,
      // and an MPI library's once the receiver has them); without an eager
      // protocol, once they are out.
      const double done = eager_ > 0 ? t + f.latency : t;
      end_[g] = done;
      push(done, g, false);
    }
    f.gid = UINT64_MAX;
    push(t + f.latency, partner_[g], true);
    free_flows_.push_back(id);
  }

  // Max-min fair rates for the flows connected (through shared links) to
  // those that started or to links that lost a flow, by progressive
  // filling: raise every rate together, freezing a flow when it reaches its
  // own cap or a link it crosses is full.
  void share(double t) {
    ++epoch_;
    comp_flows_.clear();
    comp_links_.clear();
    auto visit_link = [&](uint32_t l) {
      if (link_mark_[l] == epoch_) return;
      link_mark_[l] = epoch_;
      comp_links_.push_back(l);
    };
    auto visit_flow = [&](uint32_t id) {
      Flow& f = flows_[id];
      if (!f.active || f.mark == epoch_) return;
      f.mark = epoch_;
      comp_flows_.push_back(id);
    };
    for (uint32_t id : dirty_flows_) visit_flow(id);
    for (uint32_t l : dirty_links_) visit_link(l);
    dirty_flows_.clear();
    dirty_links_.clear();
    for (size_t fi = 0, li = 0; fi < comp_flows_.size() || li < comp_links_.size();) {
      if (fi < comp_flows_.size()) {
        const Flow& f = flows_[comp_flows_[fi++]];
        for (int k = 0; k < f.nlinks; ++k) visit_link(uint32_t(f.links[k]));
      } else {
        for (uint32_t id : link_flows_[comp_links_[li++]]) visit_flow(id);
      }
    }
    work_ += comp_flows_.size() + comp_links_.size();
    if (comp_flows_.empty()) return;
    for (uint32_t id : comp_flows_) {
      Flow& f = flows_[id];
      f.remaining = std::max(0.0, f.remaining - f.rate * (t - f.last));
      f.last = t;
      f.rate = -1;  // not frozen
    }
    link_left_.resize(link_bw_.size());
    link_count_.resize(link_bw_.size());
    link_weight_.resize(link_bw_.size());
    for (uint32_t l : comp_links_) {
      link_left_[l] = link_bw_[l];
      link_count_[l] = uint32_t(link_flows_[l].size());
      double w = 0;
      for (uint32_t id : link_flows_[l]) w += flows_[id].weight;
      link_weight_[l] = w;
    }
    size_t unfrozen = comp_flows_.size();
    while (unfrozen > 0) {
      work_ += comp_links_.size() + 2 * comp_flows_.size();
      // The level: bytes/s per unit of weight (a flow moves weight × level).
      double level = INFINITY;
      for (uint32_t l : comp_links_)
        if (link_count_[l] > 0) level = std::min(level, std::max(0.0, link_left_[l]) / link_weight_[l]);
      for (uint32_t id : comp_flows_)
        if (flows_[id].rate < 0) level = std::min(level, flows_[id].cap / flows_[id].weight);
      const double tol = level * (1 + 1e-12);
      size_t frozen_now = 0;
      for (uint32_t id : comp_flows_) {
        Flow& f = flows_[id];
        if (f.rate >= 0) continue;
        bool full = f.cap / f.weight <= tol;
        for (int k = 0; k < f.nlinks && !full; ++k) {
          const uint32_t l = uint32_t(f.links[k]);
          full = std::max(0.0, link_left_[l]) / link_weight_[l] <= tol;
        }
        if (!full) continue;
        f.rate = std::min(f.cap, level * f.weight);
        ++frozen_now;
      }
      for (uint32_t id : comp_flows_) {  // take the frozen flows off their links
        Flow& f = flows_[id];
        if (f.rate < 0 || f.mark != epoch_) continue;
        f.mark = epoch_ - 1;  // counted
        for (int k = 0; k < f.nlinks; ++k) {
          const uint32_t l = uint32_t(f.links[k]);
          link_left_[l] -= f.rate;
          --link_count_[l];
          link_weight_[l] -= f.weight;
        }
      }
      if (frozen_now == 0) break;  // cannot happen: the minimum freezes one
      unfrozen -= frozen_now;
    }
    for (uint32_t id : comp_flows_) {
      Flow& f = flows_[id];
      const double rate = std::max(f.rate, 1e-300);
      const double finish = t + f.remaining / rate;
      f.rate = rate;
      f.finish = finish;
      // Only an earlier end needs an event: a later one is found when the
      // pending event comes (flow_end queues it again).
      if (finish < f.queued) {
        f.queued = finish;
        push_kind(finish, f.gid, kFlowEnd);
      }
    }
  }

  // Offers, in program order, every pending op that can now use its
  // resource: ops whose dependencies are done, receives whose message is in.
  // Where an op queues: receives on the CPU when the model says so.
  Resource resource_of(OpKind k) const {
    if (k == OpKind::send) return kSendPort;
    if (k == OpKind::recv) return recv_on_cpu_ ? kCpu : kRecvPort;
    return kCpu;
  }

  void flush(double t) {
    if (pending_.empty()) return;
    work_ += pending_.size();
    std::sort(pending_.begin(), pending_.end());
    for (size_t i = 0; i < pending_.size(); ++i) {
      const uint64_t g = pending_[i];
      if (flags_[g] & kOffered) continue;
      const Op& o = s_.op_at(g);
      if (remaining_[g] == 0 && !(flags_[g] & kPosted)) {
        flags_[g] |= kPosted;
        // A rendezvous message waiting for this receive moves now.
        if (topo_ && o.kind == OpKind::recv) {
          const uint64_t sg = partner_[g];
          if (flow_of_[sg] >= 0 && flows_[size_t(flow_of_[sg])].parked && flows_[size_t(flow_of_[sg])].gid == sg)
            flow_start(sg, t);
        }
      }
      if (!(flags_[g] & kPosted)) continue;
      if (o.kind == OpKind::recv && !(flags_[g] & kArrived)) continue;
      flags_[g] |= kOffered;
      offer(g, resource_of(o.kind), t);
    }
    pending_.clear();
    if (!dirty_flows_.empty() || !dirty_links_.empty()) share(t);
  }

  // Start g on resource res now if it is idle and nobody waits, else queue.
  // Sends are the exception: they leave in program order (start_sends).
  void offer(uint64_t g, Resource res, double t) {
    if (res == kSendPort) {
      start_sends(rank_of_[g], t, kNil);
      return;
    }
    size_t q = size_t(rank_of_[g]) * 3 + res;
    if (head_[q] == kNil && free_at_[q] <= t) {
      start(g, res, t);
      return;
    }
    if (tail_[q] == kNil) head_[q] = int64_t(g);
    else next_[size_t(tail_[q])] = int64_t(g);
    tail_[q] = int64_t(g);
  }

  void start(uint64_t g, Resource res, double t) {
    const Op& o = s_.op_at(g);
    uint32_t r = rank_of_[g];
    double busy;
    switch (o.kind) {
      case OpKind::send: {
        MessageCost c = m_.message(phys(r), phys(uint32_t(o.peer)), o.len);
        busy = c.send;
        uint64_t rg = partner_[g];
        recv_cost_[rg] = c.recv;
        if (topo_ && c.wire > 0 && o.len > 0) {
          // The overheads, then the bytes through the network (the port
          // stays busy until they are out), then the latency.
          uint32_t id;
          if (free_flows_.empty()) {
            id = uint32_t(flows_.size());
            flows_.emplace_back();
          } else {
            id = free_flows_.back();
            free_flows_.pop_back();
          }
          Flow& f = flows_[id];
          f = Flow{};
          f.gid = g;
          f.remaining = double(o.len);
          f.cap = double(o.len) / c.wire;
          f.latency = c.arrive - c.send;
          // Flows of long latency get less of a shared link (SimGrid's CM02
          // shares in proportion to 1/latency, TCP by round trip): the
          // weight latency^-a, the probe's exponent a (0: equal shares).
          if (sharing_ > 0) f.weight = std::pow(std::max(f.latency, 1e-9) / 1e-3, -sharing_);
          f.mark = 0;
          f.eager = o.len < eager_;
          flow_of_[g] = int64_t(id);
          // The overheads are the sender's CPU: one send's after another's,
          // even with several in flight (their bytes overlap, not their
          // overheads).
          const double overhead = c.send - c.wire;
          const double t0 = std::max(t, inject_free_[r]);
          inject_free_[r] = t0 + overhead;
          start_[g] = t0;
          end_[g] = -1;
          push_kind(t0 + overhead, g, kFlowStart);
          if (f.eager) {  // done once the overheads are paid
            end_[g] = t0 + overhead;
            push(t0 + overhead, g, false);
            return;
          }
          return;
        }
        push(t + c.arrive, rg, true);
        break;
      }
      case OpKind::recv: busy = recv_cost_[g]; break;
      case OpKind::reduce: busy = m_.reduce_time(phys(r), o.len); break;
      case OpKind::copy: busy = m_.copy_time(phys(r), o.len); break;
      default: busy = 0;
    }
    start_[g] = t;
    end_[g] = t + busy;
    free_at_[size_t(r) * 3 + res] = t + busy;
    push(t + busy, g, false);
  }

  // The send port: a rank's sends start in program order, at most ports_ at
  // a time; the next one starts when it is posted, every earlier send has
  // started and a port is free (exec/executor.hpp does the same). `freed`:
  // the send whose end freed the port, if that is why sends start now.
  void start_sends(uint32_t r, double t, int64_t freed) {
    for (uint64_t& k = next_send_[r]; k < send_at_[size_t(r) + 1] && sending_[r] < ports_; ++k) {
      const uint64_t g = sends_[k];
      if (!(flags_[g] & kPosted)) break;
      if (s_.op_at(g).serial && sending_[r] > 0) break;  // one at a time
      if (opt_.critical_path && freed != kNil) note(g, kResource, uint64_t(freed));
      ++sending_[r];
      start(g, kSendPort, t);
    }
  }

  void complete(uint64_t g, double t) {
    const Op& o = s_.op_at(g);
    Resource res = resource_of(o.kind);
    if (res == kSendPort) {
      --sending_[rank_of_[g]];
      start_sends(rank_of_[g], t, int64_t(g));
      release_dependents(g);
      return;
    }
    size_t q = size_t(rank_of_[g]) * 3 + res;
    if (head_[q] != kNil && free_at_[q] <= t) {
      uint64_t nxt = uint64_t(head_[q]);
      head_[q] = next_[nxt];
      if (head_[q] == kNil) tail_[q] = kNil;
      note(nxt, kResource, g);
      start(nxt, res, t);
    }
    release_dependents(g);
  }

  void release_dependents(uint64_t g) {
    for (uint64_t k = deps_.begin[g]; k < deps_.begin[g + 1]; ++k) {
      uint64_t d = deps_.list[k];
      if (--remaining_[d] == 0) {
        note(d, kDep, g);
        pending_.push_back(d);
      }
    }
  }

  const Schedule& s_;
  const MachineModel& m_;
  const SimOptions& opt_;
  const uint64_t N_;
  const size_t p_;
  const bool recv_on_cpu_;
  const uint32_t ports_;  // sends in flight per rank
  const TopologyPtr topo_holder_;
  const Topology* topo_;  // nullptr: messages never share links
  const uint64_t eager_;  // sends up to this many bytes complete before their bytes are out
  const double sharing_;  // Topology::latency_sharing
  const uint64_t limit_;  // steps of work allowed (SimOptions::work_limit)
  uint64_t work_ = 0;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;
  std::vector<int64_t> flow_of_;  // per op: its flow (sends on a topology)
  std::vector<double> inject_free_;  // per rank: when its CPU can pay the next send's overheads
  std::vector<double> link_bw_;  // per link: the topology's, then the connections made
  std::unordered_map<uint64_t, uint32_t> connection_of_;  // pair of ranks -> its connection's link
  std::unordered_map<uint32_t, Turns> turns_;             // connection link -> whose turn
  std::vector<std::vector<uint32_t>> link_flows_;  // active flows per link
  std::vector<uint32_t> link_mark_, link_count_;
  std::vector<double> link_left_, link_weight_;
  std::vector<uint32_t> dirty_flows_, dirty_links_, comp_flows_, comp_links_;
  uint32_t epoch_ = 1;
  std::vector<uint64_t> sends_, send_at_, next_send_;  // CSR: each rank's sends in program order
  std::vector<uint32_t> sending_;
  std::vector<uint64_t> partner_;
  Dependents deps_;
  std::vector<uint32_t> rank_of_, remaining_;
  std::vector<double> start_, end_, recv_cost_;
  std::vector<int64_t> next_;
  std::vector<uint8_t> flags_;
  std::vector<double> free_at_;
  std::vector<int64_t> head_, tail_;
  RadixHeap events_;
  std::vector<uint64_t> pending_;
  std::vector<uint8_t> why_;
  std::vector<uint64_t> why_from_;
};

}  // namespace

SimResult simulate(const Schedule& s, const MachineModel& model, const SimOptions& opt_in) {
  // A model of hosts without a map: the layout of the job that measured it.
  SimOptions mapped;
  const bool fill = model.maps_hosts() && opt_in.rank_map.empty();
  if (fill) {
    mapped = opt_in;
    mapped.rank_map = model.default_rank_map(s.nranks());
  }
  const SimOptions& opt = fill ? mapped : opt_in;
  if (model.ranks() > 0) {
    int need = 0;
    if (opt.rank_map.empty()) need = s.nranks();
    else for (int r : opt.rank_map) need = std::max(need, r + 1);
    if (need > model.ranks())
      throw InputError(cat("the model describes ", model.ranks(), " ranks but the schedule needs ", need));
  }
  return Sim(s, model, opt).run();
}

}  // namespace hetcoll

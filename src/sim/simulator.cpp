#include "sim/simulator.hpp"

#include <algorithm>

#include "schedule/validator.hpp"
#include "sim/radix_heap.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

constexpr int64_t kNil = -1;
enum Resource { kSendPort = 0, kRecvPort = 1, kCpu = 2 };

// Event payload: gid << 1 | 1 = the message for recv gid reached the
// receiver; gid << 1 = op gid completes.
constexpr uint64_t kArriveBit = 1;

class Sim {
 public:
  Sim(const Schedule& s, const MachineModel& m, const SimOptions& opt)
      : s_(s),
        m_(m),
        opt_(opt),
        N_(s.total_ops()),
        p_(size_t(s.nranks())),
        recv_on_cpu_(m.receive_uses_cpu()),
        ports_(uint32_t(std::max(1, m.send_ports()))) {}

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
        uint64_t g = ev >> 1;
        if (ev & kArriveBit) {
          flags_[g] |= kArrived;
          note(g, kArrive, partner_[g]);
          pending_.push_back(g);
        } else {
          ++done;
          complete(g, t);
        }
        if (!events_.has_now()) break;
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

  void push(double t, uint64_t g, bool arrive) { events_.push(t, g << 1 | (arrive ? kArriveBit : 0)); }

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
    std::sort(pending_.begin(), pending_.end());
    for (uint64_t g : pending_) {
      if (flags_[g] & kOffered) continue;
      const Op& o = s_.op_at(g);
      if (remaining_[g] == 0) flags_[g] |= kPosted;
      if (!(flags_[g] & kPosted)) continue;
      if (o.kind == OpKind::recv && !(flags_[g] & kArrived)) continue;
      flags_[g] |= kOffered;
      offer(g, resource_of(o.kind), t);
    }
    pending_.clear();
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

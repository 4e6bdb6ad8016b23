#include "exec/executor.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "util/error.hpp"

namespace hetcoll {

namespace {
constexpr uint64_t kFuseBlock = 16384;  // bytes per copy+reduce step: stays in L1

char* address(const Bindings& b, Buf buf, uint64_t off) {
  switch (buf) {
    case Buf::in: return const_cast<char*>(static_cast<const char*>(b.in)) + off;
    case Buf::out: return static_cast<char*>(b.out) + off;
    case Buf::tmp: return static_cast<char*>(b.tmp) + off;
  }
  return nullptr;
}
// Interval bookkeeping for fuse_input_copies: the bytes of one copy not yet
// touched by a later op, as sorted disjoint [lo, hi) pairs.
struct Untouched {
  std::vector<std::pair<uint64_t, uint64_t>> parts;
  // How much of [lo, hi) is still untouched: 0 none, 1 part, 2 all.
  int covers(uint64_t lo, uint64_t hi) const {
    uint64_t got = 0;
    for (auto& [a, b] : parts) got += std::max(a, lo) < std::min(b, hi) ? std::min(b, hi) - std::max(a, lo) : 0;
    return got == 0 ? 0 : got == hi - lo ? 2 : 1;
  }
  void remove(uint64_t lo, uint64_t hi) {
    std::vector<std::pair<uint64_t, uint64_t>> next;
    for (auto& [a, b] : parts) {
      if (b <= lo || hi <= a) {
        next.push_back({a, b});
        continue;
      }
      if (a < lo) next.push_back({a, lo});
      if (hi < b) next.push_back({hi, b});
    }
    parts.swap(next);
  }
};

// Decides, for the copy at index c (dst = in[...]), whether every byte of it
// is first touched by a reduction into exactly untouched bytes (fused) or
// by a write (dead), and if so applies it.
bool fuse_input_copy(std::vector<ExecOp>& ops, const Schedule& s, int rank, size_t c) {
  const ExecOp copy = ops[c];
  const Buf D = copy.buf;
  Untouched u{{{copy.off, copy.off + copy.len}}};
  std::vector<std::pair<size_t, uint64_t>> fused;  // reduce index, its init offset in `in`
  auto depends_on_copy = [&](size_t j) {
    for (auto* d = s.deps_begin(rank, j); d != s.deps_end(rank, j); ++d)
      if (*d == c) return true;
    return false;
  };
  for (size_t j = c + 1; j < ops.size() && !u.parts.empty(); ++j) {
    const ExecOp& o = ops[j];
    if (o.len == 0) continue;
    // Reads of untouched bytes need the copy.
    const bool reads_src = (o.kind == OpKind::copy || o.kind == OpKind::reduce) && o.src_buf == D &&
                           u.covers(o.src_off, o.src_off + o.len) != 0;
    const bool reads_dst = (o.kind == OpKind::send || o.kind == OpKind::reduce) && o.buf == D;
    if (reads_src) return false;
    if (o.kind == OpKind::send) {
      if (reads_dst && u.covers(o.off, o.off + o.len) != 0) return false;
      continue;
    }
    if (o.buf != D) continue;
    const int cov = u.covers(o.off, o.off + o.len);
    if (cov == 0) continue;
    if (o.kind == OpKind::reduce) {
      // A reduction into untouched bytes fuses only if they are all
      // untouched and it follows the copy directly.
      if (cov != 2 || !depends_on_copy(j)) return false;
      fused.push_back({j, copy.src_off + (o.off - copy.off)});
    }
    u.remove(o.off, o.off + o.len);  // reduced or overwritten
  }
  if (!u.parts.empty() && D != Buf::tmp) return false;  // output bytes nobody wrote
  for (auto& [j, init] : fused) {
    ops[j].fused_init = true;
    ops[j].init_off = init;
  }
  ops[c].len = 0;  // the copy is done by the reductions (or not needed)
  return true;
}

}  // namespace

ExecProgram compile(const Schedule& s, int rank, int tag_limit, int send_ports, bool fuse) {
  ExecProgram p;
  p.send_ports = uint32_t(std::max(1, send_ports));
  p.algorithm = s.algorithm;
  p.elem_size = s.coll.elem_size;
  p.tmp_bytes = s.tmp_bytes(rank);
  const size_t n = s.num_ops(rank);
  p.ops.reserve(n);
  p.dep_count.resize(n);
  p.dependents_at.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    ExecOp o;
    static_cast<Op&>(o) = s.op(rank, i);
    p.ops.push_back(o);
    p.has_reduce |= p.ops.back().kind == OpKind::reduce && p.ops.back().len > 0;
    p.dep_count[i] = s.op(rank, i).dep_count;
    if (p.ops.back().kind == OpKind::send) p.sends.push_back(uint32_t(i));
    for (auto* d = s.deps_begin(rank, i); d != s.deps_end(rank, i); ++d) ++p.dependents_at[*d + 1];
    if (p.dep_count[i] == 0)
      (p.ops.back().kind == OpKind::recv ? p.initial_recvs : p.initially_ready).push_back(uint32_t(i));
  }
  for (size_t i = 0; i < n; ++i) p.dependents_at[i + 1] += p.dependents_at[i];
  p.dependents.resize(p.dependents_at[n]);
  std::vector<uint32_t> fill(p.dependents_at.begin(), p.dependents_at.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (auto* d = s.deps_begin(rank, i); d != s.deps_end(rank, i); ++d) p.dependents[fill[*d]++] = uint32_t(i);
  if (fuse && !s.coll.in_place)
    for (size_t c = 0; c < n; ++c) {
      const ExecOp& o = p.ops[c];
      if (o.kind == OpKind::copy && o.src_buf == Buf::in && o.buf != Buf::in && o.len > 0 &&
          fuse_input_copy(p.ops, s, rank, c))
        ++p.fused_copies;
    }
  for (const ExecOp& o : p.ops)
    if (o.kind == OpKind::send || o.kind == OpKind::recv) p.peers = std::max(p.peers, o.peer + 1);
  // Tags: per peer, the sequence number of each message in program order.
  p.tag.assign(n, 0);
  std::unordered_map<int, uint32_t> sent, received;
  const uint32_t limit = uint32_t(std::max(tag_limit, 1));
  for (size_t i = 0; i < n; ++i) {
    const Op& o = p.ops[i];
    if (o.kind == OpKind::send) p.tag[i] = int(sent[o.peer]++ % limit);
    if (o.kind == OpKind::recv) p.tag[i] = int(received[o.peer]++ % limit);
  }
  return p;
}

void Transport::send(const void* buf, size_t bytes, int peer, int tag) {
  isend(buf, bytes, peer, tag);
  std::vector<Request> done;
  while (done.empty()) wait_some(done);
}

void Transport::recv(void* buf, size_t bytes, int peer, int tag) {
  irecv(buf, bytes, peer, tag);
  std::vector<Request> done;
  while (done.empty()) wait_some(done);
}

uint32_t recv_window(const ExecProgram& p) { return std::max<uint32_t>(256, 2 * p.send_ports); }

namespace {
// A copy or a reduction: the rank's own work, done when it is called.
void run_local(const ExecProgram& p, const ExecOp& o, const Bindings& b, const ReduceFn& reduce) {
  if (o.kind == OpKind::copy) {
    char* dst = address(b, o.buf, o.off);
    const char* src = address(b, o.src_buf, o.src_off);
    if (dst != src && o.len) std::memmove(dst, src, o.len);  // in place: nothing to do
    return;
  }
  if (o.len == 0) return;
  if (!o.fused_init) {
    reduce(address(b, o.buf, o.off), address(b, o.src_buf, o.src_off), o.len / p.elem_size);
    return;
  }
  // dst = init ⊕ src, a cache-sized block at a time
  char* dst = address(b, o.buf, o.off);
  const char* init = address(b, Buf::in, o.init_off);
  const char* src = address(b, o.src_buf, o.src_off);
  const uint64_t block = std::max<uint64_t>(1, kFuseBlock / p.elem_size) * p.elem_size;
  for (uint64_t at = 0; at < o.len; at += block) {
    const uint64_t len = std::min(block, o.len - at);
    std::memcpy(dst + at, init + at, len);
    reduce(dst + at, src + at, len / p.elem_size);
  }
}
}  // namespace

void ExecRun::start(const ExecProgram& prog, const Bindings& b, ReduceFn reduce, Transport& t, ExecScratch& x,
                    bool may_block) {
  p_ = &prog;
  b_ = b;
  reduce_ = reduce;
  t_ = &t;
  x_ = &x;
  may_block_ = may_block;
  completed_ = outstanding_ = next_send_ = 0;
  sends_out_ = 0;
  first_ = 0;
  const ExecProgram& p = prog;
  const size_t n = p.ops.size();
  if (n == 0) return;
  if (p.has_reduce && !reduce) throw ScheduleError(cat(p.algorithm, ": a reduction without a combining kernel"));
  x.remaining.assign(p.dep_count.begin(), p.dep_count.end());
  // A min-heap of ready ops: program order among the ready ones.
  x.ready.assign(p.initially_ready.begin(), p.initially_ready.end());
  std::make_heap(x.ready.begin(), x.ready.end(), std::greater<uint32_t>());
  x.in_flight.clear();  // request number - first -> op
  x.send_posted.assign(n, 0);
  x.recvs_out.assign(size_t(p.peers), 0);
  x.last_posted.assign(size_t(p.peers), 0);
  if (x.held.size() < size_t(p.peers)) x.held.resize(size_t(p.peers));
  for (int q = 0; q < p.peers; ++q) x.held[size_t(q)].clear();
  // Receives without dependencies go first — unless one op is all there is
  // to do, which a blocking run does as a blocking call.
  if (p.initial_recvs.size() + p.initially_ready.size() > 1 || !may_block) {
    for (uint32_t i : p.initial_recvs) post_recv(i);
  } else if (!p.initial_recvs.empty()) {
    x.ready.push_back(p.initial_recvs.front());
  }
  run_ready();
}

void ExecRun::complete(uint32_t i) {
  const ExecProgram& p = *p_;
  ++completed_;
  for (uint32_t k = p.dependents_at[i]; k < p.dependents_at[i + 1]; ++k)
    if (--x_->remaining[p.dependents[k]] == 0) {
      x_->ready.push_back(p.dependents[k]);
      std::push_heap(x_->ready.begin(), x_->ready.end(), std::greater<uint32_t>());
    }
}

void ExecRun::track(Transport::Request r, uint32_t i) {
  ExecScratch& x = *x_;
  if (x.in_flight.empty()) first_ = r;
  if (r < first_) throw ScheduleError("transport requests are not numbered in posting order");
  const size_t k = r - first_;  // blocking sends and receives may leave gaps
  if (k >= x.in_flight.size()) x.in_flight.resize(k + 1, UINT32_MAX);
  x.in_flight[k] = i;
  ++outstanding_;
}

// Receives, at most `window` per peer posted at a time (executor.hpp).
void ExecRun::post_recv(uint32_t i) {
  ExecScratch& x = *x_;
  const ExecOp& o = p_->ops[i];
  const size_t q = size_t(o.peer);
  if (x.recvs_out[q] >= recv_window(*p_) && i + 1 > x.last_posted[q]) {
    x.held[q].push_back(i);
    std::push_heap(x.held[q].begin(), x.held[q].end(), std::greater<uint32_t>());
    return;
  }
  ++x.recvs_out[q];
  x.last_posted[q] = std::max(x.last_posted[q], i + 1);
  track(t_->irecv(address(b_, o.buf, o.off), o.len, o.peer, p_->tag[i]), i);
}

void ExecRun::recv_done(uint32_t i) {
  ExecScratch& x = *x_;
  const size_t q = size_t(p_->ops[i].peer);
  --x.recvs_out[q];
  if (!x.held[q].empty() && x.recvs_out[q] < recv_window(*p_)) {
    std::pop_heap(x.held[q].begin(), x.held[q].end(), std::greater<uint32_t>());
    const uint32_t next = x.held[q].back();
    x.held[q].pop_back();
    post_recv(next);
  }
}

// The send port: the next send in program order leaves once it is posted
// and a port is free. Alone (nothing else in flight or ready), a blocking
// run makes it a blocking call.
void ExecRun::start_sends() {
  const ExecProgram& p = *p_;
  ExecScratch& x = *x_;
  while (next_send_ < p.sends.size() && sends_out_ < p.send_ports && x.send_posted[p.sends[next_send_]] &&
         !(p.ops[p.sends[next_send_]].serial && sends_out_ > 0)) {
    const uint32_t i = p.sends[next_send_++];
    const ExecOp& o = p.ops[i];
    if (may_block_ && outstanding_ == 0 && x.ready.empty() &&
        (next_send_ == p.sends.size() || !x.send_posted[p.sends[next_send_]])) {
      t_->send(address(b_, o.buf, o.off), o.len, o.peer, p.tag[i]);
      complete(i);
    } else {
      track(t_->isend(address(b_, o.buf, o.off), o.len, o.peer, p.tag[i]), i);
      ++sends_out_;
    }
  }
}

// Runs every ready op: local work at once, messages posted.
void ExecRun::run_ready() {
  const ExecProgram& p = *p_;
  ExecScratch& x = *x_;
  while (!x.ready.empty()) {
    std::pop_heap(x.ready.begin(), x.ready.end(), std::greater<uint32_t>());
    const uint32_t i = x.ready.back();
    x.ready.pop_back();
    const ExecOp& o = p.ops[i];
    // Nothing in flight and nothing else ready: this message is all there
    // is to wait for, so a blocking call does the same, cheaper.
    const bool alone = may_block_ && outstanding_ == 0 && x.ready.empty();
    switch (o.kind) {
      case OpKind::send:
        x.send_posted[i] = 1;
        start_sends();
        break;
      case OpKind::recv:
        if (alone) {
          t_->recv(address(b_, o.buf, o.off), o.len, o.peer, p.tag[i]);
          complete(i);
        } else {
          post_recv(i);
        }
        break;
      case OpKind::copy:
      case OpKind::reduce:
        run_local(p, o, b_, reduce_);
        complete(i);
        break;
    }
  }
  if (!finished() && outstanding_ == 0)
    throw ScheduleError(cat(p.algorithm, ": stuck with ", p.ops.size() - completed_, " ops left"));
}

bool ExecRun::wants_test() const {
  const ExecProgram& p = *p_;
  return next_send_ < p.sends.size() && x_->send_posted[p.sends[next_send_]] &&
         (sends_out_ >= p.send_ports || p.ops[p.sends[next_send_]].serial);
}

void ExecRun::advance(const std::vector<Transport::Request>& done) {
  const ExecProgram& p = *p_;
  ExecScratch& x = *x_;
  for (auto r : done) {
    const Transport::Request req = r - first_;
    if (r < first_ || req >= x.in_flight.size() || x.in_flight[req] == UINT32_MAX)
      throw ScheduleError("transport completed an unknown request");
    const uint32_t i = x.in_flight[req];
    x.in_flight[req] = UINT32_MAX;
    --outstanding_;
    if (p.ops[i].kind == OpKind::send) --sends_out_;
    if (p.ops[i].kind == OpKind::recv) recv_done(i);
    complete(i);
  }
  start_sends();
  run_ready();
}

void run(const ExecProgram& p, const Bindings& b, ReduceFn reduce, Transport& t, ExecScratch& x) {
  ExecRun r;
  r.start(p, b, reduce, t, x, true);
  while (!r.finished()) {
    x.done.clear();
    // A send waiting for the port: the one in flight may be done already
    // (eager); ask before blocking, which may give the CPU away.
    if (r.wants_test()) t.test_some(x.done);
    if (x.done.empty()) t.wait_some(x.done);
    r.advance(x.done);
  }
}

void execute(const Schedule& s, int rank, const Bindings& b, ReduceFn reduce, Transport& t, int send_ports) {
  ExecScratch x;
  run(compile(s, rank, t.tag_limit(), send_ports), b, reduce, t, x);
}

}  // namespace hetcoll

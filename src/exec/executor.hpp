// The executor: runs one rank's program of a schedule over a Transport.
//
// An op is posted as soon as every op it depends on has completed, in
// program order among those ready at once — the rule the simulator
// predicts with. Sends go through the rank's send port, as in the
// simulator: they leave in program order, at most `send_ports` in flight
// (the model's send_ports(), usually one), so concurrent sends do not share
// a NIC the model gave to one of them. The validator proves this order
// cannot deadlock even when every send waits for its receive. Receives
// without dependencies are posted first thing, so messages find their
// buffers — at most recv_window() of them per peer at a time, the earliest
// in program order (a pipeline of 10^5 segments would otherwise give every
// completion a wait over 10^5 requests: time in the square of the count).
// A sender has at most send_ports messages in flight and sends to one peer
// in the order that peer receives, so a window of at least send_ports
// receives never holds back one a sender waits on; a receive earlier in
// program order than one already posted is always posted. Copies and reductions run at once; sends and
// receives become transport requests. The k-th message between two ranks in
// one direction carries tag k (mod the tag limit): posting out of order
// cannot mismatch messages, and the transport's in-order matching keeps
// consecutive collectives apart.
//
// Two stages, so that a cached schedule costs nothing to set up again:
// compile() turns a rank's program into an ExecProgram (dependents, tags,
// the ops ready at the start), run() executes it with an ExecScratch whose
// memory is reused from call to call.
//
// compile() also fuses copies of the input into the reductions that first
// touch the copied bytes: "copy D = in; ...; reduce D += T" runs as
// D = in ⊕ T in cache-sized blocks, so the input crosses memory once, not
// twice (the copy alone is a third of a large reduce on this kind of
// machine). Bytes of the copy that are overwritten before anything reads
// them are not copied at all. The results are bit-for-bit those of the
// schedule: the same elementwise operations in the same order. It applies
// when the schedule is not in place (the input never changes) and every
// byte of the copy is first touched by such a reduction or overwritten
// (or, in tmp, never touched again); otherwise the copy runs as written.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "exec/reduce_kernels.hpp"
#include "exec/transport.hpp"
#include "schedule/schedule.hpp"

namespace hetcoll {

// Memory for the logical buffers of the executing rank.
struct Bindings {
  const void* in = nullptr;
  void* out = nullptr;
  void* tmp = nullptr;  // at least tmp_bytes(rank) bytes
};

// An op as the executor runs it: a reduction may start from a copy of the
// input (fused_init: dst = init ⊕ src instead of dst ⊕= src).
struct ExecOp : Op {
  bool fused_init = false;
  uint64_t init_off = 0;  // offset in `in`
};

// One rank's program, ready to run any number of times.
struct ExecProgram {
  std::string algorithm;
  uint32_t elem_size = 1;
  uint64_t tmp_bytes = 0;
  bool has_reduce = false;
  std::vector<ExecOp> ops;              // the rank's ops, in program order
  size_t fused_copies = 0;              // copies of the input folded into reductions
  std::vector<uint32_t> dep_count;      // dependencies of each op
  std::vector<uint32_t> dependents_at;  // CSR: dependents of op i are
  std::vector<uint32_t> dependents;     //   dependents[dependents_at[i] .. [i+1])
  std::vector<int> tag;                 // sends/receives: per-peer sequence number
  std::vector<uint32_t> sends;          // the sends, in program order: the order they leave
  uint32_t send_ports = 1;              // sends in flight at once
  std::vector<uint32_t> initial_recvs;    // receives without dependencies: posted first
  std::vector<uint32_t> initially_ready;  // the other ops without dependencies
  int peers = 0;                          // 1 + the largest peer of a send or receive
};

// Receives from one peer posted and not yet completed, at most (see above).
uint32_t recv_window(const ExecProgram& p);

// send_ports: the model's send_ports(). fuse: fold input copies into
// reductions (see above).
ExecProgram compile(const Schedule& s, int rank, int tag_limit, int send_ports = 1, bool fuse = true);

// Per-call working memory; keep one per thread of execution and reuse it.
struct ExecScratch {
  std::vector<uint32_t> remaining, ready, in_flight;
  std::vector<uint8_t> send_posted;  // per op: its dependencies are done
  std::vector<Transport::Request> done;
  // Per peer: receives posted and not completed, the latest posted (op
  // index + 1; 0: none), and the ready ones held back (a min-heap of op
  // indices: program order, which is the order of their tags).
  std::vector<uint32_t> recvs_out, last_posted;
  std::vector<std::vector<uint32_t>> held;
};

// One execution of a compiled program, advanced by whoever holds it: the
// blocking run() below, or the MPI layer's progress engine for a
// non-blocking collective (several at once, each with its own transport
// and scratch). start() posts what can go at once; advance() takes the
// transport's completions and posts what they made ready. A run that may
// not block (non-blocking collectives) never makes a blocking transport
// call; a blocking one makes one when a message is all there is to wait
// for. Throws ScheduleError when no op can ever complete.
class ExecRun {
 public:
  void start(const ExecProgram& prog, const Bindings& b, ReduceFn reduce, Transport& t, ExecScratch& scratch,
             bool may_block);
  void advance(const std::vector<Transport::Request>& done);
  bool finished() const { return !p_ || completed_ == p_->ops.size(); }
  // A send waits for the port: the transport should be asked (test_some)
  // before anyone blocks — an eager send is usually done.
  bool wants_test() const;

 private:
  void complete(uint32_t i);
  void track(Transport::Request r, uint32_t i);
  void post_recv(uint32_t i);
  void recv_done(uint32_t i);
  void start_sends();
  void run_ready();

  const ExecProgram* p_ = nullptr;
  Bindings b_;
  ReduceFn reduce_ = nullptr;
  Transport* t_ = nullptr;
  ExecScratch* x_ = nullptr;
  bool may_block_ = true;
  size_t completed_ = 0, outstanding_ = 0;
  size_t next_send_ = 0;  // index in p.sends of the next send to leave
  uint32_t sends_out_ = 0;
  Transport::Request first_ = 0;
};

// Runs a compiled program. The transport must number requests
// consecutively in posting order (both transports here do). `reduce`
// combines `elem_size`-byte elements; it may be null when the program has
// no reductions. Throws ScheduleError on a reduction without a kernel.
void run(const ExecProgram& prog, const Bindings& b, ReduceFn reduce, Transport& t, ExecScratch& scratch);

// compile + run, for one-off executions.
void execute(const Schedule& s, int rank, const Bindings& b, ReduceFn reduce, Transport& t, int send_ports = 1);

}  // namespace hetcoll

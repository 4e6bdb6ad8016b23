#include "interpose/call_path.hpp"

#include <atomic>
#include <cstring>
#include <mutex>

#include "interpose/buffers.hpp"
#include "interpose/comm_setup.hpp"
#include "interpose/compile.hpp"
#include "interpose/learning.hpp"
#include "interpose/progress.hpp"
#include "interpose/runtime.hpp"
#include "interpose/tls.hpp"
#include "interpose/watchdog.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {

HETCOLL_TLS LastError t_last;
// The reason of a call that execute_call hands to the native MPI without
// throwing (a cached native decision, a communicator left to the native MPI).
HETCOLL_TLS const std::string* t_decline = nullptr;

// Scratch memory a communicator keeps between calls.
constexpr size_t kKeptScratchBytes = size_t(64) << 20;

// Configuration problems, told once by world rank 0. (An atomic flag, not
// std::call_once: this is on every call's path, and call_once costs a
// pthread_once call each time.)
void report_configuration() {
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (done.load(std::memory_order_relaxed)) return;
  Runtime& cfg = runtime();
  int world_rank = 0;
  if (!cfg.problems.empty() && PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank) == MPI_SUCCESS && world_rank == 0)
    for (const std::string& p : cfg.problems) say(p);
  done.store(true, std::memory_order_release);
}

// The communicator's verdict: "" when hetcoll runs its collectives, else
// why the native MPI does (the same on every rank of it).
const std::string* native_reason(CommState& st, Runtime& cfg) {
  if (!st.native_only.empty()) return &st.native_only;
  const uint64_t epoch = cfg.agreement_epoch.load(std::memory_order_acquire);
  if (st.agreement_epoch != epoch) {  // compared again on MPI_COMM_WORLD since (hetcoll_set_*)
    std::lock_guard<std::mutex> lock(cfg.mu);
    st.disagreement = cfg.world_disagreement;
    st.agreement_epoch = cfg.agreement_epoch.load(std::memory_order_relaxed);
  }
  return st.disagreement.empty() ? nullptr : &st.disagreement;
}

// The buffers a compiled program runs on: the user's (as prepared), an
// in-place input copied aside where the algorithm needs it, tmp — in `mem`.
Bindings bind(const Compiled& cc, const Prepared& pr, CallMemory& mem, int rank) {
  const void* in = pr.in;
  if (cc.aside) {
    const uint64_t n = pr.coll.in_bytes(rank);
    if (mem.aside.size() < n) mem.aside.resize(n);
    if (n) std::memcpy(mem.aside.data(), pr.in, n);
    in = mem.aside.data();
  }
  if (mem.tmp.size() < cc.prog.tmp_bytes + 1) mem.tmp.resize(cc.prog.tmp_bytes + 1);
  return Bindings{in, pr.out, mem.tmp.data()};
}

// Starts p's planned program on its own transport and memory (a
// non-blocking collective, a persistent one's MPI_Start, a blocking call
// while others are in flight): the progress engine takes it from here.
// Under the state's lock.
void launch(Pending& p, CommState& st) {
  const Compiled& cc = *p.cc;
  const Bindings b = bind(cc, p.pr, p.mem, st.info.rank);
  const MPI_Comm comm = p.own_comm != MPI_COMM_NULL ? p.own_comm : st.dup;
  if (!p.transport || !p.transport->serves(comm, st.info)) p.transport = std::make_unique<MpiTransport>(comm, st.info);
  if (p.own_comm != MPI_COMM_NULL) {
    p.region = 0;  // a communicator of its own
  } else if (p.persistent) {
    p.region = st.info.region_of_slot(p.slot);  // its own, from its initialization
  } else {
    p.region = st.info.region_of_epoch(st.epoch++);
    engine_wait_for_tags(st, p.region);
  }
  if (hang_reports_on()) p.log.clear();
  p.transport->reset(hang_reports_on() ? &p.log : nullptr, st.world_ranks.data(), p.region);
  p.transport->set_send_ports(int(cc.prog.send_ports));
  p.finished = false;
  p.error = MPI_SUCCESS;
  p.message.clear();
  p.done.clear();
  p.run.start(cc.prog, b, p.pr.kernel, *p.transport, p.scratch, false);
  p.active = true;
  engine_add(p);
  progress_kick();
}

// The request's share of the call: what it runs, where, on which state.
void adopt(Pending& p, const Call& call, const Reduction& red, CommState& st, std::shared_ptr<const Compiled> cc,
           Prepared&& pr) {
  p.call = call;
  p.comm = call.comm;
  p.red = red;
  if (p.st != &st) {
    hold_state(st);
    if (p.st) release_state(*p.st);
    p.st = &st;
  }
  p.cc = std::move(cc);
  p.pr = std::move(pr);
}

// A failed schedule of a blocking call, as the blocking executor throws it.
void rethrow(const Pending& p) {
  if (p.error == MPI_SUCCESS) return;
  if (p.error == MPI_ERR_INTERN) throw std::logic_error(p.message);
  throw MpiError(p.error, p.message);
}

// Step 1, a communicator hetcoll has set up: whether it runs the call
// (nullptr) or why not (the native MPI's turn; the same on every rank).
const std::string* declined_on(CommState& known, Runtime& cfg) {
  const std::string* why = native_reason(known, cfg);
  if (why && !known.last.empty()) {  // hetcoll ran an earlier call: this one it does not
    std::unique_lock<std::mutex> lock(known.mu, std::defer_lock);
    if (known.multiple) lock.lock();
    known.last.clear();
  }
  return why;
}

// Step 1, before a new communicator's state is made (collectively): the
// checks that need no state, the same on every rank.
void check_new_communicator(const Call& call) {
  int size = 0;
  check_mpi(PMPI_Comm_size(call.comm, &size), "MPI_Comm_size");
  if (has_root(call.coll) && (call.root < 0 || call.root >= size))
    throw UserError(MPI_ERR_ROOT, cat("root ", call.root, " is not a rank of the communicator"));
  int world = 0;
  check_mpi(PMPI_Comm_size(MPI_COMM_WORLD, &world), "MPI_Comm_size");
  check_profile_fits(world);
}

// Step 1, the group: what a schedule can describe, the root.
void check_group(const Call& call, const CommState& st) {
  const int p = st.info.size;
  if (p > kMaxRanks || (call.coll == CollOp::alltoallv && p > kMaxDenseRanks))
    throw Decline{cat("a group of ", p, " ranks (schedules describe at most ",
                      call.coll == CollOp::alltoallv ? kMaxDenseRanks : kMaxRanks, " for this collective)")};
  if (has_root(call.coll) && (call.root < 0 || call.root >= p))
    throw UserError(MPI_ERR_ROOT, cat("root ", call.root, " is not a rank of the communicator"));
}

// Steps 4 and 5 on the engine: a non-blocking call started, a persistent
// one planned into `nb`, or a blocking call run there while others are in
// flight (it must not stop them: another rank may wait on them to reach
// this one), then waited for.
Status on_engine(const Call& call, Pending* nb, Form form, const Reduction& red, CommState& st, Prepared&& pr,
                 std::shared_ptr<const Compiled> cc, std::unique_lock<std::mutex>& lock, WatchedCall& watch,
                 const char* name) {
  std::unique_ptr<Pending> local;
  Pending& p = nb ? *nb : *(local = new_pending());
  adopt(p, nb ? nb->call : call, red, st, std::move(cc), std::move(pr));
  if (form == Form::persistent) return Status::ok;
  launch(p, st);
  if (form == Form::nonblocking) return Status::ok;
  if (lock.owns_lock()) lock.unlock();  // the others in flight may need this communicator's state
  watch.show(name, &st.name, &p.log);
  engine_finish(p);
  watch.show(name, &st.name, nullptr);  // p's log may go now
  if (local) {
    const Pending& q = *local;
    if (q.error != MPI_SUCCESS) rethrow(q);
    recycle(local.release());
  }
  return Status::ok;
}

// Steps 4 and 5 here: a blocking call with nothing else in flight, run to
// the end by the executor on the communicator's own transport and memory.
void run_here(const Compiled& cc, Prepared& pr, CommState& st, WatchedCall& watch) {
  CallMemory& m = st.mem;
  const Bindings b = bind(cc, pr, m, st.info.rank);
  st.transport->reset(watch.log, st.world_ranks.data(), st.info.region_of_epoch(st.epoch++));
  st.transport->set_send_ports(int(cc.prog.send_ports));
  run(cc.prog, b, pr.kernel, *st.transport, st.scratch);
  if (int rc = st.transport->deferred_error()) check_mpi(rc, "a receive");  // truncated: the ranks' counts differ
  for (auto& f : pr.after) f();
  // Working memory stays for the next call, but not a large call's: that
  // would hold memory the program freed (per communicator) for good.
  for (std::vector<char>* v : {&m.tmp, &m.staged_in, &m.staged_out, &m.aside})
    if (v->capacity() > kKeptScratchBytes) std::vector<char>().swap(*v);
}

// The call path, every form: the steps of call_path.hpp in order. nb: the
// request's Pending (non-blocking, persistent), nullptr for a blocking call.
Status execute_call(const Call& call, Pending* nb, Form form) {
  const char* name = mpi_name(call.coll, form);
  forget_layouts();
  Runtime& cfg = runtime();
  report_configuration();
  // 1. The communicator. A communicator with state is an intracommunicator
  // hetcoll has set up: its ranks compared their configurations then. A
  // rank with HETCOLL_DISABLE takes part in that too (the others cannot
  // know it is disabled), and on every call after it takes the native path
  // without an exception.
  if (call.comm == MPI_COMM_NULL) throw UserError(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  CommState* known = find_state(call.comm);
  if (known) {
    if ((t_decline = declined_on(*known, cfg))) return Status::unsupported;
  } else {
    int inter = 0;
    check_mpi(PMPI_Comm_test_inter(call.comm, &inter), "MPI_Comm_test_inter");
    if (inter) throw Decline{"an intercommunicator"};
  }
  // Reductions: the type and the op decide whether hetcoll can combine; they
  // are the same on every rank. Checked before the communicator state exists.
  Reduction red;
  if (is_reduction(call.coll)) red = reduction_of(call);
  if (!known) check_new_communicator(call);
  // From here the call may wait for other ranks (the duplicate of a new
  // communicator is made collectively): hang reports watch it.
  static const std::string kNew = "a communicator hetcoll is setting up (MPI_Comm_dup)";
  WatchedCall watch(name, known ? &known->name : &kNew, false);
  CommState& st = known ? *known : create_state(call.comm);
  // A disabled rank gets no further: either every rank is disabled
  // (native_only) or the configurations differ (disagreement).
  if (!known) {
    if (const std::string* why = native_reason(st, cfg)) {
      if (why == &st.native_only && !cfg.settings.disable) say_once(cat(name, ": ", *why, " → native MPI"));
      t_decline = why;
      return Status::unsupported;
    }
  }
  check_group(call, st);
  std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
  if (st.multiple) lock.lock();
  // 2. The arguments and buffers. A non-blocking or persistent call holds
  // the objects it reads later.
  if (nb) nb->call = call;
  Prepared pr = nb ? prepare_held(nb->call, red, st, nb->mem, nb->held) : prepare(call, red, st, st.mem);
  pr.coll.in_place = pr.in_place;
  // 3. Decide and compile (cached per call shape); what runs, learned in
  // the job (HETCOLL_LEARN) or the decision.
  compiled_for(st, pr.coll, name);
  const std::shared_ptr<const Compiled> chosen = learned_for(st, st.recent, pr.coll, form, name);
  const Compiled& cc = *chosen;
  if (cc.native) {  // without an exception: this is a hot path when native is the measured winner
    t_decline = &cc.why;
    return Status::unsupported;
  }
  if (!known) watch.rename(&st.name);
  // 4 and 5. Start, progress, complete.
  if (nb || collectives_in_flight())
    return on_engine(call, nb, form, red, st, std::move(pr), chosen, lock, watch, name);
  run_here(cc, pr, st, watch);
  return Status::ok;
}

Status fail(Status s, int code, const std::string& message, bool answer_here = false) {
  t_last.status = s;
  t_last.mpi_code = code;
  t_last.message = message;
  t_last.answer_here = answer_here;
  return s;
}

// Runs f (an execute_call) and turns what it throws into a Status, the
// reason kept in t_last.
template <class F>
Status guarded(const char* name, F&& f) noexcept {
  try {
    try {
      const Status s = f();
      if (s != Status::unsupported) return s;
      // A cached native decision (explained where it was decided) or
      // HETCOLL_DISABLE: no string is built, the message is kept.
      t_last.status = Status::unsupported;
      t_last.mpi_code = MPI_SUCCESS;
      t_last.message.assign(name);
      t_last.message.append(": ");
      t_last.message.append(*t_decline);
      t_last.answer_here = false;
      return Status::unsupported;
    } catch (const Decline& d) {
      std::string why = cat(name, ": ", d.why);
      say_once(why + " → native MPI");
      return fail(Status::unsupported, MPI_SUCCESS, why);
    } catch (const UserError& e) {
      return fail(Status::bad_argument, e.mpi_class(), cat(name, ": ", e.what()), e.answer_here());
    } catch (const MpiError& e) {
      return fail(Status::mpi_error, e.code(), cat(name, ": ", e.what()));
    } catch (const std::bad_alloc&) {
      return fail(Status::mpi_error, MPI_ERR_NO_MEM, cat(name, ": out of memory"));
    } catch (const std::exception& e) {
      return fail(Status::internal, MPI_ERR_INTERN, cat(name, ": internal error in hetcoll: ", e.what()));
    }
  } catch (...) {  // building a message failed: memory is gone
    t_last.status = Status::internal;
    t_last.mpi_code = MPI_ERR_INTERN;
    return Status::internal;
  }
}

}  // namespace

Status run_blocking(const Call& call) noexcept {
  return guarded(mpi_name(call.coll), [&] { return execute_call(call, nullptr, Form::blocking); });
}

Status start_nonblocking(const Call& call, Pending& p) noexcept {
  return guarded(mpi_name(call.coll, Form::nonblocking), [&] { return execute_call(call, &p, Form::nonblocking); });
}

Status init_persistent(const Call& call, Pending& p) noexcept {
  p.persistent = true;
  return guarded(mpi_name(call.coll, Form::persistent), [&] {
    const Status s = execute_call(call, &p, Form::persistent);
    if (s != Status::ok) return s;
    // Its tags for life, agreed by the ranks now (MPI orders
    // initializations) — or, every slot held, a communicator of its own.
    p.slot = reserve_persistent_slot(*p.st);
    if (p.slot < 0 && (p.own_comm = duplicate_for_request(*p.st)) == MPI_COMM_NULL)
      throw Decline{"no tag slot free and no communicator left to duplicate for a persistent collective"};
    return Status::ok;
  });
}

Status start_persistent(Pending& p) noexcept {
  return guarded(mpi_name(p.call.coll, Form::persistent), [&] {
    forget_layouts();
    CommState& st = *p.st;
    static const std::string kWhere = "a persistent collective's communicator";
    WatchedCall watch(mpi_name(p.call.coll, Form::persistent), st.orphaned ? &kWhere : &st.name, false);
    std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
    if (st.multiple) lock.lock();
    // The buffers are read now (MPI_Start), with the plan made at init.
    p.pr = prepare(p.call, p.red, st, p.mem);
    p.pr.coll.in_place = p.pr.in_place;
    launch(p, st);
    return Status::ok;
  });
}

const LastError& last_error() noexcept { return t_last; }

void agree_on_world(const char* what) {
  int initialized = 0, finalized = 0;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
  if (PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  Runtime& cfg = runtime();
  CommState* st = find_state(MPI_COMM_WORLD);
  // Every rank disabled, for good: nothing to agree on (all ranks know it).
  if (st && !st->native_only.empty()) return;
  static const std::string kWhere = "MPI_COMM_WORLD (the call is collective over it: every rank makes it)";
  WatchedCall watch(what, &kWhere, false);
  int world = 0;
  check_mpi(PMPI_Comm_size(MPI_COMM_WORLD, &world), "MPI_Comm_size");
  check_profile_fits(world);
  std::string verdict;
  if (!st) {
    st = &create_state(MPI_COMM_WORLD);  // compares as it is made
    if (!st->native_only.empty()) return;  // disabled everywhere
    verdict = st->disagreement;
  } else {
    verdict = compare_configurations(*st, MPI_COMM_WORLD);
  }
  // Each communicator takes the verdict at its next call (native_reason),
  // on the thread that makes it.
  std::lock_guard<std::mutex> lock(cfg.mu);
  cfg.world_disagreement = verdict;
  cfg.agreement_epoch.fetch_add(1, std::memory_order_acq_rel);
}

std::string last_decision(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return "";
  CommState* st = find_state(comm);
  if (!st) return "";
  std::unique_lock<std::mutex> lock(st->mu, std::defer_lock);
  if (st->multiple) lock.lock();
  return st->last;
}

}  // namespace hetcoll::mpi

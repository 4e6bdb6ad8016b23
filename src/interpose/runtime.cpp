#include "plan/phase_choice.hpp"
#include "interpose/tls.hpp"
#include "interpose/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <set>

#include "algorithms/registry.hpp"
#include "interpose/buffers.hpp"
#include "interpose/comm_state.hpp"
#include "interpose/requests.hpp"
#include "interpose/runtime_config.hpp"
#include "model/bound.hpp"
#include "model/units.hpp"
#include "interpose/watchdog.hpp"
#include "model/profile_model.hpp"
#include "schedule/passes.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

namespace {

HETCOLL_TLS LastError t_last;
// The reason of a call that execute_call hands to the native MPI without
// throwing (a cached native decision).
HETCOLL_TLS const std::string* t_decline = nullptr;

// Scratch memory a communicator keeps between calls.
constexpr size_t kKeptScratchBytes = size_t(64) << 20;

// "p=4 root=0 size=8B": the call's shape, after its MPI name.
std::string describe_call(const Collective& c) {
  std::string s = cat("p=", c.nranks);
  if (has_root(c.op)) s += cat(" root=", c.root);
  if (c.op != CollOp::barrier && counts_known_everywhere(c.op)) s += cat(" size=", c.size_bytes(), "B");
  return s;
}

// The planner for a call on this communicator. A profile (HETCOLL_PROFILE=
// FILE) describes hosts: the communicator's ranks are mapped to the
// profile's hosts by the host keys every rank gathered when the state was
// made, so all ranks map alike. A communicator with a host the profile does
// not describe runs on the default model (said once, by the lowest such rank).
std::shared_ptr<Planner> planner_for(CommState& st) {
  const uint64_t gen = config().generation.load(std::memory_order_acquire);
  std::shared_ptr<Planner> pl = current_planner();
  const auto* pm = dynamic_cast<const ProfileModel*>(&pl->model());
  if (!pm) return pl;
  if (st.host_generation != gen) {
    st.host_map.assign(st.host_keys.size(), -1);
    st.host_group_key = 0x9E3779B97F4A7C15ull;
    int unknown = -1;
    for (size_t r = 0; r < st.host_keys.size(); ++r) {
      const int h = pm->host_of_key(st.host_keys[r]);
      if (h < 0 && unknown < 0) unknown = int(r);
      st.host_map[r] = h;
      st.host_group_key = (st.host_group_key ^ uint64_t(h + 1)) * 0x100000001B3ull;
    }
    if (unknown >= 0) {
      st.host_map.clear();
      if (unknown == st.info.rank)
        say_once(cat("HETCOLL_PROFILE does not describe host '", st.host_name,
                     "': collectives of communicators with ranks on it use the default model ",
                     config().default_model, " (probe these hosts: hetcoll probe)"),
                 true);
    }
    st.host_generation = gen;
  }
  return st.host_map.empty() ? fallback_planner() : pl;
}

// What HETCOLL_DEBUG=explain says of a decision, after the call's name
// (explain_once): the choice, its prediction, the runner-up and the bound;
// a note on a line of its own before it.
std::string explanation(const Decision& d, const Collective& call, Planner& pl, const CommState& st) {
  std::string text;
  if (!d.note.empty() && !d.native()) text = cat(describe_call(call), ": ", d.note, "\n");
  std::string line = cat(describe_call(call), ": ", d.algorithm);
  if (d.native()) {
    line += cat(" (", d.note, ")");
  } else if (d.forced) {
    line += " (forced by HETCOLL_ALGO)";
  } else if (d.from_table) {
    line += " (from HETCOLL_TABLE)";
  } else if (d.measured) {
    line += cat(", measured ", format_time(d.measured_time), " vs native ", format_time(d.native_time),
                " (hetcoll tune; predicted ", format_time(d.predicted), ")");
  } else {
    line += cat(", predicted ", format_time(d.predicted));
    if (!counts_known_everywhere(call.op))
      line += cat(" for blocks of ", kUnknownBlockBytes, " B (chosen without the counts: no rank knows them all)");
    if (!d.runner_up.empty())
      line += cat("; runner-up ", d.runner_up, " ", format_time(d.runner_up_predicted), " (+",
                  int(100.0 * (d.runner_up_predicted - d.predicted) / std::max(d.predicted, 1e-30)), "%)");
    // The physical bound of this call on the group's machine (docs/bound.md).
    try {
      const std::vector<int> none;
      const bool hosts = pl.model().maps_hosts();
      const bool per_rank = pl.model().ranks() > 0;
      const ModelPtr gm = pl.model_for(hosts ? st.host_map : (per_rank ? st.world_ranks : none), call.nranks);
      const Bound b = lower_bound(call, *gm);
      if (b.time > 0) line += cat("; bound ", format_time(b.time), " (", b.cut, ")");
    } catch (const std::exception&) {  // an explanation only
    }
  }
  return text + line;
}

// Said once per decision and form the program called it in, on rank 0 of
// the communicator: "MPI_Ibcast p=4 root=0 size=8B: binomial_tree, ...".
void explain_once(const Compiled& cc, const char* name) {
  static std::mutex mu;
  static std::set<std::pair<std::shared_ptr<const void>, const char*>> said;  // holds them: no address reused
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert({cc.decision, name}).second) return;
  }
  size_t at = 0;
  for (size_t nl; (nl = cc.explanation.find('\n', at)) != std::string::npos; at = nl + 1)
    say(cat(name, " ", cc.explanation.substr(at, nl - at)));
  say(cat(name, " ", cc.explanation.substr(at)));
}

// The decision for this call (the planner's), and its explanation when
// asked for (HETCOLL_DEBUG=explain).
Decision decide(const Collective& c, Planner& pl, CommState& st, Compiled& cc) {
  Collective call = c;
  call.in_place = false;  // in-place is the root's affair: decide as everybody does
  const bool hosts = pl.model().maps_hosts();
  const bool per_rank = pl.model().ranks() > 0;
  const std::shared_ptr<const Decision> shared =
      hosts ? pl.decide_shared(call, st.host_group_key, st.host_map)
            : pl.decide_shared(call, per_rank ? st.group_key : 0, per_rank ? st.world_ranks : std::vector<int>{});
  const Decision& d = *shared;
  cc.decision = shared;
  if (config().explain && st.info.rank == 0) cc.explanation = explanation(d, call, pl, st);
  return d;
}

uint64_t key_of(const Collective& c) {
  uint64_t h = kFnvOffset;
  auto mix = [&](uint64_t x) { h = mix_word(h, x); };
  mix(uint64_t(c.op));
  mix(uint64_t(uint32_t(c.nranks)));
  mix(uint64_t(uint32_t(c.root)));
  mix(c.count);
  mix(c.elem_size);
  mix(uint64_t(c.in_place) * 2 + c.order_free);
  if (!c.counts.empty() || !c.sendcounts.empty())  // the v-collectives
    for (auto* v : {&c.counts, &c.displs, &c.sendcounts, &c.sdispls, &c.recvcounts, &c.rdispls}) {
      mix(v->size());
      for (uint64_t x : *v) mix(x);
    }
  return h;
}

bool same(const Collective& a, const Collective& b) {
  return a.op == b.op && a.nranks == b.nranks && a.root == b.root && a.count == b.count && a.elem_size == b.elem_size &&
         a.in_place == b.in_place && a.order_free == b.order_free && a.counts == b.counts && a.displs == b.displs &&
         a.sendcounts == b.sendcounts && a.recvcounts == b.recvcounts && a.sdispls == b.sdispls &&
         a.rdispls == b.rdispls;
}

// Plans (decide), generates this rank's program and compiles it.
Compiled compile_call(const Collective& coll, CommState& st, int rank) {
  Compiled cc;
  cc.coll = coll;
  const std::shared_ptr<Planner> pl = planner_for(st);  // model and overrides, consistent
  Decision d = decide(coll, *pl, st, cc);
  if (d.native()) {
    cc.native = true;
    cc.why = d.note;  // the call's name is the caller's (guarded): blocking, non-blocking or persistent
    return cc;
  }
  const Algorithm& a = *d.choice.algorithm;
  Collective run_coll = coll;
  if (coll.in_place) {
    // An algorithm that cannot run in place gets the input copied aside.
    cc.aside = std::find(a.copy_in_place.begin(), a.copy_in_place.end(), coll.op) != a.copy_in_place.end();
    run_coll.in_place = !cc.aside;
  }
  // The execution passes (schedule/passes.hpp): sends of the rank's own
  // input read it where the user keeps it; the first contribution received
  // lands in the accumulator. The executor then folds the remaining input
  // copies into reductions.
  Schedule s;
  try {
    // The group's model, mapped as decide() mapped it.
    const bool hosts = pl->model().maps_hosts();
    const bool per_rank = pl->model().ranks() > 0;
    const ModelPtr gm = pl->model_for(hosts ? st.host_map : per_rank ? st.world_ranks : std::vector<int>{}, coll.nranks);
    s = optimize_for_execution(build(d.choice, run_coll, *gm, rank));
  } catch (const InputError& e) {
    // A decision table is the user's file: an entry that does not fit the
    // call (edited by hand) sends it to the native MPI, on every rank alike.
    if (d.from_table) throw Decline{cat("HETCOLL_TABLE's ", d.algorithm, " does not fit this call: ", e.what())};
    // The planner checked this decision on its representative call; a
    // generator refusing the call itself is hetcoll's bug.
    throw std::logic_error(cat(d.algorithm, " could not be built for ", run_coll.describe(), ": ", e.what()));
  }
  cc.prog = compile(s, rank, st.info.tag_limit, pl->model().send_ports());
  return cc;
}

// Configuration problems, told once by world rank 0. (An atomic flag, not
// std::call_once: this is on every call's path, and call_once costs a
// pthread_once call each time.)
void report_configuration() {
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (done.load(std::memory_order_relaxed)) return;
  Config& cfg = config();
  int world_rank = 0;
  if (!cfg.problems.empty() && PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank) == MPI_SUCCESS && world_rank == 0)
    for (const std::string& p : cfg.problems) say(p);
  done.store(true, std::memory_order_release);
}

// The communicator's verdict: "" when hetcoll runs its collectives, else
// why the native MPI does (the same on every rank of it).
const std::string* native_reason(CommState& st, Config& cfg) {
  if (!st.native_only.empty()) return &st.native_only;
  const uint64_t epoch = cfg.agreement_epoch.load(std::memory_order_acquire);
  if (st.agreement_epoch != epoch) {  // compared again on MPI_COMM_WORLD since (hetcoll_set_*)
    std::lock_guard<std::mutex> lock(cfg.mu);
    st.disagreement = cfg.world_disagreement;
    st.agreement_epoch = cfg.agreement_epoch.load(std::memory_order_relaxed);
  }
  return st.disagreement.empty() ? nullptr : &st.disagreement;
}

// What execute_call does with a call hetcoll runs.
enum class Mode {
  blocking,  // runs it to the end (with the progress engine when others are in flight)
  start,     // starts it in `nb`: a non-blocking collective
  plan,      // plans it into `nb`, runs nothing: a persistent collective
};

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

Status execute_call(const Call& call, Pending* nb, Mode mode) {
  const char* name =
      mpi_name(call.coll, mode == Mode::start ? Form::nonblocking : mode == Mode::plan ? Form::persistent : Form::blocking);
  forget_layouts();
  Config& cfg = config();
  report_configuration();
  if (call.comm == MPI_COMM_NULL) throw UserError(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  // A communicator with state is an intracommunicator hetcoll has set up:
  // its ranks compared their configurations then. A rank with
  // HETCOLL_DISABLE takes part in that too (the others cannot know it is
  // disabled), and on every call after it takes the native path without
  // an exception.
  CommState* known = find_state(call.comm);
  if (known) {
    if (const std::string* why = native_reason(*known, cfg)) {
      if (!known->last.empty()) {  // hetcoll ran an earlier call: this one it does not
        std::unique_lock<std::mutex> lock(known->mu, std::defer_lock);
        if (known->multiple) lock.lock();
        known->last.clear();
      }
      t_decline = why;
      return Status::unsupported;
    }
  } else {
    int inter = 0;
    check_mpi(PMPI_Comm_test_inter(call.comm, &inter), "MPI_Comm_test_inter");
    if (inter) throw Decline{"an intercommunicator"};
  }
  // Reductions: the type and the op decide whether hetcoll can combine; they
  // are the same on every rank. Checked before the communicator state exists.
  Reduction red;
  if (is_reduction(call.coll)) red = reduction_of(call);
  if (!known) {
    int size = 0;
    check_mpi(PMPI_Comm_size(call.comm, &size), "MPI_Comm_size");
    if (has_root(call.coll) && (call.root < 0 || call.root >= size))
      throw UserError(MPI_ERR_ROOT, cat("root ", call.root, " is not a rank of the communicator"));
    int world = 0;
    check_mpi(PMPI_Comm_size(MPI_COMM_WORLD, &world), "MPI_Comm_size");
    check_profile_fits(world);
  }
  // From here the call may wait for other ranks (the duplicate of a new
  // communicator is made collectively): hang reports watch it.
  static const std::string kNew = "a communicator hetcoll is setting up (MPI_Comm_dup)";
  WatchedCall watch(name, known ? &known->name : &kNew, false);
  CommState& st = known ? *known : create_state(call.comm);
  // A disabled rank gets no further: either every rank is disabled
  // (native_only) or the configurations differ (disagreement).
  if (!known) {
    if (const std::string* why = native_reason(st, cfg)) {
      if (why == &st.native_only && !cfg.disabled) say_once(cat(name, ": ", *why, " → native MPI"));
      t_decline = why;
      return Status::unsupported;
    }
  }
  const int p = st.info.size, rank = st.info.rank;
  if (p > kMaxRanks || (call.coll == CollOp::alltoallv && p > kMaxDenseRanks))
    throw Decline{cat("a group of ", p, " ranks (schedules describe at most ",
                      call.coll == CollOp::alltoallv ? kMaxDenseRanks : kMaxRanks, " for this collective)")};
  if (has_root(call.coll) && (call.root < 0 || call.root >= p))
    throw UserError(MPI_ERR_ROOT, cat("root ", call.root, " is not a rank of the communicator"));
  std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
  if (st.multiple) lock.lock();
  // A non-blocking or persistent call holds the objects it reads later.
  if (nb) nb->call = call;
  Prepared pr = nb ? prepare_held(nb->call, red, st, nb->mem, nb->held) : prepare(call, red, st, st.mem);
  pr.coll.in_place = pr.in_place;

  // The compiled program for this call shape, from the cache if the
  // configuration has not changed since.
  const uint64_t gen = cfg.generation.load(std::memory_order_acquire);
  if (st.generation != gen) {
    st.compiled.clear();
    st.recent = nullptr;
    st.generation = gen;
  }
  const uint64_t key = key_of(pr.coll);
  if (!st.recent || st.recent_key != key || !same(st.recent->coll, pr.coll)) {
    auto it = st.compiled.find(key);
    if (it == st.compiled.end() || !same(it->second->coll, pr.coll)) {
      if (st.compiled.size() >= 256) st.compiled.clear();
      pr.coll.check();
      auto cc = std::make_shared<Compiled>(compile_call(pr.coll, st, rank));
      it = st.compiled.insert_or_assign(key, std::move(cc)).first;
    }
    st.recent = it->second;
    st.recent_key = key;
    st.last = st.recent->prog.algorithm;
  }
  const Compiled& cc = *st.recent;
  if (!cc.explanation.empty()) explain_once(cc, name);
  if (cc.native) {  // without an exception: this is a hot path when native is the measured winner
    t_decline = &cc.why;
    return Status::unsupported;
  }
  if (!known) watch.rename(&st.name);

  if (nb || collectives_in_flight()) {
    // Non-blocking, persistent, or blocking while others are in flight (it
    // must not stop them: another rank may wait on them to reach this one).
    std::unique_ptr<Pending> local;
    Pending& p = nb ? *nb : *(local = new_pending());
    adopt(p, nb ? nb->call : call, red, st, st.recent, std::move(pr));
    if (mode == Mode::plan) return Status::ok;
    launch(p, st);
    if (mode == Mode::start) return Status::ok;
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

  CallMemory& m = st.mem;
  const Bindings b = bind(cc, pr, m, rank);
  st.transport->reset(watch.log, st.world_ranks.data(), st.info.region_of_epoch(st.epoch++));
  st.transport->set_send_ports(int(cc.prog.send_ports));
  run(cc.prog, b, pr.kernel, *st.transport, st.scratch);
  if (int rc = st.transport->deferred_error()) check_mpi(rc, "a receive");  // truncated: the ranks' counts differ
  for (auto& f : pr.after) f();
  // Working memory stays for the next call, but not a large call's: that
  // would hold memory the program freed (per communicator) for good.
  for (std::vector<char>* v : {&m.tmp, &m.staged_in, &m.staged_out, &m.aside})
    if (v->capacity() > kKeptScratchBytes) std::vector<char>().swap(*v);
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

Status run(const Call& call) noexcept {
  return guarded(mpi_name(call.coll), [&] { return execute_call(call, nullptr, Mode::blocking); });
}

Status start(const Call& call, Pending& p) noexcept {
  return guarded(mpi_name(call.coll, Form::nonblocking), [&] { return execute_call(call, &p, Mode::start); });
}

Status plan_persistent(const Call& call, Pending& p) noexcept {
  p.persistent = true;
  return guarded(mpi_name(call.coll, Form::persistent), [&] {
    const Status s = execute_call(call, &p, Mode::plan);
    if (s != Status::ok) return s;
    // Its tags for life, agreed by the ranks now (MPI orders
    // initializations) — or, every slot held, a communicator of its own.
    p.slot = reserve_persistent_slot(*p.st);
    if (p.slot < 0 && (p.own_comm = duplicate_for_request(*p.st)) == MPI_COMM_NULL)
      throw Decline{"no tag slot free and no communicator left to duplicate for a persistent collective"};
    return Status::ok;
  });
}

Status restart(Pending& p) noexcept {
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
  Config& cfg = config();
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

#if MPI_VERSION >= 4
#define HC_INIT_PREFIX "MPI_"
#else
#define HC_INIT_PREFIX "MPIX_"  // Open MPI 4's pcollreq extension
#endif
const char* mpi_name(CollOp op, Form form) {
  switch (op) {
#define HETCOLL_COLLECTIVE(name, Name, params, args)                                     \
  case CollOp::name:                                                                     \
    return form == Form::nonblocking  ? "MPI_I" #name                                    \
           : form == Form::persistent ? HC_INIT_PREFIX #Name "_init"                     \
                                      : "MPI_" #Name;
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
  }
  return "MPI_?";
}
#undef HC_INIT_PREFIX

}  // namespace hetcoll::mpi

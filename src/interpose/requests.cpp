#include "interpose/requests.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "interpose/progress.hpp"
#include "interpose/runtime.hpp"
#include "interpose/runtime_config.hpp"
#include "interpose/watchdog.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {

// MPI_THREAD_MULTIPLE: several threads may wait at once, so nobody blocks
// inside MPI holding the engine; waits poll and yield instead (as the
// native libraries' waits do).
bool threads_multiple() {
  static const bool multiple = [] {
    int level = MPI_THREAD_SINGLE;
    return PMPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
  }();
  return multiple;
}

// The engine's lock: only under MPI_THREAD_MULTIPLE (the progress thread
// runs only there too); with any other level the application's MPI calls
// never overlap, and a lock per call would be a tenth of a small call's
// cost.
struct EngineMutex {
  std::mutex m;
  void lock() {
    if (threads_multiple()) m.lock();
  }
  void unlock() {
    if (threads_multiple()) m.unlock();
  }
  bool try_lock() { return !threads_multiple() || m.try_lock(); }
};
using EngineLock = std::unique_lock<EngineMutex>;

struct Engine {
  EngineMutex mu;
  std::unordered_map<MPI_Request, Pending*> by_handle;  // the application's hetcoll requests
  std::vector<Pending*> flying;                         // schedules running
  std::atomic<size_t> live{0}, in_flight{0};
  // Threads in a wait that polls (MPI_THREAD_MULTIPLE), between their
  // polls: they advance everything, so the progress thread stands aside.
  std::atomic<int> polling_waiters{0};
  // A wait over every schedule's MPI requests and the application's.
  std::vector<MPI_Request> all;
  std::vector<std::pair<Pending*, size_t>> owner;
  std::vector<Pending*> round;
  std::vector<Pending*> spare;  // recycled (new_pending)
};
constexpr size_t kSparePendings = 32;

Engine& engine() {
  static Engine* e = new Engine;  // never destroyed: requests may outlive static destructors
  return *e;
}


#ifdef HETCOLL_SMPI
constexpr bool kSmpi = true;  // a test costs simulated time there: block instead
#else
constexpr bool kSmpi = false;
#endif

void empty_status(MPI_Status* s, int error) {
  if (s == MPI_STATUS_IGNORE) return;
  s->MPI_SOURCE = MPI_ANY_SOURCE;
  s->MPI_TAG = MPI_ANY_TAG;
  s->MPI_ERROR = error;
  PMPI_Status_set_elements(s, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(s, 0);
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE || statuses == MPI_STATUS_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

int grequest_query(void*, MPI_Status* s) {
  empty_status(s, MPI_SUCCESS);
  return MPI_SUCCESS;
}
int grequest_free(void*) { return MPI_SUCCESS; }
int grequest_cancel(void*, int) { return MPI_SUCCESS; }

// The call that made the request, for messages: "MPI_Iallreduce",
// "MPI_Allreduce_init".
const char* call_name(const Pending& p) {
  if (p.persistent) return mpi_name(p.call.coll, Form::persistent);
  if (p.handle == MPI_REQUEST_NULL) return mpi_name(p.call.coll);  // a blocking call run by the engine
  return mpi_name(p.call.coll, Form::nonblocking);
}

// ---------------------------------------------------------------- the engine
// Everything below runs under Engine::mu.

// The schedule is over (err: how it failed): unpack, tell the request.
void settle(Engine& e, Pending& p, int err, const char* message) {
  auto it = std::find(e.flying.begin(), e.flying.end(), &p);
  if (it != e.flying.end()) {
    e.flying.erase(it);
    e.in_flight.fetch_sub(1, std::memory_order_acq_rel);
  }
  std::string msg;
  if (err != MPI_SUCCESS) msg = message;
  if (err == MPI_SUCCESS && p.transport) {
    if (int d = p.transport->deferred_error()) {  // truncated: the ranks' counts differ
      err = d;
      msg = "a receive was truncated: the ranks passed different counts";
    }
  }
  if (err == MPI_SUCCESS) {
    try {
      for (auto& f : p.pr.after) f();
    } catch (const std::exception& x) {
      err = MPI_ERR_INTERN;
      msg = x.what();
    }
  } else if (p.transport) {
    p.transport->reset();  // what the failed schedule left posted: cancelled
  }
  p.error = err;
  if (err != MPI_SUCCESS) p.message = cat(call_name(p), ": ", msg);
  if (err == MPI_ERR_INTERN)
    std::fprintf(stderr, "hetcoll: %s (a bug in hetcoll: please report it; HETCOLL_DISABLE=1 avoids it)\n",
                 p.message.c_str());
  p.finished = true;
  if (p.handle != MPI_REQUEST_NULL && !p.persistent) PMPI_Grequest_complete(p.handle);
}

void advance(Engine& e, Pending& p) {
  try {
    p.run.advance(p.done);
    p.done.clear();
    if (p.run.finished()) settle(e, p, MPI_SUCCESS, "");
  } catch (const MpiError& x) {
    settle(e, p, x.code(), x.what());
  } catch (const std::bad_alloc&) {
    settle(e, p, MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& x) {
    settle(e, p, MPI_ERR_INTERN, cat("internal error in hetcoll: ", x.what()).c_str());
  }
}

// Every schedule in flight, advanced by what has completed (no blocking).
// Returns whether any of their messages completed.
bool poll_locked(Engine& e) {
  bool moved = false;
  e.round = e.flying;
  for (Pending* p : e.round) {
    try {
      p->transport->poll(p->done);
    } catch (const MpiError& x) {
      settle(e, *p, x.code(), x.what());
      moved = true;
      continue;
    }
    if (!p->done.empty()) {
      moved = true;
      advance(e, *p);
    }
  }
  return moved;
}

constexpr int kProgressed = -1;  // a schedule's message completed
constexpr int kNothing = -2;     // nothing active to wait for

// Blocks until one message of a schedule in flight or one of the
// application's `natives` completes. Returns the index in `natives` of the
// one that completed (its handle updated, *status and *rc set), or
// kProgressed, or kNothing. Under MPI_THREAD_MULTIPLE it polls once and
// yields instead of blocking.
int block_once(Engine& e, EngineLock& lock, const std::vector<MPI_Request*>& natives,
               MPI_Status* status, int* rc) {
  *rc = MPI_SUCCESS;
  if (threads_multiple()) {
    // MPI_Testany, not MPI_Test: an inactive persistent request counts as
    // nothing to wait for, as in MPI_Waitany.
    bool natives_active = false;
    if (!natives.empty()) {
      e.all.clear();
      for (MPI_Request* r : natives) e.all.push_back(*r);
      int index = MPI_UNDEFINED, flag = 0;
      *rc = PMPI_Testany(int(e.all.size()), e.all.data(), &index, &flag, status);
      if (index != MPI_UNDEFINED) {
        *natives[size_t(index)] = e.all[size_t(index)];
        return index;
      }
      natives_active = !flag;
    }
    poll_locked(e);
    if (e.flying.empty() && !natives_active) return kNothing;
    e.polling_waiters.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    sched_yield();
    lock.lock();
    e.polling_waiters.fetch_sub(1, std::memory_order_relaxed);
    return kProgressed;
  }
  e.all.clear();
  e.owner.clear();
  for (Pending* p : e.flying) {
    const auto& rs = p->transport->requests();
    for (size_t k = 0; k < rs.size(); ++k) {
      e.all.push_back(rs[k]);
      e.owner.push_back({p, k});
    }
  }
  const size_t ours = e.all.size();
  for (MPI_Request* r : natives) e.all.push_back(*r);
  if (e.all.empty()) return kNothing;
  int index = MPI_UNDEFINED;
  MPI_Status s;
  int code;
  {
    WorldErrorsReturned returned;
    code = PMPI_Waitany(int(e.all.size()), e.all.data(), &index, &s);
  }
  if (index == MPI_UNDEFINED) {
    if (code != MPI_SUCCESS) {  // the wait itself failed: every schedule in flight with it
      e.round = e.flying;
      for (Pending* p : e.round) settle(e, *p, code, "MPI_Waitany failed");
      return kProgressed;
    }
    return kNothing;
  }
  if (size_t(index) >= ours) {
    const size_t j = size_t(index) - ours;
    *natives[j] = e.all[size_t(index)];
    if (status != MPI_STATUS_IGNORE) *status = s;
    *rc = code;
    return int(j);
  }
  Pending* p = e.owner[size_t(index)].first;
  try {
    p->transport->absorb(e.owner[size_t(index)].second, code, p->done);
  } catch (const MpiError& x) {
    settle(e, *p, x.code(), x.what());
    return kProgressed;
  }
  advance(e, *p);
  if (!kSmpi) poll_locked(e);  // whatever else has completed meanwhile
  return kProgressed;
}

// A wait that blocks on hetcoll's collectives, watched for hangs
// (watchdog.hpp): the report names the first collective still running and
// the messages it waits for. off() before a request is released (its
// memory and communicator's state may go).
class WatchedWait {
 public:
  void on(const Pending* p) {
    if (p == shown_ || !p || !hang_reports_on()) return;
    if (!call_) call_.emplace(call_name(*p), &p->st->name, false);
    call_->show(call_name(*p), &p->st->name, &p->log);
    shown_ = p;
  }
  void off() {
    if (!shown_) return;
    static const std::string kWhere = "its communicator";
    call_->show("a wait on non-blocking collectives", &kWhere, nullptr);
    shown_ = nullptr;
  }

 private:
  std::optional<WatchedCall> call_;
  const Pending* shown_ = nullptr;
};

Pending* find(Engine& e, MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  auto it = e.by_handle.find(r);
  return it == e.by_handle.end() ? nullptr : it->second;
}

// A request that counts in a completion: started (a persistent one may be inactive).
bool active(const Pending* p) { return p && p->active; }

// The request completes for the application: its status, then a
// non-blocking one is freed (its handle becomes MPI_REQUEST_NULL), a
// persistent one becomes inactive. Returns its error code.
int release(Engine& e, Pending* p, MPI_Request* handle, MPI_Status* status) {
  const int err = p->error;
  empty_status(status, err);
  p->active = false;
  if (p->persistent) return err;
  e.by_handle.erase(p->handle);
  e.live.fetch_sub(1, std::memory_order_acq_rel);
  PMPI_Request_free(&p->handle);  // the completed generalized request
  *handle = MPI_REQUEST_NULL;
  if (e.spare.size() < kSparePendings) {
    p->reuse();
    e.spare.push_back(p);
  } else {
    delete p;
  }
  return err;
}

// A failed request's error, for the handler of its communicator once the
// request is released: its state is held until then (the application may
// have freed the communicator, and the request held it last).
struct Failure {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState* st = nullptr;
  int code = MPI_SUCCESS;
};

Failure failure_of(const Pending& p, int code) {
  Failure f{p.comm, code == MPI_SUCCESS ? nullptr : p.st, code};
  if (f.st) hold_state(*f.st);
  return f;
}

int report(Failure& f) {
  if (f.code == MPI_SUCCESS) return MPI_SUCCESS;
  const int rc = raise_error(f.st, f.comm, f.code);
  if (f.st) release_state(*f.st);
  f.st = nullptr;
  return rc;
}

// The hetcoll requests of an array (ours[i]; skip[i]: already completed
// otherwise) complete for the application — each must be done or
// inactive. Their codes in `codes`; the first failure.
Failure release_all(Engine& e, const std::vector<Pending*>& ours, const std::vector<char>* skip, MPI_Request reqs[],
                    MPI_Status statuses[], std::vector<int>& codes) {
  Failure f;
  for (size_t i = 0; i < ours.size(); ++i) {
    Pending* p = ours[i];
    if (!p || (skip && (*skip)[i])) continue;
    if (!p->active) {
      empty_status(status_at(statuses, int(i)), MPI_SUCCESS);
      continue;
    }
    if (f.code == MPI_SUCCESS) f = failure_of(*p, p->error);
    codes[i] = release(e, p, &reqs[i], status_at(statuses, int(i)));
  }
  return f;
}

// `ours` on the hetcoll request behind `req`, the engine locked — or
// `native` when it is not one.
template <class Native, class Ours>
int on_request(MPI_Request req, Native&& native, Ours&& ours) {
  Engine& e = engine();
  EngineLock lock(e.mu);
  Pending* p = find(e, req);
  if (!p) {
    lock.unlock();
    return native();
  }
  return ours(e, lock, p);
}

// An erroneous use of a collective's request: said once, MPI_ERR_REQUEST
// raised on its communicator.
int erroneous(EngineLock& lock, const Pending* p, const char* what) {
  Failure f = failure_of(*p, MPI_ERR_REQUEST);
  const std::string line = cat(call_name(*p), ": ", what);
  lock.unlock();
  say_once(line, true);
  return report(f);
}

}  // namespace

Pending::~Pending() {
  {
    // A wait's hang report may be reading its log (watchdog.hpp): not
    // while it goes. (Rare: finished requests are kept for reuse.)
    std::lock_guard<std::mutex> lock(watch_lock());
    log.clear();
  }
  if (transport) transport->reset();
  transport.reset();
  release_holds();
}

void Pending::release_holds() {
  held.release();
  if (own_comm != MPI_COMM_NULL) {
    if (transport) transport.reset();  // it names own_comm
    PMPI_Comm_free(&own_comm);
  }
  if (st) {
    release_persistent_slot(*st, slot);
    release_state(*st);
  }
  slot = -1;
  st = nullptr;
}

std::unique_ptr<Pending> new_pending() {
  Engine& e = engine();
  {
    std::lock_guard<EngineMutex> lock(e.mu);
    if (!e.spare.empty()) {
      Pending* p = e.spare.back();
      e.spare.pop_back();
      return std::unique_ptr<Pending>(p);
    }
  }
  return std::make_unique<Pending>();
}

void recycle(Pending* p) {
  Engine& e = engine();
  p->reuse();
  std::lock_guard<EngineMutex> lock(e.mu);
  if (e.spare.size() < kSparePendings) {
    e.spare.push_back(p);
  } else {
    delete p;
  }
}

void Pending::reuse() {
  release_holds();
  call = Call{};
  comm = MPI_COMM_NULL;
  cc.reset();
  pr.after.clear();
  pr.in = nullptr;
  pr.out = nullptr;
  done.clear();
  handle = MPI_REQUEST_NULL;
  persistent = active = finished = false;
  error = MPI_SUCCESS;
  message.clear();
}

bool requests_live() { return engine().live.load(std::memory_order_acquire) > 0; }
bool collectives_in_flight() { return engine().in_flight.load(std::memory_order_acquire) > 0; }

void engine_add(Pending& p) {
  Engine& e = engine();
  {
    std::lock_guard<EngineMutex> lock(e.mu);
    e.flying.push_back(&p);
    e.in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (p.run.finished()) settle(e, p, MPI_SUCCESS, "");
  }
  progress_kick();
}

void engine_wait_for_tags(const CommState& st, int region) {
  Engine& e = engine();
  EngineLock lock(e.mu);
  for (;;) {
    bool clash = false;
    for (const Pending* q : e.flying) clash |= q->st == &st && q->region == region;
    if (!clash) return;
    MPI_Status s;
    int rc;
    if (block_once(e, lock, {}, &s, &rc) == kNothing) return;
  }
}

void engine_finish(Pending& p) {
  Engine& e = engine();
  EngineLock lock(e.mu);
  while (!p.finished) {
    MPI_Status s;
    int rc;
    if (block_once(e, lock, {}, &s, &rc) == kNothing && !p.finished)
      settle(e, p, MPI_ERR_INTERN, "internal error in hetcoll: a collective in flight with nothing to wait for");
  }
}

MPI_Request issue(std::unique_ptr<Pending>& p) {
  Engine& e = engine();
  std::lock_guard<EngineMutex> lock(e.mu);
  if (p->persistent) {
    // From rank 0 of MPI_COMM_SELF, not MPI_PROC_NULL: MPICH 4.0.2's
    // MPI_Start reads a persistent request's peer even for a collective
    // one, so a request object that once held a receive from MPI_PROC_NULL
    // makes the native persistent collective that reuses it never start.
    check_mpi(PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &p->handle), "MPI_Recv_init");
  } else {
    check_mpi(PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, &p->handle),
              "MPI_Grequest_start");
    if (p->finished) PMPI_Grequest_complete(p->handle);  // done before it had a handle
  }
  Pending* raw = p.release();
  e.by_handle[raw->handle] = raw;
  e.live.fetch_add(1, std::memory_order_acq_rel);
  return raw->handle;
}

void poll_collectives() {
  if (!collectives_in_flight()) return;
  Engine& e = engine();
  std::lock_guard<EngineMutex> lock(e.mu);
  poll_locked(e);
}

Poll progress_poll() {
  Engine& e = engine();
  if (e.polling_waiters.load(std::memory_order_relaxed) > 0) return Poll::stood_aside;
  if (!collectives_in_flight()) return Poll::idle;
  EngineLock lock(e.mu, std::try_to_lock);
  if (!lock.owns_lock()) return Poll::stood_aside;  // another thread is advancing them
  return poll_locked(e) ? Poll::moved : Poll::idle;
}

// ------------------------------------------------------------- completion

int wait_requests(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!requests_live() && !collectives_in_flight())
    return n == 1 ? PMPI_Wait(reqs, status_at(statuses, 0)) : PMPI_Waitall(n, reqs, statuses);
  Engine& e = engine();
  EngineLock lock(e.mu);
  if (n == 1) {  // MPI_Wait on a hetcoll request: nothing to allocate
    if (Pending* p = find(e, reqs[0])) {
      WatchedWait watched;
      if (p->active && !p->finished) watched.on(p);
      while (p->active && !p->finished) {
        MPI_Status s;
        int rc;
        if (block_once(e, lock, {}, &s, &rc) == kNothing && !p->finished)
          settle(e, *p, MPI_ERR_INTERN, "internal error in hetcoll: a collective in flight with nothing to wait for");
      }
      watched.off();
      if (!p->active) {
        empty_status(status_at(statuses, 0), MPI_SUCCESS);
        return MPI_SUCCESS;
      }
      Failure f = failure_of(*p, p->error);
      release(e, p, &reqs[0], status_at(statuses, 0));
      lock.unlock();
      return report(f);
    }
  }
  std::vector<Pending*> ours(static_cast<size_t>(n));
  std::vector<char> done(static_cast<size_t>(n), 0);
  std::vector<int> codes(static_cast<size_t>(n), MPI_SUCCESS);
  for (int i = 0; i < n; ++i) {
    ours[size_t(i)] = find(e, reqs[i]);
    if (reqs[i] == MPI_REQUEST_NULL) {
      done[size_t(i)] = 1;
      empty_status(status_at(statuses, i), MPI_SUCCESS);
    }
  }
  std::vector<MPI_Request*> natives;
  std::vector<int> native_at;
  WatchedWait watched;
  for (;;) {
    natives.clear();
    native_at.clear();
    const Pending* running = nullptr;
    for (int i = 0; i < n; ++i) {
      if (done[size_t(i)]) continue;
      if (Pending* p = ours[size_t(i)]) {
        if (!running && p->active && !p->finished) running = p;
      } else {
        natives.push_back(&reqs[i]);
        native_at.push_back(i);
      }
    }
    if (!running && natives.empty()) break;
    watched.on(running);
    MPI_Status s;
    int rc;
    const int j = block_once(e, lock, natives, &s, &rc);
    if (j >= 0) {
      const int i = native_at[size_t(j)];
      done[size_t(i)] = 1;
      codes[size_t(i)] = rc;
      if (status_at(statuses, i) != MPI_STATUS_IGNORE) statuses[i] = s;
    } else if (j == kNothing) {
      for (int i : native_at) {  // inactive persistent requests of the application
        done[size_t(i)] = 1;
        empty_status(status_at(statuses, i), MPI_SUCCESS);
      }
    }
  }
  watched.off();
  Failure f = release_all(e, ours, &done, reqs, statuses, codes);
  lock.unlock();
  int first = MPI_SUCCESS;
  for (int c : codes)
    if (c != MPI_SUCCESS) {
      first = c;
      break;
    }
  if (first == MPI_SUCCESS) return MPI_SUCCESS;
  report(f);
  if (n == 1) return first;
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < n; ++i) statuses[i].MPI_ERROR = codes[size_t(i)];
  return MPI_ERR_IN_STATUS;
}

int test_requests(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (!requests_live() && !collectives_in_flight())
    return n == 1 ? PMPI_Test(reqs, flag, status_at(statuses, 0)) : PMPI_Testall(n, reqs, flag, statuses);
  Engine& e = engine();
  EngineLock lock(e.mu);
  poll_locked(e);
  std::vector<Pending*> ours(static_cast<size_t>(n));
  std::vector<MPI_Request> natives;
  std::vector<int> native_at;
  for (int i = 0; i < n; ++i) {
    Pending* p = ours[size_t(i)] = find(e, reqs[i]);
    if (p && p->active && !p->finished) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    if (!p) {
      natives.push_back(reqs[i]);
      native_at.push_back(i);
    }
  }
  // Every hetcoll request is done: the rest is the native library's answer.
  std::vector<MPI_Status> ns(natives.size());
  int rc = MPI_SUCCESS;
  *flag = 1;
  if (!natives.empty()) {
    rc = natives.size() == 1 ? PMPI_Test(&natives[0], flag, &ns[0])
                             : PMPI_Testall(int(natives.size()), natives.data(), flag, ns.data());
    if (!*flag) return rc;
    for (size_t j = 0; j < natives.size(); ++j) {
      reqs[native_at[j]] = natives[j];
      if (status_at(statuses, native_at[j]) != MPI_STATUS_IGNORE) statuses[native_at[j]] = ns[j];
    }
  }
  std::vector<int> codes(static_cast<size_t>(n), MPI_SUCCESS);
  Failure f = release_all(e, ours, nullptr, reqs, statuses, codes);
  lock.unlock();
  if (f.code == MPI_SUCCESS) return rc;
  report(f);
  if (n == 1) return f.code;
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < n; ++i)
      if (ours[size_t(i)]) statuses[i].MPI_ERROR = codes[size_t(i)];
  return MPI_ERR_IN_STATUS;
}

namespace {
// Waitany / Testany: exactly one request completes, or none is active.
int any(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status, bool block) {
  Engine& e = engine();
  EngineLock lock(e.mu);
  std::vector<MPI_Request*> natives;
  std::vector<int> native_at;
  std::vector<MPI_Request> copy;
  WatchedWait watched;
  for (bool first = true;; first = false) {
    if (!block || (first && !kSmpi)) poll_locked(e);
    bool waiting = false;
    const Pending* running = nullptr;
    natives.clear();
    native_at.clear();
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      Pending* p = find(e, reqs[i]);
      if (!p) {
        natives.push_back(&reqs[i]);
        native_at.push_back(i);
      } else if (active(p) && p->finished) {
        watched.off();
        Failure f = failure_of(*p, p->error);
        release(e, p, &reqs[i], status);
        *index = i;
        *flag = 1;
        lock.unlock();
        return report(f);
      } else if (active(p)) {
        waiting = true;
        if (!running) running = p;
      }
    }
    if (!block) {
      // The native requests' own answer.
      copy.clear();
      for (MPI_Request* r : natives) copy.push_back(*r);
      int j = MPI_UNDEFINED, f = 0, rc = MPI_SUCCESS;
      if (!copy.empty()) rc = PMPI_Testany(int(copy.size()), copy.data(), &j, &f, status);
      if (j != MPI_UNDEFINED) {
        *natives[size_t(j)] = copy[size_t(j)];
        *index = native_at[size_t(j)];
        *flag = 1;
        return rc;
      }
      if (!waiting && (copy.empty() || f)) {  // nothing active at all
        *index = MPI_UNDEFINED;
        *flag = 1;
        empty_status(status, MPI_SUCCESS);
        return rc;
      }
      *index = MPI_UNDEFINED;
      *flag = 0;
      return rc;
    }
    int rc;
    watched.on(running);
    const int j = block_once(e, lock, natives, status, &rc);
    if (j >= 0) {
      *index = native_at[size_t(j)];
      *flag = 1;
      return rc;
    }
    if (j == kNothing && !waiting) {
      *index = MPI_UNDEFINED;
      *flag = 1;
      empty_status(status, MPI_SUCCESS);
      return MPI_SUCCESS;
    }
  }
}

// Waitsome / Testsome: every request that has completed, at least one when
// blocking, or MPI_UNDEFINED when none is active.
int some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[], bool block) {
  Engine& e = engine();
  EngineLock lock(e.mu);
  std::vector<MPI_Request> copy;
  std::vector<int> native_at, idx;
  std::vector<MPI_Status> ns;
  std::vector<MPI_Request*> natives;
  Failure f;
  WatchedWait watched;
  for (bool first = true;; first = false) {
    if (!block || (first && !kSmpi)) poll_locked(e);
    int count = 0;
    bool waiting = false;
    const Pending* running = nullptr;
    copy.clear();
    native_at.clear();
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      Pending* p = find(e, reqs[i]);
      if (!p) {
        copy.push_back(reqs[i]);
        native_at.push_back(i);
      } else if (active(p) && p->finished) {
        watched.off();
        if (f.code == MPI_SUCCESS) f = failure_of(*p, p->error);
        release(e, p, &reqs[i], status_at(statuses, count));
        indices[count++] = i;
      } else if (active(p)) {
        waiting = true;
        if (!running) running = p;
      }
    }
    int rc = MPI_SUCCESS, got = MPI_UNDEFINED;
    if (!copy.empty() && (!block || count > 0 || !kSmpi)) {
      idx.resize(copy.size());
      ns.resize(copy.size());
      rc = PMPI_Testsome(int(copy.size()), copy.data(), &got, idx.data(), ns.data());
      if (got != MPI_UNDEFINED)
        for (int k = 0; k < got; ++k) {
          const int i = native_at[size_t(idx[size_t(k)])];
          reqs[i] = copy[size_t(idx[size_t(k)])];
          if (statuses != MPI_STATUSES_IGNORE) statuses[count] = ns[size_t(k)];
          indices[count++] = i;
        }
    }
    const bool natives_inactive = copy.empty() || got == MPI_UNDEFINED;
    if (count > 0 || !block || (!waiting && natives_inactive && !copy.empty())) {
      *outcount = count > 0 ? count : (!waiting && natives_inactive) ? MPI_UNDEFINED : 0;
      lock.unlock();
      if (f.code != MPI_SUCCESS) {
        report(f);
        return MPI_ERR_IN_STATUS;
      }
      return rc;
    }
    if (!waiting && copy.empty()) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    natives.clear();
    for (int i : native_at) natives.push_back(&reqs[i]);
    MPI_Status s;
    int brc;
    watched.on(running);
    const int j = block_once(e, lock, natives, &s, &brc);
    if (j >= 0) {
      const int i = native_at[size_t(j)];
      if (statuses != MPI_STATUSES_IGNORE) statuses[0] = s;
      indices[0] = i;
      *outcount = 1;
      return brc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_IN_STATUS;
    }
    if (j == kNothing && !waiting) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
  }
}
}  // namespace

int wait_any(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (!requests_live() && !collectives_in_flight()) return PMPI_Waitany(n, reqs, index, status);
  int flag = 0;
  return any(n, reqs, index, &flag, status, true);
}

int test_any(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (!requests_live() && !collectives_in_flight()) return PMPI_Testany(n, reqs, index, flag, status);
  return any(n, reqs, index, flag, status, false);
}

int wait_some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!requests_live() && !collectives_in_flight()) return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
  return some(n, reqs, outcount, indices, statuses, true);
}

int test_some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!requests_live() && !collectives_in_flight()) return PMPI_Testsome(n, reqs, outcount, indices, statuses);
  return some(n, reqs, outcount, indices, statuses, false);
}

int request_get_status(MPI_Request req, int* flag, MPI_Status* status) {
  if (!requests_live() && !collectives_in_flight()) return PMPI_Request_get_status(req, flag, status);
  poll_collectives();
  return on_request(
      req, [&] { return PMPI_Request_get_status(req, flag, status); },
      [&](Engine&, EngineLock&, Pending* p) -> int {
        *flag = !p->active || p->finished;
        if (*flag) empty_status(status, p->active ? p->error : MPI_SUCCESS);
        return MPI_SUCCESS;
      });
}

int request_free(MPI_Request* req) {
  if (!requests_live()) return PMPI_Request_free(req);
  return on_request(
      *req, [&] { return PMPI_Request_free(req); },
      [&](Engine& e, EngineLock& lock, Pending* p) -> int {
        if (p->active && !p->finished)
          return erroneous(lock, p, "MPI_Request_free on a collective still in progress is erroneous "
                                    "(MPI 4.0, 6.12): complete it first");
        e.by_handle.erase(p->handle);
        e.live.fetch_sub(1, std::memory_order_acq_rel);
        int rc = MPI_SUCCESS;
        if (p->persistent) {
          rc = PMPI_Request_free(&p->handle);  // the inactive handle
        } else {
          PMPI_Wait(&p->handle, MPI_STATUS_IGNORE);  // completed: the generalized request goes
        }
        delete p;
        *req = MPI_REQUEST_NULL;
        return rc;
      });
}

int cancel(MPI_Request* req) {
  if (!requests_live()) return PMPI_Cancel(req);
  return on_request(
      *req, [&] { return PMPI_Cancel(req); },
      [&](Engine&, EngineLock& lock, Pending* p) -> int {
        return erroneous(lock, p, "MPI_Cancel on a collective's request is erroneous (MPI 4.0, 6.12): ignored");
      });
}

int start(MPI_Request* req) {
  if (!requests_live()) return PMPI_Start(req);
  Pending* p = nullptr;  // a persistent collective of hetcoll's, inactive
  const int rc = on_request(
      *req, [&] { return PMPI_Start(req); },
      [&](Engine&, EngineLock& lock, Pending* q) -> int {
        if (q->active) return erroneous(lock, q, "MPI_Start on a persistent collective still active is erroneous");
        p = q;
        return MPI_SUCCESS;
      });
  if (!p) return rc;
  const Status s = restart(*p);  // without the engine's lock: it launches
  if (s == Status::ok) return MPI_SUCCESS;
  return raise_error(p->st, p->comm, last_error().mpi_code == MPI_SUCCESS ? MPI_ERR_INTERN : last_error().mpi_code);
}

int start_all(int n, MPI_Request reqs[]) {
  if (!requests_live()) return PMPI_Startall(n, reqs);
  for (int i = 0; i < n; ++i)
    if (int rc = start(&reqs[i]); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}

int raise_on(MPI_Comm comm, int code) {
  if (code == MPI_SUCCESS || comm == MPI_COMM_NULL) return code;
  // MPI_ERRORS_RETURN is answered here (SimGrid 3.32 crashes calling it
  // through MPI_Comm_call_errhandler); any other handler is called.
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN) {
    PMPI_Errhandler_free(&eh);
    return code;
  }
  if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace hetcoll::mpi

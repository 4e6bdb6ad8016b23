#include "interpose/engine.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

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

struct Engine {
  EngineMutex mu;
  std::vector<Pending*> flying;  // schedules running
  std::atomic<size_t> in_flight{0};
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

void advance(Engine& e, Pending& p);  // under the lock

}  // namespace

void EngineMutex::lock() {
  if (threads_multiple()) m_.lock();
}
void EngineMutex::unlock() {
  if (threads_multiple()) m_.unlock();
}
bool EngineMutex::try_lock() { return !threads_multiple() || m_.try_lock(); }
EngineMutex& engine_mutex() { return engine().mu; }

const char* call_name(const Pending& p) {
  if (p.persistent) return mpi_name(p.call.coll, Form::persistent);
  if (p.handle == MPI_REQUEST_NULL) return mpi_name(p.call.coll);  // a blocking call run by the engine
  return mpi_name(p.call.coll, Form::nonblocking);
}

// ---------------------------------------------------------------- the engine
// Everything below runs under Engine::mu.

// The schedule is over (err: how it failed): unpack, tell the request.
void settle(Pending& p, int err, const char* message) {
  Engine& e = engine();
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

namespace {

void advance(Engine&, Pending& p) {
  try {
    p.run.advance(p.done);
    p.done.clear();
    if (p.run.finished()) settle(p, MPI_SUCCESS, "");
  } catch (const MpiError& x) {
    settle(p, x.code(), x.what());
  } catch (const std::bad_alloc&) {
    settle(p, MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& x) {
    settle(p, MPI_ERR_INTERN, cat("internal error in hetcoll: ", x.what()).c_str());
  }
}

}  // namespace

bool poll_locked() {
  Engine& e = engine();
  bool moved = false;
  e.round = e.flying;
  for (Pending* p : e.round) {
    try {
      p->transport->poll(p->done);
    } catch (const MpiError& x) {
      settle(*p, x.code(), x.what());
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

int block_once(EngineLock& lock, const std::vector<MPI_Request*>& natives, MPI_Status* status, int* rc) {
  Engine& e = engine();
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
    poll_locked();
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
      for (Pending* p : e.round) settle(*p, code, "MPI_Waitany failed");
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
    settle(*p, x.code(), x.what());
    return kProgressed;
  }
  advance(e, *p);
  if (!kSmpi) poll_locked();  // whatever else has completed meanwhile
  return kProgressed;
}

void finish_locked(EngineLock& lock, Pending& p) {
  while (!p.finished) {
    MPI_Status s;
    int rc;
    if (block_once(lock, {}, &s, &rc) == kNothing && !p.finished)
      settle(p, MPI_ERR_INTERN, "internal error in hetcoll: a collective in flight with nothing to wait for");
  }
}

void recycle_locked(Pending* p) {
  Engine& e = engine();
  if (e.spare.size() < kSparePendings) {
    p->reuse();
    e.spare.push_back(p);
  } else {
    delete p;
  }
}

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

bool collectives_in_flight() { return engine().in_flight.load(std::memory_order_acquire) > 0; }

void engine_add(Pending& p) {
  Engine& e = engine();
  {
    std::lock_guard<EngineMutex> lock(e.mu);
    e.flying.push_back(&p);
    e.in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (p.run.finished()) settle(p, MPI_SUCCESS, "");
  }
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
    if (block_once(lock, {}, &s, &rc) == kNothing) return;
  }
}

void engine_finish(Pending& p) {
  EngineLock lock(engine_mutex());
  finish_locked(lock, p);
}

int wait_native(MPI_Request* r) {
  if (!collectives_in_flight()) return PMPI_Wait(r, MPI_STATUS_IGNORE);
  EngineLock lock(engine_mutex());
  const std::vector<MPI_Request*> natives{r};
  for (;;) {
    MPI_Status s;
    int rc;
    const int j = block_once(lock, natives, &s, &rc);
    if (j == 0) return rc;
    if (j == kNothing) return MPI_SUCCESS;  // nothing active: the request was inactive
  }
}

void poll_collectives() {
  if (!collectives_in_flight()) return;
  Engine& e = engine();
  std::lock_guard<EngineMutex> lock(e.mu);
  poll_locked();
}

Poll progress_poll() {
  Engine& e = engine();
  if (e.polling_waiters.load(std::memory_order_relaxed) > 0) return Poll::stood_aside;
  if (!collectives_in_flight()) return Poll::idle;
  EngineLock lock(e.mu, std::try_to_lock);
  if (!lock.owns_lock()) return Poll::stood_aside;  // another thread is advancing them
  return poll_locked() ? Poll::moved : Poll::idle;
}

}  // namespace hetcoll::mpi

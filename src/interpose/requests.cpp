#include "interpose/requests.hpp"

#include <optional>
#include <unordered_map>

#include "interpose/call_path.hpp"
#include "interpose/runtime.hpp"
#include "interpose/watchdog.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {

// The application's hetcoll requests, by handle: under the engine's lock.
struct Handles {
  std::unordered_map<MPI_Request, Pending*> by_handle;
  std::atomic<size_t> live{0};
};

Handles& handles() {
  static Handles* h = new Handles;  // never destroyed: requests may outlive static destructors
  return *h;
}

// Any hetcoll request alive: the fast path of every function here.
bool requests_live() { return handles().live.load(std::memory_order_acquire) > 0; }

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

Pending* find(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  auto& by_handle = handles().by_handle;
  auto it = by_handle.find(r);
  return it == by_handle.end() ? nullptr : it->second;
}

// A request that counts in a completion: started (a persistent one may be inactive).
bool active(const Pending* p) { return p && p->active; }

// The request completes for the application: its status, then a
// non-blocking one is freed (its handle becomes MPI_REQUEST_NULL), a
// persistent one becomes inactive. Returns its error code.
int release(Pending* p, MPI_Request* handle, MPI_Status* status) {
  const int err = p->error;
  empty_status(status, err);
  p->active = false;
  if (p->persistent) return err;
  handles().by_handle.erase(p->handle);
  handles().live.fetch_sub(1, std::memory_order_acq_rel);
  PMPI_Request_free(&p->handle);  // the completed generalized request
  *handle = MPI_REQUEST_NULL;
  recycle_locked(p);
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
Failure release_all(const std::vector<Pending*>& ours, const std::vector<char>* skip, MPI_Request reqs[],
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
    codes[i] = release(p, &reqs[i], status_at(statuses, int(i)));
  }
  return f;
}

// `ours` on the hetcoll request behind `req`, the engine locked — or
// `native` when it is not one.
template <class Native, class Ours>
int on_request(MPI_Request req, Native&& native, Ours&& ours) {
  EngineLock lock(engine_mutex());
  Pending* p = find(req);
  if (!p) {
    lock.unlock();
    return native();
  }
  return ours(lock, p);
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

MPI_Request issue(std::unique_ptr<Pending>& p) {
  std::lock_guard<EngineMutex> lock(engine_mutex());
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
  handles().by_handle[raw->handle] = raw;
  handles().live.fetch_add(1, std::memory_order_acq_rel);
  return raw->handle;
}

int wait_requests(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!requests_live() && !collectives_in_flight())
    return n == 1 ? PMPI_Wait(reqs, status_at(statuses, 0)) : PMPI_Waitall(n, reqs, statuses);
  EngineLock lock(engine_mutex());
  if (n == 1) {  // MPI_Wait on a hetcoll request: nothing to allocate
    if (Pending* p = find(reqs[0])) {
      WatchedWait watched;
      if (p->active && !p->finished) watched.on(p);
      if (p->active) finish_locked(lock, *p);
      watched.off();
      if (!p->active) {
        empty_status(status_at(statuses, 0), MPI_SUCCESS);
        return MPI_SUCCESS;
      }
      Failure f = failure_of(*p, p->error);
      release(p, &reqs[0], status_at(statuses, 0));
      lock.unlock();
      return report(f);
    }
  }
  std::vector<Pending*> ours(static_cast<size_t>(n));
  std::vector<char> done(static_cast<size_t>(n), 0);
  std::vector<int> codes(static_cast<size_t>(n), MPI_SUCCESS);
  for (int i = 0; i < n; ++i) {
    ours[size_t(i)] = find(reqs[i]);
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
    const int j = block_once(lock, natives, &s, &rc);
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
  Failure f = release_all(ours, &done, reqs, statuses, codes);
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
  EngineLock lock(engine_mutex());
  poll_locked();
  std::vector<Pending*> ours(static_cast<size_t>(n));
  std::vector<MPI_Request> natives;
  std::vector<int> native_at;
  for (int i = 0; i < n; ++i) {
    Pending* p = ours[size_t(i)] = find(reqs[i]);
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
  Failure f = release_all(ours, nullptr, reqs, statuses, codes);
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
  EngineLock lock(engine_mutex());
  std::vector<MPI_Request*> natives;
  std::vector<int> native_at;
  std::vector<MPI_Request> copy;
  WatchedWait watched;
  for (bool first = true;; first = false) {
    if (!block || (first && !kSmpi)) poll_locked();
    bool waiting = false;
    const Pending* running = nullptr;
    natives.clear();
    native_at.clear();
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      Pending* p = find(reqs[i]);
      if (!p) {
        natives.push_back(&reqs[i]);
        native_at.push_back(i);
      } else if (active(p) && p->finished) {
        watched.off();
        Failure f = failure_of(*p, p->error);
        release(p, &reqs[i], status);
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
    const int j = block_once(lock, natives, status, &rc);
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
  EngineLock lock(engine_mutex());
  std::vector<MPI_Request> copy;
  std::vector<int> native_at, idx;
  std::vector<MPI_Status> ns;
  std::vector<MPI_Request*> natives;
  Failure f;
  WatchedWait watched;
  for (bool first = true;; first = false) {
    if (!block || (first && !kSmpi)) poll_locked();
    int count = 0;
    bool waiting = false;
    const Pending* running = nullptr;
    copy.clear();
    native_at.clear();
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      Pending* p = find(reqs[i]);
      if (!p) {
        copy.push_back(reqs[i]);
        native_at.push_back(i);
      } else if (active(p) && p->finished) {
        watched.off();
        if (f.code == MPI_SUCCESS) f = failure_of(*p, p->error);
        release(p, &reqs[i], status_at(statuses, count));
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
    const int j = block_once(lock, natives, &s, &brc);
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
      [&](EngineLock&, Pending* p) -> int {
        *flag = !p->active || p->finished;
        if (*flag) empty_status(status, p->active ? p->error : MPI_SUCCESS);
        return MPI_SUCCESS;
      });
}

int request_free(MPI_Request* req) {
  if (!requests_live()) return PMPI_Request_free(req);
  return on_request(
      *req, [&] { return PMPI_Request_free(req); },
      [&](EngineLock& lock, Pending* p) -> int {
        if (p->active && !p->finished)
          return erroneous(lock, p, "MPI_Request_free on a collective still in progress is erroneous "
                                    "(MPI 4.0, 6.12): complete it first");
        handles().by_handle.erase(p->handle);
        handles().live.fetch_sub(1, std::memory_order_acq_rel);
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
      [&](EngineLock& lock, Pending* p) -> int {
        return erroneous(lock, p, "MPI_Cancel on a collective's request is erroneous (MPI 4.0, 6.12): ignored");
      });
}

int start(MPI_Request* req) {
  if (!requests_live()) return PMPI_Start(req);
  Pending* p = nullptr;  // a persistent collective of hetcoll's, inactive
  const int rc = on_request(
      *req, [&] { return PMPI_Start(req); },
      [&](EngineLock& lock, Pending* q) -> int {
        if (q->active) return erroneous(lock, q, "MPI_Start on a persistent collective still active is erroneous");
        p = q;
        return MPI_SUCCESS;
      });
  if (!p) return rc;
  const Status s = start_persistent(*p);  // without the engine's lock: it launches
  if (s == Status::ok) return MPI_SUCCESS;
  return raise_error(p->st, p->comm, last_error().mpi_code == MPI_SUCCESS ? MPI_ERR_INTERN : last_error().mpi_code);
}

int start_all(int n, MPI_Request reqs[]) {
  if (!requests_live()) return PMPI_Startall(n, reqs);
  for (int i = 0; i < n; ++i)
    if (int rc = start(&reqs[i]); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}

}  // namespace hetcoll::mpi

#include "interpose/tls.hpp"
#include "interpose/comm_state.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "interpose/errors.hpp"
#include "interpose/runtime.hpp"
#include "interpose/watchdog.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {
std::mutex& holds_lock() {
  static std::mutex mu;
  return mu;
}
// Bumped when any communicator state is freed: a handle seen before may
// now name another communicator.
std::atomic<uint64_t> g_states_freed{0};

void free_state(CommState* st) {
  if (st->dup != MPI_COMM_NULL) PMPI_Comm_free(&st->dup);
  if (st->orphan_handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&st->orphan_handler);
  delete st;
}

int delete_state(MPI_Comm comm, int, void* value, void*) {
  auto* st = static_cast<CommState*>(value);
  std::lock_guard<std::mutex> lock(watch_lock());  // the watchdog may be reading st->name
  g_states_freed.fetch_add(1, std::memory_order_acq_rel);
  st->transport.reset();
  std::lock_guard<std::mutex> hold(holds_lock());
  if (st->holds > 0) {
    // Collectives in flight on it still post messages on the duplicate:
    // the last request that uses it frees both (release_state). Their
    // errors go to the handler the communicator has now.
    st->orphaned = true;
    if (PMPI_Comm_get_errhandler(comm, &st->orphan_handler) != MPI_SUCCESS)
      st->orphan_handler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
  }
  free_state(st);
  return MPI_SUCCESS;
}

int keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    check_mpi(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &k, nullptr), "MPI_Comm_create_keyval");
    return k;
  }();
  return key;
}

struct StateMemo {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState* state = nullptr;
  uint64_t freed = 0;
};
HETCOLL_TLS StateMemo t_memo;

}  // namespace

void attach_state(MPI_Comm comm, CommState* st) {
  check_mpi(PMPI_Comm_set_attr(comm, keyval(), st), "MPI_Comm_set_attr");
}

CommState* find_state(MPI_Comm comm) {
  const uint64_t freed = g_states_freed.load(std::memory_order_acquire);
  if (t_memo.state && t_memo.comm == comm && t_memo.freed == freed) return t_memo.state;
  void* value = nullptr;
  int flag = 0;
  check_mpi(PMPI_Comm_get_attr(comm, keyval(), &value, &flag), "MPI_Comm_get_attr");
  if (!flag) return nullptr;
  t_memo = {comm, static_cast<CommState*>(value), freed};
  return t_memo.state;
}

void hold_state(CommState& st) {
  std::lock_guard<std::mutex> lock(holds_lock());
  ++st.holds;
}

void release_state(CommState& st) {
  bool gone = false;
  {
    std::lock_guard<std::mutex> lock(holds_lock());
    gone = --st.holds == 0 && st.orphaned;
  }
  if (gone) free_state(&st);
}

void release_persistent_slot(CommState& st, int slot) {
  if (slot >= 0 && slot < 64) st.persistent_slots.fetch_and(~(uint64_t(1) << slot), std::memory_order_acq_rel);
}

int raise_error(CommState* st, MPI_Comm comm, int code) {
  if (code == MPI_SUCCESS) return code;
  bool orphaned = false;
  if (st) {
    std::lock_guard<std::mutex> lock(holds_lock());
    orphaned = st->orphaned;
  }
  if (!orphaned) return raise_on(comm, code);
  // The application's handle is gone: its handler, called on the duplicate
  // (the same group), which returns errors again afterwards.
  const MPI_Errhandler eh = st->orphan_handler;
  if (eh == MPI_ERRHANDLER_NULL || eh == MPI_ERRORS_RETURN) return code;
  PMPI_Comm_set_errhandler(st->dup, eh);
  PMPI_Comm_call_errhandler(st->dup, code);
  PMPI_Comm_set_errhandler(st->dup, MPI_ERRORS_RETURN);
  return code;
}

}  // namespace hetcoll::mpi

// Reports a collective that waits too long (HETCOLL_HANG_TIMEOUT seconds):
// which collective, on which communicator, and which messages it still
// waits for — instead of hanging silently. A stuck collective is almost
// always a user's mismatch (ranks passing different counts, roots or
// operations, or a rank that never makes the call); the report says so.
//
// Each thread that runs collectives has a slot; a call marks its slot busy
// (a counter and a flag, no clock on the hot path) and the transport logs
// its outstanding messages there (exec/wait_log.hpp). One background thread,
// started with the first collective when the timeout is not 0, looks at the
// slots every fraction of the timeout and prints one report per stuck call.
// It only reads; it never calls MPI.
#pragma once
#include <mutex>
#include <string>

#include "exec/wait_log.hpp"

namespace hetcoll::mpi {

struct WatchSlot;

// While a WatchedCall lives, its thread is in a collective. what:
// "MPI_Allreduce" (a string that lives forever); where: e.g. "communicator
// MPI_COMM_WORLD (rank 2 of 4)" — it must live while the call does (the
// watchdog copies it only under watch_lock(), which freeing a
// communicator's state takes first); native: the call was handed to the
// native MPI. `log` is what the transport records into (null when hang
// reports are off).
class WatchedCall {
 public:
  WatchedCall(const char* what, const std::string* where, bool native);
  ~WatchedCall();
  // The call goes on under another description (a new communicator has its name).
  void rename(const std::string* where);
  // A wait on non-blocking collectives: the report names the collective
  // `what` on `where` and the messages `shown` records (null: this call's
  // own `log`). Whoever frees `shown` or `where` calls show() again (or
  // ends the WatchedCall) first, and takes watch_lock() to free it.
  void show(const char* what, const std::string* where, const WaitLog* shown);
  WaitLog* log = nullptr;
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

 private:
  WatchSlot* slot_ = nullptr;
};

// Held while the watchdog reads the descriptions of calls; whoever frees
// what a description points to takes it first.
std::mutex& watch_lock();

// Hang reports on (HETCOLL_HANG_TIMEOUT > 0, not SimGrid)?
bool hang_reports_on();

}  // namespace hetcoll::mpi

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
#include <string>

#include "exec/wait_log.hpp"

namespace hetcoll::mpi {

class CallWatch {
 public:
  // what: "MPI_Allreduce" (a string that lives forever); where: e.g.
  // "communicator MPI_COMM_WORLD (rank 2 of 4)" (copied); native: the call
  // was handed to the native MPI. Returns the log the transport should
  // record into (null when hang reports are off).
  static WaitLog* begin(const char* what, const std::string& where, bool native);
  static void end();
};

// RAII form of CallWatch::begin/end.
struct WatchedCall {
  WaitLog* log;
  WatchedCall(const char* what, const std::string& where, bool native) : log(CallWatch::begin(what, where, native)) {}
  ~WatchedCall() { CallWatch::end(); }
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;
};

}  // namespace hetcoll::mpi

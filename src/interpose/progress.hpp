// The progress thread: advances hetcoll's collectives in flight
// (engine.hpp) while the application is not in MPI, or is blocked in a
// native collective that would not advance them.
//
// Two uses, one thread per process (started when first needed, stopped in
// MPI_Finalize), and only where the MPI library gives MPI_THREAD_MULTIPLE:
//   - HETCOLL_PROGRESS_THREAD=1: it polls while any collective is in
//     flight — every 20 us while messages complete, backing off to 640 us
//     while none does; asleep otherwise, and standing aside while the
//     application itself waits and polls — so a collective moves while the
//     rank computes; hetcoll then asks MPI_Init for MPI_THREAD_MULTIPLE;
//   - always: while the rank is blocked in a collective hetcoll left to the
//     native library (ProgressWhileBlocked), since another rank may wait on
//     this one's collectives in flight before it joins that call.
// Without MPI_THREAD_MULTIPLE there is no thread: the collectives advance
// in the application's MPI calls (every wait and test, blocking
// point-to-point, hetcoll's collectives), and a rank blocked in a native
// collective does not advance them until it returns.
#pragma once

namespace hetcoll::mpi {

// MPI_Init / MPI_Init_thread: the thread level to ask the library for.
int thread_level_to_request(int required);
// A collective was launched: the thread (if continuous) wakes up.
void progress_kick();
// MPI_Finalize: the thread stops (before the library does).
void progress_stop();

// While it lives, the thread polls (if it can run at all) — around a
// native blocking call made with collectives in flight.
class ProgressWhileBlocked {
 public:
  ProgressWhileBlocked();
  ~ProgressWhileBlocked();
  ProgressWhileBlocked(const ProgressWhileBlocked&) = delete;
  ProgressWhileBlocked& operator=(const ProgressWhileBlocked&) = delete;

 private:
  bool on_ = false;
};

}  // namespace hetcoll::mpi

#include "interpose/progress.hpp"

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/settings.hpp"
#include "interpose/engine.hpp"
#include "interpose/runtime.hpp"

namespace hetcoll::mpi {

namespace {

// Between polls while collectives are in flight: 20 us after a poll that
// moved something, doubling while polls find nothing, up to 640 us. A
// thread that polled every 20 us whatever happened took the cores from the
// ranks that computed or sent: on 11 ranks over 2 cores a 64 KiB
// MPI_Iallreduce took 20x longer than without the thread (docs/results.md).
constexpr long kMinPeriodNs = 20000;
constexpr long kMaxPeriodNs = 640000;

struct Thread {
  std::mutex mu;
  std::condition_variable cv;
  std::thread worker;
  bool started = false, stop = false;
  int assists = 0;  // ProgressWhileBlocked alive
};

Thread& thread() {
  static Thread* t = new Thread;  // never destroyed: MPI_Finalize stops it
  return *t;
}

// MPI may be called from another thread: MPI_THREAD_MULTIPLE, between
// MPI_Init and MPI_Finalize.
bool may_run() {
#ifdef HETCOLL_SMPI
  return false;  // SimGrid's ranks are not threads of their own
#else
  int initialized = 0, finalized = 0, level = MPI_THREAD_SINGLE;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return false;
  if (PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return false;
  return PMPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
#endif
}

bool wanted(const Thread& t) { return t.assists > 0 || (runtime().settings.progress_thread && collectives_in_flight()); }

void loop() {
  Thread& t = thread();
  std::unique_lock<std::mutex> lock(t.mu);
  long period_ns = kMinPeriodNs;
  for (;;) {
    if (!wanted(t)) period_ns = kMinPeriodNs;  // the next collective starts quick
    t.cv.wait(lock, [&] { return t.stop || wanted(t); });
    if (t.stop) return;
    lock.unlock();
    period_ns = progress_poll() == Poll::moved ? kMinPeriodNs : std::min(2 * period_ns, kMaxPeriodNs);
    const timespec period{0, period_ns};
    nanosleep(&period, nullptr);
    lock.lock();
  }
}

// Starts the thread once, if MPI allows it. Under Thread::mu.
bool ensure_started(Thread& t) {
  if (t.started) return true;
  if (t.stop || !may_run()) return false;
  t.worker = std::thread(loop);
  t.started = true;
  return true;
}

}  // namespace

int thread_level_to_request(int required) {
#ifdef HETCOLL_SMPI
  return required;
#else
  // The setting alone, as the configuration reads it (config/settings.hpp):
  // the configuration itself (the profile, the tables) is read at the first
  // collective, not here.
  std::vector<std::string> problems;  // said by the configuration when it is read
  return read_settings(problems).progress_thread ? MPI_THREAD_MULTIPLE : required;
#endif
}

void progress_kick() {
  if (!runtime().settings.progress_thread) return;
  Thread& t = thread();
  std::lock_guard<std::mutex> lock(t.mu);
  if (ensure_started(t)) t.cv.notify_one();
}

void progress_stop() {
  Thread& t = thread();
  std::unique_lock<std::mutex> lock(t.mu);
  t.stop = true;
  if (!t.started) return;
  t.cv.notify_one();
  lock.unlock();
  t.worker.join();
}

ProgressWhileBlocked::ProgressWhileBlocked() {
  if (!collectives_in_flight()) return;
  Thread& t = thread();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!ensure_started(t)) return;
  on_ = true;
  ++t.assists;
  t.cv.notify_one();
}

ProgressWhileBlocked::~ProgressWhileBlocked() {
  if (!on_) return;
  Thread& t = thread();
  std::lock_guard<std::mutex> lock(t.mu);
  --t.assists;
}

}  // namespace hetcoll::mpi

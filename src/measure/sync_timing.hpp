// A collective's makespan from a synchronized start: every rank begins the
// call at the same instant of one clock, the time is the last rank's end
// minus that instant — what hetcoll's simulator predicts (all ranks start at
// 0, the collective ends with its last operation).
//
// Banikazemi's Fig. 2 (fig2_timing.hpp) times back-to-back calls between
// barriers; for a latency-bound call the barrier hides part of it, and a
// call timed alone after a barrier carries the barrier's exit skew (ranks
// leave it up to one network latency apart). This is the window method of
// SKaMPI (Worsch, Reussner, Augustin 2002) and ReproMPI (Hunold,
// Carpen-Amarie 2016):
//
//   clocks   rank 0's clock is the reference; each rank's offset to it from
//            ping-pongs with rank 0, the one of least round trip
//            (offset = t0 − (t_send + t_recv)/2)
//   windows  rank 0 broadcasts T0; call k starts on every rank at
//            T0 + k·slot (global time), each rank sleeping until then while
//            driving MPI progress; each rank's end time, made global
//   result   per call, the slowest rank's end − start; a call where some rank
//            arrived after its start (the previous call overran its slot) is
//            invalid; the median of the valid calls
//
// MPI programs only; barriers and broadcasts are the native PMPI ones.
#pragma once
#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "measure/fig2_timing.hpp"

namespace hetcoll::sync_start {

// This rank's offset to rank 0's clock (global = MPI_Wtime() + offset).
struct Clock {
  double offset = 0;
  double round_trip = 0;  // of the ping-pong the offset came from
  double max_round_trip = 0;  // the largest of any rank's (all ranks)
};

constexpr int kTag = 0x5c10;

// A call is latency-bound — Fig. 2's barrier may hide part of it, and its
// variants are timed from a synchronized start instead — when some
// variant's Fig. 2 median is below this many barrier times (hetcoll-tune
// and hetcoll-bench, one rule).
constexpr double kLatencyBoundBarriers = 3;
inline bool latency_bound(double fig2_median, double barrier) {
  return fig2_median < kLatencyBoundBarriers * barrier;
}
// Calls per measurement (each in its own slot).
constexpr int kCalls = 16;

// Ping-pongs between rank 0 and each other rank in turn.
inline Clock sync_clocks(MPI_Comm comm = MPI_COMM_WORLD, int pings = 8) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Clock c;
  PMPI_Barrier(comm);
  for (int r = 1; r < size; ++r) {
    if (rank == 0) {
      for (int k = 0; k < pings; ++k) {
        char ping;
        PMPI_Recv(&ping, 1, MPI_CHAR, r, kTag, comm, MPI_STATUS_IGNORE);
        const double now = MPI_Wtime();
        PMPI_Send(&now, 1, MPI_DOUBLE, r, kTag, comm);
      }
    } else if (rank == r) {
      c.round_trip = INFINITY;
      for (int k = 0; k < pings; ++k) {
        char ping = 0;
        double t0 = 0;
        const double s = MPI_Wtime();
        PMPI_Send(&ping, 1, MPI_CHAR, 0, kTag, comm);
        PMPI_Recv(&t0, 1, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE);
        const double e = MPI_Wtime();
        if (e - s < c.round_trip) c.round_trip = e - s, c.offset = t0 - (s + e) / 2;
      }
    }
  }
  PMPI_Allreduce(&c.round_trip, &c.max_round_trip, 1, MPI_DOUBLE, MPI_MAX, comm);
  return c;
}

// Sleeps until global time `at`, calling MPI (an Iprobe) every 200 µs so
// messages of the previous call still in this rank's queues move on; the
// last kAwake seconds yielding instead of sleeping (more ranks than cores:
// ranks woken all at once would start a core's timeslice apart).
// Returns false if `at` had already passed.
constexpr double kAwake = 500e-6;
inline bool wait_until(double at, const Clock& c, MPI_Comm comm) {
  static const bool slack_set = [] {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);  // 1 µs: wake on time
    return true;
  }();
  (void)slack_set;
  const double local = at - c.offset;
  if (MPI_Wtime() > local) return false;
  for (;;) {
    const double left = local - MPI_Wtime();
    if (left <= 0) return true;
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, kTag, comm, &flag, MPI_STATUS_IGNORE);
    if (left > kAwake) {
      const double nap = std::min(left - kAwake, 200e-6);
      timespec ts{0, long(nap * 1e9)};
      nanosleep(&ts, nullptr);
    } else {
      sched_yield();  // awake and runnable at the start: a woken rank waits for a core
    }
  }
}

struct Result {
  double median = NAN;  // s; NAN: no valid call
  int valid = 0, calls = 0;
};

// `calls` calls of `call`, each in its own slot of `slot` seconds (on rank 0;
// the others get calls and valid only).
inline Result timed(const std::function<void()>& call, int calls, double slot, const Clock& c,
                    MPI_Comm comm = MPI_COMM_WORLD) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // The first slot starts after the broadcast has surely arrived (a few
  // hops of the slowest round trip).
  double t0 = rank == 0 ? MPI_Wtime() + c.offset + std::max(slot, 1e-3) + 4 * c.max_round_trip : 0;
  PMPI_Bcast(&t0, 1, MPI_DOUBLE, 0, comm);
  // Per call: the span (end − start, global) and, negated in the same max
  // reduction, whether this rank was late (1) — one reduction at the end.
  std::vector<double> mine(size_t(calls) * 2, 0.0), all(mine.size(), 0.0);
  for (int k = 0; k < calls; ++k) {
    const double start = t0 + k * slot;
    const bool on_time = wait_until(start, c, comm);
    call();
    mine[size_t(k) * 2] = MPI_Wtime() + c.offset - start;
    mine[size_t(k) * 2 + 1] = on_time ? 0 : 1;
  }
  PMPI_Reduce(mine.data(), all.data(), int(mine.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
  Result r;
  r.calls = calls;
  if (rank == 0) {
    std::vector<double> ok;
    for (int k = 0; k < calls; ++k)
      if (all[size_t(k) * 2 + 1] == 0) ok.push_back(all[size_t(k) * 2]);
    r.valid = int(ok.size());
    if (!ok.empty()) {
      std::sort(ok.begin(), ok.end());
      r.median = ok[(ok.size() - 1) / 2];
    }
  }
  PMPI_Bcast(&r.valid, 1, MPI_INT, 0, comm);
  return r;
}

// timed() with a slot that fits the call: from `guess` (s, e.g. the call
// timed alone), doubled while fewer than half the calls were valid (at most
// three tries). Median on rank 0.
inline Result timed_fitting(const std::function<void()>& call, int calls, double guess, const Clock& c,
                            MPI_Comm comm = MPI_COMM_WORLD) {
  double slot = std::max(3 * guess, 1e-3);
  PMPI_Bcast(&slot, 1, MPI_DOUBLE, 0, comm);
  Result r;
  for (int attempt = 0; attempt < 3; ++attempt, slot *= 2) {
    r = timed(call, calls, slot, c, comm);
    if (2 * r.valid >= calls) break;
  }
  return r;
}

// The clocks synchronized when a caller first needs them, and again once
// that was a minute ago or more (clocks drift; rank 0 decides). Collective.
struct SharedClock {
  Clock clock;
  double at = -1e300;
  const Clock& fresh(MPI_Comm comm = MPI_COMM_WORLD) {
    int resync = MPI_Wtime() - at > 60;
    PMPI_Bcast(&resync, 1, MPI_INT, 0, comm);
    if (resync) clock = sync_clocks(comm), at = MPI_Wtime();
    return clock;
  }
};

// n variants timed from a synchronized start, `repeats` rounds, each round
// starting one variant later (whatever the first call after another pays,
// every variant pays as often): ready(v) readies variant v (false: skip
// it), call(v) runs it. The slot: thrice the call timed alone after a
// barrier in the first round (which the barrier's exit skew only
// lengthens). Per variant, each round's median (rank 0; NAN where no call
// kept to its slot). hetcoll-bench and hetcoll-tune, one procedure. Rounds
// first … first+repeats-1: a caller adding rounds to earlier ones keeps the
// rotation going.
template <class Ready, class Call>
std::vector<std::vector<double>> time_variants(size_t n, int repeats, int calls, const Clock& c, Ready ready,
                                               Call call, MPI_Comm comm = MPI_COMM_WORLD, int first = 0) {
  std::vector<std::vector<double>> out(n);
  std::vector<double> guess(n, 0);
  for (int rep = first; rep < first + repeats; ++rep)
    for (size_t j = 0; j < n; ++j) {
      const size_t v = (j + size_t(rep)) % n;
      if (!ready(v)) continue;
      if (rep == first) {
        guess[v] = fig2::timed_alone([&] { call(v); }, 3, comm);
        PMPI_Bcast(&guess[v], 1, MPI_DOUBLE, 0, comm);
      }
      out[v].push_back(timed_fitting([&] { call(v); }, calls, guess[v], c, comm).median);
    }
  return out;
}

}  // namespace hetcoll::sync_start

// Banikazemi et al. 1999, Fig. 2: the completion time of a collective.
//
//   barrier; iters × barrier            → the barrier's own time
//   barrier; iters × (collective; barrier)
//   local = elapsed / iters − barrier;  global = max over ranks
//
// The slowest rank's time counts; repeated, the minimum and the median are
// reported. hetcoll-tune and hetcoll-bench time every call this way (one
// place for the procedure). MPI programs only: barriers are the native
// PMPI_Barrier, never the collective under test.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace hetcoll::fig2 {

// The barrier's time per call (rank 0's, the same everywhere).
inline double barrier_time(int iters, MPI_Comm comm = MPI_COMM_WORLD) {
  PMPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) PMPI_Barrier(comm);
  double t = (MPI_Wtime() - t0) / iters;
  PMPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm);
  return t;
}

// One measurement of `call`: the slowest rank's time per call, the barrier
// subtracted (on rank 0; 0 elsewhere).
inline double timed(const std::function<void()>& call, int iters, double barrier, MPI_Comm comm = MPI_COMM_WORLD) {
  PMPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    call();
    PMPI_Barrier(comm);
  }
  double local = std::max(0.0, (MPI_Wtime() - t0) / iters - barrier), slowest = 0;
  PMPI_Reduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  return slowest;
}

// Where the barrier after each call hides the call (a latency-bound call
// whose last message arrives while the barrier's first ones are on their
// way), Fig. 2 gives 0. The call timed alone then: barrier, call, each rank
// its own elapsed time; the slowest rank's mean (on rank 0; 0 elsewhere).
inline double timed_alone(const std::function<void()>& call, int iters, MPI_Comm comm = MPI_COMM_WORLD) {
  double sum = 0;
  for (int i = 0; i < iters; ++i) {
    PMPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    call();
    sum += MPI_Wtime() - t0;
  }
  double local = sum / iters, slowest = 0;
  PMPI_Reduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  return slowest;
}

// Iterations for about `target` seconds per measurement, from a pilot
// (rank 0 decides; 3 … 1000, or 1 for a call of a quarter second or more,
// which one call measures well): a call, then three more timed.
inline int iterations_for(const std::function<void()>& call, double target, MPI_Comm comm = MPI_COMM_WORLD) {
  PMPI_Barrier(comm);
  double t0 = MPI_Wtime();
  call();
  double first = MPI_Wtime() - t0;
  PMPI_Bcast(&first, 1, MPI_DOUBLE, 0, comm);
  if (first >= std::max(target, 0.25)) return 1;
  PMPI_Barrier(comm);
  t0 = MPI_Wtime();
  for (int i = 0; i < 3; ++i) call();
  const double pilot = (MPI_Wtime() - t0) / 3;
  int iters = int(std::clamp(target / std::max(pilot, 1e-7), 3.0, 1000.0));
  PMPI_Bcast(&iters, 1, MPI_INT, 0, comm);
  return iters;
}

struct Summary {
  double min = 0, median = 0;
};
inline Summary summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[(v.size() - 1) / 2]};
}

// The distribution-free 95 % confidence interval of the median of v, from
// its order statistics (Le Boudec, Performance Evaluation of Computer and
// Communication Systems, 2010, Thm. 2.1; Hoefler & Belli, SC'15, rule 5):
// [v(j), v(k)], j = floor((n - 1.96 sqrt n) / 2), k = ceil(1 + (n + 1.96
// sqrt n) / 2), 1-based and clamped to the sample — below 6 values, its range.
struct Interval {
  double lo = 0, hi = 0;
};
inline Interval median_ci95(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const double n = double(v.size()), w = 1.96 * std::sqrt(n);
  const long j = std::max(1L, long(std::floor((n - w) / 2))), k = std::min(long(v.size()), long(std::ceil(1 + (n + w) / 2)));
  return {v[size_t(j - 1)], v[size_t(k - 1)]};
}
// Is the median known to within `rel` of itself (the interval's half-width)?
inline bool median_known(const std::vector<double>& v, double rel) {
  if (v.empty()) return true;
  const Interval ci = median_ci95(v);
  return (ci.hi - ci.lo) / 2 <= rel * summarize(v).median;
}

}  // namespace hetcoll::fig2

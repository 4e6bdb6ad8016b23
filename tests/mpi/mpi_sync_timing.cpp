// measure/sync_timing.hpp against calls of known length: a synchronized
// start gives a call's makespan (the last rank's end), detects calls that
// overran their slot and widens the slot until they fit.
//   mpirun -n K test_mpi_sync_timing      (exit 0: all checks passed)
// No check holds a time to a wall-clock bound (a busy machine lengthens
// any call): a makespan is at least the work in it (causality), an empty
// call is told apart from one rank's 20 ms (relative, in the same run),
// and how far above its work each measure came is printed, not checked.
#include <mpi.h>
#include <time.h>

#include <cmath>
#include <cstdio>

#include "measure/sync_timing.hpp"

namespace {

int g_rank = 0, g_size = 1, g_failed = 0;

void check(bool ok, const char* what, double value) {
  if (g_rank != 0) return;
  std::printf("%s %s (%.3f ms)\n", ok ? "ok  " : "FAIL", what, value * 1e3);
  if (!ok) ++g_failed;
}

// How far above its work a measure came (information: load decides it).
void said(const char* what, double median, double work) {
  if (g_rank == 0) std::printf("     %s: %.3f ms above its %.0f ms of work\n", what, (median - work) * 1e3, work * 1e3);
}

void sleep_s(double s) {
  timespec ts{time_t(s), long((s - double(time_t(s))) * 1e9)};
  nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  using namespace hetcoll::sync_start;
  // Each rank first asks for the time 2 ms after the one before: where
  // MPI_Wtime counts from that first call (Open MPI 4.1), the clocks differ
  // by milliseconds and the offsets must make up for it.
  sleep_s(0.002 * g_rank);
  (void)MPI_Wtime();
  PMPI_Barrier(MPI_COMM_WORLD);
  const Clock c = sync_clocks();
  // On rank 0's clock (MPI_Wtime() + offset) no message arrives before it
  // was sent, either way, within half the round trip the offset came from.
  // (Not "offsets near 0 on one machine": Open MPI 4.1's MPI_Wtime counts
  // from each process's first call, so one machine's ranks differ by when
  // they first asked.)
  int causal = 1, all_causal = 0;
  const double slack = c.round_trip / 2 + 1e-6;
  for (int r = 1; r < g_size; ++r)
    for (int k = 0; k < 4; ++k) {
      if (g_rank == 0) {
        const double sent = MPI_Wtime();
        double back = 0;
        PMPI_Send(&sent, 1, MPI_DOUBLE, r, 7, MPI_COMM_WORLD);
        PMPI_Recv(&back, 1, MPI_DOUBLE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int ok = MPI_Wtime() >= back - 1e-6;  // r's slack is r's to add: it sends back - its half
        PMPI_Send(&ok, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
      } else if (g_rank == r) {
        double sent = 0;
        int ok = 0;
        PMPI_Recv(&sent, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double got = MPI_Wtime() + c.offset;
        causal &= got >= sent - slack;
        const double back = MPI_Wtime() + c.offset - slack;
        PMPI_Send(&back, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        PMPI_Recv(&ok, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        causal &= ok;
      }
    }
  PMPI_Allreduce(&causal, &all_causal, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  check(all_causal == 1, "on rank 0's clock no message arrives before it was sent", c.max_round_trip);

  // The last rank alone works 20 ms: the makespan is its 20 ms (the other
  // ranks end at once), not a barrier's view of it.
  const int last = g_size - 1;
  Result r = timed([&] { if (g_rank == last) sleep_s(0.020); }, 8, 0.060, c);
  check(r.valid >= 4 && r.median >= 0.020, "one rank's 20 ms is in the makespan", r.median);
  said("one rank's 20 ms", r.median, 0.020);
  const double one_rank = r.median;

  // A message the last rank sends after 15 ms: rank 0's end is 15 ms plus
  // the message.
  r = timed(
      [&] {
        char x = 0;
        if (g_rank == last && last != 0) {
          sleep_s(0.015);
          PMPI_Send(&x, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        } else if (g_rank == 0 && last != 0) {
          PMPI_Recv(&x, 1, MPI_CHAR, last, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      },
      8, 0.050, c);
  check(r.valid >= 4 && r.median >= 0.015, "a late message ends the call", r.median);
  said("a message after 15 ms", r.median, 0.015);

  // Every rank works 12 ms in slots of 6 ms: each call overruns its slot, so
  // the next starts late and is invalid; with slots of 12 ms and more they fit.
  r = timed([&] { sleep_s(0.012); }, 8, 0.006, c);
  check(r.valid <= 1, "calls that overrun their slot are invalid", double(r.valid) * 1e-3);
  r = timed_fitting([&] { sleep_s(0.012); }, 8, 0.002, c);
  check(2 * r.valid >= 8 && r.median >= 0.012, "the slot widens until calls fit", r.median);
  said("every rank's 12 ms", r.median, 0.012);

  // A call nothing delays: told apart from one rank's 20 ms, measured the
  // same way in the same run.
  r = timed([] {}, 8, 0.005, c);
  check(r.valid >= 4 && r.median >= 0 && r.median < 0.5 * one_rank,
        "an empty call takes less than half of one rank's 20 ms", r.median);
  said("an empty call", r.median, 0);

  MPI_Finalize();
  return g_failed ? 1 : 0;
}

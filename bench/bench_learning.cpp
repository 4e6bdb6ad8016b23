// Benchmark (not a test): what HETCOLL_LEARN costs once its choices are
// settled, and what it gives. MPI_Allreduce of SIZE bytes (doubles): WARM
// calls untimed (learning explores and settles there), then CALLS calls
// timed back to back — each rank's wall time, the slowest rank's taken —
// and the algorithm the last call ran ("" : the native collective). Run it
// with HETCOLL_LEARN=0 and =1 alternately, in the same session, and compare
// medians (scripts/bench_learning.sh): one line of JSON on rank 0.
//   bench_learning [SIZE] [WARM] [CALLS]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hetcoll.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long bytes = argc > 1 ? std::atol(argv[1]) : 8;
  const int warm = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 20000;
  const size_t n = size_t(bytes > 8 ? bytes / 8 : 1);
  std::vector<double> in(n, 1.0), out(n);
  for (int i = 0; i < warm; ++i) MPI_Allreduce(in.data(), out.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) MPI_Allreduce(in.data(), out.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double local = MPI_Wtime() - t0, slowest = 0;
  PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  char used[256] = "";
  hetcoll_last_algorithm(MPI_COMM_WORLD, used, sizeof used);
  const char* learn = std::getenv("HETCOLL_LEARN");
  if (rank == 0)
    std::printf("{\"learn\": \"%s\", \"ranks\": %d, \"bytes\": %ld, \"calls\": %d, \"per_call_s\": %.9g, "
                "\"algorithm\": \"%s\", \"right\": %s}\n",
                learn ? learn : "", p, bytes, calls, slowest / calls, *used ? used : "native",
                out[0] == double(p) ? "true" : "false");
  MPI_Finalize();
  return 0;
}

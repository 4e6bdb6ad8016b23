// Benchmark (not a test): hetcoll's collectives against the native MPI ones
// in the same run. Linked against libhetcoll_mpi: MPI_* is hetcoll, PMPI_*
// the native library.
//
// Each call is timed on its own after a barrier (OSU-style); a measurement
// is the slowest rank's mean over `iters` calls. hetcoll and native
// alternate measurement by measurement, `reps` times per size; the medians
// and their ratio (speed = native / hetcoll, > 1: hetcoll faster) are
// printed as JSON.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "measure/collective_calls.hpp"
#include "hetcoll.h"

namespace {

using hetcoll::bench::Call;

double seconds_per_call(const Call& f, bool native, int iters) {
  double sum = 0;
  for (int i = 0; i < iters; ++i) {
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    f(native);
    sum += MPI_Wtime() - t0;
  }
  double local = sum / iters, global = 0;
  PMPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A whole positive number in [1, most], or 0 (not one).
long long positive(const char* s, long long most) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  return end != s && *end == '\0' && v >= 1 && v <= most ? v : 0;
}

}  // namespace

int main(int argc, char** argv) {
  hetcoll::bench::time_decisions_not_learning();
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long long reps_arg = argc > 1 ? positive(argv[1], 1000) : 7;
  const long long max_arg = argc > 2 ? positive(argv[2], 1LL << 30) : 4LL << 20;
  if (reps_arg == 0 || max_arg == 0) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: bench_mpi [REPS (1-1000, default 7)] [MAX_BYTES (1-2^30, default 4194304)] "
                   "[COLLECTIVES (comma-separated, default all)]\n");
    MPI_Finalize();
    return 2;
  }
  const int reps = int(reps_arg);
  const size_t max_bytes = size_t(max_arg);
  std::vector<char> a(max_bytes * size_t(p) + 64, 1), b(max_bytes * size_t(p) + 64, 2);
  const std::string only = argc > 3 ? std::string(",") + argv[3] + "," : "";
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  const std::vector<std::string> ops = hetcoll::bench::regular_collective_names();
  if (rank == 0) std::printf("{\"ranks\": %d, \"reps\": %d, \"results\": [\n", p, reps);
  bool first = true;
  for (const std::string& name : ops) {
    if (!only.empty() && only.find("," + name + ",") == std::string::npos) continue;
    for (size_t bytes : {size_t(8), size_t(64), size_t(512), size_t(4) << 10, size_t(32) << 10, size_t(256) << 10,
                         size_t(1) << 20, size_t(4) << 20}) {
      if (bytes > max_bytes) break;
      if (name == "barrier" && bytes > 8) break;
      // Per-rank message of `bytes`; doubles for the reductions.
      const int n = int(bytes / 8);
      for (int i = 0; i < p; ++i) {
        counts[size_t(i)] = n;
        displs[size_t(i)] = i * n;
      }
      Call f = hetcoll::bench::collective_call(name, n, a, b);
      // Enough iterations for ~20 ms per measurement, decided on rank 0.
      f(false);
      f(true);
      double probe = seconds_per_call(f, true, 3);
      int iters = int(std::clamp(0.01 / std::max(probe, 1e-7), 5.0, 2000.0));
      PMPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
      std::vector<double> th, tn;
      for (int r = 0; r < reps; ++r) {
        th.push_back(seconds_per_call(f, false, iters));
        tn.push_back(seconds_per_call(f, true, iters));
      }
      char algo[256];
      hetcoll_last_algorithm(MPI_COMM_WORLD, algo, sizeof algo);
      if (rank == 0) {
        double h = median(th), nat = median(tn);
        std::printf("%s  {\"op\": \"%s\", \"bytes\": %zu, \"hetcoll_us\": %.2f, \"native_us\": %.2f, \"speed\": %.2f, \"algorithm\": \"%s\"}",
                    first ? "" : ",\n", name.c_str(), name == "barrier" ? size_t(0) : bytes, h * 1e6, nat * 1e6, nat / h, algo);
        first = false;
        std::fflush(stdout);
      }
    }
  }
  if (rank == 0) std::printf("\n]}\n");
  MPI_Finalize();
  return 0;
}

// What setting a communicator up costs with the configuration check
// (docs/mpi.md, step 3): a communicator made (MPI_Comm_dup of MPI_COMM_WORLD) and its
// first and second 8-byte MPI_Allreduce, natively (PMPI_*) and through
// hetcoll (MPI_*: the first call makes hetcoll's state — a private
// duplicate, one allgather of each rank's host key and configuration
// digest, the decision), interleaved in one run. Then the check's own
// parts: the exchange as it is (16 bytes a rank) against the host keys
// alone (8 bytes a rank: the setup without the check), each on a fresh
// duplicate. (The fingerprint itself is made once per configuration, not
// per communicator.) Run it once as it is
// and once with HETCOLL_DISABLE=1: a disabled rank now sets communicators
// up too (it must take part in the comparison), where before it went
// straight to the native collective.
//   mpirun -n P bench_comm_setup [REPS]   -> one JSON object on stdout
// Times are the slowest rank's, per repetition; the JSON has each one's
// median, minimum and maximum over the repetitions, in microseconds.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

int rank = 0, size = 1;

// The slowest rank's duration of f, after a barrier.
double timed(const std::function<void()>& f) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = PMPI_Wtime();
  f();
  double dt = PMPI_Wtime() - t0, worst = 0;
  PMPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

struct Series {
  explicit Series(const char* n) : name(n) {}
  std::string name;
  std::vector<double> t;
};

std::string stats(const Series& s) {
  std::vector<double> v = s.t;
  std::sort(v.begin(), v.end());
  char buf[256];
  std::snprintf(buf, sizeof buf, "\"%s\": {\"median_us\": %.2f, \"min_us\": %.2f, \"max_us\": %.2f}", s.name.c_str(),
                1e6 * v[v.size() / 2], 1e6 * v.front(), 1e6 * v.back());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int reps = argc > 1 ? std::max(3, std::atoi(argv[1])) : 31;
  const char* disable = std::getenv("HETCOLL_DISABLE");
  const bool disabled = disable && std::string(disable) == "1";

  // Every variant: make the communicator, then a first and a second call.
  Series native_dup{"native_dup"}, native_first{"native_first_allreduce"}, native_second{"native_second_allreduce"},
      hc_dup{"hetcoll_dup"}, hc_first{"hetcoll_first_allreduce"}, hc_second{"hetcoll_second_allreduce"},
      exchange16{"exchange_16_bytes_a_rank"}, exchange8{"exchange_8_bytes_a_rank"};
  long x = rank, y = 0;
  std::vector<unsigned char> in(16, 1), out(16 * size_t(size));
  for (int rep = 0; rep < reps; ++rep) {
    // Alternate which goes first: whatever the first of a pair pays, both pay as often.
    for (int k = 0; k < 2; ++k) {
      const bool hetcoll = (k + rep) % 2 == 1;
      MPI_Comm c;
      (hetcoll ? hc_dup : native_dup).t.push_back(timed([&] { PMPI_Comm_dup(MPI_COMM_WORLD, &c); }));
      (hetcoll ? hc_first : native_first).t.push_back(timed([&] {
        if (hetcoll) MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
        else PMPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
      }));
      (hetcoll ? hc_second : native_second).t.push_back(timed([&] {
        if (hetcoll) MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
        else PMPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
      }));
      PMPI_Comm_free(&c);  // hetcoll's state and duplicate go with it
    }
    // The exchange with and without the digest, each the first collective
    // on a fresh duplicate (as in the setup), alternating.
    for (int k = 0; k < 2; ++k) {
      const int bytes = (k + rep) % 2 ? 16 : 8;
      MPI_Comm d;
      PMPI_Comm_dup(MPI_COMM_WORLD, &d);
      (bytes == 16 ? exchange16 : exchange8).t.push_back(timed([&] {
        PMPI_Allgather(in.data(), bytes, MPI_BYTE, out.data(), bytes, MPI_BYTE, d);
      }));
      PMPI_Comm_free(&d);
    }
  }
  if (rank == 0) {
    std::printf("{\"ranks\": %d, \"reps\": %d, \"disabled\": %s", size, reps, disabled ? "true" : "false");
    for (const Series* s : {&native_dup, &native_first, &native_second, &hc_dup, &hc_first, &hc_second, &exchange8,
                            &exchange16})
      std::printf(", %s", stats(*s).c_str());
    std::printf("}\n");
  }
  MPI_Finalize();
  return 0;
}

// Benchmark (SMPI): one hetcoll algorithm against SimGrid's own
// implementation of the same algorithm, and against hetcoll's prediction,
// in simulated time (deterministic). testbed/smpi/compare.sh runs it.
//
//   smpi_compare OP BYTES ALGORITHM MODEL
//
// OP is bcast or allreduce (doubles, sum; root 0), BYTES the vector,
// ALGORITHM a hetcoll algorithm spec forced with hetcoll_set_algorithm,
// MODEL the machine model hetcoll plans and predicts with (the platform's
// α and β). The native side is whatever --cfg=smpi/OP:NAME selects. A
// measurement is the slowest rank's time of one call after a barrier, the
// minimum of three (simulated time does not vary; the first call of each
// kind is not timed). Prints one JSON object; every result is checked
// against the native one, and a difference fails the run.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "hetcoll.h"
#include "model/machine_model.hpp"
#include "sim/simulator.hpp"

namespace {
double timed(bool native, const std::string& op, std::vector<double>& x, std::vector<double>& y, int n) {
  double best = 1e300;
  for (int rep = 0; rep < 4; ++rep) {
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (op == "bcast") native ? PMPI_Bcast(x.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD) : MPI_Bcast(x.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else native ? PMPI_Allreduce(x.data(), y.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) : MPI_Allreduce(x.data(), y.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double local = MPI_Wtime() - t0, slowest = 0;
    PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rep > 0) best = std::min(best, slowest);  // the first call plans
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc != 5 || (std::string(argv[1]) != "bcast" && std::string(argv[1]) != "allreduce")) {
    if (rank == 0) std::fprintf(stderr, "usage: smpi_compare bcast|allreduce BYTES ALGORITHM MODEL\n");
    MPI_Finalize();
    return 2;
  }
  const std::string op = argv[1], algo = argv[3], model_spec = argv[4];
  const int n = int(std::atol(argv[2]) / 8);
  if (hetcoll_set_model(model_spec.c_str()) != HETCOLL_SUCCESS ||
      hetcoll_set_algorithm((op + ":@" + algo).c_str()) != HETCOLL_SUCCESS) {
    if (rank == 0) std::fprintf(stderr, "smpi_compare: %s\n", hetcoll_last_error());
    MPI_Finalize();
    return 2;
  }
  std::vector<double> x(size_t(n) + 1), y(size_t(n) + 1), hx, hy;
  for (int i = 0; i < n; ++i) x[size_t(i)] = rank == 0 || op == "allreduce" ? double(rank * 7 + i % 1000) : -1;
  const std::vector<double> x0 = x;
  const double native = timed(true, op, x, y, n);
  std::vector<double> nx = x, ny = y;
  x = x0;
  y.assign(y.size(), 0);
  const double mine = timed(false, op, x, y, n);
  const bool same = op == "bcast" ? std::equal(x.begin(), x.begin() + n, nx.begin()) : std::equal(y.begin(), y.begin() + n, ny.begin());
  int ok = same, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char used[256] = "";
  hetcoll_last_algorithm(MPI_COMM_WORLD, used, sizeof used);
  if (rank == 0) {
    using namespace hetcoll;
    ModelPtr model = parse_model(model_spec);
    Collective c = Collective::make(op == "bcast" ? CollOp::bcast : CollOp::allreduce, p, uint64_t(n), 0, 8);
    const double predicted = simulate(build_schedule(algo, c, *model), *model, {false}).makespan;
    std::printf("{\"op\": \"%s\", \"bytes\": %d, \"ranks\": %d, \"algorithm\": \"%s\", \"hetcoll_s\": %.9g, "
                "\"native_s\": %.9g, \"predicted_s\": %.9g, \"results_equal\": %s}\n",
                op.c_str(), n * 8, p, used, mine, native, predicted, all_ok ? "true" : "false");
  }
  MPI_Finalize();
  return all_ok ? 0 : 1;
}

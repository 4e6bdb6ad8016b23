// hetcoll-probe's main: MPI, the options, one Probe; and Probe::run, the
// phases in their order (probe.hpp describes them).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <exception>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

int Probe::run() {
  bar.phase("hosts", 0, 0.02);
  hosts = find_hosts();
  H = hosts.n();
  HH = size_t(H) * size_t(H);
  buf.assign(std::max<uint64_t>(large, 4096) + 64, 0);
  buf2.assign(buf.size(), 0);
  order = pair_order(H);
  hostv.assign(size_t(H) * kHostFields, 0.0);
  shm.assign(size_t(H) * 2, 0.0);
  pairs();
  subnets();
  alone_pairs();
  backplane();
  racks();
  declared();
  subnet_links();
  sharing();
  overheads();
  shared_memory();
  kernels();
  lambda_experiments();
  probe_seconds = elapsed();
  bar.done();
  int rc = g_rank == 0 ? write_profile() : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, g_comm);
  return rc;
}

}  // namespace hetcoll::probe

using namespace hetcoll;
using namespace hetcoll::probe;

int main(int argc, char** argv) {
  program::name() = "hetcoll-probe";
  if (program::checking(argc, argv)) {
    const Options o = parse_args(argc, argv);
    program::check_writable(o.out, "-o");
    if (!o.topology.empty()) try {
        (void)read_declared_topology(o.topology);
      } catch (const std::exception& e) {
        program::fail(cat("--topology: ", e.what()));
      }
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  MPI_Comm_rank(g_comm, &g_rank);
  MPI_Comm_size(g_comm, &g_size);
  const Options opt = parse_args(argc, argv);
  MPI_Barrier(g_comm);
  g_start = MPI_Wtime();
  const int rc = Probe(opt).run();
  MPI_Comm_free(&g_comm);
  MPI_Finalize();
  return rc;
}

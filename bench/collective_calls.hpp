// One MPI collective on MPI_COMM_WORLD with a per-rank message of n doubles
// (MPI_SUM for the reductions): hetcoll's MPI_* or the native PMPI_*. The
// calls bench_mpi and hetcoll-tune time, written once.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace hetcoll::bench {

using Call = std::function<void(bool native)>;

inline Call collective_call(const std::string& name, int n, std::vector<char>& a, std::vector<char>& b) {
  return [&a, &b, name, n](bool native) {
    char *x = a.data(), *y = b.data();
    MPI_Comm w = MPI_COMM_WORLD;
    if (name == "bcast") native ? PMPI_Bcast(x, n, MPI_DOUBLE, 0, w) : MPI_Bcast(x, n, MPI_DOUBLE, 0, w);
    else if (name == "reduce") native ? PMPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, 0, w) : MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, 0, w);
    else if (name == "allreduce") native ? PMPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, w) : MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, w);
    else if (name == "gather") native ? PMPI_Gather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w) : MPI_Gather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w);
    else if (name == "scatter") native ? PMPI_Scatter(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w) : MPI_Scatter(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w);
    else if (name == "allgather") native ? PMPI_Allgather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, w) : MPI_Allgather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, w);
    else if (name == "reduce_scatter_block") native ? PMPI_Reduce_scatter_block(x, y, n, MPI_DOUBLE, MPI_SUM, w) : MPI_Reduce_scatter_block(x, y, n, MPI_DOUBLE, MPI_SUM, w);
    else if (name == "alltoall") native ? PMPI_Alltoall(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, w) : MPI_Alltoall(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, w);
    else if (name == "scan") native ? PMPI_Scan(x, y, n, MPI_DOUBLE, MPI_SUM, w) : MPI_Scan(x, y, n, MPI_DOUBLE, MPI_SUM, w);
    else native ? PMPI_Barrier(w) : MPI_Barrier(w);
  };
}

}  // namespace hetcoll::bench

// One MPI collective on MPI_COMM_WORLD with a per-rank message of n doubles
// (MPI_SUM for the reductions): hetcoll's MPI_* or the native PMPI_*. The
// calls bench_mpi, hetcoll-tune and hetcoll-bench time, written once.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hetcoll::bench {

using Call = std::function<void(bool native)>;

// Every collective these programs time, in the order they report them.
inline const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = {
      "bcast",   "reduce",  "allreduce",  "gather",         "gatherv",  "scatter",   "scatterv", "allgather",
      "allgatherv", "reduce_scatter_block", "reduce_scatter", "alltoall", "alltoallv", "scan", "exscan", "barrier"};
  return names;
}

// The v-variants with every rank's count n (displacements packed), so that
// they move what their regular forms move.
inline Call collective_call(const std::string& name, int n, std::vector<char>& a, std::vector<char>& b) {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  auto counts = std::make_shared<std::vector<int>>(size_t(p), n);
  auto displs = std::make_shared<std::vector<int>>(size_t(p));
  for (int i = 0; i < p; ++i) (*displs)[size_t(i)] = i * n;
  return [&a, &b, name, n, counts, displs](bool native) {
    char *x = a.data(), *y = b.data();
    MPI_Comm w = MPI_COMM_WORLD;
    const int *c = counts->data(), *d = displs->data();
    if (name == "gatherv") {
      native ? PMPI_Gatherv(x, n, MPI_DOUBLE, y, c, d, MPI_DOUBLE, 0, w) : MPI_Gatherv(x, n, MPI_DOUBLE, y, c, d, MPI_DOUBLE, 0, w);
      return;
    }
    if (name == "scatterv") {
      native ? PMPI_Scatterv(x, c, d, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w) : MPI_Scatterv(x, c, d, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, w);
      return;
    }
    if (name == "allgatherv") {
      native ? PMPI_Allgatherv(x, n, MPI_DOUBLE, y, c, d, MPI_DOUBLE, w) : MPI_Allgatherv(x, n, MPI_DOUBLE, y, c, d, MPI_DOUBLE, w);
      return;
    }
    if (name == "reduce_scatter") {
      native ? PMPI_Reduce_scatter(x, y, c, MPI_DOUBLE, MPI_SUM, w) : MPI_Reduce_scatter(x, y, c, MPI_DOUBLE, MPI_SUM, w);
      return;
    }
    if (name == "alltoallv") {
      native ? PMPI_Alltoallv(x, c, d, MPI_DOUBLE, y, c, d, MPI_DOUBLE, w) : MPI_Alltoallv(x, c, d, MPI_DOUBLE, y, c, d, MPI_DOUBLE, w);
      return;
    }
    if (name == "exscan") {
      native ? PMPI_Exscan(x, y, n, MPI_DOUBLE, MPI_SUM, w) : MPI_Exscan(x, y, n, MPI_DOUBLE, MPI_SUM, w);
      return;
    }
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

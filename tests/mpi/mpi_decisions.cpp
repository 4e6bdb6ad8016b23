// Prints, one JSON line per call, what hetcoll ran for a matrix of
// collectives (every operation, sizes, roots, element types), for
// tests/python/test_decisions.py to compare with `hetcoll plan` — the
// command line and the MPI layer must choose the same for the same call.
//   mpirun -n K mpi_decisions
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hetcoll.h"

namespace {

struct Elem {
  MPI_Datatype type;
  MPI_Op op;
  int size;
  bool order_free;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char* ops[] = {"bcast",      "reduce",    "allreduce", "gather",   "gatherv",    "scatter",
                       "scatterv",   "allgather", "allgatherv", "reduce_scatter_block", "reduce_scatter",
                       "alltoall",   "alltoallv", "barrier",   "scan",     "exscan"};
  const long sizes[] = {8, 1000, 56000, 65536, 1 << 20};
  const Elem reds[] = {{MPI_DOUBLE, MPI_SUM, 8, false}, {MPI_INT, MPI_SUM, 4, true}};
  std::vector<char> a, b;
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  for (const char* name : ops) {
    const std::string op = name;
    const bool reduction = op == "reduce" || op == "allreduce" || op == "reduce_scatter_block" ||
                           op == "reduce_scatter" || op == "scan" || op == "exscan";
    const bool rooted = op == "bcast" || op == "reduce" || op == "gather" || op == "gatherv" || op == "scatter" ||
                        op == "scatterv";
    for (long bytes : sizes) {
      for (int root : {0, p - 1}) {
        if (!rooted && root) continue;
        for (const Elem& e : reds) {
          if (!reduction && e.type != MPI_DOUBLE) continue;
          const int elem = reduction ? e.size : 1;
          const int n = int(bytes / elem);  // elements per rank (per block)
          const size_t total = size_t(n) * size_t(elem) * size_t(p);
          a.assign(total + 64, 1);
          b.assign(total + 64, 0);
          for (int i = 0; i < p; ++i) {
            counts[size_t(i)] = n;
            displs[size_t(i)] = n * i;
          }
          if (op == "bcast") MPI_Bcast(a.data(), n, MPI_BYTE, root, MPI_COMM_WORLD);
          else if (op == "reduce") MPI_Reduce(a.data(), b.data(), n, e.type, e.op, root, MPI_COMM_WORLD);
          else if (op == "allreduce") MPI_Allreduce(a.data(), b.data(), n, e.type, e.op, MPI_COMM_WORLD);
          else if (op == "gather") MPI_Gather(a.data(), n, MPI_BYTE, b.data(), n, MPI_BYTE, root, MPI_COMM_WORLD);
          else if (op == "gatherv")
            MPI_Gatherv(a.data(), n, MPI_BYTE, b.data(), counts.data(), displs.data(), MPI_BYTE, root, MPI_COMM_WORLD);
          else if (op == "scatter") MPI_Scatter(a.data(), n, MPI_BYTE, b.data(), n, MPI_BYTE, root, MPI_COMM_WORLD);
          else if (op == "scatterv")
            MPI_Scatterv(a.data(), counts.data(), displs.data(), MPI_BYTE, b.data(), n, MPI_BYTE, root, MPI_COMM_WORLD);
          else if (op == "allgather") MPI_Allgather(a.data(), n, MPI_BYTE, b.data(), n, MPI_BYTE, MPI_COMM_WORLD);
          else if (op == "allgatherv")
            MPI_Allgatherv(a.data(), n, MPI_BYTE, b.data(), counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
          else if (op == "reduce_scatter_block") MPI_Reduce_scatter_block(a.data(), b.data(), n, e.type, e.op, MPI_COMM_WORLD);
          else if (op == "reduce_scatter") MPI_Reduce_scatter(a.data(), b.data(), counts.data(), e.type, e.op, MPI_COMM_WORLD);
          else if (op == "alltoall") MPI_Alltoall(a.data(), n, MPI_BYTE, b.data(), n, MPI_BYTE, MPI_COMM_WORLD);
          else if (op == "alltoallv")
            MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_BYTE, b.data(), counts.data(), displs.data(), MPI_BYTE,
                          MPI_COMM_WORLD);
          else if (op == "barrier") MPI_Barrier(MPI_COMM_WORLD);
          else if (op == "scan") MPI_Scan(a.data(), b.data(), n, e.type, e.op, MPI_COMM_WORLD);
          else if (op == "exscan") MPI_Exscan(a.data(), b.data(), n, e.type, e.op, MPI_COMM_WORLD);
          char algo[256];
          hetcoll_last_algorithm(MPI_COMM_WORLD, algo, sizeof algo);
          if (r == 0)
            std::printf("{\"op\": \"%s\", \"ranks\": %d, \"root\": %d, \"bytes\": %ld, \"elem_size\": %d, "
                        "\"order_free\": %s, \"algorithm\": \"%s\"}\n",
                        name, p, root, op == "barrier" ? 0L : long(n) * elem, elem,
                        reduction && e.order_free ? "true" : "false", algo);
          if (op == "barrier") break;
        }
        if (op == "barrier") break;
      }
      if (op == "barrier") break;
    }
  }
  MPI_Finalize();
  return 0;
}

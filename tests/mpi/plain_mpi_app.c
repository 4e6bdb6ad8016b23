/* A plain MPI program that knows nothing of hetcoll: it checks its own
 * results and exits non-zero on a mismatch. The test runs it with
 * LD_PRELOAD=libhetcoll_mpi.so (and without). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int n = 1; n <= 100000; n *= 10) {
    long* x = malloc(n * sizeof(long));
    long* y = malloc(n * sizeof(long));
    for (int i = 0; i < n; ++i) x[i] = rank + i;
    MPI_Allreduce(x, y, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) bad += y[i] != (long)size * (size - 1) / 2 + (long)size * i;
    double d = rank == size - 1 ? 3.25 * n : 0.0;
    MPI_Bcast(&d, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    bad += d != 3.25 * n;
    int* g = malloc(size * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) bad += g[i] != i;
    int s = 0;
    MPI_Scan(&rank, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad += s != rank * (rank + 1) / 2;
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : x, x, n, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      for (int i = 0; i < n; ++i) bad += x[i] != size - 1 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    free(x);
    free(y);
    free(g);
  }
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("plain_mpi_app: %d ranks, %d wrong results\n", size, total);
  MPI_Finalize();
  return total != 0;
}

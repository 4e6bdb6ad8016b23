/* An unchanged MPI program linked against an installed libhetcoll_mpi (the
 * link-time form of LD_PRELOAD): its MPI_Allreduce and MPI_Ibcast are
 * hetcoll's. Rank 0 prints the algorithm hetcoll ran; exits 1 on a wrong
 * result or if hetcoll did not run the call. */
#include <hetcoll.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long in = rank + 1, sum = 0;
  MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  char algo[128] = "";
  hetcoll_last_algorithm(MPI_COMM_WORLD, algo, sizeof algo);
  int v = rank == 0 ? 42 : 0;
  MPI_Request r;
  MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  int bad = sum != (long)size * (size + 1) / 2 || v != 42 || algo[0] == 0;
  int any_bad = 0;
  PMPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0)
    printf("pmpi_example: MPI_Allreduce ran as %s, %s\n", algo[0] ? algo : "(not hetcoll's)",
           any_bad ? "WRONG" : "right");
  MPI_Finalize();
  return any_bad;
}

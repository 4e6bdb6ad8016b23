/* The C API from an installed hetcoll: hetcoll_allreduce beside MPI's own
 * MPI_Allreduce (which stays the MPI library's: this program links
 * libhetcoll, not libhetcoll_mpi). Prints one line on rank 0 and exits 1
 * if the two sums differ. */
#include <hetcoll.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double in[1000], ours[1000], theirs[1000];
  for (int i = 0; i < 1000; ++i) in[i] = rank + i;
  int st = hetcoll_allreduce(in, ours, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(in, theirs, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int bad = st != HETCOLL_SUCCESS;
  for (int i = 0; i < 1000; ++i) bad |= ours[i] != theirs[i];
  char algo[128] = "";
  hetcoll_last_algorithm(MPI_COMM_WORLD, algo, sizeof algo);
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0)
    printf("capi_example: hetcoll %s, %d ranks: hetcoll_allreduce %s (%s)\n", hetcoll_version(), size,
           any_bad ? "WRONG" : "equals MPI_Allreduce", st == HETCOLL_SUCCESS ? algo : hetcoll_status_string(st));
  MPI_Finalize();
  return any_bad;
}

/* One collective, for tests/export/export_test.sh: which algorithm the
 * native MPI ran under an exported tuning file shows in its traffic (Open
 * MPI's pml monitoring) or in a fingerprint (MPICH).
 *   export_probe allreduce|bcast COUNT   one call on MPI_COMM_WORLD, its result checked
 *   export_probe fingerprint COUNT       MPI_Allreduce of COUNT longs with a user op declared
 *                                        commutative but sensitive to the order in which the
 *                                        algorithm combines: each rank prints what it got, which
 *                                        differs between algorithms
 * Exit 1 on a rank with a wrong result, 3 where the call returned an error (its class named on
 * stderr by the rank itself: Open MPI's aborting handler sends its message through the
 * launcher, which under load has lost it). Plain MPI: no hetcoll in it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The call's error, said by this rank: "MPI_ERR_ARG" where that is its class. */
static int failed(const char* call, int err, int rank) {
  if (err == MPI_SUCCESS) return 0;
  int cls = 0, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(err, &cls);
  MPI_Error_string(err, text, &len);
  fprintf(stderr, "export_probe: %s failed on rank %d: %s (%s)\n", call, rank,
          cls == MPI_ERR_ARG ? "MPI_ERR_ARG" : "another error class", text);
  return 1;
}

static void order_sensitive(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  long* a = (long*)in;
  long* b = (long*)inout;
  for (int i = 0; i < *len; ++i) b[i] = (3 * a[i] + 5 * b[i] + 1) % 1000003;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int error = 0;
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: export_probe allreduce|bcast|fingerprint COUNT\n");
    MPI_Finalize();
    return 2;
  }
  const char* what = argv[1];
  const long n = atol(argv[2]);
  if (!strcmp(what, "allreduce")) {
    double* in = malloc(sizeof(double) * (size_t)n);
    double* out = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; ++i) in[i] = rank + (double)(i % 7);
    error |= failed("MPI_Allreduce", MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), rank);
    if (!error)
      for (long i = 0; i < n; ++i) bad |= out[i] != (double)size * (size - 1) / 2 + (double)size * (double)(i % 7);
    free(in);
    free(out);
  } else if (!strcmp(what, "bcast")) {
    char* buf = malloc((size_t)n);
    for (long i = 0; i < n; ++i) buf[i] = rank == 0 ? (char)(i % 113) : 0;
    error |= failed("MPI_Bcast", MPI_Bcast(buf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD), rank);
    if (!error)
      for (long i = 0; i < n; ++i) bad |= buf[i] != (char)(i % 113);
    free(buf);
  } else if (!strcmp(what, "fingerprint")) {
    MPI_Op op;
    MPI_Op_create(order_sensitive, 1, &op);
    long* in = malloc(sizeof(long) * (size_t)n);
    long* out = malloc(sizeof(long) * (size_t)n);
    for (long i = 0; i < n; ++i) in[i] = 10 * rank + i + 1;
    MPI_Allreduce(in, out, (int)n, MPI_LONG, op, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) {
      if (r == rank) {
        printf("r%d:", rank);
        for (long i = 0; i < n && i < 4; ++i) printf(" %ld", out[i]);
        printf("\n");
        fflush(stdout);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Op_free(&op);
    free(in);
    free(out);
  } else {
    bad = 1;
  }
  /* No further collective: its traffic would mix with the one measured. */
  if (bad) fprintf(stderr, "export_probe %s %ld: WRONG result on rank %d\n", what, n, rank);
  MPI_Finalize();
  return error ? 3 : bad;
}

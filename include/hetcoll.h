/* hetcoll C API: call hetcoll's collectives explicitly.
 *
 * Each hetcoll_<collective> takes exactly the arguments of the MPI-3
 * function of the same name and returns a status instead of raising MPI
 * errors: HETCOLL_SUCCESS when hetcoll ran it, HETCOLL_UNSUPPORTED or
 * HETCOLL_BAD_ARGUMENT when it did nothing (the caller may run the MPI
 * function instead: that is what libhetcoll_mpi.so's MPI_* functions do),
 * HETCOLL_MPI_ERROR or HETCOLL_INTERNAL_ERROR when it failed part way.
 * hetcoll_last_error() tells why. No C++ exception crosses this interface.
 *
 * The configuration comes from the environment (HETCOLL_PROFILE,
 * HETCOLL_ALGO, HETCOLL_DEBUG, HETCOLL_DISABLE) and can be changed here. */
#ifndef HETCOLL_H
#define HETCOLL_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hetcoll_status {
  HETCOLL_SUCCESS = 0,
  HETCOLL_UNSUPPORTED = 1,    /* declined; nothing was done */
  HETCOLL_BAD_ARGUMENT = 2,   /* invalid arguments; nothing was done */
  HETCOLL_MPI_ERROR = 3,      /* an MPI call failed during the collective */
  HETCOLL_INTERNAL_ERROR = 4  /* a bug in hetcoll */
};


int hetcoll_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int hetcoll_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int hetcoll_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int hetcoll_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int hetcoll_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int hetcoll_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int hetcoll_scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int hetcoll_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int hetcoll_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int hetcoll_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int hetcoll_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int hetcoll_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int hetcoll_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int hetcoll_barrier(MPI_Comm comm);
int hetcoll_scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int hetcoll_exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* Replace the machine model (a model spec such as
 * "hockney:alpha=2us,beta=0.1ns" or a JSON model file) or the algorithm
 * overrides ("bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect"); "" (or
 * NULL) restores the default / clears them. HETCOLL_BAD_ARGUMENT keeps the
 * old setting. Call with the same argument on every rank. */
int hetcoll_set_model(const char* spec);
int hetcoll_set_algorithm(const char* rules);

/* The schedule name of the last collective hetcoll ran on comm, copied into
 * buf (at most len bytes, NUL-terminated); "" if none. */
int hetcoll_last_algorithm(MPI_Comm comm, char* buf, int len);

/* Why the calling thread's last hetcoll call did not succeed. */
const char* hetcoll_last_error(void);
/* A constant description of a status code. */
const char* hetcoll_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif /* HETCOLL_H */

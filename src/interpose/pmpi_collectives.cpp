// The MPI collectives, with their MPI-3 C bindings: planned and run by
// hetcoll, or handed to PMPI_* unchanged when hetcoll declines (run()
// returns unsupported or bad_argument: nothing has been done yet). A failure
// during execution goes to the communicator's error handler.
#include <mpi.h>

#include <cstdio>

#include "interpose/calls.hpp"

using namespace hetcoll::mpi;

namespace {
// ok → MPI_SUCCESS; declined → the native call; failed → the error handler.
template <class Native>
int finish(const Call& c, Native&& native) {
  Status s = run(c);
  if (s == Status::ok) return MPI_SUCCESS;
  if (s == Status::unsupported || s == Status::bad_argument) return native();
  std::fprintf(stderr, "hetcoll: %s\n", last_error());
  PMPI_Comm_call_errhandler(c.comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}
}  // namespace

extern "C" {

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return finish(bcast_call(buffer, count, datatype, root, comm), [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return finish(reduce_call(sendbuf, recvbuf, count, datatype, op, root, comm), [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return finish(allreduce_call(sendbuf, recvbuf, count, datatype, op, comm), [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return finish(gather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), [&] { return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return finish(gatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm), [&] { return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm); });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return finish(scatter_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), [&] { return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return finish(scatterv_call(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm), [&] { return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return finish(allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return finish(allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), [&] { return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm); });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return finish(reduce_scatter_block_call(sendbuf, recvbuf, recvcount, datatype, op, comm), [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return finish(reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm), [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return finish(alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return finish(alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), [&] { return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm); });
}

int MPI_Barrier(MPI_Comm comm) {
  return finish(barrier_call(comm), [&] { return PMPI_Barrier(comm); });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return finish(scan_call(sendbuf, recvbuf, count, datatype, op, comm), [&] { return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return finish(exscan_call(sendbuf, recvbuf, count, datatype, op, comm), [&] { return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm); });
}

}  // extern "C"

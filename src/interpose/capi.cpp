// The C API (include/hetcoll.h): statuses, never exceptions.
#include "hetcoll.h"

#include <cstring>
#include <string>

#include "interpose/calls.hpp"

using namespace hetcoll::mpi;

namespace {
thread_local std::string t_api_error;

int code(Status s) {
  t_api_error.clear();
  return int(s);
}

template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    return HETCOLL_SUCCESS;
  } catch (const std::exception& e) {
    t_api_error = e.what();
    return HETCOLL_BAD_ARGUMENT;
  }
}
}  // namespace

extern "C" {

int hetcoll_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return code(run(bcast_call(buffer, count, datatype, root, comm)));
}

int hetcoll_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return code(run(reduce_call(sendbuf, recvbuf, count, datatype, op, root, comm)));
}

int hetcoll_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return code(run(allreduce_call(sendbuf, recvbuf, count, datatype, op, comm)));
}

int hetcoll_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return code(run(gather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)));
}

int hetcoll_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return code(run(gatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)));
}

int hetcoll_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return code(run(scatter_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)));
}

int hetcoll_scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return code(run(scatterv_call(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm)));
}

int hetcoll_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return code(run(allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)));
}

int hetcoll_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return code(run(allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)));
}

int hetcoll_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return code(run(reduce_scatter_block_call(sendbuf, recvbuf, recvcount, datatype, op, comm)));
}

int hetcoll_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return code(run(reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm)));
}

int hetcoll_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return code(run(alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)));
}

int hetcoll_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return code(run(alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm)));
}

int hetcoll_barrier(MPI_Comm comm) {
  return code(run(barrier_call(comm)));
}

int hetcoll_scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return code(run(scan_call(sendbuf, recvbuf, count, datatype, op, comm)));
}

int hetcoll_exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return code(run(exscan_call(sendbuf, recvbuf, count, datatype, op, comm)));
}

int hetcoll_set_model(const char* spec) {
  return guarded([&] { set_model(spec ? spec : ""); });
}

int hetcoll_set_algorithm(const char* rules) {
  return guarded([&] { set_overrides(rules ? rules : ""); });
}

int hetcoll_last_algorithm(MPI_Comm comm, char* buf, int len) {
  return guarded([&] {
    std::string s = last_decision(comm);
    if (buf && len > 0) {
      std::strncpy(buf, s.c_str(), size_t(len) - 1);
      buf[len - 1] = 0;
    }
  });
}

const char* hetcoll_last_error(void) {
  return t_api_error.empty() ? last_error() : t_api_error.c_str();
}

const char* hetcoll_status_string(int status) {
  switch (status) {
    case HETCOLL_SUCCESS: return "success";
    case HETCOLL_UNSUPPORTED: return "not handled by hetcoll: nothing was done";
    case HETCOLL_BAD_ARGUMENT: return "invalid argument: nothing was done";
    case HETCOLL_MPI_ERROR: return "an MPI call failed during the collective";
    case HETCOLL_INTERNAL_ERROR: return "internal error in hetcoll";
  }
  return "unknown status";
}

}  // extern "C"

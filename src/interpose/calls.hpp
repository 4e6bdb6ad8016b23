// One builder per MPI collective: the MPI-3 arguments as a Call, shared by
// the PMPI layer (pmpi_collectives.cpp) and the C API (capi.cpp).
#pragma once
#include "interpose/runtime.hpp"

namespace hetcoll::mpi {

inline Call bcast_call(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::bcast;
  c.comm = comm;
  c.recvbuf = buffer;
  c.count = count;
  c.type = datatype;
  c.root = root;
  return c;
}

inline Call reduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::reduce;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.count = count;
  c.type = datatype;
  c.reduce_op = op;
  c.root = root;
  return c;
}

inline Call allreduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c;
  c.op = CollOp::allreduce;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.count = count;
  c.type = datatype;
  c.reduce_op = op;
  return c;
}

inline Call gather_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::gather;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  c.root = root;
  return c;
}

inline Call gatherv_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::gatherv;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcounts = recvcounts;
  c.rdispls = displs;
  c.recvtype = recvtype;
  c.root = root;
  return c;
}

inline Call scatter_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::scatter;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  c.root = root;
  return c;
}

inline Call scatterv_call(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Call c;
  c.op = CollOp::scatterv;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcounts = sendcounts;
  c.sdispls = displs;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  c.root = root;
  return c;
}

inline Call allgather_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Call c;
  c.op = CollOp::allgather;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  return c;
}

inline Call allgatherv_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  Call c;
  c.op = CollOp::allgatherv;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcounts = recvcounts;
  c.rdispls = displs;
  c.recvtype = recvtype;
  return c;
}

inline Call reduce_scatter_block_call(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c;
  c.op = CollOp::reduce_scatter_block;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.count = recvcount;
  c.type = datatype;
  c.reduce_op = op;
  return c;
}

inline Call reduce_scatter_call(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c;
  c.op = CollOp::reduce_scatter;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.recvcounts = recvcounts;
  c.type = datatype;
  c.reduce_op = op;
  return c;
}

inline Call alltoall_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Call c;
  c.op = CollOp::alltoall;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcount = sendcount;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcount = recvcount;
  c.recvtype = recvtype;
  return c;
}

inline Call alltoallv_call(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  Call c;
  c.op = CollOp::alltoallv;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.sendcounts = sendcounts;
  c.sdispls = sdispls;
  c.sendtype = sendtype;
  c.recvbuf = recvbuf;
  c.recvcounts = recvcounts;
  c.rdispls = rdispls;
  c.recvtype = recvtype;
  return c;
}

inline Call barrier_call(MPI_Comm comm) {
  Call c;
  c.op = CollOp::barrier;
  c.comm = comm;
  return c;
}

inline Call scan_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c;
  c.op = CollOp::scan;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.count = count;
  c.type = datatype;
  c.reduce_op = op;
  return c;
}

inline Call exscan_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c;
  c.op = CollOp::exscan;
  c.comm = comm;
  c.sendbuf = sendbuf;
  c.recvbuf = recvbuf;
  c.count = count;
  c.type = datatype;
  c.reduce_op = op;
  return c;
}

}  // namespace hetcoll::mpi

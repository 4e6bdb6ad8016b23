// The PMPI layer's engine: one MPI collective call in, planned and executed
// by hetcoll — or declined, in which case the caller runs the native
// PMPI_* function and nothing has been touched.
//
// Every reason to decline is the same on all ranks of the call (the op, a
// reduction's datatype, the communicator's kind, the environment), so ranks
// never disagree about who runs what. Datatypes that are not contiguous are
// packed; v-collectives are planned on canonical packed layouts, so the
// decision never depends on one rank's displacements. gatherv, scatterv and
// alltoallv, whose counts only some ranks know, use the algorithms that need
// only a rank's own counts.
//
// Environment (read once, the same on every rank):
//   HETCOLL_PROFILE  a model spec (hockney:alpha=...) or a JSON model file
//   HETCOLL_ALGO     overrides: bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect
//   HETCOLL_DEBUG    "explain": a line per new decision and per fallback
//   HETCOLL_DISABLE  "1": always the native collectives
#pragma once
#include <mpi.h>

#include <string>

#include "schedule/collective.hpp"

namespace hetcoll::mpi {

struct Call {
  CollOp op = CollOp::barrier;
  MPI_Comm comm = MPI_COMM_NULL;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;  // bcast: the buffer
  // bcast, reduce, allreduce, scan, exscan: count and type;
  // reduce_scatter_block: recvcount and type; reduce_scatter: type.
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op reduce_op = MPI_OP_NULL;
  int sendcount = 0, recvcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL, recvtype = MPI_DATATYPE_NULL;
  // scatterv: sendcounts + sdispls; gatherv, allgatherv: recvcounts +
  // rdispls; alltoallv: all four; reduce_scatter: recvcounts.
  const int* sendcounts = nullptr;
  const int* sdispls = nullptr;
  const int* recvcounts = nullptr;
  const int* rdispls = nullptr;
  int root = 0;
};

enum class Status {
  ok = 0,
  unsupported = 1,   // declined: nothing done, run the native collective
  bad_argument = 2,  // invalid arguments: nothing done (the native call reports them)
  mpi_error = 3,     // an MPI call failed during execution
  internal = 4,      // a bug: the schedule could not be executed
};

// Never throws.
Status run(const Call& call) noexcept;

// Detail of the calling thread's last non-ok status.
const char* last_error() noexcept;
// The algorithm of the last collective hetcoll ran on `comm` ("" if none).
std::string last_decision(MPI_Comm comm);

// Replace HETCOLL_PROFILE / HETCOLL_ALGO at run time (the C API); an empty
// string restores the default model / clears the overrides. Throw
// InputError on bad input, leaving the old setting.
void set_model(const std::string& spec);
void set_overrides(const std::string& rules);

// The name of the MPI function for messages ("MPI_Allreduce").
const char* mpi_name(CollOp op);

}  // namespace hetcoll::mpi

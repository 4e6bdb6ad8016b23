// One MPI collective call as the runtime sees it: the MPI arguments by their
// MPI names, packed by make_call_<name>(...) — generated, like the PMPI
// wrappers and the C API, from include/hetcoll_collectives.def.
#pragma once
#include <mpi.h>

#include "schedule/collective.hpp"

namespace hetcoll::mpi {

struct Call {
  CollOp coll = CollOp::barrier;
  MPI_Comm comm = MPI_COMM_NULL;
  void* buffer = nullptr;  // bcast
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  int sendcount = 0, recvcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL, recvtype = MPI_DATATYPE_NULL;
  const int* sendcounts = nullptr;
  const int* recvcounts = nullptr;
  const int* displs = nullptr;  // gatherv, allgatherv: receive side; scatterv: send side
  const int* sdispls = nullptr;
  const int* rdispls = nullptr;
};

// The form an application called a collective in.
enum class Form { blocking, nonblocking, persistent };
// "MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init" (Open MPI 4: "MPIX_Bcast_init"),
// for messages.
const char* mpi_name(CollOp op, Form form = Form::blocking);

// HC_FOR_EACH(m, a, b, c) → m(a) m(b) m(c), for up to 9 arguments.
#define HC_FE_1(m, a) m(a)
#define HC_FE_2(m, a, ...) m(a) HC_FE_1(m, __VA_ARGS__)
#define HC_FE_3(m, a, ...) m(a) HC_FE_2(m, __VA_ARGS__)
#define HC_FE_4(m, a, ...) m(a) HC_FE_3(m, __VA_ARGS__)
#define HC_FE_5(m, a, ...) m(a) HC_FE_4(m, __VA_ARGS__)
#define HC_FE_6(m, a, ...) m(a) HC_FE_5(m, __VA_ARGS__)
#define HC_FE_7(m, a, ...) m(a) HC_FE_6(m, __VA_ARGS__)
#define HC_FE_8(m, a, ...) m(a) HC_FE_7(m, __VA_ARGS__)
#define HC_FE_9(m, a, ...) m(a) HC_FE_8(m, __VA_ARGS__)
#define HC_FE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, NAME, ...) NAME
#define HC_FOR_EACH(m, ...) \
  HC_FE_PICK(__VA_ARGS__, HC_FE_9, HC_FE_8, HC_FE_7, HC_FE_6, HC_FE_5, HC_FE_4, HC_FE_3, HC_FE_2, HC_FE_1)(m, __VA_ARGS__)
#define HC_UNPAREN(...) __VA_ARGS__
#define HC_SET_FIELD(x) c.x = x;

#define HETCOLL_COLLECTIVE(name, Name, params, args) \
  inline Call make_call_##name params {              \
    Call c;                                          \
    c.coll = CollOp::name;                           \
    HC_FOR_EACH(HC_SET_FIELD, HC_UNPAREN args)       \
    return c;                                        \
  }
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE

}  // namespace hetcoll::mpi

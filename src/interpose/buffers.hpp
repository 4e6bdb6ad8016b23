// From one rank's MPI arguments to what the executor needs: the Collective
// this rank knows (sizes in bytes; v-collectives on canonical packed
// layouts, so that the decision never depends on one rank's
// displacements), where the logical `in` and `out` buffers are, and the
// packing before and unpacking after for datatypes whose elements are not
// contiguous in order.
//
// An argument is read only on the ranks where the MPI standard makes it
// significant (a scatter's send arguments at the root only, the receive
// arguments of a root that passes MPI_IN_PLACE not at all, ...), and every
// argument read is checked first: a bad one is a UserError with the MPI
// error class the native library gives, before anything is done.
#pragma once
#include <functional>
#include <vector>

#include "exec/reduce_kernels.hpp"
#include "interpose/call.hpp"
#include "interpose/comm_state.hpp"

namespace hetcoll::mpi {

// How a reduction's (datatype, op) combine. Throws UserError for a null
// datatype or op, Decline when hetcoll cannot combine them (a user-defined
// op, a derived datatype, MPI_CHAR: the native MPI runs the call).
struct Reduction {
  ReduceFn kernel = nullptr;
  uint32_t elem = 1;
  bool order_free = false;
  ElemType type = ElemType::byte;
  // A pair type with holes (MPI_DOUBLE_INT): the call runs on dense records
  // (exec/reduce_kernels.hpp), packed before and unpacked after, so that
  // no byte outside the type map is written.
  bool dense = false;
};
Reduction reduction_of(const Call& c);

struct Prepared {
  Collective coll;
  ReduceFn kernel = nullptr;
  const void* in = nullptr;
  void* out = nullptr;
  bool in_place = false;
  std::vector<std::function<void()>> after;  // unpack into the user's buffers
};
// Throws UserError (bad arguments, before anything is done) or MpiError.
// Datatypes are packed into `mem` (the call's working memory).
Prepared prepare(const Call& c, const Reduction& red, CommState& st, CallMemory& mem);

// Called at the start of each call: layouts are remembered for its length.
void forget_layouts();

}  // namespace hetcoll::mpi

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

// The application's objects a collective reads after its MPI call has
// returned — derived datatypes (held duplicates: hold_type) and the count
// and displacement arrays (copies) — kept until the collective completes
// (non-blocking) or its request is freed (persistent): MPI lets the
// application free its datatype handles meanwhile, and hetcoll does not
// depend on the arrays staying where they were.
class HeldObjects {
 public:
  HeldObjects() = default;
  HeldObjects(const HeldObjects&) = delete;
  HeldObjects& operator=(const HeldObjects&) = delete;
  ~HeldObjects() { release(); }
  MPI_Datatype type(MPI_Datatype t);           // the held duplicate (a predefined type itself)
  const int* array(const int* a, size_t n);    // a copy that lives as long as this
  void release();

 private:
  std::vector<MPI_Datatype> types_;
  std::vector<std::vector<int>> arrays_;
};

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
// The same for a call that outlives its MPI call (a non-blocking one, a
// persistent one's initialization): every derived datatype and array it
// reads is held in `held`, and `c` is rewritten to name the held ones (a
// persistent collective's starts prepare that call again).
Prepared prepare_held(Call& c, const Reduction& red, CommState& st, CallMemory& mem, HeldObjects& held);

// Called at the start of each call: layouts are remembered for its length.
void forget_layouts();

}  // namespace hetcoll::mpi

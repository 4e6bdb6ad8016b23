// MPI handles → hetcoll's reduction enums, and what the PMPI layer needs to
// know of a datatype: how many bytes of data an element holds, and whether
// `count` elements are exactly `count * size` bytes in order from the
// buffer's start — then the executor works on the user's buffer itself;
// otherwise the data is packed (pack/unpack below), whatever the type map.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <optional>

#include "exec/reduce_kernels.hpp"

namespace hetcoll::mpi {

std::optional<ReduceOp> reduce_op_of(MPI_Op op);
// Predefined types MPI defines reductions on (C integers, floating point,
// complex, bool, byte, the MINLOC/MAXLOC pairs, and the usual Fortran
// ones); nullopt for everything else (derived types, MPI_CHAR, ...).
std::optional<ElemType> elem_type_of(MPI_Datatype type);

struct TypeLayout {
  uint64_t size = 0;        // bytes of data per element (MPI_Type_size_x)
  MPI_Aint extent = 0;      // stride between elements
  // The type map, read in order, is bytes [0, size) once each, and the
  // extent is the size: count elements are count*size bytes in order.
  // A permuted type map (the transpose-by-datatype idiom, a struct whose
  // blocks are out of order) is not, even when its bounds say "no holes".
  bool contiguous = false;
};
// Throws MpiError on an MPI error. The type must not be MPI_DATATYPE_NULL
// (callers check arguments first). Layouts of derived types are cached on
// the type (an attribute, dropped when the type is freed); predefined
// types are remembered by handle.
TypeLayout layout_of(MPI_Datatype type);

// A predefined datatype (MPI_INT, MPI_2INT, ...): never freed. Throws MpiError.
bool predefined_type(MPI_Datatype type);
// A collective in flight holds the application's derived datatypes: MPI
// lets the application free its handle meanwhile (MPI_Type_free only marks
// the type), so hetcoll works on a duplicate of its own, which keeps the
// cached layout. hold_type returns the duplicate (a predefined type
// itself); release_type frees a duplicate hold_type made. (Not under
// SimGrid 3.32, whose MPI_Type_dup is wrong: the handle itself there.)
MPI_Datatype hold_type(MPI_Datatype type);
void release_type(MPI_Datatype held);

// Packing of `count` elements of `type` at `buf` into (or from) `bytes`
// = count * size contiguous bytes, in type-map order — for any count, any
// element size (MPI_Pack's int arguments are never overflowed: large
// counts go in chunks, elements over 2 GiB as a message to this rank
// itself on a private duplicate of MPI_COMM_SELF). Throws MpiError.
void pack(const void* buf, uint64_t count, MPI_Datatype type, const TypeLayout& l, char* bytes);
void unpack(const char* bytes, uint64_t count, MPI_Datatype type, const TypeLayout& l, void* buf);

}  // namespace hetcoll::mpi

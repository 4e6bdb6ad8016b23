// MPI handles → hetcoll's reduction enums, and what the PMPI layer needs to
// know of a datatype.
#pragma once
#include <mpi.h>

#include <optional>

#include "exec/reduce_kernels.hpp"

namespace hetcoll::mpi {

std::optional<ReduceOp> reduce_op_of(MPI_Op op);
// Predefined types MPI defines reductions on (C integers, floating point,
// complex, bool, byte, the MINLOC/MAXLOC pairs, and the usual Fortran
// ones); nullopt for everything else (derived types, MPI_CHAR, ...).
std::optional<ElemType> elem_type_of(MPI_Datatype type);

struct TypeLayout {
  size_t size = 0;       // bytes of data per element (MPI_Type_size)
  MPI_Aint extent = 0;   // stride between elements
  bool contiguous = false;  // no holes: size == extent and lower bound 0
};
TypeLayout layout_of(MPI_Datatype type);  // throws ScheduleError on an MPI error

}  // namespace hetcoll::mpi

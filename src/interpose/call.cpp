#include "interpose/call.hpp"

namespace hetcoll::mpi {

#if MPI_VERSION >= 4
#define HC_INIT_PREFIX "MPI_"
#else
#define HC_INIT_PREFIX "MPIX_"  // Open MPI 4's pcollreq extension
#endif
const char* mpi_name(CollOp op, Form form) {
  switch (op) {
#define HETCOLL_COLLECTIVE(name, Name, params, args)                                     \
  case CollOp::name:                                                                     \
    return form == Form::nonblocking  ? "MPI_I" #name                                    \
           : form == Form::persistent ? HC_INIT_PREFIX #Name "_init"                     \
                                      : "MPI_" #Name;
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
  }
  return "MPI_?";
}
#undef HC_INIT_PREFIX

}  // namespace hetcoll::mpi

#include "interpose/errors.hpp"

namespace hetcoll::mpi {

int raise_on(MPI_Comm comm, int code) {
  if (code == MPI_SUCCESS || comm == MPI_COMM_NULL) return code;
  // MPI_ERRORS_RETURN is answered here (SimGrid 3.32 crashes calling it
  // through MPI_Comm_call_errhandler); any other handler is called.
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN) {
    PMPI_Errhandler_free(&eh);
    return code;
  }
  if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace hetcoll::mpi

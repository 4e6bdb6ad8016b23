// The MPI collectives with their MPI-3 C bindings (generated from
// include/hetcoll_collectives.def): planned and run by hetcoll, or handed
// to PMPI_* unchanged when hetcoll declines or the arguments are bad (run()
// has done nothing then; the native library reports bad arguments with its
// own error class, under the user's error handler). A failure during the
// collective surfaces on the user's communicator, under the handler in
// effect there: the MPI error of the underlying call, or MPI_ERR_INTERN
// with a report for a bug in hetcoll.
#include <mpi.h>

#include <cstdio>

#include "interpose/runtime.hpp"
#include "interpose/watchdog.hpp"

using namespace hetcoll::mpi;

namespace {
const std::string kNativeWhere = "its communicator";

template <class Native>
int finish(const Call& c, Native&& native) {
  const Status s = run(c);
  if (s == Status::ok) return MPI_SUCCESS;
  const LastError& e = last_error();
  // Invalid arguments go to the native MPI for its own error — except
  // MPI_IN_PLACE where MPI does not allow it: MPICH takes it for a buffer
  // address and crashes copying from it. hetcoll answers MPI_ERR_BUFFER.
  if (s == Status::unsupported || (s == Status::bad_argument && !e.answer_here)) {
    WatchedCall watch(mpi_name(c.coll), &kNativeWhere, true);
    return native();
  }
  if (s == Status::internal)
    std::fprintf(stderr, "hetcoll: %s (a bug in hetcoll: please report it; HETCOLL_DISABLE=1 avoids it)\n",
                 e.message.c_str());
  int code = e.mpi_code;
  // The handler in effect on the user's communicator decides. MPI_ERRORS_RETURN
  // is answered here (SimGrid 3.32 crashes calling it through
  // MPI_Comm_call_errhandler); any other handler is called.
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(c.comm, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN) {
    PMPI_Errhandler_free(&eh);
    return code;
  }
  if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
  PMPI_Comm_call_errhandler(c.comm, code);
  return code;
}
}  // namespace

extern "C" {
#define HETCOLL_COLLECTIVE(name, Name, params, args) \
  int MPI_##Name params { return finish(make_call_##name args, [&] { return PMPI_##Name args; }); }
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
}  // extern "C"

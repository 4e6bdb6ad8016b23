// The MPI collectives with their MPI-3 C bindings, blocking, non-blocking
// (MPI_I<Coll>) and persistent (MPI_<Coll>_init, MPIX_<Coll>_init in Open
// MPI), generated from include/hetcoll_collectives.def: planned and run by
// hetcoll (call_path.hpp), or handed to PMPI_* unchanged when hetcoll
// declines or the arguments are bad (the call path has done nothing then;
// the native library reports bad arguments with its own error class, under
// the user's error handler). A failure during the
// collective surfaces on the user's communicator, under the handler in
// effect there: the MPI error of the underlying call, or MPI_ERR_INTERN
// with a report for a bug in hetcoll.
#include <mpi.h>

#include <cstdio>
#include <memory>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_<Coll>_init
#endif
#endif

#include "interpose/progress.hpp"
#include "interpose/requests.hpp"
#include "interpose/call_path.hpp"
#include "interpose/learning.hpp"
#include "interpose/watchdog.hpp"

using namespace hetcoll::mpi;

namespace {
const std::string kNativeWhere = "its communicator";

// A call hetcoll does not run goes to the native MPI, blocking as it was
// called (a blocking collective does not match a non-blocking one on
// another rank, so it cannot become one). hetcoll collectives in flight
// meanwhile are advanced by the progress thread (progress.hpp), where MPI
// allows one.
template <class Native>
int native_call(const Call& c, Native&& native) {
  WatchedCall watch(mpi_name(c.coll), &kNativeWhere, true);
  ProgressWhileBlocked progress;
  return native();
}

// After hetcoll could not run or start a call: the native MPI's turn, or
// the error on the user's communicator.
template <class Native>
int after_failure(const Call& c, Status s, Native&& native) {
  const LastError& e = last_error();
  // Invalid arguments go to the native MPI for its own error — except
  // MPI_IN_PLACE where MPI does not allow it: MPICH takes it for a buffer
  // address and crashes copying from it. hetcoll answers MPI_ERR_BUFFER.
  if (s == Status::unsupported || (s == Status::bad_argument && !e.answer_here)) return native();
  if (s == Status::internal)
    std::fprintf(stderr, "hetcoll: %s (a bug in hetcoll: please report it; HETCOLL_DISABLE=1 avoids it)\n",
                 e.message.c_str());
  // The handler in effect on the user's communicator decides.
  return raise_on(c.comm, e.mpi_code);
}

template <class Native>
int finish(const Call& c, Native&& native) {
  const LearningScope learning;  // HETCOLL_LEARN: the call timed to its end, whoever runs it
  const Status s = run_blocking(c);
  if (s == Status::ok) return MPI_SUCCESS;
  return after_failure(c, s, [&] { return native_call(c, native); });
}

// A non-blocking collective: started by hetcoll behind a request of its
// own, or the native call's request.
template <class NativeNb>
int finish_nb(const Call& c, MPI_Request* request, NativeNb&& native_nb) {
  if (!request) return native_nb(request);  // the native library says what is wrong
  auto p = new_pending();
  const Status s = start_nonblocking(c, *p);
  if (s == Status::ok) {
    try {
      *request = issue(p);
      return MPI_SUCCESS;
    } catch (const hetcoll::MpiError& e) {  // no request could be made: the collective runs on, finished here
      engine_finish(*p);
      recycle(p.release());
      return raise_on(c.comm, e.code());
    }
  }
  recycle(p.release());
  return after_failure(c, s, [&] { return native_nb(request); });
}

// A persistent collective: planned by hetcoll now, behind a request of its
// own (requests.hpp), or the native library's persistent request.
template <class NativeInit>
int finish_init(const Call& c, MPI_Request* request, NativeInit&& native_init) {
  if (!request) return native_init(request);
  auto p = std::make_unique<Pending>();
  const Status s = init_persistent(c, *p);
  if (s == Status::ok) {
    try {
      *request = issue(p);
      return MPI_SUCCESS;
    } catch (const hetcoll::MpiError& e) {  // no handle: the plan goes
      return raise_on(c.comm, e.code());
    }
  }
  p.reset();
  return after_failure(c, s, [&] { return native_init(request); });
}
}  // namespace

extern "C" {
#define HETCOLL_COLLECTIVE(name, Name, params, args)                                                    \
  int MPI_##Name params {                                                                              \
    return finish(make_call_##name args, [&] { return PMPI_##Name args; });                           \
  }                                                                                                    \
  int MPI_I##name(HC_UNPAREN params, MPI_Request* request) {                                           \
    return finish_nb(make_call_##name args, request,                                                   \
                     [&](MPI_Request* r) { return PMPI_I##name(HC_UNPAREN args, r); });                \
  }                                                                                                    \
  HETCOLL_PERSISTENT(name, Name, params, args)
// Persistent collectives: MPI-4's MPI_<Coll>_init (MPICH 4), Open MPI's
// MPIX_<Coll>_init (its pcollreq extension).
#if MPI_VERSION >= 4
#define HETCOLL_PERSISTENT(name, Name, params, args)                                                   \
  int MPI_##Name##_init(HC_UNPAREN params, MPI_Info info, MPI_Request* request) {                      \
    return finish_init(make_call_##name args, request,                                                 \
                       [&](MPI_Request* r) { return PMPI_##Name##_init(HC_UNPAREN args, info, r); });  \
  }
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HETCOLL_PERSISTENT(name, Name, params, args)                                                   \
  int MPIX_##Name##_init(HC_UNPAREN params, MPI_Info info, MPI_Request* request) {                     \
    return finish_init(make_call_##name args, request,                                                 \
                       [&](MPI_Request* r) { return PMPIX_##Name##_init(HC_UNPAREN args, info, r); }); \
  }
#else
#define HETCOLL_PERSISTENT(name, Name, params, args)
#endif
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
#undef HETCOLL_PERSISTENT
}  // extern "C"

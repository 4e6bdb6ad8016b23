// The C API (include/hetcoll.h): statuses, never exceptions. The
// collectives are generated from include/hetcoll_collectives.def.
#include "hetcoll.h"

#include <cstring>
#include <string>
#include <utility>

#include "config/settings.hpp"
#include "exec/mpi_transport.hpp"
#include "interpose/call_path.hpp"
#include "interpose/runtime.hpp"

using namespace hetcoll::mpi;

// The C enum and the runtime's statuses are one list.
static_assert(HETCOLL_SUCCESS == int(Status::ok) && HETCOLL_UNSUPPORTED == int(Status::unsupported) &&
                  HETCOLL_BAD_ARGUMENT == int(Status::bad_argument) && HETCOLL_MPI_ERROR == int(Status::mpi_error) &&
                  HETCOLL_INTERNAL_ERROR == int(Status::internal),
              "hetcoll.h's hetcoll_status and hetcoll::mpi::Status differ");

namespace {
// The C API's own last failure (configuration calls); a collective's is the
// runtime's last_error().
thread_local LastError t_api;
thread_local bool t_api_last = false;  // the last failure was a configuration call's

int status_of(Status s) {
  t_api_last = false;
  return int(s);
}

template <class F>
int configure(F&& f) noexcept {
  try {
    f();
    return HETCOLL_SUCCESS;
  } catch (const std::exception& e) {
    t_api_last = true;
    t_api.status = Status::bad_argument;
    t_api.mpi_code = MPI_ERR_ARG;
    t_api.message = e.what();
    return HETCOLL_BAD_ARGUMENT;
  }
}
// hetcoll_set_model / hetcoll_set_algorithm: the change (or its refusal),
// then, whatever happened on this rank, the comparison on MPI_COMM_WORLD
// that every rank takes part in.
template <class F>
int reconfigure(const char* what, F&& f) noexcept {
  const int status = configure(std::forward<F>(f));
  try {
    agree_on_world(what);
  } catch (const std::exception& e) {
    const auto* mpi = dynamic_cast<const hetcoll::MpiError*>(&e);
    t_api_last = true;
    t_api.status = mpi ? Status::mpi_error : Status::internal;
    t_api.mpi_code = mpi ? mpi->code() : MPI_ERR_INTERN;
    t_api.message = std::string(what) + ": comparing the ranks' configurations: " + e.what();
    return int(t_api.status);
  }
  return status;
}
}  // namespace

extern "C" {

#define HETCOLL_COLLECTIVE(name, Name, params, args) \
  int hetcoll_##name params { return status_of(run_blocking(make_call_##name args)); }
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE

int hetcoll_set_model(const char* spec) {
  return reconfigure("hetcoll_set_model", [&] { set_model(spec ? spec : ""); });
}

int hetcoll_set_algorithm(const char* rules) {
  return reconfigure("hetcoll_set_algorithm", [&] { set_overrides(rules ? rules : ""); });
}

int hetcoll_last_algorithm(MPI_Comm comm, char* buf, int len) {
  return configure([&] {
    std::string s = last_decision(comm);
    if (buf && len > 0) {
      std::strncpy(buf, s.c_str(), size_t(len) - 1);
      buf[len - 1] = 0;
    }
  });
}

const char* hetcoll_last_error(void) { return t_api_last ? t_api.message.c_str() : last_error().message.c_str(); }

int hetcoll_last_error_code(void) { return t_api_last ? t_api.mpi_code : last_error().mpi_code; }

const char* hetcoll_status_string(int status) {
  switch (status) {
    case HETCOLL_SUCCESS: return "success";
    case HETCOLL_UNSUPPORTED: return "not handled by hetcoll: nothing was done";
    case HETCOLL_BAD_ARGUMENT: return "invalid argument: nothing was done";
    case HETCOLL_MPI_ERROR: return "an MPI call failed during the collective";
    case HETCOLL_INTERNAL_ERROR: return "internal error in hetcoll (a bug: please report it)";
  }
  return "unknown status";
}

const char* hetcoll_version(void) { return hetcoll::version(); }

}  // extern "C"

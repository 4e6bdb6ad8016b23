// How a call through the MPI layer ends, and why. Three kinds of failure
// are kept apart, because a user reacts to each differently:
//   - the user's bad argument (UserError): nothing was done; it carries the
//     MPI error class the native library gives for it (MPI_ERR_TYPE, ...);
//     the PMPI layer hands the call to the native MPI, which reports it
//     under the user's error handler exactly as it would without hetcoll;
//   - a failure of the underlying MPI during the call (MpiError, from the
//     exec layer): its MPI error code surfaces on the user's communicator,
//     under the user's error handler;
//   - a bug in hetcoll (anything else): reported as one, with
//     MPI_ERR_INTERN, never passed off as an MPI error.
// And one non-failure: Decline — hetcoll does not handle this call (an
// intercommunicator, a user-defined op, HETCOLL_DISABLE); nothing was done
// and the native MPI runs it.
#pragma once
#include <mpi.h>

#include <string>

#include "util/error.hpp"

namespace hetcoll::mpi {

// The statuses of run() and of the C API (hetcoll.h keeps the same values;
// capi.cpp checks that at compile time).
enum class Status {
  ok = 0,
  unsupported = 1,   // declined: nothing done, run the native collective
  bad_argument = 2,  // the user's bad argument: nothing done
  mpi_error = 3,     // an MPI call failed during the collective
  internal = 4,      // a bug in hetcoll
};

class UserError : public InputError {
 public:
  // answer_here: hetcoll answers it itself rather than passing the call to
  // the native MPI for its own error (MPI_IN_PLACE where MPI allows none:
  // MPICH's collectives would dereference it).
  UserError(int mpi_class, const std::string& what, bool answer_here = false)
      : InputError(what), mpi_class_(mpi_class), answer_here_(answer_here) {}
  int mpi_class() const { return mpi_class_; }
  bool answer_here() const { return answer_here_; }

 private:
  int mpi_class_;
  bool answer_here_;
};

struct Decline {
  std::string why;
};

// What the calling thread's last call that did not succeed left behind.
struct LastError {
  Status status = Status::ok;
  int mpi_code = MPI_SUCCESS;  // the MPI error code (a class for bad arguments)
  std::string message;
  bool answer_here = false;  // a bad argument hetcoll answers itself (UserError::answer_here)
};
const LastError& last_error() noexcept;

// Raises `code` on `comm` the way MPI does: returned under
// MPI_ERRORS_RETURN, else the handler in effect is called. Returns code.
// (A request's error: comm_state.hpp's raise_error, which knows a freed
// communicator.)
int raise_on(MPI_Comm comm, int code);

}  // namespace hetcoll::mpi

// The PMPI layer's engine: one MPI collective call in, planned and executed
// by hetcoll — or declined, in which case the caller runs the native
// PMPI_* function and nothing has been touched.
//
// The call path (runtime.cpp): configuration (runtime_config), the
// communicator's state (comm_state), the arguments and buffers (buffers),
// the decision (the planner: plan/planner.hpp is the one place policy
// lives), the compiled program, the executor, the unpacking. Every reason
// to decline is the same on all ranks of the call (the op, a reduction's
// datatype, the communicator's kind, the environment), so ranks never
// disagree about who runs what.
#pragma once
#include <mpi.h>

#include <string>

#include "interpose/call.hpp"
#include "interpose/errors.hpp"

namespace hetcoll::mpi {

// Runs the call. Never throws; the reason for a status other than ok is in
// last_error().
Status run(const Call& call) noexcept;

struct Pending;
// A non-blocking collective: planned as run() plans, started in `p` (its
// own transport and memory) and left to the progress engine
// (requests.hpp). Status::ok when hetcoll runs it; otherwise as run(), and
// nothing was started.
Status start(const Call& call, Pending& p) noexcept;
// A persistent collective: planned into `p` (nothing runs); restart()
// starts it (MPI_Start), reading its buffers then.
Status plan_persistent(const Call& call, Pending& p) noexcept;
Status restart(Pending& p) noexcept;

// The algorithm of the last collective hetcoll ran on `comm` ("" if none).
std::string last_decision(MPI_Comm comm);

// After the C API changed the model or the overrides: the ranks compare
// their configurations on MPI_COMM_WORLD (collective over it; nothing
// before MPI_Init or after MPI_Finalize), and the verdict holds for every
// communicator hetcoll set up before. Throws MpiError when the comparison
// fails. `what` names the C API call (for hang reports).
void agree_on_world(const char* what);

}  // namespace hetcoll::mpi

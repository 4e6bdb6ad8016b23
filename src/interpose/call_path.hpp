// The PMPI layer's one call path: an MPI collective call in — blocking,
// non-blocking or persistent — planned and executed by hetcoll, or declined,
// in which case the caller runs the native PMPI_* function and nothing has
// been touched. Every form goes through the same steps, each in its own
// file, each calling only down:
//   1. set up the communicator: its state, the ranks' agreement on the
//      configuration (comm_state.hpp), the checks every rank makes alike;
//   2. the arguments and buffers (buffers.hpp);
//   3. decide and compile (compile.hpp; the planner, plan/planner.hpp, is
//      the one place policy lives);
//   4. start: the program bound to its buffers, launched on the progress
//      engine (engine.hpp) — or, for a blocking call with nothing else in
//      flight, run to the end here by the executor;
//   5. progress and complete: the engine advances it (and the progress
//      thread, progress.hpp); a blocking call waits for it here, a request
//      completes in the wait and test functions (requests.hpp).
// Every reason to decline is the same on all ranks of the call (the op, a
// reduction's datatype, the communicator's kind, the environment), so ranks
// never disagree about who runs what.
#pragma once
#include <mpi.h>

#include <string>

#include "interpose/call.hpp"
#include "interpose/engine.hpp"
#include "interpose/errors.hpp"

namespace hetcoll::mpi {

// A blocking collective, run to the end. Never throws (so are the others);
// the reason for a status other than ok is in last_error().
Status run_blocking(const Call& call) noexcept;
// A non-blocking collective, started in `p` (its own transport and memory)
// and left to the progress engine. Status::ok when hetcoll runs it;
// otherwise nothing was started.
Status start_nonblocking(const Call& call, Pending& p) noexcept;
// A persistent collective: planned into `p` at its initialization (nothing
// runs); start_persistent() starts it (MPI_Start), reading its buffers then.
Status init_persistent(const Call& call, Pending& p) noexcept;
Status start_persistent(Pending& p) noexcept;

// The algorithm of the last collective hetcoll ran on `comm` ("" if none).
std::string last_decision(MPI_Comm comm);

// After the C API changed the model or the overrides: the ranks compare
// their configurations on MPI_COMM_WORLD (collective over it; nothing
// before MPI_Init or after MPI_Finalize), and the verdict holds for every
// communicator hetcoll set up before. Throws MpiError when the comparison
// fails. `what` names the C API call (for hang reports).
void agree_on_world(const char* what);

}  // namespace hetcoll::mpi

// Non-blocking and persistent collectives: the same decision, the same
// compiled program, the same executor as a blocking call — run as an
// ExecRun (exec/executor.hpp) that this engine advances whenever the
// application is in MPI: in every wait and test, in the blocking
// point-to-point calls, in hetcoll's own collectives, and (optionally) on a
// progress thread.
//
// A request the application holds is an MPI request handle:
//   - a non-blocking collective's is a generalized request
//     (MPI_Grequest_start), completed when the schedule has run; a wait
//     that somehow bypasses hetcoll then blocks rather than returning early;
//   - a persistent collective's is an inactive persistent receive on
//     MPI_COMM_SELF, never started: a handle of the right kind that holds
//     nothing (a wait that somehow bypasses hetcoll returns at once on it,
//     inactive). Not the native library's own persistent collective for the
//     same call: MPICH 4.0.2 plans that in full at the initialization, for
//     nothing, and leaks its datatypes when it is freed unstarted.
// Every wait and test function looks its requests up here; handles hetcoll
// does not know (the application's point-to-point, declined collectives)
// go to the native library, in the same call.
//
// Every outstanding collective runs on its own transport and memory; its
// messages carry a tag region (mpi_transport.hpp), so any number of
// collectives in flight on one communicator, and on overlapping ones,
// cannot take each other's messages:
//   - a blocking or non-blocking collective's region is its epoch (the
//     how-many-th hetcoll collective on the communicator: the same on every
//     rank, as MPI orders these by their calls); epochs repeat after
//     CommInfo::epochs collectives, and a collective whose region's previous
//     holder is still in flight waits for it first;
//   - a persistent collective holds a region of its own from its
//     initialization to MPI_Request_free (agreed by the ranks then:
//     comm_state.hpp), so that its starts, which MPI lets ranks make in any
//     order, never shift the epochs of the others — or, when every region is
//     held, a duplicate communicator of its own.
// A collective in flight holds the application's objects it still reads
// (HeldObjects: derived datatypes, arrays) and its communicator's state.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "exec/mpi_transport.hpp"
#include "exec/wait_log.hpp"
#include "interpose/buffers.hpp"
#include "interpose/call.hpp"
#include "interpose/comm_state.hpp"

namespace hetcoll::mpi {

// One hetcoll collective behind a request (or a blocking call that runs
// while others are in flight).
struct Pending {
  Call call;
  MPI_Comm comm = MPI_COMM_NULL;  // the user's: errors are raised there
  CommState* st = nullptr;        // held (hold_state) while the request lives
  Reduction red;
  std::shared_ptr<const Compiled> cc;  // planned once (at init for a persistent one)
  Prepared pr;                         // this start's buffers and unpacking
  HeldObjects held;                    // what `call` names of the application's, held
  CallMemory mem;
  std::unique_ptr<MpiTransport> transport;
  ExecScratch scratch;
  ExecRun run;
  std::vector<Transport::Request> done;
  WaitLog log;  // its messages outstanding, for hang reports (watchdog.hpp)
  int region = 0;  // its tags' (MpiTransport::CommInfo)
  int slot = -1;    // a persistent collective's tag region, held until freed
  // A persistent collective's own duplicate of st->dup where no slot was
  // free (its messages then need no region of their own); freed with it.
  MPI_Comm own_comm = MPI_COMM_NULL;
  MPI_Request handle = MPI_REQUEST_NULL;  // what the application holds (none: a blocking call)
  bool persistent = false;
  bool active = false;    // started, and not yet completed by a wait or test
  bool finished = false;  // its schedule has run (or failed)
  int error = MPI_SUCCESS;
  std::string message;  // what failed
  ~Pending();
  // Back to a fresh request's state, keeping memory, scratch and transport
  // (releases the held objects, the slot and the state's hold).
  void reuse();
  void release_holds();
};

// A Pending for a new request: one a finished request left (its memory,
// scratch and transport kept: a small collective allocates nothing), or a
// new one. recycle() takes back a Pending nothing refers to any more.
std::unique_ptr<Pending> new_pending();
void recycle(Pending* p);

// Any hetcoll request alive (fast path of the wait and test functions), any
// collective in flight (fast path of the blocking point-to-point calls).
bool requests_live();
bool collectives_in_flight();

// A Pending the runtime has just launched (its run started): the engine
// advances it from now on; settles it at once if it already finished.
void engine_add(Pending& p);
// Before launching in tag `region` on `st`: waits until no collective in
// flight on `st` uses the same region (epochs apart).
void engine_wait_for_tags(const CommState& st, int region);
// Blocks until p's schedule has run, advancing everything in flight.
void engine_finish(Pending& p);

// A request for the application: registers p (a generalized request for a
// non-blocking collective, an inactive persistent one for a persistent
// collective), takes it over and returns its handle. Throws MpiError when
// MPI makes none (p is still the caller's then).
MPI_Request issue(std::unique_ptr<Pending>& p);

// The completion functions, as MPI defines them, for arrays that mix
// hetcoll's requests with any others.
int wait_requests(int n, MPI_Request reqs[], MPI_Status statuses[]);  // Waitall; Wait with n = 1
int test_requests(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]);  // Testall; Test
int wait_any(int n, MPI_Request reqs[], int* index, MPI_Status* status);
int test_any(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status);
int wait_some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int test_some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int request_get_status(MPI_Request req, int* flag, MPI_Status* status);
int request_free(MPI_Request* req);
int cancel(MPI_Request* req);
int start(MPI_Request* req);
int start_all(int n, MPI_Request reqs[]);
// Advances the collectives in flight without blocking (MPI_Iprobe and the
// loops that poll).
void poll_collectives();
// The progress thread's poll: like poll_collectives, but it stands aside
// while another thread advances the collectives (a wait polling under
// MPI_THREAD_MULTIPLE, or one holding the engine).
enum class Poll { moved, idle, stood_aside };
Poll progress_poll();

// Raises `code` on `comm` the way MPI does: returned under
// MPI_ERRORS_RETURN, else the handler in effect is called. Returns code.
// (A request's error: comm_state.hpp's raise_error, which knows a freed
// communicator.)
int raise_on(MPI_Comm comm, int code);

}  // namespace hetcoll::mpi

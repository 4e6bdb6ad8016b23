// The progress engine: hetcoll's collectives in flight, each an ExecRun
// (exec/executor.hpp) on its own transport and memory, advanced whenever the
// application is in MPI — in every wait and test (requests.hpp), in the
// blocking point-to-point calls, in hetcoll's own collectives, and
// (optionally) on the progress thread (progress.hpp). It knows nothing of
// the handles the application holds (requests.hpp) or of how a call is
// planned (call_path.hpp): it is handed a Pending whose run has started
// (engine_add) and settles it when its schedule is over.
//
// Tags: every collective in flight carries a tag region
// (mpi_transport.hpp), so any number of them on one communicator, and on
// overlapping ones, cannot take each other's messages:
//   - a blocking or non-blocking collective's region is its epoch (the
//     how-many-th hetcoll collective on the communicator: the same on every
//     rank, as MPI orders these by their calls); epochs repeat after
//     CommInfo::epochs collectives, and a collective whose region's previous
//     holder is still in flight waits for it first (engine_wait_for_tags);
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
#include <mutex>
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

// The call that made p, for messages: "MPI_Iallreduce", "MPI_Allreduce_init",
// "MPI_Allreduce" (a blocking call the engine runs).
const char* call_name(const Pending& p);

// A Pending for a new request: one a finished request left (its memory,
// scratch and transport kept: a small collective allocates nothing), or a
// new one. recycle() takes back a Pending nothing refers to any more.
std::unique_ptr<Pending> new_pending();
void recycle(Pending* p);

// Any collective in flight (fast path of the blocking point-to-point calls
// and of the wait and test functions).
bool collectives_in_flight();

// A Pending whose run has just started: the engine advances it from now on;
// settles it at once if it already finished.
void engine_add(Pending& p);
// Before launching in tag `region` on `st`: waits until no collective in
// flight on `st` uses the same region (epochs apart).
void engine_wait_for_tags(const CommState& st, int region);
// Blocks until p's schedule has run, advancing everything in flight.
void engine_finish(Pending& p);

// Waits for an MPI request of hetcoll's own (a step of setting up a
// communicator: comm_setup.hpp) while advancing the collectives in flight.
int wait_native(MPI_Request* r);

// Advances the collectives in flight without blocking (MPI_Iprobe and the
// loops that poll).
void poll_collectives();
// The progress thread's poll: like poll_collectives, but it stands aside
// while another thread advances the collectives (a wait polling under
// MPI_THREAD_MULTIPLE, or one holding the engine).
enum class Poll { moved, idle, stood_aside };
Poll progress_poll();

// ----------------------------------------------- for the completion functions
// (requests.cpp): what they do under the engine's lock.

// The engine's lock: only taken under MPI_THREAD_MULTIPLE (the progress
// thread runs only there too); with any other level the application's MPI
// calls never overlap, and a lock per call would be a tenth of a small
// call's cost.
class EngineMutex {
 public:
  void lock();
  void unlock();
  bool try_lock();

 private:
  std::mutex m_;
};
using EngineLock = std::unique_lock<EngineMutex>;
EngineMutex& engine_mutex();

#ifdef HETCOLL_SMPI
constexpr bool kSmpi = true;  // a test costs simulated time there: block instead
#else
constexpr bool kSmpi = false;
#endif

// Locked: every schedule in flight advanced by what has completed (no
// blocking); whether any of their messages completed.
bool poll_locked();
// Locked: p's schedule is over (err: how it failed): unpack, complete the
// generalized request of a non-blocking collective.
void settle(Pending& p, int err, const char* message);
// Locked: blocks until p's schedule has run (or failed).
void finish_locked(EngineLock& lock, Pending& p);
constexpr int kProgressed = -1;  // a schedule's message completed
constexpr int kNothing = -2;     // nothing active to wait for
// Locked: blocks until one message of a schedule in flight or one of the
// application's `natives` completes. Returns the index in `natives` of the
// one that completed (its handle updated, *status and *rc set), or
// kProgressed, or kNothing. Under MPI_THREAD_MULTIPLE it polls once and
// yields instead of blocking (and unlocks meanwhile).
int block_once(EngineLock& lock, const std::vector<MPI_Request*>& natives, MPI_Status* status, int* rc);
// Locked: a request's Pending the application is done with: kept for reuse
// or deleted.
void recycle_locked(Pending* p);

}  // namespace hetcoll::mpi

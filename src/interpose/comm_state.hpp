// What the MPI layer keeps per communicator, cached on it as an attribute
// (freed with it): the private duplicate the collectives run on (its error
// handler returns errors, so that they surface on the user's communicator
// under the user's handler), the group's ranks in MPI_COMM_WORLD, the
// compiled programs of the call shapes seen, the transport and scratch.
#pragma once
#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/executor.hpp"
#include "exec/mpi_transport.hpp"

namespace hetcoll::mpi {

// One call shape, planned and compiled for this rank: the next call of the
// same shape goes straight to the executor.
struct Compiled {
  Collective coll;     // the call as prepared (in_place as the user asked)
  bool aside = false;  // in-place input copied aside: the algorithm cannot run in place
  // The decision is the native MPI's (measured, or nothing could be
  // priced): calls of this shape go to PMPI_* without planning again.
  bool native = false;
  std::string why;
  ExecProgram prog;
  // The planner's decision it came from, and what HETCOLL_DEBUG=explain
  // says of it (after the call's name; "" unless asked, and off rank 0).
  std::shared_ptr<const void> decision;
  std::string explanation;
  std::string spec;  // compiled_as: the algorithm it was asked for ("": the decision's)
};

// The call sites whose choice is learned in the job (interpose/learning.hpp).
struct LearnedSites;

// The working memory of one collective in progress: datatypes packed
// (staged), an in-place input copied aside, the schedule's tmp buffer. A
// communicator keeps one for its blocking calls; each non-blocking or
// persistent collective has its own.
struct CallMemory {
  std::vector<char> staged_in, staged_out, aside, tmp;
};

struct CommState {
  // Why hetcoll leaves this communicator to the native MPI for good ("":
  // it does not): it has processes of another MPI_COMM_WORLD (spawned or
  // connected: a model and its decisions describe one job), no duplicate
  // could be made (the MPI library's communicators are used up), or
  // HETCOLL_DISABLE is set on every rank. The same on every rank of the
  // communicator.
  std::string native_only;
  // The ranks' configurations (config/agreement.hpp), compared when the
  // state was made: "" when they agree, else the line that says which
  // setting differs between which ranks — then the native MPI runs its
  // collectives, on every rank alike. A later comparison on MPI_COMM_WORLD
  // (after hetcoll_set_*: Runtime::agreement_epoch) replaces the verdict.
  std::string disagreement;
  uint64_t agreement_epoch = 0;
  MPI_Comm dup = MPI_COMM_NULL;
  MpiTransport::CommInfo info;
  std::string name;              // for messages: the communicator's name and this rank
  std::string comm_name;         // its name alone ("MPI_COMM_WORLD"); "" where it has none
  uint64_t group_key = 0;
  std::vector<int> world_ranks;  // for models that describe particular ranks, and messages
  // Hosts: the key of each rank's processor name (ProfileModel::host_key),
  // gathered when the state is made; this rank's host name. A profile maps
  // them to its hosts (host_map, host_key for the decision cache) for the
  // Runtime::generation host_generation; an empty map: the profile does not
  // describe every host of the communicator.
  std::vector<uint64_t> host_keys;
  std::string host_name;
  uint64_t host_generation = 0;
  std::vector<int> host_map;
  uint64_t host_group_key = 0;
  // One collective at a time per communicator: MPI forbids concurrent
  // collectives on one communicator, so the lock only matters (and is only
  // taken) under MPI_THREAD_MULTIPLE, against erroneous programs and for
  // hetcoll_last_algorithm from another thread.
  std::mutex mu;
  bool multiple = false;
  CallMemory mem;  // the blocking calls'
  uint64_t generation = 0;  // Runtime::generation the cache was built for
  // Shared: a persistent or non-blocking collective keeps its program while
  // the cache moves on.
  std::unordered_map<uint64_t, std::shared_ptr<const Compiled>> compiled;
  std::shared_ptr<const Compiled> recent;  // the last shape run: checked first
  uint64_t recent_key = 0;
  std::unique_ptr<MpiTransport> transport;
  ExecScratch scratch;
  std::string last;  // the algorithm of the last call
  uint64_t epoch = 0;  // collectives hetcoll ran on it: the same count on every rank
  // Requests (non-blocking, persistent) that use this state: MPI lets the
  // user free the communicator before they complete, so the state is
  // deleted by the last of them (orphaned: the communicator is gone).
  int holds = 0;
  bool orphaned = false;
  // The handler the communicator had when the application freed it: a
  // collective in flight then raises its error there (raise_error).
  MPI_Errhandler orphan_handler = MPI_ERRHANDLER_NULL;
  // The tag regions this rank's persistent collectives hold
  // (MpiTransport::CommInfo), a bit per slot; and the slots every rank had
  // free when they last agreed, not yet taken (reserve_persistent_slot).
  std::atomic<uint64_t> persistent_slots{0};
  uint64_t agreed_free_slots = 0;
  // HETCOLL_LEARN: its call sites, made by the first blocking call of each.
  std::shared_ptr<LearnedSites> learned;
};

// A request's hold on a state, and its release (deletes an orphaned state
// with its last hold). Under the requests' lock (requests.hpp).
void hold_state(CommState& st);
void release_state(CommState& st);

// A persistent collective's tag region back (comm_setup.hpp:
// reserve_persistent_slot), when its request is freed (locally: a rank's
// free slots return to the pool at the next agreement).
void release_persistent_slot(CommState& st, int slot);

// Raises `code` for a collective of `st` called on the application's
// `comm` (errors.hpp: raise_on) — or, when the application has freed
// that communicator meanwhile, under the handler it had then.
int raise_error(CommState* st, MPI_Comm comm, int code);

// The state of `comm`, or nullptr if hetcoll has not used it yet.
CommState* find_state(MPI_Comm comm);
// Attaches a new state to `comm` (comm_setup.hpp makes it); freed with it.
void attach_state(MPI_Comm comm, CommState* st);

}  // namespace hetcoll::mpi

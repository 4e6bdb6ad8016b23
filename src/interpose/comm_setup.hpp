// The call path's first step (call_path.hpp): a communicator set up for
// hetcoll — its state made (comm_state.hpp holds it), its private duplicate,
// its ranks' hosts, the ranks' configurations compared — and the other
// agreements that are collective over it (persistent collectives' tags).
// Each is collective: its MPI calls are waited for by the progress engine
// (engine.hpp), since hetcoll collectives may be in flight on other
// communicators and another rank may wait on them before it gets here.
#pragma once
#include <mpi.h>

#include <string>

#include "interpose/comm_state.hpp"

namespace hetcoll::mpi {

// The state of a communicator hetcoll has not used yet (comm_state.hpp:
// find_state), created: collective over `comm` (MPI_Comm_dup, then one allgather of
// each rank's host key and configuration digest on the duplicate), so every
// rank of the call gets here in the same call — every reason to decline
// comes earlier and is the same on every rank, whatever its configuration
// (HETCOLL_DISABLE included).
CommState& create_state(MPI_Comm comm);
// Compares the ranks' configurations again on the state's duplicate
// (collective over `comm`, the communicator the state belongs to): "" when
// they agree, else what differs (its rank 0 has said it).
std::string compare_configurations(CommState& st, MPI_Comm comm);

// A tag region for a new persistent collective on st, at its
// initialization (collective, in the same order on every rank): a slot
// free on every rank of the communicator — from the pool the ranks last
// agreed on, or, when that is spent, from a new agreement (one allreduce
// of the ranks' slots in use); -1 when none is free (the collective then
// runs on a duplicate of its own: duplicate_for_request);
// comm_state.hpp's release_persistent_slot gives it back.
int reserve_persistent_slot(CommState& st);
// A private duplicate of st's own, for a persistent collective that found
// no slot free (collective, at its initialization); MPI_COMM_NULL when the
// library has no communicator left (on every rank alike).
MPI_Comm duplicate_for_request(CommState& st);

}  // namespace hetcoll::mpi

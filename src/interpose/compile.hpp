// The call path's step "decide and compile" (call_path.hpp): the compiled
// program for one call shape on one communicator — from the communicator's
// cache, or decided now (the planner: plan/planner.hpp is the one place
// policy lives), generated for this rank and compiled. A decision the
// planner leaves to the native MPI is cached too (Compiled::native), so a
// shape whose measured winner is native costs a lookup.
#pragma once
#include <memory>
#include <string>

#include "interpose/comm_state.hpp"

namespace hetcoll::mpi {

// The program for `coll` (as prepared) on `st`, under the state's lock.
// The cache is dropped when the configuration changed since it was built
// (Runtime::generation). With HETCOLL_DEBUG=explain, a new decision is said
// once per decision and form, named `name` ("MPI_Iallreduce"), on rank 0.
// Throws Decline where a decision table's entry does not fit the call.
const Compiled& compiled_for(CommState& st, const Collective& coll, const char* name);

// The program of the algorithm `spec` (canonical, as the planner weighed
// it) for `coll` on `st`: what a learned choice runs (interpose/learning.hpp).
// Cached beside the decisions' programs. Under the state's lock.
std::shared_ptr<const Compiled> compiled_as(CommState& st, const Collective& coll, const std::string& spec);

}  // namespace hetcoll::mpi

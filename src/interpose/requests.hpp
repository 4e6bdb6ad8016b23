// The requests the application holds for hetcoll's non-blocking and
// persistent collectives, and MPI's completion functions over them — the
// call path's last step (call_path.hpp) for a request. The collective itself
// runs on the progress engine (engine.hpp); this file knows the handles.
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
// go to the native library, in the same call. With no hetcoll request
// alive and nothing in flight, each is the native call after an atomic load.
#pragma once
#include <mpi.h>

#include <memory>

#include "interpose/engine.hpp"

namespace hetcoll::mpi {

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
// MPI_Start / MPI_Startall: a persistent collective of hetcoll's started
// (call_path.hpp: start_persistent), any other request by the native library.
int start(MPI_Request* req);
int start_all(int n, MPI_Request reqs[]);

}  // namespace hetcoll::mpi

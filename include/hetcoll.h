/* hetcoll C API: call hetcoll's collectives explicitly.
 *
 * Each hetcoll_<collective> takes exactly the arguments of the MPI-3
 * function of the same name (hetcoll_collectives.def lists them) and
 * returns a status instead of raising MPI errors:
 *   HETCOLL_SUCCESS         hetcoll ran it;
 *   HETCOLL_UNSUPPORTED     hetcoll does not handle this call (an
 *                           intercommunicator, a user-defined operation,
 *                           HETCOLL_DISABLE, ranks of the communicator
 *                           configured differently): nothing was done, the caller
 *                           may run the MPI function instead — that is what
 *                           libhetcoll_mpi.so's MPI_* functions do;
 *   HETCOLL_BAD_ARGUMENT    an invalid argument (MPI_DATATYPE_NULL, a
 *                           negative count, a root outside the group):
 *                           nothing was done;
 *   HETCOLL_MPI_ERROR       an MPI call failed during the collective (a
 *                           truncated message when ranks passed different
 *                           counts, ...);
 *   HETCOLL_INTERNAL_ERROR  a bug in hetcoll.
 * hetcoll_last_error() tells why in words, hetcoll_last_error_code() as the
 * MPI error code the native library would give (MPI_ERR_TYPE,
 * MPI_ERR_TRUNCATE, ..., MPI_ERR_INTERN for a bug). No C++ exception
 * crosses this interface.
 *
 * The configuration comes from the environment (`hetcoll config` lists the
 * HETCOLL_* variables) and can be changed here. */
#ifndef HETCOLL_H
#define HETCOLL_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hetcoll_status {
  HETCOLL_SUCCESS = 0,
  HETCOLL_UNSUPPORTED = 1,    /* declined; nothing was done */
  HETCOLL_BAD_ARGUMENT = 2,   /* invalid arguments; nothing was done */
  HETCOLL_MPI_ERROR = 3,      /* an MPI call failed during the collective */
  HETCOLL_INTERNAL_ERROR = 4  /* a bug in hetcoll */
};

/* int hetcoll_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm); and the other 15. */
#define HETCOLL_COLLECTIVE(name, Name, params, args) int hetcoll_##name params;
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE

/* Replace the machine model (a model spec such as
 * "hockney:alpha=2us,beta=0.1ns" or a JSON model file) or the algorithm
 * overrides ("bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect"); "" (or
 * NULL) restores the default / clears them. Everything is checked here —
 * names, parameters and their values: HETCOLL_BAD_ARGUMENT keeps the old
 * setting. Collective over MPI_COMM_WORLD once MPI is initialized: call
 * it on every rank, at the same point of the program, with the same
 * argument — the ranks then compare their configurations, and where they
 * differ (another argument, another file content, a refused argument on
 * some ranks) every communicator runs the native collectives and world
 * rank 0 says which setting differs between which ranks. Not while
 * another thread of the process is in a collective. Before MPI_Init it
 * only sets the model; each communicator is compared when first used. */
int hetcoll_set_model(const char* spec);
int hetcoll_set_algorithm(const char* rules);

/* The schedule name of the last collective hetcoll ran on comm, copied into
 * buf (at most len bytes, NUL-terminated); "" if none. */
int hetcoll_last_algorithm(MPI_Comm comm, char* buf, int len);

/* Why the calling thread's last hetcoll call did not succeed, in words and
 * as an MPI error code. */
const char* hetcoll_last_error(void);
int hetcoll_last_error_code(void);
/* A constant description of a status code. */
const char* hetcoll_status_string(int status);
/* The library's version, e.g. "0.2.0". */
const char* hetcoll_version(void);

#ifdef __cplusplus
}
#endif

#endif /* HETCOLL_H */

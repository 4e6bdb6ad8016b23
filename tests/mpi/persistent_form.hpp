// Whether this MPI has persistent collectives, and their names: MPI-4's
// MPI_<Coll>_init (MPICH), or Open MPI 4.1's MPIX_<Coll>_init (mpi-ext.h).
//   PINIT(Allreduce)(sendbuf, recvbuf, …, MPI_INFO_NULL, &request)
#pragma once
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#if MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define PINIT(Name) MPI_##Name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PERSISTENT 1
#define PINIT(Name) MPIX_##Name##_init
#else
#define HAVE_PERSISTENT 0
#endif

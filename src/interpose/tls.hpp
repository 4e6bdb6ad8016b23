// Thread-local variables on the call path. In libhetcoll_mpi.so (preloaded
// or linked, so loaded at start-up) the initial-exec model makes each access
// a register-relative load instead of a __tls_get_addr call (~5 % of a
// small native call's time). Under SimGrid the MPI layer sits in a program
// that smpirun opens with dlopen: the general model there.
#pragma once
#if defined(HETCOLL_SMPI)
#define HETCOLL_TLS thread_local
#else
#define HETCOLL_TLS thread_local __attribute__((tls_model("initial-exec")))
#endif

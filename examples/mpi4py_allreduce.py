"""An mpi4py program, unchanged, under hetcoll:

    mpirun -n 4 -x LD_PRELOAD=$(hetcoll lib) -x HETCOLL_DEBUG=explain python3 examples/mpi4py_allreduce.py

mpi4py calls the MPI library's C functions, so the preloaded libhetcoll_mpi
runs its collectives (the buffer calls, Allreduce/Bcast/…, and the MPI
collectives of bytes mpi4py makes for the lower-case, pickle-based ones). Each rank checks its result; rank 0
prints one line. Exit 1 if any rank's result is wrong.
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
x = np.arange(n, dtype=np.float64) + rank
y = np.empty_like(x)
comm.Allreduce(x, y, op=MPI.SUM)
ok = np.array_equal(y, size * np.arange(n, dtype=np.float64) + size * (size - 1) / 2)
b = np.arange(n, dtype=np.int32) if rank == 0 else np.zeros(n, dtype=np.int32)
comm.Bcast(b, root=0)
ok &= np.array_equal(b, np.arange(n, dtype=np.int32))
ok &= comm.allreduce(rank) == size * (size - 1) // 2  # pickled: MPI collectives of bytes underneath
bad = comm.allreduce(0 if ok else 1)
if rank == 0:
    print(f"mpi4py under {MPI.Get_library_version().splitlines()[0][:40]}: Allreduce and Bcast of {n} elements on "
          f"{size} ranks {'right' if bad == 0 else 'WRONG'}")
sys.exit(1 if bad else 0)

#!/usr/bin/env bash
# The main job: set up everything on a new machine, then run the demo — the
# planner and simulator tour, then hetcoll inside real MPI programs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
.venv/bin/hetcoll demo "$@"

if ! command -v mpirun >/dev/null 2>&1 || [[ ! -x build/py/plain_mpi_app ]]; then
  echo "(no MPI: skipping the MPI part of the demo)"
  exit 0
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mpi=(mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
echo
echo "== An unmodified MPI program (built without hetcoll) with LD_PRELOAD=\$(hetcoll lib),"
echo "   4 ranks, HETCOLL_DEBUG=explain: one line per decision, on stderr"
"${mpi[@]}" -n 4 -x LD_PRELOAD="$(.venv/bin/hetcoll lib)" -x HETCOLL_DEBUG=explain build/py/plain_mpi_app
echo
echo "== hetcoll against the native Open MPI collectives, same run, 2 ranks, 8 B - 256 KiB"
echo "   (the full benchmark: scripts/bench_mpi.sh, docs/mpi_benchmark.md)"
mkdir -p results/demo
"${mpi[@]}" -n 2 build/py/bench_mpi 3 262144 bcast,allreduce,allgather,alltoall > results/demo/bench_mpi_p2.json
.venv/bin/hetcoll bench-report results/demo/bench_mpi_p2.json | sed -n '1p;/^| collective/,/^$/p'
echo
echo "== Measuring this machine: hetcoll probe (4 ranks), then hetcoll tune; the profile's summary"
.venv/bin/hetcoll probe --np 4 -o results/demo/profile.json --tune --tune-max 256k --tune-repeats 5 \
  -- --mca btl self,vader,tcp > /dev/null
.venv/bin/hetcoll profile show results/demo/profile.json | sed -n '1,12p'
echo "   ... (hetcoll profile show results/demo/profile.json: lambda(m), measured decisions)"
echo
echo "== The same program on the measured profile: HETCOLL_PROFILE=results/demo/profile.json"
"${mpi[@]}" -n 4 -x LD_PRELOAD="$(.venv/bin/hetcoll lib)" -x HETCOLL_DEBUG=explain \
  -x HETCOLL_PROFILE=results/demo/profile.json build/py/plain_mpi_app

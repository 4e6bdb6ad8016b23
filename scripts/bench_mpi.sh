#!/usr/bin/env bash
# The MPI benchmark behind the README's table: hetcoll against the native
# Open MPI collectives on this machine, 2 and 4 ranks on shared memory,
# 8 B - 4 MiB per rank, as ratios measured in the same run (bench/bench_mpi.cpp).
# Writes bench/results/mpi/mpi_p{2,4}.json, docs/mpi_benchmark.md and
# docs/figures/mpi_speed.png. REPS (default 7) alternating measurements each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [[ ! -x build/py/bench_mpi ]]; then
  echo "bench_mpi was not built (no MPI at build time?)" >&2
  exit 1
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p bench/results/mpi docs/figures
for p in 2 4; do
  echo "bench_mpi: $p ranks"
  # More ranks than cores: yield when idle, or busy polling swamps the timing.
  mpirun -n "$p" --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp \
    build/py/bench_mpi "${REPS:-7}" > "bench/results/mpi/mpi_p$p.json"
done
.venv/bin/hetcoll bench-report bench/results/mpi/mpi_p2.json bench/results/mpi/mpi_p4.json \
  --markdown docs/mpi_benchmark.md --png docs/figures/mpi_speed.png

#!/usr/bin/env bash
# The MPI benchmark of scripts/bench_mpi.sh, re-run on a measured profile:
# for 2 and 4 local ranks, hetcoll probe + hetcoll tune (native against
# hetcoll's best candidates, 8 B - 4 MiB) write bench/results/mpi/profile_p{2,4}.json,
# then bench_mpi runs with HETCOLL_PROFILE set to it. Writes
# bench/results/mpi/mpi_tuned_p{2,4}.json, docs/mpi_benchmark_tuned.md and
# docs/figures/mpi_speed_tuned.png. REPS (default 7) alternating measurements.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [[ ! -x build/py/bench_mpi ]]; then
  echo "bench_mpi was not built (no MPI at build time?)" >&2
  exit 1
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p bench/results/mpi docs/figures
for p in 2 4; do
  profile="bench/results/mpi/profile_p$p.json"
  echo "bench_tuned: probe and tune, $p ranks"
  .venv/bin/hetcoll probe --np "$p" -o "$profile" --tune --tune-max 4M --tune-repeats "${TUNE_REPS:-9}" \
    -- --mca btl self,vader,tcp > /dev/null
  echo "bench_tuned: bench_mpi on the tuned profile, $p ranks"
  HETCOLL_PROFILE="$profile" mpirun -n "$p" --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp \
    -x HETCOLL_PROFILE build/py/bench_mpi "${REPS:-7}" > "bench/results/mpi/mpi_tuned_p$p.json"
done
.venv/bin/hetcoll bench-report bench/results/mpi/mpi_tuned_p2.json bench/results/mpi/mpi_tuned_p4.json \
  --markdown docs/mpi_benchmark_tuned.md --png docs/figures/mpi_speed_tuned.png

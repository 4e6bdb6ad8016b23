#!/usr/bin/env bash
# What setting a communicator up costs with the configuration check
# (bench/bench_comm_setup.cpp): MPI_Comm_dup and the first and second
# 8-byte allreduce, native and through hetcoll, at 2, 4 and 8 ranks on this
# machine (Open MPI, shared memory), as hetcoll runs and with
# HETCOLL_DISABLE=1; then, in SimGrid, the same at 16 and 64 ranks on
# the 8-subnet platform (network time only: SMPI does not count computing).
# Writes bench/results/mpi/comm_setup.json and prints the table of docs/results.md.
# REPS (default 31) repetitions each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
reps="${REPS:-31}"
mkdir -p bench/results/mpi
out=bench/results/mpi/comm_setup.json
{
  echo "["
  first=1
  for p in 2 4 8; do
    for disable in 0 1; do
      echo "bench_comm_setup: $p ranks, HETCOLL_DISABLE=$disable" >&2
      line=$(mpirun -n "$p" --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp \
               -x HETCOLL_DISABLE=$disable build/py/bench_comm_setup "$reps")
      ((first)) || echo ","
      first=0
      echo "{\"where\": \"Open MPI, this machine\", \"result\": $line}"
    done
  done
  if [[ "${SMPI:-1}" == 1 ]]; then
    bash scripts/build_smpi.sh >&2
    for p in 16 64; do
      echo "bench_comm_setup: SMPI, $p ranks" >&2
      line=$(testbed/smpi/run --platform cluster128_8subnets -n "$p" build/smpi/bench_comm_setup 5 2>/dev/null | grep '^{')
      echo ",{\"where\": \"SimGrid, cluster128_8subnets\", \"result\": $line}"
    done
  fi
  echo "]"
} > "$out"
.venv/bin/python - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print("| where | ranks | HETCOLL_DISABLE | Comm_dup + 1st allreduce, native (µs) | same, hetcoll (µs) | 2nd allreduce native / hetcoll (µs) | exchange 8 B → 16 B a rank (µs) |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    x = r["result"]
    m = lambda k: x[k]["median_us"]
    nat = m("native_dup") + m("native_first_allreduce")
    hc = m("hetcoll_dup") + m("hetcoll_first_allreduce")
    print(f"| {r['where']} | {x['ranks']} | {1 if x['disabled'] else 0} | {nat:.1f} | {hc:.1f} | "
          f"{m('native_second_allreduce'):.1f} / {m('hetcoll_second_allreduce'):.1f} | "
          f"{m('exchange_8_bytes_a_rank'):.1f} → {m('exchange_16_bytes_a_rank'):.1f} |")
PY

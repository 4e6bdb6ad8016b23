#!/usr/bin/env bash
# OSU Micro-Benchmarks' non-blocking collectives (osu_iallreduce … osu_ibarrier,
# validation on: -c) under LD_PRELOAD=libhetcoll_mpi.so and natively, in the
# same run: every benchmark × datatypes (MPI_CHAR, MPI_INT, MPI_FLOAT; the
# reductions on MPI_CHAR overflow OSU's own check with any MPI, so they run
# on MPI_INT and MPI_FLOAT) × in place where OSU has it (-l). Prints one line
# per run (validation, the largest size's overall time and overlap) and
# fails if any hetcoll run fails validation.
#   bash scripts/osu_nonblocking.sh OSU_DIR [RANKS] [MAX_BYTES]
# OSU_TEST_CALLS=N: OSU's -t N (MPI_Test calls during the compute).
# OSU_DIR: a built osu-micro-benchmarks 7.x tree (its c/mpi/collective/non_blocking).
# OSU is not part of hetcoll: build it from its release (./configure CC=mpicc && make).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
osu=${1:?usage: osu_nonblocking.sh OSU_DIR [RANKS] [MAX_BYTES]}
np=${2:-4}
max=${3:-1048576}
dir="$osu/c/mpi/collective/non_blocking"
[[ -x "$dir/osu_iallreduce" ]] || { echo "no OSU non-blocking benchmarks in $dir" >&2; exit 2; }
lib=${HETCOLL_LIB:-$(.venv/bin/hetcoll lib 2>/dev/null || echo build/py/libhetcoll_mpi.so)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {  # run VARIANT BENCH ARGS...
  local variant=$1 bench=$2; shift 2
  local pre=()
  [[ $variant == hetcoll ]] && pre=(-x "LD_PRELOAD=$lib")
  local check=(-c)
  [[ $bench == osu_ibarrier ]] && check=()  # nothing to validate
  timeout 600 mpirun -n "$np" --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp "${pre[@]}" \
    "$dir/$bench" "${check[@]}" -m "$max" -i 50 -x 10 ${OSU_TEST_CALLS:+-t "$OSU_TEST_CALLS"} "$@" 2>&1
}
failed=0
printf "%-26s %-10s %-8s %-7s %-10s %14s %10s\n" benchmark type inplace variant validation "overall_us@max" overlap%
for path in "$dir"/osu_i*; do
  bench=$(basename "$path")
  [[ -x $path ]] || continue
  case $bench in
    osu_iallreduce|osu_ireduce|osu_ireduce_scatter|osu_ireduce_scatter_block) types="mpi_int mpi_float" ;;
    osu_ibarrier) types="-" ;;
    *) types="mpi_char mpi_int" ;;
  esac
  for t in $types; do
    for ip in no yes; do
      args=()
      [[ $t != - ]] && args+=(-T "$t")
      if [[ $ip == yes ]]; then
        "$path" -h 2>&1 | grep -q -- "--in-place" || continue
        [[ $bench == osu_ibarrier || $bench == osu_ibcast ]] && continue
        args+=(-l)
      fi
      for v in hetcoll native; do
        out=$(run "$v" "$bench" "${args[@]}" || true)
        if grep -q "Fail\|VALIDATION ERROR" <<<"$out"; then val=FAIL
        elif grep -q "Pass" <<<"$out"; then val=pass
        elif [[ $bench == osu_ibarrier ]] && grep -qE '^ *[0-9.]+ +[0-9.]+' <<<"$out"; then val=ran
        else val=ERROR; fi
        last=$(grep -E '^[0-9]+ ' <<<"$out" | tail -1 || true)
        [[ $bench == osu_ibarrier ]] && last=$(grep -E '^ *[0-9.]+ ' <<<"$out" | tail -1 || true)
        overall=$(awk '{print $2}' <<<"$last"); overlap=$(awk '{print $5}' <<<"$last")
        [[ $bench == osu_ibarrier ]] && { overall=$(awk '{print $1}' <<<"$last"); overlap=$(awk '{print $4}' <<<"$last"); }
        printf "%-26s %-10s %-8s %-7s %-10s %14s %10s\n" "$bench" "$t" "$ip" "$v" "$val" "${overall:-?}" "${overlap:-?}"
        if [[ $v == hetcoll && $val != pass && $val != ran ]]; then
          failed=1
          echo "$out" | tail -15 >&2
        fi
      done
    done
  done
done
exit $failed

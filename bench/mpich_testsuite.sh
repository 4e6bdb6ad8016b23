#!/usr/bin/env bash
# Benchmark (not a test): programs of MPICH's own test suite (test/mpi/coll)
# run as a site would before deploying hetcoll — natively and under
# LD_PRELOAD — interleaved, repeated, with their verdict ("No Errors") and
# wall time, so that a program hetcoll makes slower or wrong shows here.
#
#   bash bench/mpich_testsuite.sh MPICH_SRC [--mpi mpich|openmpi] [--repeats N] [--name NAME] [PROG:NP ...]
#
# MPICH_SRC holds MPICH's test/mpi (a source tarball or a checkout of the
# MPICH that is installed: Debian 12's is 4.0.2). Default programs: the
# ones issue 38 measured (nonblocking3:5 p_alltoallv:10) and the
# non-blocking and persistent ones around them. Under Open MPI the
# persistent programs need MPI-4 names: they are built with MPIX_ ones.
# Writes bench/results/mpich_testsuite/NAME.json (default: the MPI's name;
# one line per run) and prints min/median/max per program and mode.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:?usage: mpich_testsuite.sh MPICH_SRC [--mpi mpich|openmpi] [--repeats N] [--name NAME] [PROG:NP ...]}"
shift
mpi=mpich
repeats=3
name=""
progs=()
while (($#)); do
  case "$1" in
    --mpi) mpi="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --name) name="$2"; shift 2 ;;
    *) progs+=("$1"); shift ;;
  esac
done
((${#progs[@]})) || progs=(nonblocking3:5 p_alltoallv:10 nonblocking:4 nonblocking2:5 p_order:2 p_allred:4 p_bcast:4)
[[ -d "$src/test/mpi/coll" ]] || { echo "mpich_testsuite: no test/mpi/coll under $src" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$src/test/mpi/include" "$src/test/mpi/util" "$src/test/mpi/coll" "$work/"
# What MPICH's configure would write for this machine.
cat > "$work/include/mpitestconf.h" <<'EOF'
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
: > "$work/include/mtest_mpix.h"
if [[ "$mpi" == openmpi ]]; then
  cc=mpicc.openmpi
  launch=(mpirun.openmpi --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
  lib="$("$here/.venv/bin/hetcoll" lib --mpi openmpi)"
  preload=(-x "LD_PRELOAD=$lib")
  # MPI-4's persistent collectives are Open MPI 4's MPIX_ extension.
  printf '#include <mpi-ext.h>\n' >> "$work/include/mtest_mpix.h"
  for c in Allgather Allgatherv Allreduce Alltoall Alltoallv Alltoallw Barrier Bcast Exscan Gather Gatherv \
           Reduce Reduce_scatter Reduce_scatter_block Scan Scatter Scatterv; do
    printf '#define MPI_%s_init MPIX_%s_init\n' "$c" "$c" >> "$work/include/mtest_mpix.h"
  done
else
  cc=mpicc.mpich
  launch=(mpiexec.mpich)
  lib="$("$here/.venv/bin/hetcoll" lib --mpi mpich)"
  preload=(-genv LD_PRELOAD "$lib")
fi
out="$here/bench/results/mpich_testsuite"
mkdir -p "$out"
results="$out/${name:-$mpi}.json"
: > "$results"
for pn in "${progs[@]}"; do
  prog="${pn%%:*}"
  "$cc" -O2 -I"$work/include" -o "$work/$prog" "$work/coll/$prog.c" "$work/util/mtest.c" "$work/util/mtest_common.c" \
    "$work/util/mtest_single.c" "$work/util/dtypes.c" 2>"$work/$prog.cc.log" ||
    { echo "mpich_testsuite: $prog does not build against $mpi (see below)" >&2; tail -3 "$work/$prog.cc.log" >&2; continue; }
done
for ((r = 0; r < repeats; ++r)); do
  for pn in "${progs[@]}"; do
    prog="${pn%%:*}"
    np="${pn##*:}"
    [[ -x "$work/$prog" ]] || continue
    for mode in native hetcoll; do
      extra=()
      [[ "$mode" == hetcoll ]] && extra=("${preload[@]}")
      t0=$(date +%s.%N)
      set +e
      output="$(timeout 600 "${launch[@]}" -n "$np" "${extra[@]}" "$work/$prog" 2>&1)"
      rc=$?
      set -e
      t1=$(date +%s.%N)
      ok=false
      [[ $rc -eq 0 && "$output" == *"No Errors"* ]] && ok=true
      printf '{"program": "%s", "ranks": %s, "mode": "%s", "repeat": %d, "seconds": %.3f, "passed": %s, "rc": %d}\n' \
        "$prog" "$np" "$mode" "$r" "$(echo "$t1 - $t0" | bc)" "$ok" "$rc" >> "$results"
    done
  done
done
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["program"], r["ranks"]) for r in rows})
print(f"{'program':<14} {'np':>3}  {'native s (min/med/max)':>24}  {'hetcoll s (min/med/max)':>24}  {'ratio':>6}  passed")
for prog, np in keys:
    t = {}
    ok = {}
    for mode in ("native", "hetcoll"):
        xs = [r["seconds"] for r in rows if (r["program"], r["ranks"], r["mode"]) == (prog, np, mode)]
        t[mode] = xs
        ok[mode] = all(r["passed"] for r in rows if (r["program"], r["ranks"], r["mode"]) == (prog, np, mode))
    f = lambda xs: f"{min(xs):.2f}/{statistics.median(xs):.2f}/{max(xs):.2f}"
    ratio = statistics.median(t["hetcoll"]) / statistics.median(t["native"])
    print(f"{prog:<14} {np:>3}  {f(t['native']):>24}  {f(t['hetcoll']):>24}  {ratio:>6.2f}  "
          f"native {'yes' if ok['native'] else 'NO'}, hetcoll {'yes' if ok['hetcoll'] else 'NO'}")
EOF

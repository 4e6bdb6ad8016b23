#!/usr/bin/env bash
# hetcoll under Slurm: a real one-node Slurm (tests/slurm/slurm_cluster.sh)
# is started, used and stopped; SKIPPED, with the reason, where it cannot
# start. Inside an allocation (salloc -n 3):
#   - probe, tune and bench pick srun themselves (--dry-run shows
#     `srun -n 3 --mpi=…`: the allocation's tasks, PMIx for Open MPI), run,
#     and their results hold 3 ranks on the allocation's host;
#   - --launcher mpirun runs the probe through mpirun in the allocation.
# Outside one: the default is mpirun, and --launcher srun --np 2 makes srun
# allocate by itself.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
hc="$root/.venv/bin/hetcoll"
work="$(mktemp -d /tmp/hetcoll-slurm.XXXXXX)"
# shellcheck source=tests/slurm/slurm_cluster.sh
source tests/slurm/slurm_cluster.sh
if ! slurm_up "$work/slurm"; then
  echo "slurm_test: SKIPPED: $SLURM_SKIP"
  rm -rf "$work"
  exit 0
fi
trap 'slurm_down "$work/slurm"; rm -rf "$work"' EXIT
fail() { echo "slurm_test: FAILED: $*" >&2; for f in "$work"/slurm/*.log; do echo "== $f"; tail -5 "$f"; done >&2; exit 1; }
echo "-- slurm_test: one-node Slurm up ($(sinfo -h -o '%N %c CPUs %T'))"

check_profile() {  # FILE RANKS
  python3 - "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
ranks = p["measured"]["ranks"]
assert ranks == int(sys.argv[2]), f"{ranks} ranks measured, not {sys.argv[2]}"
print(f"   profile: {ranks} ranks on {len(p['hosts'])} host(s)")
PY
}

cat >"$work/in_allocation.sh" <<SH
set -euo pipefail
cd "$work"
[[ \$SLURM_NTASKS == 3 ]]
"$hc" probe -o probe.json --dry-run | grep -q "srun -n 3 --mpi=" || { echo "probe --dry-run: not srun"; exit 1; }
"$hc" probe -o probe.json >probe.log 2>&1 || { cat probe.log; exit 1; }
"$hc" tune probe.json --ops allreduce --sizes 1k --repeats 1 --candidates 1 >tune.log 2>&1 || { cat tune.log; exit 1; }
"$hc" bench --ops allreduce,bcast --sizes 1k --repeats 1 -o bench.json >bench.log 2>&1 || { cat bench.log; exit 1; }
"$hc" probe -o probe_mpirun.json --launcher mpirun >probe_mpirun.log 2>&1 || { cat probe_mpirun.log; exit 1; }
"$hc" probe -o x.json --launcher mpirun --dry-run | grep -q "^$(command -v mpirun) -n 3 " || { echo "--launcher mpirun: not mpirun"; exit 1; }
SH
salloc -n 3 --quiet bash "$work/in_allocation.sh" || fail "inside salloc -n 3"
check_profile "$work/probe.json" 3
check_profile "$work/probe_mpirun.json" 3
python3 - "$work/bench.json" "$work/probe.json" <<'PY' || fail "the bench results or the tuned profile"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["ranks"] == 3 and {r["op"] for r in b["rows"]} == {"allreduce", "bcast"}, b["ranks"]
p = json.load(open(sys.argv[2]))
assert p.get("tuned"), "tune stored no measured decision"
print(f"   bench: {len(b['rows'])} rows on 3 ranks; tune: {len(p['tuned'])} measured layout(s)")
PY
echo "   inside salloc -n 3: probe, tune, bench through srun; probe through mpirun"
# Outside an allocation.
"$hc" probe --np 2 -o "$work/o.json" --dry-run | grep -q "mpirun -n 2" || fail "outside Slurm the default is not mpirun"
"$hc" probe --np 2 -o "$work/srun.json" --launcher srun >"$work/srun.log" 2>&1 || { cat "$work/srun.log"; fail "--launcher srun --np 2"; }
check_profile "$work/srun.json" 2
"$hc" probe -o "$work/none.json" 2>"$work/none.err" && fail "no --np outside an allocation was accepted"
grep -q "required outside a Slurm allocation" "$work/none.err" || fail "no --np: $(cat "$work/none.err")"
echo "slurm_test: passed"

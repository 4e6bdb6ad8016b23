#!/usr/bin/env bash
# hetcoll export: the native libraries accept the files it writes and do
# what they say (run by scripts/test.sh in the install stage).
#   Open MPI 4.1 (coll_tuned dynamic rules): every rule the test exercises
#     (allreduce and bcast, small and large, 4 ranks) makes the same
#     internal traffic (pml monitoring: bytes and messages per pair) as
#     forcing the algorithm the rule names, and at least one differs from
#     Open MPI's own fixed choice; a copy whose rule names algorithm 99
#     fails with MPI_ERR_ARG (the file is read, the rule is the one looked up).
#   MPICH 4.0 (selection JSON, MPIR_CVAR_DEVICE_COLLECTIVES=none): the
#     exported file runs allreduce, bcast and barrier right at 2 and 4 ranks;
#     a copy naming an algorithm MPICH does not have aborts (the variable is
#     read); an allreduce with an order-sensitive operation gives the same
#     per-rank results as forcing the algorithm the file names
#     (recursive doubling; smp where hetcoll was told reduce_bcast), and the
#     two differ.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
work="$(mktemp -d /tmp/hetcoll-export.XXXXXX)"
trap 'rm -rf "$work"' EXIT
hc=.venv/bin/hetcoll
model="hockney:alpha=20us,bw=1GB/s,gamma=0.5ns"
fail() { echo "export_test: FAILED: $*" >&2; exit 1; }
step() { echo "-- export_test: $*"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

step "Open MPI: coll_tuned dynamic rules"
mpicc -O2 -o "$work/probe" tests/export/export_probe.c
rules="$work/ompi.rules"
"$hc" export --format ompi-rules -m "$model" --ranks 4 --ops allreduce,bcast -o "$rules" \
  --override "allreduce:0-4k:@recursive_doubling_allreduce#allreduce:4k-inf:@ring_allreduce#bcast:0-4k:@binomial_tree#bcast:4k-inf:@chain_bcast" \
  >/dev/null
# The rule Open MPI looks up for (collective id, p, message bytes)
# (export.ompi_lookup: the last communicator size <= p, else the first; the
# last message size <= m): "ALGORITHM SEGMENT-BYTES".
lookup() {
  .venv/bin/python -c "import sys; from hetcoll import export as ex
r = ex.ompi_lookup(ex.parse_ompi_rules(open(sys.argv[1]).read()), *map(int, sys.argv[2:]))
print(r[0], r[2])" "$rules" "$@"
}
ompirun=(mpirun -n 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader)
traffic() {  # MCA-ARGS... -- OP COUNT: the internal messages per pair, sorted
  local mca=()
  while [[ $1 != -- ]]; do mca+=("$1"); shift; done
  shift
  # The monitoring table, a file per rank written at MPI_Finalize (on
  # stdout, a rank's last lines could be lost on a busy machine: mpirun
  # forwards output as the ranks exit).
  rm -f "$work"/mon.*.prof
  "${ompirun[@]}" --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
    --mca pml_monitoring_filename "$work/mon" "${mca[@]}" \
    "$work/probe" "$@" >"$work/out" 2>"$work/err" || fail "$* under ${mca[*]}: $(cat "$work/err")"
  [[ $(ls "$work"/mon.*.prof 2>/dev/null | wc -l) -eq 4 ]] || fail "$* under ${mca[*]}: not every rank wrote its table"
  cat "$work"/mon.*.prof | awk -F'\t' '$1 == "I" {print $2, $3, $4, $5}' | sort
}
differs=0
for case in "allreduce 2 100 8" "allreduce 2 10000 8" "bcast 7 1000 1" "bcast 7 300000 1"; do
  read -r op cid count elem <<<"$case"
  read -r alg seg < <(lookup "$cid" 4 $((count * elem)))
  [[ $alg -gt 0 ]] || fail "$op $count: the file leaves it to Open MPI (algorithm 0)"
  from_file="$(traffic --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$rules" -- "$op" "$count")"
  forced=(--mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${op}_algorithm" "$alg")
  [[ $seg -gt 0 ]] && forced+=(--mca "coll_tuned_${op}_algorithm_segmentsize" "$seg")
  by_force="$(traffic "${forced[@]}" -- "$op" "$count")"
  fixed="$(traffic -- "$op" "$count")"
  [[ -n $from_file ]] || fail "$op $count: no traffic seen (pml monitoring)"
  [[ "$from_file" == "$by_force" ]] || fail "$op $count: the file's traffic is not algorithm $alg's:
$from_file
--- forced $alg:
$by_force"
  [[ "$from_file" != "$fixed" ]] && differs=$((differs + 1))
  echo "   $op $((count * elem)) B on 4 ranks: algorithm $alg, as forced$([[ "$from_file" != "$fixed" ]] && echo ", not Open MPI's own choice")"
done
[[ $differs -gt 0 ]] || fail "every case is Open MPI's own choice anyway: the test shows nothing"
# A rule naming algorithm 99: the call fails — the file is read and that rule used.
sed '0,/^0 3 0 0/s//0 99 0 0/' "$rules" >"$work/bad.rules"
grep -q "^0 99 0 0" "$work/bad.rules" || fail "could not make the algorithm-99 copy"
if out="$("${ompirun[@]}" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$work/bad.rules" \
          "$work/probe" allreduce 100 2>&1)"; then
  fail "Open MPI ran a rule naming algorithm 99: it does not read the file"
fi
grep -q "failed on rank [0-9]*: MPI_ERR_ARG" <<<"$out" || fail "algorithm 99 did not fail with MPI_ERR_ARG: $out"
echo "   a rule naming algorithm 99 fails with MPI_ERR_ARG"

if ! command -v mpicc.mpich >/dev/null; then
  echo "-- export_test: MPICH SKIPPED: mpicc.mpich not installed"
  echo "export_test: passed"
  exit 0
fi
step "MPICH: collective selection JSON"
mpicc.mpich -O2 -o "$work/probe_mpich" tests/export/export_probe.c
"$hc" export --format mpich-json -m "$model" --ranks 2,4 -o "$work/rd.json" >/dev/null
"$hc" export --format mpich-json -m "$model" --ranks 2,4 -o "$work/smp.json" --override "allreduce:@reduce_bcast" >/dev/null
mrun() {  # FILE NP ARGS...
  local f=$1 np=$2
  shift 2
  env MPIR_CVAR_DEVICE_COLLECTIVES=none MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f" \
    mpiexec.mpich -n "$np" "$work/probe_mpich" "$@"
}
for f in rd smp; do
  for np in 2 4; do
    for args in "allreduce 1000" "allreduce 100000" "bcast 100000" "bcast 10"; do
      # shellcheck disable=SC2086
      mrun "$work/$f.json" "$np" $args >/dev/null || fail "MPICH with $f.json, $np ranks, $args"
    done
  done
done
echo "   the exported files run allreduce and bcast right at 2 and 4 ranks"
sed 's/MPIR_Bcast_intra_binomial/MPIR_Bcast_intra_nonesuch/g' "$work/rd.json" >"$work/bad.json"
if out="$(mrun "$work/bad.json" 2 bcast 10 2>&1)"; then
  fail "MPICH ran a file naming an algorithm it does not have: the variable is not read"
fi
grep -q "MPIR_Bcast_intra_nonesuch" <<<"$out" || fail "MPICH's refusal does not name the algorithm: $out"
echo "   a file naming an algorithm MPICH lacks is refused at MPI_Init"
forced() {  # ALGORITHM: the fingerprint with MPICH's own variable forcing it
  env MPIR_CVAR_DEVICE_COLLECTIVES=none MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM="$1" \
    mpiexec.mpich -n 4 "$work/probe_mpich" fingerprint 4 | sort
}
rd="$(mrun "$work/rd.json" 4 fingerprint 4 | sort)"
smp="$(mrun "$work/smp.json" 4 fingerprint 4 | sort)"
[[ "$rd" == "$(forced recursive_doubling)" ]] || fail "rd.json's allreduce is not recursive doubling: $rd"
[[ "$smp" == "$(forced smp)" ]] || fail "smp.json's allreduce is not smp: $smp"
[[ "$rd" != "$smp" ]] || fail "the fingerprints of recursive doubling and smp are the same: the test shows nothing"
echo "   allreduce fingerprints: rd.json = recursive doubling, smp.json = smp (they differ)"
echo "export_test: passed"

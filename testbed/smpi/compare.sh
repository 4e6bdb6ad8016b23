#!/usr/bin/env bash
# hetcoll's binomial tree, chain, scatter-collect and Rabenseifner against
# SimGrid's own implementation of the same algorithm and against hetcoll's
# prediction, 1 MiB on the 16-host platform (platforms/cluster16.xml), in
# simulated time. Builds build/smpi first (scripts/build_smpi.sh).
#
#   testbed/smpi/compare.sh [OUT.json]
#
# The model hetcoll predicts with is the platform's own: LogGP with L = 2 µs
# (two 1 µs links), G = 0.8 ns/B (10 Gbit/s), o_r = 1 µs (smpi/or) and
# o_s = 2 µs: smpi/os's 1 µs plus the acknowledgement a synchronous send
# waits for (under SMPI the send port holds a send until its data has
# arrived, src/exec/mpi_transport.cpp). Every result is checked against
# SimGrid's.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/bench/results/smpi_compare.json}"
bash "$root/scripts/build_smpi.sh" >/dev/null
model="loggp:L=2us,os=2us,or=1us,g=0,G=0.8ns"
bytes=1048576
cases=(
  "bcast binomial_tree binomial_tree"
  "bcast chain_bcast NTSL"
  "bcast chain_bcast ompi_pipeline"
  "bcast scatter_collect scatter_LR_allgather"
  "allreduce rabenseifner_allreduce rab_rdb"
)
mkdir -p "$(dirname "$out")"
{
  echo "["
  sep=""
  for c in "${cases[@]}"; do
    read -r op algo native <<<"$c"
    line=$("$root/testbed/smpi/run" -n 16 "--cfg=smpi/$op:$native" "$root/build/smpi/smpi_compare" "$op" "$bytes" "$algo" "$model" 2>/dev/null | grep '^{')
    echo "$sep${line%\}}, \"smpi_algorithm\": \"$native\", \"model\": \"$model\"}"
    sep=","
  done
  echo "]"
} >"$out"
python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print(f"{'op':9} {'hetcoll algorithm':24} {'hetcoll ms':>10} {'predicted':>10} {'err':>6}  {'SMPI algorithm':22} {'SMPI ms':>8} {'ratio':>6}")
for r in rows:
    h, p, n = r["hetcoll_s"] * 1e3, r["predicted_s"] * 1e3, r["native_s"] * 1e3
    print(f"{r['op']:9} {r['algorithm']:24} {h:10.3f} {p:10.3f} {100*(h-p)/p:+5.1f}%  {r['smpi_algorithm']:22} {n:8.3f} {n/h:6.2f}"
          + ("" if r["results_equal"] else "  RESULTS DIFFER"))
PY
echo "written: $out"

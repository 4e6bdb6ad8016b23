#!/usr/bin/env bash
# HETCOLL_LEARN once settled, on this machine: bench/bench_learning.cpp with
# learning off and on, alternately (REPS times each), 2 ranks (one a core:
# no oversubscription), MPI_Allreduce of 8 B, 64 KiB and 1 MiB. Prints each
# pair's medians and their ratio, writes bench/results/learning_overhead.json.
#   bash scripts/bench_learning.sh        (REPS=5 CALLS=20000 by default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=build/py/bench_learning
[[ -x $bin ]] || { echo "bench_learning was not built (no MPI at build time?)" >&2; exit 1; }
reps=${REPS:-5}
calls=${CALLS:-20000}
out=bench/results/learning_overhead.json
mkdir -p bench/results
run() {  # LEARN BYTES CALLS
  HETCOLL_LEARN=$1 mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -n 2 "$bin" "$2" 2000 "$3"
}
echo "[" > "$out"
first=1
for bytes in 8 65536 1048576; do
  n=$calls
  ((bytes >= 1048576)) && n=$((calls / 20))
  for ((i = 0; i < reps; i++)); do
    for learn in 0 1; do
      line=$(run $learn $bytes $n | grep '^{')
      ((first)) || echo "," >> "$out"
      first=0
      echo "$line" >> "$out"
    done
  done
done
echo "]" >> "$out"
python3 - "$out" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))
for b in sorted({r["bytes"] for r in rows}):
    off = [r for r in rows if r["bytes"] == b and r["learn"] == "0"]
    on = [r for r in rows if r["bytes"] == b and r["learn"] == "1"]
    mo = statistics.median(r["per_call_s"] for r in off)
    mn = statistics.median(r["per_call_s"] for r in on)
    print(f"{b:>8} B: off {mo * 1e6:8.2f} us ({off[-1]['algorithm']}), on {mn * 1e6:8.2f} us ({on[-1]['algorithm']}),"
          f" on/off {mn / mo:.3f} (medians of {len(off)})")
PY

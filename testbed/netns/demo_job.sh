#!/usr/bin/env bash
# The main job on a cluster: probe → subnets → tune → bench against the
# native MPI → report. Runs where mpirun reaches every rank of the job: on
# the first host of the emulated cluster (cluster.py run TOPO -- demo_job.sh
# OUT), or on this machine's own ranks (HC_DEMO_NP=4 demo_job.sh OUT).
#   OUT: directory for profile.json, bench.json/.csv and report/
set -euo pipefail
out=${1:?usage: demo_job.sh OUT}
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
hetcoll=${HETCOLL:-$here/.venv/bin/hetcoll}
np=${HC_NETNS_RANKS:-${HC_DEMO_NP:-4}}
ops=${HC_DEMO_OPS:-bcast,reduce,allreduce,allgather,alltoall,reduce_scatter_block}
sizes=${HC_DEMO_SIZES:-1k,64k,1M}
repeats=${HC_DEMO_REPEATS:-5}
step() { printf '\n== [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

step "1/5 probe: $np ranks on ${HC_NETNS_HOSTS:-this machine} (pairwise latency and bandwidth, overheads, lambda)"
"$hetcoll" probe --np "$np" -o "$out/profile.json" --budget "${HC_DEMO_PROBE_S:-120}" --large 256k
step "2/5 subnets and ring the probe found"
"$hetcoll" subnets "$out/profile.json"
"$hetcoll" ring "$out/profile.json"
step "3/5 tune: native against hetcoll's best candidates, the winners stored in the profile"
"$hetcoll" tune --np "$np" "$out/profile.json" --ops "$ops" --sizes "${HC_DEMO_TUNE_SIZES:-8,1k,64k}" --repeats 3
# Larger sizes the model decides — but for alltoall, whose best schedule
# (every block straight to its destination) sends what a native alltoall
# sends: which of the two is faster only a measurement can tell. Added to
# the decisions above (a tune run keeps what it does not measure again).
if [[ ",$ops," == *,alltoall,* && -n ${HC_DEMO_TUNE_LARGE-1M} ]]; then
  "$hetcoll" tune --np "$np" "$out/profile.json" --ops alltoall --sizes "${HC_DEMO_TUNE_LARGE-1M}" --repeats 3 \
    --candidates 1
fi
step "4/5 bench: hetcoll against native $(mpirun --version 2>/dev/null | head -1), $ops at $sizes"
"$hetcoll" bench --np "$np" --profile "$out/profile.json" --ops "$ops" --sizes "$sizes" --repeats "$repeats" \
  --max-repeats "${HC_DEMO_MAX_REPEATS:-15}" --target-ms 30 -o "$out/bench.json" --csv "$out/bench.csv"
step "5/5 report"
"$hetcoll" report "$out/bench.json" "$out/profile.json" -o "$out/report" --title "${HC_DEMO_TITLE:-hetcoll on $np ranks}"

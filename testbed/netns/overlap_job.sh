#!/usr/bin/env bash
# Overlap on a cluster (hetcoll bench --overlap, OSU's method): every rank's
# non-blocking collectives beside a compute loop, hetcoll against native,
# without and with the progress thread and with the application testing
# while it computes. Runs where mpirun reaches every rank (the first host of
# the emulated cluster: cluster.py run TOPO -- overlap_job.sh OUT PROFILE).
#   OUT: directory for overlap*.json/.csv; PROFILE: the cluster's profile
set -euo pipefail
out=${1:?usage: overlap_job.sh OUT PROFILE}
profile=${2:?usage: overlap_job.sh OUT PROFILE}
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
hetcoll=${HETCOLL:-$here/.venv/bin/hetcoll}
np=${HC_NETNS_RANKS:-8}
ops=${HC_OVERLAP_OPS:-allreduce,bcast,allgather,reduce_scatter_block,alltoall}
sizes=${HC_OVERLAP_SIZES:-1k,64k,1M}
common=(--np "$np" --profile "$profile" --overlap --ops "$ops" --sizes "$sizes" --repeats "${HC_OVERLAP_REPEATS:-5}"
        --target-ms 30)
echo "== overlap: the application computes without MPI calls"
"$hetcoll" bench "${common[@]}" -o "$out/overlap.json" --csv "$out/overlap.csv"
echo "== overlap: with the progress thread (HETCOLL_PROGRESS_THREAD=1)"
HETCOLL_PROGRESS_THREAD=1 "$hetcoll" bench "${common[@]}" -o "$out/overlap_thread.json" --csv "$out/overlap_thread.csv"
echo "== overlap: the application calls MPI_Test every 100 us while it computes"
"$hetcoll" bench "${common[@]}" --test-every 100 -o "$out/overlap_test100.json" --csv "$out/overlap_test100.csv"

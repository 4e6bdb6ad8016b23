#!/usr/bin/env bash
# The main job: set up everything on a new machine, then
#   1. a short tour of the planner and simulator (hetcoll demo) and an
#      unmodified MPI program under LD_PRELOAD, one line per decision;
#   2. as root where network namespaces work: an emulated cluster of 8 hosts
#      in 3 subnets (1 Gbit/s inside, 50-100 Mbit/s uplinks, 1-3 ms between
#      subnets, one slow host, two ranks on some hosts; testbed/netns), and
#      on it probe → subnets → tune → bench against native Open MPI → report;
#      otherwise the same job on this machine's own ranks, then hetcoll
#      against SimGrid's built-in algorithms on three simulated subnets.
# Ends with the path of the report (about 10 minutes).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out=${HC_DEMO_OUT:-results/demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)  # absolute: the cluster's job runs elsewhere
echo
echo "== The tour: Bruck's tables, trees, plans and predictions (figures in $out)"
.venv/bin/hetcoll demo --out "$out"
if ! command -v mpirun >/dev/null 2>&1 || [[ ! -x build/py/plain_mpi_app ]]; then
  echo "(no MPI: the rest of the demo needs Open MPI)"
  exit 0
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
echo
echo "== An unmodified MPI program (built without hetcoll) with LD_PRELOAD=\$(hetcoll lib), 4 ranks,"
echo "   HETCOLL_DEBUG=explain: one line per decision"
mpirun -n 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp \
  -x LD_PRELOAD="$(.venv/bin/hetcoll lib)" -x HETCOLL_DEBUG=explain build/py/plain_mpi_app

if [[ -z ${HC_DEMO_LOCAL:-} ]] && why=$(python3 testbed/netns/cluster.py check 2>&1); then
  echo
  echo "== The emulated cluster (testbed/netns/topologies/demo8.toml): network namespaces, bridges, a router,"
  echo "   tbf rates, delayd latencies, a CPU quota for the slow host; Open MPI launched into the namespaces"
  python3 testbed/netns/cluster.py show testbed/netns/topologies/demo8.toml
  HC_DEMO_TITLE="hetcoll on an emulated cluster: 8 hosts, 3 subnets, 11 ranks" \
    python3 testbed/netns/cluster.py run testbed/netns/topologies/demo8.toml -- \
    testbed/netns/demo_job.sh "$out/cluster"
  report=$out/cluster/report/index.html
else
  echo
  echo "== No emulated cluster here (${why:-HC_DEMO_LOCAL is set}): the same job on 4 local ranks"
  HC_DEMO_NP=4 HC_DEMO_TITLE="hetcoll on 4 local ranks" testbed/netns/demo_job.sh "$out/local"
  report=$out/local/report/index.html
  echo
  echo "== hetcoll against every SimGrid built-in algorithm on three simulated subnets (testbed/smpi)"
  .venv/bin/python testbed/smpi/harness.py --platforms three_subnets --ops bcast,allreduce,allgather \
    --sizes 65536,1048576 --out "$out/smpi" --summary | sed -n '1,12p'
fi
echo
echo "The report: $report"

#!/usr/bin/env bash
# The emulated cluster end to end at CI size: 4 hosts in 2 subnets
# (testbed/netns/topologies/small4.toml), probe → subnets → tune → bench →
# report, then checks that the probe found the two subnets, that every
# benchmark row ran, that the report has its plots, and that nothing is left
# behind (namespaces, /etc/netns entries, cgroups, processes, the state
# directory). Skips — saying why — where the machine cannot build the
# cluster (not root, no namespaces).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
cluster=testbed/netns/cluster.py
if ! why=$(python3 "$cluster" check 2>&1); then
  echo "SKIPPED: the emulated cluster test — $why"
  exit 0
fi
out=results/ci_netns
rm -rf "$out"
export HC_DEMO_OPS=bcast,allreduce,allgather HC_DEMO_SIZES=1k,64k HC_DEMO_REPEATS=3 HC_DEMO_MAX_REPEATS=3 \
  HC_DEMO_PROBE_S=60 HC_DEMO_TITLE="CI: 4 hosts, 2 subnets"
python3 "$cluster" run testbed/netns/topologies/small4.toml -- testbed/netns/demo_job.sh "$root/$out"
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; else echo "ok: $2"; fi; }
check '[[ $(.venv/bin/python -c "import json;print(json.load(open(\"$out/profile.json\"))[\"subnets\"][\"count\"])") == 2 ]]' \
  "the probe found 2 subnets"
check '.venv/bin/python -c "import json,sys; r=json.load(open(\"$out/bench.json\"))[\"rows\"]; sys.exit(0 if r and all(x[\"median_s\"] is not None for x in r) else 1)"' \
  "every benchmark row ran"
check '[[ $(grep -o "data:image/png;base64" "$out/report/index.html" | wc -l) -ge 4 ]]' "the report has its plots"
check '[[ -z $(ip netns list | grep "^hc-" || true) ]]' "no namespace left"
check '[[ ! -e /etc/netns/hc-a0 && ! -e /run/hetcoll-netns ]]' "no /etc/netns entry, no state directory left"
check '[[ -z $(ls -d /sys/fs/cgroup/hetcoll-netns-* /sys/fs/cgroup/cpu/hetcoll-netns-* 2>/dev/null || true) ]]' "no cgroup left"
check '[[ -z $(pgrep -f "delayd hcdly0" || true) ]]' "no delayd left"
exit $fail

#!/usr/bin/env bash
# The emulated cluster end to end at CI size: 4 hosts in 2 subnets
# (testbed/netns/topologies/small4.toml), probe → subnets → tune → bench →
# report, then checks that the probe found the two subnets (also with two
# busy loops running beside it) and measured a pair both ways, that every
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
# The probe again on a loaded machine: two busy loops in this script's
# session, as a CI runner's other work may be. Each host's ranks must keep
# their own share of the cores (the first host's command runs in a session
# of its own) and the subnets must still be found.
hogs=()
stop_hogs() { if ((${#hogs[@]})); then kill "${hogs[@]}" 2>/dev/null || true; fi; hogs=(); }
trap stop_hogs EXIT
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
python3 "$cluster" run testbed/netns/topologies/small4.toml -- /bin/sh -c \
  '[ "$(ps -o sid= -p $$ | tr -d " ")" = "$$" ] && echo "own session" > "$1/session.txt"
   exec "$2" probe --np "$HC_NETNS_RANKS" -o "$1/loaded.json" --budget 30 --large 256k' \
  sh "$root/$out" "$root/.venv/bin/hetcoll" || true
stop_hogs
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; else echo "ok: $2"; fi; }
# Two subnets, told apart by a gap of at least 5x (the true one is 1 ms
# against 10-30 us; a noisy probe can still land on 2 with a gap near 1).
subnets_of() { .venv/bin/python -c "import json,sys; s=json.load(open(sys.argv[1]))['subnets']; print(s['count'], '%.1f' % s['gap'])" "$1" 2>&1 || true; }
found_two() { local c g; read -r c g <<<"$1"; [[ $c == 2 ]] && .venv/bin/python -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 5 else 1)" "$g"; }
subnets=$(subnets_of "$out/profile.json")
check 'found_two "$subnets"' "the probe found the 2 subnets (subnets, gap: $subnets)"
found_two "$subnets" || .venv/bin/hetcoll subnets "$out/profile.json" || true  # what it found instead
check '[[ -s $out/session.txt ]]' "the first host's command runs in a session of its own"
loaded=$(subnets_of "$out/loaded.json")
check 'found_two "$loaded"' "the probe found the 2 subnets with two busy loops running (subnets, gap: $loaded)"
found_two "$loaded" || .venv/bin/hetcoll subnets "$out/loaded.json" || true
# One pair between the subnets sending both ways at once, receives first
# (the executor's order): measured (Open MPI over TCP mostly takes turns
# here: about half the one-way rate each way).
same_pair=$(.venv/bin/python -c "import json,sys; c=[c for c in json.load(open(sys.argv[1]))['classes'] if 0 <= c['a'] != c['b']]
print(' '.join('%.3g' % (x.get('bandwidth_same_pair', 0) / max(x['bandwidth'], x['bandwidth_alone'])) for x in c) or 0)" \
  "$out/profile.json" 2>&1 || echo 0)
check '.venv/bin/python -c "import sys; sys.exit(0 if all(float(x) > 0 for x in sys.argv[1:]) else 1)" $same_pair' \
  "the probe measured a pair between the subnets both ways at once (each way / one way: $same_pair)"
check '.venv/bin/python -c "import json,sys; r=json.load(open(\"$out/bench.json\"))[\"rows\"]; sys.exit(0 if r and all(x[\"median_s\"] is not None for x in r) else 1)"' \
  "every benchmark row ran"
check '[[ $(grep -o "data:image/png;base64" "$out/report/index.html" | wc -l) -ge 4 ]]' "the report has its plots"
check '[[ -z $(ip netns list | grep "^hc-" || true) ]]' "no namespace left"
check '[[ ! -e /etc/netns/hc-a0 && ! -e /run/hetcoll-netns ]]' "no /etc/netns entry, no state directory left"
check '[[ -z $(ls -d /sys/fs/cgroup/hetcoll-netns-* /sys/fs/cgroup/cpu/hetcoll-netns-* 2>/dev/null || true) ]]' "no cgroup left"
check '[[ -z $(pgrep -f "delayd hcdly0" || true) ]]' "no delayd left"
exit $fail

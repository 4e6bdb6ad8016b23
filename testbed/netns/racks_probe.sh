#!/usr/bin/env bash
# Racks that only bandwidth tells apart, on the emulated cluster (issue 39;
# an experiment, not a CI test: on this 2-core machine its verdict moves
# with the load — see docs/results.md): topologies/racks8.toml (one IP
# subnet, no delay, 4 racks of 2 hosts behind 100 Mbit/s links) probed from
# nothing and from its topology.conf, RUNS times each; per run, whether
# every host is under the rack of its name and each rack's link is below
# its hosts' interfaces together.
#   testbed/netns/racks_probe.sh [RUNS=3] [OUT=results/netns_racks]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
cluster=testbed/netns/cluster.py
if ! why=$(python3 "$cluster" check 2>&1); then
  echo "SKIPPED: $why"
  exit 0
fi
runs=${1:-3}
out=${2:-results/netns_racks}
mkdir -p "$out"
racks_of() { .venv/bin/python - "$1" <<'PY' 2>&1 || echo "no profile"
import json, sys
p = json.load(open(sys.argv[1]))
net, names = p.get("network", []), [h["name"] for h in p["hosts"]]
racks = {}
for n in net:
    if n.get("host") is not None and net[n["parent"]]["parent"] > 0:
        racks.setdefault(n["parent"], []).append(names[n["host"]])
groups = sorted(sorted(v) for v in racks.values())
right = groups == [["r%da" % k, "r%db" % k] for k in range(4)]
slow = all((net[i].get("both") or net[i]["up"])["bandwidth"] < 0.75 * 2 * min(
    (m.get("both") or m["up"])["bandwidth"] for m in net if m["parent"] == i) for i in racks)
print("%s racks %s, links %s" % ("right" if right and slow else "WRONG", groups,
      ", ".join("%.3g MB/s" % ((net[i].get("both") or net[i]["up"])["bandwidth"] / 1e6) for i in racks)))
PY
}
for k in $(seq 1 "$runs"); do
  for how in measured declared; do
    extra=""
    [[ $how == declared ]] && extra="--topology $root/testbed/netns/topologies/racks8.topology.conf"
    python3 "$cluster" run testbed/netns/topologies/racks8.toml -- /bin/sh -c \
      'exec "$2" probe --np "$HC_NETNS_RANKS" -o "$1" --budget 60 $3' sh "$root/$out/racks8_${how}_$k.json" \
      "$root/.venv/bin/hetcoll" "$extra" > "$out/racks8_${how}_$k.log" 2>&1 || true
    echo "run $k, $how: $(racks_of "$out/racks8_${how}_$k.json")"
  done
done

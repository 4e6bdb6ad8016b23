#!/usr/bin/env bash
# Runs hetcoll-probe on a SimGrid platform of known parameters and checks
# the profile against the platform itself (testbed/smpi/truth.py): per-pair
# one-way latency and bandwidth within 5 %, the subnet partition exactly,
# the profile valid against docs/profile.schema.json.
#
#   testbed/smpi/probe_check.sh PROBE PLATFORM NP [--both] [--partition eco] [--max-seconds S] [--backplane B]
#                               [--racks N BW | --tree] [--says TEXT]... [--classes none] [-- PROBE-ARGS]
#
# PROBE is build/smpi/hetcoll-probe. The concurrent profile's bandwidth is
# checked class by class on the pairs measured alone (in its rounds, pairs
# share uplinks); --both also probes one pair at a time (ECO's sequential
# mode), checks every pair's bandwidth there and that both profiles agree.
# --max-seconds: the probe's own (simulated) time must stay below S.
# --backplane B: the platform's shared backbone in B/s, which the probe's
# backplane must find within 10 %; without it the platform has none, and
# the probe must find none.
# --tree: instead of --racks, the profile's tree held to the platform's
# (truth.py --tree: every host in its place, every link that limits a cut
# within 10 %), for racks that differ in size and links.
# --says TEXT: the probe's output has a line holding TEXT (--topology's
# lines: where measurement and a declared topology disagree).
# --classes none: the classes' bandwidth alone not checked (uplinks that
# differ by direction: a class is one rate both ways; --tree holds them).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
probe="$1" platform="$2" np="$3"
shift 3
both=0 partition=zones max_seconds="" backplane=0 racks=0 rack_bw=0 says=() tree=0 classes=alone
while (($#)); do
  case "$1" in
    --both) both=1; shift ;;
    --partition) partition="$2"; shift 2 ;;
    --max-seconds) max_seconds="$2"; shift 2 ;;
    --backplane) backplane="$2"; shift 2 ;;
    --racks) racks="$2"; rack_bw="$3"; shift 3 ;;
    --tree) tree=1; shift ;;
    --says) says+=("$2"); shift 2 ;;
    --classes) classes="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "probe_check: unknown option $1" >&2; exit 2 ;;
  esac
done
xml="$platform"
[[ -f "$xml" ]] || xml="$here/platforms/$platform.xml"
py="$root/.venv/bin/python"
[[ -x "$py" ]] || py=python3
work="$(mktemp -d "${TMPDIR:-/tmp}/hetcoll-probe-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$here/run" --platform "$xml" -n "$np" "$probe" -o "$work/concurrent.json" --no-progress "$@" | tee "$work/concurrent.out"
for text in ${says[@]+"${says[@]}"}; do
  grep -qF -- "$text" "$work/concurrent.out" || { echo "probe_check: the probe did not say '$text'" >&2; exit 1; }
done
checks=(--partition "$partition")
if ((both)); then
  "$here/run" --platform "$xml" -n "$np" "$probe" -o "$work/sequential.json" --no-progress --sequential "$@"
  "$py" "$here/truth.py" "$xml" "$work/sequential.json" "${checks[@]}"
  checks+=(--agree "$work/sequential.json")
fi
"$py" "$here/truth.py" "$xml" "$work/concurrent.json" --bandwidth "$classes" "${checks[@]}"
# The published schema accepts what the probe wrote (when jsonschema is installed).
"$py" - "$root/docs/profile.schema.json" "$work"/*.json <<'PY'
import json, sys
try:
    import jsonschema
except ImportError:
    print("schema: jsonschema not installed, not checked")
    sys.exit(0)
schema = json.load(open(sys.argv[1]))
for f in sys.argv[2:]:
    jsonschema.validate(json.load(open(f)), schema)
print("schema: %d profile(s) valid" % (len(sys.argv) - 2))
PY
# The receive copy: SimGrid copies nothing per byte (testbed/smpi/run adds
# per-message overheads only), so every host's R_m is under 5 % of its
# fastest receive per byte — a slow card read as a receive copy is charged
# twice by the model (slow_nics16's slow hosts read 5.6 ns/B of their
# 6.4 before the probe took the interfaces out of it).
"$py" - "$work/concurrent.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
fastest = max((c["bandwidth"] for c in p["classes"] if c.get("bandwidth", 0) > 0), default=0)
bad = []
for h in p["hosts"]:
    rate = h.get("nic_down") or fastest
    if rate and h["Rm"] * rate > 0.05:
        bad.append("%s: R_m %.3g s/B against a receive of %.3g s/B" % (h["name"], h["Rm"], 1 / rate))
if bad:
    print("probe_check: receive copies SimGrid does not make: " + "; ".join(bad[:4]), file=sys.stderr)
    sys.exit(1)
print("receive copy: every host's R_m under 5 % of its receive")
PY
# The backplane: the platform's (within 10 %), or none.
"$py" - "$work/concurrent.json" "$backplane" <<'PY'
import json, sys
bp = json.load(open(sys.argv[1])).get("backplane") or {"flows": 0, "aggregate": 0, "expected": 0, "bandwidth": 0}
want = float(sys.argv[2])
print("backplane: %d flows moved %.4g B/s together, %.4g B/s alone: found %.4g B/s (the platform: %s)"
      % (bp["flows"], bp["aggregate"], bp["expected"], bp["bandwidth"], "%.4g B/s" % want if want else "none"))
ok = abs(bp["bandwidth"] - want) <= 0.1 * want if want else bp["bandwidth"] == 0
sys.exit(0 if ok else 1)
PY
if [[ -n "$max_seconds" ]]; then
  "$py" - "$work/concurrent.json" "$max_seconds" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
limit = float(sys.argv[2])
print("probe took %.1f s of simulated time (limit %.0f s), %d repeats" % (m["seconds"], limit, m["repeats"]))
sys.exit(0 if m["seconds"] < limit else 1)
PY
fi
# Racks by bandwidth: with --racks N BW, the platform's zones are N racks
# (one latency subnet) whose shared uplinks carry BW B/s: the profile's
# network has exactly those racks (every host in its zone's) and each
# rack's link within 10 % of BW, one link both ways; without, no racks.
if ((tree)); then
  "$py" - "$work/concurrent.json" "$xml" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import sweep_probe
verdict, why = sweep_probe.verdict(sys.argv[2], sys.argv[1])
print("tree: %s%s" % (verdict, (" (" + why + ")") if why else ""))
sys.exit(0 if verdict == "PASS" else 1)
PY
else
"$py" - "$work/concurrent.json" "$racks" "$rack_bw" "$xml" "$here" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[5])
import truth
p = json.load(open(sys.argv[1]))
want, bw = int(sys.argv[2]), float(sys.argv[3])
net = p.get("network", [])
# (racks: the switches hosts hang off, below a subnet's; switches above
# them, declared levels, are not racks)
rack_nodes = [i for i, n in enumerate(net) if "host" not in n and n["parent"] > 0
              and any(m.get("host") is not None and m["parent"] == i for m in net)]
if not want:
    print("racks: %d found (the platform: none)" % len(rack_nodes))
    sys.exit(0 if not rack_nodes else 1)
t = truth.load(sys.argv[4])
names = [h["name"] for h in p["hosts"]]
zone = {t.hosts[i]: t.subnet_of[i] for i in range(len(t.hosts))}
bad = []
for i in rack_nodes:
    members = [names[n["host"]] for n in net if n.get("host") is not None and n["parent"] == i]
    zones = {zone[m] for m in members}
    link = net[i].get("both") or net[i]["up"]
    if len(zones) != 1 or len(members) != sum(1 for z in zone.values() if z in zones):
        bad.append("rack %s holds %s (zones %s)" % (net[i]["name"], members, sorted(zones)))
    if "both" not in net[i] or abs(link["bandwidth"] - bw) > 0.1 * bw:
        bad.append("rack %s: link %s %.4g B/s (the platform: %.4g both ways)"
                   % (net[i]["name"], "both" if "both" in net[i] else "up/down", link["bandwidth"], bw))
print("racks: %d found (the platform: %d), links %s" % (len(rack_nodes), want,
      ", ".join("%.4g" % (net[i].get("both") or net[i]["up"])["bandwidth"] for i in rack_nodes)))
for b in bad:
    print("  " + b)
sys.exit(0 if len(rack_nodes) == want and not bad else 1)
PY
fi

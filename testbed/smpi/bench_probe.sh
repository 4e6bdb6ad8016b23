#!/usr/bin/env bash
# The probe's own cost against the number of hosts, in SimGrid (simulated
# seconds, deterministic): p = 8 … 128 hosts of cluster128_8subnets
# (8 subnets of 16, 100 Mbit/s shared uplinks; the first p hosts span
# min(p, 8) subnets), concurrent rounds against ECO's one pair at a time,
# and how close each profile is to the platform (testbed/smpi/truth.py:
# latency and bandwidth within 5 %, the partition ECO's rule gives on the
# true times — with one host per subnet (p = 8) it cannot tell all apart).
# Writes bench/results/probe_smpi.json and prints a Markdown table.
#   testbed/smpi/bench_probe.sh [BUILD_DIR=build/smpi] [SIZES="8 16 32 64 128"]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build/smpi}"
probe="$build/hetcoll-probe"
[[ -f "$probe" ]] || { echo "bench_probe: $probe missing (scripts/build_smpi.sh)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/hetcoll-bench-probe.XXXXXX")"
trap 'rm -rf "$work"' EXIT
platform="$here/platforms/cluster128_8subnets.xml"
out="$root/bench/results/probe_smpi.json"
mkdir -p "$(dirname "$out")"
for p in ${SIZES:-8 16 32 64 128}; do
  for mode in concurrent sequential budget60; do
    args=(--no-progress)
    [[ $mode == sequential ]] && args+=(--sequential)
    [[ $mode == budget60 ]] && args+=(--budget 60)
    start=$(date +%s.%N)
    "$here/run" --platform "$platform" -n "$p" "$probe" -o "$work/$p-$mode.json" "${args[@]}" > /dev/null
    wall=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$start")
    python3 - "$here" "$platform" "$work/$p-$mode.json" "$p" "$mode" "$wall" >> "$work/rows.jsonl" <<'PY'
import io, json, sys
here, platform, path, p, mode, wall = sys.argv[1:]
sys.path.insert(0, here)
import truth
t = truth.load(platform)
prof = json.load(open(path))
buf = io.StringIO()
ok = truth.check(t, prof, 0.05, partition="eco", out=buf,
                 bandwidth="pairs" if mode == "sequential" else "alone")
lat = [l for l in buf.getvalue().splitlines() if "worst latency error" in l]
m = prof["measured"]
print(json.dumps({"hosts": int(p), "mode": mode, "simulated_s": m["seconds"], "wall_s": float(wall),
                  "repeats": m["repeats"], "budget_exhausted": m["budget_exhausted"], "subnets": prof["subnets"]["count"],
                  "phases": m["phases"], "checked": ok,
                  "worst_latency_error": float(lat[0].split("error ")[1].split("%")[0]) if lat else None}))
PY
  done
done
python3 - "$work/rows.jsonl" "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
json.dump({"platform": "cluster128_8subnets", "rows": rows}, open(sys.argv[2], "w"), indent=1)
print("| hosts | subnets | concurrent | sequential (ECO) | with --budget 60 | worst latency error | truth check |")
print("|---|---|---|---|---|---|---|")
by = {}
for r in rows:
    by.setdefault(r["hosts"], {})[r["mode"]] = r
for p, m in sorted(by.items()):
    c, s, b = m["concurrent"], m["sequential"], m["budget60"]
    err = max(x["worst_latency_error"] or 0 for x in (c, s, b))
    ok = all(x["checked"] for x in (c, s, b))
    print(f"| {p} | {c['subnets']} | {c['simulated_s']:.1f} s ({c['repeats']} repeats) | {s['simulated_s']:.1f} s | "
          f"{b['simulated_s']:.1f} s ({b['repeats']} repeats) | {err:.2f} % | {'pass' if ok else 'FAIL'} |")
PY

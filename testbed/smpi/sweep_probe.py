#!/usr/bin/env python3
"""The probe on generated platforms (a benchmark, not a test): K platforms
of testbed/smpi/generate.py's families from a seed, each probed by
hetcoll-probe in SimGrid twice — from nothing, and from its switches as a
site declares them (--topology NAME.topology.conf) — and each profile held
to the platform's tree by truth.py --tree (every host in its place, every
link that limits a cut within 10 %). Prints a Markdown table and writes
the rows as JSON.

    .venv/bin/python testbed/smpi/sweep_probe.py [--seed N] [--count K] [--max-hosts H] [--families F,...]
                                [--probe build/smpi/hetcoll-probe] [-o bench/results/probe_sweep.json] [--keep DIR]

Deterministic (SimGrid's simulated time): the same seed gives the same table.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import generate  # noqa: E402


def with_model_network(profile: str) -> str:
    """The profile with the tree hetcoll's runtime plans on as its network
    (a profile without racks carries none: the runtime builds it from the
    classes) — what truth.py --tree holds to the platform. Needs hetcoll's
    Python module (run this with .venv/bin/python); else the profile as is."""
    try:
        from hetcoll import _core
    except ImportError:
        return profile
    with open(profile) as f:
        p = json.load(f)
    if p.get("network"):
        return profile
    t = _core.topology(_core.parse_model(profile))
    links = t["links"]

    def link(i):
        return {"bandwidth": links[i]["bandwidth"], "latency": links[i]["latency"]} if i >= 0 else \
            {"bandwidth": 0.0, "latency": 0.0}
    net = []
    for n in t["nodes"]:
        d = {"name": n["name"], "parent": n["parent"]}
        if n["host"] >= 0:
            d["host"] = n["host"]
        if n["parent"] >= 0:
            if n["up"] >= 0 and n["up"] == n["down"]:
                d["both"] = link(n["up"])
            else:
                d["up"], d["down"] = link(n["up"]), link(n["down"])
        if n["fabric"] >= 0:
            d["fabric"] = link(n["fabric"])
        net.append(d)
    p["version"], p["network"] = 2, net
    out = profile[:-5] + ".model.json"
    with open(out, "w") as f:
        json.dump(p, f)
    return out


def verdict(xml: str, profile: str) -> tuple[str, str]:
    """truth.py --tree: PASS or FAIL, and the first disagreement (or the reason)."""
    profile = with_model_network(profile)
    out = subprocess.run([sys.executable, str(HERE / "truth.py"), xml, profile, "--tree"], capture_output=True, text=True)
    lines = (out.stdout + out.stderr).splitlines()
    first = next((ln.strip() for ln in lines if "DISAGREE" in ln), "")
    if out.returncode == 0:
        return "PASS", ""
    return "FAIL", first or (lines[-1].strip() if lines else "truth.py failed")


def probe(probe_exe: str, xml: str, hosts: int, out: str, extra: list[str]) -> tuple[bool, float, str]:
    start = time.time()
    p = subprocess.run([str(HERE / "run"), "--platform", xml, "-n", str(hosts), probe_exe, "-o", out, "--no-progress",
                        *extra], capture_output=True, text=True, timeout=1800)
    said = [ln for ln in p.stdout.splitlines() if "DISAGREES" in ln]
    return p.returncode == 0 and os.path.exists(out), time.time() - start, "; ".join(said[:2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2 * len(generate.FAMILIES))
    ap.add_argument("--max-hosts", type=int, default=48)
    ap.add_argument("--families", help="comma-separated (default: all, in turn)")
    ap.add_argument("--probe", default=str(ROOT / "build" / "smpi" / "hetcoll-probe"))
    ap.add_argument("-o", "--output", default=str(ROOT / "bench" / "results" / "probe_sweep.json"))
    ap.add_argument("--keep", metavar="DIR", help="write the platforms and profiles into DIR and keep them (default: a temporary folder)")
    a = ap.parse_args(argv)
    families = a.families.split(",") if a.families else list(generate.FAMILIES)
    rows = []
    if a.keep:
        Path(a.keep).mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(a.keep) if a.keep else tempfile.TemporaryDirectory(prefix="hetcoll-sweep-")) as work:
        for p in generate.sweep(a.seed, a.count, a.max_hosts, families):
            family = p["tree"]["family"]
            base = generate.write(p, work)
            row = {"platform": p["name"], "family": family, "hosts": len(p["hosts"]),
                   "order": p["tree"]["params"].get("order")}
            for mode, extra in (("measured", []), ("declared", ["--topology", base + ".topology.conf"])):
                out = "%s.%s.json" % (base, mode)
                ok, wall, said = probe(a.probe, base + ".xml", len(p["hosts"]), out, extra)
                v, why = verdict(base + ".xml", out) if ok else ("NO PROFILE", "")
                row[mode] = {"verdict": v, "why": why, "wall_s": round(wall, 1), "disagrees": said}
            rows.append(row)
            print("%-40s %-10s %-10s %s" % (row["platform"], row["measured"]["verdict"], row["declared"]["verdict"],
                                            row["declared"]["why"] or row["measured"]["why"]), file=sys.stderr)
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    with open(a.output, "w") as f:
        json.dump({"seed": a.seed, "count": a.count, "max_hosts": a.max_hosts, "rows": rows}, f, indent=1)
        f.write("\n")
    print("| platform | hosts | order | from nothing | from topology.conf | first disagreement |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        why = r["declared"]["why"] if r["declared"]["verdict"] != "PASS" else (r["measured"]["why"] if r["measured"]["verdict"] != "PASS" else "")
        print("| %s | %d | %s | %s | %s | %s |" % (r["platform"], r["hosts"], r["order"], r["measured"]["verdict"],
                                                  r["declared"]["verdict"], why.replace("|", "/")[:140]))
    for mode in ("measured", "declared"):
        n = sum(r[mode]["verdict"] == "PASS" for r in rows)
        print("\n%s: %d of %d platforms PASS --tree" % (mode, n, len(rows)), end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

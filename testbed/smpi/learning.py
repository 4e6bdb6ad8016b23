#!/usr/bin/env python3
"""HETCOLL_LEARN in simulated time (deterministic): what a job gains and pays.

For each case (a platform and the model hetcoll plans on: its probed profile,
"right", or the default model, "wrong" — a machine drawn flat), each
collective and size, build/smpi/smpi_bench runs a job's view (--calls N):
N calls of SMPI's own collective (its default selector: "native"), N of
hetcoll's choice without learning ("fixed") and N with HETCOLL_LEARN=1
("learned"; --learn exact, or --learn default: the variable unset, as a
job that sets nothing), every call from a common start, every result
checked. A row:

  native, fixed, learned   the median call of each (learned: of the last half,
                           after warm-up)
  learned/native           native's time over learned's (>= 0.95: the rule)
  held from                the call after which every 8 calls in a row take
                           (their median) within 5 % of its last choice's time
  first calls' cost        the learning job's extra time over its last
                           choice's, in calls of that choice, until then
  all calls' cost          the same over all N calls (trials after it too)
  algorithm                what it ends on

    testbed/smpi/learning.py [--calls N] [--cases NAME,...] [--ops OP,...]
                             [--sizes B,...] [--out DIR] [--jobs N]
                             [--learn 1|exact|default]
    testbed/smpi/learning.py --drift [--calls N] [--ops OP] [--sizes B] [--profile P] [--out DIR]

Writes DIR/learning.json (every row, every call) and DIR/learning.md.

--drift: one job on two_subnets_drift, whose uplinks are as fast as the
hosts' links until 40 s of simulated time, 10x slower until 120 s, fast
again after; hetcoll plans on two_subnets' profile (the slow uplinks: wrong
in the fast phases, right in the slow one), or on --profile (one probed in
the first phase: right there, wrong in the slow one; none: the default
model, a machine drawn flat). One collective (default
MPI_Bcast of 1 MiB), N calls
(default 300), each from a common start: native, hetcoll fixed (its
decision throughout), hetcoll learning, and hetcoll kept on the choice the
learning job made in the first phase (a job that learned once and stopped).
Per phase: each job's median call, the call from which the learning job held
its new choice, and the time the learning job saved. Writes DIR/drift.json
and DIR/drift.md.
Builds nothing: run scripts/build_smpi.sh first.
"""
import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUN = HERE / "run"
BENCH = ROOT / "build" / "smpi" / "smpi_bench"
PROFILES = ROOT / "bench" / "results" / "smpi_harness" / "profiles"

# name: (platform, ranks, profile file or None for the default model)
CASES = {
    "fat_tree32-wrong": ("fat_tree32", 32, None),
    "fat_tree32-right": ("fat_tree32", 32, PROFILES / "fat_tree32.json"),
    "two_subnets-wrong": ("two_subnets", 8, None),
    "two_subnets-right": ("two_subnets", 8, PROFILES / "two_subnets.json"),
    # Platforms learning was not built on, planned on the default model.
    "asym_uplinks15-wrong": ("asym_uplinks15", 15, None),
    "slow_nics_shared30-wrong": ("slow_nics_shared30", 30, None),
    "cluster64_4subnets-wrong": ("cluster64_4subnets", 64, None),
}
OPS = ["bcast", "allreduce", "allgather", "reduce", "alltoall"]
SIZES = [8, 65536, 1048576]


def bench_json(platform, np, bench_args, env, what, timeout=3600):
    """smpi_bench on the platform (testbed/smpi/run): its last JSON line."""
    cmd = [str(RUN), "--platform", platform, "-n", str(np), str(BENCH)] + [str(a) for a in bench_args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{what}: rc={p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    return json.loads(lines[-1])


def job(case, op, size, calls, learn, setting="1"):
    """One job of `calls` calls: learning off, or under HETCOLL_LEARN=setting
    ("default": unset, the library's own default)."""
    platform, np, profile = CASES[case]
    env = dict(os.environ)
    env.pop("HETCOLL_PROFILE", None)
    if profile:
        env["HETCOLL_PROFILE"] = str(profile)
    env.pop("HETCOLL_LEARN", None)
    if not learn:
        env["HETCOLL_LEARN"] = "0"
    elif setting != "default":
        env["HETCOLL_LEARN"] = setting
    return bench_json(platform, np, [op, size, "--hetcoll", "--calls", calls], env,
                      f"{case} {op} {size} learn={learn}")


def held_from(t, algs):
    """The last choice's time (the median of the calls that ran it); the
    call after which every 8 calls in a row (the last 7 calls: what is left)
    have a median within 5 % of it, a trial batch now and then included; the
    extra time over it until then and over all calls, in calls of it."""
    last = statistics.median([x for x, a in zip(t, algs) if a == algs[-1]])
    n = len(t)
    held = n
    while held > 0 and statistics.median(t[held - 1:min(held + 7, n)] if held + 7 <= n else t[max(n - 8, 0):]) \
            <= 1.05 * last:
        held -= 1
    cost = sum(x - last for x in t[:held]) / last if last > 0 else 0
    run_cost = sum(x - last for x in t) / last if last > 0 else 0
    return last, held, cost, run_cost


def row(case, op, size, fixed, learned):
    t, algs = learned["hetcoll_calls"], learned["algorithms"]
    last, held, cost, run_cost = held_from(t, algs)
    n = len(t)
    native = statistics.median(fixed["native_calls"])
    fixed_s = statistics.median(fixed["hetcoll_calls"])
    learned_s = statistics.median(t[n // 2:])
    return {"case": case, "op": op, "bytes": size, "ranks": fixed["ranks"], "calls": n,
            "ok": bool(fixed["ok"] and learned["ok"]), "native_s": native, "fixed_s": fixed_s,
            "fixed_algorithm": fixed["algorithms"][-1], "learned_s": learned_s, "algorithm": algs[-1],
            "held_from": held, "first_calls_cost": cost, "run_cost": run_cost, "learned_vs_native": native / learned_s if learned_s else 0,
            "fixed_vs_native": native / fixed_s if fixed_s else 0, "learned_calls": t, "learned_algorithms": algs}


def drift_job(calls, op, size, profile, learn=False, algo=None, native=False):
    env = dict(os.environ)
    env.pop("HETCOLL_PROFILE", None)
    if str(profile) != "none":
        env["HETCOLL_PROFILE"] = str(profile)
    env["HETCOLL_LEARN"] = "1" if learn else "0"
    env.pop("HETCOLL_ALGO", None)
    if algo:
        env["HETCOLL_ALGO"] = f"{op}:0-inf:@{algo}"
    d = bench_json("two_subnets_drift", 8, [op, size, "--calls", calls] + ([] if native else ["--hetcoll", "--no-native"]),
                   env, f"drift job (learn={learn}, algo={algo})")
    if native:
        d["hetcoll_calls"], d["hetcoll_starts"] = d["native_calls"], d["native_starts"]
        d["algorithms"] = ["native"] * len(d["native_calls"])
    return d


DRIFT_CHANGES = (40.0, 120.0)  # seconds of simulated time (platforms/two_subnets_drift_*.trace)


def phase_of(start):
    return sum(start >= c for c in DRIFT_CHANGES)


def drift(calls, op, size, profile, out):
    with cf.ThreadPoolExecutor(2) as pool:
        fut = {"native": pool.submit(drift_job, calls, op, size, profile, native=True),
               "fixed": pool.submit(drift_job, calls, op, size, profile),
               "learning": pool.submit(drift_job, calls, op, size, profile, True)}
        jobs = {k: f.result() for k, f in fut.items()}
    learned = jobs["learning"]
    first = [a for a, t in zip(learned["algorithms"], learned["hetcoll_starts"]) if phase_of(t) == 0]
    kept = first[-1]
    jobs["kept"] = jobs["native"] if kept == "native" else drift_job(calls, op, size, profile, algo=kept)
    rows = []
    for ph in range(len(DRIFT_CHANGES) + 1):
        row = {"phase": ph}
        for k, d in jobs.items():
            ts = [x for x, t in zip(d["hetcoll_calls"], d["hetcoll_starts"]) if phase_of(t) == ph]
            row[k + "_median_s"] = statistics.median(ts) if ts else 0
            row[k + "_sum_s"] = sum(ts)
            row[k + "_calls"] = len(ts)
        idx = [i for i, t in enumerate(learned["hetcoll_starts"]) if phase_of(t) == ph]
        t, algs = [learned["hetcoll_calls"][i] for i in idx], [learned["algorithms"][i] for i in idx]
        row["learned_algorithm"] = algs[-1] if algs else ""
        if t:
            last = statistics.median([x for x, a in zip(t, algs) if a == algs[-1]])
            held = len(t)
            while held > 0 and statistics.median(t[held - 1:held + 7]) <= 1.05 * last:
                held -= 1
            row["held_after_calls"] = held
        rows.append(row)
    ok = all(d["ok"] for d in jobs.values())
    out.mkdir(parents=True, exist_ok=True)
    (out / "drift.json").write_text(json.dumps({"op": op, "bytes": size, "profile": str(profile), "rows": rows, "kept": kept, "ok": ok,
                                                 "jobs": {k: {x: d[x] for x in ("hetcoll_calls", "hetcoll_starts",
                                                                                "algorithms")}
                                                          for k, d in jobs.items()}}, indent=1))
    names = ["fast uplinks (0-40 s)", "slow uplinks (40-120 s)", "fast again (120 s-)"]

    def saved(r, k):  # the learning job's time in the phase against k's pace
        if not r[k + "_calls"] or not r["learning_calls"]:
            return "n/a"
        return f"{r[k + '_sum_s'] / r[k + '_calls'] * r['learning_calls'] - r['learning_sum_s']:.2f} s"

    lines = ["| phase | calls | native | fixed (hetcoll's decision) | kept (" + kept + ") | learning | learned | "
             "held after calls | learning saved vs kept | vs fixed |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {names[r['phase']]} | {r['learning_calls']} | {ms(r['native_median_s'])} | "
                     f"{ms(r['fixed_median_s'])} | {ms(r['kept_median_s'])} | {ms(r['learning_median_s'])} | "
                     f"{r['learned_algorithm']} | {r.get('held_after_calls', '')} | {saved(r, 'kept')} | "
                     f"{saved(r, 'fixed')} |")
    text = (f"MPI_{op.capitalize()} of {size_name(size)}, 8 ranks on two_subnets_drift, planned on "
            f"{pathlib.Path(profile).name}\n\n" + "\n".join(lines))
    (out / "drift.md").write_text(text + "\n")
    print(text)
    if not ok:
        sys.exit("learning.py: a result was wrong")


def size_name(b):
    return f"{b // 1048576} MiB" if b >= 1048576 else f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


def ms(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def table(rows):
    out = ["| case | collective | size | native | fixed (its choice) | learned | learned/native | fixed/native "
           "| held from call | first calls' cost | all calls' cost | learned algorithm |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['case']} | {r['op']} | {size_name(r['bytes'])} | {ms(r['native_s'])} | {ms(r['fixed_s'])} "
                   f"({r['fixed_algorithm']}) | {ms(r['learned_s'])} | {r['learned_vs_native']:.2f}x | "
                   f"{r['fixed_vs_native']:.2f}x | {r['held_from']} | {r['first_calls_cost']:.1f} calls | "
                   f"{r['run_cost']:.1f} calls | "
                   f"{r['algorithm']} |")
    below = [r for r in rows if r["learned_vs_native"] < 0.95]
    worst = min(rows, key=lambda r: r["learned_vs_native"]) if rows else None
    out.append("")
    out.append(f"{len(rows)} rows; learned below 0.95x native: {len(below)}"
               + (f"; the lowest {worst['learned_vs_native']:.2f}x ({worst['case']} {worst['op']} "
                  f"{size_name(worst['bytes'])})" if worst else ""))
    fixed_below = [r for r in rows if r["fixed_vs_native"] < 0.95]
    out.append(f"fixed (without learning) below 0.95x native: {len(fixed_below)}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=120)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "smpi_learning"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--learn", choices=["1", "exact", "default"], default="1",
                    help="HETCOLL_LEARN of the learning job (default: unset, the library's own default)")
    ap.add_argument("--drift", action="store_true", help="the drift job (see above)")
    ap.add_argument("--retable", action="store_true", help="rewrite DIR/learning.md from DIR/learning.json")
    ap.add_argument("--profile", default=str(PROFILES / "two_subnets.json"),
                    help="--drift: the profile hetcoll plans on (default: two_subnets', the slow uplinks; "
                         "none: the default model, a machine drawn flat)")
    a = ap.parse_args()
    if a.retable:
        out = pathlib.Path(a.out)
        rows = json.loads((out / "learning.json").read_text())
        for r in rows:
            _, r["held_from"], r["first_calls_cost"], r["run_cost"] = held_from(r["learned_calls"], r["learned_algorithms"])
        (out / "learning.json").write_text(json.dumps(rows, indent=1))
        (out / "learning.md").write_text(table(rows) + "\n")
        print(table(rows))
        return
    if not BENCH.exists():
        sys.exit("learning.py: build/smpi/smpi_bench is missing (bash scripts/build_smpi.sh)")
    if a.drift:
        drift(a.calls if a.calls != 120 else 300, a.ops if "," not in a.ops else "bcast",
              int(a.sizes) if "," not in a.sizes else 1048576, a.profile, pathlib.Path(a.out))
        return
    cases = a.cases.split(",")
    for c in cases:
        if c not in CASES:
            sys.exit(f"learning.py: no case {c} (cases: {', '.join(CASES)})")
        if CASES[c][2] and not CASES[c][2].exists():
            sys.exit(f"learning.py: {CASES[c][2]} is missing (testbed/smpi/harness.py probes it)")
    work = [(c, op, int(s)) for c in cases for op in a.ops.split(",") for s in a.sizes.split(",")]
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futures = {w: (pool.submit(job, *w, a.calls, False), pool.submit(job, *w, a.calls, True, a.learn)) for w in work}
        for w in work:
            fixed, learned = (f.result() for f in futures[w])
            rows.append(row(*w, fixed, learned))
            r = rows[-1]
            print(f"{w[0]} {w[1]} {size_name(w[2])}: learned/native {r['learned_vs_native']:.2f}x "
                  f"(fixed {r['fixed_vs_native']:.2f}x), {r['algorithm']} from call {r['held_from']}", flush=True)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "learning.json").write_text(json.dumps(rows, indent=1))
    (out / "learning.md").write_text(table(rows) + "\n")
    print(table(rows))
    if not all(r["ok"] for r in rows):
        sys.exit("learning.py: a result was wrong")


if __name__ == "__main__":
    main()

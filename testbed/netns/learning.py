#!/usr/bin/env python3
"""HETCOLL_LEARN on the emulated cluster: real TCP through shaped links, in
wall-clock time (noisy: every figure is a median, every comparison a ratio
within one repeat, jobs interleaved).

    testbed/netns/learning.py wrong [--topology T] [--calls N] [--sites S] [--repeats R] [--out DIR]
    testbed/netns/learning.py drift [--topology T] [--calls N] [--site S] [--profile P]
                                    [--subnet A] [--rate R] [--at S] [--back S] [--out DIR]

Both bring the cluster up (cluster.py up T, default demo8.toml), probe it
once (`hetcoll probe`, as the demo's job does; kept in DIR/profile.json and
used again when present) and tear it down whatever happens. Every job is
build/py/bench_job (a job's view: N calls of each site, each from a common
start, the slowest rank's time, the algorithm each call ran, every result
checked) launched by mpirun on the cluster's ranks.

wrong: hetcoll planning on models that are wrong on purpose — "flat" (no
profile: the default Hockney model, a machine drawn flat) and "swapped" (the
probed profile with hosts of the first and the last subnet exchanged: a0 is
taken to sit where c0 does, and so on) — and on the probed one, "right".
Per repeat, in one run: native (HETCOLL_DISABLE=1); per model, hetcoll's
decision ("fixed", HETCOLL_LEARN=0), learning ("learned", HETCOLL_LEARN=1,
its candidates read from HETCOLL_DEBUG=explain) and each of the other
candidates learning measured, forced (HETCOLL_ALGO). A row: a model, a
site; each job's median of the last half of its calls (after warm-up);
learned against the best of native and the candidates (the rule: within
5 %); the call from which the learning job ran its last choice. Writes
DIR/wrong.json (every call) and DIR/wrong.md.

drift: one site (default allreduce of 256 KiB) for N calls (default 400)
while SUBNET's uplink (default the first subnet's) drops to RATE (default
10mbit) AT seconds after the calls start (default 30) and comes back BACK
seconds after (default 90): native, the decision without learning, learning,
and the learning job's first-phase choice kept (a job that learned once and
stopped). Per phase: each job's median call, the learning job's choice and
the call from which it held it, the time it saved against the kept choice.
Writes DIR/drift.json and DIR/drift.md.

Needs root and the build (scripts/setup.sh): it builds nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CLUSTER = HERE / "cluster.py"
BENCH = ROOT / "build" / "py" / "bench_job"
HETCOLL = ROOT / ".venv" / "bin" / "hetcoll"
STATE = pathlib.Path(os.environ.get("HC_NETNS_STATE", "/run/hetcoll-netns"))
SITES = "bcast:1k,bcast:64k,allreduce:1k,allreduce:64k,allreduce:256k,allgather:64k,alltoall:64k,reduce:256k"
HETCOLL_VARS = ("HETCOLL_PROFILE", "HETCOLL_LEARN", "HETCOLL_DISABLE", "HETCOLL_ALGO", "HETCOLL_DEBUG")

# cluster.py's topology reader (the uplinks' rates), one place.
sys.path.insert(0, str(HERE))
import cluster as cluster_py  # noqa: E402


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, flush=True)


def cluster(*args: str) -> None:
    subprocess.run([sys.executable, str(CLUSTER), *args], check=True)


def ranks() -> int:
    return sum(h["ranks"] for h in json.loads((STATE / "topology.json").read_text())["hosts"])


def job_command(calls: int, sites: str, env: dict) -> list[str]:
    """mpirun of bench_job on every rank of the cluster, with ENV (the
    HETCOLL_* variables) set on each."""
    exports = []
    for k, v in env.items():
        exports += ["-x", f"{k}={v}"]
    return [sys.executable, str(CLUSTER), "exec", "--", "mpirun", "-n", str(ranks()), *exports, str(BENCH),
            str(calls), sites]


def parse_job(stdout: str, stderr: str, what: str) -> tuple[list[dict], str]:
    rows = [json.loads(l) for l in stdout.splitlines() if l.startswith("{") and '"op"' in l]
    if not rows:
        raise RuntimeError(f"{what}: no result\n{stdout[-1500:]}{stderr[-1500:]}")
    bad = [f"{r['op']}:{r['bytes']}" for r in rows if not r["ok"]]
    if bad:
        raise RuntimeError(f"{what}: wrong results at {', '.join(bad)}")
    return rows, stderr


def run_job(calls: int, sites: str, env: dict, what: str) -> tuple[list[dict], str]:
    p = subprocess.run(job_command(calls, sites, env), capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{what}: rc={p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    return parse_job(p.stdout, p.stderr, what)


def probe(out: pathlib.Path) -> pathlib.Path:
    prof = out / "profile.json"
    if not prof.exists():
        log(f"probe: {ranks()} ranks")
        subprocess.run([sys.executable, str(CLUSTER), "exec", "--", str(HETCOLL), "probe", "--np", str(ranks()),
                        "-o", str(prof), "--budget", "120", "--large", "256k"], check=True)
    return prof


def swapped_profile(right: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The probed profile with the hosts of the first and the last subnet
    exchanged, pairwise, where they have as many ranks (a0 <-> c0, …): the
    model puts each where the other is. Its measured decisions dropped (they
    are measurements, not the model)."""
    p = json.loads(right.read_text())
    hosts = p["hosts"]
    first = [h for h in hosts if h["subnet"] == min(x["subnet"] for x in hosts)]
    last = [h for h in hosts if h["subnet"] == max(x["subnet"] for x in hosts)]
    swaps = 0
    for a, c in zip(first, last):
        if len(a["ranks"]) == len(c["ranks"]):
            a["name"], c["name"] = c["name"], a["name"]
            swaps += 1
    if not swaps:
        raise RuntimeError("swapped: no two hosts of the first and last subnet have as many ranks")
    p.pop("tuned", None)
    path = out / "profile_swapped.json"
    path.write_text(json.dumps(p))
    return path


def without_tuned(right: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    p = json.loads(right.read_text())
    p.pop("tuned", None)
    path = out / "profile_model.json"
    path.write_text(json.dumps(p))
    return path


def size_bytes(op: str, nbytes: int, p: int) -> int:
    """Collective::size_bytes() of bench_job's call (what HETCOLL_ALGO's
    ranges match)."""
    n = max(1, nbytes // 8)
    if op in ("allgather", "alltoall", "reduce_scatter_block"):
        return max(1, n // p) * 8
    return n * 8


LEARNED = re.compile(r"MPI_(\w+) p=\d+(?: root=\d+)? size~(\d+)B(?: on \S+)?: learned (.*)$")


def candidates_of(explain: str) -> dict:
    """{(op, representative bytes): [candidate, …]} from the learning job's
    explain lines (the last said for a site wins)."""
    out = {}
    for line in explain.splitlines():
        m = LEARNED.search(line)
        if not m:
            continue
        names = [part.strip().split(" ")[0] for part in m.group(3).split("; ") if not part.startswith("after ")]
        out[(m.group(1).lower(), int(m.group(2)))] = names
    return out


def last_half(t):
    return statistics.median(t[len(t) // 2:])


def since(algs):
    """The call from which the job ran its last choice throughout."""
    k = len(algs)
    while k > 0 and algs[k - 1] == algs[-1]:
        k -= 1
    return k


def wrong(a) -> int:
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    right = probe(out)
    models = {"right": str(without_tuned(right, out)), "flat": None, "swapped": str(swapped_profile(right, out))}
    p = ranks()
    runs = []
    for rep in range(a.repeats):
        rec = {"repeat": rep, "native": None, "models": {}}
        log(f"repeat {rep + 1}/{a.repeats}: native")
        rec["native"], _ = run_job(a.calls, a.sites, {"HETCOLL_DISABLE": "1"}, "native")
        for name, prof in models.items():
            base = {"HETCOLL_PROFILE": prof} if prof else {}
            log(f"repeat {rep + 1}: {name}: fixed, learned")
            fixed, _ = run_job(a.calls, a.sites, {**base, "HETCOLL_LEARN": "0"}, f"{name} fixed")
            learned, explain = run_job(a.calls, a.sites, {**base, "HETCOLL_LEARN": "1", "HETCOLL_DEBUG": "explain"},
                                       f"{name} learned")
            cands = candidates_of(explain)
            # The candidates learning measured (every one runs at least its
            # probe), other than native and the decision, forced one job
            # each (the k-th of every site).
            others = {}
            for r, f in zip(learned, fixed):
                key = (r["op"], size_bytes(r["op"], r["bytes"], p))
                others[key] = [c for c in dict.fromkeys(r["algorithms"]) if c not in ("native", f["algorithms"][-1])]
            forced = []
            for k in range(max((len(v) for v in others.values()), default=0)):
                rules = "#".join(f"{op}:{sb}-{sb + 1}:@{v[k]}" for (op, sb), v in others.items() if len(v) > k)
                log(f"repeat {rep + 1}: {name}: candidate {k + 1} forced")
                rows, _ = run_job(a.calls, a.sites, {**base, "HETCOLL_ALGO": rules}, f"{name} candidate {k + 1}")
                forced.append(rows)
            rec["models"][name] = {"fixed": fixed, "learned": learned, "forced": forced,
                                   "candidates": {f"{k[0]}:{k[1]}": v for k, v in cands.items()},
                                   "explain": [l for l in explain.splitlines() if "learned" in l]}
        runs.append(rec)
        (out / "wrong.json").write_text(json.dumps({"calls": a.calls, "sites": a.sites, "ranks": p, "runs": runs}))
    table = wrong_table(runs)
    (out / "wrong.md").write_text(table)
    print(table)
    return 0


def wrong_rows(runs):
    rows = []
    for rec in runs:
        for name, m in rec["models"].items():
            for i, learned in enumerate(m["learned"]):
                native = rec["native"][i]
                fixed = m["fixed"][i]
                best = {"native": last_half(native["calls"]), fixed["algorithms"][-1]: last_half(fixed["calls"])}
                for f in m["forced"]:
                    best.setdefault(f[i]["algorithms"][-1], last_half(f[i]["calls"]))
                best_name = min(best, key=best.get)
                ls = last_half(learned["calls"])
                rows.append({"repeat": rec["repeat"], "model": name, "op": learned["op"], "bytes": learned["bytes"],
                             "native_s": best["native"], "fixed_s": last_half(fixed["calls"]),
                             "fixed_algorithm": fixed["algorithms"][-1], "learned_s": ls,
                             "algorithm": learned["algorithms"][-1], "best": best_name, "best_s": best[best_name],
                             "vs_best": best[best_name] / ls, "vs_native": best["native"] / ls,
                             "fixed_vs_best": best[best_name] / last_half(fixed["calls"]),
                             "since": since(learned["algorithms"]), "calls": len(learned["calls"])})
    return rows


def wrong_table(runs) -> str:
    rows = wrong_rows(runs)
    lines = ["| model | collective | bytes | native | fixed (its choice) | learned (its choice) | best of native and the "
             "candidates | best / learned | best / fixed | last choice from call |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    keys = sorted({(r["model"], r["op"], r["bytes"]) for r in rows}, key=lambda k: (k[0], k[1], k[2]))
    ms = lambda s: f"{s * 1e3:.2f} ms"
    for key in keys:
        rs = [r for r in rows if (r["model"], r["op"], r["bytes"]) == key]
        med = lambda f: statistics.median(r[f] for r in rs)
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {ms(med('native_s'))} | {ms(med('fixed_s'))} "
                     f"({'/'.join(sorted({r['fixed_algorithm'] for r in rs}))}) | {ms(med('learned_s'))} "
                     f"({'/'.join(sorted({r['algorithm'] for r in rs}))}) | {'/'.join(sorted({r['best'] for r in rs}))} "
                     f"| {med('vs_best'):.2f}x | {med('fixed_vs_best'):.2f}x | {int(med('since'))} |")
    within = sum(1 for r in rows if r["vs_best"] >= 0.95)
    # What learning costs once settled where it kept the decision: the same
    # algorithm with and without it, in the same repeat.
    same = [r["learned_s"] / r["fixed_s"] for r in rows if r["algorithm"] == r["fixed_algorithm"]]
    lines.append("")
    lines.append(f"{len(rows)} rows (models x sites x repeats): learned within 5 % of the best in {within}; "
                 f"below 0.95x native in {sum(1 for r in rows if r['vs_native'] < 0.95)}; "
                 f"fixed within 5 % of the best in {sum(1 for r in rows if r['fixed_vs_best'] >= 0.95)}.")
    if same:
        lines.append(f"Where learning kept the decision ({len(same)} rows), learned / fixed: median "
                     f"{statistics.median(same):.3f} (min {min(same):.3f}, max {max(same):.3f}).")
    return "\n".join(lines) + "\n"


def timed_job(calls, site, env, what, changes):
    """A job whose shaper changes while it runs: CHANGES = [(seconds after the
    calls start, subnet, rate)]. Returns its rows and the changes' times."""
    proc = subprocess.Popen(job_command(calls, site, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = []
    out_lines = []

    def shaper(t0):
        for at, subnet, rate in changes:
            delay = t0 + at - time.time()
            if delay > 0:
                time.sleep(delay)
            if proc.poll() is not None:
                return
            cluster("shape", subnet, rate)
            done.append({"at": time.time(), "subnet": subnet, "rate": rate})

    th = None
    for line in proc.stdout:
        out_lines.append(line)
        if line.startswith('{"started"') and th is None:
            th = threading.Thread(target=shaper, args=(json.loads(line)["started"],), daemon=True)
            th.start()
    err = proc.stderr.read()
    proc.wait()
    if th:
        th.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: rc={proc.returncode}\n{''.join(out_lines)[-1500:]}{err[-1500:]}")
    rows, _ = parse_job("".join(out_lines), err, what)
    return rows[0], done, err


def drift(a) -> int:
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    right = probe(out)
    prof = str(without_tuned(right, out)) if a.profile == "probed" else (None if a.profile == "none" else a.profile)
    topo = json.loads((STATE / "topology.json").read_text())
    subnet = a.subnet or topo["subnets"][0]
    uplinks = {s.name: s.uplink for s in cluster_py.load_topology(a.topology).subnets}
    rate0 = f"{int(uplinks[subnet])}bit"
    changes = [(a.at, subnet, a.rate), (a.back, subnet, rate0)]
    base = {"HETCOLL_PROFILE": prof} if prof else {}
    jobs = {}
    log(f"drift: {a.site}, {a.calls} calls; {subnet}'s uplink {a.rate} from {a.at} s to {a.back} s")
    jobs["learned"] = timed_job(a.calls, a.site, {**base, "HETCOLL_LEARN": "1", "HETCOLL_DEBUG": "explain"},
                                "learned", changes)
    d = jobs["learned"][0]
    first_phase = [alg for alg, s in zip(d["algorithms"], d["starts"]) if s < jobs["learned"][1][0]["at"]]
    kept = first_phase[-1] if first_phase else d["algorithms"][0]
    op = d["op"]
    jobs["native"] = timed_job(a.calls, a.site, {"HETCOLL_DISABLE": "1"}, "native", changes)
    jobs["fixed"] = timed_job(a.calls, a.site, {**base, "HETCOLL_LEARN": "0"}, "fixed", changes)
    if kept == "native":
        jobs["kept"] = jobs["native"]
    else:
        jobs["kept"] = timed_job(a.calls, a.site, {**base, "HETCOLL_ALGO": f"{op}:0-inf:@{kept}"}, "kept", changes)
    result = {"site": a.site, "calls": a.calls, "subnet": subnet, "rate": a.rate, "rate_before": rate0,
              "at": a.at, "back": a.back, "profile": a.profile, "kept": kept,
              "jobs": {k: {"row": v[0], "changes": v[1]} for k, v in jobs.items()},
              "explain": [l for l in jobs["learned"][2].splitlines() if "HETCOLL_LEARN" in l or "learned" in l]}
    (out / "drift.json").write_text(json.dumps(result))
    table = drift_table(result)
    (out / "drift.md").write_text(table)
    print(table)
    return 0


def drift_phases(job):
    """[(phase, calls' times, algorithms)] split at the job's own shaper changes."""
    row, changes = job["row"], job["changes"]
    cuts = [c["at"] for c in changes]
    phases = [([], []) for _ in range(len(cuts) + 1)]
    for t, alg, s in zip(row["calls"], row["algorithms"], row["starts"]):
        k = sum(s >= c for c in cuts)
        phases[k][0].append(t)
        phases[k][1].append(alg)
    return phases


def drift_table(result) -> str:
    names = ["before", "slow uplink", "restored"]
    lines = [f"{result['site']}, {result['calls']} calls; subnet {result['subnet']}'s uplink {result['rate_before']} "
             f"-> {result['rate']} at {result['at']} s -> {result['rate_before']} at {result['back']} s; kept: "
             f"{result['kept']}", "",
             "| phase | calls (learned) | native | fixed | kept | learned | learned ran | held from call | "
             "saved against kept |", "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    ph = {k: drift_phases(v) for k, v in result["jobs"].items()}
    ms = lambda s: f"{s * 1e3:.2f} ms" if s == s else "-"
    med = lambda t: statistics.median(t) if t else float("nan")
    for i, name in enumerate(names):
        lt, la = ph["learned"][i]
        held = since(la) if la else 0
        saved = sum(ph["kept"][i][0]) / max(len(ph["kept"][i][0]), 1) * len(lt) - sum(lt) if lt else 0
        lines.append(f"| {name} | {len(lt)} | {ms(med(ph['native'][i][0]))} | {ms(med(ph['fixed'][i][0]))} | "
                     f"{ms(med(ph['kept'][i][0]))} | {ms(med(lt))} | {'/'.join(dict.fromkeys(la))} | {held} | "
                     f"{saved:.2f} s |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["wrong", "drift"])
    ap.add_argument("--topology", default=str(HERE / "topologies" / "demo8.toml"))
    ap.add_argument("--calls", type=int)
    ap.add_argument("--sites", default=SITES)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--site", default="allreduce:256k")
    ap.add_argument("--profile", default="probed", help="drift: probed, none (flat) or a file")
    ap.add_argument("--subnet")
    ap.add_argument("--rate", default="10mbit")
    ap.add_argument("--at", type=float, default=30)
    ap.add_argument("--back", type=float, default=90)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "netns_learning"))
    ap.add_argument("--keep-up", action="store_true", help="a cluster already up: use it, leave it up")
    a = ap.parse_args(argv)
    a.calls = a.calls or (40 if a.what == "wrong" else 400)
    if not BENCH.exists():
        print(f"learning.py: {BENCH} is not built (bash scripts/setup.sh)", file=sys.stderr)
        return 1
    if not a.keep_up:
        cluster("up", a.topology)
    try:
        return wrong(a) if a.what == "wrong" else drift(a)
    finally:
        if not a.keep_up:
            cluster("down")


if __name__ == "__main__":
    sys.exit(main())

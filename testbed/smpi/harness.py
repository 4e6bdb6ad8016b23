#!/usr/bin/env python3
"""hetcoll against every SMPI built-in algorithm, in simulated time.

For each platform: probe it with hetcoll-probe (the profile hetcoll plans
with, cached in the output directory), then for each collective run
build/smpi/smpi_bench once per SMPI algorithm of that collective
(--cfg=smpi/<op>:NAME, the names SimGrid itself lists, the `ompi`, `mpich`,
`mvapich2` and `impi` selectors among them), the first run also timing
hetcoll's choice (HETCOLL_PROFILE) and its prediction. Every result of every
run is checked against the exact answer; a built-in that crashes, stalls or
answers wrongly is recorded as such, never counted as a time.

    testbed/smpi/harness.py [--platforms P,...] [--ops OP,...] [--sizes B,...]
                            [--out DIR] [--jobs N] [--reprobe]
                            [--generated K [--platform-seed S] [--max-hosts H] [--families F,...]]
                            [--builtins all|selectors]

--generated K runs K platforms of testbed/smpi/generate.py's sweep (its
families in turn; the same seed gives the same platforms as sweep_probe.py)
instead of --platforms, written to DIR/platforms and each probed afresh, from
nothing. --builtins selectors runs only SMPI's selectors (ompi, mpich,
mvapich2, impi, default) beside hetcoll: a ninth of the runs. The summary
holds each row to the faster of the ompi and mpich selectors too.

Builds build/smpi first (scripts/build_smpi.sh; --no-build to skip). Writes
DIR/results.json (every row) and DIR/results.md (the full table) and prints
the table; --summary prints the README's, --plot PREFIX draws it.
"""
import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUN = HERE / "run"
BUILD = ROOT / "build" / "smpi"

OPS = ["bcast", "reduce", "allreduce", "allgather", "reduce_scatter_block", "alltoall", "gather", "scatter", "barrier"]
SIZES = [8, 65536, 1048576]
# Platform: ranks (one a host unless the host file lists a host twice), heterogeneous?
PLATFORMS = {
    "cluster16": (16, False),
    "two_subnets": (8, True),
    "three_subnets": (16, True),
    "slow_hosts": (16, True),
    "multicore": (16, True),
    "cluster64_4subnets": (64, True),
    # Issue 25's machines the probe had not seen: slow interfaces that
    # latency does not tell apart, with ranks 0 and 1 among them.
    "slow_nics16": (16, True),
    "cluster128_8subnets": (128, True),
    # Issue 39: racks of a fat tree whose oversubscribed uplinks latency
    # does not show (the probe finds them by bandwidth).
    "fat_tree32": (32, True),
}
# SMPI's configuration key per collective (reduce_scatter_block runs SMPI's
# reduce_scatter algorithms).
CFG = {"reduce_scatter_block": "reduce_scatter"}
SELECTORS = ("ompi", "mpich", "mvapich2", "impi", "default")
SKIP = ("automatic",)  # times every algorithm at run time: not one algorithm


def platform_name(platform):
    """A platform's name: itself, or a generated platform's file name without .xml."""
    return pathlib.Path(platform).stem if platform.endswith(".xml") else platform


def run(platform, np, cfgs, args, env=None, timeout=900):
    cmd = [str(RUN), "--platform", platform, *cfgs, "-n", str(np), str(BUILD / args[0]), *args[1:]]
    e = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 and not rows:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return None, " | ".join(tail)[-300:]
    return rows, "" if p.returncode == 0 else "wrong results"


def smpi_algorithms(op):
    """The algorithm names SimGrid accepts for op, from its own message."""
    key = CFG.get(op, op)
    p = subprocess.run([str(RUN), "--platform", "cluster16", f"--cfg=smpi/{key}:?", "-n", "2",
                        str(BUILD / "smpi_bench"), op, "8"], capture_output=True, text=True, timeout=120)
    m = re.search(r"Valid algorithms: (.*?)\.\s*$", p.stdout + p.stderr, re.M)
    if not m:
        raise SystemExit(f"harness: cannot list SMPI's {key} algorithms:\n{p.stdout}{p.stderr}")
    return [a.strip() for a in m.group(1).split(",") if a.strip() not in SKIP]


def probe(platform, np, out, reprobe):
    prof = out / "profiles" / f"{platform_name(platform)}.json"
    if prof.exists() and not reprobe:
        return prof
    prof.parent.mkdir(parents=True, exist_ok=True)
    print(f"harness: probing {platform} ({np} ranks)", flush=True)
    p = subprocess.run([str(RUN), "--platform", platform, "-n", str(np), str(BUILD / "hetcoll-probe"),
                        "-o", str(prof), "--no-progress"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"harness: probe of {platform} failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return prof


_NO_BOUND_SAID = False


def lower_bound(profile, op, size, np):
    """The physical bound (docs/bound.md, model/bound.cpp) on the profile
    hetcoll plans with: smpi_bench's call (8-byte elements; `size` the
    vector of bcast/reduce/allreduce, else a rank's whole buffer)."""
    if not pathlib.Path(profile).is_file():
        return None
    try:
        from hetcoll import _core
    except ImportError:  # run by a Python without hetcoll's package (CI's SMPI build): no bound column
        global _NO_BOUND_SAID
        if not _NO_BOUND_SAID:
            print("harness: no bound column (this Python cannot import hetcoll; pip install . or use .venv/bin/python)",
                  flush=True)
            _NO_BOUND_SAID = True
        return None
    per_vector = op in ("bcast", "reduce", "allreduce")
    count = 0 if op == "barrier" else max(1, size // 8 if per_vector else size // 8 // np)
    model = _core.group_model(_core.parse_model(f"profile:{profile}"), [], np)
    return _core.bound(_core.collective(op, np, count, 0, 8, False), model)["bound"] or None


def bench_platform(platform, np, ops, sizes, out, jobs, reprobe, selectors_only=False):
    prof = probe(platform, np, out, reprobe)
    env = {"HETCOLL_PROFILE": str(prof)}
    size_arg = ",".join(str(s) for s in sizes)
    rows = []
    tasks = []
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        for op in ops:
            op_sizes = "0" if op == "barrier" else size_arg
            tasks.append((op, None, pool.submit(run, platform, np, [], ["smpi_bench", op, op_sizes, "--hetcoll"], env)))
            for alg in smpi_algorithms(op):
                if selectors_only and alg not in SELECTORS:
                    continue
                cfg = [f"--cfg=smpi/{CFG.get(op, op)}:{alg}"]
                tasks.append((op, alg, pool.submit(run, platform, np, cfg, ["smpi_bench", op, op_sizes])))
        results = {}
        for op, alg, fut in tasks:
            res, err = fut.result()
            results[(op, alg)] = (res, err)
    for op in ops:
        base, err = results[(op, None)]
        if base is None:
            raise SystemExit(f"harness: {platform} {op}: hetcoll's run failed: {err}")
        for r in base:
            row = {"platform": platform_name(platform), "op": op, "bytes": r["bytes"], "ranks": r["ranks"],
                   "hetcoll_s": r["hetcoll_s"], "hetcoll_ok": r["hetcoll_ok"], "algorithm": r["algorithm"],
                   "predicted_s": r["predicted_s"], "builtins": {}, "failed": {}}
            for (o, alg), (res, err) in results.items():
                if o != op or alg is None:
                    continue
                match = [x for x in (res or []) if x["bytes"] == r["bytes"]]
                if match and match[0]["native_ok"]:
                    row["builtins"][alg] = match[0]["native_s"]
                else:
                    row["failed"][alg] = err or "wrong result"
            named = {a: t for a, t in row["builtins"].items() if a not in SELECTORS}
            best = min(named or row["builtins"], key=(named or row["builtins"]).get)
            row["best_builtin"] = best
            row["best_builtin_s"] = row["builtins"][best]
            row["ompi_s"] = row["builtins"].get("ompi")
            row["mpich_s"] = row["builtins"].get("mpich")
            row["lower_bound_s"] = lower_bound(prof, op, r["bytes"], r["ranks"])
            rows.append(row)
    return rows


def fmt_t(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.3f}" if s < 10 else f"{s * 1e3:.0f}"


def table(rows):
    head = ("| platform | ranks | op | bytes | hetcoll ms | algorithm | predicted ms | err | best built-in | ms "
            "| ratio | ompi ms | vs ompi | lower bound ms |\n|" + "---|" * 14 + "\n")
    lines = []
    for r in rows:
        h, b, o = r["hetcoll_s"], r["best_builtin_s"], r["ompi_s"]
        err = f"{100 * (r['predicted_s'] - h) / h:+.1f}%" if r["predicted_s"] > 0 and h > 0 else "-"
        lines.append(
            f"| {r['platform']} | {r['ranks']} | {r['op']} | {r['bytes']} | {fmt_t(h)}{'' if r['hetcoll_ok'] else ' WRONG'} "
            f"| {r['algorithm']} | {fmt_t(r['predicted_s'] or None)} | {err} | {r['best_builtin']} | {fmt_t(b)} "
            f"| {b / h:.2f} | {fmt_t(o)} | {(o / h if o else 0):.2f} | {fmt_t(r['lower_bound_s'])} |")
    return head + "\n".join(lines) + "\n"


def vs_selectors(r):
    """The faster of SMPI's ompi and mpich selectors over hetcoll's time (None without both)."""
    o, m = r.get("ompi_s"), r.get("mpich_s")
    if not o or not m or not r["hetcoll_s"] > 0:
        return None
    return min(o, m) / r["hetcoll_s"]


def summary(rows):
    out = []
    for plat in dict.fromkeys(r["platform"] for r in rows):
        rs = [r for r in rows if r["platform"] == plat]
        ratios = [r["best_builtin_s"] / r["hetcoll_s"] for r in rs if r["hetcoll_s"] > 0]
        errs = sorted(abs(r["predicted_s"] - r["hetcoll_s"]) / r["hetcoll_s"] for r in rs
                      if r["predicted_s"] > 0 and r["hetcoll_s"] > 0)
        p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else float("nan")
        sel = [vs_selectors(r) for r in rs if vs_selectors(r)]
        said = (f"; vs the faster of ompi and mpich median {statistics.median(sel):.2f}x, min {min(sel):.2f}x, "
                f"{sum(x < 0.95 for x in sel)} below 0.95x") if sel else ""
        out.append(f"{plat}: {len(rs)} rows, vs best built-in median {statistics.median(ratios):.2f}x, "
                   f"min {min(ratios):.2f}x{said}; prediction error median "
                   f"{100 * statistics.median(errs) if errs else float('nan'):.1f}%, p90 {100 * p90:.1f}%; "
                   f"wrong results: {sum(not r['hetcoll_ok'] for r in rs)}")
    return "\n".join(out)


def summary_md(rows):
    """The README's view: per platform, and the 1 MiB rows across subnets."""
    out = ["| platform | ranks | rows | at or above 1.0× best built-in | median | lowest | prediction error median / p90 |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for plat in dict.fromkeys(r["platform"] for r in rows):
        rs = [r for r in rows if r["platform"] == plat]
        ratios = sorted(r["best_builtin_s"] / r["hetcoll_s"] for r in rs)
        errs = sorted(abs(r["predicted_s"] - r["hetcoll_s"]) / r["hetcoll_s"] for r in rs if r["predicted_s"] > 0)
        p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else float("nan")
        out.append(f"| `{plat}` | {rs[0]['ranks']} | {len(rs)} | {sum(x >= 0.995 for x in ratios)} | "
                   f"{statistics.median(ratios):.2f} | {ratios[0]:.2f} | "
                   f"{100 * statistics.median(errs):.1f} % / {100 * p90:.1f} % |")
    out += ["", "| platform | op (1 MiB) | hetcoll ms (algorithm) | best built-in ms (name) | × best | `ompi` ms | × ompi "
            "| lower bound ms | × bound |", "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["bytes"] != 1048576 or r["op"] not in ("bcast", "reduce", "allreduce", "allgather", "reduce_scatter_block") \
                or not r["lower_bound_s"]:
            continue
        h, b, o, lb = r["hetcoll_s"], r["best_builtin_s"], r["ompi_s"] or 0, r["lower_bound_s"]
        out.append(f"| `{r['platform']}` | {r['op']} | {fmt_t(h)} (`{r['algorithm']}`) | {fmt_t(b)} (`{r['best_builtin']}`) "
                   f"| {b / h:.2f} | {fmt_t(o)} | {o / h:.2f} | {fmt_t(lb)} | {h / lb:.2f} |")
    return "\n".join(out) + "\n"


def plot(rows, out_png_prefix):
    """Two figures: hetcoll / best built-in per row, and predicted vs simulated."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plats = list(dict.fromkeys(r["platform"] for r in rows))
    fig, axes = plt.subplots(len(plats), 1, figsize=(9, 2.3 * len(plats)), squeeze=False)
    for ax, plat in zip(axes[:, 0], plats):
        rs = [r for r in rows if r["platform"] == plat]
        labels = [f"{r['op'][:9]} {r['bytes'] if r['bytes'] < 1024 else str(r['bytes'] // 1024) + 'k'}" for r in rs]
        ratios = [r["best_builtin_s"] / r["hetcoll_s"] for r in rs]
        colors = ["tab:green" if x >= 0.995 else ("tab:orange" if x >= 0.9 else "tab:red") for x in ratios]
        ax.bar(range(len(rs)), ratios, color=colors)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=6)
        ax.set_ylabel("best built-in /\nhetcoll", fontsize=7)
        ax.set_title(f"{plat} ({rs[0]['ranks']} ranks)", fontsize=8)
        ax.set_ylim(0, max(2.0, max(ratios) * 1.05))
    fig.tight_layout()
    fig.savefig(f"{out_png_prefix}_ratios.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    for plat in plats:
        rs = [r for r in rows if r["platform"] == plat and r["predicted_s"] > 0]
        ax.scatter([r["hetcoll_s"] * 1e3 for r in rs], [r["predicted_s"] * 1e3 for r in rs], s=10, label=plat)
    lo = min(r["hetcoll_s"] for r in rows if r["hetcoll_s"] > 0) * 1e3
    hi = max(r["hetcoll_s"] for r in rows) * 1e3
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("SimGrid (ms)")
    ax.set_ylabel("hetcoll's prediction (ms)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out_png_prefix}_prediction.png", dpi=110)
    plt.close(fig)


def main():
    global BUILD
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "smpi_harness"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reprobe", action="store_true")
    ap.add_argument("--build", default=str(BUILD), help="the SimGrid build (default build/smpi)")
    ap.add_argument("--no-build", action="store_true", help="use the build as it is (default: scripts/build_smpi.sh first)")
    ap.add_argument("--plot", help="write PREFIX_ratios.png and PREFIX_prediction.png (matplotlib)")
    ap.add_argument("--from-json", help="only tabulate and plot an earlier run's results.json")
    ap.add_argument("--summary", action="store_true", help="print the README's summary tables")
    ap.add_argument("--generated", type=int, default=0, metavar="K",
                    help="K platforms of generate.py's sweep instead of --platforms")
    ap.add_argument("--platform-seed", type=int, default=1, help="with --generated: the sweep's seed")
    ap.add_argument("--max-hosts", type=int, default=32, help="with --generated: hosts drawn in [8, this]")
    ap.add_argument("--families", help="with --generated: comma-separated (default: all, in turn)")
    ap.add_argument("--builtins", choices=["all", "selectors"], default="all",
                    help="SMPI's algorithms run beside hetcoll: all of them, or its selectors only")
    ap.add_argument("--check", action="store_true",
                    help="fail unless the predictions hold: median error <= 5 %%, 90th percentile <= 15 %%")
    a = ap.parse_args()
    BUILD = pathlib.Path(a.build)
    if not a.no_build and not a.from_json:
        print("harness: building hetcoll and smpi_bench for SimGrid (scripts/build_smpi.sh)", flush=True)
        subprocess.run(["bash", str(ROOT / "scripts" / "build_smpi.sh")], check=True, stdout=subprocess.DEVNULL)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ops = a.ops.split(",")
    for op in ops:
        if op not in OPS:
            ap.error(f"unknown op {op} (known: {', '.join(OPS)})")
    sizes = [int(s) for s in a.sizes.split(",")]
    rows = []
    if a.from_json:
        rows = json.loads(pathlib.Path(a.from_json).read_text())
        for r in rows:  # the bound's formula may have changed since
            r["lower_bound_s"] = lower_bound(out / "profiles" / f"{r['platform']}.json", r["op"], r["bytes"], r["ranks"])
    else:
        plats = a.platforms.split(",")
        if a.generated:
            sys.path.insert(0, str(HERE))
            import generate
            fams = a.families.split(",") if a.families else None
            plats = [generate.write(p, str(out / "platforms")) + ".xml"
                     for p in generate.sweep(a.platform_seed, a.generated, a.max_hosts, fams)]
        for plat in plats:
            hosts = HERE / "platforms" / f"{plat}.hosts"
            if plat.endswith(".xml"):
                np = len(pathlib.Path(plat[:-4] + ".hosts").read_text().split())
            elif plat in PLATFORMS:
                np, _ = PLATFORMS[plat]
            elif (HERE / "platforms" / f"{plat}.xml").is_file() and hosts.is_file():
                np = len(hosts.read_text().split())  # a platform outside the default set: a rank a line
            else:
                ap.error(f"unknown platform {plat} (no {plat}.xml and .hosts in testbed/smpi/platforms)")
            print(f"harness: {platform_name(plat)}, {np} ranks, {len(ops)} ops", flush=True)
            rows += bench_platform(plat, np, ops, sizes, out, a.jobs, a.reprobe, a.builtins == "selectors")
            (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")  # after each: a long run keeps its rows
    if a.plot:
        plot(rows, a.plot)
    md = table(rows) + "\n" + summary(rows) + "\n"
    if a.summary:
        print(summary_md(rows))
    (out / "results.md").write_text(md)
    print(md)
    wrong = [r for r in rows if not r["hetcoll_ok"]]
    if wrong:
        print(f"harness: {len(wrong)} rows with WRONG hetcoll results", file=sys.stderr)
        sys.exit(1)
    if a.check:
        errs = sorted(abs(r["predicted_s"] - r["hetcoll_s"]) / r["hetcoll_s"] for r in rows
                      if r["predicted_s"] > 0 and r["hetcoll_s"] > 0)
        missing = [r for r in rows if not (r["predicted_s"] > 0) and r["algorithm"] not in ("", "native")]
        med = statistics.median(errs) if errs else float("inf")
        p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else float("inf")
        if missing or med > 0.05 or p90 > 0.15:
            print(f"harness: predictions off: median {100 * med:.1f}% (<= 5), p90 {100 * p90:.1f}% (<= 15), "
                  f"{len(missing)} rows without a prediction", file=sys.stderr)
            sys.exit(1)
        print(f"harness: predictions hold: median {100 * med:.1f}%, p90 {100 * p90:.1f}%")


if __name__ == "__main__":
    main()

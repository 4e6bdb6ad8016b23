#!/usr/bin/env python3
"""A corpus of hostile profiles and decision tables, made the same way every
time (no randomness but a seeded one), for the fuzz tests:

  - tests/fuzz/profile_fuzz.cpp (ctest profile_fuzz): every profile is
    refused with one line naming the file and the field, or its first
    decisions at 16 ranks cost under 100 ms and 50 MB each;
  - tests/python/test_fuzz.py: the same profiles and the tables through
    the command line (one line and exit 2, or an answer, in bounded time);
  - tests/fuzz/preload_fuzz.cmake (ctest mpi_profile_fuzz): some of them
    under LD_PRELOAD on 3 ranks, every result checked.

Profiles start from probed ones (one host, several hosts in subnets, a
tuned one) and set one field of every host, pair class, matrix entry or
reduction to an extreme (0, 1e-12 ... 1e12, each accepted range's end and
beyond it); then seeded mixtures of such settings; then tuned decisions
that name what a table or override could not (an order-dependent
floating-point allreduce, a million-segment chain, unknown names).
Tables: the planner's table with entries edited the same ways.

  python3 tests/fuzz/make_corpus.py OUTDIR [--quick] [--base PROFILE] [--table TABLE]

writes OUTDIR/profiles/*.json, OUTDIR/tables/*.json (tables when a
TABLE.json to edit is given with --table) and OUTDIR/index.txt (one line a
file: its name, what was done to it, and the field a refusal of it must
name, or -). --quick: fewer values (CI).
"""
import argparse
import copy
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASES = {
    "one_host": ROOT / "bench/results/mpi/profile_p4.json",
    "netns": ROOT / "bench/results/netns/profile.json",
    "three_subnets": ROOT / "bench/results/smpi_harness/profiles/three_subnets.json",
}
# Every numeric field a model is built from, as (group, key path).
HOST_FIELDS = [("Sc", "min"), ("Sc", "median"), ("Rc", "min"), ("Rc", "median"), ("Sm",), ("Rm",), ("gamma",), ("copy",)]
CLASS_FIELDS = [("latency",), ("bandwidth",), ("bandwidth_alone",), ("slowdown",), ("bandwidth_both_ways",),
                ("bandwidth_same_pair",), ("alpha",), ("beta",), ("Xc",), ("Xm",)]
MATRICES = ["small_min", "small_median", "large_min", "large_median"]
BACKPLANE = ["aggregate", "expected", "bandwidth"]
SHARING = ["near_latency", "far_latency", "near_alone", "far_alone", "far_shared"]
# The probe's sharing measurement, for bases of several hosts written
# before the probe measured it: SimGrid's CM02 on three_subnets (1/latency).
SHARING_BASE = {"measured": 1, "receiver": 0, "near": 1, "far": -1, "near_latency": 1.02e-4,
                "far_latency": 3.83e-3, "near_alone": 1.25e8, "far_alone": 1.25e7, "far_shared": 3.3e6}
VALUES = [0.0, 1e-12, 1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e9, 1e12, 1e300, -1.0]
QUICK_VALUES = [0.0, 1e-12, 1e-9, 1e-5, 1.0, 1e12]
# Measured winners no override may name for these calls.
BAD_WINNERS = [("allreduce", "bks_combine"), ("bcast", "chain_bcast[seg=1]"), ("reduce", "chain_reduce[seg=8]"),
               ("bcast", "no_such_algorithm"), ("allgather", "hybrid_allgather[mesh=7x13:SS]"),
               ("alltoall", "star_bcast"), ("bcast", "knomial_bcast[k=1]")]


def set_path(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    if path[-1] in obj:
        obj[path[-1]] = value
        return True
    return False


def profiles(quick, bases):
    values = QUICK_VALUES if quick else VALUES
    out = []  # (name, what, field a refusal must name, profile)
    for base_name, path in bases.items():
        base = json.loads(path.read_text())
        out.append((f"{base_name}__as_probed", "unchanged", "-", base))
        for field in HOST_FIELDS:
            for v in values:
                p = copy.deepcopy(base)
                if all(set_path(h, field, v) for h in p["hosts"]):
                    out.append((f"{base_name}__hosts_{'_'.join(field)}_{v:g}", f"every host's {'.'.join(field)} = {v:g}",
                                field[0], p))
        for field in CLASS_FIELDS:
            for v in values:
                p = copy.deepcopy(base)
                if any([set_path(c, field, v) for c in p["classes"]]):
                    out.append((f"{base_name}__classes_{field[0]}_{v:g}", f"every pair class's {field[0]} = {v:g}",
                                field[0], p))
        for m in MATRICES:
            for v in values:
                if base_name == "one_host" and v != 0.0:
                    continue
                p = copy.deepcopy(base)
                p["pairs"][m] = [v if i % (len(p["hosts"]) + 1) else 0.0 for i in range(len(p["pairs"][m]))]
                out.append((f"{base_name}__pairs_{m}_{v:g}", f"pairs.{m}: every other pair {v:g}", m, p))
        if "backplane" in base:
            for k in BACKPLANE:
                for v in values:
                    p = copy.deepcopy(base)
                    p["backplane"][k] = v
                    out.append((f"{base_name}__backplane_{k}_{v:g}", f"backplane.{k} = {v:g}", k, p))
        if len(base["hosts"]) >= 3:
            sharing = base.get("sharing") or dict(SHARING_BASE, far=len(base["hosts"]) - 1)
            for k in SHARING:
                for v in values:
                    p = copy.deepcopy(base)
                    p["sharing"] = dict(sharing, **{k: v})
                    out.append((f"{base_name}__sharing_{k}_{v:g}", f"sharing.{k} = {v:g}", k, p))
        for v in values:
            p = copy.deepcopy(base)
            for r in p["reductions"]:
                r["gamma"] = {"min": v, "median": v}
            out.append((f"{base_name}__reductions_gamma_{v:g}", f"every reduction's gamma = {v:g}", "gamma", p))
        # Mixtures: every host and class field at once, drawn from the values.
        rng = random.Random(f"{base_name}-mix")
        for k in range(4 if quick else 12):
            p = copy.deepcopy(base)
            for h in p["hosts"]:
                for field in HOST_FIELDS:
                    set_path(h, field, rng.choice(values[:6]))
            for c in p["classes"]:
                for field in CLASS_FIELDS:
                    set_path(c, field, rng.choice(values[:6]) if field[0] not in ("bandwidth",) else rng.choice([1e-3, 1.0, 1e6, 1e12]))
            out.append((f"{base_name}__mix_{k}", "every host and class field drawn from the extremes", "-", p))
        # Measured decisions no rule admits.
        if base.get("tuned"):
            for op, winner in BAD_WINNERS:
                p = copy.deepcopy(base)
                changed = 0
                for layout in p["tuned"]:
                    for e in layout["entries"]:
                        if e["op"] != op:
                            continue
                        changed += 1
                        e["winner"] = winner
                        if not any(t["algorithm"] == winner for t in e["times"]):
                            e["times"].append({"algorithm": winner, "min": 1e-9, "median": 1e-9, "predicted": 0.0})
                if not changed:
                    continue
                out.append((f"{base_name}__tuned_{op}_{winner.split('[')[0]}", f"measured winner {winner} for {op}",
                            "winner", p))
    return out


def tables(table):
    base = json.loads(Path(table).read_text())
    cols = base["columns"]
    i_op, i_algo = cols.index("op"), cols.index("algorithm")
    out = [("as_built", "unchanged", base)]
    for op, winner in BAD_WINNERS + [("bcast", "native"), ("allreduce", "ring_allreduce")]:
        t = copy.deepcopy(base)
        n = 0
        for e in t["entries"]:
            if e[i_op] == op:
                e[i_algo] = winner
                n += 1
        if n:
            out.append((f"{op}_{winner.split('[')[0]}", f"every {op} entry says {winner}", t))
    t = copy.deepcopy(base)
    t["entries"] = t["entries"][: len(t["entries"]) // 2]
    out.append(("half", "half its entries", t))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--table", help="a decision table to edit into tables/")
    ap.add_argument("--base", help="one profile to start from instead of the project's (one probed here: its hosts "
                                   "are this machine's, so the MPI layer uses it)")
    args = ap.parse_args()
    out = Path(args.outdir)
    (out / "profiles").mkdir(parents=True, exist_ok=True)
    index = []
    bases = {"base": Path(args.base)} if args.base else BASES
    for name, what, field, p in profiles(args.quick, bases):
        (out / "profiles" / f"{name}.json").write_text(json.dumps(p, indent=1) + "\n")
        index.append(f"profiles/{name}.json\t{what}\t{field}")
    # Files that are not profiles at all.
    text = next(iter(bases.values())).read_text()
    for name, body in [("truncated", text[: len(text) // 2]), ("empty", ""), ("not_json", "hockney:alpha=1us\n"),
                       ("nan", re.sub(r'"Rm":\s*[-0-9.eE+]+', '"Rm": NaN', text, count=1))]:
        (out / "profiles" / f"file__{name}.json").write_text(body)
        index.append(f"profiles/file__{name}.json\t{name}\t-")
    if args.table:
        (out / "tables").mkdir(exist_ok=True)
        for name, what, t in tables(args.table):
            (out / "tables" / f"{name}.json").write_text(json.dumps(t) + "\n")
            index.append(f"tables/{name}.json\t{what}\t-")
    (out / "index.txt").write_text("\n".join(index) + "\n")
    print(f"{len(index)} files in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""``hetcoll predict`` and ``hetcoll whatif``: Banikazemi et al.'s models.

predict: for bcast over a tree (eqs. 6-7), scatter over a sequential tree
(8-9) and gather over a reverse sequential tree (10-12), the equations' time
beside the simulator's for the same tree on the same model (a profile: its
hosts laid out as the probe job had them), and the planner's choice.

whatif: Banikazemi's Fig. 8 — the predicted time of a collective as the
number of fast nodes in an n-node system varies (the root always fast).
Fast and slow nodes are Banikazemi's Table 1 (Pentium II / Pentium Pro,
Fast Ethernet), or a profile's fastest and slowest hosts with the network
of the fast host's subnet.
"""
from __future__ import annotations

import json
import os
import tempfile

from . import _core
from .render import format_time


class WhatIfError(ValueError):
    pass


# The schedule that walks the same tree as the equations.
def same_tree_algorithm(op: str, tree: str, nbytes: int) -> str:
    if op == "scatter":
        return "star_scatter"
    if op == "gather":
        return "star_gather"
    if tree == "binomial":
        return "binomial_tree"
    if tree in ("star", "sequential"):
        return "star_bcast"
    if tree == "chain":
        return f"chain_bcast[seg={max(1, nbytes)}]"  # one segment: the tree, not a pipeline
    if tree.startswith("kary:"):
        return f"kary_bcast[k={tree.split(':', 1)[1]}]"
    if tree.startswith("knomial:"):
        return f"knomial_bcast[k={tree.split(':', 1)[1]}]"
    raise WhatIfError(f"unknown tree '{tree}' (binomial, star, chain, kary:K, knomial:K)")


def predict_rows(op: str, model_spec: str, ranks: int | None, root: int, sizes: list[int], tree: str) -> dict:
    if op not in ("bcast", "scatter", "gather"):
        raise WhatIfError(f"Banikazemi's models cover bcast, scatter and gather, not '{op}'")
    model = _core.parse_model(model_spec)
    n = ranks or model.ranks
    if not n:
        raise WhatIfError("--ranks is needed: this model is the same for any number of ranks")
    if not 0 <= root < n:
        raise WhatIfError(f"--root {root} is not a rank of {n}")
    gm = _core.group_model(model, [], n)
    rows = []
    for b in sizes:
        b = max(1, b)
        eq, per_rank = _core.analytic(op, gm, n, root, b, tree)
        algo = same_tree_algorithm(op, tree, b)
        coll = _core.collective(op, n, b, root, 1)
        sim = _core.generate(algo, coll, gm).simulate(gm, False).makespan
        best = _core.decide(coll, gm)  # the MPI layer's decision point
        rows.append({"bytes": b, "equations_s": eq, "simulated_s": sim, "algorithm": algo,
                     "planner": "native" if best["native"] else best["algorithm"],
                     "planner_s": None if best["native"] else best["predicted"]})
    return {"op": op, "model": model.spec, "ranks": n, "root": root, "tree": tree if op == "bcast" else
            ("sequential" if op == "scatter" else "reverse sequential"), "rows": rows}


def predict_lines(rec: dict) -> list[str]:
    out = [f"{rec['op']} on {rec['ranks']} ranks, root {rec['root']}, {rec['tree']} tree, {rec['model']}",
           "  Banikazemi eqs. 6-7 (bcast), 8-9 (scatter), 10-12 (gather) beside the simulator on the same tree;",
           "  the equations leave out contention (the paper: fully connected systems), the simulator does not",
           f"  {'bytes':>9}  {'equations':>11}  {'simulated':>11}  {'diff':>6}  planner's choice"]
    for r in rec["rows"]:
        d = (r["equations_s"] - r["simulated_s"]) / r["simulated_s"] * 100 if r["simulated_s"] else 0.0
        out.append(f"  {r['bytes']:>9}  {format_time(r['equations_s'], 's'):>11}  {format_time(r['simulated_s'], 's'):>11}"
                   f"  {d:+5.1f}%  {r['planner']} {format_time(r['planner_s'], 's')}")
    return out


# ---------------------------------------------------------------- what-if

BANIKAZEMI = {  # Table 1, and X = 16 us + m / 12.5 MB/s (Fast Ethernet switch)
    "F": {"name": "fast", "Sc": 60e-6, "Sm": 0.05e-6, "Rc": 110e-6, "Rm": 0.03e-6, "gamma": 0.0},
    "S": {"name": "slow", "Sc": 90e-6, "Sm": 0.18e-6, "Rc": 140e-6, "Rm": 0.08e-6, "gamma": 0.0},
}


def node_types(profile: str | None) -> tuple[dict, dict, float, float, str]:
    """(fast node, slow node, X_c, X_m, where they come from)."""
    if not profile:
        return BANIKAZEMI["F"], BANIKAZEMI["S"], 16e-6, 1e-6 / 12.5, "Banikazemi Table 1"
    try:
        p = json.loads(_core.load_profile(profile))
    except _core.InputError as e:
        raise WhatIfError(str(e)) from None
    hosts = p["hosts"]

    def node(h):
        return {"name": h["name"], "Sc": h["Sc"]["median"], "Sm": h["Sm"], "Rc": h["Rc"]["median"], "Rm": h["Rm"],
                "gamma": h["gamma"]}

    def cost(h):  # a small and a 64 KiB message sent and received
        n = node(h)
        return n["Sc"] + n["Rc"] + 65536 * (n["Sm"] + n["Rm"])

    fast = min(hosts, key=cost)
    slow = max(hosts, key=cost)
    cls = next((c for c in p["classes"] if c["a"] == fast["subnet"] and c["b"] == fast["subnet"]), None)
    if cls is None:
        cls = next((c for c in p["classes"] if c["a"] >= 0), p["classes"][0])
    # The class's one-way rate as the runtime's model takes it (ProfileModel's
    # one_way_rate): the pair alone, never below what its pairs got at once.
    bw = max(cls["bandwidth_alone"], cls["bandwidth"])
    xm = max(0.0, 1 / bw - fast["Sm"] - fast["Rm"]) if bw > 0 else cls["Xm"]
    return node(fast), node(slow), cls["Xc"], xm, f"{profile}: fast {fast['name']}, slow {slow['name']}"


def whatif_rows(op: str, ranks: int, fast_counts: list[int], nbytes: int, algorithm: str | None,
                profile: str | None) -> dict:
    if ranks < 2 or ranks > 1024:
        raise WhatIfError("--ranks must be 2 to 1024")
    for k in fast_counts:
        if not 1 <= k <= ranks:
            raise WhatIfError(f"--fast {k}: between 1 (the root) and {ranks} fast nodes")
    F, S, xc, xm, source = node_types(profile)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hetcoll-whatif.") as tmp:
        for k in fast_counts:
            nodes = [dict(F) for _ in range(k)] + [dict(S) for _ in range(ranks - k)]
            path = os.path.join(tmp, f"k{k}.json")
            with open(path, "w") as f:
                json.dump({"model": "heterogeneous", "nodes": nodes, "Xc": xc, "Xm": xm}, f)
            model = _core.parse_model(f"hetero:file={path}")
            coll = _core.collective(op, ranks, max(1, nbytes) if op != "barrier" else 0, 0, 1)
            if algorithm:
                t = _core.generate(algorithm, coll, model).simulate(model, False).makespan
                name = algorithm
            else:
                best = _core.decide(coll, model)  # the MPI layer's decision point
                t, name = (None, "native") if best["native"] else (best["predicted"], best["algorithm"])
            row = {"fast": k, "slow": ranks - k, "predicted_s": t, "algorithm": name}
            if op in ("bcast", "scatter", "gather"):
                row["equations_s"] = _core.analytic(op, model, ranks, 0, max(1, nbytes), "binomial")[0]
            rows.append(row)
    return {"op": op, "ranks": ranks, "bytes": nbytes, "nodes": source, "rows": rows}


def whatif_lines(rec: dict) -> list[str]:
    eq = "equations_s" in rec["rows"][0]
    out = [f"{rec['op']} of {rec['bytes']} B on {rec['ranks']} nodes as the fast ones vary (root fast); nodes: "
           f"{rec['nodes']}",
           f"  {'fast':>4} {'slow':>4}  {'predicted':>11}" + (f"  {'equations':>11}" if eq else "") + "  algorithm"]
    for r in rec["rows"]:
        out.append(f"  {r['fast']:>4} {r['slow']:>4}  {format_time(r['predicted_s'], 's'):>11}"
                   + (f"  {format_time(r['equations_s'], 's'):>11}" if eq else "") + f"  {r['algorithm']}")
    return out


def whatif_plot(rec: dict, png: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [r["fast"] for r in rec["rows"]]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(xs, [r["predicted_s"] * 1e3 for r in rec["rows"]], "o-", label="hetcoll's best (simulated)")
    if "equations_s" in rec["rows"][0]:
        ax.plot(xs, [r["equations_s"] * 1e3 for r in rec["rows"]], "s--", label="Banikazemi equations")
    ax.set_xlabel("fast nodes")
    ax.set_ylabel("time (ms)")
    ax.set_title(f"{rec['op']}, {rec['bytes']} B, {rec['ranks']} nodes")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)

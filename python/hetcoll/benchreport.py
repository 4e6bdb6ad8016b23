"""Tables and a plot of hetcoll against the native MPI collectives,
measured in the same run.

Each input is one run at one rank count: what ``hetcoll bench`` writes (the
format ``hetcoll report`` reads too: rows of variants, hetcoll's and
native's paired here as ``report.summary_rows`` pairs them), or what the
older ``bench_mpi`` prints: ``{"ranks": p, "reps": r, "results": [{"op",
"bytes", "hetcoll_us", "native_us", "speed", "algorithm"}, ...]}``. Either
becomes the second shape, where ``speed`` is native time / hetcoll time
(above 1: hetcoll is faster).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from statistics import median
from . import _core

TARGET = 0.9  # the bar: no worse than 0.9x the native time


def _size(b: int) -> str:
    return _core.format_bytes(b)  # one writing of sizes (src/model/units.cpp)


_FIELDS = {"op": str, "bytes": int, "hetcoll_us": (int, float), "native_us": (int, float), "speed": (int, float),
           "algorithm": str}


def _check_run(d, path) -> None:
    """bench_mpi's shape, field by field: anything else is the input's fault, said in one line."""
    if not isinstance(d["ranks"], int) or isinstance(d["ranks"], bool) or not isinstance(d["results"], list):
        raise ValueError(f"{path}: not bench_mpi output ('ranks' must be a number, 'results' a list)")
    for i, r in enumerate(d["results"]):
        if not isinstance(r, dict):
            raise ValueError(f"{path}: result {i} is not an object")
        for key, kind in _FIELDS.items():
            v = r.get(key)
            if v is None or isinstance(v, bool) or not isinstance(v, kind):
                raise ValueError(f"{path}: result {i} has no valid '{key}'")
            if key in ("hetcoll_us", "native_us", "speed") and not (v > 0 and v != float("inf")):
                raise ValueError(f"{path}: result {i}: '{key}' must be a positive number")


def _from_bench(path) -> dict:
    """A ``hetcoll bench`` result as a run: hetcoll's row against native's
    for every call that has both (the timing report.summary_rows picks)."""
    from .report import load_results, summary_rows

    rows, meta = load_results([str(path)])
    results = [{"op": r["op"], "bytes": r["bytes"], "hetcoll_us": r["hetcoll_s"] * 1e6,
                "native_us": r["native_s"] * 1e6, "speed": r["ratio"], "algorithm": r["algorithm"]}
               for r in summary_rows(rows) if r["native_s"] and r["ratio"]]
    if not results:
        raise ValueError(f"{path}: no call timed both by hetcoll and natively (run hetcoll bench with native)")
    return {"ranks": meta[0]["ranks"], "reps": meta[0].get("repeats"), "results": results}


def load(paths):
    runs = []
    for path in paths:
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError, RecursionError) as e:
            raise ValueError(f"cannot read bench results from {path}: {e}") from None
        if isinstance(d, dict) and "rows" in d:
            d = _from_bench(path)
        elif not isinstance(d, dict) or "ranks" not in d or "results" not in d:
            raise ValueError(f"{path}: neither hetcoll bench nor bench_mpi output (no 'rows', no 'ranks'/'results')")
        _check_run(d, path)
        runs.append(d)
    runs.sort(key=lambda d: d["ranks"])
    return runs


def _table(run):
    """OrderedDict op -> OrderedDict bytes -> result. A call hetcoll handed
    to the native MPI (a measured decision for native) has no algorithm."""
    t = OrderedDict()
    for r in run["results"]:
        r["algorithm"] = r["algorithm"] or "native"
        t.setdefault(r["op"], OrderedDict())[r["bytes"]] = r
    return t


def _algorithms(row) -> str:
    """'binomial_reduce (8 B–32 KiB), rabenseifner_reduce (256 KiB–4 MiB)'."""
    spans, prev = [], None
    for b, r in row.items():
        a = r["algorithm"]
        if prev and prev[0] == a:
            prev[2] = b
        else:
            prev = [a, b, b]
            spans.append(prev)
    if len(spans) == 1:
        return f"`{spans[0][0]}`"
    return ", ".join(f"`{a}` ({_size(lo)}–{_size(hi)})" if lo != hi else f"`{a}` ({_size(lo)})" for a, lo, hi in spans)


def summary(run) -> dict:
    speeds = [r["speed"] for r in run["results"]]
    below = [r for r in run["results"] if r["speed"] < TARGET]
    worst = min(run["results"], key=lambda r: r["speed"])
    return {
        "ranks": run["ranks"],
        "cases": len(speeds),
        "at_target": len(speeds) - len(below),
        "median": median(speeds),
        "worst": worst,
        "below": below,
    }


def markdown(runs) -> list:
    out = []
    for run in runs:
        t = _table(run)
        sizes = sorted({b for row in t.values() for b in row if row is not None and b > 0})
        s = summary(run)
        out.append(f"### {run['ranks']} ranks")
        out.append("")
        out.append(f"native time / hetcoll time (above 1: hetcoll faster), median of {run.get('reps', '?')} "
                   f"alternating measurements; **bold**: below {TARGET}. {s['at_target']} of {s['cases']} cases "
                   f"at or above {TARGET}, median {s['median']:.2f}.")
        out.append("")
        out.append("| collective | " + " | ".join(_size(b) for b in sizes) + " | hetcoll's choice |")
        out.append("|---|" + "---:|" * len(sizes) + "---|")
        for op, row in t.items():
            if op == "barrier":
                continue
            cells = []
            for b in sizes:
                r = row.get(b)
                if r is None:
                    cells.append("")
                    continue
                v = f"{r['speed']:.2f}"
                cells.append(f"**{v}**" if r["speed"] < TARGET else v)
            out.append(f"| {op} | " + " | ".join(cells) + f" | {_algorithms(row)} |")
        out.append("")
        if "barrier" in t:
            r = next(iter(t["barrier"].values()))
            out.append(f"barrier: {r['speed']:.2f} (`{r['algorithm']}`: {r['hetcoll_us']:.2f} µs, native "
                       f"{r['native_us']:.2f} µs).")
            out.append("")
    return out


def plot(runs, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.6), squeeze=False, sharey=True)
    for ax, run in zip(axes[0], runs):
        for op, row in _table(run).items():
            pts = [(b, r["speed"]) for b, r in row.items() if b > 0]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", ms=3, lw=1.2, label=op)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(TARGET, color="red", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("bytes per rank")
        ax.set_title(f"{run['ranks']} ranks (shared memory)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("native time / hetcoll time")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle("hetcoll vs native Open MPI collectives (above 1: hetcoll faster; dashed: 0.9)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(paths, markdown_path=None, png_path=None) -> list:
    runs = load(paths)
    md = markdown(runs)
    if markdown_path:
        with open(markdown_path, "w") as f:
            f.write("\n".join(md) + "\n")
    if png_path:
        plot(runs, png_path)
    lines = []
    for run in runs:
        s = summary(run)
        w = s["worst"]
        lines.append(f"{run['ranks']} ranks: {s['at_target']}/{s['cases']} cases at >= {TARGET}x native, "
                     f"median {s['median']:.2f}, worst {w['speed']:.2f} ({w['op']} {_size(w['bytes'])}, {w['algorithm']})")
    if not markdown_path:
        lines += md
    return lines

"""``hetcoll bench`` results in the OSU Micro-Benchmarks' text format, so
that scripts and plots written for OSU read them: one block per collective
and variant (hetcoll, native, or a forced algorithm), a ``#`` header naming
it, then a size column and latency columns in microseconds, as
``osu_allreduce -f`` prints them (Avg, Min, Max, Iterations: the mean,
smallest and largest of the repeats' times, and their number). The
``--overlap`` results take the columns of OSU's non-blocking benchmarks
(``osu_iallreduce``: Overall, Compute, Pure Comm., Overlap %).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from statistics import mean


def _mpi_name(op: str) -> str:
    return "MPI_" + op.capitalize()


def _blocks(rows):
    """OrderedDict (op, variant label) -> rows, in the file's order."""
    out = OrderedDict()
    for r in rows:
        label = r["variant"]
        if label not in ("hetcoll", "native"):
            label = f"forced {r.get('algorithm') or label}"
        out.setdefault((r["op"], label), []).append(r)
    return out


def osu_text(results: dict) -> str:
    """The OSU-format text of one ``hetcoll bench`` JSON result (a dict)."""
    rows = results.get("rows")
    if not isinstance(rows, list):
        raise ValueError("not hetcoll bench results (no 'rows')")
    ranks = results.get("ranks", "?")
    overlap = results.get("mode") == "overlap"
    lines = []
    for (op, label), rs in _blocks(rows).items():
        name = ("MPI_I" + op) if overlap else _mpi_name(op)
        lines.append(f"# hetcoll bench (OSU format): {name}, {label}, {ranks} ranks")
        if overlap:
            lines.append(f"# {'Size':<10}{'Overall(us)':>18}{'Compute(us)':>18}{'Pure Comm.(us)':>18}{'Overlap(%)':>18}")
            for r in sorted(rs, key=lambda r: r["bytes"]):
                lines.append(f"{r['bytes']:<12d}{r['overlapped_s'] * 1e6:18.2f}{r['compute_s'] * 1e6:18.2f}"
                             f"{r['call_s'] * 1e6:18.2f}{r['overlap'] * 100:18.2f}")
        else:
            lines.append(f"# {'Size':<10}{'Avg Latency(us)':>18}{'Min Latency(us)':>18}{'Max Latency(us)':>18}"
                         f"{'Iterations':>12}")
            for r in sorted(rs, key=lambda r: r["bytes"]):
                times = r.get("times_s") or [r["median_s"]]
                lines.append(f"{r['bytes']:<12d}{mean(times) * 1e6:18.2f}{min(times) * 1e6:18.2f}"
                             f"{max(times) * 1e6:18.2f}{len(times):12d}")
        lines.append("")
    return "\n".join(lines)


def osu_file_text(path: str) -> str:
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise ValueError(f"cannot read bench results from {path}: {e}") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path}: not hetcoll bench results")
    try:
        return osu_text(d)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not hetcoll bench results ({e})") from None

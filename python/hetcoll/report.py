"""``hetcoll report RESULTS… PROFILE -o DIR``: one self-contained HTML page
(every plot embedded, nothing fetched to view it) and the PNG plots beside it.

From ``hetcoll bench`` results (JSON) and the machine's profile
(``hetcoll probe``):

* time against size per collective: hetcoll's choice, the native MPI and
  every forced algorithm (measured medians, predictions dashed);
* predicted against measured for every row that has a prediction, with the
  median error;
* the probe's λ(m) (Bruck et al. §2.2, Fig. 3: a message's latency in units
  of the time its sender is busy, fitted from both experiments, against the
  message size);
* the pairwise one-way latency and bandwidth as heat maps, hosts in subnet
  order, the subnets the probe found outlined;
* the broadcast schedules the planner chooses on the profile, drawn with
  Graphviz (hosts grouped by subnet, each message an arrow numbered by the
  order it leaves its sender).
"""
from __future__ import annotations

import base64
import html
import json
import shutil
import statistics
import subprocess
from pathlib import Path

from . import _core
from . import profile as prof
from .profile import format_time


# A row's times (seconds): each null or a number in [0, a day] — not NaN,
# not infinite, not a time no collective takes.
_TIME_KEYS = ("min_s", "median_s", "predicted_s", "bound_s", "sync_median_s", "alone_median_s", "barrier_s")
_MAX_SECONDS = 86400.0


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _check_row(r: dict, path: str, i: int) -> None:
    if not isinstance(r, dict) or not {"op", "bytes", "variant"} <= set(r):
        raise ValueError(f"{path}: row {i} lacks op, bytes or variant")
    if not isinstance(r["bytes"], int) or isinstance(r["bytes"], bool) or r["bytes"] < 0:
        raise ValueError(f"{path}: row {i}: 'bytes' must be a whole number of bytes")
    times = [(k, r.get(k)) for k in _TIME_KEYS] + [(f"times_s[{j}]", t) for j, t in enumerate(r.get("times_s") or [])]
    for key, v in times:
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= _MAX_SECONDS:
            raise ValueError(f"{path}: row {i}: '{key}' = {v!r} is not a time from 0 to {_MAX_SECONDS:g} s")


def load_results(paths: list[str]) -> tuple[list[dict], list[dict]]:
    """(rows, metadata per file); rows carry their file's ranks and hosts."""
    rows, meta = [], []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f, parse_constant=_no_constant)
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: not a hetcoll bench result ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) or "ranks" not in doc:
            raise ValueError(f"{path}: not a hetcoll bench result (no 'rows' and 'ranks')")
        for i, r in enumerate(doc["rows"]):
            _check_row(r, str(path), i)
            rows.append(dict(r, ranks=doc["ranks"], source=str(path)))
        meta.append({k: doc.get(k) for k in ("tool", "created", "ranks", "hosts", "model", "procedure", "repeats",
                                              "note")} | {"path": str(path)})
    return rows, meta


# Where hetcoll-bench timed a call the barrier may hide (Fig. 2 below twice
# the barrier): from a synchronized start ("sync_median_s"); results written
# before it did so timed the call alone after a barrier ("alone_median_s").
_SECOND_TIMING = (("sync_median_s", "synchronized start"), ("alone_median_s", "alone"))


def _second(r: dict | None) -> tuple[float, str] | None:
    for key, name in _SECOND_TIMING:
        v = r.get(key) if r else None
        if v is not None and v > 0:
            return v, name
    return None


def measured(r: dict) -> float | None:
    """A row's time: Fig. 2's median, or — where the barrier after each call
    may hide part of it — the makespan from a synchronized start."""
    s = _second(r)
    if s:
        return s[0]
    t = r.get("median_s")
    return t if t is not None and t > 0 else None


def summary_rows(rows: list[dict]) -> list[dict]:
    """Per (op, bytes, ranks): hetcoll's and native's medians, the ratio
    (native / hetcoll, above 1: hetcoll faster), hetcoll's algorithm and
    prediction."""
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["bytes"], r["ranks"]), {})[r["variant"]] = r
    out = []
    for (op, b, n), v in sorted(by.items(), key=lambda x: (_OP_ORDER.get(x[0][0], 99), x[0][2], x[0][1])):
        h, nat = v.get("hetcoll"), v.get("native")
        if not h or measured(h) is None:
            continue
        # One timing for both: Fig. 2 where it saw both calls, else both the second timing.
        sh, sn = _second(h), _second(nat)
        second = sh and (not nat or (sn and sn[1] == sh[1]))
        pick = (lambda r: _second(r)[0]) if second else (lambda r: r.get("median_s"))
        row = {"op": op, "bytes": b, "ranks": n, "algorithm": h.get("algorithm", ""), "hetcoll_s": pick(h),
               "predicted_s": h.get("predicted_s"), "bound_s": h.get("bound_s"),
               "native_s": pick(nat) if nat else None,
               "timing": sh[1] if second else "Fig. 2"}
        if h.get("timed_as") == "native":  # hetcoll decided native: its call is PMPI's, timed once
            row["timing"] += ", native's call"
        if not row["hetcoll_s"]:
            continue
        # The spread of the repeats (Fig. 2's times) where the row is Fig. 2's median.
        for name, r in (("hetcoll", h), ("native", nat)):
            ts = [t for t in (r or {}).get("times_s") or [] if t and t > 0] if not second else []
            row[f"{name}_min_s"], row[f"{name}_max_s"] = (min(ts), max(ts)) if ts else (None, None)
        row["ratio"] = row["native_s"] / row["hetcoll_s"] if row["native_s"] and row["hetcoll_s"] > 0 else None
        row["error"] = (row["predicted_s"] / row["hetcoll_s"] - 1) if row["predicted_s"] and row["hetcoll_s"] > 0 else None
        # Measured time over the physical bound on the profile (docs/bound.md).
        row["x_bound"] = row["hetcoll_s"] / row["bound_s"] if row["bound_s"] else None
        out.append(row)
    return out


_OP_ORDER = {name: i for i, name in enumerate(_core.collective_ops())}  # include/hetcoll_collectives.def's order


def _size(b: int) -> str:
    return _core.format_bytes(b)  # one writing of sizes (src/model/units.cpp)


# ------------------------------------------------------------------ figures

def _pyplot():
    from .plots import _pyplot as p
    return p()


def plot_time_vs_size(rows: list[dict], path: Path) -> bool:
    ops = sorted({r["op"] for r in rows if r["op"] != "barrier"}, key=lambda o: _OP_ORDER.get(o, 99))
    if not ops:
        return False
    plt = _pyplot()
    cols = min(3, len(ops))
    nrows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, op in zip([a for row in axes for a in row], ops):
        mine = [dict(r, t=measured(r)) for r in rows if r["op"] == op and measured(r) is not None]
        variants = sorted({r["variant"] for r in mine}, key=lambda v: (v != "hetcoll", v != "native", v))
        for v in variants:
            pts = sorted((r["bytes"], r["t"]) for r in mine if r["variant"] == v)
            if not pts:
                continue
            style = {"hetcoll": dict(color="tab:blue", lw=2.2, marker="o"),
                     "native": dict(color="tab:red", lw=2.2, marker="s")}.get(v, dict(lw=1, marker=".", alpha=0.8))
            ax.plot([max(b, 1) for b, _ in pts], [t * 1e6 for _, t in pts], label=v, **style)
            if v in ("hetcoll", "native"):  # the spread of the repeats: least to largest
                band = sorted((r["bytes"], min(r["times_s"]), max(r["times_s"])) for r in mine
                              if r["variant"] == v and r.get("times_s") and _second(r) is None)
                if band:
                    ax.fill_between([max(b, 1) for b, _, _ in band], [lo * 1e6 for _, lo, _ in band],
                                    [hi * 1e6 for _, _, hi in band], color=style["color"], alpha=0.15, lw=0)
        pred = sorted((r["bytes"], r["predicted_s"]) for r in mine if r["variant"] == "hetcoll" and r.get("predicted_s"))
        if pred:
            ax.plot([max(b, 1) for b, _ in pred], [t * 1e6 for _, t in pred], "--", color="tab:blue", lw=1,
                    label="hetcoll predicted")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("time (µs)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in [a for row in axes for a in row][len(ops):]:
        ax.axis("off")
    fig.suptitle("time against message size (median of repeats, slowest rank; shaded: least to largest repeat)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_predicted_vs_measured(rows: list[dict], path: Path) -> float | None:
    pts = [(measured(r), r["predicted_s"], r["variant"]) for r in rows if measured(r) and r.get("predicted_s")]
    if not pts:
        return None
    errors = [abs(p / m - 1) for m, p, _ in pts]
    med = statistics.median(errors)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5.5))
    for v, color in (("hetcoll", "tab:blue"), ("other", "tab:gray")):
        sel = [(m, p) for m, p, var in pts if (var == "hetcoll") == (v == "hetcoll")]
        if sel:
            ax.scatter([m * 1e6 for m, _ in sel], [p * 1e6 for _, p in sel], s=14, color=color,
                       label="hetcoll's choice" if v == "hetcoll" else "forced algorithms")
    lo = min(min(m, p) for m, p, _ in pts) * 1e6 * 0.7
    hi = max(max(m, p) for m, p, _ in pts) * 1e6 * 1.4
    ax.plot([lo, hi], [lo, hi], color="black", lw=1)
    ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="tab:green", alpha=0.12,
                    label="±15 %")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (µs)")
    ax.set_ylabel("predicted (µs)")
    ax.set_title(f"predicted against measured: median error {100 * med:.1f} % ({len(pts)} rows)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return med


def postal_applies(p: dict) -> bool:
    """The profile's own verdict (profile.lambda_lines): Bruck's λ means
    something only where both experiments fitted λ >= 1 at some size."""
    return any(l.get("fit1") and l.get("fit2") and l["fit1"]["lambda"] >= 1 and l["fit2"]["lambda"] >= 1
               for l in p.get("lambda", []))


def plot_speedup(summ: list[dict], path: Path) -> bool:
    """native ÷ hetcoll against size, one line per collective."""
    ops = [op for op in dict.fromkeys(s["op"] for s in summ) if any(s["ratio"] for s in summ if s["op"] == op)]
    if not ops:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for op in ops:
        pts = sorted((max(s["bytes"], 1), s["ratio"]) for s in summ if s["op"] == op and s["ratio"])
        ax.plot([b for b, _ in pts], [r for _, r in pts], marker="o", label=op)
    ax.axhline(1, color="gray", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("native time ÷ hetcoll time")
    ax.set_title("speedup against size (above 1: hetcoll faster)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_lambda(p: dict, path: Path) -> bool:
    pts = [l for l in p.get("lambda", []) if l.get("fit1") and l.get("fit2")]
    if not postal_applies(p):
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for sends, marker in (("blocking", "o"), ("nonblocking", "s")):
        # λ below 0 is a fit the noise defeated (the profile says so too): not drawn on a log scale.
        sel = sorted((l["bytes"], l["fit1"]["lambda"], l["fit2"]["lambda"]) for l in pts
                     if l.get("sends") == sends and l["fit1"]["lambda"] >= 1 and l["fit2"]["lambda"] >= 1)
        if not sel:
            continue
        ax.plot([b for b, _, _ in sel], [a for _, a, _ in sel], marker=marker, label=f"experiment 1, {sends} sends")
        ax.plot([b for b, _, _ in sel], [c for _, _, c in sel], marker=marker, ls="--",
                label=f"experiment 2, {sends} sends")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.axhline(1, color="gray", lw=0.8)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("λ")
    ax.set_title("λ(m) as the probe fitted it (Bruck et al. §2.2, Fig. 3)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_network(p: dict, path: Path) -> bool:
    pairs = p.get("pairs") or {}
    hosts = p["hosts"]
    n = len(hosts)
    if n < 2 or not pairs.get("small_min") or not pairs.get("large_min"):
        return False
    order = sorted(range(n), key=lambda h: (hosts[h]["subnet"], h))
    small = pairs["small_min"]
    large = pairs["large_min"]
    big = p["measured"].get("large_bytes", 1 << 20)
    lat = [[small[a * n + b] * 1e6 if a != b else float("nan") for b in order] for a in order]
    bw = [[(big / (large[a * n + b] - small[a * n + b]) / 1e6) if a != b and large[a * n + b] > small[a * n + b]
           else float("nan") for b in order] for a in order]
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4))
    names = [hosts[h]["name"] for h in order]
    for ax, data, title, cmap in ((axes[0], lat, "one-way latency of a small message (µs)", "viridis"),
                                  (axes[1], bw, "bandwidth of a large message (MB/s)", "magma")):
        im = ax.imshow(data, cmap=cmap)
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels(names, rotation=90, fontsize=7)
        ax.set_yticklabels(names, fontsize=7)
        ax.set_xlabel("receiver")
        ax.set_ylabel("sender")
        ax.set_title(title, fontsize=10)
        start = 0
        for s in sorted({hosts[h]["subnet"] for h in order}):
            k = sum(1 for h in order if hosts[h]["subnet"] == s)
            ax.add_patch(Rectangle((start - 0.5, start - 0.5), k, k, fill=False, edgecolor="white", lw=2.2))
            ax.add_patch(Rectangle((start - 0.5, start - 0.5), k, k, fill=False, edgecolor="black", lw=0.8, ls="--"))
            start += k
    sub = p.get("subnets", {})
    fig.suptitle(f"pairwise network, {sub.get('count', 1)} subnets found (threshold {sub.get('threshold', 0.2):g}, "
                 f"gap {sub.get('gap', 0):.3g}×): outlined")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def drawn_algorithm(summ: list[dict], p: dict, profile_path: str, op: str, nbytes: int) -> tuple[str, str]:
    """(algorithm, whence): what the report draws for `op` of `nbytes` on the
    profile's ranks — the algorithm the bench says ran for that call, else
    the MPI layer's decision for it (the same decision point: overrides none,
    the profile's measured decisions, then the model)."""
    ranks = int(p["measured"]["ranks"])
    for r in summ:
        if r["op"] == op and r["bytes"] == nbytes and r["ranks"] == ranks and r["algorithm"]:
            return r["algorithm"], "ran"
    model = _core.group_model(_core.parse_model(f"profile:{profile_path}"), [], ranks)
    elem = 8 if nbytes % 8 == 0 and nbytes else 1
    d = _core.decide(_core.collective(op, ranks, max(nbytes // elem, 1), elem_size=elem), model)
    return ("native" if d["native"] else d["algorithm"]), "decided"


def draw_schedule(p: dict, profile_path: str, op: str, nbytes: int, path: Path, algorithm: str) -> str | None:
    """`algorithm` for `op` on the profile's ranks, its messages drawn with
    Graphviz; returns the caption, None without Graphviz."""
    dot = shutil.which("dot")
    if not dot:
        return None
    ranks = int(p["measured"]["ranks"])
    # The ranks laid out on the hosts as the probe's job was.
    model = _core.group_model(_core.parse_model(f"profile:{profile_path}"), [], ranks)
    elem = 8 if nbytes % 8 == 0 and nbytes else 1
    coll = _core.collective(op, ranks, max(nbytes // elem, 1), elem_size=elem)
    sched = _core.generate(algorithm, coll, model)
    best = {"algorithm": sched.algorithm, "predicted": sched.simulate(model, False).makespan}
    msgs = sched.messages()
    host_of = {}
    for h in p["hosts"]:
        for r in h["ranks"]:
            host_of[r] = h
    subnets = sorted({h["subnet"] for h in p["hosts"]})
    palette = ["#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc", "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"]
    lines = ["digraph schedule {", "  rankdir=LR; node [shape=box, style=filled, fontsize=10];",
             f'  label="{op} {_size(nbytes)} on {ranks} ranks: {best["algorithm"]}, predicted '
             f'{format_time(best["predicted"])}"; labelloc=t; fontsize=12;']
    for s in subnets:
        lines.append(f'  subgraph cluster_{s} {{ label="subnet {s}"; style=rounded; color=gray;')
        for r in range(ranks):
            h = host_of.get(r)
            if h and h["subnet"] == s:
                lines.append(f'    r{r} [label="{r}\\n{h["name"]}", fillcolor="{palette[s % len(palette)]}"];')
        lines.append("  }")
    seen = {}
    order = {}
    for src, sop, dst, _, nb in msgs:
        order.setdefault(src, []).append((sop, dst, nb))
    for src, lst in order.items():
        for k, (_, dst, nb) in enumerate(sorted(lst)):
            key = (src, dst)
            if key in seen:
                seen[key][1] += 1
                continue
            seen[key] = [k + 1, 1, nb]
    for (src, dst), (first, count, nb) in seen.items():
        label = f"{first}" + (f" ×{count}" if count > 1 else "")
        lines.append(f'  r{src} -> r{dst} [label="{label}", fontsize=8];')
    lines.append("}")
    if len(seen) > 400:
        return None  # unreadable
    r = subprocess.run([dot, "-Tpng", "-Gdpi=80", "-o", str(path)], input="\n".join(lines), text=True,
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        return None
    return (f"{op} of {_size(nbytes)}: {best['algorithm']} ({len(msgs)} messages; arrows numbered by the order "
            f"they leave their sender, ×k: k messages on that pair)")


# ------------------------------------------------------------------ page

_CSS = """
body { font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
td.win { background: #e3f4e3; } td.lose { background: #fbe3e3; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
.meta { font-size: 0.85em; color: #555; }
.wide { overflow-x: auto; max-width: 100%; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.8em; background: #fafafa; padding: 0.5em; }
nav ol { columns: 2; font-size: 0.9em; } code { background: #f3f3f3; padding: 0 3px; overflow-wrap: anywhere; }
"""


def _anchor(heading: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in heading.lower()).strip("-") or "section"


def _spread(s: dict, who: str) -> str:
    lo, hi = s.get(f"{who}_min_s"), s.get(f"{who}_max_s")
    return f"{format_time(lo)}–{format_time(hi)}" if lo and hi else "-"


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def build(results: list[str], profile_path: str, out_dir: str, title: str | None = None) -> Path:
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"-o {out_dir}: a file is there; the report is a directory (index.html and its figures)")
    rows, meta = load_results(results)  # everything read and checked before anything is written
    p = prof.load(profile_path)
    out.mkdir(parents=True, exist_ok=True)
    figs: list[tuple[str, Path, str]] = []
    f = out / "time_vs_size.png"
    if plot_time_vs_size(rows, f):
        figs.append(("Time against size", f, "Median of the repeats, slowest rank, barrier subtracted (Banikazemi "
                     "Fig. 2; where the barrier may hide part of the call, from a synchronized start); dashed: hetcoll's prediction "
                     "for the schedule it ran."))
    f = out / "predicted_vs_measured.png"
    med = plot_predicted_vs_measured(rows, f)
    if med is not None:
        figs.append(("Predicted against measured", f, f"Median error {100 * med:.1f} %; the band is ±15 %."))
    summ = summary_rows(rows)
    f = out / "speedup.png"
    if plot_speedup(summ, f):
        figs.append(("Speedup against size", f, "Native time ÷ hetcoll time per collective and size, from the "
                     "table's medians; above the line hetcoll is faster."))
    f = out / "lambda.png"
    lambda_note = None
    if plot_lambda(p, f):
        figs.append(("λ(m)", f, "Bruck's λ as the probe fitted it from both experiments, by message size, where "
                     "both fits are at least 1 (the postal model applies there)."))
    elif p.get("lambda"):
        lambda_note = ("λ(m) is not drawn: the probe's fits are below 1 at every size, so the postal model does not "
                       "describe this network (the profile says so); hetcoll plans on its per-host and per-class "
                       "costs and topology instead.")
    f = out / "network.png"
    if plot_network(p, f):
        figs.append(("The network the probe measured", f, "Hosts in subnet order; the subnets found are outlined."))
    for op, nbytes in (("bcast", 1024), ("bcast", 1 << 20), ("allreduce", 1 << 20)):
        f = out / f"schedule_{op}_{nbytes}.png"
        try:
            algorithm, whence = drawn_algorithm(summ, p, profile_path, op, nbytes)
            cap = None
            if algorithm == "native":
                print(f"hetcoll report: no drawing of {op} {nbytes} B: the native MPI's collective {whence}")
            else:
                cap = draw_schedule(p, profile_path, op, nbytes, f, algorithm)
        except (RuntimeError, ValueError) as e:  # e.g. a profile of one rank
            cap = None
            print(f"hetcoll report: no drawing of {op} {nbytes} B: {e}")
        if cap:
            heading = f"The {op} that ran at {_size(nbytes)}" if whence == "ran" else \
                f"hetcoll's {op} at {_size(nbytes)} (decided; the bench did not run it)"
            figs.append((heading, f, cap))
    ratios = [s["ratio"] for s in summ if s["ratio"]]
    errs = [abs(s["error"]) for s in summ if s["error"] is not None]
    # The data beside the page, linked: the results (and their CSV), the profile.
    data = out / "data"
    data.mkdir(exist_ok=True)
    links = []
    for src in [*results, profile_path]:
        for f in [Path(src)] + ([Path(src).with_suffix(".csv")] if Path(src).with_suffix(".csv").exists() else []):
            dst = data / f.name
            if f.resolve() != dst.resolve():
                shutil.copyfile(f, dst)
            links.append(f"<a href='data/{html.escape(f.name)}'>{html.escape(f.name)}</a>")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title or 'hetcoll report')}"
             f"</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title or 'hetcoll: measured against native MPI and against its own predictions')}</h1>"]
    headings = ["What ran", "Use it", "Every measurement", *[h for h, _, _ in figs], "The profile"]
    parts.append("<nav><ol>" + "".join(f"<li><a href='#{_anchor(h)}'>{html.escape(h)}</a></li>" for h in headings)
                 + "</ol></nav>")
    hosts = p["hosts"]
    parts.append(f"<h2 id='{_anchor('What ran')}'>What ran</h2><p class='meta'>" + "<br>".join(html.escape(x) for x in [
        f"MPI: {p['measured'].get('mpi', 'not recorded')}",
        "native: the MPI library's own collectives, as its tuning chose them (Open MPI 4.1 and MPICH 4.0 do not "
        "report which algorithm they ran; hetcoll export can pin one); transport: the library's own (shared memory "
        "within a host, the network between hosts: the profile's pair classes)",
        f"profile: {profile_path} — {len(hosts)} hosts, {p['subnets']['count']} subnets, "
        f"{p['measured']['ranks']} ranks, measured {p['measured']['created']} by {p['measured']['tool']}",
        *[f"results: {m['path']} — {m.get('ranks')} ranks, {m.get('repeats')} repeats, {m.get('created')}, "
          f"{m.get('tool')}" + (f" ({m['note']})" if m.get("note") else "") for m in meta],
        (meta[0].get("procedure") or "") if meta else ""]) + "<br>data: " + ", ".join(links) + "</p>")
    prof_abs = html.escape(str(Path(profile_path).resolve()))
    parts.append(f"<h2 id='{_anchor('Use it')}'>Use it</h2><p><code>export HETCOLL_PROFILE={prof_abs}</code> "
                 "and run the program with <code>LD_PRELOAD=$(hetcoll lib)</code> (Open MPI: <code>mpirun -x "
                 "LD_PRELOAD -x HETCOLL_PROFILE …</code>); without preloading, <code>hetcoll export --format "
                 f"ompi-rules -m {prof_abs} -o rules</code> gives the MPI the same decisions.</p>")
    if ratios:
        won = sum(1 for r in ratios if r >= 1.0)
        parts.append(f"<p><b>{len(ratios)} measurements</b>: hetcoll/native median ratio "
                     f"<b>{statistics.median(ratios):.2f}×</b> (native ÷ hetcoll; above 1: hetcoll faster), "
                     f"{won} at or above 1.0×, lowest {min(ratios):.2f}×, highest {max(ratios):.2f}×"
                     + (f"; prediction error median <b>{100 * statistics.median(errs):.1f} %</b>" if errs else "")
                     + ".</p>")
    parts.append(f"<h2 id='{_anchor('Every measurement')}'>Every measurement</h2><div class='wide'><table><tr>"
                 "<th class='l'>collective</th><th>bytes</th><th>ranks</th>"
                 "<th class='l'>hetcoll's algorithm</th><th>hetcoll</th><th>spread</th><th>predicted</th><th>error</th>"
                 "<th>native</th><th>spread</th><th>native ÷ hetcoll</th><th>bound</th><th>× bound</th>"
                 "<th class='l'>timing</th></tr>")
    for s in summ:
        cls = "" if s["ratio"] is None else " class='win'" if s["ratio"] >= 1.0 else " class='lose'"
        err = "-" if s["error"] is None else f"{100 * s['error']:+.0f} %"
        ratio = "-" if s["ratio"] is None else f"{s['ratio']:.2f}×"
        pred = format_time(s["predicted_s"]) if s["predicted_s"] else "-"
        nat = format_time(s["native_s"]) if s["native_s"] else "-"
        lb = format_time(s["bound_s"]) if s.get("bound_s") else "-"
        xb = f"{s['x_bound']:.2f}×" if s.get("x_bound") else "-"
        parts.append(
            f"<tr><td class='l'>{s['op']}</td><td>{_size(s['bytes'])}</td><td>{s['ranks']}</td>"
            f"<td class='l'>{html.escape(s['algorithm'])}</td><td>{format_time(s['hetcoll_s'])}</td>"
            f"<td>{_spread(s, 'hetcoll')}</td><td>{pred}</td><td>{err}</td><td>{nat}</td><td>{_spread(s, 'native')}</td>"
            f"<td{cls}>{ratio}</td><td>{lb}</td><td>{xb}</td><td class='l'>{s['timing']}</td></tr>")
    parts.append("</table></div><p class='meta'>spread: the least and the largest of the repeats' times (Fig. 2 "
                 "rows); bound: the least time any schedule can take on the profile (docs/bound.md).</p>")
    for heading, path, caption in figs:
        parts.append(f"<h2 id='{_anchor(heading)}'>{html.escape(heading)}</h2><figure>{_img(path, heading)}"
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    if lambda_note:
        parts.append(f"<p class='meta'>{html.escape(lambda_note)}</p>")
    parts.append(f"<h2 id='{_anchor('The profile')}'>The profile</h2><pre>"
                 + html.escape("\n".join(prof.show_lines(p))) + "</pre>")
    # A browser check (tests/python/test_report.py): the page's width against the window's.
    parts.append("<script>window.addEventListener('load', function () { document.body.setAttribute("
                 "'data-overflow', String(document.documentElement.scrollWidth - window.innerWidth)); });</script>")
    # A browser check (tests/python/test_report.py): after loading, the body
    # says how many images decoded to a picture.
    parts.append("<script>window.addEventListener('load', function () { var im = document.images, ok = 0;"
                 " for (var i = 0; i < im.length; i++) if (im[i].complete && im[i].naturalWidth > 0) ok++;"
                 " document.body.setAttribute('data-images', ok + '/' + im.length); });</script>")
    parts.append("</body></html>")
    page = out / "index.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    (out / "summary.json").write_text(json.dumps({"rows": summ, "figures": [str(f.name) for _, f, _ in figs],
                                                  "median_ratio": statistics.median(ratios) if ratios else None,
                                                  "median_error": statistics.median(errs) if errs else None},
                                                 indent=1))
    return page

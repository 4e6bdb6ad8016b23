"""The planner's cost table (``hetcoll plan --explain``): every candidate,
sorted, with its latency, bandwidth and compute terms — InterCom's Table 2
for any collective."""
from __future__ import annotations

from . import _core
from .render import format_time


def _hockney_params(model):
    """(alpha, beta, gamma) of a Hockney model, else None."""
    if model.kind != "hockney":
        return None
    a, _, _ = model.message(0, 1, 0)
    ab, _, _ = model.message(0, 1, 1 << 20)
    return a, (ab - a) / (1 << 20), model.reduce_time(0, 1 << 20) / (1 << 20)


def bound_text(b, unit) -> str:
    """The physical bound (model/bound.hpp) and the constraint that binds it, one line."""
    if not b["bound"]:
        return "0 (nothing must move)"
    what = b["cut"]
    if b["capacity"]:
        what += (f": {_core.format_bytes(int(b['bytes']))} at {format_rate(b['capacity'], unit)}"
                 + (f" + {format_time(b['overheads'], unit)} of overheads" if b["overheads"] else ""))
    return f"{format_time(b['bound'], unit)}   ({what})"


def format_rate(bytes_per_unit: float, unit: str) -> str:
    if unit != "s":
        return f"{bytes_per_unit:.4g} B/{unit}"
    for scale, name in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if bytes_per_unit >= scale:
            return f"{bytes_per_unit / scale:.4g} {name}"
    return f"{bytes_per_unit:.4g} B/s"


def times_bound(t, b) -> str:
    """t as a multiple of the bound: '1.23×', or '-' where the bound is 0."""
    return f"{t / b['bound']:.2f}×" if b and b["bound"] > 0 else "-"


def explain_rows(candidates, model, n_bytes, bound=None):
    """Rows of strings: rank, algorithm, predicted, × bound, latency, bandwidth, compute, messages, how."""
    unit = model.unit
    hp = _hockney_params(model)
    rows = []
    for i, c in enumerate(candidates, 1):
        if hp and "alpha_terms" in c:
            lat = f"{c['alpha_terms']:.4g}α"
            bw = f"{c['beta_bytes'] / n_bytes:.4g}nβ" if n_bytes else f"{c['beta_bytes']:.4g}β"
            cp = f"{c['gamma_bytes'] / n_bytes:.4g}nγ" if n_bytes else f"{c['gamma_bytes']:.4g}γ"
            if not c["gamma_bytes"]:
                cp = "0"
        else:
            lat, bw, cp = (format_time(c[k], unit) for k in ("latency", "bandwidth", "compute"))
        rows.append([str(i), c["algorithm"], format_time(c["predicted"], unit), times_bound(c["predicted"], bound),
                     lat, bw, cp,
                     str(c["messages"]) if 0 < c["messages"] < 1 << 63 else "-", how(c)])
    return rows


def format_table(header, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    for r in rows:
        out.append("  ".join(v.ljust(w) if j == 1 else v.rjust(w) for j, (v, w) in enumerate(zip(r, widths))))
    return out


def how(c):
    """How a candidate was priced (the explain table's last column)."""
    if c["closed_form"]:
        return "closed form"
    if c.get("from_parts"):
        scale = c.get("parts_scale", 1)
        return f"phases ×{scale:.2f}" if scale > 1 else "phases simulated"
    if c.get("holds"):
        return "rounds"
    if c.get("estimated"):
        return "estimated"
    return "simulated"


HOW = ("how: simulated = the schedule run on the model; closed form = the paper's exact formula; "
       "rounds = not simulated, its rounds priced on the model itself, links shared (or a postal tree's exact formula); "
       "phases simulated = a composite priced by its phases (×k: scaled by how much slower a setting with the same parameters and "
       "as many messages or fewer simulated than its phases' price); "
       "estimated = a rough α-β price, ranked after every candidate priced otherwise")


def explain_lines(candidates, model, n_bytes, unpriced=(), bound=None):
    hp = _hockney_params(model)
    lines = []
    if hp:
        a, b, g = hp
        lines.append(f"n = {n_bytes} bytes (one rank's message); α = {format_time(a, 's')}, "
                     f"β = {b * 1e9:.4g} ns/byte, γ = {g * 1e9:.4g} ns/byte; terms along the critical path")
    else:
        lines.append("latency = size-independent part, bandwidth = the rest of the message costs, "
                     "compute = combining and copying, along the critical path")
    header = ["#", "algorithm", "predicted", "× bound", "latency", "bandwidth", "compute", "messages", "how"]
    lines += format_table(header, explain_rows(candidates, model, n_bytes, bound))
    lines.append(HOW)
    if unpriced:
        lines.append("not weighed (no price: too large to simulate within the decision and no estimate, "
                     "or not fitting this call): " + ", ".join(unpriced))
    return lines

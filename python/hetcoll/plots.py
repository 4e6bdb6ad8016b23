"""Figures (matplotlib, imported only when a plot is asked for)."""
from __future__ import annotations


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the installation
        raise ValueError("plots need matplotlib: pip install 'hetcoll[plots]'") from None
    return plt


def plot_alpha_ranges(lam, ranges, entries, sizes, path):
    """Left: legal alpha range per n (Bruck Figs. 6-7) with the look-up table's
    alpha(n); right: look-up table size needed for all n' <= n (Fig. 9)."""
    plt = _pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    ns = [r["n"] for r in ranges]
    ax.hlines(ns, [r["alpha_lo"] for r in ranges], [r["alpha_hi"] for r in ranges], color="tab:green", lw=1)
    tops = [r for r in ranges if r["tight"]]
    ax.plot([0.5 * (r["alpha_lo"] + r["alpha_hi"]) for r in tops], [r["n"] for r in tops], "v", color="tab:red",
            ms=4, label="triangle tops (n = N(t))")
    xs, ys = [], []
    for a, b, al in entries:
        xs += [al, al]
        ys += [a, b]
    ax.plot(xs, ys, color="black", lw=1.5, label="look-up table alpha(n)")
    ax.set_xlim(0.45, 1.0)
    ax.set_xlabel("alpha")
    ax.set_ylabel("n")
    ax.set_title(f"legal alpha ranges, lambda = {lam:g}")
    ax.legend(loc="lower right", fontsize=8)
    bx.step(range(2, 2 + len(sizes)), sizes, where="post")
    bx.set_xlabel("n")
    bx.set_ylabel("table entries for all n' <= n")
    bx.set_title("look-up table size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

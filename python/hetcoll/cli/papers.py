"""hetcoll --help's "reproduce the papers": predict, whatif (Banikazemi et
al.), tables, alpha-range (Bruck et al.), demo (a tour)."""
from __future__ import annotations

from .. import _core
from .common import (MAX_RANKS, CliError, Command, Group, _emit_json, _int_in, _int_list, _real_in, _size_list,
                     parse_size)


def cmd_predict(args) -> int:
    from ..whatif import WhatIfError, predict_lines, predict_rows
    model = args.model
    if not model:
        raise CliError("predict needs the machine: -m PROFILE or -m SPEC")
    try:
        rec = predict_rows(args.op, model, args.ranks, args.root, args.bytes, args.tree)
    except WhatIfError as e:
        raise CliError(str(e)) from None
    if args.json:
        _emit_json(rec)
    else:
        print("\n".join(predict_lines(rec)))
    return 0


def cmd_whatif(args) -> int:
    from ..whatif import WhatIfError, whatif_lines, whatif_plot, whatif_rows
    fast = args.fast or list(range(1, args.ranks + 1))
    try:
        rec = whatif_rows(args.op, args.ranks, fast, args.bytes, args.algorithm, args.profile)
    except WhatIfError as e:
        raise CliError(str(e)) from None
    if args.png:
        whatif_plot(rec, args.png)
        rec["png"] = args.png
    if args.json:
        _emit_json(rec)
    else:
        print("\n".join(whatif_lines(rec)))
        if args.png:
            print(f"plot: {args.png}")
    return 0


def cmd_tables(args) -> int:
    gamma = {lam: _core.postal.gamma(lam) for lam in range(1, 11)}
    be = {k: _core.postal.break_even(k) for k in range(1, 10)}
    if args.json:
        _emit_json({"gamma": {str(k): v for k, v in gamma.items()},
                    "break_even": {str(k): v for k, v in be.items()}})
        return 0
    print("Table 1. gamma(lambda): asymptotic growth rate of N_lambda (root of x^l = x^(l-1) + 1)")
    print("  lambda " + "".join(f"{k:>7d}" for k in gamma))
    print("  gamma  " + "".join(f"{v:>7.3f}" for v in gamma.values()))
    print()
    print("Table 2. break-even lambda for floor(lambda) = k: below it delay-send beats delay-receive")
    print("  k      " + "".join(f"{k:>7d}" for k in be))
    print("  lambda " + "".join(f"{v:>7.3f}" for v in be.values()))
    return 0


def cmd_alpha_range(args) -> int:
    if not args.max_n >= 2:
        raise CliError(f"--max-n must be at least 2, got {args.max_n}")
    ranges = _core.postal.alpha_ranges(args.lam, args.max_n)
    entries, sizes = _core.postal.alpha_table(args.lam, args.max_n)
    if args.png:
        from ..plots import plot_alpha_ranges

        plot_alpha_ranges(args.lam, ranges, entries, sizes, args.png)
    if args.json:
        _emit_json({"lambda": args.lam, "max_n": args.max_n, "ranges": ranges,
                    "table": [{"n_from": a, "n_to": b, "alpha": al} for a, b, al in entries],
                    "table_size": {str(n): s for n, s in zip(range(2, args.max_n + 1), sizes)}})
        return 0
    print(f"legal alpha ranges for lambda = {args.lam:g} (optimal first split n' = min(round(alpha n), n-1))")
    print(f"{'n':>6} {'T(n)':>8} {'n_min':>6} {'n_max':>6}   alpha range")
    for r in ranges:
        if args.all or r["tight"] or r["n"] <= 32:
            mark = "  top" if r["tight"] else ""
            print(f"{r['n']:>6} {r['t']:>8.4g} {r['n_min']:>6} {r['n_max']:>6}   "
                  f"[{r['alpha_lo']:.4f}, {r['alpha_hi']:.4f}){mark}")
    if not args.all:
        print("  (rows shown: n <= 32 and triangle tops; --all for every n)")
    print(f"look-up table for n <= {args.max_n}: {len(entries)} entries")
    for a, b, al in entries:
        print(f"  n in [{a}, {b}]: alpha = {al:.5f}")
    return 0


def cmd_demo(args) -> int:
    from ..demo import run_demo

    if not args.json:
        return run_demo(args.out)
    import contextlib
    import io
    from pathlib import Path

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = run_demo(args.out)
    out = Path(args.out)
    files = sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file()) if out.is_dir() else []
    _emit_json({"out": args.out, "files": files, "text": buf.getvalue(), "status": rc})
    return rc


def _predict_args(p) -> None:
    p.add_argument("op", choices=["bcast", "scatter", "gather"])
    p.add_argument("--model", "-m", "--profile", dest="model",
                   help="the machine: a profile written by 'hetcoll probe', or any model spec (hetero:nodes=FFSS …)")
    p.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, 4096, "--ranks"),
                   help="ranks (default: the profile's hosts)")
    p.add_argument("--root", type=_int_in(0, MAX_RANKS - 1, "--root"), default=0)
    p.add_argument("--bytes", "-b", type=_size_list, default=[8, 1024, 65536, 1048576],
                   help="message (scatter, gather: block) sizes, comma-separated (default 8,1k,64k,1M)")
    p.add_argument("--tree", default="binomial", help="bcast: binomial, star, chain, kary:K, knomial:K")
    p.add_argument("--json", action="store_true")


def _whatif_args(p) -> None:
    p.add_argument("op", help="any collective")
    p.add_argument("--profile", "--model", "-m", dest="profile",
                   help="the machine: fast and slow nodes from this profile (default: Banikazemi's Table 1)")
    p.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(2, 1024, "--ranks"), default=8)
    p.add_argument("--fast", type=_int_list, help="numbers of fast nodes, e.g. 1,2,4,8 (default 1..ranks)")
    p.add_argument("--bytes", "-b", type=parse_size, default=4096, help="message (block) size, default 4k")
    p.add_argument("--algorithm", "-a", help="this algorithm instead of the planner's best")
    p.add_argument("--png", help="plot to this file")
    p.add_argument("--json", action="store_true")


def _tables_args(p) -> None:
    p.add_argument("--json", action="store_true", help="{'gamma': {lambda: gamma}, 'break_even': {k: lambda}}")


def _alpha_range_args(p) -> None:
    p.add_argument("--lambda", dest="lam", type=_real_in(1, _core.postal.MAX_LAMBDA, "--lambda"),
                   required=True, help="postal latency lambda >= 1")
    p.add_argument("--max-n", type=_int_in(2, 100_000, "--max-n"), default=250)
    p.add_argument("--all", action="store_true", help="print every n, not only triangle tops")
    p.add_argument("--png", metavar="FILE", help="plot the ranges (Figs. 6-7) and table sizes (Fig. 9)")
    p.add_argument("--json", action="store_true")


def _demo_args(p) -> None:
    p.add_argument("--out", default="results/demo", help="directory for the figures (default results/demo)")
    p.add_argument("--json", action="store_true", help="{out, files, text, status}: the tour's text and what it wrote")


GROUP = Group("reproduce the papers", (
    Command("predict", "Banikazemi's models (eqs. 6-12) beside the simulator, same tree, same model", cmd_predict,
            _predict_args),
    Command("whatif", "predicted time as the number of fast nodes varies (Banikazemi Fig. 8)", cmd_whatif,
            _whatif_args),
    Command("tables", "Bruck et al. Tables 1 and 2, computed", cmd_tables, _tables_args),
    Command("alpha-range", "legal alpha ranges per n and the look-up table (Bruck Figs. 6-9)", cmd_alpha_range,
            _alpha_range_args),
    Command("demo", "a short tour: tables, trees, plans, predictions", cmd_demo, _demo_args),
))

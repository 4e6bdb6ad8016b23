"""The main job (README): a short tour of what hetcoll does today.

Each step prints a heading, the command a user would type for it, and the
result; figures go to OUT. Later issues add steps (planning every collective,
running under MPI, measuring a machine)."""
from __future__ import annotations

import os
import time

from . import _core
from .render import format_time, tree_dot, tree_from_schedule, tree_lines


def _step(title: str, command: str) -> None:
    print()
    print(f"== {title}")
    print(f"   $ {command}")


def run_demo(out: str) -> int:
    os.makedirs(out, exist_ok=True)
    t_start = time.perf_counter()

    _step("The postal model's growth rates and break-even points (Bruck et al., Tables 1-2)", "hetcoll tables")
    print("   lambda   " + " ".join(f"{k:>6d}" for k in range(1, 11)))
    print("   gamma    " + " ".join(f"{_core.postal.gamma(k):6.3f}" for k in range(1, 11)))
    print("   floor    " + " ".join(f"{k:>6d}" for k in range(1, 10)))
    print("   break-even " + " ".join(f"{_core.postal.break_even(k):6.3f}" for k in range(1, 10)))

    _step("Binomial tree vs lambda-tree, n = 8, lambda = 2 (Figs. 1-2)",
          "hetcoll plan bcast --ranks 8 --model postal:lambda=2 --algorithm lambda_tree --png lambda_tree.png")
    model = _core.parse_model("postal:lambda=2")
    coll = _core.collective("bcast", 8, 8)
    for algo in ("binomial_tree", "lambda_tree"):
        s = _core.generate(algo, coll, model)
        sim = s.simulate(model)
        tree = tree_from_schedule(s, sim)
        print(f"   {algo}: finishes at {format_time(sim.makespan, sim.unit)} ({s.validate()['summary']})")
        for line in tree_lines(tree, sim.unit):
            print("      " + line)
        with open(os.path.join(out, f"{algo}.dot"), "w") as f:
            f.write(tree_dot(s, sim, tree))

    _step("The planner chooses from the registry by simulated time (lambda = 1.8, Delta's 512-byte lambda)",
          "hetcoll plan bcast --ranks 64 --model postal:lambda=1.8")
    model = _core.parse_model("postal:lambda=1.8")
    print(f"   {'ranks':>6} {'T_lambda(n)':>12}  candidates (predicted steps)")
    for n in (8, 64, 1000, 100000):
        cands = _core.plan(_core.collective("bcast", n, 64), model)
        row = ", ".join(f"{c['algorithm']} {c['predicted']:g}" for c in cands[:3])
        print(f"   {n:>6} {_core.postal.T(1.8, n):>12g}  {row}, ... ({len(cands)} candidates)")

    _step("Global combine for real lambda: delay-receive vs delay-send (§3)",
          "hetcoll plan allreduce --ranks 1000 --model postal:lambda=1.3")
    print(f"   {'lambda':>6} {'T_delay_receive':>16} {'T_delay_send':>13}  planner's choice")
    for lam in (1.3, 1.44, 1.6, 2.4, 2.6):
        m = _core.parse_model(f"postal:lambda={lam}")
        best = _core.decide(_core.collective("allreduce", 1000, 1, 0, 8), m)
        print(f"   {lam:>6g} {_core.postal.T_delay_receive(lam, 1000):>16.4g} {_core.postal.T_delay_send(lam, 1000):>13.4g}"
              f"  {best['algorithm']} -> {best['predicted']:.4g} (simulated, no forced idling)")

    _step("Legal alpha ranges and the look-up table (Figs. 6-9)",
          "hetcoll alpha-range --lambda 1.95 --max-n 250 --png alpha_range.png")
    entries, sizes = _core.postal.alpha_table(1.95, 250)
    print(f"   lambda = 1.95: a table of {len(entries)} entries makes alpha-partition optimal for all n <= 250:")
    for a, b, al in entries:
        print(f"      n in [{a}, {b}]: alpha = {al:.4f}")
    try:
        from .plots import plot_alpha_ranges

        plot_alpha_ranges(1.95, _core.postal.alpha_ranges(1.95, 250), entries, sizes,
                          os.path.join(out, "alpha_range_1.95.png"))
    except ValueError as e:
        print(f"   (figure skipped: {e})")

    _step("InterCom's hybrids, Table 2 (p = 30): every mesh and strategy, costed and sorted",
          "hetcoll plan bcast --ranks 30 --bytes 30k --model hockney:alpha=10us,beta=1ns --explain")
    from .explain import explain_lines

    hmodel = _core.parse_model("hockney:alpha=10us,beta=1ns")
    coll = _core.collective("bcast", 30, 30720)
    cands = _core.plan(coll, hmodel, True)
    lines = explain_lines(cands, hmodel, 30720)
    for line in lines[:12]:
        print("   " + line)
    print(f"   ... {len(cands) - 10} more rows; e.g. 2x3x5:SSMCC = 9α + 2.167nβ here, 9α + (160/30)nβ in the paper,")
    print("   whose β terms include its linear array's link conflicts (docs/algorithms.md, tests/algorithms/test_intercom.cpp)")

    _step("From latency- to bandwidth-optimal as the message grows (48 ranks, 2 us, 10 GB/s)",
          "hetcoll crossovers --model hockney:alpha=2us,beta=0.1ns,gamma=0.05ns --ranks 48")
    from .crossovers import crossover_lines, crossovers

    ref = _core.parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns")
    for line in crossover_lines([(op, crossovers(op, 48, ref)) for op in ("bcast", "reduce", "allreduce", "alltoall")], ref):
        print("   " + line)

    _step("Heterogeneous nodes (Banikazemi et al.): the same tree on fast and slow nodes",
          "hetcoll plan bcast --ranks 4 --bytes 1k --model hetero:nodes=FFSS --algorithm binomial_tree")
    for nodes in ("FFFF", "FFSS", "SSFF", "SSSS"):
        m = _core.parse_model(f"hetero:nodes={nodes}")
        s = _core.generate("binomial_tree", _core.collective("bcast", 4, 1024), m)
        print(f"   nodes {nodes}: {format_time(s.simulate(m).makespan, 's')}")

    print()
    print(f"demo finished in {time.perf_counter() - t_start:.1f} s; figures and Graphviz files in {out}/")
    return 0

"""The ``hetcoll`` command line.

Every subcommand has ``--help``; those that print results also take ``--json``
(a stable, documented shape that scripts can rely on). Bad input gives one
line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

from . import _core
from .crossovers import crossover_lines, crossovers
from .explain import bound_text, explain_lines, how as priced_how, times_bound
from .proof import PLAN_SECONDS, PROOF_OPS, PROOF_WORK, SAMPLE_SECONDS, sampled_proof
from .render import format_time, tree_lines, tree_dot, tree_from_schedule


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


class InternalError(Exception):
    """A bug in hetcoll (e.g. it built an invalid schedule): one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


# ------------------------------------------------------------------ helpers



MAX_BYTES = _core.MAX_BYTES
MAX_RANKS = _core.MAX_RANKS


def parse_size(text: str) -> int:
    """'4096', '64k', '1M' → bytes, in the one size grammar (the core's:
    src/model/units.hpp), at most MAX_BYTES."""
    try:
        b = _core.parse_bytes(text.strip())
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if b > MAX_BYTES:
        raise argparse.ArgumentTypeError(f"'{text}' is more than hetcoll plans for ({MAX_BYTES} bytes)")
    return b


def _int_in(lo: int, hi: int, what: str):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} '{text}' is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be at least {lo} and at most {hi}, got {v}")
        return v

    return parse


def _size_list(text: str) -> list[int]:
    """'8,1k,64k' → sizes in bytes (at most 64 of them)."""
    items = [t for t in text.split(",") if t.strip()]
    if not items or len(items) > 64:
        raise argparse.ArgumentTypeError(f"'{text}': give 1 to 64 sizes, comma-separated")
    return [parse_size(t) for t in items]


def _int_list(text: str) -> list[int]:
    """'1,2,4' → integers (at most 1024 of them)."""
    items = [t for t in text.split(",") if t.strip()]
    if not items or len(items) > 1024:
        raise argparse.ArgumentTypeError(f"'{text}': give 1 to 1024 whole numbers, comma-separated")
    try:
        return [int(t, 10) for t in items]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers") from None


def _real_in(lo: float, hi: float, what: str):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} '{text}' is not a number") from None
        if not (math.isfinite(v) and lo <= v <= hi):
            raise argparse.ArgumentTypeError(f"{what} must be a number from {lo:g} to {hi:g}, got {text}")
        return v

    return parse


def _collective(args) -> "_core.Collective":
    if args.bytes % args.elem_size:
        raise CliError(f"--bytes {args.bytes} is not a multiple of --elem-size {args.elem_size}")
    if has_root(args.op) and not 0 <= args.root < args.ranks:
        raise CliError(f"--root {args.root} is not a rank of a group of {args.ranks}")
    return _core.collective(args.op, args.ranks, args.bytes // args.elem_size, args.root if has_root(args.op) else 0,
                            args.elem_size, getattr(args, "order_free", False))


def has_root(op: str) -> bool:
    return op in _core.rooted_ops()


# Schedules the command line builds in full (simulate, render) are bounded:
# past this many ops it refuses rather than exhaust memory.
MAX_CLI_OPS = 16_000_000


def _build(args, limit: int = MAX_CLI_OPS, sampled: bool = False):
    """(model, collective, schedule, candidates or None, forced-by text or None, decision or None).

    Without --algorithm the choice is the planner's decision — the same
    function the MPI layer calls for a real call (overrides, then the best
    candidate for the call's size class); the candidates shown are those the
    decision weighed. With --algorithm, that algorithm. With `sampled`, a
    schedule of more than `limit` ops is not built: schedule is then None
    (proof.sampled_proof checks it).
    """
    coll = _collective(args)
    # A profile describes hosts: the call's ranks laid out on them as the
    # probe's job was (what the MPI layer does without a rank map).
    model = _core.group_model(_core.parse_model(args.model), [], coll.nranks)
    explain = getattr(args, "explain", False)
    candidates = None
    decision = None
    algorithm = args.algorithm
    forced = "--algorithm" if algorithm else None
    if not algorithm:
        decision = _core.decide(coll, model, getattr(args, "override", None) or "")
        if decision["native"]:
            raise CliError(f"{decision['note']}: the MPI layer leaves this call to the native MPI")
        algorithm = decision["algorithm"]
        forced = "--override" if decision["forced"] else None
    if explain or (decision and not decision["forced"]):
        # The candidates the decision weighed; --explain plans again for the
        # critical-path split of each.
        candidates = decision.get("candidates") if decision and not explain else None
        if candidates is None:
            planned = _core.plan(decision["representative"] if decision else coll, model, explain, with_unpriced=True)
            candidates = planned["candidates"]
            args.unpriced = planned["unpriced"]
    try:
        schedule = _core.generate(algorithm, coll, model, limit)
    except _core.TooLarge:
        if not sampled:
            raise
        schedule = None
        args.algorithm_chosen = algorithm
    return model, coll, schedule, candidates, forced, decision


def _emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


# Keys that hold a time, in any record a command prints as JSON: written
# with their unit (one key scheme): "predicted_s" in seconds, or
# "predicted_steps" where the model counts postal steps (its "unit").
_TIME_KEYS = {"predicted_time": "predicted", "predicted": "predicted", "bound": "bound", "overheads": "overheads",
              "latency": "latency", "bandwidth": "bandwidth", "compute": "compute", "sent": "sent",
              "received": "received", "start": "start", "end": "end", "rank_finish": "rank_finish"}


def _timed(obj, unit: str):
    """obj with every time key renamed to carry its unit (recursively)."""
    suffix = "_s" if unit == "s" else "_steps"
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in _TIME_KEYS and (isinstance(v, (int, float, list)) or v is None) and not isinstance(v, bool):
                out[_TIME_KEYS[k] + suffix] = v
            elif k == "bound" and isinstance(v, dict):
                out["bound"] = _timed(v, unit)
            else:
                out[k] = _timed(v, unit)
        return out
    if isinstance(obj, list):
        return [_timed(x, unit) for x in obj]
    return obj


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None


def _render_png(dot_text: str, path: str) -> None:
    dot = shutil.which("dot")
    if not dot:
        raise CliError("--png needs Graphviz 'dot' (apt-get install graphviz); --dot FILE writes the source")
    proc = subprocess.run([dot, "-Tpng", "-o", path], input=dot_text, text=True, capture_output=True)
    if proc.returncode != 0:
        raise CliError(f"dot failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")


def _lambda_note(model, coll) -> str:
    if model.kind != "postal":
        return ""
    lam = model.postal_lambda(coll.count * coll.elem_size)
    if coll.op == "bcast":
        return f"T_lambda({coll.nranks}) = {_core.postal.T(lam, coll.nranks):g} with lambda = {lam:g}"
    if coll.op == "allreduce":
        return (f"T' = {_core.postal.T_delay_receive(lam, coll.nranks):g} (delay-receive), "
                f"T'' = {_core.postal.T_delay_send(lam, coll.nranks):g} (delay-send), lambda = {lam:g}")
    return ""


# ------------------------------------------------------------------ commands

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


def algorithms_markdown(algos) -> str:
    lines = ["# Algorithms", "",
             "Generated by `hetcoll algorithms --markdown` from the registry (a test keeps it in step).",
             "m: the message of one rank; n: the whole vector; p: ranks; b: one block. Costs on the",
             "α-β-γ (Hockney) model, conflict-free; the closed forms are held to the simulator by the tests.", "",
             "| algorithm | collectives | steps | bytes on the wire | cost | parameters | source |",
             "|---|---|---|---|---|---|---|"]
    for a in algos:
        params = ", ".join(a["params"]) or "-"
        lines.append(f"| `{a['name']}` | {', '.join(a['ops'])} | {a['steps']} | {a['bytes']} | {a['cost']} | "
                     f"{params} | {a['source']} |")
    lines.append("")
    lines.append("Descriptions:")
    lines.append("")
    for a in algos:
        note = "" if a["rank_consistent"] else " Ranks combine in different orders (not for floating-point allreduce)."
        lines.append(f"- `{a['name']}`: {a['description']}.{note}")
    return "\n".join(lines) + "\n"


def cmd_algorithms(args) -> int:
    algos = _core.algorithms()
    if args.op:
        _core.collective(args.op, 1, 0)  # validates the name
        algos = [a for a in algos if args.op in a["ops"]]
    if args.json:
        _emit_json(algos)
        return 0
    if args.markdown:
        sys.stdout.write(algorithms_markdown(algos))
        return 0
    width = max((len(a["name"]) for a in algos), default=10)
    for a in algos:
        print(f"{a['name']:<{width}}  {','.join(a['ops']):<12} {a['description']}")
        print(f"{'':<{width}}  {'':<12} steps: {a['steps']}; source: {a['source']}")
    return 0


def _plan_record(model, coll, schedule, candidates, report, sim, unpriced=None) -> dict:
    rec = {
        "op": coll.op,
        "ranks": coll.nranks,
        "root": coll.root,
        "bytes": coll.count * coll.elem_size,
        "elem_size": coll.elem_size,
        "model": model.spec,
        "algorithm": schedule.algorithm,
        "predicted_time": sim.makespan,
        "unit": sim.unit,
        "valid": report["ok"],
        "validation": report["summary"],
        "messages": schedule.message_count,
        "bytes_sent": schedule.bytes_sent,
    }
    if candidates is not None:
        rec["candidates"] = candidates
        if unpriced is not None:
            rec["unpriced"] = unpriced
    return rec


def _decision_lines(decision, coll) -> list:
    """How the decision was made, when it was not made on this very call."""
    lines = []
    if decision and decision["note"]:
        lines.append(f"note       {decision['note']}")
    if decision and not decision["forced"]:
        rep = decision["representative"]
        if rep.describe() != coll.describe():
            lines.append(f"decided    for its size class, planned on {rep.describe()}")
    return lines


def _check_valid(schedule, report) -> None:
    if not report["ok"]:
        raise InternalError(f"{schedule.algorithm} produced an invalid schedule ({report['summary']}): "
                            "a bug in hetcoll, please report it")


def _plan_sampled(args, model, coll, candidates, forced, decision, why=None, seconds=SAMPLE_SECONDS) -> int:
    """plan for a schedule past PROOF_OPS (or whose data takes past PROOF_WORK to follow):
    a sampled proof, the planner's price."""
    algorithm = args.algorithm_chosen
    proof = sampled_proof(algorithm, coll, model, seconds)
    if not proof["ok"]:
        raise InternalError(f"{algorithm} produced an invalid schedule ({proof['summary']}): "
                            "a bug in hetcoll, please report it")
    price, how = None, ""
    for c in candidates or []:
        if c["algorithm"] == algorithm:
            price, how = c["predicted"], priced_how(c)
    if price is None:
        price = _core.rounds_price(algorithm, coll, model)
        how = "rounds" if price is not None else ""
    full = why or f"more than {PROOF_OPS} ops: not built in full here"
    if args.save or args.dot or args.png:
        raise CliError(f"{algorithm} for {coll.describe()} has {full}; --save, --dot and --png need the whole schedule")
    bound = _core.bound(coll, model)
    if args.json:
        rec = {"op": coll.op, "ranks": coll.nranks, "root": coll.root, "bytes": coll.count * coll.elem_size,
               "elem_size": coll.elem_size, "model": model.spec, "algorithm": algorithm,
               "predicted_time": price, "unit": model.unit, "priced": how, "valid": proof["ok"],
               "validation": proof["summary"], "proof": "sampled", "forced_by": forced, "bound": bound}
        if candidates is not None:
            rec["candidates"] = candidates
            if getattr(args, "unpriced", None) is not None:
                rec["unpriced"] = args.unpriced
        _emit_json(_timed(rec, model.unit))
        return 0
    print(f"{coll.describe()} on {model.spec}")
    why = f"forced by {forced}" if forced else (f"fastest of {len(candidates)} candidates" if candidates else "")
    print(f"algorithm  {algorithm}" + (f"   ({why})" if why else ""))
    for line in _decision_lines(decision, coll):
        print(line)
    print(f"validated  {proof['summary']} (the schedule has {full})")
    if price is not None:
        print(f"predicted  {format_time(price, model.unit)}   (the planner's price: {how})")
    else:
        print("predicted  -   (no price without building it: simulate a smaller group)")
    print(f"bound      {bound_text(bound, model.unit)}" + (f"; predicted {times_bound(price, bound)} it"
                                                            if bound["bound"] and price is not None else ""))
    if args.explain and candidates:
        print("candidates")
        for line in explain_lines(candidates, model, _core.size_bytes(coll), getattr(args, "unpriced", ()), bound):
            print("  " + line)
    return 0


def cmd_plan_table(args) -> int:
    """hetcoll plan --table FILE: the planner's decisions ahead of time."""
    if args.algorithm or args.override:
        raise CliError("--table records the planner's own decisions: no --algorithm or --override")
    ops = [args.op] if args.op else _core.collective_ops()
    for op in ops:
        _core.collective(op, 1, 0)  # validates the name
    model = _core.parse_model(args.model)
    elems = sorted(set(args.table_elem_sizes))
    text = _core.decision_table(model, args.ranks, ops, args.table_max, elems)
    _write(args.table, text + "\n")
    entries = json.loads(text)["entries"]
    print(f"{args.table}: {len(entries)} decisions for {', '.join(map(str, args.ranks))} ranks, "
          f"{len(ops)} collective{'s' if len(ops) != 1 else ''}, element sizes {', '.join(map(str, elems))}, "
          f"sizes up to {args.table_max} B, on {model.spec}")
    print(f"use it with HETCOLL_TABLE={args.table} (and HETCOLL_PROFILE={model.spec})")
    return 0


def cmd_plan(args) -> int:
    started = time.monotonic()
    if args.table:
        return cmd_plan_table(args)
    if args.op is None:
        raise CliError("plan needs a collective (or --table FILE)")
    if len(args.ranks) != 1:
        raise CliError("--ranks takes one group size (a list only with --table)")
    args.ranks = args.ranks[0]
    model, coll, schedule, candidates, forced, decision = _build(args, PROOF_OPS, sampled=True)
    def left():  # a sampled proof takes what is left of PLAN_SECONDS (at least half a second)
        return max(0.5, PLAN_SECONDS - (time.monotonic() - started))

    if schedule is None:
        return _plan_sampled(args, model, coll, candidates, forced, decision, seconds=left())
    try:
        report = schedule.validate(PROOF_WORK)
    except _core.TooLarge:
        # Messages that carry thousands of ranks' blocks: following every piece of data
        # takes long past PROOF_WORK steps (an allgather of 4096 ranks, 12 s): sampled.
        args.algorithm_chosen = schedule.algorithm
        return _plan_sampled(args, model, coll, candidates, forced, decision,
                             f"{schedule.total_ops} ops whose data takes more than {PROOF_WORK} steps to follow: "
                             "not followed in full here", left())
    _check_valid(schedule, report)
    sim = schedule.simulate(model)
    tree = tree_from_schedule(schedule, sim)
    if args.save:
        _write(args.save, schedule.to_json(2) + "\n" if args.save.endswith(".json") else schedule.to_text())
    if args.dot or args.png:
        dot_text = tree_dot(schedule, sim, tree)
        if args.dot:
            _write(args.dot, dot_text)
        if args.png:
            _render_png(dot_text, args.png)
    bound = _core.bound(coll, model)
    if args.json:
        rec = _plan_record(model, coll, schedule, candidates, report, sim, getattr(args, "unpriced", None))
        rec["bound"] = bound
        rec["forced_by"] = forced
        if decision:
            rec["decision"] = {"note": decision["note"], "size_class": decision["size_class"],
                               "representative": json.loads(decision["representative"].to_json())}
        if tree is not None:
            rec["tree"] = tree.records()
        _emit_json(_timed(rec, model.unit))
        return 0
    print(f"{coll.describe()} on {model.spec}")
    why = f"forced by {forced}" if forced else (
        f"fastest of {len(candidates)} candidates" if candidates else "")
    print(f"algorithm  {schedule.algorithm}" + (f"   ({why})" if why else ""))
    for line in _decision_lines(decision, coll):
        print(line)
    print(f"validated  {report['summary']}")
    note = _lambda_note(model, coll)
    print(f"predicted  {format_time(sim.makespan, sim.unit)}" + (f"   ({note})" if note else ""))
    print(f"bound      {bound_text(bound, sim.unit)}" + (f"; predicted {times_bound(sim.makespan, bound)} it"
                                                          if bound["bound"] else ""))
    if args.explain:
        print("candidates")
        for line in explain_lines(candidates, model, _core.size_bytes(coll), getattr(args, "unpriced", ()), bound):
            print("  " + line)
    elif candidates and len(candidates) > 1:
        shown = candidates[1:6]
        others = ", ".join(f"{c['algorithm']} {format_time(c['predicted'], sim.unit)}" for c in shown)
        more = f" and {len(candidates) - 6} more (--explain)" if len(candidates) > 6 else ""
        print(f"also       {others}{more}")
    if tree is not None:
        print("tree       rank @ time it has the data  [time the parent sent]")
        for line in tree_lines(tree, sim.unit, max_lines=args.max_lines):
            print("  " + line)
    else:
        print(f"schedule   {schedule.total_ops} ops, {schedule.message_count} messages (use simulate for the timeline)")
    return 0


def cmd_explain(args) -> int:
    return cmd_plan(args)


def cmd_bound(args) -> int:
    """hetcoll bound: the least time any schedule can take on the model, beside hetcoll's choice."""
    if args.op is None:
        raise CliError("bound needs a collective")
    if len(args.ranks) != 1:
        raise CliError("--ranks takes one group size")
    args.ranks = args.ranks[0]
    coll = _collective(args)
    model = _core.group_model(_core.parse_model(args.model), [], coll.nranks)
    b = _core.bound(coll, model)
    choice, predicted = None, None
    if not args.no_choice:
        decision = _core.decide(coll, model, args.override or "")
        if not decision["native"]:
            choice = args.algorithm or decision["algorithm"]
            try:
                predicted = _core.generate(choice, coll, model, PROOF_OPS).simulate(model).makespan
            except _core.TooLarge:
                predicted = _core.rounds_price(choice, coll, model)
                if predicted is None and choice == decision["algorithm"]:
                    predicted = decision["predicted"]
    if args.json:
        rec = {"op": coll.op, "ranks": coll.nranks, "root": coll.root, "bytes": coll.count * coll.elem_size,
               "model": model.spec, "unit": model.unit, **b, "algorithm": choice, "predicted": predicted,
               "x_bound": predicted / b["bound"] if predicted is not None and b["bound"] > 0 else None}
        _emit_json(_timed(rec, model.unit))
        return 0
    print(f"{coll.describe()} on {model.spec}")
    print(f"bound      {bound_text(b, model.unit)}")
    print(f"           the largest of {b['constraints']} lower bounds: cuts of hosts and subnets, their links together, "
          "ports, one message (docs/bound.md)")
    if choice:
        print(f"hetcoll    {choice}: " + (f"{format_time(predicted, model.unit)} predicted, "
                                           f"{times_bound(predicted, b)} the bound" if predicted is not None else
                                           "no prediction without building it"))
    return 0


def cmd_simulate(args) -> int:
    if args.schedule:
        schedule = _load_schedule(args.schedule)
        coll = schedule.collective
        model = _core.group_model(_core.parse_model(args.model), [], coll.nranks)
        candidates = None
        report = schedule.validate()
        if not report["ok"]:
            raise CliError(f"{args.schedule} is not a valid schedule ({report['summary']}): 'hetcoll validate' "
                           "lists what is wrong")
    else:
        model, coll, schedule, candidates, _, _ = _build(args)
        report = schedule.validate()
        _check_valid(schedule, report)
    sim = schedule.simulate(model)
    timeline = []
    start, end = sim.start, sim.end  # each read copies the whole list: once
    for r in range(schedule.nranks):
        first = schedule.first_op(r)
        for i, op in enumerate(schedule.ops(r)):
            timeline.append({"rank": r, "op": i, "kind": op["kind"], "peer": op["peer"], "bytes": op["bytes"],
                             "slice": op["slice"], "start": start[first + i], "end": end[first + i]})
    bound = _core.bound(coll, model)
    if args.json:
        rec = _plan_record(model, coll, schedule, candidates, report, sim, getattr(args, "unpriced", None))
        rec["bound"] = bound
        rec["rank_finish"] = list(sim.rank_finish)
        rec["timeline"] = timeline
        _emit_json(_timed(rec, model.unit))
        return 0
    print(f"{coll.describe()} on {model.spec}")
    print(f"algorithm  {schedule.algorithm}")
    print(f"validated  {report['summary']}")
    print(f"predicted  {format_time(sim.makespan, sim.unit)}")
    print("rank  finish")
    for r, f in enumerate(sim.rank_finish):
        print(f"{r:>4}  {format_time(f, sim.unit)}")
    if args.timeline:
        print("timeline (start end rank op kind peer bytes)")
        for e in sorted(timeline, key=lambda e: (e["start"], e["rank"], e["op"])):
            peer = "" if e["peer"] < 0 else str(e["peer"])
            print(f"  {format_time(e['start'], sim.unit):>10} {format_time(e['end'], sim.unit):>10}  "
                  f"{e['rank']:>4} {e['op']:>4} {e['kind']:<6} {peer:>4} {e['bytes']}")
    return 0


def _load_schedule(path: str):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None
    if text.lstrip().startswith("{"):
        return _core.schedule_from_json(text)
    return _core.schedule_from_text(text)


def cmd_validate(args) -> int:
    schedule = _load_schedule(args.file)
    report = schedule.validate()
    if args.json:
        _emit_json({"algorithm": schedule.algorithm, "collective": json.loads(schedule.collective.to_json()),
                    **report})
    else:
        print(f"{schedule.collective.describe()} ({schedule.algorithm or 'unnamed'}): {report['summary']}")
        for e in report["errors"]:
            print(f"  {e}")
    return 0 if report["ok"] else 1


def cmd_alpha_range(args) -> int:
    if not args.max_n >= 2:
        raise CliError(f"--max-n must be at least 2, got {args.max_n}")
    ranges = _core.postal.alpha_ranges(args.lam, args.max_n)
    entries, sizes = _core.postal.alpha_table(args.lam, args.max_n)
    if args.png:
        from .plots import plot_alpha_ranges

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


def cmd_crossovers(args) -> int:
    model = _core.parse_model(args.model)
    ops = args.op or [o for o in _core.collective_ops()]
    for op in ops:
        _core.collective(op, 1, 0)
    results = [(op, crossovers(op, args.ranks, model, args.max)) for op in ops]
    if args.json:
        _emit_json(_timed({"model": model.spec, "unit": model.unit, "ranks": args.ranks, "crossovers": {
            op: [{"from": lo, "to": hi, "algorithm": a, "predicted": t} for lo, hi, a, t in r] for op, r in results}},
            model.unit))
        return 0
    if not args.markdown:
        print(f"choices on {model.spec}, {args.ranks} ranks (size = one rank's message)")
    for line in crossover_lines(results, model, args.markdown):
        print(line)
    return 0


def launcher_mpi() -> str | None:
    """The MPI whose mpirun (or mpiexec) is first on PATH: openmpi, mpich, or None."""
    from . import profile as prof

    flavor = prof.launcher_flavor(shutil.which("mpirun") or shutil.which("mpiexec"))
    return None if flavor == "unknown" else flavor


MPI_NAMES = ("openmpi", "mpich")


def library_paths(mpi: str | None = None) -> dict:
    """Where the installed MPI libraries and the C header are, for `mpi`
    (openmpi or mpich; None: the MPI of the mpirun on PATH if the libraries
    are built for it, else the one they were built for first)."""
    from pathlib import Path

    base = Path(__file__).resolve().parent
    from . import profile as prof

    built = prof.installed_mpis()
    mpis = built.get("mpis", {})
    if mpi is None:
        on_path = launcher_mpi()
        mpi = on_path if on_path in mpis else built.get("default")
    elif mpi not in mpis:
        have = ", ".join(mpis) or "none"
        raise CliError(f"no hetcoll libraries for {mpi} here (built for: {have}). Install {mpi}'s "
                       f"development package (Debian: {'libmpich-dev' if mpi == 'mpich' else 'libopenmpi-dev'}) "
                       "and build again (pip install .), or build hetcoll with its mpicc (docs/install.md)")
    lib = base / "lib" / (mpis.get(mpi) or "") if mpi else base / "lib"
    return {
        "mpi": mpi,
        "preload": str(lib / "libhetcoll_mpi.so"),
        "capi": str(lib / "libhetcoll.so"),
        "include": str(base / "include"),
        "prefix": str(base),
        "mpis": sorted(mpis),
    }


def cmd_lib(args) -> int:
    from pathlib import Path

    paths = library_paths(args.mpi)
    if not Path(paths["preload"]).exists():
        raise CliError("the MPI libraries were not built (no MPI found at build time: "
                       "apt-get install libopenmpi-dev, then pip install . again)")
    if args.json:
        _emit_json(paths)
    else:
        print(paths[args.which])
    return 0


def cmd_probe(args) -> int:
    from pathlib import Path

    from . import profile as prof

    exe = prof.probe_executable()
    if not Path(exe).exists():
        raise CliError("hetcoll-probe was not built (no MPI found at build time: "
                       "apt-get install libopenmpi-dev, then pip install . again)")
    probe_args = [exe, "-o", args.output, "--repeats", str(args.repeats), "--threshold", str(args.threshold),
                  "--large", str(args.large)]
    if args.budget is not None:
        probe_args += ["--budget", str(args.budget)]
    if args.sequential:
        probe_args.append("--sequential")
    if args.no_lambda:
        probe_args.append("--no-lambda")
    declared = None
    if args.topology == "slurm":
        declared = _slurm_topology(Path(args.output).resolve().parent)
        probe_args += ["--topology", declared]
    elif args.topology:
        probe_args += ["--topology", args.topology]
    try:
        _check_program(probe_args)
        extra = _mpirun_args(args)
        args.np = _ranks_to_run(args.np, None)
        if not _run_mpi(args.np, probe_args, extra, "the probe", dry_run=args.dry_run, launcher=args.launcher,
                        json_out=args.json):
            return 0
    finally:
        if declared:
            Path(declared).unlink(missing_ok=True)
    p = prof.load(args.output, with_pairs=False)
    if not args.json:
        print(f"hetcoll: profile of {len(p['hosts'])} hosts in {p['subnets']['count']} subnets written to "
              f"{args.output}; 'hetcoll profile show {args.output}' summarises it, HETCOLL_PROFILE={args.output} "
              "uses it")
    if args.tune:
        _run_tune(args.np, args.output, None, extra, args.tune_max, args.tune_repeats, launcher=args.launcher,
                  json_out=args.json)
        p = prof.load(args.output, with_pairs=False)
    if args.json:
        _emit_json(_profile_summary(args.output, p))
    return 0


def _slurm_topology(directory) -> str:
    """The tree Slurm declares, as a file the probe reads (topology.conf's
    form): `scontrol show topology`, else the topology.conf beside Slurm's
    configuration. Written into `directory` (where the profile goes: the
    probe's rank 0 reads it there)."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    text, tried = "", []
    if shutil.which("scontrol"):
        proc = subprocess.run(["scontrol", "show", "topology"], capture_output=True, text=True)
        if proc.returncode == 0 and "SwitchName=" in proc.stdout:
            text = proc.stdout
        tried.append("'scontrol show topology' " + ("printed no switch" if proc.returncode == 0 else
                                                    f"failed ({(proc.stderr or '').strip()[:120]})"))
    else:
        tried.append("no scontrol on PATH")
    if not text:
        conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")).parent / "topology.conf"
        if conf.is_file():
            text = conf.read_text()
        else:
            tried.append(f"no {conf}")
    if not text:
        raise CliError("--topology slurm: Slurm declares no topology here (" + "; ".join(tried) +
                       "); name a file in topology.conf's form instead: --topology FILE")
    fd, path = tempfile.mkstemp(prefix=".hetcoll-topology-", suffix=".conf", dir=str(directory))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _profile_summary(path, p) -> dict:
    """What probe --json and tune --json say of the profile they wrote."""
    return {"profile": path, "ranks": p["measured"]["ranks"], "hosts": [h["name"] for h in p["hosts"]],
            "subnets": p["subnets"]["count"], "seconds": p["measured"]["seconds"],
            "tuned": [{"ranks": len(t["hosts"]), "entries": len(t.get("entries", []))} for t in p.get("tuned", [])]}


def _ranks_to_run(np, fallback):
    """--np, or the Slurm allocation's tasks, or `fallback`."""
    from . import profile as prof

    n = np if np is not None else prof.default_np(fallback)
    if n is None:
        raise CliError("--np: how many ranks? (required outside a Slurm allocation)")
    return n


def _add_launcher(p) -> None:
    p.add_argument("--launcher", choices=["auto", "srun", "mpirun", "mpiexec"], default="auto",
                   help="what starts the ranks (default auto: srun inside a Slurm allocation — its hosts — else "
                   "mpirun); arguments after '--' go to it")


def _mpirun_args(args) -> list:
    """What followed '--' on the command line: arguments for mpirun."""
    extra = list(getattr(args, "mpirun_args", None) or [])
    return extra[1:] if extra and extra[0] == "--" else extra


def _check_program(program) -> None:
    """PROGRAM --check, alone (no mpirun): the MPI program checks its own
    arguments and the files it would read and write, with the rules it runs
    by, and says what is wrong in one line — before anything is launched."""
    proc = subprocess.run(list(program) + ["--check"], capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise CliError(lines[-1] if lines else f"{program[0]} --check failed (exit {proc.returncode})")


def _run_mpi(np, program, extra, what, env_set=None, env_drop=(), dry_run=False, launcher="auto",
             json_out=False) -> bool:
    """PROGRAM under mpirun (profile.mpirun_command); a failure is a CliError
    naming the command. With dry_run the command is printed instead (False)."""
    from . import profile as prof

    try:
        cmd, env = prof.mpirun_command(np, program, extra, launcher)
    except ValueError as e:
        raise CliError(str(e)) from None
    env.update(env_set or {})
    for k in env_drop:
        env.pop(k, None)
    if dry_run:
        print(" ".join(cmd))
        return False
    # With --json the program's own lines go to stderr: stdout is the JSON.
    rc = subprocess.run(cmd, env=env, stdout=sys.stderr if json_out else None).returncode
    if rc != 0:
        raise CliError(f"{what} failed (exit {rc}): {' '.join(cmd)}")
    return True


def _run_tune(np, profile, ops, extra, max_bytes, repeats, sizes=None, candidates=None, launcher="auto",
              json_out=False) -> None:
    from pathlib import Path

    from . import profile as prof

    exe = prof.probe_executable("hetcoll-tune")
    if not Path(exe).exists():
        raise CliError("hetcoll-tune was not built (no MPI found at build time)")
    prof.load(profile, with_pairs=False)  # a clear error before mpirun starts
    tune_args = [exe, str(profile), "--repeats", str(repeats)]
    tune_args += ["--sizes", ",".join(str(b) for b in sizes)] if sizes else ["--max", str(max_bytes)]
    if ops:
        tune_args += ["--ops", ops]
    if candidates:
        tune_args += ["--candidates", str(candidates)]
    _check_program(tune_args)
    # The tuner sets the model itself and forces its candidates.
    _run_mpi(np, tune_args, extra, "tuning", env_drop=("HETCOLL_PROFILE", "HETCOLL_ALGO"), launcher=launcher,
             json_out=json_out)


def cmd_bench(args) -> int:
    from pathlib import Path

    from . import profile as prof

    exe = prof.probe_executable("hetcoll-bench")
    if not Path(exe).exists():
        raise CliError("hetcoll-bench was not built (no MPI found at build time)")
    if args.profile:
        prof.load(args.profile, with_pairs=False)  # a clear error before mpirun starts
    bench_args = [exe, "-o", args.output, "--repeats", str(args.repeats), "--target-ms", str(args.target_ms)]
    if args.max_repeats:
        bench_args += ["--max-repeats", str(args.max_repeats)]
    if args.csv:
        bench_args += ["--csv", args.csv]
    if args.ops:
        bench_args += ["--ops", args.ops]
    if args.sizes:
        bench_args += ["--sizes", ",".join(str(b) for b in args.sizes)]
    else:
        bench_args += ["--min", str(args.min), "--max", str(args.max)]
    if args.algorithms:
        bench_args += ["--algorithms", args.algorithms]
    if args.no_native:
        bench_args.append("--no-native")
    if args.overlap:
        bench_args.append("--overlap")
        if args.test_every:
            bench_args += ["--test-every", str(args.test_every)]
    elif args.test_every:
        raise CliError("--test-every applies to --overlap only")
    for flag, out in (("-o", args.output), ("--csv", args.csv)):
        if out:
            try:
                Path(out).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise CliError(f"{flag} {out}: cannot make its directory {Path(out).parent} ({e.strerror})") from None
    _check_program(bench_args)
    env_set = {"HETCOLL_PROFILE": str(Path(args.profile).resolve())} if args.profile else None
    if not _run_mpi(_ranks_to_run(args.np, 4), bench_args, _mpirun_args(args), "the benchmark", env_set,
                    ("HETCOLL_ALGO",), args.dry_run, args.launcher, args.json):
        return 0
    if args.format == "osu":
        from .osu import osu_file_text

        try:
            print(osu_file_text(args.output), end="")
        except ValueError as e:
            raise CliError(str(e)) from None
        return 0
    if args.json:
        with open(args.output) as f:
            doc = json.load(f)
        _emit_json({"results": args.output, "csv": args.csv, "ranks": doc.get("ranks"), "mode": doc.get("mode", "time"),
                    "rows": len(doc.get("rows", []))})
        return 0
    print(f"hetcoll: results in {args.output}" + (f" and {args.csv}" if args.csv else "") +
          f"; 'hetcoll report {args.output} PROFILE -o DIR' draws them")
    return 0


def cmd_export(args) -> int:
    from . import export as ex

    try:
        model = _core.parse_model(args.model)
    except ValueError as e:
        raise CliError(f"-m {args.model}: {e}") from None
    if args.ranks:
        ranks = sorted(set(args.ranks))
    else:  # powers of two up to the machine's ranks (and its own size), or to 64
        top = model.ranks if model.ranks > 1 else 64
        ranks = sorted({2 ** k for k in range(1, 31) if 2 ** k <= top} | {top})
    if ranks[0] < 2:
        raise CliError("--ranks: communicators of at least 2 ranks")
    ops = [o.strip() for o in args.ops.split(",")] if args.ops else list(ex.DEFAULT_OPS)
    unknown = [o for o in ops if o not in _core.collective_ops()]
    if unknown:
        raise CliError(f"--ops: unknown collective {', '.join(unknown)}")
    try:
        text, report = ex.export(args.format, model, ops, ranks, args.max, args.elem_size, args.base,
                                 args.override or "")
    except ValueError as e:
        raise CliError(str(e)) from None
    _write(args.output, text)
    header = (f"hetcoll export --format {args.format}: {len(ops)} collectives, communicator sizes "
              f"{','.join(map(str, ranks))}, sizes up to {_core.format_bytes(args.max)}, model {model.spec}")
    if args.report:
        _write(args.report, header + "\n" + "\n".join(report) + "\n")
    if args.json:
        _emit_json({"format": args.format, "output": args.output, "ranks": ranks, "ops": ops,
                    "max_bytes": args.max, "model": model.spec, "rules": report})
        return 0
    print(header)
    for line in report:
        print("  " + line)
    use = ("mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "
           f"{os.path.abspath(args.output)} ..." if args.format == "ompi-rules" else
           f"MPIR_CVAR_DEVICE_COLLECTIVES=none MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="
           f"{os.path.abspath(args.output)} mpiexec ...")
    print(f"hetcoll: wrote {args.output}; use it: {use}")
    return 0


def cmd_report(args) -> int:
    from . import report

    if len(args.files) < 2:
        raise CliError("hetcoll report RESULTS... PROFILE -o DIR: at least one results file and the profile")
    try:
        page = report.build(args.files[:-1], args.files[-1], args.output, args.title)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.json:
        from pathlib import Path

        out = Path(args.output)
        _emit_json({"page": str(page), "output": args.output, "results": args.files[:-1], "profile": args.files[-1],
                    "files": sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file())})
        return 0
    print(f"hetcoll: report written to {page}")
    return 0


def cmd_tune(args) -> int:
    _run_tune(_ranks_to_run(args.np, None), args.profile, args.ops, _mpirun_args(args), args.max, args.repeats,
              args.sizes, args.candidates, args.launcher, args.json)
    if args.json:
        from . import profile as prof

        _emit_json(_profile_summary(args.profile, prof.load(args.profile, with_pairs=False)))
        return 0
    print(f"hetcoll: measured decisions stored in {args.profile}; 'hetcoll profile show {args.profile}' lists them")
    return 0


def cmd_profile_show(args) -> int:
    from . import profile as prof

    p = prof.load(args.file, with_pairs=args.json)
    if args.json:
        _emit_json(p)
    else:
        print("\n".join(prof.show_lines(p)))
        print("\n".join(prof.topology_lines(_core.topology(_core.parse_model(args.file)))))
    return 0


def cmd_subnets(args) -> int:
    from . import profile as prof

    p = prof.load(args.file)
    if args.json:
        n = len(p["hosts"])
        if args.threshold is None:
            groups = [[h for h in range(n) if p["hosts"][h]["subnet"] == s] for s in range(p["subnets"]["count"])]
            out = {"threshold": p["subnets"]["threshold"], "gap": p["subnets"]["gap"], "groups": groups}
        else:
            part = _core.partition_subnets(p["pairs"]["small_min"], n, args.threshold)
            out = {"threshold": part["threshold"], "gap": part["gap"], "groups": part["groups"]}
        out["hosts"] = [h["name"] for h in p["hosts"]]
        _emit_json(out)
    else:
        print("\n".join(prof.subnet_lines(p, args.threshold)))
    return 0


def cmd_ring(args) -> int:
    from . import profile as prof

    p = prof.load(args.file, with_pairs=False)
    if args.json:
        _emit_json({"hosts": [p["hosts"][h]["name"] for h in p["ring"]["hosts"]],
                    "order": p["ring"]["hosts"], "crossings": p["ring"]["crossings"]})
    else:
        print("\n".join(prof.ring_lines(p)))
    return 0


def cmd_bench_report(args) -> int:
    from .benchreport import write_report

    if args.format == "osu":
        from .osu import osu_file_text

        if args.markdown or args.png:
            raise CliError("--format osu prints the results; --markdown and --png belong to the tables")
        for path in args.results:
            try:
                print(osu_file_text(path), end="")
            except ValueError as e:
                raise CliError(str(e)) from None
        return 0

    if args.json:
        from .benchreport import load, summary

        try:
            runs = load(args.results)
        except ValueError as e:
            raise CliError(str(e)) from None
        write_report(args.results, args.markdown, args.png) if (args.markdown or args.png) else None
        def seconds(r):  # one key scheme: times in seconds, *_s
            return {"op": r["op"], "bytes": r["bytes"], "algorithm": r["algorithm"], "hetcoll_s": r["hetcoll_us"] / 1e6,
                    "native_s": r["native_us"] / 1e6, "speed": r["speed"]}

        out = []
        for run in runs:
            sm = summary(run)
            out.append({"ranks": sm["ranks"], "cases": sm["cases"], "at_target": sm["at_target"],
                        "median_speed": sm["median"], "worst": seconds(sm["worst"]),
                        "below": [seconds(r) for r in sm["below"]], "results": [seconds(r) for r in run["results"]]})
        _emit_json(out)
        return 0
    for line in write_report(args.results, args.markdown, args.png):
        print(line)
    return 0


def cmd_predict(args) -> int:
    from .whatif import WhatIfError, predict_lines, predict_rows
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
    from .whatif import WhatIfError, whatif_lines, whatif_plot, whatif_rows
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


def cmd_config(args) -> int:
    if args.markdown:
        sys.stdout.write(_core.settings_markdown())
        return 0
    settings = _core.settings()
    unknown = _core.unknown_settings()
    conf = _core.configuration()
    if args.json:
        _emit_json({"version": _core.__version__, "settings": settings,
                    "unknown": [{"name": n, "suggestion": s} for n, s in unknown], "problems": conf["problems"]})
        return 0
    print(f"hetcoll {_core.__version__}: the variables the MPI layer reads (values in this environment)")
    for st in settings:
        where = "set" if st["from_env"] else "default"
        value = st["value"] if st["value"] != "" else "(empty)"
        alike = ", alike on every rank" if st["agreed"] else ""
        print(f"  {st['name']:<22} = {value}   [{where}{alike}]")
        print(f"  {'':<22}   {st['meaning']}")
        if st["problem"]:
            print(f"  {'':<22}   ! {st['problem']}")
    print("'alike on every rank': the setting changes decisions; where the ranks of a communicator have it\n"
          "differently (or the files it names differ), that communicator runs the native collectives")
    for problem in conf["problems"]:  # in the MPI layer's words: the same reading
        sys.stderr.write(f"hetcoll: warning: {problem}\n")
    return 0


def cmd_models(args) -> int:
    text = _core.model_spec_help()
    if not args.json:
        print(text)
        return 0
    kinds = []  # an entry starts at column 0: "spec   (doc)"; indented lines continue it
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            spec, _, doc = line.partition("  ")
            kinds.append({"spec": spec.strip(), "doc": doc.strip()})
        elif kinds:
            kinds[-1]["doc"] = (kinds[-1]["doc"] + " " + line.strip()).strip()
    _emit_json(kinds)
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo

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


# ------------------------------------------------------------------ parser

def _ranks_list(text: str):
    """An argparse type: N or N,N,... (group sizes)."""
    one = _int_in(1, MAX_RANKS, "--ranks")
    parts = text.split(",")
    if len(parts) > 64:
        raise argparse.ArgumentTypeError("--ranks: at most 64 group sizes")
    return [one(x.strip()) for x in parts]


def _add_collective_args(p, default_op=None):
    if default_op is None:
        p.add_argument("op", nargs="?", help="collective: " + ", ".join(_core.collective_ops()))
    p.add_argument("--ranks", "-n", "--np", dest="ranks", type=_ranks_list, required=True,
                   help="group size (with --table: a list, e.g. 4,16,64)")
    p.add_argument("--model", "-m", "--profile", dest="model", required=True,
                   help="the machine: a profile written by 'hetcoll probe', or a model spec, e.g. postal:lambda=1.8 "
                   "or hockney:alpha=20us,beta=1ns (see 'hetcoll models')")
    p.add_argument("--root", type=_int_in(0, MAX_RANKS - 1, "--root"), default=0, help="root rank (default 0)")
    p.add_argument("--bytes", "-b", type=parse_size, default=8, help="message size in bytes (k, M suffixes; default 8)")
    p.add_argument("--elem-size", type=_int_in(1, 1 << 30, "--elem-size"), default=1,
                   help="bytes per element; reductions never split one (default 1)")
    p.add_argument("--order-free", action="store_true", help="the reduction gives the same bits in any order "
                   "(integers, min/max, bitwise): allows allreduce algorithms whose ranks combine in different orders")
    p.add_argument("--algorithm", "-a", help="force an algorithm (name or name[key=value]); default: the planner's choice")
    p.add_argument("--override", metavar="RULES", help="override rules, e.g. 'bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect'"
                   " (the HETCOLL_ALGO grammar)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _workflow_commands(sub) -> None:
    """The workflow on a machine: measure it, tune, check against the native MPI, draw the result."""
    pr = sub.add_parser("probe", help="measure this machine (an MPI job) and write a profile for HETCOLL_PROFILE",
                        description="Runs hetcoll-probe under mpirun: pairwise latency and bandwidth (ECO), per-host "
                        "send/receive overheads (Banikazemi), reduction rates, Bruck's lambda; subnets and ring. "
                        "Arguments after -- go to mpirun (e.g. -- --hostfile hosts).")
    pr.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (put one per host, or more; inside a "
                    "Slurm allocation: its tasks)")
    _add_launcher(pr)
    pr.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    pr.add_argument("-o", "--output", default="hetcoll-profile.json", help="profile file (default hetcoll-profile.json)")
    pr.add_argument("--budget", type=_real_in(0, 1e7, "--budget"), help="seconds the probe may take (default: no limit)")
    pr.add_argument("--sequential", action="store_true", help="measure one pair at a time (ECO), not p-1 rounds of "
                    "concurrent pairs")
    pr.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=5, help="repeats per figure (default 5)")
    pr.add_argument("--threshold", type=_real_in(0, 10, "--threshold"), default=0.2,
                    help="ECO's subnet threshold (default 0.2: within 20%%)")
    pr.add_argument("--large", type=parse_size, default=256 << 10, help="bandwidth message size (default 256k)")
    pr.add_argument("--no-lambda", action="store_true", help="skip Bruck's lambda experiments")
    pr.add_argument("--topology", metavar="FILE|slurm", help="a declared topology as a start: a file in Slurm's "
                    "topology.conf form, or 'slurm' (scontrol show topology); each switch's links measured, and "
                    "every place where measurement and declaration disagree said")
    pr.add_argument("--tune", action="store_true", help="then time the native collectives against hetcoll's best "
                    "candidates on this job and store the winners (hetcoll tune)")
    pr.add_argument("--tune-max", type=parse_size, default=1 << 20, help="with --tune: largest size (default 1M)")
    pr.add_argument("--tune-repeats", type=_int_in(1, 1000, "--tune-repeats"), default=7)
    pr.add_argument("--dry-run", action="store_true", help="print the mpirun command, do not run it")
    pr.set_defaults(func=cmd_probe, mpirun_args=[])

    pf = sub.add_parser("profile", help="a machine profile written by 'hetcoll probe'")
    pfs = pf.add_subparsers(dest="profile_command", metavar="ACTION", parser_class=_Parser)
    pfs.required = True
    ps = pfs.add_parser("show", help="summary: hosts, pair classes, kernels, lambda(m)")
    ps.add_argument("file")
    ps.add_argument("--json", action="store_true", help="the whole profile, checked")
    ps.set_defaults(func=cmd_profile_show)

    sn = sub.add_parser("subnets", help="a profile's subnets (ECO's partition), the threshold and the gap")
    sn.add_argument("file")
    sn.add_argument("--threshold", type=_real_in(0, 10, "--threshold"), help="partition again with this threshold")
    sn.add_argument("--json", action="store_true")
    sn.set_defaults(func=cmd_subnets)

    rg = sub.add_parser("ring", help="a profile's ring order (fewest subnet crossings)")
    rg.add_argument("file")
    rg.add_argument("--json", action="store_true")
    rg.set_defaults(func=cmd_ring)

    tu = sub.add_parser("tune", help="measured decisions: time native vs hetcoll's best candidates, store the winners "
                        "in the profile", description="Runs hetcoll-tune under mpirun on the job layout to tune for "
                        "(one decision set per layout; a run replaces the collectives and sizes it measures and keeps "
                        "the others). Arguments after -- go to mpirun.")
    tu.add_argument("profile", help="a profile written by 'hetcoll probe' (updated in place)")
    tu.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (inside a Slurm allocation: its tasks)")
    _add_launcher(tu)
    tu.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    tu.add_argument("--ops", help="collectives, comma-separated (default: "
                    f"{' '.join(_core.regular_collective_ops())})")
    tu.add_argument("--max", type=parse_size, default=1 << 20, help="largest size per rank (default 1M)")
    tu.add_argument("--sizes", type=_size_list, help="these sizes per rank instead (e.g. 1k,64k): each decides the "
                    "size classes nearer to it than to the others")
    tu.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=7)
    tu.add_argument("--candidates", type=_int_in(1, 8, "--candidates"),
                    help="hetcoll's best predicted algorithms timed against native (default 3)")
    tu.set_defaults(func=cmd_tune, mpirun_args=[])

    be = sub.add_parser("bench", help="measured beside predicted: hetcoll's choice, forced algorithms and native MPI, "
                        "every collective (Banikazemi Fig. 2 timing); JSON and CSV",
                        description="Runs hetcoll-bench under mpirun: for each collective and size, hetcoll's choice, "
                        "the native collective and each --algorithms entry, interleaved, each timed by Banikazemi et "
                        "al.'s Fig. 2 procedure (barrier-subtracted loops, slowest rank, minimum and median over "
                        "repeats, each repeat starting with the next variant); latency-bound calls (Fig. 2 below "
                        "three barrier times) also from a synchronized start, every rank beginning each call at the "
                        "same instant of rank 0's clock — the makespan hetcoll predicts. With hetcoll's prediction "
                        "for the schedule that ran. Arguments after '--' go to mpirun.")
    be.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (default: the Slurm allocation's tasks, "
                    "or 4)")
    _add_launcher(be)
    be.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    be.add_argument("-o", "--output", default="results/bench.json")
    be.add_argument("--csv", help="also write the rows as CSV")
    be.add_argument("--profile", "--model", "-m", dest="profile",
                    help="the machine: plan with this profile (HETCOLL_PROFILE for the run)")
    be.add_argument("--ops", help="collectives, comma-separated (default: all 16)")
    be.add_argument("--sizes", type=_size_list, help="bytes per rank, e.g. 1k,64k,1M (default: --min ×8 … --max)")
    be.add_argument("--min", type=parse_size, default=8)
    be.add_argument("--max", type=parse_size, default=1 << 20)
    be.add_argument("--algorithms", help="forced algorithms to time too, comma-separated specs")
    be.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=7)
    be.add_argument("--max-repeats", type=_int_in(1, 1000, "--max-repeats"),
                    help="beyond --repeats, repeat a row (up to this many, within 20 s) while some variant's median "
                    "is not known to within 5 %% (its distribution-free 95 %% confidence interval)")
    be.add_argument("--target-ms", type=float, default=5.0, help="time per measurement (default 5 ms)")
    be.add_argument("--no-native", action="store_true")
    be.add_argument("--overlap", action="store_true",
                    help="the non-blocking collectives (MPI_I...), OSU's method: the call alone, a compute loop "
                    "alone, both overlapped, and overlap %% = 1 - (overlapped - compute) / call; hetcoll against "
                    "native, the same compute for both (HETCOLL_PROGRESS_THREAD=1 in the environment: with the "
                    "progress thread)")
    be.add_argument("--test-every", type=float, metavar="US",
                    help="with --overlap: the compute loop calls MPI_Test every US microseconds (default: never, "
                    "as OSU)")
    be.add_argument("--format", choices=["text", "osu"], default="text",
                    help="osu: print the results as the OSU Micro-Benchmarks print theirs (a block per collective "
                    "and variant: size, then latencies in us), for scripts and plots written for OSU; the JSON "
                    "is written as always")
    be.add_argument("--dry-run", action="store_true", help="print the mpirun command")
    be.set_defaults(func=cmd_bench, mpirun_args=[])

    ex = sub.add_parser("export", help="hetcoll's decisions as Open MPI's coll_tuned rules or MPICH's selection "
                        "JSON, for running without LD_PRELOAD")
    ex.add_argument("--format", required=True, choices=["ompi-rules", "mpich-json"],
                    help="ompi-rules: Open MPI coll/tuned dynamic rules (4.1); mpich-json: MPICH's collective "
                    "selection file (4.0)")
    ex.add_argument("--model", "-m", "--profile", dest="model", required=True,
                    help="the machine: a profile (its measured decisions first) or any model spec")
    ex.add_argument("-o", "--output", required=True, help="the file to write")
    ex.add_argument("--ranks", type=_int_list, help="communicator sizes of the grid (default: powers of two up "
                    "to the profile's ranks and that number, or up to 64)")
    ex.add_argument("--ops", help="collectives (default: allreduce,bcast,reduce,allgather,alltoall,barrier,"
                    "reduce_scatter_block)")
    ex.add_argument("--max", type=parse_size, default=16 << 20, help="largest message of the grid (default 16M)")
    ex.add_argument("--elem-size", type=_int_in(1, 1 << 16, "--elem-size"), default=4,
                    help="element size the grid's counts are of (default 4)")
    ex.add_argument("--base", help="mpich-json: the MPICH selection file to start from (default: MPICH 4.0.2's "
                    "own, maint/tuning/coll/mpir/generic.json); the collectives not exported keep its trees")
    ex.add_argument("--override", metavar="RULES", help="HETCOLL_ALGO rules (e.g. 'allreduce:@ring_allreduce'): the "
                    "decisions the MPI layer would take under them")
    ex.add_argument("--report", help="also write the rule-by-rule report (what hetcoll chose, what was written, "
                    "where the library has no equivalent) to this file")
    ex.add_argument("--json", action="store_true", help="the report as JSON")
    ex.set_defaults(func=cmd_export)

    rp = sub.add_parser("report", help="one self-contained HTML page and PNG plots from bench results and a profile")
    rp.add_argument("files", nargs="+", metavar="RESULTS... PROFILE", help="hetcoll bench results, then the profile")
    rp.add_argument("-o", "--output", required=True, help="directory for index.html and the plots")
    rp.add_argument("--title")
    rp.add_argument("--json", action="store_true", help="{page, output, results, profile, files}")
    rp.set_defaults(func=cmd_report)

    br = sub.add_parser("bench-report", help="tables and a plot of hetcoll against native MPI from hetcoll bench (or bench_mpi) results")
    br.add_argument("results", nargs="+", help="JSON files written by bench_mpi (one per rank count)")
    br.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    br.add_argument("--png", metavar="FILE", help="plot native/hetcoll time ratios by size")
    br.add_argument("--json", action="store_true", help="per run: ranks, cases, at_target, median, worst, below, "
                    "results (speed = native time / hetcoll time)")
    br.add_argument("--format", choices=["text", "osu"], default="text",
                    help="osu: each hetcoll bench result in the OSU Micro-Benchmarks' format instead (hetcoll bench "
                    "--format osu prints the same)")
    br.set_defaults(func=cmd_bench_report)


def _planning_commands(sub) -> None:
    """Planning and prediction on a model: what hetcoll would do, and why."""
    pl = sub.add_parser("plan", help="build, validate and predict a collective; print its tree")
    _add_collective_args(pl)
    pl.add_argument("--dot", metavar="FILE", help="write the tree (or message graph) as Graphviz")
    pl.add_argument("--png", metavar="FILE", help="render it with Graphviz dot")
    pl.add_argument("--save", metavar="FILE", help="write the schedule (text, or JSON if FILE ends in .json)")
    pl.add_argument("--max-lines", type=_int_in(0, 1 << 30, "--max-lines"), default=64,
                    help="tree lines to print (default 64)")
    pl.add_argument("--explain", action="store_true", help="the cost table of every candidate (latency/bandwidth/compute)")
    pl.add_argument("--table", metavar="FILE", help="write the decisions for every size class (and every collective, "
                    "unless one is named) of these group sizes, for the MPI layer to load (HETCOLL_TABLE)")
    pl.add_argument("--table-max", type=parse_size, default=64 << 20, help="with --table: largest size (default 64M)")
    pl.add_argument("--table-elem-sizes", type=lambda t: [_int_in(1, 1 << 30, "--table-elem-sizes")(x) for x in t.split(",")],
                    default=[1, 4, 8], help="with --table: element sizes (default 1,4,8)")
    pl.set_defaults(func=cmd_plan)

    xp = sub.add_parser("explain", help="why hetcoll chooses what it does for a call: every candidate's cost "
                        "(latency, bandwidth, compute), how it was priced, the bound (= plan --explain)")
    _add_collective_args(xp)
    xp.set_defaults(func=cmd_explain, dot=None, png=None, save=None, max_lines=0, explain=True, table=None,
                    table_max=64 << 20, table_elem_sizes=[1, 4, 8])

    bd = sub.add_parser("bound", help="the physical bound: the least time any schedule of a collective can take "
                        "on a model (cuts of hosts and subnets over their links), beside hetcoll's choice")
    _add_collective_args(bd)
    bd.add_argument("--no-choice", action="store_true", help="the bound alone (no decision, no simulation)")
    bd.set_defaults(func=cmd_bound)

    s = sub.add_parser("simulate", help="per-rank completion times and the timeline of a schedule")
    s.add_argument("op", nargs="?", help="collective (omit with --schedule)")
    s.add_argument("--schedule", metavar="FILE", help="simulate a saved schedule (text or JSON) instead")
    s.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, MAX_RANKS, "--ranks"))
    s.add_argument("--model", "-m", "--profile", dest="model", required=True,
                   help="the machine: a profile or a model spec")
    s.add_argument("--root", type=_int_in(0, MAX_RANKS - 1, "--root"), default=0)
    s.add_argument("--bytes", "-b", type=parse_size, default=8)
    s.add_argument("--elem-size", type=_int_in(1, 1 << 30, "--elem-size"), default=1)
    s.add_argument("--order-free", action="store_true")
    s.add_argument("--algorithm", "-a")
    s.add_argument("--override", metavar="RULES")
    s.add_argument("--timeline", action="store_true", help="print every op's start and end")
    s.add_argument("--json", action="store_true", help="includes rank_finish and timeline")
    s.set_defaults(func=cmd_simulate)

    v = sub.add_parser("validate", help="validate a saved schedule (text or JSON)")
    v.add_argument("file")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)

    co = sub.add_parser("crossovers", help="the message sizes at which the planner's choice changes")
    co.add_argument("--model", "-m", "--profile", dest="model", required=True,
                    help="the machine: a profile or a model spec")
    co.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, MAX_RANKS, "--ranks"), required=True)
    co.add_argument("--op", action="append", help="collective (repeatable; default: all)")
    co.add_argument("--max", type=parse_size, default=64 << 20, help="largest size (default 64M)")
    co.add_argument("--json", action="store_true")
    co.add_argument("--markdown", action="store_true")
    co.set_defaults(func=cmd_crossovers)

    a = sub.add_parser("algorithms", help="the algorithm registry")
    a.add_argument("--op", help="only algorithms for this collective")
    a.add_argument("--json", action="store_true")
    a.add_argument("--markdown", action="store_true", help="the table of docs/algorithms.md")
    a.set_defaults(func=cmd_algorithms)

    m = sub.add_parser("models", help="the machine model spec grammar")
    m.add_argument("--json", action="store_true", help="[{spec, doc}], one per model kind")
    m.set_defaults(func=cmd_models)

    pd = sub.add_parser("predict", help="Banikazemi's models (eqs. 6-12) beside the simulator, same tree, same model")
    pd.add_argument("op", choices=["bcast", "scatter", "gather"])
    pd.add_argument("--model", "-m", "--profile", dest="model",
                    help="the machine: a profile written by 'hetcoll probe', or any model spec (hetero:nodes=FFSS …)")
    pd.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, 4096, "--ranks"),
                    help="ranks (default: the profile's hosts)")
    pd.add_argument("--root", type=_int_in(0, MAX_RANKS - 1, "--root"), default=0)
    pd.add_argument("--bytes", "-b", type=_size_list, default=[8, 1024, 65536, 1048576],
                    help="message (scatter, gather: block) sizes, comma-separated (default 8,1k,64k,1M)")
    pd.add_argument("--tree", default="binomial", help="bcast: binomial, star, chain, kary:K, knomial:K")
    pd.add_argument("--json", action="store_true")
    pd.set_defaults(func=cmd_predict)

    wi = sub.add_parser("whatif", help="predicted time as the number of fast nodes varies (Banikazemi Fig. 8)")
    wi.add_argument("op", help="any collective")
    wi.add_argument("--profile", "--model", "-m", dest="profile",
                    help="the machine: fast and slow nodes from this profile (default: Banikazemi's Table 1)")
    wi.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(2, 1024, "--ranks"), default=8)
    wi.add_argument("--fast", type=_int_list, help="numbers of fast nodes, e.g. 1,2,4,8 (default 1..ranks)")
    wi.add_argument("--bytes", "-b", type=parse_size, default=4096, help="message (block) size, default 4k")
    wi.add_argument("--algorithm", "-a", help="this algorithm instead of the planner's best")
    wi.add_argument("--png", help="plot to this file")
    wi.add_argument("--json", action="store_true")
    wi.set_defaults(func=cmd_whatif)


def _paper_commands(sub) -> None:
    """The papers, computed."""
    t = sub.add_parser("tables", help="Bruck et al. Tables 1 and 2, computed")
    t.add_argument("--json", action="store_true", help="{'gamma': {lambda: gamma}, 'break_even': {k: lambda}}")
    t.set_defaults(func=cmd_tables)

    ar = sub.add_parser("alpha-range", help="legal alpha ranges per n and the look-up table (Bruck Figs. 6-9)")
    ar.add_argument("--lambda", dest="lam", type=_real_in(1, _core.postal.MAX_LAMBDA, "--lambda"),
                    required=True, help="postal latency lambda >= 1")
    ar.add_argument("--max-n", type=_int_in(2, 100_000, "--max-n"), default=250)
    ar.add_argument("--all", action="store_true", help="print every n, not only triangle tops")
    ar.add_argument("--png", metavar="FILE", help="plot the ranges (Figs. 6-7) and table sizes (Fig. 9)")
    ar.add_argument("--json", action="store_true")
    ar.set_defaults(func=cmd_alpha_range)


def _setup_commands(sub) -> None:
    """Using the library: where it is, what configures it, a tour."""
    lb = sub.add_parser("lib", help="path of libhetcoll_mpi.so, for LD_PRELOAD=$(hetcoll lib) mpirun ...")
    lb.add_argument("which", nargs="?", choices=["preload", "capi", "include", "prefix"], default="preload",
                    help="preload: libhetcoll_mpi.so (MPI_* replaced); capi: libhetcoll.so (hetcoll_* only); "
                    "include: the directory of hetcoll.h; prefix: the installed tree, for CMAKE_PREFIX_PATH "
                    "(find_package(hetcoll)) and PKG_CONFIG_PATH=PREFIX/lib/pkgconfig")
    lb.add_argument("--mpi", choices=MPI_NAMES, default=None,
                    help="the libraries built for this MPI (default: the MPI of the mpirun on PATH, if built "
                    "for it; else the first one built)")
    lb.add_argument("--json", action="store_true", help="every path, the MPI chosen and the MPIs built for")
    lb.set_defaults(func=cmd_lib)

    cf = sub.add_parser("config", help="the HETCOLL_* environment variables, their meaning and the values in effect")
    cf.add_argument("--json", action="store_true")
    cf.add_argument("--markdown", action="store_true", help="the variables as the table docs/mpi.md shows")
    cf.set_defaults(func=cmd_config)

    d = sub.add_parser("demo", help="a short tour: tables, trees, plans, predictions")
    d.add_argument("--out", default="results/demo", help="directory for the figures (default results/demo)")
    d.add_argument("--json", action="store_true", help="{out, files, text, status}: the tour's text and what it wrote")
    d.set_defaults(func=cmd_demo)


# The commands, by workflow, for `hetcoll --help`: each command's line is
# its own `help` (one place); a command missing here is listed under
# "other".
HELP_GROUPS = [
    ("measure the machine", ["probe", "profile", "subnets", "ring", "tune"]),
    ("decide: what hetcoll would do, and why", ["plan", "explain", "bound", "simulate", "validate", "crossovers",
                                                "algorithms", "models"]),
    ("run it", ["lib", "config", "export"]),
    ("hold it to the native MPI", ["bench", "report", "bench-report"]),
    ("reproduce the papers", ["predict", "whatif", "tables", "alpha-range", "demo"]),
]


class _MainParser(_Parser):
    """`hetcoll --help`: the commands grouped by workflow."""

    def format_help(self):
        import textwrap

        sub = next(a for a in self._actions if isinstance(a, argparse._SubParsersAction))
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        out = [self.format_usage().rstrip(), "", self.description, ""]
        listed = set()
        groups = HELP_GROUPS + [("other", [c for c in helps if c not in {n for _, g in HELP_GROUPS for n in g}])]
        for title, names in groups:
            names = [n for n in names if n in helps]
            if not names:
                continue
            out.append(f"{title}:")
            for n in names:
                listed.add(n)
                text = textwrap.wrap(helps[n], 58) or [""]
                out.append(f"  {n:<14}{text[0]}")
                out += [" " * 16 + t for t in text[1:]]
            out.append("")
        out += ["options:", "  -h, --help    show this help message and exit",
                "  --version     show program's version number and exit", "",
                "'hetcoll COMMAND --help' for a command's options; docs/cli.md for all of them."]
        return "\n".join(out) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = _MainParser(prog="hetcoll", description="Model-driven collective communication: measure the machine, "
                    "decide each collective from a cost model, run it under any MPI, and explain why.")
    p.add_argument("--version", action="version", version=f"hetcoll {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    _workflow_commands(sub)
    _planning_commands(sub)
    _paper_commands(sub)
    _setup_commands(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # probe and tune pass what follows "--" to mpirun.
    passed: list[str] = []
    if argv and argv[0] in ("probe", "tune", "bench") and "--" in argv:
        cut = argv.index("--")
        argv, passed = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if passed:
        args.mpirun_args = passed
    if getattr(args, "command", None) == "simulate" and not args.schedule:
        if not args.op or args.ranks is None:
            parser.error("simulate needs OP and --ranks (or --schedule FILE)")
    try:
        return args.func(args)
    except (CliError, _core.InputError, ValueError) as e:
        sys.stderr.write(f"hetcoll: error: {e}\n")
        return 2
    except _core.TooLarge as e:
        sys.stderr.write(f"hetcoll: error: too large to build here: {e}\n")
        return 2
    except MemoryError:
        sys.stderr.write("hetcoll: error: out of memory (try fewer ranks or a smaller size)\n")
        return 2
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except OSError as e:  # a path the user gave: missing, a directory, not writable
        where = f" '{e.filename}'" if e.filename else ""
        sys.stderr.write(f"hetcoll: error: {e.strerror or e}{where}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except (InternalError, _core.ScheduleError) as e:
        sys.stderr.write(f"hetcoll: internal error: {e}\n")
        return 1
    except Exception as e:  # a bug: one line, not a traceback
        sys.stderr.write(f"hetcoll: internal error: {type(e).__name__}: {e} (a bug in hetcoll, please report it)\n")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

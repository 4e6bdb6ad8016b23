"""`hetcoll plan` (and `explain`, `simulate`): the planner's decision for a
call built, validated — in full, or by a sample past the proof's limits —
simulated and said."""
from __future__ import annotations

import json
import shutil
import subprocess
import time

from .. import _core
from ..explain import bound_text, explain_lines, how as priced_how, times_bound
from ..proof import PLAN_SECONDS, PROOF_OPS, PROOF_WORK, SAMPLE_SECONDS, sampled_proof
from ..render import format_time, tree_lines, tree_dot, tree_from_schedule
from .common import CliError, InternalError, _emit_json, _timed, _write


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

"""hetcoll --help's "decide: what hetcoll would do, and why": plan, explain,
bound, simulate, validate, crossovers, algorithms, models (on a model, no
MPI)."""
from __future__ import annotations

import json
import sys

from .. import _core
from ..crossovers import crossover_lines, crossovers
from ..explain import bound_text, times_bound
from ..proof import PROOF_OPS
from ..render import format_time
from .common import MAX_RANKS, CliError, Command, Group, _emit_json, _int_in, _ranks_list, _timed, parse_size
from .plan import _build, _check_valid, _collective, _plan_record, cmd_explain, cmd_plan


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


def _plan_args(p) -> None:
    _add_collective_args(p)
    p.add_argument("--dot", metavar="FILE", help="write the tree (or message graph) as Graphviz")
    p.add_argument("--png", metavar="FILE", help="render it with Graphviz dot")
    p.add_argument("--save", metavar="FILE", help="write the schedule (text, or JSON if FILE ends in .json)")
    p.add_argument("--max-lines", type=_int_in(0, 1 << 30, "--max-lines"), default=64,
                   help="tree lines to print (default 64)")
    p.add_argument("--explain", action="store_true", help="the cost table of every candidate (latency/bandwidth/compute)")
    p.add_argument("--table", metavar="FILE", help="write the decisions for every size class (and every collective, "
                   "unless one is named) of these group sizes, for the MPI layer to load (HETCOLL_TABLE)")
    p.add_argument("--table-max", type=parse_size, default=64 << 20, help="with --table: largest size (default 64M)")
    p.add_argument("--table-elem-sizes", type=lambda t: [_int_in(1, 1 << 30, "--table-elem-sizes")(x) for x in t.split(",")],
                   default=[1, 4, 8], help="with --table: element sizes (default 1,4,8)")


def _bound_args(p) -> None:
    _add_collective_args(p)
    p.add_argument("--no-choice", action="store_true", help="the bound alone (no decision, no simulation)")


def _simulate_args(p) -> None:
    p.add_argument("op", nargs="?", help="collective (omit with --schedule)")
    p.add_argument("--schedule", metavar="FILE", help="simulate a saved schedule (text or JSON) instead")
    p.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, MAX_RANKS, "--ranks"))
    p.add_argument("--model", "-m", "--profile", dest="model", required=True,
                   help="the machine: a profile or a model spec")
    p.add_argument("--root", type=_int_in(0, MAX_RANKS - 1, "--root"), default=0)
    p.add_argument("--bytes", "-b", type=parse_size, default=8)
    p.add_argument("--elem-size", type=_int_in(1, 1 << 30, "--elem-size"), default=1)
    p.add_argument("--order-free", action="store_true")
    p.add_argument("--algorithm", "-a")
    p.add_argument("--override", metavar="RULES")
    p.add_argument("--timeline", action="store_true", help="print every op's start and end")
    p.add_argument("--json", action="store_true", help="includes rank_finish and timeline")


def _validate_args(p) -> None:
    p.add_argument("file")
    p.add_argument("--json", action="store_true")


def _crossovers_args(p) -> None:
    p.add_argument("--model", "-m", "--profile", dest="model", required=True,
                   help="the machine: a profile or a model spec")
    p.add_argument("--ranks", "-n", "--np", dest="ranks", type=_int_in(1, MAX_RANKS, "--ranks"), required=True)
    p.add_argument("--op", action="append", help="collective (repeatable; default: all)")
    p.add_argument("--max", type=parse_size, default=64 << 20, help="largest size (default 64M)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true")


def _algorithms_args(p) -> None:
    p.add_argument("--op", help="only algorithms for this collective")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="the table of docs/algorithms.md")


def _models_args(p) -> None:
    p.add_argument("--json", action="store_true", help="[{spec, doc}], one per model kind")


GROUP = Group("decide: what hetcoll would do, and why", (
    Command("plan", "build, validate and predict a collective; print its tree", cmd_plan, _plan_args),
    Command("explain", "why hetcoll chooses what it does for a call: every candidate's cost (latency, bandwidth, "
            "compute), how it was priced, the bound (= plan --explain)", cmd_explain, _add_collective_args,
            defaults=dict(dot=None, png=None, save=None, max_lines=0, explain=True, table=None, table_max=64 << 20,
                          table_elem_sizes=[1, 4, 8])),
    Command("bound", "the physical bound: the least time any schedule of a collective can take on a model (cuts of "
            "hosts and subnets over their links), beside hetcoll's choice", cmd_bound, _bound_args),
    Command("simulate", "per-rank completion times and the timeline of a schedule", cmd_simulate, _simulate_args),
    Command("validate", "validate a saved schedule (text or JSON)", cmd_validate, _validate_args),
    Command("crossovers", "the message sizes at which the planner's choice changes", cmd_crossovers,
            _crossovers_args),
    Command("algorithms", "the algorithm registry", cmd_algorithms, _algorithms_args),
    Command("models", "the machine model spec grammar", cmd_models, _models_args),
))

"""``hetcoll export``: hetcoll's decisions written as the native MPI's own
tuning file, for sites that will not LD_PRELOAD a library into production
jobs but will give their MPI a tuning file.

  - ``ompi-rules``: Open MPI's coll/tuned dynamic rules (4.1 grammar: a
    stream of integers, ``#`` comments; read with ``--mca
    coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename
    FILE``);
  - ``mpich-json``: MPICH's collective selection file (4.0 grammar;
    ``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE``, with
    ``MPIR_CVAR_DEVICE_COLLECTIVES=none`` so that it decides for the
    application's communicator rather than for the device's node-level
    pieces). MPICH needs every collective in the file: the collectives
    hetcoll does not decide keep MPICH 4.0.2's own default tree
    (data/mpich-4.0.2-generic.json, MPICH's maint/tuning/coll/mpir/generic.json).

For every collective, communicator size of the grid and size class (the
planner's quarter-octaves, up to --max), the decision point decides as the
MPI layer would (a profile's measured decisions first, then the model's
best candidate). The native algorithm written is the first of hetcoll's
ranked candidates that the native library has (the table NATIVE below:
the same communication pattern): hetcoll's own choice when it has one,
else the closest by hetcoll's own prediction — and the report says so,
with both predictions. A measured decision for native keeps the library's
own choice (Open MPI: algorithm 0).

Where the libraries' rules and hetcoll's grid meet:
  - Open MPI takes the rule of the largest communicator size <= p (and the
    first rule below the smallest); MPICH the first `comm_size<=N` that
    holds: the grid's sizes are where both agree exactly.
  - Message sizes are the libraries' own: Open MPI counts the whole buffer
    of allgather, alltoall, gather, scatter and reduce_scatter(_block)
    (p blocks), MPICH the per-peer block of alltoall and the whole buffer of
    allgather and reduce_scatter_block; hetcoll's sizes are converted.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import _core
from .render import format_time

# ----------------------------------------------------------------- the table
# hetcoll algorithm (base name; a predicate on its parameters where the
# pattern depends on them) -> the native algorithm with the same pattern.


def _k2(params: dict) -> bool:
    return params.get("k", "2") == "2"


@dataclass
class OmpiColl:
    coll_id: int  # COLLTYPE (ompi/mca/coll/base/coll_base_functions.h)
    size: str  # what Open MPI's message size is: "vector" (count*type), "all" (p blocks), "none" (always 0)
    names: dict  # algorithm number -> name (coll_tuned_<coll>_decision.c)
    same: dict  # hetcoll base name -> (number, predicate or None)


OMPI = {
    "allreduce": OmpiColl(2, "vector", {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                                        5: "segmented_ring", 6: "rabenseifner"},
                          {"recursive_doubling_allreduce": (3, None), "ring_allreduce": (4, None),
                           "rabenseifner_allreduce": (6, None), "reduce_bcast": (2, None)}),
    "bcast": OmpiColl(7, "vector", {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree",
                                    5: "binary_tree", 6: "binomial", 7: "knomial", 8: "scatter_allgather",
                                    9: "scatter_allgather_ring"},
                      {"binomial_tree": (6, None), "star_bcast": (1, None), "chain_bcast": (3, None),
                       "kary_bcast": (5, _k2), "scatter_collect": (9, None)}),
    "reduce": OmpiColl(11, "vector", {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
                                      6: "in-order_binary", 7: "rabenseifner"},
                       {"binomial_reduce": (5, None), "star_reduce": (1, None), "chain_reduce": (3, None),
                        "kary_reduce": (4, _k2), "rabenseifner_reduce": (7, None)}),
    "allgather": OmpiColl(0, "all", {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor",
                                     6: "two_proc"},
                          {"bucket_collect": (4, None), "recursive_doubling_allgather": (3, None),
                           "bruck_allgather": (2, _k2), "direct_allgather": (1, None)}),
    "alltoall": OmpiColl(3, "all", {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
                         {"pairwise_exchange": (2, None), "bruck_alltoall": (3, None), "spread_alltoall": (1, None)}),
    "barrier": OmpiColl(6, "none", {1: "linear", 2: "double_ring", 3: "recursive_doubling", 4: "bruck",
                                    5: "two_proc", 6: "tree"},
                        {"dissemination_barrier": (4, None), "tree_barrier": (6, None)}),
    "gather": OmpiColl(9, "all", {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
                       {"binomial_gather": (2, None), "star_gather": (1, None)}),
    "scatter": OmpiColl(15, "all", {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
                        {"binomial_scatter": (2, None), "star_scatter": (1, None)}),
    "reduce_scatter_block": OmpiColl(13, "all", {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving",
                                                 4: "butterfly"},
                                     {"recursive_halving_reduce_scatter": (3, None), "reduce_then_scatter": (1, None)}),
}


@dataclass
class MpichColl:
    size_key: str | None  # the JSON's message key, or None (no message size: barrier)
    size: str  # what it counts: "vector" (count*type bytes), "block" (one peer's block), "all" (p blocks)
    same: dict  # hetcoll base name -> (MPICH algorithm, predicate or None)
    fallback: str  # what a guard's other branch runs
    guards: dict = field(default_factory=dict)  # MPICH algorithm -> guard kind


MPICH = {
    # MPICH's *_smp: within each node, across the node leaders, within each
    # node again — hetcoll's hierarchical (and, on one node, reduce_bcast).
    "allreduce": MpichColl("avg_msg_size", "vector",
                           {"recursive_doubling_allreduce": ("MPIR_Allreduce_intra_recursive_doubling", None),
                            "rabenseifner_allreduce": ("MPIR_Allreduce_intra_reduce_scatter_allgather", None),
                            "hierarchical": ("MPIR_Allreduce_intra_smp", None),
                            "reduce_bcast": ("MPIR_Allreduce_intra_smp", None)},
                           "MPIR_Allreduce_intra_recursive_doubling",
                           {"MPIR_Allreduce_intra_reduce_scatter_allgather": "builtin_pof2",
                            "MPIR_Allreduce_intra_smp": "commutative"}),
    "bcast": MpichColl("avg_msg_size", "vector",
                       {"binomial_tree": ("MPIR_Bcast_intra_binomial", None),
                        "scatter_collect": ("MPIR_Bcast_intra_scatter_ring_allgather", None),
                        "hierarchical": ("MPIR_Bcast_intra_smp", None)},
                       "MPIR_Bcast_intra_binomial"),
    "reduce": MpichColl("avg_msg_size", "vector",
                        {"binomial_reduce": ("MPIR_Reduce_intra_binomial", None),
                         "rabenseifner_reduce": ("MPIR_Reduce_intra_reduce_scatter_gather", None),
                         "hierarchical": ("MPIR_Reduce_intra_smp", None)},
                        "MPIR_Reduce_intra_binomial",
                        {"MPIR_Reduce_intra_reduce_scatter_gather": "builtin_pof2",
                         "MPIR_Reduce_intra_smp": "commutative"}),
    "allgather": MpichColl("total_msg_size", "all",
                           {"bucket_collect": ("MPIR_Allgather_intra_ring", None),
                            "recursive_doubling_allgather": ("MPIR_Allgather_intra_recursive_doubling", None),
                            "bruck_allgather": ("MPIR_Allgather_intra_brucks", _k2)},
                           "MPIR_Allgather_intra_brucks",
                           {"MPIR_Allgather_intra_recursive_doubling": "pow2"}),
    "alltoall": MpichColl("avg_msg_size", "block",
                          {"pairwise_exchange": ("MPIR_Alltoall_intra_pairwise", None),
                           "bruck_alltoall": ("MPIR_Alltoall_intra_brucks", None),
                           "spread_alltoall": ("MPIR_Alltoall_intra_scattered", None)},
                          "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
                          {"MPIR_Alltoall_intra_pairwise": "not_in_place", "MPIR_Alltoall_intra_brucks": "not_in_place",
                           "MPIR_Alltoall_intra_scattered": "not_in_place"}),
    "barrier": MpichColl(None, "none", {"dissemination_barrier": ("MPIR_Barrier_intra_dissemination", None),
                                        "hierarchical": ("MPIR_Barrier_intra_smp", None)},
                         "MPIR_Barrier_intra_dissemination"),
    "reduce_scatter_block": MpichColl("total_msg_size", "all",
                                      {"recursive_halving_reduce_scatter":
                                       ("MPIR_Reduce_scatter_block_intra_recursive_halving", None)},
                                      "MPIR_Reduce_scatter_block_intra_recursive_doubling",
                                      {"MPIR_Reduce_scatter_block_intra_recursive_halving": "commutative"}),
}

FORMATS = ("ompi-rules", "mpich-json")
# The closest native candidate is written only within this factor of
# hetcoll's choice; beyond it the library's own choice is left.
CLOSE_ENOUGH = 2.0
DEFAULT_OPS = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "barrier", "reduce_scatter_block")
MPICH_GENERIC = Path(__file__).resolve().parent / "data" / "mpich-4.0.2-generic.json"


def _split(algorithm: str):
    """'chain_bcast[seg=8192,k=2]' -> ('chain_bcast', {'seg': '8192', 'k': '2'})."""
    m = re.fullmatch(r"([^\[]+)(?:\[(.*)\])?", algorithm)
    base, inside = m.group(1), m.group(2) or ""
    params = {}
    for part in filter(None, inside.split(",")):
        k, _, v = part.partition("=")
        params[k.strip()] = v.strip()
    return base, params


def _native_of(algorithm: str, table: dict):
    base, params = _split(algorithm)
    entry = table.get(base)
    if entry is None:
        return None
    native, pred = entry
    return native if pred is None or pred(params) else None


# ----------------------------------------------------------------- deciding

@dataclass
class Choice:
    lo: int  # hetcoll size (bytes of one rank's vector or block) this range starts at
    hetcoll: str  # hetcoll's decision
    predicted: float | None
    native: object  # the library's algorithm (Open MPI: number, 0 = its own; MPICH: name)
    native_predicted: float | None
    how: str  # "same", "closest", "native" (a measured decision), "none"
    candidate: str = ""  # the hetcoll candidate the native algorithm is


def decide_grid(model, op: str, p: int, max_bytes: int, elem: int, table: dict, measured_ok: bool,
                overrides: str = ""):
    """Choices for op on p ranks, one per size class up to max_bytes (a
    barrier: one), each mapped to the library's algorithm (table)."""
    out = []
    if op == "barrier":
        sizes = [0]
    else:
        sizes, c = [], 0
        while True:
            lo = _core.size_class_floor(c)
            if lo > max_bytes:
                break
            if lo % elem == 0 and (not sizes or sizes[-1] != lo):
                sizes.append(lo)
            c += 1
    if len(sizes) > 1:
        sizes = sizes[1:]  # an empty call is no decision; the first size's choice starts at 0
    for lo in sizes:
        count = lo // elem if op != "barrier" else 0
        d = _core.decide(_core.collective(op, p, count, 0, elem), model, overrides)
        if d["native"]:
            if measured_ok:
                out.append(Choice(lo, "native (measured)", d["native_time"] or None, 0, None, "native"))
                continue
        top = d["algorithm"]
        candidates = d["candidates"] or [{"algorithm": top, "predicted": d["predicted"]}]
        native, how, npred, which = None, "none", None, ""
        for i, cand in enumerate(candidates):
            n = _native_of(cand["algorithm"], table)
            if n is not None:
                native, npred, which = n, cand.get("predicted"), cand["algorithm"]
                how = "same" if cand["algorithm"] == top or i == 0 else "closest"
                break
        top_pred = d["predicted"] if not d["native"] else None
        if how == "closest" and top_pred and npred and npred > CLOSE_ENOUGH * top_pred:
            # A native algorithm far worse than hetcoll's choice (at scale the
            # planner prices few of them) is no "closest": the library decides.
            native, how = None, "far"
        out.append(Choice(lo, top, top_pred, native, npred, how, which))
    return out


def _ranges(choices):
    """Consecutive size classes with the same native algorithm, merged:
    [(lo, hi_exclusive or None, [choices])]; the first starts at 0."""
    runs = []
    for ch in choices:
        if runs and runs[-1][2][-1].native == ch.native:
            runs[-1][2].append(ch)
        else:
            runs.append([ch.lo, None, [ch]])
    for i in range(len(runs) - 1):
        runs[i][1] = runs[i + 1][0]
    if runs:
        runs[0][0] = 0
    return [tuple(r) for r in runs]


def _fmt_s(x) -> str:
    return "-" if x is None else format_time(x)


def _note(ch: Choice, name: str) -> str:
    if ch.how == "native":
        return "measured: native is fastest here; the library keeps its own choice"
    if ch.how == "none" and ch.hetcoll.startswith("native"):
        return f"measured: native is fastest here; {name} written (the file cannot say 'the library's own choice')"
    if ch.how == "same":
        return f"hetcoll's {ch.hetcoll} = {name} ({_fmt_s(ch.predicted)} predicted)"
    if ch.how == "closest":
        return (f"hetcoll's {ch.hetcoll} ({_fmt_s(ch.predicted)}) has no equivalent; closest: {name} "
                f"({_fmt_s(ch.native_predicted)} predicted)")
    if ch.how == "far":
        return (f"hetcoll's {ch.hetcoll} ({_fmt_s(ch.predicted)}) has no equivalent and the library's nearest, "
                f"{ch.candidate} ({_fmt_s(ch.native_predicted)}), is over {CLOSE_ENOUGH:g}x slower: written: {name}")
    return f"hetcoll's {ch.hetcoll}: no equivalent and no candidate the library has; written: {name}"


def _report_line(lib, written, op, p, lo, hi, chs, name) -> str:
    """One range of one rule: what was written, and why (hetcoll's own
    choice, or the closest, or none), told by its first class that is not
    hetcoll's own choice."""
    span = _core.format_bytes(lo) + (f" to <{_core.format_bytes(hi)}" if hi else " and up")
    odd = next((c for c in chs if c.how != "same"), None)
    why = "hetcoll's own choice" if odd is None else _note(odd, name) + (
        f" (at {_core.format_bytes(odd.lo)})" if len(chs) > 1 else "")
    return f"{op:<21} p={p:<5} {span:<24} {lib}: {written} -- {why}"


# ----------------------------------------------------------------- Open MPI

def _ompi_size(kind: str, lo: int, p: int) -> int:
    return 0 if kind == "none" else lo * p if kind == "all" else lo


def ompi_rules(model, ops, ranks, max_bytes, elem, overrides=""):
    """(file text, report lines)."""
    body, report = [], []
    for op in ops:
        spec = OMPI[op]
        body.append(f"{spec.coll_id}  # {op.upper()} (COLLTYPE {spec.coll_id})")
        body.append(f"{len(ranks)}  # communicator sizes")
        for p in ranks:
            table = {k: v for k, v in spec.same.items()}
            runs = _ranges(decide_grid(model, op, p, max_bytes, elem, table, True, overrides))
            if spec.size == "none":
                runs = runs[:1]
            body.append(f"{p} {len(runs)}  # {op} on {p} ranks (and up to the next size): {len(runs)} message rules")
            for lo, hi, chs in runs:
                ch = chs[0]
                alg = ch.native if ch.native is not None else 0
                name = spec.names.get(alg, "the library's own choice") if alg else "the library's own choice"
                m = _ompi_size(spec.size, lo, p)
                # A pipeline (bcast/reduce 3) needs segments: hetcoll's own
                # size where the algorithm names it, else 64 KiB.
                segsize = 0
                if op in ("bcast", "reduce") and alg == 3:
                    segsize = int(_split(ch.candidate)[1].get("seg", 65536))
                body.append(f"{m} {alg} 0 {segsize}  # from {_core.format_bytes(m)}: {name}")
                report.append(_report_line("Open MPI", f"{alg} {name}", op, p, lo, hi, chs, name))
    head = [f"# Open MPI coll/tuned dynamic rules written by hetcoll {_core.__version__}: model {model.spec}",
            f"# use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "
            f"/absolute/path/to/this/file ...",
            "# collective id / number of communicator sizes / (size, number of message rules, then per rule:",
            "#   message bytes, algorithm, fan in/out, segment bytes) -- Open MPI 4.1's grammar",
            f"{len(ops)}  # collectives"]
    return "\n".join(head + body) + "\n", report


def parse_ompi_rules(text: str) -> dict:
    """An Open MPI 4.1 rules file read as Open MPI reads it (numbers; '#'
    to the end of the line): {collective id: [(comm size, [(message bytes,
    algorithm, fan in/out, segment bytes)])]}. ValueError where Open MPI
    would drop the file: a number it would misread (octal, sign), one
    missing, one left over, or a first message rule not at 0."""
    nums = []
    for line in text.splitlines():
        for tok in line.split("#", 1)[0].split():
            if not re.fullmatch(r"0|[1-9][0-9]*", tok):
                raise ValueError(f"{tok!r}: not a plain decimal number (Open MPI reads it otherwise)")
            nums.append(int(tok))
    it = iter(nums)

    def take():
        v = next(it, None)
        if v is None:
            raise ValueError("the file ends before its last rule")
        return v

    out = {}
    for _ in range(take()):
        cid, ncs = take(), take()
        sizes = []
        for _ in range(ncs):
            cs, nms = take(), take()
            msgs = [tuple(take() for _ in range(4)) for _ in range(nms)]
            if msgs and msgs[0][0] != 0:
                raise ValueError(f"collective {cid}, {cs} ranks: the first message rule is not at 0")
            sizes.append((cs, msgs))
        out[cid] = sizes
    if next(it, None) is not None:
        raise ValueError("numbers after the last rule")
    return out


def ompi_lookup(rules: dict, coll_id: int, p: int, m: int):
    """The rule Open MPI 4.1 applies (coll_tuned_dynamic_rules.c): the last
    communicator size <= p (else the first), in it the last message size
    <= m. (algorithm, fan in/out, segment bytes), or None."""
    sizes = rules.get(coll_id)
    if not sizes:
        return None
    msgs = sizes[0][1]
    for cs, r in sizes:
        if cs <= p:
            msgs = r
    if not msgs:
        return None
    best = msgs[0]
    for r in msgs:
        if r[0] <= m:
            best = r
    return best[1:]


# ----------------------------------------------------------------- MPICH

def _mpich_size(kind: str, lo: int, p: int) -> int:
    return lo * p if kind == "all" else lo


def _leaf(name: str) -> dict:
    return {f"algorithm={name}": {}}


def _guarded(spec: MpichColl, name: str) -> dict:
    """The leaf for `name`, behind the conditions MPICH 4.0.2 asserts."""
    kind = spec.guards.get(name)
    if kind == "builtin_pof2":
        return {"is_op_built_in=yes": {"count<pow2": _leaf(spec.fallback), "count=any": _leaf(name)},
                "is_op_built_in=no": _leaf(spec.fallback)}
    if kind == "pow2":
        return {"comm_size=pow2": _leaf(name), "comm_size=any": _leaf(spec.fallback)}
    if kind == "commutative":
        return {"is_commutative=yes": _leaf(name), "is_commutative=no": _leaf(spec.fallback)}
    if kind == "not_in_place":
        return {"is_sendbuf_inplace=yes": _leaf(spec.fallback), "is_sendbuf_inplace=no": _leaf(name)}
    return _leaf(name)


def _is_smp(name) -> bool:
    return isinstance(name, str) and name.endswith("_intra_smp")


def _without_smp(tree, spec: MpichColl):
    """The same tree with every *_smp leaf run by the fallback (for
    communicators that are not a node-aware parent: MPICH asserts there)."""
    if isinstance(tree, dict):
        out = {}
        for k, v in tree.items():
            if k.startswith("algorithm=") and _is_smp(k[len("algorithm="):]):
                out[f"algorithm={spec.fallback}"] = {}
            else:
                out[k] = _without_smp(v, spec)
        return out
    return tree


def mpich_json(model, ops, ranks, max_bytes, elem, base_path=None, overrides=""):
    """(JSON text, report lines)."""
    base_path = Path(base_path) if base_path else MPICH_GENERIC
    try:
        tree = json.loads(Path(base_path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{base_path}: not an MPICH selection file ({e})") from None
    report = []
    for op in ops:
        spec = MPICH[op]
        key = f"collective={op}"
        if key not in tree:
            raise ValueError(f"{base_path}: no '{key}' tree to take the inter-communicator branch from")
        inter = {k: v for k, v in tree[key].items() if k.startswith("comm_type=inter")}
        intra = {}
        for i, p in enumerate(ranks):
            runs = _ranges(decide_grid(model, op, p, max_bytes, elem, spec.same, False, overrides))
            chain = {}
            for j, (lo, hi, chs) in enumerate(runs):
                ch = chs[0]
                name = ch.native if ch.native is not None else spec.fallback
                leaf = _guarded(spec, name)
                last = j == len(runs) - 1 or spec.size_key is None
                if last:
                    chain[f"{spec.size_key}=any" if spec.size_key else "comm_size=any"] = leaf
                else:
                    limit = _mpich_size(spec.size, hi, p) - 1
                    chain[f"{spec.size_key}<={limit}"] = leaf
                report.append(_report_line("MPICH", name, op, p, lo, hi, chs, name))
                if last:
                    break
            if spec.size_key is None:
                chain = next(iter(chain.values()))  # no message size: the leaf itself
            intra["comm_size=any" if i == len(ranks) - 1 else f"comm_size<={p}"] = chain
        if "_intra_smp" in json.dumps(intra):
            # *_smp only where MPICH made the communicator node-aware (a
            # parent); its node-level pieces and flat ones take the fallback.
            intra = {"comm_hierarchy=parent": intra, "comm_hierarchy=any": _without_smp(intra, spec)}
        tree[key] = {"comm_type=intra": intra, **inter}
    text = json.dumps(tree, indent=1)
    return text, report


def export(fmt: str, model, ops, ranks, max_bytes, elem, base=None, overrides=""):
    """(file text, report lines) of `fmt` for these collectives,
    communicator sizes and sizes up to max_bytes (counts of elem bytes);
    overrides: HETCOLL_ALGO rules, as the MPI layer would take them."""
    if fmt == "ompi-rules":
        bad = [op for op in ops if op not in OMPI]
        if bad:
            raise ValueError(f"ompi-rules: hetcoll writes no rules for {', '.join(bad)} "
                             f"(it does for {', '.join(OMPI)})")
        if base:
            raise ValueError("--base is MPICH's selection file; ompi-rules has none")
        return ompi_rules(model, ops, ranks, max_bytes, elem, overrides)
    if fmt == "mpich-json":
        bad = [op for op in ops if op not in MPICH]
        if bad:
            raise ValueError(f"mpich-json: hetcoll writes no selection for {', '.join(bad)} "
                             f"(it does for {', '.join(MPICH)})")
        return mpich_json(model, ops, ranks, max_bytes, elem, base, overrides)
    raise ValueError(f"unknown format '{fmt}' (one of {', '.join(FORMATS)})")

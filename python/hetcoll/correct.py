"""``hetcoll correct``: the model corrected from what was measured.

A profile's measured decisions (``tuned[]``: written by ``hetcoll tune``, or by
a job with ``HETCOLL_LEARN_SAVE``) hold, per collective and size, the time of
each candidate that ran on a layout of ranks on hosts. Each candidate's time
is also what the model predicts for its schedule. Where the two part, some of
the model's parameters are off; this finds which, as factors:

- a **link's bandwidth** (every link of the network tree: each host's
  interface, each rack's and subnet's uplink, each switch's fabric; a link
  with two directions has a factor on each and one on both: a network card
  negotiated down slows both),
- a **host's overheads** (its S_c, R_c, S_m, R_m: a slow rank),
- the **latency** of the network (one factor for every link and class),
- the **reduction rates** (one factor for every kernel's gamma),

each a factor f on time (f > 1: slower than the profile said; a link's
bandwidth is divided by f), held to 1/1024 … 1024. Each time's misfit is
the logarithm r of measured over predicted (relative errors count alike),
weighed by Cauchy's loss s² log(1 + (r/s)²), s = log 1.25: as r² while a
time is off by a quarter or less, and growing only as log r beyond, so that
one time far off (a call that met a hiccup of the machine: 1000× in the
mean a job kept) cannot pull a factor to itself at the cost of the many
times it fits — such times are said (the report's "times no factor
explains"), not explained. Predictions by simulation, each candidate's
schedule generated once on the profile (a correction changes times, not
schedules).

The fit, in two stages:

1. **The few factors that explain the times**, one at a time: every factor
   on a grid of powers of two (a link's rate acts through the slowest link
   of each path, so a link may matter only once it is slowed several times
   over: no small step shows it), the four most promising refined by golden
   sections, the best kept when it lowers the misfit by 5 %; at most four,
   none once the times are met within 1 %. A factor a later one explains is
   dropped. A gradient from all factors at 1 spreads a slow link's blame over
   every link its paths share, and settles there (tried first: on
   three_subnets with subnet C's uplink 8x slower it slowed A's and B's).
2. **All factors together** (Levenberg-Marquardt, sensitivities by doubling
   each factor, each time weighed by its loss as iteratively reweighted
   least squares), each pulled towards where stage 1 left it (ridge 0.02
   per squared log-factor): what is left shared out; a factor nothing
   moves stays.

A version 1 profile is corrected as the tree its classes describe (the
network the model draws from them, written as version 2), where that tree
predicts the measured candidates as the classes do (within 1 %); else as
its classes (each class's bandwidth, each host's measured interface).
The tree's structure is not changed: a link the profile lacks (racks the
probe drew flat) cannot be found this way — the factors of the links that
exist absorb what they can, and the report says how much is left.

The corrected profile keeps the measured decisions (they decide their own
sizes); the model decides every other collective, size and communicator.
``measured.corrected`` records what was done.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field

from . import _core
from .render import format_time

MAX_LOG = math.log(1024.0)   # factors held to 1/1024 … 1024
STEP = math.log(2.0)         # each sensitivity: the factor doubled
RIDGE = 0.02                 # stage 2's pull towards stage 1's factors, per log-factor squared
TREE_AGREEMENT = 0.01        # the tree form must predict within 1 % of the classes
MAX_CHOSEN = 4               # factors found one at a time, at most
SEARCHED = 4                 # of them, the most promising searched each time
MIN_GAIN = 0.05              # a factor found must lower the misfit by 5 %
TOLERANCE = 0.01             # no search once the times are met within 1 % (rms of the logs), or their spread
GOLDEN_STEPS = 10
LOSS_SCALE = math.log(1.25)  # Cauchy's loss: quadratic within a quarter, logarithmic beyond
UNEXPLAINED = 3.0            # a time still off by more than 3 LOSS_SCALEs (2x) after the fit: one no factor explains
GRID = [j * STEP for j in range(-5, 10) if j]  # powers of 2: 1/32 … 512 (powers of 4 missed 8x slow uplinks)


class CorrectionError(ValueError):
    pass


@dataclass
class Knob:
    """One factor: the fields it scales (a path into the profile's JSON and
    whether the value is a time, multiplied, or a rate, divided)."""
    name: str
    kind: str                                   # "link", "host", "latency", "reductions", "class"
    targets: list = field(default_factory=list)  # (path tuple, "time" | "rate")


@dataclass
class Sample:
    layout: int
    op: str
    bytes: int
    algorithm: str
    measured: float
    spread: float = 0.0            # log(median / min): how much the time varied where it was measured
    schedule: object = None
    coll: object = None


# ---------------------------------------------------------------- knobs

def _scaled_measure(targets, path, kind):
    targets.append((path + ("min",), kind))
    targets.append((path + ("median",), kind))


def _host_knobs(p: dict) -> list[Knob]:
    out = []
    for h, host in enumerate(p["hosts"]):
        t: list = []
        _scaled_measure(t, ("hosts", h, "Sc"), "time")
        _scaled_measure(t, ("hosts", h, "Rc"), "time")
        t += [(("hosts", h, "Sm"), "time"), (("hosts", h, "Rm"), "time")]
        out.append(Knob(f"host {host['name']}: overheads", "host", t))
    return out


def _latency_knob(p: dict) -> Knob:
    t = []
    for i, c in enumerate(p.get("classes", [])):
        t += [(("classes", i, "latency"), "time"), (("classes", i, "alpha"), "time"), (("classes", i, "Xc"), "time")]
    for i, node in enumerate(p.get("network", [])):
        for side in ("up", "down", "both", "fabric"):
            if isinstance(node.get(side), dict) and "latency" in node[side]:
                t.append((("network", i, side, "latency"), "time"))
    return Knob("latency of every link", "latency", t)


def _reduction_knob(p: dict) -> Knob:
    t = []
    for i in range(len(p.get("reductions", []))):
        _scaled_measure(t, ("reductions", i, "gamma"), "time")
    for h in range(len(p["hosts"])):
        t.append((("hosts", h, "gamma"), "time"))
    return Knob("reduction rates (gamma)", "reductions", t)


def _hosts_below(p: dict) -> list[list[str]]:
    """Per node of the tree, the names of the hosts under it (nodes come
    after their parents)."""
    below: list[list[str]] = [[] for _ in p["network"]]
    for i in reversed(range(len(p["network"]))):
        node = p["network"][i]
        if "host" in node:
            below[i].append(p["hosts"][node["host"]]["name"])
        if node["parent"] >= 0:
            below[node["parent"]] = below[i] + below[node["parent"]]
    return below


def _tree_knobs(p: dict) -> list[Knob]:
    out = []
    below = _hosts_below(p)
    for i, node in enumerate(p["network"]):
        hosts = below[i]
        where = "" if "host" in node or not hosts else \
            f" ({len(hosts)} hosts: {hosts[0]}{' … ' + hosts[-1] if len(hosts) > 1 else ''})"
        sides = [side for side in ("up", "down", "both", "fabric")
                 if isinstance(node.get(side), dict) and node[side].get("bandwidth", 0) > 0]
        for side in sides:
            what = {"up": "up", "down": "down", "both": "both ways", "fabric": "fabric"}[side]
            out.append(Knob(f"link {node['name']} {what}{where}", "link", [(("network", i, side, "bandwidth"), "rate")]))
        # A link's two directions slowed alike (a network interface or a
        # cable negotiated down): one factor, not two the search must find
        # one after the other (the first alone may fit no better than
        # another host's).
        if "up" in sides and "down" in sides:
            out.append(Knob(f"link {node['name']} up and down{where}", "link",
                            [(("network", i, side, "bandwidth"), "rate") for side in ("up", "down")]))
    return out


def _class_knobs(p: dict) -> list[Knob]:
    out = []
    for i, c in enumerate(p["classes"]):
        name = c.get("name") or f"{c['a']}-{c['b']}"
        t = [(("classes", i, k), "rate") for k in ("bandwidth", "bandwidth_alone", "bandwidth_both_ways",
                                                     "bandwidth_same_pair") if c.get(k, 0) > 0]
        t += [(("classes", i, "beta"), "time"), (("classes", i, "Xm"), "time")]
        out.append(Knob(f"class {name}: bandwidth", "class", t))
    for h, host in enumerate(p["hosts"]):
        t = [(("hosts", h, k), "rate") for k in ("nic_up", "nic_down") if host.get(k, 0) > 0]
        if t:
            out.append(Knob(f"host {host['name']}: interface", "link", t))
    return out


def knobs_of(p: dict) -> list[Knob]:
    structural = _tree_knobs(p) if p.get("network") else _class_knobs(p)
    return structural + _host_knobs(p) + [_latency_knob(p), _reduction_knob(p)]


def apply(p: dict, knobs: list[Knob], x: list[float]) -> dict:
    """A copy of `p` with every knob's fields scaled by exp(x), its own
    throughout (free to change)."""
    return json.loads(json.dumps(scaled(p, knobs, x)))


def scaled(p: dict, knobs: list[Knob], x: list[float]) -> dict:
    """`p` with every knob's fields scaled by exp(x): the dicts and lists on
    the way to a scaled field are copies, the rest is shared with `p` (the
    fit reads it thousands of times, and changes none of it)."""
    q = dict(p)
    own = {id(q)}
    for k, xk in zip(knobs, x):
        if xk == 0:
            continue
        f = math.exp(xk)
        for path, kind in k.targets:
            obj = q
            for step in path[:-1]:
                child = obj[step]
                if id(child) not in own:
                    child = dict(child) if isinstance(child, dict) else list(child)
                    own.add(id(child))
                    obj[step] = child
                obj = child
            if path[-1] in obj:
                obj[path[-1]] = obj[path[-1]] * f if kind == "time" else obj[path[-1]] / f
    return q


# ---------------------------------------------------------------- simulation

class Simulator:
    """Predicts the samples' times on a profile given as JSON."""

    def __init__(self, layouts: list[list[int]]):
        self.layouts = layouts
        self.calls = 0

    def model(self, p: dict):
        q = dict(p)
        q.pop("tuned", None)  # the measured decisions would decide, not the model
        q.pop("pairs", None)
        return _through_file(q, _core.parse_model)

    def times(self, p: dict, samples: list[Sample]) -> list[float]:
        m = self.model(p)
        groups = {}
        out = []
        for s in samples:
            if s.layout not in groups:
                hosts = self.layouts[s.layout]
                groups[s.layout] = _core.group_model(m, hosts, len(hosts))
            gm = groups[s.layout]
            self.calls += 1
            out.append(s.schedule.simulate(gm, False).makespan)
        return out


def samples_of(p: dict) -> tuple[list[Sample], list[list[int]], list[str]]:
    """Every measured time of a candidate hetcoll can simulate, its schedule
    generated once (the correction changes times, not schedules — a schedule
    generated for a model is priced on another); and what was left out."""
    samples, layouts, skipped = [], [], []
    for li, layout in enumerate(p.get("tuned", [])):
        hosts = list(layout["hosts"])
        layouts.append(hosts)
        for e in layout.get("entries", []):
            for t in e.get("times", []):
                alg, med = t["algorithm"], t.get("median", 0)
                if alg == "native":
                    continue
                if not med or med <= 0:
                    skipped.append(f"{e['op']} {e['bytes']} B {alg}: no time")
                    continue
                lo = t.get("min", 0)
                spread = math.log(med / lo) if 0 < lo <= med else 0.0
                samples.append(Sample(li, e["op"], int(e["bytes"]), alg, float(med), spread))
    if not samples:
        raise CorrectionError("the profile has no measured times of hetcoll's candidates to correct from "
                              "(run 'hetcoll tune' on it, or a job with HETCOLL_LEARN_SAVE)")
    return samples, layouts, skipped


def _generate(samples: list[Sample], model, layouts) -> list[str]:
    skipped, kept = [], []
    for s in samples:
        hosts = layouts[s.layout]
        n = len(hosts)
        elem = 8 if s.bytes % 8 == 0 and s.bytes > 0 else 1
        try:
            s.coll = _core.collective(s.op, n, s.bytes // elem, 0, elem)
            s.schedule = _core.generate(s.algorithm, s.coll, _core.group_model(model, hosts, n))
        except Exception as e:  # an algorithm this build lacks, a collective it cannot rebuild
            skipped.append(f"{s.op} {s.bytes} B {s.algorithm}: {str(e).splitlines()[0][:120]}")
            continue
        kept.append(s)
    samples[:] = kept
    return skipped


# ---------------------------------------------------------------- the fit

def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """a x = b for a symmetric positive definite a (Cholesky)."""
    n = len(b)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(L[i][k] * L[j][k] for k in range(j))
            if i == j:
                L[i][i] = math.sqrt(max(s, 1e-300))
            else:
                L[i][j] = s / L[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(L[i][k] * y[k] for k in range(i))) / L[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(L[k][i] * x[k] for k in range(i + 1, n))) / L[i][i]
    return x


def _with(x: list[float], k: int, v: float) -> list[float]:
    y = list(x)
    y[k] = max(-MAX_LOG, min(MAX_LOG, v))
    return y


def _line_search(cost_of, x: list[float], k: int) -> tuple[float, float]:
    """The best (objective, log factor) of knob k, the others held: a grid
    of powers of 2, then golden sections between the best's neighbours."""
    grid = sorted(GRID + [0.0])
    costs = [cost_of(_with(x, k, v)) for v in grid]
    i = min(range(len(grid)), key=costs.__getitem__)
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = (costs[i], grid[i])
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    ca, cb = cost_of(_with(x, k, a)), cost_of(_with(x, k, b))
    for _ in range(GOLDEN_STEPS):
        if ca < cb:
            hi, b, cb = b, a, ca
            a = hi - g * (hi - lo)
            ca = cost_of(_with(x, k, a))
        else:
            lo, a, ca = a, b, cb
            b = lo + g * (hi - lo)
            cb = cost_of(_with(x, k, b))
    return min(best, (ca, a), (cb, b))


def _loss(r: float) -> float:
    """Cauchy's loss of a log residual: r² near 0, log |r| far."""
    return LOSS_SCALE * LOSS_SCALE * math.log1p((r / LOSS_SCALE) ** 2)


def _weight(r: float) -> float:
    """The residual's weight in reweighted least squares (the loss's
    derivative over its residual's, over 2)."""
    return 1.0 / (1.0 + (r / LOSS_SCALE) ** 2)


def _objective(r: list[float], x: list[float], x0: list[float]) -> float:
    return sum(map(_loss, r)) + RIDGE * sum((v - w) * (v - w) for v, w in zip(x, x0))


@dataclass
class Correction:
    profile: dict                 # the corrected profile
    form: str                     # "tree" or "classes"
    factors: list                 # (knob name, kind, factor), every knob
    samples: list                 # (op, bytes, algorithm, measured, before, after)
    skipped: list
    simulations: int
    knobs: list                   # the Knob of each factor
    alike: dict                   # a factor's name: the names of the others that fit the times as well


class _Problem:
    """The measured times, the profile form corrected and its knobs: the
    misfit of any set of log-factors x."""

    def __init__(self, work: dict, samples: list[Sample], sim: Simulator, progress):
        self.work, self.samples, self.sim, self.progress = work, samples, sim, progress
        self.knobs = knobs_of(work)
        self.logm = [math.log(s.measured) for s in samples]
        # Met: each time within TOLERANCE, or within how much it varied where
        # it was measured (hetcoll tune's median over its minimum).
        self.floor = sum(_loss(max(TOLERANCE, s.spread)) for s in samples)
        self.alike: dict[int, list[int]] = {}  # a factor found: the others that fit as well

    def times(self, x):
        return self.sim.times(scaled(self.work, self.knobs, x), self.samples)

    def residual(self, x):
        return [lm - math.log(max(v, 1e-300)) for lm, v in zip(self.logm, self.times(x))]

    def misfit(self, x):  # stage 1's measure: the data alone (MIN_GAIN stops it)
        return sum(map(_loss, self.residual(x)))

    def say(self, what, cost):
        if self.progress:
            self.progress(what, cost)

    def search(self, x):
        """Stage 1: the few factors that explain the times, one at a time."""
        cost, chosen = self.misfit(x), []
        while len(chosen) < min(MAX_CHOSEN, len(self.knobs)) and cost >= self.floor:
            # Every factor on the grid, the most promising refined.
            screened = []
            for k in range(len(self.knobs)):
                if k not in chosen:
                    best = min(self.misfit(_with(x, k, v)) for v in GRID)
                    if best < cost:
                        screened.append((best, k))
            if not screened:
                break
            searched = [(_line_search(self.misfit, x, k), k) for _, k in sorted(screened)[:SEARCHED]]
            (c_k, v_k), k = min(searched)
            refined = [(c_j, j) for (c_j, _), j in searched]
            if c_k > cost * (1 - MIN_GAIN):
                break
            # Others that explain the times about as well: the measurements
            # cannot tell them from this one (said, not guessed between).
            near = max(2 * c_k, c_k + self.floor)
            self.alike[k] = sorted({j for c_j, j in refined + screened if j != k and c_j <= near})
            x, cost = _with(x, k, v_k), c_k
            chosen.append(k)
            self.say(f"factor {self.knobs[k].name} x{math.exp(v_k):.3g}", cost)
        # A factor found early that a later one explains goes (the search
        # took it for part of what the later one is); the others tuned again.
        for k in list(chosen):
            y = _with(x, k, 0.0)
            c_y = self.misfit(y)
            if c_y <= max(cost * (1 + MIN_GAIN), self.floor):
                x, cost = y, c_y
                chosen.remove(k)
                self.alike.pop(k, None)
                self.say(f"factor {self.knobs[k].name} dropped", cost)
        for k in chosen:
            c_k, v_k = _line_search(self.misfit, x, k)
            if c_k < cost:
                x, cost = _with(x, k, v_k), c_k
        return x

    def polish(self, x, iterations):
        """Stage 2: all factors together (Levenberg-Marquardt, sensitivities
        by doubling each), each pulled towards where stage 1 left it."""
        x0, n = list(x), len(self.samples)
        r = self.residual(x)
        cost, mu = _objective(r, x, x0), 1e-3
        for it in range(iterations):
            logt = [lm - v for lm, v in zip(self.logm, r)]
            J = [[(math.log(max(v, 1e-300)) - b) / STEP for v, b in zip(self.times(_with(x, k, x[k] + STEP)), logt)]
                 for k in range(len(self.knobs))]  # per knob: d log T / d x
            active = [k for k in range(len(self.knobs)) if any(abs(v) > 1e-9 for v in J[k])]
            if not active:
                break
            improved = False
            w = [_weight(v) for v in r]  # a time far off weighs little
            for _ in range(6):
                A = [[sum(w[s] * J[i][s] * J[j][s] for s in range(n)) + ((RIDGE + mu) if i == j else 0.0)
                      for j in active] for i in active]
                g = [sum(w[s] * J[i][s] * r[s] for s in range(n)) - RIDGE * (x[i] - x0[i]) for i in active]
                xn = list(x)
                for i, di in zip(active, _solve(A, g)):
                    xn[i] = max(-MAX_LOG, min(MAX_LOG, x[i] + di))
                rn = self.residual(xn)
                cn = _objective(rn, xn, x0)
                if cn < cost:
                    x, r, cost, mu, improved = xn, rn, cn, mu / 3, True
                    break
                mu *= 4
            self.say(f"joint round {it + 1}", cost)
            if not improved or cost < 1e-8:
                break
        return x


def _form(p: dict, samples: list[Sample], sim: Simulator, layouts) -> tuple[str, dict, list[str]]:
    """Which form of `p` is corrected ("tree" or "classes", and it), the
    samples' schedules generated; what could not be."""
    skipped = _generate(samples, sim.model(p), layouts)
    if p.get("network"):
        return "tree", p, skipped
    tree = _tree_of(p)
    if samples:
        a, b = sim.times(p, samples), sim.times(tree, samples)
        if max(abs(u - v) / u for u, v in zip(a, b) if u > 0) <= TREE_AGREEMENT:
            return "tree", tree, skipped
    return "classes", p, skipped


def _prepare(p: dict):
    """The samples (schedules generated), the simulator, the form corrected
    and what was left out."""
    samples, layouts, skipped = samples_of(p)
    sim = Simulator(layouts)
    form, work, more = _form(p, samples, sim, layouts)
    skipped += more
    if not samples:
        raise CorrectionError("none of the measured candidates could be rebuilt: " + "; ".join(skipped[:3]))
    return samples, sim, form, work, skipped


def _solve_factors(work, samples, sim, iterations, progress=None):
    problem = _Problem(work, samples, sim, progress)
    x = problem.polish(problem.search([0.0] * len(problem.knobs)), iterations)
    return problem, x


def fit(p: dict, iterations: int = 6, progress=None) -> Correction:
    """`p` corrected from its measured times (module docstring)."""
    samples, sim, form, work, skipped = _prepare(p)
    problem, x = _solve_factors(work, samples, sim, iterations, progress)
    before = problem.times([0.0] * len(problem.knobs))
    after = problem.times(x)
    return Correction(apply(work, problem.knobs, x), form,
                      [(k.name, k.kind, math.exp(v)) for k, v in zip(problem.knobs, x)],
                      [(s.op, s.bytes, s.algorithm, s.measured, b, a) for s, b, a in zip(samples, before, after)],
                      skipped, sim.calls, problem.knobs,
                      {problem.knobs[k].name: [problem.knobs[j].name for j in js] for k, js in problem.alike.items()})


def cross_validate(p: dict, iterations: int = 2, progress=None) -> list[tuple]:
    """Each measured decision (collective and size on a layout) left out in
    turn: the factors fitted on the others, its times predicted by them.
    Rows (op, bytes, median error before, after): does the correction hold
    for calls it was not fitted on?"""
    samples, sim, _, work, _ = _prepare(p)
    groups: dict = {}
    for s in samples:
        groups.setdefault((s.layout, s.op, s.bytes), []).append(s)
    if len(groups) < 2:
        raise CorrectionError("cross-validation needs measured decisions of two collectives or sizes at least")
    rows = []
    knobs = knobs_of(work)
    before_all = dict(zip(map(id, samples), sim.times(work, samples)))
    for i, (key, held) in enumerate(groups.items()):
        if progress:
            progress(f"cross-validation {i + 1}/{len(groups)}: {key[1]} {key[2]} B left out", None)
        rest = [s for s in samples if (s.layout, s.op, s.bytes) != key]
        _, x = _solve_factors(work, rest, sim, iterations)
        after = sim.times(scaled(work, knobs, x), held)

        def median_error(pred):
            e = sorted(abs(v - s.measured) / s.measured for v, s in zip(pred, held))
            return e[len(e) // 2]

        rows.append((key[1], key[2], median_error([before_all[id(s)] for s in held]), median_error(after)))
    return rows


def _through_file(p: dict, read):
    """read(path) of the profile `p` written to a temporary file (the C++
    reader takes paths), the file removed after."""
    fd, path = tempfile.mkstemp(prefix="hetcoll-correct-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(p))  # json.dumps encodes in C; json.dump to a file in Python, 10x slower
        return read(path)
    finally:
        os.unlink(path)


def _tree_of(p: dict) -> dict:
    """The version 1 profile `p` with its classes drawn as a network tree."""
    return json.loads(_through_file(p, _core.profile_as_tree))


# ---------------------------------------------------------------- report

def errors(c: Correction) -> tuple[float, float, float, float]:
    """Median and largest relative error of the predictions, before and after."""
    def stats(i):
        e = sorted(abs(row[i] - row[3]) / row[3] for row in c.samples)
        return e[len(e) // 2], e[-1]
    mb, xb = stats(4)
    ma, xa = stats(5)
    return mb, xb, ma, xa


def unexplained(c: Correction) -> list[int]:
    """The samples still off by more than UNEXPLAINED loss scales (2x)
    after the fit: times no factor explains (they weigh little in it)."""
    return [i for i, row in enumerate(c.samples)
            if abs(math.log(row[3] / max(row[5], 1e-300))) > UNEXPLAINED * LOSS_SCALE]


def changed(c: Correction, threshold: float = 0.1) -> list:
    out = [f for f in c.factors if abs(math.log(f[2])) > math.log(1 + threshold)]
    return sorted(out, key=lambda f: -abs(math.log(f[2])))


def summary(c: Correction, when: str) -> str:
    mb, xb, ma, xa = errors(c)
    parts = [f"{n} x{f:.3g}" + (f" (or one of {len(c.alike[n])} others alike)" if c.alike.get(n) else "")
             for n, _, f in changed(c)[:12]]
    odd = len(unexplained(c))
    return (f"{when} hetcoll correct: {len(c.samples)} measured times, corrected as its {c.form}; "
            f"median error {mb * 100:.1f} % -> {ma * 100:.1f} % (largest {xb * 100:.0f} % -> {xa * 100:.0f} %); "
            + ("; ".join(parts) if parts else "no factor moved more than 10 %")
            + (f"; {odd} time{'s' if odd > 1 else ''} no factor explains" if odd else ""))


def record(c: Correction, when: str) -> dict:
    """The corrected profile, with what was done in measured.corrected and
    each changed link's `how`."""
    p = c.profile
    p["measured"]["corrected"] = summary(c, when)[:4096]
    moved = {name for name, _, _ in changed(c)}
    on_link: dict = {}  # a link of the tree: the product of the factors moved on it
    for knob, (name, kind, f) in zip(c.knobs, c.factors):
        if kind != "link" or name not in moved:
            continue
        for path, _ in knob.targets:
            if path[0] == "network":
                on_link[path[1:3]] = on_link.get(path[1:3], 1.0) * f
    for (i, side), f in on_link.items():  # its link's how
        link = p["network"][i][side]
        link["how"] = (f"{link.get('how', '')}; corrected x{f:.3g} from measured times "
                       f"({when})").lstrip("; ")[:512]
    return p


def lines(c: Correction) -> list[str]:
    mb, xb, ma, xa = errors(c)
    out = [f"hetcoll: {len(c.samples)} measured times of hetcoll's candidates; the profile corrected as its "
           f"{c.form}, {len(c.factors)} factors, {c.simulations} simulations",
           f"  prediction error: median {mb * 100:.1f} % -> {ma * 100:.1f} %, largest {xb * 100:.0f} % -> "
           f"{xa * 100:.0f} %"]
    moved = changed(c)
    if moved:
        out.append("  factors moved more than 10 % (time: > 1 slower than the profile said)")
        for name, kind, f in moved:
            out.append(f"    x{f:<7.3g} {name}")
            alike = c.alike.get(name, [])
            if alike:
                out.append(f"             the times fit as well with {', '.join(alike[:3])}"
                           + (f" or {len(alike) - 3} more" if len(alike) > 3 else "")
                           + " instead: these measurements cannot tell them apart (calls from other roots, or "
                           "on other groups, would)")
    else:
        out.append("  no factor moved more than 10 %")
    odd = set(unexplained(c))
    if odd:
        out.append(f"  {len(odd)} time{'s' if len(odd) > 1 else ''} no factor explains (marked *: still more than 2x "
                   "off after the fit): a call that met a hiccup of the machine, or what the model lacks; each "
                   "weighs as little as a time off by a few times, so it cannot pull a factor to itself")
    out.append(f"  {'collective':<10} {'bytes':>9}  {'algorithm':<28} {'measured':>10} {'before':>10} {'after':>10}")
    for i, (op, b, alg, m, before, after) in enumerate(c.samples):
        out.append(f"  {op:<10} {b:>9}  {alg[:28]:<28} {format_time(m, 's'):>10} {format_time(before, 's'):>10} "
                   f"{format_time(after, 's'):>10}" + (" *" if i in odd else ""))
    for s in c.skipped:
        out.append(f"  left out: {s}")
    return out


def cross_validation_lines(rows: list[tuple]) -> list[str]:
    before = sorted(r[2] for r in rows)
    after = sorted(r[3] for r in rows)
    out = [f"  each measured decision left out in turn, its times predicted from the others' factors: median error "
           f"{before[len(before) // 2] * 100:.1f} % -> {after[len(after) // 2] * 100:.1f} %"]
    for op, b, x, y in rows:
        out.append(f"    {op:<10} {b:>9}  {x * 100:5.1f} % -> {y * 100:5.1f} %")
    return out


def decisions(p: dict) -> int:
    """How many measured decisions (collective and size on a layout) the
    profile holds: cross-validation needs two."""
    return sum(len(t.get("entries", [])) for t in p.get("tuned", []))


def verdict(held_out, forced: bool) -> dict:
    """Whether a corrected profile is written, and why: only where, each
    measured decision left out in turn, the others' factors predict it no
    worse (median) than the profile did — a correction that chased what
    the factors cannot explain would misprice every call it was not fitted
    on."""
    if forced:
        return {"write": True, "why": "--force: not cross-validated"}
    if held_out is None:
        return {"write": True, "why": "one measured decision: nothing to cross-validate against"}
    before = sorted(r[2] for r in held_out)[len(held_out) // 2]
    after = sorted(r[3] for r in held_out)[len(held_out) // 2]
    said = f"cross-validated over {len(held_out)} decisions: median error {before * 100:.1f} % -> {after * 100:.1f} %"
    if after <= before:
        return {"write": True, "why": said}
    return {"write": False, "why": f"the correction does not hold for calls it was not fitted on ({said}); "
                                   "--force writes it anyway"}

"""Machine profiles from Python: run the probe, summarise a profile, its
subnets and its ring (``hetcoll probe``, ``hetcoll profile show``,
``hetcoll subnets``, ``hetcoll ring``).

Profiles are read by the C++ reader (``_core.load_profile``: the one place
that checks them) and handled here as the JSON it returns.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from . import _core
from .render import format_time as _format_time


def format_time(t: float) -> str:
    return _format_time(t, "s")


def load(path: str, with_pairs: bool = True) -> dict:
    """The profile at ``path``, checked (raises _core.InputError when it is not one)."""
    return json.loads(_core.load_profile(str(path), with_pairs))


def probe_executable(name: str = "hetcoll-probe") -> str:
    """The installed hetcoll-probe (or hetcoll-tune), built with the MPI libraries."""
    exe = Path(__file__).resolve().parent / "bin" / name
    return str(exe)


def tuned_lines(p: dict) -> list[str]:
    """The measured decisions (hetcoll tune), per layout: the winner per
    collective and size, against native."""
    out = []
    for t in p.get("tuned", []):
        hosts = sorted(set(t["hosts"]))
        out += ["", f"measured decisions for {len(t['hosts'])} ranks on {len(hosts)} host(s), {t['repeats']} repeats, "
                f"{t['created']} (median per call; winner first):"]
        for e in t["entries"]:
            # The winner first (native also wins a near-tie: hetcoll-tune's margin), then by median.
            times = sorted(e["times"], key=lambda x: (x["algorithm"] != e["winner"], x["median"]))
            native = next((x["median"] for x in e["times"] if x["algorithm"] == "native"), None)
            best = times[0]
            vs = f"  native {format_time(native)}" if native is not None and best["algorithm"] != "native" else ""
            others = ", ".join(f"{x['algorithm']} {format_time(x['median'])}" for x in times[1:]
                               if x["algorithm"] != "native" or best["algorithm"] == "native")
            how = f"  [{e['timing']}]" if e.get("timing", "Fig. 2") != "Fig. 2" else ""
            out.append(f"  {e['op']:<21} {e['bytes']:>9} B  {best['algorithm']} {format_time(best['median'])}{vs}"
                       f"   ({others}){how}")
    return out


LAUNCHERS = ("auto", "srun", "mpirun", "mpiexec")


def in_slurm_allocation() -> bool:
    """Inside a Slurm job or allocation (salloc, sbatch), with srun at hand."""
    return bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def default_np(fallback: int | None) -> int | None:
    """The ranks to run when --np is not given: the allocation's tasks inside
    Slurm (SLURM_NTASKS), else `fallback`."""
    n = os.environ.get("SLURM_NTASKS") if in_slurm_allocation() else None
    if n and n.isdigit() and int(n) > 0:
        return int(n)
    return fallback


def launcher_flavor(launcher: str | None) -> str:
    """The MPI of a launcher (mpirun, mpiexec): openmpi, mpich or unknown."""
    if not launcher:
        return "unknown"
    try:
        out = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=30)
        version = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "Open MPI" in version or "OpenRTE" in version:
        return "openmpi"
    return "mpich" if ("HYDRA" in version or "MPICH" in version) else "unknown"


def installed_mpis() -> dict:
    """The MPIs the installed libraries are built for, as the build wrote
    them (lib/hetcoll/mpis.json): {"default": "openmpi", "mpis": {"openmpi":
    "", "mpich": "mpich"}} — each MPI's directory under lib/."""
    f = Path(__file__).resolve().parent / "lib" / "hetcoll" / "mpis.json"
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return {"default": None, "mpis": {}}


def programs_mpi() -> str:
    """The MPI the measuring programs were built against (the first built)."""
    return installed_mpis().get("default") or "openmpi"


def mpirun_command(np: int, program: list[str], extra: list[str], launcher: str = "auto") -> tuple[list[str], dict]:
    """The command that runs PROGRAM on NP ranks, and its environment.

    launcher "auto": srun inside a Slurm allocation (the hosts are the
    allocation's), else mpirun (or mpiexec). srun starts the ranks through
    PMIx for Open MPI and PMI-2 for MPICH (the MPI the programs were built
    against). Open MPI gets --oversubscribe and yields when idle (more ranks
    than cores would otherwise poll each other to a crawl), and may run as
    root."""
    if launcher not in LAUNCHERS:
        raise ValueError(f"--launcher {launcher}: one of {', '.join(LAUNCHERS)}")
    if launcher == "auto":
        launcher = "srun" if in_slurm_allocation() else "mpirun"
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if launcher == "srun":
        exe = shutil.which("srun")
        if not exe:
            raise ValueError("--launcher srun: no srun on PATH (Slurm's client: apt-get install slurm-client)")
        mpi = programs_mpi()
        if mpi == "openmpi":
            env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        return [exe, "-n", str(np), f"--mpi={'pmix' if mpi == 'openmpi' else 'pmi2'}", *extra, *program], env
    exe = shutil.which(launcher) or (shutil.which("mpiexec") if launcher == "mpirun" else shutil.which("mpirun"))
    if not exe:
        raise ValueError(f"no {launcher} on PATH (apt-get install openmpi-bin)")
    flags: list[str] = []
    if launcher_flavor(exe) == "openmpi":
        flags = ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
    return [exe, "-n", str(np), *flags, *extra, *program], env


def _host_label(p: dict, h: int) -> str:
    return p["hosts"][h]["name"]


def _per_byte(x: float) -> str:
    """A cost per byte (beta, gamma) as hetcoll writes one: '0.316 ns/B'."""
    return f"{x * 1e9:.3g} ns/B"


def _bw(x: float) -> str:
    if x <= 0:
        return "-"
    for unit, f in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if x >= f:
            return f"{x / f:.3g} {unit}"
    return f"{x:.3g} B/s"


def show_lines(p: dict) -> list[str]:
    """A summary: how it was measured, hosts, classes, kernels, λ(m)."""
    m = p["measured"]
    hosts = p["hosts"]
    out = [
        f"profile (format {p['format']} v{p['version']}), measured {m['created']} by {m['tool']}",
        f"  MPI: {m['mpi']}",
        f"  {m['ranks']} ranks on {len(hosts)} hosts in {p['subnets']['count']} subnets; "
        f"{m['mode']} pairs, {m['repeats']} repeats, {m['small_bytes']} B / {m['large_bytes']} B messages; "
        f"took {m['seconds']:.2f} s" + (f" of a {m['budget_s']:.0f} s budget" if m["budget_s"] else "")
        + (" (budget reached: fewer repeats or phases)" if m["budget_exhausted"] else ""),
    ]
    if m.get("corrected"):
        out.append(f"  corrected: {m['corrected']}")
    out += [
        "",
        "hosts:",
        f"  {'host':<20} {'ranks':>5} {'subnet':>6} {'S_c':>9} {'S_m':>11} {'R_c':>9} {'R_m':>11} {'gamma':>11}",
    ]
    shown = hosts if len(hosts) <= 32 else hosts[:16] + hosts[-8:]
    for i, h in enumerate(shown):
        if len(hosts) > 32 and i == 16:
            out.append(f"  … {len(hosts) - 24} more")
        out.append(f"  {h['name'][:20]:<20} {len(h['ranks']):>5} {h['subnet']:>6} {format_time(h['Sc']['median']):>9} "
                   f"{_per_byte(h['Sm']):>11} {format_time(h['Rc']['median']):>9} {_per_byte(h['Rm']):>11} "
                   f"{_per_byte(h['gamma']):>11}")
    out += ["", "pair classes (one-way small-message latency, large-message bandwidth; Hockney alpha, beta):",
            f"  {'class':<16} {'pairs':>6} {'latency':>9} {'bandwidth':>11} {'alone':>11} {'slowdown':>8} "
            f"{'both ways':>11} {'one pair':>11} {'X_c':>9} {'X_m':>11}"]
    for c in p["classes"]:
        # 'both ways': two other pairs in opposite directions at once, each
        # way; 'one pair': one pair to each other at once, receives posted
        # first (older profiles lack them: not measured).
        same = c.get("bandwidth_same_pair", 0)
        out.append(f"  {c['name']:<16} {c['pairs']:>6} {format_time(c['latency']):>9} {_bw(c['bandwidth']):>11} "
                   f"{_bw(c['bandwidth_alone']):>11} {c['slowdown']:>7.2f}x {_bw(c.get('bandwidth_both_ways', 0)):>11} "
                   f"{_bw(same):>11} {format_time(c['Xc']):>9} {_per_byte(c['Xm']):>11}")
    bp = p.get("backplane")
    if bp:
        found = (f"a backplane of {_bw(bp['bandwidth'])} on every route between hosts" if bp["bandwidth"] > 0
                 else "no backplane")
        out += ["", f"backplane: {bp['flows']} flows between hosts at once moved {_bw(bp['aggregate'])} together, "
                    f"{_bw(bp['expected'])} alone: {found}"]
    sh = p.get("sharing")
    if sh:
        name = [h["name"] for h in p["hosts"]]
        out += ["", f"sharing: {name[sh['far']]} -> {name[sh['receiver']]} ({format_time(sh['far_latency'])}) moved "
                    f"{_bw(sh['far_alone'])} alone, {_bw(sh['far_shared'])} beside a stream from {name[sh['near']]} "
                    f"({format_time(sh['near_latency'])}, {_bw(sh['near_alone'])} alone)"]
    if p["reductions"]:
        out += ["", "reductions (gamma, s per byte, hetcoll's kernels): " + ", ".join(
            f"{r['op']} {r['type']} {_per_byte(r['gamma']['median'])}" for r in p["reductions"])]
    out += lambda_lines(p)
    out += tuned_lines(p)
    return out


def _rate(t: dict, link: int) -> str:
    return "unlimited" if link < 0 else f"{t['links'][link]['bandwidth'] / 1e6:.4g} MB/s"


def _edge(t: dict, node: dict) -> str:
    """A node's edge to its parent: one link both ways, or one each way."""
    up, down = node["up"], node["down"]
    if up < 0 and down < 0:
        return "unlimited"
    if up == down:
        return f"{_rate(t, up)} shared by both directions"
    if up >= 0 and down >= 0 and t["links"][up]["bandwidth"] == t["links"][down]["bandwidth"]:
        return f"{_rate(t, up)} each way"
    return f"{_rate(t, up)} up, {_rate(t, down)} down"


def _latency(t: dict, node: dict) -> str:
    lat = {t["links"][l]["latency"] for l in (node["up"], node["down"]) if l >= 0}
    lat.discard(0)
    return f", {format_time(max(lat))}" if lat else ""


def topology_lines(t: dict | None) -> list[str]:
    """The network the runtime's model builds from the profile (model/topology.hpp),
    drawn as its tree: each switch with its uplink and fabric, hosts whose
    edges are alike on one line."""
    if not t:
        return []
    out = ["", "network (a tree; links the simulator shares among concurrent messages, max-min fairly"
               + (", weighted by latency" if t.get("latency_sharing", 0) > 0 else "") + "):"]
    nodes = t["nodes"]
    children: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        if n["parent"] >= 0:
            children.setdefault(n["parent"], []).append(i)

    # One fabric every switch has: a backplane all traffic between hosts crosses.
    fabrics = {n["fabric"] for n in nodes if n["host"] < 0}
    backplane = fabrics.pop() if len(fabrics) == 1 and -1 not in fabrics else -1

    def draw(i: int, indent: str) -> None:
        n = nodes[i]
        kids = children.get(i, [])
        hosts = [k for k in kids if nodes[k]["host"] >= 0]
        switches = [k for k in kids if nodes[k]["host"] < 0]
        line = indent + (n["name"] if i else "root")
        if i:
            line += f": uplink {_edge(t, n)}{_latency(t, n)}"
        if n["fabric"] >= 0 and n["fabric"] != backplane:
            line += ("; " if i else ": ") + f"fabric {_rate(t, n['fabric'])}"
        out.append(line)
        # Hosts with the same edge, one line each kind.
        kinds: dict[str, list[str]] = {}
        for k in hosts:
            kinds.setdefault(_edge(t, nodes[k]) + _latency(t, nodes[k]), []).append(nodes[k]["name"])
        for edge, names in kinds.items():
            shown = ", ".join(names[:4]) + (f", … ({len(names)} hosts)" if len(names) > 4 else "")
            out.append(f"{indent}  hosts {shown}: interfaces {edge}")
        for k in switches:
            draw(k, indent + "  ")

    draw(0, "  ")
    if backplane >= 0:
        out.append(f"  backplane: {_rate(t, backplane)} shared by all traffic between hosts")
    if t.get("latency_sharing", 0) > 0:
        out.append(f"  messages share a link in proportion to latency^-{t['latency_sharing']:.2f} "
                   "(long latencies get less, as the probe found)")
    conn = t.get("connection", [])
    G = len(set(t["group_of_host"]))
    # A group's name: its switch under the root (hosts hanging off the root: "the root's hosts").
    names = ["the root's hosts"] * G
    for h, g in enumerate(t["group_of_host"]):
        k = t["node_of_host"][h]
        while nodes[k]["parent"] > 0:
            k = nodes[k]["parent"]
        if nodes[k]["host"] < 0:
            names[g] = nodes[k]["name"]
    if conn and len(conn) == G * G:
        for a in range(G):
            for b in range(a, G):
                if conn[a * G + b] > 0:
                    where = f"inside {names[a]}" if a == b else f"between {names[a]} and {names[b]}"
                    out.append(f"  connection of two ranks {where}: {conn[a * G + b] / 1e6:.4g} MB/s, one direction at "
                               "a time (one pair took turns sending both ways)")
    return out


def lambda_lines(p: dict) -> list[str]:
    """Bruck §2.2: λ(m) and t0(m) from both experiments, side by side."""
    if not p["lambda"]:
        return ["", "lambda: not measured (needs 3 or more ranks, or the budget ran out)"]
    out = ["", "Bruck's lambda (fit over k = 1..K; experiment 1 | experiment 2):",
           f"  {'bytes':>8} {'sends':<11} {'t0':>9} {'lambda':>7} | {'t0':>9} {'lambda':>7}  spread"]
    for l in p["lambda"]:
        a, b = l["fit1"], l["fit2"]
        # λ < 1 (a fit on a network far from the postal model: subnets, or
        # more processes than cores) has no meaningful spread.
        mean = (a["lambda"] + b["lambda"]) / 2
        spread = f"{100 * abs(a['lambda'] - b['lambda']) / mean:5.1f}%" if a["lambda"] >= 1 and b["lambda"] >= 1 else "    -"
        out.append(f"  {l['bytes']:>8} {l['sends']:<11} {format_time(a['t0']):>9} {a['lambda']:>7.3f} | "
                   f"{format_time(b['t0']):>9} {b['lambda']:>7.3f}  {spread}")
    if any(l["fit1"]["lambda"] < 1 or l["fit2"]["lambda"] < 1 for l in p["lambda"]):
        out.append("  (lambda < 1: the postal model does not describe this network; hetcoll plans on the profile's "
                   "per-host and per-class costs and its topology instead)")
    return out


def subnet_lines(p: dict, threshold: float | None = None) -> list[str]:
    """The subnets (recomputed with ``threshold`` when given), the threshold
    and the gap that separates them."""
    n = len(p["hosts"])
    if threshold is None:
        sub = [h["subnet"] for h in p["hosts"]]
        groups: list[list[int]] = [[] for _ in range(p["subnets"]["count"])]
        for h, s in enumerate(sub):
            groups[s].append(h)
        thr, gap = p["subnets"]["threshold"], p["subnets"]["gap"]
    else:
        part = _core.partition_subnets(p["pairs"]["small_min"], n, threshold)
        groups, thr, gap = part["groups"], part["threshold"], part["gap"]
        sub = part["subnet_of"]
    cost = p["pairs"]["small_min"]
    out = [f"{len(groups)} subnet{'s' if len(groups) != 1 else ''} of {n} hosts (ECO's rule: an edge joins two "
           f"hosts within {100 * thr:.0f}% of the cheapest edge of each and of its subnet)"]
    for s, g in enumerate(groups):
        inside = [max(cost[i * n + j], cost[j * n + i]) for i in g for j in g if i < j]
        lat = f"latency {format_time(min(inside))}-{format_time(max(inside))}" if inside else "one host"
        names = ", ".join(_host_label(p, h) for h in g[:12]) + (f", … ({len(g)} hosts)" if len(g) > 12 else "")
        out.append(f"  subnet {s}: {names}  [{lat}]")
    if len(groups) > 1:
        between = [max(cost[i * n + j], cost[j * n + i]) for i in range(n) for j in range(i + 1, n) if sub[i] != sub[j]]
        inside = [max(cost[i * n + j], cost[j * n + i]) for i in range(n) for j in range(i + 1, n) if sub[i] == sub[j]]
        out.append(f"gap: the cheapest edge between subnets ({format_time(min(between))}) is {gap:.1f}x the most "
                   f"expensive inside one ({format_time(max(inside)) if inside else '-'})")
    return out


def ring_lines(p: dict) -> list[str]:
    ring = p["ring"]["hosts"]
    sub = [h["subnet"] for h in p["hosts"]]
    out = [f"ring of {len(ring)} hosts, crossing between subnets {p['ring']['crossings']} times "
           f"(at least {p['subnets']['count'] if p['subnets']['count'] > 1 else 0}):"]
    line = []
    for i, h in enumerate(ring):
        line.append(f"{_host_label(p, h)}[{sub[h]}]")
    out.append("  " + " -> ".join(line) + (" -> (back to the start)" if len(ring) > 1 else ""))
    return out

#!/usr/bin/env python3
"""An emulated cluster on this one machine, from a small topology file.

One network namespace per host, a Linux bridge per subnet (in a switch
namespace of its own), a router namespace joining the subnets; tbf on every
host's interface (both ways) and on every subnet's uplink (both ways);
one-way latency between subnets added by delayd (a TUN forwarder in C:
netem is not available here); slow hosts as cgroup CPU quotas (v1 or v2);
Open MPI launching ranks inside their namespaces through rsh-agent (each
rank with its host's name and TMPDIR, several per host where the topology
says so). Every namespace gets its own /etc/netns/NS/hosts and a resolv.conf
of 127.0.0.1: no name lookup leaves the machine, and the only traffic is
between these namespaces.

    cluster.py check                     can this machine build one? (exit 0/1, says why)
    cluster.py up TOPO.toml              build it (tearing down a stale one first)
    cluster.py down                      tear down everything this script made
    cluster.py run TOPO.toml -- CMD …    up, CMD inside the first host's namespace, down
    cluster.py exec -- CMD …             CMD inside the first host's namespace of a cluster that is up
    cluster.py show TOPO.toml            the hosts, addresses, rates and delays
    cluster.py shape SUBNET RATE         a cluster that is up: SUBNET's uplink now RATE, both
                                         ways (a degraded or restored link, while a job runs)

Inside, mpirun needs no extra arguments: OMPI_MCA_* variables name the
hostfile (a host's slots = its ranks), the launcher and the interfaces.
`run` tears down whatever happens (an exception, Ctrl-C, SIGTERM) and
leaves nothing behind: namespaces, bridges, delayd, cgroups, /etc/netns
entries, the state directory.

The topology file (TOML; testbed/netns/topologies/ has examples):

    prefix = "10.77"                  # subnet i is PREFIX.i.0/24 (default)
    [[subnet]]
    name = "A"
    hosts = ["a0", "a1", "a2"]
    rate = "1gbit"                    # each host's interface, each way
    uplink = "100mbit"                # the subnet's link to the router, each way
    racks = [["a0", "a1"], ["a2"]]    # optional: racks inside the subnet, each behind
    rack_uplink = "200mbit"           #   a link of this rate to the subnet's switch (each
                                      #   way; one IP subnet, no delay: only bandwidth tells)
    [delay]                           # one-way, both directions; "0" if absent
    "A-B" = "1ms"
    [ranks]                           # ranks per host (default 1)
    a0 = 2
    [slow]                            # CPU share of one core for slow hosts
    c1 = 0.5
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

HERE = Path(__file__).resolve().parent
FRAME = 1514                       # an Ethernet frame at MTU 1500, header included
NS = "hc-"                         # every namespace this script makes starts so
STATE = Path(os.environ.get("HC_NETNS_STATE", "/run/hetcoll-netns"))
ROUTER = NS + "router"
TUN = "hcdly0"
DELAY_TABLE = 100
CGROUP_NAME = "hetcoll-netns"


class TopologyError(ValueError):
    pass


# ---------------------------------------------------------------- topology

_UNITS_RATE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}
_UNITS_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def parse_rate(text, what: str) -> float:
    """'100mbit' → bits/s."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]+)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS_RATE:
        raise TopologyError(f"{what}: '{text}' is not a rate (e.g. 100mbit, 1gbit)")
    v = float(m.group(1)) * _UNITS_RATE[m.group(2).lower()]
    if not 1e5 <= v <= 1e11:
        raise TopologyError(f"{what}: {text} is outside 100kbit … 100gbit")
    return v


def parse_time(text, what: str) -> float:
    """'1.5ms' → seconds."""
    if str(text).strip() == "0":
        return 0.0
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(s|ms|us)\s*", str(text))
    if not m:
        raise TopologyError(f"{what}: '{text}' is not a delay (e.g. 500us, 2ms)")
    v = float(m.group(1)) * _UNITS_TIME[m.group(2)]
    if v > 1.0:
        raise TopologyError(f"{what}: {text} is more than 1 s")
    return v


@dataclass
class Host:
    name: str
    subnet: int
    index: int          # within the subnet
    ranks: int = 1
    cpu: float = 1.0    # share of one core (1: not limited)

    @property
    def ns(self) -> str:
        return NS + self.name


@dataclass
class Subnet:
    name: str
    hosts: list[Host]
    rate: float         # bits/s, each host's interface
    uplink: float       # bits/s, the subnet's link to the router
    racks: list[list[str]] = field(default_factory=list)  # host names per rack (none: hosts on the switch)
    rack_uplink: float = 0.0                               # bits/s, each rack's link to the switch


@dataclass
class Topology:
    prefix: str
    subnets: list[Subnet]
    delay: list[list[float]]     # seconds, [from][to]
    source: str = ""
    hosts: list[Host] = field(default_factory=list)

    def address(self, h: Host) -> str:
        return f"{self.prefix}.{h.subnet}.{h.index + 1}"

    def gateway(self, s: int) -> str:
        return f"{self.prefix}.{s}.254"


_NAME = re.compile(r"[a-z][a-z0-9]{0,9}")


def load_topology(path: str) -> Topology:
    if tomllib is None:
        raise TopologyError("reading a topology needs Python 3.11 (tomllib)")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise TopologyError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise TopologyError(f"{path}: not valid TOML: {e}") from None
    known = {"prefix", "subnet", "delay", "ranks", "slow"}
    for k in doc:
        if k not in known:
            raise TopologyError(f"{path}: unknown key '{k}' (known: {', '.join(sorted(known))})")
    prefix = str(doc.get("prefix", "10.77"))
    if not re.fullmatch(r"(10\.[0-9]{1,3}|192\.168|172\.(1[6-9]|2[0-9]|3[01]))", prefix) or \
            any(int(x) > 255 for x in prefix.split(".")):
        raise TopologyError(f"{path}: prefix '{prefix}' must be two octets of a private range (10.x, 172.16-31, 192.168)")
    raw = doc.get("subnet")
    if not isinstance(raw, list) or not raw:
        raise TopologyError(f"{path}: at least one [[subnet]] is needed")
    if len(raw) > 32:
        raise TopologyError(f"{path}: at most 32 subnets")
    subnets: list[Subnet] = []
    hosts: list[Host] = []
    seen: set[str] = set()
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            raise TopologyError(f"{path}: subnet {i} is not a table")
        for k in s:
            if k not in ("name", "hosts", "rate", "uplink", "racks", "rack_uplink"):
                raise TopologyError(f"{path}: subnet {i}: unknown key '{k}'")
        name = str(s.get("name", f"s{i}"))
        names = s.get("hosts")
        if not isinstance(names, list) or not names or len(names) > 200:
            raise TopologyError(f"{path}: subnet {name}: 'hosts' must list 1 … 200 host names")
        sub = Subnet(name, [], parse_rate(s.get("rate", "1gbit"), f"subnet {name} rate"),
                     parse_rate(s.get("uplink", s.get("rate", "1gbit")), f"subnet {name} uplink"))
        for k, hn in enumerate(names):
            hn = str(hn)
            if not _NAME.fullmatch(hn):
                raise TopologyError(f"{path}: host name '{hn}': a lower-case letter, then up to 9 letters or digits")
            if hn in seen or hn in ("router",) or hn.startswith("sw"):
                raise TopologyError(f"{path}: host name '{hn}' is used twice or reserved")
            seen.add(hn)
            h = Host(hn, i, k)
            sub.hosts.append(h)
            hosts.append(h)
        racks = s.get("racks", [])
        if racks:
            if not isinstance(racks, list) or len(racks) > 16 or \
                    not all(isinstance(r, list) and r and all(isinstance(x, str) for x in r) for r in racks):
                raise TopologyError(f"{path}: subnet {name}: 'racks' must list 1 … 16 lists of host names")
            inside = [x for r in racks for x in r]
            if sorted(inside) != sorted(str(x) for x in names):
                raise TopologyError(f"{path}: subnet {name}: 'racks' must hold each of its hosts once")
            if "rack_uplink" not in s:
                raise TopologyError(f"{path}: subnet {name}: 'racks' need a 'rack_uplink' rate")
            sub.racks = [[str(x) for x in r] for r in racks]
            sub.rack_uplink = parse_rate(s["rack_uplink"], f"subnet {name} rack_uplink")
        elif "rack_uplink" in s:
            raise TopologyError(f"{path}: subnet {name}: 'rack_uplink' without 'racks'")
        subnets.append(sub)
    if len(hosts) > 64:
        raise TopologyError(f"{path}: at most 64 hosts ({len(hosts)} given)")
    by_name = {h.name: h for h in hosts}
    for hn, n in dict(doc.get("ranks", {})).items():
        if hn not in by_name:
            raise TopologyError(f"{path}: [ranks] names an unknown host '{hn}'")
        if not isinstance(n, int) or not 1 <= n <= 64:
            raise TopologyError(f"{path}: [ranks] {hn} = {n!r}: an integer 1 … 64")
        by_name[hn].ranks = n
    for hn, share in dict(doc.get("slow", {})).items():
        if hn not in by_name:
            raise TopologyError(f"{path}: [slow] names an unknown host '{hn}'")
        if not isinstance(share, (int, float)) or not 0.05 <= float(share) <= 1.0:
            raise TopologyError(f"{path}: [slow] {hn} = {share!r}: a share of one core, 0.05 … 1")
        by_name[hn].cpu = float(share)
    S = len(subnets)
    index = {s.name: i for i, s in enumerate(subnets)}
    delay = [[0.0] * S for _ in range(S)]
    for pair, d in dict(doc.get("delay", {})).items():
        parts = str(pair).split("-")
        if len(parts) != 2 or parts[0] not in index or parts[1] not in index or parts[0] == parts[1]:
            raise TopologyError(f"{path}: [delay] '{pair}': two different subnet names joined by '-'")
        a, b = index[parts[0]], index[parts[1]]
        delay[a][b] = delay[b][a] = parse_time(d, f"delay {pair}")
    return Topology(prefix, subnets, delay, str(path), hosts)


# ---------------------------------------------------------------- shell

def sh(*cmd: str, ns: str | None = None, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess:
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {r.stderr.strip() or r.stdout.strip() or 'failed'}")
    if not quiet and os.environ.get("HC_NETNS_VERBOSE"):
        print("+", " ".join(full), file=sys.stderr)
    return r


def tbf(dev: str, bits: float, ns: str) -> None:
    """Shape dev's egress to `bits`/s: a bucket of 0.1 ms at the rate (at
    least two full frames) and a queue of 50 ms (so that TCP sees a link,
    not drops). A wire has no bucket: what passes at once after an idle
    moment is a burst no real link of that rate has, and no model prices.
    Measured here (one message after 100 ms idle, beyond an 8-byte round
    trip): with a bucket of 0.5 ms and at least 16 KiB, a 50 Mbit/s uplink
    passed 16 KiB in 1.4 ms where its rate says 2.6, and 1 Gbit/s passed
    256 KiB at 134 MB/s, above the line rate, so that the probe saw the
    interfaces 30 % faster than they carry a megabyte. With 0.1 ms, every
    size from 32 KiB to 8 MiB moves at 100-118 MB/s through 1 Gbit/s; with
    two frames only, the shaper's timers hold 1 Gbit/s to 80 MB/s. Two
    frames is the least a bucket may hold (it must pass a full frame)."""
    rate = f"{int(bits)}bit"
    burst = max(2 * FRAME, int(bits / 8 * 0.0001))
    limit = max(128 * 1024, int(bits / 8 * 0.05))
    sh("tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", str(burst),
       "limit", str(limit), ns=ns)


def cgroup_version() -> int:
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return 2
    if Path("/sys/fs/cgroup/cpu").is_dir():
        return 1
    return 0


def cgroup_dir(host: str) -> Path:
    if cgroup_version() == 2:
        return Path("/sys/fs/cgroup") / f"{CGROUP_NAME}-{host}"
    return Path("/sys/fs/cgroup/cpu") / f"{CGROUP_NAME}-{host}"


def make_cgroup(host: str, share: float) -> Path:
    d = cgroup_dir(host)
    d.mkdir(exist_ok=True)
    period = 100000
    quota = max(1000, int(period * share))
    if cgroup_version() == 2:
        ctl = Path("/sys/fs/cgroup/cgroup.subtree_control")
        if "cpu" not in ctl.read_text().split():
            ctl.write_text("+cpu")
        (d / "cpu.max").write_text(f"{quota} {period}")
    else:
        (d / "cpu.cfs_period_us").write_text(str(period))
        (d / "cpu.cfs_quota_us").write_text(str(quota))
    return d


# ---------------------------------------------------------------- check

def check() -> list[str]:
    """Why this machine cannot build the cluster (empty: it can)."""
    why = []
    if os.geteuid() != 0:
        why.append("not root (namespaces, bridges and qdiscs need root)")
    for tool in ("ip", "tc", "unshare", "cc"):
        if not shutil.which(tool):
            why.append(f"'{tool}' is not installed")
    if not Path("/dev/net/tun").exists():
        why.append("/dev/net/tun is missing (delayd needs a TUN device)")
    if why:
        return why
    probe = NS + "check"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"cannot create a network namespace: {r.stderr.strip()}"]
    try:
        r = subprocess.run(["ip", "netns", "exec", probe, "ip", "link", "add", "b0", "type", "bridge"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            why.append(f"cannot create a bridge: {r.stderr.strip()}")
        r = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate",
                            "1mbit", "burst", "32k", "limit", "64k"], capture_output=True, text=True)
        if r.returncode != 0:
            why.append(f"cannot add a tbf qdisc: {r.stderr.strip()}")
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return why


# ---------------------------------------------------------------- up / down

def delayd_binary() -> Path:
    """Builds delayd next to the state (not in the source tree) when needed."""
    src = HERE / "delayd.c"
    out = STATE / "delayd"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        r = subprocess.run(["cc", "-O2", "-Wall", "-o", str(out), str(src)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"building delayd failed:\n{r.stderr}")
    return out


def write_netns_etc(topo: Topology, h: Host) -> None:
    d = Path("/etc/netns") / h.ns
    d.mkdir(parents=True, exist_ok=True)
    lines = ["127.0.0.1 localhost", "::1 localhost"]
    lines += [f"{topo.address(x)} {x.name}" for x in topo.hosts]
    (d / "hosts").write_text("\n".join(lines) + "\n")
    (d / "resolv.conf").write_text("nameserver 127.0.0.1\n")


def up(topo: Topology, log=print) -> None:
    why = check()
    if why:
        raise RuntimeError("cannot build the emulated cluster: " + "; ".join(why))
    down(quiet=True)
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "tmp").mkdir(exist_ok=True)
    (STATE / "topology.json").write_text(json.dumps({
        "source": topo.source, "prefix": topo.prefix, "subnets": [s.name for s in topo.subnets],
        "hosts": [{"name": h.name, "subnet": topo.subnets[h.subnet].name, "address": topo.address(h),
                   "ranks": h.ranks, "cpu": h.cpu} for h in topo.hosts],
        "delay_s": topo.delay}, indent=1))
    t0 = time.time()
    # The router.
    sh("ip", "netns", "add", ROUTER)
    sh("ip", "link", "set", "lo", "up", ns=ROUTER)
    for k, v in (("net.ipv4.ip_forward", "1"), ("net.ipv4.conf.all.rp_filter", "0"),
                 ("net.ipv4.conf.default.rp_filter", "0"), ("net.ipv6.conf.all.disable_ipv6", "1")):
        sh("sysctl", "-qw", f"{k}={v}", ns=ROUTER)
    for i, s in enumerate(topo.subnets):
        sw = f"{NS}sw{i}"
        sh("ip", "netns", "add", sw)
        sh("ip", "link", "set", "lo", "up", ns=sw)
        sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=sw)
        sh("ip", "link", "add", "br0", "type", "bridge", ns=sw)
        sh("ip", "link", "set", "br0", "up", ns=sw)
        # The uplink: up<i> (switch side) – rt<i> (router side).
        sh("ip", "link", "add", f"up{i}", "netns", sw, "type", "veth", "peer", "name", f"rt{i}", "netns", ROUTER)
        sh("ip", "link", "set", f"up{i}", "master", "br0", "up", ns=sw)
        sh("ip", "addr", "add", f"{topo.gateway(i)}/24", "dev", f"rt{i}", ns=ROUTER)
        sh("ip", "link", "set", f"rt{i}", "up", ns=ROUTER)
        tbf(f"up{i}", s.uplink, sw)       # out of the subnet
        tbf(f"rt{i}", s.uplink, ROUTER)   # into the subnet
        # Racks: a bridge each, joined to the switch's by a link shaped both ways.
        bridge_of = {h.name: "br0" for h in s.hosts}
        for j, rack in enumerate(s.racks):
            sh("ip", "link", "add", f"rk{j}", "type", "bridge", ns=sw)
            sh("ip", "link", "set", f"rk{j}", "up", ns=sw)
            sh("ip", "link", "add", f"rku{j}", "type", "veth", "peer", "name", f"rkd{j}", ns=sw)
            sh("ip", "link", "set", f"rku{j}", "master", f"rk{j}", "up", ns=sw)
            sh("ip", "link", "set", f"rkd{j}", "master", "br0", "up", ns=sw)
            tbf(f"rku{j}", s.rack_uplink, sw)   # out of the rack (rku sends into rkd, on the switch)
            tbf(f"rkd{j}", s.rack_uplink, sw)   # into it
            for hn in rack:
                bridge_of[hn] = f"rk{j}"
        for h in s.hosts:
            sh("ip", "netns", "add", h.ns)
            write_netns_etc(topo, h)
            sh("ip", "link", "set", "lo", "up", ns=h.ns)
            sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=h.ns)
            port = f"p{h.index}"
            sh("ip", "link", "add", "eth0", "netns", h.ns, "type", "veth", "peer", "name", port, "netns", sw)
            sh("ip", "link", "set", port, "master", bridge_of[h.name], "up", ns=sw)
            sh("ip", "addr", "add", f"{topo.address(h)}/24", "dev", "eth0", ns=h.ns)
            sh("ip", "link", "set", "eth0", "up", ns=h.ns)
            sh("ip", "route", "add", "default", "via", topo.gateway(i), ns=h.ns)
            tbf("eth0", s.rate, h.ns)     # the host's interface, out
            tbf(port, s.rate, sw)         # and in
            (STATE / "tmp" / h.name).mkdir(exist_ok=True)
            if h.cpu < 1.0:
                if cgroup_version() == 0:
                    raise RuntimeError(f"host {h.name} is slow, but this machine has no cpu cgroup controller")
                d = make_cgroup(h.name, h.cpu)
                # Inside a namespace /sys is remounted without the cgroup
                # tree: rsh-agent joins the cgroup through a bind mount
                # under the state directory.
                view = STATE / "cgroup"
                if not os.path.ismount(view):
                    view.mkdir(exist_ok=True)
                    sh("mount", "--bind", str(d.parent), str(view))
                (STATE / f"cgroup.{h.name}").write_text(str(view / d.name))
    # delayd: every packet that comes in from a subnet goes through the TUN.
    if len(topo.subnets) > 1 and any(d > 0 for row in topo.delay for d in row):
        exe = delayd_binary()
        delays = ",".join(f"{d * 1e6:.1f}" for row in topo.delay for d in row)
        p = subprocess.Popen(["ip", "netns", "exec", ROUTER, str(exe), TUN, topo.prefix, delays],
                             stdout=subprocess.DEVNULL, stderr=open(STATE / "delayd.log", "w"),
                             start_new_session=True)
        (STATE / "delayd.pid").write_text(str(p.pid))
        for _ in range(100):
            if sh("ip", "link", "show", TUN, ns=ROUTER, check=False, quiet=True).returncode == 0:
                break
            if p.poll() is not None:
                raise RuntimeError(f"delayd stopped: {(STATE / 'delayd.log').read_text().strip()}")
            time.sleep(0.05)
        sh("ip", "link", "set", TUN, "up", ns=ROUTER)
        # The network is not the hosts' CPU: delayd runs before any rank
        # (real-time priority; it sleeps in ppoll between packets, and the
        # kernel's real-time throttling bounds it). Otherwise 11 ranks
        # polling in MPI on 2 cores starve it, and a flow's packets wait for
        # a core instead of for their link.
        try:
            os.sched_setscheduler(p.pid, os.SCHED_FIFO, os.sched_param(50))
        except (OSError, AttributeError) as e:
            print(f"netns: delayd at normal priority ({e})", file=sys.stderr)
        sh("sysctl", "-qw", f"net.ipv4.conf.{TUN}.rp_filter=0", ns=ROUTER)
        sh("ip", "route", "add", "default", "dev", TUN, "table", str(DELAY_TABLE), ns=ROUTER)
        for i in range(len(topo.subnets)):
            sh("ip", "rule", "add", "iif", f"rt{i}", "lookup", str(DELAY_TABLE), ns=ROUTER)
    # Open MPI: a hostfile (slots = ranks) and the launcher.
    (STATE / "hostfile").write_text("".join(f"{h.name} slots={h.ranks}\n" for h in topo.hosts))
    log(f"netns: {len(topo.hosts)} hosts in {len(topo.subnets)} subnets up in {time.time() - t0:.1f} s "
        f"({sum(h.ranks for h in topo.hosts)} ranks)")


def our_namespaces() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in r.stdout.splitlines() if line.startswith(NS)]


def down(quiet: bool = False) -> None:
    """Removes everything up() made; safe to run any number of times."""
    pidfile = STATE / "delayd.pid"
    if pidfile.exists():
        try:
            pid = int(pidfile.read_text())
            os.killpg(pid, signal.SIGTERM)
            for _ in range(50):  # reap it where it is our child (run)
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.02)
        except (ValueError, ProcessLookupError, PermissionError):
            pass
    names = our_namespaces()
    # Whatever still runs inside (ranks, orted, delayd): TERM, then KILL.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = False
        for ns in names:
            r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            for pid in r.stdout.split():
                try:
                    os.kill(int(pid), sig)
                    alive = True
                except (ValueError, ProcessLookupError):
                    pass
        if alive and sig == signal.SIGTERM:
            time.sleep(0.5)
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for d in Path("/etc/netns").glob(NS + "*") if Path("/etc/netns").is_dir() else []:
        shutil.rmtree(d, ignore_errors=True)
    if Path("/etc/netns").is_dir() and not any(Path("/etc/netns").iterdir()):
        try:
            Path("/etc/netns").rmdir()
        except OSError:
            pass
    for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")):
        if base.is_dir():
            for d in base.glob(CGROUP_NAME + "-*"):
                try:
                    d.rmdir()
                except OSError:
                    pass
    view = STATE / "cgroup"
    if os.path.ismount(view):
        subprocess.run(["umount", "-l", str(view)], capture_output=True)
    if STATE.exists() and not os.path.ismount(view):  # never delete through a mount
        shutil.rmtree(STATE, ignore_errors=True)
    if not quiet:
        print(f"netns: down ({len(names)} namespaces removed)")


# ---------------------------------------------------------------- run

def host_env(first: dict) -> dict:
    env = dict(os.environ)
    env.update({
        "OMPI_MCA_orte_default_hostfile": str(STATE / "hostfile"),
        "OMPI_MCA_plm_rsh_agent": str(HERE / "rsh-agent"),
        "OMPI_MCA_plm_rsh_no_tree_spawn": "1",
        "OMPI_MCA_btl": "self,vader,tcp",
        "OMPI_MCA_btl_tcp_if_include": "eth0",
        "OMPI_MCA_oob_tcp_if_include": "eth0",
        "OMPI_MCA_mpi_yield_when_idle": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
        "HC_NETNS_STATE": str(STATE),
        "HC_NETNS_HOSTS": ",".join(h["name"] for h in json.loads((STATE / "topology.json").read_text())["hosts"]),
        "HC_NETNS_RANKS": str(sum(h["ranks"] for h in json.loads((STATE / "topology.json").read_text())["hosts"])),
    })
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def exec_in_first_host(cmd: list[str]) -> int:
    """CMD in the first host's namespace, as that host (rsh-agent does the same).

    CMD runs in a session of its own, as the other hosts' Open MPI daemons
    do (orted calls setsid): the kernel's autogroup scheduler gives each
    session one fair share of the CPUs, so without it the first host's ranks
    (mpirun's children) would share one with whatever else runs in the
    caller's session, and on a loaded machine only that host's round trips
    would be slowed by milliseconds (measured: the probe split a subnet).
    An interrupt stops the whole session."""
    topo = json.loads((STATE / "topology.json").read_text())
    first = topo["hosts"][0]
    env = host_env(first)
    p = subprocess.Popen([str(HERE / "rsh-agent"), "--local", first["name"], *cmd], env=env, start_new_session=True)
    try:
        return p.wait()
    except BaseException:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
                p.wait(timeout=3)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        raise


def run(topo: Topology, cmd: list[str]) -> int:
    def stop(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        up(topo)
        return exec_in_first_host(cmd)
    except KeyboardInterrupt:
        print("netns: interrupted; tearing down", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # tear-down must finish
        down()
        for s, h in old.items():
            signal.signal(s, h)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def shape(subnet: str, rate: str) -> None:
    """SUBNET's uplink reshaped to RATE both ways (as up() shaped it: the
    switch's side out of the subnet, the router's into it)."""
    if not (STATE / "topology.json").exists():
        raise RuntimeError("no cluster is up (cluster.py up TOPO first)")
    names = json.loads((STATE / "topology.json").read_text())["subnets"]
    if subnet not in names:
        raise RuntimeError(f"no subnet '{subnet}' in the cluster that is up (its subnets: {', '.join(names)})")
    i = names.index(subnet)
    bits = parse_rate(rate, f"the rate of {subnet}'s uplink")
    tbf(f"up{i}", bits, f"{NS}sw{i}")
    tbf(f"rt{i}", bits, ROUTER)
    print(f"netns: subnet {subnet}'s uplink now {rate} ({bits / 1e6:g} Mbit/s each way)")


def show(topo: Topology) -> None:
    for i, s in enumerate(topo.subnets):
        print(f"subnet {s.name}: {topo.prefix}.{i}.0/24, hosts {s.rate / 1e6:g} Mbit/s, uplink {s.uplink / 1e6:g} Mbit/s")
        for j, rack in enumerate(s.racks):
            print(f"  rack {j}: {' '.join(rack)} behind {s.rack_uplink / 1e6:g} Mbit/s each way")
        for h in s.hosts:
            extra = f", {h.ranks} ranks" if h.ranks > 1 else ""
            extra += f", CPU {h.cpu:g} core" if h.cpu < 1 else ""
            print(f"  {h.name:10s} {topo.address(h)}{extra}")
    if len(topo.subnets) > 1:
        print("one-way delay between subnets (ms):")
        print("      " + "".join(f"{s.name:>8s}" for s in topo.subnets))
        for i, s in enumerate(topo.subnets):
            print(f"  {s.name:4s}" + "".join(f"{topo.delay[i][j] * 1e3:8.2f}" for j in range(len(topo.subnets))))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd: list[str] = []
    if "--" in argv:
        k = argv.index("--")
        argv, cmd = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["check", "up", "down", "run", "exec", "show", "shape"])
    ap.add_argument("topology", nargs="?", help="a topology file (shape: the subnet)")
    ap.add_argument("rate", nargs="?", help="shape: the uplink's new rate")
    a = ap.parse_args(argv)
    try:
        if a.action == "check":
            why = check()
            print("netns: this machine can build the emulated cluster" if not why else
                  "netns: cannot build the emulated cluster: " + "; ".join(why))
            return 0 if not why else 1
        if a.action == "down":
            down()
            return 0
        if a.action == "exec":
            if not cmd:
                ap.error("exec needs a command after --")
            if not (STATE / "topology.json").exists():
                raise RuntimeError("no cluster is up (cluster.py up TOPO first)")
            return exec_in_first_host(cmd)
        if a.action == "shape":
            if not a.topology or not a.rate:
                ap.error("shape needs a subnet and a rate: cluster.py shape A 10mbit")
            shape(a.topology, a.rate)
            return 0
        if not a.topology:
            ap.error(f"{a.action} needs a topology file")
        topo = load_topology(a.topology)
        if a.action == "show":
            show(topo)
            return 0
        if a.action == "up":
            try:
                up(topo)
            except BaseException:
                down(quiet=True)  # nothing half-built stays
                raise
            return 0
        if not cmd:
            ap.error("run needs a command after --")
        return run(topo, cmd)
    except (TopologyError, RuntimeError) as e:
        print(f"cluster.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Ground truth of a SimGrid platform, and a checker for hetcoll-probe profiles.

    python3 testbed/smpi/truth.py PLATFORM.xml PROFILE.json
            [--tolerance 0.05] [--os 1e-6] [--or 1e-6] [--envelope 16]
            [--tcp-gamma 4194304] [--no-partition] [--hosts FILE]
    python3 testbed/smpi/truth.py PLATFORM.xml          # print the truth only

As a module:

    t = truth.load("testbed/smpi/platforms/three_subnets.xml")
    t.hosts           # host names, in the order of the .hosts file beside the
                      # platform (the rank order of testbed/smpi/run)
    t.latency(i, j)   # sum of the latencies of the links on SimGrid's route, s
    t.bandwidth(i, j) # bottleneck bandwidth of that route (min over links), B/s
    t.route(i, j)     # the route's link names, in order
    t.subnet_of       # per host, the id of the zone holding it, numbered by
                      # first appearance in hosts order

Routes are resolved the way SimGrid 3.32 does (NetZoneImpl::
get_global_route_with_netzones): find the zone that is the common ancestor
of the two hosts; if both are directly in it, take its local route; otherwise
take its route between the two child zones holding them, which names gateways
(gw_src, gw_dst), and recurse from the source to gw_src and from gw_dst to the
destination. Local routes:

  * <cluster> (flat topology; SimGrid builds a StarZone): host -> anything
    goes up [limiter, host link (its _UP half if SPLITDUPLEX, the cluster
    default), backbone]; anything -> host goes down [backbone, host link
    (_DOWN half), limiter]; the cluster's router has empty up and down routes.
    A host-to-host route is up(src) + down(dst) without duplicates, so the
    backbone counts once. Link names: <id>_link_<radical>[_UP|_DOWN],
    <id>_backbone, <id>_link_<radical>_limiter.
  * <zone routing="Cluster"> with <host_link id up down>, <cabinet> and an
    optional <backbone>: the same star routes, up [up, backbone], down
    [backbone, down].
  * <zone routing="Full"> with <route> and <zoneRoute>: the listed links;
    a symmetrical route (the default) also gives the reverse route, links in
    reverse order, UP and DOWN halves of split-duplex links swapped, and the
    gateways swapped.

Only these constructs are understood (others raise ValueError); they cover
testbed/smpi/platforms/*.xml.

The CLI check models SimGrid's CM02 network model without cross traffic, as
testbed/smpi/run configures it: an m-byte message between hosts i and j
takes os + L + (m + 16) / B + or, with L = latency(i, j), 16 bytes the MPI
envelope SMPI adds to every message (smpi_request.cpp), and B the bottleneck
bandwidth capped by the TCP window, min(bandwidth(i, j), gamma / (2 L))
(network/TCP-gamma, 4 MiB by default; it does not bind on these platforms).
For every ordered pair it compares the profile's one-way small-message time
(pairs.small_min) with os + L + (s + 16) / B + or, and the profile's
bandwidth (l - s) / (large_min - small_min), s and l the message sizes in
profile["measured"], with B.

SMPI 3.32 details behind --os/--or: os (smpi/os) is paid only by blocking
sends below smpi/send-is-detached-thresh (64 KiB); an MPI_Isend pays
smpi/ois instead (0 unless configured), so pass --os 0 for a probe whose
small ping is an MPI_Isend. or (smpi/or) is paid only for messages below
that threshold. A 1 MiB message pays neither, so a measured bandwidth is
(l - s) / ((l - s) / B - os - or): 0.02% above B at 125 MB/s, 0.25% at
1.25 GB/s; within any sensible tolerance, so B is the expectation. It also checks that the profile's host subnet
ids group the hosts exactly like the platform's zones do (ids may be
renamed). Exit status 0 if every relative error is within the tolerance and
the partition matches, 1 otherwise, 2 on bad input.
"""

import argparse
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

# ----------------------------------------------------------------------------
# Units (SimGrid 3.32, src/xbt/xbt_parse_units.cpp)


def _scale_table(unit, value, base2, base10):
    table = {unit: value}
    if base10:
        v = value
        for p in ["k", "M", "G", "T", "P", "E", "Z", "Y"]:
            v *= 1000.0
            table[p + unit] = v
    if base2:
        v = value
        for p in ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"]:
            v *= 1024.0
            table[p + unit] = v
    return table


_BW_UNITS = {}
_BW_UNITS.update(_scale_table("bps", 0.125, True, True))
_BW_UNITS.update(_scale_table("Bps", 1.0, True, True))
_TIME_UNITS = {"w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0,
               "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}
_SPEED_UNITS = {}
_SPEED_UNITS.update(_scale_table("f", 1.0, False, True))
_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


def _parse(text, units, default_unit, what):
    m = _NUM.match(text or "")
    if not m:
        raise ValueError("cannot parse %s %r" % (what, text))
    unit = m.group(2) or default_unit
    if unit not in units:
        raise ValueError("unknown unit %r in %s %r" % (unit, what, text))
    return float(m.group(1)) * units[unit]


def parse_bandwidth(text):
    return _parse(text, _BW_UNITS, "Bps", "bandwidth")


def parse_time(text):
    return _parse(text, _TIME_UNITS, "s", "time")


def parse_speed(text):
    # several pstates "1Gf,0.5Gf": the first is the default
    return _parse(text.split(",")[0], _SPEED_UNITS, "f", "speed")


def _radicals(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


# ----------------------------------------------------------------------------
# Platform model


class _Link:
    __slots__ = ("name", "bw", "lat")

    def __init__(self, name, bw, lat):
        self.name, self.bw, self.lat = name, bw, lat


class _Zone:
    def __init__(self, zid, kind, parent):
        self.id = zid
        self.kind = kind  # "star" or "full"
        self.parent = parent
        self.up = {}       # star: netpoint -> [link names]
        self.down = {}     # star: netpoint -> [link names]
        self.table = {}    # full: (src, dst) -> (gw_src, gw_dst, [link names])
        self.depth = 0 if parent is None else parent.depth + 1


class Truth:
    """Routes of one platform; hosts in the rank order of its .hosts file."""

    def __init__(self, platform_path, hosts_path=None):
        self.platform = platform_path
        self.links = {}         # name -> _Link
        self.zone_of = {}       # netpoint name (host, router, zone) -> englobing _Zone
        self.zones = {}         # zone id -> _Zone
        self.host_speed = {}    # host name -> flop/s
        self.all_hosts = []     # in declaration order
        self._parse(platform_path)
        if hosts_path is None:
            hosts_path = os.path.splitext(platform_path)[0] + ".hosts"
        if os.path.exists(hosts_path):
            with open(hosts_path) as f:
                names = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
            # smpirun host files may say "name:count"; one rank per entry here
            names = [n.split(":")[0] for n in names]
        else:
            names = list(self.all_hosts)
        for n in names:
            if n not in self.host_speed:
                raise ValueError("host %r of %s is not in %s" % (n, hosts_path, platform_path))
        self.hosts = names
        self.index = {n: i for i, n in enumerate(names)}
        self.speed = [self.host_speed[n] for n in names]
        self.zone_names = [self.zone_of[n].id for n in names]
        ids = {}
        self.subnet_of = [ids.setdefault(z, len(ids)) for z in self.zone_names]
        self.subnet_names = sorted(ids, key=ids.get)
        n = len(names)
        self._routes = [[None] * n for _ in range(n)]

    # -- parsing -------------------------------------------------------------

    def _add_link(self, name, bw, lat, policy):
        if policy == "SPLITDUPLEX" or policy == "FULLDUPLEX":
            for suffix in ("_UP", "_DOWN"):
                self._new_link(name + suffix, bw, lat)
        else:
            self._new_link(name, bw, lat)

    def _new_link(self, name, bw, lat):
        if name in self.links:
            raise ValueError("link %r declared twice" % name)
        self.links[name] = _Link(name, bw, lat)

    def _add_netpoint(self, name, zone):
        if name in self.zone_of:
            raise ValueError("netpoint %r declared twice" % name)
        self.zone_of[name] = zone

    def _add_host(self, name, speed, zone):
        self._add_netpoint(name, zone)
        self.host_speed[name] = speed
        self.all_hosts.append(name)

    def _parse(self, path):
        root = ET.parse(path).getroot()
        if root.tag != "platform":
            raise ValueError("%s: root element is <%s>, not <platform>" % (path, root.tag))
        tops = [e for e in root if e.tag in ("zone", "AS", "cluster")]
        if len(tops) != 1:
            raise ValueError("%s: expected exactly one top-level <zone> or <cluster>" % path)
        others = [e.tag for e in root if e.tag not in ("zone", "AS", "cluster", "config", "prop")]
        if others:
            raise ValueError("%s: unsupported top-level elements %s" % (path, sorted(set(others))))
        self._element(tops[0], None)

    def _element(self, e, parent):
        if e.tag == "cluster":
            return self._cluster(e, parent)
        if e.tag in ("zone", "AS"):
            routing = e.get("routing", "")
            if routing.lower() == "cluster":
                return self._star_zone(e, parent)
            if routing.lower() == "full":
                return self._full_zone(e, parent)
            raise ValueError("zone %r: routing=%r is not supported (Full and Cluster are)"
                             % (e.get("id"), routing))
        raise ValueError("unsupported element <%s>" % e.tag)

    def _new_zone(self, zid, kind, parent):
        if zid in self.zones:
            raise ValueError("zone %r declared twice" % zid)
        z = _Zone(zid, kind, parent)
        self.zones[zid] = z
        if parent is not None:
            self._add_netpoint(zid, parent)
        return z

    def _cluster(self, e, parent):
        if e.get("topology", "FLAT") != "FLAT":
            raise ValueError("cluster %r: only FLAT topology is supported" % e.get("id"))
        cid = e.get("id")
        z = self._new_zone(cid, "star", parent)
        prefix, suffix = e.get("prefix", ""), e.get("suffix", "")
        speed = parse_speed(e.get("speed"))
        bw, lat = parse_bandwidth(e.get("bw")), parse_time(e.get("lat"))
        policy = e.get("sharing_policy", "SPLITDUPLEX")
        bb_bw = parse_bandwidth(e.get("bb_bw")) if e.get("bb_bw") else 0.0
        bb_lat = parse_time(e.get("bb_lat")) if e.get("bb_lat") else 0.0
        backbone = None
        if bb_bw > 0 or bb_lat > 0:
            backbone = cid + "_backbone"
            self._new_link(backbone, bb_bw, bb_lat)
        limiter_bw = parse_bandwidth(e.get("limiter_link")) if e.get("limiter_link") else 0.0
        for i in _radicals(e.get("radical")):
            host = "%s%d%s" % (prefix, i, suffix)
            self._add_host(host, speed, z)
            link = "%s_link_%d" % (cid, i)
            limiter = None
            if limiter_bw > 0:
                limiter = link + "_limiter"
                self._new_link(limiter, limiter_bw, 0.0)
            if policy in ("SPLITDUPLEX", "FULLDUPLEX"):
                self._add_link(link, bw, lat, "SPLITDUPLEX")
                up_l, down_l = link + "_UP", link + "_DOWN"
            else:
                self._new_link(link, bw, lat)
                up_l = down_l = link
            z.up[host] = [x for x in (limiter, up_l, backbone) if x]
            z.down[host] = [x for x in (backbone, down_l, limiter) if x]
        router = e.get("router_id") or (prefix + cid + "_router" + suffix)
        self._add_netpoint(router, z)
        z.up[router], z.down[router] = [], []
        return z

    def _link_element(self, e):
        self._add_link(e.get("id"), parse_bandwidth(e.get("bandwidth")),
                       parse_time(e.get("latency") or "0s"),
                       e.get("sharing_policy", "SHARED"))

    def _star_zone(self, e, parent):
        z = self._new_zone(e.get("id"), "star", parent)
        backbone = None
        host_links = []
        for c in e:
            if c.tag == "host":
                self._add_host(c.get("id"), parse_speed(c.get("speed")), z)
            elif c.tag == "router":
                self._add_netpoint(c.get("id"), z)
            elif c.tag == "link":
                self._link_element(c)
            elif c.tag == "backbone":
                backbone = c.get("id")
                self._new_link(backbone, parse_bandwidth(c.get("bandwidth")),
                               parse_time(c.get("latency")))
            elif c.tag == "host_link":
                host_links.append((c.get("id"), c.get("up"), c.get("down")))
            elif c.tag == "cabinet":
                speed = parse_speed(c.get("speed"))
                bw, lat = parse_bandwidth(c.get("bw")), parse_time(c.get("lat"))
                for i in _radicals(c.get("radical")):
                    host = "%s%d%s" % (c.get("prefix", ""), i, c.get("suffix", ""))
                    self._add_host(host, speed, z)
                    self._new_link("link_" + host + "_UP", bw, lat)
                    self._new_link("link_" + host + "_DOWN", bw, lat)
                    host_links.append((host, "link_" + host + "_UP", "link_" + host + "_DOWN"))
            elif c.tag == "prop":
                pass
            else:
                raise ValueError("zone %r: <%s> is not supported in a Cluster zone" % (z.id, c.tag))
        for host, up, down in host_links:
            for ln in (up, down):
                if ln not in self.links:
                    raise ValueError("host_link of %r: no link %r" % (host, ln))
            if self.zone_of.get(host) is not z:
                raise ValueError("host_link: no host %r in zone %r" % (host, z.id))
            z.up[host] = [x for x in (up, backbone) if x]
            z.down[host] = [x for x in (backbone, down) if x]
        # SimGrid's StarZone::do_seal gives empty routes to the others (routers)
        for name, zz in self.zone_of.items():
            if zz is z and name not in z.up and name not in self.zones:
                z.up[name], z.down[name] = [], []
        return z

    def _link_list(self, route_elem, reverse):
        out = []
        for c in route_elem:
            if c.tag != "link_ctn":
                continue
            name, direction = c.get("id"), c.get("direction", "NONE")
            if direction != "NONE":
                if reverse:
                    direction = "DOWN" if direction == "UP" else "UP"
                name = name + "_" + direction
            if name not in self.links:
                raise ValueError("route uses unknown link %r (split-duplex links need "
                                 "direction=UP|DOWN)" % name)
            out.append(name)
        return out[::-1] if reverse else out

    def _full_zone(self, e, parent):
        z = self._new_zone(e.get("id"), "full", parent)
        routes = []
        for c in e:
            if c.tag in ("zone", "AS", "cluster"):
                self._element(c, z)
            elif c.tag == "host":
                self._add_host(c.get("id"), parse_speed(c.get("speed")), z)
            elif c.tag == "router":
                self._add_netpoint(c.get("id"), z)
            elif c.tag == "link":
                self._link_element(c)
            elif c.tag in ("route", "zoneRoute", "ASroute"):
                routes.append(c)
            elif c.tag == "prop":
                pass
            else:
                raise ValueError("zone %r: <%s> is not supported in a Full zone" % (z.id, c.tag))
        for c in routes:
            src, dst = c.get("src"), c.get("dst")
            gw_src, gw_dst = c.get("gw_src"), c.get("gw_dst")
            for name in (src, dst):
                if self.zone_of.get(name) is not z:
                    raise ValueError("zone %r: route end %r is not a member of the zone" % (z.id, name))
            if (src, dst) in z.table:
                raise ValueError("zone %r: route %s -> %s declared twice" % (z.id, src, dst))
            z.table[(src, dst)] = (gw_src, gw_dst, self._link_list(c, False))
            if c.get("symmetrical", "YES").upper() == "YES" and src != dst:
                if (dst, src) in z.table:
                    raise ValueError("zone %r: reverse route %s -> %s already exists" % (z.id, dst, src))
                z.table[(dst, src)] = (gw_dst, gw_src, self._link_list(c, True))
        return z

    # -- routing -------------------------------------------------------------

    def _chain(self, name):
        """Zones holding netpoint name, innermost first."""
        out = []
        z = self.zone_of[name]
        while z is not None:
            out.append(z)
            z = z.parent
        return out

    @staticmethod
    def _rep(name, chain, common):
        """The member of zone common that stands for netpoint name."""
        k = chain.index(common)
        return name if k == 0 else chain[k - 1].id

    def _local(self, z, src, dst):
        if z.kind == "star":
            out = []
            for ln in z.up[src] + z.down[dst]:
                if ln not in out:
                    out.append(ln)
            return None, None, out
        if (src, dst) not in z.table:
            raise ValueError("zone %r has no route from %r to %r" % (z.id, src, dst))
        return z.table[(src, dst)]

    def route_by_name(self, src, dst):
        """Link names on SimGrid's route from netpoint src to netpoint dst."""
        if src == dst:
            return []
        cs, cd = self._chain(src), self._chain(dst)
        common = next(z for z in cs if z in cd)
        rs, rd = self._rep(src, cs, common), self._rep(dst, cd, common)
        gw_src, gw_dst, links = self._local(common, rs, rd)
        if rs == src and rd == dst:
            return list(links)
        if not gw_src or not gw_dst:
            raise ValueError("route %s -> %s in zone %r has no gateways" % (src, dst, common.id))
        out = self.route_by_name(src, gw_src) if gw_src != src else []
        out = out + list(links)
        if gw_dst != dst:
            out = out + self.route_by_name(gw_dst, dst)
        return out

    def route(self, i, j):
        r = self._routes[i][j]
        if r is None:
            r = self._routes[i][j] = self.route_by_name(self.hosts[i], self.hosts[j])
        return r

    def latency(self, i, j):
        """Sum of link latencies on the route from host i to host j, seconds."""
        return sum(self.links[ln].lat for ln in self.route(i, j))

    def bandwidth(self, i, j):
        """Bottleneck bandwidth of the route from host i to host j, bytes/s."""
        r = self.route(i, j)
        return min(self.links[ln].bw for ln in r) if r else math.inf

    def flow_bandwidth(self, i, j, tcp_gamma=4194304.0):
        """Rate of a lone CM02 flow: the bottleneck, capped by gamma / (2 latency)."""
        bw, lat = self.bandwidth(i, j), self.latency(i, j)
        if tcp_gamma > 0 and lat > 0:
            bw = min(bw, tcp_gamma / (2.0 * lat))
        return bw

    def partition(self):
        """Hosts grouped by subnet: list of lists of host indices."""
        groups = {}
        for i, s in enumerate(self.subnet_of):
            groups.setdefault(s, []).append(i)
        return [groups[s] for s in sorted(groups)]


def load(platform_path, hosts_path=None):
    return Truth(platform_path, hosts_path)


# ----------------------------------------------------------------------------
# CLI


def _fmt_t(s):
    if s is None or not math.isfinite(s):
        return str(s)
    if abs(s) >= 1e-3:
        return "%.4g ms" % (s * 1e3)
    return "%.4g us" % (s * 1e6)


def _fmt_bw(b):
    if b is None or not math.isfinite(b):
        return str(b)
    return "%.4g MB/s" % (b / 1e6)


def _canonical(labels):
    ids = {}
    return [ids.setdefault(x, len(ids)) for x in labels]


def _print_truth(t):
    print("platform %s: %d hosts, %d subnets" % (t.platform, len(t.hosts), len(t.subnet_names)))
    for s, zname in enumerate(t.subnet_names):
        members = [t.hosts[i] for i in range(len(t.hosts)) if t.subnet_of[i] == s]
        print("  subnet %d (zone %s): %s" % (s, zname, " ".join(members)))
    print("  %-8s %-8s %12s %12s %12s" % ("subnet", "subnet", "lat min", "lat max", "bw min"))
    n = len(t.hosts)
    for a in range(len(t.subnet_names)):
        for b in range(a, len(t.subnet_names)):
            lats, bws = [], []
            for i in range(n):
                for j in range(n):
                    if i != j and tuple(sorted((t.subnet_of[i], t.subnet_of[j]))) == (a, b):
                        lats.append(t.latency(i, j))
                        bws.append(t.bandwidth(i, j))
            if lats:
                print("  %-8d %-8d %12s %12s %12s" % (a, b, _fmt_t(min(lats)), _fmt_t(max(lats)),
                                                       _fmt_bw(min(bws))))


def eco_partition(cost, n, threshold=0.2):
    """ECO's Fig. 2 (Lowekamp & Beguelin §4.1), written independently of
    hetcoll's C++: the partition the true costs give. cost(i, j) -> s."""
    f = 1.0 + threshold
    w = lambda i, j: max(cost(i, j), cost(j, i))
    edges = sorted((w(i, j), i, j) for i in range(n) for j in range(i + 1, n))
    node_min = [min((w(i, j) for j in range(n) if j != i), default=0.0) for i in range(n)]
    parent, sub_min, grouped = list(range(n)), [math.inf] * n, [False] * n

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for e, a, b in edges:
        ra, rb = find(a), find(b)
        if ra == rb or e > f * node_min[a] or e > f * node_min[b]:
            continue
        if (grouped[a] and e > f * sub_min[ra]) or (grouped[b] and e > f * sub_min[rb]):
            continue
        parent[rb] = ra
        sub_min[ra] = min(e, sub_min[ra], sub_min[rb])
        grouped[a] = grouped[b] = True
    return _canonical([find(i) for i in range(n)])


def check_alone(t, profile, tolerance, tcp_gamma, out=sys.stdout):
    """Concurrent profiles: per-pair bandwidth is what a pair got while the
    round's other pairs shared the links; each class's bandwidth_alone (one
    pair by itself) must match the true bottleneck of its pairs."""
    hosts = [h["name"] for h in profile["hosts"]]
    sub = [h["subnet"] for h in profile["hosts"]]
    ok = True
    for c in profile.get("classes", []):
        if c["a"] < 0:
            continue
        truths = sorted(t.flow_bandwidth(t.index[hosts[i]], t.index[hosts[j]], tcp_gamma)
                        for i in range(len(hosts)) for j in range(len(hosts))
                        if i != j and sorted((sub[i], sub[j])) == [c["a"], c["b"]])
        # The probe times one pair of the class alone (and both ways): in a
        # class of unequal pairs (fast and slow interfaces, issue 25) it
        # must match that pair's truth — the pair of the class closest to it.
        pairs = [(t.index[hosts[i]], t.index[hosts[j]]) for i in range(len(hosts)) for j in range(len(hosts))
                 if i != j and sorted((sub[i], sub[j])) == [c["a"], c["b"]]]
        i, j = min(pairs, key=lambda q: abs(t.flow_bandwidth(q[0], q[1], tcp_gamma) - c["bandwidth_alone"]))
        expected = t.flow_bandwidth(i, j, tcp_gamma)
        err = abs(c["bandwidth_alone"] - expected) / expected
        good = err <= tolerance
        ok = ok and good
        spread = "" if truths[0] == truths[-1] else " (its pairs %s..%s)" % (_fmt_bw(truths[0]), _fmt_bw(truths[-1]))
        print("  class %d-%d alone %s, expected %s%s (%.3g%%) %s; concurrent %s (slowdown %.2fx)"
              % (c["a"], c["b"], _fmt_bw(c["bandwidth_alone"]), _fmt_bw(expected), spread, 100 * err,
                 "ok" if good else "FAIL", _fmt_bw(c["bandwidth"]), c["slowdown"]), file=out)
        # Both ways at once (the probe's other pairs in opposite directions):
        # half rate where the bottleneck of a pair's route is one link that
        # carries both directions (SimGrid's SHARED), full rate otherwise —
        # against the rate of the pair measured alone, as the model holds it.
        bottleneck = t.bandwidth(i, j)
        shared = any(t.links[ln].bw <= bottleneck * (1 + 1e-9) for ln in set(t.route(i, j)) & set(t.route(j, i)))
        one_way = c["bandwidth_alone"] or max(c["bandwidth_alone"], c["bandwidth"])
        both = c.get("bandwidth_both_ways", 0)
        if both > 0:
            full = both >= 0.75 * one_way
            good = full != shared
            ok = ok and good
            print("  class %d-%d both ways %s each: %s, the platform's bottleneck %s %s"
                  % (c["a"], c["b"], _fmt_bw(both), "full duplex" if full else "shared",
                     "carries both directions" if shared else "one per direction", "ok" if good else "FAIL"),
                  file=out)
        # One pair both ways at once, receives first: SimGrid has no
        # connection between two ranks, so the pair takes turns only where
        # its own bottleneck carries both directions.
        same = c.get("bandwidth_same_pair", 0)
        if same > 0:
            turns = same < 0.75 * one_way
            good = turns == shared
            ok = ok and good
            print("  class %d-%d one pair both ways %s each: %s, the platform's bottleneck %s %s"
                  % (c["a"], c["b"], _fmt_bw(same), "takes turns" if turns else "both at once",
                     "carries both directions" if shared else "one per direction", "ok" if good else "FAIL"),
                  file=out)
    return ok


def check_interfaces(t, profile, tolerance, tcp_gamma, out=sys.stdout):
    """Each host's interface rates (hosts[].nic_up, nic_down): the fastest
    true pair bandwidth of the host inside its subnet, each way."""
    hosts = [h["name"] for h in profile["hosts"]]
    sub = [h["subnet"] for h in profile["hosts"]]
    ok, worst, n = True, (0.0, ""), 0
    for i, h in enumerate(profile["hosts"]):
        mates = [j for j in range(len(hosts)) if j != i and sub[j] == sub[i]]
        for key, rate in (("nic_up", lambda j: t.flow_bandwidth(t.index[hosts[i]], t.index[hosts[j]], tcp_gamma)),
                          ("nic_down", lambda j: t.flow_bandwidth(t.index[hosts[j]], t.index[hosts[i]], tcp_gamma))):
            if not h.get(key) or not mates:
                continue
            expected = max(rate(j) for j in mates)
            err = abs(h[key] - expected) / expected
            n += 1
            if err > worst[0]:
                worst = (err, "%s %s %s, expected %s" % (h["name"], key, _fmt_bw(h[key]), _fmt_bw(expected)))
            ok = ok and err <= tolerance
    if n:
        print("  interfaces: %d rates, worst error %.3g%%%s %s" % (n, 100 * worst[0], (" at " + worst[1]) if worst[1]
                                                                 else "", "ok" if ok else "FAIL"), file=out)
    return ok


def check_sharing(t, profile, tolerance, tcp_gamma, out=sys.stdout):
    """The probe's sharing phase (profile: sharing): the far message alone
    at its path's rate, and beside the near stream at what CM02 gives it —
    the receiver's interface shared in proportion to 1/latency (the route's
    latency), at most the far path's own rate. The stream's gaps (one
    rendezvous between its messages) give the far flow a few percent more:
    twice the tolerance there."""
    sh = profile.get("sharing")
    if not sh or not sh.get("measured"):
        return True
    names = [h["name"] for h in profile["hosts"]]
    r, n, f = (t.index[names[sh[k]]] for k in ("receiver", "near", "far"))
    cap, far_path = t.flow_bandwidth(n, r, tcp_gamma), t.flow_bandwidth(f, r, tcp_gamma)
    ln, lf = t.latency(n, r), t.latency(f, r)
    shared = min(far_path, cap * (1 / lf) / (1 / ln + 1 / lf))
    e_alone = abs(sh["far_alone"] - far_path) / far_path
    e_shared = abs(sh["far_shared"] - shared) / shared
    ok = e_alone <= tolerance and e_shared <= 2 * tolerance
    print("  sharing: %s -> %s alone %s (expected %s), beside %s -> %s %s (expected %s, CM02's 1/latency shares) %s"
          % (names[sh["far"]], names[sh["receiver"]], _fmt_bw(sh["far_alone"]), _fmt_bw(far_path), names[sh["near"]],
             names[sh["receiver"]], _fmt_bw(sh["far_shared"]), _fmt_bw(shared), "ok" if ok else "FAIL"), file=out)
    return ok


def check_agree(p1, p2, tolerance, out=sys.stdout):
    """Two profiles of one platform (concurrent and sequential): the same
    hosts, the same partition, per-pair small-message times within tolerance."""
    n1 = [h["name"] for h in p1["hosts"]]
    n2 = [h["name"] for h in p2["hosts"]]
    if n1 != n2:
        print("FAIL: the profiles have different hosts", file=out)
        return False
    n = len(n1)
    same = _canonical([h["subnet"] for h in p1["hosts"]]) == _canonical([h["subnet"] for h in p2["hosts"]])
    errs = [abs(p1["pairs"]["small_min"][k] - p2["pairs"]["small_min"][k]) / p2["pairs"]["small_min"][k]
            for k in range(n * n) if k // n != k % n]
    worst = max(errs) if errs else 0.0
    ok = same and worst <= tolerance
    print("  %s vs %s: partition %s, worst per-pair latency difference %.3g%% %s"
          % (p1["measured"]["mode"], p2["measured"]["mode"], "same" if same else "DIFFERENT", 100 * worst,
             "ok" if ok else "FAIL"), file=out)
    return ok


def check(t, profile, tolerance=0.05, o_s=1e-6, o_r=1e-6, tcp_gamma=4194304.0,
          partition=True, envelope=16, out=sys.stdout, bandwidth="pairs"):
    """Compare a probe profile with the truth; returns True if it passes."""
    phosts = profile.get("hosts") or []
    pairs = profile.get("pairs") or {}
    small = pairs.get("small_min")
    large = pairs.get("large_min")
    measured = profile.get("measured") or {}
    s_bytes = float(measured.get("small_bytes", 8))
    l_bytes = float(measured.get("large_bytes", 1 << 20))
    n = len(phosts) if phosts else int(round(math.sqrt(len(small or []))))
    ok = True
    if small is None or len(small) != n * n:
        print("FAIL: pairs.small_min has %s entries, expected %d" % (None if small is None else len(small), n * n), file=out)
        return False
    if large is not None and len(large) != n * n:
        print("FAIL: pairs.large_min has %d entries, expected %d" % (len(large), n * n), file=out)
        return False
    # profile rank -> truth host index (by name when the profile has names)
    idx, unknown = [], []
    for r in range(n):
        name = phosts[r].get("name") if r < len(phosts) and isinstance(phosts[r], dict) else None
        if name is not None and name in t.index:
            idx.append(t.index[name])
        else:
            if name is not None:
                unknown.append(name)
            idx.append(r % len(t.hosts))
    if unknown:
        print("FAIL: %d profile hosts are not in the platform (%s%s); wrong platform? comparing in rank order"
              % (len(unknown), ", ".join(unknown[:4]), ", ..." if len(unknown) > 4 else ""), file=out)
        ok = False
    lat_err, bw_err = [], []
    missing = 0
    per_class = {}
    for i in range(n):
        for j in range(n):
            hi, hj = idx[i], idx[j]
            if i == j or hi == hj:
                continue
            L, B = t.latency(hi, hj), t.flow_bandwidth(hi, hj, tcp_gamma)
            e_small = o_s + L + (s_bytes + envelope) / B + o_r
            m_small = small[i * n + j]
            cls = tuple(sorted((t.subnet_of[hi], t.subnet_of[hj])))
            c = per_class.setdefault(cls, {"es": [], "ms": [], "eb": [], "mb": []})
            if m_small is None or not isinstance(m_small, (int, float)) or not math.isfinite(m_small):
                missing += 1
                continue
            lat_err.append((abs(m_small - e_small) / e_small, i, j, m_small, e_small))
            c["es"].append(e_small)
            c["ms"].append(m_small)
            if large is not None and bandwidth == "pairs":
                m_large = large[i * n + j]
                if m_large is None or not isinstance(m_large, (int, float)) or not math.isfinite(m_large):
                    missing += 1
                    continue
                dt = m_large - m_small
                m_bw = (l_bytes - s_bytes) / dt if dt > 0 else math.inf
                bw_err.append((abs(m_bw - B) / B if math.isfinite(m_bw) else math.inf, i, j, m_bw, B))
                c["eb"].append(B)
                c["mb"].append(m_bw)

    def name(r):
        return t.hosts[idx[r]]

    print("profile vs %s: %d ranks, small %d B, large %d B, os %g s, or %g s, envelope %d B, tolerance %g"
          % (os.path.basename(t.platform), n, s_bytes, l_bytes, o_s, o_r, envelope, tolerance), file=out)
    print("  %-7s %-7s %24s %24s %21s %21s" % ("subnet", "subnet", "one-way small expected",
                                                "measured (min..max)", "bw expected", "measured (min..max)"),
          file=out)
    for cls in sorted(per_class):
        c = per_class[cls]
        es = "%s..%s" % (_fmt_t(min(c["es"])), _fmt_t(max(c["es"]))) if c["es"] else "-"
        ms = "%s..%s" % (_fmt_t(min(c["ms"])), _fmt_t(max(c["ms"]))) if c["ms"] else "-"
        eb = "%s..%s" % (_fmt_bw(min(c["eb"])), _fmt_bw(max(c["eb"]))) if c["eb"] else "-"
        mb = "%s..%s" % (_fmt_bw(min(c["mb"])), _fmt_bw(max(c["mb"]))) if c["mb"] else "-"
        print("  %-7d %-7d %24s %24s %21s %21s" % (cls[0], cls[1], es, ms, eb, mb), file=out)
    if missing:
        print("FAIL: %d pair measurements missing or not finite" % missing, file=out)
        ok = False
    if bandwidth == "alone":
        ok = check_alone(t, profile, tolerance, tcp_gamma, out) and ok
    ok = check_interfaces(t, profile, tolerance, tcp_gamma, out) and ok
    ok = check_sharing(t, profile, tolerance, tcp_gamma, out) and ok
    for label, errs, fmt in (("latency", lat_err, _fmt_t), ("bandwidth", bw_err, _fmt_bw)):
        if not errs:
            if label == "bandwidth" and large is None and bandwidth == "pairs":
                print("FAIL: no pairs.large_min in the profile", file=out)
                ok = False
            continue
        errs.sort(key=lambda x: -x[0])
        worst = errs[0]
        bad = sum(1 for e in errs if not e[0] <= tolerance)
        verdict = "ok" if bad == 0 else "FAIL (%d of %d pairs beyond tolerance)" % (bad, len(errs))
        print("  worst %s error %.3g%% at %s -> %s: measured %s, expected %s  %s"
              % (label, 100 * worst[0], name(worst[1]), name(worst[2]), fmt(worst[3]), fmt(worst[4]), verdict),
              file=out)
        ok = ok and bad == 0
    # partition: the platform's zones, or (partition == "eco") ECO's rule on
    # the true one-way times (a host with a slow link is its own subnet)
    truth_of = [t.subnet_of[idx[r]] for r in range(n)]
    if partition == "eco":
        thr = (profile.get("subnets") or {}).get("threshold", 0.2)
        truth_of = eco_partition(lambda i, j: o_s + t.latency(idx[i], idx[j]) + o_r, n, thr)
    true_groups = [[name(r) for r in range(n) if truth_of[r] == s] for s in sorted(set(truth_of))]
    print("  true partition (%d): %s" % (len(true_groups), " | ".join(" ".join(g) for g in true_groups)),
          file=out)
    psub = [h.get("subnet") if isinstance(h, dict) else None for h in phosts]
    if len(psub) != n or any(s is None for s in psub):
        print("  profile partition: (no subnet ids)", file=out)
        if partition:
            print("FAIL: the profile's hosts have no subnet ids", file=out)
            ok = False
    else:
        groups = {}
        for r in range(n):
            groups.setdefault(psub[r], []).append(name(r))
        print("  profile partition (%d): %s" % (len(groups), " | ".join(
            "%s: %s" % (k, " ".join(v)) for k, v in groups.items())),
            file=out)
        same = _canonical(psub) == _canonical(truth_of)
        cnt = (profile.get("subnets") or {}).get("count")
        if cnt is not None and cnt != len(groups):
            print("  note: subnets.count = %s but hosts use %d subnet ids" % (cnt, len(groups)), file=out)
            same = False
        if partition:
            print("  partition: %s" % ("ok" if same else "FAIL (differs from the %s)" % (
                "ECO partition of the true times" if partition == "eco" else "platform's zones")), file=out)
            ok = ok and same
        else:
            print("  partition: %s (not checked)" % ("matches" if same else "differs"), file=out)
    classes = profile.get("classes") or []
    if classes:
        print("  profile classes (informational):", file=out)
        for c in classes:
            print("    %s-%s latency %s bandwidth %s bandwidth_alone %s"
                  % (c.get("a"), c.get("b"), _fmt_t(c.get("latency")), _fmt_bw(c.get("bandwidth")),
                     _fmt_bw(c.get("bandwidth_alone"))), file=out)
    print("PASS" if ok else "FAIL", file=out)
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("platform")
    ap.add_argument("profile", nargs="?")
    ap.add_argument("--hosts", help="host file (default: the .hosts file beside the platform)")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--os", dest="o_s", type=float, default=1e-6, help="send overhead per message, s")
    ap.add_argument("--or", dest="o_r", type=float, default=1e-6, help="receive overhead per message, s")
    ap.add_argument("--envelope", type=int, default=16,
                    help="bytes SMPI adds to every message (MPI envelope), default 16")
    ap.add_argument("--tcp-gamma", type=float, default=4194304.0,
                    help="SimGrid network/TCP-gamma, bytes (0: no window cap)")
    ap.add_argument("--partition", choices=["zones", "eco", "none"], default="zones",
                    help="the partition required: the platform's zones (default), ECO's rule on the true times "
                    "(slow_hosts: each slow host apart), or none (reported only)")
    ap.add_argument("--bandwidth", choices=["pairs", "alone"], default="pairs",
                    help="check every pair's bandwidth (sequential profiles), or each class's bandwidth measured "
                    "alone (concurrent profiles: pairs of a round share uplinks)")
    ap.add_argument("--agree", metavar="PROFILE2", help="also require this profile of the same platform (the other "
                    "mode) to give the same partition and per-pair latencies within the tolerance")
    args = ap.parse_args(argv)
    try:
        t = load(args.platform, args.hosts)
    except (ValueError, OSError, ET.ParseError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    if not args.profile:
        _print_truth(t)
        return 0
    try:
        with open(args.profile) as f:
            profile = json.load(f)
    except (OSError, ValueError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    try:
        ok = check(t, profile, args.tolerance, args.o_s, args.o_r, args.tcp_gamma,
                   False if args.partition == "none" else args.partition, args.envelope, bandwidth=args.bandwidth)
        if args.agree:
            with open(args.agree) as f:
                ok = check_agree(profile, json.load(f), args.tolerance) and ok
            print("PASS" if ok else "FAIL")
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        print("truth.py: bad profile: %s" % e, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

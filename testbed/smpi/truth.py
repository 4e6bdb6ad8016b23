#!/usr/bin/env python3
"""Ground truth of a SimGrid platform, and a checker for hetcoll-probe profiles.

    python3 testbed/smpi/truth.py PLATFORM.xml PROFILE.json
            [--tolerance 0.05] [--os 1e-6] [--or 1e-6] [--envelope 16]
            [--tcp-gamma 4194304] [--no-partition] [--hosts FILE]
    python3 testbed/smpi/truth.py PLATFORM.xml          # print the truth only
    python3 testbed/smpi/truth.py PLATFORM.xml --tree [--json]   # its tree
    python3 testbed/smpi/truth.py PLATFORM.xml PROFILE.json --tree [--tolerance 0.10]
            [--no-duplex]     # a version 2 profile's network (or a generated
                              # NAME.tree.json) against the platform's tree

As a module:

    t = truth.load("testbed/smpi/platforms/three_subnets.xml")
    t.hosts           # host names, in the order of the .hosts file beside the
                      # platform (the rank order of testbed/smpi/run)
    t.latency(i, j)   # sum of the latencies of the links on SimGrid's route, s
    t.bandwidth(i, j) # bottleneck bandwidth of that route (min over links), B/s
    t.route(i, j)     # the route's link names, in order
    t.subnet_of       # per host, the id of the zone holding it, numbered by
                      # first appearance in hosts order
    truth.tree(path)  # the platform as a tree of links, derived from the
                      # routes (hetcoll's profile version 2 "network"; see
                      # "The platform's tree" below); check_tree() compares
                      # a profile's with it, diff_trees() two trees exactly

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

--tree compares a profile's "network" with the tree derived from the routes
(check_tree): the same groups of hosts where the platform can show them
(each misplaced host reported), and every group's capacity each way — the
most it can move across its edge, so a limiting uplink, NIC or WAN link is
held to its capacity — within the tolerance (default 10 %); one line per
disagreement, exit status 1 on any. The profile may hold a subset of the
platform's hosts: the truth is then the tree of those hosts' routes.
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
# The platform's tree (issue 39): hetcoll's profile version 2 "network"
#
# tree(platform) derives the tree from the routes alone. Every link is
# classified by the host pairs whose routes cross it:
#   * a cut link: crossed by exactly the pairs leaving a host set X (one
#     direction of the edge above X), entering it (the other), or both (one
#     link carrying both directions, SimGrid's SHARED);
#   * a fabric: crossed by exactly the pairs whose two hosts are in different
#     branches at some switch (a <cluster>'s backbone: every message through
#     the switch, once).
# The host sets X of the cut links, oriented away from host 0, must be
# laminar (nested or disjoint) — else the routes are not a tree; they are the
# edges of an unrooted tree whose leaves are the hosts. Links of one edge are
# kept in route order. The tree is rooted at its latency center: on the path
# between the two hosts farthest apart (latency, then links), the switch or
# the point between two links of a switch-to-switch edge nearest half its
# latency (ties: nearest half its links, a switch before a point inside an
# edge, the earlier on the path). Inside an edge, the root takes the place
# between the links (a two-subnet platform: each subnet keeps its own uplink).
# Every pair's route is then checked against the tree's path (the same links).
#
# A tree (the dict) is:
#   {"platform": NAME, "hosts": [names], "nodes": [node, ...]}
# node 0 the root, every node after its parent; a node is
#   {"name", "parent" (index, -1 for the root), "host" (index into hosts, a
#    leaf only), "up" {"bandwidth" B/s, "latency" s} toward the parent,
#    "down" {...} from it, "shared" (the bottleneck both ways is one link),
#    "fabric" {"bandwidth", "latency"} (a switch's, optional),
#    "links" {"up": [...], "down": [...], "fabric": [...]} (link names)}
# An edge without links has bandwidth 0 (never limits) and latency 0.
# to_profile_network() and profile_tree() convert to and from a profile's
# "network" (docs/profile.md); diff_trees() compares two trees exactly,
# check_tree() a measured tree against the truth within a tolerance.

_EPS_T = 1e-12  # s: latencies closer than this are equal when rooting


def _bits(x):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def _popcount(x):
    return bin(x).count("1")


class _TreeBuilder:
    def __init__(self, t, names=None):
        self.t = t
        self.hosts = list(dict.fromkeys(t.hosts if names is None else names))
        for h in self.hosts:
            if h not in t.host_speed:
                raise ValueError("host %r is not in %s" % (h, t.platform))
        self.n = len(self.hosts)
        self.full = (1 << self.n) - 1

    # -- links as host sets --------------------------------------------------

    def _product(self, src, dst):
        """Bitset of the pairs (i, j), i in src, j in dst (bit i*n + j)."""
        out = 0
        for i in _bits(src):
            out |= dst << (i * self.n)
        return out

    def _usage(self):
        n = self.n
        self.routes = [[None] * n for _ in range(n)]
        self.usage, src, dst = {}, {}, {}
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                r = self.t.route_by_name(self.hosts[i], self.hosts[j])
                if len(set(r)) != len(r):
                    raise ValueError("the route %s -> %s crosses a link twice" % (self.hosts[i], self.hosts[j]))
                self.routes[i][j] = r
                bit = 1 << (i * n + j)
                for ln in r:
                    self.usage[ln] = self.usage.get(ln, 0) | bit
                    src[ln] = src.get(ln, 0) | (1 << i)
                    dst[ln] = dst.get(ln, 0) | (1 << j)
        # Cuts, oriented away from host 0: X -> {"out": links X -> rest, "in": rest -> X}
        self.cuts = {}
        self.fabric_links = []
        for ln in sorted(self.usage):
            u, s, d = self.usage[ln], src[ln], dst[ln]
            if s & d == 0 and s | d == self.full and u == self._product(s, d):
                x = d if s & 1 else s
                self.cuts.setdefault(x, {"out": [], "in": []})["out" if x == s else "in"].append(ln)
                continue
            x = u & self.full  # the hosts host 0 reaches through it: the far side of a shared cut
            if x and not x & 1 and u == self._product(x, self.full ^ x) | self._product(self.full ^ x, x):
                c = self.cuts.setdefault(x, {"out": [], "in": []})
                c["out"].append(ln)
                c["in"].append(ln)
                continue
            self.fabric_links.append(ln)
        for i in range(1, self.n):
            self.cuts.setdefault(1 << i, {"out": [], "in": []})
        self.cuts.setdefault(self.full ^ 1, {"out": [], "in": []})
        for x, c in self.cuts.items():
            i = next(_bits(x))  # a pair across the cut: i in x, host 0 outside
            c["out"].sort(key=self.routes[i][0].index)
            c["in"].sort(key=self.routes[0][i].index)

    # -- the unrooted tree ---------------------------------------------------

    def _names(self, x, limit=6):
        names = [self.hosts[i] for i in _bits(x)]
        return " ".join(names[:limit]) + (" ... (%d hosts)" % len(names) if len(names) > limit else "")

    def _skeleton(self):
        sets = sorted(self.cuts, key=lambda x: (_popcount(x), x))
        for k, a in enumerate(sets):
            for b in sets[k + 1:]:
                both = a & b
                if both and both != a and both != b:
                    why = self.cuts[a]["out"] + self.cuts[a]["in"] + self.cuts[b]["out"] + self.cuts[b]["in"]
                    raise ValueError("the routes are not a tree: hosts {%s} and {%s} are split crosswise (links %s)"
                                     % (self._names(a), self._names(b), " ".join(sorted(set(why)))))
        # vertices: 0..n-1 the hosts' leaves, then a switch per set of 2+ hosts
        self.vset = {}    # switch vertex -> its host set (rooted at host 0)
        vertex_of = {}
        for x in sets:
            if _popcount(x) == 1:
                vertex_of[x] = next(_bits(x))
            else:
                v = self.n + len(self.vset)
                self.vset[v] = x
                vertex_of[x] = v
        self.adj = {v: [] for v in list(range(self.n)) + list(self.vset)}
        self.edges = []   # {"a", "b", "ab": links a -> b, "ba": links b -> a}
        self.children = {v: [] for v in self.vset}
        for k, x in enumerate(sets):
            parent = next((y for y in sets[k + 1:] if y & x == x and y != x), None)
            a = vertex_of[x]
            b = vertex_of[parent] if parent is not None else 0  # the top set's parent: host 0's leaf
            if parent is not None:
                self.children[b].append(x)
            self._add_edge(a, b, self.cuts[x]["out"], self.cuts[x]["in"])
        # fabrics: a switch's, crossed by exactly the pairs in different branches
        through = {}
        for v, x in self.vset.items():
            same = self._product(self.full ^ x, self.full ^ x)
            for c in self.children[v]:
                same |= self._product(c, c)
            through[self._product(self.full, self.full) & ~same] = v
        self.fabric = {}
        for ln in self.fabric_links:
            v = through.get(self.usage[ln])
            if v is None:
                raise ValueError("the routes are not a tree: link %s is on routes that neither an edge nor a "
                                 "switch of a tree explains" % ln)
            self.fabric.setdefault(v, []).append(ln)
        for v, links in self.fabric.items():
            # a pair in different branches at v: a host under its first child, and host 0 (never under v)
            links.sort(key=self.routes[next(_bits(self.children[v][0]))][0].index)

    def _add_edge(self, a, b, ab, ba):
        e = len(self.edges)
        self.edges.append({"a": a, "b": b, "ab": list(ab), "ba": list(ba)})
        self.adj[a].append(e)
        self.adj[b].append(e)
        return e

    def _lat(self, links):
        return sum(self.t.links[ln].lat for ln in links)

    # -- the root ------------------------------------------------------------

    def _walk(self, start):
        """From leaf start: per vertex (latency, links, previous edge)."""
        seen = {start: (0.0, 0, None)}
        stack = [start]
        while stack:
            v = stack.pop()
            lat, cnt, _ = seen[v]
            for e in self.adj[v]:
                E = self.edges[e]
                w = E["b"] if E["a"] == v else E["a"]
                if w in seen:
                    continue
                chain = E["ab"] if E["a"] == v else E["ba"]
                seen[w] = (lat + self._lat(chain), cnt + len(chain), e)
                stack.append(w)
        return seen

    def _place_root(self):
        best = None  # (latency, links, i, j, walk)
        for i in range(self.n):
            walk = self._walk(i)
            for j in range(i + 1, self.n):
                lat, cnt, _ = walk[j]
                if best is None or lat > best[0] + _EPS_T or (abs(lat - best[0]) <= _EPS_T and cnt > best[1]):
                    best = (lat, cnt, i, j, walk)
        total, links, i, j, walk = best
        path, v = [j], j
        while v != i:  # back from j to i
            E = self.edges[walk[v][2]]
            v = E["a"] if E["b"] == v else E["b"]
            path.append(v)
        path.reverse()
        candidates = []  # (latency, links, kind 0 switch / 1 inside an edge, vertex or (edge, near, p))
        for m in range(1, len(path)):
            near, far = path[m - 1], path[m]
            e = walk[far][2]
            E = self.edges[e]
            fwd = E["ab"] if E["a"] == near else E["ba"]
            lat0, cnt0, _ = walk[near]
            if near >= self.n and far >= self.n:
                for p in range(1, len(fwd)):
                    candidates.append((lat0 + self._lat(fwd[:p]), cnt0 + p, 1, (e, near, p)))
            if far >= self.n:
                candidates.append((walk[far][0], walk[far][1], 0, far))
        if not candidates:  # two hosts and no switch: the middle of their edge
            e = walk[path[1]][2]
            E = self.edges[e]
            candidates.append((0.0, 0, 1, (e, E["a"], len(E["ab"]) // 2)))
        choice = None
        for c in candidates:
            dl, dc = abs(c[0] - total / 2), abs(c[1] - links / 2)
            if choice is None or dl < choice[0] - _EPS_T or (
                    abs(dl - choice[0]) <= _EPS_T and (dc < choice[1] or (dc == choice[1] and c[2] < choice[2]))):
                choice = (dl, dc, c[2], c[3])
        if choice[2] == 0:
            return choice[3]
        e, near, p = choice[3]
        E = self.edges[e]
        far = E["b"] if E["a"] == near else E["a"]
        fwd = E["ab"] if E["a"] == near else E["ba"]
        bwd = E["ba"] if E["a"] == near else E["ab"]
        q = len(bwd) - p if len(bwd) == len(fwd) else len(bwd) - round(p * len(bwd) / max(1, len(fwd)))
        root = self.n + len(self.vset) + 1
        while root in self.adj:
            root += 1
        self.adj[root] = []
        for v in (near, far):
            self.adj[v].remove(e)
        self.edges[e] = None
        self._add_edge(near, root, fwd[:p], bwd[q:])
        self._add_edge(far, root, bwd[:q], fwd[p:])
        return root

    # -- the rooted tree -----------------------------------------------------

    def _link(self, links):
        if not links:
            return {"bandwidth": 0.0, "latency": 0.0}
        return {"bandwidth": min(self.t.links[ln].bw for ln in links), "latency": self._lat(links)}

    def _emit(self, root):
        # subtree minimum host, for a deterministic order of children
        order, parent_edge, first = [root], {root: None}, {}
        k = 0
        while k < len(order):
            v = order[k]
            k += 1
            for e in self.adj[v]:
                E = self.edges[e]
                w = E["b"] if E["a"] == v else E["a"]
                if w not in parent_edge:
                    parent_edge[w] = e
                    order.append(w)
        for v in reversed(order):
            m = v if v < self.n else self.n
            for e in self.adj[v]:
                if e != parent_edge[v]:
                    E = self.edges[e]
                    m = min(m, first[E["b"] if E["a"] == v else E["a"]])
            first[v] = m
        nodes, index = [], {}
        queue = [root]
        while queue:
            v = queue.pop(0)
            index[v] = len(nodes)
            node = {"name": self.hosts[v] if v < self.n else ("root" if v == root else "switch%d" % len(nodes))}
            e = parent_edge[v]
            if e is None:
                node["parent"] = -1
            else:
                E = self.edges[e]
                up, down = (E["ab"], E["ba"]) if E["a"] == v else (E["ba"], E["ab"])
                p = E["b"] if E["a"] == v else E["a"]
                node["parent"] = index[p]
                if v < self.n:
                    node["host"] = v
                node["up"], node["down"] = self._link(up), self._link(down)
                node["shared"] = _shared(up, down, self.t.links)
                node["links"] = {"up": list(up), "down": list(down)}
            if v in self.fabric:
                node["fabric"] = self._link(self.fabric[v])
                node.setdefault("links", {})["fabric"] = list(self.fabric[v])
            nodes.append(node)
            kids = []
            for e2 in self.adj[v]:
                if e2 != e:
                    E2 = self.edges[e2]
                    kids.append(E2["b"] if E2["a"] == v else E2["a"])
            queue.extend(sorted(kids, key=lambda w: first[w]))
        return {"platform": os.path.splitext(os.path.basename(self.t.platform))[0], "hosts": list(self.hosts),
                "nodes": nodes}

    def _verify(self, tree):
        """Every pair's path in the tree crosses exactly its route's links."""
        nodes = tree["nodes"]
        leaf = {nd["host"]: k for k, nd in enumerate(nodes) if "host" in nd}
        chains = {}
        for h, k in leaf.items():
            c = [k]
            while nodes[c[-1]]["parent"] >= 0:
                c.append(nodes[c[-1]]["parent"])
            chains[h] = c
        for i in range(self.n):
            for j in range(self.n):
                if i == j:
                    continue
                ci, cj = chains[i], chains[j]
                above_j = set(cj)
                top = next(v for v in ci if v in above_j)
                links = []
                for v in ci[:ci.index(top)]:
                    links += nodes[v]["links"]["up"]
                for v in ci[1:ci.index(top) + 1] + cj[1:cj.index(top)]:
                    links += nodes[v].get("links", {}).get("fabric", [])
                for v in cj[:cj.index(top)]:
                    links += nodes[v]["links"]["down"]
                if sorted(links) != sorted(self.routes[i][j]):
                    raise ValueError("tree of %s: the path %s -> %s crosses %s, its route %s"
                                     % (self.t.platform, self.hosts[i], self.hosts[j], links, self.routes[i][j]))

    def build(self):
        if self.n == 0:
            raise ValueError("%s: no hosts" % self.t.platform)
        if self.n == 1:
            return {"platform": os.path.splitext(os.path.basename(self.t.platform))[0], "hosts": list(self.hosts),
                    "nodes": [{"name": "root", "parent": -1},
                              {"name": self.hosts[0], "parent": 0, "host": 0, "up": self._link([]),
                               "down": self._link([]), "shared": False, "links": {"up": [], "down": []}}]}
        self._usage()
        self._skeleton()
        tree = self._emit(self._place_root())
        self._verify(tree)
        return tree


def _shared(up, down, links):
    """One link carries both directions and is the bottleneck both ways."""
    if not up or not down:
        return False
    bu, bd = min(links[ln].bw for ln in up), min(links[ln].bw for ln in down)
    return any(links[ln].bw <= bu and links[ln].bw <= bd for ln in set(up) & set(down))


def tree(platform, hosts_path=None, names=None):
    """The platform's tree, derived from its routes (see above). platform: a
    path or a Truth; names: the hosts to keep (default: all, .hosts order)."""
    t = platform if isinstance(platform, Truth) else load(platform, hosts_path)
    if names is not None:
        order = {h: k for k, h in enumerate(dict.fromkeys(t.hosts))}
        missing = [h for h in names if h not in order]
        if missing:
            raise ValueError("hosts not in %s: %s" % (t.platform, " ".join(missing[:8])))
        names = sorted(dict.fromkeys(names), key=order.get)
    return _TreeBuilder(t, names).build()


def to_profile_network(tree_):
    """A tree as a profile's "network" (docs/profile.md): host indices into
    tree_["hosts"] (the profile's hosts[] must list them in that order)."""
    out = []
    for nd in tree_["nodes"]:
        p = {"name": nd["name"], "parent": nd["parent"]}
        if "host" in nd:
            p["host"] = nd["host"]
        if nd["parent"] >= 0:
            if nd.get("shared"):
                p["both"] = {"bandwidth": nd["up"]["bandwidth"], "latency": nd["up"]["latency"], "how": "declared"}
            else:
                for k in ("up", "down"):
                    p[k] = {"bandwidth": nd[k]["bandwidth"], "latency": nd[k]["latency"], "how": "declared"}
        if nd.get("fabric"):
            p["fabric"] = {"bandwidth": nd["fabric"]["bandwidth"], "latency": nd["fabric"]["latency"],
                           "how": "declared"}
        out.append(p)
    return out


def model_profile(tree_, o_s=1e-6, o_r=1e-6, created="1970-01-01T00:00:00Z"):
    """The platform as hetcoll would plan on it were the probe exact: a
    version 2 profile (docs/profile.md) whose network is the tree, one rank
    per host in tree_["hosts"] order, each host's send and receive overheads
    SMPI's (o_s, o_r per message, s), its per-byte send cost its interface's
    (1 / the leaf's link up), no receive copy, no computing cost (the
    project's SMPI settings do not simulate a reduction's arithmetic), one
    latency subnet. For the planner's property tests on generated platforms
    (scripts/regret.py --generated): what it chooses there against the
    simulation of what it would run."""
    hosts = tree_["hosts"]
    nodes = tree_["nodes"]
    leaf = {nd["host"]: nd for nd in nodes if "host" in nd}
    free = 1e-300  # a link that never limits (bandwidth 0): its per-byte cost

    def per_byte(nd):
        bw = nd["up"]["bandwidth"] if nd.get("up") else 0.0
        return 1.0 / bw if bw > 0 else free

    measure = lambda x: {"min": x, "median": x}  # noqa: E731
    return {
        "format": "hetcoll-profile", "version": 2,
        "measured": {"created": created, "tool": "testbed/smpi/truth.py (the platform's tree)",
                     "mpi": "none: the platform declared", "mode": "concurrent", "ranks": len(hosts), "repeats": 0,
                     "budget_s": 0.0, "seconds": 0.0, "budget_exhausted": False, "phases": {},
                     "small_bytes": 8, "large_bytes": 262144},
        "hosts": [{"name": h, "ranks": [k], "subnet": 0, "Sc": measure(o_s), "Sm": per_byte(leaf[k]),
                   "Rc": measure(o_r), "Rm": 0.0, "gamma": 0.0, "copy": 0.0} for k, h in enumerate(hosts)],
        "subnets": {"threshold": 0.2, "count": 1, "gap": 0.0},
        "ring": {"hosts": list(range(len(hosts))), "crossings": 0},
        "network": to_profile_network(tree_),
        "reductions": [], "lambda": [], "model": {"receives_use_cpu": False}, "tuned": [],
    }


def profile_tree(profile):
    """A profile's "network" (version 2) as a tree; its hosts are the
    profile's hosts[] names. A tree (a dict with "nodes") is returned as is."""
    if "nodes" in profile:
        return profile
    net = profile.get("network")
    if not net:
        raise ValueError("the profile has no network (a version 2 profile's tree)")
    hosts = [h["name"] for h in profile.get("hosts") or []]
    nodes = []
    for nd in net:
        node = {"name": nd.get("name", ""), "parent": nd["parent"]}
        if "host" in nd:
            node["host"] = nd["host"]
        if nd["parent"] >= 0:
            zero = {"bandwidth": 0.0, "latency": 0.0}
            both = nd.get("both")
            node["up"] = dict(both or nd.get("up") or zero)
            node["down"] = dict(both or nd.get("down") or zero)
            node["shared"] = both is not None
        if nd.get("fabric"):
            node["fabric"] = dict(nd["fabric"])
        nodes.append(node)
    return {"platform": profile.get("platform", "profile"), "hosts": hosts, "nodes": nodes}


class _TreeView:
    """A tree, unrooted: its cuts, their capacities each way and the
    switches' fabrics, whatever node is the root and however an edge's links
    are split around it. A cut is keyed by the host set on the far side of
    its edge from host ref (names); its group is the set under its edge in
    this tree (the side a reader expects: a rack, a host)."""

    def __init__(self, tree_, ref=None):
        hosts, nodes = tree_["hosts"], tree_["nodes"]
        if not nodes or nodes[0]["parent"] != -1:
            raise ValueError("the tree's first node is not its root")
        self.nodes = nodes
        self.kids = [[] for _ in nodes]
        seen = {}
        for k, nd in enumerate(nodes):
            p = nd["parent"]
            if k and not 0 <= p < k:
                raise ValueError("node %d (%s): parent %s does not come before it" % (k, nd.get("name"), p))
            if k and "host" in nodes[p]:
                raise ValueError("node %d (%s) is under a host" % (k, nd.get("name")))
            if k:
                self.kids[p].append(k)
            if "host" in nd:
                h = nd["host"]
                if not 0 <= h < len(hosts):
                    raise ValueError("node %d: host %s is not in the host list" % (k, h))
                if hosts[h] in seen:
                    raise ValueError("host %s has two leaves" % hosts[h])
                seen[hosts[h]] = k
        missing = [h for h in hosts if h not in seen]
        if missing:
            raise ValueError("hosts without a leaf: %s" % " ".join(missing[:8]))
        self.under = [None] * len(nodes)
        for k in range(len(nodes) - 1, -1, -1):
            s = {hosts[nodes[k]["host"]]} if "host" in nodes[k] else set()
            for c in self.kids[k]:
                s |= self.under[c]
            self.under[k] = frozenset(s)
        self.all = self.under[0]
        self.ref = ref if ref is not None else min(self.all)
        self.cut_edges = {}  # key -> [edge (the node under it), ...]
        self.group = {}      # key -> the hosts under its first edge
        for k in range(1, len(nodes)):
            s = self.under[k]
            if not s or s == self.all:
                continue
            key = s if self.ref not in s else self.all - s
            self.cut_edges.setdefault(key, []).append(k)
            self.group.setdefault(key, s)
        self._feed, self._absorb = {}, {}

    def key(self, side):
        side = frozenset(side)
        return side if self.ref not in side else self.all - side

    @staticmethod
    def bw(link):
        b = (link or {}).get("bandwidth", 0.0)
        return b if b and b > 0 else math.inf

    def cut(self, side, way):
        """Out of the host set side (way "out") or into it ("in"), across its
        edges: (bandwidth, latency, link names, one link both ways)."""
        bw, lat, names = math.inf, 0.0, set()
        for k in self.cut_edges[self.key(side)]:
            nd = self.nodes[k]
            d = "up" if (way == "out") == (self.under[k] == side) else "down"
            bw = min(bw, self.bw(nd.get(d)))
            lat += (nd.get(d) or {}).get("latency", 0.0)
            names |= set((nd.get("links") or {}).get(d, []))
        shared = any(self.nodes[k].get("shared") and self.bw(self.nodes[k].get("up")) <= bw
                     for k in self.cut_edges[self.key(side)])
        return bw, lat, names, shared

    # neighbours of node v: (w, edge node, capacity toward v, capacity away from v)
    def _nbrs(self, v):
        out = [(c, c, self.bw(self.nodes[c].get("up")), self.bw(self.nodes[c].get("down"))) for c in self.kids[v]]
        if v:
            p = self.nodes[v]["parent"]
            out.append((p, v, self.bw(self.nodes[v].get("down")), self.bw(self.nodes[v].get("up"))))
        return out

    def feed(self, v, edge):
        """The most the hosts on v's side of edge can send into it."""
        key = (v, edge)
        if key not in self._feed:
            if "host" in self.nodes[v]:
                self._feed[key] = math.inf
            else:
                total = sum(min(cap, self.feed(w, e)) for w, e, cap, _ in self._nbrs(v) if e != edge)
                self._feed[key] = min(self.bw(self.nodes[v].get("fabric")), total)
        return self._feed[key]

    def absorb(self, v, edge):
        """The most the hosts on v's side of edge can receive from it."""
        key = (v, edge)
        if key not in self._absorb:
            if "host" in self.nodes[v]:
                self._absorb[key] = math.inf
            else:
                total = sum(min(cap, self.absorb(w, e)) for w, e, _, cap in self._nbrs(v) if e != edge)
                self._absorb[key] = min(self.bw(self.nodes[v].get("fabric")), total)
        return self._absorb[key]

    def flow(self, side, way):
        """(the most the hosts of side move across its cut that way, whether
        the cut's own links are what limits it). A cut may be several edges
        in a row (through a root of two branches, or a switch of one): the
        ends are what lies beyond all of them."""
        edges = self.cut_edges[self.key(side)]
        count = {}
        for k in edges:
            for x in (k, self.nodes[k]["parent"]):
                count[x] = count.get(x, 0) + 1
        cap = self.cut(side, way)[0]
        for x, c in count.items():
            if c > 1:  # a switch inside the row: its fabric is crossed too
                cap = min(cap, self.bw(self.nodes[x].get("fabric")))
        inside = outside = None
        for k in edges:
            for x, x_side in ((k, self.under[k]), (self.nodes[k]["parent"], self.all - self.under[k])):
                if count[x] == 1:
                    if x_side == side:
                        inside = (x, k)
                    else:
                        outside = (x, k)
        if way == "out":
            ends = min(self.feed(*inside), self.absorb(*outside))
        else:
            ends = min(self.feed(*outside), self.absorb(*inside))
        return min(cap, ends), cap < ends * (1 - 1e-9)

    def shows(self, side):
        """Whether a probe can see the group: its edge adds latency, or its links limit it."""
        return any(self.cut(side, way)[1] > 0 or self.flow(side, way)[1] for way in ("out", "in"))

    def switches(self):
        """Switches by their branches (a frozenset of host sets): node index."""
        out = {}
        for k, nd in enumerate(self.nodes):
            if "host" in nd:
                continue
            branches = [self.under[c] for c in self.kids[k] if self.under[c]]
            if k and self.all - self.under[k]:
                branches.append(self.all - self.under[k])
            out[frozenset(branches)] = k
        return out

    def through(self, v):
        """(the most traffic switch v passes, whether its fabric is what
        limits it). Without the fabric, the most its branches exchange: a
        branch sends at most what it can bring (in), receives at most what it
        can take (out), never to itself — by max-flow min-cut, the least of
        all ins, all outs, and for each branch the others' ins and outs."""
        ins, outs = [], []
        for w, e, toward, away in self._nbrs(v):
            ins.append(min(toward, self.feed(w, e)))
            outs.append(min(away, self.absorb(w, e)))
        total = min([sum(ins), sum(outs)] + [sum(ins) - i + sum(outs) - o for i, o in zip(ins, outs)
                                             if math.isfinite(i) and math.isfinite(o)])
        fabric = self.bw(self.nodes[v].get("fabric"))
        return min(fabric, total), fabric < total * (1 - 1e-9)

    @staticmethod
    def describe(side):
        names = sorted(side)
        return "{%s}" % (" ".join(names[:6]) + (" ... (%d hosts)" % len(names) if len(names) > 6 else ""))


def _rel(a, b):
    if a == b:
        return 0.0
    if math.isinf(a) or math.isinf(b):
        return math.inf
    return abs(a - b) / max(abs(b), 1e-300)


def _order(view):
    return sorted(view.cut_edges, key=lambda k: (len(view.group[k]), sorted(view.group[k])))


def diff_trees(a, b, rel=1e-9, links=True):
    """Differences between two trees of the same hosts, as lines: the same
    cuts, and for each the same bandwidth, latency (and link names) each
    way and the same sharing; the same fabrics. Root-independent: a tree is
    compared by its edges, not by where it was rooted."""
    if set(a["hosts"]) != set(b["hosts"]):
        return ["hosts differ: %s" % " ".join(sorted(set(a["hosts"]) ^ set(b["hosts"]))[:8])]
    ref = min(a["hosts"])
    va, vb = _TreeView(a, ref), _TreeView(b, ref)
    out = []
    for key in _order(va):
        g = va.group[key]
        if key not in vb.cut_edges:
            out.append("group %s only in the first tree" % va.describe(g))
            continue
        for way in ("out", "in"):
            (ba, la, na, sa), (bb, lb, nb, sb) = va.cut(g, way), vb.cut(g, way)
            if _rel(ba, bb) > rel or abs(la - lb) > rel * max(la, lb, 1e-12):
                out.append("group %s %s: %s %s vs %s %s" % (va.describe(g), way, _fmt_bw(ba), _fmt_t(la),
                                                            _fmt_bw(bb), _fmt_t(lb)))
            if links and na != nb:
                out.append("group %s %s: links %s vs %s" % (va.describe(g), way, sorted(na), sorted(nb)))
        if va.cut(g, "out")[3] != vb.cut(g, "out")[3]:
            out.append("group %s: one link both ways: %s vs %s" % (va.describe(g), va.cut(g, "out")[3],
                                                                     vb.cut(g, "out")[3]))
    for key in _order(vb):
        if key not in va.cut_edges:
            out.append("group %s only in the second tree" % vb.describe(vb.group[key]))
    sa, sb = va.switches(), vb.switches()
    for br in sorted(set(sa) | set(sb), key=lambda br: sorted(min(x) for x in br)):
        if len(br) < 3 or br not in sa or br not in sb:
            continue  # a switch of two branches is an edge's middle; a missing one is a missing group above
        fa, fb = va.nodes[sa[br]].get("fabric"), vb.nodes[sb[br]].get("fabric")
        where = "switch of %s" % " | ".join(sorted(va.describe(x) for x in br)[:3])
        if (fa is None) != (fb is None):
            out.append("%s: fabric %s vs %s" % (where, fa, fb))
        elif fa and (_rel(va.bw(fa), vb.bw(fb)) > rel or abs(fa["latency"] - fb["latency"]) > 1e-15):
            out.append("%s: fabric %s vs %s" % (where, fa, fb))
        elif fa and links:
            la = (va.nodes[sa[br]].get("links") or {}).get("fabric", [])
            lb = (vb.nodes[sb[br]].get("links") or {}).get("fabric", [])
            if sorted(la) != sorted(lb):
                out.append("%s: fabric links %s vs %s" % (where, la, lb))
    return out


def check_tree(truth_tree, other, tolerance=0.10, duplex=True):
    """A measured tree (a profile's network, via profile_tree) against the
    platform's. Returns (lines of disagreement, lines of summary).

    (i) Grouping: every group of hosts the platform's tree has (the hosts
        under an edge) must be a group of the other, where the platform can
        show it — its edge adds latency or its links limit what the group
        moves; and every group of the other that shows must be the
        platform's. Each misplaced host is reported.
    (ii) Capacities: for every group both have, each way, the most the group
        can move across its edge — the edge's links, or what the hosts on
        either side can feed it (their NICs, the uplinks and fabrics below) —
        within the tolerance: a limiting uplink, NIC or WAN link is checked
        at its capacity, one that never limits only as not limiting. A
        switch of three branches or more whose fabric limits (in either
        tree): the most it passes.
    (iii) Duplex (duplex=True): where one link carrying both directions is
        what limits a group both ways, the other must say so ("both"), and
        where one link each way limits it, must not."""
    bad, notes = [], []
    names = set(truth_tree["hosts"])
    extra = [h for h in other["hosts"] if h not in names]
    if extra:
        return (["the profile's host %s is not in the platform" % h for h in extra], notes)
    if set(other["hosts"]) != names:
        missing = sorted(names - set(other["hosts"]))
        return (["host %s is in the platform's tree but not the profile's" % h for h in missing], notes)
    ref = truth_tree["hosts"][0]
    vt, vo = _TreeView(truth_tree, ref), _TreeView(other, ref)
    every = vt.all

    def inner(view, key):  # not one host's own edge
        return 1 < len(key) < len(every) - 1

    def nearest(side, view):
        """The group of view (or its complement) nearest side: fewest hosts
        apart, then most in common."""
        best = None
        for key in _order(view):
            for g in (view.group[key], every - view.group[key]):
                rank = (len(g ^ side), -len(g & side))
                if best is None or rank < best[0]:
                    best = (rank, g)
        return best[1]

    # (i) grouping
    visible = [k for k in _order(vt) if inner(vt, k) and vt.shows(vt.group[k])]
    hidden = [k for k in _order(vt) if inner(vt, k) and k not in visible]
    for key in visible:
        if key in vo.cut_edges:
            continue
        g = vt.group[key]
        near = nearest(g, vo)
        for h in sorted(g - near):
            bad.append("host %s: the platform has it in group %s, the profile's nearest group %s does not"
                       % (h, vt.describe(g), vo.describe(near)))
        for h in sorted(near - g):
            bad.append("host %s: the profile has it in group %s, the platform's nearest group %s does not"
                       % (h, vo.describe(near), vt.describe(g)))
    for key in _order(vo):
        g = vo.group[key]
        if key in vt.cut_edges or not inner(vo, key) or not vo.shows(g):
            continue
        near = nearest(g, vt)
        if vt.key(near) in visible and vt.key(near) not in vo.cut_edges:
            continue  # a group of the platform with hosts misplaced: reported host by host above
        bad.append("the profile's group %s is not a group of the platform (nearest: %s; differs by %s)"
                   % (vo.describe(g), vt.describe(near), " ".join(sorted(g ^ near)[:8])))
    notes.append("groups: %d in the platform (%d that latency or a limit shows, %d hosts' own), %d in the profile"
                 % (len(vt.cut_edges), len(visible), len(every), len(vo.cut_edges)))
    if hidden:
        notes.append("groups not required (no latency, never limiting): %s"
                     % ", ".join(vt.describe(vt.group[k]) for k in hidden[:6]))
    # (ii) capacities, (iii) duplex
    checked, worst = 0, (0.0, "")
    for key in _order(vt):
        if key not in vo.cut_edges:
            continue
        g = vt.group[key]
        limited = []
        for way in ("out", "in"):
            (ft, lim_t), (fo, _) = vt.flow(g, way), vo.flow(g, way)
            limited.append(lim_t)
            err = _rel(fo, ft)
            checked += 1
            links_t = vt.cut(g, way)[2]
            what = "its links %s" % " ".join(sorted(links_t)) if lim_t and links_t else "what its ends move"
            if err > worst[0]:
                worst = (err, "%s %s" % (vt.describe(g), way))
            if err > tolerance:
                bad.append("group %s %s: the profile moves at most %s, the platform %s (%s), %.3g%% off"
                           % (vt.describe(g), way, _fmt_bw(fo), _fmt_bw(ft), what, 100 * err))
        if duplex and all(limited):
            st, so = vt.cut(g, "out")[3], vo.cut(g, "out")[3]
            if st != so:
                bad.append("group %s: the platform's limiting link %s both directions, the profile's %s"
                           % (vt.describe(g), "carries" if st else "does not carry", "does" if so else "does not"))
    st, so = vt.switches(), vo.switches()
    for br, v in sorted(st.items(), key=lambda kv: kv[1]):
        if len(br) < 3 or br not in so:
            continue
        (ft, lim_t), (fo, lim_o) = vt.through(v), vo.through(so[br])
        if not lim_t and not lim_o:
            continue  # neither fabric limits: the ports are checked as the groups' edges
        err = _rel(fo, ft)
        checked += 1
        if err > worst[0]:
            worst = (err, "switch %s" % vt.nodes[v]["name"])
        if err > tolerance:
            bad.append("switch of %s: the profile passes at most %s (%s), the platform %s (%s), %.3g%% off"
                       % (" | ".join(sorted(vt.describe(x) for x in br)[:3]), _fmt_bw(fo),
                          "its fabric" if lim_o else "no fabric limits", _fmt_bw(ft),
                          "its fabric" if lim_t else "no fabric limits", 100 * err))
    notes.append("capacities: %d checked (groups each way, switches), worst %.3g%%%s, tolerance %g%%"
                 % (checked, 100 * worst[0], " at " + worst[1] if worst[1] else "", 100 * tolerance))
    return bad, notes


def _print_tree(tr, out=sys.stdout):
    """The tree, one line per switch and per run of like hosts under it."""
    nodes = tr["nodes"]
    kids = [[] for _ in nodes]
    for k, nd in enumerate(nodes[1:], 1):
        kids[nd["parent"]].append(k)

    def edge(nd):
        if nd["parent"] < 0:
            return ""
        ln = nd.get("links") or {}
        if nd.get("shared"):
            s = "both %s %s" % (_fmt_bw(nd["up"]["bandwidth"]), _fmt_t(nd["up"]["latency"]))
        else:
            s = "up %s %s, down %s %s" % (_fmt_bw(nd["up"]["bandwidth"]), _fmt_t(nd["up"]["latency"]),
                                         _fmt_bw(nd["down"]["bandwidth"]), _fmt_t(nd["down"]["latency"]))
        names = sorted(set(ln.get("up", []) + ln.get("down", [])))
        return s + (" [%s]" % " ".join(names) if names and "host" not in nd else "")

    def fabric(nd):
        f = nd.get("fabric")
        return " fabric %s %s" % (_fmt_bw(f["bandwidth"]), _fmt_t(f["latency"])) if f else ""

    def walk(k, depth):
        nd = nodes[k]
        print("%s%s: %s%s" % ("  " * depth, nd["name"], edge(nd), fabric(nd)) if nd["parent"] >= 0
              else "%s%s%s" % ("  " * depth, nd["name"], fabric(nd)), file=out)
        leaves = [c for c in kids[k] if "host" in nodes[c]]
        runs = []
        for c in leaves:
            if runs and edge(nodes[c]) == edge(nodes[runs[-1][0]]):
                runs[-1].append(c)
            else:
                runs.append([c])
        for r in runs:
            names = [nodes[c]["name"] for c in r]
            label = " ".join(names) if len(names) <= 4 else "%s ... %s (%d hosts)" % (names[0], names[-1], len(names))
            print("%s%s: %s" % ("  " * (depth + 1), label, edge(nodes[r[0]])), file=out)
        for c in kids[k]:
            if "host" not in nodes[c]:
                walk(c, depth + 1)

    print("tree of %s: %d hosts, %d switches" % (tr["platform"], len(tr["hosts"]),
                                                 sum(1 for nd in nodes if "host" not in nd)), file=out)
    walk(0, 1)


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
        def carries_both(i, j):
            bottleneck = t.bandwidth(i, j)
            return any(t.links[ln].bw <= bottleneck * (1 + 1e-9) for ln in set(t.route(i, j)) & set(t.route(j, i)))
        shared = carries_both(i, j)
        # A class whose pairs of that rate differ (racks of one latency
        # subnet: pairs inside a rack one link per direction, across a rack
        # its shared uplink): the probe's pair may be either kind.
        kinds = {carries_both(a, b) for a, b in pairs
                 if abs(t.flow_bandwidth(a, b, tcp_gamma) - expected) <= 1e-9 * expected}
        mixed = len(kinds) > 1
        one_way = c["bandwidth_alone"] or max(c["bandwidth_alone"], c["bandwidth"])
        both = c.get("bandwidth_both_ways", 0)
        if both > 0:
            full = both >= 0.75 * one_way
            good = mixed or full != shared
            ok = ok and good
            print("  class %d-%d both ways %s each: %s, the platform's bottleneck %s %s"
                  % (c["a"], c["b"], _fmt_bw(both), "full duplex" if full else "shared",
                     "differs among its pairs" if mixed else
                     "carries both directions" if shared else "one per direction", "ok" if good else "FAIL"),
                  file=out)
        # One pair both ways at once, receives first: SimGrid has no
        # connection between two ranks, so the pair takes turns only where
        # its own bottleneck carries both directions.
        same = c.get("bandwidth_same_pair", 0)
        if same > 0:
            turns = same < 0.75 * one_way
            good = mixed or turns == shared
            ok = ok and good
            print("  class %d-%d one pair both ways %s each: %s, the platform's bottleneck %s %s"
                  % (c["a"], c["b"], _fmt_bw(same), "takes turns" if turns else "both at once",
                     "differs among its pairs" if mixed else
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
    elif bandwidth == "none":
        print("  classes' bandwidth: not checked (--bandwidth none)", file=out)
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


def _tree_main(t, args):
    """truth.py PLATFORM --tree [PROFILE]: print the tree, or check a profile's."""
    if not args.profile:
        try:
            tr = tree(t)
        except ValueError as e:
            print("truth.py: %s" % e, file=sys.stderr)
            return 2
        if args.json:
            json.dump(tr, sys.stdout, indent=1)
            print()
        else:
            _print_tree(tr)
        return 0
    tolerance = 0.10 if args.tolerance is None else args.tolerance
    try:
        with open(args.profile) as f:
            other = profile_tree(json.load(f))
        names = [h for h in other["hosts"] if h in t.host_speed]
        truth_tree = tree(t, names=names)
        bad, notes = check_tree(truth_tree, other, tolerance, duplex=not args.no_duplex)
    except (OSError, KeyError, TypeError, ValueError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    print("tree of %s vs %s: %d hosts, tolerance %g" % (os.path.basename(t.platform),
                                                       os.path.basename(args.profile), len(names), tolerance))
    for line in bad:
        print("  DISAGREE %s" % line)
    for line in notes:
        print("  %s" % line)
    print("PASS" if not bad else "FAIL (%d disagreements)" % len(bad))
    return 0 if not bad else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("platform")
    ap.add_argument("profile", nargs="?")
    ap.add_argument("--hosts", help="host file (default: the .hosts file beside the platform)")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="relative error allowed (default 0.05; with --tree 0.10)")
    ap.add_argument("--os", dest="o_s", type=float, default=1e-6, help="send overhead per message, s")
    ap.add_argument("--or", dest="o_r", type=float, default=1e-6, help="receive overhead per message, s")
    ap.add_argument("--envelope", type=int, default=16,
                    help="bytes SMPI adds to every message (MPI envelope), default 16")
    ap.add_argument("--tcp-gamma", type=float, default=4194304.0,
                    help="SimGrid network/TCP-gamma, bytes (0: no window cap)")
    ap.add_argument("--partition", choices=["zones", "eco", "none"], default="zones",
                    help="the partition required: the platform's zones (default), ECO's rule on the true times "
                    "(slow_hosts: each slow host apart), or none (reported only)")
    ap.add_argument("--bandwidth", choices=["pairs", "alone", "none"], default="pairs",
                    help="check every pair's bandwidth (sequential profiles), or each class's bandwidth measured "
                    "alone (concurrent profiles: pairs of a round share uplinks), or neither (a platform whose "
                    "links differ by direction: a class is one rate both ways; its tree holds them, --tree)")
    ap.add_argument("--agree", metavar="PROFILE2", help="also require this profile of the same platform (the other "
                    "mode) to give the same partition and per-pair latencies within the tolerance")
    ap.add_argument("--tree", action="store_true",
                    help="the platform's tree (derived from its routes); with a profile, check the profile's "
                    "network (version 2) or a generated .tree.json against it")
    ap.add_argument("--json", action="store_true", help="with --tree and no profile: print the tree as JSON")
    ap.add_argument("--no-duplex", action="store_true",
                    help="with --tree: do not require the profile to tell a limiting link carrying both "
                    "directions from one link each way")
    args = ap.parse_args(argv)
    try:
        t = load(args.platform, args.hosts)
    except (ValueError, OSError, ET.ParseError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    if args.tree:
        return _tree_main(t, args)
    if args.tolerance is None:
        args.tolerance = 0.05
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

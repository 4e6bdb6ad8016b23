#!/usr/bin/env python3
"""Seeded generator of SimGrid 3.32 platforms, in families (issue 39, item 4).

    python3 testbed/smpi/generate.py --list
    python3 testbed/smpi/generate.py --seed N --family F [--hosts H] -o DIR [--check]
    python3 testbed/smpi/generate.py --all --seed N -o DIR [--count K] [--max-hosts 128] [--check]

Each platform is three files in DIR, NAME encoding the family, its main
parameter, the hosts and the seed (fat2_os1_32h_s7):

    NAME.xml        the platform (one Full zone of <cluster>s or Cluster
                    zones, joined by <zoneRoute>s; testbed/smpi/run loads it)
    NAME.hosts      one host name per line: the rank order (blocked rack by
                    rack, interleaved across racks, or shuffled: drawn)
    NAME.tree.json  the tree the generator meant: {"platform", "family",
                    "params", "hosts", "nodes"}, nodes as in
                    testbed/smpi/truth.py's tree() (node 0 the root, every
                    node after its parent; a node's "up"/"down" link to its
                    parent {"bandwidth" B/s, "latency" s}, "shared" when one
                    link carries both ways, a switch's "fabric", a leaf's
                    "host" index into "hosts", "links" the link names) — the
                    shape of hetcoll's profile version 2 "network"
                    (truth.to_profile_network converts it)
    NAME.topology.conf  its switches as a site declares them to Slurm
                    (topology.conf: a switch per rack with its hosts, one per
                    switch above with the switches below): for
                    hetcoll probe --topology

Everything is drawn from random.Random(seed): the same seed, family and
hosts give the same files. Without --hosts the hosts are drawn too (8 to
128, log-uniform), and --seed N --family F --hosts H regenerates a platform
of --all by its name. --all writes K platforms (default 3 per family), the
families in turn, platform k with seed N*1000+k and hosts drawn in
[8, --max-hosts] (sweep(): the platforms sweep_probe.py, harness.py
--generated and scripts/regret.py --generated use). --check compares each NAME.tree.json with the tree
testbed/smpi/truth.py derives from NAME.xml's routes (exit 1 on a
difference). Every host computes at 1 Gflop/s.
"""

import argparse
import json
import math
import os
import random
import sys
import textwrap

# ----------------------------------------------------------------------------
# Links and values: bandwidths in Mbit/s and latencies as SimGrid text
# ("2.5us"), converted to B/s and s the way SimGrid (and truth.py) parse them.

_LAT_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def _num(x):
    """Shortest text that reads back as x."""
    return str(int(x)) if x == int(x) else repr(float(x))


def _mbps_text(mbps):
    return _num(mbps) + "Mbps"


def _mbps_bps(mbps):
    return float(mbps) * 125000.0  # 0.125 B/s per bit/s, times 1000 twice: as SimGrid's unit table


def _lat_s(text):
    for unit in ("us", "ms", "s"):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * _LAT_UNITS[unit]
    raise ValueError("latency %r" % text)


def _us(x):
    return "%sus" % _num(x)


def _ms(x):
    return "%sms" % _num(x)


class Link:
    """A <link>: SHARED (one link, both ways) or SPLITDUPLEX (_UP and _DOWN)."""

    def __init__(self, lid, mbps, lat, policy="SHARED"):
        self.id, self.mbps, self.lat, self.policy = lid, mbps, lat, policy

    def ref(self, direction):
        """One direction of it in a route: (name in routes, link id, direction or None, B/s, s)."""
        if self.policy == "SPLITDUPLEX":
            return (self.id + "_" + direction, self.id, direction, _mbps_bps(self.mbps), _lat_s(self.lat))
        return (self.id, self.id, None, _mbps_bps(self.mbps), _lat_s(self.lat))

    def xml(self):
        return '<link id="%s" bandwidth="%s" latency="%s" sharing_policy="%s"/>' % (
            self.id, _mbps_text(self.mbps), self.lat, self.policy)


class Switch:
    """A switch above racks (the root, a pod, a site): its link to its parent."""

    def __init__(self, name, up=(), down=()):
        self.name = name
        self.up, self.down = list(up), list(down)  # refs (Link.ref) toward the parent, from it
        self.children = []
        self.parent = None

    def add(self, child):
        child.parent = self
        self.children.append(child)
        return child


class Rack(Switch):
    """A subnet behind one switch: a <cluster> (one NIC speed) or a Cluster
    zone (a NIC per host), its backbone the switch's fabric."""

    def __init__(self, name, hosts, nic_mbps, host_lat, bb_mbps, up=(), down=(), cluster=None):
        super().__init__(name, up, down)
        self.hosts = list(hosts)
        self.nic = list(nic_mbps) if isinstance(nic_mbps, (list, tuple)) else [nic_mbps] * len(self.hosts)
        self.host_lat = host_lat
        self.bb_mbps = bb_mbps
        self.router = name + "_router"
        # a <cluster> where its NICs are alike, unless told; else a Cluster zone, a link per host
        self.cluster = len(set(self.nic)) == 1 if cluster is None else cluster

    def host_refs(self, k):
        """(up, down) refs of host k's link."""
        if self.cluster:
            link = Link("%s_link_%d" % (self.name, k), self.nic[k], self.host_lat, "SPLITDUPLEX")
        else:
            link = Link(self.hosts[k] + "_nic", self.nic[k], self.host_lat, "SPLITDUPLEX")
        return link.ref("UP"), link.ref("DOWN")

    def backbone(self):
        lid = self.name + "_backbone"
        return Link(lid, self.bb_mbps, "0us").ref("") if self.bb_mbps else None

    def xml(self, indent):
        pad = " " * indent
        if self.cluster:
            prefix = self.hosts[0][:-1]
            assert all(h == "%s%d" % (prefix, k) for k, h in enumerate(self.hosts))
            return [pad + '<cluster id="%s" prefix="%s" suffix="" radical="0-%d" speed="1Gf"' % (
                self.name, prefix, len(self.hosts) - 1),
                pad + '         bw="%s" lat="%s" bb_bw="%s" bb_lat="0us" router_id="%s"/>' % (
                    _mbps_text(self.nic[0]), self.host_lat, _mbps_text(self.bb_mbps), self.router)]
        out = [pad + '<zone id="%s" routing="Cluster">' % self.name]
        for h, mbps in zip(self.hosts, self.nic):
            out.append(pad + '  <host id="%s" speed="1Gf"/>' % h)
            out.append(pad + '  ' + Link(h + "_nic", mbps, self.host_lat, "SPLITDUPLEX").xml())
            out.append(pad + '  <host_link id="%s" up="%s_nic_UP" down="%s_nic_DOWN"/>' % (h, h, h))
        out.append(pad + '  <router id="%s"/>' % self.router)
        out.append(pad + '  <backbone id="%s_backbone" bandwidth="%s" latency="0us"/>' % (
            self.name, _mbps_text(self.bb_mbps)))
        out.append(pad + '</zone>')
        return out


def _split(total, parts):
    """total as parts near-equal integers, larger first."""
    q, r = divmod(total, parts)
    return [q + 1 if k < r else q for k in range(parts)]


def _uplink(name, mbps, lat, policy):
    """A switch's link to its parent: (Link, up refs, down refs)."""
    link = Link(name, mbps, lat, policy)
    if policy == "SPLITDUPLEX":
        return link, [link.ref("UP")], [link.ref("DOWN")]
    return link, [link.ref("")], [link.ref("")]


# ----------------------------------------------------------------------------
# Families: each draws its parameters from rng for H hosts and returns
# (root switch, racks in order, extra <link>s, params, name tag).


def fat2(rng, hosts):
    host_gbps = rng.choice([1, 10, 25, 40, 100])
    k = rng.choice([k for k in (4, 8, 16, 32) if 2 * k <= hosts] or [2])
    racks = max(2, min(hosts // 2, math.ceil(hosts / k)))
    over = rng.choice([1, 2, 4, 8])
    host_lat, up_lat = rng.randint(15, 25) / 10, rng.randint(5, 10) / 10
    root = Switch("spine")
    links, out = [], []
    for r, size in enumerate(_split(hosts, racks)):
        mbps = size * host_gbps * 1000 / over
        link, up, down = _uplink("r%d_uplink" % r, mbps, _us(up_lat), "SPLITDUPLEX")
        links.append(link)
        out.append(root.add(Rack("r%d" % r, ["r%dh%d" % (r, i) for i in range(size)], host_gbps * 1000,
                                 _us(host_lat), 2 * size * host_gbps * 1000, up, down)))
    params = {"racks": racks, "rack_sizes": _split(hosts, racks), "host_gbps": host_gbps, "oversubscription": over,
              "host_latency_us": host_lat, "uplink_latency_us": up_lat,
              "rack_internal_latency_us": 2 * host_lat, "cross_rack_latency_us": 2 * host_lat + 2 * up_lat}
    return root, out, links, params, "os%d" % over


def fat3(rng, hosts):
    host_gbps = rng.choice([1, 10, 25, 40, 100])
    pods = rng.randint(2, min(4, hosts // 4))
    per_pod = rng.randint(2, max(2, min(4, hosts // (2 * pods))))
    over_rack, over_pod = rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4, 8])
    host_lat, rack_lat, pod_lat = rng.randint(10, 25) / 10, rng.randint(5, 10) / 10, rng.randint(5, 10) / 10
    sizes = _split(hosts, pods * per_pod)
    root = Switch("core")
    links, out = [], []
    for p in range(pods):
        rack_mbps = [sizes[p * per_pod + r] * host_gbps * 1000 / over_rack for r in range(per_pod)]
        link, up, down = _uplink("p%d_uplink" % p, sum(rack_mbps) / over_pod, _us(pod_lat), "SPLITDUPLEX")
        links.append(link)
        pod = root.add(Switch("p%d" % p, up, down))
        for r in range(per_pod):
            size = sizes[p * per_pod + r]
            link, up, down = _uplink("p%dr%d_uplink" % (p, r), rack_mbps[r], _us(rack_lat), "SPLITDUPLEX")
            links.append(link)
            out.append(pod.add(Rack("p%dr%d" % (p, r), ["p%dr%dh%d" % (p, r, i) for i in range(size)],
                                    host_gbps * 1000, _us(host_lat), 2 * size * host_gbps * 1000, up, down)))
    params = {"pods": pods, "racks_per_pod": per_pod, "rack_sizes": sizes, "host_gbps": host_gbps,
              "rack_oversubscription": over_rack, "pod_oversubscription": over_pod, "host_latency_us": host_lat,
              "rack_uplink_latency_us": rack_lat, "pod_uplink_latency_us": pod_lat}
    return root, out, links, params, "os%dx%d" % (over_rack, over_pod)


def equal_latency_racks(rng, hosts):
    racks = rng.randint(2, min(8, hosts // 2))
    nic = rng.choice([100, 1000, 10000])
    host_lat = rng.randint(1, 50)
    policy = rng.choice(["SHARED", "SPLITDUPLEX"])
    factors = rng.sample([1.25, 2, 2.5, 4, 5, 8, 10, 16, 20], racks)
    root = Switch("switch")
    links, out, up_mbps = [], [], []
    for r, size in enumerate(_split(hosts, racks)):
        mbps = size * nic / factors[r]
        up_mbps.append(mbps)
        link, up, down = _uplink("r%d_uplink" % r, mbps, "0us", policy)
        links.append(link)
        out.append(root.add(Rack("r%d" % r, ["r%dh%d" % (r, i) for i in range(size)], nic, _us(host_lat),
                                 2 * size * nic, up, down)))
    params = {"racks": racks, "rack_sizes": _split(hosts, racks), "nic_mbps": nic, "host_latency_us": host_lat,
              "route_latency_us": 2 * host_lat, "uplink_policy": policy, "uplink_mbps": up_mbps,
              "nics_per_uplink": factors}
    return root, out, links, params, "%dr" % racks


def slow_nics(rng, hosts):
    subnets = rng.randint(2, min(6, hosts // 2))
    root = Switch("switch")
    links, out, desc = [], [], []
    for s, size in enumerate(_split(hosts, subnets)):
        nic = rng.choice([100, 1000])
        factor = rng.choice([2, 5, 10])
        host_lat, up_lat = rng.randint(5, 50), rng.randint(20, 500)
        link, up, down = _uplink("s%d_uplink" % s, nic * factor, _us(up_lat), "SHARED")
        links.append(link)
        out.append(root.add(Rack("s%d" % s, ["s%dh%d" % (s, i) for i in range(size)], nic, _us(host_lat),
                                 2 * size * nic, up, down)))
        desc.append({"hosts": size, "nic_mbps": nic, "uplink_mbps": nic * factor, "host_latency_us": host_lat,
                     "uplink_latency_us": up_lat})
    return root, out, links, {"subnets": desc, "uplink_policy": "SHARED"}, "%dsub" % subnets


def mixed_nics(rng, hosts):
    subnets = rng.randint(1, min(4, hosts // 2))
    slow, fast = rng.choice([(100, 1000), (1000, 10000), (1000, 2500), (2500, 10000)])
    policy = rng.choice(["SHARED", "SPLITDUPLEX"])
    root = Switch("switch")
    links, out, desc = [], [], []
    for s, size in enumerate(_split(hosts, subnets)):
        p_slow = rng.choice([0.25, 0.5])
        nics = [slow if rng.random() < p_slow else fast for _ in range(size)]
        if s == 0 and len(set(nics)) == 1:  # the first subnet always mixes
            nics[rng.randrange(size)] = slow if nics[0] == fast else fast
        host_lat = rng.randint(1, 50)
        up, down = [], []
        d = {"hosts": size, "nic_mbps": nics, "host_latency_us": host_lat}
        if subnets > 1:
            mbps, up_lat = rng.choice([1000, 2500, 5000, 10000]), rng.randint(10, 200)
            link, up, down = _uplink("s%d_uplink" % s, mbps, _us(up_lat), policy)
            links.append(link)
            d.update(uplink_mbps=mbps, uplink_latency_us=up_lat)
        rack = Rack("s%d" % s, ["s%dh%d" % (s, i) for i in range(size)], nics, _us(host_lat), 2 * sum(nics), up, down,
                    cluster=False)
        out.append(root.add(rack) if subnets > 1 else rack)
        desc.append(d)
    return (root if subnets > 1 else out[0]), out, links, {
        "subnets": desc, "nic_mbps": [slow, fast], "uplink_policy": policy if subnets > 1 else None}, \
        "%dsub" % subnets


def asymmetric_uplinks(rng, hosts):
    subnets = rng.randint(2, min(5, hosts // 2))
    root = Switch("switch")
    links, out, desc = [], [], []
    for s, size in enumerate(_split(hosts, subnets)):
        nic = rng.choice([1000, 10000])
        out_mbps, in_mbps = rng.sample([50, 100, 200, 500, 1000, 2000, 5000], 2)
        host_lat, up_lat = rng.randint(5, 50), rng.randint(50, 500)
        lo = Link("s%d_out" % s, out_mbps, _us(up_lat))
        li = Link("s%d_in" % s, in_mbps, _us(up_lat))
        links += [lo, li]
        out.append(root.add(Rack("s%d" % s, ["s%dh%d" % (s, i) for i in range(size)], nic, _us(host_lat),
                                 2 * size * nic, [lo.ref("")], [li.ref("")])))
        desc.append({"hosts": size, "nic_mbps": nic, "out_mbps": out_mbps, "in_mbps": in_mbps,
                     "host_latency_us": host_lat, "uplink_latency_us": up_lat})
    return root, out, links, {"subnets": desc}, "%dsub" % subnets


TCP_GAMMA = 4194304.0  # SimGrid's network/TCP-gamma default: a flow moves at most gamma / (2 latency)


def wan_sites(rng, hosts):
    sites = min(rng.choice([2, 3]), hosts // 2)
    racks = [rng.randint(1, 3) for _ in range(sites)]
    per_site = _split(hosts, sites)
    racks = [max(1, min(r, n // 2)) for r, n in zip(racks, per_site)]
    site_p = []
    for s in range(sites):
        site_p.append({"hosts": per_site[s], "racks": racks[s], "nic_mbps": rng.choice([1000, 10000]),
                       "host_latency_us": rng.randint(1, 50), "rack_uplink_mbps": rng.choice([1000, 2500, 5000, 10000]),
                       "rack_uplink_latency_us": rng.randint(5, 50), "wan_latency_ms": rng.randint(5, 100) / 10})
    # The WAN's bandwidth: at most 80 % of what TCP's window lets one flow
    # move over the longest route through it, so that a link is what limits.
    local = max(2 * (p["host_latency_us"] + p["rack_uplink_latency_us"]) for p in site_p) * 1e-6
    for s, p in enumerate(site_p):
        longest = max(p["wan_latency_ms"] + q["wan_latency_ms"] for t, q in enumerate(site_p) if t != s) * 1e-3 + local
        cap = 0.8 * TCP_GAMMA / (2 * longest)
        p["wan_mbps"] = rng.choice([m for m in (100, 200, 500, 1000, 2000, 5000, 10000) if _mbps_bps(m) <= cap] or [100])
    root = Switch("wan")
    links, out = [], []
    for s, p in enumerate(site_p):
        link, up, down = _uplink("site%d_wan" % s, p["wan_mbps"], _ms(p["wan_latency_ms"]), "SPLITDUPLEX")
        links.append(link)
        site = root.add(Switch("site%d" % s, up, down))
        for r, size in enumerate(_split(p["hosts"], p["racks"])):
            link, up, down = _uplink("s%dr%d_uplink" % (s, r), p["rack_uplink_mbps"],
                                     _us(p["rack_uplink_latency_us"]), "SPLITDUPLEX")
            links.append(link)
            out.append(site.add(Rack("s%dr%d" % (s, r), ["s%dr%dh%d" % (s, r, i) for i in range(size)],
                                     p["nic_mbps"], _us(p["host_latency_us"]), 2 * size * p["nic_mbps"], up, down)))
    return root, out, links, {"sites": site_p, "tcp_gamma": TCP_GAMMA}, "%dsite" % sites


# name: (function, fewest hosts, description). Every rack gets two hosts or more.
FAMILIES = {
    "fat2": (fat2, 4, "2-level fat tree: racks of 2-32 hosts (1-100 Gbit/s NICs) on a spine, each rack's uplink "
             "oversubscribed 1, 2, 4 or 8:1; rack-internal and cross-rack latencies close (about 4 vs 6 us)"),
    "fat3": (fat3, 8, "3-level fat tree: 2-4 pods of 2-4 racks on a core; rack and pod uplinks each "
             "oversubscribed 1-8:1; 1-2.5 us host links, 0.5-1 us uplinks"),
    "equal_latency_racks": (equal_latency_racks, 4, "2-8 racks where every route has exactly the same latency "
                            "(1-50 us host links, zero-latency backbones and uplinks); racks differ only by their "
                            "uplink's bandwidth (1/1.25 to 1/20 of their NICs')"),
    "slow_nics": (slow_nics, 4, "2-6 subnets whose 100 Mbit/s or 1 Gbit/s NICs are slower than their shared "
                  "uplinks (2, 5 or 10 times a NIC)"),
    "mixed_nics": (mixed_nics, 3, "1-4 subnets (Cluster zones) whose hosts' NICs differ inside a subnet "
                   "(100 Mbit/s and 1 Gbit/s, 1 and 10 Gbit/s, ...)"),
    "asymmetric_uplinks": (asymmetric_uplinks, 4, "2-5 subnets whose uplink has a different capacity each way "
                           "(separate out and in links, 50 Mbit/s-5 Gbit/s)"),
    "wan_sites": (wan_sites, 4, "2-3 sites of 1-3 racks each, joined by a WAN: 0.5-10 ms and 100 Mbit/s-10 Gbit/s "
                  "per site (1-20 ms between sites), below TCP's window"),
}


# ----------------------------------------------------------------------------
# One platform


def _route(a, b):
    """Refs from rack a to rack b: up to their lowest common switch, down."""
    above_a = []
    s = a
    while s is not None:
        above_a.append(s)
        s = s.parent
    chain_b = []
    s = b
    while s not in above_a:
        chain_b.append(s)
        s = s.parent
    top = s
    refs = []
    for s in above_a[:above_a.index(top)]:
        refs += s.up
    for s in reversed(chain_b):
        refs += s.down
    return refs


def _mirror(refs):
    """The reverse of a route as SimGrid makes it from a symmetrical one:
    links in reverse order, each split-duplex link's other half."""
    swap = {"UP": "DOWN", "DOWN": "UP"}
    out = []
    for name, lid, d, bw, lat in reversed(refs):
        out.append((name, lid, d, bw, lat) if d is None else (lid + "_" + swap[d], lid, swap[d], bw, lat))
    return out


def _xml(name, comment, root, racks, links):
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           "<!-- %s -->" % comment.replace("--", "-").replace("\n", "\n     "), '<platform version="4.1">']
    if root is racks[0]:  # one subnet: it is the platform
        out += racks[0].xml(2)
        out.append("</platform>")
        return "\n".join(out) + "\n"
    out.append('  <zone id="%s" routing="Full">' % name)
    for r in racks:
        out += r.xml(4)
    out.append("")
    for link in links:
        out.append("    " + link.xml())
    out.append("")
    for i, a in enumerate(racks):
        for b in racks[i + 1:]:
            ab, ba = _route(a, b), _route(b, a)
            pairs = [(a, b, ab, "")] if ba == _mirror(ab) else [(a, b, ab, ' symmetrical="NO"'),
                                                               (b, a, ba, ' symmetrical="NO"')]
            for s, d, refs, sym in pairs:
                out.append('    <zoneRoute src="%s" dst="%s" gw_src="%s" gw_dst="%s"%s>' % (
                    s.name, d.name, s.router, d.router, sym))
                out.append("      " + "".join('<link_ctn id="%s"%s/>' % (lid, ' direction="%s"' % d if d else "")
                                              for _, lid, d, _, _ in refs))
                out.append("    </zoneRoute>")
    out.append("  </zone>")
    out.append("</platform>")
    return "\n".join(out) + "\n"


def _value(refs):
    if not refs:
        return {"bandwidth": 0.0, "latency": 0.0}
    return {"bandwidth": min(r[3] for r in refs), "latency": sum(r[4] for r in refs)}


def _intended_tree(root, racks, order):
    """The tree the generator meant, as truth.tree() writes one."""
    index = {h: k for k, h in enumerate(order)}

    class N:
        def __init__(self, name, up, down, host=None, fabric=None):
            self.name, self.up, self.down, self.host, self.fabric = name, list(up), list(down), host, fabric
            self.kids = []

    def build(s):
        node = N(s.name, s.up, s.down, fabric=s.backbone() if isinstance(s, Rack) else None)
        if isinstance(s, Rack):
            for k, h in enumerate(s.hosts):
                up, down = s.host_refs(k)
                node.kids.append(N(h, [up], [down], host=index[h]))
        for c in s.children:
            node.kids.append(build(c))
        # a switch with one switch under it and no fabric is no branch point: its links join the child's edge
        for k, c in enumerate(node.kids):
            while c.host is None and len(c.kids) == 1 and c.fabric is None:
                g = c.kids[0]
                g.up, g.down = g.up + c.up, c.down + g.down
                c = g
            node.kids[k] = c
        return node

    top = build(root)

    def first(n):
        return n.host if n.host is not None else min(first(k) for k in n.kids)

    nodes, queue = [], [(top, -1)]
    while queue:
        n, parent = queue.pop(0)
        d = {"name": n.name, "parent": parent}
        if n.host is not None:
            d["host"] = n.host
        if parent >= 0:
            d["up"], d["down"] = _value(n.up), _value(n.down)
            names_up, names_down = [r[0] for r in n.up], [r[0] for r in n.down]
            bu, bd = d["up"]["bandwidth"], d["down"]["bandwidth"]
            d["shared"] = any(r[3] <= bu and r[3] <= bd for r in n.up if r[0] in names_down)
            d["links"] = {"up": names_up, "down": names_down}
        if n.fabric:
            d["fabric"] = _value([n.fabric])
            d.setdefault("links", {})["fabric"] = [n.fabric[0]]
        k = len(nodes)
        nodes.append(d)
        queue.extend((c, k) for c in sorted(n.kids, key=first))
    return nodes


def _topology_conf(name, root):
    """The tree as a site would declare it to Slurm (topology.conf: a switch
    per rack with its hosts, a switch per switch above with those below it),
    for hetcoll probe --topology."""
    lines = ["# %s: the switches of testbed/smpi/generate.py's platform, as Slurm's topology.conf" % name]

    def walk(s):
        for c in s.children:
            walk(c)
        parts = ["SwitchName=%s" % s.name]
        if isinstance(s, Rack) and s.hosts:
            parts.append("Nodes=%s" % ",".join(s.hosts))
        if s.children:
            parts.append("Switches=%s" % ",".join(c.name for c in s.children))
        if len(parts) > 1:
            lines.append(" ".join(parts))

    walk(root)
    return "\n".join(lines) + "\n"


def generate(family, seed, hosts=None):
    """One platform: {"name", "xml", "hosts" (rank order), "tree"}."""
    if family not in FAMILIES:
        raise ValueError("unknown family %r (--list shows them)" % family)
    fn, least, _ = FAMILIES[family]
    rng = random.Random(seed)
    drawn = int(round(math.exp(rng.uniform(math.log(8), math.log(128)))))
    h = drawn if hosts is None else hosts
    if h < least:
        raise ValueError("family %s needs at least %d hosts" % (family, least))
    root, racks, links, params, tag = fn(rng, h)
    order_kind = rng.choice(["blocked", "interleaved", "shuffled"])
    blocked = [x for r in racks for x in r.hosts]
    if order_kind == "interleaved":
        order = [r.hosts[k] for k in range(max(len(r.hosts) for r in racks)) for r in racks if k < len(r.hosts)]
    elif order_kind == "shuffled":
        order = list(blocked)
        rng.shuffle(order)
    else:
        order = blocked
    name = "%s_%s_%dh_s%d" % (family, tag, h, seed)
    params = dict(params, hosts=h, order=order_kind)
    # (an XML comment may not hold "--": the command is told in words)
    comment = "\n".join(["%s, written by testbed/smpi/generate.py (seed %d, family %s, %d hosts):" % (
        name, seed, family, h)] + textwrap.wrap(FAMILIES[family][2] + ".", 75) + textwrap.wrap(
        "Drawn: " + json.dumps(params, sort_keys=True), 75) + [
        "The tree meant is %s.tree.json; testbed/smpi/truth.py derives it from the routes." % name])
    xml = _xml(name, comment, root, racks, links)
    tree = {"platform": name, "family": family, "params": params, "hosts": order,
            "nodes": _intended_tree(root, racks, order)}
    return {"name": name, "xml": xml, "hosts": order, "tree": tree, "topology": _topology_conf(name, root)}


def sweep(seed, count, max_hosts=48, families=None):
    """The platforms of a sweep, one after another: count of them, the
    families in turn (default all), platform k drawn from seed*1000+k with
    hosts uniform in [8, max_hosts] (at least the family's least)."""
    fams = list(families or FAMILIES)
    for f in fams:
        if f not in FAMILIES:
            raise ValueError("unknown family %r (--list shows them)" % f)
    for k in range(count):
        family = fams[k % len(fams)]
        s = seed * 1000 + k
        yield generate(family, s, max(FAMILIES[family][1], random.Random(s).randint(8, max_hosts)))


def write(platform, outdir):
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, platform["name"])
    with open(base + ".xml", "w") as f:
        f.write(platform["xml"])
    with open(base + ".hosts", "w") as f:
        f.write("\n".join(platform["hosts"]) + "\n")
    with open(base + ".tree.json", "w") as f:
        json.dump(platform["tree"], f, indent=1)
        f.write("\n")
    with open(base + ".topology.conf", "w") as f:
        f.write(platform["topology"])
    return base


def self_check(base):
    """Differences between NAME.tree.json and the tree truth.py derives from NAME.xml."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import truth
    with open(base + ".tree.json") as f:
        meant = json.load(f)
    return truth.diff_trees(meant, truth.tree(base + ".xml"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the families and exit")
    ap.add_argument("--family", choices=sorted(FAMILIES))
    ap.add_argument("--all", action="store_true", help="K platforms over all families")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--hosts", type=int, help="hosts (default: drawn, 8-128)")
    ap.add_argument("--count", type=int, default=3 * len(FAMILIES), help="with --all: how many (default 3 per family)")
    ap.add_argument("--max-hosts", type=int, default=128, help="with --all: hosts drawn in [8, this]")
    ap.add_argument("-o", "--output", help="the directory to write to")
    ap.add_argument("--check", action="store_true",
                    help="compare each tree.json with the tree truth.py derives from the XML's routes")
    args = ap.parse_args(argv)
    if args.list:
        for f, (_, least, what) in FAMILIES.items():
            print("%-19s %s" % (f, what))
        return 0
    if args.seed is None or not args.output or args.all == bool(args.family):
        ap.error("give --seed N, -o DIR and one of --family F or --all")
    if args.all:
        if not 1 <= args.count <= 1000 or args.max_hosts < 8:
            ap.error("--count is 1-1000, --max-hosts at least 8")
        platforms = sweep(args.seed, args.count, args.max_hosts)
    else:
        platforms = iter([None])
    failed = 0
    for p in platforms:
        try:
            p = p or generate(args.family, args.seed, args.hosts)
        except ValueError as e:
            print("generate.py: %s" % e, file=sys.stderr)
            return 2
        base = write(p, args.output)
        line = "%s.{xml,hosts,tree.json,topology.conf}: %s, %d hosts" % (base, p["tree"]["family"], len(p["hosts"]))
        if args.check:
            diffs = self_check(base)
            line += ", tree %s" % ("as meant" if not diffs else "DIFFERS")
            for d in diffs:
                line += "\n  " + d
            failed += bool(diffs)
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

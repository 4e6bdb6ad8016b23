"""A SimGrid platform read from its XML (the constructs listed in truth.py's
docstring): its zones, links and hosts, and SimGrid's route between any two
netpoints, with each host pair's latency and bottleneck bandwidth (Truth,
load).
"""

import math
import os
import xml.etree.ElementTree as ET

from .units import _radicals, parse_bandwidth, parse_speed, parse_time


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

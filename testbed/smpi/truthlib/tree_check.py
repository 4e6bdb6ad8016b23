"""Trees compared, whatever their roots: _TreeView (a tree unrooted: its
cuts, what each moves each way, its switches), diff_trees() (two trees,
exactly) and check_tree() (a profile's tree against the platform's, within
a tolerance: truth.py --tree).
"""

import math

from .units import _fmt_bw, _fmt_t


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

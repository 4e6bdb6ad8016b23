"""The platform's tree (issue 39), derived from its routes alone: tree() and
_TreeBuilder. The comment below says how, and what a tree (the dict) holds.
"""

import os

from .routes import Truth, load


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

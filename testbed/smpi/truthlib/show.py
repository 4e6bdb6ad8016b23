"""What truth.py prints of a platform without a profile: its tree
(_print_tree, with --tree) and its subnets with their latencies and
bandwidths (_print_truth).
"""

import sys

from .units import _fmt_bw, _fmt_t


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

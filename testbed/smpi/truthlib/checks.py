"""A profile's measurements against the truth (truth.py PLATFORM PROFILE):
check() — every pair's small-message time and bandwidth, the partition —
and the checks it runs (check_alone: classes measured alone;
check_interfaces; check_sharing), check_agree() for two profiles of one
platform, and eco_partition(), ECO's partition of the true costs.
"""

import math
import os
import sys

from .units import _fmt_bw, _fmt_t


def _canonical(labels):
    ids = {}
    return [ids.setdefault(x, len(ids)) for x in labels]


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

"""Text and Graphviz renderings of schedules: trees with times, time formats."""
from __future__ import annotations


def format_time(t: float, unit: str) -> str:
    """Model steps as plain numbers; seconds with a readable unit."""
    if unit != "s":
        return f"{t:.6g}"
    a = abs(t)
    if a == 0:
        return "0"
    if a >= 1:
        return f"{t:.4g} s"
    if a >= 1e-3:
        return f"{t * 1e3:.4g} ms"
    if a >= 1e-6:
        return f"{t * 1e6:.4g} us"
    return f"{t * 1e9:.4g} ns"


def tree_from_schedule(schedule, sim):
    """If every rank but one receives exactly one message (a broadcast tree),
    return [{rank, parent, sent, received}] by rank; otherwise None.

    ``sent`` is when the parent started the send, ``received`` when the data
    is usable at the rank (the end of its receive)."""
    n = schedule.nranks
    msgs = schedule.messages()
    if len(msgs) != n - 1:
        return None
    parent = [None] * n
    sent = [0.0] * n
    received = [0.0] * n
    start, end = sim.start, sim.end  # each read of these copies the whole list: once
    for src, sop, dst, rop, _ in msgs:
        if parent[dst] is not None:
            return None
        parent[dst] = src
        sent[dst] = start[schedule.first_op(src) + sop]
        received[dst] = end[schedule.first_op(dst) + rop]
    roots = [r for r in range(n) if parent[r] is None]
    if len(roots) != 1:
        return None
    return [{"rank": r, "parent": parent[r], "sent": sent[r], "received": received[r]} for r in range(n)]


def _children(tree):
    kids = {t["rank"]: [] for t in tree}
    root = None
    for t in tree:
        if t["parent"] is None:
            root = t["rank"]
        else:
            kids[t["parent"]].append(t)
    for v in kids.values():
        v.sort(key=lambda t: (t["sent"], t["rank"]))
    return root, kids


def tree_lines(tree, unit: str, max_lines: int = 64):
    """Box-drawing lines: 'rank @received  [sent]', children in send order."""
    root, kids = _children(tree)
    by_rank = {t["rank"]: t for t in tree}
    lines = [f"{root} @{format_time(by_rank[root]['received'], unit)}"]
    stack = [(c, "", i == len(kids[root]) - 1) for i, c in reversed(list(enumerate(kids[root])))]
    total = len(tree)
    while stack:
        node, prefix, last = stack.pop()
        if len(lines) >= max_lines:
            lines.append(f"... {total - len(lines)} more ranks (use --json or --dot for the whole tree)")
            break
        lines.append(f"{prefix}{'└─ ' if last else '├─ '}{node['rank']} @{format_time(node['received'], unit)}"
                     f"  [{format_time(node['sent'], unit)}]")
        child_prefix = prefix + ("   " if last else "│  ")
        cs = kids[node["rank"]]
        for i, c in reversed(list(enumerate(cs))):
            stack.append((c, child_prefix, i == len(cs) - 1))
    return lines


def tree_dot(schedule, sim, tree) -> str:
    """Graphviz: node labels are 'rank / time it has the data', edge labels the
    send time (as in Bruck et al. Figs. 1-2). Non-tree schedules become a
    message graph with 'sent→received' edge labels."""
    unit = sim.unit
    out = ["digraph schedule {", '  node [shape=circle, fontname="Helvetica"];',
           f'  label="{schedule.algorithm}  ({schedule.collective.describe()})"; labelloc=t;']
    if tree is not None:
        for t in tree:
            out.append(f'  r{t["rank"]} [label="{t["rank"]}\\n@{format_time(t["received"], unit)}"];')
        for t in sorted(tree, key=lambda t: t["sent"]):
            if t["parent"] is not None:
                out.append(f'  r{t["parent"]} -> r{t["rank"]} [label="{format_time(t["sent"], unit)}"];')
    else:
        finish, start, end = sim.rank_finish, sim.start, sim.end  # copies: once
        for r in range(schedule.nranks):
            out.append(f'  r{r} [label="{r}\\n@{format_time(finish[r], unit)}"];')
        for src, sop, dst, rop, nbytes in schedule.messages():
            s = start[schedule.first_op(src) + sop]
            e = end[schedule.first_op(dst) + rop]
            out.append(f'  r{src} -> r{dst} [label="{format_time(s, unit)}→{format_time(e, unit)}"];')
    out.append("}")
    return "\n".join(out) + "\n"

"""Text and Graphviz renderings of schedules: trees with times, time formats."""
from __future__ import annotations

from . import _core


def format_time(t: float, unit: str = "s") -> str:
    """hetcoll's one writing of a time (src/model/units.cpp): three
    significant digits and a unit ("64.8 us", "1.96 ms", "0 s"); model
    steps (postal units) as plain numbers."""
    if unit != "s":
        return f"{t:.6g}"
    return _core.format_time(t)


class BroadcastTree:
    """A broadcast tree with its times, as arrays by rank (built in C++, so a
    tree of 10^6 ranks costs well under a second): ``parent`` (None at the
    root), ``sent`` (when the parent started the send), ``received`` (when
    the data is usable at the rank) and each rank's children in send order."""

    def __init__(self, d):
        self.parent = d["parent"]
        self.sent = d["sent"]
        self.received = d["received"]
        self._child_at = d["child_at"]
        self._children = d["children"]
        self.root = self.parent.index(-1)

    def __len__(self):
        return len(self.parent)

    def children(self, rank: int):
        return self._children[self._child_at[rank]:self._child_at[rank + 1]]

    def records(self):
        """[{rank, parent, sent, received}] by rank (the JSON form)."""
        return [{"rank": r, "parent": None if p < 0 else p, "sent": s, "received": t}
                for r, (p, s, t) in enumerate(zip(self.parent, self.sent, self.received))]


def tree_from_schedule(schedule, sim):
    """If every rank but one receives exactly one message (a broadcast tree),
    its BroadcastTree; otherwise None."""
    d = schedule.broadcast_tree(sim)
    return None if d is None else BroadcastTree(d)


def tree_lines(tree, unit: str, max_lines: int = 64):
    """Box-drawing lines: 'rank @received  [sent]', children in send order."""
    root = tree.root
    lines = [f"{root} @{format_time(tree.received[root], unit)}"]
    kids = tree.children(root)
    stack = [(c, "", i == len(kids) - 1) for i, c in reversed(list(enumerate(kids)))]
    total = len(tree)
    while stack:
        node, prefix, last = stack.pop()
        if len(lines) >= max_lines:
            lines.append(f"... {total - len(lines)} more ranks (use --json or --dot for the whole tree)")
            break
        lines.append(f"{prefix}{'└─ ' if last else '├─ '}{node} @{format_time(tree.received[node], unit)}"
                     f"  [{format_time(tree.sent[node], unit)}]")
        child_prefix = prefix + ("   " if last else "│  ")
        cs = tree.children(node)
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
        for r, t in enumerate(tree.received):
            out.append(f'  r{r} [label="{r}\\n@{format_time(t, unit)}"];')
        for r in sorted(range(len(tree)), key=lambda r: tree.sent[r]):
            if tree.parent[r] >= 0:
                out.append(f'  r{tree.parent[r]} -> r{r} [label="{format_time(tree.sent[r], unit)}"];')
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

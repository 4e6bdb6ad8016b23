"""A schedule as numpy arrays, for analysis and plots in the user's own
code (numpy is an optional dependency: ``pip install hetcoll[plots]``).

``ops(schedule)``: one row per operation of every rank, in program order —
``rank``, ``index`` (the op's number on its rank), ``kind`` (send, recv,
reduce, copy: as strings), ``peer`` (-1 for local ops), ``bytes``, and with
a ``SimResult`` its ``start`` and ``end``.
``messages(schedule)``: one row per message — ``sender``, ``send_op``,
``receiver``, ``recv_op``, ``bytes`` (every send matched to its receive).
"""
from __future__ import annotations


def _np():
    try:
        import numpy
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("hetcoll.arrays needs numpy (pip install numpy, or hetcoll[plots])") from None
    return numpy


def ops(schedule, sim=None) -> dict:
    """Every rank's operations as columns (numpy arrays of equal length)."""
    np = _np()
    rank, index, kind, peer, nbytes = [], [], [], [], []
    for r in range(schedule.nranks):
        for i, o in enumerate(schedule.ops(r)):
            rank.append(r)
            index.append(i)
            kind.append(o["kind"])
            peer.append(o["peer"] if o["kind"] in ("send", "recv") else -1)
            nbytes.append(o["bytes"])
    out = {"rank": np.array(rank, dtype=np.int32), "index": np.array(index, dtype=np.int64),
           "kind": np.array(kind), "peer": np.array(peer, dtype=np.int32), "bytes": np.array(nbytes, dtype=np.uint64)}
    if sim is not None:
        out["start"] = np.asarray(sim.start, dtype=np.float64)
        out["end"] = np.asarray(sim.end, dtype=np.float64)
        if len(out["start"]) != len(rank):
            raise ValueError("the SimResult is not this schedule's (simulate it with timeline)")
    return out


def messages(schedule) -> dict:
    """Every message: sender, its send op, receiver, its receive op, bytes."""
    np = _np()
    rows = schedule.messages()
    cols = list(zip(*rows)) if rows else [(), (), (), (), ()]
    return {"sender": np.array(cols[0], dtype=np.int32), "send_op": np.array(cols[1], dtype=np.int64),
            "receiver": np.array(cols[2], dtype=np.int32), "recv_op": np.array(cols[3], dtype=np.int64),
            "bytes": np.array(cols[4], dtype=np.uint64)}

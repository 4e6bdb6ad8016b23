"""A sampled proof of a schedule too large to build here in full.

`hetcoll plan` validates the chosen schedule in full (every buffer access, every message
matched) when it has at most PROOF_OPS operations. Past that — a ring or an exchange at
thousands of ranks has p^2 operations — it builds the programs of a sample of ranks, as
the MPI layer does (each rank builds only its own), and the programs of every rank they
exchange messages with, and checks that every message between them is matched: each send
from a to b by a receive at b from a of the same length, in the same order.
"""
from __future__ import annotations

import time

from . import _core

PROOF_OPS = 1_000_000   # built and validated in full up to here (about a second)
PROOF_WORK = 4_000_000  # steps of following the data a full validation takes at most (about a second)
PLAN_SECONDS = 2.5       # a sampled proof takes what is left of this since `hetcoll plan` started
SAMPLE_RANKS = 16       # ranks whose programs a sampled proof builds
PEERS_PER_RANK = 16     # and at most this many of each one's peers
SAMPLE_OPS = 4_000_000  # ops a sampled proof builds in all (past it no further program, once a message matched)
RANK_OPS = 16_000_000   # one rank's program at most
SAMPLE_SECONDS = 2.0    # and no further program past this (a group of millions builds each slowly)


def sample_ranks(p: int, root: int = 0, n: int = SAMPLE_RANKS) -> list:
    picked = {0, p - 1, root % p}
    for i in range(n):
        picked.add(int(i * p / n))
    return sorted(picked)


def sampled_proof(algorithm: str, coll, model, seconds: float = SAMPLE_SECONDS) -> dict:
    """Builds sampled ranks' programs and their peers'; every message between them matched.

    Returns {"ok", "ranks", "peers", "messages", "problem", "summary"}.
    """
    p = coll.nranks
    programs = {}
    built = [0]
    start = time.monotonic()

    def spent():
        return built[0] >= SAMPLE_OPS or time.monotonic() - start > seconds

    def program(r):
        if r not in programs:
            s = _core.generate(algorithm, coll, model, RANK_OPS, r)
            built[0] += s.total_ops
            programs[r] = s.traffic(r)
        return programs[r]

    def between(r, q, is_send):
        return [n for send, peer, n in program(r) if send == is_send and peer == q]

    sampled = sample_ranks(p, getattr(coll, "root", 0))
    done, checked, messages, problem = [], set(), 0, ""
    for r in sampled:
        if done and spent():
            break
        done.append(r)
        peers = sorted({peer for _, peer, _ in program(r)})
        if len(peers) > PEERS_PER_RANK:  # spread over the peers
            step = len(peers) / PEERS_PER_RANK
            peers = [peers[int(i * step)] for i in range(PEERS_PER_RANK)]
        for q in peers:
            if messages and q not in programs and spent():
                continue  # the budget is spent: only programs already built
            for a, b in ((r, q), (q, r)):
                if (a, b) in checked:
                    continue
                checked.add((a, b))
                sent, got = between(a, b, True), between(b, a, False)
                messages += len(sent)
                if sent != got and not problem:
                    problem = (f"rank {a} sends {len(sent)} messages to rank {b} "
                               f"({sum(sent)} bytes), which receives {len(got)} from it ({sum(got)} bytes)")
    peers_built = len(programs) - len(done)
    summary = (f"sampled: the programs of {len(done)} ranks and {peers_built} of their peers built ({built[0]} ops), "
               f"{messages} messages between them matched"
               if not problem else f"sampled: {problem}")
    return {"ok": not problem, "ranks": done, "peers": peers_built, "messages": messages, "problem": problem,
            "summary": summary}

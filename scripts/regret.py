#!/usr/bin/env python3
"""No regret: the planner's choice against the candidates it listed, each forced and simulated.

For sampled calls (collective, ranks, size, model) the decision point the MPI layer uses
(_core.decide) chooses; then the top candidates it listed are built and simulated in full
(no budget), and the regret is the chosen schedule's simulated time over the best one's.
Candidates whose schedule is too large to build (more than 1,500,000 operations: minutes of simulation on a network) are left out:
nothing can say what they cost but their price.

    scripts/regret.py [--samples N] [--max-ranks P] [--seed S] [--top K] [--profile FILE]...
                      [--generated K [--platform-seed S] [--max-hosts H]] [--json FILE]

--generated K adds K platforms of testbed/smpi/generate.py's sweep (its families in turn, hosts
drawn in [8, H]), each as the profile the probe would write were it exact (truth.model_profile: the
platform's tree of links); a call on one takes at most its hosts as ranks.

Each row also says how far the choice's price is from the simulation of its schedule
("price_error": price / simulated - 1): a composite ranked by its phases' price, or any estimate,
against what it builds.

Prints one line a call and a summary: the worst regret and how many are above 1.05x.
"""
import argparse
import json
import os
import pathlib
import random
import sys
import tempfile
import time

import hetcoll._core as core

MODELS = [
    "postal:lambda=1.224",
    "postal:lambda=2.5",
    "hockney:alpha=2us,beta=0.1ns,gamma=0.05ns",
    "loggp:L=2us,o=1us,g=1us,G=0.8ns",
    "cluster:subnets=8+8+8+8,ranks=2",
    "cluster:subnets=16+4+4,ranks=4,up_bw=1GB/s",
    "cluster:subnets=64+64+64+64,ranks=4",
]
# The four calls (issue 24), always part of the sample.
REGRESSIONS = [
    ("bcast", 1552, 8, "postal:lambda=1.224"),
    ("barrier", 1552, 8, "postal:lambda=1.224"),
    ("reduce_scatter_block", 600, 1 << 20, "loggp:L=2us,o=1us,g=1us,G=0.8ns"),
    ("reduce_scatter_block", 1536, 1 << 20, "cluster:subnets=256+256+128+128,ranks=2"),
]
SIZES = [8, 4096, 65536, 1 << 20]
OP_LIMIT = 1_500_000  # larger schedules take minutes to simulate on a network: priced only


def model_ranks(spec):
    m = core.parse_model(spec)
    return m, (m.ranks if hasattr(m, "ranks") else 0)


def one(op, p, nbytes, spec, top, profile_models):
    m = profile_models.get(spec) or core.parse_model(spec)
    elem = 8
    count = 0 if op == "barrier" else max(1, nbytes // elem)
    coll = core.collective(op, p, count, 0, elem)
    t0 = time.perf_counter()
    d = core.decide(coll, m)
    ms = 1e3 * (time.perf_counter() - t0)
    rep = d["representative"]
    sims = {}
    gm = core.group_model(m, [], p)  # the ranks on the model's hosts as the decision placed them
    for c in (d["candidates"] or [])[:top]:
        try:
            sims[c["algorithm"]] = core.generate(c["algorithm"], rep, gm, OP_LIMIT).simulate(gm, False).makespan
        except Exception:  # too large to build: priced only
            pass
    chosen = d["algorithm"]
    row = {"op": op, "ranks": p, "bytes": nbytes, "model": spec, "choice": chosen, "predicted": d["predicted"],
           "decide_ms": ms}
    if chosen in sims and sims:
        best = min(sims, key=sims.get)
        row.update(simulated=sims[chosen], best=best, best_simulated=sims[best],
                   regret=sims[chosen] / sims[best] if sims[best] > 0 else 1.0,
                   price_error=d["predicted"] / sims[chosen] - 1 if sims[chosen] > 0 else 0.0)
    return row


def generated_profiles(count, seed, max_hosts, outdir):
    """count platforms of generate.py's families in turn, from seed, as exact profiles in outdir."""
    smpi = pathlib.Path(__file__).resolve().parents[1] / "testbed" / "smpi"
    sys.path.insert(0, str(smpi))
    import generate  # noqa: E402
    import truth  # noqa: E402
    paths = []
    for p in generate.sweep(seed, count, max_hosts):
        base = generate.write(p, outdir)
        with open(base + ".tree.json") as f:
            tree = json.load(f)
        path = base + ".model.json"
        with open(path, "w") as f:
            json.dump(truth.model_profile(tree), f)
        paths.append(path)
    return paths


def sample(n, max_ranks, seed):
    rng = random.Random(seed)
    ops = [o for o in core.regular_collective_ops()]
    calls = list(REGRESSIONS)
    while len(calls) < n:
        op = rng.choice(ops)
        p = rng.choice([5, 12, 48, 100, 256, 600, 1024, 1552, 2048, 4096])
        p = min(p, max_ranks)
        spec = rng.choice(MODELS)
        if spec.startswith(("cluster", "profile:")):
            cap = core.parse_model(spec).ranks
            p = min(p, cap)
        nbytes = 8 if op == "barrier" else rng.choice(SIZES)
        calls.append((op, p, nbytes, spec))
    return calls


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--max-ranks", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--top", type=int, default=6, help="candidates forced and simulated per call")
    ap.add_argument("--profile", action="append", default=[], help="a probed profile to add to the models")
    ap.add_argument("--generated", type=int, default=0, metavar="K",
                    help="add K generated platforms (testbed/smpi/generate.py) as exact profiles")
    ap.add_argument("--platform-seed", type=int, default=39, help="the generated platforms' seed")
    ap.add_argument("--max-hosts", type=int, default=48, help="the generated platforms' largest size")
    ap.add_argument("--only-profiles", action="store_true", help="sample calls on the profiles only")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    profile_models = {}
    workdir = tempfile.TemporaryDirectory(prefix="hetcoll-regret-")
    if a.generated:
        a.profile += generated_profiles(a.generated, a.platform_seed, a.max_hosts, workdir.name)
    if a.only_profiles:
        if not a.profile:
            ap.error("--only-profiles needs --profile or --generated")
        MODELS.clear()
        REGRESSIONS.clear()
    for f in a.profile:
        profile_models[f"profile:{f}"] = core.parse_model(f"profile:{f}")
        MODELS.append(f"profile:{f}")
    rows = []
    for op, p, nbytes, spec in sample(a.samples, a.max_ranks, a.seed):
        r = one(op, p, nbytes, spec, a.top, profile_models)
        rows.append(r)
        reg = f"{r['regret']:.3f}" if "regret" in r else "  -  "
        err = f"{100 * r['price_error']:+6.1f}%" if "price_error" in r else "   -   "
        name = os.path.basename(spec[8:]) if spec.startswith("profile:") else spec
        print(f"{op:21s} p={p:5d} {core.format_bytes(nbytes):>8s} {name[:42]:42s} {r['decide_ms']:8.1f} ms  "
              f"{r['choice']:36s} regret {reg} price {err}" + (f"  (best {r['best']})" if r.get("regret", 1) > 1.05 else ""))
        sys.stdout.flush()
    workdir.cleanup()
    regrets = [r["regret"] for r in rows if "regret" in r]
    worst = max(regrets) if regrets else 1.0
    above = sum(1 for x in regrets if x > 1.05)
    print(f"{len(rows)} calls, {len(regrets)} with the choice simulated: worst regret {worst:.3f}, "
          f"{above} above 1.05x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "worst": worst, "above_1_05": above}, f, indent=1)
    return 0 if above == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""hetcoll correct in simulated time (deterministic): a link the profile does
not know, found from what a job measured, and the decisions it then makes
for calls the job never measured.

Three cases (--case), each a platform with one link slower than the profile
planned on knows (the profile probed on the platform before the change):

  three_subnets_slowC  three_subnets (16 hosts, a version 1 profile: classes)
                       with subnet C's uplink 10x slower;
  fat_tree32_slowrack  fat_tree32 (32 hosts, a version 2 profile: the racks
                       the probe found) with rack r5's uplink 4x slower;
  cluster16_slownic    cluster16 (16 hosts on one switch, a version 1
                       profile) with host h9's interface 8x slower each way
                       (written after the fit was built: a machine it was
                       not tuned on).

Steps:

 1. learn: a job per training call (collective, size), planned on the wrong
    profile, HETCOLL_LEARN=1, HETCOLL_LEARN_SAVE: each job's file is the
    next job's profile, so the measured decisions accumulate;
 2. hetcoll correct on the last file: the factors it finds (it should put
    the slowness on C's uplink), the corrected profile;
 3. the probe on three_subnets_slowC itself: the right profile;
 4. held-out calls (collectives and sizes no job measured), learning off:
    native, hetcoll on the wrong profile, on the corrected one, on the right
    one — the median call of each, the ratios to native, and each one's
    prediction (hetcoll plan on the same profile) against what ran.

    testbed/smpi/correct.py [--case NAME] [--out DIR] [--calls N] [--train-calls N] [--check | --replan]

Writes DIR/NAME/correct.json, correct.md, correct.txt (hetcoll correct's
report) and the profiles. Builds nothing: run
scripts/build_smpi.sh first.
"""
import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys

from learning import bench_json  # testbed/smpi/learning.py, beside this file

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUN = HERE / "run"
BUILD = ROOT / "build" / "smpi"
HETCOLL = ROOT / ".venv" / "bin" / "hetcoll"
PROFILES = ROOT / "bench" / "results" / "smpi_harness" / "profiles"
# name: (platform, ranks, the profile probed before the change, the training
# calls (learned), the held-out calls (never measured))
CASES = {
    "three_subnets_slowC": ("three_subnets_slowC", 16, PROFILES / "three_subnets.json",
                            [("bcast", 1048576), ("allreduce", 65536), ("alltoall", 65536), ("allgather", 1048576)],
                            [("bcast", 65536), ("allreduce", 1048576), ("reduce", 1048576), ("allgather", 65536),
                             ("gather", 1048576), ("scatter", 1048576), ("reduce_scatter_block", 1048576),
                             ("alltoall", 1048576)]),
    "fat_tree32_slowrack": ("fat_tree32_slowrack", 32, PROFILES / "fat_tree32.json",
                            [("bcast", 1048576), ("allreduce", 1048576), ("alltoall", 65536), ("allgather", 1048576)],
                            [("bcast", 65536), ("allreduce", 65536), ("reduce", 1048576), ("allgather", 65536),
                             ("gather", 1048576), ("scatter", 1048576), ("reduce_scatter_block", 1048576),
                             ("alltoall", 1048576)]),
    "cluster16_slownic": ("cluster16_slownic", 16, PROFILES / "cluster16.json",
                          [("bcast", 1048576), ("allreduce", 1048576), ("alltoall", 65536), ("allgather", 1048576)],
                          [("bcast", 65536), ("allreduce", 65536), ("reduce", 1048576), ("allgather", 65536),
                           ("gather", 1048576), ("scatter", 1048576), ("reduce_scatter_block", 1048576),
                           ("alltoall", 1048576)]),
}
PLATFORM, NP = None, None  # the case's, set by main
# The links each case slowed, as hetcoll correct names them, and by how much.
SLOW_LINKS = {"three_subnets_slowC": [("link subnet 2 both ways (4 hosts: c0 … c3)", 10.0)],
              "fat_tree32_slowrack": [("link subnet 0 rack 4 both ways (4 hosts: r5h0 … r5h3)", 4.0)],
              "cluster16_slownic": [("link h9 up and down", 8.0)]}


def check(calls, train, wrong, slow):
    """Learn `train` on the platform, correct, and hold the factors to the
    platform's truth: the slow links first, each within 25 % of its
    slowdown, no other factor beyond 1.5x either way."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hetcoll-correct-check-") as tmp:
        profile = wrong
        for i, (op, size) in enumerate(train):
            save = pathlib.Path(tmp) / f"learned{i}.json"
            bench(op, size, calls, profile, True, save)
            if not save.exists():
                sys.exit(f"correct.py --check: {op} {size}: nothing learned in {calls} calls")
            profile = save
        c = subprocess.run([str(HETCOLL), "correct", str(profile), "--json"], capture_output=True, text=True)
    if c.returncode != 0:
        sys.exit(f"correct.py --check: hetcoll correct failed: {c.stderr}")
    d = json.loads(c.stdout)
    moved = sorted(d["factors"], key=lambda f: -abs(math.log(f["factor"])))
    print(f"largest factors: {[(f['what'], round(f['factor'], 3)) for f in moved[:4]]}; prediction error "
          f"{d['error_median'][0]:.1%} -> {d['error_median'][1]:.1%}")
    # Each slow link among the first factors, or a link the report says
    # fits the times as well (a symmetric machine's racks, measured by
    # calls that treat them alike).
    top, rest = moved[:len(slow)], moved[len(slow):]
    found = [next((f for f in top if f["what"] == name or name in f["alike"]), None) for name, _ in slow]
    ok = all(f and abs(math.log(f["factor"] / factor)) < math.log(1.25) for f, (_, factor) in zip(found, slow)) \
        and all(abs(math.log(f["factor"])) < math.log(1.5) for f in rest) and d["error_median"][1] < 0.05
    if not ok:
        sys.exit(f"correct.py --check: expected {slow} alone (or among those alike)")
    alike = any(f["what"] != name for f, (name, _) in zip(found, slow))
    print("correct.py --check: the slow link found" + (" (among links alike)" if alike else ""))
    return 0


def bench(op, size, calls, profile, learn, save=None, native=False):
    env = dict(os.environ)
    env["HETCOLL_PROFILE"] = str(profile)
    env["HETCOLL_LEARN"] = "1" if learn else "0"
    env.pop("HETCOLL_LEARN_SAVE", None)
    env.pop("HETCOLL_ALGO", None)
    if save:
        env["HETCOLL_LEARN_SAVE"] = str(save)
    d = bench_json(PLATFORM, NP, [op, size, "--calls", calls] + ([] if native else ["--hetcoll", "--no-native"]),
                   env, f"{op} {size}", timeout=7200)
    if not d.get("ok", False):
        raise RuntimeError(f"{op} {size}: a result was wrong")
    return d


PER_BLOCK = {"allgather", "gather", "scatter", "alltoall", "reduce_scatter_block"}  # smpi_bench's SIZE: all blocks


def plan(op, size, profile):
    """hetcoll's decision and prediction for the call on the profile's model
    (hetcoll plan's size is a rank's block)."""
    b = size // NP if op in PER_BLOCK else size
    out = subprocess.run([str(HETCOLL), "plan", op, "-n", str(NP), "-b", str(b), "--elem-size", "8", "-m",
                          str(profile), "--json"],
                         capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    return d.get("algorithm"), d.get("predicted_s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES), default="three_subnets_slowC")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "smpi_correct"))
    ap.add_argument("--calls", type=int, default=100, help="calls of each held-out job")
    ap.add_argument("--train-calls", type=int, default=300, help="calls of each learning job (enough to settle)")
    ap.add_argument("--check", action="store_true",
                    help="CI's test: the first and third training calls learned in a scratch directory, and hetcoll "
                    "correct must put the largest factor on the case's slow link (or on a link it reports fits as well), "
                    "and move no other factor by 1.5x")
    ap.add_argument("--replan", action="store_true",
                    help="only the predictions and the table again, from DIR/NAME/correct.json")
    a = ap.parse_args()
    global PLATFORM, NP
    PLATFORM, NP, WRONG, TRAIN, HELD_OUT = CASES[a.case]
    out = pathlib.Path(a.out) / a.case
    out.mkdir(parents=True, exist_ok=True)
    if a.check:
        return check(a.train_calls, [TRAIN[0], TRAIN[2]], WRONG, SLOW_LINKS[a.case])
    if a.replan:
        rec = json.loads((out / "correct.json").read_text())
        profiles = {"wrong": WRONG, "corrected": out / "corrected_model.json", "right": out / "right.json"}
        for row in rec["held_out"]:
            for name, prof in profiles.items():
                row[name]["plan"], row[name]["predicted_s"] = plan(row["op"], row["bytes"], prof)
        (out / "correct.json").write_text(json.dumps(rec, indent=1))
        (out / "correct.md").write_text("\n".join(table(rec)) + "\n")
        print("\n".join(table(rec)))
        return 0
    rec = {"case": a.case, "platform": PLATFORM, "ranks": NP, "wrong_profile": str(WRONG.relative_to(ROOT)),
           "calls": a.calls, "train_calls": a.train_calls, "train": [], "held_out": []}

    done = out / "correct.json"
    if done.exists():  # an interrupted run goes on where it stopped
        rec = json.loads(done.read_text())
    # 1. learn, one job per training call, the measured decisions accumulating.
    profile = WRONG
    for i, (op, size) in enumerate(TRAIN):
        save = out / f"learned{i}.json"
        if any(t["op"] == op and t["bytes"] == size for t in rec["train"]):
            profile = save if save.exists() else profile
            continue
        d = bench(op, size, a.train_calls, profile, True, save)
        rec["train"].append({"op": op, "bytes": size, "algorithm": d["algorithms"][-1], "saved": save.exists(),
                             "last_half_median_s": statistics.median(d["hetcoll_calls"][a.train_calls // 2:])})
        print(f"learn {op} {size}: {d['algorithms'][-1]}", flush=True)
        if save.exists():
            profile = save
        done.write_text(json.dumps(rec, indent=1))
    learned = profile

    # 2. correct.
    corrected = out / "corrected.json"
    c = subprocess.run([str(HETCOLL), "correct", str(learned), "-o", str(corrected), "--json"],
                       capture_output=True, text=True, check=True)
    rec["correct"] = json.loads(c.stdout)
    text = subprocess.run([str(HETCOLL), "correct", str(learned)], capture_output=True, text=True).stdout
    (out / "correct.txt").write_text(text)
    print(text, flush=True)

    # 3. the right profile: the probe on the platform itself.
    right = out / "right.json"
    if not right.exists():
        subprocess.run([str(RUN), "--platform", PLATFORM, "-n", str(NP), str(BUILD / "hetcoll-probe"), "-o",
                        str(right), "--no-progress"], check=True, capture_output=True, timeout=7200)

    # 4. held-out calls, learning off; the measured decisions removed from
    # the corrected profile, so that its model decides (they are for other
    # calls anyway).
    plain = json.loads(corrected.read_text())
    plain.pop("tuned", None)
    corrected_model = out / "corrected_model.json"
    corrected_model.write_text(json.dumps(plain))
    profiles = {"wrong": WRONG, "corrected": corrected_model, "right": right}
    for op, size in HELD_OUT:
        if any(r["op"] == op and r["bytes"] == size for r in rec["held_out"]):
            continue
        row = {"op": op, "bytes": size}
        row["native_s"] = statistics.median(bench(op, size, a.calls, WRONG, False, native=True)["native_calls"])
        for name, prof in profiles.items():
            d = bench(op, size, a.calls, prof, False)
            alg, pred = plan(op, size, prof)
            row[name] = {"algorithm": d["algorithms"][-1], "median_s": statistics.median(d["hetcoll_calls"]),
                         "plan": alg, "predicted_s": pred}
        rec["held_out"].append(row)
        done.write_text(json.dumps(rec, indent=1))
        print(json.dumps({k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items()})
                          for k, v in row.items()}), flush=True)
    done.write_text(json.dumps(rec, indent=1))
    (out / "correct.md").write_text("\n".join(table(rec)) + "\n")
    print("\n".join(table(rec)))


def table(rec):
    def ms(s):
        return "-" if s is None else f"{s:.3g} s" if s >= 1 else f"{s * 1e3:.3g} ms"

    out = ["| call | native | wrong profile | corrected | right (probed) | wrong/corr/right vs native | "
           "prediction error wrong / corrected / right |", "|---|---|---|---|---|---|---|"]
    for r in rec["held_out"]:
        cells, ratios, errs = [], [], []
        for k in ("wrong", "corrected", "right"):
            x = r[k]
            cells.append(f"{ms(x['median_s'])} ({x['algorithm']})")
            ratios.append(f"{r['native_s'] / x['median_s']:.2f}")
            errs.append(f"{abs(x['predicted_s'] - x['median_s']) / x['median_s'] * 100:.0f} %"
                        if x["predicted_s"] and x["plan"] == x["algorithm"] else "-")
        out.append(f"| {r['op']} {r['bytes']} B | {ms(r['native_s'])} | " + " | ".join(cells) + " | "
                   + " / ".join(ratios) + " | " + " / ".join(errs) + " |")
    return out


if __name__ == "__main__":
    sys.exit(main())

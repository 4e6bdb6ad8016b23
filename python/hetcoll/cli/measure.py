"""hetcoll --help's "measure the machine": probe, profile, subnets, ring, tune
(hetcoll-probe and hetcoll-tune run under a launcher; the profile they write)."""
from __future__ import annotations

import subprocess
import sys

from .. import _core
from .common import CliError, Command, Group, _emit_json, _int_in, _real_in, _size_list, parse_size
from .launch import _add_launcher, _check_program, _mpirun_args, _ranks_to_run, _run_mpi


def cmd_probe(args) -> int:
    from pathlib import Path

    from .. import profile as prof

    exe = prof.probe_executable()
    if not Path(exe).exists():
        raise CliError("hetcoll-probe was not built (no MPI found at build time: "
                       "apt-get install libopenmpi-dev, then pip install . again)")
    probe_args = [exe, "-o", args.output, "--repeats", str(args.repeats), "--threshold", str(args.threshold),
                  "--large", str(args.large)]
    if args.budget is not None:
        probe_args += ["--budget", str(args.budget)]
    if args.sequential:
        probe_args.append("--sequential")
    if args.no_lambda:
        probe_args.append("--no-lambda")
    declared = None
    if args.topology == "slurm":
        declared = _slurm_topology(Path(args.output).resolve().parent)
        probe_args += ["--topology", declared]
    elif args.topology:
        probe_args += ["--topology", args.topology]
    try:
        _check_program(probe_args)
        extra = _mpirun_args(args)
        args.np = _ranks_to_run(args.np, None)
        if not _run_mpi(args.np, probe_args, extra, "the probe", dry_run=args.dry_run, launcher=args.launcher,
                        json_out=args.json):
            return 0
    finally:
        if declared:
            Path(declared).unlink(missing_ok=True)
    p = prof.load(args.output, with_pairs=False)
    if not args.json:
        print(f"hetcoll: profile of {len(p['hosts'])} hosts in {p['subnets']['count']} subnets written to "
              f"{args.output}; 'hetcoll profile show {args.output}' summarises it, HETCOLL_PROFILE={args.output} "
              "uses it")
    if args.tune:
        _run_tune(args.np, args.output, None, extra, args.tune_max, args.tune_repeats, launcher=args.launcher,
                  json_out=args.json)
        p = prof.load(args.output, with_pairs=False)
    if args.json:
        _emit_json(_profile_summary(args.output, p))
    return 0


def _slurm_topology(directory) -> str:
    """The tree Slurm declares, as a file the probe reads (topology.conf's
    form): `scontrol show topology`, else the topology.conf beside Slurm's
    configuration. Written into `directory` (where the profile goes: the
    probe's rank 0 reads it there)."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    text, tried = "", []
    if shutil.which("scontrol"):
        proc = subprocess.run(["scontrol", "show", "topology"], capture_output=True, text=True)
        if proc.returncode == 0 and "SwitchName=" in proc.stdout:
            text = proc.stdout
        tried.append("'scontrol show topology' " + ("printed no switch" if proc.returncode == 0 else
                                                    f"failed ({(proc.stderr or '').strip()[:120]})"))
    else:
        tried.append("no scontrol on PATH")
    if not text:
        conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")).parent / "topology.conf"
        if conf.is_file():
            text = conf.read_text()
        else:
            tried.append(f"no {conf}")
    if not text:
        raise CliError("--topology slurm: Slurm declares no topology here (" + "; ".join(tried) +
                       "); name a file in topology.conf's form instead: --topology FILE")
    fd, path = tempfile.mkstemp(prefix=".hetcoll-topology-", suffix=".conf", dir=str(directory))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _profile_summary(path, p) -> dict:
    """What probe --json and tune --json say of the profile they wrote."""
    return {"profile": path, "ranks": p["measured"]["ranks"], "hosts": [h["name"] for h in p["hosts"]],
            "subnets": p["subnets"]["count"], "seconds": p["measured"]["seconds"],
            "tuned": [{"ranks": len(t["hosts"]), "entries": len(t.get("entries", []))} for t in p.get("tuned", [])]}


def _run_tune(np, profile, ops, extra, max_bytes, repeats, sizes=None, candidates=None, launcher="auto",
              json_out=False) -> None:
    from pathlib import Path

    from .. import profile as prof

    exe = prof.probe_executable("hetcoll-tune")
    if not Path(exe).exists():
        raise CliError("hetcoll-tune was not built (no MPI found at build time)")
    prof.load(profile, with_pairs=False)  # a clear error before mpirun starts
    tune_args = [exe, str(profile), "--repeats", str(repeats)]
    tune_args += ["--sizes", ",".join(str(b) for b in sizes)] if sizes else ["--max", str(max_bytes)]
    if ops:
        tune_args += ["--ops", ops]
    if candidates:
        tune_args += ["--candidates", str(candidates)]
    _check_program(tune_args)
    # The tuner sets the model itself and forces its candidates.
    _run_mpi(np, tune_args, extra, "tuning", env_drop=("HETCOLL_PROFILE", "HETCOLL_ALGO"), launcher=launcher,
             json_out=json_out)


def cmd_tune(args) -> int:
    _run_tune(_ranks_to_run(args.np, None), args.profile, args.ops, _mpirun_args(args), args.max, args.repeats,
              args.sizes, args.candidates, args.launcher, args.json)
    if args.json:
        from .. import profile as prof

        _emit_json(_profile_summary(args.profile, prof.load(args.profile, with_pairs=False)))
        return 0
    print(f"hetcoll: measured decisions stored in {args.profile}; 'hetcoll profile show {args.profile}' lists them")
    return 0


def cmd_profile_show(args) -> int:
    from .. import profile as prof

    p = prof.load(args.file, with_pairs=args.json)
    if args.json:
        _emit_json(p)
    else:
        print("\n".join(prof.show_lines(p)))
        print("\n".join(prof.topology_lines(_core.topology(_core.parse_model(args.file)))))
    return 0


def cmd_subnets(args) -> int:
    from .. import profile as prof

    p = prof.load(args.file)
    if args.json:
        n = len(p["hosts"])
        if args.threshold is None:
            groups = [[h for h in range(n) if p["hosts"][h]["subnet"] == s] for s in range(p["subnets"]["count"])]
            out = {"threshold": p["subnets"]["threshold"], "gap": p["subnets"]["gap"], "groups": groups}
        else:
            part = _core.partition_subnets(p["pairs"]["small_min"], n, args.threshold)
            out = {"threshold": part["threshold"], "gap": part["gap"], "groups": part["groups"]}
        out["hosts"] = [h["name"] for h in p["hosts"]]
        _emit_json(out)
    else:
        print("\n".join(prof.subnet_lines(p, args.threshold)))
    return 0


def cmd_ring(args) -> int:
    from .. import profile as prof

    p = prof.load(args.file, with_pairs=False)
    if args.json:
        _emit_json({"hosts": [p["hosts"][h]["name"] for h in p["ring"]["hosts"]],
                    "order": p["ring"]["hosts"], "crossings": p["ring"]["crossings"]})
    else:
        print("\n".join(prof.ring_lines(p)))
    return 0


def _probe_args(p) -> None:
    p.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (put one per host, or more; inside a "
                   "Slurm allocation: its tasks)")
    _add_launcher(p)
    p.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    p.add_argument("-o", "--output", default="hetcoll-profile.json", help="profile file (default hetcoll-profile.json)")
    p.add_argument("--budget", type=_real_in(0, 1e7, "--budget"), help="seconds the probe may take (default: no limit)")
    p.add_argument("--sequential", action="store_true", help="measure one pair at a time (ECO), not p-1 rounds of "
                   "concurrent pairs")
    p.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=5, help="repeats per figure (default 5)")
    p.add_argument("--threshold", type=_real_in(0, 10, "--threshold"), default=0.2,
                   help="ECO's subnet threshold (default 0.2: within 20%%)")
    p.add_argument("--large", type=parse_size, default=256 << 10, help="bandwidth message size (default 256k)")
    p.add_argument("--no-lambda", action="store_true", help="skip Bruck's lambda experiments")
    p.add_argument("--topology", metavar="FILE|slurm", help="a declared topology as a start: a file in Slurm's "
                   "topology.conf form, or 'slurm' (scontrol show topology); each switch's links measured, and "
                   "every place where measurement and declaration disagree said")
    p.add_argument("--tune", action="store_true", help="then time the native collectives against hetcoll's best "
                   "candidates on this job and store the winners (hetcoll tune)")
    p.add_argument("--tune-max", type=parse_size, default=1 << 20, help="with --tune: largest size (default 1M)")
    p.add_argument("--tune-repeats", type=_int_in(1, 1000, "--tune-repeats"), default=7)
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command, do not run it")


def _profile_file_args(p) -> None:  # profile show
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="the whole profile, checked")


def _subnets_args(p) -> None:
    p.add_argument("file")
    p.add_argument("--threshold", type=_real_in(0, 10, "--threshold"), help="partition again with this threshold")
    p.add_argument("--json", action="store_true")


def _ring_args(p) -> None:
    p.add_argument("file")
    p.add_argument("--json", action="store_true")


def _tune_args(p) -> None:
    p.add_argument("profile", help="a profile written by 'hetcoll probe' (updated in place)")
    p.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (inside a Slurm allocation: its tasks)")
    _add_launcher(p)
    p.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    p.add_argument("--ops", help="collectives, comma-separated (default: "
                   f"{' '.join(_core.regular_collective_ops())})")
    p.add_argument("--max", type=parse_size, default=1 << 20, help="largest size per rank (default 1M)")
    p.add_argument("--sizes", type=_size_list, help="these sizes per rank instead (e.g. 1k,64k): each decides the "
                   "size classes nearer to it than to the others")
    p.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=7)
    p.add_argument("--candidates", type=_int_in(1, 8, "--candidates"),
                   help="hetcoll's best predicted algorithms timed against native (default 3)")


def cmd_correct(args) -> int:
    from .. import correct
    from .. import profile as prof

    try:
        p = prof.load(args.profile, with_pairs=True)
    except _core.InputError as e:
        raise CliError(str(e)) from None
    if args.output:
        _check_writable(args.output)
    check = args.cross_validate or (args.output and not args.force)

    def progress(what, misfit):  # the fit takes minutes on many decisions: said as it goes
        print(f"hetcoll correct: {what}" + ("" if misfit is None else f" (misfit {misfit:.3g})"), file=sys.stderr,
              flush=True)

    try:
        c = correct.fit(p, iterations=args.iterations, progress=progress)
        held_out = correct.cross_validate(p, progress=progress) if check and correct.decisions(p) > 1 else None
    except correct.CorrectionError as e:
        raise CliError(f"{args.profile}: {e}") from None
    verdict = correct.verdict(held_out, args.force)
    written = _write_corrected(c, args.output) if args.output and verdict["write"] else None
    if args.json:
        mb, xb, ma, xa = correct.errors(c)
        odd = set(correct.unexplained(c))
        _emit_json({"profile": args.profile, "written": written, "why": verdict["why"], "form": c.form,
                    "error_median": [mb, ma], "error_largest": [xb, xa],
                    "factors": [{"what": n, "kind": k, "factor": f, "alike": c.alike.get(n, [])}
                                for n, k, f in c.factors],
                    "samples": [{"op": o, "bytes": b, "algorithm": a, "measured": m, "before": x, "after": y,
                                 "explained": i not in odd}
                                for i, (o, b, a, m, x, y) in enumerate(c.samples)],
                    "left_out": c.skipped,
                    "cross_validation": None if held_out is None else
                    [{"op": o, "bytes": b, "error_before": x, "error_after": y} for o, b, x, y in held_out]})
        return 0
    for line in correct.lines(c) + (correct.cross_validation_lines(held_out) if held_out else []):
        print(line)
    if written:
        print(f"hetcoll: corrected profile written to {written} ({verdict['why']}); HETCOLL_PROFILE={written} uses it")
    elif args.output:
        print(f"hetcoll: {args.output} not written: {verdict['why']}")
    else:
        print("hetcoll: nothing written (-o FILE writes the corrected profile)")
    return 0


def _check_writable(path: str) -> None:
    """Said before minutes of fitting, not after."""
    import os

    if os.path.isdir(path):
        raise CliError(f"{path}: is a directory, not a file to write")
    try:
        _core.check_profile_writable(path)
    except RuntimeError as e:
        raise CliError(f"{path}: not written ({e})") from None


def _write_corrected(c, path: str) -> str:
    """The corrected profile to `path`, the way every profile is written
    (the C++ writer: checked, through a temporary file)."""
    import json
    from datetime import datetime, timezone

    from .. import correct

    q = correct.record(c, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    try:
        _core.write_profile(json.dumps(q), path)
    except (RuntimeError, _core.InputError) as e:
        raise CliError(f"{path}: not written ({e})") from None
    return path


def _correct_args(p) -> None:
    p.add_argument("profile", help="a profile with measured decisions (hetcoll tune, or a job's HETCOLL_LEARN_SAVE)")
    p.add_argument("-o", "--output", help="write the corrected profile here (it may be the profile itself)")
    p.add_argument("--iterations", type=_int_in(1, 50, "--iterations"), default=6,
                   help="rounds of the fit (default 6; each simulates every factor's change)")
    p.add_argument("--cross-validate", action="store_true",
                   help="fit without each measured decision in turn and predict its times: does the correction hold "
                   "for calls it was not fitted on? (one fit per decision; with -o, always)")
    p.add_argument("--force", action="store_true",
                   help="with -o: write the corrected profile without cross-validating it (by default it is written "
                   "only where it predicts the decisions left out no worse than the profile did)")
    p.add_argument("--json", action="store_true")


GROUP = Group("measure the machine", (
    Command("probe", "measure this machine (an MPI job) and write a profile for HETCOLL_PROFILE", cmd_probe,
            _probe_args, mpirun_args=True,
            description="Runs hetcoll-probe under mpirun: pairwise latency and bandwidth (ECO), per-host "
            "send/receive overheads (Banikazemi), reduction rates, Bruck's lambda; subnets and ring. "
            "Arguments after -- go to mpirun (e.g. -- --hostfile hosts)."),
    Command("profile", "a machine profile written by 'hetcoll probe'", actions=(
        Command("show", "summary: hosts, pair classes, kernels, lambda(m)", cmd_profile_show, _profile_file_args),
    )),
    Command("subnets", "a profile's subnets (ECO's partition), the threshold and the gap", cmd_subnets,
            _subnets_args),
    Command("ring", "a profile's ring order (fewest subnet crossings)", cmd_ring, _ring_args),
    Command("tune", "measured decisions: time native vs hetcoll's best candidates, store the winners in the profile",
            cmd_tune, _tune_args, mpirun_args=True,
            description="Runs hetcoll-tune under mpirun on the job layout to tune for (one decision set per layout; "
            "a run replaces the collectives and sizes it measures and keeps the others). Arguments after -- go to "
            "mpirun."),
    Command("correct", "the model corrected from measured decisions: which links and hosts are slower than "
            "the profile says", cmd_correct, _correct_args,
            description="Fits a factor per link of the profile's network, per host's overheads, the latency and "
            "the reduction rates so that the model predicts the times its measured decisions hold (hetcoll tune's, "
            "or a job's HETCOLL_LEARN_SAVE), by simulating each candidate; prints what moved and writes the "
            "corrected profile with -o. docs/profile.md, 'Correcting the model'."),
))

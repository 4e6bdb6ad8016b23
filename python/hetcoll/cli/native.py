"""hetcoll --help's "hold it to the native MPI": bench, report, bench-report
(hetcoll-bench run under a launcher, and what its results say)."""
from __future__ import annotations

import json

from .common import CliError, Command, Group, _emit_json, _int_in, _size_list, parse_size
from .launch import _add_launcher, _check_program, _mpirun_args, _ranks_to_run, _run_mpi


def cmd_bench(args) -> int:
    from pathlib import Path

    from .. import profile as prof

    exe = prof.probe_executable("hetcoll-bench")
    if not Path(exe).exists():
        raise CliError("hetcoll-bench was not built (no MPI found at build time)")
    if args.profile:
        prof.load(args.profile, with_pairs=False)  # a clear error before mpirun starts
    bench_args = [exe, "-o", args.output, "--repeats", str(args.repeats), "--target-ms", str(args.target_ms)]
    if args.max_repeats:
        bench_args += ["--max-repeats", str(args.max_repeats)]
    if args.csv:
        bench_args += ["--csv", args.csv]
    if args.ops:
        bench_args += ["--ops", args.ops]
    if args.sizes:
        bench_args += ["--sizes", ",".join(str(b) for b in args.sizes)]
    else:
        bench_args += ["--min", str(args.min), "--max", str(args.max)]
    if args.algorithms:
        bench_args += ["--algorithms", args.algorithms]
    if args.no_native:
        bench_args.append("--no-native")
    if args.overlap:
        bench_args.append("--overlap")
        if args.test_every:
            bench_args += ["--test-every", str(args.test_every)]
    elif args.test_every:
        raise CliError("--test-every applies to --overlap only")
    for flag, out in (("-o", args.output), ("--csv", args.csv)):
        if out:
            try:
                Path(out).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise CliError(f"{flag} {out}: cannot make its directory {Path(out).parent} ({e.strerror})") from None
    _check_program(bench_args)
    env_set = {"HETCOLL_PROFILE": str(Path(args.profile).resolve())} if args.profile else None
    if not _run_mpi(_ranks_to_run(args.np, 4), bench_args, _mpirun_args(args), "the benchmark", env_set,
                    ("HETCOLL_ALGO",), args.dry_run, args.launcher, args.json):
        return 0
    if args.format == "osu":
        from ..osu import osu_file_text

        try:
            print(osu_file_text(args.output), end="")
        except ValueError as e:
            raise CliError(str(e)) from None
        return 0
    if args.json:
        with open(args.output) as f:
            doc = json.load(f)
        _emit_json({"results": args.output, "csv": args.csv, "ranks": doc.get("ranks"), "mode": doc.get("mode", "time"),
                    "rows": len(doc.get("rows", []))})
        return 0
    print(f"hetcoll: results in {args.output}" + (f" and {args.csv}" if args.csv else "") +
          f"; 'hetcoll report {args.output} PROFILE -o DIR' draws them")
    return 0


def cmd_report(args) -> int:
    from .. import report

    if len(args.files) < 2:
        raise CliError("hetcoll report RESULTS... PROFILE -o DIR: at least one results file and the profile")
    try:
        page = report.build(args.files[:-1], args.files[-1], args.output, args.title)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.json:
        from pathlib import Path

        out = Path(args.output)
        _emit_json({"page": str(page), "output": args.output, "results": args.files[:-1], "profile": args.files[-1],
                    "files": sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file())})
        return 0
    print(f"hetcoll: report written to {page}")
    return 0


def cmd_bench_report(args) -> int:
    from ..benchreport import write_report

    if args.format == "osu":
        from ..osu import osu_file_text

        if args.markdown or args.png:
            raise CliError("--format osu prints the results; --markdown and --png belong to the tables")
        for path in args.results:
            try:
                print(osu_file_text(path), end="")
            except ValueError as e:
                raise CliError(str(e)) from None
        return 0

    if args.json:
        from ..benchreport import load, summary

        try:
            runs = load(args.results)
        except ValueError as e:
            raise CliError(str(e)) from None
        write_report(args.results, args.markdown, args.png) if (args.markdown or args.png) else None
        def seconds(r):  # one key scheme: times in seconds, *_s
            return {"op": r["op"], "bytes": r["bytes"], "algorithm": r["algorithm"], "hetcoll_s": r["hetcoll_us"] / 1e6,
                    "native_s": r["native_us"] / 1e6, "speed": r["speed"]}

        out = []
        for run in runs:
            sm = summary(run)
            out.append({"ranks": sm["ranks"], "cases": sm["cases"], "at_target": sm["at_target"],
                        "median_speed": sm["median"], "worst": seconds(sm["worst"]),
                        "below": [seconds(r) for r in sm["below"]], "results": [seconds(r) for r in run["results"]]})
        _emit_json(out)
        return 0
    for line in write_report(args.results, args.markdown, args.png):
        print(line)
    return 0


def _bench_args(p) -> None:
    p.add_argument("--np", "-n", "--ranks", dest="np", type=_int_in(1, 1 << 20, "--np"), help="ranks (default: the Slurm allocation's tasks, "
                   "or 4)")
    _add_launcher(p)
    p.add_argument("--json", action="store_true", help="a summary of what was written, as JSON")
    p.add_argument("-o", "--output", default="results/bench.json")
    p.add_argument("--csv", help="also write the rows as CSV")
    p.add_argument("--profile", "--model", "-m", dest="profile",
                   help="the machine: plan with this profile (HETCOLL_PROFILE for the run)")
    p.add_argument("--ops", help="collectives, comma-separated (default: all 16)")
    p.add_argument("--sizes", type=_size_list, help="bytes per rank, e.g. 1k,64k,1M (default: --min ×8 … --max)")
    p.add_argument("--min", type=parse_size, default=8)
    p.add_argument("--max", type=parse_size, default=1 << 20)
    p.add_argument("--algorithms", help="forced algorithms to time too, comma-separated specs")
    p.add_argument("--repeats", type=_int_in(1, 1000, "--repeats"), default=7)
    p.add_argument("--max-repeats", type=_int_in(1, 1000, "--max-repeats"),
                   help="beyond --repeats, repeat a row (up to this many, within 20 s) while some variant's median "
                   "is not known to within 5 %% (its distribution-free 95 %% confidence interval)")
    p.add_argument("--target-ms", type=float, default=5.0, help="time per measurement (default 5 ms)")
    p.add_argument("--no-native", action="store_true")
    p.add_argument("--overlap", action="store_true",
                   help="the non-blocking collectives (MPI_I...), OSU's method: the call alone, a compute loop "
                   "alone, both overlapped, and overlap %% = 1 - (overlapped - compute) / call; hetcoll against "
                   "native, the same compute for both (HETCOLL_PROGRESS_THREAD=1 in the environment: with the "
                   "progress thread)")
    p.add_argument("--test-every", type=float, metavar="US",
                   help="with --overlap: the compute loop calls MPI_Test every US microseconds (default: never, "
                   "as OSU)")
    p.add_argument("--format", choices=["text", "osu"], default="text",
                   help="osu: print the results as the OSU Micro-Benchmarks print theirs (a block per collective "
                   "and variant: size, then latencies in us), for scripts and plots written for OSU; the JSON "
                   "is written as always")
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command")


def _report_args(p) -> None:
    p.add_argument("files", nargs="+", metavar="RESULTS... PROFILE", help="hetcoll bench results, then the profile")
    p.add_argument("-o", "--output", required=True, help="directory for index.html and the plots")
    p.add_argument("--title")
    p.add_argument("--json", action="store_true", help="{page, output, results, profile, files}")


def _bench_report_args(p) -> None:
    p.add_argument("results", nargs="+", help="JSON files written by bench_mpi (one per rank count)")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    p.add_argument("--png", metavar="FILE", help="plot native/hetcoll time ratios by size")
    p.add_argument("--json", action="store_true", help="per run: ranks, cases, at_target, median, worst, below, "
                   "results (speed = native time / hetcoll time)")
    p.add_argument("--format", choices=["text", "osu"], default="text",
                   help="osu: each hetcoll bench result in the OSU Micro-Benchmarks' format instead (hetcoll bench "
                   "--format osu prints the same)")


GROUP = Group("hold it to the native MPI", (
    Command("bench", "measured beside predicted: hetcoll's choice, forced algorithms and native MPI, every "
            "collective (Banikazemi Fig. 2 timing); JSON and CSV", cmd_bench, _bench_args, mpirun_args=True,
            description="Runs hetcoll-bench under mpirun: for each collective and size, hetcoll's choice, the native "
            "collective and each --algorithms entry, interleaved, each timed by Banikazemi et al.'s Fig. 2 procedure "
            "(barrier-subtracted loops, slowest rank, minimum and median over repeats, each repeat starting with the "
            "next variant); latency-bound calls (Fig. 2 below three barrier times) also from a synchronized start, "
            "every rank beginning each call at the same instant of rank 0's clock — the makespan hetcoll predicts. "
            "With hetcoll's prediction for the schedule that ran. Arguments after '--' go to mpirun."),
    Command("report", "one self-contained HTML page and PNG plots from bench results and a profile", cmd_report,
            _report_args),
    Command("bench-report", "tables and a plot of hetcoll against native MPI from hetcoll bench (or bench_mpi) "
            "results", cmd_bench_report, _bench_report_args),
))

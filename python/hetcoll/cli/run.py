"""hetcoll --help's "run it": lib, config, export (where the libraries are,
what configures them, hetcoll's decisions for an MPI's own selection)."""
from __future__ import annotations

import os
import shutil
import sys

from .. import _core
from .common import CliError, Command, Group, _emit_json, _int_in, _int_list, _write, parse_size


def launcher_mpi() -> str | None:
    """The MPI whose mpirun (or mpiexec) is first on PATH: openmpi, mpich, or None."""
    from .. import profile as prof

    flavor = prof.launcher_flavor(shutil.which("mpirun") or shutil.which("mpiexec"))
    return None if flavor == "unknown" else flavor


MPI_NAMES = ("openmpi", "mpich")


def library_paths(mpi: str | None = None) -> dict:
    """Where the installed MPI libraries and the C header are, for `mpi`
    (openmpi or mpich; None: the MPI of the mpirun on PATH if the libraries
    are built for it, else the one they were built for first)."""
    from pathlib import Path

    base = Path(__file__).resolve().parent.parent  # the package: hetcoll/
    from .. import profile as prof

    built = prof.installed_mpis()
    mpis = built.get("mpis", {})
    if mpi is None:
        on_path = launcher_mpi()
        mpi = on_path if on_path in mpis else built.get("default")
    elif mpi not in mpis:
        have = ", ".join(mpis) or "none"
        raise CliError(f"no hetcoll libraries for {mpi} here (built for: {have}). Install {mpi}'s "
                       f"development package (Debian: {'libmpich-dev' if mpi == 'mpich' else 'libopenmpi-dev'}) "
                       "and build again (pip install .), or build hetcoll with its mpicc (docs/install.md)")
    lib = base / "lib" / (mpis.get(mpi) or "") if mpi else base / "lib"
    return {
        "mpi": mpi,
        "preload": str(lib / "libhetcoll_mpi.so"),
        "capi": str(lib / "libhetcoll.so"),
        "include": str(base / "include"),
        "prefix": str(base),
        "mpis": sorted(mpis),
    }


def cmd_lib(args) -> int:
    from pathlib import Path

    paths = library_paths(args.mpi)
    if not Path(paths["preload"]).exists():
        raise CliError("the MPI libraries were not built (no MPI found at build time: "
                       "apt-get install libopenmpi-dev, then pip install . again)")
    if args.json:
        _emit_json(paths)
    else:
        print(paths[args.which])
    return 0


def cmd_config(args) -> int:
    if args.markdown:
        sys.stdout.write(_core.settings_markdown())
        return 0
    settings = _core.settings()
    unknown = _core.unknown_settings()
    conf = _core.configuration()
    if args.json:
        _emit_json({"version": _core.__version__, "settings": settings,
                    "unknown": [{"name": n, "suggestion": s} for n, s in unknown], "problems": conf["problems"]})
        return 0
    print(f"hetcoll {_core.__version__}: the variables the MPI layer reads (values in this environment)")
    for st in settings:
        where = "set" if st["from_env"] else "default"
        value = st["value"] if st["value"] != "" else "(empty)"
        alike = ", alike on every rank" if st["agreed"] else ""
        print(f"  {st['name']:<22} = {value}   [{where}{alike}]")
        print(f"  {'':<22}   {st['meaning']}")
        if st["problem"]:
            print(f"  {'':<22}   ! {st['problem']}")
    print("'alike on every rank': the setting changes decisions; where the ranks of a communicator have it\n"
          "differently (or the files it names differ), that communicator runs the native collectives")
    for problem in conf["problems"]:  # in the MPI layer's words: the same reading
        sys.stderr.write(f"hetcoll: warning: {problem}\n")
    return 0


def cmd_export(args) -> int:
    from .. import export as ex

    try:
        model = _core.parse_model(args.model)
    except ValueError as e:
        raise CliError(f"-m {args.model}: {e}") from None
    if args.ranks:
        ranks = sorted(set(args.ranks))
    else:  # powers of two up to the machine's ranks (and its own size), or to 64
        top = model.ranks if model.ranks > 1 else 64
        ranks = sorted({2 ** k for k in range(1, 31) if 2 ** k <= top} | {top})
    if ranks[0] < 2:
        raise CliError("--ranks: communicators of at least 2 ranks")
    ops = [o.strip() for o in args.ops.split(",")] if args.ops else list(ex.DEFAULT_OPS)
    unknown = [o for o in ops if o not in _core.collective_ops()]
    if unknown:
        raise CliError(f"--ops: unknown collective {', '.join(unknown)}")
    try:
        text, report = ex.export(args.format, model, ops, ranks, args.max, args.elem_size, args.base,
                                 args.override or "")
    except ValueError as e:
        raise CliError(str(e)) from None
    _write(args.output, text)
    header = (f"hetcoll export --format {args.format}: {len(ops)} collectives, communicator sizes "
              f"{','.join(map(str, ranks))}, sizes up to {_core.format_bytes(args.max)}, model {model.spec}")
    if args.report:
        _write(args.report, header + "\n" + "\n".join(report) + "\n")
    if args.json:
        _emit_json({"format": args.format, "output": args.output, "ranks": ranks, "ops": ops,
                    "max_bytes": args.max, "model": model.spec, "rules": report})
        return 0
    print(header)
    for line in report:
        print("  " + line)
    use = ("mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "
           f"{os.path.abspath(args.output)} ..." if args.format == "ompi-rules" else
           f"MPIR_CVAR_DEVICE_COLLECTIVES=none MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="
           f"{os.path.abspath(args.output)} mpiexec ...")
    print(f"hetcoll: wrote {args.output}; use it: {use}")
    return 0


def _lib_args(p) -> None:
    p.add_argument("which", nargs="?", choices=["preload", "capi", "include", "prefix"], default="preload",
                   help="preload: libhetcoll_mpi.so (MPI_* replaced); capi: libhetcoll.so (hetcoll_* only); "
                   "include: the directory of hetcoll.h; prefix: the installed tree, for CMAKE_PREFIX_PATH "
                   "(find_package(hetcoll)) and PKG_CONFIG_PATH=PREFIX/lib/pkgconfig")
    p.add_argument("--mpi", choices=MPI_NAMES, default=None,
                   help="the libraries built for this MPI (default: the MPI of the mpirun on PATH, if built "
                   "for it; else the first one built)")
    p.add_argument("--json", action="store_true", help="every path, the MPI chosen and the MPIs built for")


def _config_args(p) -> None:
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="the variables as the table docs/mpi.md shows")


def _export_args(p) -> None:
    p.add_argument("--format", required=True, choices=["ompi-rules", "mpich-json"],
                   help="ompi-rules: Open MPI coll/tuned dynamic rules (4.1); mpich-json: MPICH's collective "
                   "selection file (4.0)")
    p.add_argument("--model", "-m", "--profile", dest="model", required=True,
                   help="the machine: a profile (its measured decisions first) or any model spec")
    p.add_argument("-o", "--output", required=True, help="the file to write")
    p.add_argument("--ranks", type=_int_list, help="communicator sizes of the grid (default: powers of two up "
                   "to the profile's ranks and that number, or up to 64)")
    p.add_argument("--ops", help="collectives (default: allreduce,bcast,reduce,allgather,alltoall,barrier,"
                   "reduce_scatter_block)")
    p.add_argument("--max", type=parse_size, default=16 << 20, help="largest message of the grid (default 16M)")
    p.add_argument("--elem-size", type=_int_in(1, 1 << 16, "--elem-size"), default=4,
                   help="element size the grid's counts are of (default 4)")
    p.add_argument("--base", help="mpich-json: the MPICH selection file to start from (default: MPICH 4.0.2's "
                   "own, maint/tuning/coll/mpir/generic.json); the collectives not exported keep its trees")
    p.add_argument("--override", metavar="RULES", help="HETCOLL_ALGO rules (e.g. 'allreduce:@ring_allreduce'): the "
                   "decisions the MPI layer would take under them")
    p.add_argument("--report", help="also write the rule-by-rule report (what hetcoll chose, what was written, "
                   "where the library has no equivalent) to this file")
    p.add_argument("--json", action="store_true", help="the report as JSON")


GROUP = Group("run it", (
    Command("lib", "path of libhetcoll_mpi.so, for LD_PRELOAD=$(hetcoll lib) mpirun ...", cmd_lib, _lib_args),
    Command("config", "the HETCOLL_* environment variables, their meaning and the values in effect", cmd_config,
            _config_args),
    Command("export", "hetcoll's decisions as Open MPI's coll_tuned rules or MPICH's selection JSON, for running "
            "without LD_PRELOAD", cmd_export, _export_args),
))

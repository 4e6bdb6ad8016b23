"""The ``hetcoll`` command line.

Every subcommand has ``--help``; those that print results also take ``--json``
(a stable, documented shape that scripts can rely on). Bad input gives one
line on stderr and exit code 2, never a traceback.

The commands are a table: each module of a group of ``hetcoll --help``
(measure, decide, run, native, papers) ends with its ``GROUP``, a title and
one ``Command`` row per command (name, help line, options, the function it
runs). ``build_parser`` builds every parser from those rows and the grouped
help lists the same rows, so the two cannot disagree. ``common`` holds what
the commands share, ``launch`` the running of the MPI programs, ``plan`` the
work of ``hetcoll plan``.
"""
from __future__ import annotations

import argparse
import sys
import textwrap

from .. import _core
from . import decide, measure, native, papers, run
from .common import (MAX_BYTES, MAX_RANKS, CliError, Command, Group, InternalError, _Parser,  # noqa: F401
                     parse_size)
from .decide import algorithms_markdown  # noqa: F401
from .plan import has_root  # noqa: F401
from .run import MPI_NAMES, launcher_mpi, library_paths  # noqa: F401

# The commands, by workflow, in the order `hetcoll --help` lists them.
GROUPS = (measure.GROUP, decide.GROUP, run.GROUP, native.GROUP, papers.GROUP)

# [(title, [command names])]: the groups' rows, by name.
HELP_GROUPS = [(g.title, [c.name for c in g.commands]) for g in GROUPS]


class _MainParser(_Parser):
    """`hetcoll --help`: the commands grouped by workflow."""

    def format_help(self):
        out = [self.format_usage().rstrip(), "", self.description, ""]
        for group in GROUPS:
            out.append(f"{group.title}:")
            for row in group.commands:
                text = textwrap.wrap(row.help, 58) or [""]
                out.append(f"  {row.name:<14}{text[0]}")
                out += [" " * 16 + t for t in text[1:]]
            out.append("")
        out += ["options:", "  -h, --help    show this help message and exit",
                "  --version     show program's version number and exit", "",
                "'hetcoll COMMAND --help' for a command's options; docs/cli.md for all of them."]
        return "\n".join(out) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = _MainParser(prog="hetcoll", description="Model-driven collective communication: measure the machine, "
                    "decide each collective from a cost model, run it under any MPI, and explain why.")
    p.add_argument("--version", action="version", version=f"hetcoll {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for group in GROUPS:
        for row in group.commands:
            row.add_to(sub)
    return p


# The commands whose rows pass what follows "--" to the launcher.
_PASS_THROUGH = {row.name for group in GROUPS for row in group.commands if row.mpirun_args}


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # probe, tune and bench pass what follows "--" to the launcher.
    passed: list[str] = []
    if argv and argv[0] in _PASS_THROUGH and "--" in argv:
        cut = argv.index("--")
        argv, passed = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if passed:
        args.mpirun_args = passed
    if getattr(args, "command", None) == "simulate" and not args.schedule:
        if not args.op or args.ranks is None:
            parser.error("simulate needs OP and --ranks (or --schedule FILE)")
    try:
        return args.func(args)
    except (CliError, _core.InputError, ValueError) as e:
        sys.stderr.write(f"hetcoll: error: {e}\n")
        return 2
    except _core.TooLarge as e:
        sys.stderr.write(f"hetcoll: error: too large to build here: {e}\n")
        return 2
    except MemoryError:
        sys.stderr.write("hetcoll: error: out of memory (try fewer ranks or a smaller size)\n")
        return 2
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except OSError as e:  # a path the user gave: missing, a directory, not writable
        where = f" '{e.filename}'" if e.filename else ""
        sys.stderr.write(f"hetcoll: error: {e.strerror or e}{where}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except (InternalError, _core.ScheduleError) as e:
        sys.stderr.write(f"hetcoll: internal error: {e}\n")
        return 1
    except Exception as e:  # a bug: one line, not a traceback
        sys.stderr.write(f"hetcoll: internal error: {type(e).__name__}: {e} (a bug in hetcoll, please report it)\n")
        return 1

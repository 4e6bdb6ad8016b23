"""What every command of the command line shares: the table a command is a
row of (Command, Group), errors, argument types, JSON output."""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from typing import Callable

from .. import _core


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


class InternalError(Exception):
    """A bug in hetcoll (e.g. it built an invalid schedule): one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


# ------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Command:
    """One command, declared once: `hetcoll --help` lists its `help`, and the
    parser is built from the same row (its options by `arguments`, the
    function it runs by `run`, which returns the exit code)."""

    name: str
    help: str
    run: Callable | None = None           # args -> exit code
    arguments: Callable | None = None     # adds the command's options to its parser
    description: str | None = None        # `hetcoll NAME --help`'s text (default: none)
    defaults: dict = field(default_factory=dict)  # more attributes of args, set without an option
    mpirun_args: bool = False             # what follows '--' goes to the launcher (args.mpirun_args)
    actions: tuple = ()                   # sub-commands (`hetcoll profile show`): rows like this one

    def add_to(self, sub) -> None:
        """This command's parser, in `sub` (a subparsers action)."""
        p = sub.add_parser(self.name, help=self.help, description=self.description)
        if self.arguments:
            self.arguments(p)
        if self.actions:
            actions = p.add_subparsers(dest=f"{self.name}_command", metavar="ACTION", parser_class=_Parser)
            actions.required = True
            for row in self.actions:
                row.add_to(actions)
        if self.run:
            p.set_defaults(func=self.run, **self.defaults, **({"mpirun_args": []} if self.mpirun_args else {}))


@dataclass(frozen=True)
class Group:
    """A heading of `hetcoll --help` and its commands, in the order listed."""

    title: str
    commands: tuple


# ------------------------------------------------------------------ argument types

MAX_BYTES = _core.MAX_BYTES
MAX_RANKS = _core.MAX_RANKS


def parse_size(text: str) -> int:
    """'4096', '64k', '1M' → bytes, in the one size grammar (the core's:
    src/model/units.hpp), at most MAX_BYTES."""
    try:
        b = _core.parse_bytes(text.strip())
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if b > MAX_BYTES:
        raise argparse.ArgumentTypeError(f"'{text}' is more than hetcoll plans for ({MAX_BYTES} bytes)")
    return b


def _int_in(lo: int, hi: int, what: str):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} '{text}' is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be at least {lo} and at most {hi}, got {v}")
        return v

    return parse


def _size_list(text: str) -> list[int]:
    """'8,1k,64k' → sizes in bytes (at most 64 of them)."""
    items = [t for t in text.split(",") if t.strip()]
    if not items or len(items) > 64:
        raise argparse.ArgumentTypeError(f"'{text}': give 1 to 64 sizes, comma-separated")
    return [parse_size(t) for t in items]


def _int_list(text: str) -> list[int]:
    """'1,2,4' → integers (at most 1024 of them)."""
    items = [t for t in text.split(",") if t.strip()]
    if not items or len(items) > 1024:
        raise argparse.ArgumentTypeError(f"'{text}': give 1 to 1024 whole numbers, comma-separated")
    try:
        return [int(t, 10) for t in items]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers") from None


def _real_in(lo: float, hi: float, what: str):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} '{text}' is not a number") from None
        if not (math.isfinite(v) and lo <= v <= hi):
            raise argparse.ArgumentTypeError(f"{what} must be a number from {lo:g} to {hi:g}, got {text}")
        return v

    return parse


def _ranks_list(text: str):
    """An argparse type: N or N,N,... (group sizes)."""
    one = _int_in(1, MAX_RANKS, "--ranks")
    parts = text.split(",")
    if len(parts) > 64:
        raise argparse.ArgumentTypeError("--ranks: at most 64 group sizes")
    return [one(x.strip()) for x in parts]


# ------------------------------------------------------------------ output


def _emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


# Keys that hold a time, in any record a command prints as JSON: written
# with their unit (one key scheme): "predicted_s" in seconds, or
# "predicted_steps" where the model counts postal steps (its "unit").
_TIME_KEYS = {"predicted_time": "predicted", "predicted": "predicted", "bound": "bound", "overheads": "overheads",
              "latency": "latency", "bandwidth": "bandwidth", "compute": "compute", "sent": "sent",
              "received": "received", "start": "start", "end": "end", "rank_finish": "rank_finish"}


def _timed(obj, unit: str):
    """obj with every time key renamed to carry its unit (recursively)."""
    suffix = "_s" if unit == "s" else "_steps"
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in _TIME_KEYS and (isinstance(v, (int, float, list)) or v is None) and not isinstance(v, bool):
                out[_TIME_KEYS[k] + suffix] = v
            elif k == "bound" and isinstance(v, dict):
                out["bound"] = _timed(v, unit)
            else:
                out[k] = _timed(v, unit)
        return out
    if isinstance(obj, list):
        return [_timed(x, unit) for x in obj]
    return obj


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None

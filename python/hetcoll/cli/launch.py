"""Running hetcoll's MPI programs (hetcoll-probe, -tune, -bench) under a
launcher: probe, tune and bench share it."""
from __future__ import annotations

import subprocess
import sys

from .common import CliError


def _ranks_to_run(np, fallback):
    """--np, or the Slurm allocation's tasks, or `fallback`."""
    from .. import profile as prof

    n = np if np is not None else prof.default_np(fallback)
    if n is None:
        raise CliError("--np: how many ranks? (required outside a Slurm allocation)")
    return n


def _add_launcher(p) -> None:
    p.add_argument("--launcher", choices=["auto", "srun", "mpirun", "mpiexec"], default="auto",
                   help="what starts the ranks (default auto: srun inside a Slurm allocation — its hosts — else "
                   "mpirun); arguments after '--' go to it")


def _mpirun_args(args) -> list:
    """What followed '--' on the command line: arguments for mpirun."""
    extra = list(getattr(args, "mpirun_args", None) or [])
    return extra[1:] if extra and extra[0] == "--" else extra


def _check_program(program) -> None:
    """PROGRAM --check, alone (no mpirun): the MPI program checks its own
    arguments and the files it would read and write, with the rules it runs
    by, and says what is wrong in one line — before anything is launched."""
    proc = subprocess.run(list(program) + ["--check"], capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise CliError(lines[-1] if lines else f"{program[0]} --check failed (exit {proc.returncode})")


def _run_mpi(np, program, extra, what, env_set=None, env_drop=(), dry_run=False, launcher="auto",
             json_out=False) -> bool:
    """PROGRAM under mpirun (profile.mpirun_command); a failure is a CliError
    naming the command. With dry_run the command is printed instead (False)."""
    from .. import profile as prof

    try:
        cmd, env = prof.mpirun_command(np, program, extra, launcher)
    except ValueError as e:
        raise CliError(str(e)) from None
    env.update(env_set or {})
    for k in env_drop:
        env.pop(k, None)
    if dry_run:
        print(" ".join(cmd))
        return False
    # With --json the program's own lines go to stderr: stdout is the JSON.
    rc = subprocess.run(cmd, env=env, stdout=sys.stderr if json_out else None).returncode
    if rc != 0:
        raise CliError(f"{what} failed (exit {rc}): {' '.join(cmd)}")
    return True

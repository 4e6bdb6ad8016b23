"""The command line and the MPI layer choose the same algorithm for the same
call: tests/mpi/mpi_decisions.cpp runs a matrix of real collectives under
mpirun and prints what hetcoll ran; `hetcoll plan` (and the planner binding
it uses) must name the same for each."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hetcoll import _core

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "build" / "py" / "test_mpi_decisions"
MPIRUN = shutil.which("mpirun")
DEFAULT_MODEL = next(s["default"] for s in _core.settings() if s["name"] == "HETCOLL_PROFILE")


@pytest.fixture(scope="module")
def mpi_decisions():
    if not (PROGRAM.exists() and MPIRUN):
        pytest.skip("needs the MPI test programs (build/py) and mpirun")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HETCOLL_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run([MPIRUN, "-n", "4", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                           "--mca", "btl", "self,vader,tcp", str(PROGRAM)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(records) > 100
    return records


def _collective(r):
    return _core.collective(r["op"], r["ranks"], r["bytes"] // r["elem_size"], r["root"], r["elem_size"],
                            r["order_free"])


def test_every_call_matches_the_planner(mpi_decisions):
    model = _core.parse_model(DEFAULT_MODEL)
    mismatches = []
    for r in mpi_decisions:
        assert r["algorithm"], f"hetcoll did not run {r}"
        chosen = _core.decide(_collective(r), model, "")["algorithm"]
        if chosen != r["algorithm"]:
            mismatches.append((r, chosen))
    assert not mismatches, mismatches[:5]


def test_the_command_line_names_what_mpi_ran(mpi_decisions, run_cli):
    # Every collective once per size (the command line is slow to start).
    seen = set()
    for r in mpi_decisions:
        key = (r["op"], r["bytes"])
        if key in seen:
            continue
        seen.add(key)
        args = ["plan", r["op"], "--ranks", str(r["ranks"]), "--bytes", str(r["bytes"]), "--elem-size",
                str(r["elem_size"]), "--root", str(r["root"]), "--model", DEFAULT_MODEL, "--json"]
        if r["order_free"]:
            args.append("--order-free")
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert json.loads(out)["algorithm"] == r["algorithm"], (r, out[:200])

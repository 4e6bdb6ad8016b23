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


def _run_decisions(**settings):
    """Runs the MPI matrix; (records, stderr)."""
    if not (PROGRAM.exists() and MPIRUN):
        pytest.skip("needs the MPI test programs (build/py) and mpirun")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HETCOLL_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **settings)
    proc = subprocess.run([MPIRUN, "-n", "4", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                           "--mca", "btl", "self,vader,tcp", str(PROGRAM)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(records) > 100
    return records, proc.stderr


@pytest.fixture(scope="module")
def mpi_decisions():
    return _run_decisions()[0]


def test_a_decision_table_decides_the_same_and_plans_less(mpi_decisions, run_cli, tmp_path):
    # Decisions written ahead of time (hetcoll plan --table) and loaded with
    # HETCOLL_TABLE: every call runs what the planner chose without the
    # table, and the MPI layer plans (and explains) far fewer decisions.
    table = tmp_path / "table.json"
    code, out, err = run_cli("plan", "--table", str(table), "-n", "1,2,3,4", "-m", DEFAULT_MODEL)
    assert code == 0, err
    with_table, err_table = _run_decisions(HETCOLL_TABLE=str(table), HETCOLL_DEBUG="explain")
    without, err_plain = _run_decisions(HETCOLL_DEBUG="explain")
    assert [r["algorithm"] for r in with_table] == [r["algorithm"] for r in mpi_decisions]
    assert [r["algorithm"] for r in without] == [r["algorithm"] for r in mpi_decisions]
    # Loaded and used, no complaint; its decisions explained as the table's.
    assert "HETCOLL_TABLE not used" not in err_table and "HETCOLL_TABLE's" not in err_table, err_table[:500]
    assert "(from HETCOLL_TABLE)" in err_table, err_table[:500]
    planned = lambda err: sum(", predicted " in line for line in err.splitlines())
    assert planned(err_plain) > 20
    assert planned(err_table) < planned(err_plain) / 4, (planned(err_table), planned(err_plain))
    # A table for another model is refused with one line, and decisions stay right.
    other = tmp_path / "other.json"
    assert run_cli("plan", "--table", str(other), "-n", "4", "-m", "hockney:alpha=1us,beta=1ns")[0] == 0
    refused, err_other = _run_decisions(HETCOLL_TABLE=str(other))
    assert [r["algorithm"] for r in refused] == [r["algorithm"] for r in mpi_decisions]
    assert err_other.count("HETCOLL_TABLE not used: it was built for the model") == 1, err_other[:500]


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


def test_a_hand_edited_table_entry_that_does_not_fit_goes_native(mpi_decisions, run_cli, tmp_path):
    # A table is the user's file: an entry naming an algorithm that cannot
    # build the call (a 2x3 mesh for 4 ranks) sends those calls to the native
    # MPI on every rank alike — no error, no hang, right results.
    table = tmp_path / "table.json"
    assert run_cli("plan", "--table", str(table), "-n", "4", "-m", DEFAULT_MODEL)[0] == 0
    data = json.loads(table.read_text())
    edited = 0
    for row in data["entries"]:
        if row[0] == "bcast" and row[2] == 4:
            row[6] = "hybrid_bcast[mesh=2x3:SMC]"
            edited += 1
    assert edited > 10
    table.write_text(json.dumps(data))
    records, err = _run_decisions(HETCOLL_TABLE=str(table), HETCOLL_DEBUG="explain")
    assert len(records) == len(mpi_decisions)
    assert "bug" not in err and "does not fit this call" in err, err[:800]

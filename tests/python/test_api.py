"""The Python API (docs/python.md): reprs, the calls' results against closed
forms, a schedule as numpy arrays, and an mpi4py program under the library."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hetcoll

ROOT = Path(__file__).resolve().parents[2]
MODEL = "hockney:alpha=20us,bw=1GB/s"


def test_reprs_say_what_the_object_is():
    m = hetcoll.parse_model(MODEL)
    c = hetcoll.collective("bcast", 8, 1 << 20)
    s = hetcoll.generate("binomial_tree", c, m)
    r = s.simulate(m)
    assert repr(m) == "<hetcoll.Model hockney:alpha=2e-05,beta=1e-09,gamma=0, times in s>"
    assert repr(c) == "<hetcoll.Collective bcast p=8 root=0 count=1048576 (1 MiB a rank)>"
    assert repr(s) == "<hetcoll.Schedule binomial_tree for bcast p=8 root=0 count=1048576: 14 ops, 7 messages, 7 MiB>"
    # binomial bcast of n bytes on 8 ranks: 3 rounds of alpha + n beta
    assert r.makespan == pytest.approx(3 * (20e-6 + (1 << 20) * 1e-9))
    assert repr(r) == "<hetcoll.SimResult makespan 3.21 ms on 8 ranks>"
    assert "steps" in repr(hetcoll.parse_model("postal:lambda=2"))


def test_plan_decide_and_bound_agree():
    m = hetcoll.parse_model(MODEL)
    c = hetcoll.collective("allreduce", 8, 1 << 18, 0, 4)
    cands = hetcoll.plan(c, m)
    assert cands == sorted(cands, key=lambda x: x["predicted"])
    d = hetcoll.decide(c, m)
    assert d["algorithm"] == cands[0]["algorithm"] and d["predicted"] == pytest.approx(cands[0]["predicted"])
    assert hetcoll.decide(c, m, "allreduce:@ring_allreduce")["algorithm"] == "ring_allreduce"
    assert 0 < hetcoll.bound(c, m)["bound"] <= d["predicted"]
    with pytest.raises(ValueError):
        hetcoll.collective("allreduce", 0, 4)


def test_a_schedule_as_numpy_arrays():
    np = pytest.importorskip("numpy")
    from hetcoll import arrays

    m = hetcoll.parse_model(MODEL)
    s = hetcoll.generate("binomial_tree", hetcoll.collective("bcast", 8, 1000), m)
    sim = s.simulate(m)
    a = arrays.ops(s, sim)
    assert len({len(v) for v in a.values()}) == 1 and len(a["rank"]) == s.total_ops
    sends = a["kind"] == "send"
    assert sends.sum() == 7 and int(a["bytes"][sends].sum()) == 7000
    assert (a["end"] >= a["start"]).all() and a["end"].max() == pytest.approx(sim.makespan)
    msg = arrays.messages(s)
    assert sorted(zip(msg["sender"].tolist(), msg["receiver"].tolist())) == sorted(
        (int(r), int(p)) for r, p in zip(a["rank"][sends], a["peer"][sends]))
    assert set(np.unique(msg["receiver"]).tolist()) == set(range(1, 8))  # everyone but the root hears once


def test_an_mpi4py_program_under_the_library():
    pytest.importorskip("mpi4py")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("no mpirun")
    from hetcoll.cli import library_paths

    lib = library_paths("openmpi")["preload"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run([mpirun, "-n", "3", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                           "-x", f"LD_PRELOAD={lib}", "-x", "HETCOLL_DEBUG=explain", sys.executable,
                           str(ROOT / "examples" / "mpi4py_allreduce.py"), "5000"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "on 3 ranks right" in proc.stdout
    assert "hetcoll: MPI_Allreduce p=3 size=40000B" in proc.stderr, proc.stderr  # hetcoll ran mpi4py's Allreduce

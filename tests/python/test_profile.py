"""Machine profiles end to end on this machine: `hetcoll probe` under real
mpirun, the JSON Schema, the profile commands, and the MPI layer running on
the profile (HETCOLL_PROFILE=FILE): decisions equal the command line's,
results stay right, and a profile that does not fit gives one warning."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hetcoll import _core
from hetcoll import profile as prof

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "profile.schema.json"
BUILD = ROOT / "build" / "py"
MPIRUN = shutil.which("mpirun")
MPI_FLAGS = ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader,tcp"]


def _needs_mpi():
    if not (MPIRUN and Path(prof.probe_executable()).exists()):
        pytest.skip("needs mpirun and hetcoll-probe (built with MPI)")


def _env(**settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HETCOLL_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **settings)
    return env


@pytest.fixture(scope="module")
def local_profile(tmp_path_factory):
    """A probe of 3 local ranks through the CLI (one host: shared memory)."""
    _needs_mpi()
    out = tmp_path_factory.mktemp("probe") / "local.json"
    import socket
    import sys

    # A declared topology (--topology FILE): this host under a switch
    # beside one of hosts not in the job.
    topo = out.parent / "topology.conf"
    topo.write_text(f"SwitchName=here Nodes={socket.gethostname()}\nSwitchName=away Nodes=elsewhere[0-3]\n"
                    "SwitchName=top Switches=here,away\n")
    # On a loaded machine the probe may refuse what it measured (shared
    # memory's 256 KiB message no slower than its 8 B one: noise, said so,
    # no profile written): it is asked again, up to three times, as
    # tests/fuzz/preload_fuzz.cmake does; any other failure fails at once.
    for attempt in range(3):
        proc = subprocess.run([sys.executable, "-m", "hetcoll", "probe", "--np", "3", "-o", str(out), "--repeats",
                               "3", "--budget", "120", "--topology", str(topo), "--", "--mca", "btl",
                               "self,vader,tcp"], capture_output=True, text=True, env=_env(), timeout=600)
        if proc.returncode == 0 or "measures noise" not in proc.stderr + proc.stdout:
            break
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "written to" in proc.stdout
    # Said: the declaration read, no switch inside this job's one subnet.
    assert f"topology: {topo}: 3 switches in 2 levels; 0 of them inside" in proc.stdout, proc.stdout
    assert "DISAGREES" not in proc.stdout, proc.stdout
    return out


def test_probe_topology_slurm_and_bad_files(tmp_path):
    """--topology slurm asks scontrol (a stand-in here), else topology.conf
    beside SLURM_CONF, else refuses saying what it tried; a file that does
    not parse is refused before anything is launched, naming file and line."""
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text("#!/bin/sh\necho 'SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[0-1]'\n")
    scontrol.chmod(0o755)
    env = {**_env(), "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_CONF": str(tmp_path / "none" / "slurm.conf")}
    run = lambda *a, env=env: subprocess.run([sys.executable, "-m", "hetcoll", "probe", "--np", "2", *a],  # noqa: E731
                                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    proc = run("--topology", "slurm", "--dry-run")
    assert proc.returncode == 0 and "--topology" in proc.stdout, proc.stderr
    assert not list(tmp_path.glob(".hetcoll-topology-*")), "the declared topology's file is left behind"
    scontrol.write_text("#!/bin/sh\necho 'No topology information available'\n")
    proc = run("--topology", "slurm", "--dry-run")
    assert proc.returncode == 2 and "Slurm declares no topology" in proc.stderr and "printed no switch" in proc.stderr
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "topology.conf").write_text("SwitchName=s0 Nodes=a\n")
    proc = run("--topology", "slurm", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    bad = tmp_path / "bad.conf"
    bad.write_text("SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=a\n")
    proc = run("--topology", str(bad))
    assert proc.returncode == 2 and f"{bad}:2: host a is under switch s1 and switch s0" in proc.stderr, proc.stderr
    proc = run("--topology", str(tmp_path / "missing.conf"))
    assert proc.returncode == 2 and "cannot read the topology file" in proc.stderr, proc.stderr


def _validate(doc):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def test_the_probe_writes_a_profile_the_schema_accepts(local_profile):
    doc = json.loads(local_profile.read_text())
    _validate(doc)
    assert doc["format"] == "hetcoll-profile" and doc["version"] == 2
    m = doc["measured"]
    assert m["ranks"] == 3 and m["mode"] == "concurrent" and m["repeats"] >= 1 and m["seconds"] > 0
    assert "Open MPI" in m["mpi"] or "MPICH" in m["mpi"]
    assert len(doc["hosts"]) == 1 and doc["hosts"][0]["ranks"] == [0, 1, 2]
    assert doc["subnets"]["count"] == 1 and doc["ring"]["hosts"] == [0]
    shm = [c for c in doc["classes"] if c["a"] == -1]
    assert len(shm) == 1 and shm[0]["latency"] > 0 and shm[0]["bandwidth"] > 1e8
    assert doc["model"]["receives_use_cpu"] is True
    # Banikazemi's overheads against the second rank, hetcoll's kernels.
    h = doc["hosts"][0]
    assert h["Sc"]["median"] > 0 and h["gamma"] > 0
    assert {(r["op"], r["type"]) for r in doc["reductions"]} >= {("sum", "f64"), ("max", "f64"), ("sum", "i32")}
    # Bruck's two experiments, blocking and non-blocking, k = 1..2, 8 B … 4 MiB.
    sizes = sorted({l["bytes"] for l in doc["lambda"]})
    assert sizes[0] == 8 and sizes[-1] == 4 << 20
    assert {l["sends"] for l in doc["lambda"]} == {"blocking", "nonblocking"}
    assert all(l["k"] == [1, 2] and len(l["experiment1"]) == 2 for l in doc["lambda"])


def test_the_schema_rejects_what_the_reader_rejects(local_profile, tmp_path, run_cli):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads(local_profile.read_text())
    bad = [("version", 3), ("hosts", []), ("measured", {**doc["measured"], "mode": "psychic"}),
           ("classes", [{**doc["classes"][0], "latency": -1.0}])]
    for key, value in bad:
        broken = {**doc, key: value}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(broken))
        code, out, err = run_cli("profile", "show", str(path))
        assert code == 2 and "profile" in err and "Traceback" not in err, err


def test_profile_commands(local_profile, run_cli):
    code, out, err = run_cli("profile", "show", str(local_profile))
    assert code == 0, err
    assert "1 hosts in 1 subnets" in out and "shared memory" in out and "Bruck's lambda" in out
    code, out, err = run_cli("profile", "show", str(local_profile), "--json")
    assert code == 0 and json.loads(out)["version"] == 2
    code, out, err = run_cli("subnets", str(local_profile))
    assert code == 0 and out.startswith("1 subnet of 1 hosts"), out + err
    code, out, err = run_cli("ring", str(local_profile), "--json")
    assert code == 0 and json.loads(out)["crossings"] == 0
    for garbage in ("", "{", "[1, 2]", '{"format": "hetcoll-profile", "version": 1}', "\x00\xff" * 10):
        code, out, err = run_cli("profile", "show", "-")  # not a file
        assert code == 2
    code, out, err = run_cli("probe", "--np", "2", "--dry-run", "--", "--hostfile", "hosts")
    assert code == 0 and "hetcoll-probe" in out and "--hostfile hosts" in out


def test_the_cli_plans_on_a_profile(local_profile, run_cli):
    code, out, err = run_cli("plan", "allreduce", "-n", "3", "-b", "64k", "-m", str(local_profile), "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["predicted_s"] > 0 and plan["valid"]
    assert _core.parse_model(f"profile:{local_profile}").kind == "profile"


def _mpi(program, np, *args, **settings):
    exe = BUILD / program
    if not (exe.exists() and MPIRUN):
        pytest.skip(f"needs {exe} and mpirun")
    return subprocess.run([MPIRUN, "-n", str(np), *MPI_FLAGS, str(exe), *args], capture_output=True, text=True,
                          env=_env(**settings), timeout=900)


def test_the_mpi_layer_decides_on_the_profile_as_the_cli_does(local_profile):
    # tests/mpi/mpi_decisions.cpp prints what hetcoll ran for each call; the
    # planner binding, given the same model, must name the same.
    proc = _mpi("test_mpi_decisions", 4, HETCOLL_PROFILE=str(local_profile))
    assert proc.returncode == 0, proc.stderr
    assert "HETCOLL_PROFILE" not in proc.stderr, proc.stderr[:500]  # it fits: no warning
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(records) > 100
    model = _core.parse_model(str(local_profile))
    checked = 0
    for r in records:
        c = _core.collective(r["op"], r["ranks"], r["bytes"] // r["elem_size"], r["root"], r["elem_size"],
                             r["order_free"])
        assert _core.decide(c, model, "")["algorithm"] == r["algorithm"], r
        checked += 1
    assert checked > 50


def test_results_stay_right_on_a_profile_and_a_misfit_warns_once(local_profile, tmp_path):
    proc = _mpi("test_mpi_collectives", 3, "--quick", HETCOLL_PROFILE=str(local_profile))
    assert proc.returncode == 0 and " 0 failures" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    # Another machine's profile: the host is unknown.
    doc = json.loads(local_profile.read_text())
    doc["hosts"][0]["name"] = "some-other-host"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    proc = _mpi("test_mpi_collectives", 3, "--quick", HETCOLL_PROFILE=str(other))
    assert proc.returncode == 0 and " 0 failures" in proc.stdout, proc.stderr[-2000:]
    warnings = [l for l in proc.stderr.splitlines() if "does not describe host" in l]
    assert 1 <= len(warnings) <= 3 and "default model" in warnings[0], proc.stderr[-2000:]
    # Hostile files: one line each, the default model, right results.
    for name, text in [("garbage", "\x00\x01{{{"), ("deep", "[" * 100000), ("v9", '{"format": "hetcoll-profile", "version": 9}'),
                       ("huge", '{"format": "hetcoll-profile", "version": 1, "measured": {}, "hosts": [' + "{}," * 200000 + "{}]}")]:
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        proc = _mpi("test_mpi_collectives", 2, "--quick", HETCOLL_PROFILE=str(path))
        assert proc.returncode == 0 and " 0 failures" in proc.stdout, (name, proc.stderr[-2000:])
        lines = [l for l in proc.stderr.splitlines() if "HETCOLL_PROFILE" in l]
        assert len(lines) == 1 and "ignored" in lines[0], (name, proc.stderr[-2000:])


def test_tune_stores_measured_decisions_the_mpi_layer_follows(local_profile, tmp_path, run_cli):
    # hetcoll tune on 2 local ranks: native against hetcoll's best candidates;
    # the MPI layer then runs each winner (native included) and explains it.
    _needs_mpi()
    tuned = tmp_path / "tuned.json"
    tuned.write_text(local_profile.read_text())
    import sys

    proc = subprocess.run([sys.executable, "-m", "hetcoll", "tune", str(tuned), "--np", "2", "--ops",
                           "bcast,allreduce,allgather,barrier", "--max", "32k", "--repeats", "3", "--",
                           "--mca", "btl", "self,vader,tcp"], capture_output=True, text=True, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(tuned.read_text())
    _validate(doc)
    (layout,) = doc["tuned"]
    assert layout["hosts"] == [0, 0] and layout["repeats"] == 3
    ops = {e["op"] for e in layout["entries"]}
    assert ops == {"bcast", "allreduce", "allgather", "barrier"}
    for e in layout["entries"]:
        assert e["times"][0]["algorithm"] == "native" and 2 <= len(e["times"]) <= 4
        # The fastest median wins — native unless the fastest's median and best
        # time are both 5 % below native's (hetcoll-tune's margin).
        best = min(e["times"], key=lambda t: t["median"])
        native = e["times"][0]
        clear = best["median"] < 0.95 * native["median"] and best["min"] < 0.95 * native["min"]
        assert e["winner"] == (best["algorithm"] if clear else "native"), e
        assert e.get("timing") in ("Fig. 2", "synchronized start")
    code, out, err = run_cli("profile", "show", str(tuned))
    assert code == 0 and "measured decisions for 2 ranks" in out
    # The MPI layer and the planner binding agree call by call.
    proc = _mpi("test_mpi_decisions", 2, HETCOLL_PROFILE=str(tuned), HETCOLL_DEBUG="explain")
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    model = _core.parse_model(str(tuned))
    measured = 0
    for r in records:
        c = _core.collective(r["op"], r["ranks"], r["bytes"] // r["elem_size"], r["root"], r["elem_size"],
                             r["order_free"])
        d = _core.decide(c, model, "")
        assert r["algorithm"] == ("" if d["native"] else d["algorithm"]), (r, d)
        measured += d["measured"]
    assert measured > 10
    assert "measured" in proc.stderr and ("vs native" in proc.stderr or "measured: native" in proc.stderr)
    # Results stay right with measured decisions.
    proc = _mpi("test_mpi_collectives", 2, "--quick", HETCOLL_PROFILE=str(tuned))
    assert proc.returncode == 0 and " 0 failures" in proc.stdout, proc.stderr[-2000:]


def test_tune_keeps_what_an_earlier_run_measured(local_profile, tmp_path):
    # A second run measures one more size of one collective and again one of
    # the first run's: the first run's other decisions stay, the re-measured
    # one is replaced, and the size classes follow all of them (each size
    # decides the classes nearer to it than to its neighbours).
    _needs_mpi()
    tuned = tmp_path / "tuned.json"
    tuned.write_text(local_profile.read_text())
    import sys

    def tune(ops, sizes):
        proc = subprocess.run([sys.executable, "-m", "hetcoll", "tune", str(tuned), "--np", "2", "--ops", ops,
                               "--sizes", sizes, "--repeats", "1", "--candidates", "1", "--",
                               "--mca", "btl", "self,vader,tcp"], capture_output=True, text=True, env=_env(),
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        (layout,) = json.loads(tuned.read_text())["tuned"]
        return proc.stdout + proc.stderr, layout["entries"]

    _, first = tune("bcast,allreduce", "8,1k")
    out, second = tune("allreduce", "1k,64k")
    assert "3 kept from an earlier run" in out, out
    key = lambda e: (e["op"], e["bytes"])
    assert [key(e) for e in second] == [("bcast", 8), ("bcast", 1024), ("allreduce", 8), ("allreduce", 1024),
                                        ("allreduce", 65536)]
    was = {key(e): e for e in first}
    assert second[0] == was[("bcast", 8)] and second[1] == was[("bcast", 1024)]
    assert second[2]["times"] == was[("allreduce", 8)]["times"]
    assert second[3]["times"] != was[("allreduce", 1024)]["times"]  # measured again
    for op in ("bcast", "allreduce"):
        es = [e for e in second if e["op"] == op]
        assert es[0]["class_lo"] == 0
        for a, b in zip(es, es[1:]):
            assert a["class_hi"] == b["class_lo"] and a["class_lo"] < a["class_hi"]
        assert _core.size_class(es[-1]["bytes"]) + 1 == es[-1]["class_hi"]


def _job(np, calls, sites, **settings):
    """build/py/bench_job: CALLS calls of each site; its rows and stderr."""
    proc = _mpi("bench_job", np, str(calls), sites, **settings)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith('{"op"')]
    assert rows and all(r["ok"] for r in rows), proc.stdout[-2000:]
    return {r["op"]: r for r in rows}, proc.stderr


def test_a_job_that_learned_writes_the_profile_the_next_job_decides_by(local_profile, tmp_path, run_cli):
    # HETCOLL_LEARN_SAVE: the learning job's settled choices become measured
    # decisions ("learned in the job") of its layout in a copy of its
    # profile; a job on that copy runs each of them from its first call, and
    # hetcoll tune keeps them where it does not measure again.
    profile = tmp_path / "profile.json"
    profile.write_text(local_profile.read_text())
    learned = tmp_path / "learned.json"
    sites = "allreduce:64k,bcast:1k,reduce:8"
    first, err = _job(3, 300, sites, HETCOLL_PROFILE=str(profile), HETCOLL_LEARN_SAVE=str(learned))  # learning's default
    said = [l for l in err.splitlines() if "HETCOLL_LEARN_SAVE" in l]
    import re

    m = re.search(r"(\d) learned decisions of MPI_COMM_WORLD \(3 ranks\) written to", said[0] if said else "")
    assert len(said) == 1 and m, err[-2000:]
    doc = json.loads(learned.read_text())
    _validate(doc)
    assert profile.read_text() == local_profile.read_text()  # the job's own profile untouched
    (layout,) = doc["tuned"]
    assert layout["hosts"] == [0, 0, 0] and layout["repeats"] >= 20
    # The sites that settled (on a loaded machine one may still be exploring).
    entries = {e["op"]: e for e in layout["entries"]}
    assert len(entries) == int(m.group(1)) >= 1 and set(entries) <= {"allreduce", "bcast", "reduce"}
    for op, e in entries.items():
        assert e["timing"] == "learned in the job"
        names = [t["algorithm"] for t in e["times"]]
        assert e["winner"] in names and len(names) >= 2 and "native" in names, e
        assert e["winner"] in first[op]["algorithms"], (e, first[op]["algorithms"])
        # It decides its own size class alone (a 64 KiB site says nothing of 8 B).
        assert (e["class_lo"], e["class_hi"]) == (_core.size_class(e["bytes"]), _core.size_class(e["bytes"]) + 1), e
    # The next job decides by them from its first call (no learning).
    second, err = _job(3, 5, sites, HETCOLL_PROFILE=str(learned), HETCOLL_DEBUG="explain")
    if any(e["winner"] != "native" for e in entries.values()):  # explain names where the decision came from
        assert "learned in a job: HETCOLL_LEARN_SAVE" in err, err[-2000:]
    for op, e in entries.items():
        assert set(second[op]["algorithms"]) == {e["winner"]}, (op, e["winner"], second[op]["algorithms"])
    code, out, _ = run_cli("profile", "show", str(learned))
    assert code == 0 and "measured decisions for 3 ranks" in out, out
    # What it cannot write, it says once, and the job's results stay right.
    learning = {"HETCOLL_PROFILE": str(profile), "HETCOLL_LEARN": "1"}
    for calls, settings, why in [(300, {"HETCOLL_PROFILE": str(profile), "HETCOLL_LEARN": "0"}, "HETCOLL_LEARN is off"),
                                 # 'exact' learns no floating-point reduction (bench_job's allreduce sums doubles).
                                 (300, {"HETCOLL_PROFILE": str(profile), "HETCOLL_LEARN": "exact"}, "HETCOLL_LEARN=exact learns no floating"),
                                 (300, {"HETCOLL_LEARN": "1"}, "the model is not a profile"),
                                 (3, learning, "no collective of MPI_COMM_WORLD settled"),
                                 (300, learning, "cannot write")]:
        target = tmp_path / "no" / "such" / "dir.json" if why == "cannot write" else tmp_path / "unwritten.json"
        _, err = _job(2, calls, "allreduce:1k", HETCOLL_LEARN_SAVE=str(target), **settings)
        said = [l for l in err.splitlines() if "HETCOLL_LEARN_SAVE" in l]
        assert len(said) == 1 and why in said[0], (why, err[-2000:])
        assert not target.exists()


def test_bench_times_specs_whose_parameters_hold_commas(tmp_path):
    # --algorithms splits at the commas between specs, not inside a spec's
    # brackets; each forced spec runs as given and names what ran.
    out = tmp_path / "b.json"
    proc = _mpi("hetcoll-bench", 3, "-o", str(out), "--ops", "allreduce", "--sizes", "8k", "--repeats", "1",
                "--target-ms", "1", "--algorithms", "hub_allreduce[hub=2,seg=1k],ring_allreduce")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())["rows"]
    assert sorted(r["variant"] for r in rows) == ["hetcoll", "hub_allreduce[hub=2,seg=1k]", "native", "ring_allreduce"]
    forced = next(r for r in rows if r["variant"].startswith("hub_allreduce"))
    assert forced["algorithm"].startswith("hub_allreduce[hub=2,") and forced["median_s"] > 0


def test_bench_repeats_a_row_until_its_medians_are_known(tmp_path):
    # --max-repeats: beyond --repeats, a row runs again while some variant's
    # median is not known to within 5 % (its 95 % interval from order
    # statistics) — never beyond --max-repeats; every variant the same count.
    out = tmp_path / "b.json"
    proc = _mpi("hetcoll-bench", 3, "-o", str(out), "--ops", "bcast", "--sizes", "64k", "--repeats", "2",
                "--max-repeats", "9", "--target-ms", "1")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["repeats"] == 2 and doc["max_repeats"] == 9
    counts = {len(r["times_s"]) for r in doc["rows"]}
    assert len(counts) == 1 and 2 <= counts.pop() <= 9
    # Two repeats: the interval is the range; a third only where it is wide.
    for r in doc["rows"]:
        t = sorted(r["times_s"])
        if len(t) == 2:
            assert (t[1] - t[0]) / 2 <= 0.05 * t[0]
    proc = _mpi("hetcoll-bench", 2, "-o", str(out), "--max-repeats", "0")
    assert proc.returncode != 0 and "--max-repeats" in proc.stderr


def test_bench_times_a_native_decision_once_for_both_rows(tmp_path):
    # Where hetcoll's decision is native its call is PMPI's: its row has the
    # native row's times (timed_as), not a second timing that would differ
    # by noise alone. Where it runs a schedule, both are timed.
    out = tmp_path / "b.json"
    proc = _mpi("hetcoll-bench", 2, "-o", str(out), "--ops", "bcast", "--sizes", "1k", "--repeats", "3",
                "--target-ms", "1", HETCOLL_DISABLE="1")
    assert proc.returncode == 0, proc.stderr
    rows = {r["variant"]: r for r in json.loads(out.read_text())["rows"]}
    h, n = rows["hetcoll"], rows["native"]
    assert h.get("timed_as") == "native" and h["algorithm"] == "native" and "timed_as" not in n
    assert h["times_s"] == n["times_s"] and len(h["times_s"]) >= 3
    from hetcoll import report
    s = report.summary_rows([r | {"ranks": 2} for r in rows.values()])[0]
    assert s["ratio"] == 1.0 and s["timing"].endswith("native's call")
    proc = _mpi("hetcoll-bench", 2, "-o", str(out), "--ops", "bcast", "--sizes", "1k", "--repeats", "3",
                "--target-ms", "1", "--algorithms", "binomial_tree")
    assert proc.returncode == 0, proc.stderr
    rows = {r["variant"]: r for r in json.loads(out.read_text())["rows"]}
    # Both timed (their times may still be equal: Fig. 2 takes the barrier's
    # time off, and on a loaded machine both can come to 0).
    assert all("timed_as" not in r for r in rows.values())
    assert rows["hetcoll"]["algorithm"] == "binomial_tree" and len(rows["hetcoll"]["times_s"]) >= 3


def _refused(broken: dict, field: str, schema: dict, tmp_path, run_cli) -> None:
    """The published schema and the reader both refuse this profile, the reader naming `field`."""
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken))
    code, out, err = run_cli("profile", "show", str(path))
    assert code == 2 and field in err and "Traceback" not in err, err


def test_a_pair_that_took_turns_is_shown_checked_and_priced(tmp_path, run_cli):
    """One pair sending both ways at once, receives first (the probe's
    bandwidth_same_pair): below 3/4 of the one-way rate where other pairs in
    opposite directions kept it, `profile show` names the connection the
    model builds, and a pair's exchange is priced as its two directions
    taking turns; the schema and the reader agree."""
    doc = json.loads((Path(__file__).parent / "data" / "smpi_two_subnets.json").read_text())
    assert all("bandwidth_same_pair" not in c for c in doc["classes"])  # older: not measured
    # Subnet 0's class: a job of 2 ranks sits on its hosts a0 and a1.
    inside = next(c for c in doc["classes"] if c["a"] == 0 and c["b"] == 0)
    rate = max(inside["bandwidth"], inside["bandwidth_alone"])
    paths = {}
    # (ratio of one pair both ways, of two other pairs in opposite directions)
    for name, ratio, both in (("plain", None, 1.0), ("near", 0.8, 1.0), ("links", 0.5, 0.5), ("turns", 0.5, 1.0)):
        d = json.loads(json.dumps(doc))
        if ratio is not None:
            for c in d["classes"]:
                if c["name"] == inside["name"]:
                    c["bandwidth_same_pair"] = ratio * rate
                    c["bandwidth_both_ways"] = both * rate
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(d))
    code, out, err = run_cli("profile", "show", str(paths["turns"]))
    assert code == 0, err
    assert "one pair" in out
    assert "connection of two ranks inside subnet 0" in out, out
    for name in ("plain", "near", "links"):
        code, out, err = run_cli("profile", "show", str(paths[name]))
        assert code == 0 and "connection of two ranks" not in out, (name, out)
    # Two ranks exchanging 1 MiB: twice the time when the pair takes turns.
    times = {}
    for name, path in paths.items():
        code, out, err = run_cli("plan", "allgather", "-n", "2", "-b", "1M", "-m", f"profile:{path}", "--json",
                                 "-a", "direct_allgather")
        assert code == 0, err
        times[name] = json.loads(out)["predicted_s"]
    assert times["near"] == pytest.approx(times["plain"], rel=1e-9)
    assert times["links"] > 1.7 * times["plain"], times  # the links themselves shared: priced, but no connection
    assert times["turns"] > 1.7 * times["plain"], times
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(json.loads(paths["turns"].read_text()), schema)
    for bad in (-1.0, "slow"):
        broken = json.loads(paths["turns"].read_text())
        for c in broken["classes"]:
            if c["name"] == inside["name"]:
                c["bandwidth_same_pair"] = bad
        _refused(broken, "bandwidth_same_pair", schema, tmp_path, run_cli)


def test_a_backplane_is_shown_checked_and_priced(tmp_path, run_cli):
    """The probe's backplane (a capacity all traffic between hosts shares):
    the schema and the reader agree on it, `profile show` says what was
    measured and the network it builds, and the plan is priced through it."""
    doc = json.loads((Path(__file__).parent / "data" / "smpi_two_subnets.json").read_text())
    assert "backplane" not in doc  # written before the probe measured it: none
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(doc))
    found = tmp_path / "backplane.json"
    found.write_text(json.dumps({**doc, "backplane": {"flows": 3, "aggregate": 2e6, "expected": 3e8, "bandwidth": 2e6}}))
    code, out, err = run_cli("profile", "show", str(found))
    assert code == 0, err
    assert "3 flows between hosts at once moved 2 MB/s together, 300 MB/s alone: a backplane of 2 MB/s" in out
    assert "backplane: 2 MB/s shared by all traffic between hosts" in out
    code, out, err = run_cli("profile", "show", str(plain))
    assert code == 0 and "backplane" not in out
    times = []
    for path in (plain, found):
        code, out, err = run_cli("plan", "allgather", "-n", "4", "-b", "1M", "-m", f"profile:{path}", "--json")
        assert code == 0, err
        times.append(json.loads(out)["predicted_s"])
    assert times[1] > 2 * times[0], times  # 2 MB/s between any two hosts
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(json.loads(found.read_text()), schema)
    for bad in ({"flows": 0, "aggregate": 1.0, "expected": 1.0, "bandwidth": 0},
                {"flows": 3, "aggregate": -1.0, "expected": 1.0, "bandwidth": 0},
                {"flows": 3, "aggregate": 1.0, "expected": 1.0}):
        broken = {**doc, "backplane": bad}
        _refused(broken, "backplane", schema, tmp_path, run_cli)


def test_the_probes_sharing_is_shown_checked_and_priced(tmp_path, run_cli):
    """The probe's sharing phase (a far message into a host beside a near
    stream): the schema and the reader agree on it, `profile show` says what
    was measured and that the network weighs messages by latency, and a far
    message beside a near one is priced slower for it."""
    doc = json.loads((Path(__file__).parent / "data" / "smpi_two_subnets.json").read_text())
    assert "sharing" not in doc  # written before the probe measured it: equal shares
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(doc))
    # SimGrid's CM02 on this platform (testbed/smpi/truth.py): b0 -> a0 at
    # 12.5 MB/s alone, 5.76 MB/s beside a3 -> a0 (1/latency shares).
    sharing = {"measured": 1, "receiver": 0, "near": 3, "far": 4, "near_latency": 1.02e-4, "far_latency": 2.104e-3,
               "near_alone": 1.2509e8, "far_alone": 1.25e7, "far_shared": 5.758e6}
    found = tmp_path / "sharing.json"
    found.write_text(json.dumps({**doc, "sharing": sharing}))
    code, out, err = run_cli("profile", "show", str(found))
    assert code == 0, err
    assert "sharing: b0 -> a0 (2.1 ms) moved 12.5 MB/s alone, 5.76 MB/s beside a stream from a3" in out, out
    assert "messages share a link in proportion to latency^-1.00" in out, out
    code, out, err = run_cli("profile", "show", str(plain))
    assert code == 0 and "sharing" not in out and "latency^" not in out
    from hetcoll import _core
    assert abs(_core.topology(_core.parse_model(f"profile:{found}"))["latency_sharing"] - 1.0) < 0.02
    # a3 -> a0 and b0 -> a0 at once, 1 MiB each: the far one gets about
    # 1/20 of a0's interface while the near one runs.
    times = []
    for path in (plain, found):
        code, out, err = run_cli("plan", "gather", "-n", "8", "-b", "1M", "-m", f"profile:{path}", "-a", "star_gather",
                                 "--json")
        assert code == 0, err
        times.append(json.loads(out)["predicted_s"])
    assert times[1] > 1.02 * times[0], times
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(json.loads(found.read_text()), schema)
    for key, bad in (("measured", 2), ("far_shared", -1.0), ("near_latency", "soon")):
        _refused({**doc, "sharing": {**sharing, key: bad}}, "sharing" if key == "measured" else key, schema, tmp_path,
                 run_cli)
    _refused({**doc, "sharing": {k: v for k, v in sharing.items() if k != "far_alone"}}, "far_alone", schema, tmp_path,
             run_cli)


def test_bench_overlap_times_every_nonblocking_collective(tmp_path):
    # --overlap: OSU's method for the non-blocking forms — the call alone, a
    # compute loop alone (the same for both variants), both overlapped; the
    # overlap within 0 and 1; hetcoll's row names the algorithm that ran.
    out, csv = tmp_path / "o.json", tmp_path / "o.csv"
    for thread in ("0", "1"):
        proc = _mpi("hetcoll-bench", 3, "-o", str(out), "--csv", str(csv), "--overlap", "--sizes", "8,8k",
                    "--repeats", "1", "--target-ms", "0.5", "--test-every", "50", HETCOLL_PROGRESS_THREAD=thread)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        assert doc["mode"] == "overlap" and doc["progress_thread"] == thread and doc["test_every_s"] == 5e-5
        rows = doc["rows"]
        ops = {r["op"] for r in rows}
        assert len(ops) == 16  # every collective, barrier included
        assert len(rows) == 2 * (15 * 2 + 1)  # hetcoll and native, two sizes (the barrier has none)
        for r in rows:
            assert 0 <= r["overlap"] <= 1 and r["call_s"] > 0 and r["overlapped_s"] > 0, r
            assert r["compute_s"] > 0
        for op in ops:
            h = [r for r in rows if r["op"] == op and r["variant"] == "hetcoll"]
            assert all(r["algorithm"] and r["algorithm"] != "native" for r in h), h
        assert csv.read_text().startswith("op,bytes,variant,algorithm,call_us,compute_us,overlapped_us,overlap_percent")

"""The CLI contract: JSON shapes scripts rely on, exit codes, one-line errors."""
import os
import json
from pathlib import Path

import pytest

import hetcoll


def test_tables_json_reproduces_the_paper(run_cli):
    code, out, err = run_cli("tables", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == {"gamma", "break_even"}
    table1 = [2.000, 1.618, 1.466, 1.380, 1.325, 1.285, 1.255, 1.232, 1.213, 1.197]
    table2 = [1.440, 2.518, 3.558, 4.584, 5.604, 6.618, 7.630, 8.640, 9.649]
    assert [round(d["gamma"][str(k)], 3) for k in range(1, 11)] == table1
    assert [round(d["break_even"][str(k)], 3) for k in range(1, 10)] == table2


def test_tables_text(run_cli):
    code, out, _ = run_cli("tables")
    assert code == 0
    assert "1.618" in out and "2.518" in out


def test_plan_json_keys_and_values(run_cli):
    code, out, err = run_cli("plan", "bcast", "--ranks", "8", "--model", "postal:lambda=2", "--json")
    assert code == 0, err
    d = json.loads(out)
    for key in ("algorithm", "predicted_steps", "unit", "ranks", "tree", "candidates"):
        assert key in d  # one key scheme: a time's key names its unit (postal steps here)
    assert d["ranks"] == 8 and d["unit"] == "steps" and "predicted_time" not in d and "predicted_s" not in d
    assert d["predicted_steps"] == 5.0  # Fig. 2
    assert d["algorithm"] in ("lambda_tree", "alpha_partition")
    tree = {t["rank"]: t for t in d["tree"]}
    assert tree[0]["parent"] is None
    assert max(t["received_steps"] for t in d["tree"]) == 5.0


def test_bound_against_a_hand_derived_bound(run_cli):
    # Three subnets behind shared 12.5 MB/s uplinks: 2 vectors cross, each
    # through two uplinks, 4 MiB over 3 links, plus a cross-subnet message's
    # overheads (1 + 50 us + 3 ms + 1 us; docs/bound.md).
    model = "cluster:subnets=4+4+4,bw=125e6,up_bw=12.5e6"
    code, out, err = run_cli("bound", "bcast", "-n", "12", "-b", "1M", "-m", model, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert abs(d["bound_s"] - (4 * 2**20 / 37.5e6 + 3.052e-3)) < 1e-9
    assert d["cut"] == "all uplink_in links together, both ways"
    assert d["network"] and d["constraints"] > 10
    assert d["algorithm"] and d["predicted_s"] >= d["bound_s"] and d["x_bound"] >= 1
    code, out, err = run_cli("bound", "bcast", "-n", "12", "-b", "1M", "-m", model)
    assert code == 0, err
    assert "bound      115 ms" in out and "× the bound" in out
    # plan says it too, and --explain gives every candidate its multiple.
    code, out, err = run_cli("plan", "bcast", "-n", "12", "-b", "1M", "-m", model, "--explain")
    assert code == 0, err
    assert "bound      115 ms" in out and "× bound" in out
    code, out, err = run_cli("plan", "bcast", "-n", "12", "-b", "1M", "-m", model, "--json")
    assert json.loads(out)["bound"]["bound_s"] == d["bound_s"]
    # No collective named: one line, exit 2.
    code, out, err = run_cli("bound", "-n", "12", "-m", model)
    assert code == 2 and "needs a collective" in err


def test_plan_forced_binomial_is_fig_1b(run_cli):
    code, out, _ = run_cli("plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "-a", "binomial_tree", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["predicted_steps"] == 6.0
    assert sorted(t["received_steps"] for t in d["tree"]) == [0, 2, 3, 4, 4, 5, 5, 6]


def test_plan_root_and_text_tree(run_cli):
    code, out, _ = run_cli("plan", "bcast", "-n", "5", "-m", "postal:lambda=1.8", "--root", "3")
    assert code == 0
    tree_lines = out.split("tree       rank @", 1)[1].splitlines()[1:]
    assert len(tree_lines) == 5
    assert tree_lines[0] == "  3 @0"
    assert {l.split("@")[0].strip(" ├└─│") for l in tree_lines} == {"0", "1", "2", "3", "4"}


def test_simulate_json(run_cli):
    code, out, err = run_cli("simulate", "allreduce", "-n", "6", "-m", "postal:lambda=1.5", "--bytes", "16",
                             "--elem-size", "8", "--json")
    assert code == 0, err
    d = json.loads(out)
    for key in ("algorithm", "predicted_steps", "unit", "ranks", "rank_finish_steps", "timeline"):
        assert key in d
    assert len(d["rank_finish_steps"]) == 6
    assert max(d["rank_finish_steps"]) == pytest.approx(d["predicted_steps"])
    assert all(e["end_steps"] >= e["start_steps"] for e in d["timeline"])
    assert {e["kind"] for e in d["timeline"]} >= {"send", "recv", "reduce", "copy"}


def test_simulate_seconds_unit(run_cli):
    code, out, _ = run_cli("simulate", "bcast", "-n", "4", "-m", "hockney:alpha=20us,beta=1ns", "-b", "1M",
                           "-a", "binomial_tree", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["unit"] == "s"
    assert d["predicted_s"] == pytest.approx(2 * (20e-6 + 1048576e-9))


@pytest.mark.parametrize("args, message", [
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=0.5"], "lambda >= 1"),
    (["plan", "bcast", "-n", "0", "-m", "postal:lambda=2"], "at least 1"),
    (["plan", "bcast", "-n", "-4", "-m", "postal:lambda=2"], "at least 1"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "-a", "quantum_tree"], "unknown algorithm 'quantum_tree'"),
    (["plan", "bcast", "-n", "8", "-m", "ethernet:speed=1"], "unknown model"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=two"], "not a valid"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--bytes", "12x"], "size"),
    (["simulate", "bcast", "-n", "8", "-m", "hetero:nodes=FFS"], "describes 3 ranks"),
    (["alpha-range", "--lambda", "0.9"], "--lambda must be a number from 1 to 10000, got 0.9"),
    (["alpha-range", "--lambda", "nan"], "--lambda must be a number from 1 to 10000, got nan"),
    (["plan", "bcast", "-n", "8"], "required"),
    (["validate", "/nonexistent/schedule.txt"], "cannot read"),
    # Hostile numbers: refused up front, never a traceback or an allocation.
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--elem-size", "0"], "--elem-size must be at least 1"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--elem-size", "-4"], "--elem-size must be at least 1"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--bytes", "inf"], "is not a finite size"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--bytes", "nan"], "is not a finite size"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--bytes", "1e30"], "more than hetcoll plans for"),
    (["plan", "bcast", "-n", "2147483648", "-m", "postal:lambda=2"], "--ranks must be at least 1 and at most"),
    (["plan", "bcast", "-n", "100000000", "-m", "postal:lambda=2"], "at most 2097152"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--root", "99999999999"], "--root must be"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--root", "8"], "--root 8 is not a rank"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=1e9"], "more than hetcoll plans for"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=1e308"], "more than hetcoll plans for"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=1e999"], "not a finite"),
    (["plan", "bcast", "-n", "8", "-m", "hockney:alpha=nan,beta=1ns"], "not a finite"),
    (["plan", "bcast", "-n", "8", "-m", "file:/dev/zero"], "not a regular file"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=0.99999999"], "lambda = 0.99999999 is below 1"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "-a", "knomial_bcast[k=2,k=3]"], "'k' given twice"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--override", "bcast::@binomial_tree"], "empty range"),
    (["plan", "bcast", "-n", "4", "-m", "hockney:alpha=1us,beta=1ns", "-a",
      "hybrid_bcast[mesh=4x25x13x41x61x1321:SSSSSSCCCCCC]"], "has more than"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "-a", "chain_bcast[seg=0]"], "seg='0'"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--override", "bcast:@chain_bcast[seg=0]"], "seg='0'"),
    (["plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "-a", "lambda_tree[lambda=1e300]"], "lambda='1e300'"),
    (["plan", "alltoallv", "-n", "2000", "-m", "postal:lambda=2"], "up to 1024 ranks"),
    (["alpha-range", "--lambda", "1e9"], "--lambda must be a number from 1"),
    (["alpha-range", "--lambda", "2", "--max-n", "1000000000"], "--max-n must be"),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, args, message):
    code, out, err = run_cli(*args)
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert message in lines[0]


@pytest.mark.parametrize("text, message", [
    ('{"model": "hockney", "alpha": 1e999, "beta": 1e-9}', "out of range"),
    ('{"model": "hockney", "alpha": -1, "beta": 1e-9}', "non-negative and finite"),
    ('{"model": "postal", "lambda": [[0, 1e9]]}', "more than hetcoll plans for"),
    ('{"model": "loggp", "L": 1, "os": 1, "or": 1, "g": 1, "G": NaN}', "unexpected character 'N'"),
    ('{"model": "hockney", "alpha": 1e-6, "beta": 1e-9', "JSON"),
    ('{"model": "hockney", "alpha": 1e-6, "alpha": 1e-9, "beta": 1e-9}', "duplicate key 'alpha'"),
    ('{"model": "hockney\xff", "alpha": 1e-6, "beta": 1e-9}', "unexpected byte 255"),
    ("[" * 5000 + "]" * 5000, "nesting too deep"),
])
def test_hostile_model_files_are_refused(run_cli, tmp_path, text, message):
    f = tmp_path / "model.json"
    f.write_bytes(text.encode("latin-1"))
    code, out, err = run_cli("plan", "bcast", "-n", "4", "-m", f"file:{f}", "--json")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert message in err
    assert "Infinity" not in out and "NaN" not in out


def test_a_schedule_hetcoll_builds_wrong_is_an_internal_error(monkeypatch, capsys):
    # Not the user's fault: exit 1 and say it is a bug.
    from hetcoll import cli

    bad = _core_schedule_with_a_wrong_send()
    monkeypatch.setattr(cli._core, "generate", lambda *a, **k: bad)
    code = cli.main(["plan", "bcast", "-n", "2", "-m", "postal:lambda=2", "-a", "binomial_tree"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("hetcoll: internal error:") and "a bug in hetcoll" in err


def _core_schedule_with_a_wrong_send():
    from hetcoll import _core

    text = ("# hetcoll schedule v1\nalgorithm broken\n"
            'collective {"op":"bcast","nranks":2,"root":0,"elem_size":1,"count":8}\n'
            "rank 0 tmp=0\n  0: send to 1 out[0:4]\nrank 1 tmp=0\n  0: recv from 0 out[0:8]\n")
    return _core.schedule_from_text(text)


def test_plan_follows_the_decision_and_says_how(run_cli):
    # 1100 bytes are planned as their size class (1024 bytes), like the MPI layer does.
    code, out, err = run_cli("plan", "bcast", "-n", "8", "-m", "hockney:alpha=1us,beta=1ns", "--bytes", "1100")
    assert code == 0, err
    assert "decided    for its size class, planned on bcast p=8 root=0 count=1024" in out
    # An override that does not fit this group is not followed, and the output says why.
    code, out, err = run_cli("plan", "bcast", "-n", "7", "-m", "hockney:alpha=1us,beta=1ns", "--override",
                             "bcast:@hybrid_bcast[mesh=2x3:SMC]", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["forced_by"] is None
    assert "has 6 ranks, the group 7" in d["decision"]["note"]
    code, out, err = run_cli("plan", "bcast", "-n", "6", "-m", "hockney:alpha=1us,beta=1ns", "--override",
                             "bcast:@hybrid_bcast[mesh=2x3:SMC]", "--json")
    assert json.loads(out)["algorithm"] == "hybrid_bcast[mesh=2x3:SMC]" and json.loads(out)["forced_by"] == "--override"


def test_gatherv_decisions_ignore_the_counts(run_cli):
    # No rank of an MPI_Gatherv knows every count: the choice is the same for every size.
    algos = set()
    for b in ("0", "8", "1M"):
        code, out, err = run_cli("plan", "gatherv", "-n", "6", "-m", "hockney:alpha=1us,beta=1ns", "-b", b, "--json")
        assert code == 0, err
        algos.add(json.loads(out)["algorithm"])
    assert algos == {"star_gather"}


def test_config_lists_every_variable_and_warns_on_misspellings(run_cli, monkeypatch):
    monkeypatch.setenv("HETCOLL_PROFIL", "hockney:alpha=1us,beta=1ns")
    monkeypatch.setenv("HETCOLL_ALGO", "bcast:@star_bcast")
    code, out, err = run_cli("config", "--json")
    assert code == 0, err
    d = json.loads(out)
    names = {s["name"] for s in d["settings"]}
    assert names == {"HETCOLL_PROFILE", "HETCOLL_ALGO", "HETCOLL_TABLE", "HETCOLL_DEBUG", "HETCOLL_DISABLE",
                     "HETCOLL_HANG_TIMEOUT", "HETCOLL_PROGRESS_THREAD", "HETCOLL_LEARN", "HETCOLL_LEARN_SAVE"}
    algo = next(s for s in d["settings"] if s["name"] == "HETCOLL_ALGO")
    assert algo["value"] == "bcast:@star_bcast" and algo["from_env"]
    assert {"name": "HETCOLL_PROFIL", "suggestion": "HETCOLL_PROFILE"} in d["unknown"]
    # The settings that change decisions, which the ranks of a communicator compare.
    assert {s["name"] for s in d["settings"] if s["agreed"]} == {"HETCOLL_PROFILE", "HETCOLL_ALGO", "HETCOLL_TABLE",
                                                                 "HETCOLL_DISABLE", "HETCOLL_LEARN"}
    code, out, err = run_cli("config")
    assert code == 0 and "HETCOLL_HANG_TIMEOUT" in out
    assert "HETCOLL_ALGO           = bcast:@star_bcast   [set, alike on every rank]" in out
    assert "unknown variable HETCOLL_PROFIL ignored (did you mean HETCOLL_PROFILE?)" in err


def test_one_version_everywhere(run_cli):
    from importlib.metadata import version

    code, out, _ = run_cli("--version")
    assert code == 0
    assert out.strip() == f"hetcoll {hetcoll._core.__version__}" == f"hetcoll {version('hetcoll')}"
    cmake = (Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
    assert f"project(hetcoll VERSION {hetcoll._core.__version__} " in cmake


def test_save_validate_and_simulate_a_schedule(run_cli, tmp_path):
    text = tmp_path / "s.txt"
    js = tmp_path / "s.json"
    assert run_cli("plan", "bcast", "-n", "13", "-m", "postal:lambda=2", "--save", str(text))[0] == 0
    assert run_cli("plan", "bcast", "-n", "13", "-m", "postal:lambda=2", "--save", str(js))[0] == 0
    for f in (text, js):
        code, out, _ = run_cli("validate", str(f))
        assert code == 0 and "ok: 12 messages" in out
        code, out, _ = run_cli("simulate", "--schedule", str(f), "-m", "postal:lambda=2", "--json")
        assert code == 0 and json.loads(out)["predicted_steps"] == 6.0  # T_2(13) = 6
    # A schedule edited into nonsense: the line is named.
    broken = text.read_text().replace("recv from", "recv frm", 1)
    bad = tmp_path / "bad.txt"
    bad.write_text(broken)
    code, _, err = run_cli("validate", str(bad))
    assert code == 2 and "line" in err and "Traceback" not in err
    # A schedule that parses but is wrong: validation fails with exit 1.
    lines = text.read_text().splitlines()
    first_send = next(i for i, l in enumerate(lines) if "send to" in l)
    lines[first_send] = lines[first_send].replace("out[0:8]", "out[0:4]")
    (tmp_path / "wrong.txt").write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli("validate", str(tmp_path / "wrong.txt"))
    assert code == 1 and "sends 4 bytes" in out and "receives 8" in out


def test_dot_and_png(run_cli, tmp_path):
    dot = tmp_path / "t.dot"
    png = tmp_path / "t.png"
    code, _, err = run_cli("plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--dot", str(dot), "--png", str(png))
    assert code == 0, err
    text = dot.read_text()
    assert text.startswith("digraph") and text.count("->") == 7
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_alpha_range_json(run_cli):
    code, out, err = run_cli("alpha-range", "--lambda", "2", "--max-n", "20", "--json")
    assert code == 0, err
    d = json.loads(out)
    r13 = next(r for r in d["ranges"] if r["n"] == 13)
    assert (r13["n_min"], r13["n_max"]) == (8, 8)
    r14 = next(r for r in d["ranges"] if r["n"] == 14)
    assert (r14["n_min"], r14["n_max"]) == (6, 13)
    assert len(d["table"]) == 1  # lambda = 2: one alpha for all n (Fig. 6)
    assert d["table_size"]["20"] == 1


def test_alpha_range_png(run_cli, tmp_path):
    png = tmp_path / "a.png"
    code, out, err = run_cli("alpha-range", "--lambda", "1.95", "--max-n", "250", "--png", str(png))
    assert code == 0, err
    assert png.stat().st_size > 10000
    assert "look-up table for n <= 250" in out


def test_algorithms_listing(run_cli):
    code, out, _ = run_cli("algorithms", "--json")
    names = {a["name"] for a in json.loads(out)}
    assert {"binomial_tree", "lambda_tree", "alpha_partition", "bks_combine"} <= names


def test_help_everywhere(run_cli):
    for cmd in ([], ["plan"], ["bound"], ["simulate"], ["tables"], ["alpha-range"], ["validate"], ["algorithms"], ["demo"]):
        code, out, _ = run_cli(*cmd, "--help")
        assert code == 0 and "usage" in out


def test_demo_runs(run_cli, tmp_path):
    code, out, err = run_cli("demo", "--out", str(tmp_path / "demo"))
    assert code == 0, err
    assert "lambda_tree: finishes at 5" in out
    assert (tmp_path / "demo" / "lambda_tree.dot").exists()


def test_lib_points_at_the_installed_preload_library(run_cli):
    import os

    code, out, err = run_cli("lib", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == {"mpi", "preload", "capi", "include", "prefix", "mpis"}
    assert d["mpi"] in d["mpis"]
    assert d["preload"].endswith("libhetcoll_mpi.so") and os.path.exists(d["preload"])
    assert os.path.exists(os.path.join(d["include"], "hetcoll.h"))
    # The prefix holds what find_package(hetcoll) and pkg-config read.
    assert os.path.exists(os.path.join(d["prefix"], "lib", "cmake", "hetcoll", "hetcollConfig.cmake"))
    assert os.path.exists(os.path.join(d["prefix"], "lib", "pkgconfig", "hetcoll.pc"))
    code, out, _ = run_cli("lib")
    assert code == 0 and out.strip() == d["preload"]


def test_lib_names_each_mpis_build(run_cli):
    """--mpi: the libraries built against that MPI (their ELF names its
    library), or an error naming what is there."""
    needed = {"openmpi": b"libmpi.so.40", "mpich": b"libmpich.so"}
    code, out, err = run_cli("lib", "--json")
    built = json.loads(out)["mpis"]
    assert built, "no MPI libraries were built"
    for mpi in built:
        code, out, err = run_cli("lib", "--mpi", mpi, "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["mpi"] == mpi
        for which in ("preload", "capi"):
            data = open(d[which], "rb").read()
            assert needed[mpi] in data, f"{d[which]} does not link {needed[mpi].decode()}"
            for other, name in needed.items():
                if other != mpi:
                    assert name not in data, f"{d[which]} links {other}'s {name.decode()} too"
    for mpi in set(needed) - set(built):
        code, out, err = run_cli("lib", "--mpi", mpi)
        assert code != 0 and f"no hetcoll libraries for {mpi}" in err
    code, out, err = run_cli("lib", "--mpi", "lam")
    assert code != 0 and "invalid choice" in err


def _bench_json(path, ranks, speeds):
    results = [{"op": op, "bytes": b, "hetcoll_us": 10.0 / s, "native_us": 10.0, "speed": s, "algorithm": algo}
               for op, b, s, algo in speeds]
    path.write_text(json.dumps({"ranks": ranks, "reps": 3, "results": results}))
    return str(path)


def test_bench_report_tables_and_plot(run_cli, tmp_path):
    a = _bench_json(tmp_path / "p2.json", 2, [("bcast", 8, 0.8, "binomial_tree"), ("bcast", 4096, 1.2, "binomial_tree"),
                                              ("reduce", 8, 1.0, "binomial_reduce"), ("reduce", 4096, 0.95, "rabenseifner_reduce"),
                                              ("barrier", 0, 0.92, "dissemination_barrier")])
    b = _bench_json(tmp_path / "p4.json", 4, [("bcast", 8, 1.1, "binomial_tree"), ("bcast", 4096, 1.3, "chain_bcast")])
    md, png = tmp_path / "r.md", tmp_path / "r.png"
    code, out, err = run_cli("bench-report", b, a, "--markdown", str(md), "--png", str(png))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("2 ranks: 4/5 cases at >= 0.9x native")  # sorted by ranks
    assert "worst 0.80 (bcast 8 B, binomial_tree)" in lines[0]
    assert lines[1].startswith("4 ranks: 2/2 cases")
    text = md.read_text()
    assert "| bcast | **0.80** | 1.20 | `binomial_tree` |" in text
    assert "`binomial_reduce` (8 B), `rabenseifner_reduce` (4 KiB)" in text
    assert "barrier: 0.92" in text
    assert png.stat().st_size > 10000


def test_bench_report_reads_what_hetcoll_bench_writes(run_cli, tmp_path):
    """One result format for both readers: bench-report reads a hetcoll bench
    result (the file hetcoll report reads), pairing hetcoll's and native's rows."""
    rows = []
    for op, b, speed, alg in [("bcast", 1024, 2.0, "hierarchical"), ("allreduce", 1 << 20, 0.5, "ring_allreduce")]:
        t = 1e-4
        rows.append({"op": op, "bytes": b, "variant": "hetcoll", "algorithm": alg, "min_s": t, "median_s": t,
                     "times_s": [t], "predicted_s": None})
        rows.append({"op": op, "bytes": b, "variant": "native", "algorithm": "native", "min_s": t * speed,
                     "median_s": t * speed, "times_s": [t * speed], "predicted_s": None})
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"tool": "hetcoll-bench", "created": "2026-11-25T00:00:00Z", "ranks": 3, "hosts": [],
                                "model": "x", "predictions": False, "procedure": "Fig. 2", "repeats": 1, "rows": rows}))
    md = tmp_path / "r.md"
    code, out, err = run_cli("bench-report", str(path), "--markdown", str(md))
    assert code == 0, err
    assert out.startswith("3 ranks: 1/2 cases at >= 0.9x native"), out
    assert "worst 0.50 (allreduce 1 MiB, ring_allreduce)" in out
    assert "`hierarchical`" in md.read_text()


def _osu_blocks(text):
    """What a script written for OSU output reads: '#' lines are headers,
    every other non-empty line is numbers, the size first."""
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("# hetcoll bench"):
            cur = {"title": line, "rows": []}
            blocks.append(cur)
        elif line.startswith("#"):
            cur["columns"] = line
        elif line.strip():
            cur["rows"].append([float(x) for x in line.split()])
    return blocks


def test_bench_results_in_osu_format(run_cli, tmp_path):
    """--format osu: a block per collective and variant, sizes ascending, the
    mean/min/max of the repeats in us and their number (osu_allreduce -f's
    columns); the overlap results as osu_iallreduce prints them."""
    rows = []
    for op in ("allreduce", "bcast"):
        for b in (1 << 20, 8):  # out of order in the file
            rows.append({"op": op, "bytes": b, "variant": "hetcoll", "algorithm": "ring_allreduce", "min_s": 1e-5,
                         "median_s": 2e-5, "times_s": [1e-5, 2e-5, 6e-5], "predicted_s": None})
            rows.append({"op": op, "bytes": b, "variant": "native", "algorithm": "native", "min_s": 3e-5,
                         "median_s": 3e-5, "times_s": [3e-5], "predicted_s": None})
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"tool": "hetcoll-bench", "ranks": 4, "rows": rows}))
    code, out, err = run_cli("bench-report", str(path), "--format", "osu")
    assert code == 0, err
    blocks = _osu_blocks(out)
    assert [b["title"] for b in blocks] == [f"# hetcoll bench (OSU format): MPI_{op}, {v}, 4 ranks"
                                           for op in ("Allreduce", "Bcast") for v in ("hetcoll", "native")]
    assert "Avg Latency(us)" in blocks[0]["columns"]
    assert blocks[0]["rows"] == [[8, 30.0, 10.0, 60.0, 3], [1 << 20, 30.0, 10.0, 60.0, 3]]
    assert blocks[1]["rows"][0] == [8, 30.0, 30.0, 30.0, 1]
    ov = tmp_path / "overlap.json"
    ov.write_text(json.dumps({"tool": "hetcoll-bench", "ranks": 2, "mode": "overlap", "rows": [
        {"op": "allreduce", "bytes": 8, "variant": "hetcoll", "algorithm": "x", "call_s": 1e-5, "compute_s": 2e-5,
         "overlapped_s": 2.5e-5, "overlap": 0.5}]}))
    code, out, err = run_cli("bench-report", str(ov), "--format", "osu")
    assert code == 0, err
    b = _osu_blocks(out)
    assert b[0]["title"].endswith("MPI_Iallreduce, hetcoll, 2 ranks") and "Overlap(%)" in b[0]["columns"]
    assert b[0]["rows"] == [[8, 25.0, 20.0, 10.0, 50.0]]
    code, out, err = run_cli("bench-report", str(tmp_path / "missing.json"), "--format", "osu")
    assert code != 0 and "missing.json" in err


def test_bench_report_rejects_other_files(run_cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\"something\": 1}")
    code, out, err = run_cli("bench-report", str(bad))
    assert code == 2 and err.count("\n") == 1 and "neither hetcoll bench nor bench_mpi output" in err
    code, out, err = run_cli("bench-report", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_plan_on_a_profile_places_the_ranks_on_its_hosts(run_cli):
    # 11 ranks on the emulated cluster's 8 hosts: laid out as the probe's job
    # was (it was an internal error before); a model of too few ranks is a
    # clear error.
    import pathlib
    prof = pathlib.Path(__file__).resolve().parents[2] / "bench/results/netns/profile.json"
    code, out, err = run_cli("plan", "allreduce", "-n", "11", "-m", f"profile:{prof}", "-b", "1M")
    assert code == 0, err
    assert "p=11" in out and "predicted" in out
    code, out, err = run_cli("plan", "allreduce", "-n", "12", "-m", "cluster:subnets=4+4", "--algorithm", "ring_allreduce")
    assert code == 2 and "describes 8 ranks" in err and "internal error" not in err


def test_plan_past_the_proof_limit_is_sampled_and_says_so(run_cli):
    # A ring allgather of 4096 ranks has ~33 M ops: the plan proves it by a sample of ranks' programs.
    code, out, err = run_cli("plan", "allgather", "-n", "4096", "-b", "64k", "-m", "loggp:L=2us,o=1us,g=1us,G=0.8ns",
                  "--algorithm", "bucket_collect", "--json")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["proof"] == "sampled" and rec["valid"]
    assert "matched" in rec["validation"]
    assert rec["predicted_s"] > 0


def test_sampled_proof_finds_an_unmatched_message(monkeypatch):
    from hetcoll import proof

    class Program:  # rank 1 receives one byte fewer than rank 0 sends it
        def __init__(self, r):
            self.r, self.total_ops = r, 2

        def traffic(self, r):
            return [(True, 1, 8)] if r == 0 else [(False, 0, 7)] if r == 1 else []

    class Core:
        @staticmethod
        def generate(algorithm, coll, model, limit, rank):
            return Program(rank)

    monkeypatch.setattr(proof, "_core", Core)

    class Coll:
        nranks, root = 2, 0

    res = proof.sampled_proof("x", Coll(), None)
    assert not res["ok"]
    assert "rank 0 sends 1 messages to rank 1" in res["problem"]


@pytest.mark.parametrize("args", [
    ["plan", "alltoall", "-n", "100000", "-m", "hockney:alpha=1us,beta=1ns"],
    ["plan", "allreduce", "-n", "1000000", "-m", "hockney:alpha=2us,beta=1ns", "-b", "8k", "--elem-size", "8"],
])
def test_plan_too_large_to_build_is_proved_by_a_sample(run_cli, args):
    # Once refused ("too large to build here"): now planned, its proof sampled and said to be.
    code, out, err = run_cli(*args)
    assert code == 0, err
    assert "validated  sampled:" in out and "not built in full here" in out
    assert "predicted" in out


def test_plan_a_million_ranks_prices_every_tree(run_cli):
    """A reduce of 10^6 ranks: no tree fits a decision's simulation, each is priced by its estimate
    (it used to leave the call to the native MPI; star_reduce's exact rounds, 10 s, must not win)."""
    code, out, err = run_cli("plan", "reduce", "-n", "1000000", "-m", "hockney:alpha=2us,beta=1ns", "-b", "8k",
                             "--elem-size", "8", "--explain")
    assert code == 0, err
    assert "algorithm  binomial_reduce" in out
    assert "validated  sampled:" in out
    assert "star_reduce" in out and "rounds" in out



def test_the_launcher_is_srun_inside_a_slurm_allocation(tmp_path, monkeypatch):
    """auto: srun with the allocation's tasks inside one (PMIx for the Open
    MPI the programs are built for), mpirun elsewhere; --launcher forces."""
    from hetcoll import profile as prof

    fake = tmp_path / "srun"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    cmd, _ = prof.mpirun_command(2, ["prog"], [])
    assert os.path.basename(cmd[0]) in ("mpirun", "mpiexec") and cmd[1:3] == ["-n", "2"]
    assert prof.default_np(4) == 4
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_NTASKS", "6")
    assert prof.default_np(None) == 6
    cmd, env = prof.mpirun_command(6, ["prog", "x"], ["--exclusive"])
    mpi = prof.programs_mpi()
    assert cmd == [str(fake), "-n", "6", f"--mpi={'pmix' if mpi == 'openmpi' else 'pmi2'}", "--exclusive", "prog", "x"]
    cmd, _ = prof.mpirun_command(6, ["prog"], [], "mpirun")
    assert os.path.basename(cmd[0]) in ("mpirun", "mpiexec")
    with pytest.raises(ValueError, match="--launcher slurm"):
        prof.mpirun_command(6, ["prog"], [], "slurm")


def test_help_groups_every_command_by_workflow(run_cli):
    """hetcoll --help lists each command once, under measure → decide → run
    → hold to native → reproduce; none is left out."""
    from hetcoll.cli import HELP_GROUPS, build_parser

    code, out, err = run_cli("--help")
    assert code == 0, err
    titles = [t for t, _ in HELP_GROUPS]
    assert [line[:-1] for line in out.splitlines() if line[:-1] in titles] == titles
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    grouped = [n for _, names in HELP_GROUPS for n in names]
    assert sorted(grouped) == sorted(sub.choices), "a command missing from (or unknown to) HELP_GROUPS"
    for name in sub.choices:
        assert sum(line.startswith(f"  {name} ") for line in out.splitlines()) == 1, name


def test_parsers_and_grouped_help_are_one_table():
    """Each command is one row of its group's module (hetcoll/cli/*.py,
    GROUP): the parser registers exactly the rows, in their order, each with
    its row's help line and a function to run; HELP_GROUPS is the rows; and
    `hetcoll --help` lists every registered command once, under its row's
    group (the parsers and the help were once two lists that disagreed)."""
    import argparse

    from hetcoll import cli

    rows = [(g.title, [c.name for c in g.commands]) for g in cli.GROUPS]
    assert cli.HELP_GROUPS == rows
    assert [t for t, _ in rows] == ["measure the machine", "decide: what hetcoll would do, and why", "run it",
                                    "hold it to the native MPI", "reproduce the papers"]
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [n for _, names in rows for n in names], "a parser outside the table, or a row twice"
    assert {a.dest: a.help for a in sub._choices_actions} == {c.name: c.help for g in cli.GROUPS for c in g.commands}

    def leaves(p, path):  # every command line that runs something: it has a function
        inner = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not inner:
            yield path, p.get_default("func")
        for a in inner:
            for name, q in a.choices.items():
                yield from leaves(q, path + [name])

    for path, func in leaves(parser, []):
        assert callable(func), f"hetcoll {' '.join(path)} runs nothing"
    under, title = {}, None
    for line in parser.format_help().splitlines():
        if line.endswith(":") and not line.startswith(" "):
            title = line[:-1]
        elif line.startswith("  ") and line[2] != " " and line.split()[0] in sub.choices:  # not a wrapped line
            under.setdefault(line.split()[0], []).append(title)
    assert under == {n: [t] for t, names in rows for n in names}


def test_explain_is_plan_explain(run_cli):
    args = ["allreduce", "--ranks", "8", "--bytes", "1M", "-m", "hockney:alpha=20us,bw=1GB/s"]
    code, out, err = run_cli("explain", *args, "--json")
    assert code == 0, err
    code2, out2, _ = run_cli("plan", *args, "--explain", "--json")
    a, b = json.loads(out), json.loads(out2)
    assert a["algorithm"] == b["algorithm"] and a["candidates"] == b["candidates"]
    code, out, err = run_cli("explain", *args)
    assert code == 0 and "candidates" in out and "latency" in out


def test_json_on_models_bench_report_report_and_demo(run_cli, tmp_path):
    code, out, err = run_cli("models", "--json")
    kinds = json.loads(out)
    assert code == 0 and any(k["spec"].startswith("hockney:") for k in kinds) and all(k["spec"] for k in kinds)
    rows = []
    for v, t in (("hetcoll", 1e-4), ("native", 2e-4)):
        rows.append({"op": "bcast", "bytes": 1024, "variant": v, "algorithm": "binomial_tree" if v == "hetcoll"
                     else "native", "min_s": t, "median_s": t, "times_s": [t], "predicted_s": None})
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"tool": "hetcoll-bench", "created": "2026-11-26T00:00:00Z", "ranks": 3, "hosts": [],
                                "model": "x", "predictions": False, "procedure": "Fig. 2", "repeats": 1, "rows": rows}))
    code, out, err = run_cli("bench-report", str(path), "--json")
    assert code == 0, err
    d = json.loads(out)[0]
    assert d["ranks"] == 3 and d["median_speed"] == pytest.approx(2.0)
    assert d["results"][0]["hetcoll_s"] == pytest.approx(1e-4) and "hetcoll_us" not in d["results"][0]
    code, out, err = run_cli("demo", "--out", str(tmp_path / "demo"), "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == 0 and "lambda_tree.dot" in d["files"] and "lambda_tree" in d["text"]


def test_one_way_to_name_the_machine_and_errors_name_what_was_typed(run_cli, tmp_path):
    """-m, --model and --profile are one option everywhere that takes a
    machine; a file that is neither a profile nor a model is named as the
    user typed it, with what wrote it."""
    results = tmp_path / "bench.json"
    results.write_text(json.dumps({"tool": "hetcoll-bench 0.2.0", "model": "profile:/elsewhere/profile.json",
                                   "rows": []}))
    for cmd in (["plan", "bcast", "-n", "4"], ["predict", "bcast"], ["bound", "bcast", "-n", "4"],
                ["explain", "bcast", "-n", "4"]):
        for flag in ("-m", "--model", "--profile"):
            code, out, err = run_cli(*cmd, flag, str(results))
            assert code == 2 and str(results) in err and "hetcoll-bench" in err and "/elsewhere" not in err, (cmd, err)
    a = json.loads(run_cli("plan", "bcast", "-n", "8", "-m", "postal:lambda=2", "--json")[1])
    b = json.loads(run_cli("plan", "bcast", "-n", "8", "--profile", "postal:lambda=2", "--json")[1])
    assert a == b
    code, out, err = run_cli("whatif", "bcast", "-n", "4", "-a", "binomial_tree", "--json")
    assert code == 0 and {r["algorithm"] for r in json.loads(out)["rows"]} == {"binomial_tree"}, err


def test_ranks_and_np_are_one_option(run_cli):
    """--ranks, --np and -n name the ranks in every command (modelled or launched)."""
    outs = {run_cli("plan", "bcast", flag, "4", "-m", "postal:lambda=2", "--json")[1] for flag in ("--ranks", "--np", "-n")}
    assert len(outs) == 1
    for flag in ("--np", "--ranks", "-n"):
        code, out, err = run_cli("probe", flag, "3", "-o", "x.json", "--dry-run")
        assert code == 0 and " -n 3 " in out, err

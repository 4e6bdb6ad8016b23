"""Hostile input through the command line: profiles of the fuzz
corpus (tests/fuzz/make_corpus.py) are refused in one line naming the file,
or planned, in bounded time; every argument of bench, tune, probe and report
is checked before anything is launched — one line, exit 2, no mpirun — and a
user's mistake is never called a bug."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hetcoll

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "bench/results/netns/profile.json"
RESULTS = ROOT / "bench/results/netns/bench.json"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    subprocess.run([sys.executable, str(ROOT / "tests/fuzz/make_corpus.py"), str(out), "--quick"], check=True,
                   capture_output=True)
    entries = [line.split("\t") for line in (out / "index.txt").read_text().splitlines()]
    return out, [e for e in entries if e[0].startswith("profiles/")]


def _one_error_line(code, err, path_or_word):
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert "internal error" not in lines[0] and "a bug" not in lines[0], lines[0]
    assert path_or_word in lines[0], lines[0]


def test_corpus_profiles_through_the_cli(corpus, run_cli):
    # Every eighth profile of the corpus, and every file that is no profile:
    # 'profile show' and a plan at 16 ranks, each refused in one line that
    # names the file, or answered.
    out, entries = corpus
    chosen = [e for i, e in enumerate(entries) if i % 8 == 0 or e[0].startswith("profiles/file__")]
    assert len(chosen) > 40
    refused = answered = 0
    for name, what, _field in chosen:
        path = str(out / name)
        for args in (("profile", "show", path), ("plan", "allreduce", "-n", "16", "-b", "1M", "--elem-size", "8", "-m",
                                                  f"profile:{path}")):
            code, stdout, err = run_cli(*args)
            if code == 0:
                answered += 1
                assert stdout.strip(), name
            else:
                refused += 1
                _one_error_line(code, err, name.split("/")[-1])
    assert refused and answered


@pytest.mark.parametrize("args,says", [
    (["bench", "--np", "2", "--sizes", "0"], "--sizes"),
    (["bench", "--np", "2", "--sizes", "8G"], "--sizes"),
    (["bench", "--np", "2", "--sizes", "1G"], "a size from 8 B to 256 MiB"),
    (["bench", "--np", "2", "--sizes", "12"], "a multiple of 8 B"),  # refused, not rounded to 8
    (["bench", "--np", "2", "--sizes", "1x"], "unknown size suffix 'x'"),
    (["bench", "--np", "2", "--repeats", "5x"], "--repeats"),
    (["bench", "--np", "2", "--ops", "nope"], "'nope' is not one of"),
    (["bench", "--np", "2", "--algorithms", "nope"], "unknown algorithm 'nope'"),
    (["bench", "--np", "2", "--target-ms", "-1"], "--target-ms"),
    (["bench", "--np", "2", "--min", "1M", "--max", "1k"], "--min is above --max"),
    (["bench", "--np", "2", "-o", "/tmp"], "is a directory"),
    (["bench", "--np", "2", "-o", "/etc/hostname/x.json"], "cannot make its directory"),
    (["bench", "--np", "2", "--test-every", "10"], "--test-every applies to --overlap only"),
    (["bench", "--np", "2", "--overlap", "--test-every", "-5"], "--test-every"),
    (["probe", "--np", "2", "--large", "64G"], "--large"),
    (["probe", "--np", "2", "--large", "0"], "--large"),
    (["probe", "--np", "2", "-o", "/tmp"], "is a directory"),
])
def test_bench_and_probe_arguments_are_checked_before_launching(args, says, run_cli):
    if not (Path(hetcoll.__file__).parent / "bin" / ("hetcoll-" + args[0])).exists():
        pytest.skip("the MPI programs were not built (no MPI)")
    code, _, err = run_cli(*args)
    _one_error_line(code, err, says)
    assert "mpirun" not in err


@pytest.mark.parametrize("args,says", [
    (["--max", "0"], "--max"),
    (["--ops", "alltoallv"], "'alltoallv' is not one of"),
    (["--ops", "gatherv"], "'gatherv' is not one of bcast reduce allreduce gather scatter allgather allgatherv"),
    (["--sizes", "1G"], "a size from 8 B to 64 MiB"),
])
def test_tune_arguments_are_checked_before_launching(args, says, tmp_path, run_cli):
    if not (Path(hetcoll.__file__).parent / "bin" / "hetcoll-tune").exists():
        pytest.skip("the MPI programs were not built (no MPI)")
    profile = tmp_path / "p.json"
    shutil.copy(PROFILE, profile)
    code, _, err = run_cli("tune", str(profile), "--np", "2", *args)
    _one_error_line(code, err, says)


def test_tune_reads_its_profile_before_launching(tmp_path, run_cli):
    if not (Path(hetcoll.__file__).parent / "bin" / "hetcoll-tune").exists():
        pytest.skip("the MPI programs were not built (no MPI)")
    (tmp_path / "cut.json").write_text(PROFILE.read_text()[:3000])
    for profile, says in ((tmp_path, "not a regular file"), (tmp_path / "cut.json", "cut.json")):
        code, _, err = run_cli("tune", str(profile), "--np", "2")
        _one_error_line(code, err, says)


def test_report_refuses_bad_results_and_outputs(tmp_path, run_cli):
    rows = json.loads(RESULTS.read_text())
    text = json.dumps(rows)
    (tmp_path / "nan.json").write_text(text.replace('"median_s": ', '"median_s": NaN, "was": ', 1))
    rows["rows"][0]["median_s"] = 1e308
    (tmp_path / "huge.json").write_text(json.dumps(rows))
    (tmp_path / "file").write_text("")
    for args, says in ((["nan.json", str(PROFILE), "-o", "r1"], "NaN"),
                       (["huge.json", str(PROFILE), "-o", "r2"], "'median_s' = 1e+308"),
                       ([str(RESULTS), str(PROFILE), "-o", "file"], "a file is there")):
        code, _, err = run_cli("report", *args, cwd=tmp_path)
        _one_error_line(code, err, says)
        assert not (tmp_path / args[-1]).is_dir() or args[-1] == "file"


def test_a_broken_model_file_is_named(tmp_path, run_cli):
    (tmp_path / "cut.json").write_text('{"model": "hockney", "alpha": 1e-6')
    (tmp_path / "cut_profile.json").write_text(PROFILE.read_text()[:3000])
    for name in ("cut.json", "cut_profile.json"):
        code, _, err = run_cli("plan", "bcast", "-n", "4", "-m", str(tmp_path / name))
        _one_error_line(code, err, name)

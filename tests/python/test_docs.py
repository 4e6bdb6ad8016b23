"""The generated docs match the code: docs/algorithms.md is the registry,
docs/selection.md the planner's current choices."""
import json
import pathlib

from hetcoll import _core
from hetcoll.cli import algorithms_markdown
from hetcoll.crossovers import selection_markdown

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def test_algorithms_md_is_the_registry():
    assert (DOCS / "algorithms.md").read_text() == algorithms_markdown(_core.algorithms()), \
        "regenerate: hetcoll algorithms --markdown > docs/algorithms.md"


def test_every_algorithm_has_a_row():
    text = (DOCS / "algorithms.md").read_text()
    for a in _core.algorithms():
        assert f"| `{a['name']}` |" in text


HEADERS = DOCS.parent / "scripts" / "algorithm_headers.py"


def test_each_algorithm_files_cost_line_is_its_registered_cost(tmp_path):
    """An algorithm's cost is written once (a.cost); its file's opening block
    says it in a `// Cost:` line that scripts/algorithm_headers.py holds to it.
    A block edited by hand is named, and --write mends it."""
    import shutil
    import subprocess
    import sys

    def check(root, *args):
        p = subprocess.run([sys.executable, str(HEADERS), *args, str(root)], capture_output=True, text=True)
        return p.returncode, p.stdout

    code, out = check(DOCS.parent)
    assert code == 0, out
    shutil.copytree(DOCS.parent / "src" / "algorithms", tmp_path / "src" / "algorithms")
    ring = tmp_path / "src" / "algorithms" / "allgather" / "bucket_collect.cpp"
    text = ring.read_text()
    assert "// Cost: (p-1) alpha + (p-1)/p n beta\n" in text
    ring.write_text(text.replace("// Cost: (p-1) alpha + (p-1)/p n beta", "// Cost: (p-1)(alpha + n beta)"))
    code, out = check(tmp_path)
    assert code == 1 and "src/algorithms/allgather/bucket_collect.cpp: its opening block's Cost line" in out
    assert check(tmp_path, "--write")[0] == 0
    assert ring.read_text() == text and check(tmp_path)[0] == 0


def test_selection_md_is_current():
    assert (DOCS / "selection.md").read_text() == selection_markdown(), \
        "regenerate: python -m hetcoll.crossovers > docs/selection.md"


def test_the_settings_table_is_the_declaration():
    """The HETCOLL_* variables are declared once (src/config/settings.cpp,
    with kind, default and meaning); docs/mpi.md shows the table produced
    from it, and no page names a variable that is not declared."""
    import re

    text = (DOCS / "mpi.md").read_text()
    table = re.search(r"<!-- settings:[^\n]*-->\n(.*?)<!-- end settings -->", text, re.S)
    assert table, "docs/mpi.md: no settings table between its markers"
    assert table.group(1) == _core.settings_markdown(), "regenerate: hetcoll config --markdown (into docs/mpi.md)"
    settings = {s["name"] for s in _core.settings()}
    statuses = {"HETCOLL_SUCCESS", "HETCOLL_UNSUPPORTED", "HETCOLL_BAD_ARGUMENT", "HETCOLL_MPI_ERROR",
                "HETCOLL_INTERNAL_ERROR"}
    for path in [DOCS.parent / "README.md", *DOCS.glob("*.md")]:
        named = set(re.findall(r"(?<!-D)HETCOLL_[A-Z_]+", path.read_text())) - statuses  # not CMake options
        assert named <= settings, f"{path.name}: {named - settings}"


def test_config_says_every_problem_as_the_mpi_layer_does(run_cli, monkeypatch, tmp_path):
    """hetcoll config reads the settings through the MPI layer's own reading
    (src/plan/configuration.cpp): each value the runtime refuses is named."""
    bad_table = tmp_path / "t.json"
    bad_table.write_text("{")
    for name, value, said in [
            ("HETCOLL_PROFILE", "/nonexistent.json", "HETCOLL_PROFILE ignored (cannot read '/nonexistent.json')"),
            ("HETCOLL_ALGO", "bcast:@nope", "HETCOLL_ALGO ignored: override 'bcast:@nope': unknown algorithm 'nope'"),
            ("HETCOLL_HANG_TIMEOUT", "abc", "HETCOLL_HANG_TIMEOUT='abc' is not a number of seconds: using 120"),
            ("HETCOLL_HANG_TIMEOUT", "-1", "HETCOLL_HANG_TIMEOUT='-1' is not a number of seconds"),
            ("HETCOLL_DISABLE", "maybe", "HETCOLL_DISABLE='maybe' is not 1 or 0: ignored"),
            ("HETCOLL_DEBUG", "verbose", "HETCOLL_DEBUG='verbose' is not explain, 1 or 0: ignored"),
            ("HETCOLL_LEARN", "sometimes", "HETCOLL_LEARN='sometimes' is not 1, exact or 0: ignored (1 used)"),
            ("HETCOLL_TABLE", str(bad_table), "HETCOLL_TABLE ignored: "),
            ("HETCOLL_PROFIL", "x", "unknown variable HETCOLL_PROFIL ignored (did you mean HETCOLL_PROFILE?)")]:
        with monkeypatch.context() as m:
            m.setenv(name, value)
            code, out, err = run_cli("config")
            assert code == 0, err
            assert f"hetcoll: warning: {said}" in err, (name, value, err)
            code, out, _ = run_cli("config", "--json")
            assert any(p.startswith(said) for p in json.loads(out)["problems"]), (name, out)
    code, out, err = run_cli("config")
    assert code == 0 and "warning" not in err, err


def test_learn_is_on_by_default_and_takes_exact_and_a_flags_words(run_cli, monkeypatch):
    """HETCOLL_LEARN is a choice of 1 (the default), exact and 0; a flag's
    words name 1 and 0 (HETCOLL_LEARN=off must never mean 'exact', nor the default)."""
    for value, landed in [(None, "1"), ("", "1"), ("exact", "exact"), ("1", "1"), ("0", "0"),
                          ("on", "1"), ("TRUE", "1"), ("yes", "1"), ("off", "0"), ("False", "0"), ("no", "0")]:
        with monkeypatch.context() as m:
            if value is None:
                m.delenv("HETCOLL_LEARN", raising=False)
            else:
                m.setenv("HETCOLL_LEARN", value)
            code, out, err = run_cli("config", "--json")
            assert code == 0, err
            d = json.loads(out)
            learn = next(s for s in d["settings"] if s["name"] == "HETCOLL_LEARN")
            assert learn["read"] == landed, (value, learn)
            assert not d["problems"], (value, d["problems"])

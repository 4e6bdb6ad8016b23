"""The generated docs match the code: docs/algorithms.md is the registry,
docs/selection.md the planner's current choices."""
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


def test_selection_md_is_current():
    assert (DOCS / "selection.md").read_text() == selection_markdown(), \
        "regenerate: python -m hetcoll.crossovers > docs/selection.md"


def test_every_setting_is_documented_and_nothing_else():
    """The HETCOLL_* variables are declared once (src/config/settings.cpp); the
    README and docs/mpi.md describe exactly those, with their defaults."""
    import re

    settings = {s["name"]: s for s in _core.settings()}
    statuses = {"HETCOLL_SUCCESS", "HETCOLL_UNSUPPORTED", "HETCOLL_BAD_ARGUMENT", "HETCOLL_MPI_ERROR",
                "HETCOLL_INTERNAL_ERROR"}
    for path in (DOCS.parent / "README.md", DOCS / "mpi.md"):
        text = path.read_text()
        named = set(re.findall(r"(?<!-D)HETCOLL_[A-Z_]+", text)) - statuses  # not CMake options (-DHETCOLL_…)
        assert named == set(settings), f"{path.name}: {named ^ set(settings)}"
        for s in settings.values():
            assert f"`{s['name']}" in text
    readme = (DOCS.parent / "README.md").read_text()
    assert settings["HETCOLL_PROFILE"]["default"] in readme
    assert f"default {settings['HETCOLL_HANG_TIMEOUT']['default']}" in readme

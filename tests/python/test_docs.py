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

"""The layer check (scripts/check_layers.py) passes on the tree and fails, naming
the file, line and layers, on an include that runs back up."""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_layers.py"


def run(root):
    p = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    return p.returncode, p.stdout


def copy_tree(tmp_path):
    for part in ("src", "include"):
        shutil.copytree(ROOT / part, tmp_path / part)
    return tmp_path


def test_the_tree_holds():
    code, out = run(ROOT)
    assert code == 0, out
    assert "layers hold" in out


def test_an_include_from_a_lower_layer_to_a_higher_one_is_named(tmp_path):
    root = copy_tree(tmp_path)
    units = root / "src" / "model" / "units.cpp"
    text = units.read_text()
    units.write_text(text.replace('#include "model/units.hpp"', '#include "model/units.hpp"\n#include "plan/planner.hpp"', 1))
    code, out = run(root)
    assert code == 1
    line = next(i + 1 for i, l in enumerate(units.read_text().splitlines()) if "plan/planner.hpp" in l)
    assert f'src/model/units.cpp:{line}: model includes "plan/planner.hpp" of plan, a layer above it' in out
    assert "1 include(s) run against the layers" in out


def test_the_two_top_folders_may_not_include_each_other(tmp_path):
    root = copy_tree(tmp_path)
    probe = root / "src" / "measure" / "probe" / "main.cpp"
    probe.write_text('#include "bindings/core_module.cpp"\n' + probe.read_text())
    code, out = run(root)
    assert code == 1
    assert 'src/measure/probe/main.cpp:1: measure includes "bindings/core_module.cpp" of bindings, a layer beside it' in out


def test_a_folder_in_no_layer_and_an_include_from_nowhere_are_refused(tmp_path):
    root = copy_tree(tmp_path)
    (root / "src" / "extras").mkdir()
    (root / "src" / "extras" / "x.cpp").write_text("int x;\n")
    sim = root / "src" / "sim" / "simulator.cpp"
    sim.write_text('#include "nowhere.hpp"\n' + sim.read_text())
    code, out = run(root)
    assert code == 1
    assert "src/extras/: a folder no layer names" in out
    assert 'src/sim/simulator.cpp:1: includes "nowhere.hpp", which is in no layer' in out


def test_two_units_that_include_each_other_are_named(tmp_path):
    """plan/decision_table and plan/planner included each other until 2026-11-27; put it back."""
    root = copy_tree(tmp_path)
    table = root / "src" / "plan" / "decision_table.cpp"
    table.write_text('#include "plan/planner.hpp"\n' + table.read_text())
    code, out = run(root)
    assert code == 1
    assert "src/plan/decision_table and src/plan/planner include each other" in out


def test_an_include_back_up_the_call_path_is_named(tmp_path):
    """interpose/'s files are one path, lowest first: the engine included the call path until 2026-11-28."""
    root = copy_tree(tmp_path)
    engine = root / "src" / "interpose" / "engine.cpp"
    engine.write_text(engine.read_text().replace('#include "interpose/engine.hpp"\n',
                                                 '#include "interpose/engine.hpp"\n#include "interpose/call_path.hpp"\n', 1))
    (root / "src" / "interpose" / "stray.cpp").write_text("int stray;\n")
    code, out = run(root)
    assert code == 1
    assert 'src/interpose/engine.cpp:2: includes "interpose/call_path.hpp", a step after it' in out
    assert "src/interpose/stray.cpp: a file UNIT_ORDER['interpose'] does not place" in out


FUNCTIONS = ROOT / "scripts" / "check_functions.py"


def test_no_function_over_the_limit_and_a_long_one_is_named(tmp_path):
    p = subprocess.run([sys.executable, str(FUNCTIONS), str(ROOT)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout
    (tmp_path / "src" / "util").mkdir(parents=True)
    (tmp_path / "python").mkdir()
    body = "\n".join(f"  x += {i};" for i in range(160))
    (tmp_path / "src" / "util" / "long.cpp").write_text(f"int long_one(int x) {{\n{body}\n  return x;\n}}\n"
                                                        "int short_one(int x) { return x; }\n")
    (tmp_path / "python" / "m.py").write_text("def f():\n" + "".join(f"    a = {i}\n" for i in range(151)))
    p = subprocess.run([sys.executable, str(FUNCTIONS), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "src/util/long.cpp:1: long_one is 163 lines (at most 150)" in p.stdout
    assert "python/m.py:1: f is 152 lines (at most 150)" in p.stdout
    assert "short_one" not in p.stdout

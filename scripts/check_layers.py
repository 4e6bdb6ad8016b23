#!/usr/bin/env python3
"""The layers of src/, lowest first, and the check that no include runs back up.

A file may include files of its own layer and of the layers below it, never
of a layer above. The order is written here once; docs/architecture.md draws
it and this check holds the drawing to it.

    python3 scripts/check_layers.py [ROOT]     # exit 1 naming every wrong include

Inside a layer, no two units (a file's name without .hpp/.cpp) include each
other: a unit that needs another's functions includes it, never the
reverse. MUTUAL lists the pairs still to untangle (issue 40): it may only
shrink.

Each layer is a folder of src/; `measure` (the programs probe, tune, bench)
and `bindings` (the Python module) stand side by side at the top and may not
include each other. Of include/, the collectives' table is a fact every layer
may read; hetcoll.h is the C API the interpose layer implements.
"""
import pathlib
import re
import sys

# Lowest first. A tuple is one layer of folders that may not include each other.
LAYERS = [
    ("util",),
    ("config",),
    ("schedule",),
    ("model",),
    ("sim",),
    ("algorithms",),
    ("plan",),
    ("exec",),
    ("interpose",),
    ("measure", "bindings"),
]
# Files of include/ and the layer they belong to.
PUBLIC = {"hetcoll_collectives.def": "util", "hetcoll.h": "interpose"}

# Units of src/ that include each other, still to untangle: none (issue 40
# counted 5 pairs on 2026-11-26; the last three, in interpose/, untangled
# 2026-11-28). May only shrink.
MUTUAL: set = set()

# Inside a folder whose files make one path, their order, lowest first: a
# file includes only files before it. interpose/ is the call path of
# docs/architecture.md ("the call path"), each step a file.
UNIT_ORDER = {
    "interpose": ["tls", "errors", "call", "mpi_types", "runtime", "watchdog", "comm_state", "buffers", "engine",
                  "progress", "comm_setup", "compile", "learning", "call_path", "requests", "capi", "pmpi_collectives",
                  "pmpi_requests"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".c", ".def", ".inc")


def level_of(folder):
    for i, group in enumerate(LAYERS):
        if folder in group:
            return i
    return None


def layer_of(path, src, include):
    """(level, folder) of a file under src/ or include/, or None."""
    try:
        rel = path.relative_to(src)
        return level_of(rel.parts[0]), rel.parts[0]
    except ValueError:
        pass
    try:
        rel = path.relative_to(include)
    except ValueError:
        return None
    folder = PUBLIC.get(str(rel))
    return (level_of(folder), folder) if folder else None


def resolve(name, here, src, include):
    for base in (here.parent, src, include):
        p = (base / name).resolve()
        if p.is_file():
            return p
    return None


def check(root):
    root = pathlib.Path(root).resolve()
    src, include = root / "src", root / "include"
    problems = []
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        if level_of(folder.name) is None:
            problems.append(f"src/{folder.name}/: a folder no layer names (add it to LAYERS in scripts/check_layers.py)")
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        here = layer_of(path.resolve(), src, include)
        if here is None or here[0] is None:
            continue
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            where = f"{path.relative_to(root)}:{line}"
            target = resolve(m.group(1), path.resolve(), src, include)
            if target is None:
                problems.append(f'{where}: includes "{m.group(1)}", which is in no layer (not under src/ or include/)')
                continue
            there = layer_of(target, src, include)
            if there is None or there[0] is None:
                problems.append(f'{where}: includes "{m.group(1)}", which is in no layer')
            elif there[0] > here[0] or (there[0] == here[0] and there[1] != here[1]):
                problems.append(f'{where}: {here[1]} includes "{m.group(1)}" of {there[1]}, a layer '
                                f'{"above" if there[0] > here[0] else "beside"} it')
    return problems


def mutual_includes(root):
    """Pairs of units of one folder of src/ that include each other, sorted."""
    src = pathlib.Path(root).resolve() / "src"
    includes = {}
    for path in src.rglob("*"):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        unit = str(path.relative_to(src).with_suffix(""))
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            target = resolve(m.group(1), path.resolve(), src, src)
            if target is not None and src in target.parents:
                includes.setdefault(unit, set()).add(str(target.relative_to(src).with_suffix("")))
    # Across layers the layer check names the include that runs up.
    return sorted({tuple(sorted((a, b))) for a, targets in includes.items() for b in targets
                   if a != b and a.split("/")[0] == b.split("/")[0] and a in includes.get(b, ())})


def unit_order_problems(root):
    """Includes inside a folder of UNIT_ORDER that run up its order, and files it does not name."""
    src = pathlib.Path(root).resolve() / "src"
    problems = []
    for folder, order in UNIT_ORDER.items():
        rank = {u: i for i, u in enumerate(order)}
        for path in sorted((src / folder).glob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            unit = path.stem
            if unit not in rank:
                problems.append(f"src/{folder}/{path.name}: a file UNIT_ORDER['{folder}'] does not place "
                                "(scripts/check_layers.py)")
                continue
            text = path.read_text(errors="replace")
            for m in INCLUDE.finditer(text):
                name = m.group(1)
                if not name.startswith(folder + "/"):
                    continue
                there = pathlib.PurePath(name).stem
                if there in rank and rank[there] > rank[unit]:
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f'src/{folder}/{path.name}:{line}: includes "{name}", a step after it '
                                    f"(the order: {' < '.join(order)})")
    return problems


def drawn_order(root):
    """The order docs/architecture.md shows, if it has the page."""
    doc = pathlib.Path(root) / "docs" / "architecture.md"
    if not doc.is_file():
        return None
    m = re.search(r"<!-- layers:[^\n]*-->\n`([^`]+)`", doc.read_text())
    return m.group(1) if m else ""


def order_line():
    return " → ".join(" | ".join(g) for g in LAYERS)


def main(argv):
    root = argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    problems = check(root)
    for a, b in mutual_includes(root):
        if (a, b) not in MUTUAL:
            problems.append(f"src/{a} and src/{b} include each other: one of them only should need the other")
    problems += unit_order_problems(root)
    drawn = drawn_order(root)
    if drawn is not None and drawn != order_line():
        problems.append(f"docs/architecture.md shows the layers as `{drawn}`; they are `{order_line()}`")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) run against the layers "
              f"(lowest first: {' < '.join('/'.join(g) for g in LAYERS)})")
        return 1
    print(f"layers hold: {' < '.join('/'.join(g) for g in LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

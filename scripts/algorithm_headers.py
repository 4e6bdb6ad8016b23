#!/usr/bin/env python3
"""An algorithm's cost is written once, in its row of the description table
(`ALGORITHM(x, …, cost, source)` in src/algorithms/all.def): the `// Cost:`
line of the opening block of the file that defines `Algorithm x_algorithm()`
is that text, and this script holds the two together.

    python scripts/algorithm_headers.py           # check: exit 1 naming every file out of step
    python scripts/algorithm_headers.py --write   # rewrite the blocks' Cost lines from the registry

A file registering several algorithms of different costs gets one
`// Cost of NAME:` line each. The Cost lines stand where the block had its
cost (a line starting `// Cost`, and the lines indented under it), else at the
block's end; a long cost continues on lines indented by three spaces.
Needs the built module (hetcoll._core): the registry is the one place.
"""
import pathlib
import re
import sys

WIDTH = 117  # a line's text after "// ": within the code's 120 columns
CONTINUED = "//   "


def registry():
    from hetcoll import _core

    return {a["name"]: a["cost"] for a in _core.algorithms()}


def files_of(root, names):
    """{file: [names registered there, in order]}."""
    out = {}
    for path in sorted((root / "src" / "algorithms").rglob("*.cpp")):
        text = path.read_text()
        for m in re.finditer(r"^Algorithm (\w+)_algorithm\(\) \{", text, re.M):
            if m.group(1) in names:
                out.setdefault(path, []).append(m.group(1))
    return out


def wrapped(head, cost):
    """'// HEAD cost', continued on lines of CONTINUED within the width."""
    lines, line = [], "// " + head
    for word in cost.split(" "):
        if len(line) + 1 + len(word) > WIDTH + 3 and line != CONTINUED:
            lines.append(line)
            line = CONTINUED + word
        else:
            line = line + word if line == CONTINUED else f"{line} {word}"
    return lines + [line]


def cost_lines(names, costs):
    distinct = {costs[n] for n in names}
    if len(distinct) == 1:
        return wrapped("Cost:", costs[names[0]])
    return [line for n in names for line in wrapped(f"Cost of {n}:", costs[n])]


def rewritten(text, names, costs):
    """The file's text with its opening block's Cost lines from the registry."""
    lines = text.split("\n")
    end = 0
    while end < len(lines) and lines[end].startswith("//"):
        end += 1
    block, rest = lines[:end], lines[end:]
    kept, at, i = [], None, 0
    while i < len(block):
        if block[i].startswith("// Cost"):
            at = len(kept) if at is None else at
            i += 1
            while i < len(block) and block[i].startswith(CONTINUED) and not block[i].startswith("// " + "Cost"):
                i += 1
            continue
        kept.append(block[i])
        i += 1
    new = cost_lines(names, costs)
    if at is None:
        at = len(kept)
    return "\n".join(kept[:at] + new + kept[at:] + rest)


def main(argv):
    write = "--write" in argv
    args = [a for a in argv[1:] if a != "--write"]
    root = pathlib.Path(args[0]) if args else pathlib.Path(__file__).resolve().parent.parent
    costs = registry()
    found = files_of(root, costs)
    missing = sorted(set(costs) - {n for names in found.values() for n in names})
    problems = [f"{n}: no file of src/algorithms/ registers it (Algorithm {n}_algorithm())" for n in missing]
    for path, names in found.items():
        text = path.read_text()
        new = rewritten(text, names, costs)
        if new == text:
            continue
        if write:
            path.write_text(new)
            print(f"wrote {path.relative_to(root)}")
        else:
            problems.append(f"{path.relative_to(root)}: its opening block's Cost line is not its registered cost "
                            f"({', '.join(names)}): python scripts/algorithm_headers.py --write")
    for p in problems:
        print(p)
    return 1 if problems and not write else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

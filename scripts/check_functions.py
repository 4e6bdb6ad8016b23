#!/usr/bin/env python3
"""No hand-written function of src/ and python/ longer than LIMIT lines.

    python3 scripts/check_functions.py [ROOT] [--list N]   # exit 1 naming every one over the limit

C++ functions are found by their braces: a line at namespace level that
opens a body after a parameter list, to the brace that closes it (lambdas
and nested blocks count toward their function). Python functions by the
ast module. Exempt, and why:
  - src/bindings/core_module.cpp NB_MODULE: the binding declarations, one
    m.def after another (a table, not logic).
Still to cut (KNOWN): a function over the limit that may not grow, each
with the length it had when the limit was set; cutting it removes it here.
--list N prints the N longest with their lengths.
"""
import ast
import pathlib
import re
import sys

LIMIT = 150
EXEMPT = {("src/bindings/core_module.cpp", "NB_MODULE")}
KNOWN: dict = {}

# A line that may begin a function definition: ends a parameter list
# (possibly `const`, `override`, a trailing return type) and opens a body.
OPENS = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>,\s*&]+)?\s*\{\s*$")
NAME = re.compile(r"([A-Za-z_][\w:~]*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "static_assert"}


def strip(line):
    """The line without string literals and // comments (braces inside them do not count)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def cpp_functions(path):
    lines = path.read_text(errors="replace").split("\n")
    out = []
    depth = 0          # braces open before this line
    scope = []         # per open brace: "ns" (namespace, class, extern) or "fn"
    fn_start = None
    fn_name = None
    pending = []       # lines of a declaration spread over several lines
    for i, raw in enumerate(lines):
        line = strip(raw)
        in_fn = "fn" in scope
        if not in_fn:
            pending.append(line)
            head = " ".join(pending[-6:])
        for ch in line:
            if ch == "{":
                if "fn" in scope:
                    scope.append("blk")
                else:
                    text = " ".join(pending[-6:])
                    is_fn = bool(OPENS.search(text.rstrip())) and not re.search(r"\b(namespace|class|struct|enum|union)\b[^(]*\{\s*$", text)
                    m = [n for n in NAME.findall(text.split("{")[0]) if n.split("::")[-1] not in KEYWORDS]
                    if is_fn and m:
                        scope.append("fn")
                        fn_start, fn_name = i, m[-1] if not text.lstrip().startswith("NB_MODULE") else "NB_MODULE"
                    else:
                        scope.append("ns")
                    pending = []
            elif ch == "}":
                if not scope:
                    continue
                kind = scope.pop()
                if kind == "fn":
                    out.append((fn_name, fn_start + 1, i - fn_start + 1))
                    fn_start = None
        if line.strip().endswith(";") and "fn" not in scope:
            pending = []
    return out


def py_functions(path):
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, node.lineno, node.end_lineno - node.lineno + 1))
    return out


def functions(root):
    root = pathlib.Path(root)
    for path in sorted((root / "src").rglob("*")):
        if path.suffix in (".cpp", ".hpp", ".h") and path.is_file():
            for name, line, n in cpp_functions(path):
                yield str(path.relative_to(root)), name, line, n
    for path in sorted((root / "python").rglob("*.py")):
        for name, line, n in py_functions(path):
            yield str(path.relative_to(root)), name, line, n


def main(argv):
    listing = int(argv[argv.index("--list") + 1]) if "--list" in argv else 0
    args = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("--") and argv[k - 1] != "--list"]
    root = args[0] if args else pathlib.Path(__file__).resolve().parent.parent
    found = sorted(functions(root), key=lambda f: -f[3])
    if listing:
        for path, name, line, n in found[:listing]:
            print(f"{n:5d}  {path}:{line} {name}{'  (exempt)' if (path, name.split('::')[-1]) in EXEMPT else ''}")
        return 0
    over = [f for f in found if f[3] > LIMIT and (f[0], f[1].split("::")[-1]) not in EXEMPT]
    bad = []
    for path, name, line, n in over:
        known = KNOWN.get((path, name.split("::")[-1]))
        if known is not None and n <= known:
            print(f"{path}:{line}: {name} is {n} lines: still to cut (may not grow past {known})")
            continue
        bad.append(f"{path}:{line}: {name} is {n} lines (at most {LIMIT}): cut it into one function per phase")
    for b in bad:
        print(b)
    if bad:
        return 1
    rest = [f for f in found if (f[0], f[1].split("::")[-1]) not in EXEMPT and (f[0], f[1].split("::")[-1]) not in KNOWN]
    print(f"every {'other ' if KNOWN else ''}hand-written function of src/ and python/ is at most {LIMIT} lines "
          f"(longest: {rest[0][3] if rest else 0}; {len(found)} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# Do two versions decide alike? Builds hetcoll_core of REV (default: HEAD) in
# a temporary worktree and of the working tree, links scripts/decision_dump.cpp
# against each, and compares every decision (algorithm, predicted time,
# runner-up) over its matrix. Exit 0 when identical; else counts what
# differs (the algorithm chosen, its prediction, the runner-up) and prints
# the diff's start.
#   bash scripts/compare_decisions.sh [REV]     (COMPARE_KEEP=DIR keeps the dumps)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rev="${1:-HEAD}"
tmp="$(mktemp -d)"
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/old" "$rev"
for side in old new; do
  src="$tmp/old"; [[ $side == new ]] && src="$PWD"
  cmake -S "$src" -B "$tmp/build-$side" -G Ninja -DHETCOLL_MPI=OFF -DHETCOLL_PYTHON=OFF >/dev/null
  ninja -C "$tmp/build-$side" hetcoll_core >/dev/null
  g++ -O2 -std=c++17 -I "$src/src" -I "$src/include" scripts/decision_dump.cpp "$tmp/build-$side/libhetcoll_core.a" \
    -o "$tmp/dump-$side" -lpthread
  "$tmp/dump-$side" > "$tmp/$side.txt"
done
n=$(grep -c '^  \[' "$tmp/new.txt" || true)
# COMPARE_KEEP=DIR keeps both dumps (old.txt, new.txt) there.
if [[ -n "${COMPARE_KEEP:-}" ]]; then mkdir -p "$COMPARE_KEEP" && cp "$tmp/old.txt" "$tmp/new.txt" "$COMPARE_KEEP/"; fi
if diff "$tmp/old.txt" "$tmp/new.txt" > "$tmp/diff.txt"; then
  echo "compare_decisions: $n decisions, identical to $rev"
else
  echo "compare_decisions: $(grep -c '^>' "$tmp/diff.txt") of $n decisions differ from $rev:"
  # Which differ in the algorithm chosen, which in its prediction only, which in the runner-up only.
  python3 - "$tmp/old.txt" "$tmp/new.txt" <<'PY'
import sys
def read(path):
    model, out = "", {}
    for line in open(path):
        if not line.startswith("  ["):
            model = line.strip()
            continue
        key, rest = line.split("]", 1)
        choice = rest.split("|")[0].split()
        out[(model, key)] = (choice[0], float(choice[1]) if len(choice) > 1 else 0.0, rest)
    return out
old, new = read(sys.argv[1]), read(sys.argv[2])
alg = [k for k in old if k in new and old[k][0] != new[k][0]]
pred = [k for k in old if k in new and old[k][0] == new[k][0] and abs(old[k][1] - new[k][1]) > 1e-9 * abs(old[k][1])]
rest = [k for k in old if k in new and old[k][0] == new[k][0] and k not in pred and old[k][2] != new[k][2]]
print(f"  algorithm chosen: {len(alg)}; same algorithm, prediction moved: {len(pred)}; runner-up only: {len(rest)}")
for k in alg[:20]:
    print(f"  {k[0]} {k[1]}]: {old[k][0]} {old[k][1]:.6g} -> {new[k][0]} {new[k][1]:.6g}")
PY
  head -40 "$tmp/diff.txt"
  exit 1
fi

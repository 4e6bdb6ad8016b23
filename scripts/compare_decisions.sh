#!/usr/bin/env bash
# Do two versions decide alike? Builds hetcoll_core of REV (default: HEAD) in
# a temporary worktree and of the working tree, links bench/decision_dump.cpp
# against each, and compares every decision (algorithm, predicted time,
# runner-up) over its matrix. Exit 0 when identical; else prints the diff.
#   bash scripts/compare_decisions.sh [REV]
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
  g++ -O2 -std=c++17 -I "$src/src" -I "$src/include" bench/decision_dump.cpp "$tmp/build-$side/libhetcoll_core.a" \
    -o "$tmp/dump-$side" -lpthread
  "$tmp/dump-$side" > "$tmp/$side.txt"
done
n=$(grep -c '^  \[' "$tmp/new.txt" || true)
if diff "$tmp/old.txt" "$tmp/new.txt" > "$tmp/diff.txt"; then
  echo "compare_decisions: $n decisions, identical to $rev"
else
  echo "compare_decisions: $(grep -c '^>' "$tmp/diff.txt") of $n decisions differ from $rev:"
  head -40 "$tmp/diff.txt"
  exit 1
fi

#!/usr/bin/env bash
# All tests: set up everything on a new machine, then the C++ tests (ctest)
# and the Python tests (pytest).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
echo "== C++ tests (ctest)"
ctest --test-dir build/py --output-on-failure
echo "== Python tests (pytest)"
.venv/bin/python -m pytest -q tests/python

#!/usr/bin/env bash
# Shared set-up for the README's two commands (sourced by demo.sh and
# test.sh): system packages (apt-get, when root and something is missing),
# a virtual environment in .venv, and the build (C++ core, MPI libraries,
# tests, benchmarks, Python extension) in build/py. Safe to run again: it only does
# what is missing, and the build is incremental.
set -euo pipefail
HETCOLL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$HETCOLL_ROOT"

# Debian packages: compiler and build tools, GoogleTest, Graphviz (tree
# renderings), Python's venv module, Open MPI (the MPI layer and its tests;
# the default MPI), MPICH and SimGrid (the same tests against them:
# scripts/build_mpich.sh, scripts/build_smpi.sh), nlohmann/json (profiles),
# iproute2 (the emulated cluster: testbed/netns), Chromium (the report
# page rendered headless in the tests), pkg-config (the installed library's
# test) and Slurm with munge (a one-node Slurm the tests start and stop).
need_pkgs=(g++ cmake ninja-build libgtest-dev graphviz python3-venv python3-dev openmpi-bin libopenmpi-dev
           mpich libmpich-dev libsimgrid-dev nlohmann-json3-dev iproute2 chromium pkg-config
           munge slurmctld slurmd slurm-client)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${need_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]} (install them, or run as root)" >&2
    exit 1
  fi
fi

PYTHON="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
# Build requirements and test/plot dependencies from PyPI (mpi4py: the
# Python API's test of an mpi4py program under the library; pytest-xdist:
# the Python tests on both cores).
if ! .venv/bin/python -c "import nanobind, scikit_build_core, pytest, xdist, matplotlib, numpy, jsonschema, mpi4py" 2>/dev/null; then
  echo "setup: installing Python packages"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.9" pytest pytest-xdist matplotlib numpy jsonschema mpi4py
fi

echo "setup: building (cmake + ninja via pip, build dir build/py)"
.venv/bin/python -m pip install -q --no-build-isolation \
  -Cbuild-dir=build/py \
  -Ccmake.define.HETCOLL_TESTS=ON \
  -Ccmake.define.HETCOLL_BENCH=ON \
  .

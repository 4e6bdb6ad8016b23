#!/usr/bin/env bash
# Builds hetcoll's MPI layer, the MPI tests and the MPI benchmark for
# SimGrid SMPI in build/smpi (cmake -DHETCOLL_SMPI=ON). Run them with
# testbed/smpi/run, or all the tests with: ctest --test-dir build/smpi
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v smpirun >/dev/null || [[ ! -f /usr/include/smpi/mpi.h ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "build_smpi: installing SimGrid"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq libsimgrid-dev >/dev/null
  else
    echo "build_smpi: SimGrid is missing (apt-get install libsimgrid-dev)" >&2
    exit 1
  fi
fi
# The core (no MPI) from the main build, brought up to date: compiled once for every MPI.
core=()
if [[ -f build/py/build.ninja ]] && cmake --build build/py --target hetcoll_core >/dev/null; then
  core=(-DHETCOLL_CORE_LIBRARY="$PWD/build/py/libhetcoll_core.a")
fi
cmake -S . -B build/smpi -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETCOLL_SMPI=ON -DHETCOLL_TESTS=ON \
  -DHETCOLL_BENCH=ON -DHETCOLL_PYTHON=OFF "${core[@]}" >/dev/null
cmake --build build/smpi

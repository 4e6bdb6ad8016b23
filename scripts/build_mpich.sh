#!/usr/bin/env bash
# Builds hetcoll's MPI layer and the MPI tests against MPICH (Debian's
# libmpich-dev, next to the default Open MPI) in build/mpich. Run the tests
# with: ctest --test-dir build/mpich. (The libraries for the other MPI come from
# the main build: HETCOLL_SECOND_MPI=OFF here.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v mpicc.mpich >/dev/null || ! command -v mpiexec.mpich >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "build_mpich: installing MPICH"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq mpich libmpich-dev >/dev/null
  else
    echo "build_mpich: MPICH is missing (apt-get install mpich libmpich-dev)" >&2
    exit 1
  fi
fi
# The core (no MPI) from the main build, brought up to date: compiled once for every MPI.
core=()
if [[ -f build/py/build.ninja ]] && cmake --build build/py --target hetcoll_core >/dev/null; then
  core=(-DHETCOLL_CORE_LIBRARY="$PWD/build/py/libhetcoll_core.a")
fi
cmake -S . -B build/mpich -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETCOLL_TESTS=ON -DHETCOLL_CORE_TESTS=OFF \
  -DHETCOLL_BENCH=OFF -DHETCOLL_PYTHON=OFF "${core[@]}" -DHETCOLL_SECOND_MPI=OFF -DMPI_C_COMPILER="$(command -v mpicc.mpich)" \
  -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" >/dev/null
cmake --build build/mpich

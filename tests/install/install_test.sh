#!/usr/bin/env bash
# hetcoll installed as a library, and as a Python package, used from outside
# its tree (run by scripts/test.sh after the MPICH build):
#   1. pip: the wheel of build/py installed into a new virtual environment
#      gives a working `hetcoll` (version, lib for each MPI, a probe run, a
#      program under LD_PRELOAD);
#   2. the wheel's prefix ($(hetcoll lib prefix)): examples/consumer built
#      with find_package(hetcoll) and with pkg-config, against Open MPI;
#   3. `cmake --install build/mpich --prefix P`: the usual layout (lib/,
#      include/, bin/, lib/pkgconfig, lib/cmake/hetcoll), and the same
#      example built both ways against MPICH.
# Each program runs on 3 ranks and checks its own results.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
work="$(mktemp -d /tmp/hetcoll-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompirun=(mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
fail() { echo "install_test: FAILED: $*" >&2; exit 1; }
step() { echo "-- install_test: $*"; }

step "1. the wheel (build/py) into a new virtual environment"
.venv/bin/python -m pip wheel -q --no-build-isolation --no-deps -Cbuild-dir=build/py \
  -Ccmake.define.HETCOLL_TESTS=ON -Ccmake.define.HETCOLL_BENCH=ON -w "$work/wheel" . >/dev/null
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index "$work"/wheel/hetcoll-*.whl
hc="$work/venv/bin/hetcoll"
"$hc" --version | grep -q "hetcoll" || fail "hetcoll --version"
lib="$("$hc" lib)"
[[ -f "$lib" && "$lib" == "$work/venv/"* ]] || fail "hetcoll lib: '$lib' is not in the new environment"
mpis="$("$hc" lib --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["mpis"]))')"
echo "   libraries for: $mpis"
for m in $mpis; do [[ -f "$("$hc" lib --mpi "$m")" ]] || fail "hetcoll lib --mpi $m"; done
(cd "$work" && "$hc" probe --np 2 -o "$work/probe.json" >/dev/null) || fail "hetcoll probe from the new environment"
"$hc" profile show "$work/probe.json" | grep -q "hosts" || fail "hetcoll profile show"
mpicc -o "$work/plain" tests/mpi/plain_mpi_app.c
"${ompirun[@]}" -n 3 -x LD_PRELOAD="$lib" "$work/plain" >/dev/null || fail "a plain MPI program under LD_PRELOAD=\$(hetcoll lib)"

run_examples() {  # DIR LAUNCHER... : runs the two example programs built in DIR
  local dir=$1; shift
  for p in capi_example pmpi_example; do
    out="$("$@" -n 3 "$dir/$p")" || fail "$dir/$p: $out"
    echo "   $out"
  done
}

step "2. find_package(hetcoll) and pkg-config on the wheel's prefix (Open MPI)"
prefix="$("$hc" lib prefix)"
cmake -S examples/consumer -B "$work/cmake-ompi" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_C_COMPILER="$(command -v mpicc.openmpi || command -v mpicc)" >/dev/null
cmake --build "$work/cmake-ompi" >/dev/null
run_examples "$work/cmake-ompi" "${ompirun[@]}"
cp -r examples/consumer "$work/pc-ompi"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -s -C "$work/pc-ompi" MPICC="$(command -v mpicc.openmpi || command -v mpicc)"
run_examples "$work/pc-ompi" "${ompirun[@]}"

if [[ -d build/mpich ]] && command -v mpicc.mpich >/dev/null; then
  step "3. cmake --install build/mpich, the usual layout (MPICH)"
  P="$work/prefix"
  cmake --install build/mpich --prefix "$P" >/dev/null
  for f in lib/libhetcoll.so lib/libhetcoll_mpi.so include/hetcoll.h include/hetcoll_collectives.def \
           lib/pkgconfig/hetcoll.pc lib/pkgconfig/hetcoll_mpi.pc lib/cmake/hetcoll/hetcollConfig.cmake \
           lib/cmake/hetcoll/hetcollConfigVersion.cmake lib/cmake/hetcoll/hetcollTargets.cmake \
           lib/hetcoll/mpis.json bin/hetcoll-probe; do
    [[ -e "$P/$f" ]] || fail "cmake --install: $f missing"
  done
  [[ "$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --variable=mpi hetcoll)" == mpich ]] || fail "hetcoll.pc: mpi"
  cmake -S examples/consumer -B "$work/cmake-mpich" -G Ninja -DCMAKE_PREFIX_PATH="$P" \
    -DMPI_C_COMPILER="$(command -v mpicc.mpich)" -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" >/dev/null
  cmake --build "$work/cmake-mpich" >/dev/null
  run_examples "$work/cmake-mpich" mpiexec.mpich
  cp -r examples/consumer "$work/pc-mpich"
  PKG_CONFIG_PATH="$P/lib/pkgconfig" make -s -C "$work/pc-mpich" MPICC=mpicc.mpich
  run_examples "$work/pc-mpich" mpiexec.mpich
  # The tree moved elsewhere still resolves (relative .pc paths, CMake's own).
  mv "$P" "$work/moved"
  rm -rf "$work/pc-moved" && cp -r examples/consumer "$work/pc-moved"
  PKG_CONFIG_PATH="$work/moved/lib/pkgconfig" make -s -C "$work/pc-moved" MPICC=mpicc.mpich
  run_examples "$work/pc-moved" mpiexec.mpich
else
  echo "-- install_test: 3. SKIPPED: no build/mpich (scripts/build_mpich.sh) or no mpicc.mpich"
fi
echo "install_test: passed"

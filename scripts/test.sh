#!/usr/bin/env bash
# All tests: set up everything on a new machine, then
#   1. the C++ tests and the MPI tests against Open MPI (ctest, build/py),
#   2. the Python tests (pytest),
#   3. the MPI tests against MPICH (build/mpich),
#   3b. hetcoll installed: the wheel into a new virtual environment,
#      examples/consumer built with find_package and pkg-config against the
#      wheel (Open MPI) and against `cmake --install build/mpich` (MPICH);
#      hetcoll export's files run under Open MPI and MPICH, followed,
#   3c. a one-node Slurm started and stopped by tests/slurm/slurm_test.sh:
#      probe, tune and bench inside an allocation (srun chosen by itself),
#   4. the MPI tests in SimGrid, one rank per simulated host (build/smpi),
#   5. the emulated cluster end to end at small size (tests/netns: 4 hosts
#      in 2 subnets; skipped, saying why, without root or namespaces).
# TEST_MPIS="openmpi" (or any of openmpi mpich install slurm smpi netns) runs fewer.
set -euo pipefail
SECONDS=0
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
mpis="${TEST_MPIS:-openmpi mpich install slurm smpi netns}"
# Each section says when it starts (seconds since the set-up began): where CI's time goes.
say() { echo "== $* (at ${SECONDS} s)"; }
if [[ " $mpis " == *" openmpi "* ]]; then
  say "C++ and MPI tests, Open MPI (ctest, build/py)"
  ctest --test-dir build/py --output-on-failure -j2  # core tests beside MPI tests (which mostly wait)
  say "Python tests (pytest)"
  .venv/bin/python -m pytest -q -n 2 tests/python  # two workers: the tests are independent
fi
if [[ " $mpis " == *" mpich "* ]]; then
  say "MPI tests, MPICH (build/mpich)"
  bash scripts/build_mpich.sh
  ctest --test-dir build/mpich --output-on-failure
fi
if [[ " $mpis " == *" install "* ]]; then
  say "Installed: a new virtual environment, find_package(hetcoll), pkg-config (tests/install)"
  bash tests/install/install_test.sh
  say "hetcoll export: Open MPI and MPICH follow the files (tests/export)"
  bash tests/export/export_test.sh
fi
if [[ " $mpis " == *" slurm "* ]]; then
  say "Slurm: probe, tune, bench in an allocation of a one-node Slurm (tests/slurm; SKIPPED where it cannot start)"
  bash tests/slurm/slurm_test.sh
fi
if [[ " $mpis " == *" smpi "* ]]; then
  say "MPI tests, SimGrid SMPI (build/smpi)"
  bash scripts/build_smpi.sh
  ctest --test-dir build/smpi --output-on-failure -j2
fi
if [[ " $mpis " == *" netns "* ]]; then
  say "The emulated cluster, small (tests/netns/small_cluster.sh)"
  bash tests/netns/small_cluster.sh
fi
echo "== all tests passed in ${SECONDS} s"

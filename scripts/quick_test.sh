#!/usr/bin/env bash
# A quick test (about 2 minutes once built): set-up as for the two commands,
# then the unit tests of every layer, the layer check, one MPI run of every
# collective on 3 ranks (Open MPI), the LD_PRELOAD path into an unmodified
# program, and the command line's own tests. scripts/test.sh runs all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build/py --output-on-failure -R '^(config|model|schedule|algorithms|sim|plan|exec|layers|mpi_collectives_np3|mpi_ld_preload)$'
.venv/bin/python -m pytest -q tests/python/test_cli.py tests/python/test_docs.py tests/python/test_layers.py

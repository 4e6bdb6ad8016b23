#!/usr/bin/env bash
# The main job: set up everything on a new machine, then run the demo.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
.venv/bin/hetcoll demo "$@"

import os
import subprocess
import sys

import pytest


@pytest.fixture
def run_cli():
    """Runs `python -m hetcoll ARGS` and returns (exit code, stdout, stderr)."""

    def run(*args, cwd=None):
        proc = subprocess.run([sys.executable, "-m", "hetcoll", *args], capture_output=True, text=True, cwd=cwd,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        return proc.returncode, proc.stdout, proc.stderr

    return run

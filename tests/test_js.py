"""The tests of our scripts under Node's test runner (tests/js/): match.js against
generator/search/engine.py on the same cases, try.js. Run from here so that they run beside
the Python tests on the other core (12 s, most of it parity.py writing the real index)."""

import os
import subprocess
import sys

from tests.conftest import REPO


def test_node_test_runner_passes_tests_js():
    done = subprocess.run(
        ["node", "--test", "tests/js/"],
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout

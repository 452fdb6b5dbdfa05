"""The tests of our scripts under Node's test runner (tests/js/): match.js against
generator/search/engine.py on the same cases, try.js. Run from here so that they run beside
the Python tests on the other core. The parity on the real content (6 s of parity.py writing
its index and answering its pastes) is slow: make test-fast checks it on the fixtures alone."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _node_tests(fixtures_only: bool) -> str:
    only = "1" if fixtures_only else "0"
    env = {**os.environ, "PYTHON": sys.executable, "ERRORKB_PARITY_FIXTURES_ONLY": only}
    done = subprocess.run(
        ["node", "--test", "tests/js/"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
    return done.stdout


@pytest.mark.slow
def test_node_test_runner_passes_tests_js_on_the_fixtures():
    assert "# skipped 1" in _node_tests(fixtures_only=True)  # the real content's parity


@pytest.mark.slow
def test_node_test_runner_passes_tests_js_on_the_real_content_too():
    assert "# skipped 0" in _node_tests(fixtures_only=False)

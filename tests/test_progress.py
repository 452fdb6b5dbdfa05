"""Progress: a bar redrawn in place on a terminal (at most ten times a second, with counts
and time left), nothing but the logged lines elsewhere or in CI."""

import io
import os
import pty
import subprocess
import sys

import pytest

from errorkb.progress import Progress
from tests.conftest import REPO


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run(stream, env=None) -> Progress:
    """A stage of 100 steps over 2 s, then the summary."""
    clock = Clock()
    progress = Progress(stream, env={} if env is None else env, clock=clock)
    progress.stage("rendering", 100)
    for step in range(1, 101):
        clock.now = step * 0.02
        progress.advance()
    progress.log("built 100 records")
    return progress


def test_a_terminal_gets_a_bar_redrawn_in_place_at_most_ten_times_a_second():
    stream = Terminal()
    run(stream)
    text = stream.getvalue()
    draws = text.split("\r")[1:]
    assert 10 <= len([d for d in draws if "[" in d]) <= 21  # the first, then ten a second
    assert "rendering [" in text and "/100" in text
    assert any("ETA" in draw for draw in draws)
    assert text.endswith("\r\x1b[Kbuilt 100 records\n")  # the bar gives way to the summary


def test_the_bar_says_counts_percent_and_time_left():
    clock = Clock()
    progress = Progress(Terminal(), env={}, clock=clock)
    progress.stage("keying records", 32470)
    clock.now = 30.0
    progress.advance(8000)
    assert progress.line() == (
        "keying records [#####-------------------] 8,000/32,470 24% ETA 1m32s"
    )
    progress.stage("full-text index")
    clock.now = 42.0
    assert progress.line() == "full-text index: 0 in 12s"


def test_a_log_or_ci_gets_only_the_lines_logged():
    for stream, env in ((io.StringIO(), {}), (Terminal(), {"CI": "1"})):
        run(stream, env)
        assert stream.getvalue() == "built 100 records\n"


@pytest.mark.slow
def test_errorkb_build_draws_a_bar_on_a_terminal_and_one_line_in_a_log(kb):
    command = [sys.executable, "-m", "errorkb", "--root", str(kb), "build"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CI", None)
    logged = subprocess.run(command, env=env, stderr=subprocess.PIPE, text=True, check=True)
    assert len(logged.stderr.splitlines()) == 1 and logged.stderr.startswith("built 4 records")

    page = kb / "templates" / "error.html"  # changed: the full build, whose stages it shows
    page.write_text(page.read_text() + "\n")
    leader, follower = pty.openpty()
    subprocess.run(command, env=env, stderr=follower, check=True)
    os.close(follower)
    shown = os.read(leader, 1 << 16).decode()
    os.close(leader)
    assert "\rkeying records [" in shown and "/4 " in shown
    assert "\r\x1b[Kbuilt 4 records" in shown

"""Linear time on every paste: a long line of one hostile shape (a run of one character, a
short unit repeated) is answered about as fast as a line of words of the same size, by the
engine (errorkb match), by match.js under node and by the issue bot. A rule that rescans the
line from each position took 20 s on 32 KB of spaces; the bound, max(1 s, 5x the line of
words measured in the same run), holds on a slow machine and fails such a rule at once."""

import contextlib
import json
import re
import signal
import subprocess
import time
from collections.abc import Callable

import pytest

from errorkb import urls
from errorkb.content.load import load_content
from errorkb.search import engine as search
from errorkb.search import index as search_index
from errorkb.triage import site as sites
from errorkb.triage import triage
from tests.conftest import REPO, make_search_kb

SIZE = 256 * 1024  # characters of a line (make test-fast); quadratic rules take minutes on it
SLOW_SIZE = 1024 * 1024  # ...and of the slow variant: what a paste may hold
SIZES = [SIZE, pytest.param(SLOW_SIZE, marks=pytest.mark.slow)]


def _repeated(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


def _rising_backticks(size: int) -> str:
    """Runs of 1, 2, 3... backticks, each after a letter: no run closes an earlier one."""
    runs, total = [], 0
    while total < size:
        runs.append("a" + "`" * (len(runs) + 1))
        total += len(runs[-1])
    return "".join(runs)[:size]


BASELINE = "words"
SHAPES = {
    BASELINE: _repeated("lorem ipsum dolor sit amet "),
    "spaces": _repeated(" "),
    "tabs": _repeated("\t"),
    "backslashes": _repeated("\\"),
    "backticks": _rising_backticks,
    "single quotes": _repeated("'"),
    "double quotes": _repeated('"'),
    "parentheses": _repeated("("),
    "brackets": _repeated("["),
    "braces": _repeated("{"),
    "angle brackets": _repeated("<"),
    "a and a space": _repeated("a "),
    "backslash n": _repeated("\\n"),
    "File quote": _repeated('File "'),
    "Error colon": _repeated("Error: "),
    "braced x": _repeated("{x}"),
    "process marks": _repeated("(Worker pid=1) x "),  # each a loose log mark, counted
    "engine marks": _repeated("(EngineCore pid=1) "),  # two prefixes read each
    "open tags": _repeated("<details "),
    "code spans": _repeated("`a b c d` "),
    # many lines: only the paste's last QUERY["lines"] are read
    "empty lines": _repeated("\n"),
    "short lines": _repeated("a\n"),
    "numbered lines": lambda size: "".join(f"x{i}\n" for i in range(size // 2))[:size],
}


class TooSlow(Exception):
    pass


def _seconds(answer: Callable[[str], object], text: str, limit: float) -> float:
    """How long answer(text) takes; TooSlow once it takes over `limit` seconds (the regular
    expression engine and Python code see the timer's signal)."""

    def stop(signum, frame):
        raise TooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        start = time.perf_counter()
        answer(text)
        return time.perf_counter() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _bound(baseline: float) -> float:
    return max(1.0, 5 * baseline)


@pytest.fixture(scope="module")
def site_files(tmp_path_factory) -> dict[str, bytes]:
    """The tier-1 index of the search fixture knowledge base, as the site serves it."""
    kb = make_search_kb(tmp_path_factory.mktemp("linear") / "kb")
    return search_index.site_index(load_content(kb))


@pytest.fixture(scope="module")
def engine(site_files) -> Callable[[str], object]:
    """errorkb match on a paste: its results, and the report link it offers."""
    index = search.Index(site_files.__getitem__)
    return lambda text: (search.search(index, text), search.report_url(index, text))


def _no_api(base: str, path: str) -> bytes:
    raise OSError(path)  # the index alone is written: a finding goes without its document


@pytest.fixture(scope="module")
def bot(site_files) -> Callable[[str], object]:
    """errorkb triage on an issue's body: the line in prose, then in a fenced code block."""
    site = sites.Site("the search fixture", site_files.__getitem__, _no_api)
    return lambda text: (triage(text, site), triage(f"```\n{text}\n```", site))


def _check_linear(answer: Callable[[str], object], shape: str, size: int) -> None:
    """The shape within the bound of the line of words, both timed now: the machine's speed
    changes from minute to minute, so a baseline timed minutes earlier says little. A second
    try, with the baseline timed again, forgives a burst of load; a quadratic rule is hundreds
    of times over the bound at this size and fails both."""
    for _ in range(2):
        baseline = _seconds(answer, SHAPES[BASELINE](size), limit=60)
        limit = _bound(baseline)
        try:
            took = _seconds(answer, SHAPES[shape](size), limit)
        except TooSlow:
            took = None
        if took is not None and took < limit:  # the timer's own lag aside
            return
    pytest.fail(f"{shape}: over {limit:.2f} s twice ({size} characters; words: {baseline:.2f} s)")


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("shape", [s for s in SHAPES if s != BASELINE])
def test_the_engine_answers_a_hostile_line_in_linear_time(engine, shape, size):
    _check_linear(engine, shape, size)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("shape", [s for s in SHAPES if s != BASELINE])
def test_the_issue_bot_reads_a_hostile_body_in_linear_time(bot, shape, size):
    _check_linear(bot, shape, size)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_match_js_answers_each_hostile_line_in_linear_time(site_files, tmp_path, size):
    """tests/js/timing.mjs times match.js on each shape (the line of words first) and
    prints a line per shape as it is done: one that never comes is the one that hung."""
    for url, body in site_files.items():
        target = tmp_path / "site" / urls.output_path(url)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    pastes = tmp_path / "pastes.json"
    pastes.write_text(json.dumps({name: shape(size) for name, shape in SHAPES.items()}))
    command = ["node", "tests/js/timing.mjs", str(tmp_path / "site"), str(pastes)]
    output = tmp_path / "seconds.jsonl"
    # On a timeout, the shapes it answered are in the output.
    with output.open("w") as out, contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(command, cwd=REPO, stdout=out, timeout=len(SHAPES) * 5, check=True)
    seconds = dict(json.loads(line) for line in output.read_text().splitlines())
    hung = [name for name in SHAPES if name not in seconds]
    assert not hung, f"match.js did not answer {hung[0]} in time ({size} characters)"
    limit = _bound(seconds[BASELINE])
    slow = {name: round(took, 2) for name, took in seconds.items() if took >= limit}
    assert not slow, f"over {limit:.2f} s ({size} characters): {slow}"


def test_a_quadratic_rule_fails_the_check():
    """The check itself: a rule that looks for the end of a run from each of its spaces."""
    rescan = re.compile(r" +(?=x)")
    with pytest.raises(pytest.fail.Exception, match="spaces: over"):
        _check_linear(rescan.findall, "spaces", SIZE)


def test_the_shapes_are_as_long_as_asked():
    assert {len(shape(1000)) for shape in SHAPES.values()} == {1000}

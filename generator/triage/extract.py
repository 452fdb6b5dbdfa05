"""Where the error text is in an issue's Markdown body.

People paste errors in fenced code blocks, as bare tracebacks or log lines between the
template's headings, or quote one in inline code. Each place is a candidate: a piece of
text `errorkb match` can read on its own. Headings, HTML comments (the templates' hints)
and HTML tags (<details>) are no part of any error.
"""

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from errorkb.search import engine

MAX_BODY = 65_536  # characters of a body read: all GitHub keeps of an issue's body or comment
MAX_CANDIDATE = 20_000  # of a long log, its end: where the error that stopped it is
MAX_CANDIDATES = 20

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"</?(?:details|summary|p|br|div|pre|code|b|i|em|strong)\b[^>]*>", re.I)
_QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
# How people set an error apart in prose: **ValueError: ...**, "ValueError: ..."
_STRONG = re.compile(r"^(\*\*|__|\")(.+)\1")
_TICKS = re.compile(r"`+")
# An error line: after its log prefixes, an exception's, a traceback's header, a raise or
# pydantic's wrap; or a log line of an error, whatever its logger's format. The prefixes
# are matched on their own: some read the same text ("(EngineCore pid=1) "), and a pattern
# with more after them tries every way to part a run of them, exponential in its length.
_PREFIX = re.compile(engine.RULES["prefix"], re.ASCII)
_ERROR_START = re.compile(
    engine.RULES["exception"]
    + r"|Traceback \(most recent call last\)|raise \w|(?:Value error|Assertion failed), ",
    re.ASCII,
)
_ERROR_LOG = re.compile(r".{0,40}\b(?:ERROR|CRITICAL)\b", re.ASCII)


@dataclass
class Candidate:
    text: str
    kind: str  # "code" (a fenced block), "text" (error lines in prose) or "inline"
    traceback: bool  # holds a traceback: its last error is what the issue is about


def candidates(body: str) -> list[Candidate]:
    """The pieces of a body that may hold an error, in the order they appear."""
    body = _untagged(_COMMENT.sub("", body[:MAX_BODY].replace("\r\n", "\n")))
    found: list[Candidate] = []
    for kind, lines in _sections(body.split("\n")):
        if kind == "code":
            _keep(found, "\n".join(lines), "code")
        else:
            _prose(found, lines)
    return found


def _untagged(body: str) -> str:
    """The body without its HTML tags. A tag ends at a ">": one that opens after the last
    ">" is none, and is not looked for (from each "<details" the search would read on to
    the end: quadratic on a body of them)."""
    end = body.rfind(">") + 1
    return _TAG.sub("", body[:end]) + body[end:]


def _sections(lines: list[str]):
    """("code", lines) for each fenced block, ("text", lines) for what lies between."""
    text: list[str] = []
    i = 0
    while i < len(lines):
        line = _QUOTE.sub("", lines[i])
        fence = _FENCE.match(line)
        if not fence:
            text.append(line)
            i += 1
            continue
        yield "text", text
        text = []
        mark = fence[1]
        closing = re.compile(r" {0,3}" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}\s*$")
        i += 1
        code = []
        while i < len(lines) and not closing.match(_QUOTE.sub("", lines[i])):
            code.append(_QUOTE.sub("", lines[i]))
            i += 1
        i += 1  # the closing fence (or the end: an unclosed block runs to it)
        yield "code", code
    yield "text", text


def _prose(found: list[Candidate], lines: list[str]) -> None:
    """Runs of error lines in the prose (a traceback pasted without a fence), then
    inline code that reads as a message."""
    run: list[str] = []
    for line in [*lines, ""]:
        stressed = _STRONG.match(line.strip())
        bare = stressed[2] if stressed else line.strip()  # what follows the stress is prose
        if run and bare and not bare.startswith("#"):
            run.append(line)  # as indented as it was: frames of a traceback are skipped so
        elif _error_line(bare):
            run = [bare]
        else:
            if run:
                _keep(found, "\n".join(run), "text")
            run = []
    for line in lines:
        for span in _code_spans(line):
            code = span.strip()
            if _error_line(code) or len(code.split()) >= engine.GENERIC_WORDS:
                _keep(found, code, "inline")


def _error_line(line: str) -> bool:
    match = _PREFIX.match(line)
    assert match is not None  # `(...)*`: it matches at the start of every line
    return bool(_ERROR_START.match(line, match.end()) or _ERROR_LOG.match(line))


def _code_spans(line: str) -> Iterator[str]:
    """The text of each inline code span of a line, in order: a run of backticks, text,
    and the next run of as many (a run whose length no later run has may open one with its
    last few backticks). Found by run lengths: a regex looks for the closing run from each
    backtick on, quadratic on a line of runs (`a``a```a...)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    of_length: dict[int, list[int]] = {}  # run length -> the runs of that length, in order
    for n, (start, end) in enumerate(runs):
        of_length.setdefault(end - start, []).append(n)
    n = 0
    while n < len(runs):
        start, end = runs[n]
        for opening in range(start, end):  # the whole run first, then its tails
            same = of_length.get(end - opening, [])
            later = bisect.bisect_right(same, n)
            if later < len(same):
                n = same[later]  # the closing run: the next span starts after it
                yield line[end : runs[n][0]]
                break
        n += 1


def _keep(found: list[Candidate], text: str, kind: str) -> None:
    """Adds a candidate, unless it repeats one or MAX_CANDIDATES are found (comparing each
    of a body's many with all those before would be quadratic)."""
    text = text.strip("\n")[-MAX_CANDIDATE:]
    if len(found) < MAX_CANDIDATES and text.strip() and not any(c.text == text for c in found):
        found.append(Candidate(text, kind, "Traceback (most recent call last)" in text))

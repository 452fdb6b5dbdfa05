"""Where the error text is in an issue's Markdown body.

People paste errors in fenced code blocks, as bare tracebacks or log lines between the
template's headings, or quote one in inline code. Each place is a candidate: a piece of
text `errorkb match` can read on its own. Headings, HTML comments (the templates' hints)
and HTML tags (<details>) are no part of any error.
"""

import re
from dataclasses import dataclass

from errorkb.search import engine

MAX_BODY = 262_144  # characters of a body read: a traceback ends long before 1 MB does
MAX_CANDIDATE = 20_000  # of a long log, its end: where the error that stopped it is
MAX_CANDIDATES = 20

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"</?(?:details|summary|p|br|div|pre|code|b|i|em|strong)\b[^>]*>", re.I)
_QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
# How people set an error apart in prose: **ValueError: ...**, "ValueError: ..."
_STRONG = re.compile(r"^(\*\*|__|\")(.+)\1")
_INLINE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_ERROR_LINE = re.compile(
    engine.RULES["prefix"]
    + r"(?:"
    + engine.RULES["exception"]
    + r"|Traceback \(most recent call last\)|raise \w|(?:Value error|Assertion failed), )"
    + r"|.{0,40}\b(?:ERROR|CRITICAL)\b",  # a log line of an error, whatever its logger's format
    re.ASCII,
)


@dataclass
class Candidate:
    text: str
    kind: str  # "code" (a fenced block), "text" (error lines in prose) or "inline"
    traceback: bool  # holds a traceback: its last error is what the issue is about


def candidates(body: str) -> list[Candidate]:
    """The pieces of a body that may hold an error, in the order they appear."""
    body = _TAG.sub("", _COMMENT.sub("", body[:MAX_BODY].replace("\r\n", "\n")))
    found: list[Candidate] = []
    for kind, lines in _sections(body.split("\n")):
        if kind == "code":
            _keep(found, "\n".join(lines), "code")
        else:
            _prose(found, lines)
    return found[:MAX_CANDIDATES]


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
        elif _ERROR_LINE.match(bare):
            run = [bare]
        else:
            if run:
                _keep(found, "\n".join(run), "text")
            run = []
    for line in lines:
        for m in _INLINE.finditer(line):
            code = m[2].strip()
            if _ERROR_LINE.match(code) or len(code.split()) >= engine.GENERIC_WORDS:
                _keep(found, code, "inline")


def _keep(found: list[Candidate], text: str, kind: str) -> None:
    text = text.strip("\n")[-MAX_CANDIDATE:]
    if text.strip() and not any(c.text == text for c in found):
        found.append(Candidate(text, kind, "Traceback (most recent call last)" in text))

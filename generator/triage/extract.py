"""Where the error text is in an issue's Markdown body.

People paste errors in fenced code blocks, as bare tracebacks or log lines between the
template's headings, or quote one in inline code. Each place is a candidate: a piece of
text `errorkb match` can read on its own. Headings, HTML comments (the templates' hints)
and HTML tags (<details>) are no part of any error.
"""

import bisect
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from errorkb.search import engine

MAX_BODY = 65_536  # characters of a body read: all GitHub keeps of an issue's body or comment
MAX_CANDIDATE = 20_000  # of a long log, its end: where the error that stopped it is
MAX_CANDIDATES = 20
MAX_TITLE = 256  # characters of a title: GitHub keeps 256

# A fence opens a code block; a backtick fence's info string holds no backtick (CommonMark):
# "```ValueError: ...```" on one line is inline code
_FENCE = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"</?(?:details|summary|p|br|div|pre|code|b|i|em|strong)\b[^>]*>", re.I)
_QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
# How people set an error apart in prose: **ValueError: ...**, "ValueError: ..."
# A template's tags at a title's start: "[Bug]: ", "[Feature] ", "[Bug][ROCm]: "
_TITLE_TAGS = re.compile(r"^(?:\s*\[[^\[\]\n]{0,40}\]\s*:?)+\s*")
_STRONG = re.compile(r"^(\*\*|__|\")(.+)\1")
_TICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Reading:
    """How error lines are told, by the search rules of the site's index (engine.Rules),
    never by the installed wings': the bot reads a body as the site it answers from does.
    An error line: after its log prefixes (`prefix`), an exception's, a traceback's header,
    a raise or pydantic's wrap (`error_start`); or a log line of an error, whatever its
    logger's format. The prefixes are matched on their own: some read the same text
    ("(EngineCore pid=1) "), and a pattern with more after them tries every way to part a
    run of them, exponential in its length. Or a log line by its prefix alone (`log_line`:
    "[2025-06-26 07:25:31 DP4 TP4] Watchdog timeout ..."): SGLang's logger prints no level.
    Any level: the triage decides which it names."""

    prefix: re.Pattern
    error_start: re.Pattern
    log_line: re.Pattern


@functools.cache
def reading(rules: engine.Rules) -> Reading:
    """The Reading of an index's rules (engine.Index.context().rules)."""
    return Reading(
        rules.prefix,
        re.compile(
            rules.source["exception"]
            + r"|Traceback \(most recent call last\)|raise \w|(?:Value error|Assertion failed), ",
            re.ASCII,
        ),
        rules.line_mark,
    )


_ERROR_LOG = re.compile(r".{0,40}\b(?:ERROR|CRITICAL)\b", re.ASCII)
# The lines of an environment dump (vLLM's collect_env.py, SGLang's check_env, pip and
# conda lists): what is installed, never the error. A block or a run of prose with
# ENV_LINES of them is a dump, and is not read.
_ENV_LINE = re.compile(
    r"\s*(?:\[(?:pip3?|conda)\] |Collecting environment information"
    r"|(?:PyTorch version|Is debug build|CUDA used to build PyTorch|ROCM used to build PyTorch"
    r"|OS|GCC version|Clang version|CMake version|Libc version|Python version|Python platform"
    r"|Is CUDA available|CUDA runtime version|CUDA_MODULE_LOADING set to"
    r"|GPU models and configuration|Nvidia driver version|cuDNN version|HIP runtime version"
    r"|MIOpen runtime version|Is XNNPACK available|Versions of relevant libraries"
    r"|vLLM Version|vLLM Build Flags|Neuron SDK Version|ROCM Version|GPU Topology"
    r"|Python|CUDA available|CUDA_HOME|NVCC|CUDA Driver Version|PyTorch|sglang|sgl_kernel"
    r"|flashinfer(?:_python)?|triton|transformers|torchao|numpy|NVIDIA Topology|ulimit soft"
    r"|Hypervisor vendor|Architecture|CPU op-mode\(s\)|Model name|Byte Order)\s*:)"
)
ENV_LINES = 3
# Text a sentence quotes: 'throws a "watchdog timeout" error', “...”, '...'. A quote of
# fewer than QUOTE_WORDS words is a phrase, never a message.
_QUOTED = re.compile(r"\"([^\"\n]{8,300})\"|“([^”\n]{8,300})”|(?<!\w)'([^'\n]{8,300})'(?!\w)")
QUOTE_WORDS = 3
INLINE_WORDS = 4  # a code span of this many words is read as a message, error-like or not


@dataclass
class Candidate:
    text: str
    # "title", "code" (a fenced block), "text" (error lines in prose), "inline" (a code
    # span), "quote" (a title's or a sentence's quoted text: named only when it is a
    # message, or its first sentence, exactly) or "span" (a part of the title, read as a
    # quote: title_spans)
    kind: str
    traceback: bool  # holds a traceback: its last error is what the issue is about
    in_title: bool = False  # the title, or a quote in it
    # A code block the prose just above says warns ("it warns that:", "with this warning"):
    # its warnings are what the issue is about
    warned: bool = False


Sections = list[tuple[str, list[str]]]


def sections(body: str) -> Sections:
    """A body's fenced blocks ("code", lines) and what lies between them ("text", lines),
    without the templates' hints (HTML comments) and HTML tags: read once for an issue,
    by candidates and says_error both."""
    body = _untagged(_COMMENT.sub("", body[:MAX_BODY].replace("\r\n", "\n")))
    return list(_sections(body.split("\n")))


def candidates(
    body: str, rules: Reading, title: str = "", parts: Sections | None = None
) -> list[Candidate]:
    """The pieces of a body that may hold an error, in the order they appear; the issue's
    title, when it has more than its template's tag, first. `parts` are the body's
    sections, when already read."""
    found: list[Candidate] = []
    head = subject(title)
    if head:
        _keep(found, head, "title")
        _quotes(found, head)
        for candidate in found:
            candidate.in_title = True
    said = ""  # the last line of prose above a block
    for kind, lines in sections(body) if parts is None else parts:
        if kind == "code":
            if not _environment(lines):
                before = len(found)
                _keep(found, "\n".join(lines), "code")
                if len(found) > before and _WARNS.search(said):
                    found[-1].warned = True
        else:
            _prose(found, _without_environment(lines), rules)
            said = next((line for line in reversed(lines) if line.strip()), "")
    return found


# Prose that says the block below it is a warning: "it warns that:", "I get this warning:"
_WARNS = re.compile(r"\bwarn(?:s|ed|ing|ings)?\b[^.!?]*:?\s*$", re.I)


def _environment(lines: list[str]) -> bool:
    """Whether a code block is an environment dump (collect_env.py's output, a pip list)."""
    return sum(bool(_ENV_LINE.match(line)) for line in lines) >= ENV_LINES


def _without_environment(lines: list[str]) -> list[str]:
    """Prose without the environment dump pasted in it unfenced: from its first line of a
    dump to its last, when it has ENV_LINES of them."""
    marks = [i for i, line in enumerate(lines) if _ENV_LINE.match(line)]
    if len(marks) < ENV_LINES:
        return lines
    return lines[: marks[0]] + [""] + lines[marks[-1] + 1 :]


# Prose that says an error happens: "this will raise an error", "the assertion gets triggered"
_SAYS_ERROR = re.compile(
    r"\b(?:errors?|exceptions?|rais(?:e|es|ed|ing)|fail\w*|throw\w*|crash\w*|trigger\w*)\b", re.I
)


def says_error(body: str, title: str = "", parts: Sections | None = None) -> bool:
    """Whether the title or the body's prose (its code blocks and the templates' hints
    aside) says an error happens: a raise statement quoted with no traceback is code the
    user read, and is the issue's error only when the user says it is raised. `parts` are
    the body's sections, when already read."""
    parts = sections(body) if parts is None else parts
    prose = [line for kind, lines in parts if kind == "text" for line in lines]
    prose = [line for line in prose if not line.lstrip().startswith("#")]  # template headings
    return bool(_SAYS_ERROR.search(subject(title) + "\n" + "\n".join(prose)))


def _quotes(found: list[Candidate], text: str) -> None:
    """The quoted text of a line, each a candidate of its own."""
    for m in _QUOTED.finditer(text):
        quote = next(g for g in m.groups() if g is not None).strip()
        if len(quote.split()) >= QUOTE_WORDS:
            before = len(found)
            _keep(found, quote, "quote")
            if len(found) > before and _WARNED.search(_sentence(text, m.start(), m.end())):
                found[-1].warned = True  # 'vLLM prints a warning "..."': a warning, said so


# A sentence that calls what it quotes a warning: 'prints a warning "..."', '"..." warning'
_WARNED = re.compile(r"\bwarn(?:s|ed|ing|ings)?\b", re.I)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence of a line around a span, the span left out: from the end of the
    sentence before it to the end of its own (a full stop and a space, or the line's end)."""
    opened = max(text.rfind(". ", 0, start), text.rfind("! ", 0, start), text.rfind("? ", 0, start))
    ends = [i for i in (text.find(". ", end), text.find("! ", end), text.find("? ", end)) if i >= 0]
    return text[opened + 1 : start] + " " + text[end : min(ends, default=len(text))]


def subject(title: str) -> str:
    """A title without its template's tags ("[Bug]: ", "[Usage] ") and Markdown's code
    marks: what the user says the issue is about, on one line."""
    title = _TITLE_TAGS.sub("", title[:MAX_TITLE].replace("\n", " ")).strip()
    return title.strip("`").strip()


# Where a title's clauses part: a sentence's end, a semicolon, a dash or bar between spaces
_CLAUSE = re.compile(r"(?<=[.!?;])\s+|\s+[-\u2013\u2014|]\s+")
SPAN_WORDS = 24  # a clause's words its spans are cut from (GitHub keeps 256 characters)
MAX_SPANS = 64  # spans of a title read at most (each is a search)


def title_spans(title: str) -> list[Candidate]:
    """The parts of a title that may be a message with the user's words around it ("The
    quantization method mxfp4 is not supported for the current GPU SM75", "Deepseek-V2.5
    capture cuda graph failed", "Cannot run X; Capture cuda graph failed"): each clause, then
    each run of its words that keeps its first or its last word, longest first, of
    QUOTE_WORDS words or more. Each is read as a quote is (kind "span"): named only when it
    is all of a message or of its first sentence. A title that is a log pasted with its
    line breaks lost (a traceback's header in it) has none: what it holds is read whole."""
    head = subject(title)
    if "Traceback (most recent call last)" in head:
        return []
    clauses = [c.strip(" ;") for c in _CLAUSE.split(head)]
    spans = [c for c in clauses if c and c != head]
    for clause in [head, *spans]:
        words = clause.split()[:SPAN_WORDS]
        for k in range(len(words) - 1, QUOTE_WORDS - 1, -1):
            spans += [" ".join(words[:k]), " ".join(words[len(words) - k :])]
    seen = {head, " ".join(head.split())}
    out = []
    for span in spans:
        # A run that ends at a comma or colon of the user's sentence ends there: "Aborted due
        # to the lack of CPU swap space, but there is enough RAM" holds the message's first
        # sentence without its full stop
        span = span.rstrip(",:")
        if span not in seen and len(span.split()) >= QUOTE_WORDS:
            seen.add(span)
            out.append(Candidate(span, "span", False, in_title=True))
    return out[:MAX_SPANS]


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


def _prose(found: list[Candidate], lines: list[str], rules: Reading) -> None:
    """Runs of error lines in the prose (a traceback pasted without a fence), then
    inline code that reads as a message."""
    run: list[str] = []
    for line in [*lines, ""]:
        stressed = _STRONG.match(line.strip())
        bare = stressed[2] if stressed else line.strip()  # what follows the stress is prose
        if run and bare and not bare.startswith("#"):
            run.append(line)  # as indented as it was: frames of a traceback are skipped so
        elif _error_line(bare, rules):
            run = [bare]
        else:
            if run:
                _keep(found, "\n".join(run), "text")
            run = []
    for line in lines:
        if not rules.error_start.match(line.strip()):
            _quotes(found, line)
        for span in _code_spans(line):
            code = span.strip()
            if _error_line(code, rules) or len(code.split()) >= INLINE_WORDS:
                _keep(found, code, "inline")


def error_like(candidate: Candidate, rules: Reading) -> list[str]:
    """The error-like lines of a candidate, without their log prefixes: its error lines (an
    exception's, a traceback's header, a log line), or all of a code span's one line."""
    lines = [line.strip() for line in candidate.text.split("\n") if line.strip()]
    if candidate.kind == "inline":
        return [unprefixed(line, rules) for line in lines]
    return [unprefixed(line, rules) for line in lines if _error_line(line, rules)]


def logged_errors(candidate: Candidate, rules: Reading) -> list[str]:
    """The error log lines of a candidate, each whole ("ERROR 10-26 11:35:32 registry.py:267]
    Error in inspecting model architecture 'LlamaForCausalLM'"): its ERROR and CRITICAL
    lines but a traceback's (its header, frames and code, logged line by line), an
    exception's (search read those) and those that announce a traceback (ending in a colon),
    in order, each once."""
    out: dict[str, None] = {}  # in order, each once (a dict: a list's `in` is quadratic)
    for line in candidate.text.split("\n"):
        if not _ERROR_LOG.match(line):
            continue
        match = rules.prefix.match(line)
        assert match is not None
        rest = line[match.end() :]
        text = rest.strip()
        if not text or rest[:1] in (" ", "\t") or text.endswith(":") or text.startswith(_FRAME):
            continue
        if rules.error_start.match(text):
            continue  # an exception's line: search read it
        out[line.strip()] = None
    return list(out)


_FRAME = ("Traceback (most recent call last)", 'File "', "^")


def unprefixed(line: str, rules: Reading) -> str:
    """A line without its log prefixes and the spaces around it."""
    line = line.strip()
    match = rules.prefix.match(line)
    assert match is not None
    return line[match.end() :].strip()


def _error_line(line: str, rules: Reading) -> bool:
    match = rules.prefix.match(line)
    assert match is not None  # `(...)*`: it matches at the start of every line
    return bool(
        rules.error_start.match(line, match.end())
        or _ERROR_LOG.match(line)
        or rules.log_line.match(line)
    )


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

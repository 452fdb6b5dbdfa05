"""The issue bot: an issue's body in, the known errors it holds out, only when sure.

`extract` finds the places of a Markdown body that hold error text, tier-1 search
(generator.search.engine) matches each message in them, and only an exact or partial
match that no other record ties with is kept: a generic or similar one is a guess, and a
guess in someone's issue costs more than silence. `comment` writes what is found as a
GitHub comment; `github` posts it.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from errorkb.content import template
from errorkb.search import engine
from errorkb.triage import extract
from errorkb.triage.site import Site

LIMIT = 3  # errors a comment names at most
LOGGED = 4  # error log lines of a candidate read on their own at most (its last)
TIERS = {"exact": ("exact",), "partial": ("exact", "partial")}
FITS = TIERS["partial"]
# Records of log lines are named by their level. Below ERROR a line is progress or advice,
# never what an issue is about; an error's log line often only announces the traceback
# that follows ("EngineCore failed to start."), so it is named only when no exception is.
QUIET_LEVELS = {"DEBUG", "INFO", "WARNING", "WARN", "NOTICE"}
LOG_LEVELS = {"ERROR", "CRITICAL", "FATAL", "EXCEPTION"}


@dataclass
class Finding:
    result: engine.Result
    quote: str  # the message as the body has it (cleaned of log noise)
    document: dict | None  # the record's JSON document, when the site has it
    page: str  # the record's page, absolute, with the values in its address
    final: bool  # the error a traceback ends in
    position: tuple[int, int] = (0, 0)  # (candidate, message) in the body
    # Of an old wording: the document and page of the check printed today that took over
    today: dict | None = None
    today_page: str = ""
    in_title: bool = False  # found in the issue's title
    # The wrapper's line the body shows after this error ("Engine core initialization
    # failed. See root cause above"), named as its follow-on
    followed_by: "Finding | None" = None
    # A wrapper's line named alone: the traceback it announced was cut before its error
    cut: bool = False


def triage(
    body: str,
    site: Site,
    minimum: str = "partial",
    hint: str = "",
    runs: str | None = None,
    title: str = "",
) -> list[Finding]:
    """The known errors of an issue, at most LIMIT, the one a traceback ends in first (but
    a wrapper's line after the error it follows, which names it). `title` is the issue's
    title, read as a candidate like the body's. `hint` is text that names the project (the
    repository the issue is in, "owner/name"); the engine whose repository it is, or
    `runs` (an engine's key), is the one a message both engines print is about: the
    strongest hint. A log line below ERROR is named only as the issue's subject: in its
    title, or (a WARNING) the only error-like line its body shows. A title that is no
    message as a whole may hold one among the user's words: the first of its parts
    (extract.title_spans) that is all of a message, or of its first sentence, which no
    other message fits, and where no value was cut."""
    ctx = site.index.context()  # the site's rules, which the bot reads and matches by
    reading, how = extract.reading(ctx.rules), ctx.how
    hints = site.index.meta["hints"]
    programs = site.index.meta.get("programs", {})
    issue = title[: extract.MAX_TITLE] + "\n" + body[: extract.MAX_BODY]
    named = engine.named_projects(issue + "\n" + hint, hints)
    key = runs or engine_of_repo(hint, programs)
    releases = said_releases(issue, programs)  # the user's, wherever the issue says it
    parts = extract.sections(body)  # read once, for the candidates and the prose both
    candidates = extract.candidates(body, reading, title, parts)
    lone = _lone(candidates, reading, _one_record(site, key))
    said = extract.says_error(body, title, parts)
    found: dict[str, Finding] = {}
    # A wrapper's line announcing a traceback ("Scheduler hit an exception: Traceback ..."):
    # named only when nothing else of the issue is known (the traceback cut before its error)
    cut: list = []

    def keep(n: int, m: int, candidate: extract.Candidate, block, result, final: bool) -> Finding:
        document, page = site.document(result.id), site.page(result)
        finding = Finding(result, block.text, document, page, final, (n, m))
        finding.in_title = candidate.in_title
        if result.today:
            finding.today = site.document(result.today["id"])
            finding.today_page = site.page_url.replace("{}", result.today["id"])
        found[result.id] = finding
        return finding

    def read(n: int, candidate: extract.Candidate, held: list | None = None) -> bool:
        """Adds the findings of one candidate; whether it had any. The error log lines that
        announce a traceback go to `held` instead (when given)."""
        before = len(found)
        # The lines search reads beside the errors (Block.beside) are left to the reading
        # of error log lines below, when nothing known was raised; but for a line that
        # announces a traceback (it ends at its colon), held
        cleaned = engine.clean(candidate.text, ctx.rules, ctx.settings)
        blocks = [b for b in cleaned if not b.beside]
        aside = [b for b in cleaned if b.beside and b.text.rstrip().endswith(":")]
        for m, block in enumerate(blocks + (aside if held is not None else [])):
            result = _sure(
                site, _query(block), TIERS[minimum], named, key, candidate.kind, releases
            )
            if not result or result.id in found:
                continue
            if candidate.kind == "title" and _retyped_among(site, block.text, result, key):
                continue
            if result.how == how["source"] and 'File "' not in candidate.text and not said:
                continue  # a raise statement, no traceback, no error said: code the user read
            final = candidate.traceback and m == len(blocks) - 1
            if block.beside or not _speaks(result, candidate, block, lone, how):
                if held is not None and _announces(result, candidate, block):
                    if not result.wrapper:
                        held.append((m, block, result, final))
                    else:
                        cut.append((n, m, candidate, block, result, final))
                continue
            keep(n, m, candidate, block, result, final)
        return len(found) > before

    for n, candidate in enumerate(candidates):
        announcers: list = []
        if not read(n, candidate, announcers) and candidate.kind in ("code", "text"):
            # Nothing known raised: the error log lines the search set aside for the
            # exception ("Error in inspecting model architecture 'X'" before a traceback
            # that ends in a CalledProcessError), each on its own
            for line in extract.logged_errors(candidate, reading)[-LOGGED:]:
                read(n, extract.Candidate(line, candidate.kind, False))
        if announcers and not any(f.position[0] == n for f in found.values()):
            # Nor anything else: the traceback a line announces was cut, or ends in an
            # error search is not sure of ("Initialization failed. warmup error:
            # Traceback ..." then a cut frame). The line says what failed and is all the
            # issue shows of it: its last is named. A wrapper's line ("Scheduler hit an
            # exception: Traceback ...") says only that something did: never named so
            m, block, result, final = announcers[-1]
            keep(n, m, candidate, block, result, final)
    if title and not any(f.in_title for f in found.values()) and not _tied_title(site, title, key):
        # A title that is no message as a whole may hold one among the user's words: the
        # first of its parts that is all of a message, or of its first sentence
        any(read(0, span) for span in extract.title_spans(title))
    if not found and cut and lone and not _title_generic(site, title, key):
        # Only a wrapper's line shows, the traceback it announces cut before its error, and
        # no other error-like line (one without a record may be the cause): its page says
        # where the error is and asks for it
        keep(*cut[-1]).cut = True
    raised = [f for f in found.values() if f.result.exception not in LOG_LEVELS]
    titled = any(f.in_title for f in found.values())
    if not raised and not titled and _title_generic(site, title, key):
        # The title names an exception search is not sure of ("AssertionError: expected
        # running sequences", a generic message): that is what the issue is about, and the
        # log lines the body shows ("AsyncLLMEngine has failed, terminating server
        # process") are what it led to: none is named for it
        return []
    if any(f.result.exception not in QUIET_LEVELS for f in raised):
        # An exception the body shows is what the issue is about: a warning beside it is
        # context ("Skipping KV post-processing for failed request" after the AssertionError
        # that failed it), named only from the title
        raised = [f for f in raised if f.in_title or f.result.exception not in QUIET_LEVELS]
    ranked = sorted(
        raised or _last_logged(found.values()),
        key=lambda f: (f.result.wrapper, not f.final, f.position),
    )
    wrappers = [f for f in found.values() if f.result.wrapper]
    if ranked and wrappers and not ranked[0].result.wrapper:
        ranked[0].followed_by = wrappers[0]
        ranked = [f for f in ranked if f is not wrappers[0]]
    return ranked[:LIMIT]


def _title_generic(site: Site, title: str, key: str | None) -> bool:
    """Whether a title names an exception with its message ("AssertionError: ...") that is a
    known error's short message, which many errors print (search's generic tier)."""
    head = extract.subject(title)
    said = re.search(r"\b(?:\w+\.)*\w*(?:Error|Exception):\s+\S[^\"'`]*", head)
    if not said:
        return False
    results = engine.search(site.index, said[0], engine=key)
    return bool(results and results[0].match == "generic" and not results[0].wrapper)


def _last_logged(findings) -> list[Finding]:
    """Of error log lines only (nothing raised), the title's and the last the body shows:
    the one that stopped the run (a log before it is its context: "Pyspy failed to dump
    PID", then "Watchdog timeout")."""
    findings = list(findings)
    last = max((f for f in findings if not f.in_title), key=lambda f: f.position, default=None)
    return [f for f in findings if f.in_title or f is last]


def said_releases(text: str, programs: dict[str, dict]) -> dict[str, str]:
    """The release of each engine an issue names, wherever it says it: "vllm 0.4.3",
    "vLLM API server version 0.5.4", "vLLM Version: 0.9.0" (collect_env), "sglang==0.4.3",
    "sglang: 0.4.3" (check_env). The version right after the name: a number further on
    is another program's ("vllm gpu version, cuda 12.8")."""
    found = {}
    for name, program in programs.items():
        if not program.get("engine"):
            continue
        m = re.search(rf"\b{re.escape(name)}{_RELEASE}", text, re.I | re.ASCII)
        if m:
            found[name] = m[1]
    return found


_RELEASE = r"(?:[\w ]{0,20}? version)?\s*(?:[:=]=?|\s)\s*v?(\d+(?:\.\d+){1,3}(?:\.post\d+)?)\b"


def _lone(
    candidates: list[extract.Candidate],
    reading: extract.Reading,
    same: "Callable[[set[str]], bool] | None" = None,
) -> bool:
    """Whether the body shows one error-like line only (as often as it repeats it): its
    candidates, quotes aside, hold one distinct error line once their log prefixes are off
    (a template's placeholder in a code block, or a command, is no error line). A few lines
    that are one message with other values ("... visual.blocks.11.attn.proj will be ignored", then
    "... mlp.down_proj ...") are one line when `same` says one record is sure of them all."""
    lines = {
        line
        for c in candidates
        if c.kind not in ("title", "quote")
        for line in extract.error_like(c, reading)
    }
    if len(lines) == 1:
        return True
    return same is not None and 1 < len(lines) <= LONE_LINES and same(lines)


LONE_LINES = 6  # distinct lines of one message read apart at most, to find that they are


def _one_record(site: Site, key: str | None) -> "Callable[[set[str]], bool]":
    """Whether search is sure of one record for every line (each its best, exact or partial
    and tied with none)."""

    def same(lines: set[str]) -> bool:
        ids = set()
        for line in lines:
            results = engine.search(site.index, line, engine=key)
            if not results or results[0].match not in FITS or results[0].tied:
                return False
            ids.add(results[0].id)
            if len(ids) > 1:
                return False
        return True

    return same


def _speaks(
    result: engine.Result, candidate: extract.Candidate, block: engine.Block, lone: bool, how: dict
) -> bool:
    """Whether a sure result of this candidate is named: a log line below ERROR only as the
    issue's subject (in the title, or a WARNING that is the body's lone error-like line);
    an error's log line that announces the traceback after it ("Scheduler hit an exception:
    Traceback ...") never: the traceback's own error is what happened."""
    level = result.exception
    if candidate.kind == "span" and _edged(result, block.text, how):
        return False
    if candidate.kind == "title" and _edged(result, block.text, how, start=False):
        return False  # "Support for X with tensor parallel size 16": a message's start
    if candidate.in_title and result.how == how["fragment"]:
        # a run of a message's words in a title: a question about it, or another; unless
        # the title is the record's own, its message without the values (a user who left
        # them out: "Waiting for creating a placement group of specs for seconds.")
        return candidate.kind == "title" and _titled(result, block.text) and level != "DEBUG"
    if level in LOG_LEVELS:
        return not (candidate.traceback and block.text.rstrip().endswith(":"))
    if level not in QUIET_LEVELS:
        return True
    if result.how == how["fragment"]:
        return False  # a run of a log line's words among others: said in passing, or another
    if candidate.kind in ("title", "span"):  # the line: all of it, or of its first sentence
        return level not in ("DEBUG",) and _whole(result, how)
    # A WARNING as the body's lone error-like line, or in a block its prose says warns; a
    # quote only when its sentence calls it a warning ('prints a warning "..."')
    if candidate.kind in QUOTES:
        return level in ("WARNING", "WARN") and candidate.warned
    return level in ("WARNING", "WARN") and (lone or candidate.warned)


def _announces(result: engine.Result, candidate: extract.Candidate, block: engine.Block) -> bool:
    """Whether a sure result is an error's log line that announces the traceback after it
    ("Initialization failed. warmup error: Traceback ..."): named only when nothing else of
    its candidate is, and when it is no wrapper's line."""
    level = result.exception
    return level in LOG_LEVELS and candidate.traceback and block.text.rstrip().endswith(":")


def _tied_title(site: Site, title: str, key: str | None) -> bool:
    """Whether the title as a whole fits messages that tie (two records print its text): a
    part of it then fits a piece of those, and naming the one it fits alone is a guess
    ("Detected errors during sampling! NaN in the logits.", printed as a warning, an error
    and an exception: its first sentence is also a removed warning's whole message)."""
    subject = extract.subject(title)
    results = engine.search(site.index, subject, engine=key) if subject else []
    best = results[0] if results else None
    fragment = site.index.context().how["fragment"]
    return bool(best and best.match in FITS and best.how != fragment and best.tied)


def _retyped_among(site: Site, text: str, result: engine.Result, key: str | None) -> bool:
    """Whether a title's fit of a whole message without the quotes around a value is among
    the user's words: the same record still fits the same way with the title's first or
    last word left out. Alone, a message retyped without its quotes is its own; among other
    words its unquoted value is one of the user's, and the sentence only shares the
    message's few words ("Confirm tool calling is not supported and ..." is no "Tool
    '{tool_name}' is not supported"). Of a fit in other letter case only, the user's words
    around a message are often a frame for it ("No Cuda GPUs are available when running
    vLLM on Ray"): it stays."""
    how = site.index.context().how
    if result.how.startswith(how["prefix"]):
        # A message's start among the user's words: it must open the title, or follow a
        # colon ("..., an error message appears: Quantization scheme is not supported");
        # else the sentence only mentions its words ("Error instead of silent Triton
        # fallback when `--kv-cache-dtype fp8_e5m2` ..." holds the start of
        # "--kv-cache-dtype fp8_e5m2 is not supported on CPU.")
        starts = [0, *(m.end() for m in re.finditer(r":\s+", text))][:COLONS]
        return not any(_opens(site, text[start:], result, key) for start in starts)
    if result.how != how["message"] + how["quotes"]:
        return False
    words = text.split()
    for shorter in (words[1:], words[:-1]):
        results = engine.search(site.index, " ".join(shorter), engine=key) if shorter else []
        if results and results[0].id == result.id and results[0].how == result.how:
            return True
    return False


COLONS = 4  # places a title's message may open at, read at most (each is two searches)


def _opens(site: Site, text: str, result: engine.Result, key: str | None) -> bool:
    """Whether the text opens with the start of the result's message: it fits the same way,
    and no longer does without its first word."""
    words = text.split()
    if len(words) < 2:
        return False
    for shorter, same in ((text, True), (" ".join(words[1:]), False)):
        results = engine.search(site.index, shorter, engine=key)
        if same != bool(results and results[0].id == result.id and results[0].how == result.how):
            return False
    return True


def _older(result: engine.Result) -> bool:
    """Whether a result is a check no longer printed (its page names today's check or the
    release to upgrade to): fitting alike after today's, it is no other error of today."""
    return bool(result.today or result.upgrade)


def _lineage(one: engine.Result, other: engine.Result) -> bool:
    """Whether two results are older wordings of the same check printed today; or the same
    wording, of which `one` leads on to a check printed today and `other` is a copy whose
    check is gone (vllm#5976: "The model's max seq len ... KV cache" printed by the GPU
    worker, whose check lives on, and by the OpenVINO worker, removed with its backend):
    the page of the one that lives on answers the words both print."""
    if one.today and other.today:
        return one.today["id"] == other.today["id"]
    same = one.how == other.how and one.values == other.values  # as the text shows them
    return bool(one.today and not other.today and other.upgrade and same)


def _titled(result: engine.Result, text: str) -> bool:
    """Whether the text is the record's title, or its message's first sentence without its
    values (template.title), which a title a person gave the page no longer is (vllm#28997:
    "local_world_size must be less than or equal to the number of visible devices"), but for
    letter case, punctuation and spaces."""

    def plain(text: str) -> str:
        return " ".join(re.findall(r"\w+", text.lower()))

    said = plain(text)
    return said in (plain(result.title), plain(template.title(result.message)))


TITLE_WORDS = 6  # words of a record's title a title must be to be named by it alone


def _retitled(results: list[engine.Result], text: str) -> bool:
    """Whether an issue's title is its best result's record's title, a message with its
    values left out ("AssertionError: local_world_size must be less than or equal to the
    number of visible devices"), long enough to be no other's, and the runner-up no record
    the title also is."""
    said = re.sub(r"^(?:\w+\.)*\w*(?:Error|Exception):\s*", "", text.strip())
    best = results[0]
    if len(said.split()) < TITLE_WORDS or not _titled(best, said):
        return False
    return not any(_titled(r, said) for r in results[1:])


def _raised_generic(results: list[engine.Result], query: str, how: dict) -> bool:
    """Whether a generic fit (a template of few words of its own) is sure all the same: the
    paste raises the record's own exception with all of its message ("AssertionError:
    expected running sequences", "ImportError: x.so: undefined symbol: y"), and no other
    record fits at all. A short message alone may be anyone's; the exception it was raised
    with, and nothing else fitting, say whose it is."""
    best = results[0]
    if best.match != "generic" or best.how != how["generic"] or best.tied:
        return False
    if any(r.match != "similar" for r in results[1:]):
        return False
    said = re.match(r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*):\s", query)
    own = best.exception.rsplit(".", 1)[-1]
    if said is None:
        return False
    return said.group(1).rsplit(".", 1)[-1] == own and own not in UNSURE_RAISED


# Exceptions whose short messages Python raises itself, for any code ("'NoneType' object has no
# attribute 'cpu'"), and log levels: a generic fit of these is never sure
UNSURE_RAISED = LOG_LEVELS | QUIET_LEVELS | {
    "AttributeError",
    "TypeError",
    "NameError",
    "IndexError",
    "KeyError",
    "ZeroDivisionError",
    "UnboundLocalError",
    "ModuleNotFoundError",
    "RecursionError",
}


def _fits(result: engine.Result, how: dict) -> bool:
    """Whether a result claims the text is its message: exact, or partial but for a run of
    its words among others."""
    return result.match in FITS and result.how != how["fragment"]


def _edged(result: engine.Result, text: str, how: dict, start: bool = True) -> bool:
    """Whether a value of the fit is where a part of a title was cut: at its start (a
    template that opens with a value takes any word before its text), or at its end when
    the message goes on after it (the cut fell on a value: "Attempted to assign 25")."""
    values = [v.strip() for v in result.values.values() if v.strip()]
    end = text.rstrip(".!?:;, ")
    ends = result.how.startswith(how["prefix"])  # not its end, nor a sentence's
    return any((start and text.startswith(v)) or (ends and end.endswith(v)) for v in values)


def engine_of_repo(repo: str, programs: dict[str, dict]) -> str | None:
    """The key of the engine whose repository this is ("vllm-project/vllm"), or None."""
    for program in programs.values():
        if program.get("engine") and repo and program.get("repo", "").lower() == repo.lower():
            return program["key"]
    return None


# How a quote in a sentence may fit its message: all of it, or all of its first sentence
# (what people quote), as printed or without the closing punctuation Markdown or the
# sentence took (the keys of the index's "how").
QUOTE_FITS = ("sentence", "punctuation")
QUOTES = ("quote", "span")  # candidates named only when whole: a sentence's quote, a title's part


def _whole(result: engine.Result, how: dict) -> bool:
    """Whether a result fits all of the message (a generic fit is only ever a whole one)."""
    fits = tuple(how[k] for k in (*QUOTE_FITS, "generic"))
    return result.match == "exact" or result.how.startswith(fits)


# What a quote leaves out of a message it is all of: the first sentence's full stop, or the
# value after its colon ('I got a "Capture CUDA graph failed" error')
VALUE = "x"
QUOTE_ENDS = (".", ": " + VALUE)


def _quoted_whole(site: Site, quote: str, record: str, key: str | None) -> bool:
    """Whether a quote that fits a message's start is all of its first sentence, or all of
    its text before the value after a colon: with that end put back, the same record is
    the message or its first sentence exactly, or its first value takes the one put back."""
    for end in QUOTE_ENDS:
        results = engine.search(site.index, quote + end, engine=key)
        best = results[0] if results else None
        if not best or best.id != record or best.tied or best.match not in FITS:
            continue
        if _whole(best, site.index.context().how) or (
            end != "." and list(best.values.values())[:1] == [VALUE]
        ):
            return True
    return False


def _goes_on(site: Site, text: str, result: engine.Result, key: str | None) -> bool:
    """Whether the user's words go on after the message a text holds whole: it fits the same
    way without its last word."""
    words = text.split()
    results = engine.search(site.index, " ".join(words[:-1]), engine=key) if len(words) > 1 else []
    return bool(results and results[0].id == result.id and results[0].how == result.how)


TITLED = ("title", "quote", "span")  # candidates a user typed or cut: a title, a quote


def _named_apart(text: str, best: engine.Result, other: engine.Result) -> bool:
    """Whether the text names the best result's exception ("torch.OutOfMemoryError: CUDA
    out of memory."), and the other is of another: no rival for it."""
    return other.exception != best.exception and bool(
        re.search(rf"(?<![\w.]){re.escape(best.exception)}:", text)
    )


def _closed_past(query: str, result: engine.Result) -> bool:
    """Whether a fit of a message's start ends in a quoted value that holds its closing
    quote mark and words after it: the value closed there, and what follows is none of the
    message's ("think_end_token '</think>' must encode to ..." is no cut "think_end_token
    '{}' could not be encoded ..."; the value ran on only because the paste ended)."""
    for value in result.values.values():
        if not value.strip() or not query.rstrip().endswith(value.rstrip()):
            continue
        at = query.rfind(value)
        mark = query[at - 1 : at] if at > 0 else ""
        if mark in ("'", '"', "`") and re.search(re.escape(mark) + r"\s+\w", value):
            return True
    return False


def _query(block: engine.Block) -> str:
    """A message block as a paste of its own: its exception or log level named, as it was
    pasted."""
    if block.source:
        return block.text
    if not block.exception:
        # A log line with its level, which names the record of a logger's line of that
        # level apart from an exception's of the same text ("WARNING ... Unknown vLLM
        # environment variable detected: X" is no ValueError)
        return f"{block.level} {block.text}" if block.level else block.text
    return f"{block.exception}: {block.text}"


def _sure(
    site: Site,
    query: str,
    tiers: tuple[str, ...],
    named: set[str],
    key: str | None,
    kind: str = "code",
    releases: dict[str, str] | None = None,
):
    """The record a message is, when search is sure of it: its best result is an exact
    or partial match and no other fits as well (a quote in a sentence: the message, or
    its first sentence, exactly). Of a message two projects print, the copy of the engine
    `key` (the issue's repository), else of the project the body names; in an engine's
    repository, never a message only another engine prints. `releases`: those the issue
    names anywhere, which a line read apart does not say (two records of one text, the
    one that release printed)."""
    results = engine.search(site.index, query, engine=key, releases=releases)
    if not results or results[0].tied:
        return None
    how = site.index.context().how
    if (
        results[0].match not in tiers
        and not (kind == "title" and _retitled(results, query))
        and not ("partial" in tiers and _raised_generic(results, query, how))  # --min exact: never
    ):
        return None
    best = results[0]
    if kind in QUOTES and not _whole(best, how) and not _quoted_whole(site, query, best.id, key):
        return None
    if best.how.startswith(how["prefix"]) and _closed_past(query, best):
        return None
    if (
        kind in TITLED
        and _fits(best, how)
        and best.how.startswith(how["message"])
        and any(
            r.id != best.id
            and r.match in FITS
            and r.how.startswith(how["prefix"])
            and r.exception == best.exception
            for r in results[1:]
        )
        and _goes_on(site, query, best, key)
    ):
        # A title's whole message that other messages of its exception start with, and the
        # user's words go on after it: the user may have cut the longer one and said the rest
        # in words of their own ('"VLLM is not installed" for CompressedTensorsWNA16 quants'
        # is the start of "vllm is not installed, to use ... CompressedTensorsWNA16, please
        # install vllm"): a tie
        return None
    if best.how == how["more"] and any(
        (_fits(r, how) or (r.wrapper and r.match in FITS)) and r.exception == best.exception
        for r in results[1:]
    ):
        # The paste's message goes on past this one's, and another message of the same
        # exception fits it whole, or is a wrapper's line that a run of its words fits
        # (search ranks a wrapper's after the other errors): the text may be that one's,
        # the longer ("... on Github." and "... on Github. See stack trace above for the
        # actual cause."): a tie
        return None
    if kind == "span" and any(
        _fits(r, how)
        and (not _older(r) or (_older(best) and not _lineage(best, r)))
        and not _named_apart(query, best, r)
        for r in results[1:]
    ):
        # A part of a title that two messages start alike: a tie; but of today's message and
        # a check no longer printed, today's. Two checks no longer printed are a tie ("Task
        # finished unexpectedly" starts two removed messages, printed by two functions),
        # unless both are older wordings of one check printed today: its page answers
        return None
    programs = site.index.meta.get("programs", {})
    keyed = {name for name, p in programs.items() if key and p.get("key") == key}
    if best.project in keyed or (not keyed and best.project in named):
        return best
    for twin in best.also:
        if twin["project"] in keyed:
            lead = engine.Result(**{**best.__dict__, "also": []})
            lead.id, lead.project = twin["id"], twin["project"]
            return lead
    if keyed and programs.get(best.project, {}).get("engine"):
        # Another engine's own message, in this engine's repository: its page answers for
        # the other engine (its settings, its fix), never for this one's user ("Cannot use
        # chat template functions ..." is on a vLLM page; an SGLang issue is no vLLM one)
        return None
    # The same message printed by two projects: the one the issue is about.
    for twin in best.also:
        if twin["project"] in named:
            lead = engine.Result(**{**best.__dict__, "also": []})
            lead.id, lead.project = twin["id"], twin["project"]
            return lead
    return best

"""Tier-1 search, the query side: which record's template a pasted error fits, and with
which values. It reads only the index that index.py (the build's side) writes: patterns made
from every record's message and variants (template.pattern: squashed literal text and typed
holes), in word shards and pages of patterns, and in index.json the rules it matches with
(rules.py's QUERY, RULES, HOW and RANKS, as the site was built with them). A reader of
another errorkb release (the issue bot, `errorkb match` on a published site) so matches by
the site's own rules; it refuses only an index of another format (VERSION).

A query is cleaned of log noise into a few message blocks, each with the readings it
allows (as pasted, rejoined where a terminal cut words, without a trailing "...", from
a tuple repr or from a traceback's raise statement). A word's shard follows from its
hash alone, so the query fetches only the shards of its own words; the patterns sharing
its rarest (heaviest) words become candidates, the best few are fetched, verified
against the readings and their values extracted. A result is exact (the message fits
its template, each value of its placeholder's type), partial (a prefix, a first
sentence, other letter case, a tuple, a raise line), generic (a template with little
text of its own, or a fit only with values unlike their placeholders') or similar
(shared rare words).

templates/assets/match.js is the same algorithm in the browser: its functions have the
same names (in snake case here) and come in the same order, so the two read side by side;
tests/js runs it against this one on tests/search_cases.json and the corpus. Standard
library only: the issue bot's Action installs errorkb without its dependencies.
"""

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from errorkb import urls
from errorkb.content import template

# The index's format: what its files hold and how the matcher reads them. A reader refuses
# another; bump it with any change it would misread. (The rules the index carries are no
# part of it: a reader matches by the index's own.)
VERSION = 3
PAGE = 8  # patterns per file: a candidate costs a file of this many (the writer's; index.json says)

squash = template.squash
words = template.words

_LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"
_FOLDS = {
    "case": str.maketrans(*_LOWER),
    "quotes": str.maketrans(_LOWER[0] + '"`', _LOWER[1] + "''"),
}


def fold(text: str, how: str) -> str:
    """ASCII letters in lower case, and ("quotes") every quote mark as ': the same length,
    so positions carry over."""
    return text.translate(_FOLDS[how])


QUOTES = "'\"`"


def alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


class Rules:
    """The index's rules (its "rules": regular expressions that Python, with re.ASCII, and
    JavaScript read alike), compiled."""

    def __init__(self, rules: dict[str, Any]):
        def rx(key: str) -> re.Pattern:
            return re.compile(rules[key], re.ASCII)

        self.source = rules  # as the index has them

        self.prefix = rx("prefix")
        self.emphasis = rx("emphasis")
        self.line_mark = rx("line_mark")
        self.loose_mark = rx("loose_mark")
        self.flat_traceback = rx("flat_traceback")
        self.flat_frame = rx("flat_frame")
        self.box = re.compile(rules["box"])
        self.exception = rx("exception")
        self.noise = rx("noise")
        self.pydantic = rx("pydantic")
        self.rank_suffix = rx("rank_suffix")
        self.escape = rx("escape")
        self.version: str = rules["version"]  # after a project's name (said_releases)
        self.quoted = rx("quoted")
        self.raise_ = rx("raise")
        self.literal_line = rx("literal_line")
        self.literal = rx("literal")
        self.tuple = rx("tuple")
        self.tuple_item = rx("tuple_item")
        self.ellipsis = rx("ellipsis")
        self.quoted_message = rx("quoted_message")
        self.json_value = rx("json_value")
        self.named_exception = rx("named_exception")
        types = rules["types"].items()
        self.whole = {k: re.compile(f"(?:{v})$", re.ASCII) for k, v in types}
        self.leading = {k: re.compile(f"(?:{v})", re.ASCII) for k, v in types}


def compile(rules: dict[str, Any]) -> Rules:  # noqa: A001 (match.js's name)
    return Rules(rules)


@dataclass
class Context:
    """What a search reads from the index besides its words and patterns (match.js's ctx):
    the index's settings, its rules compiled, the settings of a query (`query`) and the
    words that say how a result matched (`how`), and its tiers of results (`ranks`)."""

    meta: dict
    rules: Rules
    settings: dict[str, Any]
    how: dict[str, str]
    ranks: dict[str, float]


def context(meta: dict) -> Context:
    """The context of an index's settings (index.json, or rules.carried() alone)."""
    return Context(meta, compile(meta["rules"]), meta["query"], meta["how"], meta["ranks"])


# --- search.clean ------------------------------------------------------------------------

TRACEBACK = "Traceback (most recent call last):"


def prefix_of(rules: Rules, line: str) -> str:
    """The log prefixes a line starts with ("" when none)."""
    match = rules.prefix.match(line)
    assert match is not None  # `(...)*`: it matches at the start of every line
    return match[0]


def exception_of(rules: Rules, line: str) -> tuple[str | None, str]:
    m = rules.exception.match(line)
    if not m:
        return None, line
    name, message = m.group(1), line[m.end() :]
    # str(KeyError(x)) is repr(x): the message arrives quoted.
    if name.endswith("KeyError") and len(message) > 1 and message[0] == message[-1] in "'\"":
        message = message[1:-1]
    return name, message


@dataclass
class Form:
    """A reading of a message block: `message` as is (exact when it fits), `glued` where a
    terminal cut words at its width, `cut` without its "...", `tuple` from a tuple repr,
    `source` from a traceback's raise statement, `quoted` a span in quotes or backticks, or
    what follows an exception's name within a line of prose."""

    text: str
    kind: str


@dataclass
class Block:
    """A message as found in a paste: its lines joined, with the exception it was raised as."""

    exception: str | None
    starts: bool  # begins at an exception line, a pydantic error or a raise: a message for sure
    lines: list[str] = field(default_factory=list)
    size: int = 0
    raws: list[str] = field(default_factory=list)  # the lines as pasted, but for log prefixes
    source: bool = False  # a raise statement of a traceback
    forms: list[Form] = field(default_factory=list)
    beside: bool = False  # no exception's, read beside those that are: its fits rank after
    # The log level its first line names ("WARNING 08-19 18:30:11 [envs.py:2128] ..."): it
    # names a record of a logger's line of that level, as an exception's name names one
    level: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.lines)


@dataclass
class Result:
    id: str
    title: str
    exception: str
    project: str
    summary: str
    match: str  # a tier: exact, partial, generic or similar
    how: str  # what of the template the paste matched, in words
    values: dict[str, str]
    wording: str = ""  # the paste is in an old wording: which releases printed it
    # Exact, and so is another result that ranks alike but for its place in the source:
    # a tie (the same text printed by two records), which source order ranks.
    tied: bool = False
    # The same message printed by another project's copy of the code: {id, project, url}
    also: list[dict] = field(default_factory=list)
    # A stack record's: the engine the paste points at, whose advice its page shows first
    engine: str = ""
    # Of an old wording: the check printed today that took over ({id, title}), else the
    # release that no longer prints the check; the page answers with either
    today: dict | None = None
    upgrade: str = ""
    # The release the paste names of the result's project: its page opens on its wording
    release: str = ""
    # The wrapper's line the paste shows after this error ("Engine core initialization
    # failed. See root cause above"): {id, title, url}, named as its follow-on
    followed_by: dict | None = None
    # A wrapper's line itself (a wing's wrappers()): it only says an error happened above
    wrapper: bool = False
    # The message's template, {name} for each value (as its pattern holds it)
    message: str = ""

    @property
    def exact(self) -> bool:
        return self.match == "exact"

    @property
    def url(self) -> str:
        return urls.error_with_values(self.id, self.values, self.engine, self.release)

    def to_json(self) -> dict:  # the template is the page's to show, not the result's
        shown = {k: v for k, v in self.__dict__.items() if k != "message"}
        return {**shown, "exact": self.exact, "url": self.url}


def add(block: Block, line: str, raw: str, settings: dict) -> None:
    if block.size < settings["block_chars"]:
        block.lines.append(line)
        block.raws.append(raw)
        block.size += len(line) + 1


def unflatten(rules: Rules, line: str) -> list[str]:
    """The lines a pasted line ran together (the rules' "line_mark", "flat_traceback" and
    "flat_frame"): a log whose line breaks a GitHub title or a chat window lost."""
    start = len(prefix_of(rules, line))
    marks = [m for m in rules.line_mark.finditer(line) if m.start() > start]
    groups = paren_groups(line) if marks else Counter()
    cuts = [
        m.start() for m in marks if not rules.loose_mark.fullmatch(m[0]) or groups[m[0].strip()] > 1
    ]
    pieces = [line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]
    out: list[str] = []
    for piece in pieces:
        at = len(prefix_of(rules, piece))
        for part in split_at(
            piece, [m for m in rules.flat_traceback.finditer(piece) if m.start() > at]
        ):
            frame = rules.flat_frame.match(part)
            out += [frame[1], frame[2]] if frame and part.startswith(" ") else [part]
    return out


def paren_groups(line: str) -> Counter[str]:
    """How many times each innermost group "(...)" occurs in the line. A loose mark is one
    ("(Worker pid=12)": no parens inside), so this counts its repeats as line.count(mark)
    does, in one pass for all marks: a count per mark is quadratic on a line of marks."""
    return Counter(re.findall(r"\([^()]*\)", line))


def split_at(text: str, spaces: list[re.Match]) -> list[str]:
    """The text cut where each run of spaces is; a frame's line keeps a frame's indent."""
    parts, last = [], 0
    for m in spaces:
        parts.append(text[last : m.start()])
        last = m.end()
    parts.append(text[last:])
    return [parts[0], *("  " + p if p.startswith("File ") else p for p in parts[1:])]


def clean(text: str, rules: Rules, settings: dict) -> list[Block]:
    """The message blocks of a paste, log noise removed; the last few, exception lines first."""
    blocks: list[Block] = []
    current: Block | None = None
    held: Block | None = None  # an exception's message a blank line may have parted
    in_traceback = False
    last_prefix = None
    last = settings["lines"]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[-last:]
    for raw in [piece for line in lines for piece in unflatten(rules, line)][-last:]:
        raw = rules.box.sub(" ", raw)
        prefix = prefix_of(rules, raw)
        rest = raw[len(prefix) :]
        line = rules.emphasis.sub("", template.squash(rest))
        if current and current.source and rules.literal_line.match(line):
            add(current, line, rest, settings)  # the raise statement goes on
            continue
        if rules.raise_.match(line):
            current = Block(None, True, source=True)
            blocks.append(current)
            add(current, line, rest, settings)
            continue
        if in_traceback and rest[:1] in (" ", "\t"):
            continue  # a frame of the traceback: File "...", its code line, ^^^^ markers
        in_traceback = False
        line = rules.escape.sub(lambda m: m[1] or " ", line)
        exception, line = exception_of(rules, line)
        if not line or rules.noise.fullmatch(line):
            in_traceback = line.startswith(TRACEBACK[:-1])
            # Paragraphs of one message ("401 Client Error. ...\n\nRepository Not Found
            # for url: ...") part at a blank line; anything else ends the message.
            held = current if not line and current and current.starts else None
            current = None
            last_prefix = prefix or last_prefix
            continue
        line = rules.rank_suffix.sub("", line)
        wrapped = rules.pydantic.match(line)
        line = wrapped.group(1) if wrapped else line
        if current is None and held and not exception and not (prefix and prefix != last_prefix):
            current = held
        held = None
        # A line goes on the message above unless it starts a message or another log record.
        if (
            exception
            or wrapped
            or current is None
            or current.source
            or (prefix and (prefix != last_prefix or anew(prefix, current, line)))
        ):
            current = Block(exception, bool(exception or wrapped), level=level_of(settings, raw))
            blocks.append(current)
        add(current, line, rest, settings)
        last_prefix = prefix or last_prefix
    # A raise statement whose message is not on its first lines (raise X(\n) has none; but
    # one a paste ran on into the exception's line (its line breaks lost) is read as prose.
    kept = []
    for b in blocks:
        statement = b.text[: settings["block_chars"]]
        if b.source and ran_on(rules, statement):
            b.source = b.starts = False
        elif b.source and not source_text(rules, statement):
            continue
        kept.append(b)
    blocks = kept
    starting = [b for b in blocks if b.starts]
    chosen: dict[str, Block] = {}
    for block in (starting or blocks)[-settings["blocks"] :]:
        chosen.setdefault(block.text[: settings["block_chars"]], block)
    beside = [b for b in blocks if not b.starts and not b.source] if starting else []
    for block in beside[-settings["beside"] :]:
        block.beside = True
        chosen.setdefault(block.text[: settings["block_chars"]], block)
    return [with_forms(rules, settings, b, t) for t, b in chosen.items()]


STAMP = re.compile(r"[0-9]{2}:[0-9]{2}:[0-9]{2}")
ENDED = re.compile(r"[.!?]\s*$")


def anew(prefix: str, current: Block | None, line: str) -> bool:
    """Whether a line under the same log prefix as the line above starts a record of its
    own: the prefix holds a time (a logger's record header, not "[rank0]: "), the line above
    ended a sentence and this one opens with a capital: two records of one second (SGLang's
    warning, then its error, under "[2025-10-15 11:03:35 DP6 TP6 EP6]"). vLLM's logger puts
    its header on every line of one record, whose second line goes on the first's sentence."""
    last = current.raws[-1] if current and current.raws else ""
    return bool(STAMP.search(prefix) and ENDED.search(last) and re.match("[A-Z]", line))


def level_of(settings: dict, raw: str) -> str:
    """The log level a line names as a word of its own, in capitals (its log prefix's, or
    one the prefix rules do not know: a systemd journal's "... vllm[87]: WARNING 08-19 ..."),
    or ""."""
    m = re.search(r"\b(" + "|".join(settings["levels"]) + r")\b", raw, re.ASCII)
    return m[1] if m else ""


def with_forms(rules: Rules, settings: dict, block: Block, text: str) -> Block:
    """The block as one line of text, with the readings it allows."""
    out = Block(block.exception, block.starts, [text], source=block.source, beside=block.beside)
    out.level = block.level
    if block.source:
        kind = "statement" if whole_statement(rules, text) else "source"
        out.forms = [Form(source_text(rules, text), kind)]
        return out
    # A string literal quoted from the code, its holes unfilled (a title quoting a source
    # line: '"{} is not divisible by {}".format'): the template's whole text, spelled by
    # the code, as a whole raise statement is: the first reading (as a
    # message, its holes would fit only loosely)
    for q in rules.quoted_message.finditer(text):
        inner = q[1].strip(" ")
        if q[0][-1:] in QUOTES and re.search(FORMAT_HOLE, inner, re.ASCII):
            code = template.squash(re.sub(FORMAT_HOLE, "{}", inner, flags=re.ASCII))
            if len(template.words(code)) >= settings["partial_words"]:
                out.forms.append(Form(code, "code"))
    stripped = rules.ellipsis.sub("", text)
    out.forms.append(Form(text, "message" if stripped == text else "whole"))
    joined = glued(block.raws, settings)
    if joined:
        out.forms.append(Form(joined[: settings["block_chars"]], "glued"))
    if stripped != text and stripped:
        out.forms.append(Form(stripped, "cut"))
    if rules.tuple.match(text):
        out.forms.append(Form(tuple_text(rules, text), "tuple"))
    # (A span of one token in quotes is a value, `tensor_parallel_size`: no message.)
    inners = [
        q[1].strip(" ") for q in rules.quoted_message.finditer(text) if " " in q[1].strip(" ")
    ]
    inners += [j[1].strip(" ") for j in rules.json_value.finditer(text) if " " in j[1].strip(" ")]
    # In a line that opens with no exception (a title, prose), the message after the last
    # exception it names
    named = [m for m in rules.named_exception.finditer(text) if m.start() > 0]
    if block.exception is None and named:
        inners.append(text[named[-1].end() :].strip(" "))
    for inner in inners:
        if inner != text and len(template.words(inner)) >= settings["partial_words"]:
            out.forms.append(Form(inner, "quoted"))
    return out


# A hole of a format string as the code spells it: {}, {name}, {0!r:>4}, %s, %d, %.2f
FORMAT_HOLE = (
    r"\{(?:[A-Za-z_][\w.]*|[0-9]*)(?:![rsa])?(?::[^{}]*)?\}"
    r"|%(?:\(\w+\))?[-#0+]*[0-9]*(?:\.[0-9]+)?[sdrfgexi](?![A-Za-z0-9_])"
)


def glued(raws: list[str], settings: dict) -> str | None:
    """The lines a terminal wrapped at its width, joined without a space where a line
    fills the width (the cut may fall inside a word), or None when none does."""
    width = max((len(raw) for raw in raws[:-1]), default=0)
    if width < settings["wrap_width"]:
        return None
    joined = "".join(raw if len(raw) == width else raw + " " for raw in raws[:-1])
    return template.squash(joined + raws[-1])


def unescape(body: str) -> str:
    """A string literal's escapes, as far as a message shows them."""
    return re.sub(r"\\(.)", lambda m: " " if m[1] in "nrt" else m[1], body)


def source_text(rules: Rules, statement: str) -> str:
    """The message a raise statement's string literals spell, joined as Python joins
    adjacent literals; what comes between them (+ str(x) +) is a value: {}."""
    raise_ = rules.raise_.match(statement)
    assert raise_ is not None, "only blocks that are raise statements reach here"
    out, end = [], raise_.end()
    for m in rules.literal.finditer(statement, end):
        if re.search(r"[A-Za-z0-9_]", statement[end : m.start()]):
            out.append("{}")
        body = unescape(m[3])
        # An f-string's expressions are values, whose names are no words of the message.
        out.append(re.sub(r"\{[^{}]*\}", "{}", body) if "f" in m[1].lower() else body)
        end = m.end()
    return template.squash("".join(out))


def ran_on(rules: Rules, statement: str) -> bool:
    """Whether a raise line is one a paste ran on into the exception's line, its line breaks
    lost ("raise RuntimeError( RuntimeError: Cannot ..."): an exception is named in it
    before any string literal of the call."""
    raise_ = rules.raise_.match(statement)
    start = raise_.end() if raise_ else 0
    named = rules.named_exception.search(statement, start)
    literal = rules.literal.search(statement, start)
    return bool(named and (not literal or named.start() < literal.start()))


def whole_statement(rules: Rules, statement: str) -> bool:
    """Whether the raise statement shows its whole message: its last string literal closes,
    and so does the call (raise ValueError(f"...: {x}.{y}")). Its text is then all of the
    template, never the start of a longer one."""
    raise_ = rules.raise_.match(statement)
    found = list(rules.literal.finditer(statement, raise_.end() if raise_ else 0))
    if not found:
        return False
    last = found[-1]
    closed = len(last[0]) > len(last[1]) + 1 and last[0].endswith(last[2])
    return closed and statement[last.end() :].strip(" ") == ")"


def tuple_text(rules: Rules, text: str) -> str:
    """The arguments of a multi-argument exception's tuple repr, joined with spaces."""
    items = [m[1] or m[2] or m[3] or "" for m in rules.tuple_item.finditer(text[1:])]
    joined = template.squash(" ".join(unescape(item) for item in items))
    return rules.ellipsis.sub("", joined)


def leads_of(settings: dict, text: str) -> list[str]:
    """The first two words of a text and of what follows each of its first colons (where a
    wrapper puts the message it caught), and its first three, as lead keys."""
    starts = [0, *(m.end() for m in itertools.islice(re.finditer(": ", text), settings["leads"]))]
    keys = []
    for start in starts:
        first = template.words(text[start : start + settings["lead_chars"]])
        keys += [" ".join(first[:n]) for n in (2, 3) if len(first) >= n]
    return keys


HOLE = "{} "  # the head of a key of a template's words after its opening value (rules.after_holes)


def holes_of(settings: dict, text: str) -> list[str]:
    """Keys of the words after a text's first token (a value's: "tensor_parallel_size=16",
    "'gpt2'", "[3]"), at its start and after each of its first colons, as leads_of reads:
    a template that opens with a value ("{name}={rank} is outside [0, {size})") is listed
    under its first two and three words after it ("{} is outside"). The value's own words
    are no template's, and the words a paste shares with other templates crowd such a
    template out of the candidates: this is its own way in."""
    starts = [0, *(m.end() for m in itertools.islice(re.finditer(": ", text), settings["leads"]))]
    keys = []
    for start in starts:
        head = text[start : start + settings["lead_chars"]]
        after = template.words(head[token_len(head)[0] :])
        keys += [HOLE + " ".join(after[:n]) for n in (2, 3) if len(after) >= n]
    return keys


def hole_keys(blocks: list[Block], settings: dict) -> list[str]:
    """The keys of the words after each message's opening value (holes_of), the errors'
    before those of the lines beside them, the first few (settings["hole_keys"]: none when
    the index predates them)."""
    keys = dict.fromkeys(
        key
        for b in sorted(blocks, key=lambda b: b.beside)
        for f in b.forms
        for key in holes_of(settings, f.text)
    )
    return list(keys)[: settings.get("hole_keys", 0)]


def query_words(
    blocks: list[Block], settings: dict, quoted: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    """The words whose shards a query fetches: the longest first, as they tend to be rarest
    (a line's beside the errors after theirs, and those seen only in quotes or brackets,
    `quoted`, after the others: values, a path's or a hash's pieces, crowd out the message's
    own words); then the keys of the two words a message may start with (lead)."""
    found: dict[str, bool] = {}
    for b in blocks:
        for f in b.forms:
            for w in template.words(f.text):
                found[w] = found.get(w, True) and b.beside
    leads = dict.fromkeys(
        key
        for b in sorted(blocks, key=lambda b: b.beside)
        for f in b.forms
        for key in leads_of(settings, f.text)
    )
    few = sorted(found, key=lambda w: (found[w], w in quoted, -len(w), w))[: settings["words"]]
    if len(few) > settings["words"] // 2:
        return few + list(leads)[: settings["lead_keys"]]
    # A short paste (an issue title) leaves keys unfetched: its pairs of words, in order, as
    # lead keys too (a message quoted among other words starts at one of them); not of a
    # message for sure (an exception's): that one starts where its text does
    runs = [template.words(f.text) for blk in blocks if not blk.starts for f in blk.forms]
    pairs = (f"{a} {b}" for ws in runs for a, b in itertools.pairwise(ws))
    leads.update(dict.fromkeys(pairs))
    # ...then its runs of three (probes: a template's first three words are a lead key too)
    leads.update(dict.fromkeys(probes(blocks, settings)))
    return few + list(leads)[: settings["lead_keys"] + settings["words"] - len(few)]


def probes(blocks: list[Block], settings: dict) -> list[str]:
    """A short paste's runs of three words (not of a message for sure), as lead keys that
    only find the templates they open (opened): scored as words, a title's common runs
    ("is not divisible") would crowd out the candidates its rarer words find."""
    runs = [template.words(f.text) for blk in blocks if not blk.starts for f in blk.forms]
    own = {key for b in blocks for f in b.forms for key in leads_of(settings, f.text)}
    found = (" ".join(ws[n : n + 3]) for ws in runs for n in range(len(ws) - 2))
    return [key for key in dict.fromkeys(found) if key not in own]


def candidates(
    scores: dict[int, int],
    full: dict[int, int],
    settings: dict,
    order: Callable,
    opened: dict | None = None,
    held: dict | None = None,
) -> list[int]:
    """The best patterns with quoted words cut, then the best few in full not among them,
    then the few whose opening words the paste holds in a row the most (lead keys), not
    among them, then the few that open with a value whose words after it the paste holds
    after its own first token the most (`held`, hole_keys), not among them; of those that
    score alike, the patterns of the project `order` puts first."""

    def best(table: dict[int, int]) -> list[int]:
        return sorted(table, key=lambda pid: (-table[pid], order(pid), pid))

    top = best(scores)[: settings["candidates"]]
    top += [pid for pid in best(full) if pid not in top][: settings["hedge"]]
    top += [pid for pid in best(opened or {}) if pid not in top][: settings["openings"]]
    return top + [pid for pid in best(held or {}) if pid not in top][: settings.get("holes", 0)]


QUOTED_MESSAGE = 5  # words of a span in double quotes or backticks that make it a message


def quoted_words(blocks: list[Block], rules: Rules) -> set[str]:
    """The words a paste has only in quotes or brackets: most likely values, which share
    rare words with other templates ("one of ['mp', 'ray']") and so weigh less; and those
    only the lines beside its errors have (Block.beside): the errors' own words lead."""
    inside = {
        w for b in blocks for m in rules.quoted.finditer(b.text) for w in template.words(m[0])
    }
    quoted = inside - {w for b in blocks for w in template.words(rules.quoted.sub(" ", b.text))}
    # (A span of words in double quotes or backticks is a message quoted in prose, no value.)
    quoted -= {
        w
        for b in blocks
        for m in rules.quoted_message.finditer(b.text)
        if len(template.words(m[1])) >= QUOTED_MESSAGE
        for w in template.words(m[1])
    }
    seen = [{w for f in b.forms for w in template.words(f.text)} for b in blocks]
    beside = set().union(*(ws for b, ws in zip(blocks, seen, strict=True) if b.beside))
    errors = set().union(*(ws for b, ws in zip(blocks, seen, strict=True) if not b.beside))
    return quoted | (beside - errors)


CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def token_len(text: str) -> tuple[int, bool]:
    """How far an untyped value runs from the start of text: to the first space outside
    quotes and brackets that follows no comma (one token, 'a quoted string', a [list] or
    `a, b, c`, never a phrase of words); and whether it closes every group it opens."""
    stack: list[str] = []  # the closers awaited
    for i, ch in enumerate(text):
        if stack and stack[-1] in "'\"":
            if ch == stack[-1]:
                stack.pop()
        elif ch in "'\"" and not (i and alnum(text[i - 1])):
            stack.append(ch)
        elif ch in CLOSERS:
            stack.append(CLOSERS[ch])
        elif ch in ")]}":
            if not stack or stack[-1] != ch:
                return i, False
            stack.pop()
        elif ch == ">" and stack and stack[-1] == ">":
            stack.pop()
        elif ch == " " and not stack and not (i and text[i - 1] == ","):
            return i, True
    return len(text), not stack


def valid(rules: Rules, kind: str, value: str, cut: bool = False) -> bool:
    """Whether a hole of this kind holds the value (a cut one: the start of a value)."""
    if kind == "text":
        return True
    if kind in rules.whole:
        return bool(rules.whole[kind].match(value))
    length, closed = token_len(value)
    return value != "" and length == len(value) and (closed or cut)


def verify(ctx: Context, pat: template.Pattern, text: str, typed: bool = True, cut: bool = False):
    """The hole values with which the pattern spells the text, or None.

    Holes take the shortest value that lets the rest fit, as a lazy regular
    expression would, within a step budget. Text before the pattern's first literal
    is allowed (a prefix the cleaning missed), and so is text after its end, though
    a fit that ends where the text ends is preferred: "Layer: {prefix}." takes all
    of "Layer: model.embed_tokens.". Untyped (typed=False), a hole takes any text.
    Cut, the text may end anywhere in the pattern, even inside a value.
    """
    fit = fit_of(ctx.rules, ctx.settings, pat, text, typed, cut)
    return fit and fit.values


def fit_of(
    rules: Rules,
    settings: dict,
    pat: template.Pattern,
    text: str,
    strict: bool,
    cut: bool,
    folded: str = "",
):
    """The fit of the text to the pattern (with `stop`, where a cut text ended), or None.
    Folded ("case"), letter case is ignored, and ("quotes") quote marks too; the values
    keep the paste's own."""
    seen = fold(text, folded) if folded else text
    segs = [fold(seg, folded) if isinstance(seg, str) else seg for seg in pat] if folded else pat
    for anchored in (True,) if cut else (True, False):
        fit = Fit(rules, settings, segs, seen, strict, anchored, cut, inner=not folded)
        if fit.at(0, 0):
            fit.values = {name: text[a:b] for name, (a, b) in fit.spans.items()}
            return fit
    return None


LED_IN = re.compile(r"[:\]] ")  # where a wrapper's words before a message end


class Fit:
    def __init__(
        self,
        rules: Rules,
        settings: dict,
        pat,
        text: str,
        strict: bool,
        anchored: bool,
        cut: bool,
        inner: bool,
    ):
        self.rules = rules
        self.pat = pat
        self.kinds = ["" if isinstance(seg, str) else seg[1] if strict else "text" for seg in pat]
        self.text = text
        self.anchored = anchored
        self.cut = cut
        self.inner = inner  # a cut text may end in a message after a colon (cut_first)
        self.budget = settings["budget"]
        self.spans: dict[str, tuple[int, int]] = {}
        self.values: dict[str, str] = {}
        self.stop: tuple[int, int] | None = None  # (segment, its characters read) of a cut
        self.start = 0  # where the text's fit begins (the pattern's first literal)
        self.end = 0  # where it ends (before text after it, when that is allowed)

    def at(self, i: int, pos: int) -> bool:
        """Whether segments i... fit the text from pos on."""
        pat, text = self.pat, self.text
        if i == len(pat):
            self.end = pos
            return not self.anchored or pos == len(text)
        if self.cut and i > 0 and pos == len(text):
            return self.stopped(i, 0)
        seg = pat[i]
        if isinstance(seg, str):
            if i > 0:
                if text.startswith(seg, pos):
                    return self.at(i + 1, pos + len(seg))
                return self.cut and seg.startswith(text[pos:]) and self.stopped(i, len(text) - pos)
            start = text.find(seg)
            while start >= 0 and self.spend():
                if self.at(1, start + len(seg)):
                    self.start = start
                    return True
                start = text.find(seg, start + 1)
            return self.cut and self.cut_first(seg)
        if i == 0 and self.kinds[0] not in ("", "text") and not self.cut:
            # A template that opens with a typed value: a wrapper's or a log's words the
            # cleaning missed may come before it, as before a first literal, ending where
            # a wrapper ends its own ("...: ", "...] ")
            for start in [0, *(m.end() for m in LED_IN.finditer(text))]:
                if self.spend() and self.hole(i, start):
                    self.start = start
                    return True
            return False
        return self.hole(i, pos)

    def hole(self, i: int, pos: int) -> bool:
        """Whether segments i... fit the text from pos on, segment i a hole."""
        pat, text, seg = self.pat, self.text, self.pat[i]
        if i + 1 == len(pat):
            return self.take(seg[0], pos, self.final_end(self.kinds[i], pos))
        nxt = pat[i + 1]
        end = pos
        while end <= len(text) and self.spend():
            if isinstance(nxt, str):
                end = text.find(nxt, end)
                if end < 0:
                    break
            value = text[pos:end]
            if (valid(self.rules, self.kinds[i], value) or self.empty(i, value)) and self.at(
                i + 1, end
            ):
                return self.take(seg[0], pos, end)
            end += 1
        return self.cut and self.cut_hole(i, pos)

    def empty(self, i: int, value: str) -> bool:
        """An untyped value the program printed empty ("Unknown quantization method: . Must
        be one of ..." of ""), between two literals of the template's own."""
        kind, pat = self.kinds[i], self.pat
        return (
            value == ""
            and kind != "text"
            and kind not in self.rules.whole
            and 0 < i < len(pat) - 1
            and isinstance(pat[i - 1], str)
            and isinstance(pat[i + 1], str)
        )

    def cut_first(self, seg: str) -> bool:
        """A cut text ends in the pattern's first literal, from its start or after a colon
        (a wrapper's "Exception in worker ...: " before a cut message), but not when folded:
        any colon then a few words in lower case would do."""
        text = self.text
        start = text.find(seg[0], max(0, len(text) - len(seg)))
        while start >= 0 and not (
            (start == 0 or (self.inner and text.endswith(": ", 0, start)))
            and seg.startswith(text[start:])
        ):
            start = text.find(seg[0], start + 1)
        return start >= 0 and self.stopped(0, len(text) - start)

    def cut_hole(self, i: int, pos: int) -> bool:
        """A cut text ends in this hole, or in the literal after it."""
        text, nxt = self.text, self.pat[i + 1]
        tail = len(nxt) if isinstance(nxt, str) else 0
        for end in range(max(pos + 1, len(text) - tail + 1), len(text) + 1):
            fits = not isinstance(nxt, str) or nxt.startswith(text[end:])
            if (
                fits
                and valid(self.rules, self.kinds[i], text[pos:end], True)
                and self.at(i + 1, end)
            ):
                return self.take(self.pat[i][0], pos, end)
        return False

    def final_end(self, kind: str, pos: int) -> int | None:
        """Where a final hole ends: at the text's end, or when trailing text is allowed,
        after the longest start of the rest that has the hole's type."""
        rest = self.text[pos:]
        if self.anchored:
            return len(self.text) if valid(self.rules, kind, rest, self.cut) else None
        if kind == "text":
            return len(self.text)
        if kind in self.rules.leading:
            m = self.rules.leading[kind].match(rest)
            return pos + len(m.group()) if m else None
        length, closed = token_len(rest)
        return pos + length if length and closed else None

    def stopped(self, i: int, read: int) -> bool:
        self.stop = (i, read)
        return True

    def take(self, name: str, start: int, end: int | None) -> bool:
        # Set on the way back from a fit, so a placeholder used twice keeps its first value.
        if end is not None:
            self.spans[name] = (start, end)
        return end is not None

    def spend(self) -> bool:
        self.budget -= 1
        return self.budget >= 0


FITS = ("exact", "partial")  # the tiers that claim a paste is this error
# A raise statement's readings: cut short, or whole; and a string literal quoted from the code
SOURCES = ("source", "statement", "code")


def try_form(ctx: Context, pat, form: Form, generic: bool, whole_message: bool = True):
    """(tier, how, fit) of the best way the form fits the pattern, or None. Tier "loose": a
    generic fit only with values unlike its placeholders' (rate ranks it apart).
    `whole_message`: the template is a message read whole from the program's code (an
    engine's), not a stack record's first sentences of another program's text (what a paste
    adds after those is let be)."""
    rules, settings, how = ctx.rules, ctx.settings, ctx.how
    kind, text = form.kind, form.text
    if kind in SOURCES:
        # A whole statement is the template's whole text (even a generic one's: the code's
        # own words tell it apart); a statement cut short, its start
        whole = kind != "source"
        fit = None if generic and not whole else fit_of(rules, settings, pat, text, False, True)
        fit = fit if not (fit and whole and fit.stop) else None
        said = how.get("code", how["source"]) if kind == "code" else how["source"]
        return fit and partial(ctx, pat, fit, text, said, values=False)
    if kind == "tuple":
        fit = None
        if not generic:
            fit = fit_of(rules, settings, pat, text, True, False)
            fit = fit or fit_of(rules, settings, pat, text, True, True)
        return fit and partial(ctx, pat, fit, text, how["tuple"])
    whole = kind != "cut"  # a cut form only ever fits a prefix
    fit = whole and fit_of(rules, settings, pat, text, True, False)
    if fit:
        if not generic and whole_message and goes_on(pat, text, fit.end):
            return "partial", how.get("more", how["prefix"]), fit
        return ("generic", how["generic"], fit) if generic else ("exact", how[kind], fit)
    if generic or kind == "glued":
        return None
    fit = whole and fit_bare(rules, settings, pat, text)
    if fit:
        return "exact", how["bare"], fit
    # As printed, then in other letter case, then without the quotes around values (eaten by
    # Markdown) or with other quote marks (retyped).
    for folded, shape in (("", pat), ("case", pat), ("quotes", unquoted(pat))):
        fit = whole and folded and fit_of(rules, settings, shape, text, True, False, folded)
        fit = fit or (kind != "whole" and fit_of(rules, settings, shape, text, True, True, folded))
        found = fit and partial(ctx, shape, fit, text, None, folded=folded, cut=kind == "cut")
        if found:
            return found
    fit = whole and fit_of(rules, settings, pat, text, False, False)
    return fit and ("loose", how["loose"], fit)


def goes_on(pat, text: str, end: int) -> bool:
    """Whether the paste's message goes on past a template that ends a sentence (". ! ?"),
    with another sentence of its own (a capitalised word and two more), or past one that
    ends in a word, with more words of its sentence (an issue title's "... does not support
    LoRA yet" is no fit of "{} does not support LoRA", which ends there): the program printed
    more than the template holds (an older, shorter wording; Python's own message with its
    "Did you mean: ...?"), so the fit is no exact one. Only of an engine's own message
    (try_form's whole_message): a stack record holds another program's first sentences on
    purpose, and what a paste adds after those is let be."""
    rest = text[end:]
    last = pat[-1] if pat else ""
    if not isinstance(last, str):
        return False
    if last.rstrip()[-1:] in (".", "!", "?"):
        return re.match(r" [A-Z]\S* \S+ \S+", rest) is not None
    # ...or its sentence goes on with more words ("... does not support LoRA yet")
    return alnum(last[-1:]) and re.match(r" [a-z]+\b", rest, re.ASCII) is not None


NO_QUOTES = str.maketrans("", "", QUOTES)


def fit_bare(rules: Rules, settings: dict, pat: template.Pattern, text: str):
    """The fit of the text to the pattern with the quote marks of both left out (Markdown
    eats backticks, people retype quotes): the pattern's own are optional, and the values
    are the paste's, read where they stand in it. None when neither has a quote mark."""
    literal = "".join(seg for seg in pat if isinstance(seg, str))
    if not any(q in literal or q in text for q in QUOTES):
        return None
    where = [i for i, ch in enumerate(text) if ch not in QUOTES]
    bare = "".join(text[i] for i in where)
    shape = [seg.translate(NO_QUOTES) if isinstance(seg, str) else seg for seg in pat]
    fit = fit_of(rules, settings, [seg for seg in shape if seg != ""], bare, True, False)
    if fit:
        fit.values = {
            name: text[where[a] : where[b - 1] + 1] if b > a else ""
            for name, (a, b) in fit.spans.items()
        }
    return fit


def fragment(
    settings: dict, pat, blocks: list[Block], anywhere: bool = True
) -> tuple[int, list[str]]:
    """(characters, words) of a fragment: the longest run of a template's own words that a
    paste holds in a row, among any other words: at least settings["fragment_words"] of
    them, or the whole of the template's longest literal part when that has more words than
    a partial fit must show; (0, []) when there is none. Its characters are all those of the
    template's own text the paste shows in runs of a partial fit's words or more (covered):
    of two templates a paste holds runs of, the one it covers more of leads. In a message
    for sure (an exception's), only when it opens with the template's first OPENING words
    (a terminal may have cut the rest of it): another program's message that shares a few
    words with a template is no fragment of it. Issue titles and prose quote fragments
    anywhere. Not `anywhere` (a stack record's: another program's text, of common words),
    only a span the paste quotes whole ('error "an illegal memory access was encountered"
    is reported') that is such a run."""
    parts = [template.words(seg) for seg in pat if isinstance(seg, str)]
    longest = max(map(len, parts), default=0)
    first = template.words(pat[0]) if pat and isinstance(pat[0], str) else []
    opening = first[:OPENING] if len(first) >= OPENING else []
    best: list[str] = []
    most = 0
    for block in blocks:
        for form in [] if block.beside else block.forms:
            if form.kind in SOURCES or not (anywhere or form.kind == "quoted"):
                continue
            have = template.words(form.text)
            if block.starts and (not opening or have[:OPENING] != opening):
                continue
            at: dict[str, list[int]] = {}
            for n, word in enumerate(have):
                at.setdefault(word, []).append(n)
            mine: list[str] = []
            for part in parts:
                run = run_of(part, have, at)
                enough = settings["fragment_words"]
                whole = len(part) == longest > settings["partial_words"]
                if not anywhere and run != have:
                    continue
                if run and len(run) > len(mine) and (len(run) >= enough or (whole and run == part)):
                    mine = run
            if mine:
                shown = max(
                    len(" ".join(mine)), covered(parts, have, at, settings["partial_words"])
                )
                if shown > most:
                    best, most = mine, shown
    return (most, best) if best else (0, [])


def covered(parts: list[list[str]], have: list[str], at: dict[str, list[int]], least: int) -> int:
    """Characters of a template's own text (its literal parts' words) that the paste shows
    in runs of at least `least` of its words in a row, each part read from its start."""
    total = 0
    for part in parts:
        j = 0
        while j < len(part):
            k = 0
            for n in at.get(part[j], ()):
                m = 1
                while j + m < len(part) and n + m < len(have) and part[j + m] == have[n + m]:
                    m += 1
                k = max(k, m)
            if k >= least:
                total += len(" ".join(part[j : j + k]))
                j += k
            else:
                j += 1
    return total


OPENING = 4  # words a message for sure must open with as its template does to be a fragment


def run_of(part: list[str], have: list[str], at: dict[str, list[int]]) -> list[str]:
    """The longest run of part's words that have holds in a row (the first of the longest)."""
    best = (0, 0)  # (length, start in part)
    for j, word in enumerate(part):
        for n in at.get(word, ()):
            k = 1
            while j + k < len(part) and n + k < len(have) and part[j + k] == have[n + k]:
                k += 1
            if k > best[0]:
                best = (k, j)
    return part[best[1] : best[1] + best[0]]


def unquoted(pat: template.Pattern) -> template.Pattern:
    """The pattern without the quote marks around its values, which Markdown eats (`x`)."""
    out = list(pat)
    for i, seg in enumerate(pat):
        if isinstance(seg, str):
            end = len(seg) - (i + 1 < len(pat) and len(seg) > 1 and seg[-1] in QUOTES)
            out[i] = seg[int(i > 0 and end > 1 and seg[0] in QUOTES) : end]
    return out


def partial(ctx: Context, pat, fit, text: str, said: str | None, values=True, folded="", cut=False):
    """A partial fit, with what it matched, when it shows enough of the template's text."""
    i, read = fit.stop or (len(pat), 0)
    shown = "".join(seg for seg in pat[:i] if isinstance(seg, str))
    rest = ""
    if i < len(pat) and isinstance(pat[i], str):
        shown, rest = shown + pat[i][:read], pat[i][read:]
    if len(template.words(shown)) < ctx.settings["partial_words"]:
        return None
    how = said
    if how is None:
        how = cut_how(ctx.how, pat, fit.stop, text, rest, cut) + (ctx.how[folded] if folded else "")
    if not values:
        fit.values = {}
    return "partial", how, fit


def cut_how(how: dict, pat, stop, text: str, rest: str, cut: bool) -> str:
    if stop is None:
        return how["message"]
    last = stop[0] >= len(pat) - 1
    if not cut and last and re.fullmatch(r"[.!?,;:]+", rest):
        return how["punctuation"]
    if not cut and text[-1:] in ".!?" and (rest[:1] == " " or not rest):
        return how["sentence"]
    return how["prefix"]


def cut_short(pat, stop) -> bool:
    """Whether a fit stops before its template's end: more than its closing punctuation is
    left (a paste of all of a message but its full stop is as whole as the message)."""
    if stop is None:
        return False
    i, read = stop
    rest = pat[i][read:] if i < len(pat) and isinstance(pat[i], str) else "{}"
    return not (i == len(pat) - 1 and re.fullmatch(r"[.!?,;:]+", rest))


def shown_of(pat, stop) -> int:
    """How many characters of the template's own text a fit shows. Quotes around a hole
    do not count: `'{name}'` prints what `{name!r}` does, so neither shows more."""
    i, read = stop or (len(pat), 0)
    return sum(len(seg.strip(QUOTES)) for seg in pat[:i] if isinstance(seg, str)) + read


def shard_of(word: str, shards: int) -> int:
    """FNV-1a (32 bit) of the ASCII word, modulo the power-of-two shard count."""
    h = 0x811C9DC5
    for ch in word:
        h = ((h ^ ord(ch)) * 0x01000193) & 0xFFFFFFFF
    return h & (shards - 1)


def key_shard(key: str, shards: int) -> int:
    """The shard that lists a word or key: a key of three words after an opening value
    (HOLE) is in the one of its first two, so that one file answers both of a paste's."""
    if key.startswith(HOLE):
        key = " ".join(key.split(" ")[:3])
    return shard_of(key, shards)


def named_projects(text: str, hints: dict) -> set[str]:
    """The projects a paste points at: its name in the text ("vllm/config/model.py" in a
    traceback) or a line in its own logger's format (`hints`: project -> pattern)."""
    said = text.lower()
    return {
        project
        for project, pattern in hints.items()
        if project.lower() in said or re.search(pattern, text, re.ASCII)
    }


def named_engines(named: set[str], programs: dict[str, dict]) -> set[str]:
    """The keys of the serving engines the paste points at: of a stack record's advice, the
    one engine named is shown first on its page."""
    return {programs[name]["key"] for name in named if programs.get(name, {}).get("engine")}


# Where a paste says which program printed it (the same in match.js): a message that opens
# with "<name> error" (NCCL error, CUDA error); the package of a dotted exception
# (torch.OutOfMemoryError, triton.runtime.errors.OutOfResources); the package of the
# traceback's last frame; a program's name in the message.
PROGRAM_ERROR = r"^([A-Za-z][\w.-]*) error\b"


PACKAGE_FRAME = r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_]\w*)"


DOTTED_EXCEPTION = r"[A-Za-z_]\w*(?:\.\w+)+(?=: )"


def guess_program(text: str, blocks: list[Block], programs: dict[str, dict]) -> str | None:
    """The name of the program a paste's error comes from, as well as it can be told:
    a project's name when it is one of ours (by its name or key), else a package's."""
    names: dict[str, str] = {}
    for name, program in programs.items():
        for alias in (name, program["key"], program["key"].replace("-", "_")):
            names.setdefault(alias.lower(), name)
    last = blocks[-1] if blocks else None
    message = last.text if last else template.squash(text)
    opening = re.match(PROGRAM_ERROR, message, re.I | re.ASCII)
    if opening and opening[1].lower() in names:
        return names[opening[1].lower()]
    dotted = re.match(DOTTED_EXCEPTION, message, re.ASCII)  # one the cleaning did not take
    exception = (last.exception if last else None) or (dotted[0] if dotted else "")
    if "." in exception:
        package = exception.split(".")[0]
        return names.get(package.lower(), package)
    frames = re.findall(PACKAGE_FRAME, text, re.ASCII)
    if frames:
        return names.get(frames[-1].lower(), frames[-1])
    said = []
    for alias, name in names.items():
        m = re.search(r"\b" + re.escape(alias) + r"\b", message.lower(), re.ASCII)
        if m:
            said.append((m.start(), name))
    return min(said)[1] if said else None


def release(version: str) -> list[int]:
    return [int(n) for n in re.findall(r"[0-9]+", version)]


def said_releases(rules: Rules, text: str, hints: dict) -> dict[str, str]:
    """The release the paste names of each project, as written ("0.10.1")."""
    found = {}
    for project in hints:
        m = re.search(r"\b" + re.escape(project) + rules.version, text, re.I | re.ASCII)
        if m:
            found[project] = m[1]
    return found


def said_versions(rules: Rules, text: str, hints: dict) -> dict[str, list[int]]:
    """The release the paste names of each project ("vLLM version 0.10.1"), as numbers."""
    return {project: release(v) for project, v in said_releases(rules, text, hints).items()}


def one_per_message(
    ranked: list[tuple[tuple, Result]], order: Callable, mets: dict, programs: dict
) -> list:
    """Results that fit alike from two engines (one copied the other's code) as one, led
    by the project the paste points at, else by the one the user runs (`chosen`), else by
    the copy met more often in the wild, else by the site's default engine (else by the
    first: the better standing); the others are named in its `also`. A stack project's fit
    is no copy (PyTorch's "CUDA out of memory. Tried to allocate ..." and vLLM's "CUDA out
    of memory occurred when warming up sampler ..." both start "CUDA out of memory"): it
    keeps its own place among them."""

    def copied(result: Result) -> bool:
        return programs.get(result.project, {}).get("engine", True)

    out = []
    for _, group in itertools.groupby(ranked, key=lambda kr: kr[0][:FIT]):
        run = list(group)
        if run[0][1].match == "similar":
            out += run
            continue
        copies = sorted(
            (kr for kr in run if copied(kr[1])),
            key=lambda kr: order(kr[1].project, mets.get(kr[1].id, 0)),
        )
        placed = False
        for kr in run:
            if not copied(kr[1]):
                out.append(kr)
            elif not placed:  # the copies, led by one, where the first of them ranks
                placed = True
                out += led(copies)
    return out


def led(copies: list[tuple[tuple, Result]]) -> list[tuple[tuple, Result]]:
    """The first copy's results (its project's), the other projects' named in its `also`."""
    lead = copies[0][1]
    out = []
    for key, result in copies:
        if result is lead or result.project == lead.project:
            out.append((key, result))
        elif result.project not in {a["project"] for a in lead.also}:
            lead.also.append({"id": result.id, "project": result.project, "url": result.url})
    return out


FIT = 4  # a sort key's first items: how a pattern fits (tier, quiet, text shown, cut)


def titled_projects(text: str, programs: dict[str, dict]) -> set[str]:
    """The projects whose tracker's issue titles open as the paste does ("[Bug]: " in vLLM's,
    "[Bug] " in SGLang's: their issue templates'): a pasted title names no engine, but the
    tracker it was filed in shows through its opening."""
    opening = text.lstrip()[:40]
    return {
        name
        for name, program in programs.items()
        if program.get("titles") and re.match(program["titles"], opening, re.ASCII)
    }


def untitled(blocks: list[Block], programs: dict[str, dict], settings: dict) -> None:
    """A pasted issue title's reading without its tracker's tag ("[Bug]: ", "[Bug] "): a
    message that opens with a value ("Qwen3NextForCausalLM has no SGlang implementation")
    starts where the tag ends."""
    for block in blocks:
        if block.exception or block.source:
            continue
        for program in programs.values():
            m = program.get("titles") and re.match(program["titles"], block.text, re.ASCII)
            rest = block.text[m.end() :].strip(" ") if m else ""
            if len(template.words(rest)) >= settings["partial_words"]:
                block.forms.append(Form(rest, "quoted"))
                break


def lead_order(
    named: set[str], chosen: set[str], titled: set[str], programs: dict[str, dict]
) -> Callable:
    """The order in which copies of one message lead, as a sort key of (project, met): the
    project the paste points at, the one the user runs (`chosen`), the one whose tracker's
    issue titles open as the paste does (`titled`), the copy met more often in the wild,
    the site's default engine."""

    def order(project: str, met: int) -> tuple:
        default = programs.get(project, {}).get("default", False)
        told = (project not in named, project not in chosen, project not in titled)
        return (*told, -met, not default)

    return order


def project_of(pid: int, starts: list) -> str:
    """The project whose run of patterns holds this pattern id (index.json's starts)."""
    found = ""
    for start, name in starts:
        if start > pid:
            break
        found = name
    return found


def elsewhere(results: list[Result], pointed: set[str], programs: dict, how: dict) -> None:
    """An exact fit by a record of another engine than the one the paste points at (its
    log lines, paths or tracker's title tag: `pointed`, the engines' names) is partial: that
    engine's copy of the code prints the message, but the user's engine has no record of
    it (an old wording it no longer prints), and the page would answer with the other
    engine's flags. (A copy of the user's engine, when it fits, leads instead: one_per_message.)"""
    if not pointed:
        return
    for result in results:
        engine = programs.get(result.project, {}).get("engine")
        if result.match == "exact" and engine and result.project not in pointed:
            result.match = "partial"
            result.how += how.get("elsewhere", "")


def follow_on(results: list[Result], flagged: set[str]) -> None:
    """The first result, when it is an error the paste shows beside a wrapper's line, names
    the best of those lines as its follow-on."""
    lead = results[0] if results else None
    if lead is None or lead.id in flagged or lead.match not in FITS:
        return
    for result in results[1:]:
        if result.id in flagged and result.match != "similar":
            lead.followed_by = {"id": result.id, "title": result.title, "url": result.url}
            return


# --- querying --------------------------------------------------------------------------


class Index:
    """A built tier-1 index, read file by file through `fetch(url) -> bytes`; its rules and
    settings are those its index.json carries (context)."""

    def __init__(self, fetch: Callable[[str], bytes]):
        self._fetch = fetch
        self._files: dict[str, object] = {}
        self.requests = 0
        self.bytes = 0
        self.meta = self.get(urls.search_index())
        self._context: Context | None = None

    def get(self, url: str):
        if url not in self._files:
            body = self._fetch(url)
            self.requests += 1
            self.bytes += len(body)
            self._files[url] = json.loads(body)
        return self._files[url]

    def context(self) -> Context:
        """The index's rules and settings, compiled once."""
        if self._context is None:
            self._context = context(self.meta)
        return self._context

    def search(self, text: str, engine: str | None = None) -> "list[Result]":
        return search(self, text, engine)

    def scores(self, words: list[str], quoted: set[str]) -> tuple[dict, dict]:
        """Each pattern's sum of the weights of the query words it has: with a quoted word's
        weight cut, and in full (words of one shard share a file: get fetches it once)."""
        meta = self.meta
        scores: dict[int, int] = {}
        full: dict[int, int] = {}
        for word in words:
            rows = self.get(meta["words_url"].replace("{}", str(key_shard(word, meta["shards"]))))
            weight, *ids = rows.get(word, [0])
            cut = weight // meta["query"]["quoted"] if word in quoted else weight
            for pid in ids:
                scores[pid] = scores.get(pid, 0) + cut
                full[pid] = full.get(pid, 0) + weight
        return scores, full

    def opened(self, keys: list[str]) -> dict[int, int]:
        """Each pattern's sum of the weights of the lead keys it is listed under: its opening
        words, which the paste holds in a row (their shards are fetched already); or its
        words after an opening value (hole_keys)."""
        meta = self.meta
        opened: dict[int, int] = {}
        for key in keys:
            rows = self.get(meta["words_url"].replace("{}", str(key_shard(key, meta["shards"]))))
            weight, *ids = rows.get(key, [0])
            for pid in ids:
                opened[pid] = opened.get(pid, 0) + weight
        return opened

    def report_url(self, text: str) -> str | None:
        return report_url(self, text)


def search(
    index: Index, text: str, engine: str | None = None, releases: dict[str, str] | None = None
) -> list[Result]:
    """Ranked results: exact fits, partial ones, generic ones, then similar patterns.

    Of the fits of one tier a warning's, an error's or an exception's rank before a line
    that only reports (INFO: the settings' "quiet"), then the one that shows more of its
    template's text (partial and generic fits compete so), then a whole fit before a cut
    one, then an active check before a removed one, then the one raised as the exception
    the paste names, then an explained record before a stub, and a wording the release the
    paste names printed. Two projects' fits alike are one result (the same code, copied):
    the project the paste points at leads. Exact matches alike in all that are a tie (two
    records that print the same text): each is marked tied, and source order ranks them.
    Similar patterns, when nothing fits, are the nearest few. A message two engines print
    (a twin) opens the copy of the engine the paste points at, else of `engine` (the key
    of the one the user runs, when known), else of the one met more often in the wild.
    A wrapper's line ranks after the other error the paste shows, which names it.
    `releases`: the release of each project the user runs where the text does not say it
    (an issue's title searched apart from the body that says it).
    """
    ctx = index.context()
    meta, rules, settings = ctx.meta, ctx.rules, ctx.settings
    hints = meta.get("hints", {})
    blocks = clean(text, rules, settings)
    programs = meta.get("programs", {})
    untitled(blocks, programs, settings)
    quoted = quoted_words(blocks, rules)
    keys = query_words(blocks, settings, quoted)
    runs = set(probes(blocks, settings))
    scores, full = index.scores([k for k in keys if k not in runs], quoted)
    # (A short paste's, an issue title's: a long one's lead keys are among its scores' best)
    short = sum(" " not in k for k in keys) <= settings["words"] // 2
    opened = index.opened([k for k in keys if " " in k]) if short else {}
    held = index.opened(hole_keys(blocks, settings))
    given = {project: release(v) for project, v in (releases or {}).items()}
    said = {**given, **said_versions(rules, text, hints)}
    named = named_projects(text, hints)
    engines = named_engines(named, programs)
    chosen = {name for name, p in programs.items() if engine and p.get("key") == engine}
    titled = titled_projects(text, programs)
    order = lead_order(named, chosen, titled, programs)
    starts = meta.get("starts", [])
    top = candidates(
        scores, full, settings, lambda pid: order(project_of(pid, starts), 0), opened, held
    )
    rated = []
    mets: dict[str, int] = {}
    flagged: set[str] = set()  # wrappers' lines
    for pid in top:
        page = index.get(meta["patterns_url"].replace("{}", str(pid // meta["page"])))
        doc = page[pid % meta["page"]]
        mets[doc["id"]] = max(mets.get(doc["id"], 0), doc.get("met", 0))
        if doc.get("wrapper"):
            flagged.add(doc["id"])
        # Fragments of an engine's own messages (the stack's are other programs' texts, of
        # common words: "No such file or directory")
        engine_doc = programs.get(doc["project"], {}).get("engine", True)
        rated.append(rate(ctx, doc, blocks, scores.get(pid, 0), pid, said, engines, engine_doc))
    ranked = unwrapped(ctx, rated, flagged)
    fitted = any(key[0] < ctx.ranks["similar"] for key, _ in ranked)
    least = settings["coverage"] if fitted else settings["near_coverage"]
    results: dict[str, tuple[tuple, Result]] = {}
    similar = 0
    for key, result in sorted(ranked):
        if result.match == "similar":
            similar += 1
            if -key[1] < least or similar > settings["nearest"]:
                continue
        results.setdefault(result.id, (key[:-1], result))  # the key but for the pattern id
    led_ = one_per_message(list(results.values()), order, mets, programs)
    alike = [key for key, _ in led_]
    for key, result in led_:
        result.tied = result.match != "similar" and alike.count(key) > 1
    out = [result for _, result in led_][: settings["results"]]
    # The engine the user runs, as lead_order reads it: the paste's own, else the one
    # chosen, else its tracker's
    engine_names = {name for name, p in programs.items() if p.get("engine")}
    pointed = (named & engine_names) or chosen or (titled & engine_names)
    elsewhere(out, pointed, programs, ctx.how)
    follow_on(out, flagged)
    return with_releases(out, {**(releases or {}), **said_releases(rules, text, hints)})


def report_url(index: Index, text: str) -> str | None:
    """A new issue on the knowledge base's repository with the paste in it, or None when
    the site names no repository."""
    ctx = index.context()
    report = ctx.meta.get("report")
    if not report:
        return None
    settings = ctx.settings
    blocks = clean(text, ctx.rules, settings)
    errors = [b for b in blocks if not b.beside] or blocks  # a line beside them names none
    first = errors[-1].text if errors else template.squash(text)
    program = guess_program(text, errors, ctx.meta.get("programs", {}))
    title = f"{program or 'Unknown'} error: " + first[: settings["report_title"]]
    body = settings["report_body"].replace("{}", text[: settings["report_chars"]].strip("\n"))
    encode = lambda s: quote(s, safe="!~*'()")  # noqa: E731 (encodeURIComponent's set)
    return report.replace("%7Btitle%7D", encode(title)).replace("%7Bbody%7D", encode(body))


def with_releases(results: list[Result], releases: dict[str, str]) -> list[Result]:
    """The release the paste names of a result's project, in its address (?v=: its page
    opens on that release's wording), unless a placeholder is named v."""
    for result in results:
        if result.project in releases and "v" not in result.values:
            result.release = releases[result.project]
    return results


def standing(doc: dict, said: dict) -> tuple[int, int, int]:
    """What ranks fits alike after an active check before a removed one and the exception
    the paste names: an explained record, one met more often in the wild, and a wording
    printed by the release the paste names (when it names one of the record's project)."""
    named = said.get(doc["project"])
    versions = doc.get("versions")
    printed = not named or bool(versions and release(versions[0]) <= named <= release(versions[1]))
    return -doc.get("explained", 0), -doc.get("met", 0), int(not printed)


def unwrapped(
    ctx: Context, rated: list[tuple[tuple, Result, list[str], list[str]]], flagged: set[str]
) -> list:
    """The rated candidates, two kinds of fit set aside, ranked after all the others:

    - a wrapper: a fit whose value after a colon holds the text of a fit of the engines'
      stack, and whose own text is short and says nothing of what that one is about (no
      word of theirs alike): "Exception in worker ... while processing method init_device:
      NCCL error: unhandled cuda error". The inner error says what went wrong, the wrapper
      only where. "Capture cuda graph failed: CUDA out of memory" says more than the inner
      error does, and a long message of its own is a check of its own: both stay;
    - a fit whose whole text is held in a value of another exact or partial fit that is no
      wrapper: transformers' "You are trying to access a gated repo. ... {hub_error}" holds
      the Hub's message, SGLang's "Capture cuda graph failed: {error}" the OOM. The outer
      message is the one raised last, whose page speaks of both;
    - a project's wrapper line (`flagged`: "Engine core initialization failed. See root
      cause above"), when the paste shows another error that fits exact or partially (a
      run of its words too: a terminal may have cut it): that one is the cause. Its fit in
      a line beside the errors (Block.beside: already ranked after them) is left out
      when no error fits: the wrapper is no answer to an error the knowledge base lacks.
    """
    programs, ranks = ctx.meta.get("programs", {}), ctx.ranks
    enough = ctx.settings["partial_words"]
    shown = [(result.id, own) for _, result, own, _ in rated if count_words(own) >= enough]
    stack = {r.id for _, r, _, _ in rated if not programs.get(r.project, {}).get("engine", True)}
    # (A fit of a line beside the errors, ranked after theirs, is no cause nor holder.)
    first = [(key, r) for key, r, _, _ in rated if key[0] < ranks["aside"]]
    causes = [(r, own) for key, r, own, _ in rated if key[0] < ranks["aside"]]
    causes = [(r, own) for r, own in causes if r.match in FITS and r.id not in flagged]
    # (A cause is another message: not a shorter wording of the wrapper's own text, "Task
    # finished unexpectedly. ... on Github." within "... on Github. See stack trace above")
    wrappers = {
        result.id
        for _, result, mine, _ in rated
        if result.id in flagged and any(not within(own, mine) for _, own in causes)
    }
    wrappers |= {
        result.id
        for _, result, mine, caught in rated
        if count_words(mine) <= ctx.settings["wrapper_words"]
        and any(
            rid != result.id
            and rid in stack
            and not topic(own) & topic(mine)
            and holds(caught, own)
            for rid, own in shown
        )
    }
    holders = [
        (result.id, [fold(value, "quotes") for value in result.values.values()])
        for _, result in first
        if result.match in ("exact", "partial") and result.id not in wrappers
    ]
    out = []
    for key, result, own, _ in rated:
        if key[0] == ranks["aside"] and result.id in flagged and not causes:
            continue  # a wrapper's line beside an error no record fits: no answer of it
        inside = count_words(own) >= enough and any(
            hid != result.id and holds(values, own) for hid, values in holders
        )
        aside = result.id in wrappers or inside
        out.append(((ranks["aside"], *key[1:]) if aside else key, result))
    return out


def within(own: list[str], mine: list[str]) -> bool:
    """Whether every piece of one fit's own text is in another's (in any letter case)."""
    text = fold(" ".join(mine), "case")
    return bool(own) and all(fold(piece, "case") in text for piece in own)


def count_words(own: list[str]) -> int:
    return len(template.words(" ".join(own)))


def holds(values: list[str], own: list[str]) -> bool:
    """Whether one of the values holds every piece of a template's own text."""
    return any(all(piece in value for piece in own) for value in values)


def topic(own: list[str]) -> set[str]:
    """The words of four letters or more of a template's own text, in lower case."""
    return {word.lower() for word in template.words(" ".join(own)) if len(word) >= 4}


def held(pat, values: dict[str, str]) -> list[str]:
    """The values of the holes after a colon ("...: {error}"), where a wrapper puts the error
    it caught, folded as fold does for quotes."""
    after = [
        hole[0]
        for lit, hole in itertools.pairwise(pat)
        if isinstance(lit, str) and lit.endswith(": ")
    ]
    return [fold(values[name], "quotes") for name in after if name in values]


def own_text(pat, stop) -> list[str]:
    """The pieces of the template's own text a fit shows (quotes and spaces around its
    values cut off), folded as fold does for quotes."""
    i, read = stop or (len(pat), 0)
    shown = [seg for seg in pat[:i] if isinstance(seg, str)]
    if i < len(pat) and isinstance(pat[i], str):
        shown.append(pat[i][:read])
    pieces = (fold(seg, "quotes").strip(QUOTES + " ") for seg in shown)
    return [piece for piece in pieces if piece]


def rate(
    ctx: Context,
    doc: dict,
    blocks: list[Block],
    score: int,
    pid: int,
    said: dict,
    engines: set,
    fragments: bool = True,
) -> tuple:
    """(sort key, Result, the template's own text it shows, the values it holds after a
    colon) of a candidate: its best fit to any reading of any block, or else how much of its
    words the paste has (per mille), as a similar one (showing and holding none)."""
    pat = doc["pattern"]
    removed = int(doc.get("removed", False))
    ranks, how = ctx.ranks, ctx.how
    quiet = int(doc["exception"] in ctx.settings["quiet"])
    rest = standing(doc, said)
    best = None
    for block in blocks:
        other = int(not names_in(block, doc["exception"]))
        for form in block.forms:
            if form.kind not in SOURCES:
                form = Form(unprefixed(block, form.text, doc["exception"]), form.kind)
            found = try_form(ctx, pat, form, doc.get("generic", False), fragments)
            if found:
                tier, said_how, fit = found
                if tier == "exact" and doc.get("cut"):
                    tier = "partial"  # the program prints more than a cut template holds
                # A loose fit (values unlike its placeholders') is a generic one that ranks
                # with the fragments (an index of before it ranks it as generic)
                ranked = ranks.get(tier, ranks["generic"])
                tier = "generic" if tier == "loose" else tier
                # A logger's line that a message for sure (an exception's) runs on into,
                # after its own text (a blank line parted them): a line beside the error
                inside = bool(block.exception) and doc["exception"] in ctx.settings["levels"]
                aside = block.beside or (inside and fit.start > 0)
                rank = ranks["aside"] if aside else ranked
                loud = quietness(ctx.settings, doc["exception"], block.level)
                fits = (rank, loud, -shown_of(pat, fit.stop), int(cut_short(pat, fit.stop)))
                key = (*fits, removed, other, *rest, pid)
                if best is None or key < best[0]:
                    result = hit(doc, tier, said_how, fit.values, engines)
                    best = key, result, own_text(pat, fit.stop), held(pat, fit.values)
    if best:
        return best
    shown, _ = fragment(ctx.settings, pat, blocks, fragments) if not doc.get("generic") else (0, [])
    if shown:
        # A fragment: as a partial fit that shows this much, behind the paste's exception
        key = (ranks["fragment"], 2 * quiet, -shown, 1, removed, 1, *rest, pid)
        return key, hit(doc, "partial", how["fragment"], {}, engines), [], []
    coverage = 1000 * score // doc["weight"] if doc["weight"] else 0
    similar = hit(doc, "similar", how["similar"], {}, engines)
    return (ranks["similar"], -coverage, -score, removed, 0, *rest, pid), similar, [], []


def quietness(settings: dict, exception: str, level: str) -> int:
    """How little a fit complains: 2 a record's line that only reports (INFO), 1 a line the
    paste itself logs as a warning (a paste that shows an error beside it is about the
    error: the warning above it is context), else 0."""
    if exception in settings["quiet"]:
        return 2
    return int(level in settings.get("warn", ()))


def names_in(block: Block, exception: str) -> bool:
    """Whether the paste names this exception with the message: matches that print
    the same text are told apart by it (vLLM raises some messages as two exceptions)."""
    if block.exception is None:
        if block.level and block.level == exception:
            return True  # a logger's line of this level
        # Named anywhere in the line: "E   RuntimeError: ..." (pytest), a title's
        # 'RuntimeError("...")', a raise statement's
        at = block.text.find(exception) if exception else -1
        while at >= 0:
            after = block.text[at + len(exception) : at + len(exception) + 2]
            alone = at == 0 or not word_char(block.text[at - 1])
            if alone and (after == ": " or after[:1] == "("):
                return True
            at = block.text.find(exception, at + 1)
        return False
    return ("." + block.exception).endswith("." + exception)


def word_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def unprefixed(block: Block, text: str, exception: str) -> str:
    """A block without its exception name, also when the name did not look like one."""
    head = exception + ": "
    if not block.exception and text.startswith(head):
        return text[len(head) :]
    return text


def hit(doc: dict, match: str, how: str, values: dict[str, str], engines: set) -> Result:
    order = [seg[0] for seg in doc["pattern"] if not isinstance(seg, str)]
    ordered = {name: values[name] for name in dict.fromkeys(order) if name in values}
    named = [key for key in doc.get("engines", []) if key in engines]
    return Result(
        doc["id"],
        doc["title"],
        doc["exception"],
        doc["project"],
        doc.get("summary", ""),
        match,
        how,
        ordered,
        doc.get("wording", ""),
        engine=named[0] if len(named) == 1 else "",
        today=doc.get("today"),
        upgrade=doc.get("upgrade", ""),
        wrapper=bool(doc.get("wrapper")),
        message="".join(s if isinstance(s, str) else "{" + s[0] + "}" for s in doc["pattern"]),
    )

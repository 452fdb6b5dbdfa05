"""Tier-1 search: which record's template a pasted error fits, and with which values.

The build turns every record's message and variants into a pattern (template.pattern:
squashed literal text and typed holes) and writes a sharded index:

  /search/index.json             counts, the shard layout and the query settings
  /search/words/<shard>.json     each word hashed to that shard: [weight, pattern ids...]
  /search/patterns/<page>.json   PAGE patterns each, with their record's title and exception

A query is cleaned of log noise into a few message blocks. A word's shard follows from
its hash alone, so the query fetches only the shards of its own words; the patterns
sharing its rarest (heaviest) words become candidates, the best few are fetched,
verified against the blocks and their values extracted. templates/assets/match.js is
the same algorithm, step for step; tests/search_cases.json runs through both.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from generator.content import template
from generator.site import urls

VERSION = 1
PAGE = 8  # patterns per file: a candidate costs a file of this many
SHARD_BYTES = 1024  # aim of a word shard's size; sets the number of shards
POSTINGS_CAP = 100  # a word listed in more patterns keeps only those it is among the rarest of
RAREST_KEPT = 3  # ...which are each pattern's 3 rarest words, so every pattern stays findable

# The query side's settings; index.json carries them to the browser's matcher.
QUERY = {
    "blocks": 4,  # message blocks of a paste that are matched (the last ones)
    "block_chars": 2000,  # a block's length cap: keeps a 1 MB paste fast
    "words": 24,  # words whose shards a query fetches at most (longest first)
    "candidates": 10,  # patterns fetched and verified
    "quoted": 4,  # a word seen only in quotes or brackets, as values print, weighs 1/4
    "budget": 2000,  # steps one verification may take (it backtracks)
    "coverage": 500,  # per mille of a pattern's word weight a query needs to show unverified
    "results": 10,
}


# --- the index -------------------------------------------------------------------------


@dataclass
class Entry:
    """One pattern: a record's message or one of its variants."""

    record: str
    title: str
    exception: str
    project: str
    summary: str
    pattern: template.Pattern
    words: list[str]  # template.pattern_words of the pattern: what the index lists it under

    def document(self) -> dict:
        doc = {
            "id": self.record,
            "title": self.title,
            "exception": self.exception,
            "project": self.project,
            "pattern": self.pattern,
        }
        return {**doc, "summary": self.summary} if self.summary else doc


def entries(content) -> list[Entry]:
    """Every record's patterns, in source order so that neighbours share files."""
    records = sorted(
        content.records.values(),
        key=lambda r: (r.project, r.data["source"]["path"], r.data["source"].get("line", 0), r.id),
    )
    return [
        entry
        for r in records
        for entry in record_entries(r.data, r.title, content.projects[r.project].name, r.patterns)
    ]


def record_patterns(data: dict) -> list[tuple[template.Pattern, list[str]]]:
    """A record's message and each variant as a pattern, with its words. Made when the
    record is parsed and cached with it, as a rebuild indexes every record anew."""
    types = {name: p.get("type", "any") for name, p in data.get("params", {}).items()}
    patterns = [template.pattern(m, types) for m in [data["message"], *data.get("variants", [])]]
    return [(pattern, template.pattern_words(pattern)) for pattern in patterns]


def record_entries(data: dict, title: str, project: str, patterns=None) -> list[Entry]:
    """The index entries of one record: its message and each of its variants."""
    if patterns is None:
        patterns = record_patterns(data)
    return [
        Entry(data["id"], title, data["exception"], project, data.get("summary", ""), *pattern)
        for pattern in patterns
    ]


def index_files(items: list[Entry]) -> Iterator[tuple[str, bytes]]:
    """The tier-1 index as (url, bytes), the same bytes for the same entries."""
    own = [set(item.words) for item in items]
    postings: dict[str, list[int]] = {}
    for pid, words in enumerate(own):
        for word in words:
            postings.setdefault(word, []).append(pid)
    kept = _kept_postings(own, postings)
    weights = {w: weight(len(items), len(ids)) for w, ids in postings.items()}
    rows = {w: [weights[w], *kept[w]] for w in sorted(postings)}
    shards = _shard_count(rows)
    buckets: list[dict] = [{} for _ in range(shards)]
    for word, row in rows.items():
        buckets[shard_of(word, shards)][word] = row
    yield (
        urls.search_index(),
        _dumps(
            {
                "version": VERSION,
                "patterns": len(items),
                "records": len({item.record for item in items}),
                "shards": shards,
                "page": PAGE,
                "errors_url": urls.error("{}"),
                "words_url": urls.search_words("{}"),
                "patterns_url": urls.search_patterns("{}"),
                "query": QUERY,
                "rules": RULES,
            }
        ),
    )
    for n, bucket in enumerate(buckets):
        yield urls.search_words(str(n)), _dumps(bucket)
    for start in range(0, len(items), PAGE):
        # weight: of all a pattern's words, what a similar (unverified) match is measured by
        page = [
            {**items[pid].document(), "weight": sum(weights[w] for w in own[pid])}
            for pid in range(start, min(start + PAGE, len(items)))
        ]
        yield urls.search_patterns(str(start // PAGE)), _dumps(page)


def weight(patterns: int, df: int) -> int:
    """A word's rarity as an integer, so that both matchers add up the same scores."""
    return max(1, round(100 * math.log2((patterns + 1) / df)))


def _kept_postings(own: list[set[str]], postings: dict[str, list[int]]) -> dict[str, list[int]]:
    """Common words keep only the patterns that have no rarer words to be found by."""
    kept = {w: ids if len(ids) <= POSTINGS_CAP else [] for w, ids in postings.items()}
    for pid, words in enumerate(own):
        for word in sorted(words, key=lambda w: (len(postings[w]), w))[:RAREST_KEPT]:
            if len(postings[word]) > POSTINGS_CAP:
                kept[word].append(pid)
    return kept


def _shard_count(rows: dict[str, list[int]]) -> int:
    size = sum(len(w) + 6 + 7 * len(row) for w, row in rows.items())
    shards = 1
    while shards * SHARD_BYTES < size and shards < 1 << 16:
        shards *= 2
    return shards


def shard_of(word: str, shards: int) -> int:
    """FNV-1a (32 bit) of the ASCII word, modulo the power-of-two shard count."""
    h = 0x811C9DC5
    for ch in word:
        h = ((h ^ ord(ch)) * 0x01000193) & 0xFFFFFFFF
    return h & (shards - 1)


def _dumps(doc: object) -> bytes:
    """Compact JSON (what a query downloads is the budget) with sorted keys: deterministic."""
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


# --- cleaning a paste ------------------------------------------------------------------

# Prefixes that loggers put before a line. Each eats one space at most: the indentation
# left is how a traceback's frames are told apart.
_LOG_PREFIXES = [
    r"\([^()\n]*\bpid=\d+\) ?",  # vLLM's process: (EngineCore_DP0 pid=1508)
    r"\[rank\d+\]: ?",  # torch.distributed: [rank0]:
    # vLLM's logger: ERROR 11-01 09:43:08 [model.py:1560]
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]\n]*\] ?",
    r"\[[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ [^\]\n]*\] ?",  # glog (PyTorch's C++): [W1101 09:43...]
    # ISO timestamps, optionally with a logger name: 2025-11-01 09:43:08,123 - vllm -
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?(?: - [\w.]+ -)? ?",
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?::[\w.]*:| - |: | )",  # logging: ERROR:root:
]

# The rules of cleaning and of typed values, as regular expressions that Python (with
# re.ASCII) and JavaScript read alike; index.json carries them to match.js.
RULES = {
    "prefix": "(?:" + "|".join(f"(?:{p})" for p in _LOG_PREFIXES) + ")*",  # any number of them
    # An exception line: ValueError: ..., pydantic_core._pydantic_core.ValidationError: ...
    # A bare "Warning:" is not one: C++ logs put it after their glog prefix.
    "exception": r"((?:[A-Za-z_]\w*\.)*(?:(?:[A-Z]\w*)?"
    r"(?:Error|Exception|Exit|Interrupt|Iteration)|[A-Z]\w*Warning))(?:: |:?$)",
    # Whole lines that are no part of a message; they end the one above.
    "noise": r"Traceback \(most recent call last\):"
    r"|The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:"
    r"|\d+ validation errors? for [\w.]+"
    r"|For further information visit \S+"
    r"|Process [\w-]+:",  # multiprocessing, before a child's traceback
    # pydantic wraps a validator's message: "Value error, <message> [type=value_error, ...]".
    "pydantic": r"(?:Value error|Assertion failed), (.*?)(?: \[type=.*)?$",
    "rank_suffix": r" \(rank \d+\)$",  # added to messages in distributed runs
    # Quoted or bracketed text, as repr() prints values: 'auto', ['mp', 'ray'], "x".
    # An apostrophe within a word ("model's") opens no quote.
    "quoted": r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])"
    r'|(?<![A-Za-z0-9])"[^"]*"(?![A-Za-z0-9])'
    r"|\[[^\[\]]*\]",
    # What a typed hole's value looks like; a hole of another type takes anything.
    "types": {
        "int": r"[-+]?[0-9]+",
        "float": r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?inf|nan",
        "bool": r"True|False|true|false",
        "path": r"[^ ]+",
    },
}
_PREFIX = re.compile(RULES["prefix"], re.ASCII)
_EXCEPTION = re.compile(RULES["exception"], re.ASCII)
_NOISE = re.compile(RULES["noise"], re.ASCII)
_PYDANTIC = re.compile(RULES["pydantic"], re.ASCII)
_RANK_SUFFIX = re.compile(RULES["rank_suffix"], re.ASCII)
_QUOTED = re.compile(RULES["quoted"], re.ASCII)
_TRACEBACK = "Traceback (most recent call last):"


@dataclass
class Block:
    """A message as found in a paste: its lines joined, with the exception it was raised as."""

    exception: str | None
    starts: bool  # begins at an exception line or a pydantic error: a message for sure
    lines: list[str] = field(default_factory=list)
    size: int = 0

    @property
    def text(self) -> str:
        return " ".join(self.lines)


def clean(text: str) -> list[Block]:
    """The message blocks of a paste, log noise removed; the last few, exception lines first."""
    blocks: list[Block] = []
    current: Block | None = None
    in_traceback = False
    last_prefix = None
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        prefix = _PREFIX.match(raw).group()
        rest = raw[len(prefix) :]
        if in_traceback and rest[:1] in (" ", "\t"):
            continue  # a frame of the traceback: File "...", its code line, ^^^^ markers
        in_traceback = False
        exception, line = _exception(template.squash(rest))
        if not line or _NOISE.fullmatch(line):
            in_traceback = line == _TRACEBACK
            current = None
            continue
        line = _RANK_SUFFIX.sub("", line)
        wrapped = _PYDANTIC.match(line)
        line = wrapped.group(1) if wrapped else line
        # A line goes on the message above unless it starts a message or another log record.
        if exception or wrapped or current is None or (prefix and prefix != last_prefix):
            current = Block(exception, bool(exception or wrapped))
            blocks.append(current)
        if current.size < QUERY["block_chars"]:
            current.lines.append(line)
            current.size += len(line) + 1
        last_prefix = prefix or last_prefix
    starting = [b for b in blocks if b.starts]
    chosen: dict[str, Block] = {}
    for block in (starting or blocks)[-QUERY["blocks"] :]:
        chosen.setdefault(block.text[: QUERY["block_chars"]], block)
    return [Block(b.exception, b.starts, [t]) for t, b in chosen.items()]


def _exception(line: str) -> tuple[str | None, str]:
    m = _EXCEPTION.match(line)
    if not m:
        return None, line
    name, message = m.group(1), line[m.end() :]
    # str(KeyError(x)) is repr(x): the message arrives quoted.
    if name.endswith("KeyError") and len(message) > 1 and message[0] == message[-1] in "'\"":
        message = message[1:-1]
    return name, message


def query_words(blocks: list[Block]) -> list[str]:
    """The words whose shards a query fetches: the longest first, as they tend to be rarest."""
    found = {w for b in blocks for w in template.words(b.text)}
    return sorted(found, key=lambda w: (-len(w), w))[: QUERY["words"]]


def quoted_words(blocks: list[Block]) -> set[str]:
    """The words a paste has only in quotes or brackets: most likely values, which share
    rare words with other templates ("one of ['mp', 'ray']") and so weigh less."""
    inside = {w for b in blocks for m in _QUOTED.finditer(b.text) for w in template.words(m[0])}
    return inside - {w for b in blocks for w in template.words(_QUOTED.sub(" ", b.text))}


# --- verification ----------------------------------------------------------------------

_WHOLE = {k: re.compile(f"(?:{v})$", re.ASCII) for k, v in RULES["types"].items()}
_LEADING = {k: re.compile(f"(?:{v})", re.ASCII) for k, v in RULES["types"].items()}


def verify(pat: template.Pattern, text: str, typed: bool = True) -> dict[str, str] | None:
    """The hole values with which the pattern spells the text, or None.

    Holes take the shortest value that lets the rest fit, as a lazy regular
    expression would, within a step budget. Text before the pattern's first literal
    is allowed (a prefix the cleaning missed), and so is text after its end, though
    a fit that ends where the text ends is preferred: "Layer: {prefix}." takes all
    of "Layer: model.embed_tokens.".
    """
    for anchored in (True, False):
        fit = _Fit(pat, text, typed, anchored)
        if fit.at(0, 0):
            return fit.values
    return None


class _Fit:
    def __init__(self, pat: template.Pattern, text: str, typed: bool, anchored: bool):
        self.pat = pat
        self.kinds = [seg[1] if typed and not isinstance(seg, str) else "any" for seg in pat]
        self.text = text
        self.anchored = anchored
        self.budget = QUERY["budget"]
        self.values: dict[str, str] = {}

    def at(self, i: int, pos: int) -> bool:
        """Whether segments i... fit the text from pos on."""
        pat, text = self.pat, self.text
        if i == len(pat):
            return not self.anchored or pos == len(text)
        seg = pat[i]
        if isinstance(seg, str):
            if i > 0:
                return text.startswith(seg, pos) and self.at(i + 1, pos + len(seg))
            start = text.find(seg)
            while start >= 0 and self.spend():
                if self.at(1, start + len(seg)):
                    return True
                start = text.find(seg, start + 1)
            return False
        if i + 1 == len(pat):
            return self.take(seg[0], self.final_value(self.kinds[i], text[pos:]))
        nxt = pat[i + 1]
        end = pos
        while end <= len(text) and self.spend():
            if isinstance(nxt, str):
                end = text.find(nxt, end)
                if end < 0:
                    return False
            value = text[pos:end]
            if _valid(self.kinds[i], value) and self.at(i + 1, end):
                return self.take(seg[0], value)
            end += 1
        return False

    def final_value(self, kind: str, rest: str) -> str | None:
        """A final hole takes the rest of the text, or when trailing text is allowed,
        the longest start of it that has the hole's type."""
        if self.anchored or kind not in _LEADING:
            return rest if _valid(kind, rest) else None
        m = _LEADING[kind].match(rest)
        return m.group() if m else None

    def take(self, name: str, value: str | None) -> bool:
        # Set on the way back from a fit, so a placeholder used twice keeps its first value.
        if value is not None:
            self.values[name] = value
        return value is not None

    def spend(self) -> bool:
        self.budget -= 1
        return self.budget >= 0


def _valid(kind: str, value: str) -> bool:
    return kind not in _WHOLE or bool(_WHOLE[kind].match(value))


# --- querying --------------------------------------------------------------------------


@dataclass
class Result:
    id: str
    title: str
    exception: str
    project: str
    summary: str
    exact: bool  # the pasted message fits the template
    values: dict[str, str]
    # Exact, and so is another result that ranks alike but for its place in the source:
    # a tie (the same text printed by two records), which source order ranks.
    tied: bool = False

    @property
    def url(self) -> str:
        return urls.error_with_values(self.id, self.values)

    def to_json(self) -> dict:
        return {**self.__dict__, "url": self.url}


class Index:
    """A built tier-1 index, read file by file through `fetch(url) -> bytes`."""

    def __init__(self, fetch: Callable[[str], bytes]):
        self._fetch = fetch
        self._files: dict[str, object] = {}
        self.requests = 0
        self.bytes = 0
        self.meta = self.get(urls.search_index())

    def get(self, url: str):
        if url not in self._files:
            body = self._fetch(url)
            self.requests += 1
            self.bytes += len(body)
            self._files[url] = json.loads(body)
        return self._files[url]


def search(index: Index, text: str) -> list[Result]:
    """Ranked results: verified matches, then similar patterns.

    Of the verified matches the more literal template ranks first, then the one raised as
    the exception the paste names, then a fit of typed values. Matches alike in all that
    are a tie (two records that print the same text): each is marked tied, and source
    order ranks them.
    """
    meta = index.meta
    blocks = clean(text)
    scores = _scores(index, query_words(blocks), quoted_words(blocks))
    top = sorted(scores, key=lambda pid: (-scores[pid], pid))[: QUERY["candidates"]]
    rated = []
    for pid in top:
        page = index.get(meta["patterns_url"].replace("{}", str(pid // meta["page"])))
        rated.append(_rate(page[pid % meta["page"]], blocks, scores[pid], pid))
    results: dict[str, tuple[tuple, Result]] = {}
    for key, result in sorted(r for r in rated if r):
        results.setdefault(result.id, (key[:-1], result))  # the key but for the pattern id
    alike = [key for key, _ in results.values()]
    for key, result in results.values():
        result.tied = result.exact and alike.count(key) > 1
    return [result for _, result in results.values()][: QUERY["results"]]


def _scores(index: Index, words: list[str], quoted: set[str]) -> dict[int, int]:
    """Each pattern's sum of the weights of the query words it has, a quoted word's cut
    (words of one shard share a file: Index.get fetches it once)."""
    meta = index.meta
    scores: dict[int, int] = {}
    for word in words:
        rows = index.get(meta["words_url"].replace("{}", str(shard_of(word, meta["shards"]))))
        weight, *ids = rows.get(word, [0])
        weight = weight // QUERY["quoted"] if word in quoted else weight
        for pid in ids:
            scores[pid] = scores.get(pid, 0) + weight
    return scores


def _rate(doc: dict, blocks: list[Block], score: int, pid: int):
    """(sort key, Result) for a candidate, or None when it neither fits nor is similar."""
    pat = doc["pattern"]
    literal = sum(len(seg) for seg in pat if isinstance(seg, str))
    for typed in (True, False):
        fits = []
        for block in blocks:
            values = verify(pat, _unprefixed(block, doc["exception"]), typed)
            if values is not None:
                fits.append((int(not _names(block, doc["exception"])), values))
        if fits:
            other, values = min(fits, key=lambda fit: fit[0])  # the first that names it
            return (0, -literal, other, int(not typed), pid), _result(doc, True, values)
    coverage = 1000 * score // doc["weight"] if doc["weight"] else 0
    if coverage < QUERY["coverage"]:
        return None
    return (1, -coverage, -score, pid), _result(doc, False, {})


def _names(block: Block, exception: str) -> bool:
    """Whether the paste names this exception before the message: matches that print
    the same text are told apart by it (vLLM raises some messages as two exceptions)."""
    if block.exception is None:
        return block.text.startswith(exception + ": ")
    return ("." + block.exception).endswith("." + exception)


def _unprefixed(block: Block, exception: str) -> str:
    """A block without its exception name, also when the name did not look like one."""
    head = exception + ": "
    if not block.exception and block.text.startswith(head):
        return block.text[len(head) :]
    return block.text


def _result(doc: dict, exact: bool, values: dict[str, str]) -> Result:
    order = [seg[0] for seg in doc["pattern"] if not isinstance(seg, str)]
    ordered = {name: values[name] for name in dict.fromkeys(order) if name in values}
    return Result(
        doc["id"],
        doc["title"],
        doc["exception"],
        doc["project"],
        doc.get("summary", ""),
        exact,
        ordered,
    )


def open_index(root: Path, site: Path | None = None) -> Index:
    """The index of a built site, or else one built in memory from root/content."""
    from generator.content.load import load_content  # only here: the matcher itself is stdlib only

    if site:
        return Index(lambda url: (Path(site) / urls.output_path(url)).read_bytes())
    files = dict(index_files(entries(load_content(root))))
    return Index(files.__getitem__)


# Tier 2 ----------------------------------------------------------------------------------


class FullTextError(Exception):
    """Pagefind failed; the message carries what it said."""


def full_text_index(site: Path, page_urls: list[str], out: Path) -> None:
    """Pagefind's chunked full-text index of these pages of `site`, written to `out`.

    Pagefind reads a folder: it gets one of hard links to just these pages, so it never
    spends time on pages that are not to be indexed.
    """
    with tempfile.TemporaryDirectory(dir=site.parent, prefix=".pagefind-") as tmp:
        for url in page_urls:
            target = Path(tmp) / urls.output_path(url)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(site / urls.output_path(url), target)
        command = [sys.executable, "-m", "pagefind", "--site", tmp, "--output-path", str(out)]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise FullTextError(f"pagefind failed (is pagefind[bin] installed?): {done.stderr}")

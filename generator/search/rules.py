"""The rules and settings search matches with, as the build writes them into the index
(index.json's "query", "rules", "how" and "ranks"), and the index's own layout. The
writer's side: the log prefixes come from the installed wings. The query side
(engine.py, match.js) never reads this module: it reads what an index carries, so that
a reader of one errorkb release matches a site built by another by the site's rules.
"""

import math
import re
from typing import Any

from errorkb import registry
from errorkb.content import template
from errorkb.search.engine import HOLE, PAGE, VERSION, token_len

__all__ = ["PAGE", "VERSION"]  # the index's format, which the query side reads


SHARD_BYTES = 1024  # aim of a word shard's size; sets the number of shards


POSTINGS_CAP = 100  # a word listed in more patterns keeps only those it is among the rarest of


RAREST_KEPT = 3  # ...which are each pattern's 3 rarest words, so every pattern stays findable


# The query side's settings; index.json carries them to both matchers (engine.py, match.js).
QUERY: dict[str, Any] = {  # JSON for the browser: numbers and texts
    "blocks": 4,  # message blocks of a paste that are matched (the last ones)
    # ...and when some start at an exception, the last lines beside them that do not (a
    # warning above the error, a wrapper's line): their fits rank after the others'
    "beside": 2,
    "block_chars": 2000,  # a block's length cap: keeps a 1 MB paste fast
    # The lines of a paste read, its last ones (the matched blocks are the last few): a
    # megabyte of short or empty lines stays under a second, and a real log's error is at
    # its end. Counted again after a flattened line is split into its log lines.
    "lines": 5000,
    "words": 24,  # words whose shards a query fetches at most (longest first)
    "leads": 6,  # ...and lead keys: the first two words of a message, and after a colon
    "lead_keys": 12,  # ...and its first three: lead keys fetched at most
    "lead_chars": 60,  # where those two words are looked for
    "wrapper_words": 8,  # a wrapper's own text ("Exception in worker ...: {error}") at most
    "candidates": 10,  # patterns fetched and verified
    # ...and those whose opening words a paste holds in a row (a lead key's): a title
    # quoting a message's start among other words, whose common words list it not
    "openings": 3,
    # ...and those that open with a value, whose words after it follow the paste's first
    # token (holes_of: "{name}={rank} is outside [0, {size})" for "tp=16 is outside [0, 8)")
    "holes": 2,
    "hole_keys": 8,  # ...the keys of those words fetched at most
    "quoted": 4,  # a word seen only in quotes or brackets, as values print, weighs 1/4
    "hedge": 3,  # ...but the best few on full weights are fetched too: a template's own
    # brackets ("shape [num_images, C, H, W]") look like values
    "budget": 2000,  # steps one verification may take (it backtracks)
    "coverage": 500,  # per mille of a pattern's word weight a query needs to show unverified
    "partial_words": 3,  # words of a template's own text a partial match must show at least
    # A paste that holds this many words of a template's own text in a row, among other
    # words (an issue title quoting a message), finds it as partial: a fragment
    "fragment_words": 5,
    "wrap_width": 40,  # lines this long and alike are a terminal's hard wrap: glued, not spaced
    "near_coverage": 150,  # ...when nothing fits: the nearest few, even if not that near
    "nearest": 3,  # similar patterns shown at most
    # Log levels that report, not complain: a fit of such a line ranks after the fits of a
    # warning's, an error's or an exception's of its tier (a paste shows them beside it)
    "quiet": ["INFO", "DEBUG"],
    # ...and a warning's fit ranks after an error's or an exception's of its tier: a paste
    # that shows both is about the error, the warning above it is context
    "warn": ["WARNING", "WARN"],
    # The levels of a logger's lines, which records of log lines have for an exception: such
    # a line an exception's message runs on into, after its own text, is read beside it
    "levels": ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG"],
    "results": 10,
    # "Report this error": the title (the message's start) and body (the paste)
    "report_title": 80,
    "report_chars": 2000,
    "report_body": "I searched for this error and the knowledge base has no page for it:"
    "\n\n```\n{}\n```\n",
}


GENERIC_WORDS = 4  # a template with fewer words of its own is generic: anyone's text fits it


# Messages Python itself prints, which a template may restate: generic, whatever their length.
_BUILTIN = re.compile(
    r"\{\} object has no attribute \{\}|\{\} object is not (?:subscriptable|callable|iterable)"
    r"|(?:module|type object) \{\} has no attribute \{\}"
    r"|\{\} is not divisible by \{\}|name \{\} is not defined|no module named \{\}"
    r"|unsupported operand type|takes \{\} positional arguments? but \{\} (?:was|were) given"
    r"|got an unexpected keyword argument \{\}|invalid literal for int\(\)"
    r"|list index out of range|division by zero|\{\} is not a valid \{\}",
)


# --- the index -------------------------------------------------------------------------


def generic(pat: template.Pattern, words: list[str]) -> bool:
    """Whether a template has too little text of its own to tell a message apart, or
    restates one of Python's own messages: a fit is then no claim that this is the error."""
    skeleton = "".join(seg if isinstance(seg, str) else "{}" for seg in pat)
    skeleton = re.sub(r"['\"`]?\{\}['\"`]?", "{}", skeleton.lower())
    return len(words) < GENERIC_WORDS or bool(_BUILTIN.search(skeleton))


def lead(pat: template.Pattern) -> list[str]:
    """A template's first two words as one index key ("unrecognized model"), when it starts
    with them: a paste keeps a message's start, and two words together are rare where each
    alone is common (none when the template starts with a value). And its first three when
    it starts with three: many messages open with the same two ("unable to", "no available"),
    and a long template's common words are not listed (_kept_postings), so an error quoted
    among other words is found by the third. A template that opens with a value ("{arch}
    has no vLLM implementation ...") has the first three words after it: a title quoting
    the message, value and all, holds them in a row."""
    if not pat:
        return []
    first = template.pattern_words(pat[:2])
    if not isinstance(pat[0], str):
        return [" ".join(first[:3])] if len(pat) > 1 and len(first) >= 3 else []
    return [" ".join(first[:n]) for n in (2, 3) if len(first) >= n]


OPENING_VALUES = 2  # values a template may open with, each a token of its own, apart by spaces


def after_holes(pat: template.Pattern) -> list[str]:
    """A template's keys when its first token holds a value ("{name}={rank} is outside [0,
    {size})", "'{model}' is not ...", "[{rank}] failed to ..."): its first two and three words
    after that token, up to the next value, behind "{} " ("{} is outside"). The query reads
    the words after a paste's first token alike (engine.holes_of): the token is read from
    the template's text with a letter for each value, as the paste's is (engine.token_len)."""
    shape, holes = "", []
    for seg in pat:
        if not isinstance(seg, str):
            holes.append(len(shape))
        shape += seg if isinstance(seg, str) else "x"
    start, found = 0, []
    for _ in range(OPENING_VALUES):
        end = start + token_len(shape[start:])[0]
        if not any(start <= at < end for at in holes):
            return []
        stop = next((at for at in holes if at >= end), len(shape))
        rest = shape[end:stop]
        found = template.words(rest)
        if found or stop == len(shape) or rest.strip(" "):
            break
        start = stop  # "{name}: {value} must be ...": the paste's text after a colon opens so
    if stop < len(shape) and found and re.match(r"[A-Za-z0-9]", rest[-1:]):
        found = found[:-1]  # a word touching the value after it runs on into it
    return [HOLE + " ".join(found[:n]) for n in (2, 3) if len(found) >= n]


def weight(patterns: int, df: int) -> int:
    """A word's rarity as an integer, so that both matchers add up the same scores."""
    return max(1, round(100 * math.log2((patterns + 1) / df)))


def project_starts(names: list[str]) -> list[list]:
    """[first position, name] of each run of one name."""
    return [[n, name] for n, name in enumerate(names) if n == 0 or names[n - 1] != name]


# --- cleaning a paste ------------------------------------------------------------------

# Prefixes that loggers put before a line. Each eats one space at most: the indentation
# left is how a traceback's frames are told apart.
# The projects' wings add their own (vLLM's logger: ERROR 11-01 09:43:08 [model.py:1560]).
_LOG_PREFIXES = [
    r"\([^()\n]*\bpid=\d+\) ?",  # a Ray actor's or named process's: (EngineCore_DP0 pid=1508)
    r"\[rank\d+\]: ?",  # torch.distributed: [rank0]:
    *(prefix for key in registry.available() for prefix in registry.wing(key).log_prefixes()),
    r"\[[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ [^\]\n]*\] ?",  # glog (PyTorch's C++): [W1101 09:43...]
    # ISO timestamps, optionally with a logger name (2025-11-01 09:43:08,123 - vllm -) or
    # bars with a level and a logger's name or place: loguru's (2025-04-29 22:14:28.456 |
    # ERROR    | module:function:42 - ), FastChat's (2023-12-27 11:25:36 | ERROR | stderr | )
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"(?: - [\w.]+ -| \|(?: [A-Z]+ +\|(?: [\w.:]+ [|-](?= ))?)?)? ?",
    # NCCL's own log lines: host:pid:tid [gpu] NCCL INFO ... (at a word's start, and the
    # host without colons: a search through a line stays linear)
    r"(?<!\S)[^\s:]+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|ERROR) ?",
    # A logger's source location alone, what is left of a line whose level and time a
    # paste cut off: [multiproc_executor.py:492]
    r"\[[\w.-]+\.py:\d+\] ?",
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?::[\w.]*:| - |: | )",  # logging: ERROR:root:
]


# All but the last two (a source location, the bare level name) tell a log line's start
# even in the middle of a line.
_LINE_MARKS = _LOG_PREFIXES[:-2]


# The rules of cleaning and of typed values, as regular expressions that Python (with
# re.ASCII) and JavaScript read alike; index.json carries them to both matchers.
RULES: dict[str, Any] = {  # JSON for the browser: patterns, and patterns by type
    "prefix": "(?:" + "|".join(f"(?:{p})" for p in _LOG_PREFIXES) + ")*",  # any number of them
    # A log pasted with its line breaks lost runs its lines together: where one starts is a
    # run of log prefixes (but a message may mention a "(pid=12)": that one only when it
    # repeats on the line), a traceback's header or its frame.
    "line_mark": "(?:" + "|".join(f"(?:{p})" for p in _LINE_MARKS) + ")+",
    "loose_mark": _LOG_PREFIXES[0],
    # (A run of spaces is tried from its start alone, (?<! ): tried from each of its spaces,
    # a long run costs its length squared.)
    "flat_traceback": r"(?<! ) +(?=Traceback \(most recent call last\)|File \"[^\"]*\", line \d+)",
    # ...and after the last frame's code, the exception line: "in f     raise KeyError(key)
    # KeyError: 'x'"
    "flat_frame": r"( *File \"[^\"]*\", line \d+.*?) ((?:[A-Za-z_]\w*\.)*[A-Z]\w*"
    r"(?:Error|Exception|Exit|Interrupt|Warning): .*)$",
    # Box drawing (rich's panels, tables): a frame, never part of a message.
    "box": "[\u2500-\u257f]+",
    # An exception line: ValueError: ..., pydantic_core._pydantic_core.ValidationError: ...
    # A bare "Warning:" is not one: C++ logs put it after their glog prefix.
    # Or a class of a module's, named in full: huggingface_hub.errors.OfflineModeIsEnabled: ...
    "exception": r"((?:[A-Za-z_]\w*\.)*(?:(?:[A-Z]\w*)?"
    r"(?:Error|Exception|Exit|Interrupt|Iteration)|[A-Z]\w*Warning)|(?:[a-z_]\w*\.)+[A-Z]\w*(?=: ))"
    r"(?:: |:?$)",
    # Markdown's bold marks around a line (an issue title in bold).
    "emphasis": r"^\*\*(?=\S)(?!.*\*\*.)|(?<=\S)\*\*$",
    # Whole lines that are no part of a message; they end the one above.
    "noise": r"Traceback \(most recent call last\):?"
    r"|The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:"
    r"|\d+ validation errors? for [\w.]+"
    r"|For further information visit \S+"
    r"|Process [\w-]+:",  # multiprocessing, before a child's traceback
    # pydantic wraps a validator's message: "Value error, <message> [type=value_error, ...]".
    "pydantic": r"(?:Value error|Assertion failed), (.*?)(?: \[type=.*)?$",
    "rank_suffix": r" \(rank \d+\)$",  # added to messages in distributed runs
    # A message inside a JSON or repr body, escaped once or more: model\\'s, \\", \\n.
    # (From a run of backslashes' start alone, as flat_traceback's spaces.)
    "escape": r"(?<!\\)\\+(?:(['\"])|[nrt])",
    # A release the paste names after a project's name: "vllm 0.6.3", "vLLM version 0.10.1".
    "version": r"[^0-9\n]{0,24}?\bv?(\d+(?:\.\d+)+)",
    # Quoted or bracketed text, as repr() prints values: 'auto', ['mp', 'ray'], "x".
    # An apostrophe within a word ("model's") opens no quote.
    "quoted": r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])"
    r'|(?<![A-Za-z0-9])"[^"]*"(?![A-Za-z0-9])'
    r"|\[[^\[\]]*\]",
    # The statement a traceback shows for its last frame: raise ValueError("...
    "raise": r"raise [A-Za-z_][\w.]*\(",
    # A line that goes on the statement: more string literals ("..." f"..." + "...").
    "literal_line": r"(?:\+ ?)?[rRbBuUfF]{0,2}[\"']",
    # One string literal; the last may be cut off, with the paste.
    "literal": r"([rRbBuUfF]{0,2})(\"|')((?:\\.|(?!\2)[^\\])*)(?:\2|$)",
    # A multi-argument exception prints its arguments as a tuple: ('...', '...', 80)
    "tuple": r"\((?:'[^']*'|\"[^\"]*\"), ",
    "tuple_item": r"'((?:\\.|[^'\\])*)'?|\"((?:\\.|[^\"\\])*)\"?|([^,()'\" ][^,()'\"]*)",
    # An error quoted in prose or wrapped in Markdown: "...", `...`, **...** (a closing mark
    # the paste cut off may be missing).
    "quoted_message": r"[\"`]\**([^\"`*]+)\**(?:[\"`]|$)",
    # A message in a JSON body (an API's error response): the string value of a key, whose
    # quotes pair up where a scan for quoted spans would pair them off
    "json_value": r'"[A-Za-z_][\w.-]*" ?: ?"((?:\\.|[^"\\])*)"',
    # An exception named within a line of prose or a title ("[Bug]: InternVL2 with tp=4,
    # AssertionError: 25 is not divisible by 4"): its message follows it.
    "named_exception": r"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): ",
    # A cut paste's mark: "...", "…", "[...]", "(truncated)"
    "ellipsis": r" ?(?:\.\.\.|\u2026|\[\.\.\.\]|\[truncated\]|\(truncated\))+ ?$",
    # What a typed hole's value looks like. Untyped holes (any, str, list) hold one token,
    # quoted string, bracketed group or comma-separated list of them (search._token_len);
    # a `text` hole holds anything.
    "types": {
        "int": r"[-+]?[0-9]+",
        "float": r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?inf|nan",
        "bool": r"True|False|true|false",
        "path": r"[^ ]+",
    },
}


# --- rating a candidate ------------------------------------------------------------------

# The words that say what a result matched (index.json carries them and RANKS to
# match.js, so both say the same).
HOW = {
    "message": "the message",
    "whole": "the message",
    "glued": "the message, rejoined where the terminal cut it",
    "prefix": "a prefix of the message",
    "sentence": "the first sentence of the message",
    "punctuation": "the message without its closing punctuation",
    "more": "all of this message, though the paste's goes on past it",
    "case": ", in other letter case",
    "quotes": ", with other quotes or none around a value",
    "tuple": "the exception's arguments, printed as a tuple",
    "quoted": "the message, quoted in the paste",
    "bare": "the message, without the quote marks Markdown ate",
    "fragment": "a run of the message's words, among other words",
    "source": "the raise statement of the traceback",
    "code": "the message's text as the code spells it, quoted in the paste",
    "generic": "a short message many errors print, so it may not be this one",
    "loose": "the same words, but a value of another kind than this message prints",
    "similar": "shares rare words with the paste",
    "elsewhere": ", printed by this engine's copy of the code: the paste points at another",
}


# The tiers of a result. Partial and generic fits rank together: the one that shows more
# of its template's text first, and of two that show as much, the whole fit (a generic
# template) before the cut. A loose fit (a generic one only with values unlike its
# placeholders') and a fragment (a run of a template's words among other words) say less:
# they rank after them, together, by how much text each shows. A wrapper's fit, and one
# another fit holds, rank after them (engine.unwrapped).
RANKS = {
    "exact": 0,
    "partial": 1,
    "generic": 1,
    "loose": 1.5,
    "fragment": 1.5,
    "aside": 2,
    "similar": 3,
}


def carried() -> dict[str, Any]:
    """What index.json carries of these, which both matchers read (engine.context)."""
    return {"query": QUERY, "rules": RULES, "how": HOW, "ranks": RANKS}

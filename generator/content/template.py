"""The message-template model: a message is literal text with `{name}` holes.

`{{` and `}}` stand for literal braces, as in Python's str.format; any other
brace that does not enclose a placeholder name is literal text too, so messages
that print dicts or sets need no escaping.
"""

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}")


@dataclass(frozen=True)
class Hole:
    name: str


Segment = str | Hole


@lru_cache(maxsize=1 << 17)  # every build asks for each message's segments several times
def parse(message: str) -> tuple[Segment, ...]:
    """Split a template into literal strings and holes, adjacent literals merged."""
    segments: list[Segment] = []
    pos = 0
    for match in _TOKEN.finditer(message):
        literal = message[pos : match.start()]
        if match.group(1):
            _append(segments, literal)
            segments.append(Hole(match.group(1)))
        else:
            _append(segments, literal + match.group(0)[0])
        pos = match.end()
    _append(segments, message[pos:])
    return tuple(segments)


def _append(segments: list[Segment], text: str) -> None:
    if not text:
        return
    if segments and isinstance(segments[-1], str):
        segments[-1] += text
    else:
        segments.append(text)


def placeholders(message: str) -> list[str]:
    """Placeholder names in order of first appearance."""
    names = (seg.name for seg in parse(message) if isinstance(seg, Hole))
    return list(dict.fromkeys(names))


def elided(message: str) -> str:
    """The message as printed with each value left out ("head_size … is too large"): a link
    preview's text where no person or rule wrote one, never a raw {placeholder}."""
    shown = "".join(seg if isinstance(seg, str) else "…" for seg in parse(message))
    return " ".join(shown.split())


# A message's tokens for aligning two wordings: words, marks, and each placeholder as one.
_ALIGN_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}|\w+|[^\w\s]")
_HOLE_TOKEN = "\0"


def aligned(old: str, new: str) -> dict[str, str]:
    """The placeholders of an older wording `old` that print what a placeholder of `new`
    prints, by their place in the two messages: each that stands, in a run of text the two
    wordings share, where a placeholder of `new` stands, with shared text beside it
    ("Free memory on device ({GiB}/{GiB_2} GiB)" and "... ({free_memory_gib}/{total_memory_gib}
    GiB)": GiB is free_memory_gib; a run with a word in it). A name found in two places, or
    a name `new` prints itself, maps to nothing; a name maps only to another."""

    def tokens(message: str) -> tuple[list[str], list[str | None]]:
        found = list(_ALIGN_TOKEN.finditer(message))
        return [_HOLE_TOKEN if m[1] else m[0] for m in found], [m[1] for m in found]

    (a, a_names), (b, b_names) = tokens(old), tokens(new)
    pairs: dict[str, set[str]] = {}
    for i, j, n in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        # shared text: a word of it (a lone placeholder, or one beside a colon, has none)
        shared = any(t != _HOLE_TOKEN and t[0].isalnum() for t in a[i : i + n])
        for k in range(n if shared else 0):
            name, other = a_names[i + k], b_names[j + k]
            if name and other:
                pairs.setdefault(name, set()).add(other)
    mine = set(b_names) - {None}
    return {
        name: next(iter(others))
        for name, others in pairs.items()
        if len(others) == 1 and name not in mine and next(iter(others)) != name
    }


def fill(message: str, values: dict[str, object]) -> str:
    """The message as the program would print it for these values."""
    return "".join(
        str(values.get(seg.name, "{" + seg.name + "}")) if isinstance(seg, Hole) else seg
        for seg in parse(message)
    )


# Search works on messages as pasted: whitespace runs (line breaks included) count as one space.
# The class is spelled out so that templates/assets/match.js matches exactly the same characters.
_SPACE = re.compile("[ \t\n\r\f\v\u00a0\u2028\u2029]+")
_WORD = re.compile(r"[A-Za-z0-9]+")

Pattern = list[str | list[str]]


def squash(text: str) -> str:
    """Whitespace runs as single spaces, none at the ends."""
    return _SPACE.sub(" ", text).strip(" ")


def words(text: str) -> list[str]:
    """The search words of a text: lowercase ASCII letter-digit runs, 2+ long, not all digits."""
    return _search_words(_WORD.findall(text))


def _search_words(runs) -> list[str]:
    return [w.lower() for w in runs if len(w) > 1 and not w.isdigit()]


def pattern(message: str, types: dict[str, str]) -> Pattern:
    """The message as search matches it: squashed literals and [name, type] holes."""
    out: Pattern = []
    for seg in parse(message):
        if isinstance(seg, Hole):
            out.append([seg.name, types.get(seg.name, "any")])
        else:
            out.append(_SPACE.sub(" ", seg))
    if out and isinstance(out[0], str):
        out[0] = out[0].lstrip(" ")
    if out and isinstance(out[-1], str):
        out[-1] = out[-1].rstrip(" ")
    return [seg for seg in out if seg != ""]


def pattern_words(pat: Pattern) -> list[str]:
    """The words every instance of a pattern contains, in order.

    A word touching a hole is left out: in an instance it runs on into the value
    (`fp{bits}` prints as `fp8`).
    """
    out = []
    for i, seg in enumerate(pat):
        if not isinstance(seg, str):
            continue
        runs = list(_WORD.finditer(seg))
        if runs and runs[0].start() == 0 and i > 0:
            runs = runs[1:]
        if runs and runs[-1].end() == len(seg) and i + 1 < len(pat):
            runs = runs[:-1]
        out += _search_words(run.group() for run in runs)
    return out


def record_patterns(messages: list[str], params: dict) -> list[tuple[Pattern, list[str]]]:
    """Each wording of a record as a pattern, with its words (params: name -> its Param).
    Made when the record is parsed and cached with it, as a rebuild indexes every record.
    An old wording's hole takes the page's name (page_name): search hands its value to the
    page under the name the page reads."""
    types = {name: param.type for name, param in params.items()}
    names = set(params) | set(placeholders(messages[0])) if messages else set(params)
    patterns = [pattern(m, types) for m in messages]
    for pat in patterns[1:]:
        own = {seg[0] for seg in pat if not isinstance(seg, str)}
        for seg in pat:
            if not isinstance(seg, str):
                seg[0] = page_name(seg[0], names - own)
                seg[1] = types.get(seg[0], seg[1])
    return [(pat, pattern_words(pat)) for pat in patterns]


# The name extraction gives a hole that prints an expression: `{needed_memory / GiB_bytes}`
# became `needed_memory_div_GiB_bytes` (sources.extract's operator names).
_EXPRESSION = re.compile(r"_(?:div|times|pow|mod|mul|plus|minus)_")


def page_name(name: str, names: set[str]) -> str:
    """The name the record's page gives this hole of an old wording: the same, or the
    placeholder of the message it prints in other units (`needed_memory_div_GiB_bytes`:
    `needed_memory`). The one source of the names search hands to pages and the terminal."""
    if name in names:
        return name
    head = _EXPRESSION.split(name, maxsplit=1)[0]
    return head if head != name and head in names else name


# Titles ---------------------------------------------------------------------------------

MAX_TITLE = 90
# A sentence a little longer than MAX_TITLE is kept whole: cut, it would lose the words it
# ends on, often what it says ("... alibi_slopes, sliding_window, logits_soft_cap", "(gfx950/
# gfx11)"), for the few characters an ellipsis saves (derived-truth samples 7309 to 7312).
MAX_WHOLE_TITLE = 120
_HOLE = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
# Words a title does not end on: they announced a value the title leaves out.
_DANGLING = frozenset(
    {"in", "of", "to", "be", "for", "at", "with", "by", "from", "is", "are", "was", "were"}
    | {"the", "a", "an", "and", "or", "than", "as", "got", "but", "expected", "into"}
    | {"after", "under"}
)


# Prepositions that announce a value: dropped with it when a clause ends on the value.
_ANNOUNCING = frozenset({"under", "in", "at", "on", "of", "for", "from", "with", "by", "into"})
_UNITS = r"(?:s|ms|us|x|[KMGT]i?B|Hz|%)(?![\w{])"
_COMPARES = re.compile(r"\}\s*(?:!=|==|<=|>=|<|>)\s*\w*\s*=?\s*\{")


_ONLY = re.compile(r"(?:\s+(?:" + "|".join(sorted(_DANGLING | {"on"})) + r"))+\s+only$", re.I)


def _balanced(text: str) -> str:
    """A title cut inside parentheses ("for x (supported") ends before the one left open."""
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            opened.pop()
    return text[: opened[0]].rstrip(" ,;:-") if opened else text


_LABELLED = r"[\w.()\[\]]+\s*=\s*[`'\"]?\{[^{}]*\}[`'\"]?"  # "max_len={n}", "len(x)={n}"
# A range right after "must be in" ("must be in [1, {max}]"), or an operand of an arithmetic
# test ("D % {ALIGN} == 0"): without them the sentence says nothing, so the placeholder's
# name stays in the value's place.
_MUST_RANGE = re.compile(
    r"(\b(?:must|should|needs? to|has to) (?:be |lie )?(?:in|within|between) )"
    r"([\[(][^\[\]()]*[\])])"
)
_OPERAND = re.compile(r"(?<=[%*/+-] )\{(\w+)\}(?= ?(?:==|!=|<=|>=|<|>))")
# A count and the things counted, both values ("At most {limit} {modality}(s) may be
# provided"): without them "At most (s) may be provided" is left, so their names stay.
_COUNTED = re.compile(
    r"\b((?:at most|at least|up to|more than|fewer than|less than) )\{(\w+)[^{}]*\}"
    r" \{(\w+)[^{}]*\}\(s\)",
    re.I,
)


def _named_operands(text: str) -> str:
    """Placeholders that a range or a test cannot lose, written as their names."""
    text = _MUST_RANGE.sub(
        lambda m: m.group(1) + re.sub(r"\{(\w+)[^{}]*\}", r"\1", m.group(2)), text
    )
    text = _COUNTED.sub(r"\1\2 \3(s)", text)
    return _OPERAND.sub(r"\1", text)


# A refusal that prints the value refused ("does not support {dtype} scales", "Unsupported
# activation: {act}"), and the sentence after it that says what is accepted, with no value.
_REFUSED = re.compile(
    r"^[^.;]*\b(?:unsupported|not supported|(?:does not|doesn't|do not|not) support)\b[^.;]*\{"
    r"[^{}]*\}[^.;]*\.\s+(Only\b(?:[^{}.;]|\.(?=\w))*?)\.?\s*$",
    re.I,
)


def _restriction(message: str) -> str:
    """What a title whose refused value is gone keeps of the next sentence: without it "X does
    not support scales" says no scales at all, where the code accepts float32 ones."""
    found = _REFUSED.search(message.split("\n", 1)[0])
    return "; " + found.group(1)[0].lower() + found.group(1)[1:] if found else ""


@lru_cache(maxsize=1 << 16)  # pages and lists ask for a record's title many times
def title(message: str) -> str:
    """A heading for a message: its first sentence without placeholders, cut to MAX_TITLE
    at a word when longer than MAX_WHOLE_TITLE; "" when too little text is left."""
    # The first line with words: a message written as an indented block opens on a newline.
    text = message.lstrip().split("\n", 1)[0]
    text = _named_operands(text)
    # Labelled values only: "...: shape={s} stride={t}", ", got max_len={n}": all go.
    text = re.sub(r":\s*(?:" + _LABELLED + r"[,;]?\s*)+(?=$|[.;])", "", text)
    text = re.sub(
        r"[,;]?\s*\b(?:but )?got\s+" + _LABELLED + r"(?:\s*(?:,|;|and|vs\.?)\s*" + _LABELLED + ")*",
        "",
        text,
    )
    # "..., but got {t} type", ", got {a} for indices {b}", ", actual: {x}": the clause that
    # reports the value found, to its end.
    text = re.sub(
        r"(?:\s*[,;:]\s*(?:but\s+)?|\s+but\s+)(?:got|received|actual)\s*:?\s+(?:an? )?[`'\"]?"
        r"\{[^{}]*\}[`'\"]?"
        r"[^.;:]*",
        "",
        text,
    )
    text = re.split(r":\s*[`'\"]?\{(?!\{)", text, maxsplit=1)[0]  # "...: {details}" ends it
    # "... but {reason} Falling back ...": a capital after a value starts another sentence.
    head = re.split(r"\s*\{[^{}]*\}\s+(?=[A-Z][a-z])", text, maxsplit=1)[0]
    if sum(ch.isalpha() for ch in _HOLE.sub("", head)) >= 8:
        text = head
    # A first clause that only compares values ("c{r} page_size={a} != expected={b}; C4
    # must ...") says nothing once they are gone: the clause after it says what must hold.
    first, sep, rest = text.partition("; ")
    if (
        sep
        and _COMPARES.search(first)
        and ": " not in first
        and re.search(r"\b(?:must|should|needs?)\b", rest)
        and sum(ch.isalpha() for ch in _HOLE.sub("", rest)) >= 20
    ):
        text = rest
    # A letter, a name's prefix or a unit glued to a value ("c{ratio}", "video_{i}", "{n}s",
    # "{size} GB") is only part of one: it goes with the value.
    text = re.sub(
        r"(?<![\w{}.])(?:[a-z]|[A-Za-z]\w*_)(\{[^{}]*\})(?![\w.])|(\{[^{}]*\})"
        + _UNITS
        + r"|(\{[^{}]*\}) (?:s|ms|us|[KMGT]i?B)(?![\w{])",
        r"\1\2\3",
        text,
    )
    text = re.sub(r"\s*\(\{[^{}]*\}[^(),{}]*\)", "", text)  # "({n} left)": a value's aside
    # "the {n}-token block": the value goes, the word it made a compound with stays.
    text = re.sub(r"\{[^{}]*\}-(?=[A-Za-z])", "", text)
    text = re.sub(r"\s*\(see [^()]*\)", "", text)  # a pointer to read more is no title
    # Drop a value with what frames it: " ({x})", "={x}", ": {x}", "'{x}'", "`{x}`", "{x}".
    text = re.sub(r"\s*[([][\w ,.]*[=:]?\s*[`'\"]?\{[^{}]*\}[`'\"]?\s*[)\]]", "", text)
    # "... under {scope}, and ...": the word that announced a value goes with it.
    text = re.sub(
        r"\s+(?:" + "|".join(sorted(_ANNOUNCING)) + r")\s+\{[^{}]*\}(?=\s*[,;:.()]|$)", "", text
    )
    text = re.sub(r"\s*[=:]\s*[`'\"]?\{[^{}]*\}[`'\"]?", "", text)
    text = re.sub(r"[`'\"]\{[^{}]*\}[`'\"]", "", text)
    text = _HOLE.sub(lambda m: {"{{": "{", "}}": "}"}.get(m.group(), ""), text)
    # What framed a value the title leaves out: "(, one-time)" -> "(one-time)", "(,)" -> "".
    text = re.sub(r"\(\s*[,;:]+\s*", "(", text)
    text = re.sub(r"\s+\(\s*\)", "", text)
    text = re.sub(r"\s+([,.;:!?)])(?!=)", r"\1", re.sub(r"\s+", " ", text)).strip(" ,;:")
    # The first sentence; a clause after ";" that says what must hold stays with it
    # ("gate tile gives {n} outputs; must be a multiple of 128"), and so does one that says
    # what the code does instead ("export failed on rank {r}; falling back to POSIX fd").
    sentence = re.split(
        r"(?<=[a-z0-9)`'\"])(?:[.!?]|;(?!\s+(?:must|should|falling back|fell back)\b))(?:\s|$)",
        text,
        maxsplit=1,
    )[0]
    sentence = re.sub(r"\b(but got|got|received)\s*[.,:]?$", "", sentence, flags=re.I)
    sentence += _restriction(message)
    sentence = _balanced(sentence.strip(" ,;:.(").rstrip("-"))
    # "supports {x} only" keeps its restriction: "supports only"; "on {x} only": "only".
    sentence = _ONLY.sub(" only", sentence)
    while (words := sentence.rsplit(" ", 1))[-1].lower() in _DANGLING and len(words) > 1:
        sentence = words[0].rstrip(" ,;:")  # "... indices in" once its value is gone
    if sum(ch.isalpha() for ch in sentence) < 8:
        return ""
    if len(sentence) > MAX_WHOLE_TITLE:
        cut = sentence[:MAX_TITLE].rsplit(" ", 1)[0].rstrip(" ,;:-(")
        sentence = cut + "…"
    first = sentence.split(" ", 1)[0]
    if first.isalpha() and first.islower():  # an identifier (num_heads) keeps its case
        sentence = sentence[0].upper() + sentence[1:]
    return sentence

"""The settings a message names in its own words, and the value it says passes.

A message often says which setting to change: `Use --enable-lora to enable LoRA.`, `(--pp-size
must be 1)`, `Try increasing `gpu_memory_utilization``, `Unsupported tool_call_parser:
{tool_call_parser}`. This module reads the message's template for

- flags: `--flag`, `--flag=value`, `--flag value` (a value the option accepts), in their `-`/`_`
  forms, `--no-flag`, and a JSON flag's key (`--attention-config.backend`);
- names: a setting's name in backticks or quotes, or written as a word with an underscore
  (`max_model_len`, `VLLM_USE_V1`), and placeholders whose name is a setting's
  (`{tool_call_parser}`, `{self.max_num_seqs}`);
- environment variables the message calls one (`the environment variable NCCL_P2P_DISABLE`,
  `CUDA_VISIBLE_DEVICES=0`), when the project's own list does not hold them;
- a choice in quotes (`the 'flashmla' backend`) that is a value of exactly one option.

Each word is asked of the project's `Knowledge` (its settings at that release: engine and
server arguments, config fields behind a JSON flag, request fields, environment variables); a
word that fits none, or more than one setting, names nothing: no link is better than a wrong
one. Where the message says what to do with the setting, that is its `passes`: `Use --x` (a
switch) sets it, `--x must be 1` gives 1, `Use --x y` gives y, `'y' is not supported` any but y.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from errorkb.content.derived import claimed

if TYPE_CHECKING:
    from errorkb.sources.explain import Knowledge, Setting

FLAGS = Path(__file__).resolve().parent.parent / "flags"

# A flag as a message writes it: not inside a word, a path or a longer option.
_FLAG = re.compile(r"(?<![\w./\\-])(--[A-Za-z0-9][\w-]*(?:\.[A-Za-z_]\w*)*)")
_SNAKE = re.compile(r"(?<![\w.$-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w(-])")
_UPPER = re.compile(r"(?<![\w.$-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w(])")
_QUOTED = re.compile(r"(`|'|\")([\w.+-]+)\1")
_HOLE = re.compile(r"\{([A-Za-z_][\w.]*)\}")
_ENV_SAID = re.compile(
    r"(?:environment\s+variables?|env(?:ironment)?\s+vars?|export)\s+[`'\"]?([A-Z][A-Z0-9_]+)\b"
    r"|\b([A-Z][A-Z0-9_]+)[`'\"]?\s+(?:environment\s+variable|env(?:ironment)?\s+var)\b"
    r"|(?<![\w.$-])([A-Z][A-Z0-9]*_[A-Z0-9_]+)=(?=[\w'\"])"
)
# Words a value after a flag is not: the sentence goes on.
_NOT_VALUES = frozenset(
    [
        "is",
        "are",
        "was",
        "must",
        "should",
        "can",
        "cannot",
        "to",
        "and",
        "or",
        "with",
        "for",
        "when",
        "if",
        "but",
        "not",
        "the",
        "a",
        "an",
        "as",
        "in",
        "on",
        "of",
        "by",
        "only",
        "requires",
        "require",
        "needs",
        "need",
        "be",
        "has",
        "have",
        "will",
        "does",
        "do",
        "set",
    ]
)
_END = ".,;:)]}'\"`"
# Request fields that identify a request or carry what it asks about, not a setting of it: a
# message that prints `request_id` or `prompt_token_ids` says nothing to change there.
_CONTENT = re.compile(r"(^|_)(ids?|uuid|embeds)$|^(prompt|messages|input|inputs|sampling_params)$")


@dataclass(frozen=True)
class Named:
    """A setting the message names: as written (`--enable-lora`, the placeholder's name), how
    (text, placeholder, choice), and where in the template (for the words around it)."""

    name: str
    setting: "Setting"
    how: str
    start: int
    end: int
    value: str = ""  # the value the message gives it: `--x=y`, `--x y`, a quoted choice


@cache
def parser_options(project: str, version: str) -> dict[str, dict]:
    """Each option string of the release's parser (generator/flags/<project>-<version>.json,
    made by `errorkb.sources.flagdata` from the release's wheel) -> its entry; {} without."""
    path = FLAGS / f"{project}-{version}.json"
    if not version or not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict] = {}
    for option in data.get("options", []):
        for string in option.get("strings", []):
            out.setdefault(string, option)
    return out


def dashed(flag: str) -> str:
    """`--max_model_len` as `--max-model-len` (vLLM's parser reads both; a message may)."""
    return "--" + flag[2:].replace("_", "-") if flag.startswith("--") else flag


def _same(a: "Setting", b: "Setting") -> bool:
    return (a.kind, a.flag, a.key, a.env) == (b.kind, b.flag, b.key, b.env)


def distinct(found: list) -> list["Setting"]:
    """The settings of `found` (None dropped), each once."""
    out: list[Setting] = []
    for setting in found:
        if setting is not None and not any(_same(setting, s) for s in out):
            out.append(setting)
    return out


def _one(knowledge: "Knowledge", word: str) -> "Setting | None":
    """The one setting a word names; None for none, several, or a key of the model's
    config.json (the model's own: a message's word for it says nothing to change)."""
    found = knowledge.named(word)
    return found[0] if len(found) == 1 and found[0].kind != "model-config" else None


def _value_after(text: str, end: int, option: dict | None) -> str:
    """The value written after a flag (`--x=y`, `--x y`) when the option accepts it."""
    rest = text[end:]
    if rest.startswith("="):
        value = re.match(r"=([^\s,;)]+)", rest)
        return value[1].strip(_END) if value and accepts(option, value[1].strip(_END)) else ""
    value = re.match(r"[ \t]+[`'\"]?([\w.+-]+)", rest)
    if not value or option is None or option.get("nargs") == 0:
        return ""
    word = value[1].rstrip(_END)
    if word.lower() in _NOT_VALUES or not (option.get("choices") or _numeric(option)):
        return ""  # a free-text option's next word may be the sentence's
    return word if accepts(option, word) else ""


def takes_json(option: dict) -> bool:
    """Whether an option may take a JSON object (neither a switch, a number nor a choice)."""
    return option.get("nargs") != 0 and not option.get("choices") and not _numeric(option)


def _numeric(option: dict) -> bool:
    return any(t in str(option.get("type", "")) for t in ("int", "float"))


def accepts(option: dict | None, value: str) -> bool:
    """Whether the option takes this value: one of its choices, a number of its type."""
    if option is None or option.get("nargs") == 0 or not value or "{" in value:
        return False
    if option.get("choices"):
        return value in [str(c) for c in option["choices"]]
    kind = str(option.get("type", ""))
    try:
        if "int" in kind:
            int(value)
        elif "float" in kind:
            float(value)
    except ValueError:
        return False
    return True


def scan(message: str, knowledge: "Knowledge", requests: bool = True) -> list[Named]:
    """The settings a message's template names, each place it names one (the flags first,
    then the placeholders, then the other words; a setting may be named more than once). Without
    `requests` (code that does not handle a request: a kernel's `top_k`, a model's
    `input_ids`), a name or placeholder that is a request field's names nothing."""
    found: list[Named] = []

    def add(name: str, setting: "Setting | None", how: str, m: re.Match, group: int, value=""):
        if setting is None or any(f.start == m.start(group) for f in found):
            return
        if setting.kind == "request-field" and (not requests or _CONTENT.search(setting.key)):
            return
        found.append(Named(name, setting, how, m.start(group), m.end(group), value))

    text = message
    taken: list[tuple[int, int]] = []
    for m in _FLAG.finditer(text):
        word = m[1].rstrip("-")
        setting = _one(knowledge, word)
        if setting is not None:
            option = knowledge.option(dashed(word.split(".", 1)[0]))
            add(word, setting, "text", m, 1, _value_after(text, m.end(1), option))
        taken.append(m.span())
    for m in _HOLE.finditer(text):
        taken.append(m.span())
        last = m[1].rsplit(".", 1)[-1]
        last = last[: -len("_arg")] if last.endswith("_arg") else last  # {chat_template_arg}
        if "_" in last.strip("_"):
            add(m[1], _one(knowledge, last), "placeholder", m, 1)

    def free(m: re.Match) -> bool:
        return not any(a <= m.start() < b for a, b in taken)

    for m in _QUOTED.finditer(text):
        if free(m) and "_" in m[2].strip("_") and not m[2].startswith("-"):
            add(m[2], _one(knowledge, m[2]), "text", m, 2)
    for pattern in (_SNAKE, _UPPER):
        for m in pattern.finditer(text):
            if free(m):
                add(m[1], _one(knowledge, m[1]), "text", m, 1)
    for m in _ENV_SAID.finditer(text):
        group = next(i for i in (1, 2, 3) if m[i])
        if free(m) and not knowledge.named(m[group]):
            add(m[group], knowledge.environment(m[group]), "text", m, group)
    for m in _QUOTED.finditer(text):
        if free(m):
            add(m[2], _choice(knowledge, text, m), "choice", m, 2, m[2])
    return found


_WORDS = re.compile(r"[A-Za-z][\w-]*")


def _choice(knowledge: "Knowledge", text: str, m: re.Match) -> "Setting | None":
    """The option a quoted value is a choice of, when the words beside it name that option and
    no other: `io_backend='kernel'`, `GDN prefill backend 'sycl'`, `mamba cache mode 'align'`
    (its whole name, or two or more of its last words). A value several options take
    (`auto`, a backend of several) or a lone word beside it (`'cuda' devices`) names none."""
    value = m[2]
    if value.isdigit() or len(value) < 2:
        return None
    before = [
        w.lower().replace("_", "-")
        for w in _WORDS.findall(text[max(0, m.start() - 60) : m.start()])
    ]
    after = [w.lower().replace("_", "-") for w in _WORDS.findall(text[m.end() : m.end() + 60])]
    near = {"-".join(before[-k:]) for k in (1, 2, 3) if len(before) >= k}
    near |= {"-".join(after[:k]) for k in (1, 2, 3) if len(after) >= k}
    fitting = [flag for flag in knowledge.choosing(value) if any(_ends(flag, w) for w in near)]
    return _one(knowledge, fitting[0]) if len(fitting) == 1 else None


def _ends(flag: str, words: str) -> bool:
    """Whether `words` (dashed) are the whole name of the option, or two or more of its last
    words: `io-backend` of `--hicache-io-backend`, `prefill-backends` of `--x-prefill-backend`."""
    name = flag.lstrip("-")
    forms = (words, words[:-1]) if words.endswith("s") else (words,)
    return any(name == w or ("-" in w and name.endswith("-" + w)) for w in forms)


# What the message says to do with it ---------------------------------------------------

# Where a clause ends: the words that say what to do with a setting are in its clause.
_CLAUSE = re.compile(r"[.;!?](?:\s|$)|:\s|\n|\(|\)|,\s+(?:but|while|so|and|please)\b")
# Words that turn a clause against the setting (`cannot be used with --x`): said nothing of.
_NEGATION = re.compile(
    r"\b(not|no|cannot|can't|don't|doesn't|isn't|aren't|unsupported|incompatible|without|"
    r"conflicts?|invalid|unknown|unrecognized|neither|nor|mutually|either|ignor\w*|"
    r"deprecated|removed|overrid\w*|only)\b",
    re.I,
)
_OBJECT = r"(?:the\s+)?(?:flag\s+|option\s+|argument\s+|environment\s+variable\s+|env\s+var\s+)?"
_DO = re.compile(
    r"(?<!\bto\s)(?<!\bTo\s)\b(use|set|pass|add|specify|enable|try|launch\s+with|run\s+with|start\s+with|please|"
    r"requires?|needs?|using|setting|passing|adding|specifying|enabling)\s+" + _OBJECT + r"$",
    re.I,
)
_UNDO = re.compile(
    r"\b(remove|disable|drop|unset|omit|avoid|removing|disabling|dropping|unsetting)\s+"
    + _OBJECT
    + r"$",
    re.I,
)
_REFUSED = re.compile(
    r"^\s*(?:is\s+|are\s+)?(?:not\s+supported|unsupported|not\s+allowed|not\s+compatible|"
    r"incompatible|not\s+available)\b",
    re.I,
)
_MUST = r"^\s*(?:must|should|needs?\s+to|has\s+to|have\s+to|is\s+required\s+to)\s+be\s+"
_BOUNDS = (
    (
        re.compile(_MUST + r"(?:at\s+least|>=|no\s+(?:less|smaller|lower)\s+than)\s+(\S+)", re.I),
        ">=",
    ),
    (
        re.compile(_MUST + r"(?:at\s+most|<=|no\s+(?:more|greater|larger)\s+than)\s+(\S+)", re.I),
        "<=",
    ),
    (re.compile(_MUST + r"(?:greater|larger|higher|more)\s+than\s+(\S+)", re.I), ">"),
    (re.compile(_MUST + r"(?:less|smaller|lower)\s+than\s+(\S+)", re.I), "<"),
    (re.compile(r"^\s*(>=|<=|>|<)\s*(-?\d[\d.]*)(?![\w.])"), ""),
)
_MUST_EQUAL = re.compile(_MUST + r"(?:set\s+to\s+|==\s*|equal\s+to\s+)?[`'\"]?([\w.+-]+)", re.I)
_MUST_SET = re.compile(
    _MUST + r"(?:set|specified|provided|enabled|given|passed|used|true)\b"
    r"(?!\s+(?:to|the\s+same|identically|consistently|equal|alike)\b)",
    re.I,
)
_MUST_NOT = re.compile(
    r"^\s*(?:must|should)\s+not\s+be\s+(?:set|specified|provided|enabled|given|passed|used)\b",
    re.I,
)
_SET_TO = re.compile(r"^\s*to\s+[`'\"]?([\w.+-]+)", re.I)
_ASSIGNED = re.compile(r"^=[`'\"]?([\w.+-]+)")
_SIGNS = {"positive": (">", 0), "non-negative": (">=", 0), "nonnegative": (">=", 0)}
_ENDS_HERE = re.compile(r"^[`'\")]*\s*(?:$|[.,;)]|\b(?:to|when|and|or|if|for|so|in|on)\b)", re.I)
# A list of settings set to one value: `set tp_size, sp_degree, and ring_degree to 1`.
_LIST_TO = re.compile(r"^[`'\"]*\s*,[\w\s,`'\"-]*?\bto\s+[`'\"]?([\w.+-]+)", re.I)


def _clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The words of the clause before and after a span."""
    cuts = [m.end() for m in _CLAUSE.finditer(text, 0, start)]
    after_cut = _CLAUSE.search(text, end)
    return text[cuts[-1] if cuts else 0 : start], text[
        end : after_cut.start() if after_cut else None
    ]


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return None


def _valid(
    hit: Named, option: dict | None, word: str, written: bool = False
) -> int | float | bool | str | None:
    """A value the message gives the setting, as the setting takes it; None when it cannot:
    not one of the option's choices, not a number where one is wanted, a word of the
    sentence (`must be set`, `to enable`) rather than a value. Free text is read only where
    the message writes it as the value (`x=y`, `--x=y`, `X=y` of a variable)."""
    word = word.strip(_END)
    if not word or word.lower() in _NOT_VALUES or "{" in word:
        return None
    free = option is None or not (option.get("choices") or _numeric(option))
    if option is not None and not accepts(option, word):
        return None
    number = _number(word)
    if number is not None and (option is None or _numeric(option)):
        return number
    if free and not written:
        return None
    if hit.setting.key and word.lower() in ("true", "false"):
        return word.lower() == "true"  # a key of a JSON object
    return word


def passes(text: str, hit: Named, option: dict | None) -> dict | None:
    """The value the message's own words say passes for a setting it names, or None when they
    say none: a switch to set (`Use --enable-lora`) or leave out (`Remove --enforce-eager`),
    `must be 1`, `must be at least 2`, `Use --x y`, `requires x=1`, `'y' is not supported`
    (any value but y). A clause against the setting (`cannot be used with --x`) says none."""
    before, after = _clause(text, hit.start, hit.end)
    start = hit.start
    while start > 0 and text[start - 1] in "`'\"(":
        start -= 1
    lead = text[max(0, start - 60) : start]
    boolean = option is not None and option.get("nargs") == 0
    value: int | float | str | None = None
    rest = after.lstrip("`'\"")
    if hit.value:
        value = _valid(hit, option, hit.value, written=True)
        # the value written after a flag (`--x=y`, `--x y`) is not the sentence's
        rest = rest[rest.find(hit.value) + len(hit.value) :] if hit.how != "choice" else rest
        rest = rest.lstrip("`'\"")
    elif assigned := _ASSIGNED.match(rest):
        value = _valid(hit, option, assigned[1], written=True)
        if value is None:
            return None  # a value the setting does not take, or one we cannot read
        rest = rest[assigned.end() :].lstrip("`'\"")
    if value is not None and _REFUSED.match(rest):
        return {"op": "!=", "value": value}
    negated = bool(_NEGATION.search(before))
    if _NEGATION.search(rest) and not _MUST_NOT.match(rest):
        negated = True  # `(--dcp-size > 1) does not support ...`: the failing case
    if hit.how == "choice":
        if (
            negated
            and value is not None
            and re.search(r"\b(not\s+supported|unsupported)\b", before, re.I)
        ):
            return {"op": "!=", "value": value}
        return {"op": "==", "value": value} if value is not None and _DO.search(lead) else None
    if negated:
        return None
    if value is not None:
        doing = _DO.search(lead) or re.match(r"^\s*(?:is\s+)?required\b", rest, re.I)
        return {"op": "==", "value": value} if doing else None
    if _UNDO.search(lead) or _MUST_NOT.match(rest):
        return {"op": "unset"}
    for pattern, op in _BOUNDS:
        if m := pattern.match(rest):
            if op == "" and not _DO.search(lead):
                return None  # `when x > 1`: the case that fails, not the one that passes
            op, raw = (m[1], m[2]) if op == "" else (op, m[1])
            if re.match(r"\s*[-+*/×^]", rest[m.end() :]):
                return None  # `>= 1 + num_speculative_tokens`: a bound we cannot compute
            number = _number(raw.strip(_END))
            return {"op": op, "value": number} if number is not None else None
    if m := _MUST_EQUAL.match(rest):
        word = m[1].strip(_END).lower()
        if word in _SIGNS:
            op, bound = _SIGNS[word]
            return {"op": op, "value": bound}
        if not _MUST_SET.match(rest) and not boolean:
            found = _valid(hit, option, m[1])
            return {"op": "==", "value": found} if found is not None else None
    if _MUST_SET.match(rest):
        return {"op": "set"}
    if _DO.search(lead) or re.search(r"\bset\s+$", lead, re.I):
        sentence = re.split(r"[.;!?](?:\s|$)", text[hit.end :], maxsplit=1)[0]
        if m := _LIST_TO.match(sentence):  # the value a list is set to, the first's as well
            found = _valid(hit, option, m[1]) if not boolean else None
            return {"op": "==", "value": found} if found is not None else None
        if (m := _SET_TO.match(rest)) and not boolean:
            found = _valid(hit, option, m[1])
            if found is not None:
                return {"op": "==", "value": found}
        if boolean or (hit.setting.flag and _ENDS_HERE.match(rest)):
            return {"op": "set"}
    return None


def requests_handled(kind: str, stage: str | None) -> bool:
    """Whether code of this kind and stage handles a request: its words may name the
    request's fields."""
    return kind == "http" or stage == "request-handling"


def message_passes(message: str, hit: Named, knowledge: "Knowledge") -> dict | None:
    """`passes` for a setting the message names, with its option's parser entry."""
    option = None
    if hit.setting.flag:
        option = knowledge.option(hit.setting.flag) or knowledge.option(
            dashed(hit.name.split(".", 1)[0])
        )
    return passes(message, hit, option)


def same(entry: dict, setting: "Setting") -> bool:
    """Whether a `derived.flags` entry is this setting."""
    mine = (setting.kind, setting.flag, setting.key, setting.env)
    return mine == tuple(entry.get(k, "") for k in ("kind", "flag", "key", "env"))


def entries(message: str, knowledge: "Knowledge", requests: bool, path: str) -> list[dict]:
    """The `derived.flags` entries of the settings a message names, with `named` (how) and,
    where its words say one, `passes`; none for code of another program (`settings_apply`)."""
    out: list[dict] = []
    if not knowledge.settings_apply(path):
        return out
    for hit in scan(message, knowledge, requests):
        entry = next((e for e in out if same(e, hit.setting)), None)
        if entry is None:  # named first here: its word, how
            entry = hit.setting.entry(hit.name)
            entry["named"] = hit.how
            out.append(entry)
        value = message_passes(message, hit, knowledge) if "passes" not in entry else None
        if value:
            entry["passes"] = value
    return out


_AFTER_FLAGS = ("stage", "category", "explanation", "try", "divisibility")


def with_named(record, knowledge: "Knowledge") -> dict | None:
    """A removed record's `derived` (its last release's) with the settings its own message
    names, as `knowledge` (the pinned release's) knows them: a flag of that parser with the
    same name is taken for the same setting only because the message names it. None when
    nothing changes. The entries a previous run added (`named`) are made anew."""
    derived = record.data.get("derived")
    message = record.data.get("message")
    if not isinstance(derived, dict) or not isinstance(message, str):
        return None
    old = derived.get("flags") or []
    kept = [f for f in old if not f.get("named")]
    path = (record.data.get("source") or {}).get("path", "")
    knowledge = knowledge.program(path)  # the settings of the program its code runs in
    requests = requests_handled(record.data.get("kind", "raise"), derived.get("stage"))
    added = [
        entry
        for entry in entries(message, knowledge, requests, path)
        if not any(_key(entry) == _key(k) for k in kept)
    ]
    flags = kept + added
    if flags == old:
        return None
    out: dict = {}
    for key, value in derived.items():
        if key == "flags":
            continue
        if key in _AFTER_FLAGS and flags and "flags" not in out:
            out["flags"] = flags
        out[key] = value
    if flags and "flags" not in out:
        out["flags"] = flags
    return claimed(out, record.data.get("kind", "raise"), record.data.get("level", ""))


def _key(entry: dict) -> tuple:
    return tuple(entry.get(k, "") for k in ("kind", "flag", "key", "env"))

"""E126: every flag written in content parses with its engine's own argument parser, at the
release the text was written for.

Each engine's parser at a release is data, `generator/flags/<project>-<version>.json`, which
`python -m errorkb.sources.flagdata` makes from the release's wheel: for its pinned release
(the project file's `version`) and for each release an explained record was checked against.
From it this module builds an `argparse.ArgumentParser` with
the same option strings, nargs and `allow_abbrev`, and reads each flag with argparse's own
`_parse_optional` (exact names, unique prefixes when abbreviations are allowed, `--x=value`),
after the rewrites the engine's parser makes first (vLLM's `--a_b`, `--x.key`, `-O3`).

Which release's parser reads a record's flags:
- its text (solutions, example fixes, meaning...): the release it was checked against
  (`checked.release`), else the pinned one; a checked release with no data is a problem (make
  it). A command the pinned release launches with that the checked one lacks (`vllm serve`
  in a record checked at vLLM 0.4.3) is refused;
- its `derived` block: the pinned release's (it is the pinned code's), but a removed record's
  is its last release's (`versions.last`; skipped where that release has no data), save the
  settings its message names that said.with_named adds as the pinned release knows them
  (`named`, with a `url` into the pinned code): those are read with the pinned parser. A
  `named` entry may be either release's (explain named it when `history` scanned the last
  release; with_named when `rederive` read the pinned one; an entry without a `url` does not
  say which): it is refused only when both parsers refuse it. An active
  record whose block is an older release's (`derived.ref` `v<version>`: one that came back
  from removed keeps its last release's block until `errorkb rederive`) is read likewise;
- a stack record's advice for an engine (`engines.<engine>`): the release its `checked.release`
  names, else the engine's pinned release; a guide: the engines' pinned releases.

Where flags are written, and whose they are:
- a command that starts the engine (`vllm serve ...`, `python -m sglang.launch_server ...`,
  the launchers of the data file; environment variables before it, `\\` continuations, and
  `;`, `&&`, `|` between commands are read as a shell does): every option of it, with its
  values (a missing value, a value outside the choices). Other programs' commands (pip,
  torchrun, docker...) are not read;
- in a record's prose (solutions, meaning, trigger, situations, prevention, notes, derived
  `try`) an inline code span or a code line that starts with an option (`--max-model-len
  8192`) is the record's engine's: the engine of an engine's record, that engine for a stack
  record's `engines.<engine>` advice; the names are checked, and a value after `=` or after
  the option against its choices;
- `derived.flags[].flag`, the option an engine or server argument is set with;
- a guide's shell blocks and inline code: commands only (a guide has no one engine).

A value that reads as a placeholder (`<N>`, `$TP`, `{tp}`, `...`, `N`) is not checked.
"""

import argparse
import difflib
import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from errorkb.content.model import Content, Guide, Problem, Record

FOLDER = Path(__file__).resolve().parent.parent / "flags"
CODE = "E126"
_SHELL = {"", "bash", "sh", "shell", "console", "zsh", "text"}
_SEPARATORS = {";", "&&", "||", "|", "&", ";;"}
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_PLACEHOLDER = re.compile(r"[<>{}$…]|\.\.\.|^[A-Z][A-Z_0-9]*$|^[xX]$")
_REDIRECT = re.compile(r"^\d*(>>?|<)(&\d)?([^>]*)$")  # > log, 2>&1, < in; not <N>
_PROSE = ("meaning", "trigger", "prevention")
_LISTS = ("situations", "solutions")


def data_path(project: str, version: str, program: str = "") -> Path:
    """A project's parser data at a release; `program`: another program of the project with a
    parser of its own (SGLang's `sglang generate`), whose file is `<project>-<program>-<v>`."""
    name = f"{project}-{program}-{version}" if program else f"{project}-{version}"
    return FOLDER / f"{name}.json"


class _Refused(Exception):
    """What argparse would stop with (its `error`), raised instead of exiting."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Refused(message)


class _Option(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        pass


@dataclass
class Engine:
    """One engine's parser at one release, from its data file."""

    name: str  # "vLLM 0.33.0"
    data: dict
    parser: _Parser
    actions: dict[int, dict]  # id(action) -> its entry of the data

    @classmethod
    def of(cls, label: str, data: dict) -> "Engine":
        parser = _Parser(
            prog=data["prog"],
            allow_abbrev=data["allow_abbrev"],
            prefix_chars=data.get("prefix_chars", "-"),
            add_help=False,
        )
        actions = {}
        for option in data["options"]:
            action = parser.add_argument(
                *option["strings"], dest=option["dest"], nargs=option["nargs"], action=_Option
            )
            actions[id(action)] = option
        return cls(f"{label} {data['release']}", data, parser, actions)

    def resolve(self, word: str) -> tuple[dict | None, str, str | None]:
        """(its option, the option string, the value after `=`) of a word argparse reads as
        an option; (None, word, None) when the parser has no such option. Raises _Refused
        with argparse's message for an ambiguous prefix."""
        found = self.parser._parse_optional(word)
        if found is None:
            return None, word, None
        if isinstance(found, list):  # Python 3.12.7+: every match
            if len(found) > 1:
                names = ", ".join(f[1] for f in found)
                raise _Refused(f"ambiguous option: {word} could match {names}")
            found = found[0]
        action, string, *rest = found
        explicit = rest[-1] if rest else None
        if action is None:
            return None, string, None
        return self.actions[id(action)], string, explicit

    def candidates(self, word: str) -> list[str]:
        name = word.split("=", 1)[0]
        known = list(self.parser._option_string_actions)
        return difflib.get_close_matches(name, known, n=3, cutoff=0.75)


@cache
def _engine(project: str, version: str, label: str, program: str = "") -> Engine | None:
    try:
        data = json.loads(data_path(project, version, program).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return Engine.of(label, data)


def engine(content: Content, key: str, release: str | None = None) -> Engine | None:
    """The parser of a project of the content at a release (default: its pinned one), when
    that release has parser data."""
    project = content.projects.get(key)
    if project is None or not project.version:
        return None
    return _engine(key, release or project.version, project.name or key)


def at_release(pinned: Engine, other: Engine) -> Engine:
    """`other` (an engine's parser at an older release), knowing the commands the pinned
    release launches with that `other`'s lacks: a launch with one of those is refused."""
    own = list(other.data.get("launchers", []))
    absent = [dict(one, absent=True) for one in pinned.data.get("launchers", []) if one not in own]
    if not absent:
        return other
    data = {**other.data, "launchers": own + absent}
    return Engine(other.name, data, other.parser, other.actions)


# Reading words -----------------------------------------------------------------------------


def logical_lines(code: str, prompts: tuple[str, ...] = ("$ ",)) -> Iterator[tuple[int, str]]:
    """(line offset, text) of each non-empty logical line of a shell snippet: `\\`
    continuations joined, a prompt before it taken off, comment lines among them."""
    start, logical = 0, ""
    for i, raw in enumerate(code.split("\n")):
        text = raw.strip()
        if not logical:
            start = i
            text = next((text[len(p) :] for p in prompts if text.startswith(p)), text)
        if text.endswith("\\"):
            logical += text[:-1] + " "
            continue
        if logical + text:
            yield start, logical + text
        logical = ""


def commands(code: str) -> Iterator[tuple[int, list[str]]]:
    """(line offset, words) of each command of a shell snippet: `\\` continuations joined,
    comments dropped, split at ;, &&, || and |."""
    for start, line in logical_lines(code, ("$ ", "> ")):
        if not line.startswith("#"):
            for words in _split(line):
                yield start, words


def _split(line: str) -> list[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not a command this check can read
        return []
    found: list[list[str]] = []
    words: list[str] = []
    for token in [*tokens, ";"]:
        if token in _SEPARATORS or _REDIRECT.match(token):
            found, words = found + [words] * bool(words), []
        else:
            words.append(token)
    return found


def launch(words: list[str], launchers: list[dict]) -> tuple[dict, list[str]] | None:
    """(the launcher, the words after it) when these words start the engine."""
    for i, word in enumerate(words):
        for launcher in launchers:
            if "command" in launcher:
                first, *rest = launcher["command"]
                after = words[i + 1 : i + 1 + len(rest)]
                if word.rsplit("/", 1)[-1] == first and after == rest:
                    return launcher, words[i + 1 + len(rest) :]
            elif word == "-m" and words[i + 1 : i + 2] == [launcher["module"]]:
                return launcher, words[i + 2 :]
    return None


# Checking words ----------------------------------------------------------------------------


def _rewrite(word: str, rewrites: list[str]) -> str:
    """The word as the engine's parser hands it to argparse (vLLM's FlexibleArgumentParser:
    `_` as `-` in a long option's name, up to its first dot; `--x.key` is `--x`)."""
    if not word.startswith("--"):
        return word
    name, eq, value = word.partition("=")
    if "underscores" in rewrites:
        head, dot, tail = name[2:].partition(".")
        name = "--" + head.replace("_", "-") + dot + tail
    if "dotted" in rewrites and "." in name:
        return name.split(".", 1)[0]  # its value is a key's, not the option's
    return name + eq + value


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value)) or not value


def _choice_problem(engine: Engine, option: dict, string: str, value: str) -> str | None:
    choices = option.get("choices")
    if not choices or _placeholder(value):
        return None
    values = value.split(",") if option["nargs"] not in (0, 1, "?") else [value]
    for one in values:
        if one not in [str(c) for c in choices]:
            listed = ", ".join(str(c) for c in choices)
            return (
                f"`{string} {one}`: invalid choice in {engine.name}'s parser; choose from {listed}"
            )
    return None


def check_words(
    engine: Engine, words: list[str], command: bool, launcher: dict | None = None
) -> list[str]:
    """Why the engine's parser refuses these words (the arguments of a launch when
    `command`, else a mention in prose: names and choices, no arity), one reason a flag."""
    rewrites = engine.data.get("rewrites", [])
    launcher = launcher or {}
    why: list[str] = []
    i = 0
    while i < len(words):
        raw = words[i]
        i += 1
        if raw in launcher.get("removes", []):
            i += 1
            continue
        if any(raw.startswith(r + "=") for r in launcher.get("removes", [])):
            continue
        if "optimization-level" in rewrites and re.fullmatch(r"-O(=?\w+)?", raw):
            if raw == "-O" and i < len(words) and words[i] in {"0", "1", "2", "3"}:
                i += 1
            continue
        word = _rewrite(raw, rewrites)
        try:
            option, string, explicit = engine.resolve(word)
        except _Refused as exc:
            name = raw.split("=", 1)[0]
            matches = re.findall(r"--?[\w.-]+", str(exc).split("match", 1)[-1])
            why.append(
                f"`{name}` is an ambiguous prefix in {engine.name}'s parser (it could be "
                f"{', '.join(matches)}); write the full name"
            )
            continue
        if string is None or not string.startswith(tuple(engine.parser.prefix_chars)):
            continue  # a positional (the model) or a value
        if option is None:
            if not engine.parser._negative_number_matcher.match(string):
                name = string.split("=", 1)[0]
                close = engine.candidates(name)
                hint = f"; did you mean {' or '.join(close)}?" if close else ""
                why.append(f"`{name}` is not an option of {engine.name}'s parser{hint}")
            continue
        if explicit is not None:
            if option["nargs"] == 0:
                why.append(f"`{raw}`: {string} takes no value in {engine.name}'s parser")
            elif (bad := _choice_problem(engine, option, string, explicit)) is not None:
                why.append(bad)
            continue
        nargs = option["nargs"]
        if nargs == 0:
            continue
        taken: list[str] = []
        while i < len(words) and not _is_option(engine, words[i]):
            taken.append(words[i])
            i += 1
            if nargs in (1, "?") or (isinstance(nargs, int) and len(taken) == nargs):
                break
        if not taken and command and nargs not in ("?", "*"):
            why.append(f"`{string}` expects a value in {engine.name}'s parser")
        for value in taken:
            if (bad := _choice_problem(engine, option, string, value)) is not None:
                why.append(bad)
                break
    return why


def _is_option(engine: Engine, word: str) -> bool:
    return (
        word.startswith("-")
        and len(word) > 1
        and not engine.parser._negative_number_matcher.match(word)
        and " " not in word
    )


# Where content writes flags ----------------------------------------------------------------


def _bare(words: list[str]) -> bool:
    """A mention of the engine's own options: words that start with an option (`--x`,
    `-x`; not a name's suffix such as `-AWQ`)."""
    return bool(words) and re.match(r"--?[a-z]", words[0]) is not None


def text_problems(
    engine: Engine | None,
    text: str,
    engines: dict[str, Engine],
    named: Callable[[str], Engine | None] | None = None,
) -> Iterator[tuple[int, str]]:
    """(line offset, why) for the flags of a Markdown text: commands that start any engine,
    and mentions of `engine`'s options (None: commands only). `named`: the parser of
    `engine`'s project at another release, when it has data: inline code in a sentence that
    names that release before it ("in 0.33.0, `--attention-backend` picks one") is read
    with that release's parser."""
    for match in _FENCE.finditer(text):
        if match.group(2).lower() not in _SHELL:
            continue
        offset = text[: match.start(3)].count("\n")
        for line, why in code_problems(engine, match.group(3), engines):
            yield offset + line, why
    prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for match in _SPAN.finditer(prose):
        offset = prose[: match.start()].count("\n")
        reader, among = engine, engines
        if engine is not None and named is not None:
            other = _sentence_release(prose[: match.start()], named)
            if other is not None:
                key = next((k for k, e in engines.items() if e is engine), None)
                reader = other
                among = {**engines, key: other} if key is not None else engines
        for _, why in code_problems(reader, match.group(2).replace("\n", " "), among):
            yield offset, why


_RELEASE = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)(?![\w.]*\d)")
_SENTENCE_END = re.compile(r"[.!?][)\"']?\s+(?=[A-Z`(\"])|\n\s*\n")


def _sentence_release(before: str, named: Callable[[str], Engine | None]) -> Engine | None:
    """The parser of the release named last before a point of its sentence (one with data)."""
    ends = list(_SENTENCE_END.finditer(before))
    sentence = before[ends[-1].end() :] if ends else before
    for match in reversed(list(_RELEASE.finditer(sentence))):
        found = named(match.group(1))
        if found is not None:
            return found
    return None


def code_problems(
    engine: Engine | None, code: str, engines: dict[str, Engine]
) -> Iterator[tuple[int, str]]:
    """(line offset, why) for a shell snippet: every launch of an engine, and lines that
    start with an option of `engine` (None: launches only)."""
    for offset, words in commands(code):
        found = _launch_of(words, engines)
        if found is not None:
            target, launcher, args = found
            if launcher.get("absent"):
                yield offset, _absent(target, launcher)
                continue
            for why in check_words(target, args, command=True, launcher=launcher):
                yield offset, why
        elif engine is not None and _bare(words):
            for why in check_words(engine, words, command=False):
                yield offset, why


def _absent(engine: Engine, launcher: dict) -> str:
    def named(one: dict) -> str:
        return " ".join(one["command"]) if "command" in one else f"python -m {one['module']}"

    ways = [named(one) for one in engine.data["launchers"] if not one.get("absent")]
    return (
        f"`{named(launcher)}` is not a command of {engine.name} (it starts with "
        f"{' or '.join(f'`{way}`' for way in ways)})"
    )


def _launch_of(words: list[str], engines: dict[str, Engine]):
    for target in engines.values():
        found = launch(words, target.data.get("launchers", []))
        if found is not None:
            return target, *found
    return None


def _field_line(record: Record, keys: tuple, text: str) -> int:
    """The line of a field's first line of text: a block scalar starts on the next."""
    line = record.source.line(*keys)
    return line + ("\n" in text.rstrip("\n"))


def record_problems(record: Record, content: Content) -> list[Problem]:
    """E126 for every flag of a record that its engine's parser refuses: the parser of the
    release the record was checked against (see the module's doc)."""
    engines = _engines(content)
    if not engines:
        return []
    found: list[Problem] = []

    def releases(release: str) -> Engine | None:
        other = engine(content, record.project, release) if pinned is not None else None
        return at_release(pinned, other) if pinned is not None and other is not None else None

    def scan(engine, keys: tuple, text, code: bool = False, among=engines, either=None) -> None:
        if not isinstance(text, str) or not text:
            return
        first = _field_line(record, keys, text)
        if code:
            lines = list(code_problems(engine, text, among))
        else:
            older = releases if engine is own and program is None else None
            lines = list(text_problems(engine, text, among, older))
        if either is not None and lines:  # a flag is refused only when neither takes it
            check = code_problems if code else text_problems
            served = {_refused_flag(offset, why) for offset, why in check(either, text, among)}
            lines = [(o, why) for o, why in lines if _refused_flag(o, why) in served]
        for offset, why in lines:
            field = ".".join(str(k) for k in keys)
            found.append(Problem(record.path, first + offset, CODE, field, why))

    def advice(engine, at: tuple, block: dict, among=engines) -> None:
        # A person writing of another program's message may name the server's flags too
        # ("raise the server's `--max-model-len`"); the rules' derived block may not.
        either = pinned if engine is program else None
        for key in _PROSE:
            scan(engine, (*at, key), block.get(key), among=among, either=either)
        for key in _LISTS:
            for i, text in enumerate(block.get(key) or []):
                scan(engine, (*at, key, i), text, among=among, either=either)
        fix = block.get("example_fix") or {}
        scan(engine, (*at, "example_fix", "note"), fix.get("note"), among=among, either=either)
        for side in ("before", "after"):
            part = fix.get(side) or {}
            if part.get("language", "") in _SHELL:
                code = part.get("code")
                scan(engine, (*at, "example_fix", side, "code"), code, True, among, either)
        defensive = block.get("defensive") or {}
        scan(engine, (*at, "defensive", "note"), defensive.get("note"), among=among, either=either)

    pinned = engines.get(record.project)
    path = str((record.data.get("source") or {}).get("path") or "")
    program = _program_of(engines, record.project, path)
    # A message of another program of the project (`vllm bench`): what a person writes of it
    # names that program's flags, read with its parser (at the pinned release).
    own, among = program or pinned, engines
    release = str(record.checked.get("release") or "")
    if pinned is not None and release and release != pinned.data["release"]:
        checked = engine(content, record.project, release)
        if checked is None:
            line = record.source.line("checked", "release")
            found.append(
                Problem(
                    record.path,
                    line,
                    CODE,
                    "checked.release",
                    _no_data(content, record.project, release),
                )
            )
            own = None
        else:
            own = at_release(pinned, checked)
            among = {**engines, record.project: own}
    if own is not None:
        advice(own, (), record.data, among)
    # The derived block is what the pinned code says; a removed record's, what its last
    # release said: the flags as that release named them (`--tp`, say), read with that
    # release's parser where it has data, else not read; but for the settings its message
    # names, as the pinned release knows them (`named`, said.with_named), the pinned one's.
    # The code of another program of the project with a parser of its own (SGLang's
    # diffusion runtime, `sglang generate`): its derived block is that program's, read with
    # that parser (at the pinned release; a removed record's last release's, when it has data).
    derived = record.data.get("derived") or {}
    of_derived, derived_among = program or pinned, engines
    last = _derived_release(record, content, derived) if pinned is not None else ""
    if pinned is not None and last:
        older = engine(content, record.project, last) if last else None
        if program is not None:
            key = program.data["program"]
            older = _engine(record.project, last, program.data["prog"], key) if last else None
        of_derived = at_release(program or pinned, older) if older is not None else None
        derived_among = {**engines, record.project: of_derived} if of_derived else engines
        if program is not None and of_derived is not None:
            derived_among = {**engines, f"{record.project} {program.data['program']}": of_derived}
    # A flag is read with the parser of the release whose code named it. What `history` wrote
    # of an older release's block (named by its message or not) is that release's; what
    # said.with_named added to it since, the pinned release's (its `url` in the pinned code).
    # A setting the message names (`named`) may be either's (an entry without a url does not
    # say): it is refused only when neither parser takes it.
    own_ref = str(derived.get("ref") or "") if last else ""
    if of_derived is not None:
        for i, text in enumerate(derived.get("try") or []):
            scan(of_derived, ("derived", "try", i), text, among=derived_among)
        for i, flag in enumerate(derived.get("flags") or []):
            if flag.get("kind") in ("engine-arg", "server-arg") and "flag" in flag:
                reader: Engine | None = of_derived
                other: Engine | None = None  # the parser that may take it instead
                url = str(flag.get("url") or "")
                elsewhere = bool(url) and f"/blob/{own_ref}/" not in url
                if flag.get("named") and (program or pinned) is not None:
                    if not own_ref or elsewhere:
                        reader, other = program or pinned, of_derived if own_ref else None
                    else:
                        other = program or pinned
                if flag.get("command"):  # another program's flag: that program's parser
                    reader = _command_engine(engines, str(flag["command"]))
                if reader is None:  # a command with no parser data
                    line = record.source.line("derived", "flags", i, "command")
                    why = f"no parser data for `{flag['command']}` (generator/flags/)"
                    found.append(
                        Problem(record.path, line, CODE, f"derived.flags.{i}.command", why)
                    )
                    continue
                refused = check_words(reader, [flag["flag"]], command=False)
                if refused and other is not None and not flag.get("command"):
                    refused = refused if check_words(other, [flag["flag"]], command=False) else []
                for why in refused:
                    line = record.source.line("derived", "flags", i, "flag")
                    found.append(Problem(record.path, line, CODE, f"derived.flags.{i}.flag", why))
    for key, block in record.engines.items():
        if key not in engines or not isinstance(block, dict):
            continue
        reader, among = engines[key], engines
        release = str((block.get("checked") or {}).get("release") or "")
        if release and release != reader.data["release"]:
            other = engine(content, key, release)
            if other is None:
                line = record.source.line("engines", key, "checked", "release")
                field = f"engines.{key}.checked.release"
                found.append(
                    Problem(record.path, line, CODE, field, _no_data(content, key, release))
                )
                continue
            reader = at_release(engines[key], other)
            among = {**engines, key: reader}
        advice(reader, ("engines", key), block, among)
    return found


def _derived_release(record: Record, content: Content, derived: dict) -> str:
    """The older release whose code a record's derived block was read from, "" when it is
    the pinned release's: a removed record's last release (`versions.last`); an active
    record's whose block names an older release's ref (`derived.ref` `v<version>`: a record
    that came back from removed keeps its last release's block until `errorkb rederive`)."""
    if record.status == "removed":
        return str((record.data.get("versions") or {}).get("last") or "")
    project = content.projects.get(record.project)
    ref = str(derived.get("ref") or "")
    if project is None or not ref.startswith("v") or ref == project.ref:
        return ""
    return "" if ref[1:] == project.version else ref[1:]


def _no_data(content: Content, key: str, release: str) -> str:
    project = content.projects[key]
    return (
        f"no parser data for {project.name or key} {release}, the release this text was "
        f"checked against: make it from that release's wheel with `python -m "
        f"errorkb.sources.flagdata <wheel> --project {key}` (generator/flags/)"
    )


def guide_problems(guide: Guide, content: Content) -> list[Problem]:
    """E126 for the engines' commands in a guide (its shell blocks and inline code)."""
    engines = _engines(content)
    if not engines:
        return []
    return [
        Problem(guide.path, guide.body_line + offset, CODE, "(body)", why)
        for offset, why in text_problems(None, guide.body, engines)
    ]


def _engines(content: Content) -> dict[str, Engine]:
    """Each project's parser at its pinned release, by its key; and the parsers of its other
    programs at that release (`<project>-<program>-<version>.json`), by "<key> <program>"."""
    found = {}
    for key in sorted(content.projects):
        parser = engine(content, key)
        if parser is not None:
            found[key] = parser
            for program, prog in _programs(key, parser.data["release"]):
                other = _engine(key, parser.data["release"], prog, program)
                if other is not None:
                    found[f"{key} {program}"] = other
    return found


@cache
def _programs(project: str, version: str) -> tuple[tuple[str, str], ...]:
    """(program, its prog) of each other program of a project with parser data at a release."""
    out = []
    for path in sorted(FOLDER.glob(f"{project}-*-{version}.json")):
        program = path.name[len(project) + 1 : -len(f"-{version}.json")]
        if program.isalpha():
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("program") == program:
                out.append((program, data.get("prog") or program))
    return tuple(out)


def _refused_flag(offset: int, why: str) -> tuple[int, str]:
    """A refusal's line and the option it names (its first code span: "`--x` is not ...")."""
    return offset, why.split("`")[1] if why.count("`") >= 2 else why


def _program_of(engines: dict[str, Engine], project: str, path: str) -> Engine | None:
    """The parser of the project's other program whose code this path is (its data's `code`)."""
    for key, found in engines.items():
        codes = found.data.get("code") or ()
        mine = key.startswith(project + " ") and found.data.get("program")
        if mine and any(f"/{code}" in f"/{path}" for code in codes):
            return found
    return None


def _command_engine(engines: dict[str, Engine], command: str) -> Engine | None:
    """The parser of the program a command starts (`sglang generate`)."""
    for found in engines.values():
        if any(" ".join(one.get("command") or ()) == command for one in found.data["launchers"]):
            return found
    return None

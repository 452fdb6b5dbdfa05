"""Loading and validating content/: records, projects, guides, site settings, and what
the projects' wings read besides.

Every problem in the whole tree is collected, each naming file, line, a stable
code and the field, so that one `errorkb check` shows all there is to fix.
"""

import copy
import errno
import hashlib
import json
import marshal
import os
import pickle
import re
import stat
import sys
import zlib
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import fastjsonschema
import yaml
from packaging.version import InvalidVersion, Version

from errorkb import registry, resources
from errorkb.content import flags, template
from errorkb.content import model as model_module
from errorkb.content.model import (
    LIVES,
    Content,
    ContentError,
    Guide,
    Problem,
    Project,
    Record,
    Source,
)
from errorkb.progress import QUIET, Progress
from errorkb.registry import reserved, wing
from errorkb.registry import wings as projects_wings

SCHEMA_PATH = Path(__file__).parent.parent / "error.schema.json"
SCHEMA_LINE = "# yaml-language-server: $schema=../../../generator/error.schema.json"

# Stable problem codes: tests, docs and users rely on them.
MAX_FILE_KB = 256  # default of site.yaml's max_file_kb
# What a title must not carry: bidi embeddings, overrides and isolates (they reorder the text
# after them, the site's name in a tab's title too) and zero-width characters (they hide
# words, or make two titles look alike).

_PROJECT_SCHEMA = {
    "type": "object",
    "required": ["name", "repo", "ref"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"},
        "ref": {"type": "string", "minLength": 1},
        "version": {"type": "string"},
        "description": {"type": "string"},
        "homepage": {"type": "string", "pattern": "^https?://"},
        "kind": {"enum": ["engine", "stack"]},
        "wing": {"type": "string", "pattern": "^[a-z_][a-z0-9_]*$"},
        "package": {"type": "string", "minLength": 1},
        "releases_scanned": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "source_prefix": {"type": "string", "pattern": "^[\\w.-]+(/[\\w.-]+)*/$"},
        "source_exclude": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
}
_SITE_SCHEMA = {
    "type": "object",
    "required": ["title", "base_url", "repo"],
    "additionalProperties": False,
    "properties": {
        "title": {"type": "string", "minLength": 1},
        "tagline": {"type": "string"},
        "base_url": {"type": "string", "pattern": "^https?://"},
        "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"},
        "branch": {"type": "string"},
        "language": {"type": "string"},
        "max_file_kb": {"type": "integer", "minimum": 1, "maximum": 1048576},
        # the project key of the engine whose copy of a message two engines print opens
        # when nothing else tells (search)
        "default_engine": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
    },
}
_GUIDE_SCHEMA = {
    "type": "object",
    "required": ["title"],
    "additionalProperties": False,
    "properties": {
        "title": {"type": "string", "minLength": 1},
        "summary": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "string"}},
        "updated": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "gpus_per_node": {"type": "integer", "minimum": 1},
        "nodes": {"type": "integer", "minimum": 1},
    },
}


# YAML ---------------------------------------------------------------------


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml's loader where PyYAML was built with it: the same, 10x faster
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """Safe loader that keeps dates as the strings they were written as."""

    def resolve(self, kind, value, implicit):
        """PyYAML's resolve without what records never use (path resolvers): a tenth of a
        record's parse went to it, called from libyaml's composer for every node."""
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _IMPLICIT.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
assert not _Loader.yaml_path_resolvers and None not in _Loader.yaml_implicit_resolvers
# By a scalar's first character ("" for an empty one), as PyYAML looks them up.
_IMPLICIT = {first: tuple(found) for first, found in _Loader.yaml_implicit_resolvers.items()}


# An anchor (&name) or alias (*name) can only start where a node starts: after whitespace, a
# flow indicator, a key's colon or a quote. Texts without such a character skip the event scan.
# (The character first and what precedes it checked after: a pattern led by a lookbehind is
# tried at every position, 3.5x slower.)
_ANCHOR_MARK = re.compile(r"[&*](?=[^\s,\[\]{}])")
_NODE_START = frozenset("[]{},:\"'\ufeff")


def _maybe_anchor(text: str) -> bool:
    for mark in _ANCHOR_MARK.finditer(text):
        i = mark.start()
        if i == 0 or text[i - 1] in _NODE_START or text[i - 1].isspace():
            return True
    return False


MAX_DEPTH = 20  # records nest four levels; deeper is garbage, refused before construction
MAX_INT_DIGITS = 100  # beyond Python's int parsing limits long before any real value


def parse_yaml(text: str, path: str, problems: list[Problem]) -> Source | None:
    """Parse one YAML document, recording field lines and duplicate keys.

    Anchors and aliases are refused before the document is composed (an alias bomb expands
    to billions of nodes), and nesting and integer sizes are bounded before it is constructed.
    """
    if _maybe_anchor(text) and (problem := _anchor_problem(text, path)):
        problems.append(problem)
        return None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        source = Source(path, None, digest=hashlib.sha1(text.encode()).hexdigest())
        if node is not None:
            found = _index_lines(node, source)
            problems += found
            if any(p.code != "E110" for p in found):
                return None
            try:
                source.data = _plain_data(node, loader)
            except _NotPlain:
                source.data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        problems.append(_syntax_problem(exc, path))
        return None
    finally:
        loader.dispose()
    return source


_STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "seq", "map"))


class _NotPlain(Exception):
    """A node PyYAML's constructor must build: a tagged value, a merge key, a key that is
    not a string."""


def _plain_data(node: yaml.Node, loader) -> object:
    """The document's data, built straight from its nodes. Records are strings, lists and
    mappings with string keys; PyYAML's generic constructor spends two thirds of a record's
    parse on them. Numbers, booleans and nulls are left to its own rules (YAML 1.1's many
    spellings); anything else raises _NotPlain, and the whole document goes to it."""
    tag = node.tag
    if tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    if isinstance(node, yaml.ScalarNode):
        if tag not in _SCALARS:
            raise _NotPlain
        return loader.construct_object(node)
    if tag == _SEQ and isinstance(node, yaml.SequenceNode):
        return [_plain_data(item, loader) for item in node.value]
    if tag == _MAP and isinstance(node, yaml.MappingNode):
        out = {}
        for key, value in node.value:
            if key.tag != _STR or not isinstance(key, yaml.ScalarNode):
                raise _NotPlain
            out[key.value] = _plain_data(value, loader)  # the last of twins wins, as in PyYAML
        return out
    raise _NotPlain


_SCALARS = {f"tag:yaml.org,2002:{kind}" for kind in ("int", "float", "bool", "null")}


def _syntax_problem(exc: yaml.YAMLError, path: str) -> Problem:
    """A YAML error on the line to fix: where the parser gave up, or where the construct it
    was reading began when it ran into the end of the file (an unclosed quote)."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return Problem(path, 1, "E100", "(file)", f"{exc}; fix the YAML syntax")
    problem, context = exc.problem_mark, exc.context_mark
    reason = exc.problem or str(exc)
    mark = context if context and "end of stream" in reason else problem or context
    if mark is not None and mark is context:
        reason += f" {exc.context} that starts on this line"
    elif mark is not None and context is not None and context.line != mark.line:
        reason += f" ({exc.context} on line {context.line + 1})"
    line = mark.line + 1 if mark else 1
    return Problem(path, line, "E100", "(file)", f"{reason}; fix the YAML syntax")


def _anchor_problem(text: str, path: str) -> Problem | None:
    """The first anchor or alias of the text, found in its event stream (linear: aliases are
    not expanded there); None when it has none or a syntax error comes first (the parse
    reports that)."""
    loader = _Loader(text)
    try:
        while (event := loader.get_event()) is not None:
            name = getattr(event, "anchor", None)
            if name is not None:
                kind = "alias *" if isinstance(event, yaml.AliasEvent) else "anchor &"
                return Problem(
                    path,
                    event.start_mark.line + 1,
                    "E116",
                    "(file)",
                    f"{kind}{name}: anchors and aliases are not allowed, records are plain data; "
                    "write the value out in full",
                )
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return None


def _index_lines(root, source: Source) -> list[Problem]:
    """Record the line of every field (walking the node tree without recursion) and return
    the duplicate keys, too deep nesting and oversized integers found on the way."""
    problems = []
    source.lines[()] = root.start_mark.line + 1
    stack: list[tuple[yaml.Node, tuple]] = [(root, ())]
    while stack:
        node, keys = stack.pop()
        if len(keys) > MAX_DEPTH:
            why = f"nested more than {MAX_DEPTH} levels deep; records are flat data"
            top = _dotted(keys[:1])
            problems.append(Problem(source.path, source.line(*keys), "E103", top, why))
            return problems
        children: list[tuple[yaml.Node, tuple]] = []
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    why = "a key must be a plain name, not a list or mapping"
                    problems.append(Problem(source.path, line, "E103", _dotted(keys), why))
                    return problems
                key = key_node.value
                here = keys + (key,)
                if key in seen:
                    why = "key appears twice in the same mapping; keep one"
                    problems.append(Problem(source.path, line, "E110", _dotted(here), why))
                seen.add(key)
                source.lines.setdefault(here, line)
                children.append((value_node, here))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                source.lines.setdefault(keys + (i,), item.start_mark.line + 1)
                children.append((item, keys + (i,)))
        elif node.tag == "tag:yaml.org,2002:int" and len(node.value) > MAX_INT_DIGITS:
            why = f"a number of {len(node.value)} characters; no field holds one that long"
            problems.append(Problem(source.path, source.line(*keys), "E103", _dotted(keys), why))
        stack.extend(reversed(children))  # visited in document order, as lines are first-wins
    return problems


def _dotted(keys) -> str:
    out = ""
    for key in keys:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(file)"


# Paths --------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"[A-Za-z]:")
MAX_NAME = 120  # characters of a folder or file name in a path: the schema's
# Bytes of such a name in UTF-8: each is a folder or file of the site (a source file's page),
# and a file system takes 255 bytes a name (NAME_MAX), the `.html` a site without directory
# URLs adds to the page's name included.
MAX_NAME_BYTES = 255 - len(".html")


def path_problem(path: str, longest: int | None = MAX_NAME) -> tuple[str, str] | None:
    """What makes `path` not a relative POSIX path that stays inside its tree, and how to
    fix it; None when it is one. `longest=None` takes names of any length (an archive's
    member is unsafe only when it leaves the tree).

    The same rule as the schema's `$defs/path` pattern (which editors check as you type);
    this says which part is wrong."""
    if _CONTROL.search(path):
        return "it has a control character (NUL, tab, newline)", "remove it"
    if "\\" in path:
        return "it has a backslash", "separate folders with /"
    if path.startswith("/"):
        return "it is absolute", "write it from the repository root, without the leading /"
    if _DRIVE.match(path):
        return "it starts with a drive letter", "write it from the repository root"
    for segment in path.split("/"):
        if segment in ("", "."):
            return "it has an empty or . folder", "write each folder once, separated by one /"
        if segment == "..":
            return "it goes up with ..", "write it from the repository root"
        if segment.startswith("~"):
            return "it has a folder starting with ~", "write it from the repository root"
        if longest is not None and len(segment) > longest:
            return (
                f"it has a name of {len(segment)} characters",
                f"names over {longest} characters are refused: correct it",
            )
        size = len(segment.encode("utf-8", "surrogatepass"))
        if longest is not None and size > MAX_NAME_BYTES:
            return (
                f"it has a name of {size} bytes in UTF-8",
                f"names over {MAX_NAME_BYTES} bytes are refused (the site writes a file of each"
                " name): correct it",
            )
    return None


# Schema -------------------------------------------------------------------


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The record schema (shared: callers must not modify it)."""
    return json.loads(SCHEMA_PATH.read_text())


def record_fields() -> list[str]:
    """A record's top-level fields in the schema's order, the order files are written in."""
    return list(load_schema()["properties"])


MARKDOWN_REF = "#/$defs/markdown"
EACH = "[]"  # in a field path: every item of a list


@cache
def markdown_fields(definition: str = "") -> list[tuple[str, ...]]:
    """Paths of the fields that hold Markdown: those the schema types as `$defs/markdown`,
    e.g. ("meaning",), ("solutions", EACH), ("example_fix", "note"); of a whole record, or
    of one of the schema's `$defs` (`engine_advice`: the Markdown of an engine's advice)."""
    schema = load_schema()
    found: list[tuple[str, ...]] = []

    def walk(node: dict, path: tuple[str, ...]) -> None:
        ref = node.get("$ref", "")
        if ref == MARKDOWN_REF:
            found.append(path)
        elif ref.startswith("#/$defs/"):
            walk(schema["$defs"][ref.removeprefix("#/$defs/")], path)
        if isinstance(node.get("items"), dict):
            walk(node["items"], path + (EACH,))
        for name, sub in node.get("properties", {}).items():
            walk(sub, path + (name,))

    walk(schema["$defs"][definition] if definition else schema, ())
    return found


# Checkers per schema, keyed by id(); every schema here lives as long as the module.
_checkers: dict[int, object] = {}


def _checker(schema: dict):
    """fastjsonschema compiles the schema to Python code that answers valid documents ~7x
    faster than jsonschema, which only explains an invalid one (and is imported only then)."""
    key = id(schema)
    if key not in _checkers:
        _checkers[key] = _compiled(schema)
    return _checkers[key]


def _compiled(schema: dict):
    """The schema's checker, its code kept in the user's cache: writing and compiling it
    takes a tenth of a second, more than the rest of a quick rebuild's validation."""
    text = json.dumps(schema, sort_keys=True)
    stamp = f"{sys.version}\0{fastjsonschema.VERSION}\0unformatted\0{text}"
    path = resources.user_cache() / "schemas" / f"{hashlib.sha1(stamp.encode()).hexdigest()}"
    try:
        entry, code = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        # compile_to_code() rewrites $refs in place: give it a copy of the shared schema.
        # Only whether a document is valid is asked of it (jsonschema explains an invalid
        # one), but its code formats each exception's message from locals(), for every
        # branch a oneOf, anyOf or not rejects too (what a derived flag passes, a versioned
        # variant): 40% of validating a valid record. Its own detailed_exceptions=False
        # fails on `const`.
        source = fastjsonschema.compile_to_code(copy.deepcopy(schema))
        source = source.replace(".format(**locals())", "")
        entry = source.split("\ndef ", 1)[1].split("(", 1)[0]  # the first, the root's
        code = compile(source, f"<schema {path.name[:8]}>", "exec")
        resources.keep_in_cache(path, marshal.dumps((entry, code)))
    names: dict = {}
    exec(code, names)  # noqa: S102 - code fastjsonschema wrote from our own schema
    return names[entry]


def schema_problems(source: Source, schema: dict, id_field: str | None = None) -> list[Problem]:
    """Schema violations of a document, one Problem per field."""
    try:
        _checker(schema)(source.data)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    import jsonschema

    problems = []
    for err in jsonschema.Draft202012Validator(schema).iter_errors(source.data):
        keys = tuple(err.absolute_path)
        if err.validator == "required":
            missing = err.message.split("'")[1]
            problems.append(
                Problem(
                    source.path,
                    source.line(*keys),
                    "E101",
                    _dotted(keys + (missing,)),
                    f"required field is missing; add `{missing}:`",
                )
            )
        elif err.validator == "additionalProperties":
            allowed = err.schema.get("properties", {})
            for extra in sorted(set(err.instance) - set(allowed), key=str):
                here = keys + (extra,)
                problems.append(
                    Problem(
                        source.path,
                        source.line(*here),
                        "E102",
                        _dotted(here),
                        f"unknown field; expected one of: {', '.join(allowed)}",
                    )
                )
        elif (
            err.validator == "pattern"
            and err.validator_value == _path_pattern()
            and (bad := path_problem(err.instance))
        ):
            problems.append(_path_problem(source, keys, err.instance, bad))
        else:
            code = "E105" if keys == (id_field,) else "E103"
            problems.append(
                Problem(source.path, source.line(*keys), code, _dotted(keys), _explain(err))
            )
    return problems


def accepted_data(source: Source) -> dict[str, Any]:
    """The data of a document its schema accepted: a mapping, as each schema requires."""
    if not isinstance(source.data, dict):
        raise TypeError(f"{source.path}: a schema accepted a document that is no mapping")
    return source.data


def _path_pattern() -> str:
    return load_schema()["$defs"]["path"]["pattern"]


def _shown(value) -> str:
    """A value as JSON, cut to a length that fits a problem line."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _explain(err) -> str:
    """A jsonschema ValidationError in a sentence."""
    value = _shown(err.instance)
    hint = err.schema.get("description")
    scalar = isinstance(err.instance, (bool, int, float))
    if err.validator == "type" and err.validator_value == "string" and scalar:
        return (
            "is written as a number or yes/no, which YAML does not read as text; "
            "put the value in quotes"
        )
    if err.validator == "type":
        return f"{value} is not of type {err.validator_value}" + (f" ({hint})" if hint else "")
    if err.validator == "enum":
        return f"{value} is not one of: {', '.join(map(str, err.validator_value))}"
    if err.validator == "pattern":
        return f"{value} does not match {err.validator_value}" + (f" ({hint})" if hint else "")
    return err.message


# Loading ------------------------------------------------------------------


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


class Files:
    """What may be read from content/: regular files, within the size limit, and links only
    when they resolve inside content/. Every other entry is reported, never skipped without
    a word nor followed: a writer's file that is not read would silently not be published."""

    def __init__(self, root: Path, problems: list[Problem], limit_kb: int = MAX_FILE_KB):
        self.root = root
        self.content = root / "content"
        self.real = os.path.realpath(self.content)
        self.problems = problems
        self.limit_kb = limit_kb
        self.site: dict = {}  # content/site.yaml, once read

    def usable(
        self, path: str, rel: str, folder: bool = False, link: bool | None = None
    ) -> os.stat_result | None:
        """The stat of a file (or folder) that may be read, or None once reported. `link`:
        whether it is a symbolic link, when a directory listing already said."""
        link = os.path.islink(path) if link is None else link
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._add(rel, "E100", "is a symbolic link loop; remove the link or fix it")
            elif link:
                why = f"links to {os.readlink(path)!r}, which does not exist; remove the link"
                self._add(rel, "E118", why)
            else:
                self._add(rel, "E100", f"cannot read: {exc.strerror}")
            return None
        if link and os.path.commonpath([self.real, os.path.realpath(path)]) != self.real:
            why = (
                f"links to {os.path.realpath(path)}, outside content/; "
                "links are followed only within content/: copy the file in instead"
            )
            self._add(rel, "E118", why)
            return None
        if kind := _kind_problem(st.st_mode, folder):
            self._add(rel, "E119", kind)
            return None
        if st.st_size > self.limit_kb * 1024 and not folder:
            self._add(rel, "E117", _too_large(st.st_size, self.limit_kb))
            return None
        return st

    def listing(
        self, folder: Path, suffix: str, rename: str, tag: str | None = None
    ) -> list[tuple[str, str, tuple]]:
        """The `*suffix` files of a folder as (path, path from root, stamp), sorted; every other
        entry is reported (a `*rename` file with a hint to rename it). One scandir, and one
        stat per file, as a rebuild lists tens of thousands of files before it knows what
        changed (hence the loop's plain shape). A `tag` ends each stamp."""
        if not self.exists(folder, folder=True):
            return []
        prefix = _rel(folder, self.root)
        limit = self.limit_kb * 1024
        files = []
        for entry in os.scandir(folder):
            name = entry.name
            if name.startswith(".") or name.endswith("~"):
                continue  # editors' swap and backup files, hidden files
            rel = f"{prefix}/{name}"
            if not name.endswith(suffix):
                self._add(rel, "E119", f"is not read: {_misplaced(name, suffix, rename, prefix)}")
                continue
            # The common case, a regular file within the size limit; `usable` looks closer
            # at anything else (and reports it).
            try:
                st = None if entry.is_symlink() else entry.stat()
            except OSError:
                st = None
            if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                st = self.usable(entry.path, rel, link=entry.is_symlink())
                if st is None:
                    continue
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            files.append((entry.path, rel, stamp if tag is None else (*stamp, tag)))
        files.sort(key=lambda file: file[1])
        return files

    def folders(self, folder: Path) -> list[Path]:
        """The usable sub-folders of a folder, sorted; files there are reported."""
        if not self.exists(folder, folder=True):
            return []
        found = []
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            rel = f"{_rel(folder, self.root)}/{entry.name}"
            if self.usable(entry.path, rel, folder=True, link=entry.is_symlink()):
                found.append(Path(entry.path))
        return found

    def exists(self, path: Path, folder: bool = False) -> bool:
        """Whether an optional file or folder is there and usable (reported when it is not)."""
        rel = _rel(path, self.root)
        return os.path.lexists(path) and self.usable(str(path), rel, folder) is not None

    def text(self, path, rel: str) -> str | None:
        """The text of a usable file, read with a bound in case it grew since it was listed."""
        return _read_text(path, rel, self.limit_kb, self.problems)

    def source(self, path, rel: str | None = None) -> Source | None:
        """A usable YAML file parsed, or None once reported."""
        rel = rel or _rel(Path(path), self.root)
        return _read_source(path, rel, self.limit_kb, self.problems)

    def _add(self, rel: str, code: str, why: str) -> None:
        self.problems.append(Problem(rel, 1, code, "(file)", why))


def _kind_problem(mode: int, folder: bool) -> str | None:
    """Why an entry is not the folder or regular file expected where it lies, or None."""
    if folder and not stat.S_ISDIR(mode):
        return "is not a folder, and only folders are read here; move it into one"
    if not folder and stat.S_ISDIR(mode):
        return "is a folder, and folders are not read here; move its files up or remove it"
    if not folder and not stat.S_ISREG(mode):
        return "is not a regular file (a pipe, socket or device); remove it"
    return None


def _too_large(size: int, limit_kb: int) -> str:
    return (
        f"{size:,} bytes, over the limit of {limit_kb} KB per file; split it, "
        "or raise max_file_kb in content/site.yaml"
    )


def _read_text(path, rel: str, limit_kb: int, problems: list[Problem]) -> str | None:
    """A file's text; at most limit_kb is read, and bad UTF-8 is reported at its line."""
    try:
        with open(path, "rb") as file:
            data = file.read(limit_kb * 1024 + 1)
    except OSError as exc:
        problems.append(Problem(rel, 1, "E100", "(file)", f"cannot read: {exc.strerror}"))
        return None
    if len(data) > limit_kb * 1024:
        problems.append(Problem(rel, 1, "E117", "(file)", _too_large(len(data), limit_kb)))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        why = f"byte 0x{data[exc.start]:02x} is not UTF-8; save the file as UTF-8"
        problems.append(Problem(rel, line, "E100", "(file)", why))
        return None


def _read_source(path, rel: str, limit_kb: int, problems: list[Problem]) -> Source | None:
    text = _read_text(path, rel, limit_kb, problems)
    if text is None:
        return None
    source = parse_yaml(text, rel, problems)
    if source is not None and not isinstance(source.data, dict):
        problems.append(
            Problem(rel, 1, "E111", "(file)", "the file must be a YAML mapping of field: value")
        )
        return None
    return source


def load_content(
    root: Path, cache: "ParseCache | None" = None, progress: Progress = QUIET
) -> Content:
    """Load and validate everything under root/content; raise ContentError on any problem."""
    problems: list[Problem] = []
    files, projects = _load_frame(Path(root), problems)
    listed = record_listing(files, {k: p.wing_key for k, p in projects.items()})
    if cache is not None:
        cache.forget_others({rel for _, rel, _ in listed})
    content = _with_records(files, projects, listed, cache, progress)
    content.stamps = {rel: stamp for _, rel, stamp in listed}
    for record in content.records.values():
        problems += _cross_problems(record, content)
    problems += _path_clashes(content)
    content.confirmed = _load_confirmed(files, content, problems)
    problems += _supersession_cycles(content)
    for guide in content.guides:
        for i, ref in enumerate(guide.errors):
            if not content.knows(ref):
                line = guide.source.line("errors", i) if guide.source else 1
                problems.append(
                    Problem(
                        guide.path,
                        line,
                        "E104",
                        f"errors[{i}]",
                        f"unknown record id {ref!r}; use an id under content/errors/",
                    )
                )
    for guide in content.guides:
        problems += flags.guide_problems(guide, content)
    for project_wing in projects_wings(projects.values()):
        problems += project_wing.content_problems(content)
    if problems:
        raise ContentError(problems)
    return content


def load_some(
    root: Path,
    listed: list[tuple[str, str, tuple]],
    edited: set[str],
    cache: "ParseCache",
    aliases: dict[str, str],
) -> Content:
    """The content with only the record files `listed` (as record_listing lists them) and
    the `aliases` of all, the rest whole: what the quick rebuild renders a few pages from.
    The `edited` files are checked as load_content checks them, against the records listed
    with them (their related records must be there); raises ContentError."""
    problems: list[Problem] = []
    files, projects = _load_frame(Path(root), problems)
    content = _with_records(files, projects, listed, cache)
    content.aliases = dict(aliases)
    for record in (r for r in content.records.values() if r.path in edited):
        problems += _cross_problems(record, content)
    for project_wing in projects_wings(projects.values()):
        problems += [p for p in project_wing.content_problems(content) if p.path in edited]
    if problems:
        raise ContentError(problems)
    return content


def _load_frame(root: Path, problems: list[Problem]) -> "tuple[Files, dict[str, Project]]":
    """The site's settings and projects, and how to read the rest."""
    site = _load_site(Files(root, problems))
    files = Files(root, problems, site.get("max_file_kb", MAX_FILE_KB))
    files.site = site
    return files, _load_projects(files)


def _with_records(
    files: "Files",
    projects: dict[str, Project],
    listed: list[tuple[str, str, tuple]],
    cache: "ParseCache | None",
    progress: Progress = QUIET,
) -> Content:
    """The content of these record files, the guides and the projects' extras; ids checked."""
    records, unreadable = _load_records(listed, files, cache, progress)
    guides = _load_guides(files)
    loaded = {w.key: w.load(files) for w in projects_wings(projects.values())}
    extras = {key: extra for key, extra in loaded.items() if extra is not None}
    content = Content(files.root, files.site, projects, {}, guides, extras)
    content.unreadable_ids = unreadable
    _check_ids(records, content, files.problems)
    return content


# What a person may say of a removed record besides the id of the check that took over:
# gone (the check is no longer made), printed (the same message, where errorkb's scan does
# not find it: a folder it leaves out, a message it cannot read), unrecorded (the check is
# still made, with a message no record holds).
CONFIRMED = ("gone", *LIVES)


def _load_confirmed(files: "Files", content: Content, problems: list[Problem]) -> dict:
    """content/lineage/<project>.yaml: removed record id -> what took over its check, read
    by a person in the code of its last release and the next (`errorkb tidy` and `errorkb
    history` write it as the record's `superseded_by`, whatever their rules found)."""
    folder = files.content / "lineage"
    out: dict[str, dict[str, str]] = {}
    if not files.exists(folder, folder=True):
        return out
    for path in sorted(folder.glob("*.yaml")):
        rel = _rel(path, files.root)
        if path.stem not in content.projects:
            problems.append(
                Problem(
                    rel,
                    1,
                    "E127",
                    "(file)",
                    f"no project {path.stem!r}: name the file after a project of content/projects/",
                )
            )
            continue
        source = files.source(path)
        if source is None:
            continue
        data = source.data or {}  # an empty file says nothing yet
        if not isinstance(data, dict):
            why = "a mapping of removed record id: successor id, gone, printed or unrecorded"
            problems.append(Problem(rel, 1, "E127", "(file)", why))
            continue
        found = {}
        for rid, said in data.items():
            why = _confirmed_problem(content, path.stem, rid, said)
            if why:
                problems.append(Problem(rel, source.line(str(rid)), "E127", str(rid), why))
            else:
                found[content.aliases.get(str(rid), str(rid))] = said
        out[path.stem] = found
    return out


def _confirmed_problem(content: Content, project: str, rid: object, said: object) -> str:
    if not isinstance(rid, str) or isinstance(said, int | float):
        return "write the id in quotes: YAML reads an id of digits alone as a number"
    record = content.records.get(content.aliases.get(rid, rid))
    if record is None or record.project != project:
        return f"no {project} record {rid!r}; use the id of a removed record of {project}"
    if record.status != "removed":
        return f"{rid} is {record.status}, not removed: only a removed record has a successor"
    if not isinstance(said, str) or not (said in CONFIRMED or content.knows(said)):
        return (
            f"{said!r} is no record id; give the id of the record whose check took over, "
            "or gone (the check is no longer made), printed (still printed from code "
            "errorkb does not scan) or unrecorded (still made, with a message no record holds)"
        )
    return ""


def load_site(root: Path) -> dict:
    """Only content/site.yaml, for commands that need no records. Raises ContentError."""
    return load_alone(Path(root), _load_site)


def load_alone(root: Path, loader):
    problems: list[Problem] = []
    loaded = loader(Files(root, problems))
    if problems:
        raise ContentError(problems)
    return loaded


def _load_site(files: Files) -> dict:
    """site.yaml, read within the default size limit (it is what may raise the limit)."""
    path = files.content / "site.yaml"
    if not os.path.lexists(path):
        files.problems.append(
            Problem(
                _rel(path, files.root),
                1,
                "E114",
                "(file)",
                "site settings are missing; create content/site.yaml",
            )
        )
        return {}
    source = files.exists(path) and files.source(path)
    if not source:
        return {}
    found = schema_problems(source, _SITE_SCHEMA)
    files.problems.extend(found)
    given = accepted_data(source) if not found else {}
    return {"branch": "main", "language": "en", "tagline": "", **given}


def _load_projects(files: Files) -> dict[str, Project]:
    projects = {}
    folder = files.content / "projects"
    for path, rel, _ in files.listing(folder, ".yaml", ".yml"):
        source = files.source(path, rel)
        if source is None:
            continue
        key = Path(path).stem
        found = schema_problems(source, _PROJECT_SCHEMA) + _name_problems(rel, key, "project")
        files.problems.extend(found)
        if not found:  # read all the same: its records' problems are still told
            files.problems.extend(_reserved_problems(source, key))
            projects[key] = Project(key=key, **accepted_data(source))
    return projects


NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")  # a project key or a guide slug: one URL segment


def _name_problems(rel: str, name: str, what: str) -> list[Problem]:
    """A file name that becomes a key of the site's URLs must be one plain segment: no
    %-escapes, dots or capitals that a URL or a case-folding file system reads otherwise."""
    if NAME.fullmatch(name):
        return []
    plain = re.sub(r"[^a-z0-9]+", "-", unquote(name).lower()).strip("-")[:63]
    fix = f"rename the file to {plain}{Path(rel).suffix}" if plain else "rename the file"
    why = (
        f"{name!r} cannot name a {what}: its file name is its key in the site's addresses; "
        f"use lowercase letters, digits and -, at most 63 ({fix})"
    )
    return [Problem(rel, 1, "E121", "(file name)", why)]


def _reserved_problems(source: Source, key: str) -> list[Problem]:
    """A project whose wing (its `wing:`, else its key) names a module of generator/projects/
    that is no wing (`pyodide`): the project would take it for its wing, and has none."""
    names, data = reserved(), accepted_data(source)
    given = "wing" in data
    name = data["wing"] if given else key
    if name not in names:
        return []
    fix = "name another wing, or none" if given else "rename the file"
    why = (
        f"{name!r} is a module of errorkb, not a wing: a project cannot use it "
        f"(reserved names: {', '.join(names)}); {fix}"
    )
    field = "wing" if given else "(file name)"
    return [Problem(source.path, source.line("wing") if given else 1, "E121", field, why)]


def _misplaced(name: str, suffix: str, rename: str, folder: str) -> str:
    """How to fix a file a listing does not read: rename it, or move it out."""
    stem = name.removesuffix(rename)
    if stem != name:
        return f"rename it to {stem}{suffix}"
    return f"only *{suffix} files belong in {folder}/; move or delete it"


def record_listing(files: "Files", wing_keys: dict[str, str]) -> list[tuple[str, str, tuple]]:
    """Every record file as (path, path from root, stamp); the stamp holds the key of the
    wing that checks it (`wing_keys`: project -> its wing's), so a new wing checks it anew."""
    listed = []
    for folder in files.folders(files.content / "errors"):
        wing_key = wing_keys.get(folder.name, folder.name)
        listed += files.listing(folder, ".yaml", ".yml", wing_key)
    return listed


def list_records(
    root: Path, wing_keys: dict[str, str], limit_kb: int
) -> list[tuple[str, str, tuple]] | None:
    """record_listing of the content under root, or None where a file there is not usable
    (load_content reports it)."""
    problems: list[Problem] = []
    listed = record_listing(Files(Path(root), problems, limit_kb), wing_keys)
    return None if problems else listed


def _load_records(
    listed: list[tuple[str, str, tuple]],
    files: "Files",
    cache: "ParseCache | None",
    progress: Progress = QUIET,
) -> tuple[list[Record], set[str]]:
    """Valid records, and the ids of invalid ones (so references to them do not cascade)."""
    records, unreadable = [], set()
    for source, found, patterns, known in _parse_records(listed, files.limit_kb, cache, progress):
        files.problems.extend(found)
        if source is None:
            continue
        if not found:
            records.append(Record(source, accepted_data(source), patterns, *known))
        elif isinstance(source.data, dict) and isinstance(source.data.get("id"), str):
            unreadable.add(source.data["id"])
    return records, unreadable


def _parse_records(
    files: list[tuple[str, str, tuple]],
    limit_kb: int,
    cache: "ParseCache | None",
    progress: Progress = QUIET,
):
    """Each file's (Source or None, its own problems, its search patterns): from the cache,
    else parsed, by forked workers when there are many (a cold build of 10,000 records)."""
    parsed: dict[str, tuple] = {}
    todo = []
    for path, rel, stamp in files:
        hit = cache.lookup(rel, stamp) if cache is not None else None
        if hit is None:
            todo.append((path, rel, stamp))
        else:
            parsed[rel] = hit
    results = _parse_files(
        [(path, rel, limit_kb, stamp[-1]) for path, rel, stamp in todo], progress
    )
    for (_, rel, stamp), result in zip(todo, results, strict=True):
        parsed[rel] = result
        if cache is not None:
            cache.store(rel, stamp, result)
    return [parsed[rel] for _, rel, _ in files]


PARALLEL_PARSE_MIN = 1000  # files to parse before forking workers pays for itself


def fork_workers(jobs: int, minimum: int) -> int:
    """How many forked worker processes to use for `jobs` jobs: 0 where fewer than `minimum`
    would not pay for their start, or where there is one core or no fork."""
    count = min(os.cpu_count() or 1, 8)
    if jobs < minimum or count < 2:
        return 0
    import multiprocessing  # here: a quick rebuild forks no workers, and it costs 12 ms

    return count if "fork" in multiprocessing.get_all_start_methods() else 0


def _parse_files(jobs: list[tuple[str, str, int, str]], progress: Progress = QUIET) -> list[tuple]:
    """_parse_record of each job, in order."""
    if jobs:
        progress.stage("reading records", len(jobs))
    workers = fork_workers(len(jobs), PARALLEL_PARSE_MIN)
    if not workers:
        return [_counted(_parse_record(job), progress) for job in jobs]
    _checker(load_schema())  # compiled once, before the fork, not in every worker
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parsed = pool.imap(_parse_record, jobs, chunksize=250)
        return [_counted(result, progress) for result in parsed]


def _counted(result, progress: Progress):
    progress.advance()
    return result


def _parse_record(job: tuple[str, str, int, str]) -> tuple:
    """One record file parsed and checked (in a worker process or not)."""
    path, rel, limit_kb, wing_key = job
    found: list[Problem] = []
    patterns: list = []
    known: tuple = ()  # what the record works out once (Record.parsed_*)
    source = _read_source(path, rel, limit_kb, found)
    if source is not None:
        found += schema_problems(source, load_schema(), id_field="id")
        if not found:
            record = Record(source, accepted_data(source))
            found += _record_problems(record, wing_key)
        if not found:
            patterns = template.record_patterns(record.messages, record.params)
            known = (record.title, record.outward)
    return source, found, patterns, known


class ParseCache:
    """Parsed, schema-checked record files, reused while a file's stamp is unchanged.

    Kept in memory by `serve` and pickled between builds, so that a rebuild after one
    record changes parses one file instead of all of them. The pickles are shards of the
    files, a shard for the records raised in the same source files, and a build rewrites only
    the shards it changed. The quick rebuild reads only the shards of the records it shows.
    """

    VERSION = 7
    SHARDS = 256  # ~130 records each at 32,000: a quick rebuild reads a few

    def __init__(self, folder: Path | None = None, shards: Iterable[int] | None = None):
        """The entries of every shard kept in `folder`, or of `shards` alone (the others
        then may not change)."""
        self.folder = folder
        self.entries: dict[str, tuple] = {}
        self.dirty: set[int] = set()
        self.loaded: set[int] = set()
        # What an entry depends on besides its file: the schema, the code that checks it
        # and makes its patterns.
        modules = [Path(template.__file__), Path(model_module.__file__), *registry.code_files()]
        code = [path.stat().st_mtime_ns for path in modules]
        self.key = (self.VERSION, SCHEMA_PATH.read_bytes(), Path(__file__).stat().st_mtime_ns, code)
        self.read(range(self.SHARDS) if shards is None else shards)

    def read(self, shards: Iterable[int]) -> None:
        """The entries of these shards too (those read already are kept as they are)."""
        todo = sorted(set(shards) - self.loaded)
        self.loaded.update(todo)
        try:  # an empty shard has no file: a small knowledge base has a few of the 256
            kept = set(os.listdir(self.folder)) if self.folder is not None else set()
        except FileNotFoundError:
            kept = set()
        for shard in todo:
            if f"{shard}.pickle" not in kept:
                continue
            try:
                key, entries = pickle.loads(self._path(shard).read_bytes())
            except FileNotFoundError:  # removed since the listing
                continue
            except Exception:  # stale or damaged: only a slower build
                self.dirty.add(shard)
                continue
            if key == self.key:
                self.entries.update(entries)
            else:
                self.dirty.add(shard)

    def record(self, rel: str) -> "Record | None":
        """The record a file held when last parsed, if it was."""
        entry = self.entries.get(rel)
        if entry is None:
            return None
        source, problems, _, _ = entry[1]
        return Record(source, accepted_data(source)) if source and not problems else None

    def lookup(self, rel: str, stamp: tuple):
        entry = self.entries.get(rel)
        return entry[1] if entry is not None and entry[0] == stamp else None

    def store(self, rel: str, stamp: tuple, parsed: tuple) -> None:
        if rel in self.entries:
            self.dirty.add(self._shard(rel, self.entries[rel][1]))
        self.entries[rel] = (stamp, parsed)
        self.dirty.add(self._shard(rel, parsed))

    def forget_others(self, seen: set[str]) -> None:
        """Drop the entries of files that are gone."""
        for rel in self.entries.keys() - seen:
            self.dirty.add(self._shard(rel, self.entries.pop(rel)[1]))

    def save(self) -> None:
        if self.folder is None or not self.dirty:
            return
        assert self.dirty <= self.loaded, "a shard changed that was not read"
        self.folder.mkdir(parents=True, exist_ok=True)
        shards: dict[int, dict] = {shard: {} for shard in self.dirty}
        for rel, entry in self.entries.items():
            if (shard := self._shard(rel, entry[1])) in shards:
                shards[shard][rel] = entry
        for shard, entries in shards.items():
            if not entries:  # a small knowledge base fills a few of the 256
                self._path(shard).unlink(missing_ok=True)
                continue
            tmp = self.folder / f".{shard}.tmp{os.getpid()}"
            tmp.write_bytes(pickle.dumps((self.key, entries), pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, self._path(shard))
        self.dirty.clear()

    @classmethod
    def shard_of(cls, project: str, path: str) -> int:
        """The shard of the records raised in one source file."""
        return zlib.crc32(f"{project}\0{path}".encode()) % cls.SHARDS

    def _shard(self, rel: str, parsed: tuple) -> int:
        data = parsed[0].data if parsed[0] is not None else None
        where = data.get("source") if isinstance(data, dict) else None
        if data is not None and isinstance(where, dict) and isinstance(where.get("path"), str):
            return self.shard_of(str(data.get("project")), where["path"])
        return zlib.crc32(rel.encode()) % self.SHARDS

    def _path(self, shard: int) -> Path:
        assert self.folder is not None, "only a cache kept on disk has shard files"
        return self.folder / f"{shard}.pickle"


def _check_ids(records: list[Record], content: Content, problems: list[Problem]) -> None:
    """File names match ids; ids and aliases are unique across the knowledge base."""
    owner: dict[str, str] = {}
    for record in records:
        src = record.source
        project_dir, _, name = src.path.rpartition("/")
        project_dir = project_dir.rpartition("/")[2]
        stem = name.removesuffix(".yaml")
        if record.id != stem:
            problems.append(
                Problem(
                    src.path,
                    src.line("id"),
                    "E105",
                    "id",
                    f"id {record.id!r} differs from the file name {stem!r}; "
                    "rename the file or fix the id",
                )
            )
        if record.project != project_dir:
            problems.append(
                Problem(
                    src.path,
                    src.line("project"),
                    "E109",
                    "project",
                    f"record of project {record.project!r} lies in "
                    f"errors/{project_dir}/; move it to errors/{record.project}/",
                )
            )
    # Ids first: an alias that collides with an id is the alias's fault, whatever the order.
    names = [(record, "id", record.id) for record in records] + [
        (record, f"aliases[{i}]", alias)
        for record in records
        for i, alias in enumerate(record.aliases)
    ]
    for record, fld, ident in names:
        src = record.source
        if ident in owner:
            problems.append(
                Problem(
                    src.path,
                    src.line(*_keys(fld)),
                    "E106",
                    fld,
                    f"{ident!r} is already used by {owner[ident]}; ids and aliases must be unique",
                )
            )
            continue
        owner[ident] = src.path
        if fld == "id":
            content.records[ident] = record
        else:
            content.aliases[ident] = record.id


def _path_clashes(content: Content) -> list[Problem]:
    """A source path that is also a folder of another path of the same project: no repository
    has both, and their file pages would be the same folder of the site."""
    paths: dict[tuple[str, str], tuple[Record, str]] = {}
    for record in content.records.values():
        fields = [("source.path", record.location)] + [
            (f"source.sites[{i}].path", site) for i, site in enumerate(record.sites)
        ]
        for fld, where in fields:
            paths.setdefault((record.project, where.path), (record, fld))
    found = []
    for (project, path), (record, fld) in sorted(paths.items()):
        parts = path.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            if (project, folder) in paths:
                other = paths[project, folder][0].source.path
                why = (
                    f"{folder!r} is a file in {other} and a folder here; "
                    "one of the two paths is wrong: correct it"
                )
                src = record.source
                found.append(Problem(src.path, src.line(*_field_keys(fld)), "E122", fld, why))
                break
    return found


def _field_keys(dotted: str) -> tuple:
    """'source.sites[2].path' -> ('source', 'sites', 2, 'path'), for Source.line."""
    keys: list = []
    for part in dotted.split("."):
        match = re.fullmatch(r"(\w+)\[(\d+)\]", part)
        keys += [match.group(1), int(match.group(2))] if match else [part]
    return tuple(keys)


def _keys(dotted: str) -> tuple:
    match = re.fullmatch(r"(\w+)\[(\d+)\]", dotted)
    return (match.group(1), int(match.group(2))) if match else (dotted,)


def _cross_problems(record: Record, content: Content) -> list[Problem]:
    """Checks that need more than one file: the project and related ids exist."""
    src, found = record.source, []
    if record.project not in content.projects:
        found.append(
            Problem(
                src.path,
                src.line("project"),
                "E109",
                "project",
                f"unknown project {record.project!r}; add "
                f"content/projects/{record.project}.yaml or fix the key",
            )
        )
    successor = record.superseded_by
    if successor is not None and not content.knows(successor):
        found.append(
            Problem(
                src.path,
                src.line("superseded_by"),
                "E104",
                "superseded_by",
                f"unknown id {successor!r}; use the id of another record under content/errors/",
            )
        )
    found += _engine_problems(record, content)
    found += flags.record_problems(record, content)
    for i, ref in enumerate(record.related):
        why = _related_problem(record, ref, content)
        if why:
            found.append(Problem(src.path, src.line("related", i), "E104", f"related[{i}]", why))
    return found


def _related_problem(record: Record, ref: str, content: Content) -> str | None:
    """What is wrong with one id of a record's `related`, and how to fix it, or None."""
    if ref == record.id:
        return "a record cannot be related to itself; remove it"
    if not content.knows(ref):
        return f"unknown id {ref!r}; use the id of a record under content/errors/"
    if ref in content.aliases:
        # An alias still leads to its record, but the list should name the live one: a
        # person reading the YAML, and a later merge, would otherwise follow a dead id.
        return f"{ref!r} is a former id of {content.aliases[ref]!r}; name that record"
    return None


def _engine_problems(record: Record, content: Content) -> list[Problem]:
    """`engines` belongs to a record of a stack project; each key names a project of kind
    engine, and each of its related ids a record of that engine."""
    src, found = record.source, []

    def problem(keys: tuple, code: str, why: str) -> None:
        found.append(Problem(src.path, src.line(*keys), code, _dotted(keys), why))

    project = content.projects.get(record.project)
    if record.engines and project is not None and project.kind != "stack":
        why = (
            f"{project.key} is a project of kind {project.kind}: only a record of a stack "
            "project (kind: stack) gives advice per engine; put it in solutions"
        )
        problem(("engines",), "E125", why)
    engines = sorted(k for k, p in content.projects.items() if p.kind == "engine")
    for key, advice in record.engines.items():
        engine = content.projects.get(key)
        if engine is None:
            why = f"unknown engine {key!r}; use the key of an engine: {', '.join(engines)}"
            problem(("engines", key), "E109", why)
            continue
        if engine.kind != "engine":
            why = (
                f"{key!r} is a project of kind {engine.kind}, not a serving engine; "
                f"use one of: {', '.join(engines)}"
            )
            problem(("engines", key), "E125", why)
            continue
        for i, ref in enumerate(advice.get("related", [])):
            target = content.records.get(content.aliases.get(ref, ref))
            keys = ("engines", key, "related", i)
            if not content.knows(ref):
                why = f"unknown id {ref!r}; use the id of a record under content/errors/{key}/"
                problem(keys, "E104", why)
            elif target is not None and target.project != key:
                why = (
                    f"{ref!r} is a record of {target.project}, not of {key}; "
                    f"list it under engines.{target.project}.related or related"
                )
                problem(keys, "E125", why)
    return found


def _supersession_cycles(content: Content) -> list[Problem]:
    """Records whose `superseded_by` leads back to them (A -> A, A -> B -> A): no record
    would be the one that took over. Each record is walked once, however long the chains."""
    records, found = content.records, []
    done: set[str] = set()
    for start in sorted(records):
        path: dict[str, int] = {}  # the records of this walk, in order
        rid: str | None = start
        while rid in records and rid not in done and rid not in path:
            path[rid] = len(path)
            successor = records[rid].superseded_by
            rid = content.aliases.get(successor, successor) if successor else None
        if rid in path:  # back on this walk: the records from rid on are a cycle
            cycle = list(path)[path[rid] :]
            for i, member in enumerate(cycle):
                found.append(_cycle_problem(records[member], cycle[i:] + cycle[:i]))
        done.update(path)
    return found


def _cycle_problem(record: Record, cycle: list[str]) -> Problem:
    src = record.source
    shown = " -> ".join([*cycle, cycle[0]])
    return Problem(
        src.path,
        src.line("superseded_by"),
        "E123",
        "superseded_by",
        f"leads back to this record: {shown}; point it at the record that took over, or remove it",
    )


def _path_problem(source: Source, keys: tuple, path: str, bad: tuple[str, str]) -> Problem:
    what, fix = bad
    why = f"{_shown(path)} is not a path inside the repository: {what}; {fix}"
    return Problem(source.path, source.line(*keys), "E115", _dotted(keys), why)


def _record_problems(record: Record, wing_key: str) -> list[Problem]:
    """Checks of one record beyond its schema: placeholders, versions in order, names of
    its paths in bytes, and its project's wing's."""
    found = _placeholder_problems(record) if "params" in record.data else []
    found += _versions_problems(record)
    found += _path_bytes_problems(record)
    found += _reported_problems(record)
    return found + wing(wing_key).record_problems(record)


def _path_bytes_problems(record: Record) -> list[Problem]:
    """Paths whose names the schema takes (it counts characters) but are too long in
    bytes for a file of the site: 63 emoji are 63 characters and 252 bytes."""
    source = record.data["source"]
    places = [(("source", "path"), source["path"])] + [
        (("source", "sites", i, "path"), site["path"])
        for i, site in enumerate(source.get("sites", []))
    ]
    return [
        _path_problem(record.source, keys, path, bad)
        for keys, path in places
        if (bad := path_problem(path))
    ]


def _reported_problems(record: Record) -> list[Problem]:
    """A thread listed twice in `reported` (its address, whatever the letter case or the
    kind of page: issues/12 and pull/12 of one repository are one thread) would count twice."""
    seen: dict[str, int] = {}
    found = []
    for i, thread in enumerate(record.data.get("reported", [])):
        key = thread_key(thread["url"])
        if key in seen:
            found.append(
                Problem(
                    record.source.path,
                    record.source.line("reported", i, "url"),
                    "E103",
                    f"reported[{i}].url",
                    f"the thread of reported[{seen[key]}] again; remove one of them",
                )
            )
        else:
            seen[key] = i
    return found


def thread_key(url: str) -> str:
    """A thread's address without what does not tell threads apart: letter case, and
    whether GitHub shows it as an issue, a pull request or a discussion."""
    owner, repo, _, number = url.removeprefix("https://github.com/").split("/")[:4]
    return f"{owner}/{repo}#{number}".lower()


def _versions_problems(record: Record) -> list[Problem]:
    """`versions` (of the message, of each variant) whose first release is after its last,
    in PEP 440 order (0.9.2 before 0.10.0, 1.0.0a1 before 1.0.0rc1)."""
    spans = [(("versions",), record.versions)] + [
        (("variants", i, "versions"), variant.get("versions"))
        for i, variant in enumerate(record.data.get("variants", []))
        if isinstance(variant, dict)
    ]
    found = []
    for keys, span in spans:
        if span is not None and _out_of_order(span["first"], span["last"]):
            found.append(
                Problem(
                    record.source.path,
                    record.source.line(*keys, "first"),
                    "E124",
                    _dotted((*keys, "first")),
                    f"first release {span['first']} is after last {span['last']}; "
                    "swap them or fix the release",
                )
            )
    return found


def _out_of_order(first: str, last: str) -> bool:
    try:
        return Version(first) > Version(last)
    except InvalidVersion:  # not PEP 440: no order to check
        return False


def _placeholder_problems(record: Record) -> list[Problem]:
    src, params, found = record.source, record.params, []
    for name in template.placeholders(record.message):
        if name not in params:
            found.append(
                Problem(
                    src.path,
                    src.line("message"),
                    "E107",
                    "params",
                    f"placeholder {{{name}}} of message is not in params; "
                    f"add `{name}:` under params",
                )
            )
    used = {n for m in record.messages for n in template.placeholders(m)}
    for name in params:
        if name not in used:
            found.append(
                Problem(
                    src.path,
                    src.line("params", name),
                    "E108",
                    f"params.{name}",
                    "no placeholder of message or variants has this name; "
                    "remove it or fix its name",
                )
            )
    return found


def _load_guides(files: Files) -> list[Guide]:
    guides = []
    folder = files.content / "guides"
    for path, rel, _ in files.listing(folder, ".md", ".markdown"):
        text = files.text(path, rel)
        if text is None:
            continue
        text = text.removeprefix("\ufeff").replace("\r\n", "\n")
        match = re.match(r"---\n(.*?\n)---\n", text, re.S)
        if not match:
            files.problems.append(
                Problem(
                    rel,
                    1,
                    "E101",
                    "(front matter)",
                    "a guide starts with YAML front matter between --- lines, "
                    "with at least `title:`",
                )
            )
            continue
        # Parsed after an empty line, as it starts on line 2: every line is the file's.
        source = parse_yaml("\n" + match.group(1), rel, files.problems)
        if source is None:
            continue
        if not isinstance(source.data, dict):
            why = "the front matter must be a YAML mapping of field: value"
            files.problems.append(Problem(rel, 2, "E111", "(front matter)", why))
            continue
        slug = Path(path).stem
        found = schema_problems(source, _GUIDE_SCHEMA) + _name_problems(rel, slug, "guide")
        files.problems.extend(found)
        if not found:
            body = text[match.end() :]
            first = text[: match.end()].count("\n") + 1
            guide = Guide(slug=slug, path=rel, body=body, source=source, **source.data)
            guide.body_line = first
            guides.append(guide)
    return guides

"""Loading and validating content/: records, projects, guides, models, site settings.

Every problem in the whole tree is collected, each naming file, line, a stable
code and the field, so that one `errorkb check` shows all there is to fix.
"""

import copy
import hashlib
import json
import multiprocessing
import os
import pickle
import re
import shlex
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import fastjsonschema
import yaml

from generator import calc, search, template

SCHEMA_PATH = Path(__file__).with_name("error.schema.json")
SCHEMA_LINE = "# yaml-language-server: $schema=../../../generator/error.schema.json"

# Stable problem codes: tests, docs and users rely on them.
CODES = {
    "E100": "YAML syntax error",
    "E101": "required field missing",
    "E102": "unknown field",
    "E103": "wrong type or value",
    "E104": "unknown record id",
    "E105": "bad id",
    "E106": "duplicate id or alias",
    "E107": "placeholder missing from params",
    "E108": "param that no message has",
    "E109": "unknown project",
    "E110": "duplicate key",
    "E111": "not a mapping",
    "E112": "bad calculator",
    "E113": "check failed",
    "E114": "missing file",
    "E120": "command fails otherwise than the text says",
}

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
        "homepage": {"type": "string"},
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
_MODELS_SCHEMA = {
    "type": "object",
    "required": ["models"],
    "additionalProperties": False,
    "properties": {
        "models": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "name", "heads", "layers"],
                "additionalProperties": False,
                "properties": {
                    "key": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]*$"},
                    "name": {"type": "string"},
                    "hf": {"type": "string"},
                    "heads": {"type": "integer", "minimum": 1},
                    "kv_heads": {"type": "integer", "minimum": 1},
                    "layers": {"type": "integer", "minimum": 1},
                    "mla": {"type": "boolean"},
                },
            },
        }
    },
}


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    code: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.field}: {self.message}"


class ContentError(Exception):
    """The content has problems; the build must not go on."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=lambda p: (p.path, p.line, p.code, p.field))
        super().__init__("\n".join(map(str, self.problems)))


@dataclass
class Source:
    """A parsed YAML document with the line of every field."""

    path: str
    data: object
    lines: dict[tuple, int] = field(default_factory=dict)
    digest: str = ""  # of the file's text: what the build keys its outputs on

    def line(self, *keys) -> int:
        """Line of a field, or of its nearest enclosing field that has one."""
        while keys not in self.lines and keys:
            keys = keys[:-1]
        return self.lines.get(keys, 1)


@dataclass(eq=False)
class Record:
    source: Source
    data: dict
    patterns: list | None = None  # search.record_patterns of data, when parsed for a build

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def project(self) -> str:
        return self.data["project"]

    @property
    def message(self) -> str:
        return self.data["message"]

    @property
    def title(self) -> str:
        return self.data.get("title") or self.data["message"]

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def curated(self) -> bool:
        """Explained by a person, not only extracted: it has prose worth full-text search."""
        return any(name in self.data for name in ("meaning", "trigger", "solutions"))


@dataclass
class Project:
    key: str
    name: str
    repo: str
    ref: str
    version: str = ""
    description: str = ""
    homepage: str = ""


@dataclass
class Guide:
    slug: str
    path: str
    title: str
    body: str
    summary: str = ""
    errors: list[str] = field(default_factory=list)
    updated: str = ""
    gpus_per_node: int = 8
    nodes: int | None = None
    source: Source | None = field(default=None, repr=False)
    body_line: int = 1  # the file's line where body starts


@dataclass
class Content:
    root: Path
    site: dict
    projects: dict[str, Project]
    records: dict[str, Record]
    guides: list[Guide]
    models: list[dict]
    aliases: dict[str, str] = field(default_factory=dict)  # former id -> current id
    unreadable_ids: set[str] = field(default_factory=set)  # ids of records with problems

    def knows(self, ident: str) -> bool:
        return ident in self.records or ident in self.aliases or ident in self.unreadable_ids


# YAML ---------------------------------------------------------------------


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Safe loader that keeps dates as the strings they were written as."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_yaml(text: str, path: str, problems: list[Problem]) -> Source | None:
    """Parse one YAML document, recording field lines and duplicate keys."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else 1
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(Problem(path, line, "E100", "(file)", f"{reason}; fix the YAML syntax"))
        return None
    finally:
        loader.dispose()
    source = Source(path, data, digest=hashlib.sha1(text.encode()).hexdigest())
    if node is not None:
        source.lines[()] = node.start_mark.line + 1
        _index_lines(node, (), source, problems)
    return source


def _index_lines(node, keys: tuple, source: Source, problems: list[Problem]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            here = keys + (key,)
            if key in seen:
                problems.append(
                    Problem(
                        source.path,
                        line,
                        "E110",
                        _dotted(here),
                        "key appears twice in the same mapping; keep one",
                    )
                )
            seen.add(key)
            source.lines.setdefault(here, line)
            _index_lines(value_node, here, source, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            source.lines.setdefault(keys + (i,), item.start_mark.line + 1)
            _index_lines(item, keys + (i,), source, problems)


def _dotted(keys) -> str:
    out = ""
    for key in keys:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(file)"


# Schema -------------------------------------------------------------------


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The record schema (shared: callers must not modify it)."""
    return json.loads(SCHEMA_PATH.read_text())


# Checkers per schema, keyed by id(); every schema here lives as long as the module.
_checkers: dict[int, object] = {}


def _checker(schema: dict):
    """fastjsonschema compiles the schema to Python code that answers valid documents ~7x
    faster than jsonschema, which only explains an invalid one (and is imported only then)."""
    key = id(schema)
    if key not in _checkers:
        # compile() rewrites $refs in place: give it a copy of the shared schema.
        _checkers[key] = fastjsonschema.compile(copy.deepcopy(schema))
    return _checkers[key]


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
        else:
            code = "E105" if keys == (id_field,) else "E103"
            problems.append(
                Problem(source.path, source.line(*keys), code, _dotted(keys), _explain(err))
            )
    return problems


def _explain(err) -> str:
    """A jsonschema ValidationError in a sentence."""
    value = json.dumps(err.instance, default=str)
    if len(value) > 60:
        value = value[:57] + "..."
    hint = err.schema.get("description")
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


def _read_source(path: Path, root: Path, problems: list[Problem]) -> Source | None:
    rel = _rel(path, root)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(rel, 1, "E100", "(file)", f"cannot read file: {exc}"))
        return None
    source = parse_yaml(text, rel, problems)
    if source is not None and not isinstance(source.data, dict):
        problems.append(
            Problem(rel, 1, "E111", "(file)", "the file must be a YAML mapping of field: value")
        )
        return None
    return source


def load_content(root: Path, cache: "ParseCache | None" = None) -> Content:
    """Load and validate everything under root/content; raise ContentError on any problem."""
    root = Path(root)
    content_dir = root / "content"
    problems: list[Problem] = []
    site = _load_site(content_dir, root, problems)
    projects = _load_projects(content_dir, root, problems)
    records, unreadable = _load_records(content_dir, root, problems, cache)
    guides = _load_guides(content_dir, root, problems)
    models = _load_models(content_dir, root, problems)
    content = Content(root, site, projects, {}, guides, models)
    content.unreadable_ids = unreadable
    _check_ids(records, content, problems)
    for record in content.records.values():
        problems += _cross_problems(record, content)
    for guide in guides:
        for i, ref in enumerate(guide.errors):
            if not content.knows(ref):
                line = guide.source.line("errors", i)
                problems.append(
                    Problem(
                        guide.path,
                        line,
                        "E104",
                        f"errors[{i}]",
                        f"unknown record id {ref!r}; use an id under content/errors/",
                    )
                )
    problems += command_problems(content)
    if problems:
        raise ContentError(problems)
    return content


def load_site(root: Path) -> dict:
    """Only content/site.yaml, for commands that need no records. Raises ContentError."""
    return _load_alone(Path(root), _load_site)


def load_models(root: Path) -> list[dict]:
    """Only content/models.yaml, for commands that need no records. Raises ContentError."""
    return _load_alone(Path(root), _load_models)


def _load_alone(root: Path, loader):
    problems: list[Problem] = []
    loaded = loader(root / "content", root, problems)
    if problems:
        raise ContentError(problems)
    return loaded


def _load_site(content_dir: Path, root: Path, problems: list[Problem]) -> dict:
    path = content_dir / "site.yaml"
    if not path.exists():
        problems.append(
            Problem(
                _rel(path, root),
                1,
                "E114",
                "(file)",
                "site settings are missing; create content/site.yaml",
            )
        )
        return {}
    source = _read_source(path, root, problems)
    if source is None:
        return {}
    problems += schema_problems(source, _SITE_SCHEMA)
    return {"branch": "main", "language": "en", "tagline": "", **source.data}


def _load_projects(content_dir: Path, root: Path, problems: list[Problem]) -> dict[str, Project]:
    projects = {}
    for path in sorted((content_dir / "projects").glob("*.yaml")):
        source = _read_source(path, root, problems)
        if source is None:
            continue
        found = schema_problems(source, _PROJECT_SCHEMA)
        problems += found
        if not found:
            projects[path.stem] = Project(key=path.stem, **source.data)
    return projects


def _load_records(
    content_dir: Path, root: Path, problems: list[Problem], cache: "ParseCache | None"
) -> tuple[list[Record], set[str]]:
    """Valid records, and the ids of invalid ones (so references to them do not cascade)."""
    records, unreadable = [], set()
    files = _record_files(content_dir, root)
    if cache is not None:
        cache.forget_others({rel for _, rel, _ in files})
    for source, found, patterns in _parse_records(files, root, cache):
        problems += found
        if source is None:
            continue
        if not found:
            records.append(Record(source, source.data, patterns))
        elif isinstance(source.data.get("id"), str):
            unreadable.add(source.data["id"])
    return records, unreadable


def _record_files(content_dir: Path, root: Path) -> list[tuple[str, str, tuple]]:
    """Every record file as (path, path from root, stamp), sorted: one scandir per project
    folder, as a rebuild lists tens of thousands of files before it knows what changed."""
    errors = content_dir / "errors"
    prefix = _rel(errors, root)
    files = []
    for folder in sorted(os.scandir(errors) if errors.is_dir() else [], key=lambda e: e.name):
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder.path):
            if entry.name.endswith(".yaml") and entry.is_file():
                st = entry.stat()
                stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
                rel = f"{prefix}/{folder.name}/{entry.name}"
                files.append((entry.path, rel, stamp))
    files.sort(key=lambda file: file[1])
    return files


def _parse_records(files: list[tuple[str, str, tuple]], root: Path, cache: "ParseCache | None"):
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
    results = _parse_files([(path, root) for path, _, _ in todo])
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
    if jobs < minimum or count < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return count


def _parse_files(jobs: list[tuple[str, Path]]) -> list[tuple]:
    """_parse_record of each job, in order."""
    workers = fork_workers(len(jobs), PARALLEL_PARSE_MIN)
    if not workers:
        return [_parse_record(job) for job in jobs]
    _checker(load_schema())  # compiled once, before the fork, not in every worker
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(_parse_record, jobs, chunksize=250)


def _parse_record(job: tuple[str, Path]) -> tuple:
    """One record file parsed and checked (in a worker process or not)."""
    path, root = job
    found: list[Problem] = []
    patterns: list = []
    source = _read_source(Path(path), root, found)
    if source is not None:
        found += schema_problems(source, load_schema(), id_field="id")
        if not found:
            found += _record_problems(Record(source, source.data))
        if not found:
            patterns = search.record_patterns(source.data)
    return source, found, patterns


class ParseCache:
    """Parsed, schema-checked record files, reused while a file's stamp is unchanged.

    Kept in memory by `serve` and pickled between builds, so that a rebuild after one
    record changes parses one file instead of all of them. The pickles are shards of the
    files (by a hash of their path), and a build rewrites only the shards it changed.
    """

    VERSION = 3
    SHARDS = 16

    def __init__(self, folder: Path | None = None):
        self.folder = folder
        self.entries: dict[str, tuple] = {}
        self.dirty: set[int] = set()
        # What an entry depends on besides its file: the schema, the code that checks it
        # and makes its patterns.
        code = [Path(m.__file__).stat().st_mtime_ns for m in (calc, search, template)]
        self.key = (self.VERSION, SCHEMA_PATH.read_bytes(), Path(__file__).stat().st_mtime_ns, code)
        for shard in range(self.SHARDS if folder is not None else 0):
            try:
                key, entries = pickle.loads(self._path(shard).read_bytes())
            except Exception:  # missing, stale or damaged: only a slower build
                self.dirty.add(shard)
                continue
            if key == self.key:
                self.entries.update(entries)
            else:
                self.dirty.add(shard)

    def lookup(self, rel: str, stamp: tuple):
        entry = self.entries.get(rel)
        return entry[1] if entry is not None and entry[0] == stamp else None

    def store(self, rel: str, stamp: tuple, parsed: tuple) -> None:
        self.entries[rel] = (stamp, parsed)
        self.dirty.add(self._shard(rel))

    def forget_others(self, seen: set[str]) -> None:
        """Drop the entries of files that are gone."""
        for rel in self.entries.keys() - seen:
            del self.entries[rel]
            self.dirty.add(self._shard(rel))

    def save(self) -> None:
        if self.folder is None or not self.dirty:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        shards: dict[int, dict] = {shard: {} for shard in self.dirty}
        for rel, entry in self.entries.items():
            if (shard := self._shard(rel)) in shards:
                shards[shard][rel] = entry
        for shard, entries in shards.items():
            tmp = self.folder / f".{shard}.tmp{os.getpid()}"
            tmp.write_bytes(pickle.dumps((self.key, entries), pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, self._path(shard))
        self.dirty.clear()

    def _shard(self, rel: str) -> int:
        return zlib.crc32(rel.encode()) % self.SHARDS

    def _path(self, shard: int) -> Path:
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
        names = [("id", record.id)] + [
            (f"aliases[{i}]", alias) for i, alias in enumerate(record.data.get("aliases", []))
        ]
        for fld, ident in names:
            if ident in owner:
                problems.append(
                    Problem(
                        src.path,
                        src.line(*_keys(fld)),
                        "E106",
                        fld,
                        f"{ident!r} is already used by {owner[ident]}; "
                        "ids and aliases must be unique",
                    )
                )
                continue
            owner[ident] = src.path
            if fld == "id":
                content.records[ident] = record
            else:
                content.aliases[ident] = record.id


def _keys(dotted: str) -> tuple:
    match = re.fullmatch(r"(\w+)\[(\d+)\]", dotted)
    return (match.group(1), int(match.group(2))) if match else (dotted,)


def _cross_problems(record: Record, content: Content) -> list[Problem]:
    """Checks that need more than one file: the project and related ids exist."""
    src, data, found = record.source, record.data, []
    if data["project"] not in content.projects:
        found.append(
            Problem(
                src.path,
                src.line("project"),
                "E109",
                "project",
                f"unknown project {data['project']!r}; add "
                f"content/projects/{data['project']}.yaml or fix the key",
            )
        )
    for i, ref in enumerate(data.get("related", [])):
        if ref == record.id:
            found.append(
                Problem(
                    src.path,
                    src.line("related", i),
                    "E104",
                    f"related[{i}]",
                    "a record cannot be related to itself; remove it",
                )
            )
        elif not content.knows(ref):
            found.append(
                Problem(
                    src.path,
                    src.line("related", i),
                    "E104",
                    f"related[{i}]",
                    f"unknown id {ref!r}; use the id of a record under content/errors/",
                )
            )
    return found


def _record_problems(record: Record) -> list[Problem]:
    """Checks of one record beyond its schema: placeholders, calculator inputs, claims."""
    data, found = record.data, []
    if "params" in data:
        found += _placeholder_problems(record)
    if "calculator" in data:
        found += _calculator_problems(record)
    for i, check in enumerate(data.get("checks", [])):
        found += _check_problems(record, i, check)
    return found


# Functions of generator/calc.py that a record's `checks` may call.
CHECK_FUNCTIONS = ("first_error", "moriio_first_error")


def _calculator_problems(record: Record) -> list[Problem]:
    src, spec, found = record.source, record.data["calculator"], []
    if spec["name"] not in calc.CALCULATORS:
        return [
            Problem(
                src.path,
                src.line("calculator", "name"),
                "E112",
                "calculator.name",
                f"unknown calculator {spec['name']!r}; use one of: {', '.join(calc.CALCULATORS)}",
            )
        ]
    inputs = calc.CALCULATORS[spec["name"]][1]
    names = template.placeholders(record.message)
    for key, placeholder in spec.get("inputs", {}).items():
        if key not in inputs:
            why = f"{spec['name']} has no input {key!r}; inputs: {', '.join(inputs)}"
        elif placeholder not in names:
            why = f"{{{placeholder}}} is not a placeholder of message"
        else:
            continue
        line = src.line("calculator", "inputs", key)
        found.append(Problem(src.path, line, "E112", f"calculator.inputs.{key}", why))
    return found


def _check_problems(record: Record, i: int, check: dict) -> list[Problem]:
    """Run one claim of `checks` through the calculator; a false claim is a problem."""
    function = check.get("function", "first_error")
    if function not in CHECK_FUNCTIONS:
        why = f"unknown function {function!r}; use one of: {', '.join(CHECK_FUNCTIONS)}"
    else:
        why = _false_claim(function, check)
    if why is None:
        return []
    return [Problem(record.path, record.source.line("checks", i), "E113", f"checks[{i}]", why)]


def _false_claim(function: str, check: dict) -> str | None:
    """Why the calculator contradicts the claim, or None when it agrees."""
    try:
        result = getattr(calc, function)(**check["given"])
    except (TypeError, calc.CalcInputError) as exc:
        return f"cannot run {function}: {exc}"
    got = result.id if result else "ok"
    if got == check["expect"]:
        return None
    said = result.message if result else "no error"
    return (
        f"claims {check['expect']} but {function}({_kwargs(check['given'])}) gives "
        f"{got}: {said}; correct the claim or the calculator"
    )


def _kwargs(given: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in given.items())


# Example commands ----------------------------------------------------------
# Each vLLM launch in a record's example fix or a guide's shell block runs through calc.py
# on the machine the text states. What the text says: a fix's `before` stops with the
# record's own error, everything else starts; a `# fails: <id>` comment on the line of a
# command or just above it says which error that one stops with.

_SHELL = {"", "bash", "sh", "shell", "console", "zsh"}
_FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_FAILS = re.compile(r"#\s*fails:\s*([0-9a-f]{16})\b")
_SEPARATORS = {";", "&&", "||", "|", "&", ";;"}
PLACEMENT = "more workers than GPUs on a node"


def command_problems(content: Content) -> list[Problem]:
    """E120 for every example command that vLLM would stop otherwise than its text says."""
    models = _models_by_name(content.models)
    found = []
    for record in content.records.values():
        fix = record.data.get("example_fix")
        if not fix:
            continue
        machine = (fix.get("gpus_per_node", 8), fix.get("nodes"))
        for side, default in (("before", record.id), ("after", None)):
            block = fix[side]
            if block.get("language", "") not in _SHELL:
                continue
            where = ("example_fix", side, "code")
            first = record.source.line(*where) + ("\n" in block["code"])  # a | block: next line
            for offset, words, claim in _commands(block["code"]):
                why = _command_problem(words, claim or default, machine, models)
                if why:
                    line = first + offset
                    found.append(Problem(record.path, line, "E120", f"example_fix.{side}", why))
    for guide in content.guides:
        machine = (guide.gpus_per_node, guide.nodes)
        for match in _FENCE.finditer(guide.body):
            if match.group(2).lower() not in _SHELL:
                continue
            first = guide.body_line + guide.body[: match.start(3)].count("\n")
            for offset, words, claim in _commands(match.group(3)):
                why = _command_problem(words, claim, machine, models)
                if why:
                    found.append(Problem(guide.path, first + offset, "E120", "(code)", why))
    return found


def _models_by_name(models: list[dict]) -> dict[str, dict]:
    """Presets by their Hugging Face name and key, as a command names its model."""
    named = {}
    for model in models:
        for name in (model["key"], model.get("hf")):
            if name:
                named[name.lower()] = model
    return named


def _commands(code: str):
    """(line offset, words, claimed error id or None) of each command in a shell snippet,
    joining backslash-continued lines; separators (;, &&, |) split commands."""
    claim, start, logical = None, 0, ""
    for i, raw in enumerate(code.split("\n")):
        text = raw.strip().removeprefix("$ ")
        if not logical:
            start = i
        if text.endswith("\\"):
            logical += text[:-1] + " "
            continue
        logical += text
        found = _FAILS.search(logical)
        if logical.startswith("#"):
            claim = found.group(1) if found else claim
        elif logical:
            for words in _split(logical):
                yield start, words, found.group(1) if found else claim
            claim = None
        logical = ""


def _split(line: str) -> list[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not a command this check can read
        return []
    commands, words = [], []
    for token in tokens + [";"]:
        if token in _SEPARATORS:
            commands, words = commands + [words] * bool(words), []
        else:
            words.append(token)
    return commands


def _command_problem(words, expect, machine, models) -> str | None:
    """Why vLLM would not do what the text says of this command, or None."""
    read = calc.read_command(words)
    if read is None:
        return None
    gpus, nodes = machine
    if read["visible_gpus"] is not None:
        gpus = min(gpus, read["visible_gpus"])
    model = models.get((read["model"] or "").lower().rstrip("/"))
    settings = read["settings"]
    place = {k: v for k, v in settings.items() if k != "dcp"}
    rules = {k: v for k, v in settings.items() if k != "dp_local"}
    try:
        shape = model and (model["heads"], model.get("kv_heads"), model.get("mla", False))
        heads, kv, mla = shape or (None, None, False)
        result = calc.first_error(heads, kv, mla=mla, gpus_per_node=gpus, **rules)
        plan = calc.node_plan(calc.launch_inputs(gpus_per_node=gpus, **place), nodes)
    except (calc.CalcInputError, TypeError) as exc:
        return f"cannot check `{_shown(words)}`: {exc}"
    got, said = (result.id, result.message) if result else (None, None)
    if got is None and plan["fits"] is False:
        got, said = PLACEMENT, plan["note"]
    if got == expect:
        return None
    if got is None:
        checkable = calc.MODEL_FREE if model is None else calc.FIRST_ERRORS
        if expect not in checkable:
            return None  # an error calc.py does not model, or needs the model's heads
        return f"`{_shown(words)}` is said to fail with {expect}, but passes every check"
    said = said.split("\n")[0]
    if expect is None:
        return (
            f"`{_shown(words)}` would stop with {got}: {said} (on {gpus} GPUs per node; "
            "give the multi-node flags or state the machine: gpus_per_node, nodes)"
        )
    return f"`{_shown(words)}` is said to fail with {expect}, but stops first with {got}: {said}"


def _shown(words: list[str]) -> str:
    text = " ".join(words)
    return text if len(text) <= 90 else text[:87] + "..."


def _placeholder_problems(record: Record) -> list[Problem]:
    src, data, found = record.source, record.data, []
    params = data["params"]
    for name in template.placeholders(data["message"]):
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
    used = {
        n for m in [data["message"], *data.get("variants", [])] for n in template.placeholders(m)
    }
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


def _load_guides(content_dir: Path, root: Path, problems: list[Problem]) -> list[Guide]:
    guides = []
    for path in sorted((content_dir / "guides").glob("*.md")):
        rel = _rel(path, root)
        text = path.read_text(encoding="utf-8")
        match = re.match(r"---\n(.*?\n)---\n", text, re.S)
        if not match:
            problems.append(
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
        source = parse_yaml(match.group(1), rel, problems)
        if source is None:
            continue
        # Front matter starts on line 2 of the file.
        source.lines = {k: v + 1 for k, v in source.lines.items()}
        found = schema_problems(source, _GUIDE_SCHEMA)
        problems += found
        if not found:
            body = text[match.end() :]
            first = text[: match.end()].count("\n") + 1
            guide = Guide(slug=path.stem, path=rel, body=body, source=source, **source.data)
            guide.body_line = first
            guides.append(guide)
    return guides


def _load_models(content_dir: Path, root: Path, problems: list[Problem]) -> list[dict]:
    path = content_dir / "models.yaml"
    if not path.exists():
        return []
    source = _read_source(path, root, problems)
    if source is None:
        return []
    found = schema_problems(source, _MODELS_SCHEMA)
    problems += found
    if found:
        return []
    models = source.data["models"]
    seen = set()
    for i, model in enumerate(models):
        if model["key"] in seen:
            problems.append(
                Problem(
                    source.path,
                    source.line("models", i, "key"),
                    "E106",
                    f"models[{i}].key",
                    f"duplicate model key {model['key']!r}",
                )
            )
        seen.add(model["key"])
    return models

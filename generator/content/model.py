"""The content's model: what a loaded knowledge base is made of (records, projects, guides),
and the problems found in it. Pure data with the properties code reads fields through; how
content/ is read and checked is generator/content/load.py."""

import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from errorkb.content import template

CODES = {  # problem code -> what it means (README.md lists them)
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
    "E115": "unsafe path",
    "E116": "YAML anchor or alias",
    "E117": "file too large",
    "E118": "unusable link",
    "E119": "stray file",
    "E120": "command fails otherwise than the text says",
    "E121": "unusable name",
    "E122": "path both a file and a folder",
    "E123": "superseded_by cycle",
    "E124": "versions out of order",
    "E125": "engine advice that does not fit",
    "E126": "a flag the engine's own parser refuses",
}

UNSHOWN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]")


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


@dataclass(frozen=True)
class Location:
    """A place in a project's source where an error is raised (the schema's `site`)."""

    path: str
    line: int | None = None
    function: str | None = None

    @classmethod
    def of(cls, site: dict[str, Any]) -> "Location":
        return cls(site["path"], site.get("line"), site.get("function"))


@dataclass(frozen=True)
class Param:
    """One placeholder of the message: what its values look like, and what it is."""

    type: str = "any"
    about: str | None = None


@dataclass(eq=False)
class Record:
    """A valid record. `data` is the file's mapping, as the API publishes it; code reads
    the fields through the properties below."""

    source: Source
    data: dict[str, Any]
    patterns: list | None = None  # template.record_patterns of its wordings, once parsed
    # Its title and outward hash, once worked out: every process that renders asks for them,
    # and they cost 0.1 ms each, so the parse cache keeps them with the patterns.
    parsed_title: str | None = None
    parsed_outward: str | None = None

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def project(self) -> str:
        return self.data["project"]

    @property
    def exception(self) -> str:
        return self.data["exception"]

    @property
    def message(self) -> str:
        return self.data["message"]

    @property
    def message_cut(self) -> bool:
        """Whether the program prints more than the message holds (it is cut short)."""
        return bool(self.data.get("message_cut"))

    @property
    def variants(self) -> list[str]:
        """The other wordings' templates (a variant is a template, or {message, versions})."""
        return [v if isinstance(v, str) else v["message"] for v in self.data.get("variants", [])]

    @property
    def wordings(self) -> list[tuple[str, dict | None]]:
        """Every wording with the releases that print it ({first, last}, or None when
        unknown): the message first, then the variants."""
        out: list[tuple[str, dict | None]] = [(self.message, self.versions)]
        for v in self.data.get("variants", []):
            out.append((v, None) if isinstance(v, str) else (v["message"], v.get("versions")))
        return out

    @property
    def versions(self) -> dict | None:
        """The releases that print the message: {first, last}, or None when not scanned."""
        return self.data.get("versions")

    @property
    def kind(self) -> str:
        """raise, assert, log or http: how the program prints it."""
        return self.data.get("kind", "raise")

    @property
    def level(self) -> str | None:
        return self.data.get("level")

    @property
    def superseded_by(self) -> str | None:
        return self.data.get("superseded_by")

    @property
    def messages(self) -> list[str]:
        """The message and its variants: every wording search matches."""
        return [self.message, *self.variants]

    @property
    def params(self) -> dict[str, Param]:
        return {name: Param(**about) for name, about in self.data.get("params", {}).items()}

    @property
    def title(self) -> str:
        """A person's title, else the one derived from the code, else the message's first
        sentence without placeholders (template.title), else the message; without bidi
        controls and zero-width characters (UNSHOWN): the message keeps them, as printed,
        but a title shows in head tags, cards, the feed and link lists."""
        if self.parsed_title is None:
            title = (
                self.data.get("title")
                or self.derived.get("title")
                or template.title(self.message)
                or self.message
            )
            self.parsed_title = UNSHOWN.sub("", title)
        return self.parsed_title

    @property
    def derived(self) -> dict[str, Any]:
        """What extract derived from the code (condition, flags, stage, category...)."""
        return self.data.get("derived", {})

    @property
    def summary(self) -> str:
        return self.data.get("summary", "")

    @property
    def status(self) -> str:
        return self.data.get("status", "active")

    @cached_property  # a record's data does not change once loaded
    def location(self) -> Location:
        """Where the error is raised (the first site)."""
        return Location.of(self.data["source"])

    @property
    def sites(self) -> list[Location]:
        """The further places the same error is raised."""
        return [Location.of(site) for site in self.data["source"].get("sites", [])]

    @property
    def ref(self) -> str | None:
        """The tag or commit the record's lines are pinned to; None: the project's ref."""
        return self.data["source"].get("ref")

    @property
    def related(self) -> list[str]:
        return self.data.get("related", [])

    @property
    def reported(self) -> list[dict[str, str]]:
        """The public threads where users reported the error, the most useful first: closed
        with the fix said, then closed, then open; else in the file's order."""
        threads = self.data.get("reported", [])
        return sorted(threads, key=lambda t: ("fix" not in t, t["state"] != "closed"))

    @property
    def met(self) -> int:
        """Met in the wild: how many public threads reported it."""
        return len(self.data.get("reported", []))

    @property
    def engines(self) -> dict[str, dict[str, Any]]:
        """A stack record's advice per serving engine: engine key -> {solutions, example_fix,
        related}, in the file's order."""
        return self.data.get("engines", {})

    @property
    def engine_related(self) -> list[str]:
        """The engines' own records that a stack record's advice links, each once."""
        ids = (ref for advice in self.engines.values() for ref in advice.get("related", []))
        return list(dict.fromkeys(ids))

    @property
    def aliases(self) -> list[str]:
        return self.data.get("aliases", [])

    @property
    def modified(self) -> str | None:
        """When the record last changed, from its own data (never the clock): when a person
        last changed it, else when it was analysed."""
        return self.data.get("updated") or self.data.get("analysis", {}).get("date")

    @property
    def checked(self) -> dict:
        """An explained record's `checked`: the release its text was checked against (and the
        fingerprint of the check then); {} when it names none."""
        return self.data.get("checked", {})

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def curated(self) -> bool:
        """Explained by a person, not only extracted: it has prose worth full-text search."""
        return any(name in self.data for name in ("meaning", "trigger", "solutions"))

    @property
    def outward(self) -> str:
        """A hash of what outputs other than the record's own show of it: all of it but its
        prose (PROSE), whose presence alone shows (an explained record is listed as such).
        Pages and listings that show a record are keyed by it, so that an edit of the prose
        remakes the record's own page, JSON and full-text entry and nothing else."""
        if self.parsed_outward is None:
            self.parsed_outward = self._hash_without(PROSE)
        return self.parsed_outward

    def placement(self) -> str:
        """A hash of what decides where the outputs drawn from many records list the record
        and what they list it with: all of its outward but what they only show (SHOWN).
        Records placed alike are listed in the same places, so that an edit of what is shown
        remakes the few listings that show the record (the quick rebuild)."""
        return self._hash_without(PROSE + SHOWN)

    def _hash_without(self, fields: tuple[str, ...]) -> str:
        kept = {k: v for k, v in self.data.items() if k not in fields}
        present = [k for k in PROSE if k in self.data]
        text = orjson.dumps(
            [self.source.path, kept, present], option=orjson.OPT_SORT_KEYS, default=str
        )
        return hashlib.sha1(text).hexdigest()


# A record's prose: the fields only its own page and JSON document show (and the full-text
# index of its page). tests/test_quick.py holds every other output to that.
PROSE = ("meaning", "trigger", "situations", "solutions", "example_fix", "defensive", "prevention")
# What listings show of a record (its line in them) without it deciding where they list it.
SHOWN = ("title", "summary")


@dataclass
class Project:
    key: str
    name: str
    repo: str
    ref: str
    version: str = ""
    description: str = ""
    homepage: str = ""
    # engine: a serving engine whose own errors are extracted from its code (vLLM, SGLang);
    # stack: a library the engines run on (torch, NCCL), curated records with advice per engine
    kind: str = "engine"
    wing: str = ""  # the wing it uses, when not its own (a fork of a project, a test site)
    package: str = ""  # its name on PyPI, when not its key
    releases_scanned: list[str] = field(default_factory=list)  # by `errorkb history`, oldest first
    # Where the package's files are in the repository (`python/` for SGLang), and the files
    # of its releases that `errorkb history` leaves out (fnmatch patterns of those paths).
    source_prefix: str = ""
    source_exclude: list[str] = field(default_factory=list)

    @property
    def wing_key(self) -> str:
        return self.wing or self.key


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


# What a reader of content/lineage/ may find of a removed record whose check no record took
# over, besides gone: the check lives on, printed where the scan does not find it, or made
# with a message no record holds. Upgrading does not stop it either way.
LIVES = ("printed", "unrecorded")


@dataclass
class Content:
    root: Path
    site: dict
    projects: dict[str, Project]
    records: dict[str, Record]
    guides: list[Guide]
    extras: dict[str, Any]  # what each project's wing loads besides records (presets)
    aliases: dict[str, str] = field(default_factory=dict)  # former id -> current id
    unreadable_ids: set[str] = field(default_factory=set)  # ids of records with problems
    stamps: dict[str, tuple] = field(default_factory=dict)  # record file -> stamp when listed
    # content/lineage/<project>.yaml: what a person read in both releases' code of a removed
    # record: the id of the record whose check took over, or one of load.CONFIRMED
    confirmed: dict[str, dict[str, str]] = field(default_factory=dict)

    def knows(self, ident: str) -> bool:
        return ident in self.records or ident in self.aliases or ident in self.unreadable_ids

    def only(self, key: str) -> "Content":
        """The content of one project's site: its records and aliases, every guide, the site's
        settings. Links to other projects' records are dropped, as that site has no page for
        them."""
        records = {rid: r for rid, r in self.records.items() if r.project == key}
        kept = set(records) | {a for a, rid in self.aliases.items() if rid in records}
        for rid, record in records.items():
            if any(ref not in kept for ref in record.related + record.engine_related):
                records[rid] = replace(record, data=_links_within(record.data, kept))
        guides = [replace(g, errors=[e for e in g.errors if e in kept]) for g in self.guides]
        return replace(
            self,
            projects={key: self.projects[key]},
            records=records,
            guides=guides,
            aliases={a: rid for a, rid in self.aliases.items() if rid in records},
        )


def _links_within(data: dict[str, Any], kept: set[str]) -> dict[str, Any]:
    """A record's data with only the links (related, and each engine's related) to `kept`."""
    out = {**data, "related": [ref for ref in data.get("related", []) if ref in kept]}
    if "engines" in data:
        out["engines"] = {
            engine: {**advice, "related": [r for r in advice["related"] if r in kept]}
            if "related" in advice
            else advice
            for engine, advice in data["engines"].items()
        }
    return out

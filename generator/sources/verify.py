"""`errorkb verify-sources`: are the records' locations still true in a source tree?

Each record of the project is looked up by its message (and variants) among the errors the
tree raises, as `errorkb extract` finds them:

- ok: still raised where the record says;
- moved: raised with the same message elsewhere (another line, function or file);
- reworded: no longer raised with this message, but an error without a record is raised with
  a similar one nearby (same exception; same file, or elsewhere if it is very close); its
  template is offered as a `variant`;
- gone: neither;
- not-checked: the record's source is not a Python file (Rust, C++, ...).

An explained record names the release its text was checked against (`checked.release`) and
the fingerprint of the check then (`checked.check`: `fingerprint`, of the exception, the
message, the test that guards the raise and the raising statement). A record still raised whose
check has another fingerprint in the tree is reported as changed since that release: its text
needs another look, whatever its location says.

`--update` rewrites the locations of moved records (and re-pins records to `--ref`);
`--accept-variants` also adds a reworded record's new template to its `variants` and points
its location there. Curated text is never touched.
"""

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from errorkb.content.load import load_content
from errorkb.content.model import Record
from errorkb.sources.extract import (
    Scan,
    Site,
    SourceError,
    assign_tree,
    location,
    match_key,
    project_ref,
    rewrite,
    write_text,
)

STATUSES = ("ok", "moved", "reworded", "gone", "not-checked")

# A rewording is taken for one when its message is this alike (difflib ratio of the literal
# text), in the same file; or when it is much closer than that anywhere else.
SAME_FILE_SIMILARITY = 0.6
ELSEWHERE_SIMILARITY = 0.85
# Words this common say nothing about which error is which.
_COMMON_WORD = 400
_WORD = re.compile(r"[a-z0-9_]{2,}")


@dataclass
class Finding:
    id: str
    status: str
    path: str
    line: int | None = None
    function: str = ""
    new: dict | None = None  # the location the record has in the tree
    variant: str = ""  # reworded: the template raised there now
    similarity: float = 0.0
    note: str = ""
    updated: bool = False
    checked: str = ""  # an explained record: the release its text was checked against
    check_changed: bool = False  # its check (`fingerprint`) differs in the tree

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in (None, "", 0.0)} | {
            "updated": self.updated
        }


@dataclass
class Report:
    project: str
    ref: str
    source: str
    scan: Scan
    findings: list[Finding] = field(default_factory=list)
    unrecorded: int = 0  # errors raised in the tree that no record covers

    def counts(self) -> dict[str, int]:
        found = Counter(f.status for f in self.findings)
        return {status: found[status] for status in STATUSES}

    def changed_checks(self) -> list[Finding]:
        """Explained records whose check changed since the release they were checked against."""
        return [f for f in self.findings if f.check_changed]

    def unresolved(self) -> int:
        """Records to look at: moved, reworded or gone (and not updated), or explained against
        a check that changed since."""
        return sum(
            1
            for f in self.findings
            if (f.status in ("moved", "reworded", "gone") and not f.updated) or f.check_changed
        )

    def to_json(self) -> dict:
        return {
            "project": self.project,
            "ref": self.ref,
            "source": self.source,
            "files": self.scan.files,
            "counts": self.counts(),
            "updated": sum(f.updated for f in self.findings),
            "check_changed": [f.id for f in self.changed_checks()],
            "unrecorded": self.unrecorded,
            "records": [f.to_json() for f in self.findings],
        }

    def text(self, verbose: bool = False) -> str:
        lines = [
            f"{len(self.findings)} {self.project} records checked against {self.source} "
            f"at {self.ref} ({self.scan.files} Python files)"
        ]
        for f in self.findings:
            if f.status == "ok" and not (verbose or f.updated):
                continue
            where = _where(f.path, f.line)
            done = "  [updated]" if f.updated else ""
            if f.status == "ok":
                lines.append(f"ok        {f.id}  {where}{done}")
            elif f.status == "moved":
                note = f" ({f.note})" if f.note else ""
                lines.append(f"moved     {f.id}  {where} -> {_where_new(f.new)}{note}{done}")
            elif f.status == "reworded":
                lines += [
                    f"reworded  {f.id}  {where} -> {_where_new(f.new)} "
                    f"({f.similarity:.0%} alike){done}",
                    f"          now: {f.variant}",
                    "          offered as a variant; --update --accept-variants adds it",
                ]
            elif f.status == "gone":
                lines.append(f"gone      {f.id}  {where}" + (f" ({f.note})" if f.note else ""))
            elif verbose:
                lines.append(f"skipped   {f.id}  {where} ({f.note})")
        counts = self.counts()
        lines.append(
            ", ".join(f"{n} {status}" for status, n in counts.items() if n or status == "ok")
            + f"; {self.unrecorded} errors raised in the tree have no record"
            + (" (errorkb extract adds them)" if self.unrecorded else "")
        )
        for f in self.changed_checks():
            lines.append(
                f"changed   {f.id}  {_where_new(f.new)} (explained against {self.project} "
                f"{f.checked}; its check differs now: read the code and the text again)"
            )
        if self.changed_checks():
            lines.append(
                f"{len(self.changed_checks())} explained records whose check changed since "
                "the release they were checked against"
            )
        updated = sum(f.updated for f in self.findings)
        if updated:
            lines.append(f"{updated} records rewritten")
        return "\n".join(lines)


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


def _where_new(new: dict | None) -> str:
    if not new:
        return "?"
    more = len(new.get("sites", []))
    return _where(new["path"], new.get("line")) + (f" (+{more} more)" if more else "")


def fingerprint(site: Site) -> str:
    """The check of a raise site, as 12 hex digits: its exception and message, the test that
    guards it and the raising statement (without its indentation or line). The same check
    moved elsewhere keeps it; another test, a reworded message or another statement do not."""
    statement = "\n".join(line.strip() for line in site.snippet.splitlines() if line.strip())
    text = "\0".join((site.exception, site.template, site.guard, statement))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _places(src: dict) -> list[tuple]:
    first = (src["path"], src.get("line"), src.get("function", ""))
    rest = [(s["path"], s.get("line"), s.get("function", "")) for s in src.get("sites", [])]
    return [first, *rest]


class _Candidates:
    """Errors without a record, searchable by the words of their message."""

    def __init__(self, fresh: list[list[Site]]):
        self.groups = fresh
        self.texts = [match_key(g[0].exception, g[0].template)[1] for g in fresh]
        self.by_word: dict[str, list[int]] = defaultdict(list)
        self.by_path: dict[str, set[int]] = defaultdict(set)
        for i, (group, text) in enumerate(zip(fresh, self.texts, strict=True)):
            for word in set(_WORD.findall(text.lower())):
                self.by_word[word].append(i)
            for site in group:
                self.by_path[site.path].add(i)

    def closest(self, exception: str, message: str, path: str, function: str):
        """(similarity, sites, same file) of the most similar error, or None."""
        text = match_key(exception, message)[1]
        shared: Counter = Counter()
        for word in set(_WORD.findall(text.lower())):
            posting = self.by_word.get(word, [])
            if len(posting) <= _COMMON_WORD:
                shared.update(posting)
        pool = {i for i, _ in shared.most_common(25)} | self.by_path.get(path, set())
        best = None
        for i in pool:
            group = self.groups[i]
            if group[0].exception != exception:
                continue
            matcher = SequenceMatcher(None, text, self.texts[i], autojunk=False)
            if matcher.real_quick_ratio() < SAME_FILE_SIMILARITY:
                continue
            ratio = matcher.ratio()
            same_file = any(s.path == path for s in group)
            same_function = any(s.path == path and s.function == function for s in group)
            wanted = SAME_FILE_SIMILARITY if same_file else ELSEWHERE_SIMILARITY
            if ratio < wanted:
                continue
            score = (ratio + 0.05 * same_file + 0.05 * same_function, -i)
            if best is None or score > best[0]:
                best = (score, ratio, group)
        return None if best is None else (best[1], best[2])


def verify_sources(
    root: Path,
    source: Path,
    project: str | None = None,
    ref: str | None = None,
    *,
    update: bool = False,
    accept_variants: bool = False,
    include_vendored: bool = False,
    asserts: bool = False,
    printed: bool = False,
    exclude: Iterable[str] = (),
    prefix: str = "",
    jobs: int | None = None,
    progress: bool | None = None,
) -> Report:
    """Check every record of a project against a source tree; optionally fix locations."""
    root = Path(root)
    content = load_content(root)
    if project is None:
        if len(content.projects) != 1:
            raise SourceError(f"give --project; projects: {', '.join(content.projects)}")
        project = next(iter(content.projects))
    default_ref = project_ref(content, project)
    ref = ref or default_ref
    scan, index, done = assign_tree(
        content,
        project,
        source,
        asserts=asserts,
        printed=printed,
        prefix=prefix,
        include_vendored=include_vendored,
        exclude=exclude,
        jobs=jobs,
        progress=progress,
        snippets=True,  # the raising statements, for the checks' fingerprints
    )
    matched, fresh = done.matched, done.fresh
    candidates = _Candidates(fresh)
    paths = set(scan.paths)
    report = Report(project, ref, str(source), scan)
    offered: set[int] = set()
    for rid, record in sorted(index.records.items()):
        where, src = record.location, record.data["source"]  # src: the mapping rewritten
        finding = Finding(rid, "ok", where.path, where.line, where.function or "")
        report.findings.append(finding)
        if not where.path.endswith(".py"):
            finding.status, finding.note = "not-checked", "not a Python file"
            continue
        changes: dict = {}
        checked = record.checked
        finding.checked = str(checked.get("release", ""))
        if rid in matched:
            if checked.get("check") and fingerprint(matched[rid][0]) != checked["check"]:
                finding.check_changed = True
            new = location(matched[rid], ref, default_ref, src, snippets=False)
            finding.new = new
            if _places(new) != _places(src):
                finding.status = "moved"
                if _places(new)[0] == _places(src)[0]:
                    finding.note = "raised at further places, or at fewer"
            if new != src:
                changes["source"] = new
        else:
            near = candidates.closest(
                record.exception, record.message, where.path, finding.function
            )
            if near is None:
                finding.status = "gone"
                finding.note = "" if where.path in paths else "file no longer in the tree"
                continue
            similarity, sites = near
            offered.add(id(sites))
            finding.status, finding.similarity = "reworded", round(similarity, 3)
            finding.variant = sites[0].template
            finding.new = location(sites, ref, default_ref, src, snippets=False)
            if accept_variants:
                if finding.variant not in record.variants:
                    changes["variants"] = [*record.data.get("variants", []), finding.variant]
                changes["source"] = finding.new
        if update and changes and (finding.status != "reworded" or accept_variants):
            _apply(root, record, changes)
            finding.updated = True
    report.unrecorded = sum(1 for g in fresh if id(g) not in offered)
    return report


def _apply(root: Path, record: Record, changes: dict) -> None:
    path = root / record.path
    write_text(path, rewrite(record, path.read_text(encoding="utf-8"), **changes))

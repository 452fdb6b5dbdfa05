"""`errorkb update`: the releases on the index that the knowledge base does not hold yet,
scanned into it, and what they changed, written for the person who reviews the pull request.

Which releases the knowledge base holds is its own business, not a cache's: each project
file's `releases_scanned` (written by `errorkb history`) lists them, so a fresh runner with an
empty cache finds the same new releases as a maintainer's machine. For a project with a new
release, `update`:

1. scans the new releases alone first (`history.scan_release`: the scans go to the user cache,
   where `errorkb history` finds them; a release without a wheel is left for next time);
2. pins the project to the newest of them (`version`, and `ref` its tag `v<version>`, the
   tag `errorkb history` pins older releases to), after pinning the records that named no
   ref of their own to the old ref, so that no record's lines move unseen;
3. runs `errorkb history` over every release held and the new ones (the lineage needs them
   all: a release held is scanned again when the cache lacks it);
4. re-derives the `derived` blocks from the new pinned release (`extract.rederive`) and
   re-pins the records' locations to it (`verify.verify_sources --update`), with one download;
5. compares the project's records before and after: added, reworded, moved, removed, merged,
   a derived condition changed; and which of those a person explained.
"""

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from errorkb import resources
from errorkb.content.load import load_content
from errorkb.content.model import PROSE, Content
from errorkb.sources import history
from errorkb.sources.extract import ExtractError, rederive, rewrite, write_text
from errorkb.sources.verify import verify_sources
from errorkb.triage.comment import code, text

LIST_CAP = 25  # ids listed per kind of change in the report; the counts are whole
KINDS = ("added", "reworded", "moved", "removed", "merged", "condition")
HEADINGS = {
    "added": "Added",
    "reworded": "Reworded",
    "moved": "Moved",
    "removed": "Removed",
    "merged": "Merged into another record",
    "condition": "Condition changed",
}


class UpdateError(ExtractError):
    """A project cannot be updated; the message says why."""


@dataclass
class Change:
    id: str
    title: str
    detail: str = ""  # what changed, one line of Markdown
    explained: bool = False  # a person wrote its explanation: the change needs a person
    guess: str = ""  # of a removed record: the successor the rules found, else gone


@dataclass
class ProjectUpdate:
    key: str
    package: str
    held: list[str]  # the releases the knowledge base held before
    new: list[str] = field(default_factory=list)  # new releases scanned in
    skipped: list[str] = field(default_factory=list)  # new releases without a wheel
    changes: dict[str, list[Change]] = field(default_factory=lambda: {k: [] for k in KINDS})
    rederived: int = 0  # records whose derived block was rewritten
    verify: dict[str, int] = field(default_factory=dict)  # verify-sources' counts
    repinned: int = 0  # records whose location verify-sources rewrote
    unfound: list[Change] = field(default_factory=list)  # active records verify cannot find

    @property
    def version(self) -> str:
        return self.new[-1] if self.new else (self.held[-1] if self.held else "")

    def need_a_person(self) -> list[tuple[str, Change]]:
        """The explained records whose check changed, each once, with its first change."""
        seen: dict[str, tuple[str, Change]] = {}
        for kind in KINDS:
            for change in self.changes[kind]:
                if change.explained and kind != "added":
                    seen.setdefault(change.id, (kind, change))
        for change in self.unfound:
            if change.explained:
                seen.setdefault(change.id, ("not found", change))
        return list(seen.values())


# Which releases are new ------------------------------------------------------------------


def new_releases(held: list[str], available: list[str], every: bool = False) -> list[str]:
    """The releases on the index after the newest one held (the last patch of each minor,
    as `errorkb history` takes them, or every one); all of them when none is held."""
    if not available:
        return []
    if not held:
        return history.select(available, "..", every)
    newest = max(held, key=Version)
    later = [v for v in available if Version(v) > Version(newest)]
    if not later:
        return []
    return [v for v in history.select(later, "..", every) if v not in held]


def with_pin(text: str, version: str, ref: str) -> str:
    """A project file's text with `version` and `ref` set, every other line kept."""
    lines = text.splitlines()
    for key, value in (("version", version), ("ref", ref)):
        line = f'{key}: "{value}"'
        at = [i for i, old in enumerate(lines) if old.startswith(f"{key}:")]
        if at:
            lines[at[0]] = line
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@contextmanager
def index_url(url: str | None) -> Iterator[None]:
    """pip (which `history` runs) asks this index while inside: PIP_INDEX_URL set, and
    restored after."""
    if not url:
        yield
        return
    before = os.environ.get("PIP_INDEX_URL")
    os.environ["PIP_INDEX_URL"] = url
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PIP_INDEX_URL", None)
        else:
            os.environ["PIP_INDEX_URL"] = before


# The update ------------------------------------------------------------------------------


RunHistory = Callable[[str, list[str]], int]  # (project, releases) -> exit status


def update(
    root: Path,
    keys: list[str] | None,
    run_history: RunHistory,
    *,
    every: bool = False,
    dry_run: bool = False,
    jobs: int | None = None,
    report: Callable[[str], None] = lambda line: None,
) -> list[ProjectUpdate]:
    """Scan each project's new releases into the knowledge base (module docstring) and say
    what they changed; `keys`: the projects (default: those `errorkb history` keeps)."""
    root = Path(root)
    content = load_content(root)
    if keys is None:
        keys = sorted(k for k, p in content.projects.items() if p.releases_scanned)
    for key in keys:
        if key not in content.projects:
            raise UpdateError(f"no project {key!r} in content/projects/")
    done = []
    for key in keys:
        project = content.projects[key]
        package = project.package or project.key
        held = history.sort_versions(project.releases_scanned)
        found = ProjectUpdate(key, package, held)
        done.append(found)
        new = new_releases(held, history.available_versions(package), every)
        if not new:
            report(f"{key}: nothing new (newest held: {held[-1] if held else 'none'})")
            continue
        report(f"{key}: new on the index: {', '.join(new)}")
        if dry_run:
            found.new = new
            continue
        for version in new:  # scanned alone first: one without a wheel waits for next time
            try:
                history.scan_release(package, version, jobs)
                found.new.append(version)
            except history.NoWheel as exc:
                report(f"{key} {version}: skipped: {exc}")
                found.skipped.append(version)
        if not found.new:
            continue
        _scan_in(root, content, found, run_history, jobs, report)
    return done


def _scan_in(
    root: Path,
    before: Content,
    found: ProjectUpdate,
    run_history: RunHistory,
    jobs: int | None,
    report: Callable[[str], None],
) -> None:
    key, version = found.key, found.new[-1]
    project = before.projects[key]
    old = {rid: r.data for rid, r in before.records.items() if r.project == key}
    path = root / "content" / "projects" / f"{key}.yaml"
    pinned = _pin_records(root, before, key, project.ref)
    if pinned:
        report(f"{key}: {pinned} records pinned to {project.ref}, the ref they had by default")
    text_before = path.read_text(encoding="utf-8")
    write_text(path, with_pin(text_before, version, f"v{version}"))
    releases = sorted(set(found.held) | set(found.new), key=Version)
    if run_history(key, releases) != 0:
        write_text(path, text_before)
        raise UpdateError(f"{key}: errorkb history failed (its lines above say why)")
    work = resources.user_cache() / found.package / "wheels"
    work.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{version}-", dir=work))
    try:
        wheel = history.download(found.package, version, folder)
        summary = rederive(root, load_content(root), wheel, key, jobs=jobs)
        found.rederived = len(summary.updated)
        checked = verify_sources(
            root,
            wheel,
            key,
            update=True,
            asserts=True,
            printed=True,
            prefix=project.source_prefix,
            exclude=project.source_exclude,
            jobs=jobs,
            progress=False,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    after = load_content(root)
    new = {rid: r.data for rid, r in after.records.items() if r.project == key}
    found.verify = checked.counts()
    found.repinned = sum(f.updated for f in checked.findings)
    for finding in checked.findings:  # a removed record is gone by design
        data = new.get(finding.id)
        if data and data.get("status", "active") == "active":
            if finding.status == "gone":
                found.unfound.append(_change(finding.id, after, f"not raised in {version}"))
            elif finding.status == "reworded":
                detail = f"raised in {version} as {_wording(finding.variant)}?"
                found.unfound.append(_change(finding.id, after, detail))
    classify(found, old, new, after, found.held[-1] if found.held else None, version)
    counts = ", ".join(f"{len(found.changes[k])} {k}" for k in KINDS)
    report(
        f"{key} {version}: {counts}; {found.rederived} derived blocks rewritten, "
        f"{found.repinned} locations re-pinned, {len(found.unfound)} active records not found"
    )


def _pin_records(root: Path, content: Content, key: str, ref: str) -> int:
    """Records of the project whose lines follow the project's ref (they name none) given
    that ref: the project is about to be pinned to another release."""
    count = 0
    for record in content.records.values():
        if record.project != key or "ref" in record.data["source"]:
            continue
        path = root / record.path
        source = {**record.data["source"], "ref": ref}
        write_text(path, rewrite(record, path.read_text(encoding="utf-8"), source=source))
        count += 1
    return count


# What changed ------------------------------------------------------------------------------


def classify(
    found: ProjectUpdate,
    old: dict[str, dict],
    new: dict[str, dict],
    after: Content,
    previous: str | None,
    latest: str,
) -> None:
    """Each record's change from `old` (its data before) to `new` (after), the newest release
    held before being `previous`."""
    changes = found.changes
    for rid, data in sorted(new.items()):
        active = data.get("status", "active") == "active"
        if rid not in old:
            gone = "" if active else f"; no longer printed in {latest}"
            changes["added"].append(_change(rid, after, _wording(data["message"]) + gone))
            continue
        was = old[rid]
        if was.get("status", "active") != "removed" and not active:
            successor = data.get("superseded_by")
            detail = f"superseded by {code(successor)}" if successor else "gone"
            changes["removed"].append(_change(rid, after, detail, successor or "gone"))
            continue
        if not active:
            continue
        if was.get("status", "active") == "removed":  # a check printed again
            detail = f"printed again in {latest}: {_wording(data['message'])}"
            changes["added"].append(_change(rid, after, detail))
            continue
        if previous:
            then, now = printed_in(data, previous), printed_in(data, latest)
            if then and now and then != now:
                detail = f"{_wording(then[0])} → {_wording(now[0])}"
                changes["reworded"].append(_change(rid, after, detail))
        places, places_were = _places(data["source"]), _places(was["source"])
        if places != places_were:
            detail = f"{_place(was['source'])} → {_place(data['source'])}"
            changes["moved"].append(_change(rid, after, detail))
        cond, cond_was = _condition(data), _condition(was)
        if cond and cond_was and cond != cond_was:
            changes["condition"].append(_change(rid, after, f"{code(cond_was)} → {code(cond)}"))
    for rid in sorted(set(old) - set(new)):
        into = after.aliases.get(rid)
        detail = f"into {code(into)}" if into else "deleted"
        change = Change(rid, _title(old[rid]), detail, _explained(old[rid]))
        changes["merged"].append(change)


def printed_in(data: dict, version: str) -> list[str]:
    """The record's wordings that `version` prints (by their `versions`)."""
    at = Version(version)
    wordings = [(data["message"], data.get("versions"))]
    for v in data.get("variants", []):
        wordings.append((v, None) if isinstance(v, str) else (v["message"], v.get("versions")))
    return [
        message
        for message, seen in wordings
        if seen and Version(seen["first"]) <= at <= Version(seen["last"])
    ]


def _places(source: dict) -> list[tuple[str, str]]:
    """Where a check is raised, lines aside (every release moves those)."""
    places = [source, *source.get("sites", [])]
    return sorted({(p["path"], p.get("function", "")) for p in places})


def _place(source: dict) -> str:
    where = source["path"] + (f" ({source['function']})" if source.get("function") else "")
    return code(where, 120)


def _condition(data: dict) -> str:
    return (data.get("derived") or {}).get("condition", "")


def _wording(message: str) -> str:
    return code(message, 120)


def _title(data: dict) -> str:
    return data.get("title") or (data.get("derived") or {}).get("title") or data["message"]


def _explained(data: dict) -> bool:
    return any(name in data for name in PROSE)


def _change(rid: str, content: Content, detail: str, guess: str = "") -> Change:
    record = content.records[rid]
    return Change(rid, record.title, detail, _explained(record.data), guess)


# The report ------------------------------------------------------------------------------


def title(updates: list[ProjectUpdate]) -> str:
    """The pull request's title: the new releases, or that there are none."""
    new = [f"{u.key} {', '.join(u.new)}" for u in updates if u.new]
    return "New releases: " + "; ".join(new) if new else "No new release"


def branch(updates: list[ProjectUpdate]) -> str:
    """A branch name for the pull request, the same for the same new releases."""
    parts = [f"{u.key}-{u.new[-1]}" for u in updates if u.new]
    return "errorkb-update/" + ("_".join(parts) or "none")


def markdown(updates: list[ProjectUpdate], dry_run: bool = False) -> str:
    """The pull request's body: its title, then per project what the new releases changed
    (counts, and the ids listed, LIST_CAP per kind), the explained records first."""
    out = [f"# {title(updates)}", ""]
    if not any(u.new for u in updates):
        held = ", ".join(f"{u.key} {u.held[-1]}" for u in updates if u.held)
        out.append(f"Every release on the index is held already ({held or 'no project'}).")
        return "\n".join(out) + "\n"
    for u in updates:
        if not u.new:
            out += [f"{u.key}: nothing new since {u.held[-1] if u.held else 'none'}.", ""]
            continue
        out += [f"## {u.key} {u.version}", ""]
        since = f" since {u.held[-1]}" if u.held else " (its first scan)"
        if dry_run:
            out += [f"New on the index{since}: {', '.join(u.new)} (dry run: none scanned).", ""]
            continue
        out.append(f"Scanned{since}: {', '.join(u.new)}.")
        if u.skipped:
            out.append(f"Without a wheel, tried again next time: {', '.join(u.skipped)}.")
        out.append(f"Pinned to {u.version} (`v{u.version}`).")
        out += ["", "| change | records |", "|---|---|"]
        out += [f"| {HEADINGS[k].lower()} | {len(u.changes[k])} |" for k in KINDS]
        out.append("")
        person = u.need_a_person()
        if person:
            out += [
                f"### Explained records whose check changed: a person must look ({len(person)})"
            ]
            out += [""]
            out += [f"- [ ] {_line(c)}: {kind}" for kind, c in person[:LIST_CAP]]
            out += _more(len(person)) + [""]
        for kind in KINDS:
            rows = u.changes[kind]
            if rows:
                out += [f"### {HEADINGS[kind]} ({len(rows)})", ""]
                out += [f"- {_line(c)}: {c.detail}" for c in rows[:LIST_CAP]]
                out += _more(len(rows)) + [""]
        out += _to_confirm(u)
        counts = ", ".join(f"{n} {status}" for status, n in u.verify.items() if n)
        out.append(
            f"`errorkb rederive`: {u.rederived} derived blocks rewritten. "
            f"`errorkb verify-sources` against {u.version}: {counts or 'no record'} "
            f"({u.repinned} locations re-pinned; removed records are gone by design)."
        )
        if u.unfound:
            out += ["", f"### Active records verify-sources does not find ({len(u.unfound)})", ""]
            out += [f"- {_line(c)}: {c.detail}" for c in u.unfound[:LIST_CAP]]
            out += _more(len(u.unfound))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _to_confirm(u: ProjectUpdate) -> list[str]:
    """The removed records as lines of content/lineage/<project>.yaml with the rules' guess,
    for a person to read in both releases' code, correct and add: what they confirm is
    written as `superseded_by` whatever the rules find (the rules find under half of the
    successors people find)."""
    removed = u.changes["removed"]
    if not removed:
        return []
    lines = [
        f"### Removed checks to confirm in content/lineage/{u.key}.yaml ({len(removed)})",
        "",
        "Read each in the code of the release that last printed it and the next; keep or"
        " correct the rules' guess (the id of the record whose check took over, `gone`,"
        " `printed` or `unrecorded`) and add the lines to `content/lineage/{u.key}.yaml`.",
        "",
        "```yaml",
    ]
    for c in removed[:LIST_CAP]:
        lines.append(f"{c.id}: {c.guess}  # {' '.join(c.title.split())[:100]}")
    return lines + ["```", *_more(len(removed)), ""]


def _line(change: Change) -> str:
    mark = " (explained)" if change.explained else ""
    return f"{code(change.id)} {text(change.title[:120])}{mark}"


def _more(total: int) -> list[str]:
    return [f"- … and {total - LIST_CAP} more"] if total > LIST_CAP else []

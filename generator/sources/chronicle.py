"""Write the lineages of `lineage.build` as records: one per check, its wordings as variants.

A record that exists keeps every byte of its text: only `versions`, `variants` (old wordings
added, a plain-string variant that a release prints given its releases), `kind`/`level`, and for
a check no longer printed `status: removed` and `superseded_by`, are added or rewritten. A check
without a record gets a stub, pinned to the last release that prints it.
"""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from generator.content.load import SCHEMA_LINE, record_fields
from generator.content.model import Content, Record
from generator.sources.extract import (
    RecordIndex,
    _dump,
    location,
    match_key,
    rewrite,
    write_text,
)
from generator.sources.lineage import History, Lineage, Wording
from generator.sources.scaffold import new_id


@dataclass
class Written:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: int = 0
    superseded: int = 0
    reworded: int = 0  # records with more than one wording
    kinds: Counter = field(default_factory=Counter)  # records per kind
    warnings: list[str] = field(default_factory=list)


def release_ref(version: str, latest: str, project_ref: str) -> str:
    """The ref a release's lines are pinned to: its git tag, or the project's own ref for
    the release the project is pinned to."""
    return project_ref if version == latest else f"v{version}"


def _versions(wording: Wording) -> dict:
    return {"first": wording.first, "last": wording.last}


def _kind(wording: Wording) -> str:
    return wording.site.kind


def assign_ids(history: History, index: RecordIndex, project: str) -> dict[Lineage, str]:
    """Each lineage's record: the existing record one of its wordings belongs to (the newest
    wording first), else a new id from its current wording."""
    ids: dict[Lineage, str] = {}
    claimed: set[str] = set()
    for lineage in history.live():
        rid = ""
        for wording in sorted(lineage.wordings, key=lambda w: -w.last_index):
            found = [r for _, r in sorted(index.by_key.get(wording.key, [])) if r not in claimed]
            if found:
                rid = found[0]
                break
        if not rid:
            cur = lineage.current
            rid = new_id(project, cur.key[0], cur.template)
        if rid in claimed:
            continue  # two shapes that differ only in placeholder names: the first keeps it
        claimed.add(rid)
        ids[lineage] = rid
    return ids


def write(
    root: Path,
    content: Content,
    project: str,
    history: History,
    *,
    dry_run: bool = False,
) -> Written:
    """Create or update a record for every lineage; return what was done."""
    index = RecordIndex(content, project)
    ids = assign_ids(history, index, project)
    latest = history.releases[-1]
    default_ref = content.projects[project].ref
    done = Written()
    folder = Path(root) / "content" / "errors" / project
    for lineage, rid in ids.items():
        removed = lineage.last != latest
        successor = ids.get(lineage.superseded_by) if lineage.superseded_by else None
        done.removed += removed
        done.superseded += bool(removed and successor)
        done.reworded += len(lineage.wordings) > 1
        done.kinds[_kind(lineage.current)] += 1
        if rid in index.records:
            record = index.records[rid]
            path = Path(root) / record.path
            text = path.read_text(encoding="utf-8")
            changes = _changes(record, lineage, removed, successor)
            if not changes:
                done.unchanged.append(rid)
                continue
            new = rewrite(record, text, **changes)
            done.updated.append(rid)
        else:
            ref = release_ref(lineage.last, latest, default_ref)
            new = _stub(rid, project, lineage, ref, removed, successor)
            path = folder / f"{rid}.yaml"
            done.created.append(rid)
        if not dry_run:
            write_text(path, new)
    return done


def _stub(
    rid: str, project: str, lineage: Lineage, ref: str, removed: bool, successor: str | None
) -> str:
    cur = lineage.current
    data: dict = {"id": rid, "project": project, "exception": cur.key[0]}
    if _kind(cur) != "raise":
        data["kind"] = _kind(cur)
    if cur.site.level:
        data["level"] = cur.site.level
    data["message"] = cur.template
    params = _params(lineage.wordings)
    if params:
        data["params"] = params
    older = [w for w in lineage.wordings if w is not cur]
    if older:
        data["variants"] = [{"message": w.template, "versions": _versions(w)} for w in older]
    data["versions"] = _versions(cur)
    data["source"] = location(cur.sites, ref, "", None, False)
    tags = sorted({tag for site in cur.sites for tag in site.tags})
    if tags:
        data["tags"] = tags
    data["analysis"] = {"method": "extracted", "ref": ref}
    if removed:
        data["status"] = "removed"
        if successor:
            data["superseded_by"] = successor
    ordered = {name: data[name] for name in record_fields() if name in data}
    return f"{SCHEMA_LINE}\n{_dump(ordered)}"


def _params(wordings: list[Wording]) -> dict:
    """Every placeholder of every wording with its type (the newest wording's first)."""
    params: dict = {}
    for wording in sorted(wordings, key=lambda w: -w.last_index):
        for name, kind in wording.site.types:
            params.setdefault(name, {"type": kind})
    return params


def _changes(record: Record, lineage: Lineage, removed: bool, successor: str | None) -> dict:
    """The fields of an existing record to add or rewrite; its prose is never touched."""
    changes: dict = {}
    by_key = {w.key: w for w in lineage.wordings}
    mine = by_key.pop(match_key(record.exception, record.message), None)
    if mine is not None and record.versions != _versions(mine):
        changes["versions"] = _versions(mine)
    variants = []
    for variant in record.data.get("variants", []):
        text = variant if isinstance(variant, str) else variant["message"]
        wording = by_key.pop(match_key(record.exception, text), None)
        variants.append({"message": text, "versions": _versions(wording)} if wording else variant)
    added = [w for w in lineage.wordings if w.key in by_key]
    variants += [{"message": w.template, "versions": _versions(w)} for w in added]
    if variants != record.data.get("variants", []):
        changes["variants"] = variants
    written = any("about" in p for p in record.data.get("params", {}).values())
    if "params" in record.data and not written:  # a person's params are left as they are
        params = dict(record.data["params"])
        for w in added:
            for name, kind in w.site.types:
                params.setdefault(name, {"type": kind})
        if params != record.data["params"]:
            changes["params"] = params
    kind = _kind(lineage.current)
    if kind != "raise" and record.data.get("kind") != kind:
        changes["kind"] = kind
        if lineage.current.site.level:
            changes["level"] = lineage.current.site.level
    if record.status != "retired":
        status = "removed" if removed else "active"
        if status != record.status:
            changes["status"] = status
        if removed and successor and record.superseded_by != successor:
            changes["superseded_by"] = successor
    return changes

"""Write the lineages of `lineage.build` as records: one per check, its wordings as variants.

A record that exists keeps every byte of its text: only `versions`, `variants` (old wordings
added, a plain-string variant that a release prints given its releases), `kind`/`level`, and for
a check no longer printed `status: removed` and `superseded_by`, are added or rewritten. A check
without a record gets a stub, pinned to the last release that prints it.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from errorkb.content import template
from errorkb.content.load import SCHEMA_LINE, record_fields
from errorkb.content.model import Content, Record
from errorkb.sources.extract import (
    RecordIndex,
    Site,
    _dump,
    _reread,
    _variant,
    location,
    match_key,
    rewrite,
    write_text,
)
from errorkb.sources.lineage import (
    Features,
    History,
    Lineage,
    Wording,
    common_functions,
    compare,
)
from errorkb.sources.scaffold import new_id


@dataclass
class Written:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: int = 0
    superseded: int = 0
    merged: list[str] = field(default_factory=list)  # records merged into another (aliases)
    variants_dropped: int = 0  # wordings another record's check prints today
    unlinked: int = 0  # superseded_by taken out: no strong evidence
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


def assign_ids(
    history: History, index: RecordIndex, project: str
) -> tuple[dict[Lineage, str], dict[str, list[str]]]:
    """Each lineage's record: the existing record one of its wordings belongs to (the newest
    wording first), else a new id from its current wording; and the other records its older
    wordings have (twins: the same check under another exception or place), to merge into it."""
    ids: dict[Lineage, str] = {}
    twins: dict[str, list[str]] = {}
    claimed: set[str] = set()
    # The checks printed last choose first: an old check must not take a record printed today
    # through one of its variants.
    for lineage in sorted(history.live(), key=lambda lin: -lin.last_index):
        found = []
        for wording in sorted(lineage.wordings, key=lambda w: -w.last_index):
            for _, r in sorted(index.by_key.get(wording.key, [])):
                if r not in claimed and r not in found:
                    found.append(r)
        if found:
            rid = found[0]
        else:
            cur = lineage.current
            rid = new_id(project, cur.key[0], cur.template)
        if rid in claimed:
            continue  # two shapes that differ only in placeholder names: the first keeps it
        claimed.update(found or [rid])
        ids[lineage] = rid
        if found[1:]:
            twins[rid] = found[1:]
    return ids, twins


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
    ids, twins = assign_ids(history, index, project)
    latest = history.releases[-1]
    printed = {  # the literal of every message printed today, and its record
        _literal(lin.current.template): rid for lin, rid in ids.items() if lin.last == latest
    }
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
            new = rewrite(record, text, **changes) if changes else text
            for twin in twins.get(rid, []):
                merged = _merge(root, record.path, new, index.records[twin], done, dry_run)
                new = merged if merged is not None else new
            new = _drop_printed_elsewhere(root, record.path, new, rid, printed, done)
            if new == text:
                done.unchanged.append(rid)
                continue
            done.updated.append(rid)
        else:
            ref = release_ref(lineage.last, latest, default_ref)
            new = _stub(rid, project, lineage, ref, removed, successor)
            path = folder / f"{rid}.yaml"
            done.created.append(rid)
        if not dry_run:
            write_text(path, new)
    return done


# Fields a person writes: a record merged into another gives them to it, and is not merged
# when both hold one (a person's text is never lost).
_PROSE = (
    "title",
    "summary",
    "meaning",
    "trigger",
    "situations",
    "solutions",
    "example_fix",
    "defensive",
    "prevention",
    "related",
    "calculator",
    "checks",
)


def _literal(message: str) -> str:
    """A message's words, whatever its exception and placeholder names."""
    return match_key("", message)[1]


def merge_changes(survivor: Record, twin: Record) -> dict | None:
    """The survivor's fields once `twin` (the same check, kept under another record) is
    merged into it: the twin's id and aliases as aliases, its wordings as variants (with
    its exception when another), its releases, its prose where the survivor has none.
    None when both hold a person's text in one field."""
    if any(survivor.data.get(f, twin.data[f]) != twin.data[f] for f in _PROSE if f in twin.data):
        return None
    changes = {f: twin.data[f] for f in _PROSE if f in twin.data and f not in survivor.data}
    aliases = list(dict.fromkeys(survivor.aliases + [twin.id] + twin.aliases))
    changes["aliases"] = aliases
    variants = list(survivor.data.get("variants", []))
    have = {_wording_key(v, survivor.exception) for v in variants}
    versions = survivor.versions
    for variant in [{"message": twin.message, "versions": twin.versions}] + twin.data.get(
        "variants", []
    ):
        text, exception = _variant(variant, twin.exception)
        seen = variant.get("versions") if isinstance(variant, dict) else None
        if (exception, _literal(text)) == (survivor.exception, _literal(survivor.message)):
            versions = _widen(versions, seen)  # the very message: its releases widen
            continue
        if _wording_key(variant, twin.exception) in have:
            continue
        item: dict = {"message": text}
        if exception != survivor.exception:
            item["exception"] = exception
        if seen:
            item["versions"] = seen
        variants.append(item if len(item) > 1 else text)
    if variants != survivor.data.get("variants", []):
        changes["variants"] = variants
    if versions != survivor.versions:
        changes["versions"] = versions
    return changes


def _wording_key(variant: str | dict, exception: str) -> tuple[str, str]:
    text, exception = _variant(variant, exception)
    return exception, _literal(text)


def _widen(a: dict | None, b: dict | None) -> dict | None:
    if not a or not b:
        return a or b
    first = min(a["first"], b["first"], key=Version)
    return {"first": first, "last": max(a["last"], b["last"], key=Version)}


def _merge(
    root: Path, path: str, text: str, twin: Record, done: Written, dry_run: bool
) -> str | None:
    """The survivor's text with `twin` merged into it, and the twin's file deleted; None
    (and a warning) when it cannot be merged without losing a person's text."""
    survivor = _reread(path, text)
    changes = merge_changes(survivor, twin)
    if changes is None:
        done.warnings.append(f"{twin.path}: not merged into {survivor.id}: both are written")
        return None
    if not dry_run:
        (Path(root) / twin.path).unlink()
    done.merged.append(twin.id)
    return rewrite(survivor, text, **changes)


def _drop_printed_elsewhere(
    root: Path, path: str, text: str, rid: str, printed: dict[str, str], done: Written
) -> str:
    """The record's text without the variants another record's check prints today: they are
    not older wordings of this one."""
    record = _reread(path, text)
    own = _literal(record.message)
    variants = record.data.get("variants", [])
    words = [_literal(_variant(v, "")[0]) for v in variants]
    pairs = zip(variants, words, strict=True)
    kept = [v for v, w in pairs if w == own or printed.get(w, rid) == rid]
    if len(kept) == len(variants):
        return text
    used = {h for v in [record.message, *kept] for h in template.placeholders(_variant(v, "")[0])}
    params = record.data.get("params", {})
    unused = [name for name in params if name not in used]
    if any("about" in params[name] for name in unused):
        done.warnings.append(
            f"{record.path}: variants another record prints kept: a person wrote their params"
        )
        return text
    done.variants_dropped += len(variants) - len(kept)
    changes: dict = {"variants": kept or None}
    if unused:
        changes["params"] = {k: v for k, v in params.items() if k not in unused} or None
    return rewrite(record, text, **changes)


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
        data["variants"] = [_variant_of(w, cur.key[0]) for w in older]
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
        text, exception = _variant(variant, record.exception)
        wording = by_key.pop(match_key(exception, text), None)
        variants.append(_variant_of(wording, record.exception, text) if wording else variant)
    added = [w for w in lineage.wordings if w.key in by_key]
    variants += [_variant_of(w, record.exception) for w in added]
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
        elif record.superseded_by and not successor and _extracted(record):
            changes["superseded_by"] = None  # no strong evidence (any more): no link
    return changes


def _extracted(record: Record) -> bool:
    return (record.data.get("analysis") or {}).get("method") == "extracted"


def _variant_of(wording: Wording, exception: str, text: str = "") -> dict:
    """An older wording as a variant: its text, its exception when not the record's, and the
    releases that print it."""
    item: dict = {"message": text or wording.template}
    if wording.key[0] != exception:
        item["exception"] = wording.key[0]
    item["versions"] = _versions(wording)
    return item


# The records alone --------------------------------------------------------------------


def tidy(root: Path, content: Content, project: str, *, dry_run: bool = False) -> Written:
    """The identity rules of `write`, applied to the records without scanning a release:
    a removed record whose words an active record prints is merged into it, a variant
    another active record prints is dropped, and an extracted `superseded_by` that the
    records give no strong evidence for is taken out (the guard of a removed record is not
    kept, so fewer links pass here than in `errorkb history`: no link beats a wrong one)."""
    index = RecordIndex(content, project)
    records = index.records
    common = common_functions([s for r in records.values() for s in _record_sites(r)])
    feats = {rid: Features.of(_record_wording(r), common) for rid, r in records.items()}
    active = sorted(rid for rid, r in records.items() if r.status == "active")
    by_words: dict[str, list[str]] = defaultdict(list)
    for rid in active:
        by_words[_literal(records[rid].message)].append(rid)
    done = Written()
    texts: dict[str, str] = {}

    def text_of(rid: str) -> str:
        if rid not in texts:
            texts[rid] = (Path(root) / records[rid].path).read_text(encoding="utf-8")
        return texts[rid]

    for rid in sorted(records):
        twin = records[rid]
        if twin.status != "removed":
            continue
        same = [
            (found.score, a)
            for a in by_words.get(_literal(twin.message), [])
            if (found := compare(feats[rid], feats[a])) and found.same_check()
        ]
        if not same:
            continue
        survivor = max(same)[1]
        merged = _merge(root, records[survivor].path, text_of(survivor), twin, done, dry_run)
        if merged is not None:
            texts[survivor] = merged
            done.updated.append(survivor)
    printed = {words: ids[0] for words, ids in by_words.items()}
    gone = set(done.merged)
    for rid in sorted(records):
        record = records[rid]
        if rid in gone:
            continue
        text = _drop_printed_elsewhere(root, record.path, text_of(rid), rid, printed, done)
        successor = index.aliases.get(record.superseded_by or "", record.superseded_by)
        if successor and _extracted(record):
            found = compare(feats[rid], feats[successor]) if successor in feats else None
            if not (found and (found.same_check() or found.took_over())):
                text = rewrite(_reread(record.path, text), text, superseded_by=None)
                done.unlinked += 1
            else:
                done.superseded += 1
        if text != text_of(rid):
            texts[rid] = text
            done.updated.append(rid)
    for rid in dict.fromkeys(done.updated):
        if rid not in gone and not dry_run:
            write_text(Path(root) / records[rid].path, texts[rid])
    return done


def _record_sites(record: Record) -> list[Site]:
    source = record.data["source"]
    guard = (record.data.get("derived") or {}).get("condition", "")
    return [
        Site(
            record.exception,
            record.message,
            place["path"],
            place.get("line", 0),
            place.get("function", ""),
            kind=record.kind,
            guard=guard,
        )
        for place in [source, *source.get("sites", [])]
    ]


def _record_wording(record: Record) -> Wording:
    return Wording(match_key(record.exception, record.message), _record_sites(record), "", "", 0, 0)

"""Write the lineages of `lineage.build` as records: one per check, its wordings as variants.

A record that exists keeps every byte of its text: only `versions`, `variants` (old wordings
added, a plain-string variant that a release prints given its releases), `kind`/`level`, and for
a check no longer printed `status: removed` and `superseded_by`, are added or rewritten. A check
without a record gets a stub, pinned to the last release that prints it.
"""

import dataclasses
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from packaging.version import Version

from errorkb.content import template
from errorkb.content.load import CONFIRMED, SCHEMA_LINE, record_fields, thread_key
from errorkb.content.model import Content, Record
from errorkb.sources.extract import (
    DEBUG,
    RecordIndex,
    Site,
    derived,
    dump_yaml,
    group_sites,
    location,
    match_key,
    reread,
    rewrite,
    variant_text,
    write_text,
)
from errorkb.sources.lineage import (
    Comparison,
    Features,
    History,
    Lineage,
    Wording,
    base_of,
    common_functions,
    compare,
    compare_faint,
    compare_guard,
    guard_evidence,
    moved_with,
    owner_class,
    qualified,
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
    confirmed: int = 0  # superseded_by written as a person read it (content/lineage/)
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
    printer = {w.key: lin for lin in history.live() for w in lin.wordings}
    # The checks printed last choose first: an old check must not take a record printed today
    # through one of its variants.
    for lineage in sorted(history.live(), key=lambda lin: -lin.last_index):
        found = []
        newest = sorted(lineage.wordings, key=lambda w: -w.last_index)
        # A record of the template as the scanner read it before (cut short, say) is this
        # check's too: right after the same wording as read now, before older wordings, so a
        # live record read whole keeps its id rather than joining an old wording's record.
        keys = [key for w in newest for key in (w.key, *former_keys(w))]
        for key in keys:
            for _, r in sorted(index.by_key.get(key, [])):
                if r in claimed or r in found:
                    continue
                record = index.records[r]
                own = printer.get(match_key(record.exception, record.message))
                if own is not None and own is not lineage:
                    # A record whose own message another check prints is that check's: one
                    # of its variants' words printed here make it no twin of this one. Two
                    # checks printed side by side (in one release, at two places) are never
                    # merged into one record.
                    continue
                found.append(r)
        if found:
            rid = found[0]
        else:
            cur = lineage.current
            rid = new_id(project, cur.key[0], cur.template)
            # An id merged into another record (an alias): its check is that record's
            rid = index.aliases.get(rid, rid)
        if rid in claimed:
            continue  # two shapes that differ only in placeholder names, or a check merged
            # into a record another lineage holds: the first keeps it
        claimed.update(found or [rid])
        ids[lineage] = rid
        if found[1:]:
            twins[rid] = found[1:]
    return ids, twins


def former_keys(wording: Wording) -> list[tuple[str, str]]:
    """The keys of a wording's templates as the scanner read them before it read them whole
    (Site.former): a record holding one is this wording's, its message read anew."""
    keys = {match_key(wording.key[0], site.former) for site in wording.sites if site.former}
    return sorted(keys - {wording.key})


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
    explained = explained_ways(index.records)

    def refs(version: str) -> str:
        return release_ref(version, latest, default_ref)

    done = Written()
    folder = Path(root) / "content" / "errors" / project
    for lineage, rid in ids.items():
        removed = lineage.last != latest
        end = _terminal(lineage, latest)
        successor = ids.get(end) if end is not None else None
        successor = explained.get(successor or "", successor)
        successor = confirmed_successor(content, project, rid, successor)
        done.removed += removed
        done.superseded += bool(removed and successor)
        done.reworded += len(lineage.wordings) > 1
        done.kinds[_kind(lineage.current)] += 1
        if rid in index.records:
            record = index.records[rid]
            path = Path(root) / record.path
            text = path.read_text(encoding="utf-8")
            changes = _changes(record, lineage, removed, successor, refs)
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
            new = _stub(rid, project, lineage, refs, removed, successor)
            path = folder / f"{rid}.yaml"
            done.created.append(rid)
        if not dry_run:
            write_text(path, new)
    return done


def explained_ways(records: dict[str, Record]) -> dict[str, str]:
    """For an active record a program prints at a site that prints another active record
    too (one check, its message built one of two ways), the other one when a person
    explained it and not this one: the explained way is where an old wording of the check
    leads ("The model's max seq len ... KV cache" to the check that today says "To serve at
    least one request ...", with or without its estimate of the maximum model length)."""
    at: dict[tuple[str, int], list[str]] = defaultdict(list)
    for rid, record in sorted(records.items()):
        if record.status == "active":
            source = record.data.get("source") or {}
            for place in [source, *source.get("sites", [])]:
                if place.get("line"):
                    at[(place["path"], place["line"])].append(rid)
    out: dict[str, str] = {}
    for rids in at.values():
        written = [rid for rid in rids if _by_person(records[rid].data.get("analysis"))]
        if len(written) != 1:
            continue
        for rid in rids:
            if _extracted(records[rid]):
                out.setdefault(rid, written[0])
    return out


def _terminal(lineage: Lineage, latest: str) -> Lineage | None:
    """The check that took over, followed on through the checks that took over from it in
    turn: the one printed today when there is one (a user lands on the live check, not on
    the next removed copy)."""
    seen = {id(lineage)}
    found = lineage.superseded_by
    while found is not None and found.last != latest and found.superseded_by is not None:
        if id(found.superseded_by) in seen:
            break
        seen.add(id(found))
        found = found.superseded_by
    return found


def _literal(message: str) -> str:
    """A message's words, whatever its exception and placeholder names."""
    return match_key("", message)[1]


# How a removed twin merged into the record that took its check over gives each field. Every
# field of the schema is in one of these (tests/test_identity.py holds it): a field added to
# the schema cannot be dropped by a merge unseen.
_WORDINGS = ("id", "project", "exception", "kind", "level", "message", "variants", "versions")
# the survivor's: its code's
_FROM_CODE = ("source", "derived", "status", "superseded_by", "message_cut")
# Lists: both sides' together (the threads that reported either, each thread once)
_UNION = ("related", "tags", "aliases", "reported")
_LATER = ("updated",)  # a date: the later of the two
_ONE = (  # a person's text: kept when one side has it or both say the same, else refused
    "title",
    "summary",
    "meaning",
    "trigger",
    "situations",
    "solutions",
    "example_fix",
    "defensive",
    "prevention",
    "engines",
    "calculator",
    "checks",
    "settings",  # a stack record's variables, written by a person
    "status_note",
    "checked",  # the release a person's text was checked against: goes with that text
)
_BY_PART = ("params", "analysis")  # `about` of each param as _ONE; a person's analysis as _ONE


@dataclass
class Conflict:
    """A field both records hold differently: the merge would lose one side's text."""

    field: str
    line: int
    why: str
    fix: str


def merge_changes(survivor: Record, twin: Record) -> tuple[dict, list[Conflict]]:
    """The survivor's fields once `twin` (the same check, kept under another record) is
    merged into it: the twin's id and aliases as aliases, its wordings as variants (with
    its exception when another), its releases, and every field a person wrote; and the
    conflicts that forbid the merge (none: it loses nothing)."""
    conflicts: list[Conflict] = []
    changes: dict = {}
    for name in _ONE:
        mine, theirs = survivor.data.get(name), twin.data.get(name)
        if theirs is None or mine == theirs:
            continue
        if mine is None:
            changes[name] = theirs
        else:
            why = f"{survivor.id} holds another {name}"
            conflicts.append(Conflict(name, twin.source.line(name), why, _KEEP_ONE))
    for name in _UNION:
        extra = [twin.id] if name == "aliases" else []
        both = [*survivor.data.get(name, []), *extra, *twin.data.get(name, [])]
        if name == "related":  # the two are one record now: it is not related to itself
            both = [rid for rid in both if rid not in (survivor.id, twin.id, *twin.aliases)]
        if name == "reported":
            threads = {thread_key(t["url"]): t for t in reversed(both)}  # the survivor's wins
            union = [t for t in both if threads[thread_key(t["url"])] is t]
        else:
            union = list(dict.fromkeys(both))
        if union != survivor.data.get(name, []):
            changes[name] = union
    later = max(survivor.data.get("updated", ""), twin.data.get("updated", ""))
    if later and later != survivor.data.get("updated"):
        changes["updated"] = later
    analysis = _merged_analysis(survivor, twin, conflicts)
    if analysis is not None:
        changes["analysis"] = analysis
    variants, versions = _merged_wordings(survivor, twin)
    if variants != survivor.data.get("variants", []):
        changes["variants"] = variants
    if versions != survivor.versions:
        changes["versions"] = versions
    params = _merged_params(survivor, twin, variants, conflicts)
    if params is not None:
        changes["params"] = params
    return changes, conflicts


_KEEP_ONE = "keep one text (in both files, or in neither), then run tidy again"


def _merged_wordings(survivor: Record, twin: Record) -> tuple[list, dict | None]:
    """The survivor's variants with the twin's wordings added, and its releases widened by
    those of the twin's wording of its very message."""
    variants = list(survivor.data.get("variants", []))
    have = {_wording_key(v, survivor.exception) for v in variants}
    versions = survivor.versions
    first = {"message": twin.message, "versions": twin.versions}
    for variant in [first] + twin.data.get("variants", []):
        text, exception = variant_text(variant, twin.exception)
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
        explained = variant.get("derived") if isinstance(variant, dict) else None
        if variant is first and twin.status == "removed":
            explained = twin.data.get("derived")  # what its last release said of it
        if explained:
            item["derived"] = explained
        variants.append(item if len(item) > 1 else text)
    return variants, versions


def _merged_analysis(survivor: Record, twin: Record, conflicts: list[Conflict]) -> dict | None:
    """The twin's analysis when it says a person wrote its text (its method is not
    `extracted`) and the survivor's says no such thing; None when the survivor's stays."""
    mine, theirs = survivor.data.get("analysis"), twin.data.get("analysis")
    if not _by_person(theirs) or mine == theirs:
        return None
    if not _by_person(mine):
        return theirs
    why = f"{survivor.id} was written by another hand ({survivor.data['analysis']['method']})"
    conflicts.append(Conflict("analysis", twin.source.line("analysis"), why, _KEEP_ONE))
    return None


def _by_person(analysis: dict | None) -> bool:
    return analysis is not None and analysis["method"] != "extracted"


def _merged_params(
    survivor: Record, twin: Record, variants: list, conflicts: list[Conflict]
) -> dict | None:
    """The survivor's params with the twin's: each under the name it has in the merged
    wordings (the twin's message in other names is the survivor's: its holes in order), the
    survivor's `type` first, a person's `about` from either side; None when unchanged."""
    theirs = twin.data.get("params", {})
    if not any("about" in entry for entry in theirs.values()):
        return None  # the twin's types are the code's: the survivor's own stand
    before = survivor.data.get("params") or {
        name: {} for name in template.placeholders(survivor.message)
    }
    params = {name: dict(entry) for name, entry in before.items()}
    wordings = [survivor.message, *(variant_text(v, "")[0] for v in variants)]
    used = {name for text in wordings for name in template.placeholders(text)}
    renamed = _same_holes(twin.message, survivor.message)
    for name, entry in theirs.items():
        # Its own name where a wording uses it; the survivor's name for it where the two
        # messages print alike: its `about` is said of the survivor's message too.
        targets = dict.fromkeys([name] if name in used else [])
        targets.update(dict.fromkeys([renamed[name]] if name in renamed else []))
        line = twin.source.line("params", name, "about")
        if not targets and "about" in entry:
            why = f"no wording of {survivor.id} has the placeholder {{{name}}}"
            fix = f"move its about to the param of {survivor.id} it describes"
            conflicts.append(Conflict(f"params.{name}.about", line, why, fix))
        for target in targets:
            mine = params.get(target, {})
            if mine.get("about", entry.get("about")) != entry.get("about", mine.get("about")):
                why = f"{survivor.id} says another about of {{{target}}}"
                conflicts.append(Conflict(f"params.{name}.about", line, why, _KEEP_ONE))
            params[target] = {**entry, **mine}  # the survivor's type: its code's today
    return None if params == before else params


def _same_holes(twin: str, survivor: str) -> dict[str, str]:
    """The twin's placeholder names as the survivor's, when the two messages print alike:
    the holes in order; a name that would become two names is left out."""
    if _literal(twin) != _literal(survivor):
        return {}
    names: dict[str, set[str]] = {}
    pairs = zip(_holes(twin), _holes(survivor), strict=False)
    for mine, theirs in pairs:
        names.setdefault(mine, set()).add(theirs)
    return {name: targets.pop() for name, targets in names.items() if len(targets) == 1}


def _holes(message: str) -> list[str]:
    return [seg.name for seg in template.parse(message) if isinstance(seg, template.Hole)]


def _wording_key(variant: str | dict, exception: str) -> tuple[str, str]:
    text, exception = variant_text(variant, exception)
    return exception, _literal(text)


def _widen(a: dict | None, b: dict | None) -> dict | None:
    if not a or not b:
        return a or b
    first = min(a["first"], b["first"], key=Version)
    return {"first": first, "last": max(a["last"], b["last"], key=Version)}


def _merge(
    root: Path, path: str, text: str, twin: Record, done: Written, dry_run: bool
) -> str | None:
    """The survivor's text with `twin` merged into it (the twin's comments carried to its
    end), and the twin's file deleted; None, and a warning naming what would be lost, when
    the merge cannot keep every field a person wrote and every comment."""
    survivor = reread(path, text)
    changes, conflicts = merge_changes(survivor, twin)
    new = rewrite(survivor, text, **changes)
    lost = Counter(comments(text)) - Counter(comments(new))
    if lost:
        why = f"{survivor.id}'s comment {next(iter(lost))!r} is inside a field the merge rewrites"
        fix = "move the comment above that field, then run tidy again"
        conflicts.append(Conflict(", ".join(changes), 1, why, fix))
    if conflicts:
        done.warnings.append(_refusal(twin, survivor, conflicts))
        return None
    theirs = comments((Path(root) / twin.path).read_text(encoding="utf-8"))
    if theirs:
        head = f"# The comments of {twin.id}, merged into this record:"
        new += "\n".join([head, *theirs]) + "\n"
    if not dry_run:
        (Path(root) / twin.path).unlink()
    done.merged.append(twin.id)
    return new


def _refusal(twin: Record, survivor: Record, conflicts: list[Conflict]) -> str:
    """One line for a merge refused: the twin's file and line, the field, why, what to do."""
    first = conflicts[0]
    line = (
        f"{twin.path}:{first.line}: not merged into {survivor.id} ({survivor.path}): "
        f"{first.field}: {first.why}; {first.fix}"
    )
    others = [c.field for c in conflicts[1:]]
    return line + (f" (also {', '.join(others)})" if others else "")


def comments(text: str) -> list[str]:
    """The comments of a record's YAML text, each from its `#` (the schema line aside): a
    person's notes, which the YAML parser drops. A `#` inside a value is no comment."""
    values = sorted(
        (token.start_mark.index, token.end_mark.index)
        for token in yaml.scan(text, Loader=yaml.SafeLoader)
        if isinstance(token, yaml.ScalarToken)
    )
    found = []
    for match in re.finditer(r"(?:^|(?<=[ \t]))#[^\n]*", text, re.M):
        at = bisect_right(values, (match.start(), float("inf"))) - 1
        inside = at >= 0 and values[at][0] <= match.start() < values[at][1]
        if not inside and match.group() != SCHEMA_LINE:
            found.append(match.group().rstrip())
    return found


def _drop_printed_elsewhere(
    root: Path, path: str, text: str, rid: str, printed: dict[str, str], done: Written
) -> str:
    """The record's text without the variants another record's check prints today: they are
    not older wordings of this one."""
    record = reread(path, text)
    own = _literal(record.message)
    variants = record.data.get("variants", [])
    words = [_literal(variant_text(v, "")[0]) for v in variants]
    pairs = zip(variants, words, strict=True)
    kept = [v for v, w in pairs if w == own or printed.get(w, rid) == rid]
    if len(kept) == len(variants):
        return text
    used = {
        h for v in [record.message, *kept] for h in template.placeholders(variant_text(v, "")[0])
    }
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
    rid: str, project: str, lineage: Lineage, refs, removed: bool, successor: str | None
) -> str:
    cur = lineage.current
    ref = refs(cur.last)
    data: dict = {"id": rid, "project": project, "exception": cur.key[0]}
    if _kind(cur) != "raise":
        data["kind"] = _kind(cur)
    if cur.site.level:
        data["level"] = cur.site.level
    data["message"] = cur.template
    if _cut(cur):
        data["message_cut"] = True
    params = _params(lineage.wordings)
    if params:
        data["params"] = params
    older = [w for w in lineage.wordings if w is not cur]
    if older:
        data["variants"] = [_variant_of(w, cur.key[0], refs) for w in older]
    data["versions"] = _versions(cur)
    data["source"] = location(cur.sites, ref, "", None, False)
    explained = derived_of(cur, ref)
    if explained:
        data["derived"] = explained
    tags = sorted({tag for site in cur.sites for tag in site.tags})
    if tags:
        data["tags"] = tags
    data["analysis"] = {"method": "extracted", "ref": ref}
    if removed:
        data["status"] = "removed"
        if successor:
            data["superseded_by"] = successor
    ordered = {name: data[name] for name in record_fields() if name in data}
    return f"{SCHEMA_LINE}\n{dump_yaml(ordered)}"


def _params(wordings: list[Wording]) -> dict:
    """Every placeholder of every wording with its type (the newest wording's first)."""
    params: dict = {}
    for wording in sorted(wordings, key=lambda w: -w.last_index):
        for name, kind in wording.site.types:
            params.setdefault(name, {"type": kind})
    return params


def _changes(record: Record, lineage: Lineage, removed: bool, successor: str | None, refs) -> dict:
    """The fields of an existing record to add or rewrite; its prose is never touched. A
    removed record's `derived` (and each variant's) is what its last release said of it; an
    active record's is `errorkb rederive`'s, from the pinned release."""
    changes: dict = {}
    by_key = {w.key: w for w in lineage.wordings}
    mine = by_key.pop(match_key(record.exception, record.message), None)
    if mine is None:
        # The record's message as the scanner read it before (cut short): read whole now,
        # the record keeps its id and every other byte, its message rewritten.
        key = match_key(record.exception, record.message)
        for wording in sorted(lineage.wordings, key=lambda w: -w.last_index):
            if key in former_keys(wording) and wording.key in by_key:
                mine = by_key.pop(wording.key)
                changes.update(_whole_message(record, mine))
                break
    if mine is not None and bool(record.data.get("message_cut")) != _cut(mine):
        changes["message_cut"] = True if _cut(mine) else None
    if mine is not None and record.versions != _versions(mine):
        changes["versions"] = _versions(mine)
    if mine is not None and removed and record.status != "retired":
        explained = derived_of(mine, refs(mine.last))
        if explained and explained != record.data.get("derived"):
            changes["derived"] = explained
    variants = []
    for variant in record.data.get("variants", []):
        text, exception = variant_text(variant, record.exception)
        key = match_key(exception, text)
        if key in by_key:
            variants.append(_variant_of(by_key.pop(key), record.exception, refs, text))
        else:
            variants.append(variant)
    added = [w for w in lineage.wordings if w.key in by_key]
    variants += [_variant_of(w, record.exception, refs) for w in added]
    if variants != record.data.get("variants", []):
        changes["variants"] = variants
    written = any("about" in p for p in record.data.get("params", {}).values())
    if "params" in record.data and not written:  # a person's params are left as they are
        params = dict(changes.get("params") or record.data["params"])
        for w in added:
            for name, kind in w.site.types:
                params.setdefault(name, {"type": kind})
        if params != record.data["params"]:
            changes["params"] = params
    kind, level = _kind(lineage.current), lineage.current.site.level
    if kind != "raise" and record.data.get("kind") != kind:
        changes["kind"] = kind
        if level:
            changes["level"] = level
    elif kind == "log" and level and record.data.get("level") != level:
        changes["level"] = level  # a line demoted to DEBUG (or raised from it again)
    if record.status != "retired":
        status = "removed" if removed else "active"
        if status != record.status:
            changes["status"] = status
        if removed and successor and record.superseded_by != successor:
            changes["superseded_by"] = successor
        elif record.superseded_by and not successor and _extracted(record):
            changes["superseded_by"] = None  # no strong evidence (any more): no link
    return changes


def _cut(wording: Wording) -> bool:
    """Whether the program prints more than the wording's template holds."""
    return any(site.cut for site in wording.sites)


def _whole_message(record: Record, wording: Wording) -> dict:
    """The fields that turn a record's former template into the wording's: `message`, and
    its `params` where the placeholders differ (a person's descriptions of those kept)."""
    out: dict = {"message": wording.template}
    old = record.data.get("params") or {}
    new = {}
    for name, kind in wording.site.types:
        new[name] = old.get(name, {"type": kind})
    for variant in record.data.get("variants", []):  # the placeholders its variants still use
        for name in template.placeholders(variant_text(variant, record.exception)[0]):
            if name in old:
                new.setdefault(name, old[name])
    if new != old:
        out["params"] = new or None
    return out


def _extracted(record: Record) -> bool:
    return (record.data.get("analysis") or {}).get("method") == "extracted"


def _variant_of(wording: Wording, exception: str, refs, text: str = "") -> dict:
    """An older wording as a variant: its text, its exception when not the record's, the
    releases that print it, and what the last of them says of it (`derived`)."""
    item: dict = {"message": text or wording.template}
    if wording.key[0] != exception:
        item["exception"] = wording.key[0]
    item["versions"] = _versions(wording)
    explained = derived_of(wording, refs(wording.last))
    if explained:
        item["derived"] = explained
    return item


def derived_of(wording: Wording, ref: str) -> dict | None:
    """What explain derived of a wording's first site in the last release that printed it,
    marked with that release's ref; None when the scan derived nothing."""
    return derived_at(wording.sites, ref)


def derived_at(sites: list[Site], ref: str) -> dict | None:
    found = sites[0].derived if sites else None
    return derived(sites, ref) if found else None


# The records alone --------------------------------------------------------------------


def tidy(
    root: Path,
    content: Content,
    project: str,
    *,
    dry_run: bool = False,
    scans: "Callable[[str], list[Site] | None] | None" = None,
) -> Written:
    """The identity rules of `write`, applied to the records without scanning a release:
    a removed record whose words an active record prints is merged into it, a variant
    another active record prints is dropped, and an extracted `superseded_by` that the
    records give no strong evidence for is taken out (the guard of a removed record is not
    kept, so fewer links pass here than in `errorkb history`: no link beats a wrong one).
    `scans`: a release's scanned sites where they are at hand (the scan cache, never a
    download): a link the records alone do not bear out is then judged as `errorkb history`
    judged it, from the sites of the release the old check was last printed in and the
    next one (their guards, which the records do not keep)."""
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
    releases = content.projects[project].releases_scanned
    seen = _Printed.of(records, feats, releases)
    reader = _Scans(scans) if scans is not None else None
    # the records that took over from one another in turn: history links a check gone to the
    # check printed at the end of that chain, which the scans judge through its first link
    took_from: dict[str, list[str]] = defaultdict(list)
    for rid, record in sorted(records.items()):
        if record.superseded_by:
            took_from[index.aliases.get(record.superseded_by, record.superseded_by)].append(rid)

    def by_scans(record: Record, successor: str) -> bool:
        if reader is None:
            return False
        found: list[str] = []
        queue = [successor]
        while queue and len(found) < 50:
            rid = queue.pop(0)
            if rid in found or rid == record.id or rid not in records:
                continue
            found.append(rid)
            queue.extend(took_from.get(rid, []))
        return any(reader.linked(record, records[rid], releases) for rid in found)

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
        confirmed = confirmed_successor(content, project, rid, successor)
        read = rid in content.confirmed.get(project, {})  # not judged again by the rules
        if confirmed != successor:
            text = rewrite(reread(record.path, text), text, superseded_by=confirmed)
            done.confirmed += 1
        elif successor and _extracted(record) and not read:
            linked = successor in feats and (
                _linked(record, records[successor], feats[rid], common, seen)
                or by_scans(record, successor)
            )
            if not linked:
                text = rewrite(reread(record.path, text), text, superseded_by=None)
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


def confirmed_successor(content: Content, project: str, rid: str, found: str | None) -> str | None:
    """A removed record's successor as a person read it in content/lineage/<project>.yaml,
    else `found`, the rules'. None where the reader found none: the check is gone, still
    printed (from code the scans leave out), or made with a message no record holds."""
    said = content.confirmed.get(project, {}).get(rid)
    if said is None:
        return found
    return None if said in CONFIRMED else content.aliases.get(said, said)


def _first(record: Record) -> str | None:
    """The first release that printed any wording of a record."""
    firsts = [record.versions["first"]] if record.versions else []
    for variant in record.data.get("variants", []):
        if isinstance(variant, dict) and variant.get("versions"):
            firsts.append(variant["versions"]["first"])
    return min(firsts, key=Version) if firsts else None


def _linked(
    old: Record, new: Record, mine: Features, common: frozenset[str], seen: "_Printed"
) -> bool:
    """Whether the records give strong evidence that `new` took over from `old`: compared
    with each wording of `new` (its message, then its variants, each with its releases and
    its condition), as history compared it with the wording printed when `old` went."""
    for exception, message, versions, guard in _wordings(new):
        sites = [
            dataclasses.replace(site, exception=exception, template=message, guard=guard)
            for site in _record_sites(new)
        ]
        theirs = Features.of(Wording(match_key(exception, message), sites, "", "", 0, 0), common)
        first = (versions or {}).get("first") or _first(new)
        turn = seen.turn(old, new, mine, theirs, first)
        found = (
            compare(mine, theirs, loose=turn[0])
            or compare_faint(mine, theirs)
            or compare_guard(mine, theirs)
        )
        if found is None:
            continue
        _when(found, old, first, seen.releases)
        found.one_for_one, found.file_gone = turn[:2]
        found.function_gone = turn[3]
        found.renamed = found.renamed and turn[2]
        # the records keep the whole condition, not the guard: its tests are read from the
        # scans alone (`_Scans.linked`)
        found.atoms, found.moved = "", moved_with(mine, theirs)
        # its method gone from a class that still prints: inherited from the namesake
        found.inherited = (
            found.moved == "method" and not turn[2] and turn[3] and base_of(mine, theirs)
        )
        if (
            found.place < 1
            and found.file_gone
            and {q for q in mine.qualified if ":" not in q and "." in q} & theirs.qualified
        ):
            found.place = 1.0  # the same method of the same class, moved with its file
        if found.same_check() or found.took_over():
            return True
    return False


@dataclass
class _Release:
    """One release's scan as `lineage.build` reads it: its sites by message shape (DEBUG
    lines left out), the functions that print in many files, the files, qualified
    functions (with the message shapes each prints) and classes it prints from."""

    by_key: dict[tuple[str, str], list[Site]]
    common: frozenset[str]
    paths: set[str]
    functions: dict[str, set[tuple[str, str]]]
    classes: set[str]

    @classmethod
    def of(cls, sites: list[Site]) -> "_Release":
        sites = [s for s in sites if s.level != DEBUG]
        functions: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for site in sites:
            if site.function:
                functions[qualified(site)].add(site.key)
        return cls(
            group_sites(sites),
            common_functions(sites),
            {s.path for s in sites},
            functions,
            {owner_class(s) for s in sites},
        )


@dataclass
class _Scans:
    """Releases' scans read on demand, for `tidy` to judge a link as history did."""

    load: Callable[[str], list[Site] | None]
    found: dict[str, "_Release | None"] = field(default_factory=dict)

    def release(self, version: str) -> "_Release | None":
        if version not in self.found:
            sites = self.load(version)
            self.found[version] = _Release.of(sites) if sites is not None else None
        return self.found[version]

    def linked(self, old: Record, new: Record, releases: list[str]) -> bool:
        """Whether history's rules let `new` take over from `old` in the release after the
        old one's last, compared on the sites the two releases' scans hold."""
        last = (old.versions or {}).get("last")
        if last not in releases or releases.index(last) + 1 >= len(releases):
            return False
        after = releases[releases.index(last) + 1]
        before, now = self.release(last), self.release(after)
        if before is None or now is None:
            return False
        key = match_key(old.exception, old.message)
        sites = before.by_key.get(key)
        if not sites:
            return False
        mine = Features.of(Wording(key, sites, last, last, 0, 0), before.common)
        for exception, message, versions, _ in _wordings(new):
            their_key = match_key(exception, message)
            found_sites = now.by_key.get(their_key)
            if not found_sites:
                continue
            theirs = Features.of(Wording(their_key, found_sites, after, after, 0, 0), now.common)
            one = any(
                before.functions.get(name, set()) - now.functions.get(name, set()) == {key}
                and now.functions.get(name, set()) - before.functions.get(name, set())
                == {their_key}
                for name in mine.qualified & theirs.qualified
            )
            found = compare(mine, theirs, loose=one)
            if not one and found and found.text < (0.2 if found.named >= 0.5 else 0.3):
                found = None
            found = found or compare_faint(mine, theirs) or compare_guard(mine, theirs)
            if found is None:
                continue
            _when(found, old, (versions or {}).get("first") or _first(new), releases)
            found.one_for_one = one
            found.file_gone = not mine.paths & now.paths
            found.function_gone = not mine.qualified & set(now.functions)
            kept = any(owner_class(s) in now.classes for s in sites if owner_class(s))
            found.renamed = found.renamed and not kept
            found.atoms, found.moved = guard_evidence(mine, theirs), moved_with(mine, theirs)
            found.inherited = (
                found.moved == "method"
                and kept
                and not mine.qualified & set(now.functions)
                and base_of(mine, theirs)
            )
            found.new_method = not theirs.qualified & set(before.functions)
            if (
                found.place < 1
                and found.file_gone
                and {q for q in mine.qualified if ":" not in q and "." in q} & theirs.qualified
            ):
                found.place = 1.0
            if found.same_check() or found.took_over():
                return True
        return False


def _wordings(record: Record) -> list[tuple[str, str, dict | None, str]]:
    """A record's wordings: (exception, message, releases, condition), its message first."""
    out = [(record.exception, record.message, record.versions, _guard(record.data))]
    for variant in record.data.get("variants", []):
        text, exception = variant_text(variant, record.exception)
        if isinstance(variant, dict):
            out.append((exception, text, variant.get("versions"), _guard(variant)))
        else:
            out.append((exception, text, None, ""))
    return out


def _when(found: Comparison, old: Record, first: str | None, releases: list[str]) -> None:
    """What the records' releases say of two checks, as `lineage.build` sees it from the
    scans: the new one (first printed in `first`) first printed in the release after the
    old one's last (appeared), or printed side by side with it (alongside)."""
    last = (old.versions or {}).get("last")
    if not last or not first:
        return
    found.alongside = Version(first) <= Version(last)
    if last in releases and releases.index(last) + 1 < len(releases):
        found.appeared = releases[releases.index(last) + 1] == first


@dataclass
class _Printed:
    """What the records say each release printed, as `lineage.build` sees it from the scans:
    by qualified function, the records last printed by a release and those first printed by
    it; and the releases each file printed something in."""

    releases: list[str]
    ended: dict[tuple[str, str], list[str]]  # (release, qualified function) -> record ids
    began: dict[tuple[str, str], list[str]]
    files: dict[str, list[tuple[Version, Version]]]
    classes: dict[str, list[tuple[Version, Version]]] = field(default_factory=dict)
    functions: dict[str, list[tuple[Version, Version]]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: dict[str, Record], feats: dict[str, Features], releases: list[str]):
        ended: dict[tuple[str, str], list[str]] = defaultdict(list)
        began: dict[tuple[str, str], list[str]] = defaultdict(list)
        files: dict[str, list[tuple[Version, Version]]] = defaultdict(list)
        classes: dict[str, list[tuple[Version, Version]]] = defaultdict(list)
        functions: dict[str, list[tuple[Version, Version]]] = defaultdict(list)
        for rid, record in sorted(records.items()):
            first, last = _first(record), (record.versions or {}).get("last")
            if not first or not last:
                continue
            starts = {first} | {
                (versions or {}).get("first", first) for _, _, versions, _ in _wordings(record)
            }
            for name in feats[rid].qualified:
                ended[(last, name)].append(rid)
                for start in sorted(starts):
                    began[(start, name)].append(rid)
            for path in feats[rid].paths:
                files[path].append((Version(first), Version(last)))
            for name in feats[rid].qualified:
                functions[name].append((Version(first), Version(last)))
                if ":" not in name and "." in name:
                    classes[name.rpartition(".")[0]].append((Version(first), Version(last)))
        return cls(releases, ended, began, files, classes, functions)

    def turn(
        self, old: Record, new: Record, mine: Features, theirs: Features, first: str | None
    ) -> tuple:
        """(one for one, file gone, class gone, function gone): in the release after the old
        record's last, its function lost it alone and gained the new one alone (a wording of
        it first printed then, `first`); nothing is printed from its file; nor by its class;
        nor by its function."""
        last = (old.versions or {}).get("last")
        if last not in self.releases or self.releases.index(last) + 1 >= len(self.releases):
            return False, False, False, False
        after = self.releases[self.releases.index(last) + 1]
        one = first == after and any(
            self.ended[(last, name)] == [old.id] and self.began[(after, name)] == [new.id]
            for name in mine.qualified & theirs.qualified
        )
        at = Version(after)
        gone = not any(lo <= at <= hi for path in mine.paths for lo, hi in self.files[path])
        owners = {n.rpartition(".")[0] for n in mine.qualified if ":" not in n and "." in n}
        spans = [span for name in owners for span in self.classes.get(name, [])]
        mine_spans = [span for name in mine.qualified for span in self.functions.get(name, [])]
        return (
            one,
            gone,
            not any(lo <= at <= hi for lo, hi in spans),
            not any(lo <= at <= hi for lo, hi in mine_spans),
        )


def _guard(data: dict) -> str:
    """The condition a record's (or a variant's) `derived` says its check tests; where it
    says none, the quantities it found the check testing, as a condition on them all: the
    guard `lineage` compared, as near as the record keeps it."""
    derived = data.get("derived") or {}
    return derived.get("condition") or ", ".join(derived.get("quantities") or [])


def _record_sites(record: Record) -> list[Site]:
    source = record.data["source"]
    guard = _guard(record.data)
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


# Backfill ------------------------------------------------------------------------------


def backfill_releases(content: Content, project: str) -> list[str]:
    """The releases to scan again so that every wording no longer printed explains itself:
    the last release of each removed record's message and of each variant with releases."""
    wanted: set[str] = set()
    for record in content.records.values():
        if record.project != project:
            continue
        if record.status == "removed" and record.versions:
            wanted.add(record.versions["last"])
        for variant in record.data.get("variants", []):
            if isinstance(variant, dict) and variant.get("versions"):
                wanted.add(variant["versions"]["last"])
    return sorted(wanted, key=Version)


@dataclass
class Backfilled:
    records: list[str] = field(default_factory=list)  # records rewritten
    derived: int = 0  # removed records' derived written
    variants: int = 0  # variants' derived written
    missing: list[str] = field(default_factory=list)  # wordings their last release lacks


def backfill(
    root: Path,
    content: Content,
    project: str,
    releases: dict[str, list[Site]],
    refs,
    *,
    dry_run: bool = False,
) -> Backfilled:
    """Each removed record's `derived`, and each variant's, from the sites of the last
    release that printed that wording (`releases`: version -> its sites, with what explain
    derived of each; `refs(version)`: its ref). Nothing else of a record is touched."""
    groups = {version: group_sites(sites) for version, sites in releases.items()}
    done = Backfilled()
    for rid, record in sorted(content.records.items()):
        if record.project != project:
            continue
        changes: dict = {}

        def found(
            exception: str, message: str, versions: dict | None, rid: str = rid
        ) -> dict | None:
            if not versions or versions["last"] not in groups:
                return None
            sites = groups[versions["last"]].get(match_key(exception, message))
            if not sites:
                done.missing.append(f"{rid}: {message[:60]!r} ({versions['last']})")
                return None
            return derived_at(sites, refs(versions["last"]))

        if record.status == "removed":
            explained = found(record.exception, record.message, record.versions)
            if explained and explained != record.data.get("derived"):
                changes["derived"] = explained
                done.derived += 1
        variants, changed = [], False
        for variant in record.data.get("variants", []):
            if isinstance(variant, dict):
                text, exception = variant_text(variant, record.exception)
                explained = found(exception, text, variant.get("versions"))
                if explained and explained != variant.get("derived"):
                    variant = {**variant, "derived": explained}
                    changed = True
                    done.variants += 1
            variants.append(variant)
        if changed:
            changes["variants"] = variants
        if not changes:
            continue
        done.records.append(rid)
        if not dry_run:
            path = Path(root) / record.path
            write_text(path, rewrite(record, path.read_text(encoding="utf-8"), **changes))
    return done

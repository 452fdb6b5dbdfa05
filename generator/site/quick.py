"""The quick rebuild: after edits of records' prose alone (what Record.outward leaves out),
remake those records' own outputs from what the last build kept, reading only the records
their pages show instead of the whole content.

Any other change goes to the full build: a record added, deleted or edited where other pages
show it; templates, settings, guides, projects or code; a problem in an edited file (the
full build reports it). The quick rebuild writes into the spare site and swaps it in, as the
full build does, and keeps the same manifest, so either may follow the other.
"""

import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path

from errorkb.content.load import MAX_FILE_KB, ParseCache, list_records, load_some
from errorkb.content.model import Content, ContentError
from errorkb.progress import QUIET, Progress
from errorkb.site import build
from errorkb.site.linking import link
from errorkb.site.pages import Pages

VERSION = 4
MOST_EDITS = 20  # edited files past which the full build's workers pay for themselves


@dataclass
class State:
    """What the last full build knew that a quick rebuild needs, for the site it made."""

    site: tuple  # the stamp of the site's manifest: a build of any kind writes it anew
    inputs: str  # a key of every input but the record files (inputs_key)
    base_key: str
    assets: dict[str, bytes]
    vendored: dict[str, str]  # as Pages takes them: URL -> digest
    aliases: dict[str, str]
    wing_keys: dict[str, str]  # project -> its wing's key
    limit_kb: int  # the largest record file the site's settings allow
    records: dict[str, tuple]  # record file -> (stamp, id, outward, shard)
    groups: dict[tuple[str, str], list[str]]  # (project, source path) -> its record files
    shown: dict[str, tuple]  # id -> its group, and the other record files its page shows
    full_text: dict[str, str]  # URL -> key of each page, as the main full-text index holds it
    version: int = VERSION


def build_site(
    root: Path,
    out: Path | None = None,
    log=None,
    cache: ParseCache | None = None,
    plan: "build.Plan | None" = None,
    progress: Progress = QUIET,
    project: str | None = None,
    checked: bool = False,
) -> "build.BuildResult":
    """build.build, quick where it can be: after edits of prose alone, a quick rebuild;
    else the full build, keeping what the next quick rebuild needs."""
    root = Path(root).resolve()
    out = Path(out).resolve() if out else root / "site"
    state = _load_state(out) if project is None else None
    if plan is None and state is not None and not checked:
        result = rebuild(root, out, log, state)
        if result is not None:
            return result
    plan = plan or build.load_plan(root, cache, progress, project)
    # What the live site's full-text index holds, where the state is the live site's.
    indexed = state.full_text if state is not None and _site_stamp(out) == state.site else None
    forget_state(out)
    result = build.build(
        root, out, log, plan=plan, progress=progress, checked=checked, indexed=indexed
    )
    if plan.inputs is not None and project is None and result.indexed is not None:
        save_state(plan, out, result.indexed)
    return result


def save_state(plan: "build.Plan", out: Path, indexed: dict[str, str]) -> None:
    """Kept beside the manifests after a full build of the whole content into `out`, whose
    full-text index holds the `indexed` pages at these keys."""
    assert plan.inputs is not None, "a plan of the whole content, loaded by load_plan"
    content, links = plan.content, plan.links
    wing_keys = {k: p.wing_key for k, p in content.projects.items()}
    records = {
        r.path: (
            content.stamps.get(r.path),  # as listed before loading: an edit since is seen
            rid,
            r.outward,
            ParseCache.shard_of(r.project, r.location.path),
        )
        for rid, r in content.records.items()
    }
    groups = {
        (project, path): [r.path for r in recs]
        for project, files in links.by_file.items()
        for path, recs in files.items()
    }
    shown = {}
    for rid, record in content.records.items():  # what record_key counts in
        successor = content.records.get(record.superseded_by or "")
        linked = [
            *links.related[rid],
            *links.referenced_by.get(rid, []),
            *links.twins.get(rid, []),
            *([successor] if successor else []),
        ]
        shown[rid] = ((record.project, record.location.path), [r.path for r in linked])
    state = State(
        _site_stamp(out),
        plan.inputs,
        plan.base_key,
        plan.assets,
        dict(plan.pages.vendored),
        dict(content.aliases),
        wing_keys,
        content.site.get("max_file_kb", MAX_FILE_KB),
        records,
        groups,
        shown,
        indexed,
    )
    _state_path(out).write_bytes(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))


def forget_state(out: Path) -> None:
    _state_path(out).unlink(missing_ok=True)


def rebuild(
    root: Path, out: Path, log=None, state: State | None = None
) -> "build.BuildResult | None":
    """The site rebuilt after edits of records' prose (from `state`, else the one kept for
    `out`); None where the full build must run."""
    started = time.perf_counter()
    state = state if state is not None else _load_state(out)
    if state is None or build.inputs_key(root, build.code_digest()) != state.inputs:
        return None
    listing = list_records(root, state.wing_keys, state.limit_kb)
    listed = {rel: (path, rel, stamp) for path, rel, stamp in listing or []}
    if listing is None or listed.keys() != state.records.keys():
        return None
    edited = [rel for rel, (_, _, stamp) in listed.items() if stamp != state.records[rel][0]]
    if len(edited) > MOST_EDITS:
        return None
    ids = [state.records[rel][1] for rel in edited]
    needed = set(edited)
    for group, linked in (state.shown[rid] for rid in ids):
        needed.update(state.groups[group], linked)
    cache = ParseCache(root / build.CACHE_DIR / "parse", {state.records[r][3] for r in needed})
    try:
        content = load_some(
            root, [listed[rel] for rel in sorted(needed)], set(edited), cache, state.aliases
        )
    except ContentError:
        return None  # the full build reports it
    if any(
        content.records.get(rid) is None or content.records[rid].outward != state.records[rel][2]
        for rid, rel in zip(ids, edited, strict=True)
    ):
        return None
    cache.save()
    with build._collector_paused(), build._locked(out, log):
        if _site_stamp(out) != state.site:
            return None  # another build made the site since
        result = _write(out, state, content, ids)
        if result is None:
            return None
        _state_path(out).write_bytes(
            pickle.dumps(_updated(state, out, listed, edited), pickle.HIGHEST_PROTOCOL)
        )
    result.seconds = time.perf_counter() - started
    if log:
        n = len(ids)
        why = f"the prose of {n} record{'s' * (n != 1)} changed" if n else "nothing changed"
        log(
            f"built {result.records} records into {result.files} files "
            f"({result.bytes / 1e6:.1f} MB; {result.rendered} rendered: {why}) "
            f"in {result.seconds:.2f} s: {out}"
        )
    return result


def _write(out: Path, state: State, content: Content, ids: list[str]) -> "build.BuildResult | None":
    """The spare made the live site with these records' outputs anew, then swapped in; None
    where the live site lost a file since its build (the full build makes it again)."""
    live = build._read_keys(out, out)
    spare, kept = build._spare(out, facts=False)
    try:
        writer = build.Writer(spare, kept, out, live)
        if not _follow(writer, live):
            build._forget_manifest(spare, out)
            return None
        plan = _plan(content, state)
        for rid in ids:
            record = content.records[rid]
            for part, (url_list, key) in plan.record_parts(record).items():
                if not writer.reuse(url_list, key):
                    for url, body in plan.record_outputs(record, part):
                        writer.write(url, body, key)
            build._write_units(writer, map(plan.alias_document, record.aliases))
        if plan.full_text:
            state.full_text = build.update_full_text(writer, state.full_text)
        writer.finish()
        written = {url for url, entry in writer.manifest.items() if len(entry) > 2}
        build._save_manifest(spare, out, writer.manifest, like=out, changed=written)
    except BaseException:
        build._forget_manifest(spare, out)
        raise
    build._swap_in(spare, out)
    return build.BuildResult(
        out, writer.files, writer.size, len(state.records), 0.0, writer.rendered, []
    )


def _follow(writer: "build.Writer", live: dict) -> bool:
    """The spare made to hold what the live site holds: the files the last build changed
    linked from it, the others kept (the full-text index is left to update_full_text).
    False where the live site lost one of them."""
    kept = writer.kept
    trees = tuple(u.removesuffix(build.TREE) for u in live if u.endswith(build.TREE))
    for url, entry in live.items():
        if url.startswith(trees):
            continue
        if kept.get(url) == entry:
            writer.manifest[url] = tuple(entry)
        elif not writer.reuse([url], entry[0]):
            return False
    return True


def _plan(content: Content, state: State) -> "build.Plan":
    """A plan of the content loaded, with what the full build worked out for all of it (the
    keys and assets, which Plan() would work out from all the records)."""
    plan = build.Plan.__new__(build.Plan)
    plan.content = content
    plan.links = link(content)
    plan.assets = state.assets
    compiled = content.root / build.CACHE_DIR / "templates"
    plan.pages = Pages(content, plan.links, state.assets, compiled, vendored=state.vendored)
    plan.base_key = state.base_key
    return plan


def _updated(state: State, out: Path, listed: dict, edited: list[str]) -> State:
    records = dict(state.records)
    for rel in edited:
        _, rid, outward, shard = records[rel]
        records[rel] = (listed[rel][2], rid, outward, shard)
    state.records = records
    state.site = _site_stamp(out)
    return state


def _load_state(out: Path) -> State | None:
    try:
        state = pickle.loads(_state_path(out).read_bytes())
    except Exception:  # none, or from another version: the full build
        return None
    return state if isinstance(state, State) and getattr(state, "version", 0) == VERSION else None


def _state_path(out: Path) -> Path:
    return build._manifests(out) / build.QUICK_STATE


def _site_stamp(out: Path) -> tuple:
    """The live site's manifest file: each build writes a new one."""
    path = build._manifest_path(out, out)
    st = os.stat(path) if path else None
    return (str(path), st.st_ino, st.st_mtime_ns, st.st_size) if st else ()

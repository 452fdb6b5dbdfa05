"""The quick rebuild: after edits of a few records, remake the outputs that show what changed
from what the last build kept, reading only the records those outputs show instead of the
whole content. An edit of a record's prose (what Record.outward leaves out) remakes its own
page and JSON; an edit of what listings show of it (SHOWN: its title, its summary) also the
pages of the records that show it, and its lines in the listings that list it: those the
last full build declared list it (BuildResult.listed), rendered from the rows it kept of the
records they list (pages.Row) and the edited records' rows made anew.

Any other change goes to the full build: a record added, deleted or placed anew (moved,
renamed, relinked: Record.placement); one listed where only the full build remakes the list
(the title of a record the assets name); templates, settings, guides,
projects or code; a problem in an edited file (the full build reports it). The quick rebuild
writes into the spare site and swaps it in, as the full build does, and keeps the same
manifest, so either may follow the other.
"""

import hashlib
import json
import marshal
import re
import time
from contextlib import suppress
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from errorkb import urls
from errorkb.content.load import MAX_FILE_KB, ParseCache, list_records, load_site, load_some
from errorkb.content.model import Content, ContentError, Record
from errorkb.progress import QUIET, Progress
from errorkb.search import engine
from errorkb.search import index as search_index
from errorkb.site import api, build, paging, publish, shortlinks
from errorkb.site.linking import link
from errorkb.site.pages import Row, row_of

VERSION = 12
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
    places: dict[str, tuple[str, str]]  # id -> its group (the key of groups, the same object)
    linked: dict[str, list[str]]  # id -> the other record files its page shows, where any
    # id of a check printed today -> the files of the removed records whose pages show its
    # prose (the old wordings it answers)
    answers: dict[str, list[str]]
    # What the outputs of many records declare (BuildResult.listed): id -> the URLs of those
    # that show it in full (a former id's document); and, marshalled, id -> those that show
    # it as a row or list it, and URL -> the ids it lists and its args (Listed.forward),
    # read on an edit of what listings show. An edit one of them shows that the rebuild
    # would not remake takes the full build.
    full_in: dict[str, list[str]]
    rows_in: bytes
    lists_of: bytes
    full_text: dict[str, str]  # URL -> key of each page, as the main full-text index holds it
    explained: int  # how many records are explained (the home page says): placement counts it
    # id -> its pages.Row, of each record the pages Pages makes list (the home page, the
    # feed, guides, project and tag pages, the pages at former ids): they render from these
    rows: dict[str, tuple]
    slots: list[tuple[str, int]]  # the search index's patterns: (record id, which wording)
    named: set[str]  # ids the assets name with their titles (the calculator's data)
    version: int = VERSION
    # What the full build wrote of all but the fields a quick rebuild changes, which it
    # writes back as they were instead of serializing them again.
    frozen: bytes = field(default=b"", repr=False)

    @cached_property
    def listed_in(self) -> dict[str, list[str]]:
        """id -> the URLs of the outputs of many records that show it as a row or list it."""
        return marshal.loads(self.rows_in)

    @cached_property
    def lists(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """URL -> the ids its output shows as rows or lists, in its order, and its args."""
        return marshal.loads(self.lists_of)

    @cached_property
    def file_of(self) -> dict[str, str]:
        """id -> its record file."""
        return {entry[1]: rel for rel, entry in self.records.items()}

    def row(self, rid: str) -> Row:
        return Row(*self.rows[rid])

    def listed(self, url: str) -> tuple[str, ...]:
        """The ids the output at `url` lists (none where it declared none)."""
        return self.lists[url][0] if url in self.lists else ()

    def count(self, project: str) -> int:
        """How many records a project has, as the first page of its document declares."""
        url = urls.project_json(project)
        return int(self.lists[url][1][1]) if url in self.lists else 0

    def raised(self, project: str) -> dict[str, tuple[str, ...]]:
        """A project's source files -> the ids of the records raised there, as their pages
        declare them."""
        return {
            args[1]: ids
            for url, (ids, args) in self.lists.items()
            if len(args) == 2 and args[0] == project and url == urls.source_file(*args)
        }


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
    with build.collector_paused():  # the state's and the listing's many small objects
        state = _load_state(out) if project is None else None
        if plan is None and state is not None and not checked:
            with suppress(ContentError):  # a site.yaml with problems: the full build says so
                build.use_site_urls(load_site(root))
            try:
                result = rebuild(root, out, log, state)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
                # A state of the right version and checksum that the code cannot use: the
                # full build makes the site, and a state anew.
                result = None
                if log:
                    log(f"the quick rebuild's state could not be used ({exc!r}): full build")
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
        with build.collector_paused():  # its many small objects would set off a collection
            save_state(plan, out, result.indexed, result.listed)
    if checked:  # the spare made whole too: a file of it damaged by hand is remade now
        prepare_spare(out)
    return result


def save_state(
    plan: "build.Plan",
    out: Path,
    indexed: dict[str, str],
    listed: "build.Declarations | None",
) -> None:
    """Kept beside the manifests after a full build of the whole content into `out`, whose
    full-text index holds the `indexed` pages at these keys, and whose outputs of many
    records show each record where `listed` says (BuildResult.listed)."""
    assert listed is not None, "a full build's result"
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
    # One tuple a group, shared by its records' places: marshal writes it once and reads it
    # back once (a tuple and a list a record took 80 ms of every edit to read).
    place_of = {place: place for place in groups}
    places, linked = {}, {}
    answers: dict[str, list[str]] = {}
    records_of = content.records
    for rid, record in records_of.items():  # what its page shows (Plan.record_shows)
        shows = plan.record_shows(record)
        (place,) = shows.files
        places[rid] = place_of[place]
        if shows.rows:  # one record in sixteen
            linked[rid] = [records_of[r].path for r in shows.rows]
        for answer in shows.full[1:]:
            answers.setdefault(answer, []).append(record.path)
    full_in, rows_in, lists = listed
    newest = [lists[url][0] for url in (urls.home(), urls.feed()) if url in lists]
    wanted = {*content.aliases.values(), *(rid for ids in newest for rid in ids)}
    wanted.update(content.aliases.get(i, i) for g in content.guides for i in g.errors)
    rows = {}
    for rid, record in content.records.items():
        row = row_of(record, content)
        if row.indexed or rid in wanted:
            rows[rid] = tuple(row)
    named = {m.decode() for body in plan.assets.values() for m in _ID.findall(body)}
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
        places,
        linked,
        answers,
        full_in,
        marshal.dumps(rows_in),
        marshal.dumps(lists),
        indexed,
        sum(r.curated for r in content.records.values()),
        rows,
        [(r.id, n) for r, n in search_index.index_slots(content)],
        named & content.records.keys(),
    )
    _state_path(out).write_bytes(_dumps(state))


_ID = re.compile(rb"\b[0-9a-f]{16}\b")


def forget_state(out: Path) -> None:
    _state_path(out).unlink(missing_ok=True)


def rebuild(
    root: Path, out: Path, log=None, state: State | None = None
) -> "build.BuildResult | None":
    """The site rebuilt after edits of a few records (from `state`, else the one kept for
    `out`); None where the full build must run."""
    started = time.perf_counter()
    state = state if state is not None else _load_state(out)
    code_key = build.code_digest()
    if state is None:
        return None
    if build.inputs_key(root, code_key) != state.inputs:
        return _declined(log, "the site's settings, templates, projects or code changed")
    listing = list_records(root, state.wing_keys, state.limit_kb)
    listed = {file[1]: file for file in listing or []}  # path from root -> (path, it, stamp)
    if listing is None or listed.keys() != state.records.keys():
        return _declined(log, "a record was added, removed or moved")
    edited = [rel for rel, (_, _, stamp) in listed.items() if stamp != state.records[rel][0]]
    if len(edited) > MOST_EDITS:
        return _declined(log, f"{len(edited)} records changed (it takes {MOST_EDITS} at most)")
    ids = [state.records[rel][1] for rel in edited]
    if not ids and (intact := _intact(out, state, started)) is not None:
        unchanged, live = intact
        if not publish.spare_follows(out, live):
            # Made to follow now, while nothing waits on this build, so that the next edit
            # links nothing (after a full build, every file it changed: 13 s CPU on the
            # real content, which the first edit paid before).
            prepare_spare(out)
        if log:  # nothing swapped in
            log(f"nothing changed, and all {unchanged.files} files are as built: {out}")
        return unchanged
    loaded = _load(root, state, listed, edited, ids)
    if loaded is None:
        return _declined(log, "an edit places a record anew, or an edited file has a problem")
    content, shown, showing = loaded
    with build.collector_paused(), publish.locked(out, log):
        if _site_stamp(out) != state.site:
            return _declined(log, "another build made the site since the last one")
        plan = _plan(content, state, code_key)
        try:
            result = _write(out, state, plan, ids, sorted(set(ids) | set(showing)), shown)
        except _Unanswered:  # the spare is left without its manifest: the full build remakes it
            return _declined(log, "an output showing the edited records cannot be remade alone")
        if result is None:
            return _declined(log, "the live site or its spare lost a file since its build")
        _state_path(out).write_bytes(_dumps(_updated(state, out, listed, edited, content)))
    result.seconds = time.perf_counter() - started
    if log:
        n, listed_anew = len(ids), len(shown)
        why = f"the prose of {n} record{'s' * (n != 1)} changed" if n else "nothing changed"
        if listed_anew:
            why = f"{n} record{'s' * (n != 1)} changed, {listed_anew} where listings show it"
        log(
            f"built {result.records} records into {result.files} files "
            f"({result.bytes / 1e6:.1f} MB; {result.rendered} rendered: {why}) "
            f"in {result.seconds:.2f} s: {out}"
        )
    return result


def _declined(log, why: str) -> "build.BuildResult | None":
    """No quick rebuild (None, as `rebuild` returns it), and why, said once before the full
    build runs (the writer who edited prose alone learns why it took the long way)."""
    if log:
        log(f"the quick rebuild declined: {why}; full build")
    return None


def _intact(
    out: Path, state: State, started: float
) -> "tuple[build.BuildResult, publish.Keys] | None":
    """The live site as it is, and its keys, when no record changed and every file of it is
    there as its build stamped it; None where one is not (the rebuild then makes the site
    whole)."""
    live = publish.read_keys(out, out)
    if not live or _site_stamp(out) != state.site:
        return None
    if publish.damaged(out, live, (url for url in live if not url.endswith(publish.TREE))):
        return None
    files = sum(1 for url in live if not url.endswith(publish.TREE))
    size = sum(entry[1][0] for entry in live.values())
    elapsed = time.perf_counter() - started
    return build.BuildResult(out, files, size, len(state.records), elapsed, 0, []), live


def _load(
    root: Path, state: State, listed: dict, edited: list[str], ids: list[str]
) -> tuple[Content, list[str], list[str]] | None:
    """The content with the records the outputs to remake show, the edited record files
    whose listings change, and the ids of the other records whose pages show them; None
    where the full build must run (a record placed anew, or a problem in an edited file,
    which it reports)."""
    needed = _shown_by(state, edited)
    cache = ParseCache(root / build.CACHE_DIR / "parse", {state.records[r][3] for r in needed})
    before = {rel: cache.record(rel) for rel in edited}

    def some() -> Content:
        return load_some(
            root, [listed[rel] for rel in sorted(needed)], set(edited), cache, state.aliases
        )

    try:
        content = some()
        if any(content.records.get(rid) is None for rid in ids):
            return None
        shown = [
            rel
            for rid, rel in zip(ids, edited, strict=True)
            if content.records[rid].outward != state.records[rel][2]
        ]
        if not _placed_alike(state, content, before, shown):
            return None
        # The pages that show them: where listings do (an edit of what they show), and the
        # pages of the old wordings they answer (an edit of their prose too).
        showing = sorted({*(_showing(state, shown) if shown else []), *_answering(state, ids)})
        more = _listed_by(state, content, shown, showing)
        if more - needed:
            needed |= more
            cache.read({state.records[r][3] for r in more})
            content = some()
    except ContentError:
        return None
    cache.save()
    return content, shown, [state.records[rel][1] for rel in showing]


def _shown_by(state: State, edited: list[str]) -> set[str]:
    """The record files the pages of these records show (their own among them)."""
    needed = set(edited)
    for rid in (state.records[rel][1] for rel in edited):
        needed.update(state.groups[state.places[rid]], state.linked.get(rid, ()))
    return needed


def _answering(state: State, ids: list[str]) -> list[str]:
    """The files of the removed records whose pages show these records' prose."""
    return sorted({rel for rid in ids for rel in state.answers.get(rid, ())})


def _showing(state: State, rels: list[str]) -> list[str]:
    """The record files whose pages show these records: those raised in the same file, and
    those linked to them (related, twins, successors)."""
    wanted = set(rels)
    found = {r for rel in rels for r in state.groups[state.places[state.records[rel][1]]]}
    linking = {rid for rid, shows in state.linked.items() if not wanted.isdisjoint(shows)}
    return sorted(found | {state.file_of[rid] for rid in linking})


def _placed_alike(
    state: State, content: Content, before: dict[str, Record | None], shown: list[str]
) -> bool:
    """Whether the edited records whose listings change are listed where they were: False
    for one placed anew, or one whose title the assets show (the calculator's data)."""
    for rel in shown:
        old, new = before[rel], content.records[state.records[rel][1]]
        if old is None or old.placement() != new.placement():
            return False
        if new.id in state.named and old.title != new.title:
            return False
    return True


def _listed_by(state: State, content: Content, shown: list[str], showing: list[str]) -> set[str]:
    """The record files the outputs that show these edited records are made from: the
    pages `showing` them and what those pages show, the source files they are raised in and
    their pages of patterns. (The pages Pages makes render from the rows kept.)"""
    needed = _shown_by(state, showing)
    file_of = state.file_of
    for record in (content.records[state.records[rel][1]] for rel in shown):
        for path in _raised_paths(record):
            needed.update(file_of[r] for r in state.listed(urls.source_file(record.project, path)))
        for page in _answers_pattern_pages(state, record.id).values():
            # each removed record's answer comes from the records its superseded_by leads to
            needed.update(f for rid, _ in page for f in (file_of[rid], *state.linked.get(rid, ())))
    return needed


def _raised_paths(record: Record) -> list[str]:
    return sorted({location.path for location in [record.location, *record.sites]})


def _pattern_pages(slots: list[tuple[str, int]], rid: str) -> dict[int, list[tuple[str, int]]]:
    """The pages of the search index that hold a record's patterns, by number. Its slots
    follow one another, its wordings in order (search_index.index_slots): found from the first
    by the list's own search, instead of a loop over the 34,000 slots of the real content."""
    size = engine.PAGE
    try:
        first = last = slots.index((rid, 0))
    except ValueError:
        return {}
    while last + 1 < len(slots) and slots[last + 1][0] == rid:
        last += 1
    return {n: slots[n * size : (n + 1) * size] for n in range(first // size, last // size + 1)}


class _Unanswered(Exception):
    """An output declares it shows an edited record, and the quick rebuild does not remake
    it (a producer it does not know): the full build makes the site."""


def _write(
    out: Path,
    state: State,
    plan: "build.Plan",
    edited: list[str],
    ids: list[str],
    shown: list[str],
) -> "build.BuildResult | None":
    """The spare made the live site with the outputs of these records (`ids`) anew, and
    those that list the records of the `shown` files, then swapped in; None where the live
    site lost a file since its build (the full build makes it again). Raises _Unanswered
    where an output of many records declares it shows an `edited` record (in full, or as a
    row where its file is `shown`) and is not among them."""
    content = plan.content
    writer = publish.open_following(out)
    if writer is None:
        return None
    with publish.publishing(out, writer):
        remade: set[str] = set()
        rows_in = state.listed_in if shown else {}
        for rid in ids:
            record = content.records[rid]
            for part, (url_list, key) in plan.record_parts(record).items():
                if not writer.reuse(url_list, key):
                    for url, body in plan.record_outputs(record, part):
                        writer.write(url, body, key)
            aliases = [plan.alias_document(alias) for alias in record.aliases]
            build.write_units(writer, aliases)
            remade.update(unit.url for unit in aliases)
        for rel in shown:  # one at a time: a listing of two reads the first one's edit
            record = content.records[state.records[rel][1]]
            if record.id in state.rows:  # the row the listings render it with, made anew
                state.rows[record.id] = tuple(row_of(record, content))
            listings = _listings(writer, plan, state, record, set(rows_in.get(record.id, ())))
            build.write_units(writer, listings)
            remade.update(unit.url for unit in listings)
        declared = [url for rid in edited for url in state.full_in.get(rid, ())]
        if shown:
            declared += [url for rel in shown for url in rows_in.get(state.records[rel][1], ())]
        if not remade.issuperset(declared):
            raise _Unanswered(sorted(set(declared) - remade))
        if plan.full_text:
            state.full_text = build.update_full_text(writer, state.full_text)
    return build.BuildResult(
        out, writer.files, writer.size, len(state.records), 0.0, writer.rendered, []
    )


def _listings(
    writer: "publish.Writer", plan: "build.Plan", state: State, record: Record, listed: set[str]
) -> list["build.Unit"]:
    """The outputs that list a record, made anew for an edit of what they show of it: its
    source files' pages, the pages that list it (of those its last full build declared
    list it: the URLs `listed`), its pages of patterns, its line in its project's document
    and in the id lists."""
    units = [plan.file_page(record.project, path) for path in _raised_paths(record)]
    units += map(plan.site_page, _listing_pages(plan, state, record, listed))
    units += _pattern_units(writer, plan, state, record)
    units.append(_document_unit(writer, plan, state, record, listed))
    for url in sorted({urls.id_list(i[: shortlinks.SHARD]) for i in [record.id, *record.aliases]}):
        key, body, titled = shortlinks.retitled_id_list(_live(writer, url), record.id, record.title)
        units.append(plan.site_page((url, key, body, titled)))
    return units


def _listing_pages(
    plan: "build.Plan", state: State, record: Record, listed: set[str]
) -> list[tuple]:
    """The pages Pages makes that list the record, as the last full build declared (the
    URLs `listed`), rendered from the rows kept (the record's own made anew): at its former
    ids, the home page and the feed, its project's page and its tags', the guides."""
    content, pages = plan.content, plan.pages

    def rows(url: str) -> list[Row]:
        return [state.row(rid) for rid in state.listed(url)]

    own = row_of(record, content)
    parts = [pages.redirect_part(alias, own) for alias in record.aliases]
    if urls.home() in listed:
        counts = {key: state.count(key) for key in content.projects}
        home = rows(urls.home())
        parts.append(pages.home_part(len(state.records), state.explained, counts, home))
    if urls.feed() in listed:
        parts.append(pages.feed_part(rows(urls.feed())))
    if urls.project(record.project) in listed:
        indexed = rows(urls.project(record.project))
        files = {path: list(ids) for path, ids in state.raised(record.project).items()}
        count = state.count(record.project)
        parts.append(pages.project_part(record.project, count, files, indexed))
    tagged = [tag for tag in own.tags if urls.tag(tag) in listed]
    parts += [pages.tag_part(tag, rows(urls.tag(tag))) for tag in tagged]
    for g in content.guides:
        if urls.guide(g.slug) in listed:
            covered = [state.row(content.aliases.get(i, i)) for i in g.errors]
            parts.append(pages.guide_part(g, covered))
    return parts


def _answers_pattern_pages(state: State, rid: str) -> dict[int, list[tuple[str, int]]]:
    """The pages of patterns that show a record: its own, and those of the old wordings it
    answers (their results name it)."""
    pages = {}
    for shown in [rid, *(state.records[rel][1] for rel in state.answers.get(rid, []))]:
        pages.update(_pattern_pages(state.slots, shown))
    return pages


def _pattern_units(
    writer: "publish.Writer", plan: "build.Plan", state: State, record: Record
) -> list["build.Unit"]:
    """The pages of patterns that show the record, their words' weights as the live files
    have them."""
    content, units = plan.content, []
    names = search_index.project_names(content)
    extras = search_index.search_extras(content)
    for number, slot_ids in sorted(_answers_pattern_pages(state, record.id).items()):
        slots = [(content.records[rid], n) for rid, n in slot_ids]
        live = json.loads(_live(writer, urls.search_patterns(str(number))))
        totals = [item["weight"] for item in live]
        answers = search_index.page_answers(content, slots)
        made = search_index.patterns_page(
            number, slots, names, totals, plan.code_key, answers, extras
        )
        units.append(plan.patterns_unit(*made))
    return units


def _document_unit(
    writer: "publish.Writer", plan: "build.Plan", state: State, record: Record, listed: set[str]
) -> "build.Unit":
    """The page of its project's API document that lists the record (of those `listed`),
    its line made anew."""
    count = state.count(record.project)
    (url,) = listed.intersection(paging.project_page_urls(record.project, count))
    ids = list(state.listed(url))
    plan.kept_rows = {rid: state.records[state.file_of[rid]][2] for rid in ids}
    shows = plan.project_page_shows(record.project, count, ids)
    body = api.with_row(_live(writer, url), record, plan.content.site["base_url"])
    return plan.unit(url, shows, body)


def _live(writer: "publish.Writer", url: str) -> bytes:
    """The file the live site has at a URL (the spare links it, until made anew)."""
    return (writer.root / publish.safe_output_path(url)).read_bytes()


def prepare_spare(out: Path) -> None:
    """The spare site made to hold what the live site holds, so that the next quick rebuild
    writes only what its edit changes: after a full build, linking the files it changed
    takes seconds (7 s on the real content), better spent while the writer reads the site
    (`errorkb serve` calls this after each build) than after their next edit."""
    with build.collector_paused(), publish.locked(out):
        writer = publish.open_following(out)
        if writer is not None:
            with publish.publishing(out, writer, swap=False):
                pass  # what the live site's build changed, linked into the spare


def _plan(content: Content, state: State, code_key: str) -> "build.Plan":
    """A plan of the content loaded, with what the full build worked out for all of it (the
    keys and assets, which Plan() would work out from all the records)."""
    known = state.vendored, state.base_key
    return build.Plan(content, link(content), state.assets, code_key, known)


def _updated(state: State, out: Path, listed: dict, edited: list[str], content: Content) -> State:
    records = dict(state.records)
    for rel in edited:
        _, rid, _, shard = records[rel]
        records[rel] = (listed[rel][2], rid, content.records[rid].outward, shard)
    state.records = records
    state.site = _site_stamp(out)
    return state


# The fields a quick rebuild changes (_updated), kept apart from the frozen rest, which it
# writes back as the full build serialized it. Marshal, not pickle: the state is plain data,
# and marshal reads and writes it in half the time (they were a fifth of a quick rebuild).
_CHANGING = ("site", "records", "full_text", "rows")
_FROZEN = tuple(f.name for f in fields(State) if f.name not in (*_CHANGING, "version", "frozen"))


def _dumps(state: State) -> bytes:
    if not state.frozen:
        state.frozen = marshal.dumps([getattr(state, name) for name in _FROZEN])
    changing = [getattr(state, name) for name in _CHANGING]
    body = marshal.dumps((VERSION, *changing, state.frozen))
    return _checksum(body) + body


def _checksum(body: bytes) -> bytes:
    """The state's own hash, ahead of it: a state written by anything but a build (a disk
    that filled, a hand, another tool) is not read (a few ms for its megabytes)."""
    return hashlib.blake2b(body, digest_size=_CHECKSUM).digest()


_CHECKSUM = 16


def _load_state(out: Path) -> State | None:
    try:
        data = _state_path(out).read_bytes()
        body = data[_CHECKSUM:]
        if data[:_CHECKSUM] != _checksum(body):
            return None
        version, *changing, frozen = marshal.loads(body)
        if version != VERSION:
            return None
        fixed = dict(zip(_FROZEN, marshal.loads(frozen), strict=True))
        state = State(**fixed, **dict(zip(_CHANGING, changing, strict=True)), frozen=frozen)
        return state if _shaped(state) else None
    except Exception:  # none, or from another version: the full build
        return None


def _shaped(state: State) -> bool:
    """Whether each field of the state is of its type (the entries are left to the
    rebuild, which takes the full build on any it cannot use)."""
    for f in fields(state):
        kind: Any = f.type
        if not isinstance(getattr(state, f.name), getattr(kind, "__origin__", kind)):
            return False
    return True


def _state_path(out: Path) -> Path:
    return publish.manifests_folder(out) / publish.QUICK_STATE


def _site_stamp(out: Path) -> tuple:
    """The live site's manifest file: each build writes a new one."""
    return publish.keys_stamp(out, out)

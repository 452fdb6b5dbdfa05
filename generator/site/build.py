"""The build: content -> a complete site in a staging folder, swapped in atomically.

A failed or killed build never touches the live site: everything is written to a
sibling staging folder, and only a finished one replaces the old site, in one
rename(2) exchange where the kernel offers it.

Builds are incremental and double-buffered. Every output has a key, a hash of everything
it is made from, and each site folder has a manifest (URL -> key, size) beside it, named
after the folder's inode, so the manifest follows its folder through the swap and is never
published with the site. The staging folder is the spare site the last swap left behind: a
build touches only the files whose key differs from what the spare already holds (and that
are still there, with their size), hard-linking them from the live site where they are
current there, rendering the rest. A killed build leaves the spare without a manifest, and
the next build starts it afresh. A folder without a manifest that is not empty is not a
site errorkb built: the build refuses it rather than park and delete someone's files.

Files of the spare may be hard links to the live site's, so the writer never opens an
existing file for writing: every output is a new file (O_EXCL), made after unlinking
whatever name was there. The live site changes only in the final exchange.

On a big site, forked workers make the outputs drawn from many records (search index,
lists, file pages) while the parent keys the record pages, and render those when many
changed.
"""

import ctypes
import errno
import fcntl
import functools
import gc
import hashlib
import json
import marshal
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from errorkb import owned, resources
from errorkb.content.load import ParseCache, fork_workers, load_content
from errorkb.content.model import Content, Record
from errorkb.progress import QUIET, Progress
from errorkb.projects import wings
from errorkb.search import engine as search
from errorkb.site import api, cards, check, markup, paging, shortlinks, urls
from errorkb.site.linking import Links, link, successors
from errorkb.site.pages import Pages

OLD_PREFIX = ".site-old-"  # a discarded spare, being deleted in the background
LEGACY_MANIFEST = ".errorkb-manifest.json"  # where sites built before kept their manifest
CACHE_DIR = ".errorkb-cache"  # parsed records between builds, beside content/
TREE = "*"  # manifest entry "<folder>/*": the key of a folder a tool writes as a whole
PARALLEL_MIN = 400  # records to render before forking workers pays for itself
PAGE, CARD = "page", "card"  # the parts of a record's outputs, keyed apart


class BuildError(Exception):
    """The build cannot run (a missing dependency); the message says what to do."""


@dataclass
class BuildResult:
    out: Path
    files: int
    bytes: int
    records: int
    seconds: float
    rendered: int  # outputs rendered (the rest were linked unchanged from the last build)
    problems: list[check.SiteProblem]  # what `check` found wrong with the site
    indexed: dict[str, str] | None = None  # the full-text index's pages (write_full_text)


def build(
    root: Path,
    out: Path | None = None,
    log=None,
    cache: ParseCache | None = None,
    plan: "Plan | None" = None,
    progress: Progress = QUIET,
    project: str | None = None,
    checked: bool = False,
    indexed: dict[str, str] | None = None,
) -> BuildResult:
    """Validate content (unless `plan` holds it loaded), write every file, and swap the new
    site in; with `project`, that project's site alone; `checked`: then hold it to the
    rules of `check_site`; `indexed`: the pages the live site's full-text index holds, by
    their keys then (write_full_text). Raises ContentError."""
    started = time.perf_counter()
    root = Path(root).resolve()
    out = Path(out).resolve() if out else root / "site"
    with _collector_paused():
        plan = plan or load_plan(root, cache, progress, project)
        content = plan.content
        with _locked(out, log):
            live = _own_site(out)
            spare, kept = _spare(out)
            try:
                writer = Writer(spare, kept, out if out.exists() else None, live)
                indexed = write_site(writer, plan, progress, indexed)
                # The live site's keys as written: `live` leaves out pages without facts.
                _save_manifest(spare, out, writer.manifest, replaced=_read_keys(out, out))
            except BaseException:
                _forget_manifest(spare, out)  # half-made: the next build starts over
                raise
            _swap_in(spare, out)
            problems = check_site(plan, writer.manifest, out, progress) if checked else []
    result = BuildResult(
        out,
        writer.files,
        writer.size,
        len(content.records),
        time.perf_counter() - started,
        writer.rendered,
        problems,
        indexed,
    )
    if log:
        log(
            f"built {result.records} records into {result.files} files "
            f"({result.bytes / 1e6:.1f} MB; {result.rendered} rendered, "
            f"{result.files - result.rendered} unchanged) in {result.seconds:.2f} s: {out}"
        )
    return result


def load_plan(
    root: Path,
    cache: ParseCache | None = None,
    progress: Progress = QUIET,
    project: str | None = None,
) -> "Plan":
    """The content, loaded and validated (raises ContentError), and what it renders with;
    with `project`, only what that project's site shows."""
    root = Path(root).resolve()
    with _collector_paused():
        if cache is None:
            cache = ParseCache(root / CACHE_DIR / "parse")
        # The inputs as they are before loading: an edit during the build is seen by the next.
        code_key = code_digest()
        inputs = inputs_key(root, code_key)
        content = load_content(root, cache, progress)
        cache.save()
        use_site_urls(content.site)
        if project is not None:
            if project not in content.projects:
                known = ", ".join(sorted(content.projects))
                raise BuildError(f"no project {project!r} in content/projects/ (there: {known})")
            content = content.only(project)
        assets = load_assets(resources.templates(root), content)
        plan = Plan(content, link(content), assets, code_key)
        plan.inputs = inputs if project is None else None
        return plan


def use_site_urls(site: dict) -> None:
    """This process's URLs are the standalone site's, below its base URL's path (a GitHub
    Pages project site's /<repo>): every page, link and fetch carries it."""
    urls.configure(prefix=urlsplit(site["base_url"]).path)


def inputs_key(root: Path, code_key: str) -> str:
    """The stamps of every file the build reads but the record files, and the code's key."""
    stamps = [code_key]
    content = root / "content"
    for top in (content, resources.templates(root)):
        for folder, dirs, files in os.walk(top):
            if Path(folder) == content and "errors" in dirs:
                dirs.remove("errors")  # the record files: stamped one by one
            dirs.sort()
            for name in sorted(files):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:  # a broken link: the full build reports it
                    stamps.append(f"{folder}/{name} unreadable")
                    continue
                stamps.append(f"{folder}/{name} {st.st_mtime_ns} {st.st_size} {st.st_ino}")
    return _hash(*stamps)


def check_site(
    plan: "Plan", manifest: dict[str, "Entry"], site: Path, progress: Progress = QUIET
) -> list[check.SiteProblem]:
    """What is wrong with a site built from `plan` into `site`, from the facts in its
    manifest: links and anchors that lead nowhere, loads from other hosts, error pages over
    budget, and (the one part that reads files) documents the published schema refuses."""
    progress.stage("checking the site")
    content = plan.content
    pages = {url: check.Facts(*entry[2]) for url, entry in manifest.items() if entry[2]}
    files = [check.file_of(url) for url in manifest if not url.endswith(TREE)]
    short = [url for url, _ in shortlinks.short_links(content)]  # the 404 page answers them
    found = list(check.link_problems(pages, files, short))
    found += check.budget_problems(
        {urls.error(rid): manifest[urls.error(rid)][1][0] for rid in content.records}
    )
    documents = [urls.error_json(rid) for rid in [*content.records, *content.aliases]]
    schema = json.loads((site / check.file_of(urls.schema())).read_bytes())
    found += check.document_problems(site, [d for d in documents if d in manifest], schema)
    return found


def site_manifest(out: Path) -> dict[str, list]:
    """url -> [key, stamp, facts] of each file of the site built into `out` (empty if none)."""
    return _read_manifest(out, out)


@contextmanager
def _collector_paused():
    """No cyclic garbage collection during a build: loading makes hundreds of thousands of
    long-lived objects, and each allocation burst would trigger a collection scanning them
    all (a third of a rebuild; in forked workers, it also copies the pages it scans).
    Rendering makes no reference cycles, so reference counting alone frees its garbage."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # All the build allocated counts as young: move it to the oldest generation, or
        # the first collection after would scan it all.
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def write_site(
    writer: "Writer",
    plan: "Plan",
    progress: Progress = QUIET,
    indexed: dict[str, str] | None = None,
) -> dict[str, str] | None:
    """Every output of the site, into the writer's folder, and its manifest; returns the
    pages the full-text index holds, by their keys then (write_full_text). When many
    records changed, workers make the outputs drawn from many records while the records
    are written; after an edit of a few, forking them would cost more than it saves (each
    worker reads the whole plan, copying the pages it touches)."""
    todo = _stale_records(writer, plan, progress)
    with _workers(plan, writer, len(todo)) as pool:
        if pool is None:
            for produce in plan.producers().values():
                _write_units(writer, produce())
        else:
            shared = [pool.apply_async(_produce_in_worker, (name,)) for name in plan.producers()]
        _write_records(writer, plan, todo, pool, progress)
        if pool is not None:
            progress.stage("pages of many records", len(shared))
            for done in shared:
                writer.merge(*done.get())
                progress.advance()
    for url, source in plan.vendored:
        writer.copy(url, source)
    if plan.full_text:
        progress.stage("full-text index")
        indexed = write_full_text(writer, full_text_pages(plan.content), indexed)
    writer.finish()
    return indexed if plan.full_text else None


def _write_units(writer: "Writer", units: Iterable["Unit"]) -> None:
    """Outputs of one kind: rendered where their key changed, else kept or linked."""
    for unit in units:
        if not writer.reuse([unit.url], unit.key):
            writer.write(unit.url, unit.body(), unit.key)


@dataclass(frozen=True)
class Unit:
    """One output: where it goes, the key of what it is made from, and its bytes or how to
    make them (called only when the file at its URL has another key). The writer takes its
    facts from the bytes, and keeps them with the key."""

    url: str
    key: str
    made: bytes | Callable[[], bytes]

    def body(self) -> bytes:
        return self.made if isinstance(self.made, bytes) else self.made()


class Plan:
    """What the site is made of, and the key of each record's outputs."""

    full_text = True  # a Pagefind index (a host site may have full-text search of its own)
    inputs: str | None = None  # inputs_key when loaded, for the quick rebuild (quick.py)

    def __init__(
        self,
        content: Content,
        links: Links,
        assets: dict[str, bytes],
        code_key: str | None = None,  # code_digest(), when the caller has it
    ):
        self.content = content
        self.links = links
        self.assets = assets
        # Third-party files the wings ship, copied as they are; the service worker keeps
        # them under a cache named after their digests. Wings may share one (Pyodide).
        shipped = {
            url: source
            for w in wings(content.projects.values())
            for url, source in w.vendored(content.root)
        }
        self.vendored = sorted(shipped.items())
        digests = {url: _digest(source) for url, source in self.vendored}
        compiled = content.root / CACHE_DIR / "templates"
        self.pages = Pages(content, links, assets, compiled, vendored=digests)
        self.code_key = code_key or code_digest()
        self.base_key = _base_key(content, assets, self.code_key)

    def record_key(self, record: Record) -> str:
        """A hash of everything the record's page and document show: the record, the
        records raised in its source file (the nearest of them are shown, and how many
        there are), its related records, the records that took over from it (the last,
        printed today, whole: its prose answers on the page), and its guides.
        Keying on the whole file rather than the few shown costs a few pages more per edit
        and saves working out the nearest for each of 10,000 records on every build. The
        other records count by what they show of themselves (Record.outward)."""
        links = self.links
        in_file = self.file_keys[record.project, record.location.path]
        chain = successors(self.content, record)
        linked = [
            *links.related[record.id],
            *links.referenced_by.get(record.id, []),
            *links.twins.get(record.id, []),
            *chain,
        ]
        # The page of an old wording shows the prose of the check printed today that took
        # over: that record counts whole.
        live = chain[-1] if chain and chain[-1].status != "removed" else None
        guides = [f"{g.slug} {g.title}" for g in links.guides.get(record.id, [])]
        parts = [
            self.base_key,
            record.source.digest,
            in_file,
            *guides,
            "",
            *(r.outward for r in linked),
            *([live.source.digest] if live else []),
        ]
        return hashlib.sha1("\0".join(parts).encode()).hexdigest()

    @cached_property
    def file_keys(self) -> dict[tuple[str, str], str]:
        """(project, path) -> a hash of the records whose source is that file."""
        return {
            (project, path): hashlib.sha1("".join(r.outward for r in recs).encode()).hexdigest()
            for project, files in self.links.by_file.items()
            for path, recs in files.items()
        }

    def producers(self) -> dict[str, Callable[[], Iterable[Unit]]]:
        """The outputs made from many records, a producer for each kind, by name: workers
        are handed the name and make the kinds side by side (the longest first)."""
        return {
            "search index": self.search_index,
            "site pages": self.site_pages,
            "API files": self.api_files,
            "file pages": self.file_pages,
            "assets": self.asset_files,
            "shared cards": self.shared_cards,
        }

    def search_index(self) -> Iterable[Unit]:
        """Its pages of patterns keyed by their records, made only when changed."""
        for url, key, made in search.site_index_parts(self.content, self.code_key):
            yield Unit(url, key, made)

    def site_pages(self) -> Iterable[Unit]:
        """Keyed by what each is made from, made only when that changed."""
        return map(self.site_page, self.pages.site_page_parts())

    def site_page(self, part: tuple[str, str, bytes | Callable[[], bytes]]) -> Unit:
        """A page Pages makes, keyed by what it is made from and what every page is."""
        url, key, made = part
        return Unit(url, _hash(self.base_key, key), made)

    def api_files(self) -> Iterable[Unit]:
        """An alias's document keyed as its record's page, a project's document by its
        records (each made only when changed); the few others by their bytes."""
        content, links = self.content, self.links
        for alias in sorted(content.aliases):
            yield self.alias_document(alias)
        for project, files in ((k, links.by_file.get(k, {})) for k in content.projects):
            records = [r for recs in files.values() for r in recs]
            pages = functools.cache(functools.partial(api.project_files, content, links, project))
            for n, url in enumerate(paging.project_page_urls(project, len(records))):
                listed = records[n * paging.PER_PAGE : (n + 1) * paging.PER_PAGE]
                key = self.project_page_key(project, len(records), [r.outward for r in listed])
                yield Unit(url, key, functools.partial(_one_of, pages, url))
        yield from _keyed(api.site_api_files(content, links))

    def project_page_key(self, project: str, count: int, outwards: list[str]) -> str:
        """A page of a project's document, keyed by how many records the project has and
        by those the page lists (their Record.outward)."""
        return _hash(self.base_key, project, str(count), *outwards)

    def alias_document(self, alias: str) -> Unit:
        """The document of a record's former id: the record's, keyed as its page."""
        record = self.content.records[self.content.aliases[alias]]
        made = functools.partial(api.alias_file, self.content, self.links, alias)
        return Unit(urls.error_json(alias), _hash(self.record_key(record), alias), made)

    def file_pages(self) -> Iterable[Unit]:
        for project, files in self.links.raised_in.items():
            for path in files:
                yield self.file_page(project, path)

    def file_page(self, project: str, path: str) -> Unit:
        """A source file's page, keyed by the records it shows."""
        entries = self.links.raised_in[project][path]
        key = _hash(self.base_key, project, path, *(r.outward for r, _ in entries))
        render = functools.partial(self.pages.source_file, project, path)
        return Unit(urls.source_file(project, path), key, render)

    def asset_files(self) -> Iterable[Unit]:
        return _keyed((urls.asset(name), body) for name, body in sorted(self.assets.items()))

    def shared_cards(self) -> Iterable[Unit]:
        """The cards links to a project's pages of one kind share, keyed by what they show."""
        for url, card in cards.shared_cards(self.content):
            yield Unit(url, card.key, functools.partial(cards.draw, card))

    def record_parts(self, record: Record) -> dict[str, tuple[list[str], str]]:
        """A record's outputs in parts keyed apart, as part -> (URLs, key): its page and
        JSON, keyed by all they show; its card, by the little it shows, so that an edit of
        a template or of a related record draws no card again."""
        parts = {PAGE: (_record_urls(record.id), self.record_key(record))}
        if record.curated:
            parts[CARD] = ([urls.card(record.id)], cards.card(record, self.content).key)
        return parts

    def record_outputs(self, record: Record, part: str) -> list[tuple[str, bytes]]:
        if part == CARD:
            return [(urls.card(record.id), cards.draw(cards.card(record, self.content)))]
        doc = api.error_document(record, self.content, self.links)
        return [(urls.error(record.id), self.pages.error(record, doc))] + api.record_files(
            record.id, doc
        )


def _one_of(files: Callable[[], dict[str, bytes]], url: str) -> bytes:
    """The file at `url` of those `files` makes (once: it is cached)."""
    return files()[url]


def _hash(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


def _keyed(outputs: Iterable[tuple[str, bytes]]) -> Iterable[Unit]:
    """Outputs rendered every build, keyed by their bytes: written only when changed."""
    for url, body in outputs:
        yield Unit(url, hashlib.sha1(body).hexdigest(), body)


def _base_key(content: Content, assets: dict[str, bytes], code_key: str) -> str:
    """What every page depends on: the generator's code, templates, site and projects."""
    digest = hashlib.sha1(code_key.encode())
    for path in sorted(resources.templates(content.root).rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for name, body in sorted(assets.items()):
        digest.update(name.encode() + b"\0" + body)
    projects = {k: vars(p) for k, p in content.projects.items()}
    digest.update(json.dumps([content.site, projects, content.extras], sort_keys=True).encode())
    return digest.hexdigest()


def code_digest() -> str:
    """A hash of the generator's own code and of the versions of the libraries it renders
    with (Jinja, markdown-it, Pygments, Pillow...): a new version of either renders every
    page anew."""
    package = Path(__file__).parent.parent
    files = sorted(p for p in package.rglob("*") if p.suffix in (".py", ".json") and p.is_file())
    stats = tuple((p, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _code_digest(package, stats, " ".join(_dependency_versions()))


@functools.lru_cache(maxsize=4)
def _code_digest(package: Path, stats: tuple, versions: str) -> str:
    """Read once per process while the files keep their sizes and times (a server or test
    process builds many times)."""
    digest = hashlib.sha1(versions.encode())
    for path, _, _ in stats:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def _dependency_versions() -> tuple[str, ...]:
    """name==version of each library in errorkb's distribution's dependency closure (extras
    aside), read once a process. Kept in the user's cache while the folders
    packages are installed in stay unchanged (pip adds and removes a folder of metadata
    in them for each package it installs): reading the metadata costs 30 ms of every
    build."""
    folders = [(p, os.stat(p).st_mtime_ns) for p in sys.path if os.path.isdir(p)]
    stamp = repr((sys.version, folders)).encode()
    path = resources.user_cache() / "versions" / hashlib.sha1(stamp).hexdigest()
    try:
        return tuple(path.read_text().splitlines())
    except OSError:
        found = _installed_versions()
        resources.keep_in_cache(path, "\n".join(found).encode())
        return found


def _installed_versions() -> tuple[str, ...]:
    """name==version of every distribution errorkb's installed one needs, directly or
    through another (MarkupSafe through Jinja): a patch release of any changes how pages
    render. Requirements whose markers do not hold here (other platforms, extras) are not
    followed."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo: list[tuple[str, frozenset[str]]] = [("errorkb", frozenset())]  # with its extras
    while todo:
        name, extras = todo.pop()
        name = canonicalize_name(name)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            found[name] = metadata.version(name)
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            found[name] = "missing"
            continue
        for text in requires:
            try:
                needed = Requirement(text)
            except InvalidRequirement:
                continue
            marker = needed.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in extras | {""}):
                todo.append((needed.name, frozenset(needed.extras)))
    found.pop("errorkb")  # its own code is keyed file by file
    return tuple(sorted(f"{name}=={version}" for name, version in found.items()))


# Record pages ------------------------------------------------------------------------------

_PLAN: "Plan | None" = None  # what forked workers work from
_WRITER: "Writer | None" = None


@contextmanager
def _workers(plan: Plan, writer: "Writer", stale: int):
    """A pool of forked workers sharing the plan, or None where too few record parts are
    `stale` for them to pay for their start (or the platform cannot fork)."""
    count = fork_workers(stale, PARALLEL_MIN)
    if not count:
        yield None
        return
    global _PLAN, _WRITER
    _PLAN, _WRITER = plan, writer
    import multiprocessing  # only where workers are forked (fork_workers)

    try:
        with multiprocessing.get_context("fork").Pool(
            count, _die_with_parent, (os.getpid(),)
        ) as pool:
            yield pool
    finally:
        _PLAN = _WRITER = None


def _stale_records(
    writer: "Writer", plan: Plan, progress: Progress = QUIET
) -> list[tuple[str, str, str]]:
    """Each record's page, JSON and card linked when unchanged; the others, as (record id,
    part, key), to render."""
    todo = []
    progress.stage("keying records", len(plan.content.records))
    for rid, record in sorted(plan.content.records.items()):
        for part, (url_list, key) in plan.record_parts(record).items():
            if not writer.reuse(url_list, key):
                todo.append((rid, part, key))
        progress.advance()
    return todo


def _write_records(
    writer: "Writer",
    plan: Plan,
    todo: list[tuple[str, str, str]],
    pool,
    progress: Progress = QUIET,
) -> None:
    """The record parts to render (by the pool when there are many)."""
    progress.stage("rendering record parts", len(todo))
    if pool is None or len(todo) < PARALLEL_MIN:
        for rid, part, key in todo:
            for url, body in plan.record_outputs(plan.content.records[rid], part):
                writer.write(url, body, key)
            progress.advance()
        return
    chunks = [todo[i : i + 100] for i in range(0, len(todo), 100)]
    for chunk, rendered in zip(chunks, pool.imap(_render_chunk, chunks), strict=True):
        for url, body, key, facts in rendered:
            writer.write(url, body, key, facts)
        progress.advance(len(chunk))


def _forked() -> "tuple[Plan, Writer]":
    """In a worker: the plan and writer the build set before forking it."""
    assert _PLAN is not None and _WRITER is not None, "a worker of a build that set them"
    return _PLAN, _WRITER


def _produce_in_worker(name: str) -> tuple[dict, int]:
    """In a worker: write the outputs of one producer; report their manifest entries."""
    plan, writer = _forked()
    local = writer.twin()
    _write_units(local, plan.producers()[name]())
    return local.manifest, local.rendered


def _die_with_parent(parent: int) -> None:
    """A worker must not outlive a killed build and write into the next build's folder."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:  # the build died before the signal was armed
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _render_chunk(
    chunk: list[tuple[str, str, str]],
) -> list[tuple[str, bytes, str, "check.Facts | None"]]:
    """In a worker: some records' parts rendered, as (URL, bytes, key, facts) of each file.
    The build's process writes them: two processes creating files in the same folders
    contend in the file system, which cost a fifth more CPU than the rendering they share."""
    plan, _ = _forked()
    rendered = []
    for rid, part, key in chunk:
        for url, body in plan.record_outputs(plan.content.records[rid], part):
            rendered.append((url, body, key, check.facts(url, body)))
    return rendered


def _record_urls(rid: str) -> list[str]:
    return [urls.error(rid), urls.error_json(rid)]


# Full text ---------------------------------------------------------------------------------


def full_text_pages(content: Content) -> list[str]:
    """What Pagefind indexes: curated error pages and guides; stubs hold only their message,
    which tier 1 matches exactly, so indexing thousands of them would only slow every build."""
    page_urls = [urls.error(rid) for rid, rec in sorted(content.records.items()) if rec.curated]
    return page_urls + [urls.guide(g.slug) for g in content.guides]


def write_full_text(
    writer: "Writer", page_urls: list[str], indexed: dict[str, str] | None = None
) -> dict[str, str]:
    """Pagefind's index of these pages (as the writer holds them); returns them by the keys
    the main index holds them at. Where `indexed` says what the live site's index holds and
    the same pages are to be indexed, the pages changed since go into a bundle of their own
    (update_full_text), unless too many changed."""
    if indexed is not None and indexed.keys() == set(page_urls):
        return update_full_text(writer, indexed)
    _write_newer(writer, [])
    key = hashlib.sha1("\0".join(u + writer.manifest[u][0] for u in page_urls).encode())
    folder = urls.pagefind("")
    if page_urls and not writer.reuse_tree(folder, key.hexdigest()):
        shutil.rmtree(writer.root / folder.strip("/"), ignore_errors=True)
        _index_full_text(writer, page_urls, folder)
        writer.add_tree(folder, key.hexdigest())
    return {u: writer.manifest[u][0] for u in page_urls}


def update_full_text(writer: "Writer", indexed: dict[str, str]) -> dict[str, str]:
    """Pagefind's index kept as the live site has it, and the pages changed since it was
    made (`indexed`: URL -> the page's key then) indexed in a bundle of their own, which the
    search box reads too. Pagefind has no incremental mode, and indexing all the pages
    costs seconds, a few of them a hundredth of that. Past NEWER_MOST such pages or half of
    them, or where the index is lost, all are indexed anew. Returns the keys of the pages
    as the main index holds them."""
    folder = urls.pagefind("")
    newer = [u for u, key in indexed.items() if writer.manifest[u][0] != key]
    tree = writer.live.get(folder + TREE)
    too_many = len(newer) > NEWER_MOST or 2 * len(newer) > len(indexed)
    if too_many or not (tree and writer.reuse_tree(folder, tree[0])):
        return write_full_text(writer, list(indexed))
    _write_newer(writer, newer)
    return indexed


NEWER_MOST = 40  # changed pages a build indexes apart, before indexing all anew


def _write_newer(writer: "Writer", page_urls: list[str]) -> None:
    """The bundle of the pages edited since the main index was made, and their list."""
    listing = json.dumps({"pages": page_urls}).encode()
    if not page_urls:
        _write_units(writer, _keyed([(urls.pagefind_newer(), listing)]))
        return
    folder = urls.pagefind_newer("")
    key = _hash(*(u + writer.manifest[u][0] for u in page_urls))
    if writer.reuse_tree(folder, key):
        return
    shutil.rmtree(writer.root / folder.strip("/"), ignore_errors=True)
    _index_full_text(writer, page_urls, folder)
    (writer.root / safe_output_path(urls.pagefind_newer())).write_bytes(listing)
    writer.add_tree(folder, key)


def _index_full_text(writer: "Writer", page_urls: list[str], folder: str) -> None:
    try:
        search.full_text_index(writer.root, page_urls, writer.root / folder.strip("/"))
    except search.FullTextError as exc:
        raise BuildError(str(exc)) from exc


# Writing -----------------------------------------------------------------------------------


# A file's stamp: its size and modification time, as the writer left it. A file deleted,
# truncated or written into since (by hand: the writer never opens a file it made) no longer
# has it, and is made anew rather than published.
Stamp = tuple[int, int]
Entry = tuple[str, Stamp, "check.Facts | None"]  # a file's manifest entry: key, stamp, facts


def _stamp(path: str | Path) -> Stamp:
    st = os.lstat(path)
    return st.st_size, st.st_mtime_ns


class Writer:
    """Makes `root` hold exactly the outputs it is given, touching only what differs."""

    def __init__(
        self,
        root: Path,
        kept: dict,
        live_site: Path | None,
        live: dict,
        others: frozenset[str] = frozenset(),
    ):
        self.root = root
        self._root_prefix = os.fspath(root) + "/"
        self.kept = kept  # url -> [key, stamp, facts] already in root
        self.live_site = live_site
        self.live = live  # url -> [key, stamp, facts] of the live site
        self.others = others  # files in root that are not ours (a host site's): never replaced
        self.manifest: dict[str, Entry] = {}
        self.rendered = 0
        self._last_written: tuple[bytes, str] | None = None

    @property
    def files(self) -> int:
        return sum(1 for url in self.manifest if not url.endswith(TREE))

    @property
    def size(self) -> int:
        """Bytes written (a class attribute named `bytes` would hide the type)."""
        return sum(entry[1][0] for entry in self.manifest.values())

    def write(self, url: str, body: bytes, key: str, facts: "check.Facts | None" = None) -> None:
        """A new file (`facts`: those of `body`, where a worker took them already)."""
        last = self._last_written
        if last is not None and last[0] is body:
            # The same bytes at a second URL (a record's JSON): a hard link is a tenth of
            # the cost of creating and filling a file.
            path = self._create(url, lambda path: os.link(last[1], path))
        else:
            path = self._create(url, lambda path: _write_new(path, body))
        self._last_written = (body, path)
        self.manifest[url] = (key, _stamp(path), facts or check.facts(url, body))
        self.rendered += 1

    def twin(self) -> "Writer":
        """A writer for a worker process: same folder and knowledge, its own manifest."""
        return Writer(self.root, self.kept, self.live_site, self.live, self.others)

    def merge(self, manifest: dict[str, Entry], rendered: int) -> None:
        """What a worker process put into this folder."""
        self.manifest.update(manifest)
        self.rendered += rendered

    def copy(self, url: str, source: Path) -> None:
        """A vendored file, keyed by its bytes (not its time, which differs between two
        installs of the same package): kept, linked from the live site, or copied."""
        key = _digest(source)
        if not self.reuse([url], key):
            path = self._create(url, functools.partial(_copy_new, source))
            body = source.read_bytes() if check.described(url) else b""
            self.manifest[url] = (key, _stamp(path), check.facts(url, body))
            self.rendered += 1

    def reuse(self, url_list: list[str], key: str) -> bool:
        """True when these outputs are already current here, or now linked from the live site.
        A manifest is trusted only for files still there with their stamp: someone may have
        deleted, truncated or written into one since."""
        if _current(self.root, self.kept, url_list, key):
            for url in url_list:
                self.manifest[url] = (key, *self.kept[url][1:])  # its stamp and facts
            return True
        if self.live_site is None or not _current(self.live_site, self.live, url_list, key):
            return False
        try:
            for url in url_list:
                source = self.live_site / safe_output_path(url)
                self._create(url, functools.partial(os.link, source))
        except FileNotFoundError:
            return False  # the live site lost a file since: render it instead
        for url in url_list:
            self.manifest[url] = (key, *self.live[url][1:])
        return True

    def reuse_tree(self, folder: str, key: str) -> bool:
        """A generated folder (Pagefind's) whose key is unchanged: kept or linked."""
        for known in (self.kept, self.live):
            if known.get(folder + TREE, (None,))[0] == key:
                names = [u for u in known if u.startswith(folder) and not u.endswith(TREE)]
                if self.reuse(names, key):
                    self.manifest[folder + TREE] = (key, (0, 0), None)  # no file of its own
                    return True
        return False

    def add_tree(self, folder: str, key: str) -> None:
        """Record a folder a tool wrote, file by file, under one key."""
        for path in sorted((self.root / folder.strip("/")).rglob("*")):
            if path.is_file():
                url = "/" + path.relative_to(self.root).as_posix()
                facts = check.facts(url, path.read_bytes()) if check.described(url) else None
                self.manifest[url] = (key, _stamp(path), facts)
                self.rendered += 1
        self.manifest[folder + TREE] = (key, (0, 0), None)  # no file of its own

    def finish(self) -> None:
        """Remove what the spare held but this site no longer has."""
        for url in self.kept.keys() - self.manifest.keys():
            if not url.endswith(TREE):
                path = self.root / safe_output_path(url)
                path.unlink(missing_ok=True)
                _prune(path.parent, self.root)

    def _create(self, url: str, make: Callable[[str], None]) -> str:
        """Make the file of a URL as a new file: `make` must create it (O_EXCL or link) and
        never open what is there, which may be a hard link to the live site. (Plain string
        paths: pathlib's objects cost more than the system calls, for every file of a site.)"""
        rel = safe_output_path(url)
        if rel in self.others:
            raise OccupiedError(rel, url)
        path = self._root_prefix + rel
        try:
            if url in self.kept:
                with suppress(FileNotFoundError):
                    os.unlink(path)
            try:
                make(path)
            except FileNotFoundError:
                _make_folder(os.path.dirname(path))
                make(path)
            except FileExistsError:  # a file the spare held without knowing it
                os.unlink(path)
                make(path)
        except (NotADirectoryError, IsADirectoryError) as exc:
            raise UnsafeOutputError(
                f"cannot write {url!r}: another output is a file where it needs a folder, "
                f"or a folder where it needs a file ({exc.filename})"
            ) from None
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise UnsafeOutputError(f"cannot write {url!r}: a name in it is too long") from None
        # What root held at this URL is gone: a later reuse must not take the new file for
        # the old one of the same size (a quick rebuild links the live site's files first,
        # then an edit undone asks for the old page back).
        self.kept.pop(url, None)
        return path


def _current(root: Path, known: dict, url_list: list[str], key: str) -> bool:
    """Whether `known` (a manifest of root) has these URLs at this key, and their files are
    there with the stamp it says. (A plain string path: this runs for every output of every
    build, and pathlib's objects cost more than the lstat.)"""
    base = os.fspath(root) + "/"
    for url in url_list:
        entry = known.get(url)
        if entry is None or entry[0] != key:
            return False
        try:
            st = os.lstat(base + safe_output_path(url))
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != entry[1]:
            return False
    return True


def damaged(root: Path, known: "Keys", url_list: Iterable[str]) -> list[str]:
    """The URLs among these whose files in root are gone or not as `known` stamped them.
    (Relative to the root's open folder: a site's 78,000 lstats in half the time. Only
    looked at, never written, so the output path needs no check of where it leads.)"""
    found = []
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for url in url_list:
            try:
                st = os.lstat(urls.output_path(url), dir_fd=folder)
            except OSError:
                found.append(url)
                continue
            if (st.st_size, st.st_mtime_ns) != known[url][1]:
                found.append(url)
    finally:
        os.close(folder)
    return found


def _digest(path: Path) -> str:
    st = path.stat()
    return _file_digest(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    """A file's hash, read once per process while its size and time stay (serve rebuilds
    would otherwise read Pyodide's 13 MB on every edit)."""
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha1").hexdigest()


class UnsafeOutputError(BuildError):
    """An output path that would leave the site folder: a bug or hostile content."""


class OccupiedError(BuildError):
    """An output whose file is someone else's: a host site's page or file."""

    def __init__(self, path: str, url: str):
        super().__init__(path, url)  # as they are: a worker's error is pickled to the build
        self.path, self.url = path, url

    def __str__(self) -> str:
        return f"cannot write {self.url!r}: {self.path} is not errorkb's file"


def safe_output_path(url: str) -> str:
    """The file of a URL relative to the site root, refused unless it stays inside it: the
    second wall behind content validation, checked on every file the writer touches."""
    path = urls.output_path(url)
    parts = path.split("/")
    if "\0" in path or "\\" in path or any(part in ("", ".", "..") for part in parts):
        raise UnsafeOutputError(f"refusing to write {url!r}: its path would leave the site folder")
    return path


def _copy_new(source: Path, path: str | Path) -> None:
    """A new file with the source's bytes, copied by the kernel where it can (Pyodide's
    13 MB, read into Python and written back, were a quarter of a small site's build). A
    copy, not a link: a site goes to hosts that refuse hard links (GitHub Pages)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(source, "rb") as src:
            if not _kernel_copy(src.fileno(), fd):
                os.lseek(fd, 0, os.SEEK_SET)  # from the start, whatever it copied
                os.ftruncate(fd, 0)
                src.seek(0)
                _write_all(fd, src.read())
    except OSError as exc:  # a full disk, say: name the file
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(fd)


def _kernel_copy(src: int, dst: int) -> bool:
    """Copy one open file into another within the kernel; False where it cannot (not
    Linux, or file systems it cannot copy between)."""
    copy_range = getattr(os, "copy_file_range", None)
    if copy_range is None:
        return False
    try:
        while copy_range(src, dst, 1 << 30):
            pass
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
            return False
        raise
    return True


def _write_all(fd: int, body: bytes) -> None:
    view = memoryview(body)
    while view:
        view = view[os.write(fd, view) :]


def _write_new(path: str | Path, body: bytes) -> None:
    """A new file with these bytes, in three system calls (Python's open() adds a stat, a
    seek and a terminal check to each of the site's tens of thousands of files). O_EXCL: an
    existing file, perhaps linked to the live site, is never written into."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _write_all(fd, body)
    except OSError as exc:  # a full disk, say: os.write's error names no file, so name it
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(fd)


def _make_folder(path: str) -> None:
    """A file's folder, its parents too where missing: one system call where only the
    folder is (a record's), where os.makedirs first asks after its parent."""
    try:
        os.mkdir(path)
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        pass  # made since, by another output: whether it is a folder, the next call says


def _prune(folder: Path, root: Path) -> None:
    """Remove folders left empty, up to the site root."""
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


# Manifests -------------------------------------------------------------------------------


def _manifests(out: Path) -> Path:
    """The folder of the manifests of a site and its spare, beside them (ignored as .site-*)."""
    return out.parent / f".{out.name}-manifests"


def _manifest_path(folder: Path, out: Path) -> Path | None:
    """Where the manifest of a site folder lives: named after the folder's inode, which a
    rename keeps, so each manifest stays with its folder through the swap. It is two parts:
    this file, each URL's key and size, and beside it (FACTS) the facts of the pages, in
    shards by URL, which a quick rebuild links from the live site's but for the few it
    changed (the facts are four fifths of the bytes)."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    return _manifests(out) / f"{st.st_dev}-{st.st_ino}.keys"


# The facts of a manifest, in shards a quick rebuild reads and writes only where it changed
# pages: 64 shards of the real content's were 480 KB each, 90 ms of JSON per edit. The
# folder's name counts them, so that no build mixes shards of two counts.
FACT_SHARDS = 256
FACTS = f".facts{FACT_SHARDS}"  # the folder, beside the manifest's keys


def _fact_shard(url: str) -> int:
    return zlib.crc32(url.encode()) % FACT_SHARDS


def _read_manifest(folder: Path, out: Path) -> dict[str, list]:
    """url -> [key, stamp, facts] of the files a site folder holds (empty: none known)."""
    keys = _read_keys(folder, out)
    path = _manifest_path(folder, out)
    if not keys or path is None:
        return {}
    facts: dict = {}
    shards = path.with_suffix(FACTS)
    try:  # a shard no page falls in has no file (a small site fills a few of them)
        for name in os.listdir(shards):
            facts.update(orjson.loads((shards / name).read_bytes()))
    except (OSError, ValueError):
        return {}  # half-made: trust none of its files
    # A page without its facts is made anew (a manifest of a build from before facts).
    found = ((url, entry, facts.get(url)) for url, entry in keys.items())
    return {
        url: [*entry, f] for url, entry, f in found if f is not None or not check.described(url)
    }


def _read_keys(folder: Path, out: Path) -> "Keys":
    """url -> (key, stamp) of the files a site folder holds (empty: none known)."""
    return _read_keys_file(folder, out)[0]


# A keys file: marshal of (keys, spare). `keys`: url -> (key, stamp). `spare`: how the folder
# the build swapped out (the spare from then on) differs, so that the next quick rebuild need
# not read its manifest: (the stamp of its keys file, {url: its (key, stamp), None where it
# has no file}), or None.
Keys = dict[str, tuple[str, Stamp]]
Delta = dict[str, tuple[str, Stamp] | None]  # url -> another folder's entry, None: no file
SpareDelta = tuple[tuple, Delta] | None


def _read_keys_file(folder: Path, out: Path) -> tuple[Keys, SpareDelta]:
    """The keys of a site folder's manifest, and how its spare differs (empty, None: not
    known)."""
    path = _manifest_path(folder, out)
    try:
        data = marshal.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError, EOFError, TypeError):
        return {}, None  # no site there, or a half-made one: trust none of its files
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], dict):
        return data
    return (data, None) if isinstance(data, dict) else ({}, None)  # a plain dict: older


def _keys_stamp(folder: Path, out: Path) -> tuple:
    """The keys file of a site folder's manifest (each build writes a new one); empty where
    there is none (a copied site's folders are not the inodes its manifests are named after)."""
    path = _manifest_path(folder, out)
    try:
        st = os.stat(path) if path else None
    except FileNotFoundError:
        return ()
    return (str(path), st.st_ino, st.st_mtime_ns, st.st_size) if st else ()


def _differences(keys: dict, other: dict) -> Delta:
    """url -> other's (key, stamp), or None where other has no such URL, for each URL at which
    the two differ. An entry that is other's own object is equal unlooked at: a quick
    rebuild's manifest is a copy of the live site's but for what it changed."""
    delta: Delta = {}
    for url, entry in keys.items():
        was = other.get(url)
        if was is not entry and (was is None or tuple(was[:2]) != tuple(entry[:2])):
            delta[url] = None if was is None else (was[0], was[1])
    for url in other.keys() - keys.keys():
        delta[url] = (other[url][0], other[url][1])
    return delta


def _save_manifest(
    folder: Path,
    out: Path,
    manifest: dict,
    like: Path | None = None,
    changed: frozenset[str] | set[str] = frozenset(),
    replaced: Keys | None = None,
) -> None:
    """The manifest of a folder, written facts first (the keys say the facts are whole). With
    `like`: a folder whose manifest's facts are this one's but for the `changed` URLs'.
    `replaced`: the keys of the live site this folder replaces, whose differences from this
    one it keeps (the next quick rebuild's spare)."""
    path = _manifest_path(folder, out)
    assert path is not None, "the folder a build wrote exists"
    path.parent.mkdir(exist_ok=True)
    facts_dir = path.with_suffix(FACTS)
    new_dir = path.with_suffix(FACTS + ".new")
    shutil.rmtree(new_dir, ignore_errors=True)
    new_dir.mkdir()
    shards: dict[int, dict] = {}
    if like is None:
        shards = {n: {} for n in range(FACT_SHARDS)}
        for url, entry in manifest.items():
            if len(entry) > 2 and entry[2] is not None:
                shards[_fact_shard(url)][url] = entry[2]
    else:
        known = _manifest_path(like, out)
        assert known is not None, "the folder whose facts are shared exists"
        source = known.with_suffix(FACTS)
        touched = {_fact_shard(url) for url in changed if check.described(url)}
        for n in range(FACT_SHARDS):
            shard = source / str(n)
            held = shard.exists()  # a shard no page falls in has no file
            if n not in touched:
                if held:
                    os.link(shard, new_dir / str(n))
                continue
            facts = orjson.loads(shard.read_bytes()) if held else {}
            for url in (u for u in changed if check.described(u) and _fact_shard(u) == n):
                entry = manifest.get(url)
                facts.pop(url, None)
                if entry is not None and len(entry) > 2 and entry[2] is not None:
                    facts[url] = entry[2]
            shards[n] = facts
    for n, facts in shards.items():
        if facts:
            _write_new(new_dir / str(n), orjson.dumps(facts, default=list))  # Facts: tuples
    shutil.rmtree(facts_dir, ignore_errors=True)
    new_dir.rename(facts_dir)
    if like is None:
        keys = {url: (entry[0], entry[1]) for url, entry in manifest.items()}
    else:  # only the changed URLs' entries hold facts: the others' are like's
        keys = dict(manifest)
        keys.update((url, manifest[url][:2]) for url in changed if url in manifest)
    spare: SpareDelta = None
    if replaced and (stamp := _keys_stamp(out, out)):
        spare = (stamp, _differences(keys, replaced))
    temporary = path.with_suffix(".new")
    temporary.unlink(missing_ok=True)
    _write_new(temporary, marshal.dumps((keys, spare)))
    temporary.replace(path)


def _forget_manifest(spare: Path, out: Path) -> None:
    """The spare is about to change: its manifest no longer tells what it holds."""
    path = _manifest_path(spare, out)
    if path:
        path.unlink(missing_ok=True)
        shutil.rmtree(path.with_suffix(FACTS), ignore_errors=True)


def _prune_manifests(out: Path) -> None:
    """Only the manifests of the site and its spare stay: a folder deleted by hand must not
    lend its manifest to a new folder that gets its inode number."""
    keep = {_manifest_path(out, out), _manifest_path(_spare_path(out), out)}
    keep |= {p.with_suffix(FACTS) for p in keep if p is not None}
    folder = _manifests(out)
    if folder.is_dir():
        for path in folder.iterdir():
            if path in keep or path.name == QUICK_STATE:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


QUICK_STATE = "quick.marshal"  # what the quick rebuild keeps (quick.py), beside the manifests


class NotOurSiteError(BuildError):
    """The output folder holds files that no errorkb build wrote."""


def _own_site(out: Path) -> dict[str, list]:
    """The manifest of the live site; refuses a folder errorkb did not build, which the swap
    would park as the spare and the next build delete."""
    path = _manifest_path(out, out)
    legacy = path is not None and path.with_suffix(".json").is_file()  # before keys and facts
    _prune_manifests(out)
    manifest = _read_manifest(out, out)
    if manifest or _read_keys(out, out) or legacy or (out / LEGACY_MANIFEST).is_file():
        return manifest  # built by errorkb (an older one, perhaps, without the marker)
    try:
        owned.refuse_unless_ours(out, "the built site", "--out")
    except owned.NotOursError as exc:
        raise NotOurSiteError(str(exc)) from None
    return {}


def load_assets(templates: Path, content: Content) -> dict[str, bytes]:
    """Front-end files from templates/assets, with the code-highlighting CSS appended, and
    what the projects' wings add (a calculator's module and data)."""
    assets = {}
    for path in sorted((templates / "assets").iterdir()):
        if path.is_file():
            assets[path.name] = path.read_bytes()
    css = assets.get("style.css", b"").decode() + markup.pygments_css()
    assets["style.css"] = _compact_css(css).encode()
    for name in [n for n in assets if n.endswith(".css") and n != "style.css"]:
        assets[name] = _compact_css(assets[name].decode()).encode()
    for name in [n for n in assets if n.endswith(".js")]:
        assets[name] = _compact_js(assets[name].decode()).encode()
    for project_wing in wings(content.projects.values()):
        assets.update(project_wing.assets(content, assets))
    return assets


@functools.lru_cache(maxsize=64)  # a server or a test process builds many times
def _compact_js(js: str) -> str:
    """Our scripts without whole-line comments and indentation. A script with a template
    literal spanning lines (odd backticks on a line) is left whole: its lines are data."""
    lines = js.splitlines()
    if any(line.count("`") % 2 for line in lines):
        return js
    kept = (_tight(_uncommented(line.strip())) for line in lines)
    return "\n".join(line for line in kept if line and not line.startswith("//")) + "\n"


# A string literal of a line: "...", '...' or `...` (a template literal on one line).
_JS_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`(?:[^`\\]|\\.)*`')
# Spaces code needs not: before a block's brace, around `=>`, `=`, `===`, `!==` and the
# compound assignments, after a comma, a colon or a semicolon.
_LOOSE = re.compile(
    r"(?<=[)\]}>]) (?=\{)|(?<=\}) (?=else\b)|(?<=\belse) (?=\{)| (?==>)|(?<==>) "
    r"|(?<=[=!]==) | (?=[=!]==)|(?<=[^=!<>]=) (?!=)|(?<=,) |(?<=[:;]) (?=[^ ])"
    r"| (?=[-+*]?=[^=>])"
)


def _tight(line: str) -> str:
    """A line of code without the spaces it needs not, outside its string literals. A line
    with a slash (a regular expression, a division, a comment) or a string left open is
    left as it is: telling those apart takes a parser."""
    if "/" in line:
        return line
    parts, last = [], 0
    for found in _JS_STRING.finditer(line):
        parts += [_LOOSE.sub("", line[last : found.start()]), found.group(0)]
        last = found.end()
    rest = line[last:]
    if any(quote in rest for quote in "\"'`"):
        return line
    return "".join(parts) + _LOOSE.sub("", rest)


# A comment after a statement: "//" after a closing mark and spaces, outside any string.
_TRAILING_COMMENT = re.compile(r"(?<=[;{},)\]])\s+// .*$")


def _uncommented(line: str) -> str:
    found = _TRAILING_COMMENT.search(line)
    if found is None:
        return line
    before = line[: found.start()]
    if any(before.count(quote) % 2 for quote in "\"'`"):  # the "//" may be in a string
        return line
    return before


@functools.lru_cache(maxsize=8)
def _compact_css(css: str) -> str:
    """Our stylesheet without comments, indentation, or spaces around its punctuation and
    after a declaration's colon: the bytes every visitor pays for. (Safe for our CSS: no
    string in it holds a comment marker, a run of spaces beside punctuation or a colon and a
    space; a space before a colon, as in `main :not(pre)`, is kept.)"""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = "\n".join(line.strip() for line in css.splitlines() if line.strip()) + "\n"
    css = re.sub(r":[ \t]+", ":", re.sub(r"[ \t]*([{};,>])[ \t]*", r"\1", css))
    # A line break after punctuation or before a closing brace is no separator; any other
    # (inside a value or a selector) is one space.
    return re.sub(r"(?<=[{};,>])\n|\n(?=})", "", css).replace("\n", " ").strip() + "\n"


def _spare_path(out: Path) -> Path:
    return out.parent / f".{out.name}-spare"


def _spare(out: Path, live: Keys | None = None, delta: Delta | None = None) -> tuple[Path, dict]:
    """The folder to build in and what it holds: the spare site, or a fresh folder. What it
    holds: with its pages' facts; with the `live` site's keys, only keys and sizes, those
    patched by `delta` where it is known how the spare differs, else read."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(out.parent)
    spare = _spare_path(out)
    kept: dict
    if live is None:
        kept = _read_manifest(spare, out)
    else:
        kept = _read_keys(spare, out) if delta is None else _patched(live, delta)
    if spare.exists() and not kept:
        try:  # a folder of that name that errorkb did not make is someone's: never deleted
            owned.refuse_unless_ours(spare, f"the spare copy of {out}", "--out")
        except owned.NotOursError as exc:
            raise NotOurSiteError(str(exc)) from None
        _discard(spare)  # half-made by a killed build: unknown content
    spare.mkdir(exist_ok=True)
    owned.mark(spare, "a site errorkb builds, or its spare copy")
    _forget_manifest(spare, out)  # from here on, the spare is being changed
    return spare, kept


def _patched(keys: Keys, delta: Delta) -> Keys:
    """Keys changed as `delta` says (_differences): a 5 MB read and a comparison of 78,000
    entries fewer for a quick rebuild of the real content."""
    patched = dict(keys)
    for url, entry in delta.items():
        if entry is None:
            patched.pop(url, None)
        else:
            patched[url] = entry
    return patched


@contextmanager
def _locked(out: Path, log=None):
    """One build at a time per site: they share the spare folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}-lock", "w") as lock:  # ignored as .site-*
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if log:
                log(f"waiting for another build of {out} to finish")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _remove_abandoned(parent: Path) -> None:
    """Discarded folders whose deleting process is gone."""
    for path in parent.iterdir():
        pid = path.name.removeprefix(OLD_PREFIX).split("-")[0]
        if path.name.startswith(OLD_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _discard(folder: Path) -> None:
    """Move a folder aside and delete it in the background, off the build's path."""
    parked = folder.parent / f"{OLD_PREFIX}{os.getpid()}-{time.time_ns()}"
    folder.rename(parked)
    rm = shutil.which("rm")
    if rm is None:
        shutil.rmtree(parked)
        return
    subprocess.Popen(
        [rm, "-rf", "--", str(parked)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _swap_in(spare: Path, out: Path) -> None:
    """The finished spare becomes the site; the site it replaces becomes the spare."""
    if not out.exists():
        spare.rename(out)
    elif not _exchange(spare, out):
        parked = out.parent / f"{OLD_PREFIX}{os.getpid()}-{time.time_ns()}"
        out.rename(parked)
        spare.rename(out)
        parked.rename(spare)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))

"""The build: content -> every output of the site, each keyed by what it is made from.

Every output has a key, a hash of everything it is made from; an output whose key the
spare or the live site already holds is kept or linked, the rest rendered. What is written
is published through publish.py's one step (the spare, its manifest, the swap): a failed or
killed build never touches the live site.

On a big site, forked workers make the outputs drawn from many records (search index,
lists, file pages) while the parent keys the record pages, and render those when many
changed.
"""

import ctypes
import functools
import gc
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from errorkb import resources, urls
from errorkb.content.load import ParseCache, fork_workers, load_content
from errorkb.content.model import Content, Record
from errorkb.content.successors import successors
from errorkb.progress import QUIET, Progress
from errorkb.registry import wings
from errorkb.search import index as search_index
from errorkb.site import api, cards, check, markup, paging, publish, shortlinks
from errorkb.site.linking import Links, link
from errorkb.site.pages import Pages, SitePart
from errorkb.site.publish import TREE, BuildError, Entry, Writer, safe_output_path
from errorkb.site.shows import BASE, CODE, Shows, guide, key_of, made_every_build

CACHE_DIR = ".errorkb-cache"  # parsed records between builds, beside content/
PARALLEL_MIN = 400  # records to render before forking workers pays for itself
PAGE, CARD = "page", "card"  # the parts of a record's outputs, keyed apart


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
    # What the outputs of many records declare (Listed): record id -> those that show it in
    # full, and as a row or one of a source file's (Listed.inverse); URL -> what it lists
    # (Listed.forward)
    listed: "Declarations | None" = None


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
    with collector_paused():
        plan = plan or load_plan(root, cache, progress, project)
        content = plan.content
        with publish.locked(out, log):
            with publish.publishing(out, publish.open_spare(out)) as writer:
                listed = Listed()
                indexed = write_site(writer, plan, progress, indexed, listed)
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
        (*listed.inverse(plan), listed.forward()),
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
    with collector_paused():
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
    plan: "Plan", manifest: dict[str, Entry], site: Path, progress: Progress = QUIET
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


@contextmanager
def collector_paused():
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
    listed: "Listed | None" = None,
) -> dict[str, str] | None:
    """Every output of the site, into the writer's folder, and its manifest; returns the
    pages the full-text index holds, by their keys then (write_full_text); into `listed`,
    what the outputs of many records declare they show. When many
    records changed, workers make the outputs drawn from many records while the records
    are written; after an edit of a few, forking them would cost more than it saves (each
    worker reads the whole plan, copying the pages it touches)."""
    todo = _stale_records(writer, plan, progress)
    with _workers(plan, writer, len(todo)) as pool:
        if pool is None:
            for produce in plan.producers().values():
                write_units(writer, produce(), listed)
        else:
            shared = [pool.apply_async(_produce_in_worker, (name,)) for name in plan.producers()]
        _write_records(writer, plan, todo, pool, progress)
        if pool is not None:
            progress.stage("pages of many records", len(shared))
            for done in shared:
                manifest, rendered, declared = done.get()
                writer.merge(manifest, rendered)
                if listed is not None:
                    listed.declared += declared
                progress.advance()
    for url, source in plan.vendored:
        writer.copy(url, source)
    if plan.full_text:
        progress.stage("full-text index")
        indexed = write_full_text(writer, full_text_pages(plan.content), indexed)
    return indexed if plan.full_text else None


def write_units(writer: "Writer", units: Iterable["Unit"], listed: "Listed | None" = None) -> None:
    """Outputs of one kind: rendered where their key changed, else kept or linked; those
    that show records, declared into `listed`."""
    for unit in units:
        if listed is not None:
            listed.add(unit)
        if not writer.reuse([unit.url], unit.key):
            writer.write(unit.url, unit.body(), unit.key)


# What the outputs of many records declare, as Listed keeps it: record id -> the URLs of
# those that show it in full; record id -> those that show it as a row or list it; URL ->
# the ids it shows as rows or lists, in its order, and its args.
Declarations = tuple[
    dict[str, list[str]], dict[str, list[str]], dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
]


class Listed:
    """What the outputs of many records (the producers') declare they show of records."""

    def __init__(self) -> None:
        self.declared: list[tuple[str, Shows]] = []

    def add(self, unit: "Unit") -> None:
        shows = unit.shows
        if shows.full or shows.rows or shows.files or shows.lists:
            self.declared.append((unit.url, shows))

    def inverse(self, plan: "Plan") -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """record id -> the URLs of the outputs that show it in full; record id -> those
        that show it as a row, as one of a source file's records, or list it. One URL is
        one object in all its lists: marshal writes it once."""
        by_file = plan.links.by_file
        full: dict[str, list[str]] = {}
        rows: dict[str, list[str]] = {}
        for url, shows in self.declared:
            for rid in shows.full:
                full.setdefault(rid, []).append(url)
            ids = [*shows.rows, *shows.lists]
            ids += [r.id for project, path in shows.files for r in by_file[project][path]]
            for rid in dict.fromkeys(ids):
                rows.setdefault(rid, []).append(url)
        return full, rows

    def forward(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """URL -> the ids of the records it shows as rows or lists, in its order (what the
        quick rebuild renders a listing again from, with the rows kept), and its args."""
        return {url: ((*shows.rows, *shows.lists), shows.args) for url, shows in self.declared}


@dataclass(frozen=True)
class Unit:
    """One output: where it goes, the key of what it is made from (key_of what it shows),
    its bytes or how to make them (called only when the file at its URL has another key),
    and what it shows. The writer takes its facts from the bytes, and keeps them with the
    key."""

    url: str
    key: str
    made: bytes | Callable[[], bytes]
    shows: Shows

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
        known: "tuple[dict[str, str], str] | None" = None,
    ):
        """`known`: the vendored files' digests and the base key, as a full build of the
        whole content worked them out (the quick rebuild's plan holds a few records)."""
        self.content = content
        self.links = links
        self.assets = assets
        self.code_key = code_key or code_digest()
        # Third-party files the wings ship, copied as they are; the service worker keeps
        # them under a cache named after their digests. Wings may share one (Pyodide). A
        # plan of a few records (`known`) copies none: the full build did.
        self.vendored: list[tuple[str, Path]] = []
        if known is None:
            shipped = {
                url: source
                for w in wings(content.projects.values())
                for url, source in w.vendored(content.root)
            }
            self.vendored = sorted(shipped.items())
            digests = {url: publish.digest(source) for url, source in self.vendored}
            known = digests, _base_key(content, assets, self.code_key)
        digests, self.base_key = known
        compiled = content.root / CACHE_DIR / "templates"
        self.pages = Pages(content, links, assets, compiled, vendored=digests)

    def record_shows(self, record: Record) -> Shows:
        """What the record's page and document show: the record in full, and the record
        that took over from it (the last of its successors, printed today: its prose answers
        on the page of an old wording); as rows, the records whose source is its file (the
        nearest of them are shown, and how many there are), its related records, twins and
        successors; its guides. Declaring the whole file rather than the few shown costs a
        few pages more per edit and saves working out the nearest for each of 10,000
        records on every build."""
        links = self.links
        chain = successors(self.content, record)
        linked = [
            *links.related[record.id],
            *links.referenced_by.get(record.id, []),
            *links.twins.get(record.id, []),
            *chain,
        ]
        live = chain[-1] if chain and chain[-1].status != "removed" else None
        return Shows(
            full=(record.id, live.id) if live else (record.id,),
            rows=tuple(r.id for r in linked),
            files=((record.project, record.location.path),),
            names=(BASE, *(guide(g.slug) for g in links.guides.get(record.id, []))),
        )

    def record_key(self, record: Record) -> str:
        return self.key_of(self.record_shows(record))

    def key_of(self, shows: Shows) -> str:
        """The key of an output that shows this (shows.key_of, with the plan's digests)."""
        return key_of(shows, self)

    # The digests key_of reads (shows.Digests).
    kept_rows: Mapping[str, str] = {}  # id -> outward of records the plan does not hold

    def named(self, name: str) -> str:
        return self.globals[name]

    def full(self, rid: str) -> str:
        return self.content.records[rid].source.digest

    def row(self, rid: str) -> str:
        record = self.content.records.get(rid)
        return record.outward if record is not None else self.kept_rows[rid]

    def file(self, project: str, path: str) -> str:
        return self.file_keys[project, path]

    @cached_property
    def globals(self) -> dict[str, str]:
        """The digest of each global an output may show, by name."""
        found = {BASE: self.base_key, CODE: self.code_key}
        found.update((guide(g.slug), f"{g.slug} {g.title}") for g in self.content.guides)
        return found

    def unit(self, url: str, shows: Shows, made: bytes | Callable[[], bytes]) -> Unit:
        """An output that shows this, keyed by what it shows."""
        return Unit(url, self.key_of(shows), made, shows)

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
        for part in search_index.site_index_parts(self.content, self.code_key):
            yield self.patterns_unit(*part)

    def patterns_unit(
        self, url: str, key: str, made: bytes | Callable[[], bytes], rows: tuple[str, ...]
    ) -> Unit:
        """A file of the search index, keyed as search_index makes its key (by its records'
        rows and its words' weights, or by its bytes) and the code; a page of patterns
        declares the records it lists (their rows are in its key already)."""
        return self.unit(url, Shows(names=(CODE,), args=(key,), lists=rows), made)

    def site_pages(self) -> Iterable[Unit]:
        """Keyed by what each is made from, made only when that changed."""
        return map(self.site_page, self.pages.site_page_parts())

    def site_page(self, part: SitePart) -> Unit:
        """A page Pages makes, keyed by what it is made from and what every page is; one
        that lists records declares them (what it shows of each is in its key)."""
        url, key, made, listed = part
        return self.unit(url, Shows(names=(BASE,), args=(key,), lists=listed), made)

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
                shows = self.project_page_shows(project, len(records), [r.id for r in listed])
                yield self.unit(url, shows, functools.partial(_one_of, pages, url))
        yield from self.keyed(api.site_api_files(content, links))

    def project_page_shows(self, project: str, count: int, ids: list[str]) -> Shows:
        """A page of a project's document: how many records the project has, and those
        the page lists, as rows."""
        return Shows(rows=tuple(ids), names=(BASE,), args=(project, str(count)))

    def alias_document(self, alias: str) -> Unit:
        """The document of a record's former id: the record's, keyed as its page."""
        record = self.content.records[self.content.aliases[alias]]
        made = functools.partial(api.alias_file, self.content, self.links, alias)
        shows = self.record_shows(record)
        return self.unit(urls.error_json(alias), replace(shows, args=(alias,)), made)

    def file_pages(self) -> Iterable[Unit]:
        for project, files in self.links.raised_in.items():
            for path in files:
                yield self.file_page(project, path)

    def file_page(self, project: str, path: str) -> Unit:
        """A source file's page, keyed by the records it shows."""
        entries = self.links.raised_in[project][path]
        shows = Shows(rows=tuple(r.id for r, _ in entries), names=(BASE,), args=(project, path))
        render = functools.partial(self.pages.source_file, project, path)
        return self.unit(urls.source_file(project, path), shows, render)

    def asset_files(self) -> Iterable[Unit]:
        return self.keyed((urls.asset(name), body) for name, body in sorted(self.assets.items()))

    def shared_cards(self) -> Iterable[Unit]:
        """The cards links to a project's pages of one kind share, keyed by what they show."""
        for url, card in cards.shared_cards(self.content):
            yield self.unit(url, Shows(args=(card.key,)), functools.partial(cards.draw, card))

    def keyed(self, outputs: Iterable[tuple[str, bytes]]) -> Iterable[Unit]:
        return (every_build(url, body) for url, body in outputs)

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


def every_build(url: str, body: bytes) -> Unit:
    """An output rendered every build, keyed by its bytes: written only when changed."""
    shows = made_every_build(hashlib.sha1(body).hexdigest())
    return Unit(url, key_of(shows), body, shows)


def _hash(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


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


def _produce_in_worker(name: str) -> tuple[dict, int, list[tuple[str, Shows]]]:
    """In a worker: write the outputs of one producer; report their manifest entries."""
    plan, writer = _forked()
    local = writer.twin()
    listed = Listed()
    write_units(local, plan.producers()[name](), listed)
    return local.manifest, local.rendered, listed.declared


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
        write_units(writer, [every_build(urls.pagefind_newer(), listing)])
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
        search_index.full_text_index(writer.root, page_urls, writer.root / folder.strip("/"))
    except search_index.FullTextError as exc:
        raise BuildError(str(exc)) from exc


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
# compound assignments, after a comma, a colon or a semicolon; inside braces; between a
# keyword and its parenthesis or block; around `? :` (a condition), `??`, `||` and `&&`.
_LOOSE = re.compile(
    r"(?<=[)\]}>]) (?=\{)|(?<=\}) (?=(?:else|catch|finally)\b)|(?<=\belse) (?=\{)"
    r"|(?<=\btry) (?=\{)|(?<=\bfinally) (?=\{)|(?<=\bcatch) (?=[({])"
    r"|(?<=\bif) (?=\()|(?<=\bfor) (?=\()|(?<=\bwhile) (?=\()|(?<=\bswitch) (?=\()"
    r"|(?<=\{) (?=[^ ])|(?<=[^ ]) (?=\})"
    r"| (?=(?:\?\?|\|\||&&|[?:]) )|(?<= \?\?) |(?<= \|\|) |(?<= &&) |(?<= [?:]) "
    r"| (?==>)|(?<==>) "
    r"|(?<=[=!]==) | (?=[=!]==)|(?<=[^=!<>]=) (?!=)|(?<=,) |(?<=[:;]) (?=[^ ])"
    r"| (?=[-+*]?=[^=>])"
)


def _tight(line: str) -> str:
    """A line of code without the spaces it needs not, outside its string literals. A line
    with a slash outside its string literals (a regular expression, a division, a comment)
    or a string left open is left as it is: telling those apart takes a parser."""
    parts, last = [], 0
    for found in _JS_STRING.finditer(line):
        code = line[last : found.start()]
        if "/" in code:
            return line
        parts += [_LOOSE.sub("", code), found.group(0)]
        last = found.end()
    rest = line[last:]
    if "/" in rest or any(quote in rest for quote in "\"'`"):
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
    space; a space before a colon, as in `main :not(pre)`, is kept. A number's leading zero
    goes too: `0.9rem` is `.9rem`; no selector or string of ours holds one. A block's last
    declaration needs no semicolon: no string of ours holds `;}`.)"""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = "\n".join(line.strip() for line in css.splitlines() if line.strip()) + "\n"
    css = re.sub(r":[ \t]+", ":", re.sub(r"[ \t]*([{};,>])[ \t]*", r"\1", css))
    css = re.sub(r"(?<=[\s:,(/-])0\.(?=\d)", ".", css)
    # A line break after punctuation or before a closing brace is no separator; any other
    # (inside a value or a selector) is one space.
    css = re.sub(r"(?<=[{};,>])\n|\n(?=})", "", css).replace("\n", " ").strip() + "\n"
    return css.replace(";}", "}")

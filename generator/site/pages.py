"""Rendering HTML pages and the site-level text files through the Jinja templates."""

import functools
import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, nodes, select_autoescape
from jinja2.bccache import Bucket
from jinja2.ext import Extension
from markupsafe import Markup

from errorkb import resources, urls
from errorkb.content import template
from errorkb.content.model import Content, Guide, Project, Record
from errorkb.content.successors import live_successor, release_key
from errorkb.registry import wing, wings
from errorkb.site import api, cards, markup, offline, shortlinks
from errorkb.site.linking import Links, by_folder, resolve

RECENT_COUNT = 20
FEED_COUNT = 50
INDEX_COUNT = 12  # the project page's first list: the errors to read first
TAG_COUNT = 16  # the project page's kinds: its most used tags

# No inline script or style anywhere; WebAssembly for Pyodide and Pagefind; nothing may
# frame the site. The one statement of the policy: `serve` sends it, _headers carries it,
# and every page's <meta> for hosts that ignore _headers.
_POLICY = [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
]
CONTENT_SECURITY_POLICY = "; ".join(_POLICY)
# Browsers ignore frame-ancestors (and report-uri, sandbox) in a <meta> policy.
META_POLICY = "; ".join(d for d in _POLICY if not d.startswith("frame-ancestors"))


def _headers() -> tuple[tuple[str, dict[str, str]], ...]:
    """Response headers by URL pattern, in the _headers order: every pattern that matches
    applies. (Made when asked: the URLs are the site's, below its path.)"""
    return (
        (urls.home() + "*", {"Content-Security-Policy": CONTENT_SECURITY_POLICY}),
        (urls.api() + "*", {"Access-Control-Allow-Origin": "*"}),
    )


def headers_for(path: str) -> dict[str, str]:
    """The headers a host sends with the file at this URL path."""
    out = {}
    for pattern, headers in _headers():
        splat = pattern.endswith("*")
        if path == pattern or (splat and path.startswith(pattern[:-1])):
            out.update(headers)
    return out


def headers_file() -> bytes:
    """/_headers, in the format Netlify and Cloudflare Pages read."""
    lines = []
    for pattern, headers in _headers():
        lines.append(pattern)
        lines += [f"  {name}: {value}" for name, value in headers.items()]
    return ("\n".join(lines) + "\n").encode()


Part = bytes | Callable[[], bytes]  # a file's bytes, or how to make them
# A page as site_page_parts makes it: (URL, key, bytes or how to make them, the ids of the
# records it shows as rows: their titles, summaries, what Record.outward covers)
SitePart = tuple[str, str, Part, tuple[str, ...]]
SITEMAP_URLS = 50_000  # the most one sitemap file may list (sitemaps.org)


class Pages:
    def __init__(
        self,
        content: Content,
        links: Links,
        assets: dict[str, bytes],
        compiled: Path | None = None,  # a folder keeping compiled templates between builds
        vendored: dict[str, str] | None = None,  # third-party files' URLs -> their digests
    ):
        self.content = content
        self.links = links
        self.wings = wings(content.projects.values())
        self.asset_names = sorted(assets)
        self.vendored = vendored or {}
        self.env = environment(resources.templates(content.root), content, assets, compiled)

    def render(self, name: str, **context) -> bytes:
        return self.env.get_template(name).render(**context).encode()

    def page(self, name: str, url: str, title: str, description: str, **context) -> bytes:
        page = {
            "url": url,
            "title": title,
            "description": description,
            "og_type": context.pop("og_type", "website"),
            "image": context.pop("image", None),  # its og:image: url, width, height
        }
        return self.render(name, page=page, **context)

    def error(self, record: Record, doc: dict) -> bytes:
        site = self.content.site
        report = urls.github_new_issue(
            site["repo"],
            f"[{record.id}] {record.title}",
            f"Record: {record.path}\n\nWhat is wrong or missing:\n",  # the title names the page
        )
        # The page of an old wording answers with the check printed today that took over:
        # its explanation, solutions, Your case and calculator, rendered from its record.
        live = live_successor(self.content, record)
        answer = api.answer_document(live, self.content) if live is not None else None
        # Link previews: a person's summary, else our explanation, never raw {placeholders}.
        explained = (live or record).derived.get("explanation", "").replace("`", "")
        description = (
            doc.get("summary")
            or (live and live.summary)
            or explained
            or template.elided(record.message)
        )
        return self.page(
            "error.html",
            urls.error(record.id),
            record.title,
            description,
            og_type="article",
            image={
                "url": cards.image(record, self.content)[0],
                "width": cards.WIDTH,
                "height": cards.HEIGHT,
            },
            doc=doc,
            answer=answer,
            report_url=report,
            extra=self.extra_section(live or record),
        )

    def extra_section(self, record: Record) -> dict | None:
        """What the record's project adds to its page (a calculator, say); for a stack
        record, what the first of its engines that has something adds (vLLM's memory
        estimate on torch's CUDA out of memory)."""
        projects = self.content.projects
        keys = [record.project, *record.engines]
        for key in (k for k in keys if k in projects):
            section = wing(projects[key].wing_key).record_section(record, self.content)
            if section is not None:
                return section
        return None

    def site_pages(self) -> Iterator[tuple[str, bytes]]:
        """Everything that is not an error page."""
        for url, _, made, _ in self.site_page_parts():
            yield url, made if isinstance(made, bytes) else made()

    def site_page_parts(self) -> Iterator[SitePart]:
        """site_pages as (url, key, bytes or how to make them, ids of the records shown as
        rows): a page rendered from a template is keyed by the arguments it is given
        (records and guides by their digests) and made only when asked; the others are
        made and keyed by their bytes. (The key leaves out what every page depends on: the
        code, templates and settings.) A page that lists records declares them (SitePart):
        the quick rebuild remakes it after an edit of what it shows of one."""
        content, links = self.content, self.links
        counts = {
            key: sum(map(len, links.by_file.get(key, {}).values())) for key in content.projects
        }
        curated = sum(r.curated for r in content.records.values())
        row = functools.cache(lambda rid: row_of(content.records[rid], content))
        recent = [row(r.id) for r in links.recent[:RECENT_COUNT]]
        yield self.home_part(len(content.records), curated, counts, recent)
        indexed: dict[str, Row] = {}  # id -> its row, for each record the index pages list
        for key in content.projects:
            raised = links.raised_in.get(key, {})
            files = {path: [r.id for r, _ in entries] for path, entries in raised.items()}
            listed = [row(r.id) for recs in links.by_file.get(key, {}).values() for r in recs]
            rows = [r for r in listed if r.indexed]
            indexed.update((r.id, r) for r in rows)
            yield self.project_part(key, counts[key], files, rows)
        yield from self.tag_parts(indexed)
        if content.guides:
            yield self._later(
                "guides.html",
                urls.guides(),
                "Guides",
                "Long-form guides to the errors.",
                guides=content.guides,
            )
        for g in content.guides:
            yield self.guide_part(g, [row(resolve(content, i).id) for i in g.errors])
        for project_wing in self.wings:
            yield from _keyed(project_wing.pages(self))
        yield from _keyed([(urls.service_worker(), offline.service_worker(self))])
        yield self._later(
            "search.html",
            urls.search(),
            "Search",
            "Paste an error message to find its page, or search the knowledge base.",
            guides=content.guides,
        )
        for alias, target in sorted(content.aliases.items()):
            yield self.redirect_part(alias, row(target))
        yield from _keyed([(urls.redirects_file(), shortlinks.redirects_file(content))])
        yield from shortlinks.id_list_parts(content)
        yield self._later(
            "404.html", urls.not_found(), "Page not found", "There is no page at this address."
        )
        yield from self._sitemaps()
        yield self.feed_part([row(r.id) for r in links.recent if r.modified][:FEED_COUNT])
        yield from _keyed(
            [(urls.robots(), self.render("robots.txt")), (urls.headers_file(), headers_file())]
        )

    def home_part(
        self, total: int, explained: int, counts: dict[str, int], recent: list["Row"]
    ) -> SitePart:
        """The home page: how many records there are, explained and by project, and the
        rows of the newest (`recent`)."""
        site = self.content.site
        part = self._later(
            "home.html",
            urls.home(),
            site["title"],
            site.get("tagline") or site["title"],
            total=total,
            explained=explained,
            counts=counts,
            guides=self.content.guides,
            recent=recent,
        )
        return _listing(part, (r.id for r in recent))

    def project_part(
        self,
        key: str,
        count: int,
        files: dict[str, list[str]],
        indexed: list["Row"],
    ) -> SitePart:
        """A project's page: how many records it has (`count`), the source files they are
        raised in (path -> ids) and the rows of the records its listings name (Row.indexed):
        first a short index (explained first, then by demand), then its tags and files."""
        project = self.content.projects[key]
        folders = _folders(files)
        ordered = _ordered(indexed)
        tags: dict[str, int] = {}
        for entry in ordered:
            for tag in entry.tags:
                tags[tag] = tags.get(tag, 0) + 1
        part = self._later(
            "project.html",
            urls.project(key),
            f"{project.name} errors",
            f"All {count} {project.name} errors: the explained ones first, by kind and by "
            "source file.",
            project=project,
            files=sum(len(f["files"]) for f in folders),
            folders=folders,
            areas=_areas(folders),
            first=ordered[:INDEX_COUNT],
            explained=[e for e in ordered if e.curated],
            tags=sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:TAG_COUNT],
            count=count,
        )
        return _listing(part, (e.id for e in ordered))

    def tag_parts(self, indexed: dict[str, "Row"]) -> Iterator[SitePart]:
        """A page for each tag the records carry, listing them (explained first, then by
        demand), and the list of tags; nothing where no record carries one."""
        tagged: dict[str, list[Row]] = {}
        for row in indexed.values():
            for tag in row.tags:
                tagged.setdefault(tag, []).append(row)
        if not tagged:
            return
        for tag in sorted(tagged):
            yield self.tag_part(tag, tagged[tag])
        counts = sorted(((t, len(e)) for t, e in tagged.items()), key=lambda kv: (-kv[1], kv[0]))
        yield self._later(
            "tags.html",
            urls.tags(),
            "Errors by kind",
            f"The {len(counts)} tags of the knowledge base's errors, each with its errors.",
            tags=counts,
        )

    def tag_part(self, tag: str, entries: list["Row"]) -> SitePart:
        """The page of one tag: the rows of the records that carry it."""
        ordered = _ordered(entries)
        part = self._later(
            "tag.html",
            urls.tag(tag),
            f"Errors tagged {tag}",
            f"The {len(ordered)} errors tagged {tag}: explained first, then by how often "
            "they are met.",
            tag=tag,
            entries=ordered,
        )
        return _listing(part, (e.id for e in ordered))

    def feed_part(self, recent: list["Row"]) -> SitePart:
        """The feed of the newest records that have a date (`recent`, their rows)."""
        updated = recent[0].modified if recent else "1970-01-01"
        made = functools.partial(self.render, "feed.xml", records=recent, updated=updated)
        rows = tuple(r.id for r in recent)
        return urls.feed(), _key(["feed.xml", recent, updated]), made, rows

    def guide_part(self, guide: Guide, covered: list["Row"]) -> SitePart:
        """A guide's page, with the rows of the records it covers, in its order."""
        made = functools.partial(self._guide, guide, covered)
        rows = tuple(dict.fromkeys(r.id for r in covered))
        return urls.guide(guide.slug), _key(["guide", guide, covered]), made, rows

    def redirect_part(self, alias: str, target: "Row") -> SitePart:
        """The page at a record's former id, which sends to its page (`target`, its row)."""
        made = functools.partial(self.render, "redirect.html", target=target)
        return urls.error(alias), _key(["redirect.html", target]), made, (target.id,)

    def _later(self, name: str, url: str, title: str, description: str, **context) -> SitePart:
        """A page (as `page` makes it), keyed by its arguments, made when asked; it
        declares no rows (a caller whose page lists records replaces them)."""
        made = functools.partial(self.page, name, url, title, description, **context)
        return url, _key([name, url, title, description, context]), made, ()

    def source_file(self, key: str, path: str) -> bytes:
        """The page of one source file: every error raised in it, by line."""
        project = self.content.projects[key]
        entries = self.links.raised_in[key][path]
        return self.page(
            "file.html",
            urls.source_file(key, path),
            f"{project.name} errors in {path}",
            f"The {len(entries)} {project.name} errors raised in {path}, by line.",
            project=project,
            path=path,
            entries=entries,
            explained=sum(r.curated for r, _ in entries),
        )

    def _guide(self, guide: Guide, covered: list["Row"]) -> bytes:
        site = self.content.site
        return self.page(
            "guide.html",
            urls.guide(guide.slug),
            guide.title,
            guide.summary or guide.title,
            og_type="article",
            guide=guide,
            body=markup.markdown(guide.body),
            toc=markup.headings(guide.body),
            covered=covered,
            edit_url=urls.github_edit(site["repo"], site["branch"], guide.path),
        )

    def _sitemaps(self) -> Iterator[SitePart]:
        """/sitemap.xml; past the 50,000 URLs one sitemap may list, an index of parts."""
        entries = self._sitemap_entries()
        if len(entries) <= SITEMAP_URLS:
            made = functools.partial(self.render, "sitemap.xml", entries=entries)
            yield urls.sitemap(), _key(["sitemap.xml", entries]), made, ()
            return
        parts = [entries[i : i + SITEMAP_URLS] for i in range(0, len(entries), SITEMAP_URLS)]
        for n, part in enumerate(parts, 1):
            made = functools.partial(self.render, "sitemap.xml", entries=part)
            yield urls.sitemap(n), _key(["sitemap.xml", part]), made, ()
        listed = [(urls.sitemap(n), max(filter(None, (d for _, d in part)), default=None))
                  for n, part in enumerate(parts, 1)]  # fmt: skip
        made = functools.partial(self.render, "sitemap-index.xml", parts=listed)
        yield urls.sitemap(), _key(["sitemap-index.xml", listed]), made, ()

    def _sitemap_entries(self) -> list[tuple[str, str | None]]:
        content = self.content
        entries: list[tuple[str, str | None]] = [(urls.home(), None)]
        entries += [(urls.project(k), None) for k in content.projects]
        tags = sorted({t for r in content.records.values() for t in r.data.get("tags", ())})
        if tags:
            entries += [(urls.tags(), None), *((urls.tag(t), None) for t in tags)]
        for key, files in self.links.raised_in.items():
            for path, raised in files.items():
                dates = [r.modified for r, _ in raised if r.modified]
                entries.append((urls.source_file(key, path), max(dates, default=None)))
        if content.guides:
            entries.append((urls.guides(), None))
        entries += [(url, None) for w in self.wings for url in w.sitemap()]
        entries += [(urls.guide(g.slug), g.updated or None) for g in content.guides]
        entries += [(urls.error(rid), rec.modified) for rid, rec in sorted(content.records.items())]
        return entries


def _listing(part: SitePart, ids: Iterable[str]) -> SitePart:
    """A page that lists these records as rows, declaring them."""
    url, key, made, _ = part
    return url, key, made, tuple(ids)


def _keyed(files: Iterable[tuple[str, bytes]]) -> Iterator[SitePart]:
    """Files made already, keyed by their bytes."""
    for url, body in files:
        yield url, hashlib.sha1(body).hexdigest(), body, ()


def _key(inputs: list) -> str:
    """A hash of what a template is given: plain data as it is, records by what they show
    of themselves (Record.outward: no page but a record's own shows its prose), guides by
    their files' digests, projects by their fields."""
    text = json.dumps(inputs, sort_keys=True, default=_identity, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()


def _identity(obj: object) -> object:
    if isinstance(obj, Record):
        return ["record", obj.outward]
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, (Guide, Project)):
        return [type(obj).__name__, {k: v for k, v in vars(obj).items() if k != "source"}]
    raise TypeError(f"no key for a {type(obj).__name__} given to a template")


class Row(NamedTuple):
    """What the listings Pages makes show of a record, and what orders it: its line on the
    home page, in the feed, a guide, its project's index and its tags' pages, and the page at
    a former id. The full build keeps each listed record's row (quick.py), so that a quick
    rebuild renders a listing from the rows kept and those of the records it edits."""

    title: str
    exception: str
    curated: bool
    reported: int  # threads that report it
    releases: int  # releases that print it
    tags: tuple[str, ...]
    project: str
    id: str
    where: str  # the source file that raises it
    summary: str
    modified: str | None

    @property
    def indexed(self) -> bool:
        """Whether its project's index and its tags' pages list it: explained, tagged or
        reported (a stub no one tagged or reported is not)."""
        return bool(self.curated or self.tags or self.reported)


def row_of(record: Record, content: Content) -> Row:
    """The record's row (Row)."""
    scanned = content.projects[record.project].releases_scanned
    seen = [s for _, s in record.wordings if s is not None]
    releases = 0
    if seen:
        first = min(release_key(s["first"]) for s in seen)
        last = max(release_key(s["last"]) for s in seen)
        releases = sum(first <= release_key(v) <= last for v in scanned)
    return Row(
        record.title,
        record.exception,
        record.curated,
        len(record.data.get("reported") or ()),
        releases,
        tuple(record.data.get("tags", ())),
        record.project,
        record.id,
        record.location.path,
        record.summary,
        record.modified,
    )


def _ordered(rows: Iterable[Row]) -> list[Row]:
    """Listed records as a project's index and the tag pages show them (and are keyed by
    them: without their files, summaries and dates, which they do not show), in the order a
    reader wants: explained first, then by demand (threads that report the error, then how
    many releases print it), then by title."""
    lines = (r._replace(where="", summary="", modified=None) for r in rows)
    return sorted(lines, key=lambda r: (not r.curated, -r.reported, -r.releases, r.title, r.id))


def _folders(raised_in: dict[str, list[str]]) -> list[dict]:
    """The project page's file list (from path -> ids of the records raised there): folders,
    each with its files and their error counts."""
    folders = []
    for folder, files in by_folder(raised_in).items():
        ids = {rid for listed in files.values() for rid in listed}
        counted = [(path, path.rpartition("/")[2], len(listed)) for path, listed in files.items()]
        folders.append({"name": folder, "files": counted, "ids": ids})
    return folders


AREAS = 12  # the fewest areas a project page's files are split into, where its folders allow


def _areas(folders: list[dict]) -> list[dict]:
    """The project page's areas: folders by their first levels, as few as give AREAS areas
    or more (vllm/config, vllm/v1...: two; SGLang's python/sglang/srt/layers...: four, as
    all of it sits in python/sglang), each with its folders, its first folder and how many
    errors it raises."""
    deepest = max((len(f["name"].split("/")) for f in folders), default=1)
    depth = 2
    while depth < deepest and len({_area(f["name"], depth) for f in folders}) < AREAS:
        depth += 1
    areas: dict[str, dict] = {}
    for folder in folders:
        name = _area(folder["name"], depth)
        area = areas.setdefault(
            name, {"name": name, "first": folder["name"], "ids": set(), "folders": []}
        )
        area["ids"] |= folder["ids"]
        area["folders"].append(folder)
    # Each shown below the folder they all share (python/sglang), which the page says once.
    root = posixpath.commonpath(list(areas)) if len(areas) > 1 else ""
    for name, area in areas.items():
        area["root"] = root
        area["label"] = (name[len(root) :].lstrip("/") if name != root else name) or name
    return list(areas.values())


def _area(folder: str, depth: int) -> str:
    return "/".join(folder.split("/")[:depth])


def _modified(record: Record) -> str | None:
    return record.modified


def fingerprint(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:10]


class _Environment(Environment):
    def getattr(self, obj, attribute):
        """`doc.title` in a template: most of what pages show comes from the JSON documents,
        dicts, whose keys Jinja looks up only after failing on an attribute (an exception
        each time: 40% of an error page's rendering). Keys first, for dicts."""
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def make_globals(self, d):
        """A template's globals over the environment's, in one dict, not Jinja's ChainMap:
        every name a template uses that is not its own is looked up there, and ChainMap
        looks in Python (a tenth of an error page's rendering). So the environment's globals
        must be set before a template is loaded, as Jinja advises anyway."""
        return {**self.globals, **(d or {})}


class _Sections(Extension):
    """`{% section id, title %}...{% endsection %}`: a page's section, with its linked
    heading, written out where it stands when the template compiles. As a macro called
    with a body, it cost a page 12 µs a section (a Macro for the body, two calls)."""

    tags = {"section"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        ident = parser.parse_expression()
        parser.stream.expect("comma")
        title = parser.parse_expression()
        body = parser.parse_statements(("name:endsection",), drop_needle=True)
        head = [
            nodes.TemplateData('<section id="'),
            ident,
            nodes.TemplateData('" class="section">\n  <h2><a class="anchor" href="#'),
            ident,
            nodes.TemplateData('">'),
            title,
            nodes.TemplateData("</a></h2>\n  "),
        ]
        tail = [nodes.TemplateData("\n</section>")]
        return [nodes.Output(head, lineno=lineno), *body, nodes.Output(tail, lineno=lineno)]


class _SourceKeyedCache(FileSystemBytecodeCache):
    """Compiled templates keyed by name and source. Jinja's own key is the template's path,
    so knowledge bases in other folders with the same templates (the test suite makes
    hundreds) compiled them again, each; a traceback may name the folder that compiled it."""

    def get_bucket(self, environment, name, filename, source):
        checksum = self.get_source_checksum(source)
        bucket = Bucket(
            environment, hashlib.sha1(f"{name}\0{checksum}".encode()).hexdigest(), checksum
        )
        self.load_bytecode(bucket)
        return bucket


def environment(
    template_dir: Path, content: Content, assets: dict[str, bytes], compiled: Path | None
) -> Environment:
    if compiled is not None:
        compiled.mkdir(parents=True, exist_ok=True)
    env = _Environment(
        loader=FileSystemLoader(template_dir),
        # Compiled templates kept between builds: compiling them all takes ~50 ms, in every
        # worker process that renders. A build's templates do not change while it runs.
        bytecode_cache=_SourceKeyedCache(str(compiled)) if compiled else None,
        auto_reload=False,
        autoescape=select_autoescape(["html", "xml"]),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_Sections],
    )
    base_url = content.site["base_url"]
    # Fingerprinted asset URLs: safe to cache forever, and deterministic.
    fingerprints = {name: fingerprint(body) for name, body in assets.items()}
    env.globals.update(
        site=content.site,
        projects=content.projects,
        has_guides=bool(content.guides),  # a knowledge base without guides has no guides page
        urls=urls,
        modified=_modified,
        segments=template.parse,
        absolute=lambda url: urls.absolute(base_url, url),
        nav=[link for w in wings(content.projects.values()) for link in w.nav()],
        asset=lambda name: f"{urls.asset(name)}?v={fingerprints[name]}",
        # Our own constant, with no " < or &: its quotes need no escaping (8 x &#39; would
        # cost an error page 32 of its 20 KB).
        content_security_policy=Markup(META_POLICY),
        framed=False,  # inside a host's docs site (the MkDocs plugin's pages)
        once=_Once(),
    )
    env.filters["code"] = _code_filter
    env.filters["fix_pair"] = lambda fix: Markup(markup.fix_pair(fix))
    env.filters["slug"] = markup.slugify
    env.filters["flag_code"] = _flag_code
    env.filters["xml"] = _xml_text
    env.filters["inline"] = lambda text: Markup(markup.markdown_inline(text))  # our Markdown
    # A variant that carries the releases that print it (shown by the History section).
    env.tests["versioned"] = lambda v: isinstance(v, dict) and "versions" in v
    # A history worth a section: a rewording or a removal (api.history has it for every record
    # followed through releases).
    env.tests["eventful"] = lambda h: bool(h) and (len(h["wordings"]) > 1 or h["removed"])
    return env


class _Once:
    """`once(macro, *args)` in a template: the macro's output for these arguments, made at
    the first call only; `key=`: what decides it where the arguments cannot be hashed (a
    record's line by its id). For what many pages repeat: the top bar and the footer, which
    only the environment's globals decide (a fifth of a small page's rendering), and each
    record's line in other records' lists (a fifth of an error page's)."""

    def __init__(self):
        self._made: dict[tuple, Markup] = {}

    def __call__(self, macro, *args, key=None) -> Markup:
        known = (macro.name, args if key is None else key)
        made = self._made.get(known)
        if made is None:
            made = self._made[known] = macro(*args)
        return made


# Characters XML 1.0 does not allow: a message may print them (escape codes), the feed
# would not parse with them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("", str(text))


def _flag_code(text: str) -> Markup:
    """A setting's handle in inline code, kept on one line when it is a short flag."""
    attrs = ' class="f"' if markup.whole_flag(text) else ""
    return Markup(f"<code{attrs}>") + text + Markup("</code>")


def _code_filter(code: str, language: str | None, caption: str = ""):
    return Markup(markup.code_block(code, language, caption))

"""The `errorkb` MkDocs plugin: the knowledge base as a section of a Material for MkDocs site.

    plugins:
      - search
      - errorkb:
          content: ../errorkb/content   # the knowledge base, relative to mkdocs.yml
          path: errors                  # errorkb's folder in the site

The content is validated with errorkb's problem codes (each problem is an error in MkDocs'
log, and the build stops). MkDocs builds the section's index page (`<path>/index.md`, unless
the docs have one) like any other page; after MkDocs' build, errorkb writes the rest with its
own pipeline: record, project, file and guide pages inside Material's frame (frame.py), the
JSON API under /api/, the tier-1 search index and the calculator. Explained records and
guides go into Material's search index. A file of the host's at one of errorkb's addresses
stops the build: errorkb never replaces it.
"""

import gzip
import logging
import re
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from jinja2 import FileSystemLoader
from markupsafe import escape
from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File

from errorkb import resources, urls
from errorkb.content.load import ParseCache, load_content
from errorkb.content.model import CODES, Content, ContentError
from errorkb.mkdocs.frame import ARTICLE, BODY_MARK, Frame
from errorkb.registry import wings
from errorkb.site.build import CACHE_DIR, CARD, Plan, load_assets, write_site
from errorkb.site.linking import link
from errorkb.site.pages import Pages, environment
from errorkb.site.publish import BuildError, OccupiedError, Writer

log = logging.getLogger("mkdocs.plugins.errorkb")

_BUTTON = re.compile(r"<button\b.*?</button>", re.S)

# errorkb's own site pages that a host site has already (its home, 404, robots.txt) or
# that mean nothing there (_headers: the host serves the site).
HOST_HAS = (urls.home, urls.not_found, urls.robots, urls.headers_file)
# What no framed page uses: the service worker (the host's pages do not register it) and the
# short links' `_redirects` (read at a host's root only; the 404 page that answers them
# elsewhere is the host's).
UNUSED = (urls.service_worker, urls.redirects_file)


class ErrorkbConfig(Config):
    content = config_options.Type(str, default="content")
    path = config_options.Type(str, default="errors")
    # Link preview images (og:image, 1200x630 PNG) for the explained records' pages: about
    # 15 KB each, 500 MB at 32,000 records, so only on request.
    cards = config_options.Type(bool, default=False)


# The paste box's query parameter: Material opens its own search dialog on `q`.
QUERY = "error"


class ErrorkbPlugin(BasePlugin[ErrorkbConfig]):
    def on_config(self, config):
        try:
            section = urls.section(self.config.path)
        except ValueError as exc:
            raise PluginError(f"errorkb: path {self.config.path!r} {exc}") from None
        folder = (Path(config.config_file_path).parent / self.config.content).resolve()
        if folder.name != "content" or not folder.is_dir():
            raise PluginError(
                f"errorkb: content {self.config.content!r} must be a knowledge base's content/ "
                f"folder (found {folder}, relative to mkdocs.yml)"
            )
        self.root = folder.parent
        self.section = section
        site = urlsplit(config.site_url or "")
        self.scheme = {
            "prefix": site.path,
            "section": section,
            "directory_urls": config.use_directory_urls,
            "query": QUERY,
        }
        self.origin = f"{site.scheme}://{site.netloc}" if site.netloc else None
        # Everything the build will need, checked before MkDocs starts its own work.
        self.content = self._load()
        self._check_vendored()
        return config

    def on_pre_build(self, config):
        templates = _templates(self.root)
        with _scheme(self.scheme):
            self.assets = load_assets(templates, self.content)
        self.assets["material.css"] = (templates / "mkdocs" / "material.css").read_bytes()

    def on_files(self, files, config):
        src = f"{self.section}/index.md"
        if files.get_file_from_path(src) is None:
            files.append(File.generated(config, src, content=self._index_page()))
        # A clash with the pages named here stops the build before MkDocs' own work; the
        # writer refuses to replace a host's file with any other output.
        with _scheme(self.scheme):
            ours = {urls.output_path(url): url for url in _named_outputs(self.content)}
        for file in files:
            if file.dest_uri in ours:
                raise PluginError(_clash(file, ours[file.dest_uri], config))
        return files

    def on_nav(self, nav, config, files):
        self.nav = nav
        return nav

    def on_env(self, env, config, files):
        self.env, self.files = env, files
        return env

    @event_priority(50)  # before the search plugin writes its index
    def on_post_build(self, config):
        with _scheme(self.scheme):
            plan = self._plan(config)
            site = Path(config.site_dir)
            host = {file.dest_uri: file for file in self.files}  # MkDocs wrote these: not ours
            try:  # the plan has the wings' vendored files
                write_site(Writer(site, {}, None, {}, frozenset(host)), plan)
            except OccupiedError as exc:
                raise PluginError(_clash(host[exc.path], exc.url, config)) from None
            self._index_for_search(config, site)
            _link_sitemaps(config, site, host)
        log.info(f"errorkb: {len(self.content.records)} records under {self.section}/")

    def on_serve(self, server, config, builder):
        server.watch(str(self.root / "content"))  # `mkdocs serve` rebuilds when a record changes
        return server

    def _load(self) -> Content:
        """The knowledge base, validated; every problem logged as an error, then the build
        stops."""
        try:
            content = load_content(self.root, ParseCache(self.root / CACHE_DIR / "parse"))
        except ContentError as exc:
            for problem in exc.problems:
                log.error(str(problem))
            codes = sorted({p.code for p in exc.problems})
            raise PluginError(
                f"errorkb: {len(exc.problems)} problems in {self.root / 'content'} "
                f"({', '.join(f'{c} {CODES[c]}' for c in codes)})"
            ) from None
        if self.origin:  # absolute URLs: the host site's origin, then our URLs with its path
            content.site = {**content.site, "base_url": self.origin}
        return content

    def _check_vendored(self) -> None:
        """The third-party files the projects' wings ship (Pyodide) are there."""
        for project_wing in wings(self.content.projects.values()):
            try:
                project_wing.vendored(self.root)
            except BuildError as exc:
                raise PluginError(f"errorkb: {exc}") from None

    def _plan(self, config) -> "FramedPlan":
        frame = Frame(config, self.env, self.nav, self.files, f"{self.section}/index.md")
        return FramedPlan(
            self.content, self.assets, frame, _templates(self.root), self.config.cards
        )

    def _index_page(self) -> str:
        """<path>/index.md: the section's home, a Markdown page MkDocs builds like any other."""
        with _scheme(self.scheme):
            env = environment(_templates(self.root), self.content, self.assets, None)
            env.globals["framed"] = True
            return env.get_template("mkdocs/index.html").render(
                content=self.content, counts=_counts(self.content)
            )

    def _index_for_search(self, config, site: Path) -> None:
        """Explained records and guides into the host's search (Material's, or MkDocs'),
        as if MkDocs had built them."""
        index = next(
            (p.search_index for p in config.plugins.values() if hasattr(p, "search_index")), None
        )
        if index is None:
            return
        content = self.content
        pages = [(urls.error(r.id), r.title) for r in content.records.values() if r.curated]
        pages += [(urls.guide(g.slug), g.title) for g in content.guides]
        for url, title in sorted(pages):
            article = ARTICLE.search((site / urls.output_path(url)).read_text())
            if article:
                rel = urls.output_path(url)
                address = rel.removesuffix("index.html") if config.use_directory_urls else rel
                text = _BUTTON.sub("", article[1])  # labels ("Copy") are no text of the page
                index.add_entry_from_context(_SearchPage(address, title, text))


class FramedPages(Pages):
    """errorkb's pages, each in Material's frame."""

    def __init__(self, content, links, assets, frame: Frame, templates: Path, cards: bool):
        super().__init__(content, links, assets)
        self.frame = frame
        # templates/mkdocs/base.html replaces base.html; every other template is errorkb's.
        self.env.loader = FileSystemLoader([templates / "mkdocs", templates])
        self.env.globals.update(framed=True, cards=cards)

    def page(self, name: str, url: str, title: str, description: str, **context) -> bytes:
        body = super().page(name, url, title, description, **context).decode()
        head, _, main = body.partition(BODY_MARK)
        return self.frame.page(url, title, description, head, main)

    def site_page_parts(self):
        skip = {make() for make in HOST_HAS + UNUSED}
        id_lists = urls.id_list("")[: -len(".json")]  # the 404 page's, which the host has
        for part in super().site_page_parts():
            url = part[0]
            if url not in skip and not url.startswith(id_lists):
                yield part


class FramedPlan(Plan):
    """errorkb's build plan with its pages framed, and no Pagefind: the host has search.
    Cards only when the `cards` option asks for them (the pages then name them)."""

    full_text = False

    def __init__(self, content, assets, frame: Frame, templates: Path, cards: bool):
        super().__init__(content, link(content), assets)
        self.pages = FramedPages(content, self.links, assets, frame, templates, cards)
        self.cards = cards

    def producers(self):
        producers = super().producers()
        if not self.cards:
            del producers["shared cards"]
        return producers

    def record_parts(self, record):
        parts = super().record_parts(record)
        if not self.cards:
            parts.pop(CARD, None)
        return parts


class _SearchPage:
    """What a search plugin reads of a page."""

    def __init__(self, url: str, title: str, content: str):
        self.url, self.title, self.content = url, title, content
        self.toc: list = []
        self.meta: dict = {}


def _templates(root: Path) -> Path:
    """The knowledge base's templates, else errorkb's own."""
    return resources.templates(root, "mkdocs")


def _named_outputs(content: Content) -> list[str]:
    """The URLs of errorkb's outputs that need no rendering to name: its pages, the records'
    documents and the API's fixed files."""
    named = [urls.guides()] if content.guides else []
    named += [urls.guide(guide.slug) for guide in content.guides]
    for rid in content.records:
        named += [urls.error(rid), urls.error_json(rid)]
    for key in content.projects:
        named += [urls.project(key), urls.project_json(key)]
    named += [url for wing in wings(content.projects.values()) for url in wing.sitemap()]
    return named + [
        urls.service_worker(),
        urls.search(),
        urls.search_index(),
        urls.sitemap(),
        urls.feed(),
        urls.api_index(),
        urls.schema(),
        urls.record_schema(),
        urls.openapi(),
        urls.api_not_found(),
    ]


def _clash(file: File, url: str, config) -> str:
    """The error for a host's file at an address of errorkb's, naming both."""
    source = file.abs_src_path or file.src_uri  # None for a file another plugin generated
    folder = Path(config.config_file_path).parent
    if Path(source).is_relative_to(folder):
        source = Path(source).relative_to(folder).as_posix()
    return (
        f"errorkb: {source} and errorkb's {url} are both {file.dest_uri} in the site; "
        "errorkb never replaces the host's files: move one of them (errorkb's pages follow "
        "its `path:` option)"
    )


HOST_SITEMAP = "sitemap.xml"  # MkDocs' own, from the theme
DOCS_SITEMAP = "sitemap-docs.xml"  # where it goes when sitemap.xml becomes an index


def _link_sitemaps(config, site: Path, host: dict) -> None:
    """The host's sitemap.xml (and .gz) as a sitemap index of MkDocs' own list of pages,
    moved to sitemap-docs.xml, and errorkb's: a sitemap can list pages but not another
    sitemap. Left alone when the docs have a sitemap.xml of their own, or MkDocs wrote none."""
    own, moved = site / HOST_SITEMAP, site / DOCS_SITEMAP
    if HOST_SITEMAP in host or DOCS_SITEMAP in host or not config.site_url:
        return
    if not own.is_file() or b"<urlset" not in own.read_bytes()[:500]:
        return
    ours = (site / urls.output_path(urls.sitemap())).read_text()
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(config.site_url))
    parts = re.findall(r"<sitemap><loc>([^<]+)</loc>", ours) or [origin + urls.sitemap()]
    base = config.site_url.rstrip("/") + "/"
    listed = [base + DOCS_SITEMAP, *parts]
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + "".join(f"<sitemap><loc>{escape(loc)}</loc></sitemap>\n" for loc in listed)
        + "</sitemapindex>\n"
    ).encode()
    own.replace(moved)
    own.write_bytes(index)
    zipped = site / (HOST_SITEMAP + ".gz")
    if zipped.is_file():
        zipped.write_bytes(gzip.compress(index, mtime=0))


def _counts(content: Content) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in content.records.values():
        counts[record.project] = counts.get(record.project, 0) + 1
    return counts


@contextmanager
def _scheme(scheme: dict):
    """errorkb's URLs as the host site has them, for the duration of a block."""
    old = urls.configure(**scheme)
    try:
        yield
    finally:
        urls.restore(old)

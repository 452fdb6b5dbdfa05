"""The URL scheme: the one place that knows where every page and file lives.

Page URLs end in "/" and are written as <url>index.html; file URLs are written
as they are. All URLs are root-relative; `absolute` prefixes the site's base.

Inside another site (the MkDocs plugin), `configure` sets where errorkb lives there: the
site's own path below its host, a folder for everything but the JSON API, and pages as
"<name>.html" files where the site does not use directory URLs. A site of its own lives below
its base URL's path (`standalone`): a GitHub Pages project site's /<repo>, for one.
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import quote, quote_plus, unquote, urlencode, urlsplit

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Scheme:
    prefix: str = ""  # the site's path below its host: "" or "/docs"
    section: str = ""  # errorkb's folder in it, for all but the API: "" or "/errors"
    directory_urls: bool = True  # "/errors/<id>/", else "/errors/<id>.html"
    # The search page's query parameter. Material for MkDocs opens its own search dialog on
    # any page whose address has `q`: inside it, the paste box uses another name.
    query: str = "q"


_scheme = Scheme()


def configure(
    prefix: str = "", section: str = "", directory_urls: bool = True, query: str = "q"
) -> Scheme:
    """Set the URL scheme; returns the one it replaces. Paths are normalised to "/a/b"."""
    global _scheme
    old = _scheme
    _scheme = Scheme(_folder(prefix), _folder(section), directory_urls, query)
    return old


def restore(scheme: Scheme) -> None:
    global _scheme
    _scheme = scheme


@contextmanager
def standalone(base_url: str) -> Iterator[None]:
    """A site of errorkb's own, at its base URL's path, for the duration of a block."""
    old = configure(prefix=urlsplit(base_url).path)
    try:
        yield
    finally:
        restore(old)


def prefix() -> str:
    """The site's path below its host: "" at the host's root."""
    return _scheme.prefix


# RFC 3986's unreserved characters: a name made of them is the same in a URL and on disk.
_URL_SAFE = re.compile(r"[A-Za-z0-9._~-]+")


def section(path: str) -> str:
    """errorkb's folder inside another site (the MkDocs plugin's `path:` option, the
    export's `--path`) as "a/b": a relative path of URL-safe names, since it is both a folder
    on disk and a part of every page's address. ValueError says why a path is not one."""
    parts = path.removesuffix("/").split("/")
    if path.startswith("/"):
        raise ValueError("must be relative to the site's root (no leading /)")
    if "\\" in path:
        raise ValueError("must separate folders with /, not \\")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError("must name a folder inside the site (no empty, . or .. part)")
    if not all(_URL_SAFE.fullmatch(part) for part in parts):
        raise ValueError(
            "may hold only letters, digits and . _ ~ - (characters a URL keeps as they are)"
        )
    return "/".join(parts)


def _folder(path: str) -> str:
    path = path.strip("/")
    return "/" + path if path else ""


def _page(path: str) -> str:
    """A page of errorkb's own, path "/a/b/": "/a/b.html" without directory URLs."""
    if not _scheme.directory_urls and path != "/":
        path = path[:-1] + ".html"
    return _scheme.prefix + _scheme.section + path


def _folder_page(path: str) -> str:
    """A page whose files sit beside it (the search page and its index): always a folder,
    written as "index.html" without directory URLs."""
    index = "" if _scheme.directory_urls else "index.html"
    return _scheme.prefix + _scheme.section + path + index


def _file(path: str) -> str:
    return _scheme.prefix + _scheme.section + path


def _api(path: str) -> str:
    """The JSON API stays at the site's /api/ wherever errorkb's pages are."""
    return _scheme.prefix + path


def home() -> str:
    return _page("/")


def error(record_id: str) -> str:
    # Inside a host site, errorkb's folder (its `section`) is the errors' folder itself.
    folder = "" if _scheme.section else "/errors"
    return _page(f"{folder}/{record_id}/")


def card(record_id: str) -> str:
    """The image a link to the record's page shows (og:image)."""
    return _file(f"/cards/{record_id}.png")


def shared_card(project: str, kind: str) -> str:
    """The image links to a project's pages of one kind share (raise, log...)."""
    return _file(f"/cards/{project}-{kind}.png")


def short(prefix: str) -> str:
    """The short link of a record: the first hex digits of its id, when no other shares them."""
    return _file(f"/e/{prefix}/")


def id_list(prefix: str) -> str:
    """The ids (and titles) starting with these hex digits, for the 404 page."""
    return _api(f"/api/ids/{prefix}.json")


def error_json(record_id: str) -> str:
    return _api(f"/api/errors/{record_id}.json")


def error_json_bare(record_id: str) -> str:
    """The error's JSON without ".json", as users write it: never written, answered as
    error_json is (a rewrite in _redirects and in `serve`)."""
    return _api(f"/api/errors/{record_id}")


def project(key: str) -> str:
    return _page(f"/projects/{key}/")


def source_file(key: str, path: str) -> str:
    """A project's page for one source file: the errors raised in it."""
    return _page(f"/projects/{key}/files/{quote(path)}/")


def tag(name: str) -> str:
    """The page of the records that carry a tag (`moe`, `divisibility`...)."""
    return _page(f"/tags/{quote(name, safe='')}/")


def tags() -> str:
    """The list of tags, each with how many records carry it."""
    return _page("/tags/")


def project_json(key: str) -> str:
    return _api(f"/api/projects/{key}.json")


def project_json_page(key: str, page: int | str) -> str:
    """A later page of the project document (the first is project_json)."""
    return _api(f"/api/projects/{key}/{page}.json")


def guide(slug: str) -> str:
    return _page(f"/guides/{slug}/")


def guides() -> str:
    return _page("/guides/")


def api() -> str:
    """Where the JSON API lives: every URL below it is an API file."""
    return _api("/api/")


def api_index() -> str:
    return api() + "index.json"


def schema() -> str:
    """JSON Schema of an error document: what /api/errors/<id>.json holds."""
    return _api("/api/schema/error.json")


def record_schema() -> str:
    """JSON Schema of a record as written in content/ (generator/error.schema.json)."""
    return _api("/api/schema/record.json")


def openapi() -> str:
    return _api("/api/openapi.json")


def api_not_found() -> str:
    return _api("/api/404.json")


def not_found() -> str:
    """The page a host serves for any address it has no file for."""
    return _file("/404.html")


def sitemap(part: int | None = None) -> str:
    """The sitemap, or one part of it when it is an index of parts."""
    return _file("/sitemap.xml" if part is None else f"/sitemaps/{part}.xml")


def feed() -> str:
    """The Atom feed of recently changed records."""
    return _file("/feed.xml")


def robots() -> str:
    return _file("/robots.txt")


def search(query: str = "") -> str:
    return _folder_page("/search/") + ("?" + urlencode({search_param(): query}) if query else "")


def search_param() -> str:
    """The query parameter of the search page."""
    return _scheme.query


def search_index() -> str:
    """Tier-1 search: the settings and shard counts the matcher starts from."""
    return _file("/search/index.json")


def search_words(shard: str) -> str:
    return _file(f"/search/words/{shard}.json")


def search_patterns(page: str) -> str:
    return _file(f"/search/patterns/{page}.json")


def pagefind(name: str = "pagefind.js") -> str:
    """Pagefind's bundle (search tier 2: full text), written by the build."""
    return _file(f"/pagefind/{name}")


def pagefind_newer(name: str = "pages.json") -> str:
    """The full text of the pages changed since Pagefind's bundle was made: a bundle of their
    own, and the list of them, whose hits in the older bundle are stale. Beside the main
    bundle, where search.js looks for it."""
    return _file(f"/pagefind-newer/{name}")


def error_with_values(
    record_id: str, values: dict[str, str], engine: str = "", release: str = ""
) -> str:
    """An error page with the values of a pasted message, for "Your values" and the calculator,
    the serving engine the paste came from (a stack record's page shows its advice first) and
    the release it names (`v`: the page opens on that release's wording)."""
    query = {**values, "engine": engine} if engine else values
    query = {**query, "v": release} if release else query
    return error(record_id) + ("?" + _form(query) if query else "")


def _form(query: dict[str, str]) -> str:
    """A query string as the browser's URLSearchParams writes it (match.js builds the same
    links): `*` as it is, `~` escaped, which urlencode does the other way round."""
    part = lambda s: quote_plus(s, safe="*").replace("~", "%7E")  # noqa: E731
    return "&".join(f"{part(k)}={part(v)}" for k, v in query.items())


def calc() -> str:
    return _page("/calc/")


def asset(name: str) -> str:
    return _file(f"/assets/{name}")


def pyodide(name: str = "") -> str:
    """Pyodide's files, copied from node_modules/pyodide."""
    return _file(f"/pyodide/{name}")


def service_worker() -> str:
    """The service worker: at the root, so that its scope is the whole site."""
    return "/sw.js"


def redirects_file() -> str:
    """Redirects and rewrites, for static hosts that read a _redirects file (the short links,
    the other forms of an error's addresses, the API's not-found answer)."""
    return _file("/_redirects")


def headers_file() -> str:
    """Response headers by URL pattern, for static hosts that read a _headers file."""
    return _file("/_headers")


def output_path(url: str) -> str:
    """The file, relative to the site root, that serves a URL."""
    if not _scheme.prefix and not _PLAIN_NOT.search(url):  # most URLs: nothing to take off
        path = url.lstrip("/")
        return path + "index.html" if path == "" or path.endswith("/") else path
    path = url.split("?", 1)[0].split("#", 1)[0]
    if _scheme.prefix and (path + "/").startswith(_scheme.prefix + "/"):
        path = path[len(_scheme.prefix) :]
    path = unquote(path.lstrip("/"))
    return path + "index.html" if path == "" or path.endswith("/") else path


_PLAIN_NOT = re.compile(r"[?#%]")  # what a URL holds that its file's name does not


def absolute(base_url: str, url: str) -> str:
    """A URL of the site at its base: a base that ends in the site's own path (a standalone
    site below its host's root) gives it once."""
    base = base_url.rstrip("/")
    if _scheme.prefix and base.endswith(_scheme.prefix) and url.startswith(_scheme.prefix + "/"):
        base = base[: -len(_scheme.prefix)]
    return base + url


def github_repo(repo: str) -> str:
    return f"https://github.com/{repo}"


def github_blob(repo: str, ref: str, path: str, line: int | None = None) -> str:
    """A link to a file (and line) of a repository, pinned to a ref."""
    anchor = f"#L{line}" if line else ""
    return f"https://github.com/{repo}/blob/{ref}/{path}{anchor}"


def github_edit(repo: str, branch: str, path: str) -> str:
    return f"https://github.com/{repo}/edit/{branch}/{path}"


def github_new_issue(repo: str, title: str, body: str) -> str:
    # What urlencode writes, without its generic walk: every error page has one.
    return f"https://github.com/{repo}/issues/new?title={quote_plus(title)}&body={quote_plus(body)}"

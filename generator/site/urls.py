"""The URL scheme: the one place that knows where every page and file lives.

Page URLs end in "/" and are written as <url>index.html; file URLs are written
as they are. All URLs are root-relative; `absolute` prefixes the site's base.
"""

from urllib.parse import quote, unquote, urlencode

SCHEMA_VERSION = 1


def home() -> str:
    return "/"


def error(record_id: str) -> str:
    return f"/errors/{record_id}/"


def card(record_id: str) -> str:
    """The image a link to the record's page shows (og:image)."""
    return f"/cards/{record_id}.png"


def short(prefix: str) -> str:
    """The short link of a record: the first hex digits of its id, when no other shares them."""
    return f"/e/{prefix}/"


def id_list(prefix: str) -> str:
    """The ids (and titles) starting with these hex digits, for the 404 page."""
    return f"/api/ids/{prefix}.json"


def error_json(record_id: str) -> str:
    return f"/api/errors/{record_id}.json"


def error_json_bare(record_id: str) -> str:
    """The extensionless form older links use."""
    return f"/api/errors/{record_id}"


def project(key: str) -> str:
    return f"/projects/{key}/"


def source_file(key: str, path: str) -> str:
    """A project's page for one source file: the errors raised in it."""
    return f"/projects/{key}/files/{quote(path)}/"


def project_json(key: str) -> str:
    return f"/api/projects/{key}.json"


def project_json_page(key: str, page: int | str) -> str:
    """A later page of the project document (the first is project_json)."""
    return f"/api/projects/{key}/{page}.json"


def guide(slug: str) -> str:
    return f"/guides/{slug}/"


def guides() -> str:
    return "/guides/"


def api() -> str:
    """Where the JSON API lives: every URL below it is an API file."""
    return "/api/"


def api_index() -> str:
    return api() + "index.json"


def schema() -> str:
    """JSON Schema of an error document: what /api/errors/<id>.json holds."""
    return "/api/schema/error.json"


def record_schema() -> str:
    """JSON Schema of a record as written in content/ (generator/error.schema.json)."""
    return "/api/schema/record.json"


def openapi() -> str:
    return "/api/openapi.json"


def api_not_found() -> str:
    return "/api/404.json"


def not_found() -> str:
    """The page a host serves for any address it has no file for."""
    return "/404.html"


def sitemap() -> str:
    return "/sitemap.xml"


def feed() -> str:
    """The Atom feed of recently changed records."""
    return "/feed.xml"


def robots() -> str:
    return "/robots.txt"


def search(query: str = "") -> str:
    return "/search/" + ("?" + urlencode({"q": query}) if query else "")


def search_index() -> str:
    """Tier-1 search: the settings and shard counts the matcher starts from."""
    return "/search/index.json"


def search_words(shard: str) -> str:
    return f"/search/words/{shard}.json"


def search_patterns(page: str) -> str:
    return f"/search/patterns/{page}.json"


def pagefind(name: str = "pagefind.js") -> str:
    """Pagefind's bundle (search tier 2: full text), written by the build."""
    return f"/pagefind/{name}"


def error_with_values(record_id: str, values: dict[str, str]) -> str:
    """An error page with the values of a pasted message, for "Your values" and the calculator."""
    return error(record_id) + ("?" + urlencode(values) if values else "")


def calc() -> str:
    return "/calc/"


def asset(name: str) -> str:
    return f"/assets/{name}"


def pyodide(name: str = "") -> str:
    """Pyodide's files, copied from node_modules/pyodide."""
    return f"/pyodide/{name}"


def service_worker() -> str:
    """The service worker: at the root, so that its scope is the whole site."""
    return "/sw.js"


def headers_file() -> str:
    """Response headers by URL pattern, for static hosts that read a _headers file."""
    return "/_headers"


def output_path(url: str) -> str:
    """The file, relative to the site root, that serves a URL."""
    path = unquote(url.split("?", 1)[0].split("#", 1)[0].lstrip("/"))
    return path + "index.html" if path == "" or path.endswith("/") else path


def absolute(base_url: str, url: str) -> str:
    return base_url.rstrip("/") + url


def github_repo(repo: str) -> str:
    return f"https://github.com/{repo}"


def github_blob(repo: str, ref: str, path: str, line: int | None = None) -> str:
    """A link to a file (and line) of a repository, pinned to a ref."""
    anchor = f"#L{line}" if line else ""
    return f"https://github.com/{repo}/blob/{ref}/{path}{anchor}"


def github_edit(repo: str, branch: str, path: str) -> str:
    return f"https://github.com/{repo}/edit/{branch}/{path}"


def github_new_issue(repo: str, title: str, body: str) -> str:
    return f"https://github.com/{repo}/issues/new?" + urlencode({"title": title, "body": body})

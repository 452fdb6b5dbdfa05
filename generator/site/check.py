"""What the site's files say of each other, and the checks of `errorkb build --check`.

The build takes each output's facts as it writes it (the ids a page defines, the same-site
URLs it links to, the other hosts it loads from) and keeps them with its manifest entry, so a
file linked unchanged from the last build keeps its facts too: same key, same bytes, same
facts. `--check` then holds the whole site to them without reading its pages again.

The facts come from regular expressions, not an HTML parser: a parser costs about 1 ms per
8 KB page, which a site of 32,000 error pages would pay on every build. The pages are ours
(or a host's, framed around ours): quoted attributes, and no `<` or quote left unescaped in
text, which is all the expressions rely on.
"""

import html
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urljoin, urlsplit

from errorkb import urls

CODES = {  # problem code -> what it means (README.md lists them)
    "W201": "broken link",
    "W202": "missing anchor",
    "W203": "loads from another host",
    "W204": "page over budget",
    "W205": "document fails its schema",
}
PAGE_BUDGET = 20_000  # bytes of HTML an error page may take (DESIGN §8)


class Facts(NamedTuple):
    """What one file says of others (stored in the manifest as a list of three lists)."""

    ids: list[str]  # the anchors it defines
    links: list[str]  # same-site URLs it links to or loads, resolved: path[?query][#fragment]
    hosts: list[str]  # other hosts it loads from


@dataclass(frozen=True)
class SiteProblem:
    path: str  # the file, relative to the site folder
    code: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.code} {self.field}: {self.message}"


# A start tag through which a page links or loads, the attributes that say what and how,
# and any tag's id. (Lowercase tags and attributes: ours and Material's.)
_TAG = re.compile(r"<(a|link|script|img|iframe|form|source|video|audio|embed|object)(\s[^>]*)>")
# (From its literal start: a pattern starting with \s would be tried at every space.)
_ID = re.compile(r"""id=(?:"([^"]*)"|'([^']*)')""")
# Which attribute of which tag is a URL; a tag loading what it names (rather than linking
# to it) is a load: the visitor's browser fetches it with the page.
_URL_ATTRIBUTE = {
    "a": "href",
    "link": "href",
    "form": "action",
    "script": "src",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
}
_LINKING = {"a", "form"}
_LINK_RELS = {"canonical", "alternate"}  # a <link> that points rather than loads


def _attribute(name: str) -> re.Pattern:
    # The first of twins, as browsers read them.
    return re.compile(rf"""\s{name}=(?:"([^"]*)"|'([^']*)')""")


_URL_OF = {tag: _attribute(name) for tag, name in _URL_ATTRIBUTE.items()}  # a tag's URL
_REL = _attribute("rel")
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')\s]+)|@import\s+["']([^"']+)""")


def described(url: str) -> bool:
    """Whether the file at `url` has facts: pages and stylesheets."""
    return url.endswith(("/", ".html", ".css"))


def facts(url: str, body: bytes) -> Facts | None:
    """The facts of an HTML page or a stylesheet served at `url`; None for other files."""
    if not described(url):
        return None
    text = body.decode("utf-8", "replace")
    if url.endswith(".css"):
        return _facts(url, [], {(a or b, True) for a, b in _CSS_URL.findall(text)})
    return _page(url, text)


def _page(url: str, text: str) -> Facts:
    ids = [
        _unescape(m[1] if m[1] is not None else m[2])  # id="" is an id, not a missing quote
        for m in _ID.finditer(text)
        if text[m.start() - 1].isspace()
    ]
    named = set()  # (URL as written, whether it is loaded): a page repeats its nav links
    for tag, attributes in _TAG.findall(text):
        target = _value(_URL_OF[tag], attributes)
        if target:
            rel = _value(_REL, attributes) if tag == "link" else None
            loads = tag not in _LINKING and rel not in _LINK_RELS
            named.add((target, loads))
    return _facts(url, ids, named)


def _value(attribute: re.Pattern, attributes: str) -> str | None:
    """The value of the attribute (an _attribute pattern) in a tag's attributes; None or ""
    where it is missing or empty."""
    found = attribute.search(attributes)
    return found and (found[1] or found[2])


def _facts(url: str, ids: list[str], named: set[tuple[str, bool]]) -> Facts:
    """Sort the URLs a file names into same-site links (resolved against the file's URL)
    and hosts it loads from; links to other hosts and other schemes (mailto:) are theirs."""
    links, hosts = set(), set()
    for target, loads in named:
        target = _unescape(target)
        # Most are root-relative, own anchors or https: what urljoin and urlsplit would say.
        if target.startswith("/") and not target.startswith("//") and "/." not in target:
            links.add(target)
            continue
        if target.startswith("#"):
            links.add(url + target)
            continue
        if target.startswith(("https://", "http://")):
            if loads:
                hosts.add(target.split("/", 3)[2])
            continue
        parts = urlsplit(target)
        if parts.netloc:
            if loads:
                hosts.add(parts.netloc)
        elif not parts.scheme:
            links.add(urljoin(url, target))
    return Facts(sorted(set(ids)), sorted(links), sorted(hosts))


def _unescape(value: str) -> str:
    return html.unescape(value) if "&" in value else value


def file_of(url: str) -> str:
    """The file, relative to the site root, that a same-site URL path names."""
    return urls.output_path(url)


def link_problems(
    pages: dict[str, Facts], files: Iterable[str], redirected: Iterable[str] = ()
) -> Iterator[SiteProblem]:
    """Every link of `pages` (URL -> facts) that leads to none of `files` (paths relative
    to the site root) nor to a folder's index page or a `redirected` URL; every #anchor
    missing on its page; every load from another host."""
    files = set(files)
    redirects = {file_of(url) for url in redirected}
    ids = {file_of(url): set(f.ids) for url, f in pages.items()}
    answering: dict[str, str | None] = {}  # address -> the file that answers it, if any
    for url, page in sorted(pages.items()):
        path = file_of(url)
        for host in page.hosts:
            yield SiteProblem(path, "W203", "load", f"loads from another host: {host}")
        for link in page.links:
            address, _, anchor = link.partition("#")
            if address not in answering:  # pages share most of their links: resolve each once
                answering[address] = _answering(file_of(address), files, redirects)
            target = answering[address]
            if target is None:
                yield SiteProblem(path, "W201", "link", f"{link} leads to no file")
            elif anchor and target in ids and unquote(anchor) not in ids[target]:
                yield SiteProblem(path, "W202", "link", f"{link}: no id {anchor!r} there")


def _answering(target: str, files: set[str], redirects: set[str]) -> str | None:
    """The file a host serves for `target`: itself, or its folder's index page; `target`
    itself for an address the host redirects; None when there is none."""
    for candidate in (target, target + "/index.html"):
        if candidate in files:
            return candidate
    return target if target in redirects else None


def budget_problems(sizes: dict[str, int]) -> Iterator[SiteProblem]:
    """Error pages (URL -> bytes) over the budget."""
    for url, size in sorted(sizes.items()):
        if size >= PAGE_BUDGET:
            message = f"{size:,} bytes of HTML, over the {PAGE_BUDGET:,} an error page may take"
            yield SiteProblem(file_of(url), "W204", "size", message)


def document_problems(site: Path, urls: Iterable[str], schema: dict) -> Iterator[SiteProblem]:
    """Each JSON document (its URL in `site`) that fails the schema, one problem a field."""
    import fastjsonschema

    valid = fastjsonschema.compile(schema)
    for url in sorted(urls):
        path = file_of(url)
        doc = json.loads((site / path).read_bytes())
        try:
            valid(doc)
        except fastjsonschema.JsonSchemaException:
            yield from _explained(path, doc, schema)


def _explained(path: str, doc: object, schema: dict) -> Iterator[SiteProblem]:
    """What is wrong with an invalid document, by field (jsonschema explains; it is ten
    times slower than fastjsonschema, so it runs only on a document that failed)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for err in validator.iter_errors(doc):
        field = ".".join(map(str, err.absolute_path)) or "(document)"
        yield SiteProblem(path, "W205", field, err.message)


def scan(root: Path) -> dict[str, Facts]:
    """URL -> facts of every page and stylesheet under `root`, read from disk, taking
    `root` as the host's root: for a site errorkb did not write all of (a MkDocs site)."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            url = "/" + path.relative_to(root).as_posix()
            if url.endswith("/index.html"):
                url = url.removesuffix("index.html")
            if (page := facts(url, path.read_bytes())) is not None:
                found[url] = page
    return found


def files_under(root: Path) -> set[str]:
    return {
        Path(folder, name).relative_to(root).as_posix()
        for folder, _, names in os.walk(root)
        for name in names
    }

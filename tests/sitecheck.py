"""Walks a built site: its pages' links and the resources they load."""

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Attributes through which a page loads something (as opposed to linking to it).
LOADING = {
    ("script", "src"),
    ("img", "src"),
    ("source", "src"),
    ("iframe", "src"),
    ("video", "src"),
    ("audio", "src"),
    ("embed", "src"),
    ("object", "data"),
}


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "link" and attrs.get("href"):
            rel = attrs.get("rel", "")
            (self.links if rel in ("canonical", "alternate") else self.loads).append(attrs["href"])
        for t, attr in LOADING:
            if tag == t and attrs.get(attr):
                self.loads.append(attrs[attr])


def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def target_file(site: Path, url_path: str) -> Path:
    path = site / unquote(url_path).lstrip("/")
    return path / "index.html" if url_path.endswith("/") else path


def broken_links(site: Path) -> list[str]:
    """Every internal link (and #anchor) of every page that does not resolve."""
    return check_site(site)[0]


def external_loads(site: Path) -> list[str]:
    """Resources any page would fetch from another host."""
    return check_site(site)[1]


def check_site(site: Path) -> tuple[list[str], list[str]]:
    """(broken links, loads from another host), in one walk of the site's pages: a site of
    25,000 records has 70,000 of them."""
    ids: dict[Path, set[str]] = {}
    later: list[tuple[Path, str, Path, str]] = []  # anchors into pages not read yet
    broken, external = [], []
    for page in site.rglob("*.html"):
        parsed = parse(page)
        ids[page] = parsed.ids
        external += [
            f"{page.relative_to(site)}: {src}" for src in parsed.loads if urlsplit(src).netloc
        ]
        for href in parsed.links + parsed.loads:
            url = urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            target = _target(site, page, url.path)
            if target != page and not target.exists():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif url.fragment and target.suffix == ".html":
                later.append((page, href, target, url.fragment))
    for page, href, target, anchor in later:
        known = ids[target] if target in ids else parse(target).ids
        if anchor not in known:
            broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    for css in site.rglob("*.css"):
        text = css.read_text()
        if "url(http" in text or "@import" in text:
            external.append(str(css.relative_to(site)))
    return broken, external


def _target(site: Path, page: Path, path: str) -> Path:
    if not path:
        return page
    if path.startswith("/"):
        return target_file(site, path)
    return target_file(site, str((page.parent / path).relative_to(site)))

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
    pages = {p: parse(p) for p in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for href in parsed.links + parsed.loads:
            url = urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            target = (
                page
                if not url.path
                else (
                    target_file(site, url.path)
                    if url.path.startswith("/")
                    else target_file(site, str((page.parent / url.path).relative_to(site)))
                )
            )
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if url.fragment not in ids:
                    broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    return broken


def external_loads(site: Path) -> list[str]:
    """Resources any page would fetch from another host."""
    found = []
    for page in site.rglob("*.html"):
        for src in parse(page).loads:
            if urlsplit(src).netloc:
                found.append(f"{page.relative_to(site)}: {src}")
    for css in site.rglob("*.css"):
        text = css.read_text()
        if "url(http" in text or "@import" in text:
            found.append(str(css.relative_to(site)))
    return found

"""A site of its own below its host's root, as GitHub Pages publishes a project's site at
https://<owner>.github.io/<repo>/: the base URL's path is in every link, fetch and rule, and
the site works there on a plain static server (as Pages serves it) and in `errorkb serve`."""

import functools
import json
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from errorkb import urls
from errorkb.serve import make_server
from errorkb.site.build import build
from tests.conftest import FIXTURE, make_kb, serve_in_thread

BASE = "https://owner.github.io/repo"
WIDGET = "ValueError: Widget count (12) must be divisible by group size (5)."
LINK = re.compile(rb'(?:href|src|action|content)="(/[^"]*)"')


@pytest.fixture(scope="module")
def subpath_kb(tmp_path_factory):
    def fill(path: Path) -> None:
        shutil.copytree(FIXTURE / "content", path / "content")
        site = path / "content" / "site.yaml"
        site.write_text(re.sub(r"(?m)^base_url: .*$", f"base_url: {BASE}", site.read_text()))

    kb = make_kb(tmp_path_factory.mktemp("subpath") / "kb", fill)
    old = urls.configure()
    try:
        result = build(kb, checked=True)
    finally:
        urls.restore(old)
    return kb, result


def _links(site: Path) -> set[str]:
    found = set()
    for page in site.rglob("*.html"):
        found.update(m.decode() for m in LINK.findall(page.read_bytes()))
    return found


@pytest.mark.slow
def test_every_link_of_the_site_is_below_its_path_and_leads_to_a_file(subpath_kb):
    kb, result = subpath_kb
    assert result.problems == []  # build --check: no broken link, anchor or document
    links = _links(result.out)
    assert links and all(link == "/repo" or link.startswith("/repo/") for link in links), sorted(
        link for link in links if not link.startswith("/repo/")
    )[:5]
    for link in links:
        path = link.removeprefix("/repo").split("?")[0].split("#")[0].lstrip("/")
        target = result.out / path
        assert (target / "index.html" if target.is_dir() else target).exists() or path.startswith(
            "e/"
        ), link


def test_the_search_index_and_api_name_the_sites_own_addresses(subpath_kb):
    _, result = subpath_kb
    index = json.loads((result.out / "search" / "index.json").read_text())
    assert index["page_url"].startswith(BASE + "/errors/")
    assert index["api_base"] == BASE + "/api/"
    sitemap = (result.out / "sitemap.xml").read_text()
    assert f"<loc>{BASE}/</loc>" in sitemap and "https://owner.github.io/repo/repo" not in sitemap


def _get(url: str) -> tuple[int, bytes, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as answer:
        return answer.code, answer.read(), dict(answer.headers)


@contextmanager
def _static_host(site: Path, tmp_path: Path) -> Iterator[str]:
    """What GitHub Pages does: the folder's files at /repo/, nothing else; its address."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "repo").symlink_to(site)
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(host))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serve_in_thread(server)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_plain_static_host_serves_it_below_the_path(subpath_kb, tmp_path):
    _, result = subpath_kb
    with _static_host(result.out, tmp_path) as root:
        home = _get(root + "/repo/")
        assert home[0] == 200
        for link in sorted({m.decode() for m in LINK.findall(home[1])})[:40]:
            assert _get(root + link)[0] == 200, link


def test_errorkb_serve_answers_below_the_path(subpath_kb):
    kb, result = subpath_kb
    old = urls.configure(prefix="/repo")  # as `errorkb serve` loads this knowledge base
    server = make_server(result.out, "127.0.0.1", 0)
    serve_in_thread(server)
    try:
        root = f"http://127.0.0.1:{server.server_address[1]}"
        status, body, _ = _get(root + "/repo/")
        assert status == 200
        error = next(m.decode() for m in LINK.findall(body) if "/errors/" in m.decode())
        assert _get(root + error)[0] == 200
        rid = error.rstrip("/").rsplit("/", 1)[1]
        status, body, headers = _get(f"{root}/repo/api/errors/{rid}.json")
        assert status == 200 and json.loads(body)["id"] == rid
        assert headers.get("Access-Control-Allow-Origin") == "*"
    finally:
        server.shutdown()
        server.server_close()
        urls.restore(old)


@pytest.mark.slow
def test_search_in_the_browser_opens_the_page_below_the_path(subpath_kb, tmp_path, page):
    """In Chromium, from a plain static host below /repo/ (GitHub Pages): the search box
    fetches its index there, and Enter opens the error's page there, values kept."""
    _, result = subpath_kb
    with _static_host(result.out, tmp_path) as root:
        page.goto(f"{root}/repo/")
        page.keyboard.press("/")
        page.keyboard.insert_text(WIDGET)
        page.wait_for_selector(".search-hit")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{root}/repo/errors/00000000000000a1/?count=12&group_size=5")
        assert page.errors == []
        off_site = [u for u in page.requests if u.startswith(root) and "/repo/" not in u]
        assert off_site == []

"""The forms of an error's addresses that people write: /e/ and /errors/ in capitals or without
the closing slash, /api/errors/<id> without .json. `serve` answers each from the site, and
the `_redirects` the build writes makes Netlify answer each as far as Netlify can, at the
site's root and under a docs site's sub-path (/en/latest/)."""

import http.client
import re

import pytest

from errorkb import urls
from errorkb.serve import make_server
from errorkb.site import shortlinks
from errorkb.site.build import build, load_plan
from tests.conftest import make_kb, serve_in_thread

RID = "abcdef0123456789"  # the one record of the fixture with a short link of its own
SHORT = RID[:8]
UNKNOWN = "0123456789abcdef"
PREFIX = "/en/latest"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The fixture knowledge base and one record more, whose short link is its own, built."""
    kb = make_kb(tmp_path_factory.mktemp("forms") / "kb")
    records = kb / "content/errors/demo"
    text = (records / "00000000000000b2.yaml").read_text()
    body = text.replace("00000000000000b2", RID, 1).replace("line: 30", "line: 60")
    (records / f"{RID}.yaml").write_text(body)
    return build(kb).out


# ---------------------------------------------------------------- errorkb serve


@pytest.fixture(scope="module")
def port(site):
    srv = make_server(site, "127.0.0.1", 0)
    serve_in_thread(srv)
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def fetch(port: int, path: str) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def follow(port: int, path: str) -> tuple[list[str], int, dict, bytes]:
    """The addresses a client is sent through, and the answer at the last."""
    hops = [path]
    while True:
        status, headers, body = fetch(port, hops[-1])
        if status != 301:
            return hops, status, headers, body
        assert len(hops) < 4, hops
        hops.append(headers["Location"])


PAGE = f"/errors/{RID}/"

SERVED_PAGE = [
    f"/e/{SHORT}/",
    f"/e/{SHORT}",
    f"/e/{SHORT.upper()}/",
    f"/E/{SHORT.upper()}",
    f"/e/{RID}",  # the whole id
    f"/e/{RID.upper()}/",
    f"/errors/{RID}",
    f"/errors/{RID.upper()}/",
    f"/Errors/{RID.upper()}",
]


@pytest.mark.parametrize("path", SERVED_PAGE)
def test_serve_takes_every_form_of_a_page_address_to_the_page(path, port, site):
    hops, status, _, body = follow(port, path + "?count=7")
    assert (hops[-1], status) == (PAGE + "?count=7", 200), hops
    assert body == (site / f"errors/{RID}/index.html").read_bytes()


BARE_JSON = [f"/api/errors/{RID}", f"/api/errors/{RID}/", f"/API/errors/{RID.upper()}"]


@pytest.mark.parametrize("path", BARE_JSON)
def test_serve_answers_the_json_without_its_extension(path, port, site):
    hops, status, headers, body = follow(port, path)
    assert status == 200, hops
    assert hops[-1] in (path, f"/api/errors/{RID}"), "answered there, or in lower case"
    assert body == (site / f"api/errors/{RID}.json").read_bytes()
    assert headers["Content-Type"] == "application/json"
    assert headers["Access-Control-Allow-Origin"] == "*"


UNKNOWN_JSON = [
    f"/api/errors/{UNKNOWN}",
    f"/api/errors/{UNKNOWN}.json",
    f"/api/errors/{UNKNOWN.upper()}",
]


@pytest.mark.parametrize("path", UNKNOWN_JSON)
def test_serve_answers_an_unknown_id_with_the_apis_json_404(path, port, site):
    hops, status, headers, body = follow(port, path)
    assert status == 404, hops
    assert body == (site / "api/404.json").read_bytes()
    assert headers["Content-Type"] == "application/json"
    assert headers["Access-Control-Allow-Origin"] == "*"


def test_serve_answers_an_unknown_page_with_the_404_page(port, site):
    for path in (f"/errors/{UNKNOWN}/", f"/errors/{UNKNOWN.upper()}", "/NOWHERE/"):
        hops, status, _, body = follow(port, path)
        assert status == 404, hops
        assert body == (site / "404.html").read_bytes()


# ---------------------------------------------------------------- Netlify


def netlify_rules(text: str) -> list[tuple[re.Pattern, str, int]]:
    """A _redirects file as Netlify documents it: `from to [status]`, 301 by default, `#`
    comments; `:name` stands for one segment, a closing `*` for the rest (`:splat` in the
    target); a closing slash does not count. Matched case for case: whether Netlify ignores
    case we could not verify, so the emulation does not."""
    rules = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        source = re.escape(fields[0].rstrip("/"))
        source = re.sub(r":(\w+)", r"(?P<\1>[^/]+)", source)
        source = re.sub(r"/\\\*$", r"(?:/(?P<splat>.*))?", source)
        status = int(fields[2]) if len(fields) > 2 else 301
        rules.append((re.compile(source + "/?"), fields[1], status))
    return rules


def netlify(files: set[str], rules, address: str) -> tuple[int, str]:
    """What Netlify answers: (3xx, Location), or (status, the file it sends, "404 page" for the
    publish folder's 404 page). A file at the address shadows every rule; a folder's address
    without its slash is redirected to it; a 200 rewrite serves its target under the address
    asked (and, as `netlify dev` does, the 404 page when there is no file there: rules are not
    applied again); a 404 rule sends its target as not found; the query string is kept."""
    path, mark, query = address.partition("?")
    index = path + ("" if path.endswith("/") else "/") + "index.html"
    if path in files or (path.endswith("/") and index in files):
        return 200, path if path in files else index
    if index in files:
        return 301, path + "/" + mark + query
    for source, target, status in rules:
        if (found := source.fullmatch(path)) is None:
            continue
        to = re.sub(r":(\w+)", lambda m: found.groupdict().get(m[1]) or m[0], target)
        if status in (301, 302):
            return status, to + mark + query
        to_index = to + "index.html" if to.endswith("/") else to
        return (status, to_index) if to_index in files else (404, "404 page")
    return 404, "404 page"


def netlify_follow(files, rules, address: str) -> tuple[list[str], int, str]:
    hops = [address]
    while (answer := netlify(files, rules, hops[-1]))[0] == 301:
        assert len(hops) < 4, hops
        hops.append(answer[1])
    return hops, *answer


def published(site, prefix: str) -> set[str]:
    """The addresses of the site's files, published under `prefix`."""
    return {f"{prefix}/{path.relative_to(site)}" for path in site.rglob("*") if path.is_file()}


def on_netlify(p: str) -> dict[str, tuple[int, str]]:
    """Address asked -> (status, file sent) at the end, on Netlify, under the prefix `p`."""
    page, json = f"{p}/errors/{RID}/index.html", f"{p}/api/errors/{RID}.json"
    return {
        f"{p}/e/{SHORT}/?count=7": (200, page),
        f"{p}/e/{SHORT}?count=7": (200, page),
        f"{p}/e/{RID}": (200, page),
        f"{p}/errors/{RID}": (200, page),
        f"{p}/api/errors/{RID}": (200, json),
        f"{p}/api/errors/{RID}/": (200, json),
        f"{p}/api/errors/{RID}.json": (200, json),
        f"{p}/api/nowhere.json": (404, f"{p}/api/404.json"),
        f"{p}/api/projects/nowhere/": (404, f"{p}/api/404.json"),
        # What Netlify cannot do with a file of rules: the 404 page answers, and its script
        # takes a browser on (capitals); a client without JavaScript gets the 404 status.
        f"{p}/e/{SHORT.upper()}/": (404, "404 page"),
        f"{p}/errors/{RID.upper()}/": (404, "404 page"),
        f"{p}/api/errors/{RID.upper()}": (404, "404 page"),
        f"{p}/api/errors/{UNKNOWN}": (404, "404 page"),
        f"{p}/api/errors/{UNKNOWN}.json": (404, "404 page"),
    }


@pytest.fixture(scope="module")
def under_sub_path(site) -> str:
    """The _redirects of the same site built for /en/latest/."""
    content = load_plan(site.parent).content
    old = urls.configure(PREFIX + "/")
    try:
        return shortlinks.redirects_file(content).decode()
    finally:
        urls.restore(old)


@pytest.mark.parametrize("prefix", ["", PREFIX])
def test_netlify_answers_each_form_from_the_written_redirects(prefix, site, under_sub_path):
    text = under_sub_path if prefix else (site / "_redirects").read_text()
    files, rules = published(site, prefix), netlify_rules(text)
    for asked, answer in on_netlify(prefix).items():
        hops, *got = netlify_follow(files, rules, asked)
        assert tuple(got) == answer, hops
        query = "?count=7" if "?" in asked else ""
        assert hops[-1].endswith(query), hops


def test_the_redirects_under_a_sub_path_carry_its_prefix(under_sub_path):
    rules = [line.split() for line in under_sub_path.splitlines() if not line.startswith("#")]
    assert [PREFIX + "/api/errors/:id", PREFIX + "/api/errors/:id.json", "200"] in rules
    assert [PREFIX + "/api/*", PREFIX + "/api/404.json", "404"] in rules
    assert [f"{PREFIX}/e/{SHORT}/", f"{PREFIX}/errors/{RID}/", "301"] in rules
    assert rules[-2] == [PREFIX + "/e/:id/", PREFIX + "/errors/:id/", "301"]
    assert rules[-1] == [PREFIX + "/e/:id", PREFIX + "/e/:id/", "301"]
    assert all(field.startswith(PREFIX + "/") for rule in rules for field in rule[:2])


# ---------------------------------------------------------------- Cloudflare Pages


def cloudflare_rules(text: str) -> list[tuple[re.Pattern, str, int]]:
    """A _redirects file as Cloudflare Pages reads it: the rules with no placeholder first,
    then the others, each in the file's order; `:name` is one segment, a closing `*` the rest;
    the closing slash is matched exactly (a rule for /a/ does not answer /a)."""
    static, dynamic = [], []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        source = re.escape(fields[0])
        source = re.sub(r":(\w+)", r"(?P<\1>[^/]+)", source)
        source = re.sub(r"\\\*$", r"(?P<splat>.*)", source)
        status = int(fields[2]) if len(fields) > 2 else 302
        rule = (re.compile(source), fields[1], status)
        (dynamic if ":" in fields[0] or "*" in fields[0] else static).append(rule)
    return static + dynamic


def cloudflare(files: set[str], rules, address: str) -> tuple[int, str]:
    """What Cloudflare Pages answers: its rules first (they apply whether or not a file is
    there), then the file, a folder's address without its slash redirected to it (308), else
    the 404 page. The query string is kept."""
    path, mark, query = address.partition("?")
    for source, target, status in rules:
        if (found := source.fullmatch(path)) is None:
            continue
        to = re.sub(r":(\w+)", lambda m: found.groupdict().get(m[1]) or m[0], target)
        if status // 100 == 3:
            return status, to + mark + query
        to_index = to + "index.html" if to.endswith("/") else to
        return (200, to_index) if to_index in files else (404, "404 page")
    index = path + ("" if path.endswith("/") else "/") + "index.html"
    if path in files or (path.endswith("/") and index in files):
        return 200, path if path in files else index
    if index in files:
        return 308, path + "/" + mark + query
    return 404, "404 page"


@pytest.mark.parametrize("prefix", ["", PREFIX])
def test_cloudflare_takes_short_links_with_or_without_the_slash_to_the_page(
    prefix, site, under_sub_path
):
    """Issue 44: /e/<prefix> without its slash reached the page only through the 404 page's
    script on Cloudflare Pages, which matches a rule's closing slash exactly."""
    text = under_sub_path if prefix else (site / "_redirects").read_text()
    files, rules = published(site, prefix), cloudflare_rules(text)
    page = f"{prefix}/errors/{RID}/index.html"
    for asked in (f"/e/{SHORT}/", f"/e/{SHORT}", f"/e/{RID}", f"/e/{RID}/", f"/errors/{RID}"):
        hops = [prefix + asked + "?count=7"]
        while (answer := cloudflare(files, rules, hops[-1]))[0] in (301, 308):
            assert len(hops) < 4, hops
            hops.append(answer[1])
        assert answer == (200, page), hops
        assert hops[-1].endswith("?count=7"), hops

"""The build: every page section, the JSON API, determinism, the atomic swap, links."""

import errno
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree

import jsonschema
import pytest
from referencing import Registry, Resource

from errorkb import urls
from errorkb.content.model import ContentError
from errorkb.projects import pyodide
from errorkb.site import build as build_module
from errorkb.site import publish
from errorkb.site.build import CACHE_DIR, build
from errorkb.site.publish import site_manifest
from errorkb.site.shows import Shows
from tests.conftest import fresh_copy, make_kb

A1 = "00000000000000a1"


def has_manifest(folder: Path, out: Path) -> bool:
    return bool(publish._read_manifest(folder, out))


def html(site: Path, url: str) -> str:
    return (site / url.lstrip("/") / "index.html").read_text()


def test_error_page_has_every_section_in_order(fixture_site):
    page = html(fixture_site, f"/errors/{A1}/")
    order = [
        'example/demo</a> · error · <span class="exc">ValueError</span>',
        'id="message"',
        'id="solutions"',  # what to change first (issue 44), then why
        'id="example-fix"',
        'id="meaning"',
        'id="source"',
        'id="defensive"',
        'id="prevention"',
        'id="when-it-happens"',
        'id="trigger"',
        'id="situations"',
        'id="related"',
        "Human analysis of",
        f'<a href="/api/errors/{A1}.json">Data as JSON</a>',
        "Report an issue",
    ]
    positions = [page.index(marker) for marker in order]
    assert positions == sorted(positions)


def test_error_page_content(fixture_site):
    page = html(fixture_site, f"/errors/{A1}/")
    assert '<var class="ph" data-param="count">{count}</var>' in page
    assert (
        "https://github.com/example/demo/blob/abc1234/demo/widgets.py#L42" in page
        and "View on GitHub (pinned to abc1234)" in page
    )
    assert "<code>demo/widgets.py:42</code> in <code>Grouper.split</code>" in page
    assert "Groups must be <strong>equal</strong>" in page  # markdown rendered
    assert '<span class="k">raise</span>' in page  # snippet highlighted by Pygments
    assert "Human analysis of example/demo@abc1234 (2026-11-01)" in page
    assert "https://github.com/example/kb/issues/new?title=%5B00000000000000a1%5D" in page
    assert 'href="/guides/grouping/"' in page  # guide covering this record
    assert 'href="/errors/00000000000000b2/"' in page  # related


def test_sections_absent_from_a_record_are_absent_from_its_page(fixture_site):
    page = html(fixture_site, "/errors/00000000000000b2/")
    for anchor in (
        "meaning",
        "solutions",
        "example-fix",
        "defensive",
        "prevention",
        "when-it-happens",
    ):
        assert f'id="{anchor}"' not in page
    assert 'id="source"' in page and 'id="related"' in page


def test_markup_in_records_is_escaped_and_retired_records_say_so(fixture_site):
    page = html(fixture_site, "/errors/00000000000000c3/")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "Retired." in page and "Removed in <strong>2.0</strong>" in page


def test_head_tags_for_link_previews(fixture_site):
    page = html(fixture_site, f"/errors/{A1}/")
    assert f'<link rel="canonical" href="https://kb.example.org/errors/{A1}/">' in page
    assert f'<link rel="alternate" type="application/json" href="/api/errors/{A1}.json"' in page
    assert '<meta property="og:title" content="Widget count not divisible by group size">' in page
    assert (
        '<meta property="og:description" content="The widgets cannot be split evenly into groups.">'
    ) in page
    assert f'<meta property="og:image" content="https://kb.example.org/cards/{A1}.png">' in page
    assert '<meta name="twitter:card" content="summary_large_image">' in page


def test_alias_gets_a_redirect_page_and_a_json_copy(fixture_site):
    page = html(fixture_site, "/errors/00000000000000ff/")
    assert f'content="0; url=/errors/{A1}/"' in page
    copy = json.loads((fixture_site / "api/errors/00000000000000ff.json").read_text())
    assert copy["id"] == A1 and copy["alias"] == "00000000000000ff"


def test_json_document(fixture_site):
    doc = json.loads((fixture_site / f"api/errors/{A1}.json").read_text())
    assert doc["schema_version"] == 1
    assert doc["message"].startswith("Widget count ({count})")
    assert doc["url"] == f"https://kb.example.org/api/errors/{A1}.json"
    assert doc["html_url"] == f"https://kb.example.org/errors/{A1}/"
    assert doc["modified"] == "2026-11-02"
    assert (
        doc["html"]["meaning"]
        == "<p>Groups must be <strong>equal</strong>; a remainder cannot be placed.</p>\n"
    )
    assert doc["computed"]["source_url"].endswith("/demo/widgets.py#L42")
    assert [r["title"] for r in doc["computed"]["related"]] == [
        "Group size must be positive"  # no placeholders in a title
    ]
    assert not (fixture_site / f"api/errors/{A1}").exists(), "one file a record, no twin"


def _openapi_validator(site: Path, component: str):
    """A validator for one component of the site's OpenAPI file. What it references in
    other files of the API is read from the site, as a client would fetch it."""
    spec = json.loads((site / "api/openapi.json").read_text())
    schema = {
        "$id": spec["servers"][0]["url"] + "/api/openapi.json",
        "$ref": f"#/components/schemas/{component}",
        "components": spec["components"],
    }

    def fetch(uri: str) -> Resource:
        return Resource.from_contents(json.loads((site / urlsplit(uri).path[1:]).read_text()))

    return jsonschema.Draft202012Validator(schema, registry=Registry(retrieve=fetch))


def _response_component(spec: dict, path: str) -> str:
    ref = spec["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    return ref["$ref"].rsplit("/", 1)[1]


@pytest.mark.parametrize("which", ["fixture_site", "real_site"])
def test_every_json_file_matches_the_schema_openapi_names(which, request):
    site = request.getfixturevalue(which)
    spec = json.loads((site / "api/openapi.json").read_text())
    assert spec["openapi"] == "3.1.0"
    checks = {
        "api/errors/*.json": "/api/errors/{id}.json",
        "api/index.json": "/api/index.json",
        "api/projects/*.json": "/api/projects/{project}.json",
    }
    if which == "real_site":
        # Its 33,000 error documents are held to the schema by the build's own check
        # (test_the_site_passes_its_check: W205), against the file that OpenAPI's
        # ErrorDocument names (test_api_schema); validating them again here took 47 s.
        del checks["api/errors/*.json"]
    counted = 0
    for pattern, path in checks.items():
        validator = _openapi_validator(site, _response_component(spec, path))
        for file in site.glob(pattern):
            validator.validate(json.loads(file.read_text()))
            counted += 1
    assert counted >= 4
    not_found = spec["paths"]["/api/index.json"]["get"]["responses"]["404"]["content"]
    name = not_found["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    _openapi_validator(site, name).validate(json.loads((site / "api/404.json").read_text()))
    published = json.loads((site / "api/schema/record.json").read_text())
    source = json.loads(Path("generator/error.schema.json").read_text())
    assert published == {**source, "$id": spec["servers"][0]["url"] + "/api/schema/record.json"}


def test_project_page_groups_by_source_file(fixture_site):
    page = html(fixture_site, "/projects/demo/")
    # One area, open, whose one folder keeps its anchor (#demo/, a file page's link)
    assert '<details class="group" data-filter-group open>\n<summary><code>demo/</code>' in page
    assert '<span id="demo/"></span>' in page
    registry = page.index('href="/projects/demo/files/demo/registry.py/">registry.py</a> 1')
    assert registry < page.index('href="/projects/demo/files/demo/widgets.py/">widgets.py</a> 2')
    widgets = html(fixture_site, "/projects/demo/files/demo/widgets.py/")
    assert widgets.index("00000000000000b2") < widgets.index(A1)  # by line within a file
    listing = json.loads((fixture_site / "api/projects/demo.json").read_text())
    assert listing["count"] == 4


def test_home_guides_sitemap_feed_robots_404(fixture_site):
    home = (fixture_site / "index.html").read_text()
    assert 'href="/projects/demo/"' in home and "4 errors" in home
    guide = html(fixture_site, "/guides/grouping/")
    assert '<h2 id="divisors">Divisors</h2>' in guide and 'href="#padding"' in guide
    sitemap = ElementTree.parse(fixture_site / "sitemap.xml").getroot()
    locs = [e.text for e in sitemap.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert f"https://kb.example.org/errors/{A1}/" in locs
    feed = ElementTree.parse(fixture_site / "feed.xml").getroot()
    atom = "{http://www.w3.org/2005/Atom}"
    assert feed.find(f"{atom}updated").text == "2026-11-02T00:00:00Z"
    assert [e.find(f"{atom}title").text for e in feed.iter(f"{atom}entry")][0] == (
        "Widget count not divisible by group size"
    )
    assert (
        "Sitemap: https://kb.example.org/sitemap.xml" in (fixture_site / "robots.txt").read_text()
    )
    assert "Page not found" in (fixture_site / "404.html").read_text()


@pytest.mark.parametrize("which", ["fixture_build", "real_build"])
def test_the_site_passes_its_check(which, request):
    """The build's own report (build --check): every link and anchor resolves, no page loads
    from another host, every error page keeps to its budget and every document to its schema."""
    result = request.getfixturevalue(which)
    assert result.problems == []
    home = site_manifest(result.out)[urls.home()][2]
    assert any(link.startswith("/assets/") for link in home[1])  # it sees what pages load


def _digest(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def test_build_is_deterministic(kb, tmp_path):
    build(kb, tmp_path / "one")
    os.utime(kb / "content/site.yaml")  # a touched file changes nothing
    build(kb, tmp_path / "two")
    assert _digest(tmp_path / "one") == _digest(tmp_path / "two")


def test_invalid_content_leaves_the_site_untouched(kb):
    build(kb)
    before = _digest(kb / "site")
    (kb / "content/errors/demo/00000000000000b2.yaml").write_text("id: 00000000000000b2\n")
    with pytest.raises(ContentError):
        build(kb)
    assert _digest(kb / "site") == before


def test_a_build_failing_midway_leaves_the_site_whole(kb, monkeypatch):
    build(kb)
    before = _digest(kb / "site")
    (kb / "content/errors/demo/00000000000000b2.yaml").open("a").write("title: Changed\n")
    written = []

    def failing_write(self, url, body, key):
        written.append(url)
        if len(written) == 5:
            raise OSError("disk full")
        original(self, url, body, key)

    original = publish.Writer.write
    monkeypatch.setattr(publish.Writer, "write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        build(kb)
    assert _digest(kb / "site") == before
    assert not has_manifest(kb / ".site-spare", kb / "site")  # marked half-made
    build(kb)
    assert "Changed" in (kb / "site/errors/00000000000000b2/index.html").read_text()


@pytest.mark.slow
def test_a_killed_build_leaves_the_site_whole(kb):
    build(kb)
    before = _digest(kb / "site")
    records = kb / "content/errors/demo"
    text = (records / "00000000000000b2.yaml").read_text()
    for i in range(800):  # enough work that the build is still writing when killed
        rid = f"{0xB000 + i:016x}"
        (records / f"{rid}.yaml").write_text(
            text.replace("00000000000000b2", rid, 1).replace("related: [00000000000000a1]\n", "")
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "build"], stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    spare = kb / ".site-spare"
    while not (spare / "errors").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (spare / "errors").exists(), "the build was killed before it started writing"
    assert not has_manifest(spare, kb / "site")
    assert _digest(kb / "site") == before
    build(kb)  # the next build sets the half-made folder aside and starts afresh
    assert (kb / f"site/errors/{0xB000:016x}/index.html").exists()
    assert has_manifest(spare, kb / "site")  # the replaced site is the next build's spare


def test_incremental_build_gives_exactly_the_output_of_a_full_build(kb, tmp_path):
    build(kb)
    records = kb / "content/errors/demo"
    (records / "00000000000000c3.yaml").unlink()
    a1 = records / "00000000000000a1.yaml"
    a1.write_text(a1.read_text().replace("title: Widget count", "title: The widget count"))
    b2 = (records / "00000000000000b2.yaml").read_text()
    (records / "00000000000000e5.yaml").write_text(
        b2.replace("00000000000000b2", "00000000000000e5").replace("line: 30", "line: 31")
    )
    changed = build(kb)
    assert 0 < changed.rendered < changed.files
    assert build(kb).rendered == 0  # into the spare the last build left: links, renders nothing
    fresh = tmp_path / "fresh"
    fresh_copy(kb, fresh)
    build(fresh)
    assert _digest(kb / "site") == _digest(fresh / "site")
    assert not (kb / "site/errors/00000000000000c3").exists()


def test_the_pages_that_list_records_declare_them(kb):
    """The home page, the feed, the project and tag pages, the guides, the pages at former
    ids, the id lists and the pages of patterns declare the records they list (Shows.lists):
    the inverse the full build keeps names them, so an edit of one that the quick rebuild
    would not remake takes the full build."""
    plan = build_module.load_plan(kb)
    units = {u.url: u.shows for name in ("site pages", "search index")
             for u in plan.producers()[name]()}  # fmt: skip
    content, links = plan.content, plan.links
    recent = [r.id for r in links.recent[:20]]
    assert list(units[urls.home()].lists) == recent
    assert set(units[urls.feed()].lists) <= set(recent) | {r.id for r in links.recent}
    for key in content.projects:
        listed = [r.id for recs in links.by_file.get(key, {}).values() for r in recs]
        assert set(units[urls.project(key)].lists) <= set(listed)
    tagged = {t for r in content.records.values() for t in r.data.get("tags", ())}
    assert tagged and all(units[urls.tag(t)].lists for t in tagged)
    for guide in content.guides:
        assert units[urls.guide(guide.slug)].lists
    for alias, target in content.aliases.items():
        assert units[urls.error(alias)].lists == (target,)
    id_lists = [url for url in units if url.startswith(urls.id_list("")[: -len(".json")])]
    assert {rid for url in id_lists for rid in units[url].lists} == content.records.keys()
    patterns = [url for url in units if url.startswith(urls.search_patterns("")[:-5])]
    assert patterns and content.records.keys() <= {r for u in patterns for r in units[u].lists}
    assert not units[urls.sitemap()].lists and not units[urls.robots()].lists


def test_every_output_declares_what_it_shows_and_is_keyed_by_that_alone(kb):
    """Each producer's outputs and each record's page carry a Shows, and their key is
    key_of that declaration (one recipe for every key)."""
    plan = build_module.load_plan(kb)
    for name, produce in plan.producers().items():
        units = list(produce())
        assert units, name
        for unit in units:
            assert isinstance(unit.shows, Shows), (name, unit.url)
            assert unit.key == plan.key_of(unit.shows), (name, unit.url)
    for rid, record in plan.content.records.items():
        shows = plan.record_shows(record)
        assert shows.full[0] == rid
        assert plan.record_parts(record)[build_module.PAGE][1] == plan.key_of(shows)


def test_incremental_build_follows_functions_and_file_pages(kb, tmp_path):
    """A page shows the errors of its function however far away in the file they are, and a
    file's page the errors raised there from other files: changing those must re-render it."""
    records = kb / "content/errors/demo"

    def write(n: int, function: str, message: str = "Big error {n}", **source) -> None:
        record = {
            "id": f"{0xF000 + n:016x}",
            "project": "demo",
            "exception": "ValueError",
            "message": message.format(n=n),
            "source": {"path": "demo/big.py", "line": 10 * (n + 1), "function": function, **source},
        }
        (records / f"{record['id']}.yaml").write_text(json.dumps(record))  # JSON is YAML

    elsewhere = [{"path": "demo/elsewhere.py", "line": 3}]
    for n in range(14):  # 0 and 13 share a function, too far apart to be each other's neighbours
        write(n, "first" if n in (0, 13) else "other", **({"sites": elsewhere} if n == 10 else {}))
    build(kb)
    write(13, "first", "Big error thirteen")
    write(10, "other", "Big error ten", sites=elsewhere)  # 10 is no neighbour of 0 or 13
    # Incremental indeed: the pages of big.py's 14 records (keyed on their file), the cards of
    # the two retitled, the file pages and the lists, not the whole site.
    assert build(kb).rendered <= 14 * 3 + 2 + 8
    fresh = tmp_path / "fresh"
    fresh_copy(kb, fresh)
    build(fresh)
    assert _digest(kb / "site") == _digest(fresh / "site")
    assert "Big error thirteen" in html(kb / "site", f"/errors/{0xF000:016x}/")
    assert "Big error ten" in html(kb / "site", "/projects/demo/files/demo/elsewhere.py/")


# A module a script imports: at once (`import ... from "./x.js"`, `import "./x.js"`), or
# when the script asks (`import("./x.js")`). Our compacted scripts keep a statement's start
# at a line's start.
_STATIC_IMPORT = re.compile(r"""^import\b[^;]*?["']\./([\w.-]+\.js)["']""", re.M)
_DYNAMIC_IMPORT = re.compile(r"""\bimport\(\s*["']\./([\w.-]+\.js)["']\s*\)""")


# A module case.js loads only on a page with an element of this id: counted only there
# (tests.js, the condition tested on the values: Your case with tests, which it runs unless
# the page's own section, a calculator, answers for the values; members.js, its membership
# tests, where it has one; parts.js, which members.js loads where a part is a printed value
# alone or two versions).
ONLY_WITH = {
    "/assets/tests.js": "case-tests",
    "/assets/members.js": "case-members",
    "/assets/parts.js": "case-parts",
    "/assets/registry.js": "case-registry",
}


def own_weight(facts, size, source) -> tuple[int, int]:
    """The bytes of our CSS and JS an error page loads before anyone types or clicks, as the
    page loads them: without values in its address, and with them. Without: the stylesheet
    and scripts it links (`facts`: its manifest facts) and the modules those import at once.
    With: search.js also imports case.js on a page with a message box (#message), and case.js
    what it imports, at once or as it runs (try.js: counted whenever case.js may load it).
    What loads on intent (match.js as the search box is used, calc-ask.js and the worker as
    the calculator is asked) is not counted. `size` and `source` give an asset's bytes and
    text by URL."""

    def closure(urls_: set[str], follow_dynamic: bool) -> set[str]:
        todo, seen = list(urls_), set()
        while todo:
            url = todo.pop()
            if url in seen or (url in ONLY_WITH and ONLY_WITH[url] not in ids):
                continue
            seen.add(url)
            if url.endswith(".js"):
                text = source(url)
                names = _STATIC_IMPORT.findall(text)
                if follow_dynamic:
                    names += _DYNAMIC_IMPORT.findall(text)
                todo += [url.rsplit("/", 1)[0] + "/" + name for name in names]
        return seen

    ids, links = facts[0], facts[1]
    linked = {link.split("?")[0] for link in links}
    own = {n for n in linked if re.fullmatch(r"/assets/.+\.(css|js)", n)}
    plain = closure(own, follow_dynamic=False)
    loaded = set(plain)
    if "message" in ids and "/assets/search.js" in own:
        loaded |= closure({"/assets/case.js"}, follow_dynamic=True)
    return sum(map(size, plain)), sum(map(size, loaded))


def test_own_weight_counts_imports_and_what_a_page_with_values_loads():
    """own_weight on a made-up site: a calculator page's modules imported at once count, the
    ones it loads on a click do not; with values, case.js and try.js count, and a module two
    scripts import counts once."""
    sources = {
        "/assets/style.css": "x" * 100,
        "/assets/site.js": "a" * 10,
        "/assets/search.js": 'if (q) import("./case.js");\nt ??= import("./match.js");\n',
        "/assets/calc.js": 'import { n } from "./nearest.js";\na ??= import("./calc-ask.js");\n',
        "/assets/nearest.js": "n" * 7,
        "/assets/case.js": 'const { valuesToTry } = await import("./try.js");\n',
        "/assets/try.js": 'import { divisors, nearest } from "./nearest.js";\n',
        "/assets/match.js": "m" * 5000,
        "/assets/calc-ask.js": "c" * 6000,
    }
    size, source = (lambda url: len(sources[url])), sources.__getitem__
    links = [
        "/assets/style.css?v=1",
        "/assets/site.js?v=1",
        "/assets/search.js?v=1",
        "/assets/calc.js?v=2",
        "/x/",
    ]
    base = sum(
        size(u)
        for u in [
            "/assets/style.css",
            "/assets/site.js",
            "/assets/search.js",
            "/assets/calc.js",
            "/assets/nearest.js",
        ]
    )
    with_values = base + size("/assets/case.js") + size("/assets/try.js")
    assert own_weight([["message"], links, []], size, source) == (base, with_values)
    # tests.js counts on a page whose Your case has tests (#case-tests), there only.
    sources["/assets/case.js"] += 'await import("./tests.js");\n'
    sources["/assets/tests.js"] = "t" * 300
    with_values = base + size("/assets/case.js") + size("/assets/try.js")
    assert own_weight([["message"], links, []], size, source) == (base, with_values)
    tested = own_weight([["message", "case-tests"], links, []], size, source)
    assert tested == (base, with_values + 300)
    assert own_weight([[], links, []], size, source) == (base, base)  # no message box
    assert own_weight([["message"], links[:1], []], size, source) == (100, 100)  # no search.js


def test_real_error_pages_load_under_50_kb_of_our_css_and_js(real_build):
    """DESIGN §8: our own CSS and JS under 50 KB (the 20 KB of an error page's HTML is in the
    build's report). What an error page loads before anyone types or clicks: its stylesheet
    and scripts, and the modules they import; opened with values in its address (a search
    result's link, the main flow), also case.js and what it imports (own_weight). The matcher
    (match.js) and the calculator's worker load on intent, as the page's search box is used
    or the calculator asked, so they are not in the page's weight."""
    manifest = site_manifest(real_build.out)
    size = lambda url: manifest[url][1][0]  # noqa: E731
    source = lambda url: (real_build.out / url.lstrip("/")).read_text()  # noqa: E731
    weights = {
        url: own_weight(manifest[url][2], size, source)
        for url in manifest
        if re.fullmatch(urls.error("[0-9a-f]{16}"), url)
    }
    assert len(weights) > 5000
    heaviest = max(weights.items(), key=lambda kv: kv[1][0])
    assert heaviest[1][0] < 50_000, heaviest
    heaviest = max(weights.items(), key=lambda kv: kv[1][1])
    assert heaviest[1][1] < 50_000, heaviest


def test_one_projects_site_alone(kb, tmp_path):
    """--project: that project's records and the shared pages, no link to the others'."""
    (kb / "content/projects/other.yaml").write_text("name: Other\nrepo: example/other\nref: v1\n")
    (kb / "content/errors/other").mkdir()
    (kb / "content/errors/other/00000000000000e7.yaml").write_text(
        "id: 00000000000000e7\nproject: other\nexception: ValueError\n"
        "message: Other thing failed.\nsource: {path: other/x.py, line: 3}\n"
        f"related: [{A1}]\n"
    )
    a1 = kb / f"content/errors/demo/{A1}.yaml"
    a1.write_text(a1.read_text().replace("related: [", "related: [00000000000000e7, ", 1))
    build(kb, tmp_path / "all")
    assert "00000000000000e7" in html(tmp_path / "all", f"/errors/{A1}/")
    problems = build(kb, tmp_path / "demo", project="demo", checked=True).problems
    site = tmp_path / "demo"
    assert not (site / "errors/00000000000000e7").exists()
    assert not (site / "projects/other").exists()
    assert "00000000000000e7" not in html(site, f"/errors/{A1}/")
    assert (site / "index.html").is_file() and (site / "guides/grouping/index.html").is_file()
    assert problems == []  # no link to the other project's pages is left to break
    with pytest.raises(build_module.BuildError, match="no project 'nope'"):
        build(kb, tmp_path / "nope", project="nope")


def test_a_page_facts_take_empty_and_single_quoted_ids():
    """An empty id="" (a heading Markdown gave no slug) is read as an id, not as a missing
    value that stopped the build (it raised TypeError in the facts of the page)."""
    from errorkb.site import check

    facts = check.facts("/errors/x/", b'<h2 id="">A</h2> <p id=\'b\'>B</p> <a href="#b">b</a>')
    assert facts.ids == ["", "b"]


def test_facts_read_each_tags_url_as_a_browser_does():
    """The URL attribute of each kind of tag, the first of twins, in either quotes; a <link>
    that loads (a stylesheet) against one that points (canonical); other attributes that
    end like a URL attribute are not one."""
    from errorkb.site import check

    page = (
        b'<a data-href="/no/" href="/one/" href="/twin/">1</a>'
        b"<form action='/find/'></form><img alt=x src=\"https://img.example/a.png\">"
        b'<link rel="stylesheet" href="https://css.example/s.css">'
        b'<link href="https://kb.example/canonical/" rel="canonical">'
        b'<script src="/a.js"></script><object data="https://obj.example/o"></object>'
        b'<a href="mailto:x@example.org">m</a><a name="top">no URL</a>'
    )
    facts = check.facts("/errors/x/", page)
    assert facts.links == ["/a.js", "/find/", "/one/"]
    assert facts.hosts == ["css.example", "img.example", "obj.example"]


@pytest.mark.slow
def test_knowledge_bases_in_other_folders_share_compiled_templates(tmp_path):
    """Compiled templates are keyed by name and source, not by path: a second knowledge
    base with the same templates compiles none; an edited template is compiled anew."""
    compiled = tmp_path / "compiled"
    compiled.mkdir()
    kbs = [make_kb(tmp_path / name) for name in ("one", "two", "three")]
    for kb in kbs:
        (kb / CACHE_DIR / "templates").unlink()
        (kb / CACHE_DIR / "templates").symlink_to(compiled)
    build(kbs[0])
    first = sorted(compiled.iterdir())
    build(kbs[1])
    assert sorted(compiled.iterdir()) == first
    footer = kbs[2] / "templates/base.html"
    footer.write_text(footer.read_text().replace("</body>", "<p>edited</p></body>"))
    build(kbs[2])
    assert len(list(compiled.iterdir())) == len(first) + 1
    assert "<p>edited</p>" in (kbs[2] / "site/index.html").read_text()


@pytest.mark.parametrize("kernel", ["copies", "cannot copy", "stops midway"])
def test_vendored_files_are_whole_copies_with_or_without_the_kernels_copy(
    kb, tmp_path, monkeypatch, kernel
):
    """Pyodide's files are copied by the kernel where it can, else read and written: either
    way each is a file of its own (Pages takes no hard links) with the source's bytes."""
    real = getattr(os, "copy_file_range", None)
    calls = []

    def refuse(src, dst, count, *args):
        calls.append(count)
        if kernel == "stops midway" and len(calls) % 2 and real is not None:
            return real(src, dst, 1000)  # a part, then the file system refuses
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    if kernel != "copies":
        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    out = build(kb, tmp_path / "out").out
    for url, source in pyodide.vendored(kb):
        copy = out / url.lstrip("/")
        assert copy.read_bytes() == source.read_bytes(), url
        assert copy.stat().st_nlink == 1 and copy.stat().st_ino != source.stat().st_ino


def test_a_section_tag_writes_its_heading_escaped_around_its_body():
    """{% section id, title %}: what the pages' sections are written with. Its id and title
    come from records (a function's name, a project's), so they are escaped like any value;
    its body renders in the page's own context."""
    from jinja2 import DictLoader, Environment

    from errorkb.site.pages import _Sections

    source = '{% section "in-" ~ key, "Other errors in " ~ name %}<p>{{ body }}</p>{% endsection %}'
    env = Environment(loader=DictLoader({"t": source}), autoescape=True, extensions=[_Sections])
    html = env.get_template("t").render(key='x"y', name="<b>f</b>", body="a & b")
    assert html == (
        '<section id="in-x&#34;y" class="section">\n'
        '  <h2><a class="anchor" href="#in-x&#34;y">Other errors in &lt;b&gt;f&lt;/b&gt;</a></h2>\n'
        "  <p>a &amp; b</p>\n</section>"
    )


def test_a_short_flag_in_inline_code_stays_on_one_line():
    """Browsers may break a line after a hyphen: `--dtype float32` came out as `--` at the end
    of one line and `dtype float32` on the next. A short span that opens with a hyphen gets
    class `f` (white-space: nowrap); a long one, or a span that is no flag, wraps as before."""
    from errorkb.site.markup import FLAG_SPAN, markdown

    html = markdown("Try `--dtype float32`, `-tp 2`, `a-b` or `--" + "x" * FLAG_SPAN + "`.")
    assert '<code class="f">--dtype float32</code>' in html
    assert '<code class="f">-tp 2</code>' in html
    assert "<code>a-b</code>" in html and "<code>--xxx" in html
    css = (Path(__file__).parent.parent / "templates/assets/style.css").read_text()
    assert re.search(r"code\.f\b[^{]*\{[^}]*white-space: nowrap", css)


def test_a_page_lists_five_pages_that_link_here_and_counts_the_rest(real_site):
    """The page budget: "Pages that link here" stops at five (REFERRERS_SHOWN), as the raise
    sites stop at ten; the record's JSON lists them all."""
    docs = [json.loads(p.read_text()) for p in (real_site / "api" / "errors").glob("*.json")]
    most = max(
        (d for d in docs if isinstance(d, dict) and "computed" in d),
        key=lambda d: len(d["computed"].get("referenced_by") or []),
    )
    referrers = most["computed"]["referenced_by"]
    assert len(referrers) > 5, "no page with more than five referrers to test on"
    page = (real_site / "errors" / most["id"] / "index.html").read_text()
    shown = page[
        page.index('id="referenced-by"') : page.index(
            "</section>", page.index('id="referenced-by"')
        )
    ]
    assert shown.count("<li>") == 5
    assert f"And {len(referrers) - 5} more, listed in" in shown


def _nested_template_literals(js: str) -> list[int]:
    """The lines where a template literal holds another inside its `${...}`."""
    found, stack, i = [], [], 0  # stack: "`" inside a template, "{" inside its ${...}
    while i < len(js):
        ch = js[i]
        if stack and stack[-1] == "`":
            if ch == "\\":
                i += 1
            elif ch == "`":
                stack.pop()
            elif js.startswith("${", i):
                stack.append("{")
                i += 1
        elif ch in "'\"" and not (stack and stack[-1] == "`"):
            end = i + 1
            while end < len(js) and js[end] != ch and js[end] != "\n":
                end += 2 if js[end] == "\\" else 1
            i = end
        elif js.startswith("//", i):
            i = js.find("\n", i) if "\n" in js[i:] else len(js)
            continue
        elif ch == "`":
            if "{" in stack:
                found.append(js.count("\n", 0, i) + 1)
            stack.append("`")
        elif ch == "{" and stack:
            stack.append("(")
        elif ch == "}" and stack:
            stack.pop()
        i += 1
    return found


def test_no_script_nests_a_template_literal_in_another():
    """The build's script compactor reads strings by their quotes (build._JS_STRING): a
    template literal inside another's ${...} leaves the inner text to the compactor, which
    tightened members.js's " = " to "=" on the page ("quantization=gptq is not among ...")."""
    assets = Path(__file__).resolve().parent.parent / "templates" / "assets"
    nested = {p.name: _nested_template_literals(p.read_text()) for p in assets.glob("*.js")}
    assert {name: lines for name, lines in nested.items() if lines} == {}
    assert _nested_template_literals("const a = `x${b ? `y` : ''}`;") == [1]

"""Pages at scale: stub pages that still help, per-file pages, the project page as a file index."""

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from errorkb.site.build import BuildResult, build
from errorkb.site.linking import SAME_FUNCTION_LIMIT
from tests.conftest import make_kb
from tests.test_build import _openapi_validator

A1 = "00000000000000a1"  # curated, demo/widgets.py:42 in Grouper.split
START = "Engine.start"
IN_START = SAME_FUNCTION_LIMIT + 2  # more than a stub page shows


def rid(n: int) -> str:
    return f"{0xE000 + n:016x}"


def stub(n: int, line: int, function: str | None, path="demo/engine.py", **source) -> dict:
    src = {"path": path, "line": line, **({"function": function} if function else {}), **source}
    return {
        "id": rid(n),
        "project": "demo",
        "exception": "RuntimeError",
        "message": f"Engine failure number {n}",
        "source": src,
        "analysis": {"method": "extracted", "ref": "abc1234"},
    }


STUBS = [
    # Engine.start raises IN_START errors; the first is also raised at two more places,
    # one of them in a file where no record is raised first.
    stub(
        0,
        10,
        START,
        sites=[
            {"path": "demo/engine.py", "line": 15, "function": START},
            {"path": "demo/extra/helpers.py", "line": 5, "function": "start_helper"},
        ],
    ),
    *(stub(n, 10 + 10 * n, START) for n in range(1, IN_START)),
    stub(20, 500, "Engine.stop"),
    stub(21, 600, None),
    stub(22, 44, "Grouper.split", path="demo/widgets.py"),  # beside the curated A1
]
# A warning the program logs, explained from its code as `extract --printed` writes it.
LOGGED = {
    **stub(23, 70, "Engine.warm_up", path="demo/warmup.py"),
    "exception": "WARNING",
    "kind": "log",
    "level": "warning",
    "message": "Warm-up skipped for {count} ranks",
    "derived": {
        "ref": "abc1234",
        "title": "Warm-up skipped",
        "condition": "count > 0",
        "category": "logged",
        "explanation": "A warning: the program logs it and goes on.",
        "try": ["If what it says is what you meant, nothing needs doing."],
    },
}
STUBS.append(LOGGED)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> BuildResult:
    root = make_kb(tmp_path_factory.mktemp("stubs") / "kb")
    for record in STUBS:
        path = root / "content/errors/demo" / f"{record['id']}.yaml"
        path.write_text(yaml.safe_dump(record, sort_keys=False))
    return build(root, checked=True)


@pytest.fixture(scope="module")
def site(built) -> Path:
    return built.out


def html(site: Path, url: str) -> str:
    return (site / url.lstrip("/") / "index.html").read_text()


def doc(site: Path, ident: str) -> dict:
    return json.loads((site / f"api/errors/{ident}.json").read_text())


def section(page: str, anchor: str) -> str:
    start = page.index(f'<section id="{anchor}"')
    return page[start : page.index("</section>", start)]


@pytest.mark.slow
def test_a_stub_page_says_it_is_not_explained_and_how_to_improve_it(site):
    page = html(site, f"/errors/{rid(0)}/")
    box = page[page.index('id="not-explained"') : page.index('id="message"')]  # above the message
    # One line: what the page lacks and where to help; its sections say the rest.
    assert ">Not explained yet</strong> · " in box and "<br>" not in box
    assert "No one has written yet what it means" in box  # the title says why
    edit = f"https://github.com/example/kb/edit/main/content/errors/demo/{rid(0)}.yaml"
    assert f'<a href="{edit}">Improve<span class="wide"> this page</span></a>' in box
    assert f"https://github.com/example/kb/issues/new?title=%5B{rid(0)}%5D" in box
    assert doc(site, rid(0))["computed"]["edit_url"] == edit
    assert doc(site, rid(0))["computed"]["curated"] is False
    # The note's links are the page's: the footer does not repeat them (the page budget).
    assert page.count(edit) == 1 and page.count("/issues/new?title=") == 1


def test_a_stub_page_lists_every_place_it_is_raised(site):
    source = section(html(site, f"/errors/{rid(0)}/"), "source")
    blob = "https://github.com/example/demo/blob/abc1234/"
    assert f"<code>demo/engine.py:10</code> in <code>{START}</code>" in source
    assert f'href="{blob}demo/engine.py#L10"' in source
    assert (
        f'<a href="{blob}demo/engine.py#L15"><code>demo/engine.py:15</code></a> in <code>{START}'
    ) in source
    assert (
        f'<a href="{blob}demo/extra/helpers.py#L5"><code>demo/extra/helpers.py:5</code></a>'
        " in <code>start_helper</code>"
    ) in source


def test_a_stub_page_shows_the_other_errors_of_its_function_capped(site):
    page = html(site, f"/errors/{rid(0)}/")
    shown = section(page, "same-function")
    assert f"Other errors in {START}" in shown
    ids = re.findall(r'href="/errors/(\w+)/"', shown)
    assert ids == [rid(n) for n in range(1, SAME_FUNCTION_LIMIT + 1)]  # the nearest, by line
    assert (
        f'<a href="/projects/demo/files/demo/engine.py/#{rid(0)}">All {IN_START} errors of this '
        "function, with the rest of engine.py</a>"
    ) in shown
    computed = doc(site, rid(0))["computed"]
    assert [r["id"] for r in computed["same_function"]] == ids
    assert computed["same_function"][0]["line"] == 20
    assert computed["same_function_count"] == IN_START - 1
    assert computed["file_html_url"] == "https://kb.example.org/projects/demo/files/demo/engine.py/"
    # the function section does not repeat in the file section, which lists the rest
    rest = section(html(site, f"/errors/{rid(20)}/"), "same-file")
    assert rid(21) in rest and 'href="/projects/demo/files/demo/engine.py/#' in rest
    assert 'id="same-function"' not in html(site, f"/errors/{rid(20)}/")  # alone in Engine.stop
    assert doc(site, rid(21))["computed"]["same_function"] == []  # no function known


def test_curated_pages_stay_as_they_were(site):
    page = html(site, f"/errors/{A1}/")
    assert 'id="not-explained"' not in page and 'id="same-function"' not in page
    assert rid(22) in section(page, "same-file")
    computed = doc(site, A1)["computed"]
    assert computed["curated"] is True
    assert [r["id"] for r in computed["same_function"]] == [rid(22)]  # the data has it


def test_a_file_page_lists_its_errors_by_line(site):
    page = html(site, "/projects/demo/files/demo/engine.py/")
    assert "<h1><code>demo/engine.py</code></h1>" in page
    assert f"{IN_START + 2} errors raised in this file, by line." in page
    assert 'href="https://github.com/example/demo/blob/abc1234/demo/engine.py"' in page
    assert 'href="/projects/demo/#demo/">demo/</a>' in page  # up to its folder
    rows = re.findall(r'<li id="(\w+)"><a href="/errors/(\w+)/">([^<]*)</a>', page)
    expected = [rid(n) for n in range(IN_START)] + [rid(20), rid(21)]
    assert [r[0] for r in rows] == [r[1] for r in rows] == expected
    assert rows[0][2] == "Engine failure number 0"
    first = page[page.index(f'<li id="{rid(0)}">') : page.index(f'<li id="{rid(1)}">')]
    assert '<span class="exc">RuntimeError</span>' in first
    assert '#L10">line 10</a> in <code>Engine.start</code>; ' in first
    assert '#L15">line 15</a> in <code>Engine.start</code>' in first  # both places here


def test_a_file_raising_only_other_records_errors_has_a_page_too(site):
    page = html(site, "/projects/demo/files/demo/extra/helpers.py/")
    assert "1 error raised in this file" in page
    assert f'<li id="{rid(0)}">' in page and "in <code>start_helper</code>" in page
    assert f'href="/projects/demo/files/demo/engine.py/#{rid(0)}">main place</a>' in page


def test_a_file_page_marks_explained_errors(site):
    page = html(site, "/projects/demo/files/demo/widgets.py/")
    assert "; 1 explained." in page
    row = page[page.index(f'<li id="{A1}">') :]
    assert " · explained: The widgets cannot be split evenly into groups." in row


def test_the_project_page_is_an_index_of_files_by_folder(site):
    page = html(site, "/projects/demo/")
    start = section(page, "start")  # the index: explained first (all of them, here)
    assert re.findall(r'href="/errors/(\w+)/"', start) == [A1]
    assert '<section id="explained"' not in page  # the index holds every explained error
    assert re.findall(r'href="/errors/', page[page.index('id="files"') :]) == []  # no error list
    # Areas (a folder's first two levels), closed, each its errors' count; a folder that is
    # its area's only one is the area's heading, and keeps its anchor (#demo/).
    areas = re.findall(r'<summary><code>([^<]+)</code> <span class="muted">(\d+)</span>', page)
    assert areas == [("demo/", str(4 + len(STUBS))), ("extra/", "1")]  # below demo/
    assert 'id="demo/"' in page and 'id="demo/extra/"' in page
    files = re.findall(r'<li data-filter-item><a href="([^"]+)">([^<]+)</a> (\d+)', page)
    assert files[-1] == ("/projects/demo/files/demo/extra/helpers.py/", "helpers.py", "1")
    assert ("/projects/demo/files/demo/engine.py/", "engine.py", str(IN_START + 2)) in files
    assert [f[0] for f in files[:-1]] == sorted(f[0] for f in files[:-1])
    assert '<details class="group" data-filter-group>\n<summary><code>demo/</code>' in page
    assert "data-filter-box" in page
    listing = json.loads((site / "api/projects/demo.json").read_text())
    assert listing["count"] == 4 + len(STUBS)  # the JSON lists every error, as before


def test_file_pages_are_in_the_sitemap_and_every_link_resolves(site, built):
    sitemap = ElementTree.parse(site / "sitemap.xml").getroot()
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    locs = [e.text for e in sitemap.iter(f"{ns}loc")]
    assert "https://kb.example.org/projects/demo/files/demo/extra/helpers.py/" in locs
    assert built.problems == []


def test_documents_match_the_published_schema(site):
    validator = _openapi_validator(site, "ErrorDocument")
    for file in (site / "api/errors").glob("*.json"):
        validator.validate(json.loads(file.read_text()))


def test_file_urls_are_escaped_and_written_where_they_point(kb):
    record = stub(30, 1, "f", path="demo/odd name#1.py")
    (kb / "content/errors/demo" / f"{rid(30)}.yaml").write_text(yaml.safe_dump(record))
    problems = build(kb, checked=True).problems
    assert (kb / "site/projects/demo/files/demo/odd name#1.py/index.html").exists()
    assert 'href="/projects/demo/files/demo/odd%20name%231.py/"' in html(
        kb / "site", "/projects/demo/"
    )
    assert problems == []


def test_the_file_section_skips_what_the_page_lists_as_related(site):
    """A related error of the same file shows once, under Related errors."""
    pages = 0
    for api_doc in (site / "api/errors").glob("*.json"):
        computed = json.loads(api_doc.read_text())["computed"]
        related = {r["id"] for r in computed["related"]}
        in_file = {r["id"] for r in computed["same_file"]}
        assert not related & in_file, api_doc.name
        pages += bool(related) and bool(in_file)
    assert pages  # some page has both lists


def test_a_log_line_page_says_logged_not_raised(site):
    page = html(site, f"/errors/{LOGGED['id']}/")
    assert "· log line ·" in page and "<h1>Warm-up skipped</h1>" in page
    code = section(page, "from-the-code")
    assert "<dt>Logged when<dd><code>count &gt; 0</code>" in code
    assert "reported in the log" in code and "raised" not in code

"""Every page type of the fixture site in real Chromium, under the Content-Security-Policy
the preview server sends (the one the site's _headers gives static hosts): no violation,
and the things the policy could break still work (Pyodide's answer, search, the banner)."""

import pytest

from errorkb.site.pages import CONTENT_SECURITY_POLICY
from tests.test_serve import server as server  # the fixture: a preview server per test

LOAD = 60_000  # ms: Pyodide's cold start on a shared machine
A1, B2, C3, D4 = (f"00000000000000{s}" for s in ("a1", "b2", "c3", "d4"))

# Installed before any page script runs; a violation in the page or one of its frames.
WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__violations.push(`${e.effectiveDirective} ${e.blockedURI} ${where}`);
}, true);
"""


@pytest.fixture(scope="module")
def served(fixture_site, serve_site):
    return serve_site(fixture_site)


@pytest.fixture
def watched(browser):
    """A page that collects CSP violation events and "Refused to" console messages, of the
    page and of its workers."""
    context = browser.new_context()
    context.add_init_script(WATCH_VIOLATIONS)
    pg = context.new_page()
    refused: list[str] = []

    def console(message):
        if "Refused to" in message.text or "Content Security Policy" in message.text:
            refused.append(message.text)

    pg.on("console", console)
    pg.on("worker", lambda worker: worker.on("console", console))
    pg.errors = []
    pg.on("pageerror", lambda err: pg.errors.append(str(err)))

    def violations() -> list[str]:
        return pg.evaluate("window.__violations") + refused

    pg.violations = violations
    yield pg
    context.close()


def visit(page, url: str, ready: str):
    response = page.goto(url)
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    page.locator(ready).first.wait_for()
    page.wait_for_load_state("networkidle")
    return response


PAGES = [
    ("/", "h1", 200),
    (f"/errors/{A1}/?count=12&group_size=5", "#solutions", 200),  # curated, Your values
    (f"/errors/{B2}/", "h1", 200),  # a record without explanations
    (f"/errors/{C3}/", "h1", 200),
    ("/projects/demo/", "[data-filter-input]", 200),
    ("/projects/demo/files/demo/widgets.py/", "h1", 200),
    ("/guides/", "h1", 200),
    ("/guides/grouping/", "h1", 200),
    ("/calc/?heads=40&tp=3", ".calc-form", 200),
    ("/nowhere/", "h1", 404),
    ("/errors/00000000000000ff/", "h1", 200),  # an alias: its redirect page, then the target
]


@pytest.mark.parametrize("path,ready,status", PAGES, ids=[p for p, _, _ in PAGES])
def test_page_loads_without_a_violation(watched, served, path, ready, status):
    response = visit(watched, served + path, ready)
    assert response.status == status
    watched.click("[data-theme-toggle]")  # scripts that restyle the page
    assert watched.violations() == []
    assert watched.errors == []


def test_search_with_a_query_runs_both_tiers_without_a_violation(watched, served):
    visit(watched, served + "/search/?q=Widget%20count%20(12)%20must%20be", "#q-page")
    watched.wait_for_selector(f".search-hit[href^='/errors/{A1}/']")
    watched.fill("#q-page", "group size")  # words: Pagefind's WebAssembly answers
    watched.wait_for_selector(".search-group:has-text('Pages') .search-hit")
    assert watched.violations() == []
    assert watched.errors == []


def test_calculator_widget_answers_with_pyodide_without_a_violation(watched, served):
    visit(watched, served + f"/errors/{D4}/?heads=40&size=3", ".calc-form")
    watched.click(".calc-go")
    widget = watched.locator(".calc").first
    watched.locator(".calc[data-state=answered], .calc[data-state=failed]").first.wait_for(
        timeout=LOAD
    )
    assert widget.get_attribute("data-state") == "answered"
    assert widget.locator("[data-out=valid-tp]").inner_text() == "1, 2, 4, 5, 8, 10, 20, 40"
    assert watched.violations() == []
    assert watched.errors == []


def test_the_failed_build_banner_is_styled_under_the_policy(watched, fixture_site, server):
    srv = server(fixture_site)
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    srv.status.failed(["content/errors/demo/x.yaml:3: E103 id: '<x>' is not valid"])
    visit(watched, base + "/", ".errorkb-problems")
    banner = watched.locator(".errorkb-problems")
    assert banner.locator("pre").inner_text() == (
        "content/errors/demo/x.yaml:3: E103 id: '<x>' is not valid"
    )
    position = banner.evaluate("(el) => getComputedStyle(el).position")
    assert position == "sticky"  # its stylesheet loaded
    assert watched.violations() == []


def test_the_detector_sees_inline_style_script_and_data_images(watched, tmp_path, server):
    """The checks above would catch what the policy refuses."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<!doctype html><html><head><title>t</title></head><body><h1>t</h1>'
        '<p style="color: red">styled</p><script>document.title = "ran"</script>'
        '<img alt="" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
        "</body></html>"
    )
    base = f"http://127.0.0.1:{server(site).server_address[1]}"
    visit(watched, base + "/", "h1")
    found = " ".join(watched.violations())
    for directive in ("style-src-attr", "script-src-elem", "img-src"):
        assert directive in found
    assert watched.title() == "t"


def test_the_copy_link_icon_is_a_file_of_the_site(watched, served):
    """The icon the stylesheet once held as a data: URL, which the policy refuses."""
    loaded = []
    watched.on("response", lambda r: loaded.append((r.url.rsplit("/", 1)[-1], r.status)))
    visit(watched, served + f"/errors/{A1}/", "#solutions .copy-link")
    mask = watched.locator("#solutions .copy-link").evaluate(
        "(el) => getComputedStyle(el, '::before').maskImage"
    )
    assert mask.endswith('/assets/link.svg")')
    assert ("link.svg", 200) in loaded
    assert watched.violations() == []

"""The site in real headless Chromium: sections, dark mode, copy-link, no other hosts."""

from urllib.parse import urlsplit

import pytest

A1 = "00000000000000a1"


@pytest.fixture(scope="module")
def base(fixture_site, serve_site):
    return serve_site(fixture_site)


def test_error_page_sections_are_visible(page, base):
    page.goto(f"{base}/errors/{A1}/")
    assert page.locator("h1").inner_text() == "Widget count not divisible by group size"
    headings = page.locator("section.section h2").all_inner_texts()
    assert [h.strip() for h in headings] == [
        "Solutions",
        "Example fix",
        "What it means",
        "Source",
        "Defensive patterns",
        "Prevention",
        "When it happens",
        "Related errors",
        "Guides",
    ]  # widgets.py's other error is already under Related errors, so no file section
    for anchor in ("meaning", "solutions", "example-fix", "related"):
        assert page.locator(f"#{anchor}").is_visible()
    assert page.locator("var.ph[data-param=count]").first.is_visible()
    assert page.errors == []


def test_dark_mode_follows_the_system_and_the_toggle(page, base):
    page.emulate_media(color_scheme="dark")
    page.goto(f"{base}/errors/{A1}/")
    background = "getComputedStyle(document.body).backgroundColor"
    dark = page.evaluate(background)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.click("[data-theme-toggle]")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    light = page.evaluate(background)
    assert dark == "rgb(15, 17, 23)" and light == "rgb(255, 255, 255)"
    page.reload()  # the choice persists
    assert page.evaluate(background) == light


def test_copy_link_button_copies_the_section_permalink(page, base):
    page.goto(f"{base}/errors/{A1}/")
    page.click("#solutions .copy-link")
    assert page.evaluate("navigator.clipboard.readText()") == f"{base}/errors/{A1}/#solutions"
    assert page.locator("#solutions .copy-link.copied").count() == 1
    assert urlsplit(page.url).fragment == "solutions"


def test_every_request_stays_on_localhost(page, base):
    for url in (f"/errors/{A1}/", "/", "/projects/demo/", "/guides/grouping/", "/nowhere/"):
        page.goto(base + url)
    hosts = {urlsplit(u).hostname for u in page.requests}
    assert hosts == {"127.0.0.1"}
    assert any(u.endswith(".css?v=" + u.split("?v=")[-1]) for u in page.requests)


def test_missing_page_shows_the_404_page(page, base):
    response = page.goto(f"{base}/errors/0000000000000000/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Page not found"


def test_project_filter_narrows_the_list(page, base):
    page.goto(f"{base}/projects/demo/")
    page.fill("[data-filter-input]", "regis")
    visible = page.locator("[data-filter-item]:visible").all_inner_texts()
    assert visible == ["registry.py 1"]
    assert page.locator("[data-filter-count]").inner_text() == "1 shown"


def test_project_filter_finds_files_among_thousands_of_errors(page, real_site, serve_site):
    """The real project page: folders of files; typing narrows files and hides empty folders."""
    page.goto(f"{serve_site(real_site)}/projects/vllm/")
    files = page.locator("[data-filter-item]")
    assert files.count() > 1000
    page.fill("[data-filter-input]", "moriio connector")  # every word, anywhere in the path
    shown_items = page.locator("[data-filter-item]:visible").all()
    # the files (in their folders); the explained errors' list filters by title alike
    paths = [
        item.get_attribute("data-filter-text")
        for item in page.locator(".file-group [data-filter-item]:visible").all()
    ]
    assert "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py" in paths
    assert all("moriio" in p and "connector" in p for p in paths)
    assert page.locator("[data-filter-count]").inner_text() == f"{len(shown_items)} shown"
    # The folders that hold them are shown (their areas opened), the others hidden.
    folders = page.locator(".file-group:visible").all()
    shown = {f.locator("[id]").first.get_attribute("id") for f in folders}
    assert shown == {p.rpartition("/")[0] + "/" for p in paths}
    page.get_by_role("link", name="moriio_connector.py", exact=True).click()
    assert page.url.endswith(
        "/files/vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py/"
    )
    assert page.locator("h1").inner_text().endswith("/moriio/moriio_connector.py")
    assert page.errors == []


def test_phone_width_has_no_horizontal_scroll(browser, base):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    pg = context.new_page()
    pg.goto(f"{base}/errors/{A1}/")
    overflow = pg.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    context.close()
    assert overflow <= 0


def test_your_case_advises_a_tp_size_that_fits_one_node(page, base):
    # 52 heads on TP 8: 13 divides 52, but no 8-GPU node runs it; 4 (with PP 2) does.
    page.goto(f"{base}/errors/00000000000000d4/?heads=52&size=8")
    page.locator("#your-case .case-verdict").wait_for()
    answer = page.locator("#your-case [data-case-answer]").inner_text()
    assert "52 attention heads cannot be split over 8 GPUs." in answer
    assert "--tensor-parallel-size 4 --pipeline-parallel-size 2" in answer
    assert "--tensor-parallel-size 13" not in answer
    assert page.errors == []


@pytest.mark.parametrize("width", [390, 1280])
def test_a_stub_note_is_one_line(browser, base, width):
    context = browser.new_context(viewport={"width": width, "height": 740})
    pg = context.new_page()
    pg.goto(f"{base}/errors/00000000000000b2/")
    note = pg.locator("#not-explained")
    assert note.inner_text().startswith("Not explained yet · Improve")
    height = note.bounding_box()["height"]
    line = note.evaluate("node => parseFloat(getComputedStyle(node).lineHeight)")
    context.close()
    assert height < 2 * line, height  # one line and its padding

"""Browsing by kind and the search box at a phone's width (issue 44, items 3, 5 and 6): tag
pages and the project page's index and filter, example fixes whose change is seen at 390 px,
the header that keeps its height on a paste, "(press /)" only where there is a keyboard,
results labelled in plain words, and the search box as a combobox."""

from pathlib import Path

import pytest

from errorkb import urls
from errorkb.content import flags
from errorkb.site import markup
from tests.conftest import make_kb

A1 = "00000000000000a1"  # explained, tagged `config`
PHONE = {"width": 390, "height": 800}
AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="module")
def base(fixture_site, serve_site):
    return serve_site(fixture_site)


# ---------------------------------------------------------------- example fixes


LONG = (
    "VLLM_PP_LAYER_PARTITION=16,17,17,14 vllm serve Qwen/Qwen3-32B "
    "--pipeline-parallel-size 4 --max-model-len 32768  # was 131072"
)


def test_a_long_command_is_broken_at_its_options_and_reads_as_the_same_words():
    wrapped = markup._wrapped(LONG, "bash")
    lines = wrapped.split("\n")
    assert lines == [
        "VLLM_PP_LAYER_PARTITION=16,17,17,14 \\",
        "  vllm serve Qwen/Qwen3-32B \\",
        "  --pipeline-parallel-size 4 \\",
        "  --max-model-len 32768 # was 131072",
    ]
    assert list(flags.commands(wrapped))[0][1] == list(flags.commands(LONG))[0][1]
    assert all(len(line) <= markup.WRAP + 2 for line in lines[:-1])


def test_a_continued_line_broken_at_its_options_keeps_its_indent():
    code = (
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-405B-Instruct \\\n"
        "  --tp-size 16 --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:5000"
    )
    assert markup._wrapped(code, "bash").split("\n")[1:] == [
        "  --tp-size 16 \\",
        "  --nnodes 2 \\",
        "  --node-rank 0 \\",
        "  --dist-init-addr 10.0.0.1:5000",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "vllm serve Qwen/Qwen2.5-7B-Instruct",  # one word group: nothing to break
        'docker run -e "A=1  2" vllm/vllm-openai --model x --tp 2',  # spacing kept in quotes
        "# a comment line that is long, long, long --with --dashes",
        "vllm serve x --a 1 \\",  # already continued
    ],
)
def test_lines_that_cannot_be_broken_safely_stay_as_written(line):
    assert markup._wrapped(line, "bash") == line


def test_python_is_not_rewritten_and_the_lines_that_changed_are_marked():
    fix = {
        "before": {"language": "python", "code": "x = 1\ncall(x, top_p=0)\n"},
        "after": {"language": "python", "code": "x = 1\ncall(x, temperature=0)\n"},
    }
    html = markup.fix_pair(fix)
    before, after = html.split("</figure>")[:2]
    assert before.count("<del>") == 1 and "top_p" in before.split("<del>")[1]
    assert after.count("<ins>") == 1 and "temperature" in after.split("<ins>")[1]
    assert "x = 1" not in before.split("<del>")[1]


def test_the_changed_option_is_marked_on_its_own_line():
    serve = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len "
    fix = {
        "before": {"language": "bash", "code": serve + "131072"},
        "after": {"language": "bash", "code": serve + "32768"},
    }
    after = markup.fix_pair(fix).split("</figure>")[1]
    marked = after.split("<ins>")[1].split("</ins>")[0]
    assert "--max-model-len" in marked and "32768" in marked and "vllm serve" not in marked


# ---------------------------------------------------------------- tags and the project page


def test_tag_pages_are_in_the_url_scheme_and_the_sitemap(fixture_site):
    assert urls.tag("tensor-parallel") == "/tags/tensor-parallel/"
    assert urls.tags() == "/tags/"
    sitemap = (fixture_site / "sitemap.xml").read_text()
    assert "/tags/config/" in sitemap and "/tags/</loc>" in sitemap
    page = (fixture_site / "tags/config/index.html").read_text()
    assert f'href="/errors/{A1}/"' in page and "Errors tagged <code>config</code>" in page
    assert 'href="/tags/config/"' in (fixture_site / "tags/index.html").read_text()


def test_the_index_orders_explained_first_then_threads_then_releases():
    from errorkb.site.pages import Row, _ordered

    def entry(rid, title, curated, reported, releases):
        return Row(title, "ValueError", curated, reported, releases, ("moe",), "vllm", rid,
                   "vllm/x.py", "", None)  # fmt: skip

    order = _ordered(
        [
            entry("a", "Stub met in 9 releases", False, 0, 9),
            entry("b", "Stub reported twice", False, 2, 1),
            entry("c", "Explained, one release", True, 0, 1),
            entry("d", "Explained, reported", True, 1, 1),
            entry("e", "Another stub in 9 releases", False, 0, 9),
        ]
    )
    assert [e.id for e in order] == ["d", "c", "b", "e", "a"]


def test_a_record_is_listed_when_explained_tagged_or_reported(tmp_path):
    from errorkb.site.build import load_plan
    from errorkb.site.pages import row_of

    content = load_plan(make_kb(tmp_path / "kb")).content
    row = row_of(content.records[A1], content)
    assert row.indexed and row.curated and row.tags == ("config",)
    assert not row_of(content.records["00000000000000b2"], content).indexed


# ---------------------------------------------------------------- in the browser


def test_the_project_filter_sits_at_the_top_and_opens_the_folders_it_finds(page, base):
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/projects/demo/")
    box = page.locator("[data-filter-box]")
    assert box.is_visible() and box.bounding_box()["y"] < 800  # in the first screen
    page.fill("[data-filter-input]", "widget")
    assert page.locator("#start [data-filter-item]:visible").count() == 1
    page.fill("[data-filter-input]", "regis")
    assert page.locator("[data-filter-item]:visible").all_inner_texts() == ["registry.py 1"]
    assert page.locator("#start").is_hidden()  # nothing of the index holds it
    page.fill("[data-filter-input]", "")
    assert page.locator("#start").is_visible()
    assert page.errors == []


def test_a_link_to_a_folder_opens_it(browser, tmp_path):
    """The project page's areas are closed; `#<folder>/` (a file page's link) opens the one
    that holds the folder."""
    context = browser.new_context()
    page = context.new_page()
    page.set_content(
        '<a href="#x/y/">x</a><details><summary>x/</summary><h3 id="x/y/">y</h3></details>'
        + "<div style='height:3000px'></div>"
    )
    page.click("a")
    assert page.evaluate("document.querySelector('details').open")
    context.close()


def test_the_example_fix_shows_its_change_at_390_px(page, base):
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/errors/{A1}/")
    pre = page.locator("#example-fix pre").nth(1)
    changed = pre.locator("ins")
    assert changed.count() == 1 and "--group-size 4" in changed.inner_text()
    box, mark = pre.bounding_box(), changed.bounding_box()
    assert mark["x"] + mark["width"] <= box["x"] + box["width"]
    assert page.evaluate("(p) => p.scrollWidth <= p.clientWidth", pre.element_handle())


PASTE = (
    "Traceback (most recent call last):\n"
    '  File "demo/widgets.py", line 42, in split\n'
    "ValueError: Widget count (7) must be divisible by group size (2).\n"
)


def test_a_paste_into_the_header_leaves_it_one_row(page, base):
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/errors/{A1}/")
    height = "document.querySelector('.topbar').getBoundingClientRect().height"
    before = page.evaluate(height)
    page.focus("#q-top")
    page.evaluate(
        "(text) => { const t = document.querySelector('#q-top'); t.value = text;"
        " t.dispatchEvent(new Event('input')); }",
        PASTE,
    )
    page.locator(".search-hit").first.wait_for()
    assert page.evaluate(height) == before
    assert page.evaluate("document.querySelector('#q-top').value") == PASTE  # lines kept


def test_press_slash_is_offered_only_where_there_is_a_keyboard(browser, base):
    for touch, hint in ((False, True), (True, False)):
        context = browser.new_context(viewport=PHONE, has_touch=touch, is_mobile=touch)
        page = context.new_page()
        page.goto(base + "/")
        page.wait_for_function("document.querySelector('[role=combobox]')")
        assert ("(press /)" in page.get_attribute("#q-home", "placeholder")) is hint
        context.close()


def test_the_search_box_is_a_combobox_with_a_listbox_and_keys(page, base):
    page.goto(f"{base}/errors/{A1}/")
    combo = page.locator(".topbar [role=combobox]")
    assert combo.get_attribute("aria-expanded") == "false"
    assert combo.get_attribute("aria-controls") == "q-top-results"
    page.fill("#q-top", "Widget count (7) must be divisible by group size (2).")
    page.locator("#q-top-results [role=listbox] [role=option]").first.wait_for()
    assert combo.get_attribute("aria-expanded") == "true"
    options = page.locator("[role=option]")
    assert {options.nth(i).get_attribute("aria-selected") for i in range(options.count())} == {
        "false"
    }
    page.keyboard.press("ArrowDown")
    first = options.first
    assert first.get_attribute("aria-selected") == "true"
    assert page.get_attribute("#q-top", "aria-activedescendant") == first.get_attribute("id")
    page.keyboard.press("Escape")
    assert combo.get_attribute("aria-expanded") == "false"
    assert page.get_attribute("#q-top", "aria-activedescendant") is None
    assert page.evaluate("document.activeElement.id") == "q-top"  # focus stays in the box


def test_result_labels_are_plain_words(page, base):
    page.goto(f"{base}/search/?q=" + "Widget count (seven) must be divisible by group size (2).")
    page.locator(".search-hit").first.wait_for()
    text = " ".join(page.locator(".search-hit").all_inner_texts())
    assert "generic:" not in text and "placeholder does not hold" not in text
    assert "tied" not in text


@pytest.mark.skipif(not AXE.is_file(), reason="npm ci installs axe-core (devDependency)")
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", ["/projects/demo/", "/tags/", "/tags/config/", f"/errors/{A1}/"])
def test_axe_finds_nothing_on_the_browsing_pages_with_results_open(browser, base, path, scheme):
    context = browser.new_context(viewport=PHONE, color_scheme=scheme, service_workers="block")
    context.route(
        base + "/__axe.js", lambda route: route.fulfill(path=AXE, content_type="text/javascript")
    )
    page = context.new_page()
    page.goto(base + path)
    page.fill("#q-top", "Widget count (7) must be divisible by group size (2).")
    page.locator("#q-top-results [role=option]").first.wait_for()
    page.add_script_tag(url="/__axe.js")
    found = page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
        ".map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)"
    )
    context.close()
    assert found == [], found

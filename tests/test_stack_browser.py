"""Stack records in real Chromium (#23): a search result opens the page with the advice of
the engine the paste came from first, Enter opens only a sure result, the report link names
the program, and the memory estimate runs memory.py under Pyodide."""

import os
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from errorkb.projects.vllm import memory
from tests.test_stack import OOM_PASTE, SGLANG_LINE, VLLM_FRAME

OOM = "aec1c60254c32faa"
LOAD = 90_000  # ms: Pyodide's first start on a busy machine
SHOTS = os.environ.get("ERRORKB_SHOTS")  # a folder to keep screenshots in, to look at them


@pytest.fixture(scope="module")
def base(tmp_path_factory, serve_site):
    from errorkb.site.build import build
    from tests.conftest import make_stack_kb

    kb = make_stack_kb(tmp_path_factory.mktemp("stack-browser") / "kb")
    build(kb)
    return serve_site(kb / "site")


def paste(page, text: str) -> None:
    page.locator("#q-home").click()
    page.keyboard.insert_text(text)
    page.wait_for_selector("#q-home-results .search-hit, #q-home-results .search-report")


def section_order(page) -> list[str]:
    return page.locator("[data-engines] > section").evaluate_all("s => s.map(x => x.id)")


def test_enter_opens_the_stack_record_with_the_pastes_engine_first(page, base):
    page.goto(f"{base}/")
    paste(page, SGLANG_LINE + OOM_PASTE)
    first = page.locator("#q-home-results .search-hit").first
    assert "PyTorch" in first.inner_text() and "exact match" in first.inner_text()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/errors/{OOM}/\?.*engine=sglang"))
    assert section_order(page) == ["in-sglang", "in-vllm"]
    note = page.locator(".engine-first").inner_text()
    assert note == "Your error came from SGLang: its advice first."
    toc = page.locator(".toc li a").all_inner_texts()
    assert toc.index("In SGLang") < toc.index("In vLLM")
    assert page.errors == []


def test_without_an_engine_both_stay_in_the_records_order(page, base):
    page.goto(f"{base}/errors/{OOM}/")
    assert section_order(page) == ["in-vllm", "in-sglang"]
    assert page.locator(".engine-first").count() == 0
    page.goto(f"{base}/errors/{OOM}/?engine=nosuch")
    assert section_order(page) == ["in-vllm", "in-sglang"]


def test_an_error_with_no_record_never_opens_a_guess_and_is_reported_as_its_programs(
    page, base
):
    text = (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, "
        "Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help."
    )
    page.goto(f"{base}/")
    paste(page, VLLM_FRAME + text)
    matches = page.locator("#q-home-results .search-hit").evaluate_all(
        "hits => hits.map(h => h.dataset.match).filter(Boolean)"
    )
    assert not {"exact", "partial"} & set(matches)
    report = page.locator("#q-home-results .search-report").get_attribute("href")
    # The exception's class, named with its module path, is no part of the message.
    title = parse_qs(urlsplit(report).query)["title"][0]
    assert title.startswith("triton error: out of resource: shared memory")
    page.keyboard.press("Enter")  # nothing sure: the list of the search page, not a page
    page.wait_for_url(f"{base}/search/?q=*")


def test_the_memory_estimate_runs_memory_py_under_pyodide(page, base):
    page.goto(f"{base}/errors/{OOM}/?total=79.10%20GiB&engine=vllm")
    widget = page.locator("[data-memory]")
    assert widget.locator("#memory-gpu_gib").input_value() == "79.10 GiB"  # from the paste
    out = widget.locator("[data-out=memory]")
    assert "Press Estimate" in out.inner_text()  # Python only when asked (issue 44)
    widget.locator(".calc-go").click()
    out.filter(has_text="Budget per GPU").wait_for(timeout=LOAD)
    want = memory.estimate(params_b=70.6, layers=80, kv_heads=8, gpu_gib=79.1)
    assert want["error"]["kind"] == "oom"
    assert "weights per GPU: 131.5 GiB" in out.inner_text()
    assert "larger than the GPU" in out.inner_text()
    page.fill("#memory-tp", "4")
    want = memory.estimate(params_b=70.6, layers=80, kv_heads=8, gpu_gib=79.1, tp=4)
    tokens = f"about {want['tokens']:,} tokens"
    out.filter(has_text=tokens).wait_for(timeout=LOAD)
    assert "Memory is enough for these values" in out.inner_text()
    if SHOTS:
        widget.screenshot(path=f"{SHOTS}/memory-answer.png")
    page.fill("#memory-max_model_len", "2000000")
    out.filter(has_text="does not fit").wait_for(timeout=LOAD)
    assert out.locator("a").count() == 0  # vLLM's record of it is not in this knowledge base
    page.fill("#memory-tp", "0")
    out.filter(has_text="tensor parallel size must be a whole number").wait_for(timeout=LOAD)
    assert page.errors == []


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_stack_page_and_the_calculator_fit_the_screen(browser, base, width, scheme):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, service_workers="block"
    )
    page = context.new_page()
    for url in (f"/errors/{OOM}/?engine=sglang&total=79.10%20GiB", "/calc/"):
        page.goto(base + url)
        page.locator("[data-memory] .calc-form").wait_for()
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, (url, scroll)
        if SHOTS:
            name = "stack" if "errors" in url else "calc"
            page.screenshot(path=f"{SHOTS}/{name}-{width}-{scheme}.png", full_page=True)
    context.close()

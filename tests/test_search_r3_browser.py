"""Issue #42 in real Chromium: a twin's page says both engines print it and switches
between their pages, the engine chosen is remembered and search opens its copy first; a
result names the wrapper line its paste ends in."""

import pytest

from errorkb.site.build import build
from tests.conftest import make_r3_kb

VLLM, SGLANG = "33000000000000a1", "33000000000000a2"
TWIN = "ValueError: Cannot use FlashWidget-2 backend for head size 72."


@pytest.fixture(scope="module")
def base(tmp_path_factory, serve_site):
    root = make_r3_kb(tmp_path_factory.mktemp("r3-browser") / "kb")
    build(root)
    return serve_site(root / "site")


def _first_hit(page, text):
    page.fill("#q-top", text)
    page.wait_for_selector("#q-top-results .search-hit")
    return page.locator("#q-top-results .search-hit").first


def test_the_engine_chosen_on_a_twin_page_opens_first_in_search(page, base):
    page.goto(f"{base}/errors/{VLLM}/?head_size=72")
    note = page.locator(".note.twins")
    assert "Printed by vLLM and SGLang from the same code." in note.inner_text()
    assert note.bounding_box()["y"] < 600  # above the fold
    # No choice yet: vLLM's copy (the default engine) leads, SGLang's is named under it.
    assert _first_hit(page, TWIN).get_attribute("href").startswith(f"/errors/{VLLM}/")
    page.goto(f"{base}/errors/{VLLM}/?head_size=72")  # the list of results closed
    switch = note.locator("a", has_text="SGLang")
    assert switch.get_attribute("href") == f"/errors/{SGLANG}/?head_size=72"  # values kept
    switch.click()
    page.wait_for_url(lambda url: f"/errors/{SGLANG}/" in url)
    assert page.evaluate("localStorage.getItem('errorkb-engine')") == "SGLang"
    assert _first_hit(page, TWIN).get_attribute("href").startswith(f"/errors/{SGLANG}/")
    # A link to vLLM's copy shared with this visitor: the switch points at their engine's page.
    page.goto(f"{base}/errors/{VLLM}/")
    yours = page.locator(".note.twins a.engine-yours")
    assert yours.inner_text() == "SGLang"
    assert yours.get_attribute("title") == "You chose SGLang last: its page"


def test_a_result_names_the_wrapper_line_after_its_error(page, base):
    page.goto(f"{base}/errors/{VLLM}/")  # the header's box (the home page has its own)
    hit = _first_hit(
        page,
        "(EngineCore pid=1) ValueError: Free sprocket memory on device (3.2/4.0 GiB) is less "
        "than desired sprocket utilization (0.9). Decrease sprocket utilization or reduce "
        "sprocket memory used by other processes.\n(APIServer pid=2) RuntimeError: Engine core"
        " initialization failed. See root cause above. Failed core proc(s): {}",
    )
    assert hit.get_attribute("href").startswith("/errors/33000000000000a6/")
    assert "then: " in hit.inner_text()

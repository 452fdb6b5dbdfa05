"""The divisor calculator of a divisibility error in real headless Chromium: values of the
static table answer at once without loading anything; any other value runs calc.py's divisors
under Pyodide in the calculator's worker, under the site's strict Content-Security-Policy."""

import re

import pytest
import yaml

from errorkb.projects.vllm import calc
from errorkb.site.build import build
from errorkb.sources import extract as ex
from tests.conftest import make_kb
from tests.test_calc_browser import LOAD, STRICT_CSP, Server
from tests.test_explain import TREE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    kb = make_kb(tmp_path_factory.mktemp("divisors") / "kb")
    ex.extract(kb, TREE, "demo", "v9.8.7")
    build(kb)
    for path in (kb / "content/errors/demo").glob("*.yaml"):
        if yaml.safe_load(path.read_text())["message"].startswith("num_heads ("):
            rid = path.stem
    running = Server(kb / "site", csp=STRICT_CSP)
    running.page = f"/errors/{rid}/"
    yield running
    running.close()


def answer(page):
    return page.locator("[data-divisors] [data-out=divisors]")


def test_values_from_the_address_answer_at_once(page, server):
    page.goto(server.base + server.page + "?num_heads=20&tp_size=3")
    out = answer(page)
    out.get_by_text("Valid values of --tensor-parallel-size (tp_size) for").wait_for(timeout=LOAD)
    # the setting as the parser spells it, word for word as answer.py says it (issue 44)
    said = [
        "Change --tensor-parallel-size 3 to 2 or 4, the nearest that divide 20 (within one "
        "8-GPU node, assumed).",
        "Valid values of --tensor-parallel-size (tp_size) for num_heads = 20: 1, 2, 4, 5, 10, 20",
    ]
    assert [line for line in out.inner_text().splitlines() if line] == said
    case = page.locator("#your-case [data-case-answer]")  # under the message, the same answer
    assert [line for line in case.inner_text().splitlines() if line] == said
    page.wait_for_load_state("networkidle")
    assert not server.loaded("/pyodide/") and not server.loaded("calc-worker.js")
    assert page.errors == []


def test_any_value_is_answered_at_once_without_python(page, server):
    """The divisors of any value up to ten million take no Python (issue 44: nothing over
    100 KB downloads before a click)."""
    page.goto(server.base + server.page + "?num_heads=7560")
    assert page.input_value("#divisors-num_heads") == "7560"
    out = answer(page)
    out.get_by_text(
        "Valid values of --tensor-parallel-size (tp_size) for num_heads = 7560"
    ).wait_for(timeout=LOAD)
    expected = ", ".join(map(str, calc.divisors(7560)))
    assert out.inner_text() == (
        f"Valid values of --tensor-parallel-size (tp_size) for num_heads = 7560: {expected}"
    )
    page.fill("#divisors-tp_size", "7")
    out.get_by_text("tp_size = 7 divides 7560: this check passes.").wait_for(timeout=LOAD)
    page.fill("#divisors-num_heads", "12x")
    out.get_by_text(re.compile("num_heads must be a whole number")).wait_for(timeout=LOAD)
    page.wait_for_load_state("networkidle")
    assert not server.loaded("/pyodide/") and not server.loaded("calc-worker.js")
    assert page.errors == []


@pytest.fixture(scope="module")
def settings_server(tmp_path_factory):
    """The settings tree extracted: pages whose Your case computes the value that passes."""
    from tests.test_settings import TREE as SETTINGS

    kb = make_kb(tmp_path_factory.mktemp("settings") / "kb")
    ex.extract(kb, SETTINGS, "demo", asserts=True, printed=True)
    build(kb)
    running = Server(kb / "site", csp=STRICT_CSP)
    running.pages = {}
    for path in (kb / "content/errors/demo").glob("*.yaml"):
        running.pages[yaml.safe_load(path.read_text())["message"][:20]] = f"/errors/{path.stem}/"
    yield running
    running.close()


@pytest.mark.parametrize(
    ("start", "query", "said"),
    [
        (
            "max_model_len ({max_",
            "?max_model_len=8192&max_position_embeddings=4096",
            "With your values the check fails: max_model_len = 8192 is greater than"
            " max_position_embeddings = 4096. To pass it, set --max-model-len to at most 4096.",
        ),
    ],
)
def test_your_case_computes_the_value_that_passes_from_the_paste(
    page, settings_server, start, query, said
):
    page.goto(settings_server.base + settings_server.pages[start] + query)
    out = page.locator("#your-case [data-case-try]")
    out.get_by_text("To pass it").wait_for(timeout=LOAD)  # the condition tested (tests.js)
    assert out.inner_text() == said
    assert page.errors == []


def test_a_page_with_a_calculator_answers_once(page, settings_server):
    """Where the wing's calculator answers (a head count over the TP size), Your case offers
    no second list of values beside it."""
    start = settings_server.pages["Total number of atte"]
    page.goto(settings_server.base + start + "?total_num_attention_heads=40&tensor_parallel_size=3")
    page.locator("#your-case").wait_for(timeout=LOAD)  # shown once the values are read
    page.wait_for_load_state("networkidle")
    assert page.locator("#calculator, #divisors").count() == 1  # the wing's section answers
    assert page.locator("#your-case [data-case-try]").inner_text().strip() == ""
    assert page.errors == []

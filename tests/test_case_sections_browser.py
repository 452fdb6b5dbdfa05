"""Your case on a page with a wing's own section (issue 44, item 2), in headless Chromium:
the condition's tests are always on the page, and case.js answers with them unless the
section's script claimed the answer for these values (decided once both ran). The old KV
cache wording of vLLM (c876b0a1d28a0855) carries its successor's memory section, which
answers only from the new wording's figures: with the old wording's values the tests
answer; with the new wording's, the memory section does, and nothing else."""

import shutil

import pytest
import yaml

from tests.conftest import REPO, make_kb
from tests.test_calc_browser import LOAD, STRICT_CSP, Server

pytestmark = pytest.mark.slow

OLD = "c876b0a1d28a0855"  # The model's max seq len ({max_model_len}) is larger than ...
NEW = "b3a6e27a21d4acc5"  # its successor: the KV cache needed and available, in GiB
FREE = "8781d26106e06c95"  # free memory at start-up: its 0.9-0.13 wording names {GiB}, {GiB_2}
QUANT = "2d26123a2d510064"  # Unknown quantization method: {quantization}. Must be one of ...


def fill(path):
    """content/ with the records and every record they relate to or check against."""
    real = REPO / "content"
    for name in ("site.yaml", "models.yaml", "projects/vllm.yaml"):
        (path / "content" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(real / name, path / "content" / name)
    records, wanted, todo = real / "errors" / "vllm", set(), [OLD, NEW, FREE, QUANT]
    while todo:
        rid = todo.pop()
        if rid in wanted or not (records / f"{rid}.yaml").exists():
            continue
        wanted.add(rid)
        data = yaml.safe_load((records / f"{rid}.yaml").read_text())
        todo += data.get("related", []) + [data.get("superseded_by") or ""]
        todo += [c["expect"] for c in data.get("checks", []) if c["expect"] != "ok"]
    (path / "content" / "errors" / "vllm").mkdir(parents=True)
    for rid in wanted:
        shutil.copy(records / f"{rid}.yaml", path / "content" / "errors" / "vllm")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from errorkb.site.build import build

    kb = make_kb(tmp_path_factory.mktemp("sections") / "kb", fill)
    build(kb)
    running = Server(kb / "site", csp=STRICT_CSP)
    yield running
    running.close()


def test_the_old_wording_answers_with_its_tests_beside_the_memory_section(page, server):
    page.goto(f"{server.base}/errors/{OLD}/?max_model_len=8192&max_seq_len=6048")
    assert page.locator("[data-memory]").count() == 1  # the successor's section is there
    out = page.locator("#your-case [data-case-try]")
    out.get_by_text("To pass it").wait_for(timeout=LOAD)
    assert out.inner_text() == (
        "With your values the check fails: max_model_len = 8192 is greater than max_seq_len"
        " = 6048. To pass it, set --max-model-len to at most 6048."
    )
    assert page.locator("#your-case [data-case-answer]").inner_text().strip() == ""
    assert page.locator("#your-case").get_attribute("data-answering") == "case"
    page.wait_for_load_state("networkidle")
    assert not server.loaded("/pyodide/") and not server.loaded("calc-worker.js")
    assert page.errors == []


def test_the_memory_section_that_claims_the_answer_is_the_only_one(page, server):
    """The new wording's figures: the memory section answers (the length that fits), and
    Your case shows no second answer from the tests beside it."""
    query = "?needed_memory=2.5&max_model_len=32768&available_memory=1.25"
    page.goto(f"{server.base}/errors/{NEW}/{query}")
    case = page.locator("#your-case [data-case-answer]")
    case.get_by_text("Computed from the message's figures").wait_for(timeout=LOAD)
    assert "--max-model-len 16384" in case.inner_text()
    # the terminal's and the API's answer (errorkb/answer.py) says what the page says
    from errorkb.answer import kv_figures

    names = {"max_model_len": "max_model_len", "needed": "needed_memory"}
    names["available"] = "available_memory"
    values = {"needed_memory": "2.5", "max_model_len": "32768", "available_memory": "1.25"}
    said = kv_figures(names, values)
    assert " ".join(case.inner_text().split()) == " ".join(said["lines"])
    page.wait_for_timeout(300)  # case.js has decided by now: it waited for the section
    assert page.locator("#your-case [data-case-try]").inner_text().strip() == ""
    assert page.locator("#your-case").get_attribute("data-answering") == ""
    assert page.errors == []


def test_a_paste_of_an_older_wording_is_answered_through_its_renames(page, server):
    """The values of the older wording's {GiB}, {GiB_2}, {GiB_3} are what the condition's
    free_memory_gib, total_memory_gib and requested_memory_gib print (their place in both
    messages): the page computes the answer answer.py gives."""
    query = "?GiB=31.44&GiB_2=47.38&gpu_memory_utilization=0.95&GiB_3=45.01"
    page.goto(f"{server.base}/errors/{FREE}/{query}")
    out = page.locator("#your-case [data-case-try]")
    out.get_by_text("To pass it").wait_for(timeout=LOAD)
    assert out.inner_text().startswith(
        "With your values the check fails: free_memory_gib = 31.44 is less than "
        "requested_memory_gib = 45.01. To pass it, set --gpu-memory-utilization to at most 0.66"
    )
    assert page.errors == []


def test_a_membership_test_runs_on_the_printed_collection(page, server):
    """The value and the list the message prints decide it (members.js, loaded there only);
    a list cut short decides nothing, and the page says why."""
    listed = "%5B%27awq%27%2C%20%27squeezellm%27%5D"  # ['awq', 'squeezellm']
    page.goto(f"{server.base}/errors/{QUANT}/?quantization=gptq&supported_quantization={listed}")
    out = page.locator("#your-case [data-case-try]")
    out.get_by_text("To pass it").wait_for(timeout=LOAD)
    assert out.inner_text() == (
        "With your values the check fails: quantization = gptq is not among "
        "supported_quantization (awq, squeezellm). To pass it, set --quantization to one of "
        "awq, squeezellm."
    )
    page.goto(f"{server.base}/errors/{QUANT}/?quantization=gptq&supported_quantization=%5B%27awq")
    why = page.locator("#your-case [data-case-answer]")
    why.get_by_text("cut short").wait_for(timeout=LOAD)
    assert page.errors == []

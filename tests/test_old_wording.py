"""Every release answers (issue 41, items 3 and 4): the page of an old wording shows the
answer of the check printed today that took over (followed through removed records), or
says which release to upgrade to where the check is gone; its JSON carries the same answer;
search and the issue bot name the wording's releases and today's check."""

import json
from pathlib import Path

import pytest
import yaml

from errorkb import urls
from errorkb.search import engine
from errorkb.site import quick
from errorkb.site.build import build
from errorkb.site.quick import build_site
from errorkb.triage import comment, triage
from errorkb.triage import site as sites
from tests.conftest import SEED, make_kb, small_vllm_kb

HEAD = "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
OLD = "0000000000000a01"  # removed, 0.2.7 to 0.4.3, superseded_by MIDDLE
MIDDLE = "0000000000000a02"  # removed, 0.5.5 to 0.6.6.post1, superseded_by the seed (live)
GONE = "0000000000000a03"  # removed, no successor: upgrading is one fix
OLD_MESSAGE = "Heads ({total_num_attention_heads}) do not split over tp ({tensor_parallel_size})."


def _record(rid: str, message: str, first: str, last: str, line: int, **fields) -> str:
    data = {
        "id": rid,
        "project": "vllm",
        "exception": "ValueError",
        "message": message,
        "versions": {"first": first, "last": last},
        "source": {"path": "vllm/config.py", "line": line, "function": "ModelConfig.verify"},
        "analysis": {"method": "extracted", "ref": f"v{last}"},
        "status": "removed",
        **fields,
    }
    return HEAD + yaml.safe_dump(data, sort_keys=False)


OLD_DERIVED = {
    "ref": "v0.4.3",
    "condition": "total_num_attention_heads % tensor_parallel_size != 0",
    "flags": [
        {
            "name": "tensor_parallel_size",
            "kind": "engine-arg",
            "field": "parallel_config.tensor_parallel_size",
            "flag": "-tp",  # the short form the old release named (its parser has it)
        }
    ],
    "stage": "config-validation",
    "category": "divisibility",
}


def old_wording_kb(path: Path) -> Path:
    """The small vLLM knowledge base with a chain of old wordings of the seed's check and a
    check that is gone."""
    kb = small_vllm_kb(path)
    folder = kb / "content" / "errors" / "vllm"
    records = {
        OLD: _record(
            OLD, OLD_MESSAGE, "0.2.7", "0.4.3", 10, superseded_by=MIDDLE, derived=OLD_DERIVED
        ),
        MIDDLE: _record(
            MIDDLE,
            "Heads {total_num_attention_heads} not divisible by TP {tensor_parallel_size}.",
            "0.5.5",
            "0.6.6.post1",
            20,
            superseded_by=SEED,
        ),
        GONE: _record(GONE, "Chunked prefill is unsupported with {feature}.", "0.2.7", "0.5.5", 30),
    }
    for rid, text in records.items():
        (folder / f"{rid}.yaml").write_text(text)
    return kb


def _page(site: Path, rid: str) -> str:
    return (site / "errors" / rid / "index.html").read_text()


def _removed(site: Path, rid: str) -> dict:
    return json.loads((site / "api" / "errors" / f"{rid}.json").read_text())["computed"]["removed"]


@pytest.mark.slow
def test_an_old_wording_answers_with_the_check_printed_today(tmp_path):
    kb = make_kb(tmp_path / "kb", old_wording_kb)
    result = build(kb, checked=True)
    assert result.problems == []  # links, budget, schema: the page of an old wording too
    page = _page(kb / "site", OLD)
    top = page[page.index("<h1>") : page.index('id="message"')]
    assert (
        "<strong>Printed by vLLM 0.2.7 to 0.4.3.</strong> Since 0.5.5 the same check says:" in top
    )
    assert "Total number of attention heads (" in top and f'href="/errors/{SEED}/"' in top
    # The seed's answer in place, through the removed record between: its summary, what it
    # means, its solutions, its example fix and its calculator, fed by the old placeholders.
    seed = _page(kb / "site", SEED)
    for section in ('id="meaning"', 'id="solutions"', 'id="example-fix"', 'id="calculator"'):
        assert section in page and section in seed
    assert 'data-inputs="heads=total_num_attention_heads tp=tensor_parallel_size"' in page
    assert "Not explained yet" not in page and "Not reviewed yet" not in page
    # Its own derived block, the setting as its release named it and today's name beside it.
    assert (
        '<code class="f">-tp</code> (an engine argument; today <code>--tensor-parallel-size</code>)'
        in page
    )
    assert _page(kb / "site", MIDDLE).count('id="solutions"') == 1


@pytest.mark.slow
def test_the_json_of_an_old_wording_carries_its_answer(tmp_path):
    kb = make_kb(tmp_path / "kb", old_wording_kb)
    build(kb)
    old = _removed(kb / "site", OLD)
    assert old["printed"] == {"first": "0.2.7", "last": "0.4.3"}
    assert (old["successor"]["id"], old["today"]["id"], old["upgrade"]) == (MIDDLE, SEED, None)
    assert old["today"]["since"] == "0.5.5" and old["today"]["message"].startswith("Total number")
    doc = json.loads((kb / "site" / "api" / "errors" / f"{OLD}.json").read_text())
    assert doc["computed"]["derived"]["settings"] == [
        {"handle": "-tp", "kind": "an engine argument", "today": "--tensor-parallel-size"}
    ]
    gone = _removed(kb / "site", GONE)
    assert (gone["today"], gone["upgrade"], gone["since"]) == (None, "0.6.6.post1", "0.6.6.post1")
    assert _removed(kb / "site", SEED) is None


@pytest.mark.slow
def test_a_check_that_is_gone_says_which_release_to_upgrade_to(tmp_path):
    kb = make_kb(tmp_path / "kb", old_wording_kb)
    build(kb)
    page = _page(kb / "site", GONE)
    top = page[page.index("<h1>") : page.index('id="message"')]
    assert "<strong>Printed by vLLM 0.2.7 to 0.5.5.</strong>" in top
    assert "vLLM 0.6.6.post1 and later no longer print this message: upgrading is one fix." in top
    assert "Not explained yet" not in top  # the upgrade is its answer


@pytest.mark.slow
def test_an_edit_of_the_answers_prose_remakes_the_old_wordings_pages_quickly(tmp_path):
    from tests.test_quick import _append_to_meaning, _assert_as_cold, _main_index

    kb = make_kb(tmp_path / "kb", old_wording_kb)
    build_site(kb)
    index = _main_index(kb / "site")
    _append_to_meaning(kb / "content" / "errors" / "vllm" / f"{SEED}.yaml", "Edited for 41.")
    result = quick.rebuild(kb, kb / "site")
    assert result is not None, "a prose edit takes the quick rebuild"
    for rid in (SEED, MIDDLE, OLD):
        assert "Edited for 41." in _page(kb / "site", rid)
    assert "Edited for 41." not in _page(kb / "site", GONE)
    # (the full text indexes the explained page alone: the old wordings would repeat it)
    _assert_as_cold(kb, tmp_path, index, [urls.error(SEED)])


@pytest.fixture(scope="module")
def old_site(tmp_path_factory) -> Path:
    kb = make_kb(tmp_path_factory.mktemp("old") / "kb", old_wording_kb)
    return build(kb).out


@pytest.mark.slow
def test_a_result_of_an_old_wording_names_its_releases_and_the_check_of_today(old_site):
    index = sites.from_folder(old_site).index
    paste = "vLLM 0.4.0\nValueError: Heads (40) do not split over tp (3)."
    best = engine.search(index, paste)[0]
    assert (best.id, best.match, best.wording) == (OLD, "exact", "printed by vLLM 0.2.7–0.4.3")
    assert best.today == {
        "id": SEED,
        "title": "Attention heads not divisible by tensor parallel size",
    }
    # its page, with the values kept and the release the paste names (?v=)
    assert best.url == f"/errors/{OLD}/?total_num_attention_heads=40&tensor_parallel_size=3&v=0.4.0"
    gone = engine.search(index, "ValueError: Chunked prefill is unsupported with lora.")[0]
    assert (gone.id, gone.today, gone.upgrade, gone.release) == (GONE, None, "0.6.6.post1", "")


def test_the_bot_names_the_releases_and_the_check_that_took_over(old_site):
    body = "```\nValueError: Heads (40) do not split over tp (3).\n```\n"
    site = sites.from_folder(old_site)
    said = comment.render(triage(body, site))
    assert said is not None
    line = next(row for row in said.splitlines() if row.startswith("- ["))
    assert f"/errors/{OLD}/?total_num_attention_heads=40&tensor_parallel_size=3)" in line
    assert "printed by vLLM 0.2.7–0.4.3 · today: [Attention heads not divisible" in line
    assert f"(http://127.0.0.1:8000/errors/{SEED}/)" in line
    # its own setting as its release named it, today's name beside it
    assert "set with `-tp` (an engine argument; today `--tensor-parallel-size`)" in line
    gone = comment.render(triage("`ValueError: Chunked prefill is unsupported with lora.`", site))
    assert gone is not None and "not printed since 0.6.6.post1: upgrading is one fix" in gone


@pytest.mark.slow
def test_an_old_wording_explained_for_its_releases_keeps_its_own_answer(tmp_path):
    """A person's explanation of the old wording is for the releases that printed it: the
    page shows it, and links today's check instead of showing that one's (it hid SGLang's
    45c76a0d0c037f15's own solutions behind a successor nobody had explained)."""

    def kb_with_explained_old(path: Path) -> Path:
        kb = old_wording_kb(path)
        file = kb / "content" / "errors" / "vllm" / f"{MIDDLE}.yaml"
        data = yaml.safe_load(file.read_text())
        data["meaning"] = "Before 0.7 the heads had to split evenly over the old TP flag."
        data["solutions"] = ["Pick a tensor-parallel size that divides the heads, in 0.6."]
        file.write_text(HEAD + yaml.safe_dump(data, sort_keys=False))
        return kb

    kb = make_kb(tmp_path / "kb", kb_with_explained_old)
    build(kb)
    page = _page(kb / "site", MIDDLE)
    assert "Pick a tensor-parallel size that divides the heads, in 0.6." in page
    assert "Explained below, as on" not in page and f'href="/errors/{SEED}/"' in page
    # An old wording nobody explained still answers with today's check.
    assert 'id="solutions"' in _page(kb / "site", OLD)

"""Tier-1 search in Python: the shared cases, the real vLLM corpus, the index, `errorkb match`."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import search, template, urls
from generator.records import load_content
from tests.conftest import CORPUS, corpus_rows, corpus_template, make_corpus_kb

CASES = json.loads(Path(__file__).with_name("search_cases.json").read_text())


@pytest.fixture(scope="module")
def index(search_kb):
    return search.open_index(search_kb)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_shared_case(index, case):
    results = search.search(index, case["text"])
    if case["id"] is None:
        assert results == []
        return
    top = results[0]
    assert (top.id, top.exact, top.values) == (case["id"], case["exact"], case["values"])
    assert top.url == urls.error_with_values(case["id"], case["values"])


def test_exact_matches_come_before_similar_ones(index):
    results = search.search(index, "Group size must be positive, got 3")
    assert [r.exact for r in results] == sorted((r.exact for r in results), reverse=True)
    assert [r.id for r in results][:2] == ["00000000000000b2", "00000000000005e1"]


def test_the_built_site_and_content_give_the_same_index(search_kb):
    built = search.open_index(search_kb, search_kb / "site")
    assert built.meta == search.open_index(search_kb).meta
    for case in CASES:
        assert search.search(built, case["text"]) == search.search(
            search.open_index(search_kb), case["text"]
        )


# --- the real vLLM messages of the shared corpus ---------------------------------------


def _skeleton(pattern: template.Pattern) -> list:
    """A pattern without its placeholder names: templates equal up to naming."""
    return [seg if isinstance(seg, str) else None for seg in pattern]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A knowledge base whose records are the corpus templates, its index, the corpus rows."""
    root = make_corpus_kb(tmp_path_factory.mktemp("corpus") / "kb")
    return root, search.open_index(root), corpus_rows()


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the repository")
def test_every_corpus_paste_finds_its_template_first(corpus):
    _, index, rows = corpus
    misses = []
    for row in rows:
        results = search.search(index, row["text"])
        want = _skeleton(template.pattern(corpus_template(row["template"]), {}))
        doc = _document(index, results[0].id) if results else None
        if not (results and results[0].exact and _skeleton(doc["pattern"]) == want):
            misses.append((row["instance_id"], row["noise"], row["text"][:120]))
    assert misses == []


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the repository")
def test_corpus_values_are_extracted(corpus):
    """Values agree wherever the template leaves no doubt (no placeholder twice, none adjacent)."""
    _, index, rows = corpus
    checked = wrong = 0
    for row in rows:
        names = [v["placeholder"] for v in row["values"]]
        if len(set(names)) < len(names) or "}{" in row["template"]:
            continue
        checked += 1
        # By position: a few templates are spelled alike by two records, with other names.
        got = list(search.search(index, row["text"])[0].values.values())
        wrong += got != [v["value"] for v in row["values"]]
    assert (checked, wrong) == (294, 0)


def _document(index: search.Index, record_id: str) -> dict:
    page = index.meta["page"]
    for n in range(0, index.meta["patterns"], page):
        for doc in index.get(urls.search_patterns(str(n // page))):
            if doc["id"] == record_id:
                return doc
    raise KeyError(record_id)


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the repository")
def test_a_query_fetches_a_few_small_files_not_the_index(corpus):
    root, _, rows = corpus
    fresh = search.open_index(root)
    meta = fresh.meta
    total = 1 + meta["shards"] + -(-meta["patterns"] // meta["page"])
    text = rows[0]["text"]
    search.search(fresh, text)
    words = search.query_words(search.clean(text))
    assert fresh.requests <= 1 + len(words) + search.QUERY["candidates"] < total
    assert fresh.bytes < 30_000


# --- the parts ---------------------------------------------------------------------------


def test_pattern_words_leave_out_words_that_touch_a_hole():
    pat = template.pattern("fp{bits}_e4m3 needs  {n}\nheads on cuda:{device}", {"n": "int"})
    assert pat == [
        "fp",
        ["bits", "any"],
        "_e4m3 needs ",
        ["n", "int"],
        " heads on cuda:",
        ["device", "any"],
    ]
    assert template.pattern_words(pat) == ["e4m3", "needs", "heads", "on", "cuda"]


def test_cleaning_keeps_the_exception_lines_of_a_log():
    text = (
        "INFO 11-01 09:43:00 [api_server.py:1] vLLM API server version 0.33.0\n"
        "(EngineCore_DP0 pid=1508) ERROR 11-01 09:43:08 [base.py:96] ValueError: first\n"
        "(EngineCore_DP0 pid=1508) ERROR 11-01 09:43:08 [base.py:96] and its second line\n"
        "ERROR:root:TypeError: second"
    )
    assert [(b.exception, b.text) for b in search.clean(text)] == [
        ("ValueError", "first and its second line"),
        ("TypeError", "second"),
    ]


def test_a_megabyte_paste_is_answered_quickly(index):
    junk = "(Worker pid=1) INFO 11-01 09:43:08 [x.py:1] loading weights {} of 9000 [a] (b) c:d\n"
    text = "".join(junk.format(i) for i in range(12_000))[:1_000_000]
    text += "\nValueError: Widget count (12) must be divisible by group size (5)."
    started = time.perf_counter()
    results = search.search(index, text)
    assert time.perf_counter() - started < 2
    assert results[0].id == "00000000000000a1"
    started = time.perf_counter()
    search.search(index, "( [ " * 250_000)  # one huge line of separators
    assert time.perf_counter() - started < 2


def test_verification_gives_up_within_its_budget():
    pat = [["a", "any"], " x ", ["b", "any"], " y ", ["c", "any"], " z"]
    text = " x " * 300 + " y " * 300
    started = time.perf_counter()
    assert search.verify(pat, text) is None
    assert time.perf_counter() - started < 0.5


def test_index_files_are_deterministic_and_complete(search_kb):
    site = search_kb / "site"
    meta = json.loads((site / "search/index.json").read_text())
    shards = sorted(int(p.stem) for p in (site / "search/words").iterdir())
    assert shards == list(range(meta["shards"]))
    items = search.entries(load_content(search_kb))
    assert dict(search.index_files(items)) == dict(search.index_files(items))


def test_the_site_has_the_search_page_a_box_on_every_page_and_pagefind(fixture_site):
    page = (fixture_site / "search/index.html").read_text()
    assert 'id="q-page"' in page and "data-search-inline" in page
    home = (fixture_site / "index.html").read_text()
    assert home.index('id="q-home"') < home.index('id="projects"')
    error = (fixture_site / "errors/00000000000000a1/index.html").read_text()
    assert '<form class="search" action="/search/"' in error
    assert 'name="q"' in error and "data-your-values" in error
    assert (fixture_site / "pagefind/pagefind.js").exists()


# --- errorkb match -----------------------------------------------------------------------


def errorkb(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", "--root", str(root), *args],
        capture_output=True,
        text=True,
        input=stdin,
    )


def test_match_prints_ranked_results_with_values(search_kb):
    out = errorkb(search_kb, "match", CASES[2]["text"])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "1. Widget count not divisible by group size  [exact]"
    assert "   count = 40" in lines and "   group_size = 3" in lines
    assert "   /errors/00000000000000a1/?count=40&group_size=3" in lines


def test_match_json_from_a_built_site_and_stdin(search_kb):
    out = errorkb(
        search_kb,
        "match",
        "--json",
        "--site",
        str(search_kb / "site"),
        "-",
        stdin=CASES[10]["text"],
    )
    assert out.returncode == 0, out.stderr
    top = json.loads(out.stdout)[0]
    assert top["id"] == "00000000000005e2" and top["exact"] is True
    assert top["values"] == {"n": "64", "rates": "[1, 2, 4, 8]"}
    assert top["url"].startswith("/errors/00000000000005e2/?n=64&rates=")


def test_match_without_a_result_exits_1(search_kb, tmp_path):
    out = errorkb(search_kb, "match", "hello there")
    assert (out.returncode, out.stdout) == (1, "")
    assert "no matching error" in out.stderr
    out = errorkb(search_kb, "match", "--site", str(tmp_path), "x")
    assert out.returncode == 1 and "run errorkb build" in out.stderr

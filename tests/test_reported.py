"""Met in the wild (issue #43, item 2): a record's `reported` threads are validated with
file, line and field, shown on its page (the most useful first) and published in its JSON
document; their count is the demand that search's tie-break and content/most-met/ read."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from errorkb import urls
from errorkb.content.load import load_content
from errorkb.search import index as search_index
from errorkb.site.build import build
from tests.conftest import make_r3_kb
from tests.test_api_schema import document_validator
from tests.test_records import A1, line_of, problems_of

THREADS = """reported:
  - url: https://github.com/example/widgets/issues/7
    title: "[Bug]: widget count error on 3 groups"
    state: open
  - url: https://github.com/example/widgets/issues/9
    title: Grouping fails with odd counts
    state: closed
  - url: https://github.com/example/widgets/pull/12
    title: Pad widgets to the group size
    state: closed
    fix: widgets padded to a multiple of the group size
"""


def with_threads(kb, threads: str = THREADS) -> None:
    path = kb / A1
    path.write_text(path.read_text() + threads)


def test_reported_threads_load_and_the_most_useful_come_first(kb):
    with_threads(kb)
    record = load_content(kb).records["00000000000000a1"]
    assert record.met == 3
    assert [t["url"].rsplit("/", 1)[1] for t in record.reported] == ["12", "9", "7"]


@pytest.mark.parametrize(
    ("old", "new", "field", "needle"),
    [
        ("issues/7", "issue/7", "reported[0].url", "issue/7"),
        (
            "https://github.com/example/widgets/issues/9",
            "http://example.org/9",
            "reported[1].url",
            "example.org/9",
        ),
        ("state: open", "state: merged", "reported[0].state", "state: merged"),
        ("    title: Grouping fails with odd counts\n", "", "reported[1].title", "issues/9"),
        (
            "    state: open\n",
            "    state: open\n    body: copied prose\n",
            "reported[0].body",
            "body:",
        ),
    ],
)
def test_a_bad_thread_names_file_line_and_field(kb, old, new, field, needle):
    with_threads(kb, THREADS.replace(old, new, 1))
    found = problems_of(kb)
    assert len(found) == 1, found
    line = line_of(kb, A1, needle)
    assert found[0].startswith(f"{A1}:{line}: ") and f" {field}: " in found[0], found


def test_a_thread_listed_twice_is_refused_at_its_second_line(kb):
    twice = THREADS + "  - url: https://github.com/Example/widgets/issues/12\n"
    twice += "    title: again\n    state: open\n"
    with_threads(kb, twice)
    found = problems_of(kb)
    line = line_of(kb, A1, "Example/widgets/issues/12")
    assert found == [
        f"{A1}:{line}: E103 reported[3].url: the thread of reported[2] again; remove one of them"
    ]


def test_the_page_and_the_document_show_the_threads(kb):
    fourth = "  - url: https://github.com/example/widgets/issues/15\n"
    fourth += "    title: Widgets again\n    state: open\n"
    with_threads(kb, THREADS + fourth)
    site = build(kb, checked=True).out
    html = (site / urls.output_path(urls.error("00000000000000a1"))).read_text()
    assert "Reported in 4 public threads" in html
    assert "widgets/issues/15" not in html  # the first three, the page's budget
    assert 'all 4</a>.</p>' in html  # the JSON document has them all
    shown = [
        html.index(f'href="https://github.com/example/widgets/{p}"')
        for p in ("pull/12", "issues/9", "issues/7")
    ]
    assert shown == sorted(shown)  # closed with a fix, closed, open
    assert "closed: widgets padded to a multiple of the group size" in html
    doc = json.loads((site / urls.output_path(urls.error_json("00000000000000a1"))).read_text())
    assert len(doc["reported"]) == 4 and doc["computed"]["reported_count"] == 4
    assert doc["computed"]["reported"][0]["fix"].startswith("widgets padded")
    document_validator(site).validate(doc)
    other = (site / urls.output_path(urls.error("00000000000000b2"))).read_text()
    assert "public thread" not in other


def test_demand_is_the_count_of_threads(kb):
    with_threads(kb)
    assert search_index.demand(load_content(kb))["00000000000000a1"] == 3


REPORTED = Path(__file__).resolve().parent.parent / "bench" / "reported"


def run_reported(kb, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPORTED), *args, "--root", str(kb)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_bench_reported_writes_only_threads_whose_paste_lands_on_the_record(tmp_path):
    kb = make_r3_kb(tmp_path / "kb")
    path = kb / "content/errors/vllm/33000000000000a3.yaml"
    before = path.read_text()
    rows = [
        {  # lands on the record: written
            "record": "33000000000000a3",
            "url": "https://github.com/vllm-project/vllm/issues/101",
            "title": "Widget architectures ['X'] are not supported",
            "state": "closed",
            "fix": "a newer release (made up)",
            "paste": "ValueError: Widget architectures ['X'] are not supported for now.",
        },
        {  # its paste is another record's: refused
            "record": "33000000000000a3",
            "url": "https://github.com/vllm-project/vllm/issues/102",
            "title": "head size",
            "state": "open",
            "paste": "ValueError: Cannot use FlashWidget-2 backend for head size 72.",
        },
        {  # auto: the record its paste fits exactly
            "record": "auto",
            "url": "https://github.com/vllm-project/vllm/issues/103",
            "title": "[Bug]: FlashWidget-2 and head size 80",
            "state": "open",
            "paste": "ValueError: Cannot use FlashWidget-2 backend for head size 80.",
        },
    ]
    threads = tmp_path / "threads.jsonl"
    threads.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_reported(kb, "apply", "--threads", str(threads))
    assert done.returncode == 1, done.stderr  # one refused
    assert "issues/102 lands on" in done.stdout
    assert "2 threads kept for 2 records (2 rewritten), 1 refused" in done.stdout
    after = path.read_text()
    assert after.startswith(before)  # the other fields and their formatting untouched
    content = load_content(kb)
    assert [t["url"][-3:] for t in content.records["33000000000000a3"].reported] == ["101"]
    assert content.records["33000000000000a1"].met == 1  # vLLM's copy: the repository's engine
    # Again: nothing changes (a thread listed already keeps its place)
    again = run_reported(kb, "apply", "--threads", str(threads))
    assert "(0 rewritten)" in again.stdout
    ranked = run_reported(kb, "ranked")
    assert ranked.returncode == 0, ranked.stderr
    table = (kb / "content/most-met/ranked.md").read_text()
    assert "| 1 | `33000000000000b2` | vLLM: " in table  # the fixture's 2 threads first
    assert search_index.demand(load_content(kb))["33000000000000a3"] == 1

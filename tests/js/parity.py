"""What tests/js/match.test.mjs checks match.js against: the tier-1 indexes of the search
fixture knowledge base, of the stack fixture and of the repository's content, written as the
site serves them, and generator/search/engine.py's answers for every paste of
tests/search_cases.json, tests/fixtures/stack/pastes.json, the corpus, the negatives and the
real pastes of bench/real-pastes.jsonl and bench/stack-pastes*.jsonl (the last four on the
real content's index, but with ERRORKB_PARITY_FIXTURES_ONLY=1).

    python tests/js/parity.py <out dir>
"""

import gc
import json
import os
import sys
import tempfile
from pathlib import Path

from errorkb import urls
from errorkb.content.load import ParseCache, load_content
from errorkb.search import engine as search
from errorkb.search import index as search_index
from errorkb.site.build import CACHE_DIR
from tests.conftest import REPO, STACK, corpus_rows, make_r3_kb, make_search_kb, make_stack_kb

NEGATIVES = REPO / "tests" / "fixtures" / "search" / "negatives.json"
PASTES = REPO / "bench" / "real-pastes.jsonl"
STACK_PASTES = REPO / "bench" / "stack-pastes.jsonl"
HOLDOUT = REPO / "bench" / "stack-pastes-holdout.jsonl"
R3_PASTES = REPO / "bench" / "search-r3-pastes.jsonl"  # issue #42's (twins, wrappers, fragments)
R3_HOLDOUT = REPO / "bench" / "search-r3-holdout.jsonl"
R4_HOLDOUT = REPO / "bench" / "holdout-r4-pastes.jsonl"  # spent: tuned on since round 5
# Set to 1: the fixtures alone (make test-fast); the real content's index takes 6 s to make.
FIXTURES_ONLY = "ERRORKB_PARITY_FIXTURES_ONLY"


def write_index(root: Path, out: Path) -> search.Index:
    # Through the parse cache the builds keep: warm after any build of the real content.
    cache = ParseCache(root / CACHE_DIR / "parse")
    content = load_content(root, cache)
    cache.save()
    files = search_index.site_index(content)
    for url, body in files.items():
        target = out / urls.output_path(url)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    return search.Index(files.__getitem__)


def answers(index: search.Index, texts: list[str]) -> list[dict]:
    return [
        {
            "text": text,
            "results": [r.to_json() for r in search.search(index, text)],
            "report": search.report_url(index, text),
        }
        for text in texts
    ]


def main(out: Path) -> None:
    cases = json.loads((REPO / "tests" / "search_cases.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        fixture = write_index(make_search_kb(Path(tmp) / "kb"), out / "fixture")
        stack = write_index(make_stack_kb(Path(tmp) / "stack"), out / "stack")
        r3 = write_index(make_r3_kb(Path(tmp) / "r3"), out / "r3")
    r3_cases = json.loads((REPO / "tests" / "search_r3_cases.json").read_text())
    doc = {
        "fixture": answers(fixture, [case["text"] for case in cases]),
        "stack": answers(stack, json.loads((STACK.parent / "pastes.json").read_text())),
        # with the engine each case's user runs, as the site's switch or --engine says
        "r3": [
            [r.to_json() for r in search.search(r3, case["text"], case.get("engine"))]
            for case in r3_cases
        ],
    }
    if os.environ.get(FIXTURES_ONLY) != "1":
        real = write_index(REPO, out / "real")
        texts = [row["text"] for row in corpus_rows()] + json.loads(NEGATIVES.read_text())
        for pastes in (PASTES, STACK_PASTES, HOLDOUT, R3_PASTES, R3_HOLDOUT, R4_HOLDOUT):
            if pastes.exists():
                texts += [json.loads(line)["text"] for line in pastes.read_text().splitlines()]
        doc["real"] = answers(real, texts)
    (out / "python.json").write_text(json.dumps(doc, ensure_ascii=False))


if __name__ == "__main__":
    gc.disable()  # as the build does: loading makes a million long-lived objects (3 s of scans)
    main(Path(sys.argv[1]))

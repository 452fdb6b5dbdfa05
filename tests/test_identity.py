"""One answer per message (issue #21): the records of one check are one record, a removed
record says so at the top, and links between records are made only on strong evidence."""

import json
from pathlib import Path

import pytest
import yaml

from errorkb.content.load import load_content
from errorkb.content.model import ContentError
from errorkb.site.build import build
from errorkb.sources import chronicle

HEAD = "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
ACTIVE = "00000000000000e1"  # VLLMValidationError today
TWIN = "00000000000000e2"  # the same words as a ValueError, up to 2.0: merged into e1
OTHER = "00000000000000e3"  # another check, printing today what e4 calls an old wording
STALE = "00000000000000e4"  # its variant is e3's message
GONE = "00000000000000e5"  # removed, superseded_by a sibling in another file: a weak link
SIBLING = "00000000000000e6"
MOVED = "00000000000000e7"  # removed, taken over in the same function: kept
TOOK_OVER = "00000000000000e8"


def record(rid: str, message: str, path: str, function: str, **fields) -> str:
    data = {
        "id": rid,
        "project": "demo",
        "exception": fields.pop("exception", "ValueError"),
        "message": message,
        **{k: v for k, v in fields.items() if k in ("variants", "versions")},
        "source": {"path": path, "line": 3, "function": function},
        **{k: v for k, v in fields.items() if k not in ("variants", "versions")},
        "analysis": {"method": "extracted", "ref": "v1.0"},
    }
    return HEAD + yaml.safe_dump(data, sort_keys=False)


RECORDS = {
    ACTIVE: record(
        ACTIVE,
        "frequency_penalty must be in [-2, 2], got {frequency_penalty}.",
        "demo/sampling.py",
        "SamplingParams.verify",
        exception="VLLMValidationError",
        versions={"first": "3.0", "last": "4.0"},
    ),
    TWIN: record(
        TWIN,
        "frequency_penalty must be in [-2, 2], got {frequency_penalty}.",
        "demo/sampling.py",
        "SamplingParams.verify",
        versions={"first": "1.0", "last": "2.0"},
        status="removed",
        summary="A person's sentence about the penalty.",
    ),
    OTHER: record(
        OTHER,
        "Cannot use the prefix cache with {backend}.",
        "demo/cache.py",
        "check_cache",
        versions={"first": "1.0", "last": "4.0"},
    ),
    STALE: record(
        STALE,
        "The prefix cache is not supported by {name}.",
        "demo/config.py",
        "check",
        variants=[
            {
                "message": "Cannot use the prefix cache with {name}.",
                "versions": {"first": "1.0", "last": "2.0"},
            },
            {
                "message": "Prefix cache unsupported: {name}",
                "versions": {"first": "1.0", "last": "2.0"},
            },
        ],
        versions={"first": "3.0", "last": "4.0"},
    ),
    GONE: record(
        GONE,
        "text_pair is not supported for Grok2Tokenizer.",
        "demo/tokenizers/grok2.py",
        "Grok2Tokenizer.__call__",
        exception="NotImplementedError",
        versions={"first": "1.0", "last": "2.0"},
        status="removed",
        superseded_by=SIBLING,
    ),
    SIBLING: record(
        SIBLING,
        "text_pair is not supported for KimiTokenizer.",
        "demo/tokenizers/kimi.py",
        "KimiTokenizer.__call__",
        exception="NotImplementedError",
        versions={"first": "2.0", "last": "4.0"},
    ),
    MOVED: record(
        MOVED,
        "Error: --enable-reasoning requires reasoning_parser:'{parser}' which has not been"
        " registered",
        "demo/serving_chat.py",
        "ServingChat.__init__",
        exception="TypeError",
        versions={"first": "1.0", "last": "2.0"},
        status="removed",
        superseded_by=TOOK_OVER,
    ),
    TOOK_OVER: record(
        TOOK_OVER,
        "reasoning_parser={parser} has not been registered",
        "demo/serving_chat.py",
        "ServingChat.__init__",
        exception="TypeError",
        versions={"first": "3.0", "last": "4.0"},
    ),
}


def tidied(kb: Path) -> chronicle.Written:
    folder = kb / "content" / "errors" / "demo"
    for rid, text in RECORDS.items():
        (folder / f"{rid}.yaml").write_text(text)
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0", "4.0"]\n')
    return chronicle.tidy(kb, load_content(kb), "demo")


def data(kb: Path, rid: str) -> dict:
    return yaml.safe_load((kb / "content" / "errors" / "demo" / f"{rid}.yaml").read_text())


def test_a_removed_twin_in_the_same_words_is_merged_into_the_active_record(kb):
    done = tidied(kb)
    assert done.merged == [TWIN]
    assert not (kb / "content" / "errors" / "demo" / f"{TWIN}.yaml").exists()
    merged = data(kb, ACTIVE)
    assert merged["aliases"] == [TWIN]
    assert merged["summary"] == "A person's sentence about the penalty."  # never lost
    # the exception change is history: the old type with its releases
    assert merged["variants"] == [
        {
            "message": "frequency_penalty must be in [-2, 2], got {frequency_penalty}.",
            "exception": "ValueError",
            "versions": {"first": "1.0", "last": "2.0"},
        }
    ]
    build(kb)
    site = kb / "site"
    assert f"url=/errors/{ACTIVE}/" in (site / "errors" / TWIN / "index.html").read_text()
    copy = json.loads((site / "api" / "errors" / f"{TWIN}.json").read_text())
    assert copy["id"] == ACTIVE and copy["alias"] == TWIN
    page = (site / "errors" / ACTIVE / "index.html").read_text()
    assert (
        'was raised as <span class="exc">ValueError</span> (the wording of Demo 1.0 to 2.0)' in page
    )


def test_a_variant_another_active_check_prints_is_dropped(kb):
    done = tidied(kb)
    assert done.variants_dropped == 1
    assert [v["message"] for v in data(kb, STALE)["variants"]] == [
        "Prefix cache unsupported: {name}"
    ]


def test_superseded_by_is_kept_only_on_strong_evidence(kb):
    done = tidied(kb)
    assert "superseded_by" not in data(kb, GONE)  # a sibling in another file
    assert data(kb, MOVED)["superseded_by"] == TOOK_OVER  # the same function, reworded
    assert (done.superseded, done.unlinked) == (1, 1)


def test_a_removed_page_says_so_at_the_top_with_a_relative_link(kb):
    tidied(kb)
    build(kb)
    site = kb / "site"
    page = (site / "errors" / MOVED / "index.html").read_text()
    top = page[page.index("<h1>") : page.index('id="message"')]
    assert "<strong>Printed by Demo 1.0 to 2.0.</strong> Since 3.0 the same check says:" in top
    assert f'<a href="/errors/{TOOK_OVER}/">Its own page</a>' in top  # relative, like every link
    assert "errorkb.dev" not in page and "https://kb.example.org/errors/" + TOOK_OVER not in page
    doc = json.loads((site / "api" / "errors" / f"{MOVED}.json").read_text())
    removed = doc["computed"]["removed"]
    assert (removed["after"], removed["since"]) == ("2.0", "3.0")
    assert removed["successor"]["id"] == TOOK_OVER
    assert (
        json.loads((site / "api" / "errors" / f"{OTHER}.json").read_text())["computed"]["removed"]
        is None
    )
    # its weak link taken out, a removed record names no successor
    gone = (site / "errors" / GONE / "index.html").read_text()
    assert "<strong>Printed by Demo 1.0 to 2.0.</strong>" in gone and "took over" not in gone
    assert "Demo 3.0 and later no longer print this message: upgrading is one fix." in gone


def test_a_link_to_a_sibling_printed_alongside_is_taken_out(kb):
    """The same guard in a parser printed side by side with the removed one for releases
    guarded another thing all along: no successor, however alike (tidy reads the releases
    from the records' versions as history reads them from the scans)."""
    folder = kb / "content" / "errors" / "demo"
    old, sibling = "00000000000000f1", "00000000000000f2"
    guard = {"ref": "v2.0", "condition": "param_type.startswith('int')"}
    (folder / f"{old}.yaml").write_text(
        record(
            old,
            "Parsed value '{value}' of parameter '{name}' is not an integer in tool '{tool}'.",
            "demo/seed_oss_parser.py",
            "convert_param_value",
            exception="WARNING",
            versions={"first": "1.0", "last": "2.0"},
            derived=guard,
            status="removed",
            superseded_by=sibling,
        )
    )
    (folder / f"{sibling}.yaml").write_text(
        record(
            sibling,
            "Parsed value '{value}' is not an integer, degenerating to string.",
            "demo/step_parser.py",
            "_convert_param_value",
            exception="WARNING",
            versions={"first": "1.0", "last": "4.0"},
            derived=guard,
        )
    )
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0", "4.0"]\n')
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert "superseded_by" not in data(kb, old)
    assert done.unlinked == 1


def test_tidy_keeps_a_link_to_the_one_check_that_took_the_place_of_another_in_its_function(kb):
    """Issue 41: an assert that became a KeyError in other words, in the release it went, in
    its function; kept as history made it while the records say the function lost the one and
    gained the other alone, taken out once the function gained a second check then."""
    old, _, _ = _aria_records(kb, more=False)
    done = chronicle.tidy(kb, load_content(kb), "demo", dry_run=True)
    assert (done.superseded, done.unlinked) == (1, 0)
    _aria_records(kb)
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert (done.superseded, done.unlinked) == (0, 1)
    assert "superseded_by" not in data(kb, old)


def test_tidy_compares_a_removed_record_with_each_wording_of_its_successor(kb):
    """Issue 41: V0's KV-cache check went with its worker's file after 2.0; V1's check,
    printed beside it in 2.0 in much the same words naming `max_model_len`, is worded anew
    today. The link history made is kept, from the successor's older wording (a variant);
    tidy takes it out when the worker's file still prints in 3.0 (a sibling, then)."""
    folder = kb / "content" / "errors" / "demo"
    old, new, still = "00000000000000f6", "00000000000000f7", "00000000000000f8"
    v1 = (
        "To serve at least one request with the model's max seq len ({max_model_len}), ({needed}"
        " GiB KV cache is needed, which is larger than the available KV cache memory"
        " ({available} GiB). Try increasing `gpu_memory_utilization` or decreasing"
        " `max_model_len` when initializing the engine."
    )
    texts = {
        old: record(
            old,
            "The model's max seq len ({max_model_len}) is larger than the maximum number of"
            " tokens that can be stored in KV cache ({max_seq_len}). Try increasing"
            " `VLLM_OPENVINO_KVCACHE_SPACE` or decreasing `max_model_len` when initializing the"
            " engine.",
            "demo/worker/openvino_worker.py",
            "OpenVINOWorker._validate_num_blocks",
            versions={"first": "1.0", "last": "2.0"},
            status="removed",
            superseded_by=new,
        ),
        new: record(
            new,
            "KV cache of {needed} GiB does not fit in {available} GiB: see the memory guide.",
            "demo/v1/core/kv_cache_planning.py",
            "_check_enough_kv_cache_memory",
            variants=[{"message": v1, "versions": {"first": "2.0", "last": "3.0"}}],
            versions={"first": "4.0", "last": "4.0"},
        ),
    }
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0", "4.0"]\n')
    for rid, text in texts.items():
        (folder / f"{rid}.yaml").write_text(text)
    done = chronicle.tidy(kb, load_content(kb), "demo", dry_run=True)
    assert (done.superseded, done.unlinked) == (1, 0)
    (folder / f"{still}.yaml").write_text(
        record(
            still,
            "OpenVINO cache too small",
            "demo/worker/openvino_worker.py",
            "OpenVINOWorker.f",
            versions={"first": "1.0", "last": "3.0"},
            status="removed",
        )
    )
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert (done.superseded, done.unlinked) == (0, 1)


def _aria_records(kb: Path, more: bool = True) -> tuple[str, str, str]:
    """A removed assert and the KeyError that took its place in its function; `more`: and a
    second check that function gained in the same release, so the rules can no longer tell."""
    folder = kb / "content" / "errors" / "demo"
    old, new, third = "00000000000000f3", "00000000000000f4", "00000000000000f5"
    place = ("demo/models/aria.py", "AriaProjector.forward")
    texts = {
        old: record(
            old,
            "Query number for {x_shape_1} patches is not provided",
            *place,
            exception="AssertionError",
            kind="assert",
            versions={"first": "1.0", "last": "2.0"},
            status="removed",
            superseded_by=new,
        ),
        new: record(
            new,
            "Number of patches {num_patches} not found in patch_to_query_dict",
            *place,
            exception="KeyError",
            versions={"first": "3.0", "last": "4.0"},
        ),
        third: record(
            third,
            "Patch embeddings must be 2-D, got {ndim}",
            *place,
            versions={"first": "3.0", "last": "4.0"},
        ),
    }
    if not more:
        del texts[third]
    project = kb / "content" / "projects" / "demo.yaml"
    if "releases_scanned" not in project.read_text():
        project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0", "4.0"]\n')
    for rid, text in texts.items():
        (folder / f"{rid}.yaml").write_text(text)
    return old, new, third


def test_a_link_a_person_read_in_the_code_is_kept_where_the_rules_would_take_it_out(kb):
    """Issue 41: content/lineage/<project>.yaml says which check took over, as a person read
    it in both releases' code; tidy writes it over what its rules find."""
    old, new, _ = _aria_records(kb)
    (kb / "content" / "lineage").mkdir()
    (kb / "content" / "lineage" / "demo.yaml").write_text(f"{old}: {new}  # v3.0 aria.py:9\n")
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert (done.unlinked, done.confirmed) == (0, 0)  # the link was there: not judged again
    assert data(kb, old)["superseded_by"] == new


def test_a_check_a_person_read_as_gone_loses_the_link_the_rules_made(kb):
    old, new, more = _aria_records(kb)
    (kb / "content" / "lineage").mkdir()
    (kb / "content" / "lineage" / "demo.yaml").write_text(f"{old}: gone\n")
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert done.confirmed == 1 and "superseded_by" not in data(kb, old)
    (kb / "content" / "lineage" / "demo.yaml").write_text(f"{old}: {more}\n")
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert done.confirmed == 1 and data(kb, old)["superseded_by"] == more


def test_what_a_person_says_of_a_removed_record_is_checked_with_its_line(kb):
    old, new, _ = _aria_records(kb)
    folder = kb / "content" / "lineage"
    folder.mkdir()
    (folder / "nothing.yaml").write_text(f"{old}: gone\n")
    (kb / "content" / "lineage" / "demo.yaml").write_text(
        f"{old}: 0000000000000abc\n{new}: gone\n1234567890123456: gone\n"
    )
    try:
        load_content(kb)
    except ContentError as exc:
        lines = [str(p) for p in exc.problems]
    else:
        raise AssertionError("no problem reported")
    assert any(
        "content/lineage/demo.yaml:1: E127" in line and "no record id" in line for line in lines
    )
    assert any(
        "content/lineage/demo.yaml:2: E127" in line and "not removed" in line for line in lines
    )
    assert any("demo.yaml:3: E127" in line and "in quotes" in line for line in lines)
    assert any(
        "content/lineage/nothing.yaml:1: E127" in line and "no project" in line for line in lines
    )


@pytest.mark.parametrize("said", ["printed", "unrecorded"])
def test_a_check_a_reader_found_still_made_offers_no_upgrade(kb, said):
    """A reader who finds the check still made (the same message from code errorkb does not
    scan: printed; another message no record holds: unrecorded) takes the rules' link out,
    and the page, the API and the bot no longer say that upgrading stops it."""
    from errorkb.content.successors import answer, lives_on
    from errorkb.site.api import removed

    old, _, _ = _aria_records(kb)
    (kb / "content" / "lineage").mkdir()
    (kb / "content" / "lineage" / "demo.yaml").write_text(f"{old}: {said}  # v3.0 aria.py:9\n")
    done = chronicle.tidy(kb, load_content(kb), "demo")
    assert done.confirmed == 1 and "superseded_by" not in data(kb, old)
    content = load_content(kb)
    record = content.records[old]
    assert answer(content, record) == (None, None) and lives_on(content, record) == said
    block = removed(record, content, "/")
    assert (block["upgrade"], block["lives"], block["today"]) == (None, said, None)
    build(kb)
    page = (kb / "site" / "errors" / old / "index.html").read_text()
    top = page[page.index("<h1>") : page.index('id="message"')]
    assert "upgrading does not stop it" in top and "upgrading is one fix" not in top
    (kb / "content" / "lineage" / "demo.yaml").write_text(f"{old}: gone\n")
    content = load_content(kb)
    assert answer(content, content.records[old]) == (None, "3.0")  # gone: upgrading is one fix
    assert removed(content.records[old], content, "/")["lives"] is None

"""errorkb history: releases listed and scanned once, checks followed through releases, and the
records written, on two tiny releases of our own (tests/fixtures/history)."""

import dataclasses
import io
import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from errorkb import cli, resources
from errorkb.content.load import load_content
from errorkb.site import api
from errorkb.site.linking import link
from errorkb.sources import chronicle, history, lineage
from errorkb.sources.extract import Site, scan_tree
from errorkb.sources.scaffold import new_id

RELEASES = Path(__file__).parent / "fixtures" / "history"
DEMO = "demo"

R1_HEADS = (
    "Total number of attention heads ({num_heads}) must be divisible by "
    "tensor parallel size ({tp_size})."
)
R2_HEADS = (
    "The number of attention heads ({num_heads}) must be divisible by "
    "the tensor parallel size ({tp_size})."
)
R2_KV = "To serve at least one request with the model's max seq len ({max_seq_len})"
R1_SWAP = "Too large swap space. {swap_space} GiB out of the {total_memory} GiB total"
R2_OFFLOAD = "Offloading needs {swap_space_plus_reserved_memory} GiB of CPU memory"
R2_LORA = "{model_name} does not support LoRA, but LoRA is enabled."


def release_sites(name: str):
    return scan_tree(RELEASES / name / "vllm", printed=True, progress=False).sites


@pytest.fixture(scope="module")
def followed() -> lineage.History:
    return lineage.build([("1.0", release_sites("r1")), ("2.0", release_sites("r2"))])


def lineage_of(found: lineage.History, start: str) -> lineage.Lineage:
    (match,) = [lin for lin in found.live() if lin.current.template.startswith(start)]
    return match


# Releases ---------------------------------------------------------------------------


PYPI = ["0.2.0", "0.2.7", "0.3.0rc1", "0.3.3", "0.6.3", "0.6.6.post1", "0.10.1.1", "0.10.2"]


def test_select_takes_the_last_patch_of_each_minor_in_the_range():
    versions = history.sort_versions(reversed(PYPI))
    assert "0.3.0rc1" not in versions and versions[-1] == "0.10.2"
    assert history.select(versions, "0.2.0..0.10.2") == ["0.2.7", "0.3.3", "0.6.6.post1", "0.10.2"]
    assert history.select(versions, "0.3..0.6.5") == ["0.3.3", "0.6.3"]
    assert history.select(versions, "0.6.0..", every=True) == [
        "0.6.3",
        "0.6.6.post1",
        "0.10.1.1",
        "0.10.2",
    ]
    assert history.select(versions, "0.6.3,0.2.0") == ["0.2.0", "0.6.3"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("0.7.0..0.9.0", "no release in that range"),
        ("0.2.0,9.9", "not on the index: 9.9"),
        ("latest..", "'latest' is not a version"),
    ],
)
def test_select_refuses_what_the_index_does_not_have(spec, says):
    with pytest.raises(history.HistoryError, match=says):
        history.select(history.sort_versions(PYPI), spec)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of our own, and `pip download` replaced by a wheel made of a fixture release."""
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    downloads = []

    def download(package: str, version: str, folder: Path) -> Path:
        downloads.append(version)
        wheel = folder / f"{package}-{version}-py3-none-any.whl"
        tree = RELEASES / {"1.0": "r1", "2.0": "r2"}[version]
        with zipfile.ZipFile(wheel, "w") as archive:
            for path in sorted(tree.rglob("*.py")):
                archive.write(path, path.relative_to(tree).as_posix())
        return wheel

    monkeypatch.setattr(history, "download", download)
    return downloads


def test_a_release_is_downloaded_and_scanned_once_and_its_wheel_dropped(cache):
    first = history.scan_release("vllm", "1.0")
    again = history.scan_release("vllm", "1.0")
    assert cache == ["1.0"] and again.cached and not first.cached
    assert [(s.kind, s.template, s.guard) for s in again.sites] == [
        (s.kind, s.template, s.guard) for s in first.sites
    ]
    assert first.counts() == {"raise": 4, "log": 1, "http": 1}
    wheels = resources.user_cache() / "vllm" / "wheels"
    assert not any(wheels.rglob("*.whl"))


def test_a_release_unpacked_in_a_sources_folder_is_scanned_from_it(cache, tmp_path):
    """`--sources`: a release's .py files unpacked as <package>-<version>/ are scanned as the
    wheel would be (the same paths and sites), and nothing is downloaded; another release is."""
    unpacked = tmp_path / "src" / "vllm-1.0"
    shutil.copytree(RELEASES / "r1", unpacked)
    local = history.scan_release("vllm", "1.0", sources=tmp_path / "src")
    assert cache == [] and not local.cached
    history.scan_path("vllm", "1.0").unlink()
    wheel = history.scan_release("vllm", "1.0")
    assert cache == ["1.0"]
    assert [dataclasses.astuple(s) for s in local.sites] == [
        dataclasses.astuple(s) for s in wheel.sites
    ]
    history.scan_release("vllm", "2.0", sources=tmp_path / "src")
    assert cache == ["1.0", "2.0"]


def test_a_scan_cut_short_is_scanned_again(cache):
    history.scan_release("vllm", "1.0")
    path = history.scan_path("vllm", "1.0")
    path.write_bytes(path.read_bytes()[:40])
    assert history.load_scan("vllm", "1.0") is None
    assert not history.scan_release("vllm", "1.0").cached and cache == ["1.0", "1.0"]


# Scanning what is printed ---------------------------------------------------------------


def test_log_lines_and_api_errors_are_sites_with_their_guard():
    sites = {(s.kind, s.template): s for s in release_sites("r2")}
    log = sites[("log", "Casting {text} to {text_2}.")]
    assert (log.exception, log.level, log.function) == ("WARNING", "warning", "load_config")
    http = sites[("http", "n must be at most 8, got {n}.")]
    assert (http.exception, http.guard) == ("BadRequestError", "request.n > 8")
    kv = next(s for s in sites.values() if s.template.startswith(R2_KV))
    assert kv.guard == "max_seq_len > max_tokens" and kv.path == "vllm/v1/engine.py"


# Identity across releases ------------------------------------------------------------


def test_a_reworded_check_is_one_lineage_with_both_wordings(followed):
    heads = lineage_of(followed, R2_HEADS)
    assert [(w.template, w.first, w.last) for w in heads.wordings] == [
        (R1_HEADS, "1.0", "1.0"),
        (R2_HEADS, "2.0", "2.0"),
    ]


def test_a_check_moved_to_another_file_and_reworded_is_one_lineage(followed):
    kv = lineage_of(followed, R2_KV)
    assert [w.site.path for w in kv.wordings] == ["vllm/worker.py", "vllm/v1/engine.py"]
    assert kv.first == "1.0" and kv.last == "2.0"


def test_a_removed_check_points_at_the_one_that_took_over(followed):
    swap = lineage_of(followed, R1_SWAP)
    assert swap.last == "1.0" and len(swap.wordings) == 1
    assert swap.superseded_by is lineage_of(followed, R2_OFFLOAD)


def test_a_new_check_and_unchanged_ones_stand_alone(followed):
    assert lineage_of(followed, R2_LORA).first == "2.0"
    config = lineage_of(followed, "Config file {path}")
    assert (config.first, config.last, len(config.wordings)) == ("1.0", "2.0", 1)
    decisions = sorted(row["decision"] for row in followed.log)
    assert decisions == ["same", "same", "superseded"]
    assert all({"old", "new", "text", "guard", "place", "holes"} <= set(r) for r in followed.log)


def test_the_same_words_with_another_exception_are_the_same_check():
    # issue #21: ValueError to TypeError, the guard and words kept, is one check retyped
    sites = release_sites("r1")
    retyped = [
        dataclasses.replace(s, exception="TypeError", function="moved.check_swap")
        if s.function == "check_swap"
        else s
        for s in sites
    ]
    found = lineage.build([("1.0", sites), ("2.0", retyped)])
    swap = [lin for lin in found.live() if lin.current.template.startswith(R1_SWAP)]
    assert len(swap) == 1
    assert [w.key[0] for w in swap[0].wordings] == ["ValueError", "TypeError"]
    assert swap[0].current.key[0] == "TypeError" and swap[0].last == "2.0"


def test_a_sibling_elsewhere_is_no_successor():
    # The same words about another backend, in another file: not the check that took over
    old = Site(
        "NotImplementedError",
        "FP8 is not supported for PallasImpl",
        "a/pallas.py",
        3,
        "PallasImpl.forward",
    )
    sibling = Site(
        "NotImplementedError",
        "FP8 is not supported for TreeImpl",
        "a/tree.py",
        5,
        "TreeImpl.forward",
    )
    other = Site("ValueError", "unrelated", "b.py", 1, "f")
    found = lineage.build([("1.0", [old, other]), ("2.0", [sibling, other])])
    gone = next(lin for lin in found.live() if lin.current.template == old.template)
    assert gone.last == "1.0" and gone.superseded_by is None
    assert [row["decision"] for row in found.log] == ["different"]


# Two checks printed side by side are never one record (issue 41) ---------------------------

PLACEMENT = RELEASES / "placement"
RAISED = (
    "The number of required {device_str}s exceeds the total number of available {device_str}s"
    " in the placement group. Required number of devices: {world_size}. Total number of"
    " devices: {device_bundles}."
)
WARNED = (
    "The number of required {device_str}s exceeds the total number of available {device_str}s"
    " in the placement group."
)
GPUS = (
    "The number of required GPUs exceeds the total number of available GPUs in the placement group."
)


def placement_history() -> lineage.History:
    return lineage.build(
        (name, scan_tree(PLACEMENT / name / "vllm", printed=True, progress=False).sites)
        for name in ("p1", "p2", "p3", "p4")
    )


def test_two_sites_printed_by_one_release_are_two_records(kb):
    # vLLM's initialize_ray_cluster: the ValueError of an existing placement group (its first
    # wording a variant of its record) and the other branch's check, a warning since p3. The
    # lineage of the first wording may run through either: the records stay two.
    folder = kb / "content" / "errors" / DEMO
    raised, warned = new_id(DEMO, "ValueError", RAISED), new_id(DEMO, "WARNING", WARNED)
    (folder / f"{raised}.yaml").write_text(
        "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
        + yaml.safe_dump(
            {
                "id": raised,
                "project": DEMO,
                "exception": "ValueError",
                "message": RAISED,
                "title": "Ray placement group has fewer GPUs than the parallel layout needs",
                "variants": [{"message": GPUS, "versions": {"first": "p1", "last": "p1"}}],
                "source": {"path": "vllm/ray_utils.py", "line": 11},
            },
            sort_keys=False,
            width=1000,
        )
    )
    found = placement_history()
    done = chronicle.write(kb, load_content(kb), DEMO, found)
    assert not done.merged
    content = load_content(kb)
    assert raised not in content.aliases and warned in content.records
    mine = content.records[raised]
    assert (mine.status, mine.versions) == ("active", {"first": "p4", "last": "p4"})
    assert mine.data["title"].startswith("Ray placement group")
    assert content.records[warned].kind == "log" and content.records[warned].status == "active"
    again = chronicle.write(kb, content, DEMO, found)
    assert not again.merged and not again.created and not again.updated


def test_a_wording_printed_again_beside_the_check_it_was_merged_into_is_parted():
    # Gone in 2.0, where a check in much its words appeared in its function: merged. Printed
    # again in 3.0 beside that check: two checks after all, never one lineage
    def site(message: str, line: int) -> Site:
        return Site("ValueError", message, "m/ovis.py", line, "Ovis.parse", guard="x is None")

    old = site("Incorrect type of indicator_tokens. Got type: {kind}", 3)
    new = site("Incorrect type of image pixel values. Got type: {kind}", 5)
    other = Site("ValueError", "unrelated", "b.py", 1, "f")
    found = lineage.build([("1.0", [old, other]), ("2.0", [new, other])])
    assert [len(lin.wordings) for lin in found.live() if lin.current.site.path == "m/ovis.py"] == [
        2
    ]
    found = lineage.build([("1.0", [old, other]), ("2.0", [new, other]), ("3.0", [old, new])])
    ovis = [lin for lin in found.live() if lin.current.site.path == "m/ovis.py"]
    assert sorted(len(lin.wordings) for lin in ovis) == [1, 1]
    assert all(lin.last == "3.0" and lin.superseded_by is None for lin in ovis)
    assert [row["decision"] for row in found.log if row["release"] == "3.0"][:1] == ["parted"]


def _aria(message: str, exception: str = "KeyError", line: int = 9, **kw) -> Site:
    return Site(exception, message, "m/aria.py", line, "AriaProjector.forward", **kw)


ARIA_OLD = _aria(
    "Query number for {x_shape_1} patches is not provided",
    "AssertionError",
    kind="assert",
    guard="query_num is None",
)
ARIA_NEW = _aria(
    "Number of patches {num_patches} not found in patch_to_query_dict amongst possible values"
    " {keys}.",
    guard="num_patches not in self.patch_to_query_dict",
)
ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def test_one_check_in_place_of_another_in_its_function_took_over():
    # issue 41: an assert became a KeyError in other words, in the release it went: the
    # function lost it alone and gained the KeyError alone
    found = lineage.build([("1.0", [ARIA_OLD, ELSEWHERE]), ("2.0", [ARIA_NEW, ELSEWHERE])])
    gone = next(lin for lin in found.live() if lin.current.site.kind == "assert")
    assert gone.superseded_by is not None
    assert gone.superseded_by.current.template == ARIA_NEW.template
    (row,) = [row for row in found.log if row["decision"] == "superseded"]
    assert row["one_for_one"] and row["appeared"]


def test_a_function_that_gained_two_checks_names_no_successor_by_place_alone():
    other = _aria("Patch embeddings must be 2-D, got {ndim}", "ValueError", 12)
    found = lineage.build([("1.0", [ARIA_OLD, ELSEWHERE]), ("2.0", [ARIA_NEW, other, ELSEWHERE])])
    gone = next(lin for lin in found.live() if lin.current.site.kind == "assert")
    assert gone.superseded_by is None


KV_V0 = Site(
    "ValueError",
    "The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that"
    " can be stored in KV cache ({max_seq_len}). Try increasing `VLLM_CPU_KVCACHE_SPACE` or"
    " decreasing `max_model_len` when initializing the engine.",
    "vllm/worker/cpu_worker.py",
    309,
    "CPUWorker._validate_num_cpu_blocks",
    guard="self.model_config.max_model_len > max_seq_len",
)
KV_V1 = Site(
    "ValueError",
    "To serve at least one request with the model's max seq len ({max_model_len}), ({needed}"
    " GiB KV cache is needed, which is larger than the available KV cache memory ({available}"
    " GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when"
    " initializing the engine.",
    "vllm/v1/core/kv_cache_utils.py",
    40,
    "check_enough_kv_cache_memory",
    guard="needed_memory > available_memory",
)


@pytest.mark.parametrize("file_kept", [False, True])
def test_the_check_printed_beside_one_whose_file_went_took_over_when_it_names_the_setting(
    file_kept,
):
    # V0's CPU worker went in 2.0; V1's check, newer, printed beside it since 1.0, says much
    # the same and names the same setting (max_model_len): it took over. While the worker's
    # file still prints something, the V1 check is a sibling, no successor.
    kept = [Site("ValueError", "CPU cache too small", KV_V0.path, 400, "CPUWorker.f")]
    later = [KV_V1, ELSEWHERE] + (kept if file_kept else [])
    found = lineage.build(
        [
            ("0.5", [KV_V0, ELSEWHERE] + kept),
            ("1.0", [KV_V0, KV_V1, ELSEWHERE] + kept),
            ("2.0", later),
        ]
    )
    gone = next(
        lin
        for lin in found.live()
        if lin.current.site.path == KV_V0.path and lin.current.template == KV_V0.template
    )
    if file_kept:
        assert gone.superseded_by is None
    else:
        assert gone.superseded_by is not None
        assert gone.superseded_by.current.template == KV_V1.template


# Records -------------------------------------------------------------------------------


CURATED = """\
# yaml-language-server: $schema=../../../generator/error.schema.json
id: {rid}
project: demo
exception: ValueError
message: {message}
title: Heads not divisible by TP
params:
  num_heads:
    type: int
    about: Attention heads.
  tp_size:
    type: int
variants:
  - Heads {{num_heads}} and TP {{tp_size}} do not divide
summary: Written by a person.
meaning: |
  Prose that must stay **as it is**.
source:
  path: vllm/config.py
  line: 7
"""


@pytest.fixture
def kb_with_history(kb, followed):
    """The fixture KB with a curated record of the reworded check, then history written."""
    rid = new_id(DEMO, "ValueError", R2_HEADS)
    path = kb / "content" / "errors" / DEMO / f"{rid}.yaml"
    path.write_text(CURATED.format(rid=rid, message=R2_HEADS))
    done = chronicle.write(kb, load_content(kb), DEMO, followed)
    return kb, rid, done


def record(kb: Path, rid: str) -> dict:
    return yaml.safe_load((kb / "content" / "errors" / DEMO / f"{rid}.yaml").read_text())


def test_history_adds_versions_and_old_wordings_and_keeps_curated_text(kb_with_history):
    kb, rid, done = kb_with_history
    text = (kb / "content" / "errors" / DEMO / f"{rid}.yaml").read_text()
    before = CURATED.format(rid=rid, message=R2_HEADS)
    for line in ("Prose that must stay **as it is**.", "about: Attention heads.", "title: Heads"):
        assert line in text and line in before
    data = record(kb, rid)
    assert data["versions"] == {"first": "2.0", "last": "2.0"}
    assert data["variants"] == [
        "Heads {num_heads} and TP {tp_size} do not divide",
        {"message": R1_HEADS, "versions": {"first": "1.0", "last": "1.0"}},
    ]
    assert rid in done.updated and "status" not in data


def test_history_writes_stubs_for_every_check(kb_with_history, followed):
    kb, _, done = kb_with_history
    ids, _ = chronicle.assign_ids(followed, chronicle.RecordIndex(load_content(kb), DEMO), DEMO)
    by_start = {lin.current.template[:30]: rid for lin, rid in ids.items()}
    swap = record(kb, by_start[R1_SWAP[:30]])
    assert swap["status"] == "removed"
    assert swap["superseded_by"] == by_start[R2_OFFLOAD[:30]]
    assert swap["source"]["ref"] == "v1.0" and swap["versions"] == {"first": "1.0", "last": "1.0"}
    kv = record(kb, by_start[R2_KV[:30]])
    assert kv["source"]["path"] == "vllm/v1/engine.py" and kv["source"]["ref"] == "abc1234"
    assert kv["variants"][0]["message"].startswith("The model's max seq len ({max_seq_len})")
    assert set(kv["params"]) == {"max_seq_len", "max_tokens"}
    log = record(kb, by_start["Casting {text} to {text_2}."])
    assert (log["kind"], log["level"], log["exception"]) == ("log", "warning", "WARNING")
    assert record(kb, by_start["n must be at most 8, got {n}."])["kind"] == "http"
    assert done.kinds == {"raise": 6, "log": 1, "http": 1} and done.removed == 1


def test_history_is_valid_content_and_a_second_run_changes_nothing(kb_with_history, followed):
    kb, rid, _ = kb_with_history
    content = load_content(kb)  # raises on any problem
    again = chronicle.write(kb, content, DEMO, followed)
    assert not again.created and not again.updated and rid in again.unchanged


def test_the_api_says_when_each_wording_was_printed(kb_with_history):
    kb, rid, _ = kb_with_history
    content = load_content(kb)
    doc = api.error_document(content.records[rid], content, link(content))
    assert doc["computed"]["history"] == {
        "introduced": "1.0",
        "last": "2.0",
        "removed": False,
        "wordings": [
            {"message": R2_HEADS, "first": "2.0", "last": "2.0"},
            {"message": R1_HEADS, "first": "1.0", "last": "1.0"},
        ],
        "superseded_by": None,
    }


def test_errorkb_history_end_to_end(kb, cache, monkeypatch, capsys):
    monkeypatch.setattr(history, "available_versions", lambda package: ["0.9", "1.0", "2.0"])
    code = cli.main(["--root", str(kb), "history", "--project", DEMO, "--releases", "1.0.."])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "demo 2.0: 5 files, 7 sites (5 raise, 0 assert, 1 log, 1 http)" in err
    assert "messages in 2.0: 5 raise, 0 assert, 1 log, 1 http" in err
    assert (
        "messages in all: 8 raise, 0 assert, 1 log, 1 http" in err and "2 same, 1 superseded" in err
    )
    project = yaml.safe_load((kb / "content" / "projects" / f"{DEMO}.yaml").read_text())
    assert project["releases_scanned"] == ["1.0", "2.0"] and project["wing"] == "vllm"
    content = load_content(kb)
    doc = api.project_document(content, link(content), DEMO)
    assert doc["releases_scanned"] == ["1.0", "2.0"]
    again = cli.main(["--root", str(kb), "history", "--project", DEMO, "--releases", "1.0.."])
    assert again == 0 and cache == ["1.0", "2.0"]  # nothing downloaded twice
    assert "demo 1.0: 3 files, 6 sites (4 raise, 0 assert, 1 log, 1 http); cached" in (
        capsys.readouterr().err
    )
    assert json.loads((resources.user_cache() / DEMO / "matches.jsonl").read_text().split("\n")[0])


def test_a_paste_in_an_old_wording_finds_the_record_and_says_which_releases(kb_with_history):
    from errorkb.search import engine as search
    from errorkb.search import index as search_index

    kb, rid, _ = kb_with_history
    content = load_content(kb)
    files = search_index.site_index(content)
    index = search.Index(files.__getitem__)
    paste = (
        "ERROR 11-30 09:12:01 [engine.py:412] Error in startup\n"
        "ValueError: Total number of attention heads (40) must be divisible by tensor\n"
        "parallel size (3)."
    )
    best = search.search(index, paste)[0]
    assert (best.id, best.match, best.values) == (rid, "exact", {"num_heads": "40", "tp_size": "3"})
    assert best.wording == "printed by Demo 1.0"
    now = search.search(index, "The number of attention heads (40) must be divisible by the tensor")
    assert now[0].id == rid and now[0].wording == ""


def test_the_page_shows_the_history_and_where_a_removed_check_went(kb_with_history, followed):
    from errorkb.site.build import build

    kb, rid, _ = kb_with_history
    build(kb)
    page = (kb / "site" / "errors" / rid / "index.html").read_text()
    history_html = page[page.index('id="history"') :]
    history_html = history_html[: history_html.index("</section>")]
    assert "Introduced in Demo 1.0, printed up to 2.0." in history_html
    assert "the wording of Demo 1.0" in history_html
    assert "Total number of attention heads (" in history_html
    ids, _ = chronicle.assign_ids(followed, chronicle.RecordIndex(load_content(kb), DEMO), DEMO)
    swap = next(i for lin, i in ids.items() if lin.current.template.startswith(R1_SWAP))
    offload = next(i for lin, i in ids.items() if lin.current.template.startswith(R2_OFFLOAD))
    removed = (kb / "site" / "errors" / swap / "index.html").read_text()
    assert "Removed: no release after 1.0 prints it" in removed
    assert f'/errors/{offload}/">' in removed[removed.index('id="history"') :]


def test_errors_collected_in_a_list_and_joined_are_each_a_message():
    from errorkb.sources.extract import scan_file

    code = b"""
def check_request(request, max_n):
    problems = []
    if request.n > max_n:
        problems.append(f"n={request.n} is above the limit of {max_n}")
    if request.stream and request.n > 1:
        problems.append("streaming needs n=1")
    problems.append(unknown_helper(request))
    if problems:
        raise ValueError("Invalid request: " + "; ".join(problems))
"""
    sites = scan_file("vllm/serving.py", code).sites
    assert sorted(s.template for s in sites) == [
        "Invalid request: n={n} is above the limit of {max_n}",
        "Invalid request: streaming needs n=1",
        "Invalid request: {problems}",
    ]


OLD_PASTES = json.loads((RELEASES / "old_pastes.json").read_text())["pastes"]


@pytest.mark.parametrize("row", OLD_PASTES, ids=lambda row: row["wording"][:40])
def test_pastes_in_older_wordings_find_the_record_that_holds_them(real, row):
    from errorkb.search import engine as search
    from errorkb.sources.extract import match_key

    content, _, index = real  # tests/conftest.py: built once a session

    def keys(record) -> list[str]:
        """A record's wordings as matched, each under the exception it was raised with (a
        retyped check keeps its old exception on its old wording)."""
        variants = record.data.get("variants", [])
        return [match_key(record.exception, record.message)] + [
            match_key(record.exception, v)
            if isinstance(v, str)
            else match_key(v.get("exception", record.exception), v["message"])
            for v in variants
        ]

    key = match_key(row["exception"], row["wording"])
    (holder,) = [r for r in content.records.values() if key in keys(r)]
    seen = holder.wordings[keys(holder).index(key)][1]
    best = search.search(index, row["text"])[0]
    assert best.id == holder.id  # values are named as the wording the record keeps
    assert list(best.values.values()) == list(row["values"].values())
    if seen["last"] != content.projects["vllm"].releases_scanned[-1]:
        assert best.wording.startswith(f"printed by vLLM {seen['first']}")


def test_a_placeholder_named_items_renders(kb):
    """Log lines name holes after their variables: `{items}` must not hide dict.items()."""
    from errorkb.site.build import build

    rid = new_id(DEMO, "WARNING", "Dropped {items} of the batch")
    (kb / "content" / "errors" / DEMO / f"{rid}.yaml").write_text(
        f"id: {rid}\nproject: demo\nexception: WARNING\nkind: log\nlevel: warning\n"
        "message: Dropped {items} of the batch\nparams:\n  items:\n    type: any\n"
        "    about: How many requests were dropped.\n"
        "source:\n  path: vllm/batch.py\n"
    )
    build(kb)
    page = (kb / "site" / "errors" / rid / "index.html").read_text()
    assert 'data-param="items"' in page and '<dt><var class="ph">{items}</var></dt>' in page


# Nothing we scan runs ------------------------------------------------------------------


def local_index(root: Path, marker: Path) -> str:
    """A file:// simple index of `demo`: 1.0 an sdist whose build backend writes `marker`
    when pip asks it anything, 2.0 a wheel of the fixture release r2."""
    files = root / "files"
    files.mkdir(parents=True)
    backend = f"open({str(marker)!r}, 'w').close()\n"
    sdist = {
        "demo-1.0/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n',
        "demo-1.0/backend.py": backend,
        "demo-1.0/setup.py": backend,
        "demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        "demo-1.0/vllm/x.py": "def f():\n    raise ValueError('from the sdist')\n",
    }
    with tarfile.open(files / "demo-1.0.tar.gz", "w:gz") as archive:
        for name, text in sdist.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    with zipfile.ZipFile(files / "demo-2.0-py3-none-any.whl", "w") as archive:
        for path in sorted((RELEASES / "r2").rglob("*.py")):
            archive.write(path, path.relative_to(RELEASES / "r2").as_posix())
        archive.writestr(
            "demo-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 2.0\n"
        )
        archive.writestr(
            "demo-2.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr("demo-2.0.dist-info/RECORD", "")
    page = root / "simple" / "demo" / "index.html"
    page.parent.mkdir(parents=True)
    links = "".join(f'<a href="{p.as_uri()}">{p.name}</a>\n' for p in sorted(files.iterdir()))
    page.write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return (root / "simple").as_uri()


@pytest.mark.slow
def test_history_never_builds_an_sdist_and_skips_a_release_without_a_wheel(
    kb, tmp_path, monkeypatch, capsys
):
    marker = tmp_path / "the-package-ran"
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # our index only
    monkeypatch.setenv("PIP_INDEX_URL", local_index(tmp_path / "index", marker))
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(history, "available_versions", lambda package: ["1.0", "2.0"])
    for dry in (["--dry-run"], []):
        code = cli.main(
            ["--root", str(kb), "history", "--project", DEMO, "--releases", "1.0.."] + dry
        )
        err = capsys.readouterr().err
        assert not marker.exists()  # pip was never asked to build the sdist
        assert code == 0, err
        assert "demo 1.0: skipped: no wheel pip can download" in err
        assert "demo 2.0: 5 files, 7 sites" in err and "Traceback" not in err
    project = yaml.safe_load((kb / "content" / "projects" / f"{DEMO}.yaml").read_text())
    assert project["releases_scanned"] == ["2.0"]  # 1.0 is tried again next time

"""A record's prose (Record.outward, PROSE) shows on its own page and JSON alone, and the
quick rebuild (generator/site/quick.py) remakes just those after an edit of it, making the
very site a cold build makes, but for the full text: the last full build's index, and the
pages edited since in a bundle of their own."""

import hashlib
import itertools
import json
import marshal
import os
import pickle
import shutil
import time
from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from errorkb import owned, urls
from errorkb.content.model import PROSE, ContentError
from errorkb.site import build as build_module
from errorkb.site import publish, quick
from errorkb.site.build import build
from errorkb.site.publish import site_manifest
from errorkb.site.quick import build_site
from errorkb.site.shows import BASE, Shows
from tests.conftest import (
    SEED,
    fresh_copy,
    make_kb,
    make_stack_kb,
    small_vllm_kb,
    spare_holds_live,
)


def _digest(site: Path) -> dict[str, str]:
    return {
        p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def _edited(value):
    """Prose with words added: Markdown text, lists of it, and the notes of code blocks."""
    if isinstance(value, str):
        return value.rstrip("\n") + " Edited for the test."
    if isinstance(value, list):
        return [_edited(item) for item in value]
    return {k: _edited(v) if k == "note" else v for k, v in value.items()}


def _edit_prose(kb: Path) -> dict[str, list[str]]:
    """Every record's prose edited; the ids of the records that have some, with their
    aliases (whose documents are the record's)."""
    ids = {}
    for path in sorted((kb / "content" / "errors").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if any(field in data for field in PROSE):
            for field in (f for f in PROSE if f in data):
                data[field] = _edited(data[field])
            path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
            ids[data["id"]] = data.get("aliases", [])
    return ids


def _own_files(rid: str, aliases: list[str]) -> set[str]:
    own = [urls.error(rid), urls.error_json(rid), *map(urls.error_json, aliases)]
    return set(map(urls.output_path, own))


@pytest.mark.parametrize(
    "fill", [None, pytest.param(small_vllm_kb, marks=pytest.mark.slow)], ids=["fixture", "vllm"]
)
def test_prose_shows_on_the_records_own_page_and_json_alone(tmp_path, fill):
    kb = make_kb(tmp_path / "kb", fill)
    before = _digest(build(kb, tmp_path / "before").out)
    ids = _edit_prose(kb)
    after = _digest(build(kb, tmp_path / "after").out)
    assert ids
    changed = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
    own = set().union(*(_own_files(rid, aliases) for rid, aliases in ids.items()))
    full_text = {f for f in changed if f.startswith(urls.pagefind("").strip("/"))}
    assert changed - full_text == {f for f in own if f in changed}, sorted(changed - own)
    # The edit reached every one of those pages.
    assert {urls.output_path(urls.error(rid)) for rid in ids} <= changed
    assert full_text  # their prose is searched
    shutil.rmtree(tmp_path / "before")


def _cold_site(kb: Path, tmp_path: Path) -> Path:
    fresh = tmp_path / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh_copy(kb, fresh)
    return build(fresh).out


def _cold(kb: Path, tmp_path: Path) -> dict[str, str]:
    return _digest(_cold_site(kb, tmp_path))


def _main_index_of(files: dict[str, str]) -> dict[str, str]:
    return {f: d for f, d in files.items() if f.startswith(FULL_TEXT[0])}


FULL_TEXT = tuple(urls.output_path(u("x"))[:-1] for u in (urls.pagefind, urls.pagefind_newer))


def _outside_full_text(files: dict) -> dict:
    return {f: v for f, v in files.items() if not f.lstrip("/").startswith(FULL_TEXT)}


def _main_index(site: Path) -> dict[str, str]:
    return _main_index_of(_digest(site))


def _newer(site: Path) -> list[str]:
    """The pages the bundle of edited pages holds."""
    return json.loads((site / urls.output_path(urls.pagefind_newer())).read_text())["pages"]


def _assert_as_cold(kb: Path, tmp_path: Path, index: dict[str, str], newer: list[str]) -> None:
    """The site and manifest a cold build makes, but for the full text: the main `index` as
    the last full build made it, and the `newer` pages indexed apart."""
    site, cold = kb / "site", _cold_site(kb, tmp_path)
    assert _outside_full_text(_digest(site)) == _outside_full_text(_digest(cold))
    # The same manifest too: keys, sizes and what each page links (`--check` reads it); the
    # files' times are their own.
    assert _outside_full_text(_unstamped(site)) == _outside_full_text(_unstamped(cold))
    assert _main_index(site) == index
    assert _newer(site) == newer
    assert _newer(cold) == []


def _unstamped(site: Path) -> dict[str, tuple]:
    """A site's manifest with each file's size in place of its stamp."""
    return {url: (key, stamp[0], facts) for url, (key, stamp, facts) in site_manifest(site).items()}


def _curated(kb: Path) -> list[Path]:
    return [
        p
        for p in sorted((kb / "content" / "errors").rglob("*.yaml"))
        if any(f"\n{field}:" in p.read_text() for field in PROSE)
    ]


def _append_to_meaning(path: Path, words: str) -> None:
    data = yaml.safe_load(path.read_text())
    field = next(f for f in PROSE if f in data and isinstance(data[f], str))
    data[field] = data[field].rstrip() + " " + words
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@pytest.mark.parametrize(
    "fill", [None, pytest.param(small_vllm_kb, marks=pytest.mark.slow)], ids=["fixture", "vllm"]
)
def test_a_prose_edit_is_rebuilt_quickly_into_the_site_a_cold_build_makes(tmp_path, fill):
    kb = make_kb(tmp_path / "kb", fill)
    build_site(kb)
    index, edited = _main_index(kb / "site"), []
    for n, path in enumerate(_curated(kb)[:2]):
        _append_to_meaning(path, f"Edited {n} times.")
        result = quick.rebuild(kb, kb / "site")
        assert result is not None, "a prose edit takes the quick rebuild"
        newer = [p for p in (kb / "site" / FULL_TEXT[1]).rglob("*") if p.is_file()]
        assert result.rendered <= 3 + len(newer)  # its page, JSON, an alias's JSON
        edited.append(urls.error(path.stem))
        _assert_as_cold(kb, tmp_path, index, sorted(edited))
    page = kb / "site" / urls.output_path(urls.error(path.stem))
    assert f"Edited {n} times." in page.read_text()


@pytest.mark.slow
def test_a_summary_shown_by_the_newest_listings_and_a_guide_is_rebuilt_quickly(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    path = _curated(kb)[0]  # dated: the home page and the feed list it; a guide covers it
    _edit(path, summary="The widgets, summed up anew.")
    assert quick.rebuild(kb, kb / "site") is not None
    # Past half of the few explained pages changed: their full text is indexed anew.
    assert _digest(kb / "site") == _cold(kb, tmp_path)
    for url in (urls.home(), urls.feed(), urls.guide("grouping")):
        assert "summed up anew" in (kb / "site" / urls.output_path(url)).read_text(), url


def _knobs(kb: Path, count: int = 40) -> list[Path]:
    """Records past the fixture's, without dates, in three source files: the home page
    lists the newest twenty (by id), not the first. The first has a former id, the fourth
    relates to it, the seventh is explained."""
    made = []
    for n in range(count):
        record = {
            "id": f"{0xA000 + n:016x}",
            "project": "demo",
            "exception": "ValueError",
            "message": f"Knob number {n} is out of range: {{value}}",
            "summary": f"Knob {n} takes values from 0 to {n}.",
            "source": {"path": f"demo/knobs{n % 3}.py", "line": 10 * (n + 1)},
        }
        extra = {0: {"aliases": ["000000000000afff"]}, 3: {"related": [made and made[0].stem]}}
        extra[6] = {"meaning": "The knob takes **small** values only."}
        path = kb / f"content/errors/demo/{record['id']}.yaml"
        path.write_text(yaml.safe_dump({**record, **extra.get(n, {})}, sort_keys=False))
        made.append(path)
    return made


def _edit(path: Path, **fields) -> None:
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), **fields}))


def _assert_quick_as_cold(kb: Path, tmp_path: Path, index: dict, edited: Path) -> list[str]:
    """A quick rebuild made the site a cold build makes (the explained pages it changed
    indexed apart); returns those pages."""
    result = quick.rebuild(kb, kb / "site")
    assert result is not None, "an edit of what listings show takes the quick rebuild"
    newer = _newer(kb / "site")
    _assert_as_cold(kb, tmp_path, index, newer)
    text = yaml.safe_load(edited.read_text())["summary"]
    assert text in (kb / "site" / urls.output_path(urls.error(edited.stem))).read_text()
    return newer


@pytest.mark.slow
def test_an_edit_of_what_listings_show_is_rebuilt_quickly_into_the_site_a_cold_build_makes(
    tmp_path,
):
    kb = make_kb(tmp_path / "kb")
    knobs = _knobs(kb)
    build_site(kb)
    index = _main_index(kb / "site")
    _edit(knobs[0], summary="Knob zero takes no values at all.")
    newer = _assert_quick_as_cold(kb, tmp_path, index, knobs[0])
    assert newer == [urls.error(knobs[6].stem)]  # explained, raised in the same file
    _edit(knobs[0], title="Knob zero is out of range")  # its former id's list shows it
    _assert_quick_as_cold(kb, tmp_path, index, knobs[0])
    _edit(knobs[6], summary="An explained knob, summed up anew.")
    _assert_quick_as_cold(kb, tmp_path, index, knobs[6])
    _edit(knobs[39], summary="The newest knob.")  # the home page lists it
    _assert_quick_as_cold(kb, tmp_path, index, knobs[39])
    _edit(knobs[6], title="An explained knob renamed")  # its project's page lists it
    _assert_quick_as_cold(kb, tmp_path, index, knobs[6])
    project = (kb / "site" / urls.output_path(urls.project("demo"))).read_text()
    assert "An explained knob renamed" in project
    page = (kb / "site" / urls.output_path(urls.source_file("demo", "demo/knobs0.py"))).read_text()
    assert "Knob zero is out of range" in page


def test_an_edit_undone_shows_again_though_its_page_is_the_same_size(tmp_path):
    """The quick rebuild links the live site's pages into the spare before it writes; a
    page asked back at its key from before (the edit undone) is then not the spare's old
    file, though its size is the same."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    record = _curated(kb)[0]
    page = kb / "site" / urls.output_path(urls.error(yaml.safe_load(record.read_text())["id"]))
    for word in ("Alpha", "Bravo", "Alpha", "Bravo"):
        data = yaml.safe_load(record.read_text())
        data["summary"] = f"Summed up: {word}."
        record.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        build_site(kb)
        assert f"Summed up: {word}." in page.read_text()
        assert _spare_as_told(kb)
    assert _digest(kb / "site") == _cold(kb, tmp_path)


@pytest.mark.slow
@settings(max_examples=5, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from(["Alpha", "Bravo", "Delta"])),
        min_size=3,
        max_size=8,
    )
)
def test_any_edits_and_undoing_of_same_size_summaries_make_the_cold_builds_site(
    tmp_path_factory, edits
):
    """Summaries of two records changed among words of one length, each edit a quick
    rebuild: pages come back at keys they had before, their sizes the same."""
    kb = make_kb(tmp_path_factory.mktemp("kb") / "kb")
    build_site(kb)
    records = _curated(kb)[:2]
    for which, word in edits:
        record = records[which % len(records)]
        data = yaml.safe_load(record.read_text())
        data["summary"] = f"Summed up: {word}."
        record.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        build_site(kb)
        assert _spare_as_told(kb)
    assert _digest(kb / "site") == _cold(kb, tmp_path_factory.mktemp("cold"))


def test_edits_of_what_listings_show_of_records_listed_together_are_rebuilt_at_once(tmp_path):
    """Records raised in one file, on one page of their project's document and of patterns:
    each line made anew where the other's is."""
    kb = make_kb(tmp_path / "kb")
    knobs = _knobs(kb)
    build_site(kb)
    index = _main_index(kb / "site")
    _edit(knobs[3], summary="Knob three, summed up anew.")
    _edit(knobs[0], title="Knob zero is out of range", summary="Knob zero, summed up anew.")
    _assert_quick_as_cold(kb, tmp_path, index, knobs[0])
    document = (kb / "site" / urls.output_path(urls.project_json("demo"))).read_text()
    assert "Knob three, summed up anew." in document and "Knob zero, summed up anew." in document


@pytest.mark.slow
def test_edits_of_what_listings_show_of_real_records_are_rebuilt_as_a_cold_build_makes(tmp_path):
    """The vLLM slice: records with related records, checks and variants, each given a new
    summary in one edit, and a new title where the calculator's data does not name it."""
    kb = make_kb(tmp_path / "kb", small_vllm_kb)
    build_site(kb)
    index = _main_index(kb / "site")
    named = quick._load_state(kb / "site").named
    records = sorted((kb / "content" / "errors" / "vllm").glob("*.yaml"))
    for n, path in enumerate(records[:: max(1, len(records) // 5)]):
        title = {} if path.stem in named else {"title": f"Retitled record {n}"}
        _edit(path, summary=f"Summed up anew ({n}).", **title)
    assert quick.rebuild(kb, kb / "site") is not None
    if _newer(kb / "site"):
        _assert_as_cold(kb, tmp_path, index, _newer(kb / "site"))
    else:  # past half of the explained pages changed: the full text indexed anew
        assert _digest(kb / "site") == _cold(kb, tmp_path)


@pytest.mark.slow
def test_a_new_title_of_a_record_the_calculator_names_takes_the_full_build(tmp_path):
    kb = make_kb(tmp_path / "kb", small_vllm_kb)
    build_site(kb)
    seed = kb / "content" / "errors" / "vllm" / f"{SEED}.yaml"
    _edit(seed, summary="The heads cannot be split evenly.")
    assert quick.rebuild(kb, kb / "site") is not None
    _edit(seed, title="Heads not divisible by the tensor parallel size")
    assert quick.rebuild(kb, kb / "site") is None  # its title is in the calculator's data
    build_site(kb)
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


@pytest.mark.parametrize(
    "n, fields",
    [
        (0, {"source": {"path": "demo/knobs0.py", "line": 5}}),  # placed anew: by line
        (1, {"exception": "TypeError"}),
        (2, {"summary": "Related anew.", "related": ["00000000000000a1"]}),
    ],
)
def test_an_edit_that_places_a_record_anew_takes_the_full_build(tmp_path, n, fields):
    kb = make_kb(tmp_path / "kb")
    knobs = _knobs(kb)
    build_site(kb)
    _edit(knobs[n], **fields)
    assert quick.rebuild(kb, kb / "site") is None
    build_site(kb)
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


def test_an_output_declaring_an_edited_record_the_rebuild_does_not_remake_takes_the_full_build(
    tmp_path, monkeypatch
):
    """A producer the quick rebuild knows nothing of: its output declares it shows a
    record as a row (the inverse the full build keeps says so), so an edit of what rows
    show of that record takes the full build; a prose edit of another does not."""
    kb = make_kb(tmp_path / "kb")
    knobs = _knobs(kb)
    shown = knobs[2].stem
    producers = build_module.Plan.producers

    def with_list(plan):
        def knob_list():
            title = plan.content.records[shown].data.get("summary", "").encode()
            yield plan.unit("/knob-list.txt", Shows(rows=(shown,), names=(BASE,)), title)

        return {**producers(plan), "knob list": knob_list}

    monkeypatch.setattr(build_module.Plan, "producers", with_list)
    build_site(kb)
    _append_to_meaning(_curated(kb)[0], "Edited.")
    assert quick.rebuild(kb, kb / "site") is not None
    _edit(knobs[2], summary="Shown by the knob list.")
    assert quick.rebuild(kb, kb / "site") is None
    build_site(kb)
    assert (kb / "site" / "knob-list.txt").read_bytes() == b"Shown by the knob list."
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


def test_a_mistake_in_an_edited_file_is_reported_by_the_full_build(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    before = _digest(kb / "site")
    path = _curated(kb)[0]
    path.write_text(path.read_text().replace("\nmeaning:", "\nmeaning: [\nmeanin:", 1))
    assert quick.rebuild(kb, kb / "site") is None
    with pytest.raises(ContentError) as raised:
        build_site(kb)
    assert raised.value.problems[0].path == path.relative_to(kb).as_posix()
    assert _digest(kb / "site") == before  # the site is as it was


def test_added_and_deleted_records_take_the_full_build(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    path = _curated(kb)[0]
    copy = path.with_name("00000000000000e9.yaml")
    copy.write_text(path.read_text().replace(path.stem, copy.stem))
    assert quick.rebuild(kb, kb / "site") is None
    copy.unlink()
    assert quick.rebuild(kb, kb / "site") is not None  # back as the state knows it
    data = yaml.safe_load(path.read_text())
    data.pop("aliases", None)
    copy.write_text(yaml.safe_dump({**data, "id": copy.stem}, sort_keys=False))
    build_site(kb)
    copy.unlink()
    build_site(kb)  # the spare holds the files of a record the site no longer has
    assert _spare_as_told(kb)
    _append_to_meaning(path, "Edited.")
    build_site(kb)
    assert _spare_as_told(kb)
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


def test_a_copied_knowledge_base_builds_as_a_cold_build(tmp_path):
    """A copy of a built knowledge base holds the quick state, though its site folders'
    manifests (named after the folders' inodes) are not theirs. Its folders carry errorkb's
    marker, so they are errorkb's to replace: the build makes the copy's site whole."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build_site(kb)
    copy = tmp_path / "copy"
    shutil.copytree(kb, copy, symlinks=True)
    _append_to_meaning(_curated(copy)[0], "Edited.")
    build_site(copy)
    assert _outside_full_text(_digest(copy / "site")) == _outside_full_text(_cold(copy, tmp_path))


def test_a_build_of_another_kind_between_voids_the_quick_state(tmp_path):
    """A build that keeps no state (one project's site, MkDocs, a plain build) makes the
    site anew: the next edit takes the full build."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build(kb)
    build(kb)  # the site folder is the one the state was kept for again
    _append_to_meaning(_curated(kb)[0], "Edited.")
    assert quick.rebuild(kb, kb / "site") is None


def test_the_pages_of_patterns_of_a_record_are_those_its_slots_fall_in(monkeypatch):
    """Each record's wordings, in order, one slot each, across pages of three."""
    monkeypatch.setattr(quick.engine, "PAGE", 3)
    wordings = {"a": 2, "b": 4, "c": 1, "d": 3}
    slots = [(rid, n) for rid, count in wordings.items() for n in range(count)]
    for rid in wordings:
        where = sorted({i // 3 for i, (slot_rid, _) in enumerate(slots) if slot_rid == rid})
        pages = quick._pattern_pages(slots, rid)
        assert list(pages) == where
        assert all(pages[n] == slots[n * 3 : n * 3 + 3] for n in where)
    assert quick._pattern_pages(slots, "e") == {}


@pytest.mark.parametrize(
    "damage",
    [
        lambda state: state[: len(state) // 2],  # a disk that filled midway
        lambda state: b"",
        lambda state: pickle.dumps({"records": {}}),  # an older errorkb's state
        lambda state: marshal.dumps((quick.VERSION - 1, *[None] * 5)),
        lambda state: marshal.dumps((quick.VERSION, {}, {}, {}, {}, b"not marshal")),
    ],
    ids=["truncated", "empty", "pickle", "older", "garbled"],
)
@pytest.mark.slow
def test_a_damaged_quick_state_takes_the_full_build(tmp_path, monkeypatch, damage):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    state = quick._state_path(kb / "site")
    state.write_bytes(damage(state.read_bytes()))
    _append_to_meaning(_curated(kb)[0], "Edited.")
    assert quick._load_state(kb / "site") is None
    full = _full_builds(monkeypatch)
    build_site(kb)
    assert full == [1]
    assert _digest(kb / "site") == _cold(kb, tmp_path)
    assert quick._load_state(kb / "site") is not None  # kept anew


@pytest.mark.slow
def test_a_template_or_settings_edit_takes_the_full_build(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    page = kb / "templates" / "error.html"
    page.write_text(page.read_text() + "\n{# edited #}\n")
    _append_to_meaning(_curated(kb)[0], "Edited.")
    assert quick.rebuild(kb, kb / "site") is None
    build_site(kb)
    site = kb / "content" / "site.yaml"
    site.write_text(site.read_text().replace("title: ", "title: New ", 1))
    _append_to_meaning(_curated(kb)[0], "Edited again.")
    assert quick.rebuild(kb, kb / "site") is None
    build_site(kb)
    assert _digest(kb / "site") == _cold(kb, tmp_path)


@pytest.mark.slow
def test_a_quick_rebuild_killed_midway_leaves_the_site_whole(tmp_path, monkeypatch):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    before = _digest(kb / "site")
    path = _curated(kb)[0]
    _append_to_meaning(path, "Edited.")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(publish.Writer, "write", killed)
    with pytest.raises(KeyboardInterrupt):
        build_site(kb)
    assert _digest(kb / "site") == before
    monkeypatch.undo()
    assert quick.rebuild(kb, kb / "site") is not None  # the spare is made again
    _assert_as_cold(kb, tmp_path, _main_index_of(before), [urls.error(path.stem)])


@pytest.mark.slow
def test_a_record_over_the_default_size_keeps_the_quick_rebuild_where_the_site_allows_it(tmp_path):
    kb = make_kb(tmp_path / "kb")
    site = kb / "content" / "site.yaml"
    site.write_text(site.read_text() + "max_file_kb: 1024\n")
    path = _curated(kb)[0]
    _append_to_meaning(path, "Long. " * 60_000)  # 360 KB: over the default 256 KB
    build_site(kb)
    index = _main_index(kb / "site")
    _append_to_meaning(path, "Edited.")
    assert quick.rebuild(kb, kb / "site") is not None
    _assert_as_cold(kb, tmp_path, index, [urls.error(path.stem)])


@pytest.mark.slow
def test_past_newer_most_edited_pages_the_full_text_is_indexed_anew(tmp_path, monkeypatch):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    path = _curated(kb)[0]
    monkeypatch.setattr(build_module, "NEWER_MOST", 0)
    _append_to_meaning(path, "Edited.")
    assert quick.rebuild(kb, kb / "site") is not None
    assert _digest(kb / "site") == _cold(kb, tmp_path)  # all of it indexed anew
    monkeypatch.setattr(build_module, "NEWER_MOST", 1)
    assert quick.rebuild(kb, kb / "site") is not None
    assert _newer(kb / "site") == []  # the page as the new index holds it
    _append_to_meaning(path, "Edited again.")
    assert quick.rebuild(kb, kb / "site") is not None
    assert _newer(kb / "site") == [urls.error(path.stem)]


def _more_explained(kb: Path, count: int) -> list[Path]:
    """Explained records besides the fixture's own: copies of its explained record, each
    raised in a file of its own (the pages of a file's records are keyed by all of them)."""
    a1 = kb / "content" / "errors" / "demo" / "00000000000000a1.yaml"
    copies = []
    for n in range(count):
        copy = a1.with_name(f"00000000000000f{n}.yaml")
        text = a1.read_text().replace(a1.stem, copy.stem).replace("Widget", f"Gadget{n}")
        text = text.replace("path: demo/widgets.py", f"path: demo/gadget{n}.py")
        copy.write_text(text.replace("\naliases: [00000000000000ff]", ""))
        copies.append(copy)
    return copies


@pytest.mark.slow
def test_a_full_build_indexes_the_few_pages_it_changed_apart(tmp_path):
    """The full build, too, keeps the live site's full-text index when few of its pages
    changed, and makes it anew when pages come or go."""
    kb = make_kb(tmp_path / "kb")
    copies = _more_explained(kb, 4)
    build_site(kb)
    index = _main_index(kb / "site")
    edited = copies[2]
    edited.write_text(edited.read_text().replace("\n  line: 42\n", "\n  line: 43\n", 1))
    assert quick.rebuild(kb, kb / "site") is None  # placed anew
    result = build_site(kb)
    _assert_as_cold(kb, tmp_path, index, [urls.error(edited.stem)])
    assert result.rendered < 60  # not all of the site
    copies[3].unlink()  # a page of the index gone: all of it made anew
    build_site(kb)
    assert _digest(kb / "site") == _cold(kb, tmp_path)


def test_no_garbage_collection_runs_while_the_build_keeps_its_state(tmp_path, monkeypatch):
    """The state is made of a small object or two per record: made with the collector on,
    after a build that left hundreds of thousands of objects, it set off full collections
    (3 s of a cold build of the real content). The collector here runs at every allocation."""
    kb = make_kb(tmp_path / "kb")
    during = _collections_in(monkeypatch, ["save_state"], lambda: build_site(kb))
    assert quick._load_state(kb / "site") is not None
    assert during == []


@pytest.mark.slow
def test_a_spare_manifest_of_another_shape_takes_the_full_build(tmp_path, monkeypatch):
    """The quick rebuild compares the spare's manifest with the live site's as sets of
    (key, size) tuples; a manifest holding anything else is not trusted."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build(kb)  # the spare now has a manifest
    out = kb / "site"
    keys = publish.manifest_path(publish.spare_path(out), out)
    entries, _ = marshal.loads(keys.read_bytes())
    keys.write_bytes(marshal.dumps({url: list(entry) for url, entry in entries.items()}))
    _append_to_meaning(_curated(kb)[0], "Edited.")
    full = _full_builds(monkeypatch)
    build_site(kb)
    assert full == [1]
    assert _outside_full_text(_digest(out)) == _outside_full_text(_cold(kb, tmp_path))


@pytest.mark.slow
def test_no_garbage_collection_runs_while_a_quick_rebuild_reads_its_state(tmp_path, monkeypatch):
    """A quick rebuild reads a state and a listing of an object or two per record: with
    the collector on, collections took two fifths of reading them."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    _append_to_meaning(_curated(kb)[0], "Edited.")
    monkeypatch.setattr(quick.build, "build", None)  # the quick rebuild alone may run
    during = _collections_in(monkeypatch, ["_load_state", "rebuild"], lambda: build_site(kb))
    assert during == []


def _collections_in(monkeypatch, names: list[str], run) -> list[int]:
    """The generations the collector collected while one of these functions of quick.py
    ran, during `run()`, the collector set to run at every allocation."""
    import gc

    inside: list = []
    during: list[int] = []
    for name in names:
        function = getattr(quick, name)
        monkeypatch.setattr(quick, name, _flagging(function, inside))
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(lambda phase, info: inside and during.append(info["generation"]))
    try:
        run()
    finally:
        gc.callbacks.pop()
        gc.set_threshold(*thresholds)
    return during


def _flagging(function, inside: list):
    """The function, with `inside` holding an item while it runs."""

    def flagged(*args, **kwargs):
        inside.append(function)
        try:
            return function(*args, **kwargs)
        finally:
            inside.pop()

    return flagged


def _spare_as_told(kb: Path) -> bool:
    """Whether the live site's manifest tells how the spare's differs (the spare's being the
    one its build saw), and tells it right."""
    out, spare = kb / "site", kb / ".site-spare"
    live, told = publish.read_keys_file(out, out)
    if told is None or told[0] != publish.keys_stamp(spare, out):
        return False
    assert publish.patched(live, told[1]) == publish.read_keys(spare, out)
    return True


def _keys_read(monkeypatch) -> list[str]:
    """The names of the site folders whose manifests' keys are read from here on."""
    read: list[str] = []
    real = publish.read_keys_file

    def reading(folder, out):
        read.append(Path(folder).name)
        return real(folder, out)

    monkeypatch.setattr(publish, "read_keys_file", reading)
    return read


def _full_builds(monkeypatch) -> list[int]:
    """One item for each full build that runs from here on."""
    full: list[int] = []
    monkeypatch.setattr(quick.build, "build", lambda *a, **k: full.append(1) or build(*a, **k))
    return full


def _counting_links(monkeypatch) -> list[str]:
    """The files linked into a site from here on."""
    linked: list[str] = []
    real = os.link

    def link(source, target, *args, **kwargs):
        linked.append(str(target))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)
    return linked


@pytest.mark.slow
def test_a_full_build_tells_how_the_spare_differs_and_the_quick_rebuild_need_not_read_it(
    tmp_path, monkeypatch
):
    """The spare is the site the last build replaced: that build knew both manifests, and
    the next quick rebuild takes the spare's from the live site's and what it was told."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    assert not _spare_as_told(kb)  # the first build replaced no site
    page = kb / "templates" / "error.html"
    page.write_text(page.read_text() + "\n{# edited #}\n")
    build_site(kb)  # a full build over the first one's site
    assert _spare_as_told(kb)
    read = _keys_read(monkeypatch)
    _append_to_meaning(_curated(kb)[0], "Edited.")
    build_site(kb)
    assert read and ".site-spare" not in read
    assert _spare_as_told(kb)
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


@pytest.mark.slow
def test_a_spare_whose_manifest_changed_since_is_read_not_taken_from_what_was_told(
    tmp_path, monkeypatch
):
    """What the live site's build saw of the spare holds only while the spare's manifest is
    the one it saw: here one entry of it changed since (a file the build would take as
    current is said to be another), so the quick rebuild reads it."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    _append_to_meaning(_curated(kb)[0], "Edited.")
    build_site(kb)
    out = kb / "site"
    keys = publish.manifest_path(publish.spare_path(out), out)
    entries, told = marshal.loads(keys.read_bytes())
    url = next(u for u in sorted(entries) if u.startswith("/errors/"))
    entries[url] = ("another key", entries[url][1])
    keys.unlink()
    keys.write_bytes(marshal.dumps((entries, told)))
    assert not _spare_as_told(kb)
    read = _keys_read(monkeypatch)
    _append_to_meaning(_curated(kb)[0], "Edited again.")
    build_site(kb)
    assert ".site-spare" in read
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


@pytest.mark.slow
def test_a_spare_prepared_after_a_full_build_leaves_the_next_edit_its_own_files(
    tmp_path, monkeypatch
):
    """After a full build the spare is the site before it: the next rebuild linked every
    file the build changed. Prepared (as `errorkb serve` does while the writer reads), it
    holds the live site, and the quick rebuild links only what its edit did not remake."""
    kb = make_kb(tmp_path / "kb")
    knobs = _knobs(kb)
    build_site(kb)
    knobs[5].unlink()  # the spare will hold the page of a record gone since
    build_site(kb)
    gone = kb / ".site-spare" / urls.output_path(urls.error(knobs[5].stem))
    assert gone.is_file()
    index = _main_index(kb / "site")
    quick.prepare_spare(kb / "site")
    assert not gone.exists()
    assert spare_holds_live(kb)
    linked = _counting_links(monkeypatch)
    _edit(knobs[0], summary="Knob zero takes no values at all.")
    newer = _assert_quick_as_cold(kb, tmp_path, index, knobs[0])
    outside = [p for p in linked if "/pagefind" not in p and "/.site-spare/" in p]
    assert len(outside) < 10, outside
    assert newer == [urls.error(knobs[6].stem)]


def test_a_prepared_spare_with_a_lost_file_is_left_to_the_next_build(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    edited = _edit_prose(kb)
    build_site(kb)
    lost = kb / "site" / urls.output_path(urls.error(sorted(edited)[0]))
    lost.unlink()  # someone deleted a file the last build changed
    quick.prepare_spare(kb / "site")
    assert publish.read_keys(kb / ".site-spare", kb / "site") == {}
    build_site(kb)
    assert lost.is_file()


# A site file damaged by hand: deleted, grown, or rewritten at its size (K6) ---------------


def _damage(path: Path, how: str) -> None:
    if how == "deleted":
        path.unlink()
    elif how == "grown":
        with open(path, "ab") as file:
            file.write(b"<!--TAMPER-->")
    else:  # the same size, other bytes: only its time tells
        body = path.read_bytes()
        time.sleep(0.01)
        with open(path, "r+b") as file:
            file.write(b"X" * min(8, len(body)))


DAMAGED = ["robots.txt", "index.html", urls.output_path(urls.pyodide("pyodide.mjs"))]


FAST_DAMAGE = {
    ("deleted", "site", "nothing"),
    ("grown", ".site-spare", "an edit"),
    ("rewritten", "site", "a full build"),
    ("rewritten", ".site-spare", "nothing"),
}


@pytest.mark.parametrize(
    "how, where, then",
    [
        pytest.param(*case, marks=() if case in FAST_DAMAGE else pytest.mark.slow)
        for case in itertools.product(
            ["deleted", "grown", "rewritten"],
            ["site", ".site-spare"],
            ["nothing", "an edit", "a full build"],
        )
    ],
)
def test_a_damaged_site_file_is_remade_and_stays_so(tmp_path, how, where, then):
    """Whatever build comes next (one that finds nothing changed, a quick rebuild, a full
    build), the site it leaves is the cold build's, and so are the next two: no damaged file
    is published, and none comes back on every other build."""
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build(kb)  # the first site is now the spare
    quick.prepare_spare(kb / "site")  # and holds the live site's files, as serve leaves it
    for name in DAMAGED:
        _damage(kb / where / name, how)
    if then == "an edit":
        _append_to_meaning(_curated(kb)[0], "Edited.")
    cold = _outside_full_text(_cold(kb, tmp_path))
    for _ in range(3):
        if then == "a full build":
            build(kb)
        else:
            build_site(kb)
        assert _outside_full_text(_digest(kb / "site")) == cold
        for name in DAMAGED:
            assert b"TAMPER" not in (kb / "site" / name).read_bytes()


def test_a_build_that_finds_nothing_changed_swaps_nothing_in(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build_site(kb)
    inode = (kb / "site").stat().st_ino
    lines: list[str] = []
    build_site(kb, log=lines.append)
    assert (kb / "site").stat().st_ino == inode
    assert lines and lines[0].startswith("nothing changed, and all ")


def test_a_checked_build_makes_the_spare_whole_too(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build(kb)  # the first site is now the spare
    _damage(kb / ".site-spare" / "robots.txt", "grown")
    build_site(kb, checked=True)
    spare = kb / ".site-spare"
    assert b"TAMPER" not in (spare / "robots.txt").read_bytes() and spare_holds_live(kb)


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("edit"), st.integers(0, 1), st.sampled_from(["Alpha", "Bravo"])),
            st.tuples(
                st.sampled_from(["deleted", "grown", "rewritten"]),
                st.sampled_from(["site", ".site-spare"]),
                st.one_of(st.sampled_from(DAMAGED), st.integers(0, 10**6)),
            ),
        ),
        min_size=3,
        max_size=8,
    ),
    full=st.lists(st.booleans(), min_size=8, max_size=8),
    stack=st.booleans(),
)
def test_any_edits_and_damage_to_site_files_make_the_cold_builds_site(
    tmp_path_factory, steps, full, stack
):
    """Edits of summaries and files of the site or its spare damaged by hand (any of their
    files: a record's page, a listing, a page of patterns, the full-text index...), in any
    order, each followed by a quick or a full build, or by one that finds nothing changed:
    every build leaves the cold build's site, each of its files as its manifest stamped it.
    On the fixture, and on the stack fixture, whose records' advice shows on the engines'
    pages (an edit of one is edited there too)."""
    folder = tmp_path_factory.mktemp("kb") / "kb"
    kb = make_stack_kb(folder) if stack else make_kb(folder)
    build_site(kb)
    build(kb)  # the first site is now the spare
    curated = _curated(kb)
    if stack:  # the stack projects' records first
        curated.sort(key=lambda p: p.parent.name in ("vllm", "sglang", "demo"))
    records = curated[:2]
    colds: dict[bytes, dict] = {}
    for (kind, a, b), whole in zip(steps, full, strict=False):
        if kind == "edit":
            record = records[a % len(records)]
            data = yaml.safe_load(record.read_text())
            data["summary"] = f"Summed up: {b}."
            record.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        else:
            name = b if isinstance(b, str) else _any_file(kb / a, b)
            if name is not None and (kb / a / name).exists():
                _damage(kb / a / name, kind)
        build(kb) if whole else build_site(kb)
        text = b"".join(r.read_bytes() for r in records)
        if text not in colds:
            colds[text] = _outside_full_text(_cold(kb, tmp_path_factory.mktemp("cold")))
        assert _outside_full_text(_digest(kb / "site")) == colds[text]
        live = publish.read_keys(kb / "site", kb / "site")
        assert not publish.damaged(kb / "site", live, [u for u in live if u[-1] != publish.TREE])


def _any_file(folder: Path, n: int) -> str | None:
    """The n-th file of a site folder (counted round), by its path in it; not errorkb's mark
    on it (owned.MARKER): a folder without it is someone's, which no build replaces."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    files.remove(owned.MARKER)
    return files[n % len(files)] if files else None


def _forge_state(out: Path, field: str, value) -> None:
    """The quick state with one field replaced, and a checksum that fits, as a build would
    have written it."""
    state = quick._load_state(out)
    assert state is not None
    setattr(state, field, value)
    state.frozen = b""
    quick._state_path(out).write_bytes(quick._dumps(state))


STATE_FIELDS = sorted({f.name for f in fields(quick.State)} - {"version", "frozen"})
WRONG = [None, 5, "x", [1, 2], {"a": 1}, {("a",): None}, b"x"]


def _forged_builds_as_cold(tmp_path: Path, field: str, value) -> None:
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    build(kb)
    build_site(kb)
    _forge_state(kb / "site", field, value)
    _append_to_meaning(_curated(kb)[0], "Edited.")
    for _ in range(2):  # the first build drops the state; the next has a good one
        build_site(kb)
    assert _outside_full_text(_digest(kb / "site")) == _outside_full_text(_cold(kb, tmp_path))


@pytest.mark.parametrize(
    "field, value",
    [
        ("records", {"a": 1}),
        ("full_text", [1, 2]),
        ("groups", {}),
        ("limit_kb", "x"),
        ("slots", None),
        ("linked", {"x": 5}),
    ],
)
@pytest.mark.slow
def test_a_quick_state_of_wrong_types_takes_the_full_build(tmp_path, field, value):
    """A state with the right version and checksum but a field of another type or shape
    (written by hand, or by a bug) never stops a build: the full build runs, and keeps a
    state anew."""
    _forged_builds_as_cold(tmp_path, field, value)


@pytest.mark.slow
@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("field", STATE_FIELDS)
def test_any_field_of_the_quick_state_of_any_wrong_type_takes_the_full_build(
    tmp_path, field, value
):
    _forged_builds_as_cold(tmp_path, field, value)


def test_a_quick_state_not_written_by_a_build_is_not_read(tmp_path):
    kb = make_kb(tmp_path / "kb")
    build_site(kb)
    path = quick._state_path(kb / "site")
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # one bit of it changed
    path.write_bytes(bytes(data))
    assert quick._load_state(kb / "site") is None

"""A rebuild after an edit makes only what the edit changed, and the very site a cold build
of the same content makes."""

import hashlib
import json
from pathlib import Path

import pytest

from errorkb import urls
from errorkb.content.load import load_content
from errorkb.search import index as search_index
from errorkb.site import build as build_module
from errorkb.site import publish, shortlinks
from errorkb.site.build import build
from errorkb.site.pages import Pages
from tests.conftest import fresh_copy

RECORDS = 40  # five pages of patterns


def _rid(n: int) -> str:
    return f"{0xA000 + n:016x}"


def _write(kb: Path, n: int, message: str | None = None, summary: str | None = None) -> Path:
    record = {
        "id": _rid(n),
        "project": "demo",
        "exception": "ValueError",
        "message": message or f"Knob number {n} is out of range: {{value}}",
        "summary": summary or f"Knob {n} takes values from 0 to {n}.",
        "source": {"path": f"demo/knobs{n % 3}.py", "line": 10 * (n + 1)},
    }
    path = kb / f"content/errors/demo/{record['id']}.yaml"
    path.write_text(json.dumps(record))  # JSON is YAML
    return path


def _many(kb: Path) -> None:
    for n in range(RECORDS):
        _write(kb, n)


def _digest(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def _cold(kb: Path, tmp_path: Path) -> Path:
    """The site a cold build of kb's content makes."""
    fresh = tmp_path / "fresh"
    fresh_copy(kb, fresh)
    return build(fresh).out


def _written(monkeypatch) -> list[str]:
    """The URLs the writer renders from here on (the producers run in this process: the
    knowledge base is too small for workers)."""
    urls_written: list[str] = []
    original = publish.Writer.write

    def write(self, url, body, key):
        urls_written.append(url)
        original(self, url, body, key)

    monkeypatch.setattr(publish.Writer, "write", write)
    return urls_written


def _pages_made(monkeypatch) -> list[int]:
    """How many pages of patterns the build makes from here on (one count a page)."""
    made: list[int] = []
    original = search_index._pattern_page

    def pattern_page(items, totals):
        made.append(len(items))
        return original(items, totals)

    monkeypatch.setattr(search_index, "_pattern_page", pattern_page)
    return made


def _search_pages(written: list[str]) -> list[str]:
    folder = urls.search_patterns("0").rpartition("/")[0]
    return [u for u in written if u.startswith(folder + "/")]


def test_the_index_by_parts_is_the_site_index(kb):
    _many(kb)
    content = load_content(kb)
    parts = {url: made if isinstance(made, bytes) else made() for url, _, made, _ in
             search_index.site_index_parts(content, "code")}  # fmt: skip
    assert parts == search_index.site_index(content)
    assert len(_search_pages(list(parts))) == 6  # 44 patterns: the fixture's and these 40


@pytest.mark.slow
def test_a_summary_edit_makes_its_pattern_page_alone_and_a_cold_builds_site(
    kb, tmp_path, monkeypatch
):
    _many(kb)
    build(kb)
    build(kb)  # fills the spare, as a writer's builds do
    _write(kb, 17, summary="Knob 17 now takes values from 1 to 17.")
    written, made = _written(monkeypatch), _pages_made(monkeypatch)
    build(kb)
    assert len(made) == 1  # not made and compared: the others' records are unchanged
    (changed,) = _search_pages(written)  # the one page of patterns that holds record 17's
    assert _rid(17) in (kb / "site" / urls.output_path(changed)).read_text()
    assert urls.search_index() not in written  # no word changed: no weight, no shard
    monkeypatch.undo()
    assert _digest(kb / "site") == _digest(_cold(kb, tmp_path))


@pytest.mark.slow
def test_a_message_edit_makes_the_word_shards_and_its_page_as_a_cold_build_does(
    kb, tmp_path, monkeypatch
):
    _many(kb)
    build(kb)
    build(kb)
    _write(kb, 5, message="Knob number 5 is out of range and stuck: {value}")  # new words
    written, made = _written(monkeypatch), _pages_made(monkeypatch)
    build(kb)
    assert len(made) == 1
    shards = urls.search_words("0").rpartition("/")[0] + "/"
    assert any(u.startswith(shards) for u in written)  # the words changed
    # Its own page: no other pattern has those words, so no other weight changed.
    (changed,) = _search_pages(written)
    assert _rid(5) in (kb / "site" / urls.output_path(changed)).read_text()
    monkeypatch.undo()
    assert _digest(kb / "site") == _digest(_cold(kb, tmp_path))


def test_an_edit_makes_its_projects_api_document_alone_as_a_cold_build_does(
    kb, tmp_path, monkeypatch
):
    (kb / "content/projects/other.yaml").write_text("name: Other\nrepo: example/other\nref: v1\n")
    (kb / "content/errors/other").mkdir()
    (kb / "content/errors/other/00000000000000e7.yaml").write_text(
        "id: 00000000000000e7\nproject: other\nexception: ValueError\n"
        "message: Other thing failed.\nsource: {path: other/x.py, line: 3}\n"
    )
    _many(kb)
    build(kb)
    build(kb)
    _write(kb, 17, summary="Knob 17 now takes values from 1 to 17.")
    made: list[str] = []
    original = build_module.api.project_files

    def project_files(content, links, key):
        made.append(key)
        return original(content, links, key)

    monkeypatch.setattr(build_module.api, "project_files", project_files)
    build(kb)
    assert made == ["demo"]
    assert (
        "Knob 17 now takes"
        in (kb / "site" / urls.output_path(urls.project_json("demo"))).read_text()
    )
    monkeypatch.undo()
    assert _digest(kb / "site") == _digest(_cold(kb, tmp_path))


@pytest.mark.slow
def test_a_summary_edit_remakes_no_listing_that_does_not_show_it(kb, tmp_path, monkeypatch):
    """The home page (it lists the twenty newest and counts the others), the project page,
    sitemap and feed show no summary of an older record without a date: kept; so is its id
    list, which shows its title."""
    _many(kb)
    build(kb)
    build(kb)
    _write(kb, 17, summary="Knob 17 now takes values from 1 to 17.")
    made: list[str] = []
    original_page, original_render = Pages.page, Pages.render

    def page(self, name, *args, **context):
        made.append(name)
        return original_page(self, name, *args, **context)

    def render(self, name, **context):
        made.append(name)
        return original_render(self, name, **context)

    def id_list(listed):
        made.append("id list")
        return original_id_list(listed)

    original_id_list = shortlinks._id_list
    monkeypatch.setattr(Pages, "page", page)
    monkeypatch.setattr(Pages, "render", render)
    monkeypatch.setattr(shortlinks, "_id_list", id_list)
    build(kb)
    assert not {"home.html", "project.html", "sitemap.xml", "feed.xml", "search.html"} & set(made)
    assert "id list" not in made
    monkeypatch.undo()
    assert _digest(kb / "site") == _digest(_cold(kb, tmp_path))


@pytest.mark.slow
def test_a_listed_change_remakes_the_listings_as_a_cold_build_does(kb, tmp_path):
    """A record's date (the sitemap, the feed) and its title in a project's explained list
    (A1 is explained): their pages are made again."""
    _many(kb)
    build(kb)
    build(kb)
    a1 = kb / "content/errors/demo/00000000000000a1.yaml"
    a1.write_text(a1.read_text().replace("title: Widget count", "title: The widget count"))
    record = kb / f"content/errors/demo/{_rid(3)}.yaml"
    record.write_text(json.dumps({**json.loads(record.read_text()), "updated": "2026-11-30"}))
    build(kb)
    site = kb / "site"
    assert "The widget count" in (site / urls.output_path(urls.project("demo"))).read_text()
    assert _rid(3) in (site / urls.output_path(urls.feed())).read_text()
    assert "2026-11-30" in (site / urls.output_path(urls.sitemap())).read_text()
    assert _digest(site) == _digest(_cold(kb, tmp_path))


def test_workers_are_weighed_against_the_stale_record_parts_not_all_records(kb, monkeypatch):
    """Forking workers that each read the whole plan costs more than an edit saves: the
    build asks for them by the record parts it has to render."""
    _many(kb)
    build(kb)
    build(kb)
    _write(kb, 17, summary="Knob 17 now takes values from 1 to 17.")
    asked: list[int] = []
    monkeypatch.setattr(build_module, "fork_workers", lambda jobs, _: asked.append(jobs) or 0)
    rendered = build(kb).rendered
    # The pages of record 17's file (its records are keyed on it) and its card, not all 44.
    assert asked and asked[0] < RECORDS < len(list(kb.glob("content/errors/*/*.yaml")))
    assert 0 < asked[0] < rendered

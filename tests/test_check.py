"""`errorkb build --check`: the site held to its rules from the facts the build collected."""

import os
import shutil
import subprocess
import sys

import pytest

from errorkb.site import api, check, publish
from errorkb.site.build import build
from errorkb.site.publish import site_manifest

A1 = "00000000000000a1"
PAGE = f"errors/{A1}/index.html"


def add_to_error_pages(kb, html: str) -> None:
    template = kb / "templates/error.html"
    text = template.read_text()
    template.write_text(text.replace("{% block main %}", "{% block main %}" + html, 1))


@pytest.mark.parametrize(
    ("html", "code", "says"),
    [
        ('<a href="/nowhere/">x</a>', "W201", "/nowhere/ leads to no file"),
        ('<a href="/guides/grouping/#nowhere">x</a>', "W202", "no id 'nowhere'"),
        ('<a href="#nowhere">x</a>', "W202", "no id 'nowhere'"),
        ('<img src="https://evil.example/x.png" alt="">', "W203", "evil.example"),
        ("<p>" + "padding " * 2_500 + "</p>", "W204", "over the 20,000"),
    ],
)
def test_a_template_edit_that_breaks_a_rule_is_reported(kb, html, code, says):
    add_to_error_pages(kb, html)
    problems = build(kb, checked=True).problems
    mine = [p for p in problems if p.path == PAGE]
    assert [p.code for p in mine] == [code], problems
    assert says in mine[0].message
    assert {p.code for p in problems} == {code}  # the other error pages, the same way


def test_a_document_the_published_schema_refuses_is_reported(kb, monkeypatch):
    made = api.error_document

    def wrong(*args):
        return {**made(*args), "modified": 20260101}  # a date must be a string

    monkeypatch.setattr(api, "error_document", wrong)
    problems = build(kb, checked=True).problems
    assert f"api/errors/{A1}.json: W205 modified: 20260101 is not of type" in str(problems[0])
    assert {p.code for p in problems} == {"W205"}


def test_a_knowledge_base_without_guides_links_to_no_guides_page(kb):
    for guide in (kb / "content/guides").iterdir():
        guide.unlink()
    assert build(kb, checked=True).problems == []


@pytest.mark.slow
def test_the_cli_reports_each_problem_on_its_line_and_exits_1(kb):
    add_to_error_pages(kb, '<img src="https://evil.example/x.png" alt="">')
    command = [sys.executable, "-m", "errorkb", "--root", str(kb), "build"]
    assert subprocess.run(command, capture_output=True).returncode == 0  # collects, no check
    done = subprocess.run([*command, "--check"], capture_output=True, text=True)
    assert done.returncode == 1
    assert f"site/{PAGE}: W203 load: loads from another host: evil.example" in done.stderr


@pytest.mark.slow
def test_facts_of_files_kept_from_the_last_build_survive_an_incremental_build(kb):
    build(kb)
    record = kb / "content/errors/demo/00000000000000b2.yaml"
    record.write_text(record.read_text().replace("message:", "title: Retitled\nmessage:", 1))
    result = build(kb, checked=True)
    assert 0 < result.rendered < result.files and result.problems == []
    kept = {url: check.Facts(*e[2]) for url, e in site_manifest(kb / "site").items() if e[2]}
    assert kept == check.scan(kb / "site")  # every page's and stylesheet's, as on disk
    # A link to a kept page's anchor is checked against the kept page's ids.
    guide = kb / "content/guides/grouping.md"
    guide.write_text(guide.read_text() + f"\nSee [the fix](/errors/{A1}/#nowhere).\n")
    problems = build(kb, checked=True).problems
    assert [(p.path, p.code) for p in problems] == [("guides/grouping/index.html", "W202")]


def test_a_small_sites_manifest_keeps_the_fact_shards_it_fills_and_no_others(kb):
    """Each build wrote all its shards of facts; a small site fills a few. The facts read
    back whole after a full build and after a quick rebuild that shares the live site's."""
    from errorkb.site.quick import build_site

    for edit in ("", "Said anew."):
        if edit:
            record = kb / f"content/errors/demo/{A1}.yaml"
            text = record.read_text().replace("meaning: |\n", f"meaning: |\n  {edit}\n", 1)
            record.write_text(text)
        result = build_site(kb)
        manifest = site_manifest(kb / "site")
        kept = {url: check.Facts(*e[2]) for url, e in manifest.items() if e[2]}
        assert kept == check.scan(kb / "site")
        keys = publish.manifest_path(kb / "site", kb / "site")
        shards = keys.with_suffix(publish.FACTS)
        filled = {str(publish._fact_shard(url)) for url in kept}
        assert set(os.listdir(shards)) == filled and len(filled) < publish.FACT_SHARDS
    assert result.rendered < result.files  # the second was the quick rebuild
    assert edit in (kb / "site" / PAGE).read_text()


def test_a_site_built_before_facts_were_kept_is_rendered_anew(kb):
    build(kb)
    manifest = publish.manifest_path(kb / "site", kb / "site")
    shutil.rmtree(manifest.with_suffix(publish.FACTS))
    result = build(kb, checked=True)
    assert result.rendered == result.files and result.problems == []


def test_a_site_with_an_older_releases_manifest_is_ours_and_made_anew(kb):
    """Before keys and facts were kept apart, a site's manifest was one JSON file."""
    build(kb)
    manifest = publish.manifest_path(kb / "site", kb / "site")
    manifest.rename(manifest.with_suffix(".json"))
    shutil.rmtree(manifest.with_suffix(publish.FACTS))
    result = build(kb)
    assert result.rendered == result.files

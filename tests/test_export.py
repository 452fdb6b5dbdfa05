"""`errorkb export --format markdown`: pages with front matter and the API files, for docs
tools without errorkb's plugin; built with Zensical as the example site would be."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.test_mkdocs import EXAMPLE, SEED, small_vllm_kb

REPO = Path(__file__).resolve().parent.parent
BASE = "https://docs.example.org/server/"


def export(kb: Path, docs: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "export", str(docs), *flags],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def front_matter(page: Path) -> tuple[dict, str]:
    head, body = re.fullmatch(r"---\n(.*?)\n---\n(.*)", page.read_text(), re.S).groups()
    return yaml.safe_load(head), body


def test_a_page_per_record_with_front_matter_and_the_api(kb, tmp_path):
    done = export(kb, tmp_path / "docs", "--base-url", BASE, "--no-directory-urls")
    assert done.returncode == 0, done.stderr
    records = sorted(p.stem for p in (kb / "content/errors/demo").glob("*.yaml"))
    pages = tmp_path / "docs/errors"
    assert sorted(p.stem for p in pages.glob("*.md")) == sorted([*records, "index"])
    meta, body = front_matter(pages / "00000000000000a1.md")
    assert meta["title"] == "Widget count not divisible by group size"
    assert meta["description"] == "The widgets cannot be split evenly into groups."
    assert meta["errorkb"]["id"] == "00000000000000a1" and meta["errorkb"]["curated"] is True
    assert meta["errorkb"]["json"] == BASE + "api/errors/00000000000000a1.json"
    assert body.startswith("\n# Widget count not divisible by group size\n")
    # The record's Markdown stays Markdown; its message is a code block.
    assert "Groups must be **equal**; a remainder cannot be placed." in body
    assert "```text\nValueError: Widget count ({count}) must be divisible" in body
    assert "| `{count}` | int | The number of widgets, `count` in *widgets.json*. |" in body
    doc = json.loads((tmp_path / "docs/api/errors/00000000000000a1.json").read_text())
    assert doc["html_url"] == BASE + "errors/00000000000000a1.html"
    assert (tmp_path / "docs/api/index.json").is_file()
    assert (tmp_path / "docs/api/openapi.json").is_file()
    assert f"exported {len(records) + 2} Markdown pages" in done.stderr


def test_links_between_pages_resolve_as_files(kb, tmp_path):
    assert export(kb, tmp_path / "docs").returncode == 0
    docs = tmp_path / "docs"
    doc = json.loads((docs / "api/errors/00000000000000a1.json").read_text())
    assert urlsplit(doc["html_url"]).path == "/errors/00000000000000a1/"  # directory URLs
    links = 0
    for page in docs.rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if urlsplit(target).scheme:
                continue
            assert (page.parent / target).resolve().is_file(), f"{page}: {target}"
            links += 1
    assert links > 10


def test_titles_made_from_messages_stay_text(kb, tmp_path):
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    text = record.read_text()
    title = "Widget count not divisible by group size"
    marked = "'*Widget* [count] `x` not divisible by group size'"
    record.write_text(text.replace(f"title: {title}", f"title: {marked}"))
    assert export(kb, tmp_path / "docs").returncode == 0
    page = (tmp_path / "docs/errors/00000000000000a1.md").read_text()
    assert "# \\*Widget\\* \\[count\\] \\`x\\` not divisible by group size" in page
    assert front_matter(tmp_path / "docs/errors/00000000000000a1.md")[0]["title"] == (
        "*Widget* [count] `x` not divisible by group size"
    )


def test_bad_content_is_reported_and_nothing_written(kb, tmp_path):
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    record.write_text(record.read_text().replace("project: demo", "project: nope"))
    done = export(kb, tmp_path / "docs")
    assert done.returncode == 1
    assert "content/errors/demo/00000000000000a1.yaml:3: E109" in done.stderr
    assert not (tmp_path / "docs").exists()


@pytest.mark.slow
def test_zensical_builds_the_example_from_the_export(tmp_path):
    """The example site without its plugin (Zensical runs none), its errors exported."""
    kb = small_vllm_kb(tmp_path / "kb")
    site = tmp_path / "example"
    shutil.copytree(EXAMPLE / "docs", site / "docs")
    shutil.copy(EXAMPLE / "mkdocs.yml", site / "mkdocs.yml")
    done = export(kb, site / "docs", "--base-url", BASE, "--no-directory-urls")
    assert done.returncode == 0, done.stderr
    zensical = Path(sys.executable).parent / "zensical"
    built = subprocess.run(
        [str(zensical), "build", "--strict"], cwd=site, capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stdout + built.stderr
    page = (site / "site/errors" / f"{SEED}.html").read_text()
    assert "Attention heads not divisible by tensor parallel size" in page
    assert 'class="md-header' in page  # Zensical's theme, from mkdocs.yml
    assert re.search(r"<h2[^>]*>Solutions", page)
    doc = json.loads((site / "site/api/errors" / f"{SEED}.json").read_text())
    assert doc["html_url"] == f"{BASE}errors/{SEED}.html"
    stubs = [p for p in (site / "docs/errors").glob("*.md") if "Not explained yet" in p.read_text()]
    assert stubs and (site / "site/errors" / f"{stubs[0].stem}.html").is_file()

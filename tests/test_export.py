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
    api = tmp_path / "api-out"
    done = export(
        kb, tmp_path / "docs", "--base-url", BASE, "--no-directory-urls", "--api-dir", str(api)
    )
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
    json_link = (
        f"[/server/api/errors/00000000000000a1.json]({BASE}api/errors/00000000000000a1.json)"
    )
    assert json_link in body  # the API is served at the site's /api/, not from the docs
    doc = json.loads((api / "errors/00000000000000a1.json").read_text())
    assert doc["html_url"] == BASE + "errors/00000000000000a1.html"
    assert (api / "index.json").is_file() and (api / "openapi.json").is_file()
    assert not (tmp_path / "docs/api").exists()
    assert (
        f"exported {len(records) + 2} Markdown pages into {tmp_path / 'docs'} and " in done.stderr
    )


def test_without_api_dir_no_api_file_is_written_nor_linked(kb, tmp_path):
    done = export(kb, tmp_path / "docs")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "kb"]
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("docs/**/*.*")]
    assert written and all(p.startswith("docs/errors/") and p.endswith(".md") for p in written)
    meta, body = front_matter(tmp_path / "docs/errors/00000000000000a1.md")
    assert "json" not in meta["errorkb"] and "Data as JSON" not in body
    assert "/api/" not in (tmp_path / "docs/errors/index.md").read_text()


def test_no_jinja_delimiter_reaches_a_macros_plugin(kb, tmp_path):
    """Messages hold {{ ... }} (86 of today's pages); a macros plugin reads the page's source,
    code blocks included, as Jinja. Rendered as Jinja, each page is unchanged; rendered as
    Markdown, it shows the braces."""
    import html

    import jinja2
    import markdown

    record = kb / "content/errors/demo/00000000000000a1.yaml"
    text = record.read_text()
    text = text.replace(
        "  - Widget count {count} is not a multiple of {group_size}\n",
        "  - Widget count {count} is not a multiple of {group_size}\n"
        "  - \"Only one message can have {{'type': 'audio_embeds'}}\"\n",
    )
    text = text.replace(
        "summary: The widgets cannot be split evenly into groups.",
        "summary: The widgets {{ layer }} cannot be split evenly {% into %} groups.",
    )
    text = text.replace(
        "  Groups must be **equal**; a remainder cannot be placed.",
        "  Groups must be **equal**; `{{ layer.count }}` cannot be {# placed #}.",
    )
    text = text.replace(
        'code: "demo split --group-size 3"', "code: \"demo split --label '{{ layer }}'\""
    )
    record.write_text(text)
    assert export(kb, tmp_path / "docs", "--api-dir", str(tmp_path / "api")).returncode == 0
    source = (tmp_path / "docs/errors/00000000000000a1.md").read_text()
    strict = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    assert strict.from_string(source).render() == source  # 'layer' is undefined, before
    meta, body = front_matter(tmp_path / "docs/errors/00000000000000a1.md")
    shown = html.unescape(re.sub(r"<[^>]+>", "", markdown.markdown(body, extensions=["tables"])))
    assert "Only one message can have {{'type': 'audio_embeds'}}" in shown
    assert "demo split --label '{{ layer }}'" in shown
    assert "{{ layer.count }} cannot be {# placed #}" in shown
    assert html.unescape(meta["description"]) == (
        "The widgets {{ layer }} cannot be split evenly {% into %} groups."
    )


def test_links_between_pages_resolve_as_files(kb, tmp_path):
    assert export(kb, tmp_path / "docs", "--api-dir", str(tmp_path / "api")).returncode == 0
    docs = tmp_path / "docs"
    doc = json.loads((tmp_path / "api/errors/00000000000000a1.json").read_text())
    assert urlsplit(doc["html_url"]).path == "/errors/00000000000000a1/"  # directory URLs
    links = 0
    for page in docs.rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if urlsplit(target).scheme:
                continue
            assert (page.parent / target).resolve().is_file(), f"{page}: {target}"
            links += 1
    assert links > 5


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
    api = tmp_path / "api"  # served at the site's /api/, beside what Zensical builds
    done = export(
        kb, site / "docs", "--base-url", BASE, "--no-directory-urls", "--api-dir", str(api)
    )
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
    doc = json.loads((api / "errors" / f"{SEED}.json").read_text())
    assert doc["html_url"] == f"{BASE}errors/{SEED}.html"
    stubs = [p for p in (site / "docs/errors").glob("*.md") if "Not explained yet" in p.read_text()]
    assert stubs and (site / "site/errors" / f"{stubs[0].stem}.html").is_file()

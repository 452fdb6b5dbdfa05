"""`errorkb export --format markdown`: pages with front matter and the API files, for docs
tools without errorkb's plugin; built with Zensical as the example site would be."""

import functools
import html
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from errorkb.export.markdown import MARKER
from tests.conftest import make_kb, serve_in_thread
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


def rendered(body: str) -> str:
    """A page's Markdown as Python-Markdown (MkDocs' and Zensical's) makes it HTML."""
    import markdown

    return markdown.markdown(body, extensions=["tables"])


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
    # The record's Markdown is shown as our pages show it; its message is a code block.
    shown = html.unescape(rendered(body))
    assert "<p>Groups must be <strong>equal</strong>; a remainder cannot be placed.</p>" in shown
    assert '<pre><code class="language-text">ValueError: Widget count ({count}) must' in shown
    row = "<td>The number of widgets, <code>count</code> in <em>widgets.json</em>.</td>"
    assert "<td><code>{count}</code></td>\n<td>int</td>\n" + row in shown
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
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("docs/**/*.md")]
    assert written and all(p.startswith("docs/errors/") for p in written)
    others = {p.name for p in tmp_path.glob("docs/**/*") if p.is_file()} - {"index.md"}
    assert {p for p in others if not p.endswith(".md")} == {MARKER}
    meta, body = front_matter(tmp_path / "docs/errors/00000000000000a1.md")
    assert "json" not in meta["errorkb"] and "Data as JSON" not in body
    assert "/api/" not in (tmp_path / "docs/errors/index.md").read_text()


def test_no_jinja_delimiter_reaches_a_macros_plugin(kb, tmp_path):
    """Messages hold {{ ... }} (86 of today's pages); a macros plugin reads the page's source,
    code blocks included, as Jinja. Rendered as Jinja, each page is unchanged; rendered as
    Markdown, it shows the braces."""
    import jinja2

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
    shown = html.unescape(re.sub(r"<[^>]+>", "", rendered(body)))
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
    meta, body = front_matter(tmp_path / "docs/errors/00000000000000a1.md")
    heading = "<h1>*Widget* [count] `x` not divisible by group size</h1>"
    assert heading in html.unescape(rendered(body))
    assert meta["title"] == "*Widget* [count] `x` not divisible by group size"


def test_bad_content_is_reported_and_nothing_written(kb, tmp_path):
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    record.write_text(record.read_text().replace("project: demo", "project: nope"))
    done = export(kb, tmp_path / "docs")
    assert done.returncode == 1
    assert "content/errors/demo/00000000000000a1.yaml:3: E109" in done.stderr
    assert not (tmp_path / "docs").exists()


@pytest.mark.parametrize(
    "path, why",
    [
        ("..", "must name a folder inside the site (no empty, . or .. part)"),
        ("errors/../..", "must name a folder inside the site"),
        ("/tmp/errors", "must be relative to the site's root (no leading /)"),
        ("a\\b", "must separate folders with /"),
        ("a b", "may hold only letters, digits"),
    ],
)
def test_a_path_outside_the_docs_or_not_url_safe_is_refused(kb, tmp_path, path, why):
    """--path is checked as the MkDocs plugin checks its `path:` option."""
    (tmp_path / "docs").mkdir()
    done = export(kb, tmp_path / "docs", "--path", path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: --path {path!r} {why}")
    assert done.stderr.count("\n") == 1  # one line, no traceback
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "kb"]
    assert not any((tmp_path / "docs").iterdir())


@pytest.mark.slow
def test_a_folder_the_export_did_not_write_is_refused_and_left_alone(kb, tmp_path):
    host = tmp_path / "docs/errors/index.md"
    host.parent.mkdir(parents=True)
    host.write_text("# Our own errors\n")
    done = export(kb, tmp_path / "docs")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {host.parent} holds files errorkb did not export (it has no {MARKER}), "
        "which the pages would replace; export into a new or empty folder with --path\n"
    )
    assert [p.name for p in host.parent.iterdir()] == ["index.md"]
    assert host.read_text() == "# Our own errors\n"
    # Beside it, in a folder of its own, the export goes ahead.
    assert export(kb, tmp_path / "docs", "--path", "errors/kb").returncode == 0
    assert (host.parent / "kb/index.md").is_file() and host.read_text() == "# Our own errors\n"


def test_a_file_where_the_folder_goes_is_refused(kb, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/errors").write_text("host")
    done = export(kb, tmp_path / "docs")
    assert done.returncode == 1
    assert (
        done.stderr
        == f"error: {tmp_path / 'docs/errors'} is a file; give --path a folder for the pages\n"
    )
    assert (tmp_path / "docs/errors").read_text() == "host"


@pytest.mark.slow
def test_the_export_writes_again_into_its_own_folder_and_an_empty_one(kb, tmp_path):
    (tmp_path / "docs/errors").mkdir(parents=True)
    assert export(kb, tmp_path / "docs").returncode == 0
    page = tmp_path / "docs/errors/00000000000000a1.md"
    page.write_text("stale")
    again = export(kb, tmp_path / "docs")
    assert again.returncode == 0, again.stderr
    assert page.read_text().startswith("---\ntitle: Widget count")


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
    assert not (site / "site/errors" / MARKER).exists()


# A record whose every text field attacks the docs tool that builds the export: fence
# languages that end the info string, Markdown extensions' block syntax (pymdownx.blocks,
# admonitions, details, snippets), raw HTML, attribute lists, HTML comments. Each must come
# out as the text it is.
SECRET = "SECRET-b7e1c9-host-file"
HOSTILE = {
    "title": "<img src=x onerror=alert(1)> {: onclick=alert(2) }",
    "summary": '/// html | script\n--8<-- "secret.txt"',
    "meaning": (
        "<img src=x onerror=alert(3)>\n\n"
        '--8<-- "secret.txt"\n\n'
        ';--8<-- "secret.txt"\n\n'
        '  --8<-- "secret.txt"\n\n'
        '`--8<-- "secret.txt"`\n\n'
        "<!-- hidden -->\n\n"
        '<div markdown="1" onmouseover="alert(4)">*x*</div>\n\n'
        'A paragraph\n{: onmouseover="alert(5)" }\n'
    ),
    "trigger": "/// html | script\n    markdown: raw\n\nalert(6)\n///\n",
    "situations": [
        "/// html | script\nalert(7)\n///",
        '!!! note "x"\n\n    <img src=x onerror=alert(8)>',
        "??? note\n\n    hidden\n\n???+ note\n    shown",
        '```bash" onmouseover="alert(9)\n<img src=x onerror=alert(10)>\n```',
        "--8<--\nsecret.txt\n--8<--",
    ],
    "solutions": [
        "/// html | script\n    markdown: raw\n\nalert(11)\n///",
        "/// admonition | x\n    type: warning\n\nalert(12)\n///",
        '    --8<-- "secret.txt"',
    ],
    "example_fix": {
        "note": "<script>alert(13)</script>",
        "before": {
            "language": 'bash" onmouseover="alert(4998)',
            "code": '<img src=x onerror=alert(14)>\n--8<-- "secret.txt"\n',
        },
        "after": {
            "language": "python",
            "code": "```\n<img src=x onerror=alert(15)>\n```\n/// html | script\nalert(16)\n///\n",
        },
    },
    "defensive": {
        "note": "{{ config }} {% raw %}",
        "language": 'python"><img src=x onerror=alert(17)>',
        "code": ';--8<-- "secret.txt"\n~~~\n<img src=x onerror=alert(18)>\n~~~\n',
    },
    "prevention": "/// html | div\n    markdown: raw\n\n<img src=x onerror=alert(19)>\n///\n",
}
HOSTILE_ABOUT = '<img src=x onerror=alert(20)> | --8<-- "secret.txt"'


def hostile_kb(tmp: Path) -> Path:
    """The fixture knowledge base with record a1 rewritten from HOSTILE."""
    kb = make_kb(tmp / "kb")
    path = kb / "content/errors/demo/00000000000000a1.yaml"
    record = yaml.safe_load(path.read_text())
    record.update(HOSTILE)
    record["params"]["count"]["about"] = HOSTILE_ABOUT
    path.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True))
    return kb


HOST_CONFIG = """\
site_name: Host
site_url: https://docs.example.org/
use_directory_urls: false
theme: {name: material, font: false}
plugins: [search]
markdown_extensions:
  - attr_list
  - md_in_html
  - admonition
  - pymdownx.details
  - pymdownx.superfences
  - pymdownx.blocks.html
  - pymdownx.blocks.admonition
  - pymdownx.snippets:
      base_path: [SNIPPETS]
"""


def hostile_host(tmp: Path) -> Path:
    """A Material host with the extensions that read blocks, snippets and attributes, the
    hostile knowledge base exported into it, built; returns the built site."""
    kb = hostile_kb(tmp)
    assert check(kb).returncode == 0, check(kb).stderr
    host = tmp / "host"
    (host / "docs").mkdir(parents=True)
    (host / "docs/index.md").write_text("# Host\n")
    (host / "snippets").mkdir()
    (host / "snippets/secret.txt").write_text(f"{SECRET}\n")
    config = HOST_CONFIG.replace("SNIPPETS", str(host / "snippets"))
    (host / "mkdocs.yml").write_text(config)
    done = export(kb, host / "docs")
    assert done.returncode == 0, done.stderr
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q"],
        cwd=host,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    return host / "site"


def check(kb: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "check"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def host_files_included(site: Path) -> list[str]:
    """The built files that hold the host's secret: pages and the search index."""
    return [
        p.relative_to(site).as_posix()
        for p in [*site.rglob("*.html"), site / "search/search_index.json"]
        if SECRET in p.read_text()
    ]


class _Active(HTMLParser):
    """Collects what in a page could run script: script elements and on* attributes."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.in_script = True
        for name, value in attrs:
            if name.startswith("on") or (value or "").lstrip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data):
        if getattr(self, "in_script", False) and "alert(" in data:
            self.found.append(f"<script>{data[:60]}")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False


def active_html(page: Path) -> list[str]:
    parser = _Active()
    parser.feed(page.read_text())
    return parser.found


@pytest.mark.slow
def test_a_hostile_record_stays_text_in_a_host_with_block_extensions(tmp_path):
    site = hostile_host(tmp_path)
    page = site / "errors/00000000000000a1.html"
    assert not (site / "errors" / MARKER).exists()  # the marker is not published
    assert active_html(page) == []
    assert host_files_included(site) == []
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page.read_text())))
    # What each attack wrote is shown as it was written.
    for shown in (
        "<img src=x onerror=alert(3)>",
        '--8<-- "secret.txt"',
        "/// html | script markdown: raw alert(6) ///",
        "<img src=x onerror=alert(10)>",
        "<script>alert(13)</script>",
        "<!-- hidden -->",
        '<div markdown="1" onmouseover="alert(4)">x</div>',  # *x* is emphasis
        'A paragraph {: onmouseover="alert(5)" }',
        "??? note hidden ???+ note shown",
        "{{ config }} {% raw %}",
        HOSTILE_ABOUT,
    ):
        assert shown in text, shown
    # Code keeps its lines; a language off the list is text.
    code = HOSTILE["example_fix"]["before"]["code"].rstrip()
    shown_code = html.unescape(page.read_text())
    assert f'<pre><code class="language-text">{code}</code></pre>' in shown_code


# Python-Markdown's and PyMdown's extensions that read syntax in a page's text (smarty
# left out: it curls our own apostrophes).
EXTENSIONS = [
    *("abbr", "admonition", "attr_list", "def_list", "footnotes", "md_in_html"),
    *("pymdownx.arithmatex", "pymdownx.betterem", "pymdownx.blocks.admonition"),
    *("pymdownx.blocks.details", "pymdownx.blocks.html", "pymdownx.blocks.tab"),
    *("pymdownx.caret", "pymdownx.critic", "pymdownx.details", "pymdownx.emoji"),
    *("pymdownx.inlinehilite", "pymdownx.keys", "pymdownx.magiclink", "pymdownx.mark"),
    *("pymdownx.smartsymbols", "pymdownx.snippets", "pymdownx.superfences"),
    *("pymdownx.tabbed", "pymdownx.tasklist", "pymdownx.tilde"),
]


def test_no_extension_reads_anything_in_a_hostile_records_pages(tmp_path):
    """Every exported page makes the same HTML with all those extensions as without."""
    import markdown

    kb = hostile_kb(tmp_path)
    assert export(kb, tmp_path / "docs").returncode == 0
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets/secret.txt").write_text(SECRET)
    snippets = {"pymdownx.snippets": {"base_path": [str(tmp_path / "snippets")]}}
    pages = sorted((tmp_path / "docs/errors").rglob("*.md"))
    for page in pages:
        body = front_matter(page)[1]
        extended = markdown.markdown(
            body, extensions=["tables", *EXTENSIONS], extension_configs=snippets
        )
        assert extended == rendered(body), page.name
    assert len(pages) == 6


@pytest.mark.slow
def test_a_hostile_record_runs_no_script_in_chromium(tmp_path, browser):
    site = hostile_host(tmp_path)
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site))
    )
    serve_in_thread(server)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    context = browser.new_context()
    dialogs: list[str] = []
    try:
        pg = context.new_page()
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pages = sorted(site.glob("errors/**/*.html"))
        for built in pages:
            pg.goto(f"{base}/{built.relative_to(site).as_posix()}", wait_until="load")
            # Handlers an attribute would add fire on hover, focus and click.
            pg.evaluate(HOVER_ALL)
            pg.wait_for_timeout(50)
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    included = host_files_included(site)
    print(f"{len(pages)} pages: {len(dialogs)} dialogs, {len(included)} files with the secret")
    assert (dialogs, included) == ([], [])


HOVER_ALL = """() => {
  for (const el of document.querySelectorAll('body *'))
    for (const type of ['mouseover', 'mouseenter', 'focus'])
      el.dispatchEvent(new Event(type, {bubbles: true}));
}"""


class _QuietHandler(SimpleHTTPRequestHandler):
    """The built host served as a plain static host would (no Content-Security-Policy)."""

    def log_message(self, *args):
        pass

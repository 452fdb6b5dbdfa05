"""Issue #20, "nothing we render runs": a hostile record's text is shown, never run, in our
own pages, the Markdown export built by MkDocs, the feed and the link cards."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from errorkb.content.load import load_content
from errorkb.content.model import ContentError
from errorkb.site import cards
from errorkb.site.build import build
from errorkb.site.pages import CONTENT_SECURITY_POLICY
from tests.test_export import export

REPO = Path(__file__).resolve().parent.parent

# Each attack carries its own number, so that a test names the one that got through.
HOSTILE = """\
id: 00000000000000e5
project: demo
exception: ValueError
message: 'Bad value <img src=x onerror=alert(4242)> for {name}'
params:
  name: {type: str, about: 'the <img src=x onerror=alert(4243)> name'}
summary: 'Bad value" onmouseover="alert(4244)'
meaning: |
  Shown as text: <img src=x onerror=alert(4245)> and [a link](javascript:alert(4246)).
trigger: 'Any text{: onclick="alert(4247)" }'
solutions:
  - '<script>alert(4248)</script>'
  - '[click](javascript:alert(4249))'
source:
  path: demo/hostile.py
  line: 1
  function: '`<img src=x onerror=alert(4250)>`'
"""


class Active(HTMLParser):
    """What would run in a page: event handler attributes, javascript: URLs, script text."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        self.in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") or (value or "").lstrip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data):
        if self.in_script and "alert(42" in data:
            self.found.append(f"<script>{data}")


def active(page: str) -> list[str]:
    parser = Active()
    parser.feed(page)
    return parser.found


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()  # character references converted: the text a reader sees
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def visible(page: str) -> str:
    """A page's text as a browser shows it (the export writes record text with its
    punctuation as character references)."""
    parser = _Text()
    parser.feed(page)
    return "".join(parser.parts)


def hostile_kb(kb: Path) -> Path:
    (kb / "content/errors/demo/00000000000000e5.yaml").write_text(HOSTILE)
    return kb


@pytest.mark.slow
def test_the_export_built_by_mkdocs_runs_nothing_from_a_record(kb, tmp_path):
    site = tmp_path / "host"
    done = export(hostile_kb(kb), site / "docs")
    assert done.returncode == 0, done.stderr
    # Material with the extensions Material sites enable: attribute lists, Markdown in HTML.
    (site / "mkdocs.yml").write_text(
        "site_name: Host\ntheme: {name: material}\n"
        "markdown_extensions: [attr_list, md_in_html, tables, pymdownx.superfences]\n"
    )
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(site / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    pages = {p: p.read_text() for p in (site / "site").rglob("*.html")}
    assert len(pages) > 5
    for page, text in pages.items():
        assert not active(text), page
    record = visible(pages[site / "site/errors/00000000000000e5/index.html"])
    assert "Bad value <img src=x onerror=alert(4242)> for {name}" in record
    assert "Shown as text: <img src=x onerror=alert(4245)>" in record


def test_urls_in_records_are_http_only(kb):
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    flag = "{name: n, field: f, flag: --f, url: 'javascript:alert(4251)'}"
    record.write_text(record.read_text() + f"derived:\n  ref: abc1234\n  flags:\n    - {flag}\n")
    project = kb / "content/projects/demo.yaml"
    project.write_text(project.read_text() + "homepage: 'javascript:alert(4252)'\n")
    with pytest.raises(ContentError) as info:
        load_content(kb)
    found = {f"{p.path}:{p.line}: {p.code} {p.field}" for p in info.value.problems}
    line = len(record.read_text().splitlines())
    assert f"content/errors/demo/00000000000000a1.yaml:{line}: E103 derived.flags[0].url" in found
    assert "content/projects/demo.yaml:7: E103 homepage" in found


def test_every_page_carries_the_policy_for_hosts_that_ignore_headers(fixture_site):
    """The _headers policy in a <meta>, before anything loads, without frame-ancestors
    (which browsers ignore there)."""
    meta = CONTENT_SECURITY_POLICY.replace("; frame-ancestors 'none'", "")
    tag = f'<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="{meta}">'
    pages = list(fixture_site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        assert tag in page.read_text(), page


def test_titles_show_no_bidi_or_zero_width_and_the_feed_parses(kb):
    """A title that reverses what follows it (a tab reads 'moc.elgoog' for 'google.com') or
    hides in zero-width characters is neutralised; control characters a message may print
    leave the feed parseable."""
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    text = record.read_text().replace(
        "title: Widget count not divisible by group size",
        'title: "Widget\\u202e count\\u2066 not\\u200b divisible\\ufeff by group\\x1b size"',
    )
    record.write_text(text.replace("summary: The widgets", 'summary: "The\\x01 widgets'))
    record.write_text(record.read_text().replace("evenly into groups.", 'evenly into groups."'))
    content = load_content(kb)
    shown = "Widget count not divisible by group\x1b size"
    assert content.records["00000000000000a1"].title == shown
    assert cards.card(content.records["00000000000000a1"], content).title == shown
    build(kb)
    page = (kb / "site/errors/00000000000000a1/index.html").read_text()
    assert "<title>Widget count not divisible by group\x1b size" in page
    assert not set("\u202e\u2066\u200b\ufeff") & set(page)
    feed = ET.parse(kb / "site/feed.xml").getroot()
    titles = [e.text for e in feed.iter("{http://www.w3.org/2005/Atom}title")]
    assert "Widget count not divisible by group size" in titles

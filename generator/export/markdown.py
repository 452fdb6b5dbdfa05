"""`errorkb export --format markdown DOCS_DIR`: the knowledge base as Markdown pages for any
docs tool (Zensical, MkDocs without the plugin, others), with the JSON API beside them.

Each record becomes <path>/<id>.md with YAML front matter, rendered from its API document
(so a page and its JSON say the same); <path>/index.md lists the projects and explained
errors. Pages link each other by relative .md links, which every such tool resolves into its
own URL style. The API files (65,000 at today's content) go only where `--api-dir` says, to
be served at the site's /api/: inside the docs folder a docs tool would read each of them,
and the docs may keep an API reference of their own at docs/api/.

A record's text is data to the docs tool, never syntax: the tool's Markdown extensions read
fences' info strings, blocks (`/// html | script`), admonitions, snippets (`--8<--`, which
include the host's files) and attribute lists, and macros plugins (mkdocs-macros) read a
page's source, code blocks included, as Jinja, while messages hold `{{ ... }}`. So every
piece of record text is written as HTML on one line, its punctuation as character
references (`_inert`); the page around it is ours.
"""

import html
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import yaml
from jinja2 import ChainableUndefined, Environment, FileSystemLoader

from errorkb import resources, urls
from errorkb.content import template
from errorkb.content.model import Content
from errorkb.site import api, markup
from errorkb.site.linking import link

# The languages a code block of the export may name, as the class a docs tool's highlighter
# reads (Pygments' names, those records use and their kin); any other is written as text.
LANGUAGES = frozenset(
    {"bash", "c", "console", "cpp", "diff", "dockerfile", "ini", "javascript", "json"}
    | {"pycon", "python", "pytb", "sh", "shell", "text", "toml", "yaml"}
)

# The file that marks a folder as the export's: only a folder holding it, or a new or empty
# one, is written into (a dotfile: MkDocs and Zensical publish none).
MARKER = ".errorkb-export"


@dataclass
class Exported:
    pages: int
    files: int


class ExportError(Exception):
    """A folder the export will not write into, said in one line: where, why, how to fix."""


def export(
    content: Content,
    docs: Path,
    base_url: str,
    path: str,
    directory_urls: bool,
    api_dir: Path | None = None,
) -> Exported:
    """Write the pages into docs/<path> (path as urls.section checks it), a folder of the
    export's own, and the API files under api_dir when given (files already there are
    replaced)."""
    section = urls.section(path)
    _claim(Path(docs) / section)
    site = urlsplit(base_url)
    content.site = {**content.site, "base_url": f"{site.scheme}://{site.netloc}"}
    old = urls.configure(site.path, section, directory_urls)
    try:
        return _write(content, Path(docs), section, api_dir and Path(api_dir))
    finally:
        urls.restore(old)


def _claim(folder: Path) -> None:
    """Mark folder as the export's, or refuse it: the host's own pages there (an
    errors/index.md of its own) would be replaced by ours."""
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"{folder} is a file; give --path a folder for the pages")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise ExportError(
            f"{folder} holds files errorkb did not export (it has no {MARKER}), which the "
            "pages would replace; export into a new or empty folder with --path"
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("errorkb export --format markdown writes this folder.\n")


def _write(content: Content, docs: Path, section: str, api_dir: Path | None) -> Exported:
    links = link(content)
    env = _environment(_templates(content.root))
    base = content.site["base_url"]
    # The API's address on the site, or None when it is not exported.
    env.globals["api_url"] = (lambda url: urls.absolute(base, url)) if api_dir else None
    page = env.get_template("error.md")
    pages = files = 0
    for rid, record in sorted(content.records.items()):
        doc = api.error_document(record, content, links)
        front = _front_matter(doc, with_json=api_dir is not None)
        _put(docs / section / f"{rid}.md", page.render(doc=doc, front=front))
        pages += 1
        if api_dir:
            for url, body in api.record_files(rid, doc):
                _put(_api_file(api_dir, url), body)
                files += 1
    if api_dir:
        for url, body in api.api_files(content, links):
            _put(_api_file(api_dir, url), body)
            files += 1
    index = env.get_template("index.md").render(
        site=content.site,
        projects=content.projects.values(),
        explained=sorted((r for r in content.records.values() if r.curated), key=_title),
        count=len(content.records),
    )
    _put(docs / section / "index.md", index)
    listing = env.get_template("project.md")
    for key, project in content.projects.items():
        text = listing.render(project=project, files=links.by_file.get(key, {}))
        _put(docs / section / "projects" / f"{key}.md", text)
    return Exported(pages + 1 + len(content.projects), files)


def _api_file(api_dir: Path, url: str) -> Path:
    """Where an API file goes: its path below the site's /api/, inside api_dir."""
    return api_dir / urls.output_path(url).removeprefix("api/")


def _templates(root: Path) -> Path:
    """The knowledge base's export templates, else errorkb's own."""
    return resources.templates(root, "export") / "export"


def _front_matter(doc: dict, with_json: bool) -> str:
    """What docs tools read from a page's head: title, description, tags, and errorkb's
    own fields for templates that want them."""
    c = doc["computed"]
    # Themes put these into HTML as they are (MkDocs does not escape a page's title, Material
    # neither its description): they are written as HTML text. mkdocs-macros is told not to
    # run the text as Jinja.
    front: dict = {"title": _html_text(c["title"]), "render_macros": False}
    if doc.get("summary"):
        front["description"] = _html_text(doc["summary"])
    if doc.get("tags"):
        front["tags"] = doc["tags"]
    front["errorkb"] = {
        "id": doc["id"],
        "project": doc["project"],
        "exception": doc["exception"],
        "curated": c["curated"],
        "status": c["status"],
        **({"json": doc["url"]} if with_json else {}),
        "source": c["source_url"],
    }
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)


def _title(record) -> str:
    return record.title


def _environment(folder: Path) -> Environment:
    env = Environment(
        loader=FileSystemLoader(folder),
        undefined=ChainableUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown: the filters write each piece of record text (_inert)
    )
    env.globals.update(urls=urls, placeholders=template.placeholders)
    env.filters["fence"] = _fence
    env.filters["cell"] = _cell
    env.filters["text"] = _text
    env.filters["code"] = _code
    env.filters["href"] = _href
    env.filters["markdown"] = _markdown
    return env


# A tag, or a character reference, in HTML whose text was escaped.
_MARKUP = re.compile(r"(<[^>]*>|&#?\w+;)")
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # ASCII punctuation, & and < included


def _inert(html_text: str) -> str:
    """HTML that a docs tool reads as nothing but HTML, whatever text it holds: on one line,
    so that no line of the text can open a block, fence, admonition or snippet of Markdown or
    of an extension; every ASCII punctuation character of the text as a character reference,
    so that no inline syntax, attribute list or Jinja delimiter forms either. A browser shows
    the same text (a newline in a <pre> is kept as &#10;)."""
    parts = _MARKUP.split(html_text)
    for i, part in enumerate(parts):
        if i % 2 == 0:  # text
            parts[i] = _PUNCTUATION.sub(lambda m: f"&#{ord(m[0])};", part)
        elif part.startswith("<"):  # a tag: its attribute values may hold braces, newlines
            parts[i] = _braces(part)
    return "".join(parts).replace("\n", "&#10;")


def _braces(html_text: str) -> str:
    """HTML with its braces as character references: the same text in a browser, no Jinja
    delimiter in the source."""
    return html_text.replace("{", "&#123;").replace("}", "&#125;")


def _html_text(text: str) -> str:
    """Text for an HTML context (a theme's title, description): escaped, braces too."""
    return _braces(html.escape(str(text)))


def _fence(code: str, language: str | None = None) -> str:
    """A code block, as the HTML a Markdown fence makes: a fence's info string and its lines
    would be read by the docs tool's extensions (superfences, snippets)."""
    lang = language if language in LANGUAGES else "text"
    code = html.escape(code.rstrip())
    return _inert(f'<pre><code class="language-{lang}">{code}</code></pre>')


def _code(text: str) -> str:
    """Inline code."""
    return _inert(f"<code>{html.escape(str(text))}</code>")


def _cell(text: str) -> str:
    """One cell of a Markdown table: inline Markdown, as our pages render it, on one line
    (pipes are punctuation, written as references)."""
    return _inert(markup.markdown_inline(str(text)))


def _text(text: str) -> str:
    """Plain text in Markdown (titles made from messages hold `*`, `_`, brackets and
    backticks): shown as it is."""
    return _inert(html.escape(str(text)))


def _href(url: str) -> str:
    """A URL for a Markdown link: spaces, brackets, braces and quotes percent-encoded, so
    that a path in it cannot end the link or add attributes to it."""
    return quote(str(url), safe=":/?#@!$&+,;=%~")


def _markdown(text: str) -> str:
    """A Markdown field as a docs tool must show it: as our pages do, with no raw HTML and no
    link but http(s) and relative ones (markup.markdown), written as inert HTML, which docs
    tools pass through as it is."""
    return _inert(markup.markdown(str(text).strip("\n")).rstrip("\n")) + "\n"


def _put(path: Path, body: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body.encode() if isinstance(body, str) else body)

"""`errorkb export --format markdown DOCS_DIR`: the knowledge base as Markdown pages for any
docs tool (Zensical, MkDocs without the plugin, others), with the JSON API beside them.

Each record becomes <path>/<id>.md with YAML front matter, rendered from its API document
(so a page and its JSON say the same); <path>/index.md lists the projects and explained
errors. Pages link each other by relative .md links, which every such tool resolves into its
own URL style. The API files (65,000 at today's content) go only where `--api-dir` says, to
be served at the site's /api/: inside the docs folder a docs tool would read each of them,
and the docs may keep an API reference of their own at docs/api/.

Nothing in the text is a template to the docs tool: macros plugins (mkdocs-macros) read a
page's source, code blocks included, as Jinja, and messages hold `{{ ... }}`. Braces that
could open or close a Jinja tag are written as HTML character references.
"""

import html
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import yaml
from jinja2 import ChainableUndefined, Environment, FileSystemLoader

from errorkb import resources
from errorkb.content import template
from errorkb.content.model import Content
from errorkb.site import api, markup, urls
from errorkb.site.linking import link


@dataclass
class Exported:
    pages: int
    files: int


def export(
    content: Content,
    docs: Path,
    base_url: str,
    path: str,
    directory_urls: bool,
    api_dir: Path | None = None,
) -> Exported:
    """Write the pages under docs, and the API files under api_dir when given (files
    already there are replaced)."""
    site = urlsplit(base_url)
    content.site = {**content.site, "base_url": f"{site.scheme}://{site.netloc}"}
    old = urls.configure(site.path, path, directory_urls)
    try:
        return _write(content, Path(docs), path.strip("/"), api_dir and Path(api_dir))
    finally:
        urls.restore(old)


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
        autoescape=False,  # Markdown: the record's text is Markdown already
    )
    env.globals.update(urls=urls, placeholders=template.placeholders)
    env.filters["fence"] = _fence
    env.filters["cell"] = _cell
    env.filters["text"] = _text
    env.filters["code"] = _code
    env.filters["href"] = _href
    env.filters["markdown"] = _markdown
    return env


def _ticks(code: str, least: int) -> str:
    """A run of backticks longer than any in the code, so that none of them closes it."""
    longest = max((len(run) for run in re.findall("`+", code)), default=0)
    return "`" * max(least, longest + 1)


# What opens or closes a Jinja tag, expression or comment: a macros plugin's delimiters.
_JINJA = re.compile(r"\{[{%#]|[}%#]\}")


def _braces(html_text: str) -> str:
    """HTML with its braces as character references: the same text in a browser, no Jinja
    delimiter in the source."""
    return html_text.replace("{", "&#123;").replace("}", "&#125;")


def _html_text(text: str) -> str:
    """Text for an HTML context (a theme's title, description): escaped, braces too."""
    return _braces(html.escape(str(text)))


def _fence(code: str, language: str | None = None) -> str:
    """A fenced code block; one that holds a Jinja delimiter as an HTML block, which shows
    the same code (a fence cannot escape a brace)."""
    code = code.rstrip()
    if _JINJA.search(code):
        lang = html.escape(language or "text")
        return f'<pre><code class="language-{lang}">{_html_text(code)}</code></pre>'
    ticks = _ticks(code, 3)
    return f"{ticks}{language or 'text'}\n{code}\n{ticks}"


def _code(text: str) -> str:
    """Inline code (paths and function names may hold backticks)."""
    text = str(text)
    if _JINJA.search(text):
        return f"<code>{_html_text(text)}</code>"
    ticks = _ticks(text, 1)
    return f"{ticks} {text} {ticks}" if len(ticks) > 1 else f"`{text}`"


def _cell(text: str) -> str:
    """Markdown for one cell of a Markdown table: one line, pipes escaped; plain text when it
    could hold HTML or a link (a cell holds no HTML block, see _markdown)."""
    line = " ".join(str(text).split())
    return _text(line) if _ACTIVE.search(line) else line.replace("|", "\\|")


def _text(text: str) -> str:
    """Plain text in Markdown: what would be markup is escaped (titles made from messages
    hold `*`, `_`, brackets and backticks), HTML as our pages escape it (Python-Markdown,
    which MkDocs uses, reads no backslash before `<`), braces as references so that neither
    an attribute list nor a Jinja tag forms."""
    return _braces(re.sub(r"([\\`*_\[\]|#])", r"\\\1", html.escape(str(text), quote=False)))


def _href(url: str) -> str:
    """A URL for a Markdown link: spaces, brackets, braces and quotes percent-encoded, so
    that a path in it cannot end the link or add attributes to it."""
    return quote(str(url), safe=":/?#@!$&+,;=%~")


# What a Markdown text needs to hold for a docs tool to make raw HTML, a link, an attribute
# list or a macro of it: none of these, and the text stays Markdown.
_ACTIVE = re.compile(r"<|\{|\]\(|\]:")


def _markdown(text: str) -> str:
    """A Markdown field as a docs tool must show it: as our pages do, with no raw HTML and no
    link but http(s) and relative ones. Text that could hold them is written as the HTML
    our pages render (markup.markdown: raw HTML off, unsafe links refused), which docs tools
    pass through as it is; other text stays Markdown."""
    text = str(text).strip("\n")
    shown = _braces(markup.markdown(text)) if _ACTIVE.search(text) else text
    return shown.rstrip("\n") + "\n"  # a blank line after it in the page ends an HTML block


def _put(path: Path, body: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body.encode() if isinstance(body, str) else body)

"""Material's page frame around errorkb's pages.

MkDocs renders each page through the theme with the whole navigation, which is what makes
Material slow at thousands of pages. Here Material renders its `main.html` once per folder
depth, for a stand-in page whose title, description, address and content are markers; each
of errorkb's pages is then that frame with the markers replaced. The stand-in sits in
folders no real page shares, so every link of the frame climbs to the site root and down:
the frame of one depth serves every page at that depth.

The frame's navigation is pruned as Material's `navigation.prune` does: the errors section's
pages, and the other sections' first links only (a host's whole navigation on each of
30,000 pages is what makes them heavy: 196 KB a page in vLLM's docs). Its table of contents
("On this page") holds a marker entry, replaced on each page by that page's sections.
"""

import re
from functools import cache

from markupsafe import escape
from mkdocs.commands.build import get_context
from mkdocs.structure.files import File
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from errorkb import urls

BODY_MARK = "<!--errorkb:body-->"  # templates/mkdocs/base.html: head extras, then the body
ARTICLE = re.compile(r"<!--errorkb:article-->(.*?)<!--/errorkb:article-->", re.S)
_TITLE = "ERRORKB-FRAME-TITLE"
_DESCRIPTION = "ERRORKB-FRAME-DESCRIPTION"
_CONTENT = "<h1>ERRORKB-FRAME-CONTENT</h1>"  # an <h1>: Material adds its own title otherwise
_FOLDER = "_errorkb_frame"  # the stand-in's folders and name: no real page has them
_TOC_ID, _TOC_TITLE = "errorkb-frame-toc", "ERRORKB-FRAME-TOC"  # the stand-in's one entry
_TOC_ITEM = re.compile(rf'<li class="md-nav__item">\s*<a href="#{_TOC_ID}".*?</li>', re.S)
_TOC_NAV = re.compile(r'(<nav class="md-nav md-nav--secondary"[^>]*>).*?</nav>', re.S)
# A page's sections: its own "On this page" list (error and guide pages), else the <h2> of
# each section.
_OWN_TOC = re.compile(r'<nav class="toc"[^>]*>(.*?)</nav>', re.S)
_OWN_ENTRY = re.compile(r'<a href="#([^"]+)">(.*?)</a>', re.S)
_SECTION = re.compile(r'<section id="([^"]+)"([^>]*)>\s*<h2[^>]*>(.*?)</h2>', re.S)
_HIDDEN = re.compile(r"\shidden\b")  # a section the scripts show ("Your case")
# Material's templates indent and space their output: a third of a frame is whitespace.
# Each run of it holding a line break becomes that line break (the same to a browser),
# except in a <pre> or <textarea> of the host's, where it is text.
_SPACE = re.compile(r"<(pre|textarea)\b.*?</\1>|\s*\n\s*", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_SKIP = f'href="#{_TOC_ID}" class="md-skip"'  # Material's "Skip to content": the first entry
CONTENT_ID = "errorkb-content"  # templates/mkdocs/base.html: where our content starts
# "Not explained yet" and "Retired" notes become Material admonitions.
_NOTE = re.compile(r'<div class="note( retired)?"([^>]*)><strong[^>]*>([^<]*?)\.?</strong>(?: · )?')


class Frame:
    def __init__(self, config, env, nav, files, home: str):
        self.config = config
        self.env = env
        self.nav = nav
        self.files = files
        index = files.get_file_from_path(home)
        self.home = index.page if index is not None else None  # the section's index page

    def page(self, url: str, title: str, description: str, head: str, body: str) -> bytes:
        """A page of errorkb at `url` (root-relative, with the site's prefix) in the frame."""
        rel = urls.output_path(url)
        shell, stand_in = self._shell(rel.count("/"))
        address = rel.removesuffix("index.html") if self.config.use_directory_urls else rel
        html = (
            shell.replace("</head>", head + "</head>", 1)
            .replace(_TITLE, str(escape(title)))
            .replace(_DESCRIPTION, str(escape(description)))
            .replace(stand_in, address)
        )
        html = _with_toc(html, sections(body)).replace(_CONTENT, admonitions(body))
        return html.encode()

    @cache  # noqa: B019 - one frame per depth for the life of a build's Frame
    def _shell(self, depth: int) -> tuple[str, str]:
        """Material's page at this folder depth, and the stand-in's address in it."""
        folders = depth - 1 if self.config.use_directory_urls else depth
        if folders < 0:
            raise ValueError("errorkb's pages need a folder of their own (the plugin's `path`)")
        src = "/".join([_FOLDER] * (folders + 1)) + ".md"
        page = Page(_TITLE, File.generated(self.config, src, content=""), self.config)
        page.content = _CONTENT
        page.meta = {"description": _DESCRIPTION}
        page.edit_url = None  # our pages link their record's file themselves
        page.toc = get_toc([{"level": 2, "id": _TOC_ID, "name": _TOC_TITLE, "children": []}])
        context = get_context(self.nav, self.files, self.config, page)
        theme = self.config.theme
        features = theme.get("features") or []
        if self.home is not None:  # the section's tab and its nav entry show as current
            self.home.active = True
        theme["features"] = [*features, "navigation.prune"]
        try:
            html = _collapsed(self.env.get_template("main.html").render(context))
            html = html.replace(_SKIP, f'href="#{CONTENT_ID}" class="md-skip"')
        finally:
            theme["features"] = features
            if self.home is not None:
                self.home.active = False
        return html, page.url


def _collapsed(html: str) -> str:
    return _SPACE.sub(lambda m: m[0] if m[1] else "\n", html)


def sections(body: str) -> list[tuple[str, str]]:
    """(anchor, title) of each section of one of our pages, in order."""
    own = _OWN_TOC.search(body)
    if own:
        entries = _OWN_ENTRY.findall(own[1])
    else:
        entries = [
            (a, title) for a, attrs, title in _SECTION.findall(body) if not _HIDDEN.search(attrs)
        ]
    return [(anchor, _TAG.sub("", title).strip()) for anchor, title in entries]


def _with_toc(html: str, entries: list[tuple[str, str]]) -> str:
    """Material's table of contents with these entries in place of the marker's (each in the
    marker's own markup), or empty when there are none, as Material leaves it."""
    if not entries:
        return _TOC_NAV.sub(r"\1</nav>", html)
    item = _TOC_ITEM.search(html)
    if item is None:  # a theme without a table of contents
        return html
    items = "".join(
        item[0].replace(f"#{_TOC_ID}", f"#{escape(anchor)}").replace(_TOC_TITLE, title)
        for anchor, title in entries
    )
    return html.replace(item[0], items)


def admonitions(html: str) -> str:
    def note(match: re.Match) -> str:
        kind = "warning" if match[1] else "info"
        title = f'<p class="admonition-title">{match[3]}</p>'
        return f'<div class="admonition {kind}"{match[2]}>{title}'

    return _NOTE.sub(note, html)

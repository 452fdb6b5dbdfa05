"""Markdown and code to HTML: markdown-it-py (raw HTML off) and Pygments."""

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Token
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(nowrap=True)


_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def highlight_code(code: str, language: str | None) -> str:
    """Highlighted code as HTML spans (no wrapper), escaped when the language is unknown."""
    try:
        lexer = get_lexer_by_name(language or "text", stripnl=False)
    except ClassNotFound:
        return html.escape(code)
    coloured = _styled_classes()
    # Spans of tokens no theme colours (names, punctuation) only add bytes.
    return _SPAN.sub(
        lambda m: m.group(0) if m.group(1) in coloured else m.group(2),
        highlight(code, lexer, _FORMATTER),
    )


def code_block(code: str, language: str | None, caption: str = "") -> str:
    lang = html.escape(language or "text")
    cap = f'<div class="code-caption">{html.escape(caption)}</div>' if caption else ""
    return (
        f'<figure class="code">{cap}<pre class="highlight" data-lang="{lang}" tabindex="0" '
        f'role="group" aria-label="{html.escape(caption or lang)} code"><code>'
        f"{highlight_code(code.rstrip(chr(10)), language)}</code></pre></figure>"
    )


SHELLS = {"bash", "sh", "shell", "console", "zsh", "shell-session"}
WRAP = 38  # characters of code a line shows at 390 px, in the box of an example fix
_WORD = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")


def fix_pair(fix: dict) -> str:
    """An example fix's Before and After: a long shell command broken at its options with
    `\\` continuations (each option on a line of its own, as the shell still reads it),
    and the lines that differ marked (`del` in Before, `ins` in After), so that at a
    phone's width the change is seen without scrolling the box sideways."""
    before, after = fix["before"], fix["after"]
    old = _wrapped(before["code"], before.get("language"))
    new = _wrapped(after["code"], after.get("language"))
    old_lines, new_lines = {_bare(t) for t in old.split("\n")}, {_bare(t) for t in new.split("\n")}
    return "\n".join(
        [
            _marked(old, before.get("language"), new_lines, "Before", "del"),
            _marked(new, after.get("language"), old_lines, "After", "ins"),
        ]
    )


def _wrapped(code: str, language: str | None) -> str:
    code = code.rstrip("\n")
    if (language or "").lower() not in SHELLS:
        return code
    lines = code.split("\n")
    continued = [False] + [line.rstrip().endswith("\\") for line in lines[:-1]]
    return "\n".join(_shell_lines(line, more) for line, more in zip(lines, continued, strict=True))


def _shell_lines(line: str, continued: bool = False) -> str:
    """A shell line longer than WRAP as the shell reads it, one option (with its values) a
    line: environment settings and the command first, then each option, indented (a line
    that continues the one before is indented already: its options keep its indent)."""
    if len(line) <= WRAP or line.rstrip().endswith("\\") or line.lstrip().startswith("#"):
        return line
    indent = line[: len(line) - len(line.lstrip())]
    words = _WORD.findall(line)
    if " ".join(words) != re.sub(r"\s+", " ", line.strip()):  # a character they leave out
        return line
    groups: list[list[str]] = []
    comment: list[str] = []  # a comment runs to the end of the line: it stays on the last
    command = False  # past the environment settings before the command
    for word in words:
        if comment or word.startswith("#"):
            comment.append(word)
        elif not groups or (word.startswith("-") and word != "-m") or not command:
            command = command or not _ENV.fullmatch(word)
            groups.append([word])
        else:
            groups[-1].append(word)
    if groups:
        groups[-1] += comment
    if len(groups) < 2:
        return line
    parts = [" ".join(g) for g in groups]
    step = indent if continued else indent + "  "
    return f" \\\n{step}".join([indent + parts[0], *parts[1:]])


_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")


def _marked(code: str, language: str | None, other: set[str], caption: str, tag: str) -> str:
    """A code figure whose lines absent from the other side are wrapped in <del> or <ins>
    (a line's closing `\\` aside). Pygments closes its spans at each line's end, so each
    line of its HTML stands alone."""
    lines = highlight_code(code, language).removesuffix("\n").split("\n")
    plain = code.split("\n")
    if len(lines) == len(plain):
        # A continuation's `\\` needs no colour of its own (24 bytes a line).
        lines = [_uncoloured_continuation(line) for line in lines]
        lines = [
            f"<{tag}>{line}</{tag}>" if text.strip() and _bare(text) not in other else line
            for line, text in zip(lines, plain, strict=True)
        ]
    return _figure(language, caption, "\n".join(lines))


def _uncoloured_continuation(line: str) -> str:
    coloured = '<span class="se">\\</span>'
    return line.removesuffix(coloured) + "\\" if line.endswith(coloured) else line


def _bare(line: str) -> str:
    return line.rstrip().removesuffix("\\").rstrip()


def _figure(lang: str | None, caption: str, body: str) -> str:
    """A code figure whose lines wrap (.before-after pre): it never scrolls, so it needs
    none of the focus and name a scrolling box takes for the keyboard (code_block's)."""
    name = html.escape(lang or "text")
    cap = f'<div class="code-caption">{html.escape(caption)}</div>'
    pre = f'<pre class="highlight" data-lang="{name}"><code>{body}</code></pre>'
    return f'<figure class="code">{cap}{pre}</figure>'


def _fence(code: str, lang: str, _attrs: str) -> str:
    return (
        f'<pre class="highlight" data-lang="{html.escape(lang or "text")}" tabindex="0" '
        f'role="group" aria-label="{html.escape(lang or "text")} code"><code>'
        f"{highlight_code(code.rstrip(chr(10)), lang)}</code></pre>"
    )


def slugify(text: str) -> str:
    slug = re.sub(r"[^\w\s-]", "", text.lower()).strip()
    return re.sub(r"[\s_-]+", "-", slug) or "section"


def _heading_ids(state) -> None:
    """Give every heading a stable id from its text, numbered when repeated."""
    seen: dict[str, int] = {}
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = slugify(tokens[i + 1].content)
            seen[slug] = seen.get(slug, 0) + 1
            token.attrSet("id", slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _fence, "linkify": False})
    md.enable("table")
    md.enable("strikethrough")
    md.core.ruler.push("heading_ids", _heading_ids)
    md.core.ruler.push("whole_flags", _whole_flags)
    return md


FLAG_SPAN = 38  # characters: a flag with its value, short enough to keep on one line at 390 px


def whole_flag(text: str) -> bool:
    """Whether a code span is a short flag (`--dtype float32`), shown with class `f`, which
    keeps it on one line: browsers may break a line after a hyphen, cutting `--` from `dtype`."""
    return text[:1] == "-" and len(text) <= FLAG_SPAN


def _whole_flags(state) -> None:
    """Markdown's code spans that are short flags get class `f` (whole_flag)."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "code_inline" and whole_flag(child.content):
                child.attrSet("class", "f")


# A record's Markdown is mostly said before: the same advice and the same placeholder notes
# recur across releases and records (a quarter of the texts rendered are distinct).
@lru_cache(maxsize=1 << 14)
def markdown(text: str) -> str:
    return _parser().render(text)


@lru_cache(maxsize=1 << 12)
def markdown_inline(text: str) -> str:
    return _parser().renderInline(text)


def headings(text: str, level: int = 2) -> list[tuple[str, str]]:
    """(id, text) of the headings of one level, for a table of contents."""
    tokens = _parser().parse(text)
    seen: dict[str, int] = {}
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = slugify(tokens[i + 1].content)
            seen[slug] = seen.get(slug, 0) + 1
            if token.tag == f"h{level}":
                out.append(
                    (slug if seen[slug] == 1 else f"{slug}-{seen[slug]}", tokens[i + 1].content)
                )
    return out


@lru_cache(maxsize=1)
def _token_styles() -> dict[str, list[str]]:
    """CSS declarations per Pygments token class, for both themes, with CSS light-dark()."""
    light, dark = get_style_by_name("default"), get_style_by_name("github-dark")
    plain = (light.style_for_token(Token)["color"], dark.style_for_token(Token)["color"])
    styles = {}
    for ttype, cls in sorted(STANDARD_TYPES.items(), key=lambda item: item[1]):
        # A colour on blanks shows nothing; operators (= . //) coloured cost a twentieth of
        # a code-heavy page in spans, for a grey barely told from the text.
        if not cls or ttype in Token.Text.Whitespace or ttype in Token.Operator:
            continue
        lit, drk = light.style_for_token(ttype), dark.style_for_token(ttype)
        decls = []
        if (lit["color"], drk["color"]) != plain and (lit["color"] or drk["color"]):
            decls.append(f"color:light-dark({_colour(lit)},{_colour(drk)})")
        if lit["bold"]:
            decls.append("font-weight:bold")
        if lit["italic"]:
            decls.append("font-style:italic")
        if decls:
            styles[cls] = decls
    return styles


def _styled_classes() -> frozenset[str]:
    return frozenset(_token_styles())


def pygments_css() -> str:
    """One rule for each look, listing the token classes that share it: a fifth of the bytes
    of a rule per class, which every page's stylesheet carries."""
    classes: dict[str, list[str]] = {}
    for cls, decls in _token_styles().items():
        classes.setdefault(";".join(decls), []).append(f".highlight .{cls}")
    rules = [f"{','.join(selectors)}{{{decls}}}" for decls, selectors in classes.items()]
    return "\n".join(rules) + "\n"


def _colour(style: dict) -> str:
    return f"#{style['color']}" if style["color"] else "currentColor"

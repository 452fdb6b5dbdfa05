"""The og:image of an error page: a 1200x630 PNG card with the record's title, exception and
project, drawn at build time. A record a person explained gets a card of its own; the others
share their project's card for their kind (the preview's text still names the error, through
og:title), as a card of each of 30,000 stubs would weigh 400 MB and a third of a cold build.

A card is keyed by what it shows and how it is drawn (`Card.key`), so a rebuild draws only
the cards of records whose card changed, not every card when a template changes. Drawing is
kept cheap: text is drawn antialiased straight onto a ramp of a small palette (from the
background to the text's colour), so the PNG is a 16-colour palette image, written with fast
compression, and no colour quantizing is needed. Pillow is imported where a card is drawn:
a rebuild that draws none does without it.
"""

from __future__ import annotations

import functools
import hashlib
import io
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from errorkb import urls
from errorkb.content.model import Content, Record

if TYPE_CHECKING:
    from PIL import Image, ImageFont

WIDTH, HEIGHT = 1200, 630
MARGIN = 72
BAR = 14  # the exception-coloured bar down the left edge, as the message box has
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")  # Debian's fonts-dejavu-core
FONT_FILES = {"sans": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf", "mono": "DejaVuSansMono.ttf"}
TITLE_SIZES = (62, 54, 46, 40)  # the largest at which the title fits TITLE_LINES lines
TITLE_LINES = 4
# Shades of antialiasing per colour: 4 inks x 4 shades make a 16-colour palette, which PNG
# stores in 4 bits a pixel (a third smaller than 16 shades, and as smooth at card size).
LEVELS = 4
# The site's light colours (style.css): background, then each ramp's full colour.
BACKGROUND = (0xFF, 0xFF, 0xFF)
INKS = {
    "fg": (0x1D, 0x20, 0x27),
    "muted": (0x5B, 0x62, 0x70),
    "exc": (0xB3, 0x26, 0x1E),
    "accent": (0x0B, 0x57, 0xD0),
}


def _palette() -> list[int]:
    """LEVELS entries per ink, from the background (shade 0) to the ink (the last)."""
    out = []
    for ink in INKS.values():
        for level in range(LEVELS):
            t = level / (LEVELS - 1)
            out += [round(b + (i - b) * t) for b, i in zip(BACKGROUND, ink, strict=True)]
    return out


PALETTE = _palette()
RAMPS = {ink: i * LEVELS for i, ink in enumerate(INKS)}  # the palette index of each ramp


@dataclass(frozen=True)
class Card:
    """What a card shows."""

    title: str
    exception: str
    project: str  # "<project name> error"
    site: str  # the site's title
    address: str  # where the page lives, without the scheme
    repo: str

    @property
    def key(self) -> str:
        """Changes with what the card shows, how it is drawn and the fonts it is drawn with."""
        parts = [_drawing_digest(), *astuple(self)]
        return hashlib.sha1("\0".join(parts).encode()).hexdigest()


@functools.cache
def _drawing_digest() -> str:
    digest = hashlib.sha1(Path(__file__).read_bytes())
    for name in FONT_FILES.values():
        path = FONT_DIR / name
        digest.update(path.read_bytes() if path.is_file() else b"bundled " + name.encode())
    return digest.hexdigest()


@functools.cache
def font(kind: str, size: int) -> ImageFont.FreeTypeFont:
    """DejaVu where Debian puts it, else Pillow's bundled font (one weight, no mono)."""
    from PIL import ImageFont

    path = FONT_DIR / FONT_FILES[kind]
    if path.is_file():
        return ImageFont.truetype(str(path), size)
    bundled = ImageFont.load_default(size)
    assert isinstance(bundled, ImageFont.FreeTypeFont), "Pillow built without FreeType"
    return bundled


def draw(card: Card) -> bytes:
    """The card as PNG bytes."""
    from PIL import Image

    canvas = Image.new("L", (WIDTH, HEIGHT), 0)  # palette indices: 0 is the background
    canvas.paste(RAMPS["exc"] + LEVELS - 1, (0, 0, BAR, HEIGHT))
    left, right = MARGIN, WIDTH - MARGIN
    brand = font("bold", 34)
    _text(canvas, (left, MARGIN), card.site, brand, "accent")
    after = left + round(brand.getlength(card.site + "  "))
    _text(canvas, (after, MARGIN), f"·  {card.project}", font("sans", 34), "muted")
    mono = font("mono", 38)
    _text(canvas, (left, MARGIN + 78), _fit(card.exception, mono, right - left), mono, "exc")
    top, bottom = MARGIN + 150, HEIGHT - MARGIN - 60
    size, lines = _title_lines(card.title, right - left, bottom - top)
    title = font("bold", size)
    for i, line in enumerate(lines):
        _text(canvas, (left, top + round(i * size * 1.22)), line, title, "fg")
    small = font("sans", 28)
    _text(canvas, (left, HEIGHT - MARGIN - 28), card.address, small, "muted")
    _text(canvas, (right - round(small.getlength(card.repo)), HEIGHT - MARGIN - 28),
          card.repo, small, "muted")  # fmt: skip
    image = Image.frombytes("P", canvas.size, canvas.tobytes())
    image.putpalette(PALETTE)
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=3)  # as fast as 1 here, and 10% smaller
    return out.getvalue()


def _text(canvas: Image.Image, at: tuple[int, int], text: str, face, ink: str) -> None:
    """Text drawn antialiased in the ink's ramp of the palette."""
    layer, (x0, y0) = _layer(text, face, ink)
    if layer:
        canvas.paste(layer, (at[0] + x0, at[1] + y0))


@functools.lru_cache(maxsize=4096)
def _layer(text: str, face, ink: str) -> tuple[Image.Image | None, tuple[int, int]]:
    """The text's pixels as palette indices, and their offset. Drawn onto the ramp's first
    index (the background colour) in its last, antialiasing blends along the ramp itself.
    Kept: the site, project, repository and exception recur on many cards."""
    from PIL import Image, ImageDraw

    x0, y0, x1, y1 = face.getbbox(text)
    if x1 <= x0 or y1 <= y0:
        return None, (0, 0)
    layer = Image.new("L", (x1 - x0, y1 - y0), RAMPS[ink])
    ImageDraw.Draw(layer).text((-x0, -y0), text, font=face, fill=RAMPS[ink] + LEVELS - 1)
    return layer, (x0, y0)


def _title_lines(title: str, width: int, height: int) -> tuple[int, list[str]]:
    """The largest size whose wrapped lines fit; at the smallest, the last line is cut."""
    words = " ".join(title.split())
    for size in TITLE_SIZES:
        lines = _wrap(words, font("bold", size), width)
        fits = len(lines) * size * 1.22 <= height
        if fits and len(lines) <= TITLE_LINES:
            return size, lines
    size = TITLE_SIZES[-1]
    lines = _wrap(words, font("bold", size), width)
    count = min(TITLE_LINES, int(height // (size * 1.22)))
    if len(lines) > count:
        lines = lines[: count - 1] + [_fit(" ".join(lines[count - 1 :]), font("bold", size), width)]
    return size, lines


def _wrap(text: str, face, width: int) -> list[str]:
    """Greedy wrapping at spaces; a word wider than the line is cut to fit."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if face.getlength(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = word if face.getlength(word) <= width else _fit(word, face, width)
    return [*lines, line] if line else lines


def _fit(text: str, face, width: int) -> str:
    """The text, cut with an ellipsis where it is wider than width."""
    if face.getlength(text) <= width:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits with the ellipsis
        mid = (low + high + 1) // 2
        if face.getlength(text[:mid].rstrip() + "…") <= width:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + "…"


KINDS = {  # a record's kind -> what the shared card calls such records
    "raise": ("errors", "exception"),
    "assert": ("failed assertions", "AssertionError"),
    "log": ("log lines", "logged"),
    "http": ("error responses", "HTTP error"),
}


def image(record: Record, content: Content) -> tuple[str, Card]:
    """The URL and card of the image a link to the record's page shows."""
    if record.curated:
        return urls.card(record.id), card(record, content)
    project, kind = record.project, record.kind
    return urls.shared_card(project, kind), shared(content, project, kind)


def shared_cards(content: Content) -> list[tuple[str, Card]]:
    """The shared card of each project and kind that has records which are not curated."""
    pairs = {(r.project, r.kind) for r in content.records.values() if not r.curated}
    return [(urls.shared_card(p, k), shared(content, p, k)) for p, k in sorted(pairs)]


def shared(content: Content, key: str, kind: str) -> Card:
    project = content.projects[key]
    plural, exception = KINDS.get(kind, KINDS["raise"])
    page = urls.absolute(content.site["base_url"], urls.project(key))
    return Card(
        title=f"{project.name} {plural}: what each one means and what to change",
        exception=exception,
        project=f"{project.name} {plural}",
        site=content.site["title"],
        address=page.partition("://")[2] or page,
        repo=project.repo,
    )


def card(record: Record, content: Content) -> Card:
    """What the card of a record's page shows."""
    project = content.projects[record.project]
    site = content.site
    page = urls.absolute(site["base_url"], urls.error(record.id))
    return Card(
        title=" ".join(record.title.split()),  # titles may keep a message's line breaks
        exception=record.exception,
        project=f"{project.name} error",
        site=site["title"],
        address=page.partition("://")[2] or page,
        repo=project.repo,
    )

"""The og:image cards of error pages: a PNG per explained record and one per project and kind
for the rest, 1200x630, named in the page's meta tags, drawn inside its margins whatever the
title, and drawn again only when what the card shows changes."""

import html
import io
import re
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from errorkb.content.load import load_content
from errorkb.site import cards
from errorkb.site.build import build

A1 = "00000000000000a1"
FIXTURE_CONTENT = load_content(Path(__file__).parent / "fixtures" / "kb")
SEED = cards.Card(
    title="Total number of attention heads must be divisible by tensor parallel size",
    exception="ValueError",
    project="vLLM error",
    site="errorkb",
    address="errorkb.dev/errors/f644a7c8e4fdc46c/",
    repo="vllm-project/vllm",
)


def image(body: bytes) -> Image.Image:
    out = Image.open(io.BytesIO(body))
    out.load()
    return out


def inked(card: Image.Image, box: tuple[int, int, int, int]) -> bool:
    """Whether anything but the background (the first shade of every ramp) is in the box."""
    region = card.crop(box).tobytes()
    return any(index % cards.LEVELS for index in region)


def test_every_error_page_names_its_card_and_the_card_is_a_small_palette_png(fixture_site):
    pages = sorted((fixture_site / "errors").glob("*/index.html"))
    records = [p.parent.name for p in pages if 'http-equiv="refresh"' not in p.read_text()]
    assert records
    for rid in records:
        page = (fixture_site / "errors" / rid / "index.html").read_text()
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)">', page))
        record = FIXTURE_CONTENT.records[rid]
        # A card of its own where a person explained it, else the project's card for its kind;
        # the preview's text names the error either way.
        name = rid if record.curated else f"demo-{record.kind}"
        assert meta["og:image"] == f"https://kb.example.org/cards/{name}.png"
        assert meta["og:title"].startswith(html.escape(record.title[:40]))
        assert (meta["og:image:width"], meta["og:image:height"]) == ("1200", "630")
        assert meta["twitter:card"] == "summary_large_image"
        body = (fixture_site / "cards" / f"{name}.png").read_bytes()
        card = image(body)
        assert (card.format, card.mode, card.size) == ("PNG", "P", (1200, 630))
        assert len(body) < 60_000
    home = (fixture_site / "index.html").read_text()
    assert "og:image" not in home and 'content="summary"' in home


@pytest.mark.parametrize(
    "title",
    [
        "x" * 400,  # one word wider than the card
        " ".join(["pooling_task required for `LLM.encode`."] * 40),  # far too long
        "Unsupported\n                  - For embeddings, use `LLM.embed(...)`\n\t\n",
        "设备不支持 bfloat16 — \u202etxet\u202c\x00 😀",  # glyphs DejaVu lacks, controls
    ],
)
def test_titles_of_any_length_stay_inside_the_margins(title):
    card = image(cards.draw(replace(SEED, title=title, exception="E" * 120)))
    right = cards.WIDTH - cards.MARGIN
    assert not inked(card, (right + 2, 0, cards.WIDTH, cards.HEIGHT)), "ink past the margin"
    assert inked(card, (cards.MARGIN, 200, right, 420)), "no title drawn"
    footer = cards.HEIGHT - cards.MARGIN - 28
    assert not inked(card, (cards.MARGIN, footer - 20, right, footer - 4)), "title on the footer"


def test_the_card_shows_its_fields_in_their_colours():
    card = image(cards.draw(SEED))
    palette = card.getpalette()
    colours = {tuple(palette[3 * i : 3 * i + 3]) for i in set(card.tobytes())}
    assert set(cards.INKS.values()) <= colours  # title, exception, site and muted lines
    bare = image(cards.draw(replace(SEED, exception="", repo="")))
    assert card.tobytes() != bare.tobytes()


def test_the_key_follows_what_the_card_shows():
    keys = {replace(SEED, **{field: "other"}).key for field in SEED.__dataclass_fields__}
    assert len(keys | {SEED.key}) == len(SEED.__dataclass_fields__) + 1
    assert replace(SEED).key == SEED.key


def test_without_debian_fonts_cards_use_pillows_own(monkeypatch, tmp_path):
    with_dejavu = SEED.key
    monkeypatch.setattr(cards, "FONT_DIR", tmp_path)
    for cached in (cards.font, cards._layer, cards._drawing_digest):
        cached.cache_clear()
    try:
        card = image(cards.draw(SEED))
        assert card.size == (1200, 630) and inked(card, (cards.MARGIN, 200, 1100, 420))
        assert SEED.key != with_dejavu  # other glyphs: other cards, not the kept ones
    finally:
        for cached in (cards.font, cards._layer, cards._drawing_digest):
            cached.cache_clear()


def test_a_rebuild_draws_only_the_cards_whose_text_changed(kb):
    build(kb)
    site, record = kb / "site", kb / f"content/errors/demo/{A1}.yaml"
    card, page = site / f"cards/{A1}.png", site / f"errors/{A1}/index.html"
    before = {p: (p.stat().st_ino, p.read_bytes()) for p in (card, page)}

    # Another field of the record, and a template: the page again, the same card (linked).
    record.write_text(record.read_text().replace("cannot be placed", "can never be placed"))
    base = kb / "templates/base.html"
    base.write_text(base.read_text().replace("</body>", "<!-- edited --></body>"))
    build(kb)
    assert page.read_bytes() != before[page][1]
    assert card.stat().st_ino == before[card][0]

    # Its title: the card is drawn again.
    record.write_text(record.read_text().replace("title: Widget count", "title: Gadget count"))
    build(kb)
    assert card.read_bytes() != before[card][1]

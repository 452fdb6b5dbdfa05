"""The message-template model: a message is literal text with `{name}` holes.

`{{` and `}}` stand for literal braces, as in Python's str.format; any other
brace that does not enclose a placeholder name is literal text too, so messages
that print dicts or sets need no escaping.
"""

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}")


@dataclass(frozen=True)
class Hole:
    name: str


Segment = str | Hole


def parse(message: str) -> list[Segment]:
    """Split a template into literal strings and holes, adjacent literals merged."""
    segments: list[Segment] = []
    pos = 0
    for match in _TOKEN.finditer(message):
        literal = message[pos : match.start()]
        if match.group(1):
            _append(segments, literal)
            segments.append(Hole(match.group(1)))
        else:
            _append(segments, literal + match.group(0)[0])
        pos = match.end()
    _append(segments, message[pos:])
    return segments


def _append(segments: list[Segment], text: str) -> None:
    if not text:
        return
    if segments and isinstance(segments[-1], str):
        segments[-1] += text
    else:
        segments.append(text)


def placeholders(message: str) -> list[str]:
    """Placeholder names in order of first appearance."""
    names = (seg.name for seg in parse(message) if isinstance(seg, Hole))
    return list(dict.fromkeys(names))


def fill(message: str, values: dict[str, object]) -> str:
    """The message as the program would print it for these values."""
    return "".join(
        str(values.get(seg.name, "{" + seg.name + "}")) if isinstance(seg, Hole) else seg
        for seg in parse(message)
    )


def literal_text(message: str) -> str:
    """The message with every hole removed: what all its instances share."""
    return "".join(seg for seg in parse(message) if isinstance(seg, str))

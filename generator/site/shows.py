"""What an output shows, declared once: its key is made from that declaration alone
(key_of), and the same declaration says which outputs an edit of a record remakes.

An output shows records in full (the page depth: every field, its prose included), records
as a listing row (what Record.outward covers: all but the prose), the records whose source
is one file as rows (a group, keyed by one hash of their rows), the records a listing lists
(by id: what it shows of each, a title or a line of the project's index, is in its `args`),
and named globals (BASE: the
code, templates, assets, settings and projects every page is rendered with; CODE: the code
alone; a guide, by its title). What else it is made from (its URL's parameters, a count, or
the digest of bytes made every build) is text of its own (`args`).
"""

import hashlib
from dataclasses import dataclass
from typing import Protocol

BASE = "base"  # what every page depends on: code, templates, assets, settings, projects
CODE = "code"  # the generator's code and its libraries' versions alone


def guide(slug: str) -> str:
    """The global a guide is shown by: its slug and title (a page that links it)."""
    return f"guide:{slug}"


@dataclass(frozen=True)
class Shows:
    """What one output shows, as its key and the quick rebuild's inverse read it."""

    full: tuple[str, ...] = ()  # record ids shown in full
    rows: tuple[str, ...] = ()  # record ids shown as a listing row (Record.outward)
    files: tuple[tuple[str, str], ...] = ()  # (project, path): the records whose source it is
    names: tuple[str, ...] = ()  # globals (BASE, CODE, guide(slug))
    # record ids a listing lists: in the inverse as its rows are, keyed by the ids alone, for
    # what it shows of each (no more than its title, or its line in an index) is in `args`:
    # an edit of what it does not show (a summary, where it shows titles) keeps its key
    lists: tuple[str, ...] = ()
    args: tuple[str, ...] = ()  # the rest of what it is made from, as text


def made_every_build(digest: str) -> Shows:
    """An output made every build and keyed by its bytes (`digest`)."""
    return Shows(args=(digest,))


class Digests(Protocol):
    """Where key_of reads the digest of each thing a declaration names."""

    def named(self, name: str) -> str: ...

    def full(self, rid: str) -> str: ...

    def row(self, rid: str) -> str: ...

    def file(self, project: str, path: str) -> str: ...


def key_of(shows: Shows, digests: "Digests | None" = None) -> str:
    """The key of an output that shows this: a hash of the digests of all it declares
    (`digests`: needed unless it declares `args` alone)."""
    if digests is None:
        assert not (shows.full or shows.rows or shows.files or shows.names), shows
        digests = _NONE
    parts = [
        *map(digests.named, shows.names),
        *shows.args,
        "\1",
        *map(digests.full, shows.full),
        "\1",
        *map(digests.row, shows.rows),
        "\1",
        *(digests.file(project, path) for project, path in shows.files),
        "\1",
        *shows.lists,
    ]
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


class _NoDigests:
    """What key_of reads from for a declaration of `args` alone: nothing."""

    def named(self, name: str) -> str:
        raise KeyError(name)

    full = row = named

    def file(self, project: str, path: str) -> str:
        raise KeyError((project, path))


_NONE = _NoDigests()

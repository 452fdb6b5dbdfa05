"""What answers an old wording: the records a removed record's `superseded_by` leads to, the
check printed today that took over, else the release to upgrade to. Facts of the loaded
content, read by the pages, the search index and the quick rebuild alike.
"""

from functools import cache

from errorkb.content.model import LIVES, Content, Record


def successors(content: Content, record: Record) -> list[Record]:
    """The records a removed record's `superseded_by` leads through, in order (aliases
    followed): each removed one leads on to its own successor, and the first that is not
    removed, the check printed today, ends them. Empty for a record not removed, or whose
    check took no successor; ends early at a loop or an id not loaded."""
    out: list[Record] = []
    seen = {record.id}
    current = record
    while current.status == "removed" and current.superseded_by:
        sid = current.superseded_by
        found = content.records.get(content.aliases.get(sid, sid))
        if found is None or found.id in seen:
            break
        out.append(found)
        seen.add(found.id)
        current = found
    return out


def live_successor(content: Content, record: Record) -> Record | None:
    """The check printed today that took over from a removed record (through a chain of
    removed ones), or None: the record is not removed, or its check is gone."""
    chain = successors(content, record)
    return chain[-1] if chain and chain[-1].status != "removed" else None


def lives_on(content: Content, record: Record) -> str | None:
    """Of a removed record whose check no record printed today took over, what a reader
    found of the last removed record it leads to: `printed` (later releases print the same
    message, from code errorkb does not scan) or `unrecorded` (they still make the check,
    with a message no record holds). Either way upgrading does not stop it. None otherwise."""
    if record.status != "removed":
        return None
    chain = successors(content, record)
    return _lives(content, chain[-1] if chain else record)


def _lives(content: Content, end: Record) -> str | None:
    """What a reader found of the last record a chain leads to, when it lives on (LIVES)."""
    said = content.confirmed.get(end.project, {}).get(end.id)
    return said if end.status == "removed" and said in LIVES else None


def answer(content: Content, record: Record) -> tuple[Record | None, str | None]:
    """What answers a user of a release that printed a removed record: the check printed
    today that took over (live_successor), else the first release scanned that prints
    none of the check (its last record's versions.last, past it), the release to upgrade
    to. (None, None) for a record not removed, or when neither is known, or when a reader
    found the check still made (lives_on: upgrading is no fix then)."""
    if record.status != "removed":
        return None, None
    chain = successors(content, record)
    if chain and chain[-1].status != "removed":
        return chain[-1], None
    end = chain[-1] if chain else record
    if _lives(content, end):
        return None, None
    scanned = content.projects[record.project].releases_scanned
    return None, first_after(scanned, (end.versions or {}).get("last"))


def first_after(scanned: list[str], last: str | None) -> str | None:
    """The first release of `scanned` after `last`; None when none is, or `last` is unknown."""
    later = [v for v in scanned if last and release_key(v) > release_key(last)]
    return min(later, key=release_key) if later else None


@cache  # a few dozen releases, compared for every record
def release_key(version: str) -> tuple:
    """A release number as comparable parts: 0.10.2 after 0.9.2, 0.6.6.post1 after 0.6.6."""
    parts = version.replace("-", ".").split(".")
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)

"""Links between records: related errors, back-links, guides, groupings by project and file."""

from collections import defaultdict
from dataclasses import dataclass

from generator.records import Content, Guide, Record


@dataclass(eq=False)
class Links:
    related: dict[str, list[Record]]
    referenced_by: dict[str, list[Record]]  # records that list this one as related
    guides: dict[str, list[Guide]]  # guides that cover this record
    by_file: dict[str, dict[str, list[Record]]]  # project -> source path -> records
    recent: list[Record]  # newest first
    position: dict[str, int]  # record id -> its index in by_file


def modified(record: Record) -> str | None:
    """When the record last changed, from its own data (never the clock)."""
    data = record.data
    return data.get("updated") or data.get("analysis", {}).get("date")


def resolve(content: Content, ident: str) -> Record:
    return content.records[content.aliases.get(ident, ident)]


def link(content: Content) -> Links:
    records = content.records
    related = {
        rid: [resolve(content, r) for r in rec.data.get("related", [])]
        for rid, rec in records.items()
    }
    referenced_by: dict[str, list[Record]] = defaultdict(list)
    for rid in sorted(records):
        for target in related[rid]:
            if records[rid] not in related[target.id]:
                referenced_by[target.id].append(records[rid])
    guides: dict[str, list[Guide]] = defaultdict(list)
    for guide in content.guides:
        for ident in guide.errors:
            guides[resolve(content, ident).id].append(guide)
    by_file = _by_file(records)
    position = {
        r.id: i for files in by_file.values() for recs in files.values() for i, r in enumerate(recs)
    }
    return Links(
        related,
        dict(referenced_by),
        dict(guides),
        by_file,
        sorted(records.values(), key=lambda r: (modified(r) or "", r.id), reverse=True),
        position,
    )


def _by_file(records: dict[str, Record]) -> dict[str, dict[str, list[Record]]]:
    grouped: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for rec in records.values():
        grouped[rec.project][rec.data["source"]["path"]].append(rec)
    return {
        project: {
            path: sorted(recs, key=lambda r: (r.data["source"].get("line", 0), r.id))
            for path, recs in sorted(files.items())
        }
        for project, files in sorted(grouped.items())
    }


SAME_FILE_LIMIT = 6


def same_file(links: Links, record: Record) -> tuple[list[Record], int]:
    """The other errors raised nearest in the same source file, and how many there are."""
    in_file = links.by_file[record.project][record.data["source"]["path"]]
    i = links.position[record.id]
    window = in_file[max(0, i - SAME_FILE_LIMIT) : i] + in_file[i + 1 : i + 1 + SAME_FILE_LIMIT]
    line = record.data["source"].get("line", 0)
    nearest = sorted(window, key=lambda r: abs(r.data["source"].get("line", 0) - line))
    shown = sorted(nearest[:SAME_FILE_LIMIT], key=lambda r: r.data["source"].get("line", 0))
    return shown, len(in_file) - 1

"""Links between records: related errors, back-links, guides, groupings by project and file."""

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from errorkb.content.model import Content, Guide, Location, Record


@dataclass(eq=False)
class Links:
    related: dict[str, list[Record]]
    referenced_by: dict[str, list[Record]]  # records that list this one as related
    guides: dict[str, list[Guide]]  # guides that cover this record
    by_file: dict[str, dict[str, list[Record]]]  # project -> source path -> records
    position: dict[str, int]  # record id -> its index in by_file
    by_function: dict[tuple[str, str, str], list[Record]]  # (project, path, function) -> records
    twins: dict[str, list[Record]]  # records of other projects printing the same message
    # record id -> how documents list it: made once a build (a record is listed in many
    # others' documents) and shared by them, read only (api._listed)
    summaries: dict[str, dict] = field(default_factory=dict)

    # Made on first use: only the pages drawn from many records need them, and the build
    # makes those in worker processes, off the path of the rest.

    @cached_property
    def recent(self) -> list[Record]:
        """Newest first."""
        records = (r for files in self.by_file.values() for recs in files.values() for r in recs)
        return sorted(records, key=lambda r: (r.modified or "", r.id), reverse=True)

    @cached_property
    def raised_in(self) -> dict[str, dict[str, list[tuple[Record, list[Location]]]]]:
        """project -> path -> the records raised in that file (where source or one of its
        sites points), each with its locations there; by line."""
        return _raised_in(self.by_file)


def resolve(content: Content, ident: str) -> Record:
    return content.records[content.aliases.get(ident, ident)]


def _loaded(content: Content, idents) -> list[Record]:
    found = (content.records.get(content.aliases.get(i, i)) for i in idents)
    return [record for record in found if record is not None]


def link(content: Content) -> Links:
    """The links among the records loaded: all of them, but for the quick rebuild's few
    (which loads, for each page it makes, every record that page shows)."""
    records = content.records
    related = {
        rid: _loaded(content, dict.fromkeys(rec.related + rec.engine_related))
        for rid, rec in records.items()
    }
    # An engine's record that a stack record's advice names lists that stack record: the
    # link goes both ways without the engine record's file naming it.
    for rid in sorted(records):
        for target in _loaded(content, records[rid].engine_related):
            if records[rid] not in related[target.id]:
                related[target.id].append(records[rid])
    referenced_by: dict[str, list[Record]] = defaultdict(list)
    for rid in sorted(records):
        for target in related[rid]:
            if records[rid] not in related[target.id]:
                referenced_by[target.id].append(records[rid])
    guides: dict[str, list[Guide]] = defaultdict(list)
    for guide in content.guides:
        for target in _loaded(content, guide.errors):
            guides[target.id].append(guide)
    by_file = _by_file(records)
    position = {
        r.id: i for files in by_file.values() for recs in files.values() for i, r in enumerate(recs)
    }
    return Links(
        related,
        dict(referenced_by),
        dict(guides),
        by_file,
        position,
        _by_function(by_file),
        _twins(records),
    )


def _twins(records: dict[str, Record]) -> dict[str, list[Record]]:
    """Record id -> the records of other projects whose message is the same template: a
    project that carries another's code prints its messages (SGLang, vLLM's)."""
    by_message: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for rid in sorted(records):
        record = records[rid]
        by_message[record.kind, record.message].append(record)
    twins = {}
    for group in by_message.values():
        if len({r.project for r in group}) > 1:
            for record in group:
                twins[record.id] = [r for r in group if r.project != record.project]
    return twins


def _by_file(records: dict[str, Record]) -> dict[str, dict[str, list[Record]]]:
    grouped: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for rec in records.values():
        grouped[rec.project][rec.location.path].append(rec)
    return {
        project: {
            path: sorted(recs, key=lambda r: (_line(r), r.id))
            for path, recs in sorted(files.items())
        }
        for project, files in sorted(grouped.items())
    }


def _by_function(
    by_file: dict[str, dict[str, list[Record]]],
) -> dict[tuple[str, str, str], list[Record]]:
    grouped: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for project, files in by_file.items():
        for path, recs in files.items():
            for rec in recs:  # already by line
                if function := rec.location.function:
                    grouped[project, path, function].append(rec)
    return dict(grouped)


def _raised_in(
    by_file: dict[str, dict[str, list[Record]]],
) -> dict[str, dict[str, list[tuple[Record, list[Location]]]]]:
    def line(location: Location) -> int:
        return location.line or 0

    grouped: dict = defaultdict(lambda: defaultdict(dict))
    for project, files in by_file.items():
        for recs in files.values():
            for rec in recs:
                for location in [rec.location, *rec.sites]:
                    in_file = grouped[project][location.path]
                    in_file.setdefault(rec.id, (rec, []))[1].append(location)
    return {
        project: {
            path: sorted(
                ((rec, sorted(locations, key=line)) for rec, locations in entries.values()),
                key=lambda entry: (line(entry[1][0]), entry[0].id),
            )
            for path, entries in sorted(files.items())
        }
        for project, files in sorted(grouped.items())
    }


def by_folder(files: dict[str, list]) -> dict[str, dict[str, list]]:
    """A project's files grouped by the folder they are in ("" for the top); a folder's
    subfolders follow it."""
    grouped: dict[str, dict[str, list]] = defaultdict(dict)
    for path, recs in files.items():
        grouped[path.rpartition("/")[0]][path] = recs
    return dict(sorted(grouped.items(), key=lambda item: item[0].split("/")))


SAME_FILE_LIMIT = 3
SAME_FUNCTION_LIMIT = 8


def same_file(links: Links, record: Record) -> tuple[list[Record], int]:
    """The other errors raised nearest in the same source file (but for those the page
    lists as related already), and how many there are."""
    in_file = links.by_file[record.project][record.location.path]
    related = {r.id for r in links.related[record.id]}
    if not related:
        return _nearest(in_file, links.position[record.id], SAME_FILE_LIMIT), len(in_file) - 1
    others = [r for r in in_file if r.id not in related]
    return _nearest(others, others.index(record), SAME_FILE_LIMIT), len(in_file) - 1


def same_function(links: Links, record: Record) -> tuple[list[Record], int]:
    """The other errors raised in the same function of the same file, the nearest few by line,
    and how many there are; none when the record's function is not known."""
    where = record.location
    if not where.function:
        return [], 0
    in_function = links.by_function[record.project, where.path, where.function]
    i = in_function.index(record)
    return _nearest(in_function, i, SAME_FUNCTION_LIMIT), len(in_function) - 1


def _nearest(by_line: list[Record], i: int, limit: int) -> list[Record]:
    """Up to `limit` records nearest by line to by_line[i], by line. In a list by line, the
    nearest are a run around i: grow it on the nearer side (the earlier on a tie)."""
    line = _line(by_line[i])
    lo, hi = i, i + 1
    while hi - lo <= limit and (lo > 0 or hi < len(by_line)):
        if hi == len(by_line) or (
            lo > 0 and line - _line(by_line[lo - 1]) <= _line(by_line[hi]) - line
        ):
            lo -= 1
        else:
            hi += 1
    return by_line[lo:i] + by_line[i + 1 : hi]


def _line(record: Record) -> int:
    return record.location.line or 0

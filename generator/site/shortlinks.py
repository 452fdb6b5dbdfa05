"""Links that hold up: /e/<first 8 hex digits>/ for every record whose prefix is its own, and
the id lists the 404 page reads to send an id typed in capitals, cut short or mistyped to its
page (or to the nearest ids).

Short links are one file, not a folder each: `_redirects` (with the rules for the other
forms of an error's addresses), which Netlify and Cloudflare Pages serve as real redirects
(query string kept, so the values in the address reach the page, and link previews follow
them to the page's own tags). On hosts without it (GitHub Pages) the 404 page finds the id
in the address and goes to its page, values and all."""

import functools
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator

from errorkb import urls
from errorkb.content.model import Content

SHORT = 8  # hex digits of a short link: unique among 100,000 ids but for a few dozen
SHARD = 2  # hex digits naming an id list: 256 lists, ~25 ids each at 6,000 records


def short_links(content: Content) -> Iterator[tuple[str, str]]:
    """(short URL, record id) for each prefix that names one id. Aliases count: a link made
    for a record before it was renamed still means it, so a new record sharing the prefix
    makes it ambiguous (the 404 page then lists both) rather than takes it over."""
    by_prefix = defaultdict(list)
    for rid in content.records:
        by_prefix[rid[:SHORT]].append(rid)
    for alias, target in content.aliases.items():
        by_prefix[alias[:SHORT]].append(target)
    for prefix, ids in sorted(by_prefix.items()):
        if len(ids) == 1:
            yield urls.short(prefix), ids[0]


def redirects_file(content: Content) -> bytes:
    """`_redirects`, in the syntax Netlify and Cloudflare Pages read (`serve` applies it too):
    the first rule that matches an address no file answers wins; `:id` is one segment of
    the address, `*` the rest of it; a trailing slash does not count; 200 serves the target
    under the address asked, 404 serves it as not found, 301 redirects, query kept."""
    lines = [
        "# An error's JSON without .json, as users write it: the same file (errorkb)",
        f"{urls.error_json_bare(':id')} {urls.error_json(':id')} 200",
        "# Anything else under the API: its JSON not-found answer",
        f"{urls.api()}* {urls.api_not_found()} 404",
        "# Short links: /e/<the first 8 hex digits of an error's id>/",
    ]
    # The explained records' first: a host that takes only so many rules (Cloudflare Pages:
    # 2,000) keeps those most linked, and the 404 page answers the rest.
    links = sorted(short_links(content), key=lambda link: not content.records[link[1]].curated)
    lines += [f"{url} {urls.error(rid)} 301" for url, rid in links]
    # After them, /e/ with a whole id or a prefix of several: the error page's address (or
    # the 404 page there, which lists the nearest ids).
    lines += [
        "# /e/<a whole id>/, or a prefix several share",
        f"{urls.short(':id')} {urls.error(':id')} 301",
        # Last, /e/<...> without its closing slash, to the slashed form the rules above
        # answer: Cloudflare Pages matches a rule's closing slash exactly (Netlify and `serve`
        # never reach this line: for them the rules above match either form).
        "# /e/<...> without the closing slash: the same with it",
        f"{urls.short(':id').removesuffix('/')} {urls.short(':id')} 301",
    ]
    return ("\n".join(lines) + "\n").encode()


def id_list_parts(
    content: Content,
) -> Iterator[tuple[str, str, Callable[[], bytes], tuple[str, ...]]]:
    """/api/ids/<2 hex digits>.json: [[id, title, target id], ...] of the records and aliases
    starting so (target id: the record an alias leads to, else the id itself), as (url, key,
    how to make it, the ids of the records whose titles it shows): a list is keyed by its
    rows, so an edit makes one list, and only where it changed a title."""
    shards = defaultdict(list)
    for rid, record in content.records.items():
        shards[rid[:SHARD]].append([rid, record.title, rid])
    for alias, target in content.aliases.items():
        shards[alias[:SHARD]].append([alias, content.records[target].title, target])
    for prefix, rows in sorted(shards.items()):
        rows.sort()
        made = functools.partial(_id_list, rows)
        yield urls.id_list(prefix), _rows_key(rows), made, _targets(rows)


def retitled_id_list(body: bytes, rid: str, title: str) -> tuple[str, bytes, tuple[str, ...]]:
    """An id list as (key, bytes, the ids whose titles it shows), made from the list `body`
    with the record's new title."""
    rows = json.loads(body)
    for row in rows:
        if row[2] == rid:
            row[1] = title
    rows.sort()
    return _rows_key(rows), _id_list(rows), _targets(rows)


def _targets(rows: list[list[str]]) -> tuple[str, ...]:
    """The records whose titles a list's rows show, in its order."""
    return tuple(dict.fromkeys(row[2] for row in rows))


def _rows_key(rows: list[list[str]]) -> str:
    return hashlib.sha1("\n".join("\0".join(row) for row in rows).encode()).hexdigest()


def _id_list(rows: list[list[str]]) -> bytes:
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()

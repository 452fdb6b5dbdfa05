"""The search index's writer: every record's patterns, the sharded files the matchers read
(engine.py in Python, match.js in the browser), the cached copy `errorkb match` and the bench
read, and the Pagefind full-text index. The build's side of search: it reads the content
and writes the rules of rules.py into index.json; the query side (engine.py) reads only
what this writes, rules included, with the standard library alone.

  /search/index.json             counts, the shard layout and the query settings
  /search/words/<shard>.json     each word hashed to that shard: [weight, pattern ids...]
  /search/patterns/<page>.json   PAGE patterns each, with their record's title and exception
"""

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from errorkb import registry, urls
from errorkb.content import template
from errorkb.search import rules
from errorkb.search.engine import Index, key_shard
from errorkb.search.rules import (
    PAGE,
    POSTINGS_CAP,
    RAREST_KEPT,
    SHARD_BYTES,
    VERSION,
    after_holes,
    carried,
    generic,
    lead,
    project_starts,
    weight,
)

if TYPE_CHECKING:
    from errorkb.content.model import Content, Record


@dataclass
class Entry:
    """One pattern: a record's message or one of its variants."""

    record: str
    title: str
    exception: str
    project: str
    summary: str
    pattern: template.Pattern
    words: list[str]  # template.pattern_words of the pattern: what the index lists it under
    wording: str = ""  # of an old wording: which releases printed it, in words
    removed: bool = False  # the record's check is no longer in the project
    explained: int = 0  # 2: by a person (meaning, trigger, solutions), 1: derived, 0: a stub
    versions: list[str] | None = None  # [first, last] release that printed this wording
    engines: list[str] = field(default_factory=list)  # a stack record's: keys it advises for
    # Of a removed record: the check printed today that took over ({id, title}), else the
    # release that no longer prints the check (its page answers with either)
    today: dict | None = None
    upgrade: str = ""
    # Met in the wild: the public threads that showed it (content/most-met/), what breaks
    # ties in search and picks which engine's copy of a twin leads when the paste names none
    met: int = 0
    # A wrapper's line ("Engine core initialization failed. See root cause above"): the
    # error it follows leads, and names it as its follow-on (a wing's wrappers())
    wrapper: bool = False
    # A template cut short (`message_cut`): the program prints more, so a fit is never exact
    cut: bool = False

    def document(self) -> dict:
        doc: dict[str, object] = {
            "id": self.record,
            "title": self.title,
            "exception": self.exception,
            "project": self.project,
            "pattern": self.pattern,
        }
        if self.summary:
            doc["summary"] = self.summary
        if self.wording:
            doc["wording"] = self.wording
        if self.removed:
            doc["removed"] = True
        if self.explained:
            doc["explained"] = self.explained
        if self.versions:
            doc["versions"] = self.versions
        if self.engines:
            doc["engines"] = self.engines
        if self.today:
            doc["today"] = self.today
        if self.upgrade:
            doc["upgrade"] = self.upgrade
        if self.met:
            doc["met"] = self.met
        if self.wrapper:
            doc["wrapper"] = True
        if self.cut:
            doc["cut"] = True
        if generic(self.pattern, self.words):
            doc["generic"] = True
        return doc


def entries(content: "Content") -> list[Entry]:
    """Every record's patterns, in source order so that neighbours share files."""
    extras = search_extras(content)
    return [
        entry
        for r in _source_order(content)
        for entry in record_entries(
            r, content.projects[r.project].name, answer_of(content, r), extras.get(r.id)
        )
    ]


# What the index says of a record besides its text: (met in the wild, a wrapper's line)
Extra = tuple[int, bool]


_MET_ROW = re.compile(r"^\|\s*\d+\s*\|\s*`([0-9a-f]{16})`\s*\|[^|\n]*\|\s*(\d+)\s*\|", re.M)


def demand(content: "Content") -> dict[str, int]:
    """Each record's count of public threads that showed it: its `reported` threads, or
    the count the tables of content/most-met/*.md (| rank | `id` | error | count | threads |)
    list it with, when higher (counted before records kept their threads); the highest."""
    found: dict[str, int] = {rid: r.met for rid, r in content.records.items() if r.met}
    folder = Path(content.root) / "content" / "most-met"
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        for rid, count in _MET_ROW.findall(path.read_text(encoding="utf-8")):
            found[rid] = max(found.get(rid, 0), int(count))
    return found


def wrapper_rules(content: "Content") -> dict[str, re.Pattern]:
    """Each project key -> what its wrappers' messages match (its wing's wrappers())."""
    out = {}
    for key, project in content.projects.items():
        found = registry.wing(project.wing_key).wrappers()
        if found:
            out[key] = re.compile("|".join(f"(?:{w})" for w in found))
    return out


def search_extras(content: "Content") -> dict[str, Extra]:
    """(met, wrapper) of the records that have either, by id."""
    met, rules = demand(content), wrapper_rules(content)
    out = {}
    for rid, record in content.records.items():
        rule = rules.get(record.project)
        wrapper = bool(rule and any(rule.search(m) for m in record.messages))
        if met.get(rid) or wrapper:
            out[rid] = (met.get(rid, 0), wrapper)
    return out


# What answers an old wording in search: the check printed today that took over (its id,
# title and how it is explained), else the release to upgrade to; None for a record still
# printed, or a removed one with neither.
Answer = tuple[str, str, int, str]


def answer_of(content: "Content", record: "Record") -> Answer | None:
    from errorkb.content import successors  # the build's only: the bot imports the stdlib alone

    if record.status != "removed":
        return None
    live, upgrade = successors.answer(content, record)
    if live is not None:
        return live.id, live.title, _explained(live), ""
    return ("", "", 0, upgrade) if upgrade else None


def _explained(record: "Record") -> int:
    """2: explained by a person, 1: a derived block (the page says when the code raises it),
    0: a stub."""
    return 2 if record.curated else int(bool(record.derived))


def _source_order(content: "Content") -> list["Record"]:
    return sorted(
        content.records.values(),
        key=lambda r: (r.project, r.location.path, r.location.line or 0, r.id),
    )


def _record_patterns(record: "Record") -> list[tuple[template.Pattern, list[str]]]:
    if record.patterns is not None:
        return record.patterns
    return template.record_patterns(record.messages, record.params)


def record_entries(
    record: "Record", project: str, answer: Answer | None = None, extra: Extra | None = None
) -> list[Entry]:
    """The index entries of one record: its message and each of its variants; a removed
    one's with its `answer` (answer_of), whose explanation counts as the record's own;
    `extra`, what search_extras says of it."""
    met, wrapper = extra or (0, False)
    patterns = _record_patterns(record)
    labels = wording_labels(record, project)
    explained = max(_explained(record), answer[2] if answer else 0)
    today = {"id": answer[0], "title": answer[1]} if answer and answer[0] else None
    upgrade = answer[3] if answer else ""
    return [
        Entry(
            record.id,
            record.title,
            record.exception,
            project,
            record.summary,
            pat,
            words,
            label,
            record.status == "removed",
            explained,
            [seen["first"], seen["last"]] if seen else None,
            list(record.engines),
            today,
            upgrade,
            met,
            wrapper,
            cut=i == 0 and record.message_cut,
        )
        for i, ((pat, words), label, (_, seen)) in enumerate(
            zip(patterns, labels, record.wordings, strict=True)
        )
    ]


def wording_labels(record: "Record", project: str) -> list[str]:
    """For each wording of a record (message, then variants), "printed by vLLM 0.5.5–0.6.6"
    when no longer printed (an old variant, or the message of a removed check); else ""."""
    labels = []
    for i, (_, seen) in enumerate(record.wordings):
        if seen is None or (i == 0 and record.status != "removed"):
            labels.append("")
            continue
        first, last = seen["first"], seen["last"]
        span = first if first == last else f"{first}–{last}"
        labels.append(f"printed by {project} {span}")
    return labels


def index_files(
    items: list[Entry],
    repo: str | None = None,
    hints: dict[str, str] | None = None,
    programs: dict[str, dict] | None = None,
    base_url: str = "",
) -> Iterator[tuple[str, bytes]]:
    """The tier-1 index as (url, bytes), the same bytes for the same entries; `repo`, the
    knowledge base's own, is where "report this error" files an issue; `hints`, project
    name -> a line of its own logger's, what tells two projects' alike results apart;
    `programs`, project name -> {key, engine}: which a paste names (project_programs);
    `base_url`, the site's (what its absolute URLs start with)."""
    own = [set(item.words) for item in items]
    records = len({item.record for item in items})
    patterns = [item.pattern for item in items]
    starts = project_starts([item.project for item in items])
    weights, head = _index_head(own, patterns, records, repo, hints, programs, base_url, starts)
    yield from head
    for start in range(0, len(items), PAGE):
        totals = [sum(weights[w] for w in words) for words in own[start : start + PAGE]]
        page = _pattern_page(items[start : start + PAGE], totals)
        yield urls.search_patterns(str(start // PAGE)), page


def site_index_parts(
    content: "Content", salt: str
) -> Iterator[tuple[str, str, bytes | Callable[[], bytes], tuple[str, ...]]]:
    """site_index's files as (url, key, bytes or how to make them, the ids of the records
    whose rows it shows), for a build that keeps the files whose key is unchanged.
    index.json and the word shards are made from every pattern's words and keyed by their
    bytes; a page of patterns is keyed by what it is made from (`salt`, the code's key;
    its records' digests; its patterns' weights), and made only when asked: an edit of a
    record makes its page alone."""
    names = project_names(content)
    slots = index_slots(content)
    patterns = [_record_patterns(r)[n] for r, n in slots]
    own = [set(words) for _, words in patterns]
    repo = content.site.get("repo")
    records = len({r.id for r, _ in slots})
    weights, head = _index_head(
        own,
        [pat for pat, _ in patterns],
        records,
        repo,
        project_hints(content),
        project_programs(content),
        content.site["base_url"],
        project_starts([names[r.project] for r, _ in slots]),
    )
    for url, body in head:
        yield url, hashlib.sha1(body).hexdigest(), body, ()
    extras = search_extras(content)
    for start in range(0, len(slots), PAGE):
        totals = [sum(weights[w] for w in words) for words in own[start : start + PAGE]]
        page = slots[start : start + PAGE]
        answers = page_answers(content, page)
        yield patterns_page(start // PAGE, page, names, totals, salt, answers, extras)


def page_answers(content: "Content", page: list[tuple["Record", int]]) -> dict[str, Answer]:
    """The answers of the removed records of a page of patterns (answer_of), by id."""
    found = {r.id: answer_of(content, r) for r, _ in page if r.status == "removed"}
    return {rid: answer for rid, answer in found.items() if answer is not None}


def project_names(content: "Content") -> dict[str, str]:
    return {key: project.name for key, project in content.projects.items()}


def index_slots(content: "Content") -> list[tuple["Record", int]]:
    """The patterns of the index in its order: (record, which of its wordings)."""
    return [(r, n) for r in _source_order(content) for n in range(len(_record_patterns(r)))]


def patterns_page(
    number: int,
    page: list[tuple["Record", int]],
    names: dict[str, str],
    totals: list[int],
    salt: str,
    answers: dict[str, Answer] | None = None,
    extras: dict[str, Extra] | None = None,
) -> tuple[str, str, Callable[[], bytes], tuple[str, ...]]:
    """A page of patterns (`page`: its slots, `totals`: their words' weights, `answers`:
    its removed records', page_answers) as (url, key, how to make it, the ids of the records
    it shows as rows: its slots' and their answers'): keyed by what it is made from
    (`salt`: the code's key)."""
    answers, extras = answers or {}, extras or {}
    inputs = [salt] + [
        f"{names[r.project]}\0{r.id}\0{r.outward}\0{n}\0{total}\0{answers.get(r.id)}"
        f"\0{extras.get(r.id)}"
        for (r, n), total in zip(page, totals, strict=True)
    ]
    key = hashlib.sha1("\n".join(inputs).encode()).hexdigest()
    made = functools.partial(_slots_page, page, names, totals, answers, extras)
    shown = [r.id for r, _ in page] + [answer[0] for answer in answers.values() if answer[0]]
    return urls.search_patterns(str(number)), key, made, tuple(dict.fromkeys(shown))


def _slots_page(
    page: list[tuple["Record", int]],
    names: dict[str, str],
    totals: list[int],
    answers: dict[str, Answer],
    extras: dict[str, Extra] | None = None,
):
    """The file of these patterns (record, which of its wordings)."""
    made: dict[str, list[Entry]] = {}
    for r, _ in page:
        if r.id not in made:
            extra = (extras or {}).get(r.id)
            made[r.id] = record_entries(r, names[r.project], answers.get(r.id), extra)
    return _pattern_page([made[r.id][n] for r, n in page], totals)


def _index_head(
    own: list[set[str]],
    patterns: list[template.Pattern],
    records: int,
    repo: str | None,
    hints: dict[str, str] | None,
    programs: dict[str, dict] | None,
    base_url: str,
    starts: list | None = None,
) -> tuple[dict[str, int], list[tuple[str, bytes]]]:
    """Each word's weight (what pages of patterns are made with), and index.json and the
    word shards of patterns with these words (`records`: how many records they are of)."""
    postings: dict[str, list[int]] = {}
    for pid, words in enumerate(own):
        for word in [*words, *lead(patterns[pid]), *after_holes(patterns[pid])]:
            postings.setdefault(word, []).append(pid)
    kept = _kept_postings(own, postings)
    weights = {w: weight(len(own), len(ids)) for w, ids in postings.items()}
    rows = {w: [weights[w], *kept[w]] for w in sorted(postings)}
    shards = _shard_count(rows)
    buckets: list[dict] = [{} for _ in range(shards)]
    for word, row in rows.items():
        buckets[key_shard(word, shards)][word] = row
    settings = {
        "version": VERSION,
        "patterns": len(own),
        "records": records,
        "shards": shards,
        "page": PAGE,
        "errors_url": urls.error("{}"),
        "words_url": urls.search_words("{}"),
        "patterns_url": urls.search_patterns("{}"),
        # Absolute, for readers away from the site (the issue bot): a record's page and
        # the JSON API's folder, wherever the site lives (a docs site's sub-path included).
        "page_url": urls.absolute(base_url, urls.error("{}")),
        "api_base": urls.absolute(base_url, urls.api()),
        # The rules the index was built with: the matchers read them from here
        **carried(),
        "report": repo and urls.github_new_issue(repo, "{title}", "{body}"),
        "hints": hints or {},
        "programs": programs or {},
        # [first pattern id, project name] of each project's run of patterns (they are in
        # source order, a project's together): candidates that score alike are taken in the
        # order a message two engines print would open in
        "starts": starts or [],
    }
    files = [(urls.search_index(), _dumps(settings))]
    files += [(urls.search_words(str(n)), _dumps(bucket)) for n, bucket in enumerate(buckets)]
    return weights, files


def _pattern_page(items: list[Entry], totals: list[int]) -> bytes:
    """A file of patterns: each one's document, and the weight of all its words (`totals`),
    what a similar (unverified) match is measured by."""
    return _dumps(
        [{**item.document(), "weight": total} for item, total in zip(items, totals, strict=True)]
    )


def _kept_postings(own: list[set[str]], postings: dict[str, list[int]]) -> dict[str, list[int]]:
    """Common words keep only the patterns that have no rarer words to be found by."""
    kept = {w: ids if len(ids) <= POSTINGS_CAP else [] for w, ids in postings.items()}
    for pid, words in enumerate(own):
        for word in sorted(words, key=lambda w: (len(postings[w]), w))[:RAREST_KEPT]:
            if len(postings[word]) > POSTINGS_CAP:
                kept[word].append(pid)
    return kept


def _shard_count(rows: dict[str, list[int]]) -> int:
    size = sum(len(w) + 6 + 7 * len(row) for w, row in rows.items())
    shards = 1
    while shards * SHARD_BYTES < size and shards < 1 << 16:
        shards *= 2
    return shards


def _dumps(doc: object) -> bytes:
    """Compact JSON (what a query downloads is the budget) with sorted keys: deterministic."""
    import orjson  # the writer's alone: the query side (the issue bot) is stdlib only

    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)  # as json.dumps's, 3x faster


def open_index(root: Path, site: Path | None = None) -> Index:
    """The index of a built site, or else the one of root/content: its copy in the cache
    when content/ is as it was when that was written, else compiled anew (and cached)."""
    if site:
        return Index(lambda url: (Path(site) / urls.output_path(url)).read_bytes())
    folder = Path(root) / CACHE_DIR
    stamp = _content_stamp(Path(root))
    try:
        if (folder / "stamp").read_text() == stamp:
            return Index(lambda url: (folder / urls.output_path(url)).read_bytes())
    except OSError:
        pass
    files = _content_index(Path(root))
    _write_cache(folder, stamp, files)
    return Index(files.__getitem__)


# The index of content/ as the site serves it, beside the build's parsed records
# (build.CACHE_DIR); safe to delete, as they are.
CACHE_DIR = ".errorkb-cache/search-index"


def _content_stamp(root: Path) -> str:
    """What the index of root/content depends on: its files (count, newest change, bytes)
    and the code that compiles them."""
    count = newest = size = 0
    folders: list[str | Path] = [root / "content"]
    while folders:
        with os.scandir(folders.pop()) as found:
            for entry in found:
                if entry.is_dir():
                    folders.append(entry.path)
                    continue
                st = entry.stat()
                count, newest, size = count + 1, max(newest, st.st_mtime_ns), size + st.st_size
    wings = [
        sys.modules[type(registry.wing(key)).__module__].__file__ for key in registry.available()
    ]
    modules = (__file__, rules.__file__, template.__file__, *wings)
    code = [os.stat(module or "").st_mtime_ns for module in modules]
    return f"{VERSION}:{count}:{newest}:{size}:{code}"


def site_index(content: "Content") -> dict[str, bytes]:
    """The tier-1 index files of a site as the build writes them: with its report link and
    the projects' hints."""
    repo, hints = content.site.get("repo"), project_hints(content)
    programs, base_url = project_programs(content), content.site["base_url"]
    return dict(index_files(entries(content), repo, hints, programs, base_url))


def _content_index(root: Path) -> dict[str, bytes]:
    from errorkb.content.load import load_content  # only here: the matcher itself is stdlib only

    return site_index(load_content(root))


def _write_cache(folder: Path, stamp: str, files: dict[str, bytes]) -> None:
    """The files under folder, swapped in whole: two commands may run at once."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        new = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".search-"))
        for url, body in files.items():
            target = new / urls.output_path(url)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        (new / "stamp").write_text(stamp)
        old = folder.with_name(new.name + "-old")
        if folder.exists():
            folder.rename(old)
        new.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    except OSError:
        pass  # a read-only tree, or another command swapped its copy in first


class FullTextError(Exception):
    """Pagefind failed; the message carries what it said."""


def full_text_index(site: Path, page_urls: list[str], out: Path) -> None:
    """Pagefind's chunked full-text index of these pages of `site`, written to `out`.

    Pagefind reads a folder: it gets one of hard links to just these pages, so it never
    spends time on pages that are not to be indexed. The folder is made inside the site
    being built, so that a killed build leaves it only in the half-made spare, which the
    next build discards whole.
    """
    with tempfile.TemporaryDirectory(dir=site, prefix=".pagefind-") as tmp:
        for url in page_urls:
            target = Path(tmp) / urls.output_path(url)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(site / urls.output_path(url), target)
        command = [_pagefind(), "--site", tmp, "--output-path", str(out)]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise FullTextError(f"pagefind failed (is pagefind[bin] installed?): {done.stderr}")


@functools.cache
def _pagefind() -> str:
    """Pagefind's executable, run directly: `python -m pagefind` would start an interpreter
    only to find it (a tenth of a second of every build)."""
    try:
        from pagefind_bin import get_executable
    except ImportError:
        raise FullTextError("pagefind is missing: pip install 'pagefind[bin]'") from None
    return str(get_executable())


def project_hints(content) -> dict[str, str]:
    """Each project's name -> a pattern of a line its logger starts (from its wing), for
    telling apart the records of two projects that print the same text."""
    hints = {}
    for project in sorted(content.projects.values(), key=lambda p: p.key):
        prefixes = registry.wing(project.wing_key).log_prefixes()
        hints[project.name] = "|".join(f"(?:{p})" for p in prefixes) or "(?!)"
    return hints


def project_programs(content) -> dict[str, dict]:
    """Each project's name -> {key, engine: whether it is a serving engine, repo, default:
    the site's `default_engine`}: what a paste that names it points at (its engine's advice
    first, the program its report names), which engine an issue filed in its repository
    runs, and whose copy of a message two engines print opens when nothing else tells."""
    default = content.site.get("default_engine")
    out = {}
    for p in sorted(content.projects.values(), key=lambda p: p.key):
        titles = registry.wing(p.wing_key).issue_titles()
        out[p.name] = {
            "key": p.key,
            "engine": p.kind == "engine",
            "repo": p.repo,
            **({"default": True} if p.key == default else {}),
            **({"titles": titles} if titles else {}),
        }
    return out

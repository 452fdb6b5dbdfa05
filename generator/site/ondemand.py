"""The site before its build has finished: each file rendered when it is first asked for,
from the loaded content, by the build's own Plan, and kept in memory.

Every file comes from the last build's site where its manifest has it at the key the plan
gives it (the key of what it declares it shows: shows.key_of), else is rendered: a record's
page, JSON and card by `Plan.record_outputs`; the outputs made from many records by
`Plan.producers`, a producer at a time (the shortest first), each consumed only as far as
the file asked for.
"""

import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from errorkb import urls
from errorkb.site.build import Plan
from errorkb.site.publish import site_manifest


class OnDemand:
    """The files of a plan's site by their path in the site folder (`errors/<id>/index.html`)."""

    def __init__(self, plan: Plan, site: Path):
        self.plan = plan
        self.site = site
        built = site_manifest(site)
        # path -> (record id, part, whether the built site has it at the plan's key)
        self._records: dict[str, tuple[str, str, bool]] = {}
        for rid, record in plan.content.records.items():
            for part, (url_list, key) in plan.record_parts(record).items():
                current = all(built.get(url, ("",))[0] == key for url in url_list)
                for url in url_list:
                    self._records[urls.output_path(url)] = (rid, part, current)
        self._vendored = {urls.output_path(url): source for url, source in plan.vendored}
        self._sizes = {urls.output_path(url): entry[1][0] for url, entry in built.items()}
        self._keys = {urls.output_path(url): entry[0] for url, entry in built.items()}
        self._made: dict[str, bytes] = {}  # rendered records' files
        self._shared: dict[str, Callable[[], bytes]] = {}  # the producers' files met so far
        self._producers = list(reversed(plan.producers().values()))  # not read through yet
        self._reading: Iterator | None = None  # what is left of the first of them
        self._lock = threading.Lock()  # one reader of the groups at a time
        # Full text: only a build makes it.
        folders = (urls.pagefind(""), urls.pagefind_newer(""))
        self._pagefind = tuple(urls.output_path(f).removesuffix("index.html") for f in folders)

    def locate(self, path: str) -> str | None:
        """`path` if the site has that file, else its folder's index page if it has that
        (the address wants its slash), else None."""
        wanted = (path, path.rstrip("/") + "/index.html")
        for known in (self._records, self._vendored):
            for candidate in wanted:
                if candidate in known:
                    return candidate
        if path.startswith(self._pagefind):  # the last build's until this one is done
            return path if path in self._sizes else None
        with self._lock:
            return self._search_producers(wanted)

    def get(self, path: str) -> bytes | None:
        """The bytes of the file at `path`, or None when the site has no such file."""
        return self.body(path) if self.locate(path) == path else None

    def body(self, path: str) -> bytes | None:
        """The bytes of a file `locate` found."""
        if path in self._made:
            return self._made[path]
        if path in self._records:
            return self._record_file(path, *self._records[path])
        if path in self._vendored:
            return self._vendored[path].read_bytes()
        if path.startswith(self._pagefind):
            return self._from_site(path)
        make = self._shared.get(path)
        if make is None:
            return None
        body = make()
        self._shared[path] = lambda: body  # a file page renders once
        return body

    def _record_file(self, path: str, rid: str, part: str, current: bool) -> bytes:
        if current and (built := self._from_site(path)) is not None:
            return built
        for url, body in self.plan.record_outputs(self.plan.content.records[rid], part):
            self._made[urls.output_path(url)] = body
        return self._made[path]

    def _built(self, path: str, make: Callable[[], bytes]) -> bytes:
        """The last build's file, where it is whole; else made."""
        built = self._from_site(path)
        return built if built is not None else make()

    def _from_site(self, path: str) -> bytes | None:
        """A file of the last build, if it is still there whole."""
        try:
            body = (self.site / path).read_bytes()
        except OSError:
            return None
        return body if len(body) == self._sizes.get(path) else None

    def _search_producers(self, wanted: tuple[str, ...]) -> str | None:
        """Read on through the producers until a wanted file turns up, or none is left."""
        for candidate in wanted:
            if candidate in self._shared:
                return candidate
        while self._producers:
            if self._reading is None:
                self._reading = iter(self._producers[0]())
            for unit in self._reading:
                path = urls.output_path(unit.url)
                current = self._keys.get(path) == unit.key
                self._shared[path] = partial(self._built, path, unit.body) if current else unit.body
                if path in wanted:
                    return path
            self._producers.pop(0)
            self._reading = None
        return None

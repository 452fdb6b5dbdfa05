"""The site the bot answers from: a built folder, or a published site over HTTP.

Over HTTP each file is fetched with a timeout and kept in a cache folder; the index's
first file (search/index.json) is fetched every run, and when it changed, the files kept
from the site as it was are dropped, so that a run never mixes two builds' shards.
"""

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from errorkb.search import engine
from errorkb.site import urls

TIMEOUT = 10  # seconds a request to the site may take
MAX_FILE = 8 * 1024 * 1024  # bytes of one file of the site: an index shard is a few KB
USER_AGENT = "errorkb-triage (+https://github.com/errorkb/errorkb)"


class SiteError(OSError):
    """The site cannot be read: the message says what and why."""


class Site:
    """The tier-1 index and the records' JSON documents of one site."""

    def __init__(self, fetch: Callable[[str], bytes]):
        self._fetch = fetch
        try:
            self.index = engine.Index(fetch)
        except (OSError, ValueError) as exc:
            raise SiteError(f"no search index: {exc}") from exc
        self._documents: dict[str, dict | None] = {}

    def document(self, record_id: str) -> dict | None:
        """The record's JSON document (/api/errors/<id>.json), or None when unreadable."""
        if record_id not in self._documents:
            try:
                self._documents[record_id] = json.loads(self._fetch(urls.error_json(record_id)))
            except (OSError, ValueError):
                self._documents[record_id] = None
        return self._documents[record_id]


def from_folder(folder: Path) -> Site:
    return Site(lambda url: (Path(folder) / urls.output_path(url)).read_bytes())


def from_url(index_url: str, cache: Path | None = None) -> Site:
    """The site whose tier-1 index is at `index_url` (https://errorkb.dev/search/index.json)."""
    if urlsplit(index_url).scheme not in ("http", "https"):
        raise SiteError(f"--index takes an http(s) address, not {index_url!r}")
    folder = (cache or default_cache()) / hashlib.sha256(index_url.encode()).hexdigest()[:16]
    fresh = _get(index_url)
    if _cached(folder, index_url) != fresh:
        shutil.rmtree(folder, ignore_errors=True)
        _store(folder, index_url, fresh)

    def fetch(url: str) -> bytes:
        if url == urls.search_index():
            return fresh
        full = urljoin(index_url, url)
        body = _cached(folder, full)
        if body is None:
            body = _get(full)
            _store(folder, full, body)
        return body

    return Site(fetch)


def default_cache() -> Path:
    base = os.environ.get("ERRORKB_CACHE") or Path.home() / ".cache" / "errorkb"
    return Path(base) / "triage"


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            body = response.read(MAX_FILE + 1)
    except urllib.error.HTTPError as exc:
        raise SiteError(f"{url}: HTTP {exc.code}") from None
    except (OSError, ValueError) as exc:  # refused, timed out, a bad address
        raise SiteError(f"{url}: {exc}") from None
    if len(body) > MAX_FILE:
        raise SiteError(f"{url}: over {MAX_FILE} bytes")
    return body


def _key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _cached(folder: Path, url: str) -> bytes | None:
    try:
        return (folder / _key(url)).read_bytes()
    except OSError:
        return None


def _store(folder: Path, url: str, body: bytes) -> None:
    """Kept for the next run; a cache that cannot be written only costs requests."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{_key(url)}.{os.getpid()}"
        tmp.write_bytes(body)
        tmp.replace(folder / _key(url))
    except OSError:
        pass

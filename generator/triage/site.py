"""The site the bot answers from: a built folder, or a published site over HTTP.

Over HTTP each file is fetched with a timeout and kept in a cache folder; the index's
first file (search/index.json) is fetched every run, and when it changed, the files kept
from the site as it was are dropped, so that a run never mixes two builds' shards.

The index says where the site lives (its absolute page URL and API base: a docs site's
sub-path included), which format it is in, and the rules it was built with: the bot reads
only its own format, and matches by the index's rules (not those of the errorkb installed),
so that a bot of one release answers from a site built by another as the site's search
does.
"""

import hashlib
import json
import os
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeGuard
from urllib.parse import quote, urljoin, urlsplit

from errorkb import urls
from errorkb.search import engine

TIMEOUT = 10  # seconds a request to the site may take
MAX_FILE = 8 * 1024 * 1024  # bytes of one file of the site: an index shard is a few KB
USER_AGENT = "errorkb-triage (+https://github.com/errorkb/errorkb)"


class SiteError(OSError):
    """The site cannot be read: the message says what and why."""


class BadIndex(ValueError):
    """The site's index is not one this errorkb reads: the message says why."""


class Site:
    """The tier-1 index and the records' JSON documents of one site: `fetch(url)` reads the
    index's files (root-relative URLs), `fetch_api(base, path)` the API's (the index's
    API base, and a path below it)."""

    def __init__(
        self,
        where: str,
        fetch: Callable[[str], bytes],
        fetch_api: Callable[[str, str], bytes],
    ):
        self._fetch_api = fetch_api
        try:
            self.index = engine.Index(fetch)
        except OSError as exc:
            raise SiteError(f"no search index: {exc}") from exc
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            raise BadIndex(f"{where}: not JSON, so not a search index") from None
        self.page_url = _checked(self.index.meta, where)
        self._documents: dict[str, dict | None] = {}

    def page(self, result: engine.Result) -> str:
        """The result's page, absolute, with the values in its address."""
        query = result.url.partition("?")[2]
        page = self.page_url.replace("{}", quote(result.id, safe=""))
        return page + ("?" + query if query else "")

    def document(self, record_id: str) -> dict | None:
        """The record's JSON document (<api>/errors/<id>.json), or None when unreadable."""
        if record_id not in self._documents:
            try:
                path = f"errors/{quote(record_id, safe='')}.json"
                body = self._fetch_api(self.index.meta["api_base"], path)
                doc = json.loads(body)
            except (OSError, ValueError, RecursionError):
                doc = None
            self._documents[record_id] = doc if isinstance(doc, dict) else None
        return self._documents[record_id]


def _checked(meta: object, where: str) -> str:
    """The index's page URL, once its settings are checked to be what the bot reads;
    BadIndex says the first that is not."""
    if not isinstance(meta, dict) or not isinstance(meta.get("version"), int):
        raise BadIndex(f"{where}: not an errorkb search index (no format version)")
    if meta["version"] != engine.VERSION:
        raise BadIndex(
            f"{where}: an index of format {meta['version']}; this errorkb reads format "
            f"{engine.VERSION}: run the errorkb release the site was built with"
        )
    problem = _problem(meta)
    if problem:
        raise BadIndex(f"{where}: not a search index errorkb reads: {problem}")
    return meta["page_url"]


def _problem(meta: dict) -> str:
    """What is wrong with the index's settings that the search reads, or ""."""
    shards = meta.get("shards")
    if not _count(shards) or shards & (shards - 1):
        return "'shards' is no power of two"
    if not _count(meta.get("page")):
        return "'page' is no count"
    for key in ("words_url", "patterns_url"):
        if not isinstance(meta.get(key), str) or "{}" not in meta[key]:
            return f"'{key}' is no URL template"
    for key in ("page_url", "api_base"):
        if not _absolute(meta.get(key)):
            return f"'{key}' is no absolute http(s) URL"
    if "{}" not in meta["page_url"]:
        return "'page_url' has no place for the record's id"
    hints, programs = meta.get("hints"), meta.get("programs")
    if not isinstance(hints, dict) or not all(_pattern(p) for p in hints.values()):
        return "'hints' is no table of patterns"
    if not isinstance(programs, dict) or not all(_program(p) for p in programs.values()):
        return "'programs' is no table of {key, engine}"
    for key in ("query", "rules", "how", "ranks"):
        if not isinstance(meta.get(key), dict):
            return f"'{key}' is no table of the rules it was built with"
    try:
        engine.context(meta)
    except (KeyError, TypeError, AttributeError, re.error) as exc:
        return f"its rules do not compile ({type(exc).__name__}: {exc})"
    return ""


def _count(value: object) -> TypeGuard[int]:
    return type(value) is int and value > 0


def _absolute(url: object) -> bool:
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
    except ValueError:  # an unclosed IPv6 bracket
        return False
    return bool(parts and parts.scheme in ("http", "https") and parts.netloc)


def _pattern(value: object) -> bool:
    try:
        return isinstance(value, str) and re.compile(value) is not None
    except re.error:
        return False


def _program(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("key"), str)
        and isinstance(value.get("engine"), bool)
    )


def from_folder(folder: Path) -> Site:
    """A built site's folder (its API in api/)."""
    return Site(
        str(folder),
        lambda url: (Path(folder) / urls.output_path(url)).read_bytes(),
        lambda base, path: (Path(folder) / "api" / path).read_bytes(),
    )


def from_url(index_url: str, cache: Path | None = None) -> Site:
    """The site whose tier-1 index is at `index_url` (https://docs.example.org/errors/search/index.json)."""
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
        return _kept(folder, urljoin(index_url, url))

    return Site(index_url, fetch, lambda base, path: _kept(folder, urljoin(base, path)))


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


def _kept(folder: Path, url: str) -> bytes:
    """The file at the URL: from the cache folder, else fetched and kept there."""
    body = _cached(folder, url)
    if body is None:
        body = _get(url)
        _store(folder, url, body)
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

"""Publishing a site: the writer, the manifests, the spare folder, the lock and the swap.

Every build publishes through this module's one step, `publishing`, whatever made the outputs
(the full build, the quick rebuild, the spare's preparation): under `locked`, a writer opened
on the spare (`open_spare` for a build that writes every output, `open_following` for one
that writes a few into a copy of the live site), then on success the spare's leftovers
removed, its manifest saved and the spare swapped in, in one rename(2) exchange where the
kernel offers it. A failed or killed build never touches the live site, and leaves the spare
without a manifest: the next build starts it afresh.

Each site folder has a manifest (URL -> key, stamp, facts) beside it, named after the folder's
inode, so the manifest follows its folder through the swap and is never published with the
site. The spare is the site the last swap left behind: a build touches only the files whose
key differs from what the spare holds (and that are still there with their stamp),
hard-linking them from the live site where they are current there, rendering the rest. A
folder without a manifest that is not empty is not a site errorkb built: it is refused
rather than parked and deleted.

Files of the spare may be hard links to the live site's, so the writer never opens an
existing file for writing: every output is a new file (O_EXCL), made after unlinking whatever
name was there. The live site changes only in the final exchange.
"""

import ctypes
import errno
import fcntl
import functools
import hashlib
import marshal
import os
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import cast

import orjson

from errorkb import owned, urls
from errorkb.site import check

OLD_PREFIX = ".site-old-"  # a discarded spare, being deleted in the background
LEGACY_MANIFEST = ".errorkb-manifest.json"  # where sites built before kept their manifest
TREE = "*"  # manifest entry "<folder>/*": the key of a folder a tool writes as a whole
QUICK_STATE = "quick.marshal"  # what the quick rebuild keeps (quick.py), beside the manifests


class BuildError(Exception):
    """The build cannot run (a missing dependency); the message says what to do."""


def site_manifest(out: Path) -> dict[str, list]:
    """url -> [key, stamp, facts] of each file of the site built into `out` (empty if none)."""
    return _read_manifest(out, out)


# Writing -----------------------------------------------------------------------------------


# A file's stamp: its size and modification time, as the writer left it. A file deleted,
# truncated or written into since (by hand: the writer never opens a file it made) no longer
# has it, and is made anew rather than published.
Stamp = tuple[int, int]
Entry = tuple[str, Stamp, "check.Facts | None"]  # a file's manifest entry: key, stamp, facts


def _stamp(path: str | Path) -> Stamp:
    st = os.lstat(path)
    return st.st_size, st.st_mtime_ns


class Writer:
    """Makes `root` hold exactly the outputs it is given, touching only what differs."""

    def __init__(
        self,
        root: Path,
        kept: dict,
        live_site: Path | None,
        live: dict,
        others: frozenset[str] = frozenset(),
        follows: bool = False,
    ):
        self.root = root
        self.follows = follows  # made to hold the live site's files (open_following)
        self._root_prefix = os.fspath(root) + "/"
        self.kept = kept  # url -> [key, stamp, facts] already in root
        self.live_site = live_site
        self.live = live  # url -> [key, stamp, facts] of the live site
        self.others = others  # files in root that are not ours (a host site's): never replaced
        self.manifest: dict[str, Entry] = {}
        self.rendered = 0
        self._last_written: tuple[bytes, str] | None = None

    @property
    def files(self) -> int:
        return sum(1 for url in self.manifest if not url.endswith(TREE))

    @property
    def size(self) -> int:
        """Bytes written (a class attribute named `bytes` would hide the type)."""
        return sum(entry[1][0] for entry in self.manifest.values())

    def write(self, url: str, body: bytes, key: str, facts: "check.Facts | None" = None) -> None:
        """A new file (`facts`: those of `body`, where a worker took them already)."""
        last = self._last_written
        if last is not None and last[0] is body:
            # The same bytes at a second URL (a record's JSON): a hard link is a tenth of
            # the cost of creating and filling a file.
            path = self._create(url, lambda path: os.link(last[1], path))
        else:
            path = self._create(url, lambda path: _write_new(path, body))
        self._last_written = (body, path)
        self.manifest[url] = (key, _stamp(path), facts or check.facts(url, body))
        self.rendered += 1

    def twin(self) -> "Writer":
        """A writer for a worker process: same folder and knowledge, its own manifest."""
        return Writer(self.root, self.kept, self.live_site, self.live, self.others, self.follows)

    def merge(self, manifest: dict[str, Entry], rendered: int) -> None:
        """What a worker process put into this folder."""
        self.manifest.update(manifest)
        self.rendered += rendered

    def copy(self, url: str, source: Path) -> None:
        """A vendored file, keyed by its bytes (not its time, which differs between two
        installs of the same package): kept, linked from the live site, or copied."""
        key = digest(source)
        if not self.reuse([url], key):
            path = self._create(url, functools.partial(_copy_new, source))
            body = source.read_bytes() if check.described(url) else b""
            self.manifest[url] = (key, _stamp(path), check.facts(url, body))
            self.rendered += 1

    def reuse(self, url_list: list[str], key: str) -> bool:
        """True when these outputs are already current here, or now linked from the live site.
        A manifest is trusted only for files still there with their stamp: someone may have
        deleted, truncated or written into one since."""
        if _current(self.root, self.kept, url_list, key):
            for url in url_list:
                self.manifest[url] = (key, *self.kept[url][1:])  # its stamp and facts
            return True
        if self.live_site is None or not _current(self.live_site, self.live, url_list, key):
            return False
        try:
            for url in url_list:
                source = self.live_site / safe_output_path(url)
                self._create(url, functools.partial(os.link, source))
        except FileNotFoundError:
            return False  # the live site lost a file since: render it instead
        for url in url_list:
            self.manifest[url] = (key, *self.live[url][1:])
        return True

    def reuse_tree(self, folder: str, key: str) -> bool:
        """A generated folder (Pagefind's) whose key is unchanged: kept or linked."""
        for known in (self.kept, self.live):
            if known.get(folder + TREE, (None,))[0] == key:
                names = [u for u in known if u.startswith(folder) and not u.endswith(TREE)]
                if self.reuse(names, key):
                    self.manifest[folder + TREE] = (key, (0, 0), None)  # no file of its own
                    return True
        return False

    def add_tree(self, folder: str, key: str) -> None:
        """Record a folder a tool wrote, file by file, under one key."""
        for path in sorted((self.root / folder.strip("/")).rglob("*")):
            if path.is_file():
                url = "/" + path.relative_to(self.root).as_posix()
                facts = check.facts(url, path.read_bytes()) if check.described(url) else None
                self.manifest[url] = (key, _stamp(path), facts)
                self.rendered += 1
        self.manifest[folder + TREE] = (key, (0, 0), None)  # no file of its own

    def finish(self) -> None:
        """Remove what the spare held but this site no longer has."""
        for url in self.kept.keys() - self.manifest.keys():
            if not url.endswith(TREE):
                path = self.root / safe_output_path(url)
                path.unlink(missing_ok=True)
                _prune(path.parent, self.root)

    def _create(self, url: str, make: Callable[[str], None]) -> str:
        """Make the file of a URL as a new file: `make` must create it (O_EXCL or link) and
        never open what is there, which may be a hard link to the live site. (Plain string
        paths: pathlib's objects cost more than the system calls, for every file of a site.)"""
        rel = safe_output_path(url)
        if rel in self.others:
            raise OccupiedError(rel, url)
        path = self._root_prefix + rel
        try:
            if url in self.kept:
                with suppress(FileNotFoundError):
                    os.unlink(path)
            try:
                make(path)
            except FileNotFoundError:
                _make_folder(os.path.dirname(path))
                make(path)
            except FileExistsError:  # a file the spare held without knowing it
                os.unlink(path)
                make(path)
        except (NotADirectoryError, IsADirectoryError) as exc:
            raise UnsafeOutputError(
                f"cannot write {url!r}: another output is a file where it needs a folder, "
                f"or a folder where it needs a file ({exc.filename})"
            ) from None
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise UnsafeOutputError(f"cannot write {url!r}: a name in it is too long") from None
        # What root held at this URL is gone: a later reuse must not take the new file for
        # the old one of the same size (a quick rebuild links the live site's files first,
        # then an edit undone asks for the old page back).
        self.kept.pop(url, None)
        return path


def _current(root: Path, known: dict, url_list: list[str], key: str) -> bool:
    """Whether `known` (a manifest of root) has these URLs at this key, and their files are
    there with the stamp it says. (A plain string path: this runs for every output of every
    build, and pathlib's objects cost more than the lstat.)"""
    base = os.fspath(root) + "/"
    for url in url_list:
        entry = known.get(url)
        if entry is None or entry[0] != key:
            return False
        try:
            st = os.lstat(base + safe_output_path(url))
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != entry[1]:
            return False
    return True


def damaged(root: Path, known: "Keys", url_list: Iterable[str]) -> list[str]:
    """The URLs among these whose files in root are gone or not as `known` stamped them.
    (Relative to the root's open folder: a site's 78,000 lstats in half the time. Only
    looked at, never written, so the output path needs no check of where it leads.)"""
    found = []
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for url in url_list:
            try:
                st = os.lstat(urls.output_path(url), dir_fd=folder)
            except OSError:
                found.append(url)
                continue
            if (st.st_size, st.st_mtime_ns) != known[url][1]:
                found.append(url)
    finally:
        os.close(folder)
    return found


def digest(path: Path) -> str:
    st = path.stat()
    return _file_digest(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    """A file's hash, read once per process while its size and time stay (serve rebuilds
    would otherwise read Pyodide's 13 MB on every edit)."""
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha1").hexdigest()


class UnsafeOutputError(BuildError):
    """An output path that would leave the site folder: a bug or hostile content."""


class OccupiedError(BuildError):
    """An output whose file is someone else's: a host site's page or file."""

    def __init__(self, path: str, url: str):
        super().__init__(path, url)  # as they are: a worker's error is pickled to the build
        self.path, self.url = path, url

    def __str__(self) -> str:
        return f"cannot write {self.url!r}: {self.path} is not errorkb's file"


def safe_output_path(url: str) -> str:
    """The file of a URL relative to the site root, refused unless it stays inside it: the
    second wall behind content validation, checked on every file the writer touches."""
    path = urls.output_path(url)
    parts = path.split("/")
    if "\0" in path or "\\" in path or any(part in ("", ".", "..") for part in parts):
        raise UnsafeOutputError(f"refusing to write {url!r}: its path would leave the site folder")
    return path


def _copy_new(source: Path, path: str | Path) -> None:
    """A new file with the source's bytes, copied by the kernel where it can (Pyodide's
    13 MB, read into Python and written back, were a quarter of a small site's build). A
    copy, not a link: a site goes to hosts that refuse hard links (GitHub Pages)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(source, "rb") as src:
            if not _kernel_copy(src.fileno(), fd):
                os.lseek(fd, 0, os.SEEK_SET)  # from the start, whatever it copied
                os.ftruncate(fd, 0)
                src.seek(0)
                _write_all(fd, src.read())
    except OSError as exc:  # a full disk, say: name the file
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(fd)


def _kernel_copy(src: int, dst: int) -> bool:
    """Copy one open file into another within the kernel; False where it cannot (not
    Linux, or file systems it cannot copy between)."""
    copy_range = getattr(os, "copy_file_range", None)
    if copy_range is None:
        return False
    try:
        while copy_range(src, dst, 1 << 30):
            pass
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
            return False
        raise
    return True


def _write_all(fd: int, body: bytes) -> None:
    view = memoryview(body)
    while view:
        view = view[os.write(fd, view) :]


def _write_new(path: str | Path, body: bytes) -> None:
    """A new file with these bytes, in three system calls (Python's open() adds a stat, a
    seek and a terminal check to each of the site's tens of thousands of files). O_EXCL: an
    existing file, perhaps linked to the live site, is never written into."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _write_all(fd, body)
    except OSError as exc:  # a full disk, say: os.write's error names no file, so name it
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(fd)


def _make_folder(path: str) -> None:
    """A file's folder, its parents too where missing: one system call where only the
    folder is (a record's), where os.makedirs first asks after its parent."""
    try:
        os.mkdir(path)
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        pass  # made since, by another output: whether it is a folder, the next call says


def _prune(folder: Path, root: Path) -> None:
    """Remove folders left empty, up to the site root."""
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


# Manifests -------------------------------------------------------------------------------


def manifests_folder(out: Path) -> Path:
    """The folder of the manifests of a site and its spare, beside them (ignored as .site-*)."""
    return out.parent / f".{out.name}-manifests"


def manifest_path(folder: Path, out: Path) -> Path | None:
    """Where the manifest of a site folder lives: named after the folder's inode, which a
    rename keeps, so each manifest stays with its folder through the swap. It is two parts:
    this file, each URL's key and size, and beside it (FACTS) the facts of the pages, in
    shards by URL, which a quick rebuild links from the live site's but for the few it
    changed (the facts are four fifths of the bytes)."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    return manifests_folder(out) / f"{st.st_dev}-{st.st_ino}.keys"


# The facts of a manifest, in shards a quick rebuild reads and writes only where it changed
# pages: 64 shards of the real content's were 480 KB each, 90 ms of JSON per edit. The
# folder's name counts them, so that no build mixes shards of two counts.
FACT_SHARDS = 256
FACTS = f".facts{FACT_SHARDS}"  # the folder, beside the manifest's keys


def _fact_shard(url: str) -> int:
    return zlib.crc32(url.encode()) % FACT_SHARDS


def _read_manifest(folder: Path, out: Path) -> dict[str, list]:
    """url -> [key, stamp, facts] of the files a site folder holds (empty: none known)."""
    keys = read_keys(folder, out)
    path = manifest_path(folder, out)
    if not keys or path is None:
        return {}
    facts: dict = {}
    shards = path.with_suffix(FACTS)
    try:  # a shard no page falls in has no file (a small site fills a few of them)
        for name in os.listdir(shards):
            facts.update(orjson.loads((shards / name).read_bytes()))
    except (OSError, ValueError):
        return {}  # half-made: trust none of its files
    # A page without its facts is made anew (a manifest of a build from before facts).
    found = ((url, entry, facts.get(url)) for url, entry in keys.items())
    return {
        url: [*entry, f] for url, entry, f in found if f is not None or not check.described(url)
    }


def read_keys(folder: Path, out: Path) -> "Keys":
    """url -> (key, stamp) of the files a site folder holds (empty: none known)."""
    return read_keys_file(folder, out)[0]


# A keys file: marshal of (keys, spare). `keys`: url -> (key, stamp). `spare`: how the folder
# the build swapped out (the spare from then on) differs, so that the next quick rebuild need
# not read its manifest: (the stamp of its keys file, {url: its (key, stamp), None where it
# has no file}), or None.
Keys = dict[str, tuple[str, Stamp]]
Delta = dict[str, tuple[str, Stamp] | None]  # url -> another folder's entry, None: no file
SpareDelta = tuple[tuple, Delta] | None


def read_keys_file(folder: Path, out: Path) -> tuple[Keys, SpareDelta]:
    """The keys of a site folder's manifest, and how its spare differs (empty, None: not
    known)."""
    path = manifest_path(folder, out)
    try:
        data = marshal.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError, EOFError, TypeError):
        return {}, None  # no site there, or a half-made one: trust none of its files
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], dict):
        return data
    return (data, None) if isinstance(data, dict) else ({}, None)  # a plain dict: older


def keys_stamp(folder: Path, out: Path) -> tuple:
    """The keys file of a site folder's manifest (each build writes a new one); empty where
    there is none (a copied site's folders are not the inodes its manifests are named after)."""
    path = manifest_path(folder, out)
    try:
        st = os.stat(path) if path else None
    except FileNotFoundError:
        return ()
    return (str(path), st.st_ino, st.st_mtime_ns, st.st_size) if st else ()


def _differences(keys: dict, other: dict) -> Delta:
    """url -> other's (key, stamp), or None where other has no such URL, for each URL at which
    the two differ. An entry that is other's own object is equal unlooked at: a quick
    rebuild's manifest is a copy of the live site's but for what it changed."""
    delta: Delta = {}
    for url, entry in keys.items():
        was = other.get(url)
        if was is not entry and (was is None or tuple(was[:2]) != tuple(entry[:2])):
            delta[url] = None if was is None else (was[0], was[1])
    for url in other.keys() - keys.keys():
        delta[url] = (other[url][0], other[url][1])
    return delta


def _save_manifest(
    folder: Path,
    out: Path,
    manifest: dict,
    like: Path | None = None,
    changed: frozenset[str] | set[str] = frozenset(),
    replaced: Keys | None = None,
) -> None:
    """The manifest of a folder, written facts first (the keys say the facts are whole). With
    `like`: a folder whose manifest's facts are this one's but for the `changed` URLs'.
    `replaced`: the keys of the live site this folder replaces, whose differences from this
    one it keeps (the next quick rebuild's spare)."""
    path = manifest_path(folder, out)
    assert path is not None, "the folder a build wrote exists"
    path.parent.mkdir(exist_ok=True)
    facts_dir = path.with_suffix(FACTS)
    new_dir = path.with_suffix(FACTS + ".new")
    shutil.rmtree(new_dir, ignore_errors=True)
    new_dir.mkdir()
    shards: dict[int, dict] = {}
    if like is None:
        shards = {n: {} for n in range(FACT_SHARDS)}
        for url, entry in manifest.items():
            if len(entry) > 2 and entry[2] is not None:
                shards[_fact_shard(url)][url] = entry[2]
    else:
        known = manifest_path(like, out)
        assert known is not None, "the folder whose facts are shared exists"
        source = known.with_suffix(FACTS)
        touched = {_fact_shard(url) for url in changed if check.described(url)}
        for n in range(FACT_SHARDS):
            shard = source / str(n)
            held = shard.exists()  # a shard no page falls in has no file
            if n not in touched:
                if held:
                    os.link(shard, new_dir / str(n))
                continue
            facts = orjson.loads(shard.read_bytes()) if held else {}
            for url in (u for u in changed if check.described(u) and _fact_shard(u) == n):
                entry = manifest.get(url)
                facts.pop(url, None)
                if entry is not None and len(entry) > 2 and entry[2] is not None:
                    facts[url] = entry[2]
            shards[n] = facts
    for n, facts in shards.items():
        if facts:
            _write_new(new_dir / str(n), orjson.dumps(facts, default=list))  # Facts: tuples
    shutil.rmtree(facts_dir, ignore_errors=True)
    new_dir.rename(facts_dir)
    if like is None:
        keys = {url: (entry[0], entry[1]) for url, entry in manifest.items()}
    else:  # only the changed URLs' entries hold facts: the others' are like's
        keys = dict(manifest)
        keys.update((url, manifest[url][:2]) for url in changed if url in manifest)
    spare: SpareDelta = None
    if replaced and (stamp := keys_stamp(out, out)):
        spare = (stamp, _differences(keys, replaced))
    temporary = path.with_suffix(".new")
    temporary.unlink(missing_ok=True)
    _write_new(temporary, marshal.dumps((keys, spare)))
    temporary.replace(path)


def _forget_manifest(spare: Path, out: Path) -> None:
    """The spare is about to change: its manifest no longer tells what it holds."""
    path = manifest_path(spare, out)
    if path:
        path.unlink(missing_ok=True)
        shutil.rmtree(path.with_suffix(FACTS), ignore_errors=True)


def _prune_manifests(out: Path) -> None:
    """Only the manifests of the site and its spare stay: a folder deleted by hand must not
    lend its manifest to a new folder that gets its inode number."""
    keep = {manifest_path(out, out), manifest_path(spare_path(out), out)}
    keep |= {p.with_suffix(FACTS) for p in keep if p is not None}
    folder = manifests_folder(out)
    if folder.is_dir():
        for path in folder.iterdir():
            if path in keep or path.name == QUICK_STATE:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


class NotOurSiteError(BuildError):
    """The output folder holds files that no errorkb build wrote."""


def _own_site(out: Path) -> dict[str, list]:
    """The manifest of the live site; refuses a folder errorkb did not build, which the swap
    would park as the spare and the next build delete."""
    path = manifest_path(out, out)
    legacy = path is not None and path.with_suffix(".json").is_file()  # before keys and facts
    _prune_manifests(out)
    manifest = _read_manifest(out, out)
    if manifest or read_keys(out, out) or legacy or (out / LEGACY_MANIFEST).is_file():
        return manifest  # built by errorkb (an older one, perhaps, without the marker)
    try:
        owned.refuse_unless_ours(out, "the built site", "--out")
    except owned.NotOursError as exc:
        raise NotOurSiteError(str(exc)) from None
    return {}


def spare_follows(out: Path, live: Keys) -> bool:
    """Whether the spare holds what the live site (its keys `live`) holds, as its manifest
    says: then a quick rebuild links nothing into it before writing its edit."""
    spare = read_keys(spare_path(out), out)
    return spare.keys() == live.keys() and all(spare[u][0] == e[0] for u, e in live.items())


def spare_path(out: Path) -> Path:
    return out.parent / f".{out.name}-spare"


def _spare(out: Path, live: Keys | None = None, delta: Delta | None = None) -> tuple[Path, dict]:
    """The folder to build in and what it holds: the spare site, or a fresh folder. What it
    holds: with its pages' facts; with the `live` site's keys, only keys and sizes, those
    patched by `delta` where it is known how the spare differs, else read."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(out.parent)
    spare = spare_path(out)
    kept: dict
    if live is None:
        kept = _read_manifest(spare, out)
    else:
        kept = read_keys(spare, out) if delta is None else patched(live, delta)
    if spare.exists() and not kept:
        try:  # a folder of that name that errorkb did not make is someone's: never deleted
            owned.refuse_unless_ours(spare, f"the spare copy of {out}", "--out")
        except owned.NotOursError as exc:
            raise NotOurSiteError(str(exc)) from None
        _discard(spare)  # half-made by a killed build: unknown content
    spare.mkdir(exist_ok=True)
    owned.mark(spare, "a site errorkb builds, or its spare copy")
    _forget_manifest(spare, out)  # from here on, the spare is being changed
    return spare, kept


def patched(keys: Keys, delta: Delta) -> Keys:
    """Keys changed as `delta` says (_differences): a 5 MB read and a comparison of 78,000
    entries fewer for a quick rebuild of the real content."""
    result = dict(keys)
    for url, entry in delta.items():
        if entry is None:
            result.pop(url, None)
        else:
            result[url] = entry
    return result


@contextmanager
def locked(out: Path, log=None):
    """One build at a time per site: they share the spare folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}-lock", "w") as lock:  # ignored as .site-*
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if log:
                log(f"waiting for another build of {out} to finish")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _remove_abandoned(parent: Path) -> None:
    """Discarded folders whose deleting process is gone."""
    for path in parent.iterdir():
        pid = path.name.removeprefix(OLD_PREFIX).split("-")[0]
        if path.name.startswith(OLD_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _discard(folder: Path) -> None:
    """Move a folder aside and delete it in the background, off the build's path."""
    parked = folder.parent / f"{OLD_PREFIX}{os.getpid()}-{time.time_ns()}"
    folder.rename(parked)
    rm = shutil.which("rm")
    if rm is None:
        shutil.rmtree(parked)
        return
    subprocess.Popen(
        [rm, "-rf", "--", str(parked)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _swap_in(spare: Path, out: Path) -> None:
    """The finished spare becomes the site; the site it replaces becomes the spare."""
    if not out.exists():
        spare.rename(out)
    elif not _exchange(spare, out):
        parked = out.parent / f"{OLD_PREFIX}{os.getpid()}-{time.time_ns()}"
        out.rename(parked)
        spare.rename(out)
        parked.rename(spare)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


# The one publish step ------------------------------------------------------------------------


def open_spare(out: Path) -> "Writer":
    """A writer into the spare for a build that writes every output: the spare keeps what
    its manifest says it holds, the live site lends what is current there. Refuses an `out`
    or a spare errorkb did not build. Call under `locked`."""
    live = _own_site(out)
    spare, kept = _spare(out)
    return Writer(spare, kept, out if out.exists() else None, live)


def open_following(out: Path) -> "Writer | None":
    """A writer into the spare made to hold what the live site holds, for a build that
    writes a few outputs: the files the last build changed linked from the live site, the
    others kept once each is seen to be as it was stamped (a full-text index is left to
    its writer). None where there is no live site, or a file is in neither folder as
    stamped (the spare's manifest is forgotten: the next build makes it anew). Call under
    `locked`."""
    live, spare_delta = read_keys_file(out, out)
    if not live:
        return None
    told = None  # how the spare differs, while its manifest is the one the live's build saw
    if spare_delta is not None and spare_delta[0] == keys_stamp(spare_path(out), out):
        told = spare_delta[1]
    spare, kept = _spare(out, live, told)
    writer = Writer(spare, kept, out, live, follows=True)
    trees = tuple(u.removesuffix(TREE) for u in live if u.endswith(TREE))
    # The spare holds most of the live site's files as they are: only the URLs at which the
    # live site's build said they differ are looked at, else all, compared as sets of
    # entries (three times as fast as a loop over the URLs).
    try:
        if told is not None:
            differing = {(url, live[url]) for url in told if url in live}
        else:
            differing = live.items() - kept.items()
    except TypeError:  # entries that are not (key, size) tuples: not a manifest we wrote
        return None
    writer.manifest = cast(dict[str, Entry], dict(live))  # their keys and sizes
    if trees:  # left to the full-text index's writer
        for url in [url for url in live if url.startswith(trees)]:
            del writer.manifest[url]
    differing_urls = {url for url, _ in differing}
    kept_urls = (url for url in writer.manifest if url not in differing_urls)
    for url in damaged(spare, live, kept_urls):
        differing.add((url, live[url]))  # deleted or altered by hand since: from the live
    for url, entry in differing:
        if not url.startswith(trees) and not writer.reuse([url], entry[0]):
            return None
    return writer


@contextmanager
def publishing(out: Path, writer: "Writer", swap: bool = True) -> Iterator["Writer"]:
    """What the body writes with `writer` (from open_spare or open_following, under
    `locked`) is published when it returns: the spare's leftovers removed, its manifest
    saved, and, with `swap`, the spare swapped in for the live site. A body that raises
    leaves the spare without a manifest, and the live site as it was."""
    spare = writer.root
    try:
        yield writer
        writer.finish()
        replaced = None
        if swap:  # the live site's keys, whose differences the next quick rebuild is told
            replaced = writer.live if writer.follows else read_keys(out, out)
        if writer.follows:  # only the URLs written hold facts: the others' are the live's
            written = {url for url, entry in writer.manifest.items() if len(entry) > 2}
            _save_manifest(spare, out, writer.manifest, out, written, replaced)
        else:
            _save_manifest(spare, out, writer.manifest, replaced=replaced)
    except BaseException:
        _forget_manifest(spare, out)  # half-made: the next build starts over
        raise
    if swap:
        _swap_in(spare, out)

"""The build: content -> a complete site in a staging folder, swapped in atomically.

A failed or killed build never touches the live site: everything is written to a
sibling staging folder, and only a finished one replaces the old site, in one
rename(2) exchange where the kernel offers it.
"""

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from generator import api, markup, search, urls
from generator.linking import link
from generator.pages import Pages
from generator.records import load_content

STAGING_PREFIX = ".site-build-"
OLD_PREFIX = ".site-old-"

# The calculator in the browser: Pyodide's core files (npm `pyodide`, pinned in
# package.json) under /pyodide/, and the calc module served byte for byte.
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
CALC_MODULE = Path(__file__).with_name("calc.py")
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class BuildError(Exception):
    """The build cannot run (a missing dependency); the message says what to do."""


@dataclass
class BuildResult:
    out: Path
    files: int
    bytes: int
    records: int
    seconds: float


def build(root: Path, out: Path | None = None, log=None) -> BuildResult:
    """Validate content, render every file, and swap the new site in. Raises ContentError."""
    started = time.perf_counter()
    root = Path(root).resolve()
    out = Path(out).resolve() if out else root / "site"
    content = load_content(root)
    links = link(content)
    assets = load_assets(root)
    pyodide = find_pyodide(root)
    staging = _new_staging(out)
    try:
        writer = Writer(staging)
        writer.write_all(render(content, links, assets))
        for name in PYODIDE_FILES:
            writer.copy(urls.pyodide(name), pyodide / name)
        index_full_text(staging)
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result = BuildResult(
        out, writer.files, writer.bytes, len(content.records), time.perf_counter() - started
    )
    if log:
        log(
            f"built {result.records} records into {result.files} files "
            f"({result.bytes / 1e6:.1f} MB) in {result.seconds:.2f} s: {out}"
        )
    return result


def render(content, links, assets: dict[str, bytes]) -> Iterable[tuple[str, bytes]]:
    """Every output file of the site as (url, bytes)."""
    pages = Pages(content, links, assets)
    docs = {}
    for rid, record in sorted(content.records.items()):
        doc = api.error_document(record, content, links)
        docs[rid] = doc
        yield urls.error(rid), pages.error(record, doc)
    yield from pages.site_pages()
    yield from api.api_files(content, links, docs)
    yield from search.index_files(search.entries(content))
    for name, body in sorted(assets.items()):
        yield urls.asset(name), body


def load_assets(root: Path) -> dict[str, bytes]:
    """Front-end files from templates/assets, with the code-highlighting CSS appended."""
    assets = {}
    for path in sorted((root / "templates" / "assets").iterdir()):
        if path.is_file():
            assets[path.name] = path.read_bytes()
    assets["style.css"] = assets.get("style.css", b"") + markup.pygments_css().encode()
    assets["calc.py"] = CALC_MODULE.read_bytes()  # run as is by Pyodide in the browser
    return assets


def index_full_text(site: Path) -> None:
    """Pagefind's index of the built pages (search tier 2), written into the site."""
    try:
        subprocess.run(
            [sys.executable, "-m", "pagefind", "--site", str(site), "--silent"]
            + ["--output-subdir", urls.pagefind("").strip("/")],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as exc:
        raise BuildError(f"pagefind failed; is pagefind[bin] installed? {exc.stderr}") from exc


def find_pyodide(root: Path) -> Path:
    """node_modules/pyodide of the knowledge base, else of the errorkb checkout."""
    for base in (root, PACKAGE_ROOT):
        folder = base / "node_modules" / "pyodide"
        if all((folder / name).is_file() for name in PYODIDE_FILES):
            return folder
    raise BuildError(
        f"node_modules/pyodide is missing or incomplete (need {', '.join(PYODIDE_FILES)}); "
        "run make setup"
    )


class Writer:
    def __init__(self, root: Path):
        self.root = root
        self.files = 0
        self.bytes = 0
        self._dirs: set[Path] = set()

    def write_all(self, outputs: Iterable[tuple[str, bytes]]) -> None:
        for url, body in outputs:
            self.write(url, body)

    def write(self, url: str, body: bytes) -> None:
        path = self.root / urls.output_path(url)
        if path.parent not in self._dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(path.parent)
        path.write_bytes(body)
        self.files += 1
        self.bytes += len(body)

    def copy(self, url: str, source: Path) -> None:
        """A file written as is (large vendored files: no read into memory)."""
        path = self.root / urls.output_path(url)
        if path.parent not in self._dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(path.parent)
        shutil.copyfile(source, path)
        self.files += 1
        self.bytes += path.stat().st_size


def _new_staging(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(out.parent)
    staging = out.parent / f"{STAGING_PREFIX}{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    return staging


def _remove_abandoned(parent: Path) -> None:
    """Staging folders of builds that were killed: their process is gone."""
    for path in parent.iterdir():
        for prefix in (STAGING_PREFIX, OLD_PREFIX):
            pid = path.name.removeprefix(prefix)
            if path.name.startswith(prefix) and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    if _exchange(staging, out):
        shutil.rmtree(staging)  # now holds the previous site
        return
    old = out.parent / f"{OLD_PREFIX}{os.getpid()}"
    out.rename(old)
    staging.rename(out)
    shutil.rmtree(old)


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

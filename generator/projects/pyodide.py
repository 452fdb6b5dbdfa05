"""Pyodide's core files, which every wing's calculator runs its modules in, served under
/pyodide/: where the build finds them, and `errorkb fetch-pyodide`, which downloads them
where errorkb is installed without a checkout.

The version and its hash are package-lock.json's (npm's lock, carried in the wheel): the
fetch downloads that version's npm tarball and refuses it unless its sha512 is the lock's.
"""

import base64
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from errorkb import owned, resources, urls

# Pyodide's core files, served under /pyodide/
FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
REGISTRY = "https://registry.npmjs.org"
TIMEOUT = 60  # seconds without a byte before the download gives up


class PyodideError(Exception):
    """Pyodide is missing, or its download failed; the message says what to do."""


def pinned() -> tuple[str, str]:
    """The version and the integrity (`sha512-<base64>`) package-lock.json pins."""
    entry = json.loads(resources.npm_lock().read_text())["packages"]["node_modules/pyodide"]
    return entry["version"], entry["integrity"]


def cache_folder() -> Path:
    """Where `errorkb fetch-pyodide` puts the pinned version."""
    return resources.user_cache() / "pyodide" / pinned()[0]


def places(root: Path) -> list[Path]:
    """Where the build looks, in order: the knowledge base's node_modules, the errorkb
    checkout's, the download cache."""
    modules = [Path(root) / "node_modules", resources.checkout_node_modules()]
    return [folder / "pyodide" for folder in modules] + [cache_folder()]


def vendored(root: Path) -> list[tuple[str, Path]]:
    """Pyodide's files as (url, file), for a wing's `vendored` hook."""
    try:
        folder = find(root)
    except PyodideError as exc:
        from errorkb.site.publish import BuildError

        raise BuildError(str(exc)) from None
    return [(urls.pyodide(name), folder / name) for name in FILES]


def find(root: Path) -> Path:
    """The first complete copy of Pyodide's files, else a PyodideError saying how to get one."""
    for folder in places(root):
        if all((folder / name).is_file() for name in FILES):
            return folder
    version, _ = pinned()
    raise PyodideError(
        f"Pyodide {version} (the calculator's Python in the browser) is missing: run "
        f"`errorkb fetch-pyodide` (downloads its npm tarball, about 6.5 MB, into "
        f"{cache_folder()}), or `npm ci` in an errorkb checkout (`make setup`). "
        f"Looked in: {', '.join(str(p) for p in places(root))}"
    )


def fetch(into: Path | None = None, registry: str = REGISTRY, log=print) -> Path:
    """Download the pinned tarball, check its hash, and unpack Pyodide's core files into
    `into` (default: the cache folder). Returns the folder."""
    version, integrity = pinned()
    into = Path(into) if into else cache_folder()
    try:  # before the download: a folder of someone else's files is never replaced
        owned.refuse_unless_ours(into, "Pyodide's files", "--into")
    except owned.NotOursError as exc:
        raise PyodideError(str(exc)) from None
    url = f"{registry.rstrip('/')}/pyodide/-/pyodide-{version}.tgz"
    log(f"downloading {url}")
    import urllib.request  # here: with http and ssl, a tenth of the imports of every build

    with tempfile.TemporaryFile() as tarball:
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
                shutil.copyfileobj(response, tarball)
        except OSError as exc:
            raise PyodideError(f"could not download {url}: {exc}") from None
        tarball.seek(0)
        got = "sha512-" + base64.b64encode(_sha512(tarball)).decode()
        if got != integrity:
            raise PyodideError(
                f"{url} is not the tarball package-lock.json pins: its hash is {got}, "
                f"the lock says {integrity}; nothing was written"
            )
        tarball.seek(0)
        _unpack(tarball, into)
    log(f"Pyodide {version}: {len(FILES)} files in {into}")
    return into


def _sha512(file) -> bytes:
    digest = hashlib.sha512()
    for block in iter(lambda: file.read(1 << 20), b""):
        digest.update(block)
    return digest.digest()


def _unpack(tarball, into: Path) -> None:
    """The core files of npm's `package/` folder, into a new folder swapped in whole by
    rename (the folder it replaces was checked to be errorkb's before the download)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pyodide-", dir=into.parent))
    try:
        with tarfile.open(fileobj=tarball, mode="r:gz") as archive:
            for name in FILES:
                member = archive.getmember(f"package/{name}")
                source = archive.extractfile(member)
                if source is None:
                    raise PyodideError(f"the tarball's package/{name} is not a file")
                with source, open(staging / name, "wb") as out:
                    shutil.copyfileobj(source, out)
        owned.mark(staging, "Pyodide's files, by errorkb fetch-pyodide")
        owned.replace(staging, into)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def add_command(commands) -> None:
    p = commands.add_parser(
        "fetch-pyodide",
        help="download the pinned Pyodide from the npm registry (the calculator's Python)",
    )
    p.add_argument("--into", type=Path, help="the folder to unpack into (default: the cache)")
    p.add_argument("--registry", default=REGISTRY, help=f"npm registry (default: {REGISTRY})")
    p.set_defaults(func=_cmd_fetch)


def _cmd_fetch(args) -> int:
    try:
        fetch(args.into, args.registry, log=lambda line: print(line, file=sys.stderr))
    except PyodideError as exc:
        print(f"errorkb fetch-pyodide: {exc}", file=sys.stderr)
        return 1
    return 0

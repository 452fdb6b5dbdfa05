"""`errorkb history`: scan every release of a project on PyPI, one at a time.

Each release's wheel is downloaded with pip into a cache outside the repository (never an
sdist: pip would run its build backend, the project's code; a release without a wheel is
skipped), its `.py` files are scanned (raises, asserts, logger calls, API error responses),
the wheel is deleted and the scan is kept, so a release is never downloaded or scanned twice.
What the scans say across releases (which check is which) is `generator.sources.lineage`'s
business.
"""

import dataclasses
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from packaging.version import InvalidVersion, Version

from errorkb import resources
from errorkb.sources import explain
from errorkb.sources.extract import (
    DEBUG,
    ExtractError,
    Progress,
    Site,
    refused_lines,
    scan_tree,
)

# Bump when the scanner finds other sites or records more about them: older scans are redone.
# 4: each site keeps what explain derives of it in its release (`derived`); 5: DEBUG log lines
# (a line demoted to DEBUG is not gone) and errors appended to a list a call returned; 6: whole
# messages (an exception's arguments as the tuple it prints, a message built in a variable
# along each way through the code before the raise, a joined list of literal pieces), with
# the template read before where it differs (`former`, which keeps its record) and `cut`; 7: a
# variable whose value the code does not show along one way stays a placeholder; 8: messages
# relayed through code (a helper whose parameter is the whole message, an exception class that
# builds its own, a function that returns one); 9: a logger call's `*args` spread over its
# conversions (`logger.info("%d-%d", *sizes)`, `msg % args` with `args = (a, b)`), read before
# with the `%s` left in (`former`, which keeps its record).
SCAN_FORMAT = 9

# What a project knows, read from the release's own files (its wing's `knowledge` hook).
Knower = Callable[[list[tuple[str, bytes]]], explain.Knowledge]


class HistoryError(ExtractError):
    """A release cannot be listed, downloaded or scanned; the message says why."""


class NoWheel(HistoryError):
    """pip finds no wheel of a release: it is skipped, the others are scanned."""


# Releases --------------------------------------------------------------------------


def available_versions(package: str) -> list[str]:
    """Every version of a package on the index pip is configured with, oldest first."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", package],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired as exc:
        raise HistoryError(f"pip index versions {package}: no answer in 120 s") from exc
    found = re.search(r"^Available versions: (.+)$", done.stdout, re.M)
    if done.returncode or not found:
        why = (done.stderr.strip().splitlines() or ["no versions listed"])[-1]
        raise HistoryError(f"pip index versions {package}: {why}")
    return sort_versions(v.strip() for v in found.group(1).split(","))


def sort_versions(versions: Iterable[str]) -> list[str]:
    """Final releases only (no rc, dev or alpha), oldest first."""
    out = []
    for text in versions:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not version.is_prerelease and not version.is_devrelease:
            out.append((version, text))
    return [text for _, text in sorted(out)]


def select(versions: list[str], spec: str, every: bool = False) -> list[str]:
    """The versions in `spec` ("0.2.0..0.33.0", either end may be left out; or a list
    "0.6.3,0.33.0"): the last patch of each minor release, or every release."""
    if ".." in spec:
        low, _, high = spec.partition("..")
        lo, hi = (_parse(low) if low else None), (_parse(high) if high else None)
        chosen = [
            v
            for v in versions
            if (lo is None or Version(v) >= lo) and (hi is None or Version(v) <= hi)
        ]
    else:
        wanted = [_parse(part) for part in spec.split(",") if part.strip()]
        chosen = [v for v in versions if Version(v) in wanted]
        missing = set(wanted) - {Version(v) for v in chosen}
        if missing:
            raise HistoryError(f"--releases: not on the index: {', '.join(map(str, missing))}")
        return chosen
    if not every:
        last: dict[tuple[int, ...], str] = {}
        for v in chosen:  # oldest first: the last one of a minor wins
            last[Version(v).release[:2]] = v
        chosen = sorted(last.values(), key=Version)
    if not chosen:
        raise HistoryError(f"--releases {spec}: no release in that range")
    return chosen


def _parse(text: str) -> Version:
    try:
        return Version(text.strip())
    except InvalidVersion as exc:
        raise HistoryError(f"--releases: {text.strip()!r} is not a version") from exc


# Scans -----------------------------------------------------------------------------


@dataclass
class ReleaseScan:
    """What one release prints: its sites, and what the scan cost."""

    version: str
    sites: list[Site]
    files: int
    seconds: float
    cached: bool = False
    refused: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # over the limits

    def counts(self) -> Counter:
        return Counter(site.kind for site in self.sites if site.level != DEBUG)


def scan_path(package: str, version: str) -> Path:
    return resources.user_cache() / package / "scans" / f"{version}.v{SCAN_FORMAT}.json.gz"


def load_scan(package: str, version: str) -> ReleaseScan | None:
    """A release's scan from the cache, or None when it was never scanned (or is unreadable)."""
    path = scan_path(package, version)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        sites = [_site(row) for row in data["sites"]]
    except (OSError, EOFError, ValueError, KeyError, TypeError):
        return None
    return ReleaseScan(version, sites, data["files"], data["seconds"], cached=True)


def _site(row: dict) -> Site:
    row = dict(row)
    row["tags"] = tuple(row.get("tags", ()))
    row["types"] = tuple(tuple(pair) for pair in row.get("types", ()))
    return Site(**row)


def save_scan(package: str, scan: ReleaseScan) -> None:
    path = scan_path(package, scan.version)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "version": scan.version,
        "files": scan.files,
        "seconds": round(scan.seconds, 2),
        "sites": [_row(site) for site in scan.sites],
    }
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as handle:
        json.dump(data, handle, separators=(",", ":"))
    os.replace(tmp, path)


def _row(site: Site) -> dict:
    """A site as JSON, without its snippet (the scan keeps no source text)."""
    row = dataclasses.asdict(site)
    row.pop("snippet")
    return {k: v for k, v in row.items() if v not in ("", (), []) and v is not False}


def download(package: str, version: str, folder: Path) -> Path:
    """The release's wheel, downloaded with pip. Never an sdist: pip would run its build
    backend (the scanned project's code) to read its metadata."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", f"{package}=={version}", "--no-deps"]
        + ["--only-binary", ":all:", "-q", "-d", str(folder)],
        capture_output=True,
        text=True,
    )
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode or not wheels:
        why = (done.stderr.strip().splitlines() or ["nothing downloaded"])[-1]
        raise NoWheel(f"no wheel pip can download ({why}); an sdist is never built")
    return wheels[0]


def scan_release(
    package: str,
    version: str,
    jobs: int | None = None,
    knowledge: Knower | None = None,
    sources: Path | None = None,
) -> ReleaseScan:
    """A release's scan: from the cache, or downloaded, scanned, cached, and the wheel deleted.
    With `knowledge`, each site keeps what explain derives of it in that release (its
    condition, the settings as that release names them), so that a wording no longer printed
    still explains itself. `sources`: a folder holding releases' `.py` files already unpacked
    as `<package>-<version>/` (the wheel's paths under it); a release found there is scanned
    from it, not downloaded (the scan reads only `.py` files, so it is the same scan)."""
    cached = load_scan(package, version)
    if cached is not None:
        return cached
    start = time.monotonic()
    unpacked = Path(sources) / f"{package}-{version}" if sources is not None else None
    if unpacked is not None and unpacked.is_dir():
        scan = scan_tree(
            unpacked, asserts=True, printed=DEBUG, jobs=jobs, progress=False, knowledge=knowledge
        )
        result = ReleaseScan(version, scan.sites, scan.files, time.monotonic() - start)
        result.refused = scan.refused
        save_scan(package, result)
        return result
    work = resources.user_cache() / package / "wheels"
    work.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{version}-", dir=work))
    try:
        wheel = download(package, version, folder)
        scan = scan_tree(
            wheel, asserts=True, printed=DEBUG, jobs=jobs, progress=False, knowledge=knowledge
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result = ReleaseScan(version, scan.sites, scan.files, time.monotonic() - start)
    result.refused = scan.refused
    save_scan(package, result)
    return result


def scan_releases(
    package: str,
    versions: list[str],
    *,
    jobs: int | None = None,
    progress: bool | None = None,
    report: Callable[[str], None] = lambda line: None,
    scanner: Callable[..., ReleaseScan] = scan_release,
    knowledge: Knower | None = None,
) -> list[ReleaseScan]:
    """Scan each release in turn (oldest first), reporting time and counts per release;
    a release without a wheel is reported and left out."""
    bar = Progress(len(versions), "releases", enabled=progress)
    out, sites = [], 0
    for version in versions:
        try:
            scan = scanner(package, version, jobs, knowledge)
        except NoWheel as exc:
            report(f"{package} {version}: skipped: {exc}")
            bar.advance()
            continue
        sites += len(scan.sites)
        out.append(scan)
        counts = scan.counts()
        kinds = ", ".join(f"{counts[k]} {k}" for k in ("raise", "assert", "log", "http"))
        how = "cached" if scan.cached else f"{scan.seconds:.1f} s"
        if bar.enabled:
            bar.label = f"releases ({sites} sites)"
            bar.stream.write("\r\x1b[K")
        report(f"{package} {version}: {scan.files} files, {len(scan.sites)} sites ({kinds}); {how}")
        for line in refused_lines(scan.refused):
            report(f"{package} {version}: {line}")
        bar.advance()
    bar.close()
    if not out:
        raise HistoryError(f"{package}: no release could be scanned")
    return out


def in_repository(sites: list[Site], prefix: str, exclude: list[str]) -> list[Site]:
    """A release's sites at their repository paths (`prefix` added), those of an excluded
    file left out. Done after the scan, so a cached scan serves any prefix."""
    out = []
    for site in sites:
        path = prefix + site.path
        if not any(fnmatch(path, pattern) for pattern in exclude):
            out.append(dataclasses.replace(site, path=path))
    return out


# The command -------------------------------------------------------------------------


def set_releases_scanned(path: Path, versions: list[str]) -> str:
    """The project file's text with `releases_scanned` set, every other line kept."""
    lines = path.read_text(encoding="utf-8").splitlines()
    kept, skipping = [], False
    for line in lines:
        if line.startswith("releases_scanned:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "-")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    kept.append("releases_scanned: " + json.dumps(versions))
    return "\n".join(kept) + "\n"


def kind_counts(scans: list[ReleaseScan]) -> tuple[Counter, Counter]:
    """Distinct messages of each kind: in the newest release, and in all of them together."""
    newest = Counter(kind for (kind, _) in _messages(scans[-1].sites))
    every = Counter(kind for (kind, _) in {m for scan in scans for m in _messages(scan.sites)})
    return newest, every


def _messages(sites: list[Site]) -> set[tuple[str, tuple[str, str]]]:
    return {(site.kind, site.key) for site in sites if site.level != DEBUG}


def write_log(package: str, rows: list[dict]) -> Path:
    """The identity decisions, one JSON line each, beside the scans."""
    path = resources.user_cache() / package / "matches.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path

"""Build integrity, tried as a careless writer and an attacker would: the live site is never
written during a build, incremental builds equal clean ones after any edits and reverts, and
nothing is written outside the site folder."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errorkb import owned, urls
from errorkb.serve import redirects
from errorkb.site import build as build_module
from errorkb.site import publish
from errorkb.site.build import build
from errorkb.site.publish import UnsafeOutputError, Writer, safe_output_path
from tests.conftest import fresh_copy

RECORDS = "content/errors/demo"
PAGE_END = "</div>\n{% endblock %}"  # the end of templates/error.html


def snapshot(site: Path) -> dict[str, tuple[int, str]]:
    """Every file of a site: (inode, digest of its bytes)."""
    return {
        path.relative_to(site).as_posix(): (
            path.stat().st_ino,
            hashlib.sha1(path.read_bytes()).hexdigest(),
        )
        for path in sorted(site.rglob("*"))
        if path.is_file()
    }


def digests(site: Path) -> dict[str, str]:
    return {name: digest for name, (_, digest) in snapshot(site).items()}


def add_records(kb: Path, count: int) -> None:
    """Enough records that the build forks workers to render them."""
    text = (kb / RECORDS / "00000000000000b2.yaml").read_text()
    for i in range(count):
        rid = f"{0xB000 + i:016x}"
        body = text.replace("00000000000000b2", rid, 1).replace("related: [00000000000000a1]\n", "")
        (kb / RECORDS / f"{rid}.yaml").write_text(body.replace("line: 30", f"line: {100 + i}"))


def live_checked_at_swap(monkeypatch) -> list[tuple[dict, dict]]:
    """Make each build compare the live site, just before its swap, with what it held when
    the build started; returns the (before, at swap) pairs."""
    seen = []
    original_build_lock = publish.locked
    original_swap = publish._swap_in

    def locked(out, log=None):
        seen.append((snapshot(out) if out.exists() else {}, None))
        return original_build_lock(out, log)

    def swap(spare, out):
        before, _ = seen[-1]
        seen[-1] = (before, snapshot(out) if out.exists() else {})
        original_swap(spare, out)

    monkeypatch.setattr(publish, "locked", locked)
    monkeypatch.setattr(publish, "_swap_in", swap)
    return seen


@pytest.mark.slow
def test_the_live_site_is_never_written_during_a_build(kb, monkeypatch):
    """Regression: forked workers wrote record pages into spare files that were hard links to
    the live site, so the live site changed mid-build and a reverted edit stayed."""
    add_records(kb, build_module.PARALLEL_MIN + 50)
    seen = live_checked_at_swap(monkeypatch)
    template = kb / "templates/error.html"
    original = template.read_text()
    build(kb)
    build(kb)  # the spare now holds hard links to the live files
    template.write_text(
        original.replace("</div>\n{% endblock %}", "<p>MARKER-1</p></div>\n{% endblock %}")
    )
    assert build(kb).rendered > build_module.PARALLEL_MIN  # rendered by the workers
    template.write_text(original)
    build(kb)
    for before, at_swap in seen[1:]:
        assert at_swap == before, "the live site changed before the swap"
    pages = list((kb / "site/errors").glob("*/index.html"))
    assert len(pages) > build_module.PARALLEL_MIN
    assert not [p for p in pages if "MARKER-1" in p.read_text()]


# Edits that each step of the property test toggles: applied, or reverted to the original.
def _edit_record(kb: Path) -> None:
    path = kb / RECORDS / "00000000000000a1.yaml"
    path.write_text(path.read_text().replace("title: Widget count", "title: The widget tally"))


def _new_record(kb: Path) -> None:
    text = (kb / RECORDS / "00000000000000b2.yaml").read_text()
    body = text.replace("00000000000000b2", "00000000000000f6", 1).replace("line: 30", "line: 77")
    (kb / RECORDS / "00000000000000f6.yaml").write_text(body)


def _supersede(kb: Path) -> None:
    """d4 is removed and a1 took over: d4's page shows a1's title, which `record` edits."""
    path = kb / RECORDS / "00000000000000d4.yaml"
    removed = "status: removed\nsuperseded_by: 00000000000000a1\nversions: {first: '1', last: '2'}"
    path.write_text(path.read_text().replace("\nsource:", f"\n{removed}\nsource:", 1))


def _edit_guide(kb: Path) -> None:
    path = kb / "content/guides/grouping.md"
    path.write_text(path.read_text().replace("title: Grouping widgets", "title: Grouping gadgets"))


def _edit_project(kb: Path) -> None:
    path = kb / "content/projects/demo.yaml"
    path.write_text(path.read_text().replace("name: Demo", "name: Demo Project"))


def _delete_record(kb: Path) -> None:
    (kb / RECORDS / "00000000000000c3.yaml").unlink()


def _edit_template(kb: Path) -> None:
    path = kb / "templates/error.html"
    path.write_text(
        path.read_text().replace("</div>\n{% endblock %}", "<p>edited</p></div>\n{% endblock %}")
    )


def _edit_site(kb: Path) -> None:
    path = kb / "content/site.yaml"
    path.write_text(path.read_text().replace("title: Demo KB", "title: Demo Knowledge Base"))


def _edit_asset(kb: Path) -> None:
    with open(kb / "templates/assets/style.css", "a") as css:
        css.write("\n.edited { color: red }\n")


EDITS = {
    "record": _edit_record,
    "new record": _new_record,
    "delete record": _delete_record,
    "template": _edit_template,
    "site.yaml": _edit_site,
    "asset": _edit_asset,
    "supersede": _supersede,
    "guide": _edit_guide,
    "project": _edit_project,
    "generator code": None,  # a new version of the generator (see below)
    "library": None,  # a new version of a library the pages are rendered with (see below)
    "lost file": None,  # someone deletes a file of the live site (not an edit: never reverted)
}


@pytest.fixture
def editable_kb(kb, tmp_path_factory, monkeypatch):
    """The fixture kb with its pristine copy (to revert from) and a switchable generator
    version: a changed code digest and a changed output, as a new release would bring."""
    pristine = tmp_path_factory.mktemp("pristine")
    shutil.copytree(kb, pristine, symlinks=True, dirs_exist_ok=True)
    digest = build_module.code_digest()
    version = {"new": False}

    def set_version(new: bool) -> None:
        version["new"] = new
        monkeypatch.setattr(build_module, "code_digest", lambda: digest + ("+1" if new else ""))
        monkeypatch.setattr(urls, "SCHEMA_VERSION", 2 if new else 1)

    return kb, pristine, set_version, version


def _new_library(monkeypatch) -> None:
    """Jinja's next release, say: the same code, other bytes out."""
    real = build_module._dependency_versions
    monkeypatch.setattr(build_module, "_dependency_versions", lambda: [*real(), "jinja2==99"])


def _lose_a_file(site: Path, n: int) -> None:
    files = sorted(p for p in site.rglob("*") if p.is_file())
    files[(n * 7919) % len(files)].unlink()


@pytest.mark.slow
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(st.sampled_from(sorted(EDITS)), min_size=6, max_size=9))
def test_incremental_equals_clean_after_any_edits_and_reverts(
    editable_kb, tmp_path, steps, monkeypatch
):
    kb, pristine, set_version, version = editable_kb
    for item in ("content", "templates"):  # each example starts from the pristine kb
        shutil.rmtree(kb / item)
        shutil.copytree(pristine / item, kb / item)
    set_version(False)
    applied: set[str] = set()
    build(kb)
    for n, name in enumerate(steps):
        if name == "generator code":
            set_version(not version["new"])
        elif name == "library":
            _new_library(monkeypatch)
        elif name == "lost file":
            _lose_a_file(kb / "site", n)
        elif name in applied:
            _revert(kb, pristine, name)
        else:
            EDITS[name](kb)
        applied ^= {name}
        build(kb)
        clean = tmp_path / f"clean-{n}-{len(list(tmp_path.iterdir()))}"
        fresh_copy(kb, clean)
        build(clean)
        assert digests(kb / "site") == digests(clean / "site"), f"after {steps[: n + 1]}"


def _revert(kb: Path, pristine: Path, name: str) -> None:
    changed = {
        "record": [f"{RECORDS}/00000000000000a1.yaml"],
        "new record": [f"{RECORDS}/00000000000000f6.yaml"],
        "delete record": [f"{RECORDS}/00000000000000c3.yaml"],
        "template": ["templates/error.html"],
        "site.yaml": ["content/site.yaml"],
        "asset": ["templates/assets/style.css"],
        "supersede": [f"{RECORDS}/00000000000000d4.yaml"],
        "guide": ["content/guides/grouping.md"],
        "project": ["content/projects/demo.yaml"],
    }[name]
    for rel in changed:
        if (pristine / rel).exists():
            shutil.copy(pristine / rel, kb / rel)
        else:
            (kb / rel).unlink()


@pytest.mark.parametrize(
    "url",
    [
        "/../escaped.html",
        "/errors/../../escaped/",
        "/projects/demo/files/%2e%2e/%2e%2e/%2e%2e/tmp/evil.py/",
        "/api/errors/a\\..\\..\\b.json",
        "/api/errors/x\x00.json",
        "/errors/%00/",
        "/errors/./x/",
    ],
)
def test_the_writer_refuses_paths_that_leave_the_site(tmp_path, url):
    site = tmp_path / "site"
    site.mkdir()
    writer = Writer(site, {}, None, {})
    with pytest.raises(UnsafeOutputError, match="would leave the site folder"):
        writer.write(url, b"pwned", "key")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_build_refuses_an_output_outside_the_site_even_past_validation(kb, monkeypatch):
    """The second wall: were a hostile path to pass validation, the writer still refuses it,
    and the live site stays whole."""
    build(kb)
    before = digests(kb / "site")
    real = urls.source_file
    monkeypatch.setattr(urls, "source_file", lambda key, path: real(key, "../../../../" + path))
    with pytest.raises(UnsafeOutputError):
        build(kb)
    assert digests(kb / "site") == before
    assert not (kb / "demo").exists() and not (kb.parent / "demo").exists()


def test_safe_output_paths_are_the_usual_ones():
    assert safe_output_path("/") == "index.html"
    assert safe_output_path("/errors/00000000000000a1/") == "errors/00000000000000a1/index.html"
    assert safe_output_path("/projects/demo/files/demo/a%20b.py/") == (
        "projects/demo/files/demo/a b.py/index.html"
    )


@pytest.mark.slow
def test_builds_killed_at_random_moments_leave_the_old_or_the_new_site():
    """bench/kill on a reduced content set (enough records for forked workers)."""
    script = Path(__file__).resolve().parent.parent / "bench" / "kill"
    result = subprocess.run(
        [sys.executable, str(script), "--records", "450", "--trials", "5", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mixed 0" in result.stdout
    assert "next build byte-identical to a clean build: yes" in result.stdout


# What a build must not lose or leave stale ---------------------------------------------------


def test_a_file_deleted_from_the_site_is_back_after_every_build(kb):
    """The spare's manifest lists what the spare held two builds ago: a file deleted since
    must be rendered again, not trusted to be there."""
    page = kb / "site/errors/00000000000000a1/index.html"
    build(kb)
    build(kb)
    page.unlink()
    for _ in range(3):
        build(kb)
        assert page.is_file()
    (kb / "site/api/errors/00000000000000a1.json").write_bytes(b"{}")  # truncated by hand
    build(kb)
    build(kb)
    assert len((kb / "site/api/errors/00000000000000a1.json").read_bytes()) > 2


def test_retitling_a_successor_retitles_the_page_it_took_over(kb, tmp_path):
    _supersede(kb)
    build(kb)
    _edit_record(kb)  # a1, d4's successor, is retitled
    build(kb)
    page = (kb / "site/errors/00000000000000d4/index.html").read_text()
    doc = (kb / "site/api/errors/00000000000000d4.json").read_text()
    assert "The widget tally" in page and "The widget tally" in doc
    clean = tmp_path / "clean"
    fresh_copy(kb, clean)
    build(clean)
    assert digests(kb / "site") == digests(clean / "site")


def test_a_new_version_of_a_rendering_library_renders_every_page_anew(kb, monkeypatch):
    build(kb)
    assert build(kb).rendered == 0
    _new_library(monkeypatch)
    result = build(kb)
    assert result.rendered >= len(list((kb / "site/errors").glob("*/index.html")))


def test_the_code_key_holds_every_distribution_of_the_dependency_closure(monkeypatch):
    """A patch release of a library errorkb needs only through another (MarkupSafe, through
    Jinja) changes how pages render: its version is in the key. Extras asked for are
    followed, others and other platforms' requirements are not, and a cycle ends."""
    from importlib import metadata

    graph = {
        "errorkb": ["jinja2>=3", "pagefind[bin]>=1", "pytest; extra == 'test'"],
        "jinja2": ["MarkupSafe>=2.0"],
        "markupsafe": [],
        "pagefind": ["pagefind-bin==1.5; extra == 'bin'", "pagefind-ext; extra == 'ext'"],
        "pagefind-bin": ["pywin32; sys_platform == 'win32'", "jinja2"],
    }
    versions = {
        "errorkb": "0.1",
        "jinja2": "3.1.6",
        "markupsafe": "3.0.4",
        "pagefind": "1.5",
        "pagefind-bin": "1.5",
    }

    def version(name):
        if name not in versions:
            raise metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(metadata, "version", version)
    monkeypatch.setattr(metadata, "requires", lambda name: graph[name])
    found = build_module._installed_versions()
    assert found == ("jinja2==3.1.6", "markupsafe==3.0.4", "pagefind-bin==1.5", "pagefind==1.5")
    versions["markupsafe"] = "3.0.5"  # a patch release of an indirect dependency
    assert build_module._installed_versions() != found


def test_the_libraries_versions_are_read_anew_once_a_package_is_installed(
    tmp_path, monkeypatch, request
):
    """The versions the code digest holds are kept in the cache while the folders of
    installed packages stay as they were; pip adds a folder of metadata for a package."""
    packages = tmp_path / "site-packages"
    packages.mkdir()
    monkeypatch.setattr(sys, "path", [str(packages)])
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    installed = ["jinja2==3.1.6"]
    monkeypatch.setattr(build_module, "_installed_versions", lambda: tuple(installed))
    request.addfinalizer(build_module._dependency_versions.cache_clear)  # the real ones again

    def versions() -> tuple[str, ...]:
        build_module._dependency_versions.cache_clear()  # a new process
        return build_module._dependency_versions()

    assert versions() == ("jinja2==3.1.6",)
    installed[0] = "jinja2==3.2.0"
    assert versions() == ("jinja2==3.1.6",)  # kept: nothing was installed
    (packages / "jinja2-3.2.0.dist-info").mkdir()
    os.utime(packages, ns=(time.time_ns() + 10**9,) * 2)  # a coarse clock: a second on
    assert versions() == ("jinja2==3.2.0",)


def test_a_folder_that_is_not_our_site_is_refused_and_kept(kb, tmp_path):
    """`--out mydocs` on someone's folder: the swap would park it as the spare, and the next
    build would delete it."""
    mine = tmp_path / "mydocs"
    mine.mkdir()
    (mine / "notes.md").write_text("my notes")
    for _ in range(2):
        with pytest.raises(publish.NotOurSiteError, match="holds files errorkb did not write"):
            build(kb, mine)
    assert (mine / "notes.md").read_text() == "my notes"
    assert not (tmp_path / ".mydocs-spare").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    for _ in range(3):  # an empty folder is taken, and then it is ours
        build(kb, empty)
    assert (empty / "index.html").is_file()
    assert not list(empty.rglob(".errorkb-manifest.json")), "the manifest is not published"


def test_a_spare_folder_errorkb_did_not_make_is_refused_and_kept(kb, tmp_path):
    """`.<out>-spare` is where a build works; one that someone else made, holding their
    files, is refused by name, never deleted. So is a file in place of the site folder."""
    out = tmp_path / "public"
    theirs = tmp_path / ".public-spare"
    theirs.mkdir()
    (theirs / "draft.md").write_text("my draft")
    with pytest.raises(publish.NotOurSiteError, match=r"\.public-spare holds files"):
        build(kb, out)
    assert (theirs / "draft.md").read_text() == "my draft" and not out.exists()
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(publish.NotOurSiteError, match="is not a folder errorkb made"):
        build(kb, tmp_path / "afile")
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_every_folder_a_build_replaces_carries_the_marker(kb, tmp_path):
    out = tmp_path / "public"
    for _ in range(2):
        build(kb, out)
    assert owned.is_ours(out) and owned.is_ours(tmp_path / ".public-spare")


def test_the_cli_refuses_a_folder_that_is_not_our_site_in_one_line(kb, tmp_path):
    mine = tmp_path / "mydocs"
    mine.mkdir()
    (mine / "notes.md").write_text("my notes")
    done = subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "build", "--out", str(mine)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "holds files errorkb did not write" in done.stderr and "Traceback" not in done.stderr


KILLED_IN_PAGEFIND = """
import pathlib, subprocess, sys, time
from errorkb.search import index
from errorkb.site.build import build
def stalled(command, **kwargs):
    pathlib.Path(sys.argv[2]).write_text("in pagefind")
    time.sleep(60)
index.subprocess.run = stalled
build(pathlib.Path(sys.argv[1]))
"""


@pytest.mark.slow
def test_a_build_killed_in_pagefind_leaves_no_folder_behind(kb):
    build(kb)
    _edit_guide(kb)  # the full-text index must be made anew
    marker = kb.parent / "in-pagefind"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_IN_PAGEFIND, str(kb), str(marker)])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), "the build never reached Pagefind"
    finally:
        proc.kill()
        proc.wait()
    assert not list(kb.glob(".pagefind-*")), "left in the repository"
    build(kb)
    left = []
    for _, dirs, _ in os.walk(kb):
        dirs[:] = [d for d in dirs if not d.startswith(".site-old-")]  # deleted meanwhile
        left += [d for d in dirs if d.startswith(".pagefind-")]
    assert not left
    assert "Grouping gadgets" in (kb / "site/guides/grouping/index.html").read_text()


def test_a_short_link_made_before_a_rename_never_leads_to_another_record(kb):
    """A record is renamed (its old id an alias), and a new record shares the old id's first
    8 hex digits: /e/<prefix>/ was made for the first, it must not now lead to the newcomer."""
    records = kb / RECORDS
    text = (records / "00000000000000b2.yaml").read_text()
    first, renamed, newcomer = "abcdef0100000001", "c234567800000001", "abcdef01ffffffff"

    def write(rid: str, line: int, extra: str = "") -> None:
        body = text.replace("00000000000000b2", rid, 1).replace("line: 30", f"line: {line}")
        (records / f"{rid}.yaml").write_text(body + extra)

    write(first, 60)
    build(kb)
    assert redirects(kb / "site").find("/e/abcdef01/") == (f"/errors/{first}/", 301)
    (records / f"{first}.yaml").unlink()
    write(renamed, 60, f"aliases: [{first}]\n")
    write(newcomer, 61)
    build(kb)
    ambiguous = redirects(kb / "site").find("/e/abcdef01/")
    assert ambiguous == ("/errors/abcdef01/", 301), "ambiguous now: the 404 page lists both"
    ids = json.loads((kb / "site/api/ids/ab.json").read_text())
    assert [row[0] for row in ids] == [first, newcomer]
    assert [row[2] for row in ids] == [renamed, newcomer]


def test_the_writer_refuses_a_file_where_a_folder_is_needed(tmp_path):
    writer = Writer(tmp_path, {}, None, {})
    writer.write("/projects/demo/files/zz.py/", b"page", "k")
    with pytest.raises(UnsafeOutputError, match="a file where it needs a folder|a folder where"):
        writer.write("/projects/demo/files/zz.py/index.html/", b"page", "k")
    with pytest.raises(UnsafeOutputError, match="too long"):
        writer.write("/projects/demo/files/" + "x" * 300 + "/", b"page", "k")

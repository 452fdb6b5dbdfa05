"""A catalogue of bad inputs, as careless writers and attackers make them.

Each case in tests/fixtures/bad/<case>/ holds files laid over the fixture knowledge base
(paths from its root), optional `links.txt` (`link -> target` per line: symbolic links,
which git and tools walking the repository should not meet as real ones) and `remove.txt`
(files to delete), and `expected.txt`: the exact problem lines `errorkb check` prints.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from generator import extract as ex
from generator.build import build
from generator.records import ContentError, load_content, load_schema, path_problem
from tests.conftest import REPO, make_kb

BAD = Path(__file__).parent / "fixtures" / "bad"
CASES = sorted(p.name for p in BAD.iterdir() if p.is_dir())
SPECS = {"expected.txt", "links.txt", "remove.txt"}


def apply_case(case: str, root: Path) -> list[str]:
    """Lay a case over the knowledge base at root; return its expected problem lines."""
    folder = BAD / case
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and str(rel) not in SPECS:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / rel)
    for line in _lines(folder / "remove.txt"):
        (root / line).unlink()
    for line in _lines(folder / "links.txt"):
        link, target = line.split(" -> ")
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / link)
    return _lines(folder / "expected.txt")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def problems_of(root: Path) -> list[str]:
    with pytest.raises(ContentError) as caught:
        load_content(root)
    return [str(p) for p in caught.value.problems]


def snapshot(folder: Path) -> dict:
    """Every entry of a folder with what a write would change: inode, size, mtime."""
    found = {}
    for path in [folder, *folder.rglob("*")]:
        st = path.lstat()
        found[str(path.relative_to(folder))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def test_the_catalogue_is_big_enough():
    assert len(CASES) >= 40
    for case in CASES:
        assert (BAD / case / "expected.txt").is_file(), case


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_on_its_line(case, fixture_site, tmp_path):
    root = make_kb(tmp_path / "kb")
    # Hard links: a copy in no time, and a build writing into the site shows in any of them.
    shutil.copytree(fixture_site, root / "site", symlinks=True, copy_function=os.link)
    before = snapshot(root / "site")
    expected = apply_case(case, root)
    assert problems_of(root) == expected
    with pytest.raises(ContentError):
        build(root)
    assert snapshot(root / "site") == before

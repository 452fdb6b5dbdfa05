"""errorkb's mark on the folders it replaces whole: a site and its spare, Pyodide's folder.

A command that replaces a folder first asks whether errorkb wrote it: a folder that is
missing, empty, or holds the marker file is errorkb's to replace; any other is someone's, and
the command refuses it, saying why, before it writes anything. The marker sits inside the
folder, so it follows the folder through a rename (the swap of a site and its spare).
"""

import os
import shutil
import time
from pathlib import Path

MARKER = ".errorkb"


class NotOursError(Exception):
    """A folder errorkb would replace holds files it did not write."""


def mark(folder: Path, what: str) -> None:
    """Mark a folder errorkb made as its own (kept if already there)."""
    path = Path(folder) / MARKER
    if not path.is_file():
        path.write_text(
            f"errorkb wrote this folder ({what}) and replaces it whole: "
            "files put here by hand are deleted by its next run.\n"
        )


def is_ours(folder: Path) -> bool:
    return (Path(folder) / MARKER).is_file()


def refuse_unless_ours(folder: Path, what: str, option: str) -> None:
    """Raise NotOursError unless errorkb may replace `folder`: missing, empty, or marked."""
    folder = Path(folder)
    if not folder.exists() and not folder.is_symlink():
        return
    if not folder.is_dir() or folder.is_symlink():
        raise NotOursError(
            f"{folder} is not a folder errorkb made ({what}): {option} takes a new or empty "
            "folder, or one errorkb wrote; nothing was changed"
        )
    if is_ours(folder) or not any(folder.iterdir()):
        return
    raise NotOursError(
        f"{folder} holds files errorkb did not write (it has no {MARKER} marker), and "
        f"{what} would replace them: give {option} a new or empty folder, or move those "
        "files away; nothing was changed"
    )


def replace(staging: Path, target: Path) -> None:
    """`staging` becomes `target` by rename; the folder it replaces, checked to be ours, is
    renamed aside first and deleted after (never emptied in place)."""
    staging, target = Path(staging), Path(target)
    if not target.exists():
        staging.rename(target)
        return
    parked = target.with_name(f".{target.name}.old-{os.getpid()}-{time.time_ns()}")
    target.rename(parked)
    staging.rename(target)
    shutil.rmtree(parked, ignore_errors=True)

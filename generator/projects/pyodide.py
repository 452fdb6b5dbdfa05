"""Pyodide's core files, which every wing's calculator runs its modules in: served under
/pyodide/ (npm `pyodide`, pinned in package.json), copied from the knowledge base's
node_modules or errorkb's own."""

from pathlib import Path

from errorkb.site import urls

FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the errorkb checkout


def vendored(root: Path) -> list[tuple[str, Path]]:
    """Pyodide's files as (url, file), from the knowledge base's node_modules or ours."""
    folder = find(root)
    return [(urls.pyodide(name), folder / name) for name in FILES]


def find(root: Path) -> Path:
    """node_modules/pyodide of the knowledge base, else of the errorkb checkout."""
    for base in (root, PACKAGE_ROOT):
        folder = base / "node_modules" / "pyodide"
        if all((folder / name).is_file() for name in FILES):
            return folder
    from errorkb.site.build import BuildError

    raise BuildError(
        f"node_modules/pyodide is missing or incomplete (need {', '.join(FILES)}); "
        "run make setup"
    )


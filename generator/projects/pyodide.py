"""What every wing's calculator shares: Pyodide's core files, served under /pyodide/ (npm
`pyodide`, pinned in package.json), and the calculator modules a wing serves to the browser
byte for byte, each named in its calculator data so that the worker loads them all."""

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


def modules(named: dict[str, Path]) -> dict[str, bytes]:
    """Calculator modules as assets: asset name -> the file's bytes, unchanged (Pyodide runs
    them as they are)."""
    return {name: path.read_bytes() for name, path in named.items()}


def module_list(named: list[tuple[str, str]], url) -> list[list[str]]:
    """The `modules` entry of a calculator's data: [Python module name, its asset URL] for
    each, the first answering requests that name no module."""
    return [[module, url(asset)] for module, asset in named]

"""Where errorkb's own files are, in a checkout and in an installed wheel.

In a checkout, templates/ and package-lock.json sit beside generator/; a wheel carries them
inside the package, as errorkb/templates and errorkb/npm (pyproject's package-dir). A
knowledge base may hold a templates/ folder of its own, which then replaces errorkb's.
"""

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = PACKAGE.parent  # generator/'s parent, in a checkout


def _own(wheel: str, checkout: str) -> Path:
    inside = PACKAGE / wheel
    return inside if inside.exists() else _CHECKOUT / checkout


def own_templates() -> Path:
    """errorkb's templates: the wheel's copy, else the checkout's folder."""
    return _own("templates", "templates")


def templates(root: Path, part: str = "") -> Path:
    """The templates a knowledge base at `root` is built with: its own templates/ (when it
    has that part of them: `mkdocs`, `export`), else errorkb's."""
    own = Path(root) / "templates"
    return own if (own / part).is_dir() else own_templates()


def npm_lock() -> Path:
    """package-lock.json: the npm packages the site ships, each pinned with its hash."""
    return _own("npm/package-lock.json", "package-lock.json")


def checkout_node_modules() -> Path:
    """node_modules/ of the errorkb checkout (`npm ci`); absent in a wheel's install."""
    return _CHECKOUT / "node_modules"


def user_cache() -> Path:
    """errorkb's cache for downloads, scans and compiled schemas, never inside the
    repository: $ERRORKB_CACHE, else $XDG_CACHE_HOME/errorkb, else ~/.cache/errorkb."""
    if os.environ.get("ERRORKB_CACHE"):
        return Path(os.environ["ERRORKB_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "errorkb"


def keep_in_cache(path: Path, body: bytes) -> None:
    """A file of user_cache(), written whole or not at all; a cache that cannot be written
    is only slower."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}")
        temporary.write_bytes(body)
        temporary.replace(path)
    except OSError:
        pass

"""The registry of projects' wings: the hooks the core calls, and how it finds a wing.

A project of the knowledge base (content/projects/<key>.yaml) may have a wing, the package
generator/projects/<key>/ (or the one its `wing:` names), whose module-level WING is a
`Wing`. The core calls the hooks of the wings of the site's projects and never names a
project; a project without a wing gets what the base class does: nothing extra. This module
sits below the core (it imports none of it but for types): the wings import the core, and the
core reaches a wing only here, by its key, at run time.
"""

import ast
import importlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from errorkb.content.load import Files as ContentFiles
    from errorkb.content.model import Content, Problem, Project, Record
    from errorkb.site.pages import Pages
    from errorkb.sources.explain import Knowledge


WINGS = "errorkb.projects"  # the package of the wings
FOLDER = Path(__file__).parent / "projects"


class Wing:
    """The hooks a project may fill in. Each has the default of a project without extras."""

    key = ""

    def load(self, files: "ContentFiles") -> Any:
        """Extra content files the project reads (kept as `content.extras[key]`)."""
        return None

    def describe(self, extra: Any) -> str:
        """What `load` found, for `errorkb check`'s summary ("16 models")."""
        return ""

    def record_problems(self, record: "Record") -> list["Problem"]:
        """Checks of one of the project's records beyond the schema (in parse workers; the
        result is cached with the record while the wing's code is unchanged)."""
        return []

    def content_problems(self, content: "Content") -> list["Problem"]:
        """Checks that need the whole content (records, guides, extras)."""
        return []

    def record_section(self, record: "Record", content: "Content") -> dict | None:
        """An extra section of a record's page: {"template": name, "id": its anchor,
        "title": its name in the table of contents, ...its context}."""
        return None

    def pages(self, pages: "Pages") -> Iterable[tuple[str, bytes]]:
        """Extra outputs of the site: pages and data files, as (url, bytes)."""
        return ()

    def sitemap(self) -> list[str]:
        """URLs of the extra pages that belong in the sitemap."""
        return []

    def nav(self) -> list[tuple[str, str]]:
        """Links the site header adds, as (label, url)."""
        return []

    def assets(self, content: "Content", assets: dict[str, bytes]) -> dict[str, bytes]:
        """Files served under /assets/ beside the templates' own (`assets`)."""
        return {}

    def vendored(self, root: Path) -> list[tuple[str, Path]]:
        """Third-party files copied into the site as they are, as (url, file)."""
        return []

    def log_prefixes(self) -> list[str]:
        """Regular expressions of what the project's logs put before a message, which
        search strips from a paste (in Python and in the browser)."""
        return []

    def issue_titles(self) -> str | None:
        """A regular expression of how an issue title in the project's tracker opens, as its
        issue templates set it ("[Bug]: " in vLLM's, "[Bug] " in SGLang's): a paste that opens
        so is likely an issue title of that tracker, a hint of the engine its author runs
        (weaker than the paste's own hints and than the engine chosen on the site)."""
        return None

    def wrappers(self) -> list[str]:
        """Regular expressions of the project's wrapper messages: a line that only says an
        error happened above it ("Engine core initialization failed. See root cause
        above"). Search ranks the error a paste shows beside one first, naming the wrapper
        as its follow-on (in Python and in the browser)."""
        return []

    def architectures(self) -> dict | None:
        """The model architectures the project registers, read from its code at one release:
        {"release", "held_as" (the locals its checks hold them in), "architectures"}."""
        return None

    def architectures_note(self, table: dict) -> str:
        """The line an answer read from `architectures()` adds: which release's registry it
        took, read from which code, and what the user's may register otherwise."""
        return ""

    def architectures_asset(self) -> str:
        """The name of the page's copy of `architectures()` (under /assets/), or ""."""
        return ""

    def figures(self, record) -> dict | None:
        """The message's own figures of a record whose page answers from them (vLLM's KV cache
        needed and available at a --max-model-len): {what: placeholder}, or None. The answer
        (errorkb/answer.py) computes from them what the page's section does."""
        return None

    def knowledge(self, files: list[tuple[str, bytes]]) -> "Knowledge | None":
        """What `extract` should know of the project's own code (its settings and the flags
        that set them, the stage each module runs in), read from the tree being extracted
        (`files`: repository path and bytes of every Python file)."""
        return None

    def add_commands(self, commands: "argparse._SubParsersAction") -> None:
        """Subcommands of `errorkb` the project adds."""


@cache
def archs_held_as(tree: ast.AST) -> list[str]:
    """The locals a project's code holds `get_supported_archs()` in (`all_supported_archs`):
    where its unsupported-architecture checks keep the list an answer fills in."""
    return sorted(
        {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Attribute)
            and n.value.func.attr == "get_supported_archs"
            for t in n.targets
            if isinstance(t, ast.Name)
        }
    )


@cache
def architectures_table(path: Path) -> dict | None:
    """A wing's committed table of the architectures its project registers (`archs.json`:
    {"release", "held_as", "architectures"}, made by the wing's `archs` module from a wheel),
    or None when it is missing or holds none; read once per path."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("architectures") else None


def wing(key: str) -> Wing:
    """The wing of a project, or the plain Wing when it has none (a module of this package
    that defines no WING, such as `pyodide`, is none: `errorkb check` refuses the name)."""
    if key.isidentifier():
        try:
            module = importlib.import_module(f"{WINGS}.{key}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{WINGS}.{key}":
                raise
        else:
            if hasattr(module, "WING"):
                return module.WING
    plain = Wing()
    plain.key = key
    return plain


def wings(projects: "Iterable[Project]") -> list[Wing]:
    """The wings these projects use, each once, in key order."""
    return [wing(key) for key in sorted({project.wing_key for project in projects})]


def available() -> list[str]:
    """Keys of every project that has a wing (for the command line)."""
    return sorted(p.name for p in FOLDER.iterdir() if (p / "__init__.py").is_file())


def reserved() -> list[str]:
    """Names of this package's modules that are no wing (`pyodide`): a project or a `wing:`
    of such a name would take a module of errorkb for its wing."""
    modules = FOLDER.glob("*.py")  # a wing is a folder
    return sorted(path.stem for path in modules if not path.stem.startswith("_"))


def code_files() -> list[Path]:
    """Every file of every wing: what cached record checks depend on."""
    return sorted([Path(__file__), *FOLDER.rglob("*.py")])

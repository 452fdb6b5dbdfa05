"""The package's import graph: no cycles at module level, and calc.py stands alone (the
browser runs it under Pyodide without the rest of the package)."""

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "generator"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        # generator/ is installed as the import package errorkb (pyproject's package-dir).
        parts = ("errorkb", *path.relative_to(PACKAGE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


# Each module is parsed and walked once a session (a worker): the graphs below and the
# checks that read every module share the trees and their nodes.
@functools.cache
def _tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(encoding="utf-8"))


@functools.cache
def _nodes(name: str) -> tuple[ast.AST, ...]:
    """Every node of the module, as ast.walk gives them."""
    return tuple(ast.walk(_tree(name)))


@pytest.fixture(scope="module", autouse=True)
def _release_the_trees():
    """The trees hold 250,000 nodes (75 MB): the worker lets them go once this file is done."""
    yield
    for cached in (_tree, _nodes, _reached, import_graph, package_graph):
        cached.cache_clear()


def _type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name | ast.Attribute) and "TYPE_CHECKING" in ast.unparse(test)


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: not in functions, not under
    `if TYPE_CHECKING:`."""
    out: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            out.append(stmt)
        elif isinstance(stmt, ast.If):
            todo += stmt.orelse if _type_checking(stmt.test) else stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo += stmt.body + stmt.orelse + stmt.finalbody
            todo += [s for handler in stmt.handlers for s in handler.body]
    return out


def _with_parents(name: str) -> list[str]:
    """Importing a.b.c runs a, a.b and a.b.c."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _targets(stmt: ast.Import | ast.ImportFrom) -> set[str]:
    names = []
    if isinstance(stmt, ast.Import):
        names = [alias.name for alias in stmt.names]
    elif stmt.module and stmt.level == 0:
        for alias in stmt.names:
            sub = f"{stmt.module}.{alias.name}"
            names.append(sub if sub in MODULES else stmt.module)
    return {m for name in names for m in _with_parents(name) if m in MODULES}


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module to the modules its import runs at once (computed once: callers only read it)."""
    graph = {}
    for name in MODULES:
        edges = {t for stmt in _top_level_imports(_tree(name)) for t in _targets(stmt)}
        # A module's own packages run before it: an edge from a package to its own module
        # is not a cycle the other way round.
        graph[name] = frozenset(edges - set(_with_parents(name)))
    return graph


def cycles(graph: dict[str, set[str]] | dict[str, frozenset[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_imports_the_package_has():
    graph = import_graph()
    assert "errorkb.content.model" in graph["errorkb.content.load"]
    assert "errorkb.urls" in graph["errorkb.site.pages"]
    # Only under TYPE_CHECKING or inside functions: not an edge.
    assert "errorkb.content.load" not in graph["errorkb.search.engine"]
    assert "errorkb.content.load" not in graph["errorkb.cli"]


def test_the_query_side_of_search_reads_its_rules_from_the_index_not_the_wings():
    """engine.py (the bot's and `errorkb match`'s matcher) builds no rule from the installed
    wings: it reads those the index carries. rules.py, the writer's side, builds them."""
    graph = import_graph()
    assert "errorkb.registry" not in graph["errorkb.search.engine"]
    assert "errorkb.search.rules" not in graph["errorkb.search.engine"]
    assert "errorkb.registry" in graph["errorkb.search.rules"]
    for bot in ("errorkb.triage", "errorkb.triage.extract", "errorkb.triage.site"):
        assert "errorkb.search.rules" not in graph[bot], bot


def test_the_content_package_stands_on_its_own():
    """Content is read and checked without the search engine, the site or the sources, not
    even by a lazy import: the stages after it depend on it, never the other way round."""
    for name in MODULES:
        if not name.startswith("errorkb.content"):
            continue
        for node in _nodes(name):
            if isinstance(node, ast.ImportFrom) and node.module:
                later = ("errorkb.search", "errorkb.site", "errorkb.sources")
                assert not node.module.startswith(later), f"{name} imports {node.module}"


def test_the_cycle_finder_finds_a_cycle_through_a_package():
    graph = {"a": {"b.c"}, "b": set(), "b.c": {"d"}, "d": {"a"}, "e": {"a"}}
    assert cycles(graph) == [["a", "b.c", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []


def _imported(module: str) -> list[str | None]:
    return [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in _nodes(module)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]


def test_the_calculators_import_nothing_of_the_package_but_their_protocol():
    """The browser runs each calculator with the protocol beside it, and nothing else of
    errorkb: in the package it is errorkb.projects.protocol, in the worker errorkb_protocol."""
    assert _imported("errorkb.projects.protocol"), "the walk found its standard-library imports"
    assert not [n for n in _imported("errorkb.projects.protocol") if n is None or "errorkb" in n]
    for calc in ("errorkb.projects.vllm.calc", "errorkb.projects.sglang.calc"):
        ours = [n for n in _imported(calc) if n is None or n.startswith("errorkb")]
        assert ours == ["errorkb.projects", "errorkb_protocol"], calc


@pytest.mark.slow
def test_every_module_imports_first_in_a_fresh_interpreter():
    """A cycle that the graph misses (an import by importlib, say) fails here: the module
    imported first finds its partner half made. (__main__ runs the command line.)"""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {sorted(set(MODULES) - {'errorkb.__main__'})!r}:\n"
        "    for loaded in [m for m in sys.modules if m.split('.')[0] == 'errorkb']:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_pyproject_lists_every_package_folder():
    """pyproject maps generator/ to `errorkb` with an explicit list (package discovery would
    name them `generator.*`): a new folder missing from it would be left out of the wheel."""
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    # templates/ and package-lock.json ride in the wheel as data packages of their own
    data = {name for name, folder in setup["package-dir"].items() if folder != "generator"}
    assert data == {"errorkb.templates", "errorkb.npm"}
    assert sorted(setup["packages"]) == sorted(folders | data)


def _all_imports(name: str) -> list[ast.Import | ast.ImportFrom]:
    """Every import the module may run, lazy ones in functions too, but not those under
    `if TYPE_CHECKING:` (types only: nothing runs)."""
    skipped = {
        id(node)
        for stmt in _nodes(name)
        if isinstance(stmt, ast.If) and _type_checking(stmt.test)
        for node in ast.walk(stmt)
    }
    return [
        node
        for node in _nodes(name)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]


@functools.cache
def _reached(name: str) -> frozenset[str]:
    """The package's modules that the module may import, lazily or not."""
    return frozenset(t for stmt in _all_imports(name) for t in _targets(stmt))


def _package(module: str) -> str:
    """The package a module belongs to: errorkb.site for errorkb.site.build; a module at the
    top (errorkb.cli, errorkb.registry) is its own."""
    return ".".join(module.split(".")[:2])


@functools.cache
def package_graph() -> dict[str, frozenset[str]]:
    """Package to the packages its modules may import (computed once: callers only read it)."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        if name == "errorkb":
            continue
        targets = {_package(t) for t in _reached(name)}
        own = _package(name)
        graph.setdefault(own, set()).update(targets - {own, "errorkb"})
    return {package: frozenset(targets) for package, targets in graph.items()}


def test_packages_import_one_another_in_one_direction():
    """Counting lazy imports: the registry of projects sits below the core, the wings above
    it, and no package imports one that imports it back (issue 46)."""
    graph = package_graph()
    assert "errorkb.site" in graph["errorkb.projects"]  # the graph sees the wings' imports
    assert cycles(graph) == []


def test_the_core_never_imports_a_wing():
    """Only the wings themselves and the command line (which sits on top of everything)
    import errorkb.projects; the core reaches a wing through errorkb.registry, by its key."""
    above = ("errorkb.projects", "errorkb.cli", "errorkb.__main__")
    for name in MODULES:
        if name.startswith(above):
            continue
        assert not [t for t in _reached(name) if t.startswith("errorkb.projects")], name


def _private_uses(name: str) -> list[str]:
    """Names starting with one underscore that a module takes from another of the package:
    imported by name, or read as an attribute of a module it imported."""
    found, modules = [], {}
    for node in _nodes(name):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("errorkb"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULES:
                    modules[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{name} imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    modules[alias.asname or alias.name] = alias.name
    for node in _nodes(name):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and modules[node.value.id] != name
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{name} reads {modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_ones_private_names():
    """What one module needs of another is public: a private name is free to change (issue 46:
    the quick rebuild reached into 11 private functions of the build)."""
    found = [use for name in MODULES for use in _private_uses(name)]
    assert found == []

"""The model architectures SGLang registers, read from its model files with `ast` (never
imported, never run), and the names its code holds them in.

SGLang's registry (sglang/srt/models/registry.py, `import_model_classes`) imports each module
of the package sglang.srt.models (not its sub-packages) and registers the `EntryClass` it
defines, a class or a list of classes, by the class's `__name__`; `get_supported_archs()`
returns their names, which the unsupported-architecture check holds in a local
(`all_supported_archs`). A message that prints only the user's architectures (or a list cut
short) is answered from this table by errorkb/answer.py, for this release: a model file that
fails to import is left out, a plug-in package registers more.

    python -m errorkb.projects.sglang.archs <sglang wheel or repository> > archs.json

writes the table (generator/projects/sglang/archs.json).
"""

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

from errorkb.registry import architectures_table, archs_held_as

MODELS = "sglang/srt/models/"
REGISTRY = MODELS + "registry.py"
VERSION = "sglang/_version.py"
ARCHS = Path(__file__).with_name("archs.json")
ASSET = "sglang-archs.json"  # the page's copy, /assets/sglang-archs.json


def entries(source: str) -> list[str]:
    """The names of the classes a model file's module-level `EntryClass` holds (one class or
    a list of them): a class the file defines, or one it imports (by the name it is defined
    under, which is its `__name__`). Raises ValueError on anything else: the table is exact
    or not written."""
    tree = ast.parse(source)
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    imported = {
        a.asname or a.name: a.name
        for n in tree.body
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    out: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in targets):
            continue
        value = node.value
        for item in value.elts if isinstance(value, ast.List | ast.Tuple) else [value]:
            if isinstance(item, ast.Name) and item.id in classes:
                out.append(item.id)
            elif isinstance(item, ast.Name) and item.id in imported:
                out.append(imported[item.id])
            else:
                raise ValueError(f"an EntryClass it cannot read: {ast.unparse(item)[:80]}")
    return out


def read(files: dict[str, str]) -> dict:
    """{"release", "architectures", "held_as"} of SGLang's files (path from the package root:
    `sglang/...`), its model files those directly in sglang/srt/models/."""
    found: set[str] = set()
    for path, text in files.items():
        rest = path[len(MODELS) :] if path.startswith(MODELS) else ""
        if rest.endswith(".py") and "/" not in rest and rest != "__init__.py":
            found.update(entries(text))
    if REGISTRY not in files or not found:
        raise ValueError(f"no {REGISTRY} or no model file")
    release = re.search(
        r"__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)", files.get(VERSION, "")
    )
    return {
        "release": release[1].split("+")[0] if release else "",
        "architectures": sorted(found),
        "held_as": archs_held_as(ast.parse(files[REGISTRY])),
    }


def main(argv: list[str]) -> int:
    where = Path(argv[0])
    wanted = re.compile(rf"^(?:python/)?({re.escape(MODELS)}[^/]+\.py|{re.escape(VERSION)})$")
    files: dict[str, str] = {}
    if where.is_dir():
        for path in where.rglob("*.py"):
            rel = path.relative_to(where).as_posix()
            if wanted.match(rel):
                files[wanted.match(rel)[1]] = path.read_text(encoding="utf-8")  # type: ignore[index]
    else:
        with zipfile.ZipFile(where) as wheel:
            for name in wheel.namelist():
                if wanted.match(name):
                    files[wanted.match(name)[1]] = wheel.read(name).decode()  # type: ignore[index]
    print(json.dumps(read(files), indent=0))
    return 0


def table() -> dict | None:
    """The committed table (archs.json), or None."""
    return architectures_table(ARCHS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The model architectures vLLM registers, read from its model registry with `ast` (never
imported, never run), and the names its code holds them in.

vLLM's registry (vllm/model_executor/models/registry.py) is `_VLLM_MODELS`, a dict built of
other module-level dicts (`**_TEXT_GENERATION_MODELS, ...`) keyed by the class name that
config.json's `architectures` holds; `ModelRegistry.get_supported_archs()` returns its keys,
which the unsupported-architecture checks hold in a local (`all_supported_archs`). A message
that prints only the user's architectures (or a list cut short) is answered from this table
by errorkb/answer.py, for this release: a plug-in may register more.

    python -m errorkb.projects.vllm.archs <vllm wheel or folder> > archs.json

writes the table (generator/projects/vllm/archs.json).
"""

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

from errorkb.registry import architectures_table, archs_held_as

REGISTRY = "vllm/model_executor/models/registry.py"
ROOT = "_VLLM_MODELS"
# The name endings the registry converts between (ModelRegistry._normalize_arch: an
# architecture it does not register is loaded as the registered one of the same name with
# another of these endings, `...ForSequenceClassification` as `...ForCausalLM`).
SUFFIXES = "vllm/config/model.py", "_SUFFIX_TO_DEFAULTS"
ARCHS = Path(__file__).with_name("archs.json")
ASSET = "vllm-archs.json"  # the page's copy, /assets/vllm-archs.json


def _keys(node: ast.expr, dicts: dict[str, ast.expr], within: set[str]) -> set[str]:
    """The keys of a dict expression: string keys, `**NAME` spreads of module dicts, and a
    comprehension over one of them that keeps its keys (a subset of a dict already counted).
    Raises ValueError on anything else: the table is exact or not written."""
    if isinstance(node, ast.Name) and node.id in dicts:
        within.add(node.id)
        return _keys(dicts[node.id], dicts, within)
    if isinstance(node, ast.DictComp):
        loop = node.generators[0]
        it = loop.iter
        if (
            len(node.generators) == 1
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr in ("items", "keys")
            and isinstance(it.func.value, ast.Name)
            and isinstance(loop.target, ast.Tuple | ast.Name)
            and isinstance(node.key, ast.Name)
            and node.key.id
            == (loop.target.elts[0] if isinstance(loop.target, ast.Tuple) else loop.target).id  # type: ignore[attr-defined]
        ):
            return {"\0subset:" + it.func.value.id}
        raise ValueError(f"a comprehension it cannot read: {ast.unparse(node)[:80]}")
    if not isinstance(node, ast.Dict):
        raise ValueError(f"not a dict: {ast.unparse(node)[:80]}")
    out: set[str] = set()
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            out |= _keys(value, dicts, within)
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            out.add(key.value)
        else:
            raise ValueError(f"a key it cannot read: {ast.unparse(key)[:80]}")
    return out


def read(source: str) -> dict:
    """{"architectures": [...], "held_as": [...]} of registry.py's text."""
    tree = ast.parse(source)
    dicts = {
        t.id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    if ROOT not in dicts:
        raise ValueError(f"no {ROOT} in {REGISTRY}")
    within: set[str] = set()
    found = _keys(dicts[ROOT], dicts, within)
    subsets = {k for k in found if k.startswith("\0subset:")}
    if any(k.split(":", 1)[1] not in within for k in subsets):
        raise ValueError("a comprehension over a dict the registry does not hold whole")
    return {"architectures": sorted(found - subsets), "held_as": archs_held_as(tree)}


def suffixes(source: str) -> list[str]:
    """The endings of _SUFFIX_TO_DEFAULTS (a list of (suffix, defaults) pairs), in order."""
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        named = any(isinstance(t, ast.Name) and t.id == SUFFIXES[1] for t in targets)
        if named and isinstance(value, ast.List):
            pairs = [e for e in value.elts if isinstance(e, ast.Tuple)]
            ends = [p.elts[0] for p in pairs if isinstance(p.elts[0], ast.Constant)]
            if len(ends) == len(value.elts):
                return [str(e.value) for e in ends]
    raise ValueError(f"no list {SUFFIXES[1]} in {SUFFIXES[0]}")


def _version(files: dict[str, str]) -> str:
    text = files.get("vllm/_version.py", "")
    found = re.search(r"__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)", text)
    found = found or re.search(r"\bversion\s*=\s*['\"]([^'\"]+)", text)
    return found[1].split("+")[0] if found else ""


def main(argv: list[str]) -> int:
    where = Path(argv[0])
    names = (REGISTRY, SUFFIXES[0], "vllm/_version.py")
    if where.is_dir():
        files = {n: (where / n).read_text() for n in names if (where / n).exists()}
    else:
        with zipfile.ZipFile(where) as wheel:
            files = {n: wheel.read(n).decode() for n in names if n in wheel.namelist()}
    table = {
        "release": _version(files),
        **read(files[REGISTRY]),
        "suffixes": suffixes(files[SUFFIXES[0]]),
    }
    print(json.dumps(table, indent=0))
    return 0


def table() -> dict | None:
    """The committed table (archs.json), or None."""
    return architectures_table(ARCHS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Which TP size each SGLang model architecture splits its attention heads over, read from
SGLang's model files with `ast` (never imported, never run).

SGLang's attention layers assert, at model load, that the heads divide by a TP size: some by
the attention TP size (`--tp-size` divided by `--attn-dp-size`), others by the full
`--tp-size`, and most also that the KV heads split or copy evenly. SGLang's model registry
keys each class an `EntryClass` of a module of sglang/srt/models/ names by its class name,
which is what config.json's `architectures` holds. For each such architecture this finds the
attention layer its model builds and what that layer divides by.

    python -m errorkb.projects.sglang.splits <sglang wheel or folder> > splits.json

writes the table `calc_data` serves (generator/projects/sglang/splits.json).
"""

import ast
import heapq
import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

MODELS = "sglang/srt/models/"
VERSION_FILE = "sglang/_version.py"  # written by the wheel's build
SPLITS = Path(__file__).with_name("splits.json")

# Towers beside the language model (vision, audio) have attention of their own, with their
# own head counts: not the num_attention_heads the calculator asks for.
TOWER = re.compile(r"Vision|Visual|Vit|ViT|Siglip|Clip|CLIP|Audio|Whisper|Image|Patch|Resampler")
HEADS = re.compile(r"num_heads$|num_attention_heads$")
KV_HEADS = re.compile(r"num_kv_heads$|num_key_value_heads$")
ATTN_TP = re.compile(r"attn_tp|attention_tp")
FULL_TP = re.compile(r"\btp_size\b|tp_world_size|tensor_model_parallel_world_size|world_size")
# Dijkstra's costs: a class the model builds itself beats one its base class would build
# by default (Qwen3Model hands Qwen2Model its own decoder layer).
OWN, INHERITED = 1, 10
PROJECTION = "QKVParallelLinear"


@dataclass
class Klass:
    module: str
    node: ast.ClassDef
    bases: list[str] = field(default_factory=list)  # keys of base classes in the model files
    refs: set[str] = field(default_factory=set)  # keys of classes its own code names
    split: str | None = None  # "attn_tp" or "tp": the size its head checks divide by
    checks: str = ""  # calc.py's letters: h heads, k KV heads asserted; p a QKV projection


def read_files(source: Path) -> tuple[dict[str, str], str]:
    """The model files (path under sglang/srt/models/ -> text) and SGLang's release."""
    files: dict[str, str] = {}
    if source.is_dir():
        for path in sorted((source / MODELS).rglob("*.py")):
            files[path.relative_to(source / MODELS).as_posix()] = path.read_text()
        version_text = (source / VERSION_FILE).read_text()
    else:
        with zipfile.ZipFile(source) as wheel:
            for name in sorted(wheel.namelist()):
                if name.startswith(MODELS) and name.endswith(".py"):
                    files[name[len(MODELS) :]] = wheel.read(name).decode()
            version_text = wheel.read(VERSION_FILE).decode()
    found = re.search(r"\bversion\s*=\s*[\"']([^\"']+)", version_text)
    return files, found.group(1) if found else "unknown"


def _module(path: str) -> str:
    return "sglang.srt.models." + path.removesuffix(".py").removesuffix("/__init__").replace(
        "/", "."
    )


def _imports(tree: ast.Module, module: str, modules: set[str]) -> dict[str, str]:
    """Local name -> 'module:Name' (or 'module:' for a module) for what a file imports from
    the model files, in a function body too."""
    out = {}
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            source = node.module if not node.level else f"{package}.{node.module}"
            if not source.startswith("sglang.srt.models"):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                name = f"{sub}:" if sub in modules else f"{source}:{alias.name}"
                out[alias.asname or alias.name] = name
    return out


def _names(node: ast.AST) -> set[str]:
    """Names and module.Name attributes the code reads."""
    out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            out.add(f"{n.value.id}.{n.attr}")
    return out


def _assignments(node: ast.AST) -> dict[str, ast.expr]:
    """Name or self.attribute -> the value last assigned to it within node."""
    out: dict[str, ast.expr] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for target in targets:
                out[ast.unparse(target)] = n.value
    return out


def _divisor_kind(divisor: ast.expr, values: dict[str, ast.expr]) -> str | None:
    """'attn_tp' or 'tp': what a divisor is, following its assignments a few steps."""
    text = ast.unparse(divisor)
    for _ in range(4):
        if ATTN_TP.search(text):
            return "attn_tp"
        if text not in values:
            break
        text = ast.unparse(values[text])
    if ATTN_TP.search(text):
        return "attn_tp"
    return "tp" if FULL_TP.search(text) else None


def _checks(node: ast.ClassDef) -> tuple[str | None, str]:
    """What the class asserts its heads or KV heads divide by (or are a multiple of, when
    copied), and which checks it makes (calc.py's letters)."""
    values = _assignments(node)
    split, checks = None, set()
    for n in ast.walk(node):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)):
            continue
        left, right = ast.unparse(n.left), ast.unparse(n.right)
        if KV_HEADS.search(left) or KV_HEADS.search(right):
            checks.add("k")
            size = n.right if KV_HEADS.search(left) else n.left
        elif HEADS.search(left):
            checks.add("h")
            size = n.right
        else:
            continue
        split = split or _divisor_kind(size, values)
    if split and PROJECTION in _names(node):
        checks.add("p")  # its divide() checks heads and KV heads again, with a message
    return split, "".join(sorted(checks, key="hkp".index))


def read_classes(files: dict[str, str]) -> dict[str, Klass]:
    """Every class of the model files, keyed 'module:Name', with what it names."""
    classes: dict[str, Klass] = {}
    modules = {_module(path) for path in files}
    for path, text in files.items():
        module = _module(path)
        tree = ast.parse(text)
        local = _imports(tree, module, modules)
        top = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
        assigned = {
            key: value
            for n in tree.body
            if isinstance(n, ast.Assign)
            for key, value in _assignments(n).items()
        }

        def resolve(
            names: set[str], seen: set[str], module=module, local=local, top=top, assigned=assigned
        ) -> set[str]:
            """Class keys these names stand for, through module-level functions and values."""
            out = set()
            for name in names - seen:
                seen.add(name)
                node = top.get(name)
                if isinstance(node, ast.ClassDef):
                    out.add(f"{module}:{name}")
                elif isinstance(node, ast.FunctionDef):
                    out |= resolve(_names(node), seen)
                elif name in assigned:
                    out |= resolve(_names(assigned[name]), seen)
                elif name in local:
                    out.add(local[name])
                elif "." in name and local.get(name.split(".")[0], "").endswith(":"):
                    out.add(local[name.split(".")[0]] + name.split(".")[1])
            return out

        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                klass = Klass(module, node)
                klass.bases = sorted(resolve(set().union(set(), *map(_names, node.bases)), set()))
                klass.refs = resolve(_names(node), {node.name}) - set(klass.bases)
                klass.split, klass.checks = _checks(node)
                classes[f"{module}:{node.name}"] = klass
    return classes


def _entries(files: dict[str, str]) -> dict[str, str]:
    """Architecture -> class key: the EntryClass of each module directly under models/ (the
    registry imports no subpackage), keyed by the class's own name."""
    out = {}
    for path, text in files.items():
        if "/" in path:
            continue
        module = _module(path)
        tree = ast.parse(text)
        local = _imports(tree, module, set())
        for node in tree.body:
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "EntryClass":
                for name in sorted(_names(node.value)):
                    key = local.get(name, f"{module}:{name}")
                    out[key.rsplit(":", 1)[1]] = key
    return out


def _attention(entry: str, classes: dict[str, Klass]) -> list[tuple[int, str]]:
    """The attention layers nearest the entry class (cost, key): those its own code builds
    before those a base class builds by default; towers left out."""
    best: list[tuple[int, str]] = []
    seen: set[str] = set()
    queue = [(0, entry)]
    while queue:
        cost, key = heapq.heappop(queue)
        klass = classes.get(key)
        if key in seen or klass is None or (best and cost > best[0][0]):
            continue
        seen.add(key)
        if klass.split and not TOWER.search(klass.node.name):
            best.append((cost, key))
            continue
        for ref in klass.refs:
            heapq.heappush(queue, (cost + OWN, ref))
        for base in klass.bases:
            heapq.heappush(queue, (cost + INHERITED, base))
    return best


def table(source: Path) -> dict:
    """{"release": ..., "architectures": {name: {"attention", "layer"}}}, the attention as
    calc.py takes it ("tp:hkp": split over the full --tp-size, heads and KV heads asserted,
    a QKV projection): an architecture
    whose attention layer was not found, or whose nearest layers disagree (a language model
    chosen from the config at run time), is left out: the calculator says what it assumes."""
    files, release = read_files(source)
    classes = read_classes(files)
    architectures = {}
    for name, key in sorted(_entries(files).items()):
        layers = _attention(key, classes)
        kinds = {f"{classes[k].split}:{classes[k].checks}" for _, k in layers}
        if len(kinds) == 1:
            layer = min(k for _, k in layers).removeprefix("sglang.srt.models.")
            architectures[name] = {"attention": kinds.pop(), "layer": layer}
    return {"release": release, "architectures": architectures}


def dump(found: dict) -> str:
    """The table as JSON, one architecture a line (diffs stay readable)."""
    rows = [
        f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
        for k, v in found["architectures"].items()
    ]
    body = ",\n".join(rows)
    return f'{{"release": {json.dumps(found["release"])}, "architectures": {{\n{body}\n}}}}\n'


def load() -> dict:
    """The committed table."""
    return json.loads(SPLITS.read_text())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(
            "usage: python -m errorkb.projects.sglang.splits <sglang wheel or folder>",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(dump(table(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What each engine's own argument parser accepts, per release: `generator/flags/<project>-
<version>.json`, which the flags check (`errorkb.content.flags`, problem code E126) parses
every flag written in content against.

Regenerate a file from the release's wheel (it is never committed; any folder will do):

    pip download vllm==0.33.0 --no-deps --only-binary :all: -d /tmp/wheels
    python -m errorkb.sources.flagdata /tmp/wheels/vllm-0.33.0-*.whl --project vllm

and likewise `sglang==0.5.23 --project sglang`. A project's other program with a parser of its
own (SGLang's `sglang generate`) has its recipe beside it, `parser_<program>.py`, and its file
`<project>-<program>-<version>.json`: `--project sglang --program generate`.

The wheel's Python files are unpacked into a temporary folder, with the wheels of the few light
packages the recipe needs real (`REAL`: msgspec for SGLang, whose server arguments are msgspec
structs; taken from the wheel's folder, else downloaded there with pip). Then a child Python
(`flagdump_child.py`, with a timeout and no network) imports the engine's own argument modules
with the heavy ones (torch, transformers, triton...) stubbed, builds the parser the way the
engine's launcher does (the wing's `parser.py`: its `build()`, and its `LAUNCHERS` and
`REWRITES`; for a release older than its `FROM`, the layout of its `OLDER` that holds then),
and prints every option string with its dest, nargs, choices and type. The file is that, with
the release and how it was made. A stubbed package answers the lowest version the wheel
requires (its `__version__`, and importlib.metadata's). `tests/test_flags.py` regenerates each
file when its wheel is at hand and compares.

There is a file for each project's pinned release, and for each release an explained record
was checked against (its `checked.release`): E126 reads a record's flags with the parser of
that release.
"""

import argparse
import ast
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.version import Version

from errorkb.content import flags
from errorkb.sources.extract import ExtractError

CHILD = Path(__file__).resolve().parent / "flagdump_child.py"
PROJECTS = Path(__file__).resolve().parent.parent / "projects"
TIMEOUT = 300  # seconds the child may take to build the parser
# Stubbed before anything else is tried, even when installed: what launches kernels.
HEAVY = (
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "triton",
    "xformers",
    "flashinfer",
    "numpy",
    "cv2",
    "sgl_kernel",
    "sglang_kernel",
    "deep_gemm",
)


def path(project: str, version: str, program: str = "") -> Path:
    return flags.data_path(project, version, program)


def load(project: str, version: str, program: str = "") -> dict | None:
    """The committed parser data of a project's release, or None when there is none."""
    try:
        return json.loads(path(project, version, program).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def recipe(project: str, program: str = "") -> Path:
    """The wing's recipe: parser.py for the engine's own parser, parser_<program>.py for
    another program's."""
    found = PROJECTS / project / (f"parser_{program}.py" if program else "parser.py")
    if not found.is_file():
        raise ExtractError(f"no recipe for {project}'s parser: {found} is missing")
    return found


def _recipe_facts(file: Path) -> dict:
    """LAUNCHERS, REWRITES, REAL, FROM and OLDER of a recipe (literals), read without
    running it."""
    facts: dict = {
        "LAUNCHERS": (),
        "REWRITES": (),
        "REAL": (),
        "FROM": "0",
        "OLDER": (),
        "CODE": (),  # another program's recipe: the code whose flags its parser reads
    }
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.Assign):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in facts:
            facts[target.id] = ast.literal_eval(node.value)
    return facts


def _wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def layout(facts: dict, release: str) -> dict:
    """How a recipe builds a release's parser: {build (a function of the recipe),
    launchers, rewrites, real}. A recipe's own `build`, LAUNCHERS, REWRITES and REAL hold
    from its FROM; each entry of its OLDER from that entry's `from` (the oldest release of
    that layout read) up to the next layout's."""
    newest = {
        "from": facts["FROM"],
        "build": "build",
        "launchers": facts["LAUNCHERS"],
        "rewrites": facts["REWRITES"],
        "real": facts["REAL"],
    }
    layouts = sorted([*facts["OLDER"], newest], key=lambda entry: Version(entry["from"]))
    held = [entry for entry in layouts if Version(entry["from"]) <= Version(release)]
    return held[-1] if held else layouts[0]


def _unpack(wheel: Path, into: Path, whole: bool = False) -> None:
    """The engine's Python files and metadata (its compiled files are never loaded), or a
    light package `whole`."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if whole or name.endswith(".py") or ".dist-info/" in name:
                archive.extract(name, into)


def _real_wheel(requirement: str, folder: Path) -> Path:
    """The wheel of `name==version` in the engine wheel's folder, else downloaded there."""
    name, _, version = requirement.partition("==")
    pattern = f"{name}-{version}-*.whl"
    found = sorted(p for p in folder.iterdir() if fnmatch.fnmatch(p.name, pattern))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                requirement,
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
                str(folder),
                "-q",
            ],
            check=True,
        )
        found = sorted(p for p in folder.iterdir() if fnmatch.fnmatch(p.name, pattern))
    if not found:
        raise ExtractError(f"no wheel of {requirement} in {folder}")
    return found[0]


def dump(wheel: Path, project: str, program: str = "") -> dict:
    """Build the project's parser (or its other program's) from this wheel and describe it
    (see the module's doc)."""
    file = recipe(project, program)
    facts = _recipe_facts(file)
    chosen = layout(facts, _wheel_version(wheel))
    with tempfile.TemporaryDirectory(prefix="errorkb-flags-") as tmp:
        tree = Path(tmp) / "tree"
        _unpack(wheel, tree)
        for requirement in chosen["real"]:
            _unpack(_real_wheel(requirement, wheel.parent), tree, whole=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LANG": "C.UTF-8"}
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
        try:
            run = subprocess.run(
                [
                    sys.executable,
                    str(CHILD),
                    str(tree),
                    f"{file}:{chosen['build']}",
                    ",".join(HEAVY),
                ],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                env=env,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired as exc:
            raise ExtractError(f"building {project}'s parser took over {TIMEOUT} s") from exc
    if run.returncode != 0:
        tail = "\n".join(run.stderr.strip().splitlines()[-15:])
        raise ExtractError(f"building {project}'s parser failed:\n{tail}")
    parser = json.loads(run.stdout)
    made_by = "python -m errorkb.sources.flagdata <wheel> --project " + project
    return {
        "project": project,
        **({"program": program} if program else {}),
        "release": _wheel_version(wheel),
        "made_by": made_by + (f" --program {program}" if program else ""),
        "wheel": wheel.name,
        "real": list(chosen["real"]),
        "stubbed": parser.pop("stubbed"),
        "launchers": list(chosen["launchers"]),
        **({"code": list(facts["CODE"])} if program else {}),
        "rewrites": list(chosen["rewrites"]),
        **parser,
    }


def render(data: dict) -> str:
    """The file's text: one option a line, so that a release's diff reads flag by flag."""
    head = {k: v for k, v in data.items() if k != "options"}
    lines = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    body = ",\n".join("  " + json.dumps(o, ensure_ascii=False) for o in data["options"])
    return f'{lines},\n "options": [\n{body}\n ]\n}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m errorkb.sources.flagdata")
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--project", required=True)
    parser.add_argument("--program", default="", help="another program's parser (`generate`)")
    parser.add_argument("--out", type=Path, help="default: generator/flags/<project>-<v>.json")
    args = parser.parse_args(argv)
    try:
        data = dump(args.wheel.resolve(), args.project, args.program)
    except (ExtractError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = args.out or path(args.project, data["release"], args.program)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    print(f"{out}: {len(data['options'])} options of {data['prog']} {data['release']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

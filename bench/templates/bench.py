"""The template bench (issue 42, item 6): raise sites sampled at random from the pinned wheels,
each labelled by hand with the message the program prints (read from the code), against the
templates `errorkb extract` reads at those lines.

    python bench/templates/bench.py sample            # sites.jsonl: the sample (done once)
    python bench/templates/bench.py show N [M [STEP]] # the code of sites N..M, to label them
    python bench/templates/bench.py run [--held-out]  # the share read whole and correct

labels.jsonl holds one line per sampled site, in the order of sites.jsonl: its place and
`printed`, the messages the raise can print (one per way the code builds it) written as
templates: `{name}` for a value known only when it runs, `{{`/`}}` for a literal brace. An
empty list: the message is all run-time (a parameter, str(e)); the extractor should then give
no template. KeyError's message is written bare, as `extract` writes it (str() quotes it).
Templates compare as records match (`extract.match_key`): placeholder names and runs of white
space do not count.

The odd lines of labels.jsonl (1st, 3rd, ...) are held out: `run` tunes on the even lines, and
`run --held-out` measures the held-out half, once, at the end.

Measured (SCAN_FORMAT 6, issue 42): 149 of the tuning half's 150 sites whole and correct (99.3%;
146 before it), 145 of the held-out half's 150 (96.7%; 143 before), 294 of 300 in all.
Left: VLLMValidationError's `__str__` adds " (parameter=..., value=...)" to its message
(4 sites: their templates are marked cut), a constant computed by arithmetic
(256 * 1024 * 1024) and a value chosen by a conditional expression
(`"a" if x else "b"`), both read as a placeholder.
"""

import ast
import json
import random
import sys
from collections import Counter
from pathlib import Path

import yaml

from errorkb.sources import extract as ex

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
WHEELS = Path("/work/wheels")
PINNED = {"vllm": "vllm-0.33.0-*.whl", "sglang": "sglang-0.5.23-*.whl"}
PER_PROJECT = 150
SEED = 42


def project_tree(project: str) -> ex.Tree:
    conf = yaml.safe_load((ROOT / "content" / "projects" / f"{project}.yaml").read_text())
    (wheel,) = WHEELS.glob(PINNED[project])
    return ex.read_tree(
        wheel, prefix=conf.get("source_prefix", ""), exclude=conf.get("source_exclude", [])
    )


def raises(data: bytes) -> list[ast.Raise]:
    """Every `raise X(...)` with an argument: a raise that prints a message of its own."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and (node.exc.args or node.exc.keywords)
    ]


def sample() -> None:
    rows = []
    for project in PINNED:
        found = []
        for path, data in project_tree(project).files:
            found += [(path, node.lineno) for node in raises(data)]
        found.sort()
        picked = random.Random(f"{SEED}:{project}").sample(found, PER_PROJECT)
        rows += [{"project": project, "path": p, "line": n} for p, n in sorted(picked)]
    random.Random(SEED).shuffle(rows)
    with open(HERE / "sites.jsonl", "w") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    print(f"{len(rows)} sites sampled")


def _files() -> dict[tuple[str, str], bytes]:
    return {(p, path): data for p in PINNED for path, data in project_tree(p).files}


def show(first: int, last: int, step: int = 1) -> None:
    rows = [json.loads(line) for line in (HERE / "sites.jsonl").read_text().splitlines()]
    files = _files()
    for i in range(first, min(last, len(rows) - 1) + 1, step):
        row = rows[i]
        data = files[row["project"], row["path"]]
        lines = data.decode("utf-8", "replace").splitlines()
        node = next(n for n in raises(data) if n.lineno == row["line"])
        print(f"=== {i} {row['project']} {row['path']}:{row['line']}")
        # The lines before it in its function that assign a name the raise uses (a message
        # built before), then the raise statement.
        names = {n.id for n in ast.walk(node.exc) if isinstance(n, ast.Name)}
        start = row["line"] - 1
        back = start
        while back > 0 and start - back < 60 and not lines[back].lstrip().startswith("def "):
            back -= 1
        for k in range(back, start):
            text = lines[k].strip()
            if any(text.startswith(f"{name} ") or text.startswith(f"{name}.") for name in names):
                print(f"  {k + 1}: {lines[k]}")
        print("\n".join(lines[start : node.end_lineno]))


def run(held_out: bool) -> None:
    labels = [json.loads(line) for line in (HERE / "labels.jsonl").read_text().splitlines()]
    part = [row for i, row in enumerate(labels) if (i % 2 == 0) == held_out]
    unlabelled = [row for row in part if "printed" not in row]
    if unlabelled:
        print(f"{len(unlabelled)} sites of this half have no label yet: not counted")
    part = [row for row in part if "printed" in row]
    files = _files()
    found: dict[tuple[str, str, int], set] = {}
    for project, path in {(row["project"], row["path"]) for row in part}:
        scan = ex.scan_file(path, files[project, path], asserts=False)
        for site in scan.sites:
            if site.kind == "raise":
                found.setdefault((project, path, site.line), set()).add(site)
    tally: Counter = Counter()
    misses = []
    for row in part:
        sites = found.get((row["project"], row["path"], row["line"]), set())
        got = {site.key for site in sites}
        want = {ex.match_key(row["exception"], text) for text in row["printed"]}
        literal = bool(row["printed"])
        tally["sites"] += 1
        tally["with a message in the code"] += literal
        ok = got == want and not any(getattr(site, "cut", False) for site in sites)
        tally["whole and correct"] += ok
        tally["whole and correct, of those with a message"] += ok and literal
        tally["marked cut"] += any(getattr(site, "cut", False) for site in sites)
        if not ok:
            misses.append((row, sorted(t for _, t in got)))
    name = "held-out" if held_out else "tuning"
    print(f"{name} half: {tally['sites']} sites")
    for key in ("with a message in the code", "whole and correct", "marked cut"):
        print(f"  {key}: {tally[key]}")
    share = tally["whole and correct"] / max(tally["sites"], 1)
    print(f"  share read whole and correct: {share:.1%}")
    for row, got in misses:
        print(f"- {row['project']} {row['path']}:{row['line']}")
        print(f"    printed: {row['printed']}")
        print(f"    read:    {got}")


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["run"]
    if command == "sample":
        sample()
    elif command == "show":
        first = int(rest[0])
        show(first, int(rest[1]) if len(rest) > 1 else first, int(rest[2]) if len(rest) > 2 else 1)
    else:
        run("--held-out" in rest)

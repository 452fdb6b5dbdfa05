"""Draw a sample of records for a by-hand audit of their derived fields (issue 40).

Active records (no `status`, or `status: active`) with a `derived` block, per project, none
already in a labelled sample (tests/fixtures/stage-sample-*.jsonl, stage-audit-*.jsonl,
derived-audit-*.jsonl, and any --exclude file): ids sorted, then `random.Random(seed).sample`
per project, in the order given. Prints one id and project a line, tab-separated:

    python bench/derived_sample.py --root . --seed 7301 vllm=25 sglang=15
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import yaml


def labelled(root: Path, extra: list[Path]) -> set[str]:
    """The ids already in a labelled sample."""
    fixtures = root / "tests" / "fixtures"
    files = [
        *fixtures.glob("stage-sample-*.jsonl"),
        *fixtures.glob("stage-audit-*.jsonl"),
        *fixtures.glob("derived-audit-*.jsonl"),
        *extra,
    ]
    return {
        json.loads(line)["id"]
        for path in files
        for line in path.read_text().splitlines()
        if line.strip()
    }


def candidates(root: Path, project: str, taken: set[str]) -> list[str]:
    """The ids of a project's active records with a derived block, not taken, sorted."""
    out = []
    for path in sorted((root / "content" / "errors" / project).glob("*.yaml")):
        text = path.read_text()
        if "\nderived:" not in text or path.stem in taken:
            continue
        data = yaml.safe_load(text)
        if data.get("status", "active") == "active" and data.get("derived"):
            out.append(path.stem)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("counts", nargs="+", help="project=count")
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    taken = labelled(args.root, args.exclude)
    rng = random.Random(args.seed)
    for item in args.counts:
        project, count = item.split("=", 1)
        for rid in rng.sample(candidates(args.root, project, taken), int(count)):
            print(f"{rid}\t{project}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

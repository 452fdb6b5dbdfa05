"""Derived stages against stages read by hand in the release's code (issue 40, round 2).

A labelled sample (tests/fixtures/stage-sample-<seed>.jsonl: id, stage read in the code or
null where the code runs it at more than one stage, reason) is compared with the stage that
today's rules derive from the pinned release's wheel, exactly as `errorkb rederive` derives it
(extract.assign_tree, then extract.derived). It needs the wheels, so it is a bench, not a test:

    PYTHONPATH=... python bench/stages.py --root . \\
        --wheel vllm=/work/wheels/vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl \\
        --wheel sglang=/work/wheels/sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl \\
        tests/fixtures/stage-sample-9191.jsonl

It prints each disagreement and the tally, and exits 1 when any derived stage differs from
its label. A derived stage left out where the label has one is counted apart ("left out"):
not wrong, but not said.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from errorkb.content.load import load_content
from errorkb.registry import wing
from errorkb.sources import explain
from errorkb.sources.extract import assign_tree, derived, project_ref


def derived_stages(root: Path, project: str, wheel: Path, ids: set[str]) -> dict[str, str | None]:
    """The stage today's rules derive for each of these records of the project."""
    content = load_content(root)
    ref = project_ref(content, project)
    known = wing(content.projects[project].wing_key)
    where = content.projects[project]
    _scan, _index, done = assign_tree(
        content,
        project,
        wheel,
        asserts=True,
        printed=True,
        prefix=where.source_prefix,
        exclude=where.source_exclude,
        knowledge=lambda files: known.knowledge(files) or explain.Knowledge(),
    )
    return {
        rid: derived(sites, ref).get("stage") for rid, sites in done.matched.items() if rid in ids
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", type=Path, nargs="+")
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--wheel", action="append", default=[], help="project=path")
    args = parser.parse_args(argv)
    rows = [
        json.loads(line)
        for sample in args.sample
        for line in sample.read_text().splitlines()
        if line.strip()
    ]
    wheels = dict(item.split("=", 1) for item in args.wheel)
    wrong = left_out = agree = 0
    for project, wheel in sorted(wheels.items()):
        mine = [r for r in rows if r["project"] == project]
        got = derived_stages(args.root, project, Path(wheel), {r["id"] for r in mine})
        for row in mine:
            if row["id"] not in got:
                print(f"{row['id']}: not raised by the wheel any more")
                wrong += 1
                continue
            stage, label = got[row["id"]], row["stage"]
            if stage == label:
                agree += 1
            elif stage is None:
                left_out += 1
                print(f"{row['id']}: left out; read {label} ({row['reason']})")
            else:
                wrong += 1
                print(f"{row['id']}: derived {stage}, read {label} ({row['reason']})")
    print(f"{len(rows)} labelled: {agree} agree, {wrong} wrong, {left_out} left out")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

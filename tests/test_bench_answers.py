"""bench/answers on the fixture knowledge base: which pages say what to change (a person's
solutions, a setting traced from the code, a value that passes), over every record, the most
met ones (the `record` column of the lists) and the pages real pastes land on."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from errorkb.sources import extract as ex

BENCH = Path(__file__).resolve().parent.parent / "bench" / "answers"
TREE = Path(__file__).parent / "fixtures" / "settings" / "tree"


def run(kb: Path, pastes: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--root", str(kb), "--pastes", str(pastes)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def record_of(kb: Path, start: str) -> str:
    for path in (kb / "content/errors/demo").glob("*.yaml"):
        if yaml.safe_load(path.read_text())["message"].startswith(start):
            return path.stem
    raise AssertionError(start)


def test_answers_over_the_lists_and_the_pastes(kb, tmp_path):
    pastes = tmp_path / "pastes.jsonl"
    pastes.write_text("")
    before = run(kb, pastes)
    assert "most met: no list" in before  # no list yet: said, not an error
    ex.extract(kb, TREE, "demo", asserts=True, printed=True)
    choice = record_of(kb, "tool_choice must be")
    (kb / "content/most-met").mkdir()
    (kb / "content/most-met/demo.md").write_text(
        "How it was counted.\n\n| rank | record | error | count | threads |\n"
        "|---|---|---|---|---|\n"
        f"| 1 | `00000000000000a1` | a | 3 | `0123456789abcdef` in a link |\n"
        f"| 2 | `{choice}` | b | 2 | x |\n| 3 | `ffffffffffffffff` | gone | 1 | x |\n"
        "\nAfter the table: `00000000000000b2` is no row.\n"
    )
    rows = [
        {"project": "demo", "text": "...", "expected": "00000000000000a1"},  # solutions
        {"project": "demo", "text": "...", "expected": "00000000000000b2"},  # says nothing
        {"project": "demo", "text": "...", "expected": "none"},
        {"project": "demo", "text": "...", "expected": "eeeeeeeeeeeeeeee"},
    ]
    pastes.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run(kb, pastes)
    most = out[out.index("most met") :]
    assert most.startswith("most met (3 listed, 2 found):")
    assert (
        "  all                 2 records  solutions     1 ( 50.0%)  setting     1 ( 50.0%)  "
        "computed     1 ( 50.0%)  answered     2 (100.0%)" in most
    )
    pasted = out[out.index("real pastes") :]
    assert "  demo           " + "    1 ( 50.0%) of 2" in pasted
    assert "labelled records not in the content: eeeeeeeeeeeeeeee" in pasted
    assert "active extracted records naming a setting, by kind:\n  demo: " in out
    assert "request-field" in out[out.index("by kind") :]


@pytest.mark.slow
def test_settings_the_message_names_traced_and_threads(kb, tmp_path):
    """Of the records whose message names an option of the pinned release's parser (here
    {group_size}, the demo's `--group-size`), the share whose derived.flags trace it."""
    flags = kb / "generator" / "flags"
    flags.mkdir(parents=True)
    option = {"strings": ["--group-size"], "dest": "group_size", "nargs": 1, "type": "int"}
    (flags / "demo-1.0.0.json").write_text(json.dumps({"options": [option]}))
    pastes = tmp_path / "pastes.jsonl"
    pastes.write_text("")
    out = run(kb, pastes)
    table = out[out.index("settings the message names") :]
    assert "  demo     name  active       0 (  0.0%) of     2" in table
    assert "  demo     untraced, most named: group_size 2" in table
    assert "records with reported threads: 0" in out
    record = kb / "content/errors/demo/00000000000000a1.yaml"
    traced = (
        "derived:\n  ref: abc1234\n  flags:\n    - name: group_size\n      kind: engine-arg\n"
        "      field: group_size\n      flag: --group-size\n"
    )
    record.write_text(record.read_text() + traced)
    out = run(kb, pastes)
    table = out[out.index("settings the message names") :]
    assert "  demo     name  active       1 ( 50.0%) of     2" in table
    assert "  demo     untraced, most named: group_size 1" in table
    assert "active records with a traced setting:" in out
    # a stack record's settings are a person's (`settings`), and count as its setting too
    before = next(line for line in out.splitlines() if line.startswith("  demo "))
    other = kb / "content/errors/demo/00000000000000c3.yaml"
    other.write_text(
        other.read_text()
        + "settings:\n- env: DEMO_LIMIT\n  url: https://example.com/env#demo-limit\n"
        + "  about: Set it to `8` to raise the limit.\n"
    )
    after = next(line for line in run(kb, pastes).splitlines() if line.startswith("  demo "))
    count = re.compile(r"setting +(\d+)")
    assert int(count.search(after)[1]) == int(count.search(before)[1]) + 1


def _bench():
    """bench/answers as a module (it has no .py suffix)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("bench_answers", str(BENCH))
    spec = importlib.util.spec_from_loader("bench_answers", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_why_a_page_says_nothing_to_change():
    """--why classes a page that says nothing from its record alone, first class that fits;
    look-alikes: a warning is not informational, a placeholder named like an error only
    when it is the caught one, a removed record with a live successor is the successor's."""
    from errorkb.content.model import Content, Project, Record, Source

    bench = _bench()
    engine = Project(key="demo", name="Demo", repo="x/demo", ref="v1", releases_scanned=["1.0"])
    stack = Project(key="lib", name="Lib", repo="x/lib", ref="v1", kind="stack")

    def record(rid: str, message: str, derived: dict | None, **more) -> Record:
        data = {"id": rid, "project": "demo", "exception": "ValueError", "message": message}
        data.update(more)
        if derived is not None:
            data["derived"] = {"ref": "v1", **derived}
        return Record(Source("x.yaml", data), data)

    records = [
        record(
            "a" * 16,
            "Load weight begin. avail mem={mem} GB",
            {"category": "logged"},
            kind="log",
            level="info",
            exception="INFO",
        ),
        record(
            "b" * 16,
            "Skipping {n} items",
            {"category": "logged"},
            kind="log",
            level="warning",
            exception="WARNING",
        ),
        record("c" * 16, "Server warmup failed: {error}", {"condition": "Exception was raised"}),
        record("d" * 16, "Bad value {error_count}", {"condition": "error_count > 3"}),
        record("e" * 16, "Only SM 10.x is supported", {"condition": "not arch.ok"}),
        record(
            "f" * 16,
            "NIXL is not available",
            {"category": "missing-dependency", "condition": "ImportError was raised"},
        ),
        record("1" * 16, "gone", None),
        record(
            "2" * 16,
            "old wording",
            {"category": "invariant"},
            status="removed",
            superseded_by="d" * 16,
        ),
    ]
    lib = Record(Source("y.yaml", {}), {"id": "3" * 16, "project": "lib", "message": "x"})
    content = Content(
        root=Path("."),
        site={},
        projects={"demo": engine, "lib": stack},
        records={r.id: r for r in [*records, lib]},
        guides=[],
        extras={},
    )
    got = [bench.why(content, r) for r in [*records, lib]]
    assert got == [
        "informational",
        "no-setting",
        "wrapper",
        "no-setting",
        "hardware",
        "missing-dependency",
        "not-derived",
        "successor-unanswered",
        "stack",
    ]

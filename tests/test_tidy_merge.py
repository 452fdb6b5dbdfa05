"""`errorkb tidy` (and `history`, which merges through the same code) merges a removed twin
into the active record printing its words only when nothing a person wrote is lost: every
field and every comment is kept, or the merge is refused with one line saying why."""

from pathlib import Path

import pytest
import yaml

from errorkb.content.load import load_content, record_fields
from errorkb.sources import chronicle

HEAD = "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
ACTIVE = "00000000000000f1"
TWIN = "00000000000000f2"
OTHER = "00000000000000f3"

SURVIVOR = f"""{HEAD}id: {ACTIVE}
project: demo
exception: VLLMValidationError
message: "frequency_penalty must be in [-2, 2], got {{frequency_penalty}}."
# a person's note above the params: kept
params:
  frequency_penalty: {{type: float}}
versions: {{first: "3.0", last: "4.0"}}
source: {{path: demo/sampling.py, line: 3, function: SamplingParams.verify}}
tags: [sampling]
analysis: {{method: extracted, ref: v4.0}}
updated: "2024-01-01"
"""

# The twin holds every field a person writes, in other placeholder names, with comments in
# every place a comment can be (and a `#` inside values, which is none).
HOSTILE_TWIN = f"""{HEAD}# why this record exists: issue #12
id: {TWIN}
project: demo
exception: ValueError
message: "frequency_penalty must be in [-2, 2], got {{penalty}}."  # the 1.x wording
params:
  penalty:
    type: float
    about: "The `frequency_penalty` of the request (#1 cause: a UI slider)."
versions: {{first: "1.0", last: "2.0"}}
source: {{path: demo/sampling.py, line: 3, function: SamplingParams.verify}}
title: Frequency penalty out of range
summary: A person's sentence about the penalty.
meaning: |
  # not a comment: Markdown's heading inside a literal block
  The penalty is outside [-2, 2].
trigger: "A request with `frequency_penalty: 3`."
situations: [A client that scales the penalty by 10.]
solutions: ["Send a value in [-2, 2]."]
example_fix: {{before: {{code: "p = 3"}}, after: {{code: "p = 1.5"}}}}
defensive: {{code: "assert -2 <= p <= 2"}}
prevention: Validate in the client.
related: [{OTHER}]
tags: [validation, sampling]
analysis: {{method: ai-assisted, date: "2024-02-02"}}
updated: "2025-03-04"
status: removed
# a note between fields
status_note: Raised as ValueError before 3.0.
"""


def other() -> str:
    data = {
        "id": OTHER,
        "project": "demo",
        "exception": "ValueError",
        "message": "Cannot use the prefix cache with {backend}.",
        "versions": {"first": "1.0", "last": "4.0"},
        "source": {"path": "demo/cache.py", "line": 3, "function": "check_cache"},
        "analysis": {"method": "extracted", "ref": "v1.0"},
    }
    return HEAD + yaml.safe_dump(data, sort_keys=False)


def tidied(kb: Path, survivor: str, twin: str) -> chronicle.Written:
    folder = kb / "content" / "errors" / "demo"
    for rid, text in ((ACTIVE, survivor), (TWIN, twin), (OTHER, other())):
        (folder / f"{rid}.yaml").write_text(text)
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0", "4.0"]\n')
    return chronicle.tidy(kb, load_content(kb), "demo")


def path(kb: Path, rid: str) -> Path:
    return kb / "content" / "errors" / "demo" / f"{rid}.yaml"


def test_a_merge_keeps_every_field_a_person_wrote_and_every_comment(kb):
    done = tidied(kb, SURVIVOR, HOSTILE_TWIN)
    assert (done.merged, done.warnings) == ([TWIN], [])
    assert not path(kb, TWIN).exists()
    twin = yaml.safe_load(HOSTILE_TWIN)
    text = path(kb, ACTIVE).read_text()
    merged = yaml.safe_load(text)
    for name in chronicle._ONE:
        assert merged.get(name) == twin.get(name), name
    about = twin["params"]["penalty"]["about"]
    assert merged["params"] == {  # said of the message's value, and of the old wording's
        "frequency_penalty": {"type": "float", "about": about},
        "penalty": {"type": "float", "about": about},
    }
    assert merged["tags"] == ["sampling", "validation"]
    assert merged["related"] == [OTHER]
    assert merged["updated"] == "2025-03-04"  # the later date
    assert merged["analysis"] == twin["analysis"]  # the text it describes came along
    assert merged["aliases"] == [TWIN]
    assert "# a person's note above the params: kept" in text
    carried = text[text.index(f"# The comments of {TWIN}, merged into this record:") :]
    assert carried.splitlines()[1:] == [
        "# why this record exists: issue #12",
        "# the 1.x wording",
        "# a note between fields",
    ]
    load_content(kb)  # the merged record is valid: its params cover its message


def test_a_merge_that_would_lose_a_text_is_refused_with_one_line(kb):
    survivor = SURVIVOR.replace("tags:", "summary: The survivor's own sentence.\ntags:")
    done = tidied(kb, survivor, HOSTILE_TWIN)
    assert done.merged == []
    assert done.warnings == [
        f"content/errors/demo/{TWIN}.yaml:14: not merged into {ACTIVE}"
        f" (content/errors/demo/{ACTIVE}.yaml): summary: {ACTIVE} holds another summary;"
        " keep one text (in both files, or in neither), then run tidy again"
    ]
    assert path(kb, TWIN).read_text() == HOSTILE_TWIN
    assert path(kb, ACTIVE).read_text() == survivor


def test_two_abouts_of_one_placeholder_refuse_the_merge(kb):
    survivor = SURVIVOR.replace("{type: float}", "{type: float, about: The request's value.}")
    done = tidied(kb, survivor, HOSTILE_TWIN)
    assert done.merged == []
    (line,) = done.warnings
    assert line.startswith(f"content/errors/demo/{TWIN}.yaml:10: not merged into {ACTIVE}")
    assert f"params.penalty.about: {ACTIVE} says another about of {{frequency_penalty}}" in line


def test_an_about_of_a_placeholder_no_wording_keeps_refuses_the_merge(kb):
    # the survivor has the twin's old wording already, in its own names: {old} is in none
    old = "variants: [{message: 'penalty was {%s}', exception: ValueError}]\nversions:"
    survivor = SURVIVOR.replace("versions:", old % "value", 1)
    twin = HOSTILE_TWIN.replace("versions:", old % "old", 1).replace(
        "params:\n", "params:\n  old: {about: The old value.}\n"
    )
    done = tidied(kb, survivor, twin)
    assert done.merged == []
    (line,) = done.warnings
    assert line.startswith(f"content/errors/demo/{TWIN}.yaml:8: not merged into {ACTIVE}")
    assert f"params.old.about: no wording of {ACTIVE} has the placeholder {{old}}" in line


def test_a_comment_inside_a_field_the_merge_rewrites_refuses_it(kb):
    survivor = SURVIVOR.replace("tags: [sampling]", "tags:\n  # ours first\n  - sampling")
    done = tidied(kb, survivor, HOSTILE_TWIN)
    assert done.merged == []
    assert "comment '# ours first' is inside a field the merge rewrites" in done.warnings[0]
    assert path(kb, ACTIVE).read_text() == survivor


def test_every_field_of_the_schema_has_a_merge_rule():
    rules = [
        chronicle._WORDINGS,
        chronicle._FROM_CODE,
        chronicle._UNION,
        chronicle._LATER,
        chronicle._ONE,
        chronicle._BY_PART,
    ]
    named = [name for rule in rules for name in rule]
    assert sorted(named) == sorted(record_fields())  # each once, none missing


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('message: "#tokens: {n}"  # ours\n', ["# ours"]),
        ("meaning: |\n  # a heading\n  text\n# after\n", ["# after"]),
        ("message: a#b\n", []),
        (HEAD + "id: x\n", []),
    ],
)
def test_comments_are_told_from_a_hash_inside_a_value(text, found):
    assert chronicle.comments(text) == found

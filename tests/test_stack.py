"""Stack projects (#23): libraries the engines run on (torch, NCCL), whose records give
advice per serving engine in `engines:`, checked against the engines' own records."""

import re

import pytest

from errorkb.content.load import load_content
from errorkb.content.model import ContentError

OOM = "content/errors/torch/aec1c60254c32faa.yaml"
NCCL = "content/errors/nccl/e9d6a3197f91ce80.yaml"
VLLM_CACHE = "df0e813b3de60b27"
SGLANG_MEMORY = "246d2acc4005c317"


def problems_of(kb) -> list[str]:
    with pytest.raises(ContentError) as info:
        load_content(kb)
    return [str(p) for p in info.value.problems]


def edit(kb, rel: str, old: str, new: str) -> None:
    path = kb / rel
    text = path.read_text()
    assert old in text, f"fixture lacks {old!r}"
    path.write_text(text.replace(old, new, 1))


def line_of(kb, rel: str, needle: str) -> int:
    lines = (kb / rel).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def test_stack_projects_and_their_advice_per_engine_load(stack_kb):
    content = load_content(stack_kb)
    kinds = {key: p.kind for key, p in content.projects.items()}
    assert kinds == {
        "demo": "engine",
        "nccl": "stack",
        "sglang": "engine",
        "torch": "stack",
        "vllm": "engine",
    }
    oom = content.records["aec1c60254c32faa"]
    assert list(oom.engines) == ["vllm", "sglang"]
    assert oom.engine_related == [VLLM_CACHE, SGLANG_MEMORY]
    assert "--mem-fraction-static" in oom.engines["sglang"]["solutions"][0]


# (what is wrong, file, old text, new text, code, field, the line the problem is on)
BAD = [
    (
        "an engine key that is no project",
        OOM,
        "  sglang:\n    solutions:",
        "  sglangg:\n    solutions:",
        "E109",
        "engines.sglangg",
        "sglangg:",
    ),
    (
        "an engine key that names a stack project",
        OOM,
        "  sglang:\n    solutions:",
        "  nccl:\n    solutions:",
        "E125",
        "engines.nccl",
        "  nccl:",
    ),
    (
        "a related id that does not exist",
        OOM,
        f"related: [{VLLM_CACHE}]",
        "related: [00000000000000e9]",
        "E104",
        "engines.vllm.related[0]",
        "related: [00000000000000e9]",
    ),
    (
        "a related id of the other engine",
        OOM,
        f"related: [{VLLM_CACHE}]",
        f"related: [{SGLANG_MEMORY}]",
        "E125",
        "engines.vllm.related[0]",
        f"    related: [{SGLANG_MEMORY}]",
    ),
    (
        "an unknown field in an engine's advice",
        NCCL,
        "  sglang:\n    solutions:",
        "  sglang:\n    flags: [--tp 8]\n    solutions:",
        "E102",
        "engines.sglang.flags",
        "flags:",
    ),
    (
        "related ids that are not a list",
        OOM,
        f"related: [{SGLANG_MEMORY}]",
        f"related: {SGLANG_MEMORY}",
        "E103",
        "engines.sglang.related",
        f"related: {SGLANG_MEMORY}",
    ),
    (
        "advice per engine in an engine's own record",
        f"content/errors/sglang/{SGLANG_MEMORY}.yaml",
        "solutions:\n",
        "engines:\n  vllm: {solutions: [Lower --gpu-memory-utilization.]}\nsolutions:\n",
        "E125",
        "engines",
        "engines:",
    ),
    (
        "a project of an unknown kind",
        "content/projects/nccl.yaml",
        "kind: stack",
        "kind: library",
        "E103",
        "kind",
        "kind:",
    ),
]


@pytest.mark.parametrize(("what", "rel", "old", "new", "code", "field", "needle"), BAD)
def test_bad_engine_advice_is_named_with_file_line_and_field(
    stack_kb, what, rel, old, new, code, field, needle
):
    edit(stack_kb, rel, old, new)
    found = problems_of(stack_kb)
    line = line_of(stack_kb, rel, needle)
    pattern = rf"^{re.escape(rel)}:{line}: {code} {re.escape(field)}: .+"
    assert any(re.match(pattern, p) for p in found), (what, found)


def test_the_problem_says_which_engines_there_are(stack_kb):
    edit(stack_kb, OOM, "  sglang:\n    solutions:", "  sglangg:\n    solutions:")
    (problem,) = problems_of(stack_kb)
    assert "unknown engine 'sglangg'" in problem and "demo, sglang, vllm" in problem


def test_a_one_project_site_keeps_only_its_own_links(stack_kb):
    torch = load_content(stack_kb).only("torch")
    advice = torch.records["aec1c60254c32faa"].engines
    assert advice["vllm"]["related"] == [] and advice["sglang"]["related"] == []
    assert advice["vllm"]["solutions"]  # the advice stays, only links to absent pages go

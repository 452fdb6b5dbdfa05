"""E120: vLLM commands in example fixes and guides run through calc.py on the stated machine."""

from pathlib import Path

import pytest

from errorkb.content.load import load_content
from errorkb.content.model import ContentError
from errorkb.projects.vllm import calc
from errorkb.projects.vllm import checks as records

REPO = Path(__file__).resolve().parent.parent

RECORD = """\
# yaml-language-server: $schema=../../../generator/error.schema.json
id: 00000000000000e1
project: demo
exception: ValueError
message: A demo error.
source: {{path: demo/x.py}}
example_fix:
{machine}  before:
    language: bash
    code: {before}
  after:
    language: bash
    code: |
{after}
"""


def _write(kb: Path, before: str, after: list[str], machine: str = "") -> Path:
    path = kb / "content" / "errors" / "demo" / "00000000000000e1.yaml"
    body = "".join(f"      {line}\n" for line in after)
    path.write_text(RECORD.format(machine=machine, before=before, after=body.rstrip("\n")))
    return path


def _problems(kb: Path) -> list[str]:
    try:
        load_content(kb)
    except ContentError as exc:
        return [str(p) for p in exc.problems if p.code == "E120"]
    return []


def test_every_example_command_in_content_passes(real_content):
    content = real_content
    assert records.command_problems(content) == []
    # Not vacuous: the check reads commands in records and in guides, many above one node.
    seen = []
    for record in content.records.values():
        fix = record.data.get("example_fix") or {}
        for side in ("before", "after"):
            code = fix.get(side, {}).get("code", "")
            seen += [w for _, w, _ in records._commands(code) if calc.read_command(w)]
    blocks = [m.group(3) for g in content.guides for m in records._FENCE.finditer(g.body)]
    guides = [w for code in blocks for _, w, _ in records._commands(code)]
    launches = [w for w in seen + guides if calc.read_command(w)]
    assert len(launches) >= 60
    assert sum("--nnodes" in w for w in launches) >= 20
    assert sum(1 for w in guides if calc.read_command(w)) >= 6


def test_a_fix_above_one_node_without_multi_node_flags_is_caught(kb):
    cmd = "vllm serve x --tensor-parallel-size 16 --decode-context-parallel-size 2"
    _write(kb, "vllm serve x -tp 3", [f"{cmd} --port 8000"])
    (problem,) = _problems(kb)
    where = "content/errors/demo/00000000000000e1.yaml:14: E120 example_fix.after"
    assert problem.startswith(where)
    assert "would stop with dd418736ee7fb7a3: World size (16) is larger" in problem


def test_multi_node_flags_or_a_bigger_node_make_it_pass(kb):
    cmd = "vllm serve x -tp 16"
    _write(kb, "echo", [f"{cmd} --nnodes 2 --node-rank 0 --master-addr 10.0.0.1"])
    assert _problems(kb) == []
    _write(kb, "echo", [cmd], machine="  gpus_per_node: 16\n")
    assert _problems(kb) == []


def test_the_line_of_a_continued_command_and_a_wrong_node_rank(kb):
    after = [
        "# node 0",
        "vllm serve x -tp 16 \\",
        "  --nnodes 2 --node-rank 0 --master-addr 10.0.0.1",
        "# node 1",
        "vllm serve x -tp 16 \\",
        "  --nnodes 2 --node-rank 2 --master-addr 10.0.0.1 --headless",
    ]
    _write(kb, "echo", after)
    (problem,) = _problems(kb)
    assert ":18: E120" in problem and "230acc43d4f8cfca" in problem


def test_before_must_fail_with_the_records_own_error_not_an_earlier_one(kb):
    # A known preset (models.yaml of the fixture: tiny, 8 heads, 2 KV heads).
    _write(kb, "vllm serve tiny -tp 3", ["vllm serve tiny -tp 2"])
    (problem,) = _problems(kb)
    assert "example_fix.before" in problem
    assert "said to fail with 00000000000000e1, but stops first with f644a7c8e4fdc46c" in problem


def test_a_fails_comment_states_the_expected_error(kb):
    after = [
        "# fails: f644a7c8e4fdc46c",
        "vllm serve tiny -tp 3",
        "vllm serve tiny -tp 4  # fails: f644a7c8e4fdc46c",
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve tiny -tp 4",
    ]
    _write(kb, "echo", after)
    problems = _problems(kb)
    assert len(problems) == 2
    assert "tp 4` is said to fail with f644a7c8e4fdc46c, but passes every check" in problems[0]
    assert "World size (4) is larger than the number of available GPUs (2)" in problems[1]


def test_dp_replicas_beyond_the_node_are_caught_without_a_vllm_check(kb):
    _write(kb, "echo", ["vllm serve tiny -tp 8 -dp 2"])
    (problem,) = _problems(kb)
    assert "needs 16 GPUs on a node of 8" in problem
    _write(kb, "echo", ["vllm serve tiny -tp 8 -dp 2 -dpl 1 --data-parallel-address 10.0.0.1"])
    assert _problems(kb) == []


def test_ray_needs_the_machine_stated(kb):
    cmd = "vllm serve x -tp 16 --distributed-executor-backend ray"
    _write(kb, "echo", [cmd])
    (problem,) = _problems(kb)
    assert "Ray needs 16 GPUs in its cluster; 8 here" in problem
    _write(kb, "echo", [cmd], machine="  nodes: 2\n")
    assert _problems(kb) == []
    _write(kb, "echo", [f"{cmd} --nnodes 2"], machine="  nodes: 2\n")
    assert "ff12640a36a84da9" in _problems(kb)[0]


@pytest.mark.parametrize(
    "command",
    [
        "vllm serve x --tensor_parallel_size=16",
        "python -m vllm.entrypoints.openai.api_server --model x -tp 16",
        "NCCL_DEBUG=INFO /opt/venv/bin/vllm serve x -pp 2 -tp 8 && echo started",
        "$ vllm serve x --tensor-parallel-size 4 --prefill-context-parallel-size 4",
    ],
)
def test_spellings_of_a_launch_that_needs_two_nodes(kb, command):
    _write(kb, "echo", [command])
    (problem,) = _problems(kb)
    assert "dd418736ee7fb7a3" in problem


def test_unreadable_values_and_other_programs(kb):
    _write(kb, "echo", ["vllm serve x -tp sixteen"])
    (problem,) = _problems(kb)
    assert "cannot check `vllm serve x -tp sixteen`: tp must be a whole number" in problem
    _write(kb, "echo", ["echo vllm serve x -tp 16 'unbalanced", "nvidia-smi -L", "vllm --help"])
    assert _problems(kb) == []


def test_guide_code_blocks_are_checked_at_their_line(kb):
    guide = kb / "content" / "guides" / "grouping.md"
    text = guide.read_text().replace("updated:", "gpus_per_node: 4\nupdated:", 1)
    text += "\n```bash\nvllm serve x -tp 8\n```\n\n```python\nvllm serve x -tp 8\n```\n"
    guide.write_text(text)
    (problem,) = _problems(kb)
    line = text.splitlines().index("vllm serve x -tp 8") + 1
    assert problem.startswith(f"content/guides/grouping.md:{line}: E120 (code):")
    assert "available GPUs (4)" in problem

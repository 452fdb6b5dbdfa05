"""The calculators against the independent oracle (bench/oracle/): the engines' own code.

Fast: the golden outcomes in tests/fixtures/oracle/ (what vLLM 0.33.0 and SGLang 0.5.23
do at each point, recorded by `bench/oracle/run --write-golden tests/fixtures/oracle`)
against the calculators' answers now: no wheel needed.
Slow: the oracle itself on a small grid, from the wheels (skipped without them).
Only points where the engine raises must agree: the calculator must name that very error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "bench" / "oracle"
GOLDEN = ROOT / "tests" / "fixtures" / "oracle"
sys.path.insert(0, str(ORACLE))

import calcs  # noqa: E402
import compare  # noqa: E402
import engine_memory  # noqa: E402
import wheels  # noqa: E402


def _golden(name: str) -> list[dict]:
    with open(GOLDEN / f"{name}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _raising_disagreements(rows: list[dict]) -> list[dict]:
    return compare.disagreements(rows, 10**9, raising_only=True)


@pytest.mark.slow
def test_vllm_calculator_names_the_error_vllm_raises():
    rows = [dict(r, calc=calcs.vllm_calc(r["point"])) for r in _golden("vllm")]
    assert len(rows) > 300
    bad = _raising_disagreements(rows)
    assert not bad, compare.format_report("vllm", compare.tally(rows), bad[:5])


def test_sglang_calculator_names_the_error_sglang_raises():
    rows = []
    for r in _golden("sglang"):
        rows.append(dict(r, calc=calcs.sglang_calc(r["point"], r["family"])))
    assert len(rows) > 300
    bad = _raising_disagreements(rows)
    assert not bad, compare.format_report("sglang", compare.tally(rows), bad[:5])


def test_memory_estimate_names_vllm_error_and_page():
    golden = _golden("memory")
    rows = engine_memory.compare_points([g["point"] for g in golden])
    assert len(rows) == len(golden)
    for row, g in zip(rows, golden, strict=True):
        # what vLLM does at the estimate's available memory, as recorded
        assert row["engine"] == g["engine"], row["point"]
        assert row["checks"]["error"], (row["point"], row["engine"], row["calc"])
        assert row["checks"]["bytes_per_block"], row["point"]
        assert row["checks"]["blocks=num_gpu_blocks"], (row["point"], row["calc"])


@pytest.mark.slow
@pytest.mark.skipif(not (wheels.find_wheel("vllm") and wheels.find_wheel("sglang")),
                    reason="the oracle needs vllm-0.33.0 and sglang-0.5.23 wheels in "
                           "/work/wheels or ~/.cache/errorkb (CI does not download them)")
def test_oracle_small_grid_from_the_wheels(tmp_path):
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, str(ORACLE / "run"), "--only", "vllm,memory",
                           "--limit", "1500", "--json", str(out)],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert len(rows["vllm"]) == 1500
    assert not _raising_disagreements(rows["vllm"])

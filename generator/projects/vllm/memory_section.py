"""The memory estimate on the pages it fits: vLLM's records of a KV cache that does not fit,
a stack record that names it (`calculator: {name: memory}`, torch's CUDA out of memory) and
/calc/. Its static figures are computed at build time by memory.py, the file the browser's
widget runs."""

from errorkb.content.model import Record
from errorkb.projects.vllm import memory

NAME = "memory"  # the calculator's name in a record's `calculator:`
TEMPLATE = "projects/vllm/memory.html"
# The worked example of the static table: Llama 3.1 70B's shape (70.6 billion parameters,
# 80 layers, 8 KV heads of 128) in bfloat16, on one node of 8 GPUs of 80 GiB.
EXAMPLE: dict = {"params_b": 70.6, "layers": 80, "kv_heads": 8, "head_dim": 128, "gpu_gib": 80}
EXAMPLE_NAME = "a 70B model (Llama 3.1 70B's shape) in bfloat16 on 80 GiB GPUs"
EXAMPLE_TP = (1, 2, 4, 8)
OUTCOMES = {
    "oom": "CUDA out of memory while loading",
    "no_cache_memory": "No available memory for the cache blocks",
    "max_model_len": "max seq len does not fit",
}


def wanted(record: Record) -> bool:
    """Whether the record's page shows the estimate: memory.py names it, or it asks."""
    spec = record.data.get("calculator") or {}
    return record.id in memory.RECORDS or spec.get("name") == NAME


def section(record: Record | None = None) -> dict:
    """The section's context: its static table and, from the record, the placeholders that
    fill inputs (`calculator.inputs`, else those memory.py knows for its records)."""
    spec = (record.data.get("calculator") or {}) if record else {}
    inputs = spec.get("inputs") or (memory.RECORDS.get(record.id, {}) if record else {})
    return {
        "template": TEMPLATE,
        "id": "memory",
        "title": "Memory estimate",
        "inputs": inputs,
        "example": EXAMPLE_NAME,
        "rows": [_row(tp) for tp in EXAMPLE_TP],
        "defaults": {"utilization": memory.DEFAULT_UTILIZATION, "max_model_len": 8192},
    }


def _row(tp: int) -> list[str]:
    figures = memory.estimate(**EXAMPLE, tp=tp, max_model_len=8192)
    error = figures["error"]
    if error and error["kind"] == "oom":
        return [str(tp), _gib(figures["weights"]), "–", "–", OUTCOMES["oom"]]
    left = _gib(figures["available"]) if figures["available"] > 0 else "none"
    tokens = f"{figures['tokens']:,}"
    verdict = OUTCOMES[error["kind"]] if error else "starts"
    return [str(tp), _gib(figures["weights"]), left, tokens, verdict]


def _gib(value: int) -> str:
    return f"{value / memory.GIB:.1f} GiB"

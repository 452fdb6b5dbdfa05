"""Build-time answers for "Your case": the tensor parallel sizes vLLM accepts for the head
counts people meet, and what to start instead on one 8-GPU node, computed by calc.py, so an
error page answers the values in its address at once (the browser's Pyodide calculator
answers whatever these tables do not cover)."""

import functools

from errorkb.projects.vllm import calc

MAX_HEADS = 128  # every query-head count up to this; larger ones come from the presets
KV_COUNTS = (1, 2, 4, 8, 16)  # the KV-head counts of grouped-query models
NODE_GPUS = 8  # the node the advice assumes when the address names none


def _shapes(models: list[dict]) -> dict[str, tuple[int, int]]:
    """ "heads" (one KV head per query head, or MLA) or "heads/kv" -> (heads, kv)."""
    shapes = {(h, h) for h in range(1, MAX_HEADS + 1)}
    shapes |= {(h, kv) for h in range(1, MAX_HEADS + 1) for kv in KV_COUNTS if h % kv == 0}
    for model in models:
        heads = model["heads"]
        shapes.add((heads, heads if model.get("mla") else model.get("kv_heads", heads)))
    return {(str(h) if kv == h else f"{h}/{kv}"): (h, kv) for h, kv in sorted(shapes)}


def tp_table(models: list[dict]) -> dict[str, list[int]]:
    """Shape key -> the valid TP sizes."""
    return {key: list(_valid_tp_sizes(h, kv)) for key, (h, kv) in _shapes(models).items()}


def tp_advice(models: list[dict]) -> dict[str, list[int]]:
    """Shape key -> [TP, PP]: calc.suggest_tp on one 8-GPU node, for a TP size that fails."""
    out = {}
    for key, (h, kv) in _shapes(models).items():
        out[key] = list(_advice(h, kv))
    return out


# Every build asks for the same 700 shapes: a server or a test process answers them once.
@functools.cache
def _valid_tp_sizes(heads: int, kv_heads: int) -> tuple[int, ...]:
    return tuple(calc.valid_tp_sizes(heads, kv_heads))


@functools.cache
def _advice(heads: int, kv_heads: int) -> tuple[int, int]:
    advice = calc.suggest_tp(heads, kv_heads, gpus_per_node=NODE_GPUS)
    return advice["tp"], advice["pp"]

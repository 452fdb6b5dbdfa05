"""vLLM 0.33.0's KV-cache block count and its "max seq len" check, transcribed from its
code (the planning functions need a whole VllmConfig and KV-cache groups built by the model
runner, so they are read, not run), for one full-attention group on one GPU:

- page of one layer: vllm/v1/kv_cache_interface.py:593 unpadded_page_size_bytes =
  num_heads * num_states * state_content_size_bytes: KV heads per GPU x block_size tokens
  x (K and V: 2 x head_size x dtype bytes); KV heads per GPU = max(1, kv_heads // tp)
  (vllm/config/model.py get_num_kv_heads); fp8 caches take 1 byte.
- bytes_per_block = the sum of the pages of the group's layers
  (vllm/v1/core/kv_cache_planning.py:574-593 _get_kv_cache_bytes_per_block): the layers
  of this GPU's pipeline stage.
- num_blocks = available_memory // bytes_per_block (kv_cache_planning.py:681); this is
  cache_config.num_gpu_blocks (vllm/v1/engine/core.py:335), the pool's size.
- the block pool takes block 0 as the null block at start (vllm/v1/core/block_pool.py:191:
  `self.null_block = self.free_block_queue.popleft()`), so requests can use
  num_blocks - 1 (block_pool.py:929 "Subtract 1 to account for null block").
- the log line "GPU KV cache size: N tokens" (vllm/v1/core/kv_cache_utils.py:1148) is
  int(num_blocks / cdiv(max_model_len, block_size) * max_model_len)
  (kv_cache_utils.py:1061-1093, 1128-1131): from num_blocks, the null block included.
- errors (kv_cache_planning.py:56-87 _check_enough_kv_cache_memory), on the memory less the
  null block's bytes (kv_cache_planning.py:170-183 and 1533-1558: "Reserve the null block
  BlockPool permanently holds back, so the check plans against usable blocks"): that
  <= 0: "No available memory for the cache blocks. ..."; else when
  cdiv(max_model_len, block_size) * bytes_per_block (kv_cache_planning.py:1253-1285 and
  kv_cache_interface.py:643-648) > it: "To serve at least one request with the
  model's max seq len (...) ...".

The estimate's `available` (what errorkb's inputs leave for the KV cache) is taken as the
engine's available memory, so the comparison checks the block arithmetic, not the
weights and overhead, which are the estimate's own inputs.
"""

from __future__ import annotations

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "auto": 2, "float32": 4,
               "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def pp_stage_layers(layers: int, pp: int) -> int:
    """Layers of the largest stage: vllm/distributed/utils.py get_pp_indices gives each
    stage layers // pp and the remainder one each to stages before the last; the largest
    is layers // pp + (1 if the remainder > 0)."""
    return layers // pp + (1 if layers % pp else 0)


def engine(available: int, p: dict) -> dict:
    kv_per_gpu = max(1, p["kv_heads"] // p.get("tp", 1))
    page = kv_per_gpu * p["block_size"] * 2 * p["head_dim"] * DTYPE_BYTES[p["kv_dtype"]]
    layers = pp_stage_layers(p["layers"], p.get("pp", 1))
    bytes_per_block = page * layers
    check_memory = available - bytes_per_block  # the null block held back
    if check_memory <= 0:
        return {"num_gpu_blocks": max(0, available // bytes_per_block), "usable_blocks": 0,
                "logged_tokens": 0, "bytes_per_block": bytes_per_block,
                "error": "No available memory"}
    num_blocks = available // bytes_per_block
    per_request = cdiv(p["max_model_len"], p["block_size"])
    needed = per_request * bytes_per_block
    error = "To serve at least one request" if needed > check_memory else None
    return {"num_gpu_blocks": num_blocks, "usable_blocks": num_blocks - 1,
            "logged_tokens": int(num_blocks / per_request * p["max_model_len"]),
            "bytes_per_block": bytes_per_block, "needed": needed, "error": error}


def _calc_error_kind(message) -> str | None:
    if not message:
        return None
    text = message if isinstance(message, str) else str(message)
    for kind in ("No available memory", "To serve at least one request"):
        if kind in text:
            return kind
    return text[:60]


def compare_points(points: list[dict], wheel_dir: str | None = None) -> list[dict]:
    import calcs

    rows = []
    for p in points:
        est = calcs.memory_calc(p)
        err = est.get("error")
        if isinstance(err, dict):  # {"id", "kind"}: kind names vLLM's check
            err = {"max_model_len": "To serve at least one request",
                   "no_memory": "No available memory"}.get(err.get("kind"),
                                                           err.get("message") or err.get("kind"))
        e = engine(int(est["available"]), p)
        calc = {"blocks": est.get("blocks"), "tokens": est.get("tokens"),
                "block_bytes": est.get("block_bytes"), "error": _calc_error_kind(err)}
        checks = {
            "error": calc["error"] == e["error"],
            "bytes_per_block": calc["block_bytes"] == e["bytes_per_block"],
            "blocks=num_gpu_blocks": calc["blocks"] == e["num_gpu_blocks"] or bool(e["error"]),
            "blocks=usable": calc["blocks"] == e["usable_blocks"] or bool(e["error"]),
        }
        rows.append({"point": p, "family": p["kv_dtype"], "engine": e, "calc": calc,
                     "checks": checks,
                     "agree": checks["error"] and checks["bytes_per_block"]
                     and checks["blocks=num_gpu_blocks"]})
    return rows


def format_report(rows: list[dict], first: int = 8) -> str:
    n = len(rows)
    lines = [f"== vllm memory estimate: {n} points"]
    for key in ("error", "bytes_per_block", "blocks=num_gpu_blocks", "blocks=usable"):
        lines.append(f"   {key:<24} agrees on {sum(r['checks'][key] for r in rows)} of {n}")
    raising = [r for r in rows if r["engine"]["error"]]
    lines.append(f"   engine raises on {len(raising)}; calculator names the same error on "
                 f"{sum(r['checks']['error'] for r in raising)}")
    fams: dict[str, list[int]] = {}
    for r in rows:
        f = fams.setdefault(r["family"], [0, 0])
        f[0] += 1
        f[1] += r["agree"]
    for fam, (tot, ok) in sorted(fams.items()):
        lines.append(f"   {fam:<10} {ok} of {tot} agree (error, page, num_gpu_blocks)")
    bad = [r for r in rows if not r["agree"]][:first]
    if bad:
        lines.append("   first disagreements:")
        for r in bad:
            lines.append(f"     {r['point']}")
            lines.append(f"        engine: {r['engine']}")
            lines.append(f"        calc:   {r['calc']}")
    return "\n".join(lines)

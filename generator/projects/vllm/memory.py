"""An estimate of a GPU's memory under vLLM: the weights each GPU holds, what is left of
vLLM's budget for the KV cache, how many tokens that holds, and the error vLLM would stop
with. Pure standard library: the build computes a page's figures with it and the browser
runs this very file under Pyodide (the worker calls run()).

The arithmetic is vLLM 0.33.0's (tests/test_memory.py holds it against a transcription of
that code on a grid):
- budget = ceil(total GPU memory * gpu_memory_utilization)       (v1/worker/utils.py
  request_memory); the KV cache gets budget - (weights + peak activations + memory outside
  torch + CUDA graphs)                       (v1/worker/gpu_worker.py determine_available_memory)
- a page of the KV cache holds block_size tokens of one layer:
  block_size * KV heads per GPU * (head size of K + of V) * bytes of the cache dtype, KV heads
  per GPU = max(1, KV heads // TP) (config/model.py get_num_kv_heads); with MLA one latent
  (kv_lora_rank + qk_rope_head_dim) and no V                     (v1/kv_cache_interface.py)
- blocks = available // (page * layers of the GPU's pipeline stage): num_gpu_blocks, the pool's
  size (v1/core/kv_cache_planning.py get_kv_cache_configs), the null block the pool holds back
  among them; the layers split as get_pp_indices splits them (distributed/utils.py): the
  remainder goes to the stages before the last
- the tokens and concurrency vLLM logs ("GPU KV cache size: N tokens, Maximum concurrency
  ...", v1/core/kv_cache_utils.py get_kv_cache_capacity): blocks / blocks of one request of
  max_model_len, and that times max_model_len
- with no memory left: "No available memory for the cache blocks"; with less than one
  request of max_model_len needs: "To serve at least one request ..."
  (v1/core/kv_cache_planning.py _check_enough_kv_cache_memory), both checked against the
  memory less the null block's bytes (check_enough_kv_cache_memory)

What it cannot know it takes as inputs: the peak activations, CUDA graphs and memory outside
torch (`overhead_gib`, as vLLM's log prints them), and the weights (parameters times the
bytes of their dtype, spread evenly over TP x PP: embeddings and norms make the real split
a little uneven). It is an estimate.
"""

import math

GIB = 1 << 30
# Bytes per element, as vLLM sizes them (utils/torch_utils.py STR_DTYPE_TO_TORCH_DTYPE).
DTYPE_BYTES = {
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "int8": 1,
    "int4": 0.5,  # weights only: AWQ, GPTQ (their scales are left out)
}
KV_DTYPES = ("bfloat16", "float16", "float32", "fp8", "fp8_e4m3", "fp8_e5m2")
DEFAULT_UTILIZATION = 0.92  # vLLM 0.33.0's --gpu-memory-utilization
DEFAULT_BLOCK_SIZE = 16
# vLLM's records of these errors (content/errors/vllm/), named in answers; their pages show
# the estimate, the placeholders of their messages filling its inputs.
NO_CACHE_MEMORY = "30efd80ca0c42d57"
MAX_LEN_TOO_LONG = "b3a6e27a21d4acc5"
# The inputs each record's placeholders fill; "needed" and "available" are the message's own
# figures (GiB), which memory.js turns into the length that fits, without Python.
RECORDS = {
    NO_CACHE_MEMORY: {},
    MAX_LEN_TOO_LONG: {
        "max_model_len": "max_model_len",
        "needed": "needed_memory",
        "available": "available_memory",
    },
}
MAX_INT = 1 << 20  # no count this estimate takes is larger: bigger input is a typo


class InputError(ValueError):
    """An input the estimate cannot take, said in words for the page."""


def pp_layers(layers: int, pp: int) -> list[int]:
    """The decoder layers of each pipeline stage, split as vLLM splits them: evenly, the
    remainder one each to the stages before the last (from the second to last backwards)."""
    split = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        split[-i] += 1
    return split


def kv_bytes_per_token(
    kv_heads: int, head_dim: int, kv_dtype: str, tp: int = 1, mla: bool = False
) -> int:
    """Bytes of KV cache one token takes in one layer on one GPU."""
    size = DTYPE_BYTES[kv_dtype]
    if mla:  # one latent vector per token, not split by TP
        return int(head_dim * size)
    return int(max(1, kv_heads // tp) * 2 * head_dim * size)


def estimate(
    *,
    params_b: float,
    weight_dtype: str = "bfloat16",
    layers: int,
    kv_heads: int,
    head_dim: int = 128,
    mla: bool = False,
    kv_dtype: str = "bfloat16",
    gpu_gib: float = 80.0,
    tp: int = 1,
    pp: int = 1,
    utilization: float = DEFAULT_UTILIZATION,
    max_model_len: int = 8192,
    overhead_gib: float = 2.0,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> dict:
    """The figures of one GPU (the one with the most layers), in bytes, and the first error
    vLLM would stop with (None when it starts)."""
    _check(params_b, weight_dtype, layers, kv_heads, head_dim, kv_dtype, gpu_gib, tp, pp)
    _check_more(utilization, max_model_len, overhead_gib, block_size)
    total = int(gpu_gib * GIB)
    budget = math.ceil(total * utilization)
    weights = int(params_b * 1e9 * DTYPE_BYTES[weight_dtype] / (tp * pp))
    overhead = int(overhead_gib * GIB)
    available = budget - weights - overhead
    stage_layers = max(pp_layers(layers, pp))
    per_token_layer = kv_bytes_per_token(kv_heads, head_dim, kv_dtype, tp, mla)
    block = block_size * per_token_layer * stage_layers  # bytes of one block, all layers
    usable = available - block  # what the checks plan with: the null block held back
    blocks = max(0, available // block)  # num_gpu_blocks, the null block among them
    per_request = math.ceil(max_model_len / block_size)  # the blocks of one request
    needed = per_request * block  # one request of max_model_len
    concurrency = blocks / per_request
    out: dict = {
        "total": total,
        "budget": budget,
        "weights": weights,
        "overhead": overhead,
        "available": available,
        "stage_layers": stage_layers,
        "kv_per_token": per_token_layer * stage_layers,
        "block_bytes": block,
        "blocks": blocks,
        "tokens": int(concurrency * max_model_len),
        # the "estimated maximum model length" of vLLM's error: what the usable blocks hold
        "max_len": min(max_model_len, max(0, usable // block) * block_size),
        "needed": needed,
        "concurrency": concurrency,
        "error": None,
    }
    if weights > total:
        out["error"] = {"kind": "oom", "why": "the weights alone are larger than the GPU"}
    elif usable <= 0:
        out["error"] = {"id": NO_CACHE_MEMORY, "kind": "no_cache_memory"}
    elif needed > usable:
        out["error"] = {"id": MAX_LEN_TOO_LONG, "kind": "max_model_len"}
    return out


def _check(params_b, weight_dtype, layers, kv_heads, head_dim, kv_dtype, gpu_gib, tp, pp):
    _number("parameters (billions)", params_b, 0, 100_000)
    _choice("weight dtype", weight_dtype, DTYPE_BYTES)
    _choice("KV cache dtype", kv_dtype, KV_DTYPES)
    for name, value in (("layers", layers), ("KV heads", kv_heads), ("head size", head_dim)):
        _count(name, value)
    for name, value in (("tensor parallel size", tp), ("pipeline parallel size", pp)):
        _count(name, value)
    if pp > layers:
        raise InputError(f"pipeline parallel size {pp} is larger than the {layers} layers")
    _number("GPU memory (GiB)", gpu_gib, 0, 100_000)


def _check_more(utilization, max_model_len, overhead_gib, block_size):
    _number("--gpu-memory-utilization", utilization, 0, 1, top_included=True)
    _count("--max-model-len", max_model_len, most=1 << 31)
    _number("overhead (GiB)", overhead_gib, -1e-9, 100_000)
    _count("block size", block_size)


def _count(name: str, value, most: int = MAX_INT) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InputError(f"{name} must be a whole number from 1 to {most:,}, not {value!r}")


def _number(name: str, value, low: float, high: float, top_included: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not (low < value and (value <= high if top_included else value < high)):
        top = "at most" if top_included else "below"
        raise InputError(f"{name} must be a number above {max(low, 0):g} and {top} {high:g}")


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


FIELDS = (
    "params_b",
    "weight_dtype",
    "layers",
    "kv_heads",
    "head_dim",
    "mla",
    "kv_dtype",
    "gpu_gib",
    "tp",
    "pp",
    "utilization",
    "max_model_len",
    "overhead_gib",
    "block_size",
)


def run(request: dict) -> dict:
    """The worker's entry: {op: "estimate", ...inputs} -> {result} or {error}."""
    if request.get("op", "estimate") != "estimate":
        return {"error": f"unknown operation {request.get('op')!r}"}
    unknown = sorted(set(request) - set(FIELDS) - {"op"})
    if unknown:
        return {"error": f"unknown input {unknown[0]!r}"}
    try:
        return {"result": estimate(**{k: v for k, v in request.items() if k != "op"})}
    except (InputError, TypeError) as exc:
        return {"error": str(exc)}

"""The memory estimate (generator/projects/vllm/memory.py) against vLLM 0.33.0's own
arithmetic, transcribed below from its code on a grid of models, GPUs and settings; and its
answers to bad input."""

import itertools
import math
from dataclasses import dataclass

import pytest

from errorkb.projects.vllm import memory

GIB = 1 << 30


# ------------------------------------------------ vLLM 0.33.0, transcribed (the oracle)
# Each function follows the code it names, step by step, with vLLM's own data flow (a spec
# per layer, the binary search of estimate_max_model_len), not memory.py's shortcuts.


def cdiv(a: int, b: int) -> int:  # vllm.utils.math_utils.cdiv
    return -(a // -b)


def get_pp_indices(num_hidden_layers: int, pp_rank: int, pp_size: int) -> tuple[int, int]:
    # vllm/distributed/utils.py, without VLLM_PP_LAYER_PARTITION
    layers_per_partition = num_hidden_layers // pp_size
    partitions = [layers_per_partition for _ in range(pp_size)]
    if remaining_layers := num_hidden_layers % pp_size:
        for i in range(2, remaining_layers + 2):
            partitions[-i] += 1
    start_layer = sum(partitions[:pp_rank])
    return start_layer, start_layer + partitions[pp_rank]


@dataclass(frozen=True)
class AttentionSpec:  # vllm/v1/kv_cache_interface.py, FullAttentionSpec and MLAAttentionSpec
    block_size: int
    num_kv_heads: int
    head_size: int
    dtype_size: int  # get_dtype_size(dtype)
    head_size_v: int

    @property
    def page_size_bytes(self) -> int:  # num_heads * num_states * state_content_size_bytes
        return (
            self.num_kv_heads
            * self.block_size
            * (self.head_size + self.head_size_v)
            * (self.dtype_size)
        )

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        return cdiv(max_model_len, self.block_size) * self.page_size_bytes


def vllm_worker(case: dict) -> dict:
    """What one worker of vLLM computes for the case: the stage with the most layers."""
    total = case["gpu_gib"] * GIB
    # v1/worker/utils.py request_memory
    requested_memory = math.ceil(total * case["utilization"])
    # v1/worker/gpu_worker.py determine_available_memory: non_kv_cache_memory is the weights,
    # the activation peak and memory outside torch; `overhead` the last two (and graphs).
    weights = case["params_b"] * 1e9 * case["weight_bytes"] / (case["tp"] * case["pp"])
    non_kv_cache_memory = int(weights) + case["overhead_gib"] * GIB
    available = requested_memory - non_kv_cache_memory
    # config/model.py get_num_kv_heads; MLA: one head, the latent, no V
    if case["mla"]:
        num_kv_heads, head_size_v = 1, 0
    else:
        num_kv_heads, head_size_v = max(1, case["kv_heads"] // case["tp"]), case["head_dim"]
    spec = AttentionSpec(
        case["block_size"], num_kv_heads, case["head_dim"], case["kv_bytes"], head_size_v
    )
    worst = None
    for rank in range(case["pp"]):
        start, end = get_pp_indices(case["layers"], rank, case["pp"])
        specs = [spec] * (end - start)
        # v1/core/kv_cache_planning.py check_enough_kv_cache_memory: the null block's bytes
        bytes_per_block = sum(s.page_size_bytes for s in specs)
        check_memory = available - bytes_per_block
        # v1/core/kv_cache_planning.py get_kv_cache_configs: the pool's size, num_gpu_blocks
        answer = {"available": available, "blocks": available // bytes_per_block}
        answer["error"] = check_enough(check_memory, specs, case["max_model_len"])
        if worst is None or len(specs) > worst[0]:
            worst = (len(specs), answer)
    return worst[1]


def check_enough(available_memory: int, specs, max_model_len: int):
    """_check_enough_kv_cache_memory: the error it raises, or None."""
    if available_memory <= 0:
        return ("no_cache_memory", None)
    needed = sum(s.max_memory_usage_bytes(max_model_len) for s in specs)
    if needed > available_memory:
        return ("max_model_len", estimate_max_model_len(specs, available_memory, max_model_len))
    return None


def estimate_max_model_len(specs, available_memory: int, original: int) -> int:
    def fits(model_len: int) -> bool:
        return sum(s.max_memory_usage_bytes(model_len) for s in specs) <= available_memory

    left, right = 1, original
    if not fits(left):
        return 0
    result = 1
    while left <= right:
        mid = (left + right) // 2
        if fits(mid):
            result, left = mid, mid + 1
        else:
            right = mid - 1
    return result


# ------------------------------------------------ the grid

MODELS = [  # (params in billions, layers, KV heads, head size, MLA)
    (8.0, 32, 8, 128, False),  # Llama 3.1 8B's shape
    (70.6, 80, 8, 128, False),  # Llama 3.1 70B's
    (32.8, 64, 8, 128, False),  # Qwen2.5 32B's
    (7.2, 28, 4, 128, False),
    (0.5, 24, 2, 64, False),
    (671.0, 61, 128, 576, True),  # DeepSeek-V3's: 576 = kv_lora_rank 512 + rope 64
    (12.0, 40, 40, 128, False),  # one KV head per query head
]
GRID = list(
    itertools.product(
        MODELS,
        [("bfloat16", 2), ("fp8", 1), ("int4", 0.5)],  # weights
        [("bfloat16", 2), ("fp8", 1)],  # KV cache
        [24, 80, 141],  # GPU memory, GiB
        [1, 2, 4, 8],  # TP
        [1, 3],  # PP
        [0.5, 0.92],  # --gpu-memory-utilization
        [4096, 131072],  # --max-model-len
        [1.5, 6.0],  # activations, memory outside torch, CUDA graphs: GiB
    )
)


def test_the_grid_is_large_and_reaches_every_outcome():
    outcomes = {(vllm_worker(as_case(*c))["error"] or ("starts",))[0] for c in GRID}
    assert len(GRID) > 8000 and outcomes == {"starts", "no_cache_memory", "max_model_len"}


def as_case(model, weights, kv, gpu_gib, tp, pp, utilization, max_model_len, overhead):
    params_b, layers, kv_heads, head_dim, mla = model
    return {
        "params_b": params_b,
        "weight_dtype": weights[0],
        "weight_bytes": weights[1],
        "layers": layers,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "mla": mla,
        "kv_dtype": kv[0],
        "kv_bytes": kv[1],
        "gpu_gib": gpu_gib,
        "tp": tp,
        "pp": pp,
        "utilization": utilization,
        "max_model_len": max_model_len,
        "overhead_gib": overhead,
        "block_size": 16,
    }


@pytest.mark.parametrize("chunk", range(8))
def test_estimate_agrees_with_vllms_arithmetic_on_the_grid(chunk):
    for combo in GRID[chunk::8]:
        case = as_case(*combo)
        inputs = {k: v for k, v in case.items() if k not in ("weight_bytes", "kv_bytes")}
        mine = memory.estimate(**inputs)
        vllm = vllm_worker(case)
        if mine["weights"] > mine["total"]:  # torch's OOM while loading: vLLM gets no further
            assert mine["error"]["kind"] == "oom", case
            continue
        assert mine["available"] == vllm["available"], case
        assert mine["blocks"] == max(0, vllm["blocks"]), case
        error = vllm["error"]
        assert (mine["error"] or {}).get("kind") == (error[0] if error else None), case
        if error and error[0] == "max_model_len":
            # vLLM's "estimated maximum model length": what the usable blocks hold
            assert mine["max_len"] == error[1], case


def test_the_stage_with_the_most_layers_is_the_one_estimated():
    assert memory.pp_layers(61, 4) == [15, 15, 16, 15]  # the remainder: before the last
    assert memory.pp_layers(80, 3) == [27, 27, 26]
    assert memory.estimate(params_b=70, layers=80, kv_heads=8, pp=3)["stage_layers"] == 27


def test_kv_heads_fewer_than_tp_are_replicated():
    one = memory.kv_bytes_per_token(8, 128, "bfloat16", tp=8)
    assert memory.kv_bytes_per_token(8, 128, "bfloat16", tp=16) == one == 2 * 128 * 2


@pytest.mark.parametrize(
    ("request_", "needle"),
    [
        ({"params_b": 70, "layers": 80, "kv_heads": 8, "tp": 0}, "tensor parallel size"),
        ({"params_b": 70, "layers": 80, "kv_heads": 8, "utilization": 1.5}, "utilization"),
        ({"params_b": -1, "layers": 80, "kv_heads": 8}, "parameters"),
        ({"params_b": float("nan"), "layers": 80, "kv_heads": 8}, "parameters"),
        ({"params_b": 70, "layers": 80, "kv_heads": 8, "kv_dtype": "int4"}, "KV cache dtype"),
        ({"params_b": 70, "layers": 80, "kv_heads": 8, "pp": 81}, "larger than the 80 layers"),
        ({"params_b": 70, "layers": 10**9, "kv_heads": 8}, "layers must be a whole number"),
        ({"params_b": 70, "layers": 80, "kv_heads": 8, "cores": 2}, "unknown input 'cores'"),
        ({"params_b": 70, "layers": 80}, "kv_heads"),
    ],
)
def test_bad_input_gets_a_clear_error(request_, needle):
    answer = memory.run(request_)
    assert "result" not in answer and needle in answer["error"], answer


def test_a_known_case_in_figures():
    """Llama 3.1 70B in bf16 on 4 x 80 GiB at 0.92, 2 GiB of overhead: 35.3 GB of weights a
    GPU, 38.7 GiB left; a token of all 80 layers takes 80 x 2 KV heads x 2 x 128 x 2 bytes."""
    answer = memory.run({"params_b": 70.6, "layers": 80, "kv_heads": 8, "tp": 4})["result"]
    assert answer["weights"] == 70.6e9 * 2 / 4
    assert answer["kv_per_token"] == 80 * 2 * 2 * 128 * 2
    assert round(answer["available"] / GIB, 1) == 38.7
    assert answer["error"] is None and answer["tokens"] > 300_000


def test_the_records_it_names_are_vllms_records_of_those_errors():
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "content/errors/vllm"
    no_memory = (folder / f"{memory.NO_CACHE_MEMORY}.yaml").read_text()
    too_long = (folder / f"{memory.MAX_LEN_TOO_LONG}.yaml").read_text()
    assert "No available memory for the cache blocks" in no_memory
    assert "To serve at least one request with the model's max seq len" in too_long

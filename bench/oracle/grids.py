"""The grids of launches the oracle checks (small: the slow test's and the golden files';
full: `bench/oracle/run --grid full`)."""

from __future__ import annotations

import itertools

# (gpus_per_node, nnodes): None = not given (errorkb assumes the node is big enough, the
# engine's fake node has more GPUs than any point needs).
VLLM_NODES = {
    "small": [(None, 1), (8, 1), (4, 1), (4, 2), (8, 3)],
    "full": [(None, 1), (8, 1), (4, 1), (4, 2), (8, 3), (4, 4)],
}


def vllm_points(grid: str) -> list[dict]:
    small = grid == "small"
    heads_kv = ([(32, 8), (40, 8), (28, 4), (64, 64), (12, 2)] if small else
                [(h, k) for h in (12, 28, 40, 64, 128) for k in (1, 4, 8, h) if h % k == 0])
    tps = (1, 2, 3, 4, 8, 16) if small else (1, 2, 3, 4, 6, 8, 16, 32)
    pps = (1, 2)
    dps = (1, 2) if small else (1, 3)
    dcps = (1, 2, 4) if small else (1, 2, 3, 8)
    pcps = (1, 2)
    out = []
    for (h, k), tp, pp, dp, dcp, pcp, (g, n) in itertools.product(
            heads_kv, tps, pps, dps, dcps, pcps, VLLM_NODES[grid]):
        for mla in ((False, True) if k == h else (False,)):
            if small and (pp, dp, pcp) != (1, 1, 1) and g is None and dcp == 4:
                continue
            p = dict(heads=h, kv_heads=k, tp=tp, pp=pp, dp=dp, dcp=dcp, pcp=pcp, mla=mla,
                     gpus_per_node=g, nnodes=n)
            out.append(p)
    # the executor backend and node rank, on a few multi-node points
    for (g, n), backend, rank in itertools.product([(4, 2), (8, 2)], ("ray", "mp"), (0, 1, 2)):
        out.append(dict(heads=32, kv_heads=8, tp=8, pp=1, dp=1, dcp=1, pcp=1, mla=False,
                        gpus_per_node=g, nnodes=n, backend=backend, node_rank=rank))
    return out


def vllm_family(p: dict) -> str:
    return "mla" if p.get("mla") else ("mha" if p["kv_heads"] == p["heads"] else "gqa")


def sglang_points(grid: str) -> list[dict]:
    small = grid == "small"
    heads_kv = ([(40, 8), (32, 8), (64, 4), (28, 4), (16, 16)] if small else
                [(h, k) for h in (8, 12, 16, 28, 32, 40, 64, 128) for k in (1, 2, 4, 8, h)
                 if h % k == 0])
    tps = (1, 2, 3, 4, 8, 16, 40) if small else (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32, 40, 64)
    attn_dps = (1, 2, 4, 8) if small else (1, 2, 3, 4, 8)
    dps = (1, 2)
    eps = (1, 2, 3, 16) if small else (1, 2, 3, 4, 8, 16)
    pps = (1, 2)
    nnodes = (1, 2) if small else (1, 2, 3, 4)
    out = []
    for (h, k), tp, adp, dp, ep, pp, n in itertools.product(
            heads_kv, tps, attn_dps, dps, eps, pps, nnodes):
        if small and ep not in (1, 16) and (adp, dp, pp, n) != (1, 1, 1, 1):
            continue
        out.append(dict(heads=h, kv_heads=k, tp=tp, attn_dp=adp, dp=dp, ep=ep, pp=pp, nnodes=n))
    return out


SGLANG_FAMILIES = ("llama", "qwen3")


def memory_points(grid: str) -> list[dict]:
    """Inputs of errorkb's estimate (weights and overhead fixed, so the KV budget moves with
    gpu_gib): the engine side recomputes blocks from the same available memory."""
    small = grid == "small"
    out = []
    for gib, layers, kv, hd, dtype, block, tp, pp, mml in itertools.product(
            (24.0, 40.0, 80.0) if small else (16.0, 24.0, 40.0, 48.0, 80.0, 141.0),
            (32, 61) if small else (24, 28, 32, 40, 61, 80),
            (8, 1) if small else (1, 2, 8, 32),
            (128,) if small else (64, 128, 256),
            ("bfloat16", "fp8") if small else ("bfloat16", "float32", "fp8"),
            (16, 32) if small else (16, 32, 64),
            (1, 2) if small else (1, 2, 4),
            (1, 3) if small else (1, 2, 3),
            (8192, 131072) if small else (4096, 32768, 131072, 1048576)):
        out.append(dict(params_b=8.0, weight_dtype="bfloat16", layers=layers, kv_heads=kv,
                        head_dim=hd, kv_dtype=dtype, gpu_gib=gib, tp=tp, pp=pp,
                        utilization=0.9, max_model_len=mml, overhead_gib=2.0,
                        block_size=block))
    return out

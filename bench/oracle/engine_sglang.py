"""SGLang 0.5.23's parallel-size checks for a dense model, from its unpacked wheel
(a subprocess only).

    python engine_sglang.py WHEEL_DIR < points.json > outcomes.json

Each point has tp, dp, attn_dp, ep, pp, nnodes, heads, kv_heads and family ("llama":
Llama/Qwen2-style attention that splits heads over the full --tp-size; "qwen3": Qwen3-style
attention that splits them over the attention-TP size). In SGLang's order:

1. resolution, ServerArgs.resolve_once -> arg_groups/pipeline.py run_resolution_pipeline ->
   arg_groups/parallel_hook.py handle_data_parallelism (transcribed: importing the
   resolution pipeline needs a model config from a checkpoint):
   - parallel_hook.py:285 `--attn-dp-size must be positive` (ValueError; not on the grid)
   - parallel_hook.py:287-292 ValueError "--dp-size {dp} with --attn-dp-size {adp}: data-
     parallel replicas combined with attention data parallelism are not supported."
   - parallel_hook.py:326 bare `assert cfg.tp_size % cfg.attn_dp_size == 0` (when attention
     DP is on: attn_dp_size > 1)
2. arg_groups/validation_hook.py check_server_args (entrypoints/engine.py:1165), transcribed:
   - :179 assert (tp*pp) % nnodes == 0, "tp_size must be divisible by number of nodes"
   - :196 pp > 1: check_pipeline_parallel_compat (nothing a dense default launch trips)
   - :199 assert not (dp > 1 and nnodes != 1), "multi-node data-parallel replicas are not
     supported; use attention DP (--attn-dp-size) across nodes"
3. publication in every worker, runtime_context.py:1575-1596, RUN from the wheel for the
   worker of world rank 0: derive_parallel_widths; override_permanently(attn_dcp_rank=0)
   at :1568 validates the widths first (runtime_context.py:420 -> _validate_parallel:
   "parallel topology is inconsistent (set by override_permanently): ..."); then
   derive_spawn_ranks, the attention ranks and override_permanently of the ranks (:1594).
4. model load, RUN from the wheel: the statements of the attention layer's __init__ that
   split the heads (models/llama.py:181-194 LlamaAttention, models/qwen3.py:164-177
   Qwen3Attention), taken from the AST and executed with get_parallel() answering the
   published widths: bare asserts.

The outcome of a point is "ok", or the exception's class, message, stage and where
(file:line in the wheel, or the transcribed check's).
"""

from __future__ import annotations

import ast
import json
import os
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))

ATTENTION = {  # family -> (model file, class) whose __init__ splits the heads
    "llama": ("sglang/srt/models/llama.py", "LlamaAttention"),
    "qwen3": ("sglang/srt/models/qwen3.py", "Qwen3Attention"),
}


def _split_code(wheel_dir: str, rel: str, cls_name: str):
    """The __init__ statements from the one reading get_parallel() through
    `self.num_kv_heads = max(...)`, with their own file and line numbers."""
    path = os.path.join(wheel_dir, rel)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    body = init.body
    start = next(i for i, s in enumerate(body) if "get_parallel()" in ast.unparse(s)
                 or ast.unparse(s) == "self.total_num_heads = num_heads")
    end = next(i for i, s in enumerate(body)
               if ast.unparse(s).startswith("self.num_kv_heads = max("))
    return compile(ast.Module(body=body[start:end + 1], type_ignores=[]), path, "exec")


def _setup(wheel_dir: str):
    sys.path.insert(0, HERE)
    import stubs

    stubs.install(real={"sglang", "pydantic", "pydantic_core", "typing_extensions", "yaml"})
    sys.path.insert(0, wheel_dir)
    # sglang/__init__.py:21-23 patches transformers' config classes at import: with
    # transformers stubbed there is nothing to patch.
    patches = types.ModuleType("sglang.srt.utils.hf_transformers_patches")
    patches.apply_all = lambda: None
    sys.modules[patches.__name__] = patches
    import sglang.srt.runtime_context as rc

    return rc


def _where(exc: BaseException, wheel_dir: str) -> str:
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(wheel_dir):
            where = f"{os.path.relpath(frame.filename, wheel_dir)}:{frame.lineno}"
    return where


def _assert_text(wheel_dir: str, where: str) -> str:
    """The bare assert statement at file:line, as written (it prints no message)."""
    rel, _, line = where.rpartition(":")
    with open(os.path.join(wheel_dir, rel), encoding="utf-8") as f:
        return f.read().splitlines()[int(line) - 1].strip()


class _Fail(Exception):
    def __init__(self, exc_name: str, message: str, where: str, stage: str):
        self.result = {"outcome": "error", "exception": exc_name, "message": message,
                       "where": where, "stage": stage}


def _resolution_and_checks(p: dict) -> None:
    tp, pp, dp, adp, n = p["tp"], p.get("pp", 1), p.get("dp", 1), p.get("attn_dp", 1), \
        p.get("nnodes", 1)
    stage = "resolution"
    if adp > 1 and dp > 1:  # parallel_hook.py:287
        raise _Fail("ValueError",
                    f"--dp-size {dp} with --attn-dp-size {adp}: data-parallel replicas "
                    "combined with attention data parallelism are not supported.",
                    "sglang/srt/arg_groups/parallel_hook.py:288", stage)
    if adp > 1 and tp % adp != 0:  # parallel_hook.py:326 (attn_dp_enabled_of: adp > 1)
        raise _Fail("AssertionError", "", "sglang/srt/arg_groups/parallel_hook.py:326", stage)
    stage = "check_server_args"
    if (tp * pp) % n != 0:  # validation_hook.py:179
        raise _Fail("AssertionError", "tp_size must be divisible by number of nodes",
                    "sglang/srt/arg_groups/validation_hook.py:179", stage)
    if dp > 1 and n != 1:  # validation_hook.py:199
        raise _Fail("AssertionError",
                    "multi-node data-parallel replicas are not supported; use attention DP "
                    "(--attn-dp-size) across nodes",
                    "sglang/srt/arg_groups/validation_hook.py:199", stage)


def _publish(rc, p: dict):
    """runtime_context.py:1575-1596 for world rank 0, with the wheel's own functions."""
    widths = rc.derive_parallel_widths(tp_size=p["tp"], attn_cp_size=1,
                                       attn_dp_size=p.get("attn_dp", 1),
                                       moe_ep_size=p.get("ep", 1), moe_dp_size=1,
                                       dcp_size=1, dcp_enabled=False)
    parallel = types.SimpleNamespace(tp_size=p["tp"], pp_size=p.get("pp", 1),
                                     attn_cp_size=1, moe_dp_size=1, ep_join_rank_offset=0,
                                     dcp_size=1, **widths)
    # runtime_context.py:1567-1568: DCP off, so override_permanently(attn_dcp_rank=0)
    # validates the published widths before any rank is derived (ranks unreadable yet).
    parallel.attn_dcp_rank = 0
    rc._validate_parallel(parallel, "override_permanently")
    placement = rc.derive_spawn_ranks(world_rank=0, tp_size=parallel.tp_size,
                                      ep_join_rank_offset=0, attn_cp_size=1,
                                      attn_tp_size=parallel.attn_tp_size, moe_dp_size=1,
                                      moe_ep_size=parallel.moe_ep_size)
    placement["dp_rank"] = None
    placement["launch_world_rank"] = 0
    placement.update(rc._attention_ranks(parallel, placement["tp_rank"]))
    placement["attn_dcp_rank"] = 0
    for k, v in placement.items():
        setattr(parallel, k, v)
    rc._validate_parallel(parallel, "override_permanently")  # runtime_context.py:420
    return parallel


def run(wheel_dir: str, points: list[dict]) -> list[dict]:
    wheel_dir = os.path.abspath(wheel_dir)
    rc = _setup(wheel_dir)
    codes = {fam: _split_code(wheel_dir, *ATTENTION[fam]) for fam in ATTENTION}
    out = []
    for p in points:
        stage = "resolution"
        try:
            _resolution_and_checks(p)
            stage = "publish"
            parallel = _publish(rc, p)
            stage = "model load"
            scope = {"get_parallel": lambda parallel=parallel: parallel,
                     "self": types.SimpleNamespace(), "num_heads": p["heads"],
                     "num_kv_heads": p["kv_heads"]}
            exec(codes[p["family"]], scope)
            out.append({"outcome": "ok"})
        except _Fail as f:
            out.append(f.result)
        except Exception as exc:  # noqa: BLE001 - the engine's error is the answer
            out.append({"outcome": "error", "exception": type(exc).__name__,
                        "message": str(exc), "where": _where(exc, wheel_dir), "stage": stage})
        if out[-1].get("exception") == "AssertionError" and not out[-1]["message"]:
            out[-1]["assert"] = _assert_text(wheel_dir, out[-1]["where"])
    return out


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    json.dump(run(sys.argv[1], json.load(sys.stdin)), sys.stdout)

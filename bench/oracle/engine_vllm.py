"""vLLM 0.33.0's own parallel-size checks, run from its unpacked wheel (a subprocess only).

    python engine_vllm.py WHEEL_DIR < points.json > outcomes.json

WHEEL_DIR holds the wheel's `vllm/` package (only its .py files are needed). Heavy modules
(torch, transformers, ray, ...) are stubs (stubs.py); the GPU is a fake CUDA platform
whose device_count() is the point's --gpus-per-node (a very large number when the point
gives none, which is what errorkb's calculator assumes then). Per point, in vLLM's order:

1. vllm/engine/arg_utils.py EngineArgs.create_engine_config: the launch options, from the
   `assert not headless or not self.data_parallel_hybrid_lb` statement (line 2380) through
   `parallel_config = ParallelConfig(...)` (line 2539): the very statements, taken from the
   function's AST and executed in arg_utils' own globals, with `self` an EngineArgs holding
   its dataclass defaults and the point's sizes (`--nnodes`, `--node-rank`, world size %
   nnodes, ... then ParallelConfig's __post_init__ and validators: the world size against
   the node's GPUs, DCP against TP and PCP);
2. vllm/config/vllm.py VllmConfig.__post_init__ line 1549:
   ModelConfig.verify_with_parallel_config (vllm/config/model.py line 1545), the real
   method called on a model config of the point's heads, KV heads and MLA flag (heads % TP,
   DCP for GQA/MQA).

The outcome of a point is "ok", or the exception's class, message and the file:line of the
engine's frame that raised it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def _setup(wheel_dir: str):
    sys.path.insert(0, HERE)
    import stubs

    try:
        import regex  # noqa: F401
    except ImportError:
        sys.modules["regex"] = re  # vLLM uses regex as a drop-in for re
    stubs.install(real={"vllm", "pydantic", "pydantic_core", "typing_extensions", "yaml"})
    sys.path.insert(0, wheel_dir)
    os.environ.pop("RANK", None)
    import vllm.platforms as platforms
    from vllm.platforms.interface import Platform, PlatformEnum

    class FakeCuda(Platform):
        """A CUDA machine with `gpus` GPUs on this node."""

        _enum = PlatformEnum.CUDA
        device_name = "cuda"
        device_type = "cuda"
        dispatch_key = "CUDA"
        device_control_env_var = "CUDA_VISIBLE_DEVICES"
        gpus = 1 << 20

        @classmethod
        def device_count(cls) -> int:
            return cls.gpus

        @classmethod
        def use_custom_allreduce(cls) -> bool:
            return True

    platforms._current_platform = FakeCuda()

    # ParallelConfig imports the executor package lazily (parallel.py:1150 and :1108) for
    # Executor and ray_utils; the real package registers kernels at import. Stand-ins with
    # the two answers those lines use: Ray installed but not initialized (no placement
    # group), so the default backend is mp as on a machine with or without Ray.
    executor = types.ModuleType("vllm.v1.executor")

    class Executor:
        uses_ray = False

    ray_utils = types.ModuleType("vllm.v1.executor.ray_utils")
    ray_utils.ray_is_available = lambda: False
    ray_utils.assert_ray_available = lambda: None
    executor.Executor = Executor
    executor.ray_utils = ray_utils
    executor.__path__ = []
    sys.modules["vllm.v1.executor"] = executor
    sys.modules["vllm.v1.executor.ray_utils"] = ray_utils
    import vllm.config.parallel as parallel
    import vllm.engine.arg_utils as arg_utils
    from vllm.config.model import ModelConfig

    # DP asks the OS for five free ports at construction: no sockets in an oracle.
    parallel.get_open_ports_list = lambda count=5: [29500 + i for i in range(count)]
    return FakeCuda, arg_utils, ModelConfig


def _launch_block(arg_utils):
    """The statements of create_engine_config from the headless assert through
    `parallel_config = ParallelConfig(...)`, compiled with their own line numbers."""
    path = arg_utils.__file__
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs")
    fn = next(n for n in cls.body
              if isinstance(n, ast.FunctionDef) and n.name == "create_engine_config")
    body = fn.body
    start = next(i for i, s in enumerate(body)
                 if isinstance(s, ast.Assert) and "headless" in ast.unparse(s.test))
    end = next(i for i, s in enumerate(body)
               if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "parallel_config")
    module = ast.Module(body=body[start:end + 1], type_ignores=[])
    return compile(module, path, "exec"), body[start].lineno, body[end].lineno


def _engine_args(arg_utils, p: dict):
    EngineArgs = arg_utils.EngineArgs
    values = {}
    for f in dataclasses.fields(EngineArgs):
        if f.default is not dataclasses.MISSING:
            values[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            values[f.name] = f.default_factory()  # type: ignore[misc]
    values.update(
        model="oracle/model",
        tensor_parallel_size=p["tp"],
        pipeline_parallel_size=p.get("pp", 1),
        data_parallel_size=p.get("dp", 1),
        decode_context_parallel_size=p.get("dcp", 1),
        prefill_context_parallel_size=p.get("pcp", 1),
        nnodes=p.get("nnodes", 1),
        node_rank=p.get("node_rank", 0),
        distributed_executor_backend=p.get("backend"),
    )
    ns = types.SimpleNamespace(**values)
    ns._resolve_device_ids = lambda: EngineArgs._resolve_device_ids(ns)
    return ns


class _FakeModel:
    """What verify_with_parallel_config reads of a ModelConfig (dense decoder)."""

    def __init__(self, ModelConfig, heads: int, kv_heads: int, mla: bool):
        self.model_arch_config = types.SimpleNamespace(
            total_num_attention_heads=heads, total_num_kv_heads=kv_heads)
        self.use_mla = mla
        self.is_moe = False
        self.skip_tokenizer_init = False
        self.multimodal_config = None
        self.architectures = ["OracleForCausalLM"]
        self.registry = types.SimpleNamespace(
            is_pp_supported_model=lambda archs, cfg: True,
            is_hc_sp_supported_model=lambda archs, cfg: True)
        self._ModelConfig = ModelConfig

    def get_total_num_kv_heads(self) -> int:
        return self._ModelConfig.get_total_num_kv_heads(self)


def _where(exc: BaseException, wheel_dir: str) -> str:
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(wheel_dir):
            where = f"{os.path.relpath(frame.filename, wheel_dir)}:{frame.lineno}"
    return where


def _outcome(exc: BaseException, wheel_dir: str) -> dict:
    """The error as the user meets it. A ValueError raised in a pydantic config's
    __post_init__ or validator reaches the user wrapped in pydantic's ValidationError
    ("1 validation error for ParallelConfig\n  Value error, <message> [...]"): the
    exception is then ValidationError, `wrapped` the class raised, `message` its text."""
    result = {"outcome": "error", "exception": type(exc).__name__, "message": str(exc),
              "where": _where(exc, wheel_dir)}
    if type(exc).__name__ == "ValidationError" and hasattr(exc, "errors"):
        errors = exc.errors()
        inner = errors[0].get("ctx", {}).get("error") if len(errors) == 1 else None
        if isinstance(inner, BaseException):
            result.update(wrapped=type(inner).__name__, message=str(inner),
                          where=_where(inner, wheel_dir) or result["where"])
    return result


def run(wheel_dir: str, points: list[dict]) -> list[dict]:
    wheel_dir = os.path.abspath(wheel_dir)
    FakeCuda, arg_utils, ModelConfig = _setup(wheel_dir)
    code, _, _ = _launch_block(arg_utils)
    out = []
    for p in points:
        FakeCuda.gpus = p["gpus_per_node"] if p.get("gpus_per_node") else 1 << 20
        model = _FakeModel(ModelConfig, p["heads"], p.get("kv_heads") or p["heads"],
                           bool(p.get("mla")))
        scope = dict(vars(arg_utils))
        # ray_runtime_env and placement_group: None, as the statements before the block
        # leave them when Ray is not initialized (arg_utils.py:2354-2378).
        scope.update(self=_engine_args(arg_utils, p), model_config=model, headless=False,
                     ray_runtime_env=None, placement_group=None)
        try:
            exec(code, scope)
            parallel_config = scope["parallel_config"]
            parallel_config.set_dcp_defaults()  # vllm/config/vllm.py:1546
            ModelConfig.verify_with_parallel_config(model, parallel_config)
            out.append({"outcome": "ok"})
        except Exception as exc:  # noqa: BLE001 - the engine's error is the answer
            out.append(_outcome(exc, wheel_dir))
    return out


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    points = json.load(sys.stdin)
    results = run(sys.argv[1], points)
    json.dump(results, sys.stdout)

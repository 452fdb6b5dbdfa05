"""What `extract` knows of vLLM's source: its settings and the stages of a run.

Read from the tree being extracted, never written down here: the config classes of
`vllm/config/` (their fields and types), `VllmConfig`'s fields (which attribute holds which
config), the engine argument parser (`EngineArgs.add_cli_args`: which flag sets which field)
and the server's frontend arguments; the environment variables of `vllm/envs.py`; the fields
of the server's request models (`*Request` in `vllm/entrypoints/**/protocol.py`) and of
`SamplingParams`; which config.json keys the model's architecture values are read from (the
convertor of `vllm/transformers_utils/model_arch_config_convertor.py` and `ModelConfig`'s
getters); and the release (`vllm/_version.py`) for the links into vLLM's documentation of
that release. What is vLLM's by convention and not in any one file
(which module runs at which stage, which helper returns which setting) is in the tables below.
"""

import ast
import re
from dataclasses import dataclass, field, replace

from errorkb.sources import named
from errorkb.sources.explain import MODEL_INIT, WARMUP, Knowledge, Setting

DOCS = "https://docs.vllm.ai/en/v{version}/"
ENGINE_ARGS_PAGE = "configuration/engine_args.html"
SERVE_PAGE = "cli/serve.html"
ENV_PAGE = "configuration/env_vars.html"
ENVS = "vllm/envs.py"
SAMPLING = ("vllm/sampling_params.py", "SamplingParams")
PROTOCOLS = re.compile(r"vllm/entrypoints/(.+/)?protocol\.py$")
ARCH = ("vllm/config/model_arch.py", "ModelArchitectureConfig")
CONVERTOR = (
    "vllm/transformers_utils/model_arch_config_convertor.py",
    "ModelArchConfigConvertorBase",
)
ALIASES = ("vllm/transformers_utils/config.py", "CONFIG_FIELD_ALIASES")
MODEL_CONFIG = ("vllm/config/model.py", "ModelConfig")
# Attributes that hold the model's Hugging Face config (config.json) in vLLM's code.
HF_CONFIGS = ("hf_config", "hf_text_config")
# In model code (vllm/model_executor/models/), the names a model's config.json goes by.
MODEL_CODE_CONFIGS = ("config", "hf_config", "text_config", "hf_text_config")
# Config classes vLLM ships for models whose config.json transformers does not know.
HF_CONFIG_CLASSES = "vllm/transformers_utils/configs/"
MAX_KEYS = 3  # a value read from the first of several keys names at most this many
# Keys of Hugging Face configs (config.json) that are also the names of vLLM's settings: a
# message naming one may mean either.
CONFIG_JSON_KEYS = frozenset(
    {"quantization_config", "rope_scaling", "rope_parameters", "max_position_embeddings"}
    | {"sliding_window", "torch_dtype", "dtype"}
)
# Code of vLLM's other programs, whose arguments are not the engine's or the server's.
OTHER_PROGRAMS = ("vllm/benchmarks/",)
ROOT_CONFIG = "VllmConfig"
OLD_CONFIG = "vllm/config.py"  # the config classes before vllm/config/ (0.9 and older)
ENGINE_ARGS = "EngineArgs"
FRONTEND_ARGS = ("BaseFrontendArgs", "FrontendArgs")

# Helpers that return a setting's value at run time, by what they return (a convention of
# vLLM's distributed code, not a field of any config class).
CALLS = {
    "get_tensor_model_parallel_world_size()": ("parallel_config", "tensor_parallel_size"),
    "get_tp_group().world_size": ("parallel_config", "tensor_parallel_size"),
    "get_pipeline_model_parallel_world_size()": ("parallel_config", "pipeline_parallel_size"),
    "get_pp_group().world_size": ("parallel_config", "pipeline_parallel_size"),
    "get_dp_group().world_size": ("parallel_config", "data_parallel_size"),
    "get_dcp_group().world_size": ("parallel_config", "decode_context_parallel_size"),
    "get_decode_context_model_parallel_world_size()": (
        "parallel_config",
        "decode_context_parallel_size",
    ),
    "get_pcp_group().world_size": ("parallel_config", "prefill_context_parallel_size"),
}

# Where in a run a module's code runs, by path prefix; the longest prefix wins.
STAGE_PATHS: dict[str, str | None] = {
    "vllm/engine/arg_utils.py": "argument-parsing",
    "vllm/utils/argparse_utils.py": "argument-parsing",
    "vllm/entrypoints/cli/": "argument-parsing",
    "vllm/entrypoints/common/cli_args.py": "argument-parsing",
    "vllm/config/": "config-validation",
    OLD_CONFIG: "config-validation",  # the config classes in one module, before vllm/config/
    "vllm/transformers_utils/config": "config-validation",
    "vllm/model_executor/models/": "model-loading",
    "vllm/models/": "model-loading",
    "vllm/model_executor/model_loader/": "model-loading",
    "vllm/model_executor/layers/": "model-loading",
    "vllm/lora/": "model-loading",
    "vllm/lora/ops/": "kernel-selection",  # LoRA's Triton and Punica kernels and their checks
    "vllm/v1/core/": "engine-startup",
    "vllm/v1/engine/": "engine-startup",
    "vllm/v1/kv_offload/": "engine-startup",
    "vllm/v1/executor/": "engine-startup",
    # The workers load, profile and capture at start-up, then run every step while serving:
    # dated by name (_WORKER_SETUP, _WORKER_STEP) or by their callers.
    "vllm/v1/worker/": None,
    "vllm/distributed/": "engine-startup",
    # The tokenizer registry loads the tokenizer when the engine, its renderer, structured
    # output and reasoning parser are built (cached_tokenizer_from_config): at start-up.
    "vllm/tokenizers/registry.py": "engine-startup",
    # The expert load balancer is set up at start-up (_INIT, _EPLB_SETUP) and moves experts
    # while serving; its profile pass moves nothing. The rest is dated by its callers.
    "vllm/distributed/eplb/": None,
    # KV, encoder-cache and weight transfer run while serving; their set-up (_INIT, and
    # register_kv_caches) at start-up, below.
    "vllm/distributed/kv_transfer/": "request-handling",
    "vllm/distributed/ec_transfer/": "request-handling",
    "vllm/distributed/weight_transfer/": "request-handling",
    "vllm/compilation/": "engine-startup",  # torch.compile and graph capture run at start-up
    "vllm/model_executor/warmup/": "engine-startup",  # kernel warm-up, before serving
    "vllm/entrypoints/openai/": "request-handling",
    "vllm/entrypoints/serve/": "request-handling",
    "vllm/entrypoints/pooling/": "request-handling",
    "vllm/entrypoints/chat_utils.py": "request-handling",
    "vllm/entrypoints/llm.py": "request-handling",
    "vllm/sampling_params.py": "request-handling",
    "vllm/pooling_params.py": "request-handling",
    "vllm/v1/engine/input_processor.py": "request-handling",
    "vllm/v1/engine/processor.py": "request-handling",
    "vllm/inputs/": "request-handling",
    "vllm/renderers/": "request-handling",
    "vllm/tool_parsers/": "request-handling",
    "vllm/reasoning/": "request-handling",
    "vllm/multimodal/": "request-handling",
    "vllm/v1/structured_output/": "request-handling",
    "vllm/parser/": "request-handling",
    # ParserManager picks and checks the parsers when the serving classes are built
    # (OpenAIServingChat.__init__ and the renderers' ParserManager.get_parser), at start-up.
    "vllm/parser/parser_manager.py": "engine-startup",
    "vllm/transformers_utils/processors/": "request-handling",
    "vllm/entrypoints/anthropic/": "request-handling",
    "vllm/entrypoints/generate/": "request-handling",
    "vllm/entrypoints/scale_out/": "request-handling",
    "vllm/platforms/": "kernel-selection",
    "vllm/attention/": "kernel-selection",
    "vllm/v1/attention/": "kernel-selection",
    "vllm/model_executor/layers/quantization/kernels/": "kernel-selection",
    "vllm/model_executor/layers/fused_moe/": "kernel-selection",
    "vllm/kernels/": "kernel-selection",
    "vllm/model_executor/kernels/": "kernel-selection",
    "vllm/vllm_flash_attn/": "kernel-selection",
    "vllm/_custom_ops.py": "kernel-selection",
    "vllm/_aiter_ops.py": "kernel-selection",
    "vllm/triton_utils/": "kernel-selection",
    # The V0 engine's layout (0.10 and older), dated by name below (_OLD_ENGINE ...): what
    # processes a step's outputs, times requests out and logs each step's stats serves; the
    # scheduler and its block managers schedule each step (built at start-up).
    "vllm/engine/output_processor/": "request-handling",
    "vllm/engine/async_timeout.py": "request-handling",
    "vllm/engine/metrics.py": "request-handling",
    "vllm/core/": "request-handling",
}
# Model code: its forward pass first runs in the memory-profiling run of engine start-up.
_MODELS = ("vllm/model_executor/models/", "vllm/models/")
_FORWARD = re.compile(r"(^|\.)(_?forward\w*|compute_logits|embed_input_ids|sample)$")
_INIT = MODEL_INIT  # methods that run while a model is built
# `verify_and_update_config` of each architecture: called from VllmConfig.__post_init__.
_MODELS_CONFIG = "vllm/model_executor/models/config.py"
# Transfer connectors: set up at start-up, used per request.
_TRANSFER = tuple(f"vllm/distributed/{kind}_transfer/" for kind in ("kv", "ec", "weight"))
# ... and the handshake metadata the engine core hands its connector once the workers have
# registered their caches (EngineCore.__init__, and wake_up).
# A KV or encoder-cache connector's set-up also registers its runtimes and buffers
# (UMBPRuntimeFactory.register). Not a weight-transfer engine's: a trainer sets it up on a
# running server (POST /init_weight_transfer_engine -> Worker.init_weight_transfer_engine ->
# init_transfer_engine -> ShardedRDTWeightTransferEngine._preregister_at_init).
_REGISTER = re.compile(
    r"(^|\.)(register_\w*caches?|set_xfer_handshake_metadata\w*|register|_?pre_?register\w*"
    r"|_?\w*_at_init)$"
)
# The API server's routes, attached while the app is built (entrypoints/serve/__init__.py),
# and the state, IO processors and plug-ins the app's serving classes are built with
# (init_app_state, ServingEmbedding.init_io_processor): not a request's tool sessions.
_APP_SETUP = re.compile(
    r"(^|\.)(attach_\w*router|register_\w*routes?"
    r"|init_\w*(?:_state|io_processors?|middleware|handler|plugin|tool_server|loras))$"
)
# What no stage of a run is: closing and shutting down.
_TEARDOWN = re.compile(r"(^|\.)(close|shutdown|__del__|__exit__|__aexit__|_?cleanup\w*)$")
# Modules whose stage is a default for code that is set up at one stage and used at another:
# where every caller of a function is of another stage, the function is of the callers'
# (a connector's layout helper called from register_kv_caches, a serving class's IO
# processor built by its init_io_processor, a layer's custom op called from its forward).
_DEFAULTS = (
    "vllm/distributed/kv_transfer/",
    "vllm/distributed/ec_transfer/",
    *(f"vllm/entrypoints/{d}/" for d in ("openai", "serve", "pooling", "scale_out", "generate")),
    "vllm/entrypoints/anthropic/",
    "vllm/model_executor/layers/",
)
# Loops, workers and listeners started while the server starts run while it serves: the call
# that starts them (`_sender_worker(sock)` in __init__) does not date them.
_RUNS_ON = re.compile(
    r"(^|\.)_?\w*(worker|loop|thread|listener|sender|receiver|serve\w*|poll\w*|_run)$"
)
# What those defaults give way to: set-up, a forward, a custom op's platform path (_PLATFORM_OP)
_STARTUP = frozenset({"engine-startup", "kernel-selection"})
# Elastic EP: the API asks a running server to scale (AsyncLLM.scale_elastic_ep), and the
# engine drains, prepares and commits while it serves.
_ELASTIC_EP = re.compile(r"(^|\.)_?\w*elastic_ep$")
# The threads that watch the engine cores and the workers, started once they are up
# (MPClient.start_engine_core_monitor, MultiprocExecutor.start_worker_monitor): a process
# they see die died while the server served.
_MONITOR = re.compile(r"(^|\.)(?!start_)(monitor_\w+|\w+_monitor|watchdog\w*)$")
# The peer-to-peer KV offload tier: its sessions, transports and roles exchange blocks with
# peers while serving (the manager's poll loop, accept_new_peers, recv); built at start-up.
_P2P_TIER = "vllm/v1/kv_offload/tiering/p2p/"
_OWN_INIT = re.compile(r"\._init$")
# Backends the workers pick once before serving (`initialize_kv_cache` calls
# `initialize_mamba_ssu_backend`), wherever their module is.
_INITIALIZE = re.compile(r"(^|\.)initialize_\w*backends?$")
# A model's parsing of a request's multimodal inputs (from embed_multimodal, per request).
_REQUEST_INPUT = re.compile(r"(^|\.)_parse_and_validate_\w*input\w*$")
# In model folders: kernels (ops/), and the input processors that run per request.
_MODEL_OPS = "/ops/"
_LAYERS = "vllm/model_executor/layers/"  # a layer's ops/ folder holds kernels as a model's does
# KV-cache events: the publisher and aggregators are built at start-up; the scheduler
# publishes, and connectors add and merge, after each step (Scheduler.update_from_output).
_KV_EVENTS = "vllm/distributed/kv_events.py"
_KV_EVENTS_STEP = re.compile(
    r"(^|\.)(publish|add_events|increment_workers|aggregate|merge|get_common_events)$"
)
# The profiler's session is started and stopped by the API while serving (EngineCore.profile
# -> Executor.profile, which checks the overrides it is given).
_PROFILER = re.compile(r"(^|\.)(profile|_check_worker_profile_kwargs)$")
_PROCESSOR = re.compile(r"(Processor|ProcessingInfo|Renderer|InputBuilder)\b")
# A CLI subcommand's run (`cmd`, `run_headless`, `main`) checks its arguments, then runs the
# server, a benchmark or a snapshot: what it calls is not argument parsing.
_CLI = "vllm/entrypoints/cli/"
_CLI_RUNS = re.compile(r"(^|\.)(cmd|main|chat|_?run_\w*|maybe_\w*|_interactive_cli)$")
_WORKER = "vllm/v1/worker/"
_OLD_WORKER = "vllm/worker/"  # the V0 engine's workers and model runners (0.10 and older)
_WORKER_SETUP = re.compile(
    r"(^|\.)(__init__|__post_init__|init_\w*|load_model|reload_weights|profile_run"
    r"|_?dummy_\w*|_?capture\w*|initialize_\w*|determine_available_memory"
    r"|get_kv_cache_spec|_?allocate_\w*|_?reshape_\w*|may_reinitialize\w*|_?setup\w*"
    r"|compile_or_warm_up_model)$"
)
_WORKER_STEP = re.compile(
    r"(^|\.)(execute_model|sample_tokens|_update_states|_prepare_inputs"
    r"|init_weight_transfer_engine|start_weight_update|update_weights\w*"
    r"|_?update_streaming_request|add_request|remove_request"
    # the V0 model runners' per-step input preparation (a profiling run skips their checks
    # of a cached prefix, so these are reached by scheduled requests)
    r"|_prepare_prompt|_prepare_decode\w*|_?prepare_model_input\w*)$"
)
# A platform's check of the config runs inside VllmConfig.__post_init__.
_PLATFORM_CONFIG = re.compile(r"(^|\.)check_and_update_config$")
# The engine core's and the DP coordinator's loops run from start-up through serving (their
# threads' targets: no caller dates them); a step and a request's arrival serve.
_ENGINE = "vllm/v1/engine/"
_ENGINE_LOOP = re.compile(r"(^|\.)(run_busy_loop|_?process_(?:input|output)_sockets?)$")
_ENGINE_RUNS = re.compile(r"(^|\.)(run_coordinator|run_engine_core|run_busy_loop)$")
_ENGINE_STEP = re.compile(r"(^|\.)(step|step_with_batch_queue|add_request|abort_requests)$")
# The offline LLM(...) constructor turns its keywords into configs and checks them before
# the engine is built (derived.STAGE_MEANS: config validation).
_LLM = "vllm/entrypoints/llm.py"
_LLM_INIT = "LLM.__init__"
# EngineArgs.create_engine_config turns the parsed arguments into VllmConfig's parts and checks
# them as it goes: config validation, though it sits in the parser's module.
_ENGINE_CONFIG = ("vllm/engine/arg_utils.py", "EngineArgs.create_engine_config")
# The bodies of threads that start-up code starts and that work while the server serves (a
# KV offload tier's poll loop, a thread pool's worker, the KV-event publisher): serving, in
# modules whose default is start-up (not their start, stop or a factory that hands one out).
_SERVING_THREADS = ("vllm/v1/kv_offload/", "vllm/v1/core/", "vllm/distributed/")
_SERVING_THREAD = re.compile(
    r"(^|\.)(?!_?(?:get|start|stop|create|init|make|build)_)_?\w*(?:_loop|_thread|_worker|poll\w*)$"
)
# The multimodal cache's shared-memory store: built at start-up, written and read per request
# (its only user is vllm/multimodal/cache/shm.py).
_SHM_STORE = "vllm/distributed/device_communicators/shm_object_storage.py"
# A config's getter (`PoolerConfig.get_seq_pooling_type`) runs where its callers run: when
# they are all of one stage (the pooler's build, at model loading), that is its stage.
_CONFIG = "vllm/config/"
_GETTER = re.compile(r"\.get_\w+$")
_CALLERS_MAY_SAY = frozenset(
    {"model-loading", "engine-startup", "request-handling", "kernel-selection"}
)
# Choosing a backend among implementations (`select_fp8_moe_backend`, `_resolve_fi_ar_backend`,
# `resolve_kda_decode_backend`, `_get_flashinfer_bf16_backend`): kernel selection, wherever its
# module is and whenever it runs (derived.STAGE_MEANS), except in modules that serve requests.
_BACKEND_CHOICE = re.compile(r"(^|\.)_?(?:resolve|select|choose|pick|get)_\w*backends?(?:_\w+)?$")
_EPLB = "vllm/distributed/eplb/"
# The model registry's inspection of the model's architectures runs first in ModelConfig's
# post-init (inspect_model_cls), before the loader resolves the class again.
_REGISTRY = "vllm/model_executor/models/registry.py"
_REGISTRY_INSPECT = re.compile(
    r"(^|\.)(_raise_for_unsupported|inspect_model_cls|_try_inspect_model_cls"
    r"|_try_resolve_transformers|_try_load_model_cls|_normalize_archs|resolve_model_cls)$"
)
# The API server's endpoint plug-ins are loaded while its app is built, before it serves.
_ENDPOINT_PLUGINS = ("vllm/plugins/__init__.py", "load_endpoint_plugins")
# Sleep mode: a running server is asked to sleep, wake up or drop its KV cache, and the
# memory allocator frees or restores what it holds.
_ALLOCATOR = "vllm/device_allocator/"
_ALLOCATOR_CONTROL = re.compile(r"(^|\.)(sleep|wake_up|discard)$")
# A custom op's path for one platform (CustomOp.forward_cuda, forward_hip, forward_native):
# the op dispatched to a platform's kernel, checking what its caller passes and what the
# platform supports (derived.STAGE_MEANS: kernel selection), not a model's forward.
_PLATFORM_OP = re.compile(r"(^|\.)forward_(?:cuda|native|hip|xpu|cpu|tpu|oot)$")
# An all-reduce backend's constructor checks what it supports (world size, platform, the
# library, the group) and disables itself: kernel selection (derived.STAGE_MEANS).
_ALL_REDUCE = re.compile(r"^vllm/distributed/device_communicators/\w*all_?reduce\w*\.py$")
_ALL_REDUCE_SETUP = re.compile(r"(^|\.)__init__$")
# A LoRA adapter is read and checked when it is loaded: when a request names it (or the
# API loads it into a running server), not while the model is built: its config (PEFTHelper),
# its tensors (LoRAModel), the request that names it, and the managers' adding of it.
_LORA_ADAPTER = tuple(
    f"vllm/lora/{name}" for name in ("peft_helper.py", "lora_model.py", "request.py")
)
_LORA_MANAGERS = tuple(
    f"vllm/lora/{name}" for name in ("worker_manager.py", "model_manager.py", "models.py")
)
_LORA_LOAD = re.compile(
    r"(^|\.)(_load_adapter|_apply_adapters|add_adapter|activate_adapter|add_lora"
    r"|_validate_\w*lora\w*|_convert_3d_to_2d_moe_lora|_pad_lora_pairs_to_triplets)$"
)
_EPLB_SETUP = re.compile(r"(^|\.)(add_model|validate_ep_configuration|build_initial_\w*)$")

# The V0 engine (vllm/engine/ and vllm/executor/ of 0.10 and older; vllm/worker/ is
# _OLD_WORKER): LLMEngine and AsyncLLMEngine are built at start-up (their constructors,
# from_engine_args, the executor's class, the workers, the Ray cluster, the KV caches), and
# step, add, abort and stream requests while serving; the executor runs the model per step
# and watches its workers while serving. What both run (`_run_workers`) is dated by callers.
_OLD_ENGINE = "vllm/engine/"
_OLD_EXECUTOR = "vllm/executor/"
_OLD_SETUP = re.compile(
    r"(^|\.)(__init__|__post_init__|from_engine_args|from_vllm_config"
    r"|_get_executor_cls|_?init_\w*|_?initialize_\w*|initialize_ray_cluster"
    r"|_verify_and_get_\w*|_check_(?!if_any_actor)\w*|_configure_\w*|_compiled_ray_dag"
    r"|determine_num_available_blocks|_?create_worker\w*|_get_worker_\w*|setup"
    r"|load_model|profile_run|_warm_up_model|capture_model|raise_if_cache_size_invalid"
    r"|_assert_memory_footprint\w*)$"
)
_OLD_STEP = re.compile(
    r"(^|\.)(step\w*|engine_step|_advance_to_next_step|_has_remaining_steps"
    r"|_process_model_outputs|add_request\w*|_add_processed_request|abort\w*|generate"
    r"|encode|_process_request|process_request_output|validate_outputs?|_validate_model_input\w*"
    r"|_create_sequence_group\w*|run_engine_loop|run_output_handler_loop|handle_new_input"
    r"|_log_task_completion|check_health|_check_if_any_actor_is_dead|execute_model\w*"
    r"|_driver_execute_model\w*|_?start_worker_execution_loop|stop_remote_worker_execution_loop\w*"
    r"|(?:add|remove|pin|list)_(?:loras?|prompt_adapters?)|\w*Monitor\.run)$"
)
# The V0 scheduler's and block managers' own construction (a block's is per request).
_OLD_CORE_SETUP = re.compile(
    r"(^|\.)((?:Scheduler|\w*BlockSpaceManager\w*|\w*Allocator|\w*Evictor)\.__init__"
    r"|\w*Allocator\.create|make_evictor|get_block_space_manager_class)$"
)
# LLMEngine's checks of the configs against each other, before the executor is built.
_OLD_VERIFY = re.compile(r"(^|\.)\w*LLMEngine\._verify_args$")
# A V0 model runner's per-step input builders, whose constructors run every step.
_OLD_STEP_CLASS = re.compile(r"(Builder|ModelInput\w*|InterDataForSeqGroup)\.")
# The OpenAI server builds its engine client before it serves (V0's engine process too).
_ENGINE_CLIENT = re.compile(r"(^|\.)build_async_engine_client\w*$")
# The server's serving classes are built, and (V0) load the chat template, while the app is
# built: in 0.4 by the server module's `__main__` block, which no call names.
_SERVING_SETUP = re.compile(r"(^|\.)\w*Serving\w*\.(__init__|_load_chat_template)$")


def _anchor(options: tuple[str, ...]) -> str:
    """The id vLLM's docs give an option's heading ("`--a`, `-b`" slugified): -a-b."""
    return "-" + re.sub(r"[-\s]+", "-", " ".join(o.lstrip("-") for o in options)).strip("-")


def _annotation(node: ast.AST | None) -> str:
    return ast.unparse(node) if node is not None else ""


def _fields(cls: ast.ClassDef) -> dict[str, str]:
    """A dataclass's fields and their annotations."""
    return {
        stmt.target.id: _annotation(stmt.annotation)
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    }


def _is_bool(annotation: str) -> bool:
    """argparse gets --x/--no-x for a bool field (not for bool | str: a value or nothing)."""
    words = set(re.findall(r"\w+", annotation))
    return "bool" in words and "str" not in words


@dataclass
class VllmKnowledge(Knowledge):
    divisor_calculator = True  # the wing's record pages (tables.divisor_calculator)
    version: str = ""
    classes: dict[str, dict[str, str]] = field(default_factory=dict)  # config class -> fields
    holders: dict[str, str] = field(default_factory=dict)  # VllmConfig attribute -> its class
    options: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    pages: dict[tuple[str, str], str] = field(default_factory=dict)  # option -> docs page
    engine_args: dict[str, tuple[str, str]] = field(default_factory=dict)  # field -> source
    envs: set[str] = field(default_factory=set)  # the variables of vllm/envs.py
    requests: dict[str, set[str]] = field(default_factory=dict)  # request model -> its fields
    sampling: set[str] = field(default_factory=set)  # SamplingParams' fields
    serving: set[str] = field(default_factory=set)  # classes of vllm/entrypoints/
    model_classes: set[str] = field(default_factory=set)  # classes of model code
    config_classes: set[str] = field(default_factory=set)  # vLLM's own config.json classes
    arch_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # arch value -> keys
    getters: dict[str, str] = field(default_factory=dict)  # ModelConfig.get_x -> arch value
    parser: dict[str, dict] = field(default_factory=dict)  # the release's parser data, if any

    def named(self, word: str) -> list[Setting]:
        if word.startswith("--"):
            return self._flag_named(word)
        found: list[Setting | None] = []
        direct = [o["strings"][0] for o in self.parser.values() if o["dest"] == word]
        if direct:  # an option of its own (--moe-backend), though a JSON flag holds it too
            found += self._flag_named(direct[0])
        else:
            if word in self.engine_args:
                found.append(self._arg_named(word))
            if (ROOT_CONFIG, word) in self.options:
                found.append(self._setting(ROOT_CONFIG, word, word))
            for holder, cls in self.holders.items():
                if word in self.classes.get(cls, {}):
                    found.append(self._option(holder, word))
        if word in self.envs:
            found.append(self._env(("envs", word)))
        if word in CONFIG_JSON_KEYS or any(word in keys for keys in self.arch_keys.values()):
            # also a key of the model's config.json (`quantization_config`): ambiguous
            found.append(Setting(word, key=word, kind="model-config"))
        if word in self.sampling:
            found.append(self._sampling(word))
        elif any(word in fields for fields in self.requests.values()):
            found.append(Setting(f"request.{word}", key=word, kind="request-field"))
        return named.distinct(found)

    def settings_apply(self, path: str) -> bool:
        # `vllm bench` parses arguments of its own.
        return not path.startswith(OTHER_PROGRAMS)

    def _flag_named(self, word: str) -> list[Setting]:
        """`--max-model-len` (or `--max_model_len`), `--no-enable-x`, `--x-config.key`: the
        parser's option (from the release's parser data, else from add_cli_args)."""
        base, _, key = word.partition(".")
        base = named.dashed(base)
        found: list[Setting | None] = []
        option = self.parser.get(base)
        dest = option["dest"] if option else ""
        if dest in self.engine_args:
            found.append(self._arg_named(dest))
        elif (ROOT_CONFIG, dest) in self.options:
            found.append(self._setting(ROOT_CONFIG, dest, dest))
        if not any(found):
            for (cls, fld), strings in self.options.items():
                if base in strings:
                    holder = self._holder(cls)
                    found.append(
                        self._option(holder, fld) if holder else self._setting(cls, fld, fld)
                    )
        if not any(found) and option is not None:
            found.append(self._parsed(option))
        out = []
        for setting in named.distinct(found):
            if key:  # a key of a JSON flag (`--x.key`, `--x.a.b`: the parser's dotted form)
                fields = self.classes.get(self.holders.get(setting.field, ""))
                if setting.key or (fields is not None and key.split(".")[0] not in fields):
                    continue  # a config class of vLLM's that has no such field
                if fields is None and (option is None or not named.takes_json(option)):
                    continue  # a number or a switch has no keys
                setting = replace(setting, field=f"{setting.field}.{key}", key=key)
            elif base != setting.flag and self._negative(base):
                setting = replace(setting, flag=base)  # --no-enable-x: written as the user does
            elif setting.key and base in self.parser:  # an option of its own (--moe-backend)
                setting = replace(setting, flag=base, key="")
            out.append(setting)
        return out

    def _parsed(self, option: dict) -> Setting:
        """An option the release's parser has and add_cli_args does not show (the server's
        own: `--headless`, `--api-server-count`): an engine argument when EngineArgs has its
        field, else the server's."""
        strings = tuple(option["strings"])
        dest = option["dest"]
        engine = dest in self.classes.get(ENGINE_ARGS, {})
        page = ENGINE_ARGS_PAGE if engine else SERVE_PAGE
        url = f"{DOCS.format(version=self.version)}{page}#{_anchor(strings)}"
        if engine:
            keyword = f"LLM({dest}=...)"
            return Setting(dest, strings[0], url, kind="engine-arg", keyword=keyword)
        return Setting(dest, strings[0], url, kind="server-arg")

    def _arg_named(self, name: str) -> Setting | None:
        """An EngineArgs (or server) field's setting, when add_cli_args gives it a flag."""
        cls, fld = self.engine_args[name]
        holder = self._holder(cls)
        if holder:
            return self._option(holder, fld)
        return self._setting(cls, fld, name) if (cls, fld) in self.options else None

    def _negative(self, flag: str) -> bool:
        option = self.parser.get(flag)
        if option is not None:
            return flag in option.get("negative", ())
        return flag.startswith("--no-")

    def setting(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        return (
            self._env(chain)
            or self._request(chain, owner)
            or self._model_config(chain, owner)
            or self._argument(chain, owner)
        )

    def _env(self, chain: tuple[str, ...]) -> Setting | None:
        """`envs.VLLM_X` (vllm/envs.py read lazily), `os.environ["VLLM_X"]`."""
        if len(chain) < 2 or chain[-1] not in self.envs:
            return None
        if chain[:-1] not in (("envs",), ("vllm", "envs"), ("os.environ",)):
            return None
        url = f"{DOCS.format(version=self.version)}{ENV_PAGE}" if self.version else ""
        return Setting(f"envs.{chain[-1]}", url=url, kind="env-var", env=chain[-1])

    def _request(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        """A field of the request: `self.x` or the raw `data["x"]` in a request model's
        validators, `self.x` in SamplingParams, `request.x` in the server's code,
        `sampling_params.x` anywhere."""
        if len(chain) == 2 and chain[0] in ("self", "data", "cls"):
            if chain[1] in self.requests.get(owner, ()):
                return Setting(f"{owner}.{chain[1]}", key=chain[1], kind="request-field")
            if owner == SAMPLING[1] and chain[0] == "self":
                return self._sampling(chain[1])
        if chain[0] == "sampling_params" and len(chain) == 2:
            return self._sampling(chain[1])
        if chain[0] == "request" and owner in self.serving:
            if len(chain) == 3 and chain[1] == "sampling_params":
                return self._sampling(chain[2])
            fields = set().union(*self.requests.values()) if self.requests else set()
            if len(chain) == 2 and chain[1] in fields:
                return Setting(f"request.{chain[1]}", key=chain[1], kind="request-field")
        return None

    def _sampling(self, name: str) -> Setting | None:
        if name not in self.sampling:
            return None
        keyword = f"{SAMPLING[1]}({name}=...)"
        where = f"{SAMPLING[1]}.{name}"
        return Setting(where, key=name, kind="request-field", keyword=keyword)

    def _model_config(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        """A value of the model's config.json: read from `hf_config`/`hf_text_config`, from the
        architecture values ModelConfig derives from them (`model_arch_config.x`, its
        `get_x()`), from `config` in model code, or `self.x` in a config class of vLLM's."""
        keys: tuple[str, ...] = ()
        parts = chain[1:] if chain[0] == "self" else chain
        if len(chain) == 1 and chain[0].endswith("()"):
            getter = chain[0][:-2].rsplit(".", 1)[-1]
            keys = self.arch_keys.get(self.getters.get(getter, ""), ())
        elif any(p.endswith("()") for p in parts):
            return None
        elif (i := _index(parts, HF_CONFIGS)) is not None and i + 1 < len(parts):
            keys = (".".join(parts[i + 1 :]),)
        elif (i := _index(parts, ("model_arch_config",))) is not None and i + 1 < len(parts):
            keys = self.arch_keys.get(parts[i + 1], ())
        elif owner in self.model_classes and len(parts) > 1 and parts[0] in MODEL_CODE_CONFIGS:
            keys = (".".join(parts[1:]),)
        elif owner in self.config_classes and chain[0] == "self" and len(parts) == 1:
            keys = parts  # a check of the model's config class on its own values
        if not keys:
            return None
        return Setting(".".join(parts), key=" or ".join(keys[:MAX_KEYS]), kind="model-config")

    def _argument(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        """An engine or server argument."""
        joined = ".".join(chain)
        if joined in CALLS:
            return self._option(*CALLS[joined])
        if owner == ENGINE_ARGS and len(chain) == 2 and chain[0] == "self":
            return self._engine_arg(chain[1])
        if len(chain) == 2 and chain[0] in ("args", "engine_args") and chain[1] in self.engine_args:
            return self._engine_arg(chain[1])
        for i in range(len(chain) - 2, -1, -1):  # the innermost config attribute wins
            if chain[i] in self.holders:
                return self._option(chain[i], chain[i + 1])
        if len(chain) == 2 and chain[0] == "self" and owner in self.classes:
            holder = self._holder(owner)
            if holder:
                return self._option(holder, chain[1])
            if (owner, chain[1]) in self.options:
                return self._setting(owner, chain[1], chain[1])
        return None

    def _holder(self, cls: str) -> str:
        return next((attr for attr, c in self.holders.items() if c == cls), "")

    def _engine_arg(self, name: str) -> Setting | None:
        if name not in self.engine_args:
            return None
        cls, fld = self.engine_args[name]
        holder = self._holder(cls)
        return self._option(holder, fld) if holder else self._setting(cls, fld, name)

    def _option(self, holder: str, name: str) -> Setting | None:
        """The flag that sets a config's field; for a config given as one JSON flag
        (`--compilation-config`), that flag and the key."""
        cls = self.holders.get(holder, "")
        if name not in self.classes.get(cls, {}):
            return None
        if (cls, name) in self.options:
            return self._setting(cls, name, f"{holder}.{name}")
        if (ROOT_CONFIG, holder) in self.options:
            whole = self._setting(ROOT_CONFIG, holder, f"{holder}.{name}")
            return replace(whole, key=name)
        return None

    def _setting(self, cls: str, name: str, where: str) -> Setting:
        """An option of the parser: an engine argument (also a keyword of `LLM(...)`, the
        EngineArgs field that stands for it), or an argument of the server alone."""
        options = self.options[(cls, name)]
        page = self.pages.get((cls, name), ENGINE_ARGS_PAGE)
        url = f"{DOCS.format(version=self.version)}{page}#{_anchor(options)}"
        url = url if self.version else ""
        if cls in FRONTEND_ARGS:
            return Setting(where, options[0], url, kind="server-arg")
        arg = next((arg for arg, at in self.engine_args.items() if at == (cls, name)), "")
        keyword = f"LLM({arg}=...)" if arg else ""
        return Setting(where, options[0], url, kind="engine-arg", keyword=keyword)

    def dispatches(self, path: str, function: str) -> bool:
        if path.startswith(_ENGINE) and _ENGINE_RUNS.search(function):
            return True  # builds the process, then serves from its loop until shutdown
        return path.startswith(_CLI) and bool(_CLI_RUNS.search(function))

    def undated(self, path: str, function: str) -> bool:
        return path.startswith(OTHER_PROGRAMS) or bool(_TEARDOWN.search(function))

    def shutdown(self, path: str, function: str) -> bool:
        return bool(_TEARDOWN.search(function))

    def by_default(self, path: str, function: str) -> frozenset[str]:
        if path.startswith(_CONFIG) and _GETTER.search(function):
            return _CALLERS_MAY_SAY
        if not path.startswith(_DEFAULTS) or self._named(path, function) is not _UNNAMED:
            return frozenset()
        if _RUNS_ON.search(function):  # a thread's or a task's body, started at start-up
            return frozenset()
        best = max((p for p in STAGE_PATHS if path.startswith(p)), key=len, default="")
        # (not a kernel folder of layers/, whose stage is its own)
        return _STARTUP if best in _DEFAULTS else frozenset()

    def stage(self, path: str, function: str) -> str | None:
        named = self._named(path, function)
        if named is not _UNNAMED:
            return named  # type: ignore[return-value]
        return self._by_path(path)

    @staticmethod
    def _by_path(path: str) -> str | None:
        best = max((p for p in STAGE_PATHS if path.startswith(p)), key=len, default="")
        return STAGE_PATHS.get(best)

    def _named(self, path: str, function: str) -> str | None | object:
        """The stage the rules by name give (None: none applies, its callers say), or
        _UNNAMED where only the module's path says."""
        if _TEARDOWN.search(function):
            return None
        if path.startswith(("vllm/v1/engine/", "vllm/v1/executor/")) and _ELASTIC_EP.search(
            function
        ):
            return "request-handling"
        if path.startswith(("vllm/v1/engine/", "vllm/v1/executor/")) and _MONITOR.search(function):
            return "request-handling"
        if (path == _LLM and function == _LLM_INIT) or (path, function) == _ENGINE_CONFIG:
            return "config-validation"
        if path.startswith(_SERVING_THREADS) and _SERVING_THREAD.search(function):
            return "request-handling"
        if path == _SHM_STORE:
            return "engine-startup" if _INIT.search(function) else "request-handling"
        if _BACKEND_CHOICE.search(function) and self._by_path(path) != "request-handling":
            return "kernel-selection"
        if _PLATFORM_OP.search(function) and self._by_path(path) != "request-handling":
            return "kernel-selection"
        if path == _MODELS_CONFIG:  # models' config fix-ups, run while VllmConfig is validated
            return "config-validation"
        if path == _REGISTRY and _REGISTRY_INSPECT.search(function):
            return "config-validation"
        if (path, function) == _ENDPOINT_PLUGINS:
            return "engine-startup"
        if path.startswith(_ALLOCATOR) and _ALLOCATOR_CONTROL.search(function):
            return "request-handling"
        if _ALL_REDUCE.match(path) and _ALL_REDUCE_SETUP.search(function):
            return "kernel-selection"
        if path.startswith(_LORA_ADAPTER) or (
            path.startswith(_LORA_MANAGERS) and _LORA_LOAD.search(function)
        ):
            return "request-handling"
        if path.startswith((*_MODELS, _LAYERS)) and _MODEL_OPS in path and WARMUP.search(function):
            return "kernel-selection"  # a kernel's warm-up checks the keys it is built for
        if WARMUP.search(function):
            return "engine-startup"
        if _INITIALIZE.search(function):  # initialize_mamba_ssu_backend, from initialize_kv_cache
            return "engine-startup"
        if path.startswith(_MODELS) and _PROCESSOR.search(function):
            return "request-handling"
        if path.startswith(_MODELS) and _REQUEST_INPUT.search(function):
            return "request-handling"
        if path.startswith("vllm/entrypoints/") and _APP_SETUP.search(function):
            return "engine-startup"
        if path.startswith((*_MODELS, _LAYERS)) and _MODEL_OPS in path:
            return "kernel-selection"
        if path == _KV_EVENTS and _KV_EVENTS_STEP.search(function):
            return "request-handling"
        if path.startswith("vllm/v1/executor/") and _PROFILER.search(function):
            return "request-handling"
        if path.startswith(("vllm/model_executor/", *_MODELS)) and _INIT.search(function):
            return "model-loading"
        if path.startswith(_MODELS) and _FORWARD.search(function):
            return "engine-startup"
        if path.startswith(_MODELS):
            # A model's other functions (an image's resize, a config's reading, a helper of
            # its forward) run where their callers run: while it is built, per request, or both.
            return None
        if path.startswith("vllm/platforms/") and _PLATFORM_CONFIG.search(function):
            return "config-validation"
        old = path.startswith((_OLD_ENGINE, _OLD_EXECUTOR)) and path not in _PARSER_FILES
        if old and _OLD_STEP.search(function):
            return "request-handling"
        if old and _OLD_VERIFY.search(function):
            return "config-validation"
        if (
            (old or path.startswith(_OLD_WORKER))
            and _OLD_SETUP.search(function)
            and not _OLD_STEP_CLASS.search(function)
        ):
            return "engine-startup"
        if path.startswith("vllm/core/") and _OLD_CORE_SETUP.search(function):
            return "engine-startup"
        if path.startswith("vllm/entrypoints/") and _ENGINE_CLIENT.search(function):
            return "engine-startup"
        serving = path.startswith("vllm/entrypoints/") and not path.startswith(_CLI)
        if serving and _SERVING_SETUP.search(function):
            return "engine-startup"
        if path.startswith(_ENGINE) and _ENGINE_LOOP.search(function):
            return None
        if path.startswith(_ENGINE) and _ENGINE_STEP.search(function):
            return "request-handling"
        if path.startswith((_WORKER, _OLD_WORKER)) and _WORKER_STEP.search(function):
            return "request-handling"
        if path.startswith(_WORKER) and _WORKER_SETUP.search(function):
            return "engine-startup"
        if path.startswith(_EPLB) and (_INIT.search(function) or _EPLB_SETUP.search(function)):
            return "engine-startup"
        if path.startswith(_TRANSFER) and _INIT.search(function):
            return "engine-startup"
        if path.startswith(_TRANSFER[:2]) and _REGISTER.search(function):
            return "engine-startup"
        if path.startswith(_P2P_TIER):  # peers connect, fetch and store while serving
            return (
                "engine-startup"
                if _INIT.search(function) or _OWN_INIT.search(function)
                else ("request-handling")
            )
        if path.startswith(_LAYERS) and _FORWARD.search(function):
            # A layer's forward first runs in the memory-profiling run, as a model's does
            # (not a kernel layer's: its folder's stage is its own).
            best = max((p for p in STAGE_PATHS if path.startswith(p)), key=len, default="")
            if STAGE_PATHS.get(best) == "model-loading":
                return "engine-startup"
        return _UNNAMED


_UNNAMED = object()  # no rule by name applies: the module's path says


def _index(parts: tuple[str, ...], names: tuple[str, ...]) -> int | None:
    """Where the last of these names is in an attribute chain, or None."""
    found = [i for i, part in enumerate(parts) if part in names]
    return found[-1] if found else None


def read(files: list[tuple[str, bytes]]) -> VllmKnowledge | None:
    """vLLM's settings as the tree defines them; None for a tree that is not vLLM's."""
    trees: dict[str, ast.Module] = {}
    classes_in: dict[str, list[str]] = {}  # path -> the classes it defines (for model code)
    for path, data in files:
        if path.startswith(("vllm/entrypoints/", HF_CONFIG_CLASSES, *_MODELS)):
            classes_in[path] = [m.decode() for m in _CLASS.findall(data)]
        if (
            path.startswith("vllm/config/")
            or path == OLD_CONFIG
            or path in _PARSER_FILES
            or path in _SETTING_FILES
            or PROTOCOLS.match(path)
        ):
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError):
                continue
            if _depth(tree) <= MAX_DEPTH:  # deeper, ast.unparse and our walks could overflow
                trees[path] = tree
    if "vllm/engine/arg_utils.py" not in trees:
        return None
    known = VllmKnowledge(version=_version(trees.get("vllm/_version.py")))
    classes: dict[str, ast.ClassDef] = {}
    for path, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, node)
                config = path.startswith("vllm/config/") or path == OLD_CONFIG
                if config or node.name in (ENGINE_ARGS, *FRONTEND_ARGS):
                    known.classes[node.name] = _fields(node)
    for attr, annotation in known.classes.get(ROOT_CONFIG, {}).items():
        held = [w for w in re.findall(r"\w+", annotation) if w in known.classes]
        if held and attr.endswith("_config"):
            known.holders[attr] = held[0]
    if ENGINE_ARGS in classes:
        _engine_args(classes[ENGINE_ARGS], known)
    for name in FRONTEND_ARGS:
        for fld, annotation in known.classes.get(name, {}).items():
            flag = ("--" + fld.replace("_", "-"),)
            known.options[(name, fld)] = _with_no(flag) if _is_bool(annotation) else flag
            known.pages[(name, fld)] = SERVE_PAGE
            known.engine_args.setdefault(fld, (name, fld))
    known.envs = _env_names(trees.get(ENVS))
    known.requests = _request_models({p: t for p, t in trees.items() if PROTOCOLS.match(p)})
    known.sampling = set(_fields(_class(trees.get(SAMPLING[0]), SAMPLING[1])))
    known.serving = {c for p, names in classes_in.items() if "entrypoints/" in p for c in names}
    known.model_classes = {c for p, n in classes_in.items() if p.startswith(_MODELS) for c in n}
    known.config_classes = {
        c for p, names in classes_in.items() if p.startswith(HF_CONFIG_CLASSES) for c in names
    }
    known.arch_keys = _arch_keys(trees)
    known.getters = _getters(_class(trees.get(MODEL_CONFIG[0]), MODEL_CONFIG[1]), known.arch_keys)
    known.parser = named.parser_options("vllm", known.version)
    return known


_CLASS = re.compile(rb"^class (\w+)", re.M)
_PARSER_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/common/cli_args.py")
_SETTING_FILES = ("vllm/_version.py", ENVS, SAMPLING[0], ARCH[0], CONVERTOR[0], ALIASES[0])


def _class(tree: ast.Module | None, name: str) -> ast.ClassDef:
    """A top-level class of a module; an empty one when the module or the class is missing."""
    for node in tree.body if tree else ():
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return ast.ClassDef(name=name, bases=[], keywords=[], body=[], decorator_list=[])


def _strings(nodes: list) -> list[str]:
    """The string constants among these nodes."""
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _env_names(tree: ast.Module | None) -> set[str]:
    """The keys of vllm/envs.py's `environment_variables`: the variables vLLM reads."""
    for node in tree.body if tree else ():
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        named = isinstance(target, ast.Name) and target.id == "environment_variables"
        if named and isinstance(value, ast.Dict):
            return set(_strings(value.keys))
    return set()


def _request_models(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """The server's request models (`*Request` classes of the protocol files) and their
    fields, with those they inherit from the protocol files' other classes."""
    classes = {n.name: n for t in trees.values() for n in t.body if isinstance(n, ast.ClassDef)}

    def fields(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        cls = classes.get(name)
        if cls is None or name in seen:
            return set()
        inherited = [fields(b.id, seen | {name}) for b in cls.bases if isinstance(b, ast.Name)]
        return set(_fields(cls)).union(*inherited)

    return {name: fields(name) for name in classes if name.endswith("Request")}


def _keys_read(method: ast.AST, aliases: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The config.json keys a convertor's getter reads of `self.hf_config`/`hf_text_config`
    (`getattr(self.hf_text_config, "k")`, `self.hf_text_config.k`, the aliases of
    `getattr_iter(self.hf_text_config, CONFIG_FIELD_ALIASES["x"])`), in order."""
    keys: list[str] = []
    for node in sorted(ast.walk(method), key=_place):
        if isinstance(node, ast.Attribute) and _is_hf(node.value):
            keys.append(node.attr)
        elif isinstance(node, ast.Call) and node.args and _is_hf(node.args[0]):
            rest = node.args[1] if len(node.args) > 1 else None
            if isinstance(rest, ast.Constant) and isinstance(rest.value, str):
                keys.append(rest.value)
            elif isinstance(rest, ast.Subscript) and isinstance(rest.slice, ast.Constant):
                keys += aliases.get(str(rest.slice.value), ())
            elif isinstance(rest, ast.Name):  # names = CONFIG_FIELD_ALIASES["x"]
                keys += _aliases_of(method, rest.id, aliases)
    return tuple(k for k in dict.fromkeys(keys) if not k.startswith("get_"))


def _place(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _is_hf(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in HF_CONFIGS


def _aliases_of(method: ast.AST, name: str, aliases: dict[str, tuple[str, ...]]) -> list[str]:
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
                return list(aliases.get(str(value.slice.value), ()))
            if isinstance(value, ast.Tuple):
                return _strings(value.elts)
    return []


def _arch_keys(trees: dict[str, ast.Module]) -> dict[str, tuple[str, ...]]:
    """Each count of ModelArchitectureConfig (its `int` values) -> the config.json keys the
    base convertor reads it from (`total_num_attention_heads` -> `num_attention_heads`)."""
    aliases: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(trees[ALIASES[0]]) if ALIASES[0] in trees else ():
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id == ALIASES[1]:
                for k, v in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple):
                        aliases[str(k.value)] = tuple(_strings(v.elts))
    arch = _fields(_class(trees.get(ARCH[0]), ARCH[1]))
    counts = {name for name, annotation in arch.items() if annotation == "int"}
    convertor = _class(trees.get(CONVERTOR[0]), CONVERTOR[1])
    methods = {m.name: m for m in convertor.body if isinstance(m, ast.FunctionDef)}
    out: dict[str, tuple[str, ...]] = {}
    for call in ast.walk(convertor):
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == ARCH[1]:
            for kw in call.keywords:
                value = kw.value
                getter = getattr(value.func, "attr", "") if isinstance(value, ast.Call) else ""
                keys = _keys_read(methods.get(getter, value), aliases)
                if kw.arg in counts and keys:
                    out[kw.arg] = keys
    return out


def _getters(model_config: ast.ClassDef, arch_keys: dict[str, tuple[str, ...]]) -> dict:
    """ModelConfig's getters that return an architecture value as it is:
    `get_total_num_kv_heads` -> `total_num_kv_heads`."""
    out = {}
    for method in model_config.body:
        if isinstance(method, ast.FunctionDef):
            returns = [n.value for n in ast.walk(method) if isinstance(n, ast.Return)]
            if len(returns) == 1 and isinstance(returns[0], ast.Attribute):
                chain = ast.unparse(returns[0]).split(".")
                if chain[:2] == ["self", "model_arch_config"] and chain[-1] in arch_keys:
                    out[method.name] = chain[-1]
    return out


# Nesting of the files read here: real code stays under 50; Python's recursion limit
# (1,000 frames) allows about 300 levels of ast.unparse.
MAX_DEPTH = 100


def _depth(tree: ast.AST) -> int:
    """How deep the tree nests, found without recursion."""
    deepest, todo = 0, [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return deepest


def _version(tree: ast.Module | None) -> str:
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if "__version__" in names and isinstance(node.value.value, str):
                return node.value.value
    return ""


def _engine_args(cls: ast.ClassDef, known: VllmKnowledge) -> None:
    """EngineArgs' fields (`x: int = ParallelConfig.x`: the config field each stands for) and
    the flags add_cli_args gives them (`add_argument("--x", "-x", **parallel_kwargs["x"])`)."""
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            value = stmt.value
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                known.engine_args[stmt.target.id] = (value.value.id, value.attr)
    method = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "add_cli_args"), None
    )
    if method is None:
        return
    kwargs: dict[str, str] = {}  # variable -> config class of get_kwargs(...)
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if getattr(call.func, "id", "") == "get_kwargs" and call.args:
                target = node.targets[0]
                if isinstance(target, ast.Name) and isinstance(call.args[0], ast.Name):
                    kwargs[target.id] = call.args[0].id
    for node in ast.walk(method):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            _add_argument(node, kwargs, known)


def _add_argument(call: ast.Call, kwargs: dict[str, str], known: VllmKnowledge) -> None:
    flags = tuple(
        a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
    )
    if not flags or not flags[0].startswith("--"):
        return
    spread = [k.value for k in call.keywords if k.arg is None]
    for value in list(spread):  # **{**x["f"], "default": None}
        if isinstance(value, ast.Dict):
            spread += [v for k, v in zip(value.keys, value.values, strict=True) if k is None]
    for value in spread:
        if (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id in kwargs
            and isinstance(value.slice, ast.Constant)
        ):
            cls, fld = kwargs[value.value.id], str(value.slice.value)
            annotation = known.classes.get(cls, {}).get(fld, "")
            action = next((ast.unparse(k.value) for k in call.keywords if k.arg == "action"), "")
            boolean = "BooleanOptional" in action or (not action and _is_bool(annotation))
            known.options[(cls, fld)] = _with_no(flags) if boolean else flags
            return


def _with_no(flags: tuple[str, ...]) -> tuple[str, ...]:
    """A boolean flag's option strings as argparse lists them: each --x followed by --no-x."""
    out: list[str] = []
    for flag in flags:
        out += [flag, "--no-" + flag[2:]] if flag.startswith("--") else [flag]
    return tuple(out)

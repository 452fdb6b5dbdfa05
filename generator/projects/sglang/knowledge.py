"""What `extract` knows of SGLang's source: its settings, their kinds, and the stages of a run.

Read from the tree being extracted (SGLang 0.5.23's layout), never written down here:

- server arguments: the fields of the namespaces `ServerArgs` is assembled from
  (`sglang/srt/arg_groups/fields/*.py`: `name: A[T, "help"]` or `A[T, Arg(cli_name=...,
  aliases=[...], no_cli=...)]`), with the flags `add_cli_args_from_dataclass` gives them
  (`--` and the name with dashes, or `cli_name`), and the fields `ServerArgs.add_cli_args`
  registers by hand (`--enable-dp-attention`); each links to its line of SGLang's source at
  the release's tag;
- environment variables: the `SGLANG_*` fields of `sglang/srt/environ.py`'s `Envs`, read as
  `envs.SGLANG_X.get()`;
- request fields: the fields of the OpenAI-compatible server's request models
  (`sglang/srt/entrypoints/openai/protocol.py`) and of `SamplingParams`, read as
  `request.max_tokens` in the server's code or `self.temperature` in `SamplingParams`;
- model config keys: the keys the model configs of `sglang/srt/configs/` set, and the common
  keys of Hugging Face configs, read as `hf_config.num_attention_heads` (or through
  `ModelConfig`'s head getters).

SGLang's diffusion runtime (`sglang/multimodal_gen/`, `sglang generate` and its server) is a
program of its own, with settings of its own (`DiffusionKnowledge`, which `program` gives for
its code): its server arguments, the options `ServerArgs.add_cli_args` registers by hand in
`sglang/multimodal_gen/runtime/server_args/server_args.py` (with the pipeline config's that it
adds, `--flow-shift`), flags of `sglang generate`, its parser being the release's
generator/flags/sglang-generate-<version>.json; the sampling parameters of
`sglang/multimodal_gen/configs/sample/sampling_params.py` that its HTTP API's requests also
take (`sglang/multimodal_gen/runtime/entrypoints/openai/protocol.py`), read as
`sampling_params.x`, or as `batch.x` and `req.x` (a pipeline's `Req` hands its sampling
parameters' fields through); and the variables of `sglang/multimodal_gen/envs.py`'s
`environment_variables`, read as `envs.SGLANG_DIFFUSION_X`.

What is SGLang's by convention (which module runs at which stage, how its code reaches the
resolved arguments) is in the tables below.
"""

import ast
import re
from dataclasses import dataclass, field, replace

from errorkb.sources import named
from errorkb.sources.explain import MODEL_INIT, WARMUP, Knowledge, Setting

SOURCE = "https://github.com/sgl-project/sglang/blob/v{version}/{path}#L{line}"
FIELDS = "sglang/srt/arg_groups/fields/"
SERVER_ARGS = "sglang/srt/server_args.py"
ENVIRON = "sglang/srt/environ.py"
PROTOCOL = "sglang/srt/entrypoints/openai/protocol.py"
SAMPLING = "sglang/srt/sampling/sampling_params.py"
CONFIGS = "sglang/srt/configs/"
VERSION = "sglang/_version.py"  # written by the wheel's build

# How SGLang's code reaches the resolved server arguments: the raw record, its views, and
# the runtime context's namespace bags (`get_parallel().tp_size`, `get_exec().moe.x`).
ARG_ROOTS = frozenset({"server_args", "get_server_args()", "resolving_view()", "resolved_view()"})
ARG_ROOTS |= {"get_context()", "get_parallel()", "get_exec()", "get_schedule()", "get_memory()"}
ARG_ROOTS |= {"get_model()", "get_spec()", "get_lora()", "get_mm()", "get_disagg()"}
ARG_ROOTS |= {"get_serving()", "get_observability()", "get_device()"}
# Parameters that hold a view of the server arguments in the resolution hooks
# (`def _a2a_ep_size(view)`, `def check(cfg)`), and argparse's namespace.
VIEW_NAMES = frozenset({"cfg", "view", "args", "server_args"})
ARG_OWNERS = frozenset({"ServerArgs"})  # a method of: `self.x` is a server argument
# The widths SGLang derives from the sizes it is given (`arg_groups/fields/parallel.py`'s
# Derived fields), by the size the user sets: attn_tp_size is tp_size // attn_dp_size.
WIDTHS = {
    "attn_tp_size": "tp_size",
    "moe_tp_size": "tp_size",
    "tp_world_size": "tp_size",
    "moe_ep_size": "ep_size",
    "attn_dcp_size": "dcp_size",
    "num_dp_ranks": "dp_size",
}
# A local, parameter or attribute of one of these names holds that server argument throughout
# SGLang's code (`def _get_kda_local_num_heads(num_heads, tp_size)`, a KV pool's
# `self.page_size`), where tracing cannot follow it to the arguments.
NAMED = frozenset({"tp_size", "pp_size", "ep_size", "dp_size", "attn_dp_size", "dcp_size"})
NAMED |= {"page_size", "kv_cache_dtype"}
# Configs SGLang builds from the server arguments, keeping their names (ModelConfig's
# quantization and dtype, LoadConfig's load_format).
ARG_COPIES = frozenset({"model_config", "load_config"})
# Their classes: in a method of one, `self.quantization` is that copy (SGLang's ModelConfig
# is built by from_server_args with quantization=server_args.quantization).
ARG_COPY_CLASSES = frozenset({"ModelConfig", "LoadConfig"})

# Code of SGLang's other programs, whose settings are not the server's (`sglang generate`).
OTHER_PROGRAMS = ("sglang/multimodal_gen/",)

# The diffusion runtime's settings (DiffusionKnowledge).
DIFFUSION = "sglang/multimodal_gen/"
DIFFUSION_COMMAND = "sglang generate"  # the command whose parser takes its flags
DIFFUSION_PROGRAM = "generate"  # its parser data: generator/flags/sglang-generate-<v>.json
DIFFUSION_SERVER_ARGS = "sglang/multimodal_gen/runtime/server_args/server_args.py"
# Where its ServerArgs.add_cli_args's options are registered (its disaggregation's in disagg.py)
DIFFUSION_ARGS_FOLDER = "sglang/multimodal_gen/runtime/server_args/"
DIFFUSION_PIPELINE = "sglang/multimodal_gen/configs/pipeline_configs/base.py"
DIFFUSION_SAMPLING = "sglang/multimodal_gen/configs/sample/sampling_params.py"
DIFFUSION_PROTOCOL = "sglang/multimodal_gen/runtime/entrypoints/openai/protocol.py"
DIFFUSION_ENVS = "sglang/multimodal_gen/envs.py"
# Its HTTP API's endpoints: besides the request models, the fields of a body they take as
# parameters (`lora_nickname = Body(...)` of /set_lora)
DIFFUSION_API = "sglang/multimodal_gen/runtime/entrypoints/openai/"
BODY_PARAMS = frozenset({"Body", "Form"})
DIFFUSION_WANTED = (
    DIFFUSION_SERVER_ARGS,
    DIFFUSION_PIPELINE,
    DIFFUSION_SAMPLING,
    DIFFUSION_PROTOCOL,
    DIFFUSION_ENVS,
)
# How the diffusion runtime's code reaches its server arguments: `server_args.x`,
# `self.server_args.x`, `get_global_server_args().x`; its pipeline config as
# `server_args.pipeline_config.x` (a field set by an option: `--flow-shift`).
DIFFUSION_ARG_ROOTS = frozenset({"server_args", "get_global_server_args()", "get_server_args()"})
DIFFUSION_PIPELINE_ROOT = "pipeline_config"
# Names that hold a generation's sampling parameters: the parameters, and the pipeline's
# request (`Req`, which hands the parameters' fields through: `batch.num_frames`).
DIFFUSION_REQUEST_NAMES = frozenset({"sampling_params", "batch", "req"})
DIFFUSION_NAMED = frozenset({"tp_size"})  # a local of this name holds --tp-size
# Its tools and benchmarks are run by hand with arguments of their own; its ComfyUI nodes
# take theirs from ComfyUI's graph.
DIFFUSION_OWN_ARGS = (
    "sglang/multimodal_gen/tools/",
    "sglang/multimodal_gen/benchmarks/",
    "sglang/multimodal_gen/apps/ComfyUI_SGLDiffusion/",
)

REQUEST_NAMES = frozenset({"request", "req", "body", "sampling_params"})
SAMPLING_PARAMS = "SamplingParams"

CONFIG_ROOTS = frozenset({"config", "hf_config", "hf_text_config", "text_config"})
# ModelConfig's getters and attributes that read a key of config.json.
CONFIG_CALLS = {
    "get_total_num_kv_heads()": "num_key_value_heads",
    "get_num_kv_heads()": "num_key_value_heads",
    "get_total_num_attention_heads()": "num_attention_heads",
    "get_num_attention_heads()": "num_attention_heads",
}
MODEL_CONFIG = frozenset({"model_config"})
# Keys of Hugging Face configs that SGLang's own config classes need not redeclare.
HF_KEYS = frozenset(
    {
        "num_attention_heads",
        "num_key_value_heads",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "vocab_size",
        "max_position_embeddings",
        "head_dim",
        "rope_theta",
        "rope_scaling",
        "num_experts",
        "num_local_experts",
        "n_routed_experts",
        "n_shared_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
        "kv_lora_rank",
        "q_lora_rank",
        "qk_rope_head_dim",
        "qk_nope_head_dim",
        "v_head_dim",
        "sliding_window",
        "tie_word_embeddings",
        "torch_dtype",
        "architectures",
        "model_type",
        "quantization_config",
        "n_group",
        "topk_group",
    }
)

# Where in a run a module's code runs, by path prefix (after `sglang/`); the longest wins.
STAGE_PATHS: dict[str, str | None] = {
    "sglang/cli/": "argument-parsing",
    "sglang/launch_server.py": "argument-parsing",
    "sglang/srt/server_args.py": "argument-parsing",
    "sglang/srt/arg_groups/": "config-validation",
    "sglang/srt/arg_groups/arg_utils.py": "argument-parsing",
    "sglang/srt/arg_groups/argparse_actions.py": "argument-parsing",
    "sglang/srt/arg_groups/fields/": "argument-parsing",
    "sglang/srt/configs/": "config-validation",
    "sglang/srt/environ.py": "config-validation",
    "sglang/srt/models/": "model-loading",
    "sglang/srt/model_loader/": "model-loading",
    "sglang/srt/layers/": "model-loading",
    "sglang/srt/lora/": "model-loading",
    "sglang/srt/weight_sync/": "model-loading",
    "sglang/srt/checkpoint_engine/": "model-loading",
    "sglang/srt/connector/": "model-loading",
    "sglang/srt/runtime_context.py": "engine-startup",
    "sglang/srt/model_executor/": "engine-startup",
    # The scheduler and its kin start up, then serve from their event loops, in the same
    # classes: their functions are dated by name (_SETUP, _SERVE) or by their callers.
    "sglang/srt/managers/": None,
    # The KV caches are built at start-up and match, insert, load and evict a request's pages
    # while serving: dated by name (_SETUP, _CACHE_SETUP, _CACHE_WORK) or by their callers.
    "sglang/srt/mem_cache/": None,
    "sglang/srt/distributed/": "engine-startup",
    "sglang/srt/disaggregation/": None,  # as managers/: set up at start-up, used per request
    "sglang/srt/elastic_ep/": "engine-startup",
    "sglang/srt/eplb/": "engine-startup",
    "sglang/srt/speculative/": "engine-startup",
    "sglang/srt/compilation/": "engine-startup",
    "sglang/srt/entrypoints/engine.py": "engine-startup",
    "sglang/srt/entrypoints/": "request-handling",
    "sglang/srt/entrypoints/warmup.py": "engine-startup",  # the warm-up requests before serving
    "sglang/srt/managers/tokenizer_manager.py": "request-handling",
    "sglang/srt/managers/io_struct.py": "request-handling",
    # The chat and completion templates are loaded once, while the server starts
    # (TemplateManager.initialize_templates from the engine's and HTTP server's launch).
    "sglang/srt/managers/template_manager.py": "engine-startup",
    "sglang/srt/parser/template_manager.py": "engine-startup",
    "sglang/srt/managers/multimodal_processor.py": "request-handling",
    "sglang/srt/sampling/": "request-handling",
    "sglang/srt/function_call/": "request-handling",
    "sglang/srt/parser/": "request-handling",
    "sglang/srt/constrained/": "request-handling",
    "sglang/srt/multimodal/": "request-handling",
    "sglang/srt/tokenizer/": "request-handling",
    "sglang/srt/session/": "request-handling",
    "sglang/srt/layers/attention/": "kernel-selection",
    "sglang/srt/layers/quantization/": "kernel-selection",
    "sglang/srt/layers/moe/": "kernel-selection",
    "sglang/srt/hardware_backend/": "kernel-selection",
    "sglang/srt/platforms/": "kernel-selection",
    "sglang/srt/kernel_plugins/": "kernel-selection",
    "sglang/srt/batch_invariant_ops/": "kernel-selection",
    "sglang/kernels/": "kernel-selection",
    # The JIT kernels' build: the compiler, its flags and the headers it needs, found and run
    # when a kernel is first built, in the warm-up and graph capture (derived.STAGE_MEANS:
    # compilation is engine start-up), not a kernel's check of what it supports.
    "sglang/kernels/jit/utils/compile/": "engine-startup",
    "sglang/kernels/jit/utils/deps.py": "engine-startup",
    "sglang/kernels/jit/utils/arch.py": "engine-startup",
    "sglang/multimodal_gen/runtime/server_args": "argument-parsing",
    "sglang/multimodal_gen/configs/": "config-validation",
    # A generation request's sampling parameters, checked as each request (or `generate` call)
    # comes in: request handling (derived.STAGE_MEANS); the warm-up's are dated by WARMUP.
    "sglang/multimodal_gen/configs/sample/": "request-handling",
    "sglang/multimodal_gen/runtime/models/": "model-loading",
    "sglang/multimodal_gen/runtime/loader/": "model-loading",
    "sglang/multimodal_gen/runtime/layers/": "model-loading",
    "sglang/multimodal_gen/runtime/layers/attention/": "kernel-selection",
    "sglang/multimodal_gen/runtime/platforms/": "kernel-selection",
    "sglang/multimodal_gen/runtime/distributed/": "engine-startup",
    # The diffusion scheduler and its workers start up, then serve from the event loop: dated
    # by name (_SETUP, _SERVE) or by their callers, as srt's managers/.
    "sglang/multimodal_gen/runtime/managers/": None,
    "sglang/multimodal_gen/runtime/pipelines/": None,  # built at start-up, run per request
    "sglang/multimodal_gen/runtime/pipelines_core/": "request-handling",
    "sglang/multimodal_gen/runtime/entrypoints/": "request-handling",
    # The diffusion server's launcher: its launch_* functions start the scheduler processes
    # before it serves (a role's "ready" line); its other functions are dated by their callers.
    "sglang/multimodal_gen/runtime/launch_server.py": None,
    # Old layouts (0.1 to 0.4): the MoE kernels before layers/moe/, the OpenAI adapter before
    # entrypoints/openai/ (its chat template is loaded at start-up: _OLD_TEMPLATE), the server
    # module before entrypoints/ (launched at start-up, routes dated by callers), and the mini
    # load balancer of disaggregation (its arguments parsed, then routing each request).
    "sglang/srt/layers/fused_moe/": "kernel-selection",
    "sglang/srt/layers/fused_moe_triton/": "kernel-selection",
    "sglang/srt/layers/fused_moe_patch.py": "kernel-selection",
    "sglang/srt/openai_api/": "request-handling",
    "sglang/srt/server.py": None,
    "sglang/srt/disaggregation/mini_lb.py": "request-handling",
    "sglang/srt/disaggregation/launch_lb.py": "argument-parsing",
}
_MODELS = ("sglang/srt/models/", "sglang/multimodal_gen/runtime/models/")
# An all-reduce backend's constructor checks what it supports (world size, the library, the
# group) and disables itself: kernel selection (derived.STAGE_MEANS).
_ALL_REDUCE = re.compile(r"^sglang/srt/distributed/device_communicators/\w*all_?reduce\w*\.py$")
# Model code: its forward pass first runs when the engine captures graphs or profiles memory.
_FORWARD = re.compile(r"(^|\.)(_?forward\w*|compute_logits|sample)$")
_INIT = MODEL_INIT  # methods that run while a model is built
# In the modules that both start up and serve (a None in STAGE_PATHS): what builds them runs
# at start-up; the scheduler's serving loop (its event loops, the handlers of what it receives,
# the batches it picks, runs and streams out) serves.
# (a worker's KV pools, allocated as the engine sizes its cache: TpModelWorker.alloc_memory_pool)
_SETUP = re.compile(
    r"(^|\.)(__init__|__post_init__|_?init_\w*|_?setup\w*|run_\w*_process|_?alloc_\w*pools?)$"
)
_SERVE = re.compile(
    r"(^|\.)(event_loop\w*|_?handle_\w+|process_input_requests|get_next_\w*batch_to_run"
    r"|run_batch|process_batch_result\w*|_?stream_output\w*"
    # the scheduler's self-checks of its pools, run when the serving loop is idle or busy
    r"|check_memory|self_check\w*)$"
)
# Old layouts' names of the same: the controllers (0.1 to 0.2) and the scheduler's mixins
# (0.4) receive, queue, step and log each batch, a thread's body forwards each batch, and the
# API's weight updates run on a running server; the controllers' processes and workers and
# the old server's launch start up.
_OLD_SERVE = re.compile(
    r"(^|\.)(recv_requests\w*|loop_for_\w*|get_priority_queue|forward_step|exposed_step"
    r"|round_robin_scheduler|shortest_queue_scheduler|log_\w*_stats|\w*_thread_func"
    r"|update_weights\w*|get_weights_by_name)$"
)
_OLD_SETUP = re.compile(
    r"(^|\.)(start_\w*_process|start_dp_workers?|launch_\w*|_set_envs_and_config)$"
)
_OLD_TEMPLATE = re.compile(r"(^|\.)load_\w*chat_template\w*$")
# The grammar backend is built with the scheduler (GrammarManager.__init__ calls
# create_grammar_backend, which builds the backend): at start-up; its grammars, per request.
_GRAMMARS = "sglang/srt/constrained/"
_GRAMMAR_SETUP = re.compile(
    r"(^|\.)(create_grammar_backend|\w*Backend\.__init__|GrammarManager\.__init__)$"
)
_MINI_LB = "sglang/srt/disaggregation/mini_lb.py"
# A diffusion pipeline's modules are loaded, and its stages built, when it is built.
_PIPELINES = "sglang/multimodal_gen/runtime/pipelines/"
_PIPELINE_LOAD = re.compile(
    r"(^|\.)(_?load_\w*|initialize_pipeline|create_pipeline_stages|build_\w*_quant_config)$"
)
# The launcher and CLI commands parse their arguments, then run the server or a pipeline:
# what they call is not argument parsing.
_LAUNCH = ("sglang/cli/", "sglang/launch_server.py")
_LAUNCH_RUNS = re.compile(r"(^|\.)(main|serve|generate|_?run_\w*)$")
_CLI_ARGS = re.compile(r"(^|\.)(add_cli_args|from_cli_args|get_cli_args)$")
# Attention backends and their kernel dispatchers: chosen and built by the model runner.
_ATTENTION = "sglang/srt/layers/attention/"
_BACKEND_CLASS = re.compile(r"(Backend|Dispatcher)\w*\.")
# What of a backend's class checks what it supports: its set-up and its checks
_BACKEND_SETUP = re.compile(r"\.(__init__|__post_init__|_?validate\w*|_?check\w*|_?select\w*)$")
_LAYERS = "sglang/srt/layers/"
_DIFFUSION = ("sglang/multimodal_gen/runtime/models/", "sglang/multimodal_gen/runtime/layers/")
_PROCESSOR = re.compile(r"(Processor|ProcessingInfo)\b")
# The KV caches' work on a request's pages (prefetching from storage, backing up, loading
# back, evicting) runs while serving, though the caches are built at start-up.
_MEM_CACHE = "sglang/srt/mem_cache/"
# (Not the factories and policies picked at start-up: `_load_backend_class`,
# `get_eviction_strategy`; nor a worker thread's start and stop.)
_CACHE_SETUP = re.compile(
    r"(^|\.)(_load_backend_class|get_\w*_(?:strategy|policy)|_?(?:start|stop)_\w*thread\w*"
    r"|create\w*|_?register\w*|_?build_\w*pool\w*)$"
)
_CACHE_WORK = re.compile(
    r"(^|\.)(?!_?(?:start|stop)_)_?\w*(prefetch|page_transfer|backup|load_back(?!end)"
    r"|write_back|evict(?!ion_(?:strategy|policy)))\w*$"
)

# A speculative worker's step (drafting, verifying, sampling and accepting the tokens of a
# batch), run by the scheduler on every batch while serving; the workers are built at start-up.
_SPECULATIVE = "sglang/srt/speculative/"
_SPEC_STEP = re.compile(
    r"(^|\.)(forward_batch_generation|_?forward_(?:prefill|decode|draft\w*|target\w*|verify\w*"
    r"|extend\w*)|prepare_for_\w+|merge_batch|filter_batch|verify|_?run_\w*(?:rejection|sampling)"
    r"|_?\w*rejection\w*|_?accept\w*)$"
)

# Stand-alone tools (a checkpoint's calibration, a weight repack), run by hand with their own
# arguments: no stage of a server's run is theirs.
_TOOLS = ("sglang/multimodal_gen/tools/",)
# What the API asks of a running server's model runner (/check_weights, /update_weights_*,
# /get_weights_by_name, through the scheduler's weight updater): while serving.
_RUNNER = "sglang/srt/model_executor/"
_WEIGHTS_API = re.compile(r"(^|\.)(check_weights|update_weights\w*|get_weights_by_name)$")


@dataclass(frozen=True)
class Place:
    path: str  # repository path of the file that declares it
    line: int


@dataclass
class SglangKnowledge(Knowledge):
    divisor_calculator = True  # the wing's record pages (tables.record_section)
    version: str = ""
    root: str = ""  # what the tree puts before `sglang/` (`python/`)
    args: dict[str, tuple[tuple[str, ...], Place]] = field(default_factory=dict)  # -> flags
    envs: dict[str, Place] = field(default_factory=dict)
    requests: dict[str, Place] = field(default_factory=dict)  # request field -> its declaration
    config_keys: frozenset[str] = HF_KEYS
    # SGLang's own config.json classes (sglang/srt/configs/): `self.x` in them is a key
    config_classes: frozenset[str] = frozenset()
    parser: dict[str, dict] = field(default_factory=dict)  # the release's parser data, if any
    getters: dict[str, str] = field(default_factory=dict)  # "get_x()" -> the server argument x
    # The diffusion runtime's settings: `program` gives them for its code.
    diffusion: "DiffusionKnowledge | None" = None

    def program(self, path: str) -> Knowledge:
        if self.settings_apply(path):
            return self
        if self.diffusion is not None and self.diffusion.settings_apply(path):
            return self.diffusion
        # Another program's code with arguments of its own (a diffusion tool's), or without
        # the diffusion runtime's files: none of these settings are its (its stages are).
        return SglangKnowledge(version=self.version, root=self.root)

    def named(self, word: str) -> list[Setting]:
        if word.startswith("--"):
            return self._flag_named(word)
        found: list[Setting | None] = []
        if word in self.args:
            found.append(self._arg(word))
        if word in self.envs:
            found.append(self._env(f"envs.{word}.get()"))
        if word in self.requests:
            url = self._url(self.requests[word])
            found.append(Setting(f"request.{word}", key=word, url=url, kind="request-field"))
        return named.distinct(found)

    def settings_apply(self, path: str) -> bool:
        # The diffusion runtime is a program of its own, with its own server arguments.
        path = path[len(self.root) :] if self.root and path.startswith(self.root) else path
        return not any(path.startswith(p) or f"/{p}" in path for p in OTHER_PROGRAMS)

    def _flag_named(self, word: str) -> list[Setting]:
        """`--tp-size`, an alias (`--tp`), the `_` form, `--no-x` of a switch."""
        if "." in word:
            return []
        flag = named.dashed(word)
        names = [n for n, (flags, _) in self.args.items() if word in flags or flag in flags]
        option = self.parser.get(word) or self.parser.get(flag)
        negative = (
            option is not None
            and (option.get("negative") or ())
            and (flag in option["negative"] or word in option["negative"])
        )
        if not names and option is not None and option["dest"] in self.args:
            names = [option["dest"]]
        found = named.distinct([self._arg(n) for n in names])
        if negative:
            negatives = option["negative"] if option else ()
            found = [replace(s, flag=word if word in negatives else flag) for s in found]
        return found

    def setting(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        last, before = chain[-1], chain[:-1]
        if before in ((), ("self",)) and (last in NAMED or last in WIDTHS):
            return self._arg(WIDTHS.get(last, last))
        if len(chain) == 1:
            return self._env(last) or self._config_call(last) or self._getter(last)
        if before == ("os.environ",) and last in self.envs:  # get_bool_env_var("SGLANG_X")
            return self._env(f"envs.{last}.get()")
        if last in WIDTHS and self._reads_args(before, owner):
            return self._arg(WIDTHS[last])
        if last in self.args and self._reads_args(before, owner):
            return self._arg(last)
        if last in self.requests and self._reads_request(before, owner):
            return self._request(chain, last)
        if last in self.config_keys and (before[-1] in CONFIG_ROOTS | MODEL_CONFIG):
            return Setting(".".join(chain[-2:]), key=last, kind="model-config")
        if before == ("self",) and owner in self.config_classes and last in self.config_keys:
            return Setting(".".join(chain), key=last, kind="model-config")  # its own values
        return None

    def _reads_args(self, before: tuple[str, ...], owner: str) -> bool:
        if before == ("self",):
            return owner in ARG_OWNERS or owner in ARG_COPY_CLASSES
        if len(before) == 1:
            return before[0] in VIEW_NAMES | ARG_ROOTS | ARG_COPIES
        return any(part in ARG_ROOTS or part == "server_args" for part in before)

    def _reads_request(self, before: tuple[str, ...], owner: str) -> bool:
        if before == ("self",):
            return owner == SAMPLING_PARAMS
        return before[-1] in REQUEST_NAMES

    def _arg(self, name: str) -> Setting | None:
        if name not in self.args:
            return None
        flags, place = self.args[name]
        return Setting(f"server_args.{name}", flags[0], self._url(place), kind="server-arg")

    def _request(self, chain: tuple[str, ...], name: str) -> Setting:
        where = ".".join(chain[-2:]) if chain[0] != "self" else f"sampling_params.{name}"
        return Setting(where, key=name, url=self._url(self.requests[name]), kind="request-field")

    def _env(self, call: str) -> Setting | None:
        match = re.fullmatch(r"envs\.(SGLANG_\w+)\.(get|value|is_set)(\(\))?", call)
        if not match or match[1] not in self.envs:
            return None
        name = match[1]
        return Setting(f"envs.{name}", url=self._url(self.envs[name]), kind="env-var", env=name)

    def _getter(self, call: str) -> Setting | None:
        """`get_moe_a2a_backend()`, `get_moe_a2a_backend().is_deepep()`: a function that returns
        a server argument (GETTER), or a question asked of its value."""
        match = re.fullmatch(r"(\w+\(\))(?:\.is_\w+\(\))?", call)
        name = self.getters.get(match[1]) if match else None
        return self._arg(name) if name else None

    def _config_call(self, call: str) -> Setting | None:
        """`self.model_config.get_total_num_kv_heads()`: a key of config.json."""
        parts = call.split(".")
        key = CONFIG_CALLS.get(parts[-1])
        if key is None or (len(parts) > 1 and parts[-2] not in MODEL_CONFIG):
            return None
        return Setting(f"hf_config.{key}", key=key, kind="model-config")

    def _url(self, place: Place) -> str:
        if not self.version:
            return ""
        return SOURCE.format(version=self.version, path=place.path, line=place.line)

    def dispatches(self, path: str, function: str) -> bool:
        path = path[len(self.root) :] if self.root and path.startswith(self.root) else path
        return path.startswith(_LAUNCH) and bool(_LAUNCH_RUNS.search(function))

    def undated(self, path: str, function: str) -> bool:
        path = path[len(self.root) :] if self.root and path.startswith(self.root) else path
        return path.startswith(_TOOLS)

    def stage(self, path: str, function: str) -> str | None:
        path = path[len(self.root) :] if self.root and path.startswith(self.root) else path
        if path.startswith(_TOOLS):
            return None
        if path.startswith(_RUNNER) and _WEIGHTS_API.search(function):
            return "request-handling"
        if path.startswith(_MODELS) and _PROCESSOR.search(function):
            return "request-handling"
        if _ALL_REDUCE.match(path) and function.endswith("__init__"):
            return "kernel-selection"  # an all-reduce backend checks what it supports
        if path.startswith(_ATTENTION) and _BACKEND_CLASS.search(function):
            # built by the model runner once the weights are loaded; its other methods run
            # per batch or per layer (metadata, a dispatch), dated by their callers
            return "kernel-selection" if _BACKEND_SETUP.search(function) else None
        if path.startswith(("sglang/srt/layers/", *_MODELS)) and _INIT.search(function):
            return "model-loading"
        if WARMUP.search(function):
            return "engine-startup"
        if path.startswith(_MEM_CACHE) and _CACHE_SETUP.search(function):
            return "engine-startup"
        cache_work = path.startswith(_MEM_CACHE) and _CACHE_WORK.search(function)
        if cache_work and not _INIT.search(function):
            return "request-handling"
        if path.startswith(_SPECULATIVE) and _SPEC_STEP.search(function):
            return "request-handling"
        if path.startswith(_GRAMMARS) and _GRAMMAR_SETUP.search(function):
            return "engine-startup"
        if _CLI_ARGS.search(function):  # a dataclass's reading of the parsed command line
            return "argument-parsing"
        if path.startswith("sglang/srt/openai_api/") and _OLD_TEMPLATE.search(function):
            return "engine-startup"
        if path == _MINI_LB and _SETUP.search(function):
            return "engine-startup"
        if path.startswith(_MODELS) and not (_FORWARD.search(function) or _INIT.search(function)):
            # A model's other functions (a VAE's window decode, a config's reading, a weight
            # helper) run where their callers run: while it loads, in its forward, or both.
            return None
        best = max((p for p in STAGE_PATHS if path.startswith(p)), key=len, default="")
        by_path = STAGE_PATHS.get(best)
        if best and by_path is None:  # a module that both starts up and serves
            if best == _PIPELINES and _PIPELINE_LOAD.search(function):
                return "model-loading"
            if _SERVE.search(function) or _OLD_SERVE.search(function):
                return "request-handling"
            if _SETUP.search(function) or _OLD_SETUP.search(function):
                return "engine-startup"
            return None  # its callers say (explain.stages_from_callers)
        # A diffusion model's or layer's forward first runs for a request: the diffusion
        # server profiles nothing and its warm-up is off unless asked (ServerArgs._adjust_warmup).
        if _FORWARD.search(function) and path.startswith(_DIFFUSION) and by_path == "model-loading":
            return "request-handling"
        # A model's or a layer's forward first runs at start-up (profiling, CUDA graphs),
        # not while the weights load; a kernel layer's keeps its own stage.
        if _FORWARD.search(function) and (
            path.startswith(_MODELS) or (path.startswith(_LAYERS) and by_path == "model-loading")
        ):
            return "engine-startup"
        # A layer's kernel module: its kernel ops and backend checks choose and check kernels;
        # the methods of its other classes (a MoE runner's placement, a dispatcher's buffer, a
        # config's log line) run where their callers do. Blind samples 7303 to 7313 found the
        # module's stage wrong for 10 of 11 such methods (a forward aside).
        method = "." in function and not (
            _BACKEND_SETUP.search(function) or _FORWARD.search(function)  # a kernel layer's own
        )
        if by_path == "kernel-selection" and path.startswith(_LAYERS) and method:
            return None
        return by_path


@dataclass
class DiffusionKnowledge(SglangKnowledge):
    """The diffusion runtime's settings (the module's doc): its own server arguments (flags
    of `sglang generate`), sampling parameters its requests take, and environment variables.
    Its stages are SGLang's (`stage`, by path)."""

    # server argument (or pipeline config field) -> its Place; its flags are in `args`
    diffusion_envs: dict[str, Place] = field(default_factory=dict)
    pipeline_fields: frozenset[str] = frozenset()
    arg_fields: frozenset[str] = frozenset()

    def settings_apply(self, path: str) -> bool:
        path = path[len(self.root) :] if self.root and path.startswith(self.root) else path
        inside = path.startswith(DIFFUSION) or f"/{DIFFUSION}" in path
        return inside and not any(path.startswith(p) for p in DIFFUSION_OWN_ARGS)

    def program(self, path: str) -> Knowledge:
        return self

    def named(self, word: str) -> list[Setting]:
        if not word.startswith("--") and word in self.diffusion_envs:
            return [s for s in [self._env(word)] if s]
        return super().named(word)

    def setting(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        last, before = chain[-1], chain[:-1]
        if before in ((), ("self",)) and last in DIFFUSION_NAMED:
            return self._arg(last)
        if len(chain) == 1:  # the server's `envs.SGLANG_X.get()`, which it imports too
            return SglangKnowledge._env(self, last) or self._config_call(last)
        if before[-1] in ("envs", "os.environ"):  # envs.SGLANG_DIFFUSION_X, getenv("X")
            return self._env(last) or SglangKnowledge._env(self, f"envs.{last}.get()")
        if before[-1] == DIFFUSION_PIPELINE_ROOT and last in self.pipeline_fields:
            return self._arg(last)
        if last in self.arg_fields and self._reads_args(before, owner):
            return self._arg(last)
        if last in self.requests and self._reads_request(before, owner):
            return self._request(chain, last)
        if last in self.config_keys and (before[-1] in CONFIG_ROOTS | MODEL_CONFIG):
            return Setting(".".join(chain[-2:]), key=last, kind="model-config")
        return None

    def _reads_args(self, before: tuple[str, ...], owner: str) -> bool:
        if before == ("self",):
            return owner == "ServerArgs"
        return before[-1] in DIFFUSION_ARG_ROOTS

    def _reads_request(self, before: tuple[str, ...], owner: str) -> bool:
        if before == ("self",):  # SamplingParams, a model's own, and the Req handing them
            return owner.endswith(SAMPLING_PARAMS) or owner == "Req"
        return before[-1] in DIFFUSION_REQUEST_NAMES

    def _arg(self, name: str) -> Setting | None:
        found = super()._arg(name)
        if found is None:
            return None
        root = "server_args.pipeline_config" if name in self.pipeline_fields else "server_args"
        return replace(found, field=f"{root}.{name}", command=DIFFUSION_COMMAND)

    def _env(self, call: str) -> Setting | None:
        match = re.fullmatch(r"(?:envs\.)?(\w+?)(?:\.get\(\))?", call)
        name = match[1] if match else ""
        if name not in self.diffusion_envs:
            return None
        place = self.diffusion_envs[name]
        return Setting(f"envs.{name}", url=self._url(place), kind="env-var", env=name)


# ---------------------------------------------------------------- reading the tree

MAX_DEPTH = 100  # nesting of the files read here; real code stays under 50


def read(files: list[tuple[str, bytes]]) -> SglangKnowledge | None:
    """SGLang's settings as the tree declares them; None for a tree that is not SGLang's.
    An older release (0.4 and before, no `arg_groups/fields/`) declares its arguments in
    `server_args.py` alone, registered by hand in `add_cli_args`: those are read."""
    root = next((p[: -len(SERVER_ARGS)] for p, _ in files if p.endswith(SERVER_ARGS)), None)
    if root is None:
        return None
    wanted = (FIELDS, SERVER_ARGS, ENVIRON, PROTOCOL, SAMPLING, CONFIGS, VERSION)
    trees: dict[str, ast.Module] = {}
    for path, data in files:
        if path.startswith(root) and path[len(root) :].startswith(wanted):
            tree = _parse(data)
            if tree is not None:
                trees[path[len(root) :]] = tree
    if not any(p.startswith(FIELDS) for p in trees) and SERVER_ARGS not in trees:
        return None
    known = SglangKnowledge(version=_version(trees.get(VERSION)), root=root)
    for path, tree in sorted(trees.items()):
        full = root + path
        if path.startswith(FIELDS):
            _server_args(tree, full, known)
        elif path == SERVER_ARGS:
            _hand_registered(tree, full, known)
        elif path == ENVIRON:
            _envs(tree, full, known)
        elif path in (PROTOCOL, SAMPLING):
            _requests(tree, full, known, path == SAMPLING)
        elif path.startswith(CONFIGS):
            known.config_keys = known.config_keys | _config_keys(tree)
            known.config_classes = known.config_classes | _config_classes(tree)
    for path, data in files:
        if path.startswith(root + GETTERS_IN) and b"\ndef " in data:
            _getters(data, known)
    known.parser = named.parser_options("sglang", known.version)
    known.diffusion = _diffusion(files, root, known)
    return known


def _diffusion(
    files: list[tuple[str, bytes]], root: str, known: SglangKnowledge
) -> DiffusionKnowledge | None:
    """The diffusion runtime's settings, from its own files; None when the tree has none.
    Its flags are those its ServerArgs.add_cli_args registers (the pipeline config's among
    them), as the release's `sglang generate` parser has them where there is its data."""
    trees: dict[str, ast.Module] = {}
    for path, data in files:
        inside = path[len(root) :]
        wanted = inside in DIFFUSION_WANTED or inside.startswith(
            (DIFFUSION_ARGS_FOLDER, DIFFUSION_API)
        )
        if path.startswith(root) and wanted:
            tree = _parse(data)
            if tree is not None:
                trees[path[len(root) :]] = tree
    if DIFFUSION_SERVER_ARGS not in trees:
        return None
    parser = named.parser_options(f"sglang-{DIFFUSION_PROGRAM}", known.version)
    out = DiffusionKnowledge(version=known.version, root=root, parser=parser)
    out.config_keys = known.config_keys
    out.envs = known.envs  # the server's, which the diffusion runtime reads too
    fields = {
        name: _dataclass_fields(trees.get(path), cls)
        for name, path, cls in (
            ("args", DIFFUSION_SERVER_ARGS, "ServerArgs"),
            ("pipeline", DIFFUSION_PIPELINE, "PipelineConfig"),
            ("sampling", DIFFUSION_SAMPLING, SAMPLING_PARAMS),
        )
    }
    for path, tree in sorted(trees.items(), key=lambda item: item[0] != DIFFUSION_SERVER_ARGS):
        if path.startswith(DIFFUSION_ARGS_FOLDER) or path == DIFFUSION_PIPELINE:
            _registered(tree, root + path, out)
    if parser:  # the parser's own strings, and only the options it has
        by_dest: dict[str, list[str]] = {}
        for string, option in parser.items():
            by_dest.setdefault(option["dest"], []).append(string)
        # an option of a field registered elsewhere (a quantization's own add_cli_args):
        # linked to the field's declaration
        for name, path in (("args", DIFFUSION_SERVER_ARGS), ("pipeline", DIFFUSION_PIPELINE)):
            for dest, line in fields[name].items():
                if dest in by_dest and dest not in out.args:
                    out.args[dest] = (tuple(by_dest[dest]), Place(root + path, line))
        out.args = {
            dest: (tuple(sorted(by_dest[dest], key=lambda s: s not in flags)), place)
            for dest, (flags, place) in out.args.items()
            if dest in by_dest
        }
    out.arg_fields = frozenset(n for n in fields["args"] if n in out.args)
    out.pipeline_fields = frozenset(
        n for n in fields["pipeline"] if n in out.args and n not in fields["args"]
    )
    # A sampling parameter is a setting of the request where the HTTP API's requests take
    # a field of its name; the others are the generate command's alone.
    asked = set()
    for node in ast.walk(trees.get(DIFFUSION_PROTOCOL) or ast.Module([], [])):
        if isinstance(node, ast.ClassDef) and node.name.endswith("Request"):
            asked |= {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
    out.requests = {
        name: Place(root + DIFFUSION_SAMPLING, line)
        for name, line in fields["sampling"].items()
        if name in asked and not name.startswith("_")
    }
    for path, tree in sorted(trees.items()):
        if path.startswith(DIFFUSION_API):
            for name, line in _body_params(tree):
                out.requests.setdefault(name, Place(root + path, line))
    if DIFFUSION_ENVS in trees:
        out.diffusion_envs = _diffusion_envs(trees[DIFFUSION_ENVS], root + DIFFUSION_ENVS)
    return out


def _body_params(tree: ast.Module) -> list[tuple[str, int]]:
    """The parameters of a module's endpoints that FastAPI reads from the request's body
    (`lora_nickname: str = Body(...)`), with their lines."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            params = positional[len(positional) - len(args.defaults) :]  # those with defaults
            pairs: list[tuple[ast.arg, ast.expr | None]] = [
                *zip(params, args.defaults, strict=True)
            ]
            pairs += [*zip(args.kwonlyargs, args.kw_defaults, strict=False)]
            for param, default in pairs:
                func = default.func if isinstance(default, ast.Call) else None
                if getattr(func, "id", getattr(func, "attr", "")) in BODY_PARAMS:
                    out.append((param.arg, param.lineno))
    return out


def _dataclass_fields(tree: ast.Module | None, name: str) -> dict[str, int]:
    """A class's annotated fields, with their lines."""
    for cls in tree.body if tree else ():
        if isinstance(cls, ast.ClassDef) and cls.name == name:
            return {
                s.target.id: s.lineno
                for s in cls.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
    return {}


def _registered(tree: ast.Module, path: str, known: SglangKnowledge) -> None:
    """The options `add_argument` registers in a file: `"--x"` or, in the pipeline config's
    `add_cli_args`, `f"--{prefix_with_dot}x"` (no prefix: `--x`), by dest."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        flags = [f for f in map(_option_text, node.args) if f.startswith("--")]
        if not flags:
            continue
        dests = [_option_text(k.value) for k in node.keywords if k.arg == "dest"]
        dest = dests[0] if dests and dests[0] else flags[0][2:].replace("-", "_")
        known.args.setdefault(dest, (tuple(flags), Place(path, node.lineno)))


def _option_text(node: ast.expr) -> str:
    """A string literal's text, or an f-string's with its formatted parts left out (the
    prefix an option is registered under, empty for the top-level parser's)."""
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) for v in node.values if isinstance(v, ast.Constant))
    return _text(node)


def _diffusion_envs(tree: ast.Module, path: str) -> dict[str, Place]:
    """The variables of envs.py's `environment_variables` dict."""
    for node in ast.walk(tree):
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if (
            isinstance(target, ast.Name)
            and target.id == "environment_variables"
            and isinstance(value, ast.Dict)
        ):
            return {
                k.value: Place(path, k.lineno)
                for k in value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return {}


# A module's function without parameters that returns a server argument, named for it:
# `def get_moe_a2a_backend(): moe = get_flags().moe; ...; return moe.a2a_backend`, `def
# is_dp_attention_enabled(): return get_flags().dp.enabled` (--enable-dp-attention), `def
# get_fp8_gemm_runner_backend(): ...; return FP8_GEMM_RUNNER_BACKEND` (a global set from it).
GETTERS_IN = "sglang/srt/"
_GETTER_DEF = re.compile(rb"^def ((?:get|is)_\w+)\(\)[^:\n]*:", re.M)


def _getters(data: bytes, known: SglangKnowledge) -> None:
    for match in _GETTER_DEF.finditer(data):
        name = match[1].decode()
        arg = _getter_arg(name, known)
        end = re.search(rb"^\S", data[match.end() :], re.M)
        body = data[match.start() : match.end() + end.start() if end else len(data)]
        func = _parse(body)
        node = func.body[0] if func is not None and func.body else None
        if arg and isinstance(node, ast.FunctionDef) and _returns_arg(node, arg):
            known.getters[f"{name}()"] = arg


def _getter_arg(name: str, known: SglangKnowledge) -> str | None:
    """The server argument a getter's name names: get_x -> x, is_x_enabled -> enable_x."""
    if name.startswith("get_") and name[4:] in known.args:
        return name[4:]
    enabled = re.fullmatch(r"is_(\w+)_enabled", name)
    if enabled and f"enable_{enabled[1]}" in known.args:
        return f"enable_{enabled[1]}"
    return None


def _returns_arg(func: ast.FunctionDef, arg: str) -> bool:
    """Whether what the function returns reads the argument: an attribute named for it (its
    name, or its end after the namespace: `moe.a2a_backend`; `.enabled` of an `enable_x`) or a
    module global of its name (`FP8_GEMM_RUNNER_BACKEND`), directly or through a local."""
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
    returned = [n.value for n in ast.walk(func) if isinstance(n, ast.Return) and n.value]
    if not returned:
        return False
    for value in returned:
        nodes = [value]
        if isinstance(value, ast.Name):
            nodes += values.get(value.id, [])
        if not any(_names_arg(n, arg) for n in nodes):
            return False
    return True


def _names_arg(node: ast.expr, arg: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id.strip("_").lower() == arg
    if isinstance(node, ast.Attribute):
        attr = node.attr
        if attr == arg or (arg.endswith("_" + attr) and "_" in attr):
            return True
        return attr == "enabled" and arg.startswith("enable_")
    return False


def _parse(data: bytes) -> ast.Module | None:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return None
    deepest, todo = 0, list[tuple[ast.AST, int]]([(tree, 0)])
    while todo:  # deeper trees could overflow ast.unparse and our walks
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return tree if deepest <= MAX_DEPTH else None


def _version(tree: ast.Module | None) -> str:
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if "__version__" in names and isinstance(node.value.value, str):
                return node.value.value
    return ""


def _server_args(tree: ast.Module, path: str, known: SglangKnowledge) -> None:
    """`name: A[T, "help"]` or `A[T, Arg(...)]` in a namespace class: a server argument with
    `--name` (or Arg's cli_name) and Arg's aliases; `no_cli=True`: none (unless add_cli_args
    registers one by hand)."""
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            meta = _arg_meta(stmt.annotation)
            if meta is None or meta.get("no_cli") is True:
                continue
            name = stmt.target.id
            cli = meta.get("cli_name") or "--" + name.replace("_", "-")
            aliases = [a for a in meta.get("aliases") or [] if isinstance(a, str)]
            known.args[name] = ((str(cli), *aliases), Place(path, stmt.lineno))


def _arg_meta(annotation: ast.expr) -> dict | None:
    """The CLI metadata of an `A[T, ...]` annotation: {} for a help string, Arg's literal
    keywords for an Arg(...); None when it is not an `A[...]` with either."""
    if not (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "A"
        and isinstance(annotation.slice, ast.Tuple)
    ):
        return None
    for part in annotation.slice.elts[1:]:
        if isinstance(part, ast.Constant | ast.JoinedStr | ast.BinOp):
            return {}
        if isinstance(part, ast.Call) and getattr(part.func, "id", "") == "Arg":
            out = {}
            for keyword in part.keywords:
                try:
                    out[keyword.arg] = ast.literal_eval(keyword.value)
                except ValueError:
                    continue
            return out
    return None


def _hand_registered(tree: ast.Module, path: str, known: SglangKnowledge) -> None:
    """Fields ServerArgs.add_cli_args registers itself: `add_argument("--x", dest=...)`."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        flags = [_text(a) for a in node.args if _text(a).startswith("--")]
        if not flags or flags[0] == "--config":
            continue
        dests = [_text(k.value) for k in node.keywords if k.arg == "dest"]
        dest = dests[0] if dests else flags[0][2:].replace("-", "_")
        known.args.setdefault(dest, (tuple(flags), Place(path, node.lineno)))


def _text(node: ast.expr) -> str:
    """A string literal's text; "" for anything else."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _envs(tree: ast.Module, path: str, known: SglangKnowledge) -> None:
    """The `SGLANG_*` fields of `class Envs`."""
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name == "Envs":
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                    for target in stmt.targets:
                        if isinstance(target, ast.Name) and target.id.startswith("SGLANG_"):
                            known.envs[target.id] = Place(path, stmt.lineno)


def _requests(tree: ast.Module, path: str, known: SglangKnowledge, sampling: bool) -> None:
    """Fields of the request models (`class XRequest`, and what they inherit) and of
    SamplingParams."""
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    requests = sorted((n for n in classes if n.endswith("Request")), key=_main_first)
    wanted = [SAMPLING_PARAMS] if sampling else requests[::-1]  # popped from the end
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        cls = classes[name]
        wanted += [b.id for b in cls.bases if isinstance(b, ast.Name)]
        for stmt in cls.body:
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and not target.id.startswith("_"):
                known.requests.setdefault(target.id, Place(path, stmt.lineno))


MAIN_REQUESTS = ("ChatCompletionRequest", "CompletionRequest")  # a field's link goes here first


def _main_first(name: str) -> tuple[int, str]:
    return (MAIN_REQUESTS.index(name) if name in MAIN_REQUESTS else len(MAIN_REQUESTS), name)


def _config_classes(tree: ast.Module) -> frozenset[str]:
    """The model config classes a module of sglang/srt/configs/ defines (`class
    HYV4Config(PretrainedConfig)`): what their methods check of `self` is config.json's."""
    return frozenset(
        cls.name
        for cls in tree.body
        if isinstance(cls, ast.ClassDef) and any("Config" in ast.unparse(b) for b in cls.bases)
    )


def _config_keys(tree: ast.Module) -> frozenset[str]:
    """Keys a model config class sets in its __init__ (`self.num_experts = num_experts`)."""
    keys = set()
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not any(
            "Config" in ast.unparse(base) for base in cls.bases
        ):
            continue
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
                for node in ast.walk(fn):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if (
                                isinstance(target, ast.Attribute)
                                and isinstance(target.value, ast.Name)
                                and target.value.id == "self"
                                and target.attr in params
                            ):
                                keys.add(target.attr)
    return frozenset(keys)

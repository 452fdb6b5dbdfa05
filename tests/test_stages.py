"""Where in a run an error happens (a record's `derived.stage`): the wings' rules by path and
name (generator/projects/*/knowledge.py) and the call graph (explain.stages_from_callers), on
small made-up trees shaped like the code that issue 40's round-2 audit found mis-staged: a
model file's image helper, the expert load balancer's transfers, SGLang's scheduler, its
disaggregation queues, its request statistics and a diffusion package's manifest check."""

from pathlib import Path

from errorkb.projects.sglang.knowledge import SglangKnowledge
from errorkb.projects.vllm.knowledge import VllmKnowledge
from errorkb.sources import explain
from errorkb.sources import extract as ex


def _scan(root: Path, files: dict[str, str], knowledge: explain.Knowledge) -> dict[str, dict]:
    """Each site's derived block, by its message, in a tree of these files."""
    for path, code in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code, encoding="utf-8")
    scan = ex.scan_tree(root, knowledge=lambda _files: knowledge, printed=True, jobs=1)
    return {site.template: site.derived or {} for site in scan.sites}


VLLM_TREE = {
    # 59699d7b4cc38020: a model file's resize helper, run by its processing info per request.
    "vllm/model_executor/models/ernie_like.py": (
        "def smart_resize(height, width, min_pixels, max_pixels):\n"
        "    if min_pixels > height * width:\n"
        "        raise ValueError(f'Invalid h_bar={height}: below min_pixels ({min_pixels})')\n"
        "    return height, width\n"
        "\n"
        "def _hidden_size(config):\n"
        "    if config.hidden_size % 64:\n"
        "        raise ValueError(f'hidden_size {config.hidden_size} is not aligned')\n"
        "    return config.hidden_size\n"
        "\n"
        "def _shared(x):\n"
        "    if x is None:\n"
        "        raise ValueError('shared helper got nothing')\n"
        "\n"
        "class ErnieLikeProcessingInfo:\n"
        "    def _get_vision_info(self, h, w):\n"
        "        return smart_resize(h, w, 4, 16)\n"
        "\n"
        "class ErnieLikeForCausalLM:\n"
        "    def __init__(self, config):\n"
        "        self.hidden = _hidden_size(config)\n"
        "        _shared(config)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return _shared(x)\n"
    ),
    # 9c9bc9aa45e86d54: the expert load balancer moves experts while serving, through a
    # communicator whose `execute` is called from the rebalancing code, not from start-up.
    "vllm/distributed/eplb/eplb_communicator.py": (
        "class NixlLikeCommunicator:\n"
        "    def __init__(self, agent):\n"
        "        if agent is None:\n"
        "            raise RuntimeError('NIXL agent could not be created')\n"
        "\n"
        "    def _wait_for_all_transfers(self, handles):\n"
        "        for state in handles:\n"
        "            if state != 'PROC':\n"
        "                raise RuntimeError(f'NIXL transfer failed with state={state}')\n"
        "\n"
        "    def execute(self):\n"
        "        self._wait_for_all_transfers([])\n"
    ),
    "vllm/distributed/eplb/rebalance_execute.py": (
        "def rearrange_expert_weights_inplace(communicator):\n    communicator.execute()\n"
    ),
    "vllm/distributed/eplb/eplb_state.py": (
        "class EplbLikeState:\n"
        "    def add_model(self, model):\n"
        "        if model.num_experts < 1:\n"
        "            raise ValueError('EPLB needs a model with experts')\n"
        "\n"
        "    def rearrange(self, communicator):\n"
        "        rearrange_expert_weights_inplace(communicator)\n"
    ),
    # A module of no stage: the helper it holds is dated by the code that runs it.
    "vllm/utils/helpers.py": (
        "def positive(name, value):\n"
        "    if value <= 0:\n"
        "        raise ValueError(f'{name} must be positive')\n"
    ),
    # A CLI subcommand checks its arguments, then runs a whole program (here a snapshot's
    # restore): what it runs is not argument parsing.
    "vllm/entrypoints/cli/snapshot.py": (
        "class SnapshotSubcommand:\n"
        "    def cmd(self, args):\n"
        "        if args.timeout < 0:\n"
        "            raise ValueError('--timeout must not be negative')\n"
        "        restore_snapshot(args.path)\n"
    ),
    "vllm/snapshot/runtime.py": (
        "def restore_snapshot(path):\n"
        "    if not path:\n"
        "        raise RuntimeError(f'snapshot restore failed for {path}')\n"
    ),
    "vllm/config/toy.py": (
        "class ToyConfig:\n    def __post_init__(self):\n        positive('x', 1)\n"
    ),
}


def test_vllm_sites_are_staged_by_what_runs_them(tmp_path):
    found = _scan(tmp_path, VLLM_TREE, VllmKnowledge())
    # A model file's helper: per request when only a processor runs it (it was model loading,
    # by the model folder's path) ...
    assert found["Invalid h_bar={height}: below min_pixels ({min_pixels})"]["stage"] == (
        "request-handling"
    )
    # ... while the model is built when only its constructor does ...
    assert found["hidden_size {hidden_size} is not aligned"]["stage"] == "model-loading"
    # ... and none when the constructor and the forward pass both do.
    assert "stage" not in found["shared helper got nothing"]
    # The load balancer: set up at start-up; its transfers are not (no caller of them is).
    assert found["NIXL agent could not be created"]["stage"] == "engine-startup"
    assert found["EPLB needs a model with experts"]["stage"] == "engine-startup"
    assert "stage" not in found["NIXL transfer failed with state={state}"]
    assert found["{name} must be positive"]["stage"] == "config-validation"
    assert found["--timeout must not be negative"]["stage"] == "argument-parsing"
    assert "stage" not in found["snapshot restore failed for {path}"]


SGLANG_TREE = {
    # 55c0657edaf28713, 1ce453fdc62bb814: the scheduler's serving loop and what it runs.
    "python/sglang/srt/managers/scheduler.py": (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "\n"
        "class Scheduler:\n"
        "    def __init__(self, server_args):\n"
        "        self.init_memory_pool(server_args)\n"
        "\n"
        "    def init_memory_pool(self, server_args):\n"
        "        if server_args.mem_fraction_static <= 0:\n"
        "            raise ValueError('mem_fraction_static must be positive')\n"
        "\n"
        "    def event_loop_normal(self):\n"
        "        while True:\n"
        "            self.process_batch_result(None)\n"
        "\n"
        "    def process_batch_result(self, batch):\n"
        "        self.output_streamer.stream_output(batch)\n"
        "\n"
        "    def handle_generate_request(self, recv_req):\n"
        "        if recv_req.input_ids is None:\n"
        "            raise ValueError('a request without input ids')\n"
        "\n"
        "    def continue_generation(self, recv_req):\n"
        "        logger.info(f'[continue_generation] freed {recv_req.mb} MB')\n"
    ),
    "python/sglang/srt/managers/output_streamer.py": (
        "class OutputStreamer:\n"
        "    def stream_output(self, reqs):\n"
        "        for req in reqs:\n"
        "            self._maybe_log_time_stats(req)\n"
        "\n"
        "    def _maybe_log_time_stats(self, req):\n"
        "        req.log_time_stats()\n"
    ),
    "python/sglang/srt/managers/schedule_batch.py": (
        "class Req:\n    def log_time_stats(self):\n        self.time_stats.convert_to_duration()\n"
    ),
    "python/sglang/srt/observability/req_time_stats.py": (
        "class SchedulerReqTimeStats:\n"
        "    def convert_to_duration(self):\n"
        "        queue = self.forward_entry_time - self.wait_queue_entry_time\n"
        "        assert queue >= 0, f'queue_duration={queue} < 0'\n"
    ),
    # 88ef5b7be5e8e2aa: the decode side's transfer queue, polled from its event loop.
    "python/sglang/srt/disaggregation/decode.py": (
        "class DecodeTransferQueue:\n"
        "    def __init__(self, sampling_mask_buffer):\n"
        "        if sampling_mask_buffer is None:\n"
        "            raise ValueError('decode transfer queue needs a metadata buffer')\n"
        "\n"
        "    def _commit_transfer_to_req(self, decode_req):\n"
        "        assert self.sampling_mask_buffer, 'sampling mask buffer disabled on decode side'\n"
        "\n"
        "    def pop_transferred(self):\n"
        "        self._commit_transfer_to_req(None)\n"
        "\n"
        "class SchedulerDisaggregationDecodeMixin:\n"
        "    def event_loop_normal_disagg_decode(self):\n"
        "        self.process_decode_queue()\n"
        "\n"
        "    def process_decode_queue(self):\n"
        "        self.disagg_decode_transfer_queue.pop_transferred()\n"
    ),
    # 7cced352f3880d9e: a diffusion package's manifest, checked while the server arguments
    # are validated (its module also holds what runs per request).
    "python/sglang/multimodal_gen/runtime/pipelines/flux_like_package.py": (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "\n"
        "def _validate_manifest(path, config):\n"
        "    if config.model != path.model:\n"
        "        logger.warning(f'{path}: manifest model {path.model} differs')\n"
        "\n"
        "def resolve_flux_like_package(source):\n"
        "    _validate_manifest(source, source.config)\n"
        "\n"
        "def load_flux_like_weights(path):\n"
        "    if not path:\n"
        "        raise FileNotFoundError(f'no weights at {path}')\n"
    ),
    "python/sglang/multimodal_gen/configs/pipeline_configs/flux_like.py": (
        "class FluxLikeConfig:\n"
        "    def validate_server_args(self, server_args):\n"
        "        resolve_flux_like_package(server_args.model_path)\n"
    ),
}


def test_sglang_sites_are_staged_by_what_runs_them(tmp_path):
    found = _scan(tmp_path, SGLANG_TREE, SglangKnowledge(root="python/"))
    # The scheduler builds itself at start-up and serves from its event loop (all of managers/
    # was start-up, by path).
    assert found["mem_fraction_static must be positive"]["stage"] == "engine-startup"
    assert found["a request without input ids"]["stage"] == "request-handling"
    # Three calls up from a request's statistics, the serving loop's output streaming.
    assert found["queue_duration={queue} < 0"]["stage"] == "request-handling"
    # A handler the scheduler registers in a table, not a call: no caller seen, so no stage
    # rather than the module's (it was start-up).
    assert "stage" not in found["[continue_generation] freed {mb} MB"]
    assert found["decode transfer queue needs a metadata buffer"]["stage"] == "engine-startup"
    assert found["sampling mask buffer disabled on decode side"]["stage"] == "request-handling"
    # A pipeline module: its manifest check runs under the config's validation (it was
    # request handling, by path); its loaders while the model loads.
    assert found["{path}: manifest model {model} differs"]["stage"] == "config-validation"
    assert found["no weights at {path}"]["stage"] == "model-loading"


def test_callers_that_disagree_leave_the_stage_out():
    """Two thirds of the callers used to carry the vote; now any disagreement among the dated
    code that runs a function leaves its stage out."""

    class Site:
        def __init__(self, path, function):
            self.path, self.function, self.derived = path, function, {}

    vllm = VllmKnowledge()
    helper = Site("vllm/utils/helpers.py", "check_size")
    agreed = Site("vllm/utils/helpers.py", "check_name")
    calls = {
        ("vllm/config/a.py", "A.__post_init__"): {"check_size", "check_name"},
        ("vllm/config/b.py", "B.__post_init__"): {"check_size", "check_name"},
        ("vllm/entrypoints/openai/serving.py", "create_completion"): {"check_size"},
        ("vllm/utils/other.py", "unknown"): {"check_name"},  # a caller of no stage: no vote
    }
    explain.stages_from_callers([helper, agreed], calls, vllm)
    assert "stage" not in helper.derived
    assert agreed.derived["stage"] == "config-validation"


def test_modules_that_start_up_and_serve_are_dated_by_name_not_path():
    sgl, vllm = SglangKnowledge(root="python/"), VllmKnowledge()
    scheduler = "python/sglang/srt/managers/scheduler.py"
    assert sgl.stage(scheduler, "Scheduler.__init__") == "engine-startup"
    assert sgl.stage(scheduler, "Scheduler.init_disaggregation") == "engine-startup"
    assert sgl.stage(scheduler, "Scheduler.event_loop_overlap") == "request-handling"
    assert sgl.stage(scheduler, "Scheduler.handle_generate_request") == "request-handling"
    assert sgl.stage(scheduler, "Scheduler.continue_generation") is None
    decode = "python/sglang/srt/disaggregation/decode.py"
    assert sgl.stage(decode, "DecodeTransferQueue._commit_transfer_to_req") is None
    # 90f6c2b72903d0e6: the scheduler's idle self-check of its pools runs while serving.
    assert sgl.stage(scheduler, "Scheduler.check_memory") == "request-handling"
    assert sgl.stage(scheduler, "Scheduler.self_check_during_idle") == "request-handling"
    assert sgl.stage(scheduler, "Scheduler.check_memory_pool_size") is None  # a look-alike
    # 3604705147635836: the chat templates are loaded once, while the server starts.
    for templates in ("parser", "managers"):
        path = f"python/sglang/srt/{templates}/template_manager.py"
        assert sgl.stage(path, "TemplateManager._load_explicit_chat_template") == ("engine-startup")
    assert sgl.stage("python/sglang/srt/parser/reasoning_parser.py", "f") == "request-handling"
    # What stays dated by its path.
    tokenizer = "python/sglang/srt/managers/tokenizer_manager.py"
    assert sgl.stage(tokenizer, "TokenizerManager.generate_request") == "request-handling"
    core = "python/sglang/multimodal_gen/runtime/pipelines_core/stages/denoising.py"
    assert sgl.stage(core, "DenoisingStage.forward") == "request-handling"
    eplb = "vllm/distributed/eplb/eplb_state.py"
    assert vllm.stage(eplb, "EplbState.rearrange") is None
    assert vllm.stage(eplb, "EplbState.add_model") == "engine-startup"
    assert vllm.stage("vllm/distributed/parallel_state.py", "init_model_parallel_group") == (
        "engine-startup"
    )
    # 36334d43f48eb950: before vllm/config/, the config classes lived in vllm/config.py
    # (CacheConfig.verify_with_parallel_config runs while the engine's config is checked).
    assert vllm.stage("vllm/config.py", "CacheConfig.verify_with_parallel_config") == (
        "config-validation"
    )
    assert vllm.stage("vllm/config_utils.py", "f") != "config-validation"  # a look-alike
    # a4755347a0c96712: a V0 model runner prepares a scheduled prompt for each step.
    hpu = "vllm/worker/hpu_model_runner.py"
    assert vllm.stage(hpu, "HPUModelRunnerBase._prepare_prompt") == "request-handling"
    assert vllm.stage(hpu, "HPUModelRunnerBase._prepare_prompt_helper") is None  # look-alike
    model = "vllm/model_executor/models/ernie45_vl.py"
    assert vllm.stage(model, "smart_resize") is None
    assert vllm.stage(model, "Ernie4_5_VLForConditionalGeneration.load_weights") == (
        "model-loading"
    )


def test_a_range_test_is_a_limit_whatever_the_message_calls_the_value():
    """59699d7b4cc38020: "Invalid h_bar ...: must be >= min_pixels and <= max_pixels" was an
    invalid choice by its word "Invalid"; its test is a range. A membership test stays a
    choice."""
    code = (
        "def smart_resize(h_bar, w_bar, min_pixels, max_pixels):\n"
        "    if min_pixels > h_bar * w_bar or h_bar * w_bar > max_pixels:\n"
        "        raise ValueError(f'Invalid h_bar={h_bar}: must be >= min_pixels ({min_pixels})')\n"
        "def pick(mode):\n"
        "    if mode not in ('a', 'b'):\n"
        "        raise ValueError(f'Invalid mode {mode}')\n"
        "def named(mode):\n"
        "    if not mode:\n"
        "        raise ValueError('Invalid empty mode')\n"
    )
    scan = ex.scan_file("m.py", code.encode(), knowledge=explain.Knowledge())
    resize, pick, named = (site.derived or {} for site in scan.sites)
    assert resize["category"] == "limit"
    assert pick["category"] == "invalid-choice"
    assert named["category"] == "invalid-choice"  # no range, no list: the word decides


def test_workers_caches_platform_checks_and_model_helpers_are_dated_by_what_runs_them():
    """Sample 4242 (tests/fixtures/stage-sample-4242.jsonl): a worker's per-request method, a
    KV cache's per-request load, a platform's config check, a sampling dataclass's reading of
    the command line and a VAE's helper were dated by their folders."""
    sgl, vllm = SglangKnowledge(root="python/"), VllmKnowledge()
    runner = "vllm/v1/worker/gpu_model_runner.py"
    assert vllm.stage(runner, "GPUModelRunner._update_states") == "request-handling"
    assert vllm.stage(runner, "GPUModelRunner.profile_run") == "engine-startup"
    assert vllm.stage(runner, "GPUModelRunner._init_mrope_positions") is None  # by its callers
    rocm = "vllm/platforms/rocm.py"
    assert vllm.stage(rocm, "RocmPlatform.check_and_update_config") == "config-validation"
    assert vllm.stage(rocm, "RocmPlatform.get_attn_backend_cls") == "kernel-selection"
    model = "vllm/model_executor/models/toy.py"
    assert vllm.stage(model, "ToyForCausalLM._validate_pixel_values") is None
    umbp = "python/sglang/srt/mem_cache/storage/umbp/umbp_direct_linker.py"
    assert sgl.stage(umbp, "UMBPDirectLinker._build_load_plans") is None  # by its callers
    assert sgl.stage(umbp, "UMBPDirectLinker.__init__") == "engine-startup"
    params = "python/sglang/multimodal_gen/configs/sample/sampling_params.py"
    assert sgl.stage(params, "SamplingParams.get_cli_args") == "argument-parsing"
    vae = "python/sglang/multimodal_gen/runtime/models/vaes/minimax_h3_video_vae/batching.py"
    assert sgl.stage(vae, "decode_windows") is None

    class Site:
        def __init__(self, path, function):
            self.path, self.function, self.derived = path, function, {}

    mrope = Site(runner, "GPUModelRunner._init_mrope_positions")
    plans = Site(umbp, "UMBPDirectLinker._build_load_plans")
    calls = {
        (runner, "GPUModelRunner._update_states"): {"_init_mrope_positions"},
        (umbp, "UMBPDirectLinker.start_layer_wise_loading"): {"_build_load_plans"},
        ("python/sglang/srt/managers/scheduler.py", "Scheduler.run_batch"): {
            "start_layer_wise_loading"
        },
    }
    explain.stages_from_callers([mrope, plans], calls, vllm)
    assert mrope.derived["stage"] == "request-handling"
    explain.stages_from_callers([plans], calls, sgl)
    assert plans.derived["stage"] == "request-handling"


def test_attention_backends_and_engine_loops():
    """Sample 9191 (tests/fixtures/stage-sample-9191.jsonl, 2 of 40 wrong): an attention
    backend's kernel dispatcher was dated model loading by its constructor, the DP
    coordinator's loop start-up by its folder."""
    sgl, vllm = SglangKnowledge(root="python/"), VllmKnowledge()
    kda = "python/sglang/srt/layers/attention/linear/kda_backend.py"
    assert sgl.stage(kda, "KDAKernelDispatcher.__init__") == "kernel-selection"
    assert sgl.stage(kda, "KDAAttnBackend.__init__") == "kernel-selection"
    radix = "python/sglang/srt/layers/radix_attention.py"
    assert sgl.stage(radix, "RadixAttention.__init__") == "model-loading"  # a model's layer
    coordinator = "vllm/v1/engine/coordinator.py"
    assert vllm.stage(coordinator, "DPCoordinatorProc.process_input_socket") is None
    core = "vllm/v1/engine/core.py"
    assert vllm.stage(core, "EngineCore.step") == "request-handling"
    assert vllm.stage(core, "EngineCore.__init__") == "engine-startup"


def test_a_process_run_from_start_up_to_shutdown_dates_none_of_its_loop():
    """The DP coordinator's `run_coordinator` builds it, then runs its loop until shutdown:
    the loop it calls is not start-up code because its caller starts up."""

    class Site:
        def __init__(self, path, function):
            self.path, self.function, self.derived = path, function, {}

    coordinator = "vllm/v1/engine/coordinator.py"
    loop = Site(coordinator, "DPCoordinatorProc.process_input_socket")
    calls = {(coordinator, "DPCoordinatorProc.run_coordinator"): {"process_input_socket"}}
    explain.stages_from_callers([loop], calls, VllmKnowledge())
    assert "stage" not in loop.derived


def test_the_v0_engine_s_layout_is_dated_by_name():
    """Removed records of vLLM's V0 layout (0.10 and older; audit of issue 40, round 14):
    initialize_ray_cluster (530eaf6a9aa9d740) and the engine's construction ran at start-up,
    LLMEngine._verify_args checks configs, the engine's steps and the executor's monitors and
    model runs serve. Look-alikes: EngineArgs' checks stay argument parsing, a model runner's
    per-step input builder is built every step, what an executor runs at both stages
    (`_run_workers`) is left to its callers, and V1's modules keep their stages."""
    vllm = VllmKnowledge()
    engine, executor = "vllm/engine/llm_engine.py", "vllm/executor/ray_gpu_executor.py"
    assert vllm.stage("vllm/executor/ray_utils.py", "initialize_ray_cluster") == "engine-startup"
    assert vllm.stage(engine, "LLMEngine.__init__") == "engine-startup"
    assert vllm.stage(engine, "LLMEngine._verify_args") == "config-validation"
    assert vllm.stage(engine, "LLMEngine.step") == "request-handling"
    assert vllm.stage(engine, "LLMEngine.add_request") == "request-handling"
    asynchronous = "vllm/engine/async_llm_engine.py"
    assert vllm.stage(asynchronous, "AsyncLLMEngine.from_engine_args") == "engine-startup"
    assert vllm.stage(asynchronous, "AsyncLLMEngine._get_executor_cls") == "engine-startup"
    assert vllm.stage(executor, "RayGPUExecutor._init_workers_ray") == "engine-startup"
    assert vllm.stage(executor, "RayGPUExecutor._check_if_any_actor_is_dead") == (
        "request-handling"
    )
    assert vllm.stage(executor, "RayGPUExecutor.execute_model") == "request-handling"
    monitor = "vllm/executor/multiproc_worker_utils.py"
    assert vllm.stage(monitor, "WorkerMonitor.run") == "request-handling"
    assert vllm.stage("vllm/worker/worker.py", "Worker._init_cache_engine") == "engine-startup"
    assert vllm.stage("vllm/core/scheduler.py", "Scheduler._schedule_prefills") == (
        "request-handling"
    )
    assert vllm.stage("vllm/core/block_manager_v1.py", "BlockSpaceManagerV1.__init__") == (
        "engine-startup"
    )
    api = "vllm/entrypoints/openai/api_server.py"
    assert vllm.stage(api, "build_async_engine_client_from_engine_args") == "engine-startup"
    # look-alikes
    assert vllm.stage("vllm/engine/arg_utils.py", "EngineArgs.__post_init__") == (
        "argument-parsing"
    )
    assert vllm.stage("vllm/worker/model_runner.py", "ModelInputForGPUBuilder.__init__") is None
    assert vllm.stage(executor, "RayGPUExecutor._run_workers") is None
    block = "vllm/core/block/prefix_caching_block.py"
    assert vllm.stage(block, "PrefixCachingBlock.__init__") == "request-handling"
    assert vllm.stage("vllm/v1/engine/core.py", "EngineCore.step") == "request-handling"
    assert vllm.stage("vllm/v1/worker/gpu_worker.py", "Worker.__init__") == "engine-startup"


def test_the_server_s_serving_classes_are_built_at_start_up():
    """7dcd65ffdbcd072f (vLLM 0.4.3): OpenAIServingChat._load_chat_template runs from the
    class's constructor, which the server's `__main__` block calls while the app is built
    (26d9cf78f9034624: 0.7.3's constructor logs the model's default sampling params).
    Look-alikes: the serving class's per-request method, and a CLI subcommand's."""
    vllm = VllmKnowledge()
    chat = "vllm/entrypoints/openai/serving_chat.py"
    assert vllm.stage(chat, "OpenAIServingChat._load_chat_template") == "engine-startup"
    assert vllm.stage(chat, "OpenAIServingChat.__init__") == "engine-startup"
    assert vllm.stage(chat, "OpenAIServingChat.create_chat_completion") == "request-handling"
    bench = "vllm/entrypoints/cli/benchmark/serve.py"
    assert vllm.stage(bench, "BenchmarkServingSubcommand.__init__") == "argument-parsing"


def test_sglang_s_old_layouts_are_dated():
    """Removed SGLang records of 0.1 to 0.4 (issue 40, round 14 draw): the MoE kernels before
    layers/moe/ (d01cedc7734cbc8c: fused_moe's expert count check), the old OpenAI adapter,
    server module and mini load balancer (d52aa6f5adb763b9: select_pair routes each request),
    the controllers' loops and the scheduler's per-step stats (87781d04441f5f2d). Look-alikes:
    a MoE layer's weight loader still loads the model, the adapter's template loads at
    start-up, the balancer is built at start-up, and the old server's routes are left to
    their callers."""
    sgl = SglangKnowledge(root="python/")
    srt = "python/sglang/srt/"
    assert sgl.stage(srt + "layers/fused_moe_triton/fused_moe.py", "fused_moe") == (
        "kernel-selection"
    )
    adapter = srt + "openai_api/adapter.py"
    assert sgl.stage(adapter, "v1_chat_completions") == "request-handling"
    lb = srt + "disaggregation/mini_lb.py"
    assert sgl.stage(lb, "MiniLoadBalancer.select_pair") == "request-handling"
    assert sgl.stage(srt + "disaggregation/launch_lb.py", "LBArgs.__post_init__") == (
        "argument-parsing"
    )
    assert sgl.stage(srt + "server.py", "launch_server") == "engine-startup"
    multi = srt + "managers/controller_multi.py"
    assert sgl.stage(multi, "ControllerMulti.recv_requests") == "request-handling"
    assert sgl.stage(multi, "start_controller_process") == "engine-startup"
    mixin = srt + "managers/scheduler_metrics_mixin.py"
    assert sgl.stage(mixin, "SchedulerMetricsMixin.log_decode_stats") == "request-handling"
    # look-alikes
    assert sgl.stage(srt + "layers/fused_moe/layer.py", "FusedMoE.weight_loader") == (
        "model-loading"
    )
    assert sgl.stage(adapter, "load_chat_template_for_openai_api") == "engine-startup"
    assert sgl.stage(lb, "MiniLoadBalancer.__init__") == "engine-startup"
    assert sgl.stage(srt + "server.py", "generate_request") is None

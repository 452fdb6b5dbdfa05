"""Issue 40, round 9: the rules the adjudication of the blind sample derived-truth-7306 fixed
(tests/fixtures/derived-truth-7306-adjudicated.jsonl), each on a made-up site shaped like the
release's code, with a look-alike that must not move, read against the definitions in
errorkb.content.derived."""

from errorkb.projects.sglang.knowledge import SglangKnowledge
from errorkb.projects.vllm.knowledge import VllmKnowledge
from tests.conftest import derived_of

# Categories ----------------------------------------------------------------------------


def test_a_status_an_operation_returned_is_a_runtime_failure():
    """e1c8fa0dc19ed9af: `ret = engine.batch_transfer_sync_write(...)`, `if ret != 0:` with
    "push ... failed with status {ret}": the transfer failed as it ran, not a value outside a
    set. Not a setting compared with a literal, nor a status the message does not call a
    failure."""
    code = (
        "def write(engine, session, mode, ret2):\n"
        "    ret = engine.batch_transfer_sync_write(session)\n"
        "    if ret != 0:\n"
        "        raise RuntimeError(f'Mooncake EC push to {session} failed with status {ret}')\n"
        "    status = engine.flush()\n"
        "    if status != cuda.CUresult.CUDA_SUCCESS:\n"
        "        raise RuntimeError(f'cuTensorMapEncodeTiled failed: {status}')\n"
        "    if mode != 0:\n"
        "        raise ValueError(f'mode {mode} failed: only 0 is accepted')\n"
        "    if ret2 != 3:\n"
        "        raise ValueError(f'unexpected code {ret2}')\n"
    )
    found = derived_of(code)
    assert found["Mooncake EC push to {session} failed with status {ret}"]["category"] == (
        "runtime-failure"
    )
    assert found["cuTensorMapEncodeTiled failed: {status}"]["category"] == "runtime-failure"
    assert found["mode {mode} failed: only 0 is accepted"]["category"] == "invalid-choice"
    assert found["unexpected code {ret2}"]["category"] == "invalid-choice"


def test_code_that_should_be_unreachable_is_an_invariant_a_peer_is_not():
    """325947cc33fd2306: "Should be unreachable - `return params` above must be reached": the
    code's own guarantee, not a peer out of reach ("unreachable" said a runtime failure)."""
    code = (
        "def compute(params, peer, ok):\n"
        "    for _ in range(10):\n"
        "        if ok:\n"
        "            return params\n"
        "    raise ValueError(f'Should be unreachable - return above must be reached: {params}')\n"
        "\n"
        "def ping(peer, up):\n"
        "    if not up:\n"
        "        raise RuntimeError(f'Peer {peer} is unreachable')\n"
    )
    found = derived_of(code)
    unreachable = "Should be unreachable - return above must be reached: {params}"
    assert found[unreachable]["category"] == "invariant"
    assert found["Peer {peer} is unreachable"]["category"] == "runtime-failure"


def test_a_message_that_asks_to_run_a_step_first_is_an_order_of_calls():
    """e9584ff9f0ee355e: "cond-frame latent missing (run the encode stage first)": the stage
    before it always sets the latent, an order of the pipeline's own calls (invariant), not a
    file or key the user left out. Without the order, "missing" still says not found."""
    code = (
        "def forward(batch):\n"
        "    latent = batch.image_latent\n"
        "    if latent is None:\n"
        "        raise ValueError('cond-frame latent missing (run the encode stage first)')\n"
        "    if batch.mask is None:\n"
        "        raise ValueError('mask file missing')\n"
    )
    found = derived_of(code)
    assert found["cond-frame latent missing (run the encode stage first)"]["category"] == (
        "invariant"
    )
    assert found["mask file missing"]["category"] == "not-found"


def test_not_supported_for_now_is_not_implemented_yet():
    """5de963d860478be8: "Model architectures {a} are not supported for now": the authors mark
    a path not written yet (not-implemented), and "for now" names no second thing, so no
    combination. "not supported with" still pairs two things."""
    code = (
        "def check(architectures, supported, tp, pp):\n"
        "    if not any(a in supported for a in architectures):\n"
        "        raise ValueError(f'Model architectures {architectures} are not supported for"
        " now.')\n"
        "    if tp > 1 and pp > 1:\n"
        "        raise ValueError('Pipeline parallel is not supported with tensor parallel')\n"
    )
    found = derived_of(code)
    assert found["Model architectures {architectures} are not supported for now."]["category"] == (
        "not-implemented"
    )
    assert found["Pipeline parallel is not supported with tensor parallel"]["category"] == (
        "unsupported-combination"
    )


def test_an_info_line_that_names_a_shape_reports_it():
    """5642ff4da0a90679: INFO "mm_item[{i}] feature shape: {feature_shape}": the noun a line
    prints a value by, nothing disagrees (logged). A warning that loads a tensor of one shape
    into a parameter of another still says a mismatch."""
    code = (
        "def process(items, a, b, key):\n"
        "    for i, item in enumerate(items):\n"
        "        if item.feature is not None:\n"
        "            logger.info('mm_item[%s] feature shape: %s', i, item.feature.shape)\n"
        "    logger.warning('loading tensor of shape %s into parameter %s of shape %s',\n"
        "                   a, key, b)\n"
    )
    found = derived_of(code)
    shape = next(t for t in found if t.startswith("mm_item"))
    assert found[shape]["category"] == "logged"
    loading = next(t for t in found if t.startswith("loading tensor"))
    assert found[loading]["category"] == "mismatch"


def test_a_line_that_says_no_such_thing_for_a_missed_look_up_is_not_found():
    """9f1abb169af87c82: `session = self._sessions.get(peer_id)`, `if session is None:`
    warning "NO SESSION for peer={peer_id}" (the job then fails): the look-up missed. Not a
    line that finds a collection empty ("No KV caches to offload")."""
    code = (
        "class Manager:\n"
        "    def submit_load(self, peer_id, kv_caches):\n"
        "        if not kv_caches:\n"
        "            logger.warning('No KV caches to offload.')\n"
        "            return\n"
        "        session = self._sessions.get(peer_id)\n"
        "        if session is None:\n"
        "            logger.warning('submit_load NO SESSION for peer=%s', peer_id)\n"
        "            return\n"
    )
    found = derived_of(code)
    assert found["submit_load NO SESSION for peer={peer_id}"]["category"] == "not-found"
    assert found["No KV caches to offload."]["category"] == "logged"


def test_an_error_line_of_a_background_worker_that_failed_is_a_runtime_failure():
    """80c79a105264cab7: `except BaseException:` in the background thread's loop, then
    logger.exception("RDT background post-processing failed"): an operation failed as it
    ran. A parser's failure on a value caught the same way is still logged."""
    code = (
        "class Engine:\n"
        "    def _proc_worker_loop(self, q, text):\n"
        "        while True:\n"
        "            item = q.get()\n"
        "            try:\n"
        "                self._process_item(item)\n"
        "            except BaseException as e:\n"
        "                logger.exception('RDT background post-processing failed')\n"
        "            try:\n"
        "                parse(text)\n"
        "            except Exception:\n"
        "                logger.exception('Failed to parse the tool call')\n"
    )
    found = derived_of(code)
    assert found["RDT background post-processing failed"]["category"] == "runtime-failure"
    assert found["Failed to parse the tool call"]["category"] == "logged"


def test_a_dtype_said_and_another_found_is_a_mismatch():
    """dcba137e181cda4f: "{path}: matrices must be NVFP4 or BF16, got {other_matrices}" for
    a list of the checkpoint's other tensors: a dtype the loader takes, another found. A
    setting's value that must be one of some names is still a choice."""
    code = (
        "def build(path, other_matrices, mode):\n"
        "    if other_matrices:\n"
        "        raise ValueError(\n"
        "            f'{path}: matrices must be NVFP4 or BF16, got {other_matrices}'\n"
        "        )\n"
        "    if mode not in ('a', 'b'):\n"
        "        raise ValueError(f'mode must be a or b, got {mode}')\n"
    )
    found = derived_of(code)
    assert found["{path}: matrices must be NVFP4 or BF16, got {other_matrices}"]["category"] == (
        "mismatch"
    )
    assert found["mode must be a or b, got {mode}"]["category"] == "invalid-choice"


def test_only_one_type_supported_tested_as_a_type_is_a_mismatch():
    """039ea3c4619a7d5d: "Only support per-tensor scaling factor for fp8 KV cache" for `not
    isinstance(k_scale, float)`: the checkpoint's scales are not of the type the code takes.
    "only supports" tested against a list of values is still a choice."""
    code = (
        "def process(k_scale, v_scale, backend):\n"
        "    if not isinstance(k_scale, float) or not isinstance(v_scale, float):\n"
        "        raise ValueError('Only support per-tensor scaling factor for fp8 KV cache')\n"
        "    if backend not in ('flash', 'triton'):\n"
        "        raise ValueError(f'This kernel only supports flash and triton, not {backend}')\n"
    )
    found = derived_of(code)
    assert found["Only support per-tensor scaling factor for fp8 KV cache"]["category"] == (
        "mismatch"
    )
    only = "This kernel only supports flash and triton, not {backend}"
    assert found[only]["category"] == "invalid-choice"


# Stages ------------------------------------------------------------------------------


def test_a_kernel_s_warm_up_checks_what_it_supports():
    """0126fc362419fa91: a CuTe DSL kernel's warmup_inputs (models/*/ops/) refuses a rope
    head dim it has no path for: a kernel checked against what it supports (kernel
    selection), not the start-up's warm-up as such. A warm-up outside ops/ keeps start-up."""
    k = VllmKnowledge()
    ops = "vllm/models/deepseek_v4/nvidia/ops/sparse_attn_compress_cutedsl.py"
    assert k.stage(ops, "SparseAttnNormRopeStoreKernel.warmup_inputs") == "kernel-selection"
    runner = "vllm/model_executor/models/llama.py"
    assert k.stage(runner, "LlamaForCausalLM.warmup") == "engine-startup"


def test_an_all_reduce_backend_s_constructor_checks_what_it_supports():
    """5ba4eb7ea690d716: FlashInferPcieIpcAllReduce.__init__ disables itself for a world size
    it does not support: an all-reduce backend checked (kernel selection), in vLLM and SGLang.
    Its graph buffers' registration keeps start-up."""
    k = VllmKnowledge()
    ar = "vllm/distributed/device_communicators/flashinfer_pcie_ipc_all_reduce.py"
    assert k.stage(ar, "FlashInferPcieIpcAllReduce.__init__") == "kernel-selection"
    custom = "vllm/distributed/device_communicators/custom_all_reduce.py"
    assert k.stage(custom, "CustomAllreduce.register_graph_buffers") == "engine-startup"
    assert k.stage("vllm/distributed/device_communicators/pynccl.py", "X.__init__") == (
        "engine-startup"
    )
    s = SglangKnowledge()
    quick = "sglang/srt/distributed/device_communicators/quick_all_reduce.py"
    assert s.stage(quick, "QuickAllReduce.__init__") == "kernel-selection"


def test_a_custom_op_s_platform_path_is_kernel_selection():
    """5ccfbf0f94b92e13: QuantFP8.forward_cuda asserts its caller passed no scale: a kernel
    op's own check of its arguments on one platform's path. A layer's plain forward keeps
    the start-up's profiling run."""
    k = VllmKnowledge()
    quant = "vllm/model_executor/layers/quantization/input_quant_fp8.py"
    assert k.stage(quant, "QuantFP8.forward_cuda") == "kernel-selection"
    assert k.stage("vllm/model_executor/layers/layernorm.py", "RMSNorm.forward_native") == (
        "kernel-selection"
    )
    assert k.stage(quant, "QuantFP8.forward") == "engine-startup"


def test_a_lora_adapter_is_read_when_it_is_loaded_while_serving():
    """981d99c987c1b134: PEFTHelper checks an adapter's config when the adapter is loaded for
    a request (or into a running server), not while the model is built; the LoRA manager's
    construction and the LoRA layers keep model loading."""
    k = VllmKnowledge()
    assert k.stage("vllm/lora/peft_helper.py", "PEFTHelper.__post_init__") == ("request-handling")
    manager = "vllm/lora/worker_manager.py"
    assert k.stage(manager, "WorkerLoRAManager._load_adapter") == "request-handling"
    assert k.stage(manager, "WorkerLoRAManager.__init__") == "model-loading"
    assert k.stage("vllm/lora/model_manager.py", "LoRAModelManager.__init__") == "model-loading"


def test_the_registry_s_inspection_runs_in_the_model_config_and_sleep_while_serving():
    """5de963d860478be8, 25d045fe664a4c85, 8e6009db059d6270: the model registry refuses an
    architecture while ModelConfig is validated; the API server's endpoint plug-ins load
    while its app is built; the allocator discards memory when a running server is asked to.
    The registry's other functions still leave it to their callers."""
    k = VllmKnowledge()
    registry = "vllm/model_executor/models/registry.py"
    assert k.stage(registry, "_ModelRegistry._raise_for_unsupported") == "config-validation"
    assert k.stage(registry, "_LazyRegisteredModel._save_modelinfo_to_cache") is None
    assert k.stage("vllm/plugins/__init__.py", "load_endpoint_plugins") == "engine-startup"
    assert k.stage("vllm/plugins/__init__.py", "load_general_plugins") is None
    assert k.stage("vllm/device_allocator/xpumem.py", "XpuMemAllocator.discard") == (
        "request-handling"
    )
    assert k.stage("vllm/device_allocator/xpumem.py", "XpuMemAllocator.get_instance") is None


def test_a_jit_kernel_s_build_is_compilation_at_start_up():
    """cc6fe3411ff92403: the JIT build's converter, compiler and headers are found when a
    kernel is first built (warm-up, graph capture): start-up's compilation. A JIT kernel's
    own checks keep kernel selection."""
    s = SglangKnowledge()
    assert s.stage("sglang/kernels/jit/utils/compile/sailify.py", "convert_cuda_sources") == (
        "engine-startup"
    )
    assert s.stage("sglang/kernels/jit/utils/deps.py", "get_cutlass_include_paths") == (
        "engine-startup"
    )
    assert s.stage("sglang/kernels/jit/utils/helion_runtime.py", "run_pinned_helion") == (
        "kernel-selection"
    )


# Flags ---------------------------------------------------------------------------------


def test_an_sglang_model_config_class_checks_its_own_config_json_keys():
    """8b96ef009a7234c7: HYV4Config._validate_hy_v4 tests `self.enable_ihc` and
    `self.hc_mult`, values its __init__ takes from config.json: model-config keys. Not
    `self.x` in a class that is no config class."""
    code = (
        "class HYV4Config(PretrainedConfig):\n"
        "    def __init__(self, enable_ihc=True, hc_mult=4, **kwargs):\n"
        "        self.enable_ihc = enable_ihc\n"
        "        self.hc_mult = hc_mult\n"
    )
    from errorkb.projects.sglang.knowledge import _config_classes, _config_keys

    tree = __import__("ast").parse(code)
    s = SglangKnowledge()
    s.config_keys = s.config_keys | _config_keys(tree)
    s.config_classes = _config_classes(tree)
    assert s.config_classes == frozenset({"HYV4Config"})
    hc = s.setting(("self", "hc_mult"), "HYV4Config")
    assert hc is not None and hc.kind == "model-config" and hc.key == "hc_mult"
    assert s.setting(("self", "hc_mult"), "Scheduler") is None


def test_a_local_that_takes_the_first_value_given_reads_each():
    """abce86113fc5fedd: `max_num_active_seqs = cfg.max_num_active_seqs or cfg.max_num_seqs`
    printed by the warning: either setting decides the value, so both are traced. A local
    that needs both (`a and b`) is no value of either."""
    code = (
        "import os\n"
        "def check(budget):\n"
        "    n = os.environ.get('APP_ACTIVE') or os.environ.get('APP_SEQS')\n"
        "    if budget < int(n):\n"
        "        logger.warning('Overriding the active count from %s', n)\n"
        "    m = os.environ.get('APP_A') and os.environ.get('APP_B')\n"
        "    if budget < 0:\n"
        "        raise ValueError(f'budget below zero with {m}')\n"
    )
    found = derived_of(code)
    envs = [f.get("env") for f in found["Overriding the active count from {n}"]["flags"]]
    assert envs == ["APP_ACTIVE", "APP_SEQS"]
    assert not found["budget below zero with {m}"].get("flags")


def test_only_one_type_tested_with_a_value_too_stays_a_choice():
    """Look-alikes of 039ea3c4619a7d5d: "only support weight-only INT quantization" for `not
    (isinstance(q, Args) and q.type == 'int')` refuses a scheme's values, and "only supports
    monolithic experts" for `not issubclass(cls, Monolithic)` a class the code chose: not a
    type mismatch."""
    code = (
        "def check(q, cls):\n"
        "    if not (isinstance(q, Args) and q.type == 'int'):\n"
        "        raise ValueError('embeddings only support weight-only INT quantization')\n"
        "    if not issubclass(cls, Monolithic):\n"
        "        raise ValueError('W4A8 MoE only supports monolithic experts')\n"
    )
    found = derived_of(code)
    assert found["embeddings only support weight-only INT quantization"]["category"] != "mismatch"
    assert found["W4A8 MoE only supports monolithic experts"]["category"] != "mismatch"

"""Issue 40, round 3: the rules behind the derived fields that sample B (derived-audit-7302)
and the writers found wrong, each on a made-up site shaped like the release's code: stages of
set-up code in modules that serve, categories of checks on the user's input, titles that kept
a dropped value's label, a request field's presence traced as its fix."""

from pathlib import Path

from errorkb.content import template
from errorkb.projects.sglang.knowledge import SglangKnowledge
from errorkb.projects.vllm.knowledge import VllmKnowledge
from errorkb.sources import explain
from errorkb.sources import extract as ex
from tests.conftest import derived_of


def _scan(root: Path, files: dict[str, str], knowledge: explain.Knowledge) -> dict[str, dict]:
    """Each site's derived block, by its message, in a tree of these files (with callers)."""
    for path, code in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code, encoding="utf-8")
    scan = ex.scan_tree(root, knowledge=lambda _files: knowledge, printed=True, jobs=1)
    return {site.template: site.derived or {} for site in scan.sites}


# Stages ------------------------------------------------------------------------------


def test_a_connector_s_registration_runs_at_start_up_a_weight_transfer_s_while_serving():
    """fc90a845ecaa6505 (UMBPRuntimeFactory.register): a KV connector's set-up, in kv_transfer/
    whose modules default to request handling. 0788467ecdf44aec
    (ShardedRDTWeightTransferEngine._preregister_at_init), labelled start-up by sample 7302:
    a trainer sets the weight-transfer engine up on a running server (POST
    /init_weight_transfer_engine -> Worker.init_weight_transfer_engine -> init_transfer_engine),
    as sample 7301 labelled parse_wire_params (c913f3ee874308e0): request handling."""
    k = VllmKnowledge()
    umbp = "vllm/distributed/kv_transfer/kv_connector/v1/umbp/runtime/factory.py"
    assert k.stage(umbp, "UMBPRuntimeFactory.register") == "engine-startup"
    rdt = "vllm/distributed/weight_transfer/sharded_rdt_engine.py"
    preregister = "ShardedRDTWeightTransferEngine._preregister_at_init"
    assert k.stage(rdt, preregister) == "request-handling"
    assert not k.by_default(rdt, "ShardedRDTWeightTransferEngine._resolve_producers")
    worker = "vllm/v1/worker/gpu_worker.py"
    assert k.stage(worker, "Worker.init_weight_transfer_engine") == "request-handling"
    assert k.stage(worker, "Worker.init_device") == "engine-startup"
    assert k.stage(umbp, "UMBPRuntime.lookup") == "request-handling"  # the default stays


def test_shutdown_has_no_stage_even_from_callers(tmp_path):
    """6ecfee4bf00fe22c: HF3FSKVConnector.close logs at shutdown, not per request."""
    k = VllmKnowledge()
    hf3fs = "vllm/distributed/kv_transfer/kv_connector/v1/hf3fs/hf3fs_connector.py"
    assert k.stage(hf3fs, "HF3FSKVConnector.close") is None
    assert k.undated(hf3fs, "HF3FSKVConnector.close")
    code = (
        "class C:\n"
        "    def close(self):\n"
        "        logger.info('clients closed')\n"
        "        _release(self)\n"
        "    def step(self):\n"
        "        self.close()\n"
        "\n"
        "class Other:\n"
        "    def __init__(self):\n"
        "        _release(self)\n"
    )
    helper = "def _release(x):\n    logger.warning('context unusable at teardown')\n"
    files = {"vllm/v1/executor/runtime_like.py": code, "vllm/v1/hisparse/pins.py": helper}
    found = _scan(tmp_path, files, k)
    assert "stage" not in found["clients closed"]
    # called at shutdown and at start-up: no stage, not start-up's
    assert "stage" not in found["context unusable at teardown"]


def test_a_module_default_gives_way_to_callers_of_one_other_stage(tmp_path):
    """e6e7a13c7c5e6ffe: a connector's layout helper called (through a private helper) only
    from register_kv_caches runs at start-up; 4d1edb5679346951: a serving class's IO processor
    is built by init_io_processor, at start-up; 597249c3fb7d568c: a layer's custom op called
    from its forward_cuda runs where that platform path runs (kernel selection), not while
    loading."""
    k = VllmKnowledge()
    layout = "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_layout.py"
    connector = "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py"
    io = "vllm/entrypoints/pooling/embed/io_processor.py"
    serving = "vllm/entrypoints/pooling/embed/serving.py"
    layer = "vllm/model_executor/layers/sparse_like.py"
    files = {
        layout: (
            "def get_layer_head_layout(shape, block_size):\n"
            "    if shape[0] != block_size:\n"
            "        raise ValueError(f'cannot slice {shape}')\n"
            "\n"
            "def shared_layout(x):\n"
            "    if x is None:\n"
            "        raise ValueError('no layout')\n"
        ),
        connector: (
            "class Worker:\n"
            "    def register_kv_caches(self, caches):\n"
            "        self._record_slice_layouts(caches)\n"
            "        shared_layout(caches)\n"
            "    def _record_slice_layouts(self, caches):\n"
            "        get_layer_head_layout(caches, 16)\n"
            "    def start_load_kv(self, ctx):\n"
            "        shared_layout(ctx)\n"
        ),
        io: (
            "class EmbedIOProcessor:\n"
            "    def __init__(self, prefixes):\n"
            "        if prefixes:\n"
            "            logger.info('Loaded prompt prefixes for %s', prefixes)\n"
            "    def pre_process(self, request):\n"
            "        if not request:\n"
            "            raise ValueError('empty request')\n"
        ),
        serving: (
            "class ServingEmbedding:\n"
            "    def init_io_processor(self, *args):\n"
            "        return EmbedIOProcessor(*args)\n"
        ),
        layer: (
            "def sparse_like_op(x, use_fp4):\n"
            "    assert not use_fp4, 'Unfused FP4 Insert is not supported yet'\n"
            "\n"
            "def sparse_both_op(x, use_fp4):\n"
            "    assert not use_fp4, 'Unfused FP4 Insert (both) is not supported yet'\n"
            "\n"
            "class SparseLike:\n"
            "    def forward_cuda(self, x):\n"
            "        torch.ops.vllm.sparse_both_op(x, False)\n"
            "        return torch.ops.vllm.sparse_like_op(x, False)\n"
            "\n"
            "    def forward(self, x):\n"
            "        return torch.ops.vllm.sparse_both_op(x, False)\n"
        ),
    }
    found = _scan(tmp_path, files, k)
    assert found["cannot slice {shape}"]["stage"] == "engine-startup"
    assert found["no layout"]["stage"] == "request-handling"  # callers disagree: the default
    assert found["Loaded prompt prefixes for {prefixes}"]["stage"] == "engine-startup"
    assert found["empty request"]["stage"] == "request-handling"  # no caller: the default
    # (its caller is a custom op's platform path: kernel selection since round 9)
    assert found["Unfused FP4 Insert is not supported yet"]["stage"] == "kernel-selection"
    # ... and called from the layer's forward too, the start-up's forward pass meets it first
    assert found["Unfused FP4 Insert (both) is not supported yet"]["stage"] == "engine-startup"
    assert k.stage(layer, "SparseLike.__init__") == "model-loading"


def test_elastic_ep_scaling_and_the_process_monitors_run_while_serving():
    """94b4144d616be124: AsyncLLM._drain_requests_for_elastic_ep runs when a running server is
    asked to scale; 5e9bb0be92627434: the engine cores' monitor thread sees them die after
    start-up."""
    k = VllmKnowledge()
    assert k.stage("vllm/v1/engine/async_llm.py", "AsyncLLM._drain_requests_for_elastic_ep") == (
        "request-handling"
    )
    client = "vllm/v1/engine/core_client.py"
    monitor = "MPClient.start_engine_core_monitor.monitor_engine_cores"
    assert k.stage(client, monitor) == "request-handling"
    assert k.stage(client, "MPClient.start_engine_core_monitor") == "engine-startup"
    assert k.stage(client, "MPClient.__init__") == "engine-startup"


def test_sglang_tools_have_no_stage_and_weight_checks_serve(tmp_path):
    """d519bb94a6b8af85: a stand-alone calibration tool; b7449212a08a0ed7: /check_weights
    reaches the model runner's check_weights while the server runs."""
    k = SglangKnowledge(root="python/")
    tool = "python/sglang/multimodal_gen/tools/quantize_like.py"
    runner = "python/sglang/srt/model_executor/model_runner.py"
    checker = "python/sglang/srt/utils/weight_checker.py"
    files = {
        tool: (
            "def main():\n"
            "    if not ok():\n"
            "        raise ValueError('calibration requires an SM89+ CUDA GPU')\n"
            "\n"
            "def run():\n"
            "    main()\n"
        ),
        "python/sglang/srt/entrypoints/http_server.py": (
            "async def generate_request(obj):\n    main()\n"
        ),
        runner: (
            "class ModelRunner:\n"
            "    def check_weights(self, action):\n"
            "        compare_tensors(action)\n"
        ),
        checker: (
            "def compare_tensors(x):\n"
            "    _check_tensors(x)\n"
            "\n"
            "def _check_tensors(x):\n"
            "    errors = [n for n in x if n]\n"
            "    if len(errors) > 0:\n"
            "        raise Exception('check tensor equality failed')\n"
        ),
    }
    found = _scan(tmp_path, files, k)
    assert "stage" not in found["calibration requires an SM89+ CUDA GPU"]
    assert found["check tensor equality failed"]["stage"] == "request-handling"
    assert k.stage(runner, "ModelRunner.initialize") == "engine-startup"


# Categories ---------------------------------------------------------------------------


def _category(code: str, path: str = "m.py", knowledge=None) -> str:
    (found,) = derived_of(code, path, knowledge).values()
    return found["category"]


def test_a_name_registered_twice_is_the_code_s_own_fault():
    """fc90a845ecaa6505: `mode in cls._builders` is no value outside the choices."""
    code = (
        "def register(mode):\n"
        "    if mode in _builders:\n"
        "        raise ValueError(f'runtime mode {mode} is already registered')\n"
    )
    assert _category(code) == "invariant"


def test_an_assert_on_an_environment_variable_the_message_names_is_the_user_s_value():
    """cbf62251159b15b5: VLLM_RAY_BUNDLE_INDICES with a value twice: a bad value of the
    user's, not an internal invariant."""
    k = VllmKnowledge(envs={"VLLM_RAY_BUNDLE_INDICES"})
    code = (
        "def get_bundles(indices):\n"
        "    assert len(set(indices)) == len(indices), (\n"
        "        f'VLLM_RAY_BUNDLE_INDICES cannot have duplicate values, got {indices}')\n"
    )
    assert _category(code, "vllm/v1/executor/ray_utils.py", k) == "invalid-choice"
    internal = "def f(xs):\n    assert len(set(xs)) == len(xs), 'ids must be unique'\n"
    assert _category(internal, "vllm/v1/executor/ray_utils.py", k) == "invariant"


def test_words_of_combinations_and_of_disagreement():
    """7b59d217d55472b6 ("not supported by streaming"), 8ccd97028221119b ("must be
    specified with 'tools'"), 77e74efa2c13b1b4 ("is turned on, but the model does not support
    it"), 3353757b6a544585 (an invalid digest), b7449212a08a0ed7 (tensor equality)."""
    stop = (
        "def f(request, stream):\n"
        "    if request.stop and stream:\n"
        "        raise ValueError('stop strings are not supported by streaming derender')\n"
    )
    assert _category(stop) == "unsupported-combination"
    tools = (
        "def f(tool_choice, tools):\n"
        "    if not tools and tool_choice == 'required':\n"
        "        raise ValueError(\"Tool choice 'required' must be specified with 'tools'.\")\n"
    )
    assert _category(tools) == "unsupported-combination"
    compile_ = (
        "def f(model, n):\n"
        "    if n == 0:\n"
        "        logger.warning('compile is turned on, but the model %s does not support it',"
        " model)\n"
    )
    assert _category(compile_) == "unsupported-combination"
    digest = (
        "def f(errors):\n"
        "    if errors:\n"
        "        raise RuntimeError('rank 1: invalid complete-plan digest')\n"
    )
    assert _category(digest) == "mismatch"
    equal = (
        "def f(errors):\n"
        "    if len(errors) > 0:\n"
        "        raise Exception('check tensor equality failed')\n"
    )
    assert _category(equal) == "mismatch"


def test_a_subset_test_is_membership_unless_of_a_range():
    """c1ad999538e99eee: `not k <= d.keys()` asks whether every value is among the known ones;
    `not ids <= set(range(n))` whether each is within [0, n)."""
    ranged = (
        "def f(ids, n):\n"
        "    if not ids <= set(range(n)):\n"
        "        raise ValueError(f'experts must be within [0, {n})')\n"
    )
    assert _category(ranged) == "limit"
    subset = (
        "def f(k):\n"
        "    if not k <= SPLITS.keys():\n"
        "        raise ValueError('unsupported skinny-K warmup token count')\n"
    )
    assert _category(subset) == "invalid-choice"


def test_neither_of_two_ways_given_is_not_found():
    """48c515f614ff84c0: `not uri` then `not dir` (nested), "a valid uri or dir must be
    provided"."""
    code = (
        "class C:\n"
        "    def __post_init__(self):\n"
        "        if not self.uri:\n"
        "            if self.dir:\n"
        "                self.uri = self.dir\n"
        "            else:\n"
        "                raise ValueError('Unable to resolve uri. A valid uri or dir must be"
        " provided.')\n"
    )
    assert _category(code) == "not-found"


def test_a_retired_argument_is_an_invalid_choice():
    """d497156e7f11485e: `if removed:` tells the user an argument is gone."""
    code = (
        "def f(kwargs):\n"
        "    removed = [n for n in RETIRED if n in kwargs]\n"
        "    if removed:\n"
        "        raise ValueError(f'Removed server argument(s): {removed}')\n"
    )
    assert _category(code) == "invalid-choice"


def test_a_transfer_step_that_failed_is_a_runtime_failure():
    """f298d92fd07c34a3: a KV transfer's submission failed while it ran ("transfer
    submission failed"), whatever it raised."""
    code = (
        "def f(self):\n"
        "    try:\n"
        "        self.submit()\n"
        "    except Exception as exc:\n"
        "        raise SubmissionError(f'Transfer submission failed: {exc}') from exc\n"
    )
    assert _category(code) == "runtime-failure"


# Titles and flags -----------------------------------------------------------------------


def test_titles_lose_a_dropped_value_s_label_and_keep_what_is_counted():
    """1504c6e082cad74d ("but got type"), e6e7a13c7c5e6ffe ("the -token block"), the
    `At most {n} {modality}(s)` titles ("At most (s) may be provided")."""
    assert template.title(
        "expect `cfg` to be instance of PreTrainedConfig or dict, but got {t} type"
    ) == ("Expect `cfg` to be instance of PreTrainedConfig or dict")
    assert template.title("kernel blocks {shape} split the {block_size}-token block") == (
        "Kernel blocks split the token block"
    )
    assert template.title("At most {limit} {modality}(s) may be provided in one prompt.") == (
        "At most limit modality(s) may be provided in one prompt"
    )


def test_a_presence_test_that_only_reaches_the_failing_field_passes_nothing():
    """7b59d217d55472b6: `request.chat is not None and request.chat.stop`: leaving `chat` out
    is no fix; the stop strings are what fail."""
    k = VllmKnowledge(requests={"ChatRequest": {"chat_request", "stop"}})
    k.serving = {"Serving"}
    code = (
        "class Serving:\n"
        "    def f(self, request):\n"
        "        if request.chat_request is not None and request.chat_request.stop:\n"
        "            raise ValueError('stop strings are not supported by streaming')\n"
    )
    (found,) = derived_of(code, "vllm/entrypoints/x/serving.py", k).values()
    entries = [f for f in found.get("flags", []) if f["name"] == "request.chat_request"]
    assert entries and "passes" not in entries[0]


# Sample 7305 (drawn after the fixes above) ------------------------------------------------


def test_a_backend_that_does_not_support_a_feature_is_a_combination():
    """f705a2b279d00df8: "b12x TP MoE does not support expert maps" (`expert_map is not
    None`) is a backend with expert parallelism, not a value outside a list; a value tested
    against the choices stays an invalid choice."""
    maps = (
        "def apply(expert_map):\n"
        "    if expert_map is not None:\n"
        "        raise ValueError('b12x TP MoE does not support expert maps')\n"
    )
    assert _category(maps) == "unsupported-combination"
    choice = (
        "def f(backend):\n"
        "    if backend not in ('flash', 'triton'):\n"
        "        raise ValueError(f'This layer does not support {backend}')\n"
    )
    assert _category(choice) == "invalid-choice"


def test_a_kernel_not_supported_here_is_a_combination():
    """294934b521b94db3: `if not is_supported:` after `force_kernel.is_supported()`, "Forced
    NVFP4 kernel X is not supported: {reason}": the kernel on this GPU."""
    code = (
        "def init(force_kernel):\n"
        "    is_supported, reason = force_kernel.is_supported()\n"
        "    if not is_supported:\n"
        "        raise ValueError(f'Forced kernel {force_kernel} is not supported: {reason}')\n"
    )
    assert _category(code) == "unsupported-combination"


def test_two_settings_of_the_user_tested_together_are_a_combination():
    """524ee70377193261: `if not cfg.a: return`, then `if cfg.b is not None: raise`: the
    two flags together, not an internal invariant."""
    k = SglangKnowledge(root="python/")
    k.args = {
        "enable_aux": (("--enable-aux",), None),
        "draft_path": (("--draft-path",), None),
    }
    code = (
        "def handle(cfg):\n"
        "    if not cfg.enable_aux:\n"
        "        return\n"
        "    if cfg.draft_path is not None:\n"
        "        raise ValueError('captures without a draft; drop --draft-path.')\n"
    )
    found = derived_of(code, "python/sglang/srt/arg_groups/validation_hook.py", k)
    (derived,) = found.values()
    if len(derived.get("flags", [])) > 1:  # the wing traced both flags
        assert derived["category"] == "unsupported-combination"


def test_dunder_methods_are_not_dated_by_calls_of_their_name(tmp_path):
    """70d6eea928b34368: ConstantList.__setitem__ runs on `x[i] = v` anywhere; a call of
    another class's `__setitem__` in a kernel module does not date it. An unconditional
    TypeError of a read-only list is no mismatch of types."""
    k = VllmKnowledge()
    files = {
        "vllm/v1/utils_like.py": (
            "class ConstantList:\n"
            "    def __setitem__(self, item, value):\n"
            "        raise TypeError('Cannot set item in a constant list')\n"
        ),
        "vllm/platforms/cuda_like.py": ("def pick(d):\n    d.__setitem__('backend', 1)\n"),
    }
    found = _scan(tmp_path, files, k)["Cannot set item in a constant list"]
    assert "stage" not in found
    assert found["category"] == "invariant"


def test_the_clause_reporting_the_value_found_goes_to_its_end():
    """76be925631d8d82f: "Expected one length per row, got {a} for indices {b}"."""
    assert template.title("Expected one length per row, got {a} for indices {b}") == (
        "Expected one length per row"
    )
    # b846bd44c2e57c07
    assert template.title("activation must be None, silu, or swish, actual: {activation}") == (
        "Activation must be None, silu, or swish"
    )


def test_a_separate_program_s_calls_date_nothing(tmp_path):
    """`vllm bench` also calls the tokenizers' encoders: its calls neither give them a stage
    nor take away the one the server's calls give (shutdown's calls do)."""
    k = VllmKnowledge()
    files = {
        "vllm/tokenizers/encoding_like.py": (
            "def encode_messages(m):\n    if not m:\n        raise ValueError('no messages')\n"
        ),
        "vllm/benchmarks/datasets/like.py": "def sample(m):\n    encode_messages(m)\n",
        "vllm/entrypoints/openai/chat_like.py": (
            "class Serving:\n    def create_chat(self, m):\n        encode_messages(m)\n"
        ),
    }
    assert _scan(tmp_path, files, k)["no messages"]["stage"] == "request-handling"


def test_a_loop_started_at_start_up_is_not_of_start_up(tmp_path):
    """1fd8dc9a5364ebe8 (moved by the rule above, then back): MooncakeConnectorWorker's
    `_sender_worker` is started in __init__ and sends KV per request; a private helper that
    its own module never calls is not dated by another module's `_save`."""
    k = VllmKnowledge()
    connector = "vllm/distributed/kv_transfer/kv_connector/v1/like/connector.py"
    files = {
        connector: (
            "class Worker:\n"
            "    def __init__(self, sock):\n"
            "        run(self._sender_worker(sock))\n"
            "    async def _sender_worker(self, sock):\n"
            "        await self.send_kv_to_decode(sock)\n"
            "    async def send_kv_to_decode(self, sock):\n"
            "        if sock is None:\n"
            "            raise RuntimeError('no socket to send KV on')\n"
            "    def _save(self, key):\n"
            "        if key is None:\n"
            "            raise RuntimeError('nothing to save')\n"
        ),
        "vllm/distributed/kv_transfer/other.py": (
            "class Other:\n    def __init__(self):\n        self._save(1)\n"
        ),
    }
    found = _scan(tmp_path, files, k)
    assert found["no socket to send KV on"]["stage"] == "request-handling"
    assert found["nothing to save"]["stage"] == "request-handling"


def test_does_not_support_keeps_not_implemented_and_a_size_s_limit():
    """The rederive of the rule above: a NotImplementedError "X does not support streaming"
    stays not implemented; "doesn't support feature dim >= 64KB" (`D > BD`) is a limit;
    `not self.supported_dtypes` is no test of what is supported here."""
    stream = "def f(self):\n    raise NotImplementedError('X does not support streaming')\n"
    assert _category(stream) == "not-implemented"
    dim = (
        "def f(D, BD):\n"
        "    if D > BD:\n"
        '        raise RuntimeError("This layer doesn\'t support feature dim >= 64KB.")\n'
    )
    assert _category(dim) == "limit"
    empty = (
        "class A:\n"
        "    def check(self):\n"
        "        if not self.supported_dtypes:\n"
        "            raise ValueError('Algorithm supported dtypes cannot be empty')\n"
    )
    assert _category(empty) != "unsupported-combination"


def test_a_title_keeps_got_as_its_own_verb():
    """Measured over every record's title: "Pool got {n} indices, expected ..." is the
    sentence itself; "mismatch: got {a}, but model expects {b}. Shape: {s}" loses the clause."""
    assert template.title("Pool got {n} indices, expected a multiple of page_size") == (
        "Pool got indices, expected a multiple of page_size"
    )
    assert template.title(
        "Embedding hidden dimension mismatch: got {a}, but model expects {b}. Shape: {s}"
    ) == ("Embedding hidden dimension mismatch")


def test_a_message_written_as_an_indented_block_is_titled_by_its_first_line():
    """derived-truth 7309 (a0b771482514187f): a message that opens on a newline was titled
    "ValueError in PoolingOfflineMixin._verify_pooling_task", the title of no message."""
    message = "\n    pooling_task required for `LLM.encode`.\n    Please use one of ..."
    assert template.title(message) == "pooling_task required for `LLM.encode`"
    assert template.title("\n{a}={b}\n") == ""


def test_an_engine_setting_left_unset_still_passes_an_incompatibility():
    """Measured on the rederive of the rule above: "--use-replayssm is incompatible with KV
    connectors" (`kv_transfer_config is not None and kv_transfer_config.x`): leaving
    --kv-transfer-config unset is a fix, as it was; only a request's field keeps its presence."""

    class Knows(explain.Knowledge):
        def setting(self, chain, owner):
            if chain[-1] == "kv_transfer_config":
                return explain.Setting(
                    "kv_transfer_config", "--kv-transfer-config", kind="engine-arg"
                )
            return None

    code = (
        "class C:\n"
        "    def check(self):\n"
        "        if self.kv_transfer_config is not None and self.kv_transfer_config.role:\n"
        "            raise ValueError('--use-replayssm is incompatible with KV connectors')\n"
    )
    (found,) = derived_of(code, knowledge=Knows()).values()
    (entry,) = [f for f in found["flags"] if f["flag"] == "--kv-transfer-config"]
    assert entry["passes"] == {"op": "unset"}


def test_a_one_line_helper_of_the_module_reads_its_setting():
    """0cae56c918d0e135 (SGLang's assert_pkg_version): `if _should_skip_kernel_pkg_version_check
    (pkg): return` reads SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK in a one-line function of the
    module; the check names the variable. Look-alikes: the helper's parameter (`pkg`, the
    caller's value) and a helper of more than one statement trace nothing."""
    from errorkb.projects.sglang.knowledge import Place

    code = (
        "def _skip(pkg):\n"
        "    '''Skipped by the user.'''\n"
        "    return pkg in _PKGS and envs.SGLANG_SKIP_CHECK.get()\n"
        "\n"
        "def _busy(pkg):\n"
        "    x = envs.SGLANG_OTHER.get()\n"
        "    return x and pkg\n"
        "\n"
        "def _named(tp_size):\n"
        "    return tp_size > 1\n"
        "\n"
        "def check(pkg, installed):\n"
        "    if _skip(pkg):\n"
        "        return\n"
        "    if installed is None:\n"
        "        raise Exception(f'{pkg} is not installed')\n"
        "\n"
        "def other(pkg, installed):\n"
        "    if _busy(pkg) and installed is None:\n"
        "        raise Exception(f'{pkg} is missing')\n"
        "    if _named(installed):\n"
        "        raise Exception('the helper takes its value from its caller')\n"
    )
    place = Place("python/sglang/srt/environ.py", 1)
    k = SglangKnowledge(root="python/", envs={"SGLANG_SKIP_CHECK": place, "SGLANG_OTHER": place})
    found = derived_of(code, "python/sglang/srt/utils/common.py", k)
    skip = found["{pkg} is not installed"]["flags"]
    assert [(f["kind"], f["env"]) for f in skip] == [("env-var", "SGLANG_SKIP_CHECK")]
    assert "flags" not in found["{pkg} is missing"]
    assert "flags" not in found["the helper takes its value from its caller"]


class _KnowsSpace(explain.Knowledge):
    def setting(self, chain, owner):
        if chain == ("envs", "VLLM_SPACE"):
            return explain.Setting("envs.VLLM_SPACE", kind="env-var", env="VLLM_SPACE")
        return None


def _space_flags(otherwise: str) -> list[dict]:
    """The flags derived for the warning that VLLM_SPACE is 0, inside `if space >= 0:`
    whose `else` runs `otherwise`."""
    code = (
        "import envs\n"
        "def check():\n"
        "    space = envs.VLLM_SPACE\n"
        "    if space >= 0:\n"
        "        if space == 0:\n"
        "            logger.warning('VLLM_SPACE is not set, using 4 by default.')\n"
        "    else:\n"
        f"        {otherwise}\n"
    )
    found = derived_of(code, knowledge=_KnowsSpace())["VLLM_SPACE is not set, using 4 by default."]
    return found["flags"]


def test_a_passing_value_keeps_clear_of_the_branch_that_raises():
    """d8214bc7da8b9f01 (vLLM 0.7.3's CpuPlatform.check_and_update_config): the warning that
    VLLM_CPU_KVCACHE_SPACE is 0 sits in `if space >= 0:`, whose `else` raises; `< 0` would
    trade the warning for that error, so the value that passes is `> 0`."""
    (entry,) = _space_flags("raise RuntimeError(f'Invalid VLLM_SPACE {space}')")
    assert entry["passes"] == {"op": ">", "value": 0}


def test_a_passing_value_may_leave_a_guard_whose_other_branch_goes_on():
    """The look-alike: the outer `else` only falls back to a default, so leaving the outer
    test (`< 0`) passes as it did."""
    (entry,) = _space_flags("space = 4")
    assert entry["passes"] == {"op": "<", "value": 0}


def test_a_status_code_that_is_not_success_is_a_runtime_failure():
    """298d11d152db3375 (vLLM's NCCLLibrary.NCCL_CHECK): `if result != 0: raise
    RuntimeError(f"NCCL error: {error_str}")` checks what a library call returned; no choice of
    the user's is wrong. Look-alike: a rank compared with 0 is no status."""
    code = (
        "class Lib:\n"
        "    def check(self, result):\n"
        "        if result != 0:\n"
        "            raise RuntimeError(f'NCCL error: {result}')\n"
        "    def only_first(self, rank):\n"
        "        if rank != 0:\n"
        "            raise ValueError(f'Only the first rank may do this, not {rank}')\n"
    )
    found = derived_of(code)
    assert found["NCCL error: {result}"]["category"] == "runtime-failure"
    assert found["Only the first rank may do this, not {rank}"]["category"] != "runtime-failure"


def test_a_request_s_mismatch_is_not_sent_to_the_checkpoint():
    """d78bffbd09bce4bb, 67edd8eb5e5b86fa (vLLM's ChatCompletionRequest.check_tool_usage): a
    request's `tool_choice` that names no tool of its `tools` is the request's own mismatch;
    the hints of a checkpoint and its adapters do not apply. Look-alike: the same check in a
    model's loading keeps them."""

    class Stages(explain.Knowledge):
        def stage(self, path, function):
            return "request-handling" if path.endswith("protocol.py") else "model-loading"

    code = (
        "def check(names, wanted):\n"
        "    if wanted not in names:\n"
        "        raise ValueError('The tool in tool_choice does not match any of the tools')\n"
    )
    text = "The tool in tool_choice does not match any of the tools"
    request = derived_of(code, "protocol.py", Stages())[text]
    loading = derived_of(code, "loader.py", Stages())[text]
    assert request["category"] == loading["category"] == "mismatch"
    assert not any("checkpoint" in line for line in request["try"])
    assert any("checkpoint" in line for line in loading["try"])

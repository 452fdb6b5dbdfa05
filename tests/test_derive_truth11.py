"""Issue 40, round 11: the rules the adjudication of the blind sample derived-truth-7307 fixed
(tests/fixtures/derived-truth-7307-adjudicated.jsonl), each on a made-up site shaped like the
release's code, with a look-alike that must not move, read against the definitions in
errorkb.content.derived."""

from errorkb.projects.vllm.knowledge import VllmKnowledge
from errorkb.sources import explain
from tests.conftest import derived_of


class _Scheduler(explain.Knowledge):
    """Knows one engine argument: the scheduler config's max_num_batched_tokens."""

    def setting(self, chain, owner):
        if chain[-2:] == ("scheduler_config", "max_num_batched_tokens"):
            return explain.Setting(
                "scheduler_config.max_num_batched_tokens",
                "--max-num-batched-tokens",
                kind="engine-arg",
            )
        return None


# Categories ----------------------------------------------------------------------------


def test_an_assert_that_names_the_setting_it_reads_checks_the_user_s_value():
    """d8d904c6436ea1b9: `assert num_tokens <= self.max_num_tokens, "Dummy run with {n} tokens
    exceeds max_num_batched_tokens ({m})"`, `self.max_num_tokens` set in __init__ from the
    scheduler config's max_num_batched_tokens: the message names the flag the test reads, a
    value too small (limit). The look-alike asserts on the same setting without naming it:
    the code's own state (invariant)."""
    code = (
        "class Runner:\n"
        "    def __init__(self, scheduler_config):\n"
        "        self.max_num_tokens = scheduler_config.max_num_batched_tokens\n"
        "    def dummy_run(self, num_tokens):\n"
        "        assert num_tokens <= self.max_num_tokens, (\n"
        "            f'Dummy run with {num_tokens} tokens exceeds max_num_batched_tokens '\n"
        "            f'({self.max_num_tokens})')\n"
        "    def step(self, n):\n"
        "        assert n <= self.max_num_tokens, f'scheduled {n} tokens, too many'\n"
        "    def pages(self, n):\n"
        "        max_num_batched_tokens = self.max_num_tokens\n"
        "        assert n == max_num_batched_tokens, f'pages of {max_num_batched_tokens} slots'\n"
    )
    found = derived_of(code, knowledge=_Scheduler())
    # (a placeholder prints the variable: it names no setting in the message's words)
    assert found["pages of {max_num_batched_tokens} slots"]["category"] == "invariant"
    named = "Dummy run with {num_tokens} tokens exceeds max_num_batched_tokens ({max_num_tokens})"
    assert found[named]["category"] == "limit"
    assert found["scheduled {n} tokens, too many"]["category"] == "invariant"


def test_a_call_the_message_requires_first_is_an_order_of_the_code_s_calls():
    """fe98fe1d13e2fee2: "Pinned-host PLE embedding requires start_prefetch() and
    finalize_prefetch()", raised whenever forward() runs: calls of its own functions that must
    come first (invariant), not two choices of the user's. A requirement of a package or a
    flag is still a combination."""
    code = (
        "class Emb:\n"
        "    def forward(self, x):\n"
        "        raise RuntimeError('Pinned-host PLE embedding requires start_prefetch() and'\n"
        "                           ' finalize_prefetch().')\n"
        "    def mps(self, getter):\n"
        "        if not callable(getter):\n"
        "            raise RuntimeError('The MPS backend requires'\n"
        "                               ' torch.mps.recommended_max_memory() from Torch 2.13')\n"
        "    def other(self, cfg):\n"
        "        if cfg.a and cfg.b:\n"
        "            raise ValueError('Pinned-host PLE embedding requires --enable-prefetch')\n"
    )
    found = derived_of(code)
    said = "Pinned-host PLE embedding requires start_prefetch() and finalize_prefetch()."
    assert found[said]["category"] == "invariant"
    torch = "The MPS backend requires torch.mps.recommended_max_memory() from Torch 2.13"
    assert found[torch]["category"] != "invariant"  # a module's function: a dependency's
    flagged = "Pinned-host PLE embedding requires --enable-prefetch"
    assert found[flagged]["category"] == "unsupported-combination"


def test_a_flag_a_guarded_import_sets_says_a_package_is_missing():
    """96ed9bc18ca7c48d: `try: import tilelang; HAS_TILELANG = True` / `except ImportError:
    HAS_TILELANG = False`, then `if not HAS_TILELANG: raise RuntimeError("TileLang is
    unavailable")`: the package is not installed. A module flag set from a setting is not."""
    code = (
        "import os\n"
        "try:\n"
        "    import tilelang\n"
        "    HAS_TILELANG = True\n"
        "except ImportError:\n"
        "    HAS_TILELANG = False\n"
        "USE_FAST = os.environ.get('FAST') == '1'\n"
        "\n"
        "def prefill(q):\n"
        "    if not HAS_TILELANG:\n"
        "        raise RuntimeError('TileLang is unavailable')\n"
        "\n"
        "def decode(q):\n"
        "    if not USE_FAST:\n"
        "        raise RuntimeError('Fast decode is off')\n"
    )
    found = derived_of(code)
    assert found["TileLang is unavailable"]["category"] == "missing-dependency"
    assert found["Fast decode is off"]["category"] != "missing-dependency"


def test_a_type_test_that_guards_a_range_is_a_limit():
    """2b5160ec7472662b: `not isinstance(p, int) or isinstance(p, bool) or not 0 < p < 65536`
    with "`master_port` must be a valid metadata port": the type tests make the range test
    possible; the check is of a port's range (limit). A type test of another value, or with
    no range, is still a mismatch."""
    code = (
        "class Info:\n"
        "    def __post_init__(self):\n"
        "        if (not isinstance(self.master_port, int) or isinstance(self.master_port, bool)\n"
        "                or not 0 < self.master_port < 65536):\n"
        "            raise ValueError('`master_port` must be a valid metadata port')\n"
        "        if not isinstance(self.names, list) or self.count > 3:\n"
        "            raise ValueError('`names` must be valid')\n"
        "        if not isinstance(self.host, str):\n"
        "            raise ValueError('`host` must be a valid address')\n"
    )
    found = derived_of(code)
    assert found["`master_port` must be a valid metadata port"]["category"] == "limit"
    assert found["`names` must be valid"]["category"] == "mismatch"
    assert found["`host` must be a valid address"]["category"] == "mismatch"


def test_a_caught_failure_on_a_transport_that_falls_back_is_a_runtime_failure():
    """664a6d52f077f1ca: INFO "FABRIC handle export failed on rank {rank}; falling back to POSIX
    fd transport" in `except Exception`: the export failed as it ran; the line reports it and
    the fallback (CATEGORY_MEANS logged: a refusal that goes on is of its own kind). A
    fallback from a parse that failed is no transport's failure (logged)."""
    code = (
        "def export(rank, handles, path):\n"
        "    try:\n"
        "        handles.export_fabric()\n"
        "    except Exception as error:\n"
        "        logger.info('FABRIC handle export failed on rank %s; falling back to POSIX fd'\n"
        "                    ' transport: %s', rank, error)\n"
        "    try:\n"
        "        read(path)\n"
        "    except Exception as error:\n"
        "        logger.info('Config parse failed; falling back to defaults: %s', error)\n"
    )
    found = derived_of(code)
    fabric = (
        "FABRIC handle export failed on rank {rank}; falling back to POSIX fd transport: {error}"
    )
    assert found[fabric]["category"] == "runtime-failure"
    assert found["Config parse failed; falling back to defaults: {error}"]["category"] == "logged"


# Stages --------------------------------------------------------------------------------


def test_a_check_reached_only_while_a_graph_is_captured_runs_at_start_up():
    """5ec958483d093b87: `if (...too small...) and torch.cuda.is_current_stream_capturing():
    raise RuntimeError("the MLA split-KV workspace must be sized before capture")`: graphs are
    captured while the engine starts (STAGE_MEANS engine-startup). Raised when not capturing,
    the check dates nothing."""
    code = (
        "import torch\n"
        "def decode(key, size):\n"
        "    if key not in WS and torch.cuda.is_current_stream_capturing():\n"
        "        raise RuntimeError('the workspace must be sized before capture')\n"
        "    if key not in WS and not torch.cuda.is_current_stream_capturing():\n"
        "        raise RuntimeError('the workspace is missing outside capture')\n"
    )
    found = derived_of(code)
    assert found["the workspace must be sized before capture"]["stage"] == "engine-startup"
    assert "stage" not in found["the workspace is missing outside capture"]


def test_a_config_s_check_of_this_request_runs_while_serving():
    """130cdc58e1274a6d: VllmConfig._check_supports_watermarking warns "Watermarking is
    enabled for this request, but the engine has no watermark configuration", called for each
    request by the input processor: request handling, though a config class holds it. The
    config's own checks stay config validation."""
    code = (
        "class VllmConfig:\n"
        "    def _check_supports_watermarking(self, config):\n"
        "        if self.watermark_config is None and config is not None:\n"
        "            logger.warning('Watermarking is enabled for this request, but the engine'\n"
        "                           ' has no watermark configuration.')\n"
        "    def __post_init__(self):\n"
        "        if self.watermark_config is not None and self.beam:\n"
        "            raise ValueError('Watermarking needs a request without beam search')\n"
    )
    found = derived_of(code, path="vllm/config/vllm.py", knowledge=VllmKnowledge())
    said = (
        "Watermarking is enabled for this request, but the engine has no watermark configuration."
    )
    assert found[said]["stage"] == "request-handling"
    assert found["Watermarking needs a request without beam search"]["stage"] == (
        "config-validation"
    )
    # b0fc2c2748fe0c5e: "Multiple serve backends matched this request" while the command line
    # is read: the launch's "request", argument parsing still
    cli = (
        "def auto_detect(matches):\n"
        "    if len(matches) > 1:\n"
        "        raise ValueError(f'Multiple serve backends matched this request: {matches}')\n"
    )
    parsed = derived_of(cli, path="vllm/entrypoints/cli/serve.py", knowledge=VllmKnowledge())
    said = parsed["Multiple serve backends matched this request: {matches}"]
    assert said.get("stage") != "request-handling"


def test_a_speculator_s_graph_capture_runs_at_start_up():
    """d2ae83228111da11: DFlashSpeculator.capture logs "Capturing model for {name}
    speculator...", called from the model runner's graph capture: a worker's set-up. The
    worker's per-step functions stay request handling."""
    k = VllmKnowledge()
    spec = "vllm/v1/worker/gpu/spec_decode/dflash/speculator.py"
    assert k.stage(spec, "DFlashSpeculator.capture") == "engine-startup"
    assert k.stage(spec, "DFlashSpeculator.capture_graphs") == "engine-startup"
    assert k.stage("vllm/v1/worker/gpu/model_runner.py", "GPUModelRunner.execute_model") == (
        "request-handling"
    )


# Settings ------------------------------------------------------------------------------


def test_a_setting_converted_to_a_type_is_still_the_setting():
    """b3dc41c7a275b3ff: `self.heads_per_ngram = int(config.heads_per_ngram)` in __init__, then
    `if self.heads_per_ngram <= 0: raise ...`: the conversion keeps config.json's key. A value
    another function computes from the setting is not the setting."""
    code = (
        "import os\n"
        "class Emb:\n"
        "    def __init__(self):\n"
        "        self.heads = int(os.environ['VLLM_HEADS'])\n"
        "        self.ways = split(os.environ['VLLM_WAYS'])\n"
        "        if self.heads <= 0:\n"
        "            raise ValueError(f'heads must be > 0, got {self.heads}')\n"
        "        if self.ways <= 0:\n"
        "            raise ValueError(f'ways must be > 0, got {self.ways}')\n"
    )
    found = derived_of(code)
    heads = found["heads must be > 0, got {heads}"]
    assert [f.get("env") for f in heads["flags"]] == ["VLLM_HEADS"]
    assert not found["ways must be > 0, got {ways}"].get("flags")


def test_the_diffusion_server_s_launch_starts_it_up():
    """0dce86f169ae2f42: launch_disagg_role logs "Role {role} ready ({n} GPU(s), ...)" once its
    scheduler processes are started: engine start-up, though its callers also serve. The
    launcher's other functions are still dated by their callers; the entrypoints stay
    request handling."""
    from errorkb.projects.sglang.knowledge import SglangKnowledge

    k = SglangKnowledge()
    launcher = "sglang/multimodal_gen/runtime/launch_server.py"
    assert k.stage(launcher, "launch_disagg_role") == "engine-startup"
    assert k.stage(launcher, "_find_available_port") is None
    openai = "sglang/multimodal_gen/runtime/entrypoints/openai/image_api.py"
    assert k.stage(openai, "generations") == "request-handling"


# Titles --------------------------------------------------------------------------------


def test_a_title_keeps_the_fallback_a_clause_after_a_semicolon_names():
    """664a6d52f077f1ca: "FABRIC handle export failed on rank {rank}; falling back to POSIX fd
    transport: {error}": what the code does instead stays in the title, or it reads as a
    failure that stops. Another clause after ";" still goes."""
    from errorkb.content import template

    fabric = "FABRIC handle export failed on rank {rank}; falling back to POSIX fd transport: {e}"
    assert template.title(fabric) == (
        "FABRIC handle export failed on rank; falling back to POSIX fd transport"
    )
    other = "FABRIC handle export failed on rank {rank}; the error was {e}"
    assert template.title(other) == "FABRIC handle export failed on rank"


# More categories and stages ------------------------------------------------------------


def test_a_placeholder_named_invalid_calls_no_choice_invalid():
    """0dc3f97d055aabe2: `invalid = next((b for b in ids if not 0 <= b < n), None)`, `if invalid
    is not None: raise ValueError(f"{side} block id {invalid} is outside [0, {n})")`: block ids
    the scheduler allocated, a state the code guarantees (invariant); the placeholder's name
    is no word of the message. "Invalid block id {b}" still calls a value invalid."""
    code = (
        "def check(ids, n, side, b):\n"
        "    invalid = next((b for b in ids if not 0 <= b < n), None)\n"
        "    if invalid is not None:\n"
        "        raise ValueError(f'{side} block id {invalid} is outside [0, {n})')\n"
        "    if b is not None:\n"
        "        raise ValueError(f'Invalid block id {b}')\n"
        "    unknown = set(ids) - {1, 2}\n"
        "    if unknown:\n"
        "        raise ValueError(f'keys {unknown} are not allowed')\n"
    )
    found = derived_of(code)
    # (without a range said, the placeholder names the refused value: a choice)
    assert found["keys {unknown} are not allowed"]["category"] == "invalid-choice"
    assert found["{side} block id {invalid} is outside [0, {n})"]["category"] == "invariant"
    assert found["Invalid block id {b}"]["category"] == "invalid-choice"


def test_a_kernel_only_available_on_a_platform_is_a_combination():
    """bcfe512e8d737e0a: NotImplementedError("The optimized moe_wna16_gemm kernel is only
    available on CUDA platforms") for `not current_platform.is_cuda()`: the platform and the
    kernel refused together, no path the authors mark as not written yet. "not implemented"
    words still say not-implemented."""
    code = (
        "def gemm(platform):\n"
        "    if not platform.is_cuda():\n"
        "        raise NotImplementedError('The optimized kernel is only available on CUDA'\n"
        "                                  ' platforms')\n"
        "    if platform.is_rocm():\n"
        "        raise NotImplementedError('The optimized kernel is not implemented on ROCm')\n"
    )
    found = derived_of(code)
    said = "The optimized kernel is only available on CUDA platforms"
    assert found[said]["category"] == "unsupported-combination"
    assert found["The optimized kernel is not implemented on ROCm"]["category"] == (
        "not-implemented"
    )


def test_a_worker_s_kv_pool_allocation_runs_at_start_up():
    """de4cb89cb0cec92a: TpModelWorker.alloc_memory_pool asserts max_running_requests > 0
    after the KV pools are sized: engine start-up. The worker's per-batch functions stay
    request handling."""
    from errorkb.projects.sglang.knowledge import SglangKnowledge

    k = SglangKnowledge()
    worker = "sglang/srt/managers/tp_worker.py"
    assert k.stage(worker, "TpModelWorker.alloc_memory_pool") == "engine-startup"
    assert k.stage("sglang/srt/managers/scheduler.py", "Scheduler.run_batch") == (
        "request-handling"
    )


def test_a_caught_prefetch_failure_is_a_runtime_failure():
    """75da841a4f2866e4 (issue 40): logger.exception("HiCache sidecar prefetch failed for
    request %s") in `except Exception` around the storage backend's batch_get: a transfer from
    storage failed as it ran (CATEGORY_MEANS runtime-failure: an error line reporting such a
    failure caught). An error line there about a value it could not parse stays logged."""
    code = (
        "def prefetch(self, op, text):\n"
        "    try:\n"
        "        self.storage.batch_get(op.keys)\n"
        "    except Exception:\n"
        "        logger.exception('HiCache sidecar prefetch failed for request %s', op.rid)\n"
        "    try:\n"
        "        parse(text)\n"
        "    except Exception:\n"
        "        logger.exception('Grammar compile failed for request %s', op.rid)\n"
    )
    found = derived_of(code)
    assert found["HiCache sidecar prefetch failed for request {rid}"]["category"] == (
        "runtime-failure"
    )
    assert found["Grammar compile failed for request {rid}"]["category"] == "logged"


def test_a_support_the_message_says_is_not_there_yet_is_not_implemented():
    """8367eda0e25fb9ea, 2ca8bd95d5f9dd77 (changed by this round's assert rule): "V2 offload
    does not support cpu_offload_gb yet", "not yet support tp_size!=1": the authors mark the
    path as not written yet (CATEGORY_MEANS not-implemented). Without "yet" it is a value or a
    pairing refused."""
    code = (
        "def make(cfg, mode):\n"
        "    if cfg.cpu_offload_gb:\n"
        "        raise ValueError('V2 offload does not support cpu_offload_gb yet')\n"
        "    if cfg.tp_size != 1:\n"
        "        raise ValueError('not yet support tp_size!=1')\n"
        "    if cfg.pp_size != 1 and mode:\n"
        "        raise ValueError('V2 offload does not support pipeline parallelism')\n"
    )
    found = derived_of(code)
    assert found["V2 offload does not support cpu_offload_gb yet"]["category"] == "not-implemented"
    assert found["not yet support tp_size!=1"]["category"] == "not-implemented"
    assert found["V2 offload does not support pipeline parallelism"]["category"] != (
        "not-implemented"
    )

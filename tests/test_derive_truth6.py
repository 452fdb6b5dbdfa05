"""Issue 40, round 6: the rules the adjudication of the blind sample derived-truth-7303 fixed
(tests/fixtures/derived-truth-7303-adjudicated.jsonl), each on a made-up site shaped like the
release's code, and read against the definitions in errorkb.content.derived."""

from errorkb.projects.sglang.knowledge import SglangKnowledge
from errorkb.projects.vllm.knowledge import VllmKnowledge
from errorkb.sources import explain
from errorkb.sources import extract as ex
from tests.conftest import derived_of

# Stages ------------------------------------------------------------------------------


def test_the_offline_llm_constructor_validates_its_configs():
    """280ea86440185ecd: LLM.__init__ turns kv_transfer_config's dict into a config before any
    engine exists; the module's other functions (LLM.generate) serve."""
    k = VllmKnowledge()
    assert k.stage("vllm/entrypoints/llm.py", "LLM.__init__") == "config-validation"
    assert k.stage("vllm/entrypoints/llm.py", "LLM.generate") == "request-handling"


def test_a_thread_started_at_start_up_works_while_serving():
    """4f904ad9cc2b3eff: the KV offload tier-poll loop warns of a stalled lock while peers'
    requests wait; its start and stop, and a factory named get_worker, stay start-up."""
    k = VllmKnowledge()
    manager = "vllm/v1/kv_offload/tiering/manager.py"
    assert k.stage(manager, "TieringOffloadingManager._tier_poll_loop") == "request-handling"
    assert k.stage(manager, "TieringOffloadingManager._start_tier_poll_thread") == (
        "engine-startup"
    )
    assert k.stage("vllm/v1/kv_offload/cpu/spec.py", "CPUOffloadingSpec.get_worker") == (
        "engine-startup"
    )
    events = "vllm/distributed/kv_events.py"
    assert k.stage(events, "ZmqEventPublisher._publisher_thread") == "request-handling"


def test_the_multimodal_shared_memory_store_is_written_per_request():
    """3bcd59ad5c5ca6c0: SingleWriterShmObjectStorage.put refuses an item over the per-object
    limit as a request's multimodal item is cached; the store is built at start-up."""
    k = VllmKnowledge()
    shm = "vllm/distributed/device_communicators/shm_object_storage.py"
    assert k.stage(shm, "SingleWriterShmObjectStorage.put") == "request-handling"
    assert k.stage(shm, "SingleWriterShmObjectStorage.__init__") == "engine-startup"
    assert k.stage(shm, "SingleWriterShmRingBuffer._init_auth_secret") == "engine-startup"


def test_choosing_a_backend_is_kernel_selection_wherever_it_runs():
    """9c19dd238b0734a7: _resolve_fi_ar_backend (in device_communicators/, start-up by path)
    picks the all-reduce backend; a model's resolve_kda_decode_backend too. Not in a module
    that serves requests (a video decoder's backend options)."""
    k = VllmKnowledge()
    fi = "vllm/distributed/device_communicators/flashinfer_all_reduce.py"
    assert k.stage(fi, "_resolve_fi_ar_backend") == "kernel-selection"
    assert k.stage("vllm/models/kimi_k3/nvidia/kda.py", "resolve_kda_decode_backend") == (
        "kernel-selection"
    )
    video = "vllm/multimodal/video_decoders/__init__.py"
    assert k.stage(video, "resolve_video_backend_kwargs") == "request-handling"


def test_a_config_getter_runs_where_its_callers_run(tmp_path):
    """ec638ea538a01975: PoolerConfig.get_seq_pooling_type, in vllm/config/, is called only
    while the pooler is built (model loading): its callers' stage is its own."""
    k = VllmKnowledge()
    assert k.by_default("vllm/config/pooler.py", "PoolerConfig.get_seq_pooling_type")
    assert not k.by_default("vllm/config/pooler.py", "PoolerConfig.__post_init__")
    config = (
        "class PoolerConfig:\n"
        "    def get_seq_pooling_type(self):\n"
        "        if self.seq_pooling_type is None:\n"
        "            raise ValueError('seq_pooling_type is not set')\n"
        "        return self.seq_pooling_type\n"
    )
    layer = (
        "class Pooler:\n"
        "    def __init__(self, pooler_config):\n"
        "        self.p = pooler_config.get_seq_pooling_type()\n"
    )
    files = {
        "vllm/config/pooler.py": config,
        "vllm/model_executor/layers/pooler/seqwise/poolers.py": layer,
    }
    for path, code in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code, encoding="utf-8")
    scan = ex.scan_tree(tmp_path, knowledge=lambda _files: k, printed=True, jobs=1)
    found = {site.template: site.derived or {} for site in scan.sites}
    assert found["seq_pooling_type is not set"]["stage"] == "model-loading"


def test_sglang_diffusion_sampling_parameters_are_checked_per_request():
    """e85e1a75678360b2: resolve_skip_softmax_params checks a generation request's
    skip_softmax_params; a model's synthetic warm-up request stays start-up."""
    k = SglangKnowledge(root="python/")
    sample = "python/sglang/multimodal_gen/configs/sample/sampling_params.py"
    assert k.stage(sample, "resolve_skip_softmax_params") == "request-handling"
    wan = "python/sglang/multimodal_gen/configs/sample/wan.py"
    warmup = "Wan_Animate_2_14B_SamplingParam.prepare_synthetic_warmup_request_for_queue"
    assert k.stage(wan, warmup) == "engine-startup"
    pipeline = "python/sglang/multimodal_gen/configs/pipeline_configs/base.py"
    assert k.stage(pipeline, "PipelineConfig.check") == "config-validation"


def test_sglang_speculative_steps_serve_and_their_workers_start_up():
    """d5a94992a9148c94: _run_dense_rejection verifies a batch's draft tokens on every step;
    the worker's constructor and its draft-config parsing run at start-up."""
    k = SglangKnowledge(root="python/")
    uno = "python/sglang/srt/speculative/uno_utils.py"
    assert k.stage(uno, "_run_dense_rejection") == "request-handling"
    worker = "python/sglang/srt/speculative/dflash_worker_v2.py"
    assert k.stage(worker, "DFlashWorkerV2.forward_batch_generation") == "request-handling"
    assert k.stage(worker, "DFlashWorkerV2.__init__") == "engine-startup"
    assert k.stage(worker, "parse_dflash_draft_config") == "engine-startup"


# Categories ----------------------------------------------------------------------------


def test_mismatched_is_a_mismatch():
    """a1f3c6489d17d94d: "Mismatched curly braces" in a model's output, tested by a
    membership test of the bracket: the word says what kind of check it is."""
    code = (
        "def make_valid_python(text):\n"
        "    for char in text:\n"
        "        if char not in {'[', '('} and char == '}' and not stack:\n"
        "            raise UnexpectedAstError('Mismatched curly braces')\n"
    )
    assert derived_of(code)["Mismatched curly braces"]["category"] == "mismatch"


def test_an_error_line_reporting_a_failure_caught_is_a_runtime_failure():
    """b7f0a64ef24e2f09 ("Failed to notify KV sender of abort", in `except Exception:`) and
    7607c90009b855b6 ("NIXL transfer failure"); a warning in the same handler, an error line
    in a handler of a value check, and an error line saying nothing failed stay logged."""
    code = (
        "def retire(sender, rid, cfg):\n"
        "    try:\n"
        "        sender.abort()\n"
        "    except Exception:\n"
        "        logger.error('Failed to notify KV sender of abort for %s', rid)\n"
        "        logger.warning('Failed to free pages for %s', rid)\n"
        "    try:\n"
        "        cfg = Config(**cfg)\n"
        "    except ValidationError:\n"
        "        logger.error('Failed to convert the dict to a config')\n"
        "    except Exception:\n"
        "        logger.error('Retiring %s', rid)\n"
        "    logger.error('NIXL transfer failure: %s', rid)\n"
    )
    found = derived_of(code)
    assert found["Failed to notify KV sender of abort for {rid}"]["category"] == ("runtime-failure")
    assert found["NIXL transfer failure: {rid}"]["category"] == "runtime-failure"
    assert found["Failed to free pages for {rid}"]["category"] == "logged"
    assert found["Failed to convert the dict to a config"]["category"] == "logged"
    assert found["Retiring {rid}"]["category"] == "logged"


# Settings ------------------------------------------------------------------------------


class _Envs(explain.Knowledge):
    def setting(self, chain, owner):
        if chain[:1] == ("envs",) and len(chain) == 2:
            return explain.Setting(f"envs.{chain[1]}", kind="env-var", env=chain[1])
        return None


def test_a_local_assigned_again_after_the_site_is_traced_to_the_assignment_before_it():
    """9c19dd238b0734a7: `backend = envs.VLLM_FLASHINFER_ALLREDUCE_BACKEND`, the log line when
    it is not "auto", then `backend = "mnnvl"` further down: the line traces the variable.
    A line after the second assignment, or in a loop that rebinds it, traces none."""
    code = (
        "def resolve(group):\n"
        "    backend = envs.VLLM_FLASHINFER_ALLREDUCE_BACKEND\n"
        "    if backend != 'auto':\n"
        "        logger.info('Using flashinfer allreduce backend: %s', backend)\n"
        "        return backend\n"
        "    if group:\n"
        "        backend = 'mnnvl'\n"
        "    else:\n"
        "        backend = 'trtllm'\n"
        "    logger.info('Auto-selected backend: %s', backend)\n"
        "\n"
        "def loop(items):\n"
        "    mode = envs.VLLM_MODE\n"
        "    for item in items:\n"
        "        if mode != 'a':\n"
        "            logger.info('Mode: %s', mode)\n"
        "        mode = item\n"
    )
    found = derived_of(code, knowledge=_Envs())
    using = found["Using flashinfer allreduce backend: {backend}"]
    assert [f["env"] for f in using["flags"]] == ["VLLM_FLASHINFER_ALLREDUCE_BACKEND"]
    assert "flags" not in found["Auto-selected backend: {backend}"]
    assert "flags" not in found["Mode: {mode}"]


def test_a_parser_s_failure_caught_is_not_a_process_s():
    """What the runtime-failure explanation says to check (a process, a connection, a peer)
    does not fit a tool parser's or a grammar's failure on a value: those stay logged."""
    code = (
        "def extract(text, req):\n"
        "    try:\n"
        "        parse(text)\n"
        "    except Exception:\n"
        "        logger.exception('Error in extracting tool call from response %s', text)\n"
        "        logger.error('Failed to compile grammar for request %s', req)\n"
        "        logger.error('Error in Mooncake sender thread: %s', req)\n"
        "        logger.error('Failed to process trace file %s', req)\n"
    )
    found = derived_of(code)
    assert found["Error in extracting tool call from response {text}"]["category"] == "logged"
    assert found["Failed to compile grammar for request {req}"]["category"] == "logged"
    assert found["Error in Mooncake sender thread: {req}"]["category"] == "runtime-failure"
    assert found["Failed to process trace file {req}"]["category"] == "logged"  # a verb


def test_an_error_line_just_before_a_raise_reports_its_refusal():
    """280ea86440185ecd: LLM.__init__ logs "Failed to convert 'kv_transfer_config' dict"
    and at once raises ValueError("Invalid 'kv_transfer_config' provided"): the line takes
    the raise's category. A warning, or a line with other statements before the raise, not."""
    code = (
        "def init(kwargs):\n"
        "    try:\n"
        "        cfg = KVTransferConfig(**kwargs)\n"
        "    except ValidationError as e:\n"
        "        logger.error('Failed to convert the dict. Error: %s', e)\n"
        "        raise ValueError(f'Invalid kv_transfer_config provided: {e}') from e\n"
        "    if cfg.x:\n"
        "        logger.warning('Dropping x: %s', cfg.x)\n"
        "        raise ValueError('Invalid x')\n"
        "    if cfg.y:\n"
        "        logger.error('Dropping y: %s', cfg.y)\n"
        "        cleanup()\n"
        "        raise ValueError('Invalid y')\n"
    )
    found = derived_of(code)
    assert found["Invalid kv_transfer_config provided: {error}"]["category"] == "invalid-choice"
    assert found["Failed to convert the dict. Error: {error}"]["category"] == "invalid-choice"
    assert found["Dropping x: {x}"]["category"] == "logged"
    assert found["Dropping y: {y}"]["category"] == "logged"


def test_mismatched_in_a_placeholder_or_mismatches_avoided_say_nothing():
    """A placeholder named `{mismatched}` is not the message's word; a line that disables a
    feature "to avoid ... mismatches" reports a choice, not a failed check."""
    code = (
        "def f(cfg, mismatched):\n"
        "    if cfg.x:\n"
        "        raise ValueError(f'LiDAR requires the 128x1800 grid; got {mismatched}.')\n"
        "    logger.info('Radix cache is disabled to avoid prefix-cache mismatches.')\n"
    )
    found = derived_of(code)
    assert found["LiDAR requires the 128x1800 grid; got {mismatched}."]["category"] != "mismatch"
    assert found["Radix cache is disabled to avoid prefix-cache mismatches."]["category"] == (
        "logged"
    )


def test_a_log_line_takes_the_raise_s_category_only_where_its_words_say_it():
    """cc38893b67ffa66d: "Request failed with an internal error" then GenerationError
    ("Internal server error") under `finish_reason == "error"`: the raise's invalid-choice
    comes from the shape of its test alone, so the line does not take it."""
    code = (
        "def check(finish_reason, request_id):\n"
        "    if finish_reason == 'error':\n"
        "        logger.error('Request %s failed with an internal error', request_id)\n"
        "        raise GenerationError('Internal server error')\n"
    )
    found = derived_of(code)
    assert found["Internal server error"]["category"] == "invalid-choice"
    assert found["Request {request_id} failed with an internal error"]["category"] == "logged"

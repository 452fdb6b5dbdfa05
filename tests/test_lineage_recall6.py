"""Lineage recall, round 6 (issue 41): where the evidence agrees, link. A setting compared the
same way and named by both texts, the same comparison printing the same values, a fall-through
the check beside it covers, a setting the old text named now tested under a longer name, a line
reworded around the same values, an old text grown, a class moved with another file; and the
look-alike beside each rule (a check guarding something else) stays unlinked."""

from errorkb.sources import lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "pkg/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def log(message: str, function: str, path: str, guard: str = "") -> Site:
    return at(message, function, guard, exc="INFO", kind="log", level="info", path=path)


def succ(found: lineage.History, start: str) -> str | None:
    (lin,) = [lin for lin in found.lineages if lin.current.template.startswith(start)]
    if lin.superseded_by is None:
        return None
    while lin.superseded_by is not None:
        lin = lin.superseded_by
    return lin.current.template


def test_a_config_objects_prefix_says_nothing_of_the_value():
    atoms = lineage.guard_atoms
    assert atoms("server_args.x >= 0", holds=True) == atoms("cfg.x >= 0", holds=True)
    assert atoms("config.x > 1") == atoms("self.x > 1")


# The same comparison on a setting both texts name -------------------------------------------

SCHEDULER = at(
    "Invalid schedule_conservativeness",
    "Scheduler.__init__",
    "server_args.schedule_conservativeness >= 0",
    exc="AssertionError",
    kind="assert",
    path="sglang/managers/scheduler.py",
)
STAYS = at("stays", "Scheduler.other", path="sglang/managers/scheduler.py", line=99)


def test_a_bound_on_a_setting_both_texts_name_moved_to_the_arguments_took_over():
    new = at(
        "schedule_conservativeness must be non-negative",
        "check_server_args",
        "cfg.schedule_conservativeness >= 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/arg_groups/validation_hook.py",
    )
    found = lineage.build([("1", [SCHEDULER, STAYS]), ("2", [new, STAYS])])
    assert succ(found, "Invalid schedule") == new.template


def test_a_presence_test_of_a_value_both_texts_name_is_a_sibling():
    """`num_token_non_padded is not None` refused in another function of the file: the case
    now works there; the CPU path's own refusal is another check."""
    old = at(
        "num_token_non_padded is not yet supported in custom_routing_function",
        "select_experts",
        "num_token_non_padded is not None",
        path="sglang/moe/topk.py",
    )
    new = at(
        "num_token_non_padded is not supported for CPU fused topk",
        "fused_topk_cpu",
        "not num_token_non_padded is None",
        path="sglang/moe/topk.py",
        line=90,
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "num_token_non_padded is not yet") is None


def test_a_bound_the_old_assert_tested_beside_another_condition_is_another_check():
    """`max_loras_per_batch > 0 and (lora_paths is None or disable_radix_cache)`: the bound
    alone, asserted in the arguments' hook, is not the refusal of LoRA with radix attention."""
    old = at(
        "compatibility of lora and radix attention is in progress",
        "ServerArgs.check_lora_server_args",
        "self.max_loras_per_batch > 0 and (self.lora_paths is None or self.disable_radix_cache)",
        exc="AssertionError",
        kind="assert",
        path="sglang/server_args.py",
    )
    new = at(
        "max_loras_per_batch must be positive",
        "check_lora_server_args",
        "cfg.max_loras_per_batch > 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/arg_groups/lora_hook.py",
    )
    kept = at("stays", "ServerArgs.other", path="sglang/server_args.py", line=99)
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "compatibility of lora") is None
    feats = [lineage.Features.of(lineage.Wording(s.key, [s], "1", "1", 0, 0)) for s in (old, new)]
    assert lineage.guard_evidence(*feats) == "part"


# The same comparison printing the same values -----------------------------------------------

PROFILE = at(
    "Invalid profiler value of {profiler}",
    "Worker.profile",
    "not profiler_type == 'proton'",
    path="vllm/v1/worker/gpu_worker.py",
)
PROFILE_KEPT = at("stays", "Worker.other", path="vllm/v1/worker/gpu_worker.py", line=99)


def test_the_same_comparison_printing_the_same_value_took_over_whatever_it_raises():
    new = at(
        "Unknown profiler type: {profiler_type}",
        "create_worker_profiler",
        "profiler_type == 'proton'",
        exc="AssertionError",
        kind="assert",
        path="vllm/profiler/wrapper.py",
    )
    found = lineage.build([("1", [PROFILE, PROFILE_KEPT]), ("2", [new, PROFILE_KEPT])])
    assert succ(found, "Invalid profiler") == new.template


def test_the_same_comparison_printing_no_value_elsewhere_is_no_successor():
    new = at(
        "Proton needs triton installed",
        "create_worker_profiler",
        "not profiler_type == 'proton'",
        path="vllm/profiler/wrapper.py",
    )
    found = lineage.build([("1", [PROFILE, PROFILE_KEPT]), ("2", [new, PROFILE_KEPT])])
    assert succ(found, "Invalid profiler") is None


# A fall-through the check beside it covers ---------------------------------------------------

FALL = at(
    "Expected shard_id w1,w2 or w3 but got {shard_id}",
    "FusedMoE.weight_loader",
    "not shard_id == 'w2'",
    path="vllm/fused_moe/layer.py",
    line=249,
)


def test_a_fall_through_gone_leaves_the_check_beside_it_that_refuses_the_same_value():
    top = at(
        "shard_id must be ['w1','w2','w3'] but got {shard_id}.",
        "FusedMoE.weight_loader",
        "shard_id not in ('w1', 'w2', 'w3')",
        path="vllm/fused_moe/layer.py",
    )
    found = lineage.build([("1", [FALL, top]), ("2", [top])])
    assert succ(found, "Expected shard_id") == top.template


def test_a_check_beside_it_that_lets_the_value_through_covers_nothing():
    top = at(
        "shard_id must be ['w1','w3'] but got {shard_id}.",
        "FusedMoE.weight_loader",
        "shard_id not in ('w1', 'w3')",
        path="vllm/fused_moe/layer.py",
    )
    found = lineage.build([("1", [FALL, top]), ("2", [top])])
    assert succ(found, "Expected shard_id") is None


def test_covers_reads_constants_only():
    def feats(guard: str) -> lineage.Features:
        site = at("x {v}", "f", guard)
        return lineage.Features.of(lineage.Wording(site.key, [site], "1", "1", 0, 0))

    assert lineage.covers(feats("x != 'a'"), feats("x not in ('a', 'b')"))
    assert not lineage.covers(feats("x != 'a'"), feats("x not in ('a',)"))  # no more than it
    assert not lineage.covers(feats("x != y"), feats("x not in (y, z)"))  # names, not constants
    assert not lineage.covers(feats("x != 'a'"), feats("z not in ('a', 'b')"))


# A setting the old text named, tested by the new guard under a longer name ------------------

MOONCAKE = at(
    "The environment variable 'MOONCAKE_CONFIG_PATH' is not set.",
    "MooncakeStoreConfig.from_file",
    "file_path is None",
    path="sglang/mooncake_store.py",
)
MOONCAKE_KEPT = at("stays", "MooncakeStoreConfig.other", path="sglang/mooncake_store.py", line=99)


def _mooncake(guard: str) -> Site:
    return at(
        "Config file path not set. Please set {SGLANG_HICACHE_MOONCAKE_CONFIG_PATH_name}",
        "MooncakeStoreConfig.from_file",
        guard,
        exc="RuntimeError",
        path="sglang/mooncake_store.py",
        line=40,
    )


def test_the_setting_the_old_text_named_tested_in_its_function_took_over():
    new = _mooncake("not envs.SGLANG_HICACHE_MOONCAKE_CONFIG_PATH.is_set()")
    found = lineage.build([("1", [MOONCAKE, MOONCAKE_KEPT]), ("2", [new, MOONCAKE_KEPT])])
    assert succ(found, "The environment variable") == new.template


def test_another_setting_tested_in_its_function_took_over_nothing():
    new = _mooncake("not envs.SGLANG_HICACHE_MOONCAKE_MASTER.is_set()")
    found = lineage.build([("1", [MOONCAKE, MOONCAKE_KEPT]), ("2", [new, MOONCAKE_KEPT])])
    assert succ(found, "The environment variable") is None


def test_a_sibling_of_another_function_taken_by_another_leaves_its_own_functions_successor():
    """The same words about MOONCAKE_MASTER, in another method, went to the older check of
    those words: the one its own function gained still took over."""
    master = "Either the environment variable 'MOONCAKE_MASTER' or 'MOONCAKE_CLIENT' is not set."
    older = at(master.replace("Either the", "The"), "MooncakeStoreConfig.load_from_env")
    older = at(older.template, older.function, path="sglang/mooncake_store.py", line=70)
    sibling = at(master, "MooncakeStoreConfig.load_from_env", path="sglang/mooncake_store.py")
    new = _mooncake("not envs.SGLANG_HICACHE_MOONCAKE_CONFIG_PATH.is_set()")
    found = lineage.build(
        [("1", [MOONCAKE, older, MOONCAKE_KEPT]), ("2", [new, sibling, MOONCAKE_KEPT])]
    )
    assert succ(found, "The environment variable 'MOONCAKE_CONFIG") == new.template


# A line reworded around the same values ------------------------------------------------------


def test_a_line_of_many_values_of_a_file_gone_reworded_around_them_took_over():
    old = log(
        "Decode batch. #running-req: {num_running_reqs}, accept len: {spec_accept_length},"
        " gen throughput (token/s): {last_gen_throughput}, #queue-req: {len_waiting_queue}",
        "SchedulerMetricsMixin.log_decode_stats",
        "sglang/managers/scheduler_metrics_mixin.py",
    )
    new = log(
        "Decode batch{iter_msg}, #running-req: {num_running_reqs}, accept len:"
        " {spec_accept_length}, accept rate: {spec_accept_rate}, gen throughput (token/s):"
        " {last_gen_throughput}, #queue-req: {len_waiting_queue}, est. TFLOPS: {tflops}",
        "SchedulerMetricsReporter.report_decode_stats",
        "sglang/managers/metrics_reporter.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Decode batch.") == new.template


def test_one_value_a_file_gone_printed_says_too_little():
    """`{exception_traceback}` printed by the controller gone and by an API handler: two
    lines that print a traceback, not one line moved."""
    old = log(
        "Exception in ControllerSingle:\n{exception_traceback}",
        "start_controller_process",
        "sglang/managers/controller_single.py",
    )
    new = log("error: {exception_traceback}", "process_batch", "sglang/openai_api/adapter.py")
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Exception in") is None


def test_one_value_takes_over_only_in_its_own_function():
    old = log(
        "Use chat template for the OpenAI-compatible API server: {chat_template_arg}",
        "TemplateManager.load_chat_template",
        "sglang/managers/template_manager.py",
    )
    kept = log("stays", "Other.f", "sglang/managers/template_manager.py")
    new = log(
        "Loading chat template from argument: {chat_template_arg}",
        "TemplateManager._load_explicit_chat_template",
        "sglang/managers/template_manager.py",
    )
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "Use chat template") is None  # another method: `{hf_processor_type}`
    # printed by two checks of one class is no proof
    new = log(new.template, old.function, old.path)
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "Use chat template") == new.template


def test_one_value_printed_in_other_words_in_its_file_is_no_successor():
    old = log(
        "Could not fetch prefill parallel info for bootstrap_addr: {bootstrap_addr}",
        "CommonKVReceiver.__init__",
        "sglang/disaggregation/conn.py",
    )
    new = log(
        "PD retract rebootstrap could not resolve the prefill /generate URL from bootstrap info"
        " (rid={rid} bootstrap_room={bootstrap_room} bootstrap_addr={bootstrap_addr}).",
        "CommonKVManager.submit_prefill_recompute",
        "sglang/disaggregation/conn.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Could not fetch") is None


# An old text grown; a class moved with another file ------------------------------------------


def test_an_old_text_grown_took_over():
    old = at(
        "Invalid forward mode: {forward_mode}",
        "ModelRunner._forward_raw",
        "not forward_batch.forward_mode.is_idle()",
        path="sglang/model_runner.py",
    )
    kept = at("stays", "ModelRunner.other", path="sglang/model_runner.py", line=99)
    new = at("Invalid forward mode for eager runner: {mode}", "EagerRunner.execute", path="e.py")
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "Invalid forward mode:") == new.template
    # words of the old text left out: another check
    other = at("Invalid forward batch for eager runner: {mode}", "EagerRunner.execute", path="e.py")
    found = lineage.build([("1", [old, kept]), ("2", [other, kept])])
    assert succ(found, "Invalid forward mode:") is None


def test_a_class_moved_to_another_file_prints_its_words_from_another_method():
    old = log("[gpu_id={gpu_id}] Init nccl begin.", "ModelRunner.__init__", "sglang/c/mr.py")
    new = log("Init nccl begin.", "ModelRunner.init_torch_distributed", "sglang/x/mr.py")
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "[gpu_id") == new.template
    # ... not while its old file still prints: a sibling of the class elsewhere
    kept = log("stays", "Other.f", "sglang/c/mr.py")
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "[gpu_id") is None


def test_a_value_of_another_name_in_place_of_a_file_gone_is_no_successor():
    """QoQ's divisibility by 32 gone with its file, and MoVA's width by TP: `output_size`
    is not `output_size_per_partition`."""
    old = at(
        "Weight output_size_per_partition = {output_size_per_partition} is not divisible by 32.",
        "QoQLinearMethod.create_weights",
        "output_size_per_partition % 32 != 0",
        path="sglang/quantization/qoq.py",
    )
    new = at(
        "MoVA value width {output_size} is not divisible by TP={tp_size}",
        "RoutedValueExperts.__init__",
        "output_size % tp_size",
        path="sglang/layers/mova.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Weight output") is None


def test_a_setting_tested_by_a_namesake_method_of_another_class_took_over_nothing():
    """`--attention-backend` named by the triton backend's refusal, tested by EAGLE's own
    `init_attention_backend`: another check of another class."""
    old = at(
        "Window attention is not supported in the triton attention backend. Please use"
        " `--attention-backend flashinfer`.",
        "ModelRunner.init_attention_backend",
        "self.sliding_window_size is None",
        path="sglang/model_runner.py",
    )
    kept = at("stays", "ModelRunner.other", path="sglang/model_runner.py", line=99)
    new = at(
        "EAGLE is not supported in attention backend {attention_backend}",
        "EAGLEWorker.init_attention_backend",
        "not self.server_args.attention_backend == 'flashmla'",
        path="sglang/eagle_worker.py",
    )
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert succ(found, "Window attention") is None


def test_a_class_moved_with_its_file_checking_another_setting_is_no_successor():
    old = at(
        "prompt_lookup_min={prompt_lookup_min} must be > 0",
        "SpeculativeConfig.__post_init__",
        "self.prompt_lookup_min < 1",
        path="vllm/config/__init__.py",
    )
    new = at(
        "suffix_decoding_max_cached_requests={suffix_decoding_max_cached_requests} must be >= 0",
        "SpeculativeConfig._validate_suffix_decoding",
        "self.suffix_decoding_max_cached_requests < 0",
        path="vllm/config/speculative.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "prompt_lookup_min") is None


def _lineage(template: str, path: str, line: int) -> lineage.Lineage:
    site = Site("ValueError", template, path, line, "check")
    wording = lineage.Wording(("ValueError", template), [site], "0.1", "0.2", 0, 1)
    return lineage.Lineage([wording], 0)


def test_the_fuller_wording_of_one_raise_takes_over_an_old_check():
    """vLLM's KV-cache check prints "the estimated maximum model length is N" only when N > 0:
    two templates at one line. The old V0 wording goes to the fuller one, though the shorter
    scores higher (and alone passes the bar to take over); another line is another check."""
    old = _lineage("max seq len {a} is larger than {b}", "old.py", 1)
    short = _lineage("needed {x} but available {y}. Try less.", "kv.py", 77)
    full = _lineage("needed {x} but available {y}. The estimate is {z}. Try less.", "kv.py", 77)
    other = _lineage("needed {x} elsewhere", "other.py", 5)
    pairs = [(0.9, old, short, "s"), (0.85, old, other, "o"), (0.8, old, full, "f")]
    fullest = lineage._fullest_of_one_raise(pairs)
    assert fullest[(id(old), ("kv.py", 77))] is full
    assert fullest[(id(old), ("other.py", 5))] is other

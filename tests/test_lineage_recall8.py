"""Lineage recall, round 8 (issue 41): evidence from both releases' code. A value renamed in
the words and the guard alike, out of a file gone, or tested by the new name's last word; a
method moved to another class making the very same test; a check folded into the one check its
function gained, both printing and testing the same value; a second wording of a function gone
beside the one merged into its new line; a name made a printed value. And a grouping error
fixed: a wording printed side by side with another for releases is another check, not an
older wording of it (vLLM's "best_of must be ..." was a variant of "min_tokens must be ...").
Beside each rule, a look-alike that guards something else stays unlinked."""

from errorkb.sources import lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "pkg/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def lin(found: lineage.History, start: str) -> lineage.Lineage:
    exact = [x for x in found.lineages if x.current.template == start]
    (one,) = exact or [x for x in found.lineages if x.current.template.startswith(start)]
    return one


def succ(found: lineage.History, start: str) -> str | None:
    one = lin(found, start)
    if one.superseded_by is None:
        return None
    while one.superseded_by is not None:
        one = one.superseded_by
    return one.current.template


# Printed side by side for releases: two checks -------------------------------------------

BEST_OF = at(
    "best_of must be greater than or equal to n, got n={n} and best_of={best_of}.",
    "SamplingParams._verify_args",
    "self.best_of < self.n",
    path="vllm/sampling_params.py",
)
MIN_TOKENS = at(
    "min_tokens must be greater than or equal to 0, got {min_tokens}.",
    "SamplingParams._verify_args",
    "self.min_tokens < 0",
    path="vllm/sampling_params.py",
    line=40,
)


def test_a_wording_printed_beside_another_for_releases_is_not_its_older_wording():
    """vLLM 0.12.0 dropped best_of; min_tokens' check, printed beside it since 0.4.3, did
    not take it over and holds none of its words."""
    found = lineage.build(
        [
            ("1", [BEST_OF, ELSEWHERE]),
            ("2", [BEST_OF, MIN_TOKENS, ELSEWHERE]),
            ("3", [MIN_TOKENS, ELSEWHERE]),
        ]
    )
    assert not lin(found, "best_of").absorbed
    assert succ(found, "best_of") is None
    assert [w.template for w in lin(found, "min_tokens").wordings] == [MIN_TOKENS.template]


def test_a_copy_printed_beside_it_under_the_same_test_is_still_the_same_check():
    """Two executors printed the same refusal; the copy left is the same check."""
    one = at(
        "Every node should have a unique IP address. Got {n} nodes with node ids {ids}",
        "RayExecutor._init_workers",
        "len(node_ips) != len(set(node_ips))",
        exc="RuntimeError",
        path="vllm/executor/ray_gpu_executor.py",
    )
    two = at(
        "Every node should have a unique IP address. Got {n} nodes with node ids {ids}.",
        "RayDistributedExecutor._init_workers",
        "len(node_ips) != len(set(node_ips))",
        exc="RuntimeError",
        path="vllm/executor/ray_distributed_executor.py",
    )
    found = lineage.build([("1", [one, ELSEWHERE]), ("2", [one, two, ELSEWHERE]), ("3", [two])])
    assert lin(found, one.template).absorbed


# A value renamed in the words and the guard alike ---------------------------------------

DURATIONS = at(
    "bootstrap_duration={bootstrap_duration} < 0 or queue_duration={queue_duration} < 0",
    "TimeStats.__str__",
    "bootstrap_duration >= 0 and queue_duration >= 0",
    exc="AssertionError",
    kind="assert",
    path="sglang/srt/metrics/collector.py",
)


def test_a_value_renamed_in_words_and_guard_out_of_a_file_gone_took_over():
    """SGLang 0.5.23: the prefill durations' assert moved to observability/, its bootstrap
    interval renamed bootstrap_queue_duration in the text and in the test."""
    new = at(
        "bootstrap_queue_duration={bootstrap_queue_duration} < 0 or queue_duration="
        "{queue_duration} < 0",
        "SchedulerReqTimeStats.convert_to_duration",
        "bootstrap_queue_duration >= 0 and queue_duration >= 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/observability/req_time_stats.py",
    )
    found = lineage.build([("1", [DURATIONS, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "bootstrap_duration") == new.template


def test_a_renamed_value_in_another_file_while_the_old_file_prints_on_took_over_nothing():
    stays = at("other", "TimeStats.other", path="sglang/srt/metrics/collector.py", line=90)
    new = at(
        "bootstrap_queue_duration={bootstrap_queue_duration} < 0 or queue_duration="
        "{queue_duration} < 0",
        "SchedulerReqTimeStats.convert_to_duration",
        "bootstrap_queue_duration >= 0 and queue_duration >= 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/observability/req_time_stats.py",
    )
    found = lineage.build([("1", [DURATIONS, stays]), ("2", [new, stays])])
    assert succ(found, "bootstrap_duration") is None


HEURISTIC = at(
    "Unknown schedule_heuristic: {schedule_heuristic}",
    "ScheduleHeuristic.get_priority_queue",
    "not self.schedule_heuristic == 'dfs-weight'",
    path="sglang/srt/managers/controller/schedule_heuristic.py",
)


def test_a_value_tested_by_the_new_names_last_word_took_over():
    """SGLang 0.2.15: schedule_heuristic became schedule_policy, held as `self.policy`."""
    new = at(
        "Unknown schedule_policy: {policy}",
        "PolicyScheduler.calc_priority",
        "not self.policy == 'dfs-weight'",
        path="sglang/srt/managers/policy_scheduler.py",
    )
    found = lineage.build([("1", [HEURISTIC, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Unknown schedule_heuristic") == new.template


def test_a_name_swapped_over_another_test_took_over_nothing():
    new = at(
        "Unknown schedule_policy: {policy}",
        "PolicyScheduler.calc_priority",
        "not self.policy == 'lpm'",
        path="sglang/srt/managers/policy_scheduler.py",
    )
    found = lineage.build([("1", [HEURISTIC, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Unknown schedule_heuristic") is None


# A method moved to another class, making the very same test -------------------------------

DP_INIT = at(
    "dp_size must be 1 for init parameter update group",
    "TokenizerManager.init_weights_update_group",
    "self.server_args.dp_size == 1",
    exc="AssertionError",
    kind="assert",
    path="sglang/srt/managers/tokenizer_manager.py",
)
STAYS = at("other", "TokenizerManager.other", path="sglang/srt/managers/tokenizer_manager.py")


def test_a_method_moved_to_another_class_making_the_same_test_took_over():
    """SGLang 0.5.23: TokenizerControlMixin.init_weights_update_group asserts the same
    `dp_size == 1`, read through `get_parallel()`, in other words."""
    new = at(
        "data-parallel replicas are not supported for update weights from distributed",
        "TokenizerControlMixin.init_weights_update_group",
        "get_parallel().dp_size == 1",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/managers/tokenizer_control_mixin.py",
    )
    found = lineage.build([("1", [DP_INIT, STAYS]), ("2", [new, STAYS])])
    assert succ(found, "dp_size must be 1 for init") == new.template


def test_a_sibling_method_making_the_same_test_took_over_nothing():
    """The mixin's destroy_weights_update_group makes the same test: another method."""
    new = at(
        "data-parallel replicas are not supported for destroy parameter update group",
        "TokenizerControlMixin.destroy_weights_update_group",
        "get_parallel().dp_size == 1",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/managers/tokenizer_control_mixin.py",
    )
    found = lineage.build([("1", [DP_INIT, STAYS]), ("2", [new, STAYS])])
    assert succ(found, "dp_size must be 1 for init") is None


# Folded into the one check its function gained --------------------------------------------

SYM = at(
    "Marlin does not support is_sym = {is_sym}. Only sym = {GPTQ_MARLIN_SUPPORTED_SYM} are"
    " supported.",
    "GPTQMarlinConfig.__init__",
    "self.is_sym not in GPTQ_MARLIN_SUPPORTED_SYM",
    path="vllm/quantization/gptq_marlin.py",
)
MARLIN_STAYS = at("other", "GPTQMarlinConfig.other", path="vllm/quantization/gptq_marlin.py")


def test_a_check_folded_into_the_one_check_its_function_gained_took_over():
    """vLLM 0.5.5: the sym check joined the bits check in one lookup of (bits, sym)."""
    new = at(
        "Unsupported quantization config: bits={weight_bits}, sym={is_sym}",
        "GPTQMarlinConfig.__init__",
        "(weight_bits, is_sym) not in self.TYPE_MAP",
        path="vllm/quantization/gptq_marlin.py",
        line=48,
    )
    found = lineage.build([("1", [SYM, MARLIN_STAYS]), ("2", [new, MARLIN_STAYS])])
    assert succ(found, "Marlin does not support is_sym") == new.template


def test_a_new_check_printing_the_value_but_testing_another_took_over_nothing():
    new = at(
        "Unsupported quantization config: bits={weight_bits}, sym={is_sym}",
        "GPTQMarlinConfig.__init__",
        "weight_bits not in self.BITS",
        path="vllm/quantization/gptq_marlin.py",
        line=48,
    )
    found = lineage.build([("1", [SYM, MARLIN_STAYS]), ("2", [new, MARLIN_STAYS])])
    assert succ(found, "Marlin does not support is_sym") is None


def test_one_of_two_checks_its_function_gained_is_no_fold():
    new = at(
        "Unsupported quantization config: bits={weight_bits}, sym={is_sym}",
        "GPTQMarlinConfig.__init__",
        "(weight_bits, is_sym) not in self.TYPE_MAP",
        path="vllm/quantization/gptq_marlin.py",
        line=48,
    )
    also = at(
        "desc_act={desc_act} needs g_idx",
        "GPTQMarlinConfig.__init__",
        "self.desc_act and (not has_g_idx)",
        path="vllm/quantization/gptq_marlin.py",
        line=60,
    )
    found = lineage.build([("1", [SYM, MARLIN_STAYS]), ("2", [new, also, MARLIN_STAYS])])
    assert succ(found, "Marlin does not support is_sym") is None


# A second wording of its function gone beside the one merged ------------------------------


def test_a_second_wording_gone_beside_the_one_merged_took_over_by_it():
    """vLLM 0.19.1: `deserialize_compile_artifacts` printed two lines under one test; both
    went, and one line, the first grown by its counts, took their place."""
    path = "vllm/compilation/caching.py"
    fn = "VllmSerializableFunction.deserialize_compile_artifacts"
    guard = "envs.VLLM_USE_MEGA_AOT_ARTIFACT"
    first = at(
        "reconstructed serializable fn from standalone compile artifacts",
        fn,
        guard,
        exc="INFO",
        kind="log",
        level="info",
        path=path,
    )
    second = at(
        "reconstructed serializable fn from standalone artifacts",
        fn,
        guard,
        exc="INFO",
        kind="log",
        level="info",
        path=path,
        line=20,
    )
    new = at(
        "reconstructed serializable fn from standalone compile artifacts."
        " num_artifacts={num_artifacts} num_submods={num_submods}",
        fn,
        guard,
        exc="INFO",
        kind="log",
        level="info",
        path=path,
        line=30,
    )
    found = lineage.build([("1", [first, second, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert {succ(found, first.template), succ(found, second.template)} == {new.template}
    assert sum(lin(found, t).absorbed for t in (first.template, second.template)) == 1


# A name made a printed value ----------------------------------------------------------------

BLOCKS = at(
    "# GPU blocks: {num_gpu_blocks}, # CPU blocks: {num_cpu_blocks}",
    "DistributedGPUExecutor.initialize_cache",
    exc="INFO",
    kind="log",
    level="info",
    path="vllm/executor/distributed_gpu_executor.py",
)


def test_a_name_made_a_printed_value_is_the_same_line():
    """vLLM 0.7.3: the executors' block counts logged once by their base, the device's
    name printed where "GPU" was."""
    new = at(
        "# {device_name} blocks: {num_gpu_blocks}, # CPU blocks: {num_cpu_blocks}",
        "ExecutorBase.initialize_cache",
        exc="INFO",
        kind="log",
        level="info",
        path="vllm/executor/executor_base.py",
    )
    found = lineage.build([("1", [BLOCKS, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "# GPU blocks") == new.template


def test_a_name_swapped_for_another_name_stays_a_sibling():
    new = at(
        "# XPU blocks: {num_gpu_blocks}, # CPU blocks: {num_cpu_blocks}",
        "XPUExecutor.report",
        exc="INFO",
        kind="log",
        level="info",
        path="vllm/executor/xpu_executor.py",
    )
    found = lineage.build([("1", [BLOCKS, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "# GPU blocks") is None


def test_a_second_wording_under_another_test_took_over_nothing():
    """vLLM 0.8.5: "For Gemma 2, we downcast ..." went beside "For HPU, we cast ...", whose
    new wording took the HPU one's place: another condition, another check."""
    path, fn = "vllm/config.py", "_get_and_verify_dtype"
    gemma = at(
        "For Gemma 2, we downcast float32 to bfloat16 instead of float16 by default.",
        fn,
        "config.model_type == 'gemma2'",
        exc="INFO",
        kind="log",
        level="info",
        path=path,
    )
    hpu = at(
        "For HPU, we cast models to bfloat16 instead ofusing float16 by default.",
        fn,
        "current_platform.is_hpu()",
        exc="INFO",
        kind="log",
        level="info",
        path=path,
        line=20,
    )
    new = at(
        "For HPU, we cast models to bfloat16 instead of using float16 by default.",
        fn,
        "current_platform.is_hpu()",
        exc="INFO",
        kind="log",
        level="info",
        path=path,
        line=30,
    )
    found = lineage.build([("1", [gemma, hpu, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert lin(found, hpu.template).absorbed
    assert succ(found, "For Gemma 2") is None


def test_a_method_of_a_name_many_classes_print_making_the_same_test_took_over_nothing():
    """`execute_model` is printed by many runners: the same `num_steps > 1` test in another
    runner's is a sibling (EmbeddingModelRunner's and HPUModelRunner's)."""
    runners = [
        at(f"runner {i} failed", f"Runner{i}.execute_model", path=f"vllm/worker/r{i}.py")
        for i in range(5)
    ]
    old = at(
        "EmbeddingModelRunner does not support multi-step execution.",
        "EmbeddingModelRunner.execute_model",
        "num_steps > 1",
        path="vllm/worker/embedding_model_runner.py",
    )
    new = at(
        "num_steps > 1 is not supported in HPUModelRunner",
        "HPUModelRunner.execute_model",
        "num_steps > 1",
        path="vllm/worker/hpu_model_runner.py",
    )
    found = lineage.build([("1", [old, *runners]), ("2", [new, *runners])])
    assert succ(found, "EmbeddingModelRunner") is None

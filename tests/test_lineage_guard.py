"""Lineage across files (issue 41): the guard itself is the evidence. A check moved into a
shared helper, into another class or file, or reworded around a renamed value, is followed to
the check that took over when the two test the same comparisons (read from the guard's syntax,
`self.`/`args.` dropped, polarity set aside), the same comparison on values spelled alike, or
sit in a method of the same name; the look-alikes beside each (printed alongside, a swapped
name the guard does not follow) are not."""

from dataclasses import replace as dataclass_replace

import yaml

from errorkb.content.load import load_content
from errorkb.sources import chronicle, lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "vllm/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def gone(found: lineage.History, start: str) -> lineage.Lineage:
    (lin,) = [lin for lin in found.lineages if lin.current.template.startswith(start)]
    return lin


def test_guard_atoms_read_one_comparison_whatever_its_spelling():
    atoms = lineage.guard_atoms
    assert atoms("self.max_running_requests > 0") == atoms("args.max_running_requests > 0")
    assert atoms("self.model_runner.max_running_requests > 0") == atoms("max_running_requests > 0")
    assert atoms("a > b") == atoms("b < a") == atoms("not a <= b") == frozenset({">|a|b"})
    assert atoms("x is not None and args.y is None") == frozenset({"is not|None|x", "is|None|y"})
    assert atoms("use_mla") == frozenset({"use_mla"}) != atoms("not use_mla")
    assert atoms("not a Python expression (") == frozenset()
    assert lineage.telling_atoms(atoms("use_mla and a > b")) == frozenset({">|a|b"})


def test_an_asserts_test_reads_as_the_condition_it_refuses():
    atoms = lineage.guard_atoms
    assert atoms("head_dim_v % alignment == 0", holds=True) == atoms("head_dim_v % alignment != 0")
    # each part of the test failing is a way to fail
    assert atoms("a and b > 0", holds=True) == frozenset({"!a", ">=|0|b"})


def test_the_two_branches_of_a_test_are_not_the_same_test():
    def feats(guard: str) -> lineage.Features:
        site = at("x", "f", guard)
        return lineage.Features.of(lineage.Wording(site.key, [site], "1", "1", 0, 0))

    assert lineage.guard_evidence(feats("x is None"), feats("x is not None")) == ""
    assert lineage.guard_evidence(feats("x is None"), feats("x is None")) == "same"
    assert lineage.guard_evidence(feats("x is None and y > 1"), feats("x is None")) == "part"


# A check moved into a shared helper ------------------------------------------------------

INKLING = at(
    "Inkling tool call args must be a JSON object",
    "_args_value_span",
    "raw[value_start] != '{'",
    path="vllm/parser/inkling.py",
)
HELPER = at(
    "member {key} must be a JSON object",
    "extract_json_member_object",
    "raw[value_start] != '{'",
    path="vllm/parser/utils.py",
)


def test_a_check_moved_into_a_shared_helper_under_the_same_guard_took_over():
    found = lineage.build([("1", [INKLING, ELSEWHERE]), ("2", [HELPER, ELSEWHERE])])
    old = gone(found, "Inkling")
    assert old.superseded_by is not None and old.superseded_by.current.template == HELPER.template


def test_the_same_guard_printed_alongside_all_along_took_over_nothing():
    found = lineage.build([("1", [INKLING, HELPER]), ("2", [HELPER])])
    old = gone(found, "Inkling")
    assert old.superseded_by is None and not old.absorbed


def test_the_same_guard_on_other_words_elsewhere_without_values_or_words_alike_is_no_successor():
    other = at("Unknown shard", "load", "raw[value_start] != '{'", path="vllm/other.py")
    found = lineage.build([("1", [INKLING, ELSEWHERE]), ("2", [other, ELSEWHERE])])
    assert gone(found, "Inkling").superseded_by is None


# The same comparison on values spelled alike -----------------------------------------------


def test_a_prefix_dropped_from_the_values_compared_is_the_same_comparison():
    old = at(
        "ngram_prompt_lookup_min={a} cannot be larger than ngram_prompt_lookup_max={b}",
        "SpeculativeConfig.maybe_create_spec_config",
        "ngram_prompt_lookup_min > ngram_prompt_lookup_max",
        path="vllm/config.py",
    )
    new = at(
        "prompt_lookup_min={a} must be <= prompt_lookup_max={b}",
        "SpeculativeConfig.__post_init__",
        "self.prompt_lookup_min > self.prompt_lookup_max",
        path="vllm/config.py",
        line=90,
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "ngram_prompt").superseded_by is not None


def test_a_check_of_a_file_gone_moves_with_its_comparison_and_its_value():
    """V0's executor gone, ParallelConfig refuses the same world size (another exception,
    words, file): `world_size > cuda_device_count`, then `cuda_device_count_stateless() <
    self.world_size`, both printing the world size."""
    old = at(
        "please ensure that world_size ({world_size}) is less than max local gpu count"
        " ({cuda_device_count})",
        "MultiprocessingDistributedExecutor._check_cuda",
        "world_size > cuda_device_count",
        exc="RuntimeError",
        path="vllm/executor/mp_distributed_executor.py",
    )
    new = at(
        "Tensor parallel size ({world_size}) cannot be larger than the number of available"
        " GPUs ({gpu_count}).",
        "ParallelConfig.__post_init__",
        "current_platform.is_cuda() and cuda_device_count_stateless() < self.world_size",
        path="vllm/config/parallel.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "please ensure").superseded_by is not None
    # ... not when the old file still prints: a sibling check elsewhere
    kept = at("still here", "MultiprocessingDistributedExecutor.other", path=old.path, line=99)
    found = lineage.build([("1", [old, kept, ELSEWHERE]), ("2", [new, kept, ELSEWHERE])])
    assert gone(found, "please ensure").superseded_by is None


def test_values_alike_only_by_a_short_word_are_not_alike():
    assert not lineage._same_name("size", "block_size")
    assert lineage._same_name("prompt_lookup_min", "ngram_prompt_lookup_min")
    assert lineage._same_name("cuda_device_count()", "cuda_device_count_stateless()")
    assert not lineage._same_name("num_blocks", "max_num_blocks_used")  # inside another
    assert lineage._alike(">|a_value|b_value", ">|a_value|b_value")
    assert not lineage._alike(">|max_len|0", ">|ngram_max_len|0")  # a constant: not two values
    # one value's name grown, the other's shrunk: two other values, not one renamed
    assert not lineage._alike("!=|block_size|remote_block_size", "!=|block_size|kernel_block_size")
    assert not lineage._alike("not in|group_size|QoQ_SIZES", "not in|group_size|SIZES")


# A method moved to another class -----------------------------------------------------------


def test_a_method_moved_to_another_class_in_much_the_same_words_took_over():
    old = at(
        "The processed dummy data has a total of {num_placeholders} placeholder tokens for the"
        " '{modality}' modality, which is not the expected {max_tokens} tokens.",
        "BaseMultiModalProcessor.get_dummy_data",
        "num_placeholders != max_tokens",
        exc="WARNING",
        kind="log",
        path="vllm/multimodal/processing.py",
    )
    new = at(
        "The processed dummy data has a total of {total} placeholder tokens, which is not the"
        " expected {expected} tokens.",
        "MultiModalProfiler.get_dummy_data",
        "total != expected",
        exc="AssertionError",
        kind="assert",
        path="vllm/multimodal/profiling.py",
    )
    kept = at("still printed", "BaseMultiModalProcessor.apply", path=old.path, line=99)
    found = lineage.build([("1", [old, kept]), ("2", [new, kept])])
    assert gone(found, "The processed dummy data has a total of {num").superseded_by is not None


# A setting renamed in the words and the guard alike ----------------------------------------


def test_a_setting_renamed_in_its_words_and_its_guard_took_over():
    old = at(
        "tpu_commons not found, using vLLM's TpuCommunicator",
        "",
        "not USE_TPU_COMMONS",
        exc="INFO",
        kind="log",
        path="vllm/tpu_communicator.py",
    )
    new = at(
        "tpu_inference not found, using vLLM's TpuCommunicator",
        "",
        "not USE_TPU_INFERENCE",
        exc="INFO",
        kind="log",
        path="vllm/tpu_communicator.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "tpu_commons").superseded_by is not None


def test_a_swapped_name_the_guard_does_not_follow_is_a_sibling():
    old = at(
        "tpu_commons not found, using vLLM's TpuCommunicator",
        "",
        "not USE_TPU_COMMONS",
        exc="INFO",
        kind="log",
        path="vllm/tpu_communicator.py",
    )
    new = at(
        "tpu_inference not found, using vLLM's TpuCommunicator",
        "",
        "not HAS_SOMETHING_ELSE",
        exc="INFO",
        kind="log",
        path="vllm/tpu_communicator.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "tpu_commons").superseded_by is None


# Tidy judges from the scans where the records keep no guard --------------------------------


def _write(kb, rid: str, message: str, where: Site, versions: tuple, **extra) -> None:
    data = {
        "id": rid,
        "project": "demo",
        "exception": where.exception,
        "message": message,
        "versions": {"first": versions[0], "last": versions[1]},
        "source": {"path": where.path, "line": where.line, "function": where.function},
        "analysis": {"method": "extracted", "ref": "v1.0"},
        **extra,
    }
    text = "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
    path = kb / "content" / "errors" / "demo" / f"{rid}.yaml"
    path.write_text(text + yaml.safe_dump(data, sort_keys=False))


def _tidy_helper(kb, scans) -> dict:
    old, new = "00000000000000b1", "00000000000000b2"
    _write(
        kb,
        old,
        INKLING.template,
        INKLING,
        ("1.0", "1.0"),
        status="removed",
        superseded_by=new,
    )
    _write(kb, new, HELPER.template, HELPER, ("2.0", "2.0"))
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0"]\n')
    chronicle.tidy(kb, load_content(kb), "demo", scans=scans)
    return yaml.safe_load((kb / "content" / "errors" / "demo" / f"{old}.yaml").read_text())


def test_tidy_keeps_a_link_the_scans_guards_bear_out(kb):
    releases = {"1.0": [INKLING, ELSEWHERE], "2.0": [HELPER, ELSEWHERE]}
    assert _tidy_helper(kb, releases.get).get("superseded_by") == "00000000000000b2"


def test_tidy_drops_it_without_the_scans(kb):
    assert "superseded_by" not in _tidy_helper(kb, None)


# What the guard must say ------------------------------------------------------------------


def test_a_test_split_in_its_function_took_over_in_other_words():
    """`speculative_model is not None and num_speculative_tokens is None` refused with
    "Expected both ...", then `num_speculative_tokens is None` (the outer test moved up) with
    "num_speculative_tokens must be provided with speculative_model unless ..."."""
    where = "SpeculativeConfig.maybe_create_spec_config"
    old = at(
        "Expected both speculative_model and num_speculative_tokens to be provided, but found"
        " speculative_model={a} and num_speculative_tokens={b}.",
        where,
        "speculative_model is not None and num_speculative_tokens is None",
    )
    new = at(
        "num_speculative_tokens must be provided with speculative_model unless the draft"
        " model config contains an n_predict parameter.",
        where,
        "num_speculative_tokens is None",
        line=40,
    )
    also = at("Another check", where, "x > 1", line=50)
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, also, ELSEWHERE])])
    assert gone(found, "Expected both").superseded_by is not None


def test_a_flag_tested_against_a_constant_tells_nothing_across_files():
    """`prompt_adapter_request is not None` in another file, in words much alike: a sibling
    refusal for another endpoint, not the same check moved."""
    old = at(
        "Prompt adapter is not supported for tokenization",
        "OpenAIServingTokenization.create_tokenize",
        "prompt_adapter_request is not None",
        path="vllm/serving_tokenization.py",
    )
    new = at(
        "Prompt adapter is not supported for pooling models",
        "OpenAIServingPooling.create_pooling",
        "prompt_adapter_request is not None",
        path="vllm/serving_pooling.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "Prompt adapter is not supported for tok").superseded_by is None
    assert not lineage.specific("is|None|prompt_adapter_request")
    assert lineage.specific("=|'{'|raw[value_start]")
    assert lineage.specific("<|cuda_device_count|world_size")


def test_a_twin_of_its_class_making_the_very_same_test_took_over():
    """Two asserts of `max_running_requests > 0` side by side, one misworded; the misworded
    one gone, the other (moved to another method) is the check that still refuses it."""
    old = at(
        "max_queued_requests is zero. We need to be at least 1 to schedule a request.",
        "TpModelWorker.__init__",
        "self.max_running_requests > 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/managers/tp_worker.py",
    )
    twin = at(
        "max_running_request is zero",
        "TpModelWorker.__init__",
        "self.max_running_requests > 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/managers/tp_worker.py",
        line=9,
    )
    moved = at(
        "max_running_request is zero",
        "TpModelWorker.alloc_memory_pool",
        "self.model_runner.max_running_requests > 0",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/managers/tp_worker.py",
        line=90,
    )
    found = lineage.build([("1", [old, twin, ELSEWHERE]), ("2", [moved, ELSEWHERE])])
    was = gone(found, "max_queued")
    assert was.superseded_by is not None
    assert was.superseded_by.current.template == "max_running_request is zero"


def test_the_very_same_guard_in_its_function_took_over_in_other_words():
    """A log line under `use_mla` gone, a refusal under `use_mla` appeared in its function:
    the branch now refuses what it used to log."""
    where = ("CpuPlatform.get_attn_backend_cls", "use_mla")
    old = at("Using CPU MLA backend.", *where, exc="INFO", kind="log", path="vllm/cpu.py")
    new = at("MLA is not supported on CPU.", *where, exc="NotImplementedError", path="vllm/cpu.py")
    other = at(
        "Using Torch SDPA backend.", where[0], "", exc="INFO", kind="log", path="vllm/cpu.py"
    )
    found = lineage.build([("1", [old, other]), ("2", [new, other])])
    assert gone(found, "Using CPU MLA").superseded_by is not None
    # ... not under another guard
    elsewhere = at("MLA is not supported on CPU.", where[0], "use_sparse", path="vllm/cpu.py")
    found = lineage.build([("1", [old, other]), ("2", [elsewhere, other])])
    assert gone(found, "Using CPU MLA").superseded_by is None


def _memory(cls: str, path: str, line: int = 10) -> Site:
    return at(
        "Error in memory profiling. Initial free memory {init}, current free memory {free}."
        " This happens when the GPU memory was not properly cleaned up.",
        f"{cls}.determine_available_memory",
        "self.init_gpu_memory > free_gpu_memory",
        exc="AssertionError",
        kind="assert",
        path=path,
        line=line,
    )


def test_a_method_a_subclass_no_longer_has_is_its_bases():
    """XPUWorker dropped its own determine_available_memory: it runs Worker's, whose
    assert says much the same; XPUWorker itself still prints."""
    old = _memory("XPUWorker", "vllm/xpu_worker.py")
    base = at(
        "Error in memory profiling. Initial free memory {free_memory} GiB, current free memory"
        " {free} GiB. This happens when other processes sharing the container release memory.",
        "Worker.determine_available_memory",
        "self.init_snapshot.free_memory >= free_gpu_memory",
        exc="AssertionError",
        kind="assert",
        path="vllm/gpu_worker.py",
    )
    kept = at("XPU stays", "XPUWorker.init_device", path="vllm/xpu_worker.py", line=50)
    found = lineage.build([("1", [old, base, kept]), ("2", [base, kept])])
    was = gone(found, "Error in memory profiling. Initial free memory {init}")
    assert was.superseded_by is not None and was.superseded_by.current.site.path.endswith(
        "gpu_worker.py"
    )
    # a sibling class (not named as its base) is no base
    other = dataclass_replace(base, function="HPUWorker.determine_available_memory")
    found = lineage.build([("1", [old, other, kept]), ("2", [other, kept])])
    assert (
        gone(found, "Error in memory profiling. Initial free memory {init}").superseded_by is None
    )


def test_tidy_judges_a_link_to_the_end_of_a_chain_through_its_first_link(kb):
    """History links a check gone to the check printed today, through the removed one that
    took over first: the scans judge the first link (the helper of release 2.0), not the
    check of 3.0 the chain ends on."""
    old, first, last = "00000000000000c1", "00000000000000c2", "00000000000000c3"
    today = at("member {key} is not an object", "parse_member", path="vllm/json.py")
    _write(kb, old, INKLING.template, INKLING, ("1.0", "1.0"), status="removed", superseded_by=last)
    _write(kb, first, HELPER.template, HELPER, ("2.0", "2.0"), status="removed", superseded_by=last)
    _write(kb, last, today.template, today, ("3.0", "3.0"))
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0", "3.0"]\n')
    releases = {"1.0": [INKLING, ELSEWHERE], "2.0": [HELPER, ELSEWHERE], "3.0": [today, ELSEWHERE]}
    chronicle.tidy(kb, load_content(kb), "demo", scans=releases.get)
    data = yaml.safe_load((kb / "content" / "errors" / "demo" / f"{old}.yaml").read_text())
    assert data.get("superseded_by") == last

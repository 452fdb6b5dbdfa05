"""The derived condition tested on a user's values (api.case_tests, answer._tests): which part
fails, what value of the setting it names passes, the nearest passing values of a divisibility,
why nothing is computed; and try.js's testsAnswer says the same, word for word (parity)."""

import json
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from errorkb.answer import _tests, answer, fmt
from errorkb.content import template
from errorkb.site import api
from tests.conftest import REPO

MAX_LEN = {
    "name": "max_model_len",
    "kind": "engine-arg",
    "field": "model_config.max_model_len",
    "flag": "--max-model-len",
}
TP = {"name": "tp_size", "kind": "server-arg", "field": "server_args.tp_size", "flag": "--tp-size"}


def record(message: str, condition: str, flags=(), variants=()) -> SimpleNamespace:
    derived = {"ref": "v1", "condition": condition, "flags": list(flags)}
    data = {"message": message, "variants": list(variants)}
    return SimpleNamespace(
        derived=derived,
        data=data,
        message=message,
        messages=[message, *[v if isinstance(v, str) else v["message"] for v in variants]],
    )


def doc_of(rec) -> dict:
    return {"derived": rec.derived, "computed": {"derived": {"tests": api.case_tests(rec)}}}


KV = record(
    "The model's max seq len ({max_model_len}) is larger than the KV cache ({max_seq_len}).",
    "not is_attention_free and max_model_len > max_seq_len",
    [MAX_LEN],
)


def test_a_failing_comparison_names_the_setting_and_the_value_that_passes():
    assert api.case_tests(KV) == [
        [
            {
                "left": "max_model_len",
                "op": ">",
                "right": "max_seq_len",
                "set": {"left": "--max-model-len {}"},
            }
        ]
    ]
    said = answer(doc_of(KV), {"max_model_len": "8192", "max_seq_len": "6048"})
    assert said["computed"]
    assert said["lines"] == [
        "With your values the check fails: max_model_len = 8192 is greater than "
        "max_seq_len = 6048.",
        "To pass it, set --max-model-len to at most 6048.",
    ]


def test_values_that_pass_the_condition_say_so_and_nothing_else():
    said = answer(doc_of(KV), {"max_model_len": "4096", "max_seq_len": "6048"})
    assert said["computed"] and len(said["lines"]) == 1
    assert said["lines"][0].startswith("With your values this check passes: max_model_len = 4096")


def test_without_a_setting_both_sides_bound_strictly_for_integers():
    rec = record(
        "The input ({input_token_num} tokens) is longer than the context ({context_len} tokens).",
        "input_token_num >= self.context_len and (not self.allow_auto_truncate)",
    )
    said = answer(doc_of(rec), {"input_token_num": "61709", "context_len": "40960"})
    assert (
        said["lines"][1]
        == "It passes with input_token_num at most 40959 or context_len at least 61710."
    )


def test_a_unit_suffix_matches_the_code_name_and_floats_bound_openly():
    rec = record(
        "Free memory ({free_memory_gib}/{total_memory_gib} GiB) is less than desired "
        "({gpu_memory_utilization}, {requested_memory_gib} GiB).",
        "external_weight_memory <= 0 and init_snapshot.free_memory < requested_memory",
    )
    assert api.case_tests(rec) == [
        [{"left": "free_memory_gib", "op": "<", "right": "requested_memory_gib"}]
    ]
    said = answer(doc_of(rec), {"free_memory_gib": "19.77", "requested_memory_gib": "19.84"})
    assert "free_memory_gib = 19.77 is less than requested_memory_gib = 19.84" in said["lines"][0]
    # A constant in the code's unit (bytes) is never compared with a value in GiB.
    assert api.case_tests(record("Free {free_memory_gib} GiB", "free_memory < 1024")) == []


UTIL = {
    "name": "gpu_memory_utilization",
    "kind": "engine-arg",
    "field": "cache_config.gpu_memory_utilization",
    "flag": "--gpu-memory-utilization",
}


def test_a_setting_a_side_scales_by_in_the_users_values_gets_the_value_that_passes():
    rec = record(
        "Free memory ({free_memory_gib}/{total_memory_gib} GiB) is less than desired "
        "({gpu_memory_utilization}, {requested_memory_gib} GiB).",
        "init_snapshot.free_memory < requested_memory",
        [UTIL],
    )
    values = {
        "free_memory_gib": "19.77",
        "total_memory_gib": "22.05",
        "gpu_memory_utilization": "0.9",
        "requested_memory_gib": "19.84",
    }
    said = answer(doc_of(rec), values)
    assert said["lines"][1].startswith(
        "To pass it, set --gpu-memory-utilization to at most 0.89 (requested_memory_gib is "
        "gpu_memory_utilization × total_memory_gib in your values)."
    )
    # Values where the side is no such multiple: no value of the setting is claimed.
    said = answer(doc_of(rec), {**values, "requested_memory_gib": "12"})
    assert "gpu-memory-utilization" not in " ".join(said["lines"])
    # 0.22 GiB free of 30.3: no utilization passes ("at most 0" was said): none is claimed,
    # the free memory the check needs is said instead
    full = {"free_memory_gib": "0.22", "total_memory_gib": "30.3", "requested_memory_gib": "21.21"}
    said = answer(doc_of(rec), {**full, "gpu_memory_utilization": "0.7"})
    assert "gpu-memory-utilization" not in " ".join(said["lines"]) and said["computed"]
    assert "free_memory_gib at least 21.21" in said["lines"][1]


def test_an_except_branch_condition_still_yields_its_comparisons():
    rec = record(
        "Attempted to assign {num_actual_tokens} tokens to {num_expected_tokens} placeholders",
        "len(embeddings) != 0 and RuntimeError was raised"
        " and (num_actual_tokens != num_expected_tokens)",
    )
    said = answer(doc_of(rec), {"num_actual_tokens": "10", "num_expected_tokens": "12"})
    assert said["computed"] and "10 differs from num_expected_tokens = 12" in said["lines"][0]


def test_divisibility_offers_the_setting_never_a_divisor_the_model_fixes():
    split = record("{heads} heads, TP {tp_size}", "heads % tp_size != 0", [TP])
    said = answer(doc_of(split), {"heads": "40", "tp_size": "3"})
    assert said["lines"][1] == (
        "To pass it, set --tp-size 2 or --tp-size 4 (within one 8-GPU node, assumed)."
    )
    fixed = record("{size} by {block_n}", "size % block_n != 0")  # no setting: a verdict only
    said = answer(doc_of(fixed), {"size": "576", "block_n": "128"})
    assert said["computed"] and len(said["lines"]) == 1 and "96" not in said["lines"][0]
    assert said["why_not"] == "no setting the check names changes these values"


def test_an_old_wordings_own_condition_answers_its_values():
    rec = record(
        "Context is {max_total_tokens}; prompt {token_count}.",
        "max_input_tokens is not None and len(tokens) > max_input_tokens",
        variants=[
            {
                "message": "Context is {max_len}; asked {asked}.",
                "derived": {"ref": "v0", "condition": "asked > max_len"},
            }
        ],
    )
    said = answer(doc_of(rec), {"max_len": "100", "asked": "120"})
    assert (
        said["computed"]
        and said["lines"][1] == "It passes with asked at most 100 or max_len at least 120."
    )


DTYPE = {"name": "--dtype", "kind": "engine-arg", "field": "model_config.dtype", "flag": "--dtype"}
TRUNC = {
    "name": "allow_auto_truncate",
    "kind": "server-arg",
    "field": "server_args.allow_auto_truncate",
    "flag": "--allow-auto-truncate",
}


def test_a_setting_compared_with_a_constant_is_a_way_to_pass_and_capability_is_tested():
    rec = record(
        "Bfloat16 needs capability 8.0. Your {gpu_name} GPU does not have it.",
        "dtype == torch.bfloat16 and (not cls.has_device_capability(80))",
        [DTYPE],
        variants=[
            "Your {gpu_name} GPU has compute capability "
            "{compute_capability_0}.{compute_capability_1}."
        ],
    )
    major_minor = {"major": "compute_capability_0", "minor": "compute_capability_1"}
    assert api.case_tests(rec) == [
        [
            {"setting": "--dtype {}", "op": "==", "value": "bfloat16"},
            {"left": major_minor, "op": "<", "right": 80},
        ]
    ]
    said = answer(
        doc_of(rec), {"gpu_name": "T4", "compute_capability_0": "7", "compute_capability_1": "5"}
    )
    assert said["lines"] == [
        "With your values the check fails: compute capability 7.5 is less than 8.0.",
        "To pass it, set --dtype to anything but bfloat16.",
    ]
    said = answer(doc_of(rec), {"gpu_name": "T4"})  # the condition alone: still what passes
    assert said["computed"] and said["lines"][0] == "It is raised only when --dtype is bfloat16."
    rec = record(
        "The input ({n} tokens) is longer than ({context_len} tokens).",
        "n >= self.context_len and (not self.allow_auto_truncate)",
        [TRUNC],
    )
    said = answer(doc_of(rec), {"n": "5", "context_len": "4"})
    assert said["lines"][1] == (
        "To pass it, turn --allow-auto-truncate on. It also passes with n at most 3 "
        "or context_len at least 6."
    )


def test_another_value_is_no_constant_and_a_json_key_is_written_whole():
    rec = record(
        "Tokenizer {tokenizer} for mii.",
        "args.backend == 'mii' and args.tokenizer != args.model",
        [{"name": "tokenizer", "kind": "engine-arg", "field": "tokenizer", "flag": "--tokenizer"}],
    )
    assert api.case_tests(rec) == []  # `args.model` is the model's name, not a constant
    rec = record("Block of {size} bytes is too small.", "block.size < size")
    assert api.case_tests(rec) == []  # two values named alike: the message prints one of them
    spec = {
        "name": "prompt_lookup_min",
        "kind": "engine-arg",
        "field": "prompt_lookup_min",
        "flag": "--speculative-config",
        "key": "prompt_lookup_min",
    }
    rec = record(
        "prompt_lookup_min={prompt_lookup_min} must be >= 1", "self.prompt_lookup_min < 1", [spec]
    )
    said = answer(doc_of(rec), {"prompt_lookup_min": "0"})
    assert said["lines"][1] == (
        "To pass it, set --speculative-config '{\"prompt_lookup_min\": …}' to at least 1."
    )


def test_where_nothing_is_computed_the_answer_says_why_in_one_line():
    rec = record("Model {arch} is not supported.", "arch not in registry")
    said = answer(doc_of(rec), {"arch": "Foo"})
    assert not said["computed"] and len(said["lines"]) == 1
    assert said["lines"][0].startswith("No answer computed from these values: its condition")
    said = answer({"derived": {"ref": "v", "unconditional": True}}, {"x": "1"})
    assert "whatever the values" in said["lines"][0]
    said = answer(doc_of(KV), {"max_model_len": "auto", "max_seq_len": "6048"})
    assert (
        said["why_not"]
        == "the values its condition compares settle nothing in your paste (one missing, not "
        "numbers, or equal once rounded)"
    )
    said = answer(doc_of(KV), {"other": "1"})  # an old wording that prints none of them
    assert (
        said["why_not"] == "the wording you pasted prints none of the values its condition compares"
    )


def test_a_removed_record_answers_with_its_successors_tests():
    old = {"derived": {"ref": "v0", "unconditional": True}, "computed": {}}
    said = answer(old, {"max_model_len": "8192", "max_seq_len": "6048"}, doc_of(KV))
    assert said["computed"] and "--max-model-len to at most 6048" in said["lines"][1]


QUANT = {
    "name": "quantization",
    "kind": "engine-arg",
    "field": "model_config.quantization",
    "flag": "--quantization",
}


def test_a_value_and_the_collection_the_message_prints_are_a_membership_test():
    """`quantization not in supported_quantization` with both printed: the values decide,
    and what passes is a name of the printed list (a dict printed by its keys is what `in`
    tests); a list cut short (a paste that ends inside it) decides nothing."""
    rec = record(
        "Unknown quantization method: {quantization}. Must be one of {supported_quantization}.",
        "self.quantization is not None and self.quantization not in supported_quantization",
        [QUANT],
    )
    assert api.case_tests(rec) == [
        [
            {
                "left": "quantization",
                "op": "not in",
                "right": "supported_quantization",
                "set": {"left": "--quantization {}"},
            }
        ]
    ]
    listed = "['awq', 'squeezellm']"
    said = answer(doc_of(rec), {"quantization": "gptq", "supported_quantization": listed})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: quantization = gptq is not among "
        "supported_quantization (awq, squeezellm).",
        "To pass it, set --quantization to one of awq, squeezellm.",
    ]
    said = answer(doc_of(rec), {"quantization": "awq", "supported_quantization": listed})
    assert said["lines"][0].startswith("With your values this check passes")
    cut = answer(doc_of(rec), {"quantization": "gptq", "supported_quantization": listed[:-1]})
    assert not cut["computed"] and cut["why_not"] == (
        "supported_quantization in your paste is cut short (or not a list of names): what is "
        "missing may hold the value"
    )
    keys = record(  # the record's name of `{model_arch_name_to_cls.keys()}`
        "Unsupported architectures: {model_arch}. Supported list: {model_arch_name_to_cls_keys}",
        "model_arch not in model_arch_name_to_cls",
    )
    tested = {"left": "model_arch", "op": "not in", "right": "model_arch_name_to_cls_keys"}
    assert api.case_tests(keys) == [[tested]]
    values = {"model_arch": "X", "model_arch_name_to_cls_keys": "dict_keys(['A', 'B'])"}
    assert answer(doc_of(keys), values)["lines"] == [
        "With your values the check fails: model_arch = X is not among "
        "model_arch_name_to_cls_keys (A, B).",
        "It passes with model_arch one of A, B.",
    ]


def test_two_printed_collections_test_whether_an_item_of_one_is_in_the_other():
    """`not any(arch in all_supported_archs for arch in architectures)`, both printed: the
    values decide where both lists are whole; the verdict alone (the code's own list is what
    it takes), and a list cut short decides nothing and says so."""
    rec = record(
        "Model architectures {architectures} are not supported for now. Supported "
        "architectures: {all_supported_archs}",
        "not any((arch in all_supported_archs for arch in architectures))",
    )
    tested = {"left": "architectures", "op": "none in", "right": "all_supported_archs"}
    assert api.case_tests(rec) == [[tested]]
    listed = "dict_keys(['LlamaForCausalLM', 'Qwen2ForCausalLM'])"
    said = answer(doc_of(rec), {"architectures": "['Qwen3']", "all_supported_archs": listed})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: architectures (Qwen3) has no item "
        "among all_supported_archs (LlamaForCausalLM, Qwen2ForCausalLM)."
    ]
    values = {"architectures": "['Qwen2ForCausalLM']", "all_supported_archs": listed}
    said = answer(doc_of(rec), values)
    assert said["lines"][0].startswith("With your values this check passes")
    cut = answer(doc_of(rec), {"architectures": "['X']", "all_supported_archs": listed[:-3]})
    assert not cut["computed"]
    assert cut["why_not"].startswith("all_supported_archs in your paste is cut")
    alone = answer(doc_of(rec), {"architectures": "['X']"})
    assert not alone["computed"]
    # without `not`: raised when one is among them; a dict's keys by the record's `_keys` name
    some = record(
        "Models {names} are registered already: {registry_keys}",
        "any(name in registry for name in names)",
    )
    assert api.case_tests(some) == [[{"left": "names", "op": "some in", "right": "registry_keys"}]]


def test_a_collection_the_code_holds_in_a_name_tests_the_printed_value_and_the_setting():
    """derived.lookups (`not detector_class` where detector_class = TABLE.get(parser)) and
    derived.collections (`size not in supported`): membership tests of the printed value,
    and of a setting the message does not print, what passes."""
    parser = {
        "name": "tool_call_parser",
        "kind": "server-arg",
        "field": "server_args.tool_call_parser",
        "flag": "--tool-call-parser",
    }
    rec = record("Unsupported tool_call_parser: {tool_call_parser}", "not detector_class", [parser])
    table = {"detector_class": {"key": "tool_call_parser", "in": ["llama3", "qwen"]}}
    rec.derived["lookups"] = table
    tested = {
        "left": "tool_call_parser",
        "op": "not in",
        "right": ["llama3", "qwen"],
        "set": {"left": "--tool-call-parser {}"},
    }
    assert api.case_tests(rec) == [[tested]]
    assert answer(doc_of(rec), {"tool_call_parser": "None"})["lines"] == [
        "With your values the check fails: tool_call_parser = None is not among llama3, qwen.",
        "To pass it, set --tool-call-parser to one of llama3, qwen.",
    ]
    sizes = record("Head size {head_size} is not supported.", "head_size not in supported")
    sizes.derived["collections"] = {"supported": [64, 128]}
    assert api.case_tests(sizes) == [[{"left": "head_size", "op": "not in", "right": [64, 128]}]]
    assert answer(doc_of(sizes), {"head_size": "72"})["computed"]
    unprinted = record("This parser is not supported.", "not detector_class", [parser])
    unprinted.derived["lookups"] = table
    assert api.case_tests(unprinted) == [
        [{"setting": "--tool-call-parser {}", "op": "not in", "value": ["llama3", "qwen"]}]
    ]


def test_a_printed_value_compared_with_a_text_is_tested_as_printed():
    """`task_option == 'score'`, `type_ != 'float'` (printed as `{type}`): a membership of
    one text, said as `is`; what passes is that text, or anything but it."""
    rec = record(
        "This model does not support the '{task_option}' task. Supported tasks: {supported_tasks}",
        "task_option != 'draft' and task_option == 'score' and (not runner_support['pooling'])",
    )
    assert api.case_tests(rec) == [
        [
            {"left": "task_option", "op": "not in", "right": ["draft"]},
            {"left": "task_option", "op": "in", "right": ["score"]},
        ]
    ]
    said = answer(doc_of(rec), {"task_option": "embedding", "supported_tasks": "{'generate'}"})
    assert said["computed"] and said["lines"] == [
        "With your values this check passes: task_option = embedding is score is false. The "
        "paste may hold other values, or another check printed the message."
    ]
    said = answer(doc_of(rec), {"task_option": "'score'"})
    assert said["lines"] == [
        "With your values the check fails: task_option = score is not draft; task_option = "
        "score is score.",
        "It passes with task_option draft.",
    ]
    kv = record("Only float is supported, got type={type}", "type_ != 'float'")
    kv.derived["printed"] = {"type_": "type"}
    assert api.case_tests(kv) == [[{"left": "type", "op": "not in", "right": ["float"]}]]


def test_alternatives_of_printed_values_are_tested_one_holding_is_enough():
    """`type_ != 'float' or num_bits != 8` (vLLM's KV cache scheme) and range checks
    (`x < 0 or x > 1`): raised when one alternative holds; the verdict says those that do,
    or all when none does; nothing when one is undecided and none holds."""
    rec = record(
        "Supported is num_bits=8, type=float, however received num_bits={num_bits}, type={type}",
        "kv_cache_scheme is not None and (type_ != 'float' or num_bits != 8)",
    )
    rec.derived["printed"] = {"type_": "type"}
    alternatives = [
        {"left": "type", "op": "not in", "right": ["float"]},
        {"left": "num_bits", "op": "!=", "right": 8},
    ]
    assert api.case_tests(rec) == [[{"op": "or", "any": alternatives}]]
    said = answer(doc_of(rec), {"num_bits": "4", "type": "float"})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: num_bits = 4 differs from 8."
    ]
    said = answer(doc_of(rec), {"num_bits": "8", "type": "float"})
    assert said["lines"][0] == (
        "With your values this check passes: type = float is not float or num_bits = 8 "
        "differs from 8 is false. The paste may hold other values, or another check printed "
        "the message."
    )
    assert not answer(doc_of(rec), {"num_bits": "8"})["computed"]  # type undecided


def test_a_collection_the_code_spells_out_is_a_membership_test_of_the_printed_value():
    """`head_size not in (64, 128, 256)`: the code's own collection (numbers compared as
    numbers; a torch dtype as torch prints it, never offered as what to write)."""
    rec = record(
        "Unknown head_size {head_size}.", "head_size <= 256 and head_size not in (64, 128, 256)"
    )
    assert api.case_tests(rec) == [
        [
            {"left": "head_size", "op": "<=", "right": 256},
            {"left": "head_size", "op": "not in", "right": [64, 128, 256]},
        ]
    ]
    assert answer(doc_of(rec), {"head_size": "72"})["lines"] == [
        "With your values the check fails: head_size = 72 is at most 256; head_size = 72 is "
        "not among 64, 128, 256.",
        "It passes with head_size at least 257.",
    ]
    said = answer(doc_of(rec), {"head_size": "128.0"})["lines"][0]
    assert said.startswith("With your values this check passes: head_size = 128.0 is not among")
    dtype = record(
        "Unsupported dtype {dtype}.",
        "dtype not in (torch.float16, torch.bfloat16)",
        [{"name": "dtype", "kind": "engine-arg", "field": "model_config.dtype", "flag": "--dtype"}],
    )
    assert api.case_tests(dtype) == [
        [{"left": "dtype", "op": "not in", "right": ["torch.float16", "torch.bfloat16"]}]
    ]
    assert answer(doc_of(dtype), {"dtype": "torch.float32"})["lines"][1] == (
        "It passes with dtype one of torch.float16, torch.bfloat16."
    )


def test_a_long_conditions_comparisons_of_printed_values_are_tested():
    """Of a condition too long to quote, the derived block keeps the comparisons of values
    the message prints (`compares`), and an expression it prints under another name
    (`printed`): vLLM's quantization capability check."""
    from errorkb.sources import explain
    from errorkb.sources import extract as ex

    code = (
        "def f(model_config, quant_config, platform, a_long_setting, another_setting):\n"
        "    if model_config.quantization is not None and a_long_setting and another_setting:\n"
        "        capability = platform.get_device_capability().to_int()\n"
        "        if capability < quant_config.get_min_capability():\n"
        "            raise ValueError(\n"
        "                f'The method {model_config.quantization} is not supported. '\n"
        "                f'Minimum capability: {quant_config.get_min_capability()}. '\n"
        "                f'Current capability: {capability}.')\n"
    )
    (site,) = ex.scan_file("m.py", code.encode(), knowledge=explain.Knowledge()).sites
    assert "condition" not in site.derived
    assert site.derived["compares"] == ["capability < quant_config.get_min_capability()"]
    assert site.derived["printed"] == {"quant_config.get_min_capability()": "min_capability"}
    rec = record(site.template, "")
    rec.derived = site.derived
    assert api.case_tests(rec) == [[{"left": "capability", "op": "<", "right": "min_capability"}]]
    said = answer(doc_of(rec), {"quantization": "fp8", "min_capability": "89", "capability": "86"})
    assert said["lines"] == [
        "With your values the check fails: capability = 86 is less than min_capability = 89.",
        "It passes with capability at least 89 or min_capability at most 86.",
    ]


def test_a_printed_value_alone_is_tested_for_emptiness():
    """SGLang's `unrecognized arguments` (condition `remaining`): raised when the arguments
    nobody parsed, as printed, are not empty; `not x` when they are. An object's own repr
    says nothing of its truth."""
    rec = record("error: unrecognized arguments: {remaining}", "remaining")
    assert api.case_tests(rec) == [[{"left": "remaining", "op": "truthy"}]]
    said = answer(doc_of(rec), {"remaining": "--enable-reasoning"})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: remaining = --enable-reasoning is not empty.",
        "It passes with remaining empty.",
    ]
    assert answer(doc_of(rec), {"remaining": "[]"})["lines"][0].startswith(
        "With your values this check passes"
    )
    assert not answer(doc_of(rec), {"remaining": "<Foo object at 0x7f>"})["computed"]
    negated = record("No groups: {groups}", "not groups")
    assert api.case_tests(negated) == [[{"left": "groups", "op": "falsy"}]]
    assert answer(doc_of(negated), {"groups": "{}"})["computed"]


def test_printed_versions_are_compared_as_versions():
    """SGLang's sgl-kernel check (pkg_version.parse(installed_version) <
    pkg_version.parse(min_version)): decided where the releases differ, or both read alike;
    one release with different tags (rc, post, dev) decides nothing."""
    rec = record(
        "{pkg} is installed with version {installed_version}, which is less than the minimum "
        "required version {min_version}.",
        "not _should_skip_kernel_pkg_version_check(pkg) and "
        "pkg_version.parse(installed_version) < pkg_version.parse(min_version)",
    )
    assert api.case_tests(rec) == [
        [{"left": "installed_version", "op": "v<", "right": "min_version"}]
    ]
    said = answer(doc_of(rec), {"installed_version": "0.0.9.post2", "min_version": "0.1.1"})
    assert said["lines"] == [
        "With your values the check fails: installed_version = 0.0.9.post2 is less than "
        "min_version = 0.1.1.",
        "It passes with installed_version at least 0.1.1 or min_version at most 0.0.9.post2.",
    ]
    same = answer(doc_of(rec), {"installed_version": "0.1.1", "min_version": "0.1.1.0"})
    assert same["lines"][0].startswith("With your values this check passes")
    assert not answer(doc_of(rec), {"installed_version": "0.1.1rc1", "min_version": "0.1.1"})[
        "computed"
    ]
    newer = answer(doc_of(rec), {"installed_version": "0.10.0", "min_version": "0.9.2"})
    assert newer["lines"][0].startswith("With your values this check passes")


def test_values_equal_as_printed_with_decimals_decide_no_order():
    """vLLM's memory profiling assert (init_free_memory >= free_gpu_memory) pasted with both
    printed as 30.3 GiB: rounded, the paste does not say which was larger."""
    rec = record(
        "Initial free memory {init_free_memory} GiB, current free memory {free_gpu_memory} GiB.",
        "init_free_memory < free_gpu_memory",
    )
    said = answer(doc_of(rec), {"init_free_memory": "30.3", "free_gpu_memory": "30.3"})
    assert not said["computed"] and "equal once rounded" in said["why_not"]
    said = answer(doc_of(rec), {"init_free_memory": "82.94", "free_gpu_memory": "90.17"})
    assert said["lines"][0] == (
        "With your values the check fails: init_free_memory = 82.94 is less than "
        "free_gpu_memory = 90.17."
    )


def test_two_printed_values_that_are_not_numbers_compare_as_printed():
    rec = record(
        "Quantization method in the model config ({quant_method}) does not match the "
        "`quantization` argument ({quantization}).",
        "quant_cfg is not None and self.quantization is not None "
        "and (self.quantization != quant_method)",
        [QUANT],
    )
    said = answer(doc_of(rec), {"quant_method": "fp8", "quantization": "gguf"})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: quantization = gguf differs from quant_method = fp8.",
        "To pass it, set --quantization to fp8.",
    ]
    said = answer(doc_of(rec), {"quant_method": "'fp8'", "quantization": "fp8"})
    assert said["lines"][0].startswith("With your values this check passes")


FREE = (
    "Free memory on device {device_} ({free_memory_gib}/{total_memory_gib} GiB) on startup is "
    "less than desired GPU memory utilization ({gpu_memory_utilization}, "
    "{requested_memory_gib} GiB). Decrease GPU memory utilization."
)
FREE_OLD = (
    "Free memory on device ({GiB}/{GiB_2} GiB) on startup is less than desired GPU memory "
    "utilization ({gpu_memory_utilization}, {GiB_3} GiB). Decrease GPU memory utilization."
)


def test_an_older_wordings_placeholders_map_by_their_place_in_both_messages():
    assert template.aligned(FREE_OLD, FREE) == {
        "GiB": "free_memory_gib",
        "GiB_2": "total_memory_gib",
        "GiB_3": "requested_memory_gib",
    }
    # no shared text beside it, a name placed twice, a name the new wording prints: nothing
    assert template.aligned("Rank {a} hung", "Rank {r} failed") == {"a": "r"}
    assert template.aligned("It hung: {a}", "It failed: {r}") == {}
    assert template.aligned("x ({a}) y ({a})", "x ({b}) y ({c})") == {}
    assert template.aligned("x ({b}) y", "x ({a}) y {b}") == {}


def test_a_name_two_older_wordings_use_for_different_things_maps_to_nothing():
    """vLLM's prompt length check: {token_num} is the prompt's tokens in one older wording
    (placed where today's {token_count} stands) and prompt plus completion in another
    (placed nowhere): a paste may be of either, so it is not read as token_count."""
    now = "The limit is {max_total_tokens}. However, your prompt has {token_count} input tokens."
    rec = record(
        now,
        "len(tokens) > max_input_tokens",
        variants=[
            "The limit is {max_model_len}. However, your prompt has {token_num} input tokens.",
            "The limit is {max_model_len}. However, you requested {token_num} tokens "
            "({input_len} in the messages, {max_tokens} in the completion).",
        ],
    )
    assert api.wording_renames(rec) == {"max_model_len": "max_total_tokens"}
    alone = record(now, "len(tokens) > max_input_tokens", variants=[rec.messages[1]])
    assert api.wording_renames(alone) == {
        "max_model_len": "max_total_tokens",
        "token_num": "token_count",
    }


def test_a_paste_of_an_older_wording_runs_the_tests_through_its_renames():
    """vLLM's free memory check (8781d26106e06c95): a paste of the 0.9-0.13 wording names its
    values GiB, GiB_2, GiB_3; its own condition and today's compare free_memory and
    requested_memory, which the older wording prints in the same places."""
    rec = record(
        FREE,
        "external_weight_memory <= 0 and init_snapshot.free_memory < requested_memory",
        [{**MAX_LEN, "name": "gpu_memory_utilization", "flag": "--gpu-memory-utilization"}],
        [FREE_OLD],
    )
    assert api.wording_renames(rec) == {
        "GiB": "free_memory_gib",
        "GiB_2": "total_memory_gib",
        "GiB_3": "requested_memory_gib",
    }
    doc = doc_of(rec)
    doc["computed"]["derived"]["renames"] = api.wording_renames(rec)
    values = {"GiB": "31.44", "GiB_2": "47.38", "gpu_memory_utilization": "0.95", "GiB_3": "45.01"}
    said = answer(doc, values)
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: free_memory_gib = 31.44 is less than "
        "requested_memory_gib = 45.01.",
        "To pass it, set --gpu-memory-utilization to at most 0.66 (requested_memory_gib is "
        "gpu_memory_utilization × total_memory_gib in your values). It also passes with "
        "free_memory_gib at least 45.01 or requested_memory_gib at most 31.44.",
    ]
    del doc["computed"]["derived"]["renames"]
    assert not answer(doc, values)["computed"]


RANK_LOW = {"left": "r", "op": "<", "right": 0}
RANK_HIGH = {"left": "r", "op": ">=", "right": "n", "set": {"right": "--dp-size {}"}}
SEQ_LOW = {"left": "x", "op": "<", "right": 1, "set": {"left": "--x {}"}}
SEQ_HIGH = {"left": "x", "op": ">", "right": 8, "set": {"left": "--x {}"}}


def test_a_range_says_the_value_of_its_setting_that_passes():
    """`dp_rank < 0 or dp_rank >= dp_size`: the alternative that holds is made false by the
    setting it compares with (was: the verdict alone); one no setting decides keeps the
    verdict alone (a partial change would mislead)."""
    said = _tests([[{"op": "or", "any": [RANK_LOW, RANK_HIGH]}]], {"r": "4", "n": "4"})
    assert said["verdict"] == "With your values the check fails: r = 4 is at least n = 4."
    assert said["change"] == "To pass it, set --dp-size to at least 5."
    said = _tests([[{"op": "or", "any": [SEQ_LOW, SEQ_HIGH]}]], {"x": "12"})
    assert said["change"] == "To pass it, set --x to at most 8."
    bare = {**RANK_HIGH, "set": {}}
    said = _tests([[{"op": "or", "any": [RANK_LOW, bare]}]], {"r": "4", "n": "4"})
    assert "change" not in said


# Parity: try.js's testsAnswer on the same tests and values.
CASES = [
    (
        [[{"left": "a", "op": ">", "right": "b", "set": {"left": "--a {}"}}]],
        {"a": "8192", "b": "6048"},
    ),
    ([[{"left": "a", "op": ">=", "right": "b"}]], {"a": "61709", "b": "40960"}),
    ([[{"left": "a", "op": "<", "right": "b"}]], {"a": "19.77", "b": "19.84"}),
    ([[{"left": "a", "op": "<", "right": "b"}]], {"a": "30.3", "b": "30.3"}),  # a tie, rounded
    ([[{"left": "a", "op": "<", "right": "b"}]], {"a": "30", "b": "30"}),
    (
        [[{"left": "a", "op": "<=", "right": "b", "set": {"right": "VLLM_B={}"}}]],
        {"a": "0.5", "b": "0.75"},
    ),
    ([[{"left": "a", "op": "<", "right": 1, "set": {"left": '"max_tokens": {}'}}]], {"a": "-186"}),
    ([[{"left": "a", "op": "!=", "right": "b"}]], {"a": "10", "b": "12"}),
    ([[{"left": "a", "op": "==", "right": "b", "set": {"left": "--a {}"}}]], {"a": "3", "b": "3"}),
    (
        [[{"left": "h", "op": "%", "right": "t", "set": {"right": "--tp-size {}"}}]],
        {"h": "40", "t": "3"},
    ),
    (
        [[{"left": "h", "op": "%", "right": "t", "set": {"right": "--tp-size {}"}}]],
        {"h": "40", "t": "16", "gpus_per_node": "4"},
    ),
    (
        [[{"left": "n", "op": "%", "right": "m", "set": {"left": "--n {}"}}]],
        {"n": "100", "m": "16"},
    ),
    ([[{"left": "n", "op": "%", "right": "m"}]], {"n": "576", "m": "128"}),
    ([[{"left": "n", "op": "%", "right": "m"}]], {"n": "512", "m": "128"}),
    (
        [[{"left": "x", "op": ">", "right": "y"}], [{"left": "a", "op": ">", "right": "b"}]],
        {"a": "2", "b": "1"},
    ),
    (
        [[{"left": "a", "op": ">", "right": "b"}, {"left": "c", "op": ">", "right": 0}]],
        {"a": "2", "b": "1", "c": "5"},
    ),
    ([[{"left": "a", "op": ">", "right": "b"}]], {"a": "big", "b": "1"}),
    ([[{"left": "a", "op": ">", "right": "b"}]], {"a": "1234567.5", "b": "1"}),
    (
        [
            [
                {"setting": "--dtype {}", "op": "==", "value": "bfloat16"},
                {"left": {"major": "c0", "minor": "c1"}, "op": "<", "right": 80},
            ]
        ],
        {"c0": "7", "c1": "5"},
    ),
    (
        [
            [
                {"setting": "--dtype {}", "op": "==", "value": "bfloat16"},
                {"left": {"major": "c0", "minor": "c1"}, "op": "<", "right": 80},
            ]
        ],
        {"c0": "9", "c1": "0"},
    ),
    ([[{"left": {"major": "c0", "minor": "c1"}, "op": "<", "right": 80}]], {"c0": "7", "c1": "0"}),
    ([[{"setting": "--q {}", "op": "not in", "value": ["fp8", "awq"]}]], {"x": "1"}),
    (
        [
            [
                {"setting": "--q {}", "op": "in", "value": ["fp8", "awq"]},
                {"setting": "VLLM_X={}", "op": "off"},
                {"setting": "--y {}", "op": "on"},
            ]
        ],
        {"x": "1"},
    ),
    ([[{"setting": "--q {}", "op": "!=", "value": 3}]], {"x": "1"}),
    (
        [
            [
                {
                    "left": "m",
                    "op": "<",
                    "right": 1,
                    "set": {"left": "--speculative-config '{\"prompt_lookup_min\": {}}'"},
                }
            ]
        ],
        {"m": "0"},
    ),
    ([[{"left": "t", "op": ">", "right": 0, "set": {"left": '"max_tokens": {}'}}]], {"t": "5"}),
    (
        [
            [
                {
                    "left": "f",
                    "op": "<",
                    "right": "r",
                    "scale": {"u": {"write": "--u {}", "by": ["t"]}},
                }
            ]
        ],
        {"f": "1", "t": "4", "u": "2", "r": "8"},
    ),
    (
        [[{"left": "a", "op": ">=", "right": "b"}, {"setting": "--t {}", "op": "off"}]],
        {"a": "5", "b": "4"},
    ),
    (
        [
            [
                {"left": {"major": "c0", "minor": "c1"}, "op": "<", "right": 80},
                {"left": "a", "op": ">", "right": 2},
                {"setting": "--t {}", "op": "off"},
            ]
        ],
        {"a": "5", "c0": "7", "c1": "5"},
    ),
    ([[{"left": "a", "op": ">", "right": 2}, {"setting": "--t {}", "op": "off"}]], {"a": "5"}),
    (
        [
            [
                {
                    "left": "f",
                    "op": "<",
                    "right": "r",
                    "scale": {"u": {"write": "--u {}", "by": ["f", "t", "z"]}},
                }
            ]
        ],
        {"f": "19.77", "t": "22.05", "u": "0.9", "r": "19.84"},
    ),
    (
        [
            [
                {
                    "left": "f",
                    "op": "<",
                    "right": "r",
                    "scale": {"u": {"write": "--u {}", "by": ["t"]}},
                }
            ]
        ],
        {"f": "0.22", "t": "30.3", "u": "0.7", "r": "21.21"},
    ),
    (
        [[{"left": "r", "op": ">", "right": "f", "scale": {"u": {"write": "U={}", "by": ["t"]}}}]],
        {"f": "3", "t": "10", "u": "0.5", "r": "5"},
    ),
    (
        [
            [
                {
                    "left": "f",
                    "op": ">",
                    "right": "r",
                    "scale": {"u": {"write": "--u {}", "by": ["t"]}},
                }
            ]
        ],
        {"f": "3", "t": "10", "u": "0.1", "r": "1"},
    ),
    # a membership test of a printed value in a printed collection; cut short: nothing
    (
        [[{"left": "q", "op": "not in", "right": "qs", "set": {"left": "--q {}"}}]],
        {"q": "gptq", "qs": "['awq', \"squeezellm\", 'fp8']"},
    ),
    ([[{"left": "q", "op": "not in", "right": "qs"}]], {"q": "'x'", "qs": "dict_keys(['a', 'b'])"}),
    ([[{"left": "q", "op": "in", "right": "qs"}]], {"q": "a", "qs": "('a', 'b')"}),
    ([[{"left": "q", "op": "in", "right": "qs"}]], {"q": "c", "qs": "{'a', 'b'}"}),
    ([[{"left": "q", "op": "not in", "right": "qs"}]], {"q": "c", "qs": "['a', 'b'"}),
    ([[{"left": "q", "op": "not in", "right": "qs"}]], {"q": "c", "qs": "{'a': 'c'}"}),
    (
        [[{"left": "q", "op": "not in", "right": "qs"}]],
        {"q": "z", "qs": str([f"m{i}" for i in range(14)])},
    ),
    # the code's own collection: numbers as numbers, else as printed
    ([[{"left": "h", "op": "not in", "right": [64, 128, 256]}]], {"h": "72"}),
    ([[{"left": "h", "op": "not in", "right": [64, 128, 256]}]], {"h": " 128.0"}),
    ([[{"left": "h", "op": "not in", "right": [64, 128]}]], {"h": "big"}),
    ([[{"left": "h", "op": "in", "right": [0.5, 1]}]], {"h": "0.5"}),
    (
        [
            [
                {
                    "left": "d",
                    "op": "not in",
                    "right": ["torch.float16", "auto"],
                    "set": {"left": "--d {}"},
                }
            ]
        ],
        {"d": "'torch.float32'"},
    ),
    # two printed collections: an item of one in the other, both whole
    (
        [[{"left": "a", "op": "none in", "right": "s"}]],
        {"a": "['X']", "s": "dict_keys(['Y', 'Z'])"},
    ),
    ([[{"left": "a", "op": "none in", "right": "s"}]], {"a": "['Y']", "s": "['Y', 'Z']"}),
    ([[{"left": "a", "op": "some in", "right": "s"}]], {"a": "['Y', 'W']", "s": "('Y',)"}),
    ([[{"left": "a", "op": "none in", "right": "s"}]], {"a": "['X']", "s": "['Y', 'Z'"}),
    (
        [
            [
                {"left": "a", "op": "none in", "right": "s"},
                {"left": "n", "op": ">", "right": "m", "set": {"left": "--n {}"}},
            ]
        ],
        {"a": "['X']", "s": "['Y']", "n": "5", "m": "3"},
    ),
    # a printed value compared with a text: one item, said as `is`
    (
        [
            [
                {"left": "t", "op": "not in", "right": ["draft"], "set": {"left": "--t {}"}},
                {"left": "t", "op": "in", "right": ["score"]},
            ]
        ],
        {"t": "score"},
    ),
    ([[{"left": "t", "op": "in", "right": ["score"]}]], {"t": "embed"}),
    ([[{"left": "n", "op": "not in", "right": [8]}]], {"n": "4"}),
    # alternatives: one holding is enough; with another part that a setting decides
    (
        [
            [
                {
                    "op": "or",
                    "any": [
                        {"left": "t", "op": "not in", "right": ["float"]},
                        {"left": "n", "op": "!=", "right": 8},
                    ],
                }
            ]
        ],
        {"t": "float", "n": "4"},
    ),
    (
        [
            [
                {
                    "op": "or",
                    "any": [
                        {"left": "x", "op": "<", "right": 0},
                        {"left": "x", "op": ">", "right": 1},
                    ],
                }
            ]
        ],
        {"x": "0.5"},
    ),
    (
        [
            [
                {
                    "op": "or",
                    "any": [
                        {"left": "x", "op": "<", "right": 0},
                        {"left": "y", "op": ">", "right": 1},
                    ],
                },
                {"left": "m", "op": ">", "right": "k", "set": {"left": "--m {}"}},
            ]
        ],
        {"x": "-1", "m": "5", "k": "3"},
    ),
    (
        [
            [
                {
                    "op": "or",
                    "any": [
                        {"left": "x", "op": "<", "right": 0},
                        {"left": "y", "op": ">", "right": 1},
                    ],
                }
            ]
        ],
        {"x": "2"},
    ),
    # equal as printed with decimals: rounding hides which is larger, nothing is said
    ([[{"left": "a", "op": "<", "right": "b"}]], {"a": "30.3", "b": "30.30"}),
    ([[{"left": "a", "op": ">=", "right": "b"}]], {"a": "30", "b": "30"}),
    ([[{"left": "a", "op": "<=", "right": 2}]], {"a": "2.0"}),
    # two printed values that are not numbers: compared as printed
    (
        [[{"left": "q", "op": "!=", "right": "m", "set": {"left": "--q {}"}}]],
        {"q": "gguf", "m": "fp8"},
    ),
    ([[{"left": "q", "op": "==", "right": "m"}]], {"q": "a", "m": "'a'"}),
    ([[{"left": "q", "op": "!=", "right": 0}]], {"q": "abc"}),
    # a printed value alone: raised when it is (not) empty; an object's repr decides nothing
    ([[{"left": "r", "op": "truthy"}]], {"r": "--enable-reasoning"}),
    ([[{"left": "r", "op": "truthy"}]], {"r": "[]"}),
    ([[{"left": "r", "op": "falsy"}]], {"r": "None"}),
    ([[{"left": "r", "op": "truthy"}]], {"r": "<object at 0x7f>"}),
    ([[{"left": "r", "op": "truthy"}, {"setting": "--x", "op": "off"}]], {"r": "{'a': 1}"}),
    # two printed versions: decided where the releases differ, or both read alike
    ([[{"left": "i", "op": "v<", "right": "m"}]], {"i": "0.0.9.post2", "m": "0.1.1"}),
    ([[{"left": "i", "op": "v<", "right": "m"}]], {"i": "0.1.1", "m": "v0.1.1.0"}),
    ([[{"left": "i", "op": "v<", "right": "m"}]], {"i": "0.1.1rc1", "m": "0.1.1"}),
    ([[{"left": "i", "op": "v>=", "right": "m"}]], {"i": "2.5.1+cu121", "m": "2.5"}),
    ([[{"left": "i", "op": "v<=", "right": "m"}]], {"i": "1.2", "m": "1.10"}),
    ([[{"left": "i", "op": "v!=", "right": "m"}]], {"i": "1.2", "m": "1.3"}),
    ([[{"left": "i", "op": "v<", "right": "m"}]], {"i": "latest", "m": "1.3"}),
    # alternatives (a range): each that holds must not, where a setting decides each
    (
        [[{"op": "or", "any": [RANK_LOW, RANK_HIGH]}]],
        {"r": "4", "n": "4"},
    ),
    (
        [[{"op": "or", "any": [RANK_LOW, {**RANK_HIGH, "set": {}}]}]],
        {"r": "4", "n": "4"},
    ),
    (
        [[{"op": "or", "any": [SEQ_LOW, SEQ_HIGH]}]],
        {"x": "0"},
    ),
    (
        [[{"op": "or", "any": [SEQ_LOW, SEQ_HIGH]}]],
        {"x": "12"},
    ),
    # a setting that scales a side: its passing fraction, none when no fraction passes
    (
        [
            [
                {
                    "left": "f",
                    "op": "<",
                    "right": "r",
                    "scale": {"u": {"by": ["t"], "write": "--u {}"}},
                }
            ]
        ],
        {"f": "19.77", "t": "22.05", "u": "0.9", "r": "19.84"},
    ),
    (
        [
            [
                {
                    "left": "f",
                    "op": "<",
                    "right": "r",
                    "scale": {"u": {"by": ["t"], "write": "--u {}"}},
                }
            ]
        ],
        {"f": "0.22", "t": "30.3", "u": "0.7", "r": "21.21"},
    ),
]


def python_said(groups, values) -> dict | None:
    said = _tests(groups, values)
    if said is None:
        return None
    out = {"verdict": said["verdict"]}
    out |= {"change": said["change"]} if "change" in said else {}
    out |= {"whyNot": said["why_not"]} if "why_not" in said else {}
    return out


@pytest.mark.skipif(not shutil.which("node"), reason="needs Node")
def test_try_js_tests_answer_says_what_answer_py_says():
    script = (
        f'import {{ testsAnswer }} from "{REPO / "templates/assets/tests.js"}";\n'
        f'import * as members from "{REPO / "templates/assets/members.js"}";\n'
        "const cases = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(cases.map(([g, v]) => testsAnswer(g, v, members))));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(CASES)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [python_said(g, v) for g, v in CASES]


def test_fmt_prints_integers_whole_and_six_digits_else():
    assert [fmt(6048.0), fmt(19.77), fmt(0.89659863), fmt(1234567.5)] == [
        "6048",
        "19.77",
        "0.896599",
        "1234570",
    ]


def test_vllms_registered_architectures_are_read_from_its_registry_code():
    """archs.read: the keys of _VLLM_MODELS, its spread dicts' and a comprehension's that keeps
    the keys of a dict it holds whole; the local the code holds get_supported_archs() in."""
    from errorkb.projects.vllm import archs

    code = (
        "_TEXT = {'LlamaForCausalLM': ('llama', 'L'), 'GlmForCausalLM': ('glm', 'G')}\n"
        "_EMBED = {'BertModel': ('bert', 'B'), **{k: v for k, v in _TEXT.items() if v}}\n"
        "_VLLM_MODELS = {**_TEXT, **_EMBED}\n"
        "class R:\n"
        "    def f(self, architectures):\n"
        "        all_supported_archs = self.get_supported_archs()\n"
    )
    assert archs.read(code) == {
        "architectures": ["BertModel", "GlmForCausalLM", "LlamaForCausalLM"],
        "held_as": ["all_supported_archs"],
    }
    with pytest.raises(ValueError):  # a comprehension over a dict it does not hold whole
        archs.read("_X = {'A': 1}\n_VLLM_MODELS = {**{k: v for k, v in _X.items()}}\n")
    model = (
        "_SUFFIX_TO_DEFAULTS: list = [\n"
        "    ('ForCausalLM', ('generate', 'none')),\n"
        "    ('Model', ('pooling', 'embed')),\n]\n"
    )
    assert archs.suffixes(model) == ["ForCausalLM", "Model"]
    assert archs.table()["suffixes"][-1] == "Model"  # the committed table, from 0.33.0


def test_a_registry_the_message_does_not_print_whole_answers_from_the_release():
    """vLLM's unsupported-architecture check pasted without its supported list (or with it
    cut short): tested on the architectures the page's release registers, and said so."""
    rec = record(
        "Model architectures {architectures} failed to be inspected.",
        "any((arch in all_supported_archs for arch in architectures))",
    )
    assert api.case_tests(rec) == []  # without a registry: the message prints no list
    tests = [[{"left": "architectures", "op": "some in", "right": "all_supported_archs"}]]
    reg = {
        "release": "0.33.0",
        "name": "all_supported_archs",
        "items": ["LlamaForCausalLM"],
        "suffixes": ["ForCausalLM", "ForSequenceClassification", "Model"],
        "note": "the registry's line",
    }
    doc = {"derived": rec.derived, "computed": {"derived": {"tests": tests, "registry": reg}}}
    said = answer(doc, {"architectures": "['LlamaForCausalLM']"})
    assert said["computed"] and said["lines"] == [
        "With your values the check fails: architectures (LlamaForCausalLM) has an item among "
        "all_supported_archs (LlamaForCausalLM).",
        "the registry's line",
    ]
    # a name the release loads as a registered one with another ending counts as registered
    # (ModelRegistry._normalize_arch); one whose stem it does not register does not
    converted = answer(doc, {"architectures": "['LlamaForSequenceClassification']"})
    assert converted["lines"][0] == (
        "With your values the check fails: architectures (LlamaForSequenceClassification) has "
        "an item among all_supported_archs (LlamaForCausalLM, LlamaForSequenceClassification)."
    )
    # the registry's line counts what the answer lists (issue 44: "416 names" under "415")
    assert converted["lines"][-1] == (
        "the registry's line With yours: 2 names, LlamaForSequenceClassification among them."
    )
    other = answer(doc, {"architectures": "['Qwen2ForSequenceClassification']"})
    assert other["lines"][0].startswith("With your values this check passes")
    printed = answer(doc, {"architectures": "['X']", "all_supported_archs": "['X', 'Y']"})
    assert printed["lines"] == [  # the paste's own list, whole: the registry is not read
        "With your values the check fails: architectures (X) has an item among "
        "all_supported_archs (X, Y)."
    ]


@pytest.mark.skipif(not shutil.which("node"), reason="needs Node")
@pytest.mark.parametrize(
    "asset, ends",
    [
        ("vllm-archs.json", ["ForCausalLM", "ForSequenceClassification"]),
        ("sglang-archs.json", []),  # SGLang converts no ending
    ],
)
def test_members_js_answers_from_the_registry_the_page_fetches_as_answer_py_does(asset, ends):
    """On a page with #case-registry, members.js (through registry.js) fetches the release's
    architectures (/assets/vllm-archs.json, /assets/sglang-archs.json) and tests the values
    on them as answer.py does on the API document's; the page's line that says so is shown
    only then, counting what the answer lists."""
    table = {
        "release": "0.33.0",
        "held_as": ["all_supported_archs"],
        "architectures": ["A", "BForCausalLM"],
        "suffixes": ends,
    }
    reg = {"release": "0.33.0", "name": "all_supported_archs", "items": ["A", "BForCausalLM"]}
    reg["suffixes"] = ends
    reg["note"] = "NOTE"
    cases = [
        ([[{"left": "architectures", "op": "none in", "right": "all_supported_archs"}]], v)
        for v in (
            {"architectures": "['C']"},
            {"architectures": "['BForCausalLM']"},
            {"architectures": "['BForSequenceClassification']"},  # loaded as BForCausalLM
            {"architectures": "['CForSequenceClassification']"},
            {"x": "1"},
        )
    ]
    script = (
        f"const el = {{ dataset: {{ registry: '{asset}' }}, hidden: true }};\n"
        "el.textContent = 'NOTE';\n"
        "globalThis.document = {\n"
        "  getElementById: (i) => (i === 'case-registry' ? el : null),\n"
        "};\n"
        f"globalThis.fetch = async () => ({{ json: async () => ({json.dumps(table)}) }});\n"
        f'const {{ testsAnswer }} = await import("{REPO / "templates/assets/tests.js"}");\n'
        f'const members = await import("{REPO / "templates/assets/members.js"}");\n'
        "const cases = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(cases.map(([g, v]) => {\n"
        "  el.hidden = true;\n"
        "  const said = testsAnswer(g, v, members);\n"
        "  return [said, !el.hidden, el.hidden ? null : el.textContent];\n"
        "})));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(cases)],
        capture_output=True,
        text=True,
        check=True,
    )
    expected = []
    for groups, values in cases:
        doc = {"derived": {}, "computed": {"derived": {"tests": groups, "registry": reg}}}
        said = answer(doc, values)
        page = None
        if said["computed"]:
            page = {"verdict": said["lines"][0]}
        expected.append([page, said["computed"], said["lines"][-1] if said["computed"] else None])
    assert json.loads(done.stdout) == expected


def test_the_api_document_carries_the_registry_where_its_tests_read_it():
    """derived_document: a vLLM record of the registry's release whose tests read the local
    the code holds the registry in carries it (beside a membership in a list of the code's)."""
    from errorkb.projects.vllm import archs

    table = archs.table()
    if not table:
        pytest.skip("no archs.json")
    message = "Unknown head_size {head_size}; architectures {architectures}"
    condition = (
        "head_size not in (64, 128) and "
        "not any((arch in all_supported_archs for arch in architectures))"
    )
    versions = {"first": "0.1.0", "last": table["release"]}
    rec = record(message, condition)
    rec.data |= {"versions": versions, "project": "vllm"}
    rec.project = "vllm"
    doc = api.derived_document(rec)
    assert doc["tests"][0][1] == {
        "left": "architectures",
        "op": "none in",
        "right": "all_supported_archs",
    }
    assert doc["registry"]["items"] == table["architectures"]
    rec.data["versions"] = {"first": "0.1.0", "last": "0.1.0"}  # another release: not its list
    assert "registry" not in api.derived_document(rec)


def test_sglangs_registered_architectures_are_read_from_its_model_files():
    """archs.entries/read: the classes each model file of sglang/srt/models registers as its
    EntryClass (one, or a list; an imported one by the name it is defined under), not its
    sub-packages'; the local the registry holds get_supported_archs() in. Anything else is
    refused: the table is exact or not written."""
    from errorkb.projects.sglang import archs

    llama = (
        "class LlamaForCausalLM:\n    pass\nclass Other:\n    pass\n"
        "EntryClass = [LlamaForCausalLM, Other]\n"
    )
    moe = "from sglang.srt.models.x import MoeBase as MoeForCausalLM\nEntryClass = MoeForCausalLM\n"
    registry = (
        "class R:\n    def f(self, architectures):\n"
        "        all_supported_archs = self.get_supported_archs()\n"
    )
    files = {
        "sglang/srt/models/llama.py": llama,
        "sglang/srt/models/moe.py": moe,
        "sglang/srt/models/common/x.py": "class A:\n    pass\nEntryClass = A\n",
        "sglang/srt/models/registry.py": registry,
        "sglang/_version.py": "__version__ = version = '0.5.23'\n",
    }
    assert archs.read(files) == {
        "release": "0.5.23",
        "architectures": ["LlamaForCausalLM", "MoeBase", "Other"],
        "held_as": ["all_supported_archs"],
    }
    with pytest.raises(ValueError):  # a class made at run time: not read
        archs.entries("EntryClass = make_class('X')\n")
    table = archs.table()  # the committed table, from 0.5.23
    assert table["release"] == "0.5.23" and "DeepseekV3ForCausalLM" in table["architectures"]
    from errorkb.projects.sglang import archs_asset  # the page's copy, fetched by registry.js

    assert json.loads(archs_asset()[archs.ASSET])["architectures"] == table["architectures"]


def test_sglangs_unsupported_architecture_pasted_without_its_list_answers_from_the_release():
    """SGLang's `not any(arch in all_supported_archs for arch in architectures)` pasted with
    the user's architectures alone (or the list cut short): tested on the architectures
    SGLang's release registers, and the line says which release and what it leaves out."""
    from errorkb.projects.sglang import archs

    table = archs.table()
    rec = record(
        "Model architectures {architectures} are not supported for now. Supported "
        "architectures: {all_supported_archs}",
        "not any((arch in all_supported_archs for arch in architectures))",
    )
    rec.data |= {"versions": {"first": "0.1.0", "last": table["release"]}, "project": "sglang"}
    rec.project = "sglang"
    doc = {"derived": rec.derived, "computed": {"derived": api.derived_document(rec)}}
    reg = doc["computed"]["derived"]["registry"]
    assert reg["asset"] == "sglang-archs.json" and reg["suffixes"] == []
    said = answer(doc, {"architectures": "['GlmForCausalLM']"})
    n = len(table["architectures"])
    assert said["computed"] and said["lines"][0] == (
        "With your values the check fails: architectures (GlmForCausalLM) has no item among "
        f"all_supported_archs ({n} names)."
    )
    assert said["lines"][1].startswith(f"all_supported_archs is taken as the {n} architectures ")
    assert "Ignore import error when loading" in said["lines"][1]
    ok = answer(doc, {"architectures": "['DeepseekV3ForCausalLM']", "all_supported_archs": "['A'"})
    assert ok["lines"][0].startswith("With your values this check passes")


def test_an_assignment_expression_in_the_condition_compares_the_name_it_binds():
    """`(x := f()) > y` compares x, the name the message prints it by (vLLM's "Reducing
    Torch parallelism from {current_parallelism} threads to {default_omp_num_threads}"),
    also in a condition too long to quote (`compares`) and a truthiness test."""
    rec = record(
        "Reducing Torch parallelism from {current_parallelism} threads to "
        "{default_omp_num_threads} to avoid unnecessary CPU contention.",
        "(current_parallelism := torch.get_num_threads()) > default_omp_num_threads",
    )
    tested = {"left": "current_parallelism", "op": ">", "right": "default_omp_num_threads"}
    assert api.case_tests(rec) == [[tested]]
    rec.derived = {"quantities": ["x"], "compares": [rec.derived.pop("condition")]}
    assert api.case_tests(rec) == [[tested]]
    said = answer(doc_of(rec), {"current_parallelism": "20", "default_omp_num_threads": "1"})
    assert said["computed"] and said["lines"][0] == (
        "With your values the check fails: current_parallelism = 20 is greater than "
        "default_omp_num_threads = 1."
    )
    rec = record("Unknown keys: {unknown}", "(unknown := set(given) - KNOWN)")
    assert api.case_tests(rec) == [[{"left": "unknown", "op": "truthy"}]]


def test_a_computed_side_the_message_prints_is_found_by_the_name_the_extractor_gives_it():
    """An old release's condition derived before `printed` was kept (its cached scan):
    `len(items) > limit` where the wording prints `{len_items}` (vLLM 0.9.2's
    --limit-mm-per-prompt check) is tested on the values, by the name a hole printing
    `len(items)` takes; a name that does not say all of the expression matches nothing."""
    rec = record(
        "You set {modality}={limit} in `--limit-mm-per-prompt`, but passed {len_items} "
        "{modality} items in the same prompt.",
        "len(items) > limit",
    )
    assert api.case_tests(rec) == [[{"left": "len_items", "op": ">", "right": "limit"}]]
    said = answer(doc_of(rec), {"modality": "image", "limit": "2", "len_items": "3"})
    assert said["computed"]
    assert (
        said["lines"][0]
        == "With your values the check fails: len_items = 3 is greater than limit = 2."
    )
    # a method call named after its function prints what the condition calls
    rec = record(
        "unexpected size: {tensor_model_parallel_world_size} vs. {tp_size}",
        "get_tensor_model_parallel_world_size() != tp_size",
    )
    assert api.case_tests(rec) == [
        [{"left": "tensor_model_parallel_world_size", "op": "!=", "right": "tp_size"}]
    ]
    # not the same value: `x.strip()` is named `x`, `a - 1` is `a_minus_value`, `x.size(0)` `x_size`
    for message, condition in (
        ("name must be non-empty, got {name}", "not name.strip()"),
        ("blocks ({num_used_blocks_minus_value}) not freed", "num_used_blocks - 2 != 0"),
        ("sizes {x_size} and {y_size}", "x.size(0) != y.size(0)"),
    ):
        assert api.case_tests(record(message, condition)) == [], condition


def flag(name: str, kind: str = "server-arg") -> dict:
    return {"name": name, "kind": kind, "field": "server_args." + name.strip("-"), "flag": name}


def test_a_placeholder_printed_right_after_a_setting_is_that_settings_value():
    """The message says which setting a value is (`--x must be positive, got {v}`,
    `max_num_seqs ({n}) exceeds ...`): the test of it names that setting and the value of it
    that passes, where the code's name of the side is no setting's (issue 44 item 2)."""
    rec = record(
        "--weight-cache-timeout must be positive, got {timeout}",
        "timeout <= 0",
        [flag("--weight-cache-timeout")],
    )
    said = answer(doc_of(rec), {"timeout": "0"})
    assert said["lines"][1] == "To pass it, set --weight-cache-timeout to at least 1."
    seqs = {**MAX_LEN, "name": "max_num_seqs", "flag": "--max-num-seqs"}
    rec = record(
        "max_num_seqs ({max_num_reqs}) exceeds available Mamba cache blocks ({num_blocks}).",
        "max_num_reqs > num_blocks",
        [seqs],
    )
    said = answer(doc_of(rec), {"max_num_reqs": "256", "num_blocks": "120"})
    assert said["lines"][1] == "To pass it, set --max-num-seqs to at most 120."


def test_a_value_beside_a_setting_the_message_names_twice_or_only_mentions_is_not_its():
    """`page_size={a} ... ori page_size={b}`: which is the setting's is not said; a message
    that starts with a switch and reports another value it got (`X does not support next_n
    > 1 (got {n})`) does not print the switch's value; `x: {v}` is a label, not a value."""
    page = flag("--page-size")
    page["name"] = "page_size"
    rec = record(
        "page_size={cmp_page} != expected={expected} for ori page_size={ori}",
        "cmp_page != expected",
        [page],
    )
    assert "set" not in api.case_tests(rec)[0][0]
    env = {"name": "SGLANG_X", "kind": "env-var", "field": "os.environ", "env": "SGLANG_X"}
    rec = record("SGLANG_X does not support next_n > 1 (got {n})", "n != 1", [env])
    assert "set" not in api.case_tests(rec)[0][0]
    seqs = {**MAX_LEN, "name": "max_num_seqs", "flag": "--max-num-seqs"}
    rec = record("mapping exceeds max_num_seqs: {a} > {b}.", "a > b", [seqs])
    assert "set" not in api.case_tests(rec)[0][0]


def test_a_divisor_the_tests_set_is_never_said_to_be_fixed_by_the_model():
    """`prefix_len % ps`, `ps` printed right after `page_size=`: the condition's test sets it
    with --page-size, so the divisor's role (the page's divisor section, the terminal) is
    that setting's too, not "fixed by the model" beside a test saying to set it."""
    page = {"name": "page_size", "kind": "server-arg", "field": "server_args.page_size"}
    page["flag"] = "--page-size"
    rec = record(
        "prefix_len={prefix_len} is not a multiple of page_size={ps}",
        "prefix_len % ps != 0",
        [page],
    )
    rec.derived["divisibility"] = {"value": "prefix_len", "divisor": "ps"}
    role = api.divisor_role(rec)
    assert role == {"fixed": False, "setting": "--page-size", "gpus": False}
    doc = {"derived": rec.derived, "computed": {"derived": api.derived_document(rec)}}
    said = answer(doc, {"prefix_len": "100", "ps": "16"})
    assert said["change"] == "Change --page-size 16 to 10 or 20, the nearest that divide 100."

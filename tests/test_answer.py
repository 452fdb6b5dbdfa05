"""The shared answer for a user's values (site/answer.py): what the terminal, the bot and the
JSON say, the same as the error page."""

from errorkb.answer import answer, divisor_role, values_to_try
from errorkb.content import template

TP = {"name": "tp_size", "kind": "server-arg", "field": "server_args.tp_size", "flag": "--tp-size"}
VLLM_TP = {
    "name": "tensor_parallel_size",
    "kind": "engine-arg",
    "field": "parallel_config.tensor_parallel_size",
    "flag": "--tensor-parallel-size",
}


def block_n_doc() -> dict:
    """SGLang's c7b1dc1b4d2169ad: the divisor is the checkpoint's block size."""
    div = {
        "value": "output_partition_size",
        "divisor": "block_n",
        "value_param": "output_partition_size",
        "divisor_param": "block_n",
    }
    return {"derived": {"divisibility": div, "flags": [TP]}}


def heads_doc() -> dict:
    div = {
        "value": "total_num_attention_heads",
        "divisor": "tensor_parallel_size",
        "value_param": "total_num_attention_heads",
        "divisor_param": "tensor_parallel_size",
    }
    return {"derived": {"divisibility": div, "flags": [VLLM_TP]}}


def test_a_divisor_the_checkpoint_fixes_is_never_the_thing_to_change():
    assert divisor_role(block_n_doc()["derived"]) == {
        "fixed": True,
        "setting": "--tp-size",
        "per_rank": True,
    }
    said = answer(block_n_doc(), {"output_partition_size": "576", "block_n": "128"})
    text = " ".join(said["lines"])
    assert said["computed"] and said["setting"] == "--tp-size" and said["factor"] == 2
    assert "Change --tp-size, not block_n" in text and "divide it by 2, e.g. 8 → 4" in text
    assert "1152 = 9 × 128" in text
    assert "96" not in text and "144" not in text  # no "nearest valid values of block_n"


def test_a_fixed_divisor_with_no_setting_says_why_not():
    doc = {"derived": {"divisibility": {"value": "hidden_size", "divisor": "num_heads"}}}
    said = answer(doc, {"hidden_size": "100", "num_heads": "7"})
    assert said["why_not"] and "no setting of the engine changes" in said["lines"][0]


def test_a_gpu_count_gets_the_nearest_sizes_either_side_within_the_node():
    said = answer(heads_doc(), {"total_num_attention_heads": "40", "tensor_parallel_size": "3"})
    assert said["nearest"] == [2, 4]
    assert "Change --tensor-parallel-size 3 to 2 or 4" in said["change"]
    assert "8-GPU node, assumed" in said["change"]
    # Never beyond the node, and the node given is no longer "assumed".
    said = answer(
        heads_doc(),
        {"total_num_attention_heads": "40", "tensor_parallel_size": "16", "gpus_per_node": "4"},
    )
    assert said["nearest"] == [4] and "4-GPU node)" in said["change"]


def test_values_that_pass_say_so():
    said = answer(heads_doc(), {"total_num_attention_heads": "40", "tensor_parallel_size": "4"})
    assert "this check passes" in said["lines"][0] and "change" not in said


def test_passes_and_relation_answer_stub_pages():
    doc = {
        "computed": {
            "derived": {
                "passes": [{"op": "<=", "param": "limit", "write": "--max-model-len {}"}],
                "relation": {"left": "n", "op": ">", "right": "limit"},
            }
        }
    }
    said = answer(doc, {"n": "9000", "limit": "8192"})
    assert said["lines"] == ["To pass this check: --max-model-len 8192."] and said["computed"]
    only = {"computed": {"derived": {"relation": doc["computed"]["derived"]["relation"]}}}
    assert "holds" in answer(only, {"n": "9000", "limit": "8192"})["lines"][0]
    assert "does not hold" in answer(only, {"n": "1", "limit": "8192"})["lines"][0]
    assert answer(only, {}) is None


def test_values_to_try_keeps_gpu_counts_within_the_node():
    item = {"op": "divides", "param": "heads", "current": "tp"}
    item["write"] = "--tensor-parallel-size {}"
    assert values_to_try(item, {"heads": "40", "tp": "3"}) == ["2", "4"]
    assert values_to_try(item, {"heads": "40", "tp": "16"}) == ["8"]
    assert values_to_try(item, {"heads": "40", "tp": "16", "gpus_per_node": "16"}) == ["10"]


def test_an_old_wording_hands_its_values_under_the_pages_names():
    names = {"needed_memory", "available_memory", "max_model_len"}
    assert template.page_name("needed_memory_div_GiB_bytes", names) == "needed_memory"
    assert template.page_name("available_memory_div_value_div_value", names) == "available_memory"
    assert template.page_name("other_div_x", names) == "other_div_x"
    pats = template.record_patterns(
        ["need {needed_memory} GiB", "need {needed_memory_div_GiB_bytes} GiB"], {}
    )
    assert pats[1][0][1][0] == "needed_memory"
    # The answer reads an old wording's names too.
    relation = {"left": "needed_memory", "op": ">", "right": "a"}
    doc = {"computed": {"derived": {"relation": relation}}}
    said = answer(doc, {"needed_memory_div_GiB_bytes": "12", "a": "3"})
    assert "holds" in said["lines"][0]


def test_a_divisor_printed_under_another_name_is_read_by_the_placeholders_name():
    """vLLM's Marlin check: the condition names GPTQ_MARLIN_MIN_THREAD_K, the message prints
    {min_thread_k}; the value is one GPU's slice, so the tensor parallel size is the fix."""
    div = {"value": "input_size_per_partition", "divisor": "GPTQ_MARLIN_MIN_THREAD_K"}
    doc = {"derived": {"divisibility": div}}
    said = answer(doc, {"input_size_per_partition": "10944", "min_thread_k": "128"})
    assert said["factor"] == 2 and "the tensor parallel size" in said["change"]
    assert "21888 = 171 × 128" in said["change"]


def test_no_document_to_answer_from_says_nothing():
    """The bot whose site's API it cannot reach has no document: it names the page, and
    answers nothing for the values (it raised IndexError, and the Action posted nothing)."""
    from errorkb import answer as shared

    assert shared.answer({}, {"tp_size": "3"}) is None


def test_the_kv_cache_checks_figures_answer_in_the_terminal_as_the_pages_memory_section():
    """vLLM's b3a6e27a21d4acc5 prints the KV cache one request needs and what is left, at
    its --max-model-len: the answer is the longest length that fits (memory.js's
    fromTheError), before the tests' bounds on the figures, also under an old wording's names
    (`needed_memory_div_GiB_bytes`); the API document names the figures."""
    from types import SimpleNamespace

    from errorkb.site import api

    figures = {"max_model_len": "max_model_len", "needed": "needed_memory"}
    figures["available"] = "available_memory"
    tests = [[{"left": "needed_memory", "op": ">", "right": "available_memory"}]]
    doc = {"derived": {}, "computed": {"derived": {"figures": figures, "tests": tests}}}
    values = {"max_model_len": "32768", "needed_memory_div_GiB_bytes": "2.5"}
    said = answer(doc, {**values, "available_memory_div_GiB_bytes": "1.25"})
    assert said["computed"] and said["lines"] == [
        "One request of 32768 tokens needs 2.5 GiB of KV cache; 1.25 GiB is left for it.",
        "Change --max-model-len 32768 to --max-model-len 16384 or less, or give the KV cache "
        "1.25 GiB more per GPU: a higher --gpu-memory-utilization, more GPUs "
        "(--tensor-parallel-size), or --kv-cache-dtype fp8 (half the cache).",
        "Computed from the message's figures: the cache a request needs grows with its length.",
    ]
    none = answer(doc, {**values, "available_memory": "0.001"})
    assert none["lines"][1].startswith("Nothing fits the KV cache: give the KV cache 2.50 GiB")
    # without the length, the tests answer
    alone = answer(doc, {"needed_memory": "2.5", "available_memory": "1.25"})
    assert alone["lines"][0].startswith("With your values the check fails: needed_memory")
    rec = SimpleNamespace(
        id="b3a6e27a21d4acc5",
        project="vllm",
        message="({needed_memory} GiB KV cache is needed, {available_memory} GiB available)",
        messages=["({needed_memory} GiB KV cache is needed, {available_memory} GiB available)"],
        derived={"condition": "needed_memory > available_memory"},
        data={"versions": {"last": "0.1.0"}},
    )
    assert api.derived_document(rec)["figures"] == figures


# ---------------------------------------------------------------- the setting, not the variable
def _record(project: str, div: dict, flags: list | None = None, ref: str = "", tries=()):
    """A record as errorkb/settings.py reads it: its project, derived block and versions."""
    from types import SimpleNamespace

    derived = {"divisibility": div, "flags": flags or [], "ref": ref, "try": list(tries)}
    return SimpleNamespace(project=project, derived=derived, data={"derived": derived}, status="")


def _said(record, values: dict) -> dict:
    from errorkb import settings

    computed = {"divisor": settings.divisor_setting(record)}
    return answer({"derived": record.derived, "computed": {"derived": computed}}, values)


def test_a_divisor_the_user_sets_is_named_by_its_option_as_the_releases_parser_spells_it():
    """vLLM's `tp_size` is --tensor-parallel-size (no derived flag says so: the parser data
    of generator/flags/ does), SGLang's --tp-size; the terminal, the bot and the JSON say
    the option, never only the code's name (issue 44: "Change it to 5" about tp_size)."""
    div = {"value": "num_heads", "divisor": "tp_size"}
    vllm = _said(_record("vllm", div), {"num_heads": "40", "tp_size": "3"})
    assert vllm["setting"] == "--tensor-parallel-size"
    assert vllm["change"].startswith("Change --tensor-parallel-size 3 to 2 or 4, the nearest")
    assert vllm["lines"][0].startswith("Valid values of --tensor-parallel-size (tp_size) for")
    sglang = _said(_record("sglang", div), {"num_heads": "40", "tp_size": "3"})
    assert sglang["change"].startswith("Change --tp-size 3 to 2 or 4")
    # the release its block was read from: vLLM 0.4.3's parser has the option too
    old = _said(_record("vllm", div, ref="v0.4.3"), {"num_heads": "40", "tp_size": "3"})
    assert old["setting"] == "--tensor-parallel-size"
    # SGLang's MoE EP size in the layer's code is the --ep-size option
    moe = {"value": "layer.num_experts", "divisor": "layer.moe_ep_size"}
    said = _said(_record("sglang", moe), {"layer.num_experts": "256", "layer.moe_ep_size": "6"})
    assert said["change"] == (
        "Change --ep-size 6 to 4 or 8, the nearest that divide 256 (within one 8-GPU node, "
        "assumed)."
    )


def test_a_size_no_one_option_sets_is_named_by_what_sets_it():
    """vLLM's expert-parallel group is data × tensor parallel ranks: no --ep-size."""
    div = {"value": "n_physical_experts", "divisor": "ep_size"}
    said = _said(_record("vllm", div), {"n_physical_experts": "256", "ep_size": "3"})
    assert "--data-parallel-size × --tensor-parallel-size" in said["change"]
    assert said["nearest"] == [2, 4] and "ep_size 3" not in said["change"]


def test_a_gpu_groups_size_is_never_said_to_be_fixed_by_the_model():
    """SGLang's `world_size` of a collective: a count of GPUs, whose valid values within one
    node are the answer; no option names it, so it is said to be a GPU count."""
    div = {"value": "message_size", "divisor": "world_size"}
    assert divisor_role({"divisibility": div})["fixed"] is False
    said = _said(_record("sglang", div), {"message_size": "100", "world_size": "3"})
    assert "fixed by the model" not in " ".join(said["lines"])
    assert said["change"].startswith("Change the GPU count world_size 3 to 2 or 4")


def test_a_fixed_divisors_slice_is_changed_by_the_releases_tensor_parallel_option():
    """vLLM 0.4.3's Marlin check names no setting: the parser's --tensor-parallel-size is
    the one that changes each GPU's slice (was: "the tensor parallel size")."""
    div = {"value": "input_size_per_partition", "divisor": "quant_config.min_thread_k"}
    div["divisor_param"] = "min_thread_k"
    said = _said(
        _record("vllm", div, ref="v0.4.3"),
        {"input_size_per_partition": "7392", "min_thread_k": "128"},
    )
    assert said["change"].startswith("Change --tensor-parallel-size, not quant_config")


def test_what_to_try_never_offers_a_divisor_the_model_fixes():
    """The derived block's generated What to try said "Choose a `block_n` that divides ..."
    under a widget saying the checkpoint fixes block_n (two answers that disagree): the page
    and the API's HTML now say the setting to change, or that none does."""
    from errorkb import settings
    from errorkb.site.api import divisor_try

    tries = (
        "Choose a `block_n` that divides `output_partition_size` exactly (the divisor "
        "calculator lists them).",
        "If `output_partition_size` comes from the model's configuration, it cannot be "
        "changed: fit `block_n` to it.",
    )
    div = {"value": "output_partition_size", "divisor": "block_n"}
    record = _record("sglang", div, [TP], tries=tries)
    said = divisor_try(record, settings.divisor_setting(record))
    assert len(said) == 1 and "change `--tp-size` instead" in said[0]
    assert "Choose a `block_n`" not in said[0]
    none = _record("vllm", {"value": "hidden_size", "divisor": "num_heads"}, tries=tries)
    said = divisor_try(none, settings.divisor_setting(none))
    assert said == [
        "`num_heads` and `hidden_size` both come from the model or the kernel, not from a "
        "setting: no setting of the engine changes them here."
    ]
    # a divisor the user sets: named by its option as well
    line = "Choose a `tp_size` that divides `num_heads` exactly."
    tp = _record("vllm", {"value": "num_heads", "divisor": "tp_size"}, tries=[line])
    said = divisor_try(tp, settings.divisor_setting(tp))
    assert said[0].startswith("Choose a `--tensor-parallel-size` (`tp_size`) that divides")


def test_a_shared_helpers_divisor_is_neither_fixed_nor_offered():
    """vLLM's ensure_divisibility(numerator, denominator): the caller passes heads and the TP
    size, or the TP size and the KV heads; saying the denominator is the model's (it said
    "fixed by the model, and no setting changes either value") was wrong as often as not."""
    div = {"value": "numerator", "divisor": "denominator"}
    assert divisor_role({"divisibility": div}) == {"fixed": False, "setting": "", "unknown": True}
    said = _said(_record("vllm", div), {"numerator": "25", "denominator": "4"})
    assert said["lines"][0] == "numerator = 25 is not a multiple of denominator = 4 (6.25 × 4)."
    assert "change" not in said and "fixed by the model" not in " ".join(said["lines"])
    assert "shared helper" in said["why_not"]
    said = _said(_record("vllm", div), {"numerator": "24", "denominator": "4"})
    assert "this check passes" in said["lines"][0]


def test_a_gpu_groups_size_is_named_by_the_words_the_message_says_it_with():
    """`world_size` is the Ulysses degree, the DCP size, the sequence-parallel size... as the
    message says right before it: that option, of the program whose code prints it (SGLang's
    diffusion runtime: `sglang generate`'s parser)."""
    from types import SimpleNamespace

    from errorkb import settings

    def rec(project, message, path="x.py"):
        div = {"value": "heads", "divisor": "world_size"}
        derived = {"divisibility": div, "flags": []}
        data = {"derived": derived, "source": {"path": path}}
        params = {"heads": {}, "world_size": {}}
        return SimpleNamespace(
            project=project, derived=derived, data=data, status="", message=message, params=params
        )

    ulysses = "{heads} heads are not divisible by the Ulysses degree {world_size}."
    gen = rec("sglang", ulysses, "python/sglang/multimodal_gen/runtime/x.py")
    assert settings.divisor_setting(gen)["setting"] == "--ulysses-degree"
    assert settings.divisor_setting(rec("sglang", ulysses))["setting"] == ""  # not `serve`'s
    dcp = rec("vllm", "H={heads} must be divisible by DCP world size {world_size}.")
    assert settings.divisor_setting(dcp)["setting"] == "--decode-context-parallel-size"
    plain = rec("vllm", "size {heads} must be divisible by world size {world_size}")
    assert settings.divisor_setting(plain) == {"fixed": False, "setting": "", "gpus": True}

"""The settings a message names in its own words (generator/sources/named.py, issue 43): flags,
names, placeholders and quoted choices, each checked against the project's settings, with
what the message's words say passes. On the made-up vLLM tree of tests/fixtures/settings/tree
(with raise sites added here), on SGLang's knowledge with the real parser data of 0.5.23, and
on a removed record."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from errorkb.projects.sglang.knowledge import Place, SglangKnowledge
from errorkb.registry import wing
from errorkb.sources import extract as ex
from errorkb.sources import named

TREE = Path(__file__).parent / "fixtures" / "settings" / "tree"

SITES = """
import os


class ToyKernel:
    def check(self, flag):
        if flag:
            raise ValueError("Toy kernel does not shard (--tensor-parallel-size must be 1)")
        if self.other:
            raise ValueError("Try increasing `max_model_len` or lowering the batch")
        if self.third:
            raise ValueError("Set VLLM_TOY_LIMIT=8 to raise the limit")
        if self.fourth:
            raise ValueError("--no-such-flag is not an option, nor is `max_len_of_toy`")
        if self.fifth:
            raise ValueError("Toy kernel: set the environment variable NCCL_TOY_DISABLE=1")
"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, dict]:
    tree = tmp_path_factory.mktemp("named") / "tree"
    shutil.copytree(TREE, tree)
    (tree / "vllm" / "model_executor" / "toy_named.py").write_text(SITES)
    scan = ex.scan_tree(tree, knowledge=wing("vllm").knowledge, asserts=True, printed=True)
    return {site.template: site.derived for site in scan.sites}


def derived(sites, start: str) -> dict:
    (found,) = [d for key, d in sites.items() if key.startswith(start)]
    return found


def test_a_flag_the_message_names_is_traced_with_the_value_it_says_passes(sites):
    found = derived(sites, "Toy kernel does not shard")
    (tp,) = found["flags"]
    assert tp["flag"] == "--tensor-parallel-size" and tp["kind"] == "engine-arg"
    assert tp["named"] == "text" and tp["name"] == "--tensor-parallel-size"
    assert tp["field"] == "parallel_config.tensor_parallel_size"
    assert tp["passes"] == {"op": "==", "value": 1}
    assert (
        "Set `--tensor-parallel-size` to `1` (in Python: `LLM(tensor_parallel_size=...)`)."
        in (found["try"])
    )


def test_a_name_in_backticks_and_a_variable_with_its_value(sites):
    (length,) = derived(sites, "Try increasing `max_model_len`")["flags"]
    assert length["flag"] == "--max-model-len" and "passes" not in length  # "increasing": no bound
    (limit,) = derived(sites, "Set VLLM_TOY_LIMIT=8")["flags"]
    assert limit["kind"] == "env-var" and limit["env"] == "VLLM_TOY_LIMIT"
    assert limit["passes"] == {"op": "==", "value": 8}


def test_a_key_of_a_json_option_as_the_parsers_dotted_form():
    known = wing("vllm").knowledge(
        [(str(p.relative_to(TREE)), p.read_bytes()) for p in TREE.rglob("*.py")]
    )
    known.parser = named.parser_options("vllm", "0.33.0")
    found = named.entries(
        "enabled by --quantization-config.moe.weight int4_per_group_32.", known, False, "vllm/x.py"
    )
    assert [(f["flag"], f["key"]) for f in found] == [("--quantization-config", "moe.weight")]
    assert named.entries("Use --max-model-len.foo", known, False, "vllm/x.py") == []


def test_words_that_are_no_setting_trace_nothing(sites):
    assert "flags" not in derived(sites, "--no-such-flag is not an option")


def test_a_variable_the_message_calls_one_though_the_project_does_not_list_it(sites):
    (var,) = derived(sites, "Toy kernel: set the environment variable")["flags"]
    assert var == {
        "name": "NCCL_TOY_DISABLE",
        "kind": "env-var",
        "field": "os.environ",
        "env": "NCCL_TOY_DISABLE",
        "named": "text",
        "passes": {"op": "==", "value": 1},
    }


# SGLang: its server arguments as a knowledge holds them, the real parser of 0.5.23 --------

ARGS = [
    *("moe_runner_backend", "enable_tokenizer_batch_encode", "enable_dynamic_batch_tokenizer"),
    *("tool_call_parser", "attention_backend", "prefill_attention_backend"),
    *("decode_attention_backend", "mm_attention_backend", "hicache_io_backend"),
    *("page_size", "enable_lora", "pp_size"),
]


@pytest.fixture(scope="module")
def sglang() -> SglangKnowledge:
    parser = named.parser_options("sglang", "0.5.23")
    assert parser, "generator/flags/sglang-0.5.23.json"
    by_dest = {o["dest"]: o for o in parser.values()}
    place = Place("python/sglang/srt/server_args.py", 1)
    args = {name: (tuple(by_dest[name]["strings"]), place) for name in ARGS}
    return SglangKnowledge(
        version="0.5.23",
        args=args,
        envs={"SGLANG_TOY": Place("python/sglang/srt/environ.py", 2)},
        requests={
            "top_k": Place("python/sglang/srt/sampling/sampling_params.py", 3),
            "request_id": Place("python/sglang/srt/entrypoints/openai/protocol.py", 4),
        },
        parser=parser,
    )


def entries(message: str, knowledge, requests=True, path="python/sglang/srt/layers/x.py"):
    return named.entries(message, knowledge, requests, path)


def test_a_flag_and_its_value(sglang):
    (moe,) = entries("Triton MoE cannot run this; use --moe-runner-backend deep_gemm.", sglang)
    assert moe["flag"] == "--moe-runner-backend" and moe["kind"] == "server-arg"
    assert moe["passes"] == {"op": "==", "value": "deep_gemm"}
    # a value the option does not take is no value of it
    (moe,) = entries("Use --moe-runner-backend fastest-possible.", sglang)
    assert "passes" not in moe


def test_flags_the_message_says_cannot_go_together_say_no_value(sglang):
    found = entries(
        "Cannot enable both --enable-tokenizer-batch-encode and --enable-dynamic-batch-tokenizer.",
        sglang,
    )
    assert [f["flag"] for f in found] == [
        "--enable-tokenizer-batch-encode",
        "--enable-dynamic-batch-tokenizer",
    ]
    assert all("passes" not in f for f in found)


@pytest.mark.parametrize(
    "message, passes",
    [
        ("LoRA is not enabled. Use --enable-lora to enable LoRA.", {"op": "set"}),
        ("This model runs on one stage (--pp-size must be 1)", {"op": "==", "value": 1}),
        ("Remove --enable-lora: adapters are not supported here", {"op": "unset"}),
        ("Please install the toy package to use --enable-lora.", None),
        ("Adapters are not supported here, please run with --enable-lora", {"op": "set"}),
        ("--enable-lora must be set the same on both sides", None),
        ("--enable-lora must be set for adapters", {"op": "set"}),
        ("--page-size must be at least 16 for this backend", {"op": ">=", "value": 16}),
        ("Chunked prefill requires --page-size > 1", {"op": ">", "value": 1}),
        ("tp_group must be given when --pp-size > 1", None),
        ("--page-size > 1 is not supported with this kernel", None),
        ("--page-size must be at least 1 + num_draft_tokens", None),
    ],
)
def test_what_the_words_say_passes(sglang, message, passes):
    (found,) = entries(message, sglang)
    assert found.get("passes") == passes


def test_a_placeholder_of_a_settings_name(sglang):
    (parser,) = entries("Unsupported tool_call_parser: {tool_call_parser}", sglang)
    assert parser["flag"] == "--tool-call-parser" and parser["named"] in ("text", "placeholder")
    (parser,) = entries("Unsupported parser: {self.tool_call_parser}", sglang)
    assert parser["flag"] == "--tool-call-parser" and parser["named"] == "placeholder"
    # the value of the argument, as the code names it
    (parser,) = entries("Tool parser {tool_call_parser_arg} is not built in", sglang)
    assert parser["flag"] == "--tool-call-parser"


def test_a_quoted_choice_names_the_one_option_the_words_beside_it_name(sglang):
    (io,) = entries("Unsupported layout {layout} for io backend 'direct'", sglang)
    assert io["flag"] == "--hicache-io-backend" and io["named"] == "choice"
    (io,) = entries("This pool supports only io_backend='kernel', got {io_backend}.", sglang)
    assert io["flag"] == "--hicache-io-backend"
    # 'fa3' is a choice of the attention backend, of its prefill, decode and multimodal ones:
    # a lone "backend" does not say which (it is --mm-attention-backend in VisionAttention)
    assert entries("The 'fa3' backend is not supported on Blackwell GPUs", sglang) == []


def test_a_request_field_only_where_requests_are_handled(sglang):
    message = "top_k must be at least 1, got {top_k}"
    (field,) = entries(message, sglang, requests=True)
    assert field["kind"] == "request-field" and field["passes"] == {"op": ">=", "value": 1}
    assert entries(message, sglang, requests=False) == []  # a kernel's top_k is the router's
    # a field that names the request, not a setting of it
    assert entries("Lookup for request_id={request_id} has not been submitted", sglang) == []


def test_another_programs_code_names_none_of_the_servers_settings(sglang):
    message = "Set --page-size to 1 for this pipeline"
    assert entries(message, sglang, path="python/sglang/multimodal_gen/runtime/x.py") == []
    (page,) = entries(message, sglang)
    assert page["passes"] == {"op": "==", "value": 1}


def test_a_removed_record_gets_the_settings_its_message_names(sglang):
    record = SimpleNamespace(
        data={
            "message": "Use --enable-lora to load adapters",
            "status": "removed",
            "source": {"path": "python/sglang/srt/lora/x.py"},
            "derived": {"ref": "v0.4.0", "title": "t", "stage": "model-loading", "category": "x"},
        }
    )
    new = named.with_named(record, sglang)
    assert list(new) == ["ref", "title", "flags", "stage", "category"]
    assert new["flags"][0]["flag"] == "--enable-lora" and new["flags"][0]["passes"] == {"op": "set"}
    record.data["derived"] = new
    assert named.with_named(record, sglang) is None  # made anew: the same, so no change

"""What extract derives from the code (generator/sources/explain.py, and vLLM's knowledge of its
own settings in generator/projects/vllm/knowledge.py), on a made-up vLLM-shaped source tree
(tests/fixtures/explain/tree): every kind of guard, flags traced through local variables and
`self.*_config`, each category; the records it writes, their pages and API documents."""

import ast
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from errorkb.content import derived as derived_words
from errorkb.content import template
from errorkb.content.load import load_content
from errorkb.projects.vllm import calc
from errorkb.registry import wing
from errorkb.site.build import build
from errorkb.sources import explain
from errorkb.sources import extract as ex

TREE = Path(__file__).parent / "fixtures" / "explain" / "tree"
TOY = "vllm/model_executor/models/toy.py"
DOCS = "https://docs.vllm.ai/en/v9.8.7/configuration/engine_args.html"  # the tree's release


@pytest.fixture(scope="module")
def sites() -> dict[str, dict]:
    """Each site's derived facts, by its message."""
    scan = ex.scan_tree(TREE, knowledge=wing("vllm").knowledge, asserts=True, printed=True)
    return {site.template: site.derived for site in scan.sites}


def site(sites, start: str) -> dict:
    found = [d for key, d in sites.items() if key.startswith(start)]
    assert len(found) == 1, (start, list(sites))
    return found[0]


@pytest.mark.parametrize(
    ("message", "condition"),
    [
        ("num_heads", "num_heads % tp_size != 0"),  # if
        # elif: the earlier test failed too (head_size 300 is in no tuple, but refused above)
        ("Unknown head_size", "head_size <= 256 and head_size not in (64, 128, 256)"),
        ("weights must be a dict", "not isinstance(weights, dict)"),  # else: negated
        # nested ifs, combined
        ("Compilation mode 3", "vllm_config.compilation_config.mode == 3 and self.tp_size > 1"),
        ("Cannot drain", "remaining > 0 and step <= 0"),  # an if inside a while
        ("block table out of sync", "len(table) != expected"),  # assert: raised when false
        ("Unknown attention backend", "name != 'flash' and name != 'triton'"),  # early returns
        ("Cannot pick kind", "kind != 'a'"),  # the wildcard case of a match
        # a loop of early returns: no item passed
        ("No kernel supports", "not any((num_heads <= supported for supported in (8, 16, 32)))"),
        ("The toy model needs", "ImportError was raised"),  # an except handler
        ("Unsupported block size", "self.block_size is not None and self.block_size not in"),
    ],
)
def test_the_condition_of_every_kind_of_guard(sites, message, condition):
    derived = site(sites, message)
    assert derived["condition"].startswith(condition)
    assert "unconditional" not in derived


def _derived(code: str, knowledge=None) -> list[dict]:
    scan = ex.scan_file("m.py", code.encode(), knowledge=knowledge or explain.Knowledge())
    return [site.derived for site in scan.sites]


def test_early_returns_are_part_of_a_guarded_condition():
    """Issue 40: a raise inside an `if` after early returns (`if process is None: return`)
    is reached only when none returned: the condition says them too, in the code's order."""
    code = (
        "def f(process):\n"
        "    if process is None:\n        return\n"
        "    if hasattr(process, 'poll'):\n"
        "        code = process.poll()\n        return\n"
        "    if not process.is_alive():\n        raise RuntimeError('Server process exited')\n"
    )
    (derived,) = _derived(code)
    assert derived["condition"] == (
        "process is not None and (not hasattr(process, 'poll')) and (not process.is_alive())"
    )
    # an assert after an early return: the return first, then the assert's own test
    code = "def g(a, b):\n    if not a:\n        return None\n    assert not b, 'b is off'\n"
    (derived,) = _derived(code)
    assert derived["condition"] == "a and b"


def test_a_raise_nothing_guards_is_reached_past_the_raises_before_it():
    """A raise with no guard of its own after `if t: raise ...` in its block runs only when t
    did not hold: its condition says so (vLLM's and SGLang's unsupported architectures), and
    it is no longer unconditional; a guarded raise keeps its own condition alone."""
    code = (
        "def f(self, architectures):\n"
        "    supported = self.get_supported_archs()\n"
        "    if any(arch in supported for arch in architectures):\n"
        "        raise ValueError(f'{architectures} failed to be inspected')\n"
        "    if not architectures:\n"
        "        raise ValueError('no architectures')\n"
        "    raise ValueError(f'{architectures} are not supported. Supported: {supported}')\n"
        "def g(x, y):\n"
        "    if x:\n        raise ValueError('x is set')\n"
        "    if y:\n        raise ValueError('y is set')\n"
    )
    first, second, last, gx, gy = _derived(code)
    assert last["condition"] == (
        "not any((arch in supported for arch in architectures)) and architectures"
    )
    assert "unconditional" not in last
    assert gy["condition"] == "y"  # guarded: its own test alone, as before
    code = "def h(a):\n    if a:\n        return\n    raise ValueError('always here')\n"
    assert _derived(code)[0]["condition"] == "not a"  # an early return still says it


def test_a_collection_the_code_holds_in_a_name_is_read_with_its_items():
    """`x not in SUPPORTED` (a module constant, a class attribute, what a method returns as
    a literal) carries its items (derived.collections); `not found` where `found =
    TABLE.get(key)` over a dict of classes is raised exactly when key is not among its keys
    (derived.lookups). A dict with a value that may be falsy, or a collection built at run
    time, is not read."""
    code = (
        "SUPPORTED = ('awq', 'gptq')\n"
        "class P:\n"
        "    TABLE = {'llama3': Llama3, 'qwen': Qwen}\n"
        "    MAYBE = {'a': None}\n"
        "    def sizes(self):\n        'The sizes.'\n        return [64, 128]\n"
        "    def f(self, method, parser, size, other, names):\n"
        "        found = self.TABLE.get(parser)\n"
        "        if not found:\n            raise ValueError(f'Unsupported parser: {parser}')\n"
        "        if method not in SUPPORTED:\n            raise ValueError(f'Bad {method}')\n"
        "        supported = self.sizes()\n"
        "        if size not in supported:\n            raise ValueError(f'Bad size {size}')\n"
        "        maybe = self.MAYBE.get(other)\n"
        "        if maybe is None:\n            raise ValueError(f'Bad other {other}')\n"
        "        built = set(names)\n"
        "        if method not in built:\n            raise ValueError(f'Not built {method}')\n"
        "        if method not in FILLED:\n            raise ValueError(f'Not filled {method}')\n"
        "FILLED = ['a']\n"
        "def register(name):\n    FILLED.append(name)\n"
    )
    parser, method, size, other, built, filled = _derived(code)
    assert "collections" not in filled  # a list the module fills is not its literal
    assert parser["lookups"] == {"found": {"key": "parser", "in": ["llama3", "qwen"]}}
    assert method["collections"] == {"SUPPORTED": ["awq", "gptq"]}
    assert size["collections"] == {"supported": [64, 128]}
    assert "lookups" not in other and "collections" not in other
    assert "collections" not in built


def test_a_local_or_property_that_holds_a_printed_value_is_that_placeholder():
    """vLLM's prompt length check: `len(tokens) > max_input_tokens`, where the message prints
    `token_count = len(tokens)` and `self.max_total_tokens`, and `max_input_tokens` is a
    property that returns it (or None): both sides are the placeholders (derived.printed). A
    property that returns two different things says nothing."""
    code = (
        "class R:\n"
        "    @property\n"
        "    def max_input_tokens(self):\n"
        "        if self.max_total_tokens is None:\n            return None\n"
        "        return self.max_total_tokens\n"
        "    @property\n"
        "    def either(self):\n"
        "        if self.a:\n            return self.a\n"
        "        return self.b\n"
        "    def check(self, tokens):\n"
        "        max_input_tokens = self.max_input_tokens\n"
        "        if max_input_tokens is not None and len(tokens) > max_input_tokens:\n"
        "            token_count = len(tokens)\n"
        "            raise ValueError(\n"
        "                f'The limit is {self.max_total_tokens}, you sent {token_count}')\n"
        "    def other(self, n):\n"
        "        if n > self.either:\n"
        "            raise ValueError(f'{n} over {self.a} or {self.b}')\n"
    )
    check, other = _derived(code)
    assert check["printed"] == {
        "max_input_tokens": "max_total_tokens",
        "len(tokens)": "token_count",
    }
    assert "printed" not in other


def test_an_alternative_of_the_condition_maps_its_printed_names_too():
    """`type_ != 'float' or num_bits != 8` with the message's `{type}`: the alternative's
    side is that placeholder (derived.printed), as a comparison of the `and` would be."""
    code = (
        "def f(scheme, type_, num_bits):\n"
        "    if scheme is not None and (type_ != 'float' or num_bits != 8):\n"
        "        raise ValueError(f'got num_bits={num_bits}, type={type_}')\n"
    )
    (derived,) = _derived(code)
    assert derived["printed"] == {"type_": "type"}


def test_an_elif_says_the_earlier_branch_unless_its_own_test_excludes_it():
    code = (
        "def f(active, requested, mode):\n"
        "    if active:\n        pass\n"
        "    elif requested:\n        raise ValueError('requested but skipped here')\n"
        "    if mode == 'a':\n        pass\n"
        "    elif mode == 'b':\n        raise ValueError('mode b is refused here')\n"
    )
    first, second = _derived(code)
    assert first["condition"] == "not active and requested"
    assert second["condition"] == "mode == 'b'"  # mode == 'b' already says mode != 'a'


def test_finite_checks_are_limits_and_an_unopened_file_is_not_found():
    code = (
        "import math\n"
        "def f(self, path, cap):\n"
        "    if not math.isfinite(self.temperature):\n"
        "        raise ValueError(f'temperature must be a finite number, got {self.temperature}')\n"
        "    if not cap.isOpened():\n"
        "        raise ValueError(f'Could not open video file {path}')\n"
    )
    finite, video = _derived(code)
    assert finite["category"] == "limit" and video["category"] == "not-found"


def test_an_environment_switch_inside_a_check_leaves_the_category_to_the_check():
    code = (
        "def check(pre, local):\n"
        "    if pre < local * 0.9:\n"
        "        if envs.SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK.get():\n"
        "            raise RuntimeError(f'The memory capacity is unbalanced: {pre}')\n"
    )
    (derived,) = _derived(code)
    assert derived["category"] == "limit"


def test_a_raise_restating_a_caught_check_takes_the_checks_category():
    """Issue 40 (sglang 4964a21c7b18c0e8): `except ValueError as e: raise RuntimeError(f"...
    failed: {e}")` restates what the module's own validator raised (a bundle over 1 GPU, too
    few bundles): a limit, not an internal invariant. Unlike kinds, or nothing it calls, leave
    it be."""
    code = (
        "def _validate(pg, world_size):\n"
        "    for bundle in pg.bundles:\n"
        "        if bundle.gpus > 1:\n"
        "            raise ValueError(f'exactly 1 GPU per bundle, found {bundle.gpus}')\n"
        "    if len(pg.bundles) < world_size:\n"
        "        raise ValueError(f'{len(pg.bundles)} bundles, but needs {world_size}')\n"
        "def launch(pg, world_size, custom):\n"
        "    if not custom:\n        return\n"
        "    try:\n        _validate(pg, world_size)\n"
        "    except ValueError as e:\n"
        "        raise RuntimeError(f'Custom placement group validation failed: {e}') from e\n"
        "    try:\n        other(pg)\n"
        "    except ValueError as e:\n"
        "        raise RuntimeError(f'Other step failed: {e}') from e\n"
        "    try:\n        _validate(pg, world_size)\n"
        "    except Exception as e:\n"
        "        raise RuntimeError(f'Anything failed: {e}') from e\n"
    )
    *_, restating, unknown, broad = _derived(code)
    assert restating["category"] == "limit"
    assert "outside the range" in restating["explanation"]
    assert "the values in the message" in restating["explanation"]
    assert unknown["category"] == "invariant"  # `other` is not this module's
    assert broad["category"] == "invariant"  # `except Exception` may restate anything


def test_titles_keep_only_and_lose_what_framed_a_value():
    assert template.title("Muse vision projector supports gelu only") == (
        "Muse vision projector supports gelu only"
    )
    assert template.title("FP8 KV is supported on {platform} only") == "FP8 KV is supported only"
    assert template.title("Compiling regex FSM ({variant}, one-time, ~15-20s)...") == (
        "Compiling regex FSM (one-time, ~15-20s)"
    )
    assert template.title("no pipeline for model_type={t} (supported: {s}; images only).") == (
        "No pipeline for model_type"
    )
    # a letter glued to a value is part of the value (round 2 found "C page_size" vague)
    assert template.title("c{r} page_size={a} != expected={b} for ori page_size={c}") == (
        "page_size != expected for ori page_size"
    )
    assert template.title("LLM.encode() is only supported for pooling models.") == (
        "LLM.encode() is only supported for pooling models"
    )


def test_titles_say_what_must_hold_and_drop_glued_values():
    """Issue 40, round 2: titles where a value was glued to a word ("c{ratio}", "{n}s"), or
    whose first clause only compared values, said nothing."""
    # a first clause that only compares values: the clause that says what must hold
    assert (
        template.title(
            "c{r} page_size={a} != expected={b} for ori page_size={c}; C4 and C128 must use their "
            "configured native page layouts (see Pool.kernel_page_size)"
        )
        == "C4 and C128 must use their configured native page layouts"
    )
    # a requirement after ";" stays with the first clause
    assert (
        template.title("gate tile ({m}, {n}) gives {k} outputs; must be a multiple of 128")
        == "Gate tile gives outputs; must be a multiple of 128"
    )
    # the word that announced a dropped value goes with it
    assert (
        template.title(
            "JIT module '{m}' has no usable cached build under {scope}, and X forbids it."
        )
        == "JIT module has no usable cached build, and X forbids it"
    )
    # units glued to a value go with it
    assert template.title("Warmup completed in {elapsed}s") == "Warmup completed"
    audio = "Audio exceeds maximum allowed duration of {d}s (metadata reports {m}s)"
    assert template.title(audio) == "Audio exceeds maximum allowed duration"
    # a unit after a space, a name's prefix glued by "_", an aside that starts with a value
    assert template.title("Rearranged experts {text} in {gpu_elapsed} s.") == "Rearranged experts"
    assert template.title("bad_video_duration:video_{i}:{d}") == "bad_video_duration"
    assert template.title("P2P {a}: rejecting peer {p} after a fault ({wait}s left)") == (
        "P2P: rejecting peer after a fault"
    )
    assert template.title("Expected total tokens {n} % tp_size to be 0") == (
        "Expected total tokens % tp_size to be 0"
    )
    # "; running ..." is another sentence, not a requirement
    assert template.title("X is only supported on cuda; running eagerly on {d}.") == (
        "X is only supported on cuda"
    )


def test_runtime_failures_are_their_own_category():
    """Issue 40, round 2: a connectivity probe failing and a server process exiting were
    called internal invariants; they are failures of something running, not checks."""
    code = (
        "def probe(self):\n"
        "    try:\n        self.client.head()\n"
        "    except Exception as e:\n"
        "        raise RuntimeError(f'Object store tier connectivity probe failed: {e}')\n"
        "def wait(process):\n"
        "    if process is None:\n        return\n"
        "    if not process.is_alive():\n        raise RuntimeError('Server process exited')\n"
        "def connect(sock):\n"
        "    if not sock:\n        raise ConnectionError('no socket')\n"
        "def wait_all(state):\n"
        "    while True:\n"
        "        if state != 'PROC':\n"
        "            raise RuntimeError(f'NIXL transfer failed with state={state}')\n"
        "def elastic(self):\n"
        "    if self.a and self.b:\n"
        "        raise NotImplementedError('Elastic EP is not compatible with hybrid lb')\n"
        "def layout(i):\n"
        "    if i == 0:\n        pass\n"
        "    elif i == 9:\n        pass\n"
        "    else:\n"
        "        raise ValueError(f'packed layout only supports first/last anchors, got {i}')\n"
        "def load(scope):\n"
        "    if envs.SGLANG_CRASH_ON_JIT_COMPILE.get():\n"
        "        raise RuntimeError(f'JIT module has no usable cached build under {scope}')\n"
    )
    probe, exited, connection, transfer, elastic, layout, jit = _derived(code)
    assert transfer["category"] == "runtime-failure"
    assert transfer["condition"] == "state != 'PROC'"  # `while True:` says nothing
    assert elastic["category"] == "unsupported-combination"  # NotImplementedError, but says so
    assert layout["category"] == "unsupported-combination"
    code = (
        "def f(types):\n"
        "    if types not in ('full', 'shared'):\n"
        "        raise ValueError(f\"indexer only supports 'full' and 'shared', got {types}\")\n"
    )
    (listed,) = _derived(code)
    assert listed["category"] == "invalid-choice"  # a value outside a list
    code = (
        "def f(a, b, c, end, file_size):\n"
        "    if a is None and b is None and c is None:\n"
        "        raise ValueError('The model has no a, b or c, cannot determine the layers')\n"
        "    if end_size != -1:\n"
        "        raise ValueError(f'X requires --chunked-prefill-size -1, got {end_size}')\n"
        "    if file_size != 16:\n"
        "        raise ValueError(f'Marlin requires group_size=16, got {file_size}')\n"
        "    if end != file_size:\n"
        "        raise ValueError(f'pack has unexplained trailing bytes: {file_size - end}')\n"
    )
    nothing, minus_one, required, trailing = _derived(code)
    assert minus_one["category"] == "unsupported-combination"
    assert required["category"] == "unsupported-combination"  # a required value, not two sizes
    assert nothing["category"] == "not-found"  # none of them given: not a combination
    assert trailing["category"] == "mismatch"  # two sizes disagree
    assert probe["category"] == exited["category"] == "runtime-failure"
    assert connection["category"] == "runtime-failure"
    assert "No value was checked" in exited["explanation"]
    assert jit["category"] == "not-found"  # the cached build the flag needs is missing
    assert derived_words.CATEGORIES["runtime-failure"].startswith("runtime failure")


def test_start_up_validators_and_per_request_cache_work_are_staged_where_they_run():
    """Issue 40, round 2: a tokenizer check called only from start-up code, and the handshake
    metadata the engine core hands its connector, were staged as request handling; a cache's
    prefetch of a request's pages as start-up."""
    from errorkb.projects.sglang.knowledge import SglangKnowledge
    from errorkb.projects.vllm.knowledge import VllmKnowledge

    vllm, sgl = VllmKnowledge(), SglangKnowledge(root="python/")
    manager = "vllm/parser/parser_manager.py"
    assert vllm.stage(manager, "ParserManager._compose_parser") == "engine-startup"
    base = "vllm/distributed/kv_transfer/kv_connector/v1/base.py"
    assert vllm.stage(base, "KVConnectorBase_V1.set_xfer_handshake_metadata_pp_aware") == (
        "engine-startup"
    )
    assert vllm.stage(base, "KVConnectorBase_V1.start_load_kv") == "request-handling"
    hybrid = "python/sglang/srt/mem_cache/hybrid_cache/hybrid_cache_controller.py"
    ssu = "vllm/model_executor/layers/mamba/ops/ssu_dispatch.py"
    assert vllm.stage(ssu, "initialize_mamba_ssu_backend") == "engine-startup"
    p2p = "vllm/v1/kv_offload/tiering/p2p/manager.py"
    assert vllm.stage(p2p, "P2PSecondaryTierManager._accept_new_peers") == "request-handling"
    assert vllm.stage(p2p, "P2PSecondaryTierManager.__init__") == "engine-startup"
    docs = "vllm/entrypoints/serve/instrumentator/offline_docs.py"
    assert vllm.stage(docs, "attach_router") == "engine-startup"  # while the app is built
    cohere = "vllm/model_executor/models/cohere_asr.py"
    assert vllm.stage(cohere, "CohereAsr._parse_and_validate_audio_input") == "request-handling"
    assert sgl.stage(hybrid, "HybridCacheController._page_transfer_sidecar") == ("request-handling")
    assert sgl.stage(hybrid, "HybridCacheController.__init__") == "engine-startup"
    factory = "python/sglang/srt/mem_cache/storage/backend_factory.py"
    assert sgl.stage(factory, "StorageBackendFactory._load_backend_class") == "engine-startup"
    utils = "python/sglang/srt/mem_cache/utils.py"
    assert sgl.stage(utils, "get_eviction_strategy") == "engine-startup"
    assert sgl.stage(hybrid, "HybridCacheController._stop_pp_prefetch_thread") == "engine-startup"

    class Site:
        def __init__(self, path, function, stage):
            self.path, self.function, self.derived = path, function, {"stage": stage}

    template_py = "vllm/parser/response_template.py"
    check = Site(template_py, "validate_tokenizer_response_template", "request-handling")
    per_request = Site(template_py, "validate_response_template_for_serving", "request-handling")
    calls = {
        (manager, "ParserManager._compose_parser"): {"validate_tokenizer_response_template"},
        (template_py, "_serving_template"): {"validate_response_template_for_serving"},
        (manager, "ParserManager.x"): {"validate_response_template_for_serving"},
    }
    explain.stages_from_callers([check, per_request], calls, vllm)
    assert check.derived["stage"] == "engine-startup"  # its one caller runs at start-up
    assert per_request.derived["stage"] == "request-handling"  # one of its callers serves


def test_stages_of_layer_ops_kv_events_the_profiler_and_the_tokenizer_registry():
    """Issue 40, sample 7301: a Mamba CPU op under layers/*/ops/ was staged model loading,
    the KV-event publisher's publish start-up, the profiler's override check start-up, the
    tokenizer registry request handling."""
    from errorkb.projects.vllm.knowledge import VllmKnowledge

    vllm = VllmKnowledge()
    op = "vllm/model_executor/layers/mamba/ops/cpu/mamba_ssm.py"
    assert vllm.stage(op, "_mamba_chunk_scan_combined_fwd_cpu") == "kernel-selection"
    assert vllm.stage("vllm/model_executor/layers/linear.py", "x") == "model-loading"
    events = "vllm/distributed/kv_events.py"
    assert vllm.stage(events, "ZmqEventPublisher.publish") == "request-handling"
    assert vllm.stage(events, "KVEventAggregator.add_events") == "request-handling"
    assert vllm.stage(events, "KVEventAggregator.__init__") == "engine-startup"
    assert vllm.stage(events, "EventPublisherFactory.create") == "engine-startup"
    abstract = "vllm/v1/executor/abstract.py"
    assert vllm.stage(abstract, "_check_worker_profile_kwargs") == "request-handling"
    assert vllm.stage(abstract, "Executor.initialize_from_config") == "engine-startup"
    registry = "vllm/tokenizers/registry.py"
    assert vllm.stage(registry, "_TokenizerRegistry.load_tokenizer_cls") == "engine-startup"


def test_combinations_said_in_words_and_asserts_on_the_users_settings():
    """Issue 40, sample 7301: "require" (plural), "not supported in", "not available for",
    "when using", "exactly one of", "cannot specify both" are combinations; "do not match"
    a mismatch; an assert whose test reads a server argument checks the user's settings."""
    code = (
        "def f(data, field, a, b, self, cfg, fields, request):\n"
        "    if self.pre and self.backend != 'trt':\n"
        "        raise RuntimeError(f'pre-processed weights require trt backend, got {a}')\n"
        "    if request.stream and request.wants_logprobs():\n"
        "        raise ValueError('logprobs are not supported in streaming mode')\n"
        "    if self.mm_processor is None:\n"
        "        raise ValueError('Multi-modal processor not available for text-only models')\n"
        "    if (top := data.get('top')) > 0 and not data.get('logprobs'):\n"
        "        raise ValueError('when using `top`, `logprobs` must be set to true.')\n"
        "    if len(fields) != 1 or not fields[0]:\n"
        "        raise ValueError('Exactly one of texts, images, or inputs must be provided')\n"
        "    if a in field and b in field:\n"
        "        raise ValueError(f'cannot specify both {a} and {b}')\n"
        "    if a * b != self.size:\n"
        "        raise ValueError('The dimensions for the head state do not match the size')\n"
        "    assert not a, 'this kernel does not support that'\n"
    )
    *combined, mismatch, kernel = _derived(code)
    assert [d["category"] for d in combined] == ["unsupported-combination"] * 6
    assert mismatch["category"] == "mismatch"
    # An assert whose words state what is supported is no invariant, though its test reads no
    # setting of the user's: blind samples labelled such asserts a combination 4 times (7308,
    # 7309, 7312) and an invariant once (7301). Untraced, the page then claims no kind at all.
    assert kernel["category"] == "unsupported-combination"
    assert "category" not in derived_words.claimed(kernel, "assert")

    class Knows(explain.Knowledge):
        def setting(self, chain, owner):
            if chain[-1] == "cp_size":
                return explain.Setting("server_args.cp_size", "--cp-size", kind="server-arg")
            return None

        def stage(self, path, function):
            return "config-validation" if function == "check" else "request-handling"

    code = (
        "def check(cfg):\n"
        "    assert not (cfg.cp_size > 1), '--backend trt does not support context parallelism'\n"
    )
    code += "def serve(cfg):\n    assert not (cfg.cp_size > 1), 'cp state went wrong'\n"
    checked, serving = _derived(code, Knows())
    # not an invariant: what a raise of that test would be, a backend that does not support a
    # feature (issue 40, sample 7305: "does not support" says a combination, not a range)
    assert checked["category"] == "unsupported-combination"
    assert serving["category"] == "invariant"  # code that runs later guards its own state
    # "when using" says a combination only with what must hold
    assert explain._WORDS["unsupported-combination"].search("n must be 1 when using greedy")
    assert not explain._WORDS["unsupported-combination"].search("to avoid a leak when using X")
    # a feature that refuses another flag
    assert explain._WORDS["unsupported-combination"].search("X does not support --enable-y")


def test_a_re_raise_is_an_exit_and_a_long_condition_names_its_own_test_first():
    """Issue 40, sample 7301: `if last: raise` in a handler leaves out the log line after it;
    a long condition's summary named the early returns and a type (`dict`), not the test."""
    code = (
        "def retry(func, attempts):\n"
        "    for attempt in range(attempts):\n"
        "        try:\n            return func()\n"
        "        except Exception as e:\n"
        "            if attempt == attempts - 1:\n                raise\n"
        "            logger.error('%s, retrying %d of %d', e, attempt + 1, attempts)\n"
        "def check(data):\n"
        "    if not isinstance(data, dict):\n        return data\n"
        "    if data.get('ids_for_the_tokens_here') and data.get('use_beam_search_please'):\n"
        "        return None\n"
        "    if (top := data.get('top_logprobs')) is not None:\n"
        "        if (top == -1 or top > 0) and not data.get('logprobs'):\n"
        "            raise ValueError('when using `top_logprobs`, `logprobs` must be set.')\n"
    )
    scan = ex.scan_file("m.py", code.encode(), knowledge=explain.Knowledge(), printed=True)
    logged, long = (site.derived for site in scan.sites)
    assert logged["condition"] == "Exception was raised and attempt != attempts - 1"
    assert long["quantities"][:2] == ["data['logprobs']", "top"]
    assert "dict" not in long["quantities"]


def test_titles_keep_ranges_and_operands_and_lose_labelled_values():
    """Issue 40, sample 7301: "num_tokens must" said nothing; "D % == 0, got D" and ": shape
    stride" were labels of values gone."""
    assert template.title("num_tokens must be in [1, {max_tokens}]") == (
        "num_tokens must be in [1, max_tokens]"
    )
    assert template.title("requires D % {ALIGN} == 0, got D={D}") == "Requires D % ALIGN == 0"
    assert template.title("page stride must be 256B-aligned: shape={s} stride={t}") == (
        "Page stride must be 256B-aligned"
    )
    assert template.title("requires len divisible by page_size ({p}), got len={n}") == (
        "Requires len divisible by page_size"
    )
    assert template.title("scales should not be None, got a={a}, len(b)={b}") == (
        "Scales should not be None"
    )


def test_stages_of_warm_up_forward_passes_and_model_config_fix_ups():
    """Issue 40: start-up warm-up was staged as request handling (its module serves requests),
    a layer's forward as model loading, an architecture's config fix-up as model loading."""
    from errorkb.projects.sglang.knowledge import SglangKnowledge
    from errorkb.projects.vllm.knowledge import VllmKnowledge

    sgl, vllm = SglangKnowledge(root="python/"), VllmKnowledge()
    http = "python/sglang/srt/entrypoints/http_server.py"
    assert sgl.stage(http, "_wait_and_warmup") == "engine-startup"
    assert sgl.stage(http, "openai_v1_chat_completions") == "request-handling"
    warmup = "python/sglang/srt/entrypoints/warmup.py"
    assert sgl.stage(warmup, "whisper_autodetect") == "engine-startup"
    layers = "python/sglang/srt/layers/vocab_parallel_embedding.py"
    assert sgl.stage(layers, "ParallelLMHead.forward") == "engine-startup"
    assert sgl.stage(layers, "ParallelLMHead.__init__") == "model-loading"
    moe = "python/sglang/srt/layers/moe/fused_moe.py"
    assert sgl.stage(moe, "FusedMoE.forward") == "kernel-selection"  # a kernel layer's own
    assert vllm.stage("vllm/v1/worker/gpu_worker.py", "Worker.compile_or_warm_up_model") == (
        "engine-startup"
    )
    config = "vllm/model_executor/models/config.py"
    assert vllm.stage(config, "UnlimitedOCRForCausalLMConfig.verify_and_update_config") == (
        "config-validation"
    )
    assert not explain.WARMUP.search("warmup_done_callback.handle")


def test_an_unguarded_raise_is_unconditional(sites):
    derived = site(sites, "ToyAttention.forward is not implemented")
    assert derived["unconditional"] is True and "condition" not in derived


def test_a_long_condition_names_its_quantities():
    code = (
        "def f(a, b, c):\n    if "
        + " and ".join(f"some_rather_long_name_{i}.attribute_{i} > {i}" for i in range(5))
        + ":\n        raise ValueError('too long a test')\n"
    )
    (found,) = ex.scan_file("m.py", code.encode(), knowledge=explain.Knowledge()).sites
    assert "condition" not in found.derived
    assert found.derived["quantities"][:2] == [
        "some_rather_long_name_0.attribute_0",
        "some_rather_long_name_1.attribute_1",
    ]


def test_flags_are_traced_through_locals_self_attributes_and_configs(sites):
    tp = {
        "kind": "engine-arg",
        "field": "parallel_config.tensor_parallel_size",
        "flag": "--tensor-parallel-size",
        "keyword": "LLM(tensor_parallel_size=...)",
        "url": f"{DOCS}#-tensor-parallel-size-tp",
    }
    # tp_size <- parallel_config.tensor_parallel_size <- vllm_config.parallel_config (locals)
    # with the value that passes the check: a divisor of the head count the message prints
    divides = {"passes": {"op": "divides", "param": "num_heads"}}
    assert site(sites, "num_heads")["flags"] == [{"name": "tp_size", **tp, **divides}]
    # self.tp_size, assigned once from the helper that returns the TP size
    combo = [
        {k: v for k, v in f.items() if k != "passes"}
        for f in site(sites, "Compilation mode 3")["flags"]
    ]
    assert {"name": "self.tp_size", **tp} in combo or {"name": "tp_size", **tp} in combo
    # a config given as one JSON flag: the flag and the key
    assert any(f["flag"] == "--compilation-config" and f["key"] == "mode" for f in combo)
    # self.cache_config.<field>; a boolean field's anchor has its --no- form
    cache = site(sites, "Prefix caching is not supported")["flags"]
    assert [f["flag"] for f in cache] == ["--enable-prefix-caching", "--block-size"]
    assert cache[0]["url"] == f"{DOCS}#-enable-prefix-caching-no-enable-prefix-caching"
    # self.<field> in a config class, and in EngineArgs
    assert site(sites, "pipeline_parallel_size")["flags"][0]["flag"] == "--pipeline-parallel-size"
    assert site(sites, "Unsupported block size")["flags"][0]["field"] == "cache_config.block_size"
    # a value with no setting behind it has no flag
    assert "flags" not in site(sites, "head_size {head_size} is too large")


def test_every_category_and_stage(sites):
    expect = {
        "num_heads": "divisibility",
        "head_size {head_size} is not a multiple": "divisibility",
        "head_size {head_size} is too large": "limit",
        "max_tokens": "limit",
        "Compilation mode 3": "unsupported-combination",
        "The toy model needs": "missing-dependency",
        "ToyAttention.forward": "not-implemented",
        "Unknown attention backend": "invalid-choice",
        "weights must be a dict": "mismatch",
        "Checkpoint": "not-found",
        "block table out of sync": "invariant",
        "Warm-up runs once per rank": "logged",  # a log line's `>` is not a limit
        "Toy worker process exited": "runtime-failure",  # a process failed, no value checked
    }
    for message, category in expect.items():
        assert site(sites, message)["category"] == category, message
    assert set(expect.values()) == set(derived_words.CATEGORIES)
    assert site(sites, "max_tokens")["stage"] == "request-handling"
    assert site(sites, "pipeline_parallel_size")["stage"] == "config-validation"
    # EngineArgs.create_engine_config builds the configs from the arguments (samples 7311, 7312)
    assert site(sites, "Unsupported block size")["stage"] == "config-validation"
    assert site(sites, "num_heads")["stage"] == "model-loading"
    assert site(sites, "ToyAttention.forward")["stage"] == "engine-startup"  # first forward
    # A helper in a module of no stage runs at the stage of its callers (the call graph).
    assert site(sites, "{name} must be positive")["stage"] == "config-validation"


def test_explanations_fill_in_the_records_names(sites):
    derived = site(sites, "num_heads")
    assert derived["divisibility"] == {
        "value": "num_heads",
        "divisor": "tp_size",
        "value_param": "num_heads",
        "divisor_param": "tp_size",
    }
    assert "`num_heads`" in derived["explanation"] and "`tp_size`" in derived["explanation"]
    assert any("`--tensor-parallel-size`" in t for t in derived["try"])
    constant = site(sites, "head_size {head_size} is not a multiple")
    assert "multiple of 8" in constant["explanation"]


def test_titles_have_no_placeholders(sites):
    assert (
        site(sites, "num_heads")["title"] == "num_heads must be divisible by tensor parallel size"
    )
    assert site(sites, "Checkpoint")["title"] == "Checkpoint not found"
    assert site(sites, "block table out of sync")["title"] == "Block table out of sync"
    for derived in sites.values():
        assert not re.search(r"[{}]", derived["title"]) and len(derived["title"]) <= 120
    # A value in brackets goes with the word that announced it; `--flags` keep their dashes.
    message = "--draft-layers must be indices in [0, {last}]; got {ids}."
    assert template.title(message) == "--draft-layers must be indices"
    assert template.title("{a} {b}") == ""


def test_enum_keys_are_the_schemas():
    schema = json.loads((Path(ex.__file__).parents[1] / "error.schema.json").read_text())
    props = schema["properties"]["derived"]["properties"]
    assert props["stage"]["enum"] == list(derived_words.STAGES)
    assert props["category"]["enum"] == list(derived_words.CATEGORIES)


def test_a_project_without_a_wing_gets_conditions_but_no_flags():
    code = b"def f(cfg, n):\n    if n % cfg.tensor_parallel_size:\n        raise ValueError('n')\n"
    (found,) = ex.scan_file("p.py", code, knowledge=explain.Knowledge()).sites
    assert found.derived["condition"] == "n % cfg.tensor_parallel_size != 0"
    assert "flags" not in found.derived and "stage" not in found.derived


# Records, pages and documents ------------------------------------------------------------

CURATED = """\
# yaml-language-server: $schema=../../../generator/error.schema.json
id: 00000000000000e5
project: demo
exception: ValueError
message: >-
  num_heads ({num_heads}) must be divisible by tensor parallel size ({tp_size}).
title: Heads not divisible by TP   # a person's title wins
params:
  num_heads: {type: int, about: The head count.}
  tp_size: {type: int}
source:
  path: vllm/model_executor/models/toy.py
meaning: |
  Written by a person; extract never touches it.
checked:
  release: 9.8.7
"""


def test_extract_fills_derived_without_touching_human_text_and_is_idempotent(kb):
    curated = kb / "content/errors/demo/00000000000000e5.yaml"
    curated.write_text(CURATED)
    first = ex.extract(kb, TREE, "demo", "v9.8.7", asserts=True)
    assert "00000000000000e5" in first.updated and first.created
    text = curated.read_text()
    data = yaml.safe_load(text)
    assert text.startswith(CURATED[: CURATED.index("source:")])  # byte for byte
    assert "\nmeaning: |\n  Written by a person; extract never touches it.\n" in text
    assert data["derived"]["ref"] == "v9.8.7" and data["derived"]["category"] == "divisibility"
    content = load_content(kb)
    assert content.records["00000000000000e5"].title == "Heads not divisible by TP"
    stubs = [r for r in content.records.values() if r.id in first.created]
    assert all(r.title == r.derived["title"] for r in stubs)
    files = {p: p.read_bytes() for p in (kb / "content/errors/demo").glob("*.yaml")}
    again = ex.extract(kb, TREE, "demo", "v9.8.7", asserts=True)
    assert not again.created and not again.updated
    assert {p: p.read_bytes() for p in files} == files


@pytest.fixture(scope="module")
def divisor_site(tmp_path_factory):
    """The fixture knowledge base with the toy tree extracted into it, built."""
    from tests.conftest import make_kb

    kb = make_kb(tmp_path_factory.mktemp("explain") / "kb")
    (kb / "content/errors/demo/00000000000000e5.yaml").write_text(CURATED)
    ex.extract(kb, TREE, "demo", "v9.8.7", asserts=True)
    build(kb)
    return kb


def record_id(kb: Path, start: str) -> str:
    for path in (kb / "content/errors/demo").glob("*.yaml"):
        if yaml.safe_load(path.read_text())["message"].startswith(start):
            return path.stem
    raise AssertionError(start)


def test_the_page_shows_what_is_derived_and_the_divisor_table(divisor_site):
    rid = record_id(divisor_site, "head_size {head_size} is too large")
    html = (divisor_site / "site/errors" / rid / "index.html").read_text()
    assert "<h1>head_size is too large</h1>" in html and "<title>head_size is too large" in html
    assert html.count('<code class="message">head_size ') == 1  # the message, once, below
    section = html[html.index('id="from-the-code"') : html.index('id="source"')]
    assert "Read automatically from the code at v9.8.7" in section
    assert "<code>head_size &gt; 256</code>" in section and "model loading" in section
    # No setting of the user's is traced to head_size: whether the value is the user's or the
    # code's own is not known, so no kind of check is claimed, nor tries written from one.
    assert "Kind of check" not in section and "What to try" not in section
    preview = re.search(r'<meta property="og:description" content="([^"]*)"', html)
    assert preview and preview.group(1) == "head_size … is too large"  # no raw {placeholder}
    # A refusal of a setting traced (--pipeline-parallel-size) says its kind and what to try.
    rid = record_id(divisor_site, "pipeline_parallel_size {pipeline_parallel_size} is")
    html = (divisor_site / "site/errors" / rid / "index.html").read_text()
    section = html[html.index('id="from-the-code"') : html.index('id="source"')]
    assert "<dt>Kind of check<dd>limit or range" in section and "What to try" in section
    preview = re.search(r'<meta property="og:description" content="([^"]*)"', html)
    assert preview and preview.group(1).startswith("A value is outside the range")
    # A curated record: its own title and text, and one line of what the code says.
    rid = record_id(divisor_site, "num_heads")
    html = (divisor_site / "site/errors" / rid / "index.html").read_text()
    assert "<h1>Heads not divisible by TP</h1>" in html and "What to try" not in html
    line = re.search(r'<p class="derived muted" id="from-the-code">(.*)</p>', html)
    assert line and "<code>num_heads % tp_size != 0</code>; model loading; divisibility" in (
        line.group(1)
    )
    assert (
        f'<a href="{DOCS}#-tensor-parallel-size-tp">'
        '<code class="f">--tensor-parallel-size</code></a>'
        " (an engine argument; in Python <code>LLM(tensor_parallel_size=...)</code>)"
    ) in line.group(1)
    # The divisor calculator: static answers computed by calc.py, the widget's script.
    assert 'data-divisors data-value="num_heads" data-divisor="tp_size"' in html
    # the setting as the parser spells it, for divisors.js to name it (issue 44)
    assert 'data-setting="--tensor-parallel-size" data-gpus>' in html
    row = re.search(r"<tr data-n=\"20\"><td>20<td>([^\n<]*)", html)
    assert row and row.group(1) == ", ".join(map(str, calc.divisors(20)))
    assert "/assets/divisors.js" in html
    # the release its text was checked against: in the footer's line and the API document
    footer = html[html.index('<div class="record-footer">') :]
    assert "Checked against Demo 9.8.7" in footer
    doc = json.loads((divisor_site / f"site/api/errors/{rid}.json").read_text())
    assert doc["checked"] == {"release": "9.8.7"}
    assert doc["derived"]["divisibility"]["divisor_param"] == "tp_size"
    assert doc["computed"]["derived"] == {
        "stage": "model loading",
        "category": "divisibility",
        "relation": {"left": "num_heads", "op": "%", "right": "tp_size"},
        "settings": [{"handle": "--tensor-parallel-size", "kind": "an engine argument"}],
        "passes": [
            {
                "write": "--tensor-parallel-size {}",
                "kind": "an engine argument",
                "current": "tp_size",
                "op": "divides",
                "param": "num_heads",
            }
        ],
        # the divisor's role: the setting that sets it, a count of GPUs (settings.py)
        "divisor": {"fixed": False, "setting": "--tensor-parallel-size", "gpus": True},
        # the condition as the page tests it (api.case_tests): the divisor a setting
        "tests": [
            [
                {
                    "left": "num_heads",
                    "op": "%",
                    "right": "tp_size",
                    "set": {"right": "--tensor-parallel-size {}"},
                }
            ]
        ],
    }
    assert "<code>num_heads</code>" in doc["html"]["derived_explanation"]


def test_no_divisor_calculator_without_a_variable_divisor(divisor_site):
    rid = record_id(divisor_site, "head_size {head_size} is not a multiple")
    html = (divisor_site / "site/errors" / rid / "index.html").read_text()
    assert "data-divisors" not in html and 'id="from-the-code"' in html


def test_a_copy_of_the_tree_without_the_parser_has_no_flags(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    (tree / "vllm/engine/arg_utils.py").unlink()  # no parser: not read as vLLM's
    scan = ex.scan_tree(tree, knowledge=lambda f: wing("vllm").knowledge(f) or explain.Knowledge())
    assert scan.sites and all(s.derived and "flags" not in s.derived for s in scan.sites)
    assert any(s.derived["category"] == "divisibility" for s in scan.sites)


@pytest.mark.parametrize(
    ("condition", "value"),
    [
        ("heads % tp != 0", "heads"),
        ("tp > 1 and heads % tp != 0", "heads"),  # every part of an `and` holds
        ("n >= 2 ** 23 or row % align != 0", None),  # an `or`: the remainder may be 0
    ],
)
def test_divisibility_only_from_a_test_that_holds_when_raised(condition, value):
    ctx = explain.Context(
        node=ast.parse("raise ValueError").body[0],
        exception="ValueError",
        message="m",
        function="f",
        path="p.py",
        guards=[],
        exits=[],
        owner=None,
        holes=[],
        resolve=lambda name: None,
    )
    div = explain.divisibility(ast.parse(condition, mode="eval").body, ctx)
    assert (div and div["value"]) == value


def test_a_stub_page_tests_its_condition_on_the_values(divisor_site):
    """The derived condition as a relation of the message's values, for "Your case"."""
    rid = record_id(divisor_site, "head_size {head_size} is too large")
    doc = json.loads((divisor_site / f"site/api/errors/{rid}.json").read_text())
    relation = {"left": "head_size", "op": ">", "right": 256}
    assert doc["computed"]["derived"]["relation"] == relation
    html = (divisor_site / "site/errors" / rid / "index.html").read_text()
    tests = [[{"left": "head_size", "op": ">", "right": 256}]]
    assert doc["computed"]["derived"]["tests"] == tests  # what the page tests (case_tests)
    assert "data-tests=" in html
    rid = record_id(divisor_site, "num_heads")  # a remainder test
    doc = json.loads((divisor_site / f"site/api/errors/{rid}.json").read_text())
    relation = {"left": "num_heads", "op": "%", "right": "tp_size"}
    assert doc["computed"]["derived"]["relation"] == relation
    rid = record_id(divisor_site, "Unknown head_size")  # `not in`: said, not tested
    doc = json.loads((divisor_site / f"site/api/errors/{rid}.json").read_text())
    assert "relation" not in doc["computed"]["derived"]


def test_an_older_tree_with_one_config_module_names_the_same_settings(tmp_path):
    """vLLM 0.9 and before keep every config class in vllm/config.py, not vllm/config/: the
    settings its checks name are traced the same (a removed record's derived, as that
    release named them)."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    package = tree / "vllm" / "config"
    parts = [
        (package / name).read_text().replace("from vllm.config.", "# from vllm.config.")
        for name in ("cache.py", "compilation.py", "parallel.py", "vllm.py")
    ]
    shutil.rmtree(package)
    (tree / "vllm" / "config.py").write_text("\n".join(parts))

    def named(root: Path) -> dict[str, list]:
        scan = ex.scan_tree(root, knowledge=wing("vllm").knowledge)
        return {
            s.template: sorted(f.get("flag") or f["name"] for f in s.derived.get("flags", []))
            for s in scan.sites
            if s.derived
        }

    old, new = named(tree), named(TREE)
    assert any(old.values()) and old == new


def test_the_schema_defines_each_stage_and_category_as_the_rules_read_them():
    """Issue 40, round 6: the labeller and the rules read one definition of each value."""
    schema = json.loads((Path(ex.__file__).parents[1] / "error.schema.json").read_text())
    props = schema["properties"]["derived"]["properties"]
    for name, means in (
        ("stage", derived_words.STAGE_MEANS),
        ("category", derived_words.CATEGORY_MEANS),
    ):
        assert list(means) == props[name]["enum"]
        for value, text in means.items():
            assert f"{value}: {text}" in props[name]["description"]
    assert derived_words.FLAGS_MEANS in props["flags"]["description"]


def test_a_count_tested_against_zero_is_a_limit_not_a_choice():
    """Issue 40, audit r10-r13 (vLLM 7103969482b3ea5e): `prompt_len == 0` with "The prompt
    cannot be empty" is the bottom of a range, not a value outside a set of choices. A name
    that is no count (`mode == 0`) or a string compared stays a choice."""
    code = (
        "def f(prompt_len, prompt_type):\n"
        "    if prompt_len == 0 and prompt_type == 'decoder':\n"
        "        raise ValueError(f'The {prompt_type} prompt cannot be empty')\n"
        "def g(num_tokens):\n"
        "    if num_tokens == 0:\n        raise ValueError('The batch is empty')\n"
        "def p(num_plugins):\n"
        "    if num_plugins == 0:\n        raise ValueError('No plugin chosen')\n"
        "def h(mode):\n"
        "    if mode == 0:\n        raise ValueError(f'Mode {mode} cannot be used here')\n"
        "def k(kind):\n"
        "    if kind == 'x':\n        raise ValueError(f'Kind {kind} cannot be used here')\n"
    )
    assert [d["category"] for d in _derived(code)] == [
        "limit",
        "limit",
        "invalid-choice",  # a count of 0 whose message says no bottom was reached
        "invalid-choice",
        "invalid-choice",
    ]


def test_a_name_already_in_the_codes_own_table_is_registered_twice():
    """Issue 40, audit r10-r13 (vLLM 7ec022ad9deeca9d): "Duplicate layer name" raised when the
    name is already a key of `compilation_config.static_forward_context` is a layer registered
    twice, not an invalid choice; a name checked against a literal list stays a choice."""
    code = (
        "def f(self, compilation_config):\n"
        "    if self.layer_name in compilation_config.static_forward_context:\n"
        "        raise ValueError(f'Duplicate layer name: {self.layer_name}')\n"
        "def g(name):\n"
        "    if name in ('a', 'b'):\n"
        "        raise ValueError(f'Duplicate layer name: {name}')\n"
    )
    assert [d["category"] for d in _derived(code)] == ["invariant", "invalid-choice"]


def test_two_counts_that_disagree_are_a_mismatch():
    """Issue 40, audit r10-r13 (vLLM 1f36bd13f8da5bfe): `num_actual_tokens !=
    num_expected_tokens` ("Attempted to assign N multimodal tokens to M placeholders") is the
    processor's output disagreeing with the prompt, not an internal invariant. A count compared
    with a state that is no count stays as it was."""
    code = (
        "def f(num_actual_tokens, num_expected_tokens):\n"
        "    if num_actual_tokens != num_expected_tokens:\n"
        "        raise ValueError(f'Attempted to assign {num_actual_tokens} tokens to "
        "{num_expected_tokens} placeholders')\n"
        "def g(num_steps, phase):\n"
        "    if num_steps != phase:\n"
        "        raise ValueError(f'Step {num_steps} reached in phase {phase}')\n"
        "def h(prompt_len, max_prompt_len):\n"
        "    if prompt_len == max_prompt_len:\n"
        "        raise ValueError(f'The prompt of {prompt_len} tokens is too long')\n"
    )
    assert [d["category"] for d in _derived(code)] == ["mismatch", "invariant", "limit"]


def test_not_available_when_another_setting_is_given_is_a_combination():
    """Issue 40, audit r10-r13 (vLLM ea7f3345720e892e): "`prompt_logprobs` are not available
    when `stream=True`" names two request fields, not a package; "X is not available" alone
    stays a missing dependency."""
    code = (
        "def f(data):\n"
        "    if data.get('stream') and data.get('prompt_logprobs'):\n"
        "        raise ValueError('`prompt_logprobs` are not available when `stream=True`.')\n"
        "def g(ok):\n"
        "    if not ok:\n        raise RuntimeError('flash_attn is not available')\n"
    )
    assert [d["category"] for d in _derived(code)] == [
        "unsupported-combination",
        "missing-dependency",
    ]


def test_what_the_user_supplies_or_the_server_runs_out_of_is_no_internal_invariant():
    """Issue 40, audit r10-r13: a checkpoint lacking weights (vLLM 183208001e1c6723) and an
    adapter whose modules differ from those expected (63519d13b02c6e2e) are mismatches; the KV
    pool running out while decoding (SGLang a40ef8fbee8476f7) is a limit; a background loop
    that died earlier (vLLM e1c0fc5531f9f5d4) is a runtime failure. A state check with none
    of these words stays an invariant."""
    code = (
        "def a(loaded, weights_not_loaded):\n"
        "    if loaded is not None and weights_not_loaded:\n"
        "        raise ValueError(f'Following weights were not initialized from checkpoint: "
        "{weights_not_loaded}')\n"
        "def b(unexpected_modules, expected):\n"
        "    if unexpected_modules:\n"
        "        raise ValueError(f'expected target modules in {expected} but received "
        "{unexpected_modules}')\n"
        "def c(out_cache_loc):\n"
        "    if out_cache_loc is None:\n"
        "        raise RuntimeError('Decode out of memory. Try to lower your batch size.')\n"
        "def d(self):\n"
        "    if self.errored:\n"
        "        raise RuntimeError('Background loop has errored already.')\n"
        "def e(self):\n"
        "    if self.state is None:\n"
        "        raise RuntimeError('Loop state was lost.')\n"
    )
    assert [d["category"] for d in _derived(code)] == [
        "mismatch",
        "mismatch",
        "limit",
        "runtime-failure",
        "invariant",
    ]


def test_the_terminal_prints_the_answer_naming_the_setting(divisor_site):
    """`errorkb match` prints, under the values, the answer the page gives: the option as
    the parser spells it, never only the code's `tp_size` (issue 44 item 2)."""
    import subprocess
    import sys

    paste = b"ValueError: num_heads (20) must be divisible by tensor parallel size (3).\n"
    done = subprocess.run(
        [sys.executable, "-m", "errorkb", "match", "--site", str(divisor_site / "site")],
        input=paste,
        capture_output=True,
        timeout=120,
        check=True,
    )
    out = done.stdout.decode()
    assert (
        "Change --tensor-parallel-size 3 to 2 or 4, the nearest that divide 20 (within one "
        "8-GPU node, assumed)." in out
    ), out


def test_a_warning_or_error_line_claims_no_kind_the_rules_call_logged():
    """Issue 40, round 19: in the blind samples an error line the rules called "logged"
    (nothing failed) was wrong 4 times in 4, a warning's 10 in 22; an info line's was right
    39 of 39. The line keeps its explanation (it was logged, what that means), without the
    kind."""
    block = {
        "condition": "not ok",
        "stage": "request-handling",
        "category": "logged",
        "explanation": "An error reported in the log, not raised here.",
    }
    kept = {k: v for k, v in block.items() if k != "category"}
    assert derived_words.claimed(block, "log", "error") == kept
    assert derived_words.claimed(block, "log", "critical") == kept
    assert derived_words.claimed(block, "log", "warning") == kept
    assert derived_words.claimed(block, "log", "info") == block
    assert derived_words.claimed(block, "log", "debug") == block
    failed = {**block, "category": "runtime-failure"}
    assert derived_words.claimed(failed, "log", "error") == failed


def test_no_kind_of_check_is_claimed_where_no_setting_of_the_user_s_is_traced():
    """Issue 40, round 18: blind samples found a refusal's kind right 45 times in 74 where
    nothing is traced (the values may be the code's own), 17 in 19 where a setting is."""
    block = {
        "condition": "x.shape != y.shape",
        "stage": "kernel-selection",
        "category": "mismatch",
        "explanation": "Two things that must agree in shape do not.",
        "try": ["Compare the values in the message."],
    }
    kept = {"condition": "x.shape != y.shape", "stage": "kernel-selection"}
    assert derived_words.claimed(block, "raise") == kept
    assert derived_words.claimed(block, "assert") == kept
    # a model's config.json key is no setting the user sets: still nothing traced
    config = {"kind": "model-config", "field": "hidden_size", "key": "hidden_size"}
    with_config = {**block, "flags": [config]}
    assert derived_words.claimed(with_config, "raise") == {**kept, "flags": [config]}
    # a setting traced, a log line (the program went on), an API error (the request's own
    # values), a kind that is no refusal: claimed as derived
    flag = {"kind": "engine-arg", "field": "x", "flag": "--x"}
    assert derived_words.claimed({**block, "flags": [flag]}, "raise") == {**block, "flags": [flag]}
    assert derived_words.claimed(block, "log") == block
    assert derived_words.claimed(block, "http") == block
    invariant = {**block, "category": "invariant"}
    assert derived_words.claimed(invariant, "raise") == invariant


def test_not_available_in_a_mode_or_for_a_wait_is_no_missing_package():
    """Issue 40 (SGLang 12a2267c0ca9958c, found by an explainer): a port "not available in
    {timeout_s} seconds" is a wait that ran out, and a method "not available in encoder-only
    mode" refuses a mode; neither names a package. "... in the loaded NCCL library" still
    does."""
    code = (
        "def f(port, timeout_s):\n"
        "    if not wait(port, timeout_s):\n"
        "        raise ValueError(f'port at {port} is not available in {timeout_s} seconds')\n"
        "def g(self):\n"
        "    if self.encoder_only:\n"
        "        raise RuntimeError('get_input_embedding() is not available in encoder-only"
        " mode')\n"
        "def h(lib):\n"
        "    if not lib.has_symbol:\n"
        "        raise RuntimeError('ncclCommSplit is not available in the loaded NCCL library')\n"
    )
    categories = [d["category"] for d in _derived(code)]
    assert categories == ["runtime-failure", "unsupported-combination", "missing-dependency"]

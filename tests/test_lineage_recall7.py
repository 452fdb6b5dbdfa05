"""Lineage recall, round 7 (issue 41): a check moved keeping its words, or refusing the
old guard's value among others. A check first printed in the release the old one went, not printed
beside it before, keeping nearly every telling word of the old text and every value it
printed, near its old place (the file or function it left gone, its package), took over;
so did one refusing, in the old words, the value the old guard refused among others. The
look-alike beside each rule (a copy beside the old one still printed, words without the
values they printed, a check in another package, another value refused, two old checks
keeping one new check's words) stays unlinked."""

from errorkb.sources import lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "pkg/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def succ(found: lineage.History, start: str) -> str | None:
    (lin,) = [lin for lin in found.lineages if lin.current.template.startswith(start)]
    if lin.superseded_by is None:
        return None
    while lin.superseded_by is not None:
        lin = lin.superseded_by
    return lin.current.template


# A check moved keeping its words ---------------------------------------------------------

GEMM = at(
    "GEMM-RS is not initialized",
    "get_gemm_rs",
    "_gemm_rs is not None",
    exc="AssertionError",
    kind="assert",
    path="vllm/models/kimi/ops/gemm_rs.py",
)


def test_a_check_moved_with_its_words_in_place_of_a_file_gone_took_over():
    """vLLM 0.29.0: gemm_rs.py gave way to gemm_rs_ar.py, whose getter asserts the same."""
    new = at(
        "GEMM-RS/AR is not initialized",
        "get_gemm_rs_ar",
        "_gemm_rs_ar is not None",
        exc="AssertionError",
        kind="assert",
        path="vllm/kernels/linear/gemm_rs_ar.py",
    )
    found = lineage.build([("1", [GEMM, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "GEMM-RS is") == new.template


def test_the_same_words_copied_beside_a_check_still_printed_took_over_nothing():
    """The new file prints the words while the old file prints on: a copy, and the old
    check gone from a file still printing is not followed there without a near place."""
    stays = at("stays", "other", path="vllm/models/kimi/ops/gemm_rs.py", line=90)
    new = at(
        "GEMM-RS/AR is not initialized",
        "get_gemm_rs_ar",
        "_gemm_rs_ar is not None",
        exc="AssertionError",
        kind="assert",
        path="vllm/distributed/gemm_rs_ar.py",
    )
    old_fn = at("GEMM-RS used", "get_gemm_rs", path="vllm/models/kimi/ops/gemm_rs.py", line=50)
    found = lineage.build(
        [("1", [GEMM, stays, old_fn, ELSEWHERE]), ("2", [new, stays, old_fn, ELSEWHERE])]
    )
    assert succ(found, "GEMM-RS is") is None


QUARK = at(
    "Unsupported input_dtype={input_dtype} for QuarkOCP_MX. Supported activation dtypes are"
    " {keys}, or None for weight-only quantization.",
    "QuarkOCP_MX.__init__",
    "self.input_dtype not in [None, *_ACTIVATION_QUANT_KEY_MAP]",
    path="vllm/quantization/quark/schemes/quark_ocp_mx.py",
)
QUARK_STAYS = at(
    "other", "QuarkOCP_MX.__init__", path="vllm/quantization/quark/schemes/quark_ocp_mx.py", line=99
)


def test_a_check_moved_into_its_package_keeping_its_words_and_values_took_over():
    """vLLM 0.30.0: QuarkOCP_MX's refusal moved up into quark.py, reworded a little."""
    new = at(
        "Unsupported input_dtype={input_dtype} in Quark's vLLM integration. Supported"
        " activation dtypes are {keys}, or None for weight-only quantization.",
        "QuarkConfig._is_w_ocp_mx_a_x",
        "input_dtype not in _ACTIVATION_QUANT_KEY_MAP",
        path="vllm/quantization/quark/quark.py",
    )
    found = lineage.build([("1", [QUARK, QUARK_STAYS]), ("2", [new, QUARK_STAYS])])
    assert succ(found, "Unsupported input_dtype={input_dtype} for") == new.template


def test_the_words_without_the_values_they_printed_took_over_nothing():
    new = at(
        "Unsupported dtype in Quark's vLLM integration. Supported activation dtypes are"
        " {keys}, or None for weight-only quantization.",
        "QuarkConfig._is_w_ocp_mx_a_x",
        "input_dtype not in _ACTIVATION_QUANT_KEY_MAP",
        path="vllm/quantization/quark/quark.py",
    )
    found = lineage.build([("1", [QUARK, QUARK_STAYS]), ("2", [new, QUARK_STAYS])])
    assert succ(found, "Unsupported input_dtype={input_dtype} for") is None


def test_the_words_in_another_package_took_over_nothing():
    new = at(
        "Unsupported input_dtype={input_dtype} in Quark's vLLM integration. Supported"
        " activation dtypes are {keys}, or None for weight-only quantization.",
        "QuarkConfig._is_w_ocp_mx_a_x",
        "input_dtype not in _ACTIVATION_QUANT_KEY_MAP",
        path="vllm/entrypoints/quark.py",
    )
    found = lineage.build([("1", [QUARK, QUARK_STAYS]), ("2", [new, QUARK_STAYS])])
    assert succ(found, "Unsupported input_dtype={input_dtype} for") is None


def test_a_folder_is_near_only_three_levels_down():
    def near(a: str, b: str) -> bool:
        old = lineage.Features.of(lineage.Wording(("E", "x"), [Site("E", "x", a, 1)], "", "", 0, 0))
        new = lineage.Features.of(lineage.Wording(("E", "x"), [Site("E", "x", b, 1)], "", "", 0, 0))
        return lineage._nearby(lineage.Comparison(old, new, 0, 0, 0, 0))

    assert near("vllm/a/b/c.py", "vllm/a/b/d.py")
    assert near("vllm/a/b/x/c.py", "vllm/a/b/d.py")
    assert not near("python/sglang/srt/managers/s.py", "python/sglang/srt/utils/w.py")
    assert not near("vllm/model_executor/a.py", "vllm/model_executor/b.py")


# Refusing the old value among others ----------------------------------------------------

LLAMA4 = at(
    "fa3 is required for Llama4 model",
    "ServerArgs.check_server_args",
    "self.attention_backend == 'fa3'",
    exc="AssertionError",
    kind="assert",
    path="sglang/srt/server_args.py",
)
ARGS_STAYS = at("stays", "ServerArgs.other", path="sglang/srt/server_args.py", line=99)


def test_the_old_value_refused_among_others_in_the_old_words_took_over():
    """SGLang 0.5.23: Llama4's attention backend may be fa3 or five others now."""
    new = at(
        "fa3, aiter or triton is required for Llama4 model but got {attention_backend}",
        "handle_model_specific_adjustments",
        "attention_backend in {'fa3', 'aiter', 'triton'}",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/arg_groups/model_hook.py",
    )
    found = lineage.build([("1", [LLAMA4, ARGS_STAYS]), ("2", [new, ARGS_STAYS])])
    assert succ(found, "fa3 is required") == new.template


def test_another_value_refused_for_the_model_took_over_nothing():
    new = at(
        "aiter or triton is required for Llama4 model but got {attention_backend}",
        "handle_model_specific_adjustments",
        "attention_backend in {'aiter', 'triton'}",
        exc="AssertionError",
        kind="assert",
        path="sglang/srt/arg_groups/model_hook.py",
    )
    found = lineage.build([("1", [LLAMA4, ARGS_STAYS]), ("2", [new, ARGS_STAYS])])
    assert succ(found, "fa3 is required") is None


DRAFT = "sglang/speculative/eagle_worker.py"


def test_two_old_checks_keeping_one_new_checks_words_took_over_nothing():
    """Two capture lines of one file gone, one new capture line keeping the words of both:
    the words do not say which of the two it continues."""
    a = at("Capture draft cuda graph end. Time elapsed: {t} s.", "W.a", exc="INFO", path=DRAFT)
    b = at(
        "Capture draft extend cuda graph end. Time elapsed: {t} s.",
        "W.b",
        exc="INFO",
        path=DRAFT,
        line=40,
    )
    new = at(
        "Capture draft extend CUDA graph end. step={step}, elapsed={t} s.",
        "Runner.capture",
        exc="INFO",
        path="sglang/speculative/draft_extend_runner.py",
    )
    found = lineage.build([("1", [a, b, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "Capture draft cuda") is None


def test_a_name_kept_only_inside_another_is_not_kept():
    """`activation` is deprecated, then `normalize` is: `use_activation` does not keep it."""
    old = at(
        "`activation` is deprecated and will be removed in v0.15. Please use `use_activation`"
        " instead.",
        "PoolerConfig.__post_init__",
        exc="WARNING",
        path="vllm/config/pooler/pooler.py",
    )
    new = at(
        "`normalize` is deprecated and will be removed in v0.17. Please pass `use_activation`"
        " instead.",
        "EmbedRequest.check",
        exc="WARNING",
        path="vllm/config/pooler/protocol.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert succ(found, "`activation`") is None

"""Lineage precision, round 9 (issue 41): a link by words must agree with the guards on what
the check refuses. Each wrong link class of lineage sample 7 (and of the fifth) as a case, the
check that really took over beside it, and a look-alike that guards the same thing and stays
linked."""

from errorkb.sources import lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "pkg/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def succ(found: lineage.History, start: str) -> str | None:
    exact = [x for x in found.lineages if x.current.template == start]
    (one,) = exact or [x for x in found.lineages if x.current.template.startswith(start)]
    if one.superseded_by is None:
        return None
    while one.superseded_by is not None:
        one = one.superseded_by
    return one.current.template


def two(old: list[Site], new: list[Site]) -> lineage.History:
    return lineage.build([("1", [*old, ELSEWHERE]), ("2", [*new, ELSEWHERE])])


# The other end of a value's range ---------------------------------------------------------

MANY = at(
    "Multiple multi-modal input is not supported yet, so any extra placeholder tokens will be"
    " treated as plain text.",
    "repeat_and_pad_placeholder_tokens",
    "placeholder_token_count > 1",
    exc="WARNING",
    kind="log",
    path="vllm/multimodal/utils.py",
)


def test_a_warning_on_the_other_end_of_the_same_value_took_over_nothing():
    """vLLM 0.6.6 supports several inputs: it warns of too few placeholders, not too many."""
    fewer = at(
        "The number of multi-modal placeholder tokens in the prompt is less than the number of"
        " multi-modal inputs. Extra placeholder tokens will be treated as plain text",
        "repeat_and_pad_placeholder_tokens",
        "placeholder_token_count < len(repeat_count)",
        exc="WARNING",
        kind="log",
        path="vllm/multimodal/utils.py",
    )
    assert succ(two([MANY], [fewer]), "Multiple multi-modal") is None


def test_the_same_end_of_the_range_reworded_still_took_over():
    more = at(
        "More than one multi-modal placeholder is not supported yet; extra placeholder tokens"
        " will be treated as plain text.",
        "repeat_and_pad_placeholder_tokens",
        "placeholder_token_count >= 2",
        exc="WARNING",
        kind="log",
        path="vllm/multimodal/utils.py",
    )
    assert succ(two([MANY], [more]), "Multiple multi-modal") == more.template


# Another value, named and tested ----------------------------------------------------------

EMBED = at(
    "Incorrect type of embed_is_patch. Got type: {embed_is_patch_type}",
    "MolmoForCausalLM._parse_and_validate_image_input",
    "not isinstance(embed_is_patch, (torch.Tensor, list))",
    path="vllm/model_executor/models/molmo.py",
)


def test_the_same_words_about_another_value_its_guard_tests_took_over_nothing():
    """vLLM 0.8.5: Molmo no longer takes embed_is_patch; img_patch_id's check is another."""
    patch_id = at(
        "Incorrect type of img_patch_id. Got type: {img_patch_id_type}",
        "MolmoForCausalLM._parse_and_validate_image_input",
        "not isinstance(img_patch_id, torch.Tensor)",
        path="vllm/model_executor/models/molmo.py",
        line=30,
    )
    assert succ(two([EMBED], [patch_id]), "Incorrect type of embed") is None


def test_the_same_value_checked_in_other_words_still_took_over():
    reworded = at(
        "Incorrect type of embed_is_patch (a tensor or a list). Got: {embed_is_patch_type}",
        "MolmoForCausalLM._parse_and_validate_image_input",
        "not isinstance(embed_is_patch, (torch.Tensor, list, tuple))",
        path="vllm/model_executor/models/molmo.py",
    )
    assert succ(two([EMBED], [reworded]), EMBED.template) == reworded.template


# A sibling under the same precondition ---------------------------------------------------

KV_LAYOUT = "vllm/distributed/kv_transfer/kv_connector/utils.py"
UNDETECTED = at(
    "Unable to detect current VLLM config. Defaulting to NHD kv cache layout.",
    "get_kv_connector_cache_layout",
    "kv_config is not None and vllm_config.model_config is None",
    exc="WARNING",
    kind="log",
    path=KV_LAYOUT,
)
UNSPECIFIED = at(
    "Connectors do not specify a kv cache layout, defaulting to NHD.",
    "get_kv_connector_cache_layout",
    "kv_config is not None",
    exc="WARNING",
    kind="log",
    path=KV_LAYOUT,
    line=40,
)


def test_a_line_under_only_the_shared_precondition_is_a_sibling():
    """vLLM 0.10.2: the connector's own layout line kept only `kv_config is not None`."""
    assert succ(two([UNDETECTED], [UNSPECIFIED]), "Unable to detect") is None


def test_the_line_that_moved_with_the_telling_test_took_over():
    moved = at(
        "Unable to detect current VLLM config. Fallback to default kv cache layout.",
        "NixlConnector.get_required_kvcache_layout",
        "vllm_config.model_config is None",
        exc="WARNING",
        kind="log",
        path="vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py",
    )
    found = two([UNDETECTED], [UNSPECIFIED, moved])
    assert succ(found, "Unable to detect current VLLM config. Def") == moved.template


# Guards that test other things, in few words alike -----------------------------------------

NVFP4 = "sglang/srt/layers/quantization/modelopt_quant.py"
DIVISIBLE = at(
    "Expected weight_scale.dim(1) to be divisible by 16",
    "ModelOptNvFp4FusedMoEMethod.process_weights_after_loading",
    "layer.w13_weight_scale.shape[2] % 16 == 0",
    exc="AssertionError",
    kind="assert",
    path=NVFP4,
)


def test_an_assert_of_another_test_in_few_words_alike_took_over_nothing():
    """SGLang 0.5.23 checks the scale's dim equals the expected block count: not the same."""
    equal = at(
        "Expected {name}_weight_scale.dim(2) == {expected_blocks_name}, got {got}",
        "ModelOptNvFp4FusedMoEMethod.process_weights_after_loading",
        "weight_scale.shape[-1] == expected_blocks[name]",
        exc="AssertionError",
        kind="assert",
        path=NVFP4,
        line=60,
    )
    assert succ(two([DIVISIBLE], [equal]), "Expected weight_scale") is None


def test_the_same_test_in_few_words_alike_still_took_over():
    same = at(
        "Expected w13 weight scale to be divisible by 16, got {got}",
        "ModelOptNvFp4FusedMoEMethod.process_weights_after_loading",
        "layer.w13_weight_scale.shape[2] % 16 == 0",
        exc="AssertionError",
        kind="assert",
        path=NVFP4,
    )
    assert succ(two([DIVISIBLE], [same]), "Expected weight_scale") == same.template


# A namesake method of another class -------------------------------------------------------

HOST = "sglang/srt/mem_cache/memory_pool_host.py"
ALLOCATING = at(
    "Allocating {requested_bytes_div_value} GB host memory for hierarchical KV cache.",
    "HostKVCache.__init__",
    "not requested_bytes > available_bytes",
    exc="INFO",
    kind="log",
    path=HOST,
)


def test_an_init_of_another_class_in_its_file_is_not_its_function():
    """SGLang 0.5.23: the V4 paged pool's `__init__` prints its own allocation line."""
    paged = at(
        "Allocating {requested_bytes_div_value} GB host memory for V4 paged pool '{pool_name}'"
        " (layers={layer_num}).",
        "HostPoolV4.__init__",
        exc="INFO",
        kind="log",
        path=HOST,
        line=400,
    )
    stays = at("other", "HostPoolV4.other", path=HOST, line=500)
    # its class prints on, from another file
    kept = at("kept", "HostKVCache.other", path="sglang/srt/mem_cache/pool_host/base.py")
    found = two([ALLOCATING, stays], [paged, stays, kept])
    assert succ(found, "Allocating {requested_bytes_div_value} GB host memory for hier") is None


def test_its_class_printing_its_value_from_another_method_took_over():
    pool = at(
        "Allocating {pool_label} hierarchical KV host pool: {size} tokens,"
        " {requested_bytes_div_value} GB host memory.",
        "HostKVCache._allocate_host_buffer",
        "not draft_layer_num > 0",
        exc="INFO",
        kind="log",
        path="sglang/srt/mem_cache/pool_host/base.py",
    )
    mamba = at(
        "Allocating {requested_bytes_div_value} GB host memory for hierarchical Mamba cache"
        " ({size} state slots, layout={layout}).",
        "MambaPoolHost.__init__",
        exc="INFO",
        kind="log",
        path="sglang/srt/mem_cache/pool_host/mamba.py",
    )
    found = two([ALLOCATING], [pool, mamba])
    assert succ(found, ALLOCATING.template) == pool.template


def test_a_presence_test_become_a_membership_test_one_for_one_still_took_over():
    """vLLM 0.7.3: Aria asserted the looked-up query number present, then raised a KeyError
    when the patch count is not a key: one check, its guard spelled otherwise."""
    old = at(
        "Query number for {x_shape_1} patches is not provided",
        "AriaProjector.forward",
        "query_num is not None",
        exc="AssertionError",
        kind="assert",
        path="vllm/model_executor/models/aria.py",
    )
    new = at(
        "Number of patches {num_patches} not found in patch_to_query_dict amongst possible"
        " values {patch_to_query_dict_keys}.",
        "AriaProjector.forward",
        "num_patches not in self.patch_to_query_dict",
        exc="KeyError",
        path="vllm/model_executor/models/aria.py",
    )
    assert succ(two([old], [new]), old.template) == new.template


def test_a_log_line_become_a_refusal_of_another_value_one_for_one_took_over_nothing():
    """vLLM 0.10.2: the selector no longer logs the block-sparse backend; the one check it
    gained refuses an unknown backend name."""
    where, path = "_cached_get_attn_backend", "vllm/attention/selector.py"
    old = at(
        "Using BlocksparseFlashAttention backend.",
        where,
        "is_blocksparse",
        exc="INFO",
        kind="log",
        path=path,
    )
    new = at(
        "Invalid attention backend: '{backend_by_env_var}'. Valid backends are: {members_keys}",
        where,
        "selected_backend is None",
        path=path,
    )
    assert succ(two([old], [new]), old.template) is None


def test_a_value_renamed_in_words_and_guard_keeping_its_last_words_still_took_over():
    """vLLM 0.8: the chat server's sampling defaults, `diff_sampling_param` then
    `self.default_sampling_params`, logged in other words: the same line."""
    where, path = "OpenAIServingChat.__init__", "vllm/entrypoints/openai/serving_chat.py"
    old = at(
        "Overwriting default chat sampling param with: {diff_sampling_param}",
        where,
        "diff_sampling_param",
        exc="INFO",
        kind="log",
        path=path,
    )
    new = at(
        "Using default chat sampling params from {source}: {default_sampling_params}",
        where,
        "self.default_sampling_params",
        exc="INFO",
        kind="log",
        path=path,
    )
    assert succ(two([old], [new]), old.template) == new.template


def test_a_timeout_tested_by_both_guards_is_no_other_test():
    """vLLM 0.33: the drain timeout's line reworded, its guard rewritten around the same
    `_CANCEL_DRAIN_TIMEOUT_S`."""
    where, path = "P2PSession._drain", "vllm/distributed/p2p/session.py"
    old = at(
        "P2PSession {peer_id}: cancel drain timed out for kv_request_id={kv_request_id},"
        " force-canceled {len_ids} transfers",
        where,
        "ids and time.monotonic() - started_at >= _CANCEL_DRAIN_TIMEOUT_S",
        exc="WARNING",
        kind="log",
        path=path,
    )
    new = at(
        "P2PSession {peer_id}: abort of kv_request_id={kv_request_id} round={round_seq} still"
        " waiting after {CANCEL_DRAIN_TIMEOUT_S}s for {len_ids} transfers",
        where,
        "ids and now - self._pending_aborts[key] >= _CANCEL_DRAIN_TIMEOUT_S"
        " and key not in self._slow_aborts",
        exc="WARNING",
        kind="log",
        path=path,
    )
    assert succ(two([old], [new]), old.template) == new.template


def test_the_init_of_its_class_renamed_in_its_file_is_its_function():
    """vLLM 0.11: the CPU backend's class renamed in its file; its `__init__` refuses the
    same FP8 KV cache in other words."""
    path = "vllm/v1/attention/backends/cpu_attn.py"
    old = at(
        "Torch SDPA backend FP8 KV cache requires intel_extension_for_pytorch support.",
        "TorchSDPABackendImpl.__init__",
        "is_quantized_kv_cache(kv_cache_dtype) and not _use_ipex",
        exc="NotImplementedError",
        path=path,
    )
    new = at(
        "FP8 KV cache is unsupported in CPU_ATTN",
        "CPUAttentionBackendImpl.__init__",
        "is_quantized_kv_cache(kv_cache_dtype)",
        exc="NotImplementedError",
        path=path,
    )
    assert succ(two([old], [new]), old.template) == new.template


def test_a_generic_check_printing_what_it_refuses_may_take_over_a_named_one():
    """vLLM 0.33: "not compatible with disable_padded_drafter_batch=True" became the
    generic "not supported by the V1 model runner with {v1_async_sched_incompat}"."""
    where, path = "VllmConfig.__post_init__", "vllm/config/vllm.py"
    old = at(
        "Async scheduling is not compatible with disable_padded_drafter_batch=True.",
        where,
        "self.speculative_config.disable_padded_drafter_batch",
        path=path,
    )
    new = at(
        "Async scheduling is not supported by the V1 model runner with {v1_async_sched_incompat}.",
        where,
        "v1_async_sched_incompat is not None",
        path=path,
    )
    assert succ(two([old], [new]), old.template) == new.template


def test_methods_of_other_names_are_no_namesakes():
    """vLLM 0.10.2: ClassifierPooler.forward shares no function with MeanPool.forward_one."""
    path = "vllm/model_executor/layers/pooler.py"
    old = at("partial prefill not supported with classifier", "ClassifierPooler.forward", path=path)
    new = at("partial prefill not supported with MEAN pooling", "MeanPool.forward_one", path=path)

    def feats(site: Site) -> lineage.Features:
        return lineage.Features.of(lineage.Wording(site.key, [site], "1", "1", 0, 0))

    assert not lineage._namesakes(feats(old), feats(new))
    twin = at("partial prefill not supported with MEAN pooling", "MeanPool.forward", path=path)
    assert lineage._namesakes(feats(old), feats(twin))

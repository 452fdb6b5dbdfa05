"""Issue 40, round 7: the rules the adjudication of the blind sample derived-truth-7304 fixed
(tests/fixtures/derived-truth-7304-adjudicated.jsonl), each on a made-up site shaped like the
release's code, and read against the definitions in errorkb.content.derived."""

from errorkb.content.template import title
from errorkb.projects.sglang.knowledge import SglangKnowledge
from errorkb.projects.vllm.knowledge import VllmKnowledge
from tests.conftest import derived_of

# Stages ------------------------------------------------------------------------------


def test_lora_kernels_are_kernel_selection():
    """3217eab19c2c5afb: lora/ops/triton_ops/ checks the tensors its caller passes to the
    Triton kernel (a kernel op's own checks); LoRA's layers keep their own stage."""
    k = VllmKnowledge()
    fp8 = "vllm/lora/ops/triton_ops/fused_moe_lora_fp8_op.py"
    assert k.stage(fp8, "_fused_moe_lora_shrink_fp8") == "kernel-selection"
    assert k.stage("vllm/lora/layers/base_linear.py", "BaseLinearLayerWithLoRA.__init__") == (
        "model-loading"
    )


def test_a_diffusion_model_s_forward_is_met_first_by_a_request():
    """c68fb8f2e72554a2: SGLang's diffusion server profiles nothing and warms up only when
    asked, so the LTX-2 connector's forward first runs for a request; an LLM's forward is
    still first met by the start-up profiling, and a diffusion model's build is still loading."""
    k = SglangKnowledge()
    connector = "sglang/multimodal_gen/runtime/models/adapter/ltx_2_connector.py"
    assert k.stage(connector, "LTX2ConnectorTransformer1d.forward") == "request-handling"
    assert k.stage(connector, "LTX2ConnectorTransformer1d.__init__") == "model-loading"
    layer = "sglang/multimodal_gen/runtime/layers/linear.py"
    assert k.stage(layer, "ColumnParallelLinear.forward") == "request-handling"
    assert k.stage("sglang/srt/models/llama.py", "LlamaForCausalLM.forward") == "engine-startup"
    attention = "sglang/multimodal_gen/runtime/layers/attention/backends/sdpa.py"
    assert k.stage(attention, "SDPAImpl.forward") == "kernel-selection"


def test_the_diffusion_scheduler_serves_from_its_event_loop():
    """The diffusion scheduler (multimodal_gen/runtime/managers/) is built at start-up, then
    handles generation requests: by name, as srt's managers/, not all start-up."""
    k = SglangKnowledge()
    scheduler = "sglang/multimodal_gen/runtime/managers/scheduler.py"
    assert k.stage(scheduler, "Scheduler.event_loop") == "request-handling"
    assert k.stage(scheduler, "Scheduler._handle_generation") == "request-handling"
    assert k.stage(scheduler, "Scheduler.__init__") == "engine-startup"
    assert k.stage(scheduler, "Scheduler._finalize_and_reply") is None  # its callers say


# Categories ----------------------------------------------------------------------------


def test_a_flag_required_when_another_is_set_is_a_combination():
    """b1d349aa4db8ee92: `nnodes > 1 and args.weight_cache_master_port is None` with
    "--weight-cache-master-port is required when the daemons span nodes": a flag left out
    with a layout the user chose, not a range (the `> 1`)."""
    code = (
        "def cmd(args, nnodes, pixel_values, grid):\n"
        "    if nnodes > 1 and args.weight_cache_master_port is None:\n"
        "        raise ValueError(\n"
        "            '--weight-cache-master-port is required when the daemons span nodes'\n"
        "        )\n"
        "    if pixel_values is None:\n"
        "        return None\n"
        "    if grid is None:\n"
        "        raise ValueError('vision_grid_thw is required when pixel_values is provided')\n"
        "    if nnodes > 8:\n"
        "        raise ValueError('nnodes must be at most 8; a port is required')\n"
    )
    found = derived_of(code)
    required = "--weight-cache-master-port is required when the daemons span nodes"
    assert found[required]["category"] == "unsupported-combination"
    assert found["nnodes must be at most 8; a port is required"]["category"] == "limit"
    provided = "vision_grid_thw is required when pixel_values is provided"
    assert found[provided]["category"] == "invariant"


def test_an_isinstance_that_guards_a_literal_s_test_is_no_type_mismatch():
    """853f0b1f2c8cca4d: `isinstance(data, dict) and ... part.get("type") == "input_image"`
    refuses a content type (a value), the isinstance tests only make the lookups safe; a
    test of the type itself stays a mismatch."""
    code = (
        "def reject_images(data, emb):\n"
        "    if (\n"
        "        isinstance(data, dict)\n"
        "        and isinstance(data.get('content'), list)\n"
        "        and any(\n"
        "            isinstance(part, dict) and part.get('type') == 'input_image'\n"
        "            for part in data['content']\n"
        "        )\n"
        "    ):\n"
        "        raise ValueError('Decisions supports text input only; images are not supported')\n"
        "    if not isinstance(data, dict):\n"
        "        raise ValueError('Decisions input must be an object')\n"
        "    if not (isinstance(emb[0], torch.Tensor) and emb[0].dim() == 2):\n"
        "        raise RuntimeError('image_rotary_emb must be cos_sin_cache tensors')\n"
    )
    found = derived_of(code)
    text = "Decisions supports text input only; images are not supported"
    assert found[text]["category"] == "invalid-choice"
    assert found["Decisions input must be an object"]["category"] == "mismatch"
    assert found["image_rotary_emb must be cos_sin_cache tensors"]["category"] == "mismatch"


def test_an_info_line_naming_a_bound_reports_a_state():
    """05d2816c66be605f: an INFO line that turned offload off "because minimum available
    memory ... is {x} GiB" reports a choice; a warning that a value exceeds a bound still
    says a limit, and an info line's other words still say theirs."""
    code = (
        "def adjust(args, free_gb, n):\n"
        "    logger.info('Disabling component offload because minimum available memory is %s GiB',"
        " free_gb)\n"
        "    logger.warning('Batch size %s exceeds the maximum; truncating', n)\n"
        "    logger.info('Model not found in cache, will download from %s', n)\n"
    )
    found = derived_of(code)
    offload = "Disabling component offload because minimum available memory is {free_gb} GiB"
    assert found[offload]["category"] == "logged"
    assert found["Batch size {n} exceeds the maximum; truncating"]["category"] == "limit"
    assert found["Model not found in cache, will download from {n}"]["category"] == "not-found"


def test_a_warning_that_a_peer_could_not_be_reached_reports_a_runtime_failure():
    """af55d605f9431b8f: a WARNING in `except Exception` around a control request to a peer
    shard ("could not subscribe to the event channel"): a connection failed as it ran. Not a
    warning outside a handler, nor one that could not parse a value."""
    code = (
        "def endpoints(client, shards, text):\n"
        "    for addr in shards:\n"
        "        try:\n"
        "            client.request(addr)\n"
        "        except Exception:\n"
        "            logger.warning('EC Mooncake could not subscribe to the event channel of'\n"
        "                           ' consumer shard %s; retrying later.', addr)\n"
        "            logger.warning('Could not parse the tool call %s', text)\n"
        "    logger.warning('Could not subscribe to shard %s yet', addr)\n"
    )
    found = derived_of(code)
    text = "EC Mooncake could not subscribe to the event channel of consumer shard {addr};"
    text += " retrying later."
    assert found[text]["category"] == "runtime-failure"
    assert found["Could not parse the tool call {text}"]["category"] == "logged"
    assert found["Could not subscribe to shard {addr} yet"]["category"] == "logged"


# Titles --------------------------------------------------------------------------------


def test_a_refusal_that_lost_its_value_keeps_the_restriction_after_it():
    """c98d08c4c65fe01c: "does not support {y_s_dtype} scales. Only torch.float32 supported."
    without its value said no scales are supported; the next sentence says which are. Not
    where the next sentence prints a value, nor where nothing was dropped."""
    assert title(
        "_silu_mul_fp8_quant_deep_gemm Triton fallback does not support {y_s_dtype} scales. "
        "Only torch.float32 supported."
    ) == (
        "_silu_mul_fp8_quant_deep_gemm Triton fallback does not support scales; only torch.float32"
        " supported"
    )
    assert title("Unsupported activation: {hidden_act}. Only silu is supported for now.") == (
        "Unsupported activation; only silu is supported for now"
    )
    assert title("Unsupported activation. Only silu is supported for now.") == (
        "Unsupported activation"
    )
    assert (
        title(
            "Marlin does not support weight_bits = {weight_bits}. Only weight_bits = {bits} are "
            "supported."
        )
        == "Marlin does not support weight_bits"
    )


def test_a_title_a_little_over_the_length_is_kept_whole():
    """04b57e4da98dd3be (sample 7312): cut at 90 characters, the title lost the last item of
    the list it refuses; a sentence up to MAX_WHOLE_TITLE stays whole, a longer one is cut."""
    message = (
        "TritonMLAImpl does not support one of the following: alibi_slopes, sliding_window, "
        "logits_soft_cap"
    )
    assert title(message) == message
    longer = message + ", and the other features of the attention layers that it was built with"
    assert title(longer).endswith("…") and len(title(longer)) <= 91

"""SGLang's parallel-size rules (generator/projects/sglang/calc.py) against an oracle written
from SGLang 0.5.23's code, on a grid of head counts, KV heads and sizes.

The oracle follows the code path by path, in the code's own structure and names
(python/sglang/srt/ at v0.5.23): arg_groups/parallel_hook.py
handle_deprecated_dp_attention, then handle_data_parallelism; arg_groups/validation_hook.py
check_server_args (engine.py calls it after resolve_once); runtime_context.py publish
(derive_parallel_widths, then override_permanently's _validate_parallel product checks,
before derive_spawn_ranks); at model load models/qwen3.py Qwen3Attention.__init__ (heads
over the attention TP size) or models/llama.py LlamaAttention.__init__ (over the full TP
size), each then layers/linear.py QKVParallelLinear's divide(), and
layers/moe/fused_moe_triton/layer.py FusedMoE.__init__.
"""

import hashlib
import importlib.util
import itertools
import math
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
CALC_PATH = REPO / "generator" / "projects" / "sglang" / "calc.py"
_spec = importlib.util.spec_from_file_location("sglang_calc_standalone", CALC_PATH)
calc = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = calc
_spec.loader.exec_module(calc)  # alone, as the browser runs it


class Raised(Exception):
    """What SGLang raised: (exception name, record id or "" for a bare assert)."""


# The two families of attention layer: Qwen3Attention's and LlamaAttention's code.
FAMILIES = {"qwen3": "attn_tp:hkp", "llama": "tp:hkp"}


def _sglang(heads, kv, tp, dp, attn_dp, enable_dp_attention, ep, experts, pp, nnodes, family):
    """(exception, record id, stage) of what SGLang 0.5.23 raises first, or None."""
    cfg = dict(tp_size=tp, dp_size=dp, attn_dp_size=attn_dp, ep_size=ep, pp_size=pp)
    cfg |= dict(nnodes=nnodes, enable_dp_attention=enable_dp_attention, attn_cp_size=1)
    cfg["moe_dp_size"] = 1
    # handle_deprecated_dp_attention
    if cfg["enable_dp_attention"]:
        if cfg["attn_dp_size"] == 1:
            cfg["attn_dp_size"], cfg["dp_size"] = cfg["dp_size"], 1
        cfg["enable_dp_attention"] = False
    # handle_data_parallelism
    if cfg["attn_dp_size"] < 1:
        return ("ValueError", "9875a49204323ca3", "config")
    if cfg["attn_dp_size"] > 1 and cfg["dp_size"] > 1:
        return ("ValueError", calc.DP_WITH_ATTN_DP, "config")
    if cfg["attn_dp_size"] > 1 and cfg["tp_size"] % cfg["attn_dp_size"] != 0:  # attn_dp_enabled
        return ("AssertionError", "", "config")
    # check_server_args (ep_join_mode is not "scale")
    if (cfg["tp_size"] * cfg["pp_size"]) % cfg["nnodes"] != 0:
        return ("AssertionError", calc.TP_NNODES, "config")
    if cfg["dp_size"] > 1 and cfg["nnodes"] != 1:
        return ("AssertionError", calc.DP_NODES, "config")
    # publish: derive_parallel_widths
    attn_tp_size = cfg["tp_size"] // cfg["attn_dp_size"] // cfg["attn_cp_size"]
    moe_ep_size = cfg["ep_size"]
    moe_tp_size = cfg["tp_size"] // moe_ep_size // cfg["moe_dp_size"]
    # publish: with DCP off, override_permanently(attn_dcp_rank=0) runs _validate_parallel
    # before derive_spawn_ranks places the ranks
    if cfg["tp_size"] != attn_tp_size * cfg["attn_dp_size"] * cfg["attn_cp_size"]:
        return ("ValueError", "40c393b5acec117c", "startup")
    if cfg["tp_size"] != moe_ep_size * cfg["moe_dp_size"] * moe_tp_size:
        return ("ValueError", calc.MOE_TOPOLOGY, "startup")
    # Qwen3Attention.__init__ (get_parallel().attn_tp_size) or LlamaAttention.__init__
    # (get_parallel().tp_size)
    size = attn_tp_size if family == "qwen3" else cfg["tp_size"]
    total_num_heads, total_num_kv_heads = heads, kv
    if total_num_heads % size != 0:
        return ("AssertionError", "", "load")
    if total_num_kv_heads >= size:
        if total_num_kv_heads % size != 0:
            return ("AssertionError", "", "load")
    elif size % total_num_kv_heads != 0:
        return ("AssertionError", "", "load")
    # FusedMoE.__init__ (no fused shared experts, ep_join_mode not "scale")
    storage_ep_size = moe_ep_size
    if experts is not None and experts % storage_ep_size != 0:
        return ("AssertionError", "", "load")
    return None


MODELS = [(h, kv) for h in (1, 2, 6, 12, 14, 28, 32, 40, 52, 64, 96) for kv in (1, 2, 4, 8, h)]
GRID = (
    list(FAMILIES),
    [m for m in MODELS if m[0] % m[1] == 0],
    (1, 2, 3, 4, 6, 8, 12, 16, 32),  # tp
    (1, 2, 4),  # dp
    (1, 2, 4),  # attn_dp
    (False, True),  # --enable-dp-attention
    (1, 2, 4, 8, 16),  # ep
    (None, 8, 60, 64, 128),  # experts
    (1, 2),  # pp
    (1, 2, 3),  # nnodes
)


def _kwargs(values):
    family, (heads, kv), tp, dp, attn_dp, dp_attention, ep, experts, pp, nnodes = values
    return dict(heads=heads, kv_heads=kv, tp=tp, dp=dp, attn_dp=attn_dp) | dict(
        dp_attention=dp_attention, ep=ep, experts=experts, pp=pp, nnodes=nnodes
    ), family


# Every point of the grid (two million: 25 s) in make test; in make test-fast every 41st
# (51,000 points: 41 is prime to the length of every axis), which still holds each value of
# any axis with each value of any other: the test checks that it does.
@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 41])
def test_first_error_matches_sglangs_code_on_the_grid(every):
    checked = mismatches = 0
    wrong = []
    points = itertools.islice(itertools.product(*GRID), 0, None, every)
    sample = [] if every > 1 else None
    for values in points:
        kwargs, family = _kwargs(values)
        expected = _sglang(*kwargs.values(), family)
        got = calc.first_error(**kwargs, attention=FAMILIES[family])
        got = got and (got.exception, got.id, got.stage)
        checked += 1
        if sample is not None:
            sample.append(values)
        if got != expected:
            mismatches += 1
            wrong.append((kwargs, expected, got))
    assert checked == -(-math.prod(map(len, GRID)) // every) > 50_000
    assert not wrong, f"{mismatches} of {checked} differ, e.g. {wrong[:3]}"
    if sample is not None:
        columns = list(zip(*sample, strict=True))
        for a, b in itertools.combinations(range(len(GRID)), 2):
            held = set(zip(columns[a], columns[b], strict=True))
            assert len(held) == len(set(GRID[a])) * len(set(GRID[b])), (a, b)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_valid_tp_size_raises_nothing_and_every_other_fails(family):
    for heads, kv in MODELS:
        if heads % kv:
            continue
        for attn_dp in (1, 2, 4, 8):
            valid = calc.valid_tp_sizes(heads, kv, attn_dp=attn_dp, attention=FAMILIES[family])
            for tp in range(1, 2 * heads * attn_dp + 1):
                error = _sglang(heads, kv, tp, 1, attn_dp, False, 1, None, 1, 1, family)
                assert (error is None) == (tp in valid), (heads, kv, attn_dp, tp)


def test_tp_above_kv_heads_copies_them_and_40_heads_do_not_split_over_16():
    assert calc.valid_tp_sizes(32, 8) == [1, 2, 4, 8, 16, 32]
    assert calc.valid_tp_sizes(40, 8) == [1, 2, 4, 8, 40]  # 20 splits 8 KV heads unevenly
    error = calc.first_error(40, 8, tp=16)
    assert (error.exception, error.stage, error.id) == ("AssertionError", "load", "")
    assert "total_num_heads % tp_size" in error.message  # Llama's layer, assumed


def test_dp_attention_divides_the_attention_tp_size_of_qwen3_style_layers():
    # 8 GPUs, --dp-size 8 --enable-dp-attention: each rank attends with all 64 heads
    qwen3 = FAMILIES["qwen3"]
    assert calc.first_error(64, 8, tp=8, dp=8, dp_attention=True, attention=qwen3) is None
    assert calc.first_error(64, 8, tp=8, attn_dp=8, attention=qwen3) is None
    error = calc.first_error(64, 8, tp=8, dp=3, dp_attention=True)
    assert (error.exception, error.stage) == ("AssertionError", "config")
    error = calc.first_error(64, 8, tp=8, dp=2, attn_dp=4)
    assert error.id == calc.DP_WITH_ATTN_DP
    assert error.message == (
        "--dp-size 2 with --attn-dp-size 4: data-parallel replicas combined with attention "
        "data parallelism are not supported."
    )


def test_llama_style_layers_split_over_the_full_tp_size_with_attention_dp():
    # 40 heads, 8 KV heads, --attn-dp-size 8: Qwen3's layer splits over tp // 8, Llama's
    # over tp itself
    qwen3, llama = FAMILIES["qwen3"], FAMILIES["llama"]
    assert calc.valid_tp_sizes(40, 8, attn_dp=8, attention=qwen3)[:4] == [8, 16, 32, 64]
    assert calc.valid_tp_sizes(40, 8, attn_dp=8, attention=llama) == [8, 40]
    assert calc.first_error(40, 8, tp=16, attn_dp=8, attention=qwen3) is None
    error = calc.first_error(40, 8, tp=16, attn_dp=8, attention=llama)
    assert (error.stage, error.values["tp_size"]) == ("load", 16)
    assert error.message.startswith("assert self.total_num_heads % tp_size == 0")


def test_a_layer_that_asserts_only_kv_heads_fails_in_its_projection():
    # Cohere's layer floors its heads; QKVParallelLinear's divide() then refuses them
    error = calc.first_error(40, 8, tp=16, attention="tp:kp")
    assert (error.id, error.message) == (calc.DIVIDE, "40 is not divisible by 16")
    assert calc.valid_tp_sizes(40, 8, attention="tp:kp") == [1, 2, 4, 8, 40]
    assert calc.valid_tp_sizes(24, 8, attention="attn_tp:k") == [1, 2, 4, 8, 16, 24]


def test_data_parallel_replicas_across_nodes_are_refused():
    error = calc.first_error(32, 8, tp=8, dp=2, nnodes=2)
    assert (error.id, error.exception, error.stage) == (calc.DP_NODES, "AssertionError", "config")
    assert error.message.startswith("multi-node data-parallel replicas are not supported")
    # --dp-size with --enable-dp-attention is attention DP: allowed across nodes
    assert calc.first_error(32, 8, tp=16, dp=2, dp_attention=True, nnodes=2) is None
    assert calc.first_error(32, 8, tp=8, nnodes=3).id == calc.TP_NNODES  # checked first


def test_an_unknown_architecture_says_which_layer_it_assumed():
    assumed = calc.summary(40, 8, tp=16, attn_dp=8)["attention"]
    assert assumed == {"code": calc.ASSUMED, "assumed": True} and calc.ASSUMED == "tp:hkp"
    given = calc.summary(40, 8, tp=16, attn_dp=8, attention="attn_tp:hkp")
    assert given["attention"] == {"code": "attn_tp:hkp", "assumed": False}
    assert given["first_error"] is None
    assert calc.run({"op": "summary", "heads": 8, "attention": "cp:h"}) == {
        "error": "attention must be like 'tp:hkp', got 'cp:h'"
    }


def test_ep_size_that_does_not_divide_tp():
    error = calc.first_error(32, 8, tp=8, ep=3)
    assert error.id == calc.MOE_TOPOLOGY and error.stage == "startup"
    assert error.message.splitlines()[-1] == "  8 != 3 * 1 * 2 (= 6)"
    error = calc.first_error(32, 8, tp=4, ep=8)  # a MoE TP width of 0
    assert error.message.splitlines()[-1] == "  4 != 8 * 1 * 0 (= 0)"
    assert error.message.startswith("parallel topology is inconsistent (set by override_perm")
    error = calc.first_error(32, 8, tp=8, ep=8, experts=60)
    assert error.values == {"num_experts": 60, "ep_size": 8} and error.stage == "load"
    assert calc.first_error(32, 8, tp=8, ep=8, experts=64) is None


def test_advice_is_the_largest_valid_tp_size_that_fits_one_node():
    assert calc.suggest_tp(40, 8) == {"tp": 8, "pp": 1, "gpus_per_node": 8}
    assert calc.suggest_tp(52, 4) == {"tp": 4, "pp": 2, "gpus_per_node": 8}
    assert calc.suggest_tp(7) == {"tp": 7, "pp": 1, "gpus_per_node": 8}
    assert calc.suggest_tp(13) == {"tp": 1, "pp": 8, "gpus_per_node": 8}
    out = calc.summary(40, 8, tp=16)
    assert out["suggestion"] == {"tp": 8, "pp": 1, "gpus_per_node": 8, "assumed": True}
    assert "suggestion" not in calc.summary(40, 8, tp=8)


def test_run_answers_json_and_names_bad_input():
    assert calc.run({"op": "divisors", "n": "12"}) == {"result": [1, 2, 3, 4, 6, 12]}
    assert calc.run({"op": "summary", "heads": 40})["result"]["valid_tp_sizes"][-1] == 40
    assert calc.run({"op": "summary", "heads": "forty"}) == {
        "error": "heads must be a whole number, got 'forty'"
    }
    assert calc.run({"op": "summary"}) == {"error": "summary needs heads"}
    assert calc.run({"op": "nope"})["error"].startswith("unknown op 'nope'")
    assert "does not take" in calc.run({"op": "divisors", "n": 4, "x": 1})["error"]


def test_imports_only_the_standard_library():
    lines = CALC_PATH.read_text().splitlines()
    imports = [line for line in lines if line.startswith(("import ", "from "))]
    assert {line.split()[1].split(".")[0] for line in imports} <= {"collections", "dataclasses"}


@pytest.mark.parametrize("rid", list(calc.MESSAGES))
def test_every_message_is_its_record_word_for_word(rid):
    exception, template = calc.MESSAGES[rid]
    record = yaml.safe_load((REPO / f"content/errors/sglang/{rid}.yaml").read_text())
    assert (record["exception"], record["message"]) == (exception, template)
    digest = hashlib.sha256(f"sglang\0{exception}\0{template}".encode()).hexdigest()
    assert digest[:16] == rid

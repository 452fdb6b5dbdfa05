"""The calculator: vLLM 0.33.0's parallel-size rules, their order and exact messages."""

import ast
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

CALC_PATH = Path(__file__).resolve().parent.parent / "generator" / "projects" / "vllm" / "calc.py"


def _load_standalone():
    """Load calc.py by path, as the browser does: no package around it."""
    spec = importlib.util.spec_from_file_location("errorkb_calc_standalone", CALC_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


calc = _load_standalone()
SEEDS = {"f644a7c8e4fdc46c", "d97d5d8528e2b364", "8a94eee2b843fde3"}


def err(result):
    assert result is not None, "expected an error, got None"
    return result.to_dict()


# Real GQA/MHA shapes: query heads are a whole number of groups per KV head.
kv_counts = st.integers(min_value=1, max_value=64)
groups = st.integers(min_value=1, max_value=16)
models = st.builds(lambda kv, g: (kv * g, kv), kv_counts, groups)
sizes = st.integers(min_value=1, max_value=256)


# ---------------------------------------------------------------- module shape


def test_imports_only_standard_library_and_nothing_from_the_package():
    tree = ast.parse(CALC_PATH.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            imported.add(node.module.split(".")[0])
    # The shared protocol, from the package or, in the browser's worker, beside it.
    assert imported - {"errorkb", "errorkb_protocol"} <= set(sys.stdlib_module_names)
    assert "generator" not in imported


@pytest.mark.parametrize("wing", ["vllm", "sglang"])
def test_the_calculator_runs_as_the_worker_runs_it(tmp_path, wing):
    """calc-worker.js writes each module as errorkb_<name>.py in one folder and imports them
    in a Python that has no errorkb: each calculator finds its protocol there."""
    projects = CALC_PATH.parent.parent
    (tmp_path / "errorkb_protocol.py").write_bytes((projects / "protocol.py").read_bytes())
    (tmp_path / "errorkb_calc.py").write_bytes((projects / wing / "calc.py").read_bytes())
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import errorkb_calc; "
        "print(json.dumps([errorkb_calc.run({'op': 'divisors', 'n': 12}), "
        "errorkb_calc.run({'op': 'divisors', 'n': 'x'})]))"
    )
    done = subprocess.run(  # -I -S: no site-packages, so no installed errorkb either
        [sys.executable, "-I", "-S", "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [
        {"result": [1, 2, 3, 4, 6, 12]},
        {"error": "n must be a whole number, got 'x'"},
    ]


def test_record_ids_follow_the_hash_rule_except_the_seeds():
    for record_id, (exception, template) in calc.MESSAGES.items():
        if record_id in SEEDS:
            continue
        digest = hashlib.sha256(f"vllm\0{exception}\0{template}".encode()).hexdigest()
        assert record_id == digest[:16], template
    assert set(calc.MESSAGES) >= SEEDS


def test_calculators_name_real_ops_and_their_inputs():
    for op, inputs in calc.CALCULATORS.values():
        fn = calc._OPS[op]
        params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        assert set(inputs) <= set(params), op


# ---------------------------------------------------------------- divisors


@given(st.integers(min_value=1, max_value=5000))
def test_divisors_match_brute_force(n):
    assert calc.divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


def test_divisors_of_the_upper_bound_are_instant():
    assert calc.divisors(2**20) == [2**i for i in range(21)]


# ---------------------------------------------------------------- valid TP sizes


def test_40_head_mha_model():
    assert calc.valid_tp_sizes(40) == [1, 2, 4, 5, 8, 10, 20, 40]


def test_tp_larger_than_kv_heads_replicates_them():
    assert 16 in calc.valid_tp_sizes(32, 8)
    assert calc.first_error(32, 8, tp=16) is None


def test_max_tp_caps_the_list():
    assert calc.valid_tp_sizes(64, 8, max_tp=8) == [1, 2, 4, 8]


def test_tp_not_multiple_of_kv_heads_fails_at_load():
    # 48 heads / 8 KV heads: 12 divides 48, but 12 KV-head replicas do not split 8 heads.
    assert 12 not in calc.valid_tp_sizes(48, 8)
    assert 24 in calc.valid_tp_sizes(48, 8)


@given(models)
def test_every_valid_tp_size_raises_nothing(model):
    heads, kv = model
    for tp in calc.valid_tp_sizes(heads, kv):
        assert calc.first_error(heads, kv, tp=tp) is None


@given(models, sizes)
def test_valid_tp_sizes_follow_the_config_and_load_rules(model, tp):
    heads, kv = model
    kv_ok = tp % kv == 0 if tp >= kv else kv % tp == 0
    expected = heads % tp == 0 and kv_ok
    assert (tp in calc.valid_tp_sizes(heads, kv)) is expected
    assert (calc.first_error(heads, kv, tp=tp) is None) is expected


# ---------------------------------------------------------------- each rule's message


def test_heads_not_divisible_by_tp():
    assert err(calc.first_error(40, tp=3)) == {
        "id": "f644a7c8e4fdc46c",
        "exception": "ValueError",
        "stage": "config",
        "message": "Total number of attention heads (40) must be divisible by "
        "tensor parallel size (3).",
        "values": {"total_num_attention_heads": 40, "tensor_parallel_size": 3},
    }


def test_tp_not_divisible_by_dcp():
    result = err(calc.first_error(32, 8, tp=16, dcp=3))
    assert result["message"] == "tp_size=16 must be divisible by dcp_size=3."
    assert result["values"] == {"tp": 16, "dcp": 3}
    assert result["stage"] == "config"


def test_pcp_with_a_dcp_that_spans_neither_axis():
    result = err(calc.first_error(32, 8, tp=4, dcp=4, pcp=2))
    assert result["message"] == (
        "When PCP is enabled, DCP must be disabled, span the PCP axis, or span the full "
        "TP x PCP axis. Got TP=4, PCP=2, DCP=4; valid DCP sizes are [1, 2, 8]."
    )
    assert result["values"]["valid_dcp_sizes"] == [1, 2, 8]


def test_pcp_skips_the_tp_dcp_divisibility_check():
    # DCP 2 spans the PCP axis; TP 3 is not a multiple of 2, and that is fine with PCP.
    assert calc.first_error(6, 1, tp=3, dcp=2, pcp=2, mla=True) is None


def test_dcp_needs_tp_above_kv_heads():
    assert calc.valid_dcp_sizes(64, 8, 8) == [1]
    result = err(calc.first_error(64, 8, tp=8, dcp=2))
    assert result["message"] == (
        "Decode context parallelism for GQA/MQA requires `--tensor-parallel-size` (8) to be "
        "greater than the model's total number of KV heads (8). Increase "
        "`--tensor-parallel-size` or set `--decode-context-parallel-size 1`."
    )


def test_dcp_above_the_replica_count():
    result = err(calc.first_error(64, 8, tp=16, dcp=4))
    assert result["message"] == (
        "`--decode-context-parallel-size` (4) exceeds the maximum supported value (2) for "
        "`--tensor-parallel-size` (16) and 8 model KV heads."
    )
    assert result["values"]["max_dcp_size"] == 2


def test_query_heads_per_kv_head_not_divisible_by_dcp():
    result = err(calc.first_error(48, 8, tp=48, dcp=4))
    assert result["id"] == "d97d5d8528e2b364"
    assert result["message"] == (
        "The model's number of query heads per KV head (6) must be divisible by "
        "`--decode-context-parallel-size` (4) for GQA/MQA."
    )
    assert calc.first_error(48, 8, tp=48, dcp=3) is None


def test_load_time_kv_head_replication():
    result = err(calc.first_error(48, 8, tp=12))
    assert result["exception"] == "AssertionError"
    assert result["stage"] == "load"
    assert result["message"] == "12 is not divisible by 8"
    assert result["values"] == {"numerator": 12, "denominator": 8}


def test_load_time_kv_head_split():
    assert err(calc.first_error(24, 6, tp=4))["message"] == "6 is not divisible by 4"


def test_attention_layer_needs_whole_query_groups_per_rank():
    # 12 query heads over 8 KV heads: no real model, but vLLM accepts it until load.
    result = err(calc.first_error(12, 8, tp=4))
    assert result["message"] == "num_heads (3) is not divisible by num_kv_heads (2)"
    assert result["stage"] == "load"


def test_every_template_fills_to_the_message():
    cases = [
        calc.first_error(40, tp=3),
        calc.first_error(32, 8, tp=16, dcp=3),
        calc.first_error(32, 8, tp=4, dcp=4, pcp=2),
        calc.first_error(64, 8, tp=8, dcp=2),
        calc.first_error(64, 8, tp=16, dcp=4),
        calc.first_error(48, 8, tp=48, dcp=4),
        calc.first_error(48, 8, tp=12),
        calc.first_error(12, 8, tp=4),
        calc.moriio_first_error(4, 6, 8),
        calc.moriio_first_error(6, 4, 8),
        calc.moriio_first_error(4, 8, 0),
        calc.moriio_first_error(4, 8, 8),
        calc.moriio_first_error(4, 6, 8, mode="write"),
        calc.moriio_first_error(2, 4, 0, mode="write"),
        calc.moriio_first_error(4, 8, 6, mode="write"),
        calc.first_error(64, 8, 8, nnodes=2, dp_backend="ray"),
        calc.first_error(64, 8, 8, nnodes=3),
        calc.first_error(64, 8, 8, dp=2, nnodes=2, node_rank=2),
        calc.first_error(64, 8, 16, gpus_per_node=8),
        calc.first_error(64, 8, 16, nnodes=2, backend="ray"),
    ]
    for result in cases:
        exception, template = calc.MESSAGES[result.id]
        assert result.exception == exception
        assert template.format(**result.values) == result.message
    reached = {r.id for r in cases}
    # The ACK-count error cannot fire: READ's rank mapping rejects the same sizes first.
    assert set(calc.MESSAGES) - reached == {calc.MORIIO_ACKS}


# ---------------------------------------------------------------- order of checks


def test_parallel_config_comes_before_the_heads_check():
    assert err(calc.first_error(40, tp=3, dcp=2))["id"] == calc.TP_DCP


def test_heads_check_comes_before_dcp_checks():
    assert err(calc.first_error(40, 8, tp=3, dcp=3))["id"] == "f644a7c8e4fdc46c"


def test_config_errors_come_before_load_errors():
    # TP 12 on 8 KV heads would fail at load, but DCP 2 exceeds 12 // 8 first.
    assert err(calc.first_error(48, 8, tp=12, dcp=2))["id"] == calc.DCP_MAX


def test_mla_skips_dcp_and_kv_head_checks_but_not_heads():
    assert calc.first_error(128, 128, tp=8, dcp=8, mla=True) is None
    assert calc.first_error(128, 3, tp=8, mla=True) is None
    assert err(calc.first_error(128, tp=3, mla=True))["id"] == "f644a7c8e4fdc46c"
    assert calc.valid_dcp_sizes(128, 128, 8, mla=True) == [1, 2, 4, 8]


def test_mha_cannot_use_dcp():
    assert calc.valid_dcp_sizes(40, None, 8) == [1]


# ---------------------------------------------------------------- DCP sizes


@given(models, sizes)
def test_valid_dcp_sizes_pass_and_others_fail(model, tp):
    heads, kv = model
    valid = calc.valid_dcp_sizes(heads, kv, tp)
    for dcp in calc.divisors(tp):
        assert (calc.first_error(heads, kv, tp=tp, dcp=dcp) is None) is (dcp in valid)


def test_valid_dcp_sizes_with_pcp():
    assert calc.valid_dcp_sizes(64, 1, 4, mla=True, pcp=2) == [1, 2, 8]
    assert calc.valid_dcp_sizes(48, 8, 48) == [1, 2, 3, 6]


def test_no_dcp_size_for_an_invalid_tp():
    assert calc.valid_dcp_sizes(40, 8, 3) == []


# ---------------------------------------------------------------- layouts


@settings(max_examples=60)
@given(
    models,
    st.integers(min_value=1, max_value=128),
    st.one_of(st.none(), st.integers(min_value=1, max_value=100)),
)
def test_every_layout_is_valid_and_uses_all_gpus(model, gpus, layers):
    heads, kv = model
    entries = calc.layouts(heads, kv, gpus, layers=layers)
    seen = set()
    for e in entries:
        assert e["tp"] * e["pp"] * e["dp"] == gpus
        assert layers is None or e["pp"] <= layers
        assert calc.first_error(heads, kv, tp=e["tp"]) is None
        assert e["dcp"][0] == 1
        for dcp in e["dcp"]:
            assert calc.first_error(heads, kv, tp=e["tp"], dcp=dcp) is None
        assert e["reason"] and "\n" not in e["reason"]
        seen.add((e["tp"], e["pp"]))
    assert len(seen) == len(entries)
    expected = {
        (tp, pp)
        for tp in calc.valid_tp_sizes(heads, kv)
        if gpus % tp == 0
        for pp in calc.divisors(gpus // tp)
        if layers is None or pp <= layers
    }
    assert seen == expected


def test_layouts_prefer_in_node_tp_then_tp_over_pp():
    entries = calc.layouts(64, 8, 16, layers=80)
    order = [(e["tp"], e["pp"], e["dp"]) for e in entries]
    # One copy on all GPUs first: in-node TP by TP size, then TP across nodes; DP after.
    assert order[:6] == [(8, 2, 1), (4, 4, 1), (2, 8, 1), (1, 16, 1), (16, 1, 1), (8, 1, 2)]
    assert "inside one node" in entries[0]["reason"]
    assert "crosses nodes" in entries[4]["reason"]
    assert "TP 8 could replace some PP" in entries[1]["reason"]
    assert entries[-1] == {
        "tp": 1,
        "pp": 1,
        "dp": 16,
        "dcp": [1],
        "reason": "DP 16: 16 copies of 1 GPU each; no TP",
    }


def test_layouts_on_one_node_put_full_tp_first():
    first = calc.layouts(40, None, 8)[0]
    assert (first["tp"], first["pp"], first["dp"]) == (8, 1, 1)


def test_layouts_use_pp_when_tp_cannot_fill_the_node():
    # 12 heads: TP 8 is impossible, so TP 4 x PP 2 serves one copy on 8 GPUs.
    first = calc.layouts(12, 4, 8, layers=32)[0]
    assert (first["tp"], first["pp"], first["dp"]) == (4, 2, 1)
    assert "16 of 32 layers per stage" in first["reason"]


def test_layouts_rank_even_layer_splits_first():
    entries = calc.layouts(8, 8, 6, layers=7, gpus_per_node=1)
    pps = [e["pp"] for e in entries if e["dp"] == 1 and e["tp"] == 1]
    assert pps == [6]
    assert "uneven" in [e for e in entries if e["pp"] == 6][0]["reason"]


def test_layouts_limit_and_dcp_options():
    entries = calc.layouts(48, 8, 48, limit=3)
    assert len(entries) == 3
    tp48 = [e for e in calc.layouts(48, 8, 48) if e["tp"] == 48][0]
    assert tp48["dcp"] == [1, 2, 3, 6]


def test_layouts_empty_when_no_tp_fits_the_gpus():
    assert calc.layouts(7, 7, 2) != []  # TP 1 x DP 2 always exists
    assert all(e["tp"] == 1 for e in calc.layouts(7, 7, 2))


# ---------------------------------------------------------------- MoRIIO


def test_moriio_read_homogeneous_always_passes():
    assert calc.moriio_first_error(4, 4, 8) is None
    assert calc.moriio_first_error(4, 4, 0) is None


def test_moriio_read_fanout_with_replicated_heads():
    assert calc.moriio(8, 16, 8) == {"first_error": None, "expected_acks": 2}
    assert calc.moriio(16, 8, 8) == {"first_error": None, "expected_acks": 1}


def test_moriio_read_needs_replicated_kv_heads():
    result = err(calc.moriio_first_error(4, 8, 8))
    assert result["exception"] == "NotImplementedError"
    assert result["stage"] == "transfer"
    assert result["message"] == (
        "MoRIIO heterogeneous TP requires replicated KV heads on both prefill and decode. "
        "Got total_num_kv_heads=8, local_tp_size=8, remote_tp_size=4."
    )


def test_moriio_positive_sizes():
    result = err(calc.moriio_first_error(4, 8, 0))
    assert result == {
        "id": "8a94eee2b843fde3",
        "exception": "ValueError",
        "stage": "transfer",
        "message": "TP sizes and total_num_kv_heads must be positive",
        "values": {},
    }


def test_moriio_read_sizes_must_be_multiples_before_anything_else():
    # Decode (local) 6 reads from prefill (remote) 4.
    assert err(calc.moriio_first_error(4, 6, 0))["message"] == (
        "local tp_size 6 must be a multiple of remote tp_size 4 for heterogeneous-TP P/D"
    )
    assert err(calc.moriio_first_error(6, 4, 8))["message"] == (
        "remote tp_size 6 must be a multiple of local tp_size 4 for heterogeneous-TP P/D"
    )


def test_moriio_mla_skips_the_kv_head_check():
    assert calc.moriio_first_error(2, 8, 64, mla=True) is None
    assert calc.moriio_first_error(2, 8, 64, mode="write", mla=True) is None
    assert err(calc.moriio_first_error(2, 3, 1, mla=True))["id"] == calc.MORIIO_LOCAL_MULTIPLE


def test_moriio_write_multiples():
    assert err(calc.moriio_first_error(4, 6, 8, mode="write"))["message"] == (
        "MoRIIO WRITE needs one TP size to be a multiple of the other, got producer "
        "tp_size=4, consumer tp_size=6"
    )


def test_moriio_write_allows_split_heads_that_read_rejects():
    assert calc.moriio_first_error(2, 4, 8, mode="write") is None
    assert calc.moriio_first_error(2, 4, 8, mode="read") is not None
    assert calc.moriio(2, 4, 8, mode="WRITE") == {"first_error": None, "expected_acks": 1}


def test_moriio_write_shard_and_positive_checks():
    assert err(calc.moriio_first_error(4, 8, 6, mode="write"))["message"] == (
        "MoRIIO WRITE cannot shard 6 KV heads over tp_size=4"
    )
    assert err(calc.moriio_first_error(2, 4, 3, mode="write"))["values"] == {
        "total_num_kv_heads": 3,
        "tp_size": 2,
    }
    assert err(calc.moriio_first_error(2, 4, 0, mode="write"))["message"] == (
        "total_num_kv_heads must be positive"
    )
    assert calc.moriio_first_error(12, 24, 6, mode="write") is None


@given(sizes, sizes, st.integers(min_value=0, max_value=64), st.sampled_from(["read", "write"]))
def test_moriio_passing_pairs_are_multiples(prefill, decode, kv, mode):
    result = calc.moriio(prefill, decode, kv, mode=mode)
    if result["first_error"] is None:
        assert max(prefill, decode) % min(prefill, decode) == 0
        acks = result["expected_acks"]
        assert acks == (decode // prefill if mode == "read" and decode > prefill else 1)
        if mode == "read" and prefill != decode:
            assert min(prefill, decode) >= kv > 0


# ---------------------------------------------------------------- bad input

BAD_SIZES = [0, -1, True, False, 4.0, 2.5, "4.5", "abc", "", 10**12, "9" * 5000, None, [4]]


@pytest.mark.parametrize("value", BAD_SIZES)
def test_bad_heads(value):
    with pytest.raises(calc.CalcInputError, match="heads"):
        calc.valid_tp_sizes(value)


@pytest.mark.parametrize("value", [v for v in BAD_SIZES if v not in (None, "")])
def test_bad_tp_dcp_pcp_kv_and_gpus(value):
    for name in ("tp", "dcp", "pcp", "kv_heads"):
        with pytest.raises(calc.CalcInputError, match=name):
            calc.first_error(40, **({"kv_heads": 8} | {name: value}))
    with pytest.raises(calc.CalcInputError, match="gpus"):
        calc.layouts(40, 8, value)


def test_bad_input_is_a_value_error_naming_the_bound():
    with pytest.raises(ValueError, match=r"heads must be between 1 and 1048576, got 0"):
        calc.first_error(0)
    with pytest.raises(ValueError, match=r"tp must be a whole number, got 2.5"):
        calc.first_error(40, tp=2.5)


def test_bad_flags_and_modes():
    with pytest.raises(calc.CalcInputError, match="mla"):
        calc.first_error(40, mla="maybe")
    with pytest.raises(calc.CalcInputError, match="mode"):
        calc.moriio_first_error(4, 8, 8, mode="push")
    with pytest.raises(calc.CalcInputError, match="kv_heads"):
        calc.moriio_first_error(4, 8, -1)
    with pytest.raises(calc.CalcInputError, match="decode_tp"):
        calc.moriio_first_error(4, 0, 8)


def test_form_strings_are_accepted():
    assert calc.valid_tp_sizes(" 40 ", "") == [1, 2, 4, 5, 8, 10, 20, 40]
    assert calc.first_error("48", "8", tp="48", dcp="4", mla="false").id == calc.Q_PER_KV_DCP
    assert calc.first_error(128, tp=8, dcp=8, mla="true") is None


def test_largest_inputs_answer():
    assert calc.valid_tp_sizes(2**20, 1) == [2**i for i in range(21)]
    assert len(calc.layouts(2**20, 1, 2**20, limit=5)) == 5


# ---------------------------------------------------------------- worker entry


def test_run_returns_json_for_every_op():
    requests = [
        {"op": "summary", "heads": 64, "kv_heads": 8, "tp": 16, "dcp": 4, "gpus": 16},
        {"op": "first_error", "heads": 40, "tp": 3},
        {"op": "valid_tp_sizes", "heads": "40"},
        {"op": "valid_dcp_sizes", "heads": 48, "kv_heads": 8, "tp": 48},
        {"op": "layouts", "heads": 40, "kv_heads": 8, "gpus": 8},
        {"op": "divisors", "n": 12},
        {"op": "moriio", "prefill_tp": 8, "decode_tp": 16, "kv_heads": 8},
        {"op": "moriio_first_error", "prefill_tp": 4, "decode_tp": 8, "kv_heads": 0},
    ]
    for request in requests:
        response = json.loads(json.dumps(calc.run(request)))
        assert "result" in response, (request, response)
    assert calc.run(requests[1])["result"]["id"] == "f644a7c8e4fdc46c"
    assert calc.run(requests[5]) == {"result": [1, 2, 3, 4, 6, 12]}


def test_summary_has_everything_the_widget_shows():
    out = calc.run({"op": "summary", "heads": 64, "kv_heads": 8, "tp": 16, "dcp": 4, "gpus": 16})
    out = out["result"]
    assert out["valid_tp_sizes"] == [1, 2, 4, 8, 16, 32, 64]
    assert out["first_error"]["id"] == calc.DCP_MAX
    assert out["valid_dcp_sizes"] == [1, 2]
    assert out["layouts_total"] == len(calc.layouts(64, 8, 16))
    assert out["layouts"][0]["tp"] == 8
    assert set(calc.summary(40)) == {"valid_tp_sizes"}
    assert calc.summary(40, tp="", gpus="") == {"valid_tp_sizes": [1, 2, 4, 5, 8, 10, 20, 40]}


def test_a_failing_tp_size_gets_advice_that_fits_the_node():
    # 52 heads on 8 GPUs: 13 divides 52 but no 8-GPU node runs it; 4 does, with PP 2.
    out = calc.summary(52, tp=8)
    assert out["first_error"]["id"] == calc.HEADS_TP
    assert out["suggestion"] == {"tp": 4, "pp": 2, "gpus_per_node": 8, "assumed": True}
    assert calc.summary(52, tp=8, gpus_per_node=4)["suggestion"]["tp"] == 4
    assert calc.summary(52, tp=8, gpus_per_node=4)["suggestion"]["assumed"] is False
    # No TP size above 1 fits: pipeline parallelism over the whole node.
    assert calc.suggest_tp(13) == {"tp": 1, "pp": 8, "gpus_per_node": 8}
    # KV heads count too: 40 heads with 8 KV heads cannot use TP 5.
    assert calc.summary(40, 8, tp=5)["suggestion"]["tp"] == 8
    assert "suggestion" not in calc.summary(52, tp=4)  # a size that works needs no advice


@given(heads=st.integers(1, 256), per_node=st.integers(1, 16), grouped=st.booleans())
def test_advice_is_the_largest_valid_size_that_fits(heads, per_node, grouped):
    kv = next(k for k in (8, 4, 2, 1) if heads % k == 0) if grouped else heads
    advice = calc.suggest_tp(heads, kv, gpus_per_node=per_node)
    fits = [t for t in calc.valid_tp_sizes(heads, kv) if t <= per_node]
    assert advice["tp"] == max(fits)
    assert advice["tp"] * advice["pp"] <= per_node


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        ({"op": "nope"}, "unknown op"),
        ({}, "unknown op"),
        ("first_error", "request must be"),
        ({"op": "first_error", "heads": 40, "bogus": 1}, "does not take bogus"),
        ({"op": "first_error", "tp": 2}, "needs heads"),
        ({"op": "first_error", "heads": 0}, "heads must be between"),
        ({"op": "layouts", "heads": 40, "kv_heads": 8, "gpus": 10**12}, "gpus"),
    ],
)
def test_run_reports_errors(request_, fragment):
    response = calc.run(request_)
    assert set(response) == {"error"}
    assert fragment in response["error"]


def test_every_calculator_message_is_its_record_message_word_for_word():
    """calc.py carries a copy of each wording (it runs alone in the browser): it must not drift."""
    errors = Path(__file__).resolve().parent.parent / "content" / "errors"
    for record_id, (exception, message) in calc.MESSAGES.items():
        found = list(errors.glob(f"*/{record_id}.yaml"))
        assert found, f"calc.py raises {record_id}, which has no record"
        record = yaml.safe_load(found[0].read_text(encoding="utf-8"))
        assert (record["exception"], record["message"]) == (exception, message), record_id

"""The node comes first: vLLM 0.33.0's --nnodes launch checks and its world-size check,
tested against an independent re-reading of the source.

`_vllm_launch` below follows the code path by path, in its own structure:
engine/arg_utils.py EngineArgs.create_engine_config (the --nnodes block, about lines
2390-2420), then config/parallel.py ParallelConfig.__post_init__ (the executor-backend
choice, about lines 1054-1113) on a CUDA platform whose device count is the node's GPUs.
pydantic runs a dataclass's __post_init__ before its mode="after" validators, so all of
this precedes ParallelConfig._validate_parallel_config (the TP/DCP rule).
"""

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CALC_PATH = Path(__file__).resolve().parent.parent / "generator" / "projects" / "vllm" / "calc.py"
_spec = importlib.util.spec_from_file_location("errorkb_calc_node", CALC_PATH)
calc = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = calc
_spec.loader.exec_module(calc)  # alone, as the browser runs it

# Real GQA/MHA shapes: query heads are a whole number of groups per KV head.
models = st.builds(
    lambda kv, g: (kv * g, kv),
    st.integers(min_value=1, max_value=64),
    st.integers(min_value=1, max_value=16),
)


def err(result):
    assert result is not None, "expected an error, got None"
    return result.to_dict()

UNSET = object()


def _vllm_launch(tp, pp, pcp, dp, gpus, nnodes, node_rank, backend, dp_backend):
    """The id of the record vLLM raises first for these launch settings, or None."""
    # create_engine_config
    if nnodes > 1 and dp_backend != "mp":
        return calc.NNODES_DP_BACKEND
    if nnodes > 1:
        world_size = dp * (pp * tp * pcp)
        if world_size % nnodes != 0:
            return calc.NNODES_DIVIDE
        if not 0 <= node_rank < nnodes:
            return calc.NODE_RANK
    # ParallelConfig.__post_init__
    world_size = pp * tp * pcp
    if backend == "external_launcher":
        world_size *= dp
    across_dp = world_size * dp
    if backend is None and across_dp > 1:
        if nnodes > 1:
            backend = "mp"
        elif gpus is not UNSET and gpus < world_size:
            return calc.WORLD_GPUS
        else:
            backend = "ray" if dp_backend == "ray" else "mp"
    if backend is None and world_size == 1:
        backend = "uni"
    if backend not in ("mp", "uni", "external_launcher") and nnodes > 1:
        return calc.NNODES_EXECUTOR
    return None


small = st.integers(min_value=1, max_value=16)
launches = st.fixed_dictionaries(
    {
        "tp": st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32]),
        "pp": st.integers(min_value=1, max_value=4),
        "pcp": st.integers(min_value=1, max_value=4),
        "dp": st.integers(min_value=1, max_value=4),
        "gpus_per_node": st.one_of(st.none(), small),
        "nnodes": st.integers(min_value=1, max_value=8),
        "node_rank": st.integers(min_value=0, max_value=9),
        "backend": st.sampled_from([None, "mp", "ray", "uni", "external_launcher"]),
        "dp_backend": st.sampled_from(["mp", "ray"]),
    }
)


def _oracle(launch: dict):
    gpus = UNSET if launch["gpus_per_node"] is None else launch["gpus_per_node"]
    keys = ("tp", "pp", "pcp", "dp")
    rest = (launch["nnodes"], launch["node_rank"], launch["backend"], launch["dp_backend"])
    return _vllm_launch(*(launch[k] for k in keys), gpus, *rest)


def _call(heads, kv, launch: dict, dcp=1, mla=False):
    node = {k: v for k, v in launch.items() if k not in ("tp", "pcp")}
    return calc.first_error(heads, kv, launch["tp"], dcp, launch["pcp"], mla, **node)


@settings(max_examples=400)
@given(launches)
def test_node_rules_match_the_source_for_an_unknown_model(launch):
    # heads None: only what needs no model runs; DCP 1 passes the TP/DCP rule.
    result = _call(None, None, launch)
    assert (result and result.id) == _oracle(launch)


@pytest.mark.slow
@settings(max_examples=400)
@given(models, launches, st.sampled_from([1, 2, 3, 4]), st.booleans())
def test_node_rules_come_before_every_model_rule(model, launch, dcp, mla):
    heads, kv = model
    result = _call(heads, kv, launch, dcp, mla)
    expected = _oracle(launch)
    if expected is not None:
        assert result.id == expected
    else:  # the rules of before: unchanged by where it runs
        old = calc.first_error(heads, kv, launch["tp"], dcp, launch["pcp"], mla)
        assert result == old


@given(launches)
def test_without_gpus_per_node_the_world_size_check_never_fires(launch):
    launch = {**launch, "gpus_per_node": None}
    result = _call(None, None, launch)
    assert result is None or result.id != calc.WORLD_GPUS


@settings(max_examples=300)
@given(launches, st.sampled_from([None, "mp"]), small, st.integers(min_value=0, max_value=4))
def test_node_plan_fits_exactly_when_each_node_has_the_gpus(launch, backend, gpus, spare):
    launch = {**launch, "backend": backend, "gpus_per_node": gpus}
    nodes = launch["nnodes"] + spare
    plan = calc.node_plan(calc.launch_inputs(**launch), nodes)
    total = launch["tp"] * launch["pp"] * launch["pcp"] * launch["dp"]
    per_node = -(-total // launch["nnodes"])
    assert plan["gpus"] == total and plan["per_node"] == per_node
    assert plan["fits"] is (per_node <= launch["gpus_per_node"])


@pytest.mark.slow
@settings(max_examples=300)
@given(launches, small)
def test_the_advice_for_too_few_gpus_launches(launch, gpus):
    """The node count a plan suggests is the smallest that works, and vLLM accepts it."""
    launch = {**launch, "backend": None, "dp_backend": "mp", "nnodes": 1, "node_rank": 0}
    launch["gpus_per_node"] = gpus
    plan = calc.node_plan(calc.launch_inputs(**launch))
    if plan["fits"]:
        return
    need = int(plan["note"].split("--nnodes ")[1].split(",")[0])
    total, per = plan["gpus"], launch["gpus_per_node"]
    assert total % need == 0 and total // need <= per
    assert all(total % k or total // k > per for k in range(1, need))
    for rank in range(need):
        spread = {**launch, "nnodes": need, "node_rank": rank}
        assert _oracle(spread) is None
        assert calc.node_plan(calc.launch_inputs(**spread))["fits"] is True


def test_world_size_counts_pp_tp_pcp_but_not_dp():
    # TP 8 x DP 2 on an 8-GPU node passes the check (and then has no GPUs for replica 2).
    assert calc.first_error(64, 8, 8, dp=2, gpus_per_node=8) is None
    plan = calc.summary(64, 8, 8, dp=2, gpus_per_node=8)["node"]
    assert plan["fits"] is False and "needs 16 GPUs on a node of 8" in plan["note"]
    result = err(calc.first_error(64, 8, 8, pp=2, gpus_per_node=8))
    assert result["values"] == {"world_size": 16, "gpu_count": 8}
    assert err(calc.first_error(64, 8, 4, pcp=4, gpus_per_node=8))["id"] == calc.WORLD_GPUS


def test_the_issue_example_fails_on_the_node_first():
    assert err(calc.first_error(48, 8, 16, 3))["id"] == calc.TP_DCP  # node not given
    result = err(calc.first_error(48, 8, 16, 3, gpus_per_node=8))
    assert result["message"].startswith("World size (16) is larger than")
    assert err(calc.first_error(48, 8, 16, 3, gpus_per_node=8, nnodes=2))["id"] == calc.TP_DCP


def test_explicit_backends_skip_the_world_size_check():
    for backend in ("mp", "ray", "uni", "external_launcher"):
        assert calc.first_error(64, 8, 16, gpus_per_node=8, backend=backend) is None
    ray = calc.node_plan(calc.launch_inputs(16, backend="ray", gpus_per_node=8), nodes=2)
    assert ray["fits"] is True and "16 GPUs" in ray["note"]
    alone = calc.node_plan(calc.launch_inputs(16, backend="ray", gpus_per_node=8))
    assert alone["fits"] is False


def test_nnodes_messages_as_vllm_prints_them():
    result = err(calc.first_error(64, 8, 8, nnodes=2, node_rank=5))
    assert result["message"] == (
        "Invalid data-parallel launch options: `--node-rank` must be between 0 and 1; got "
        "`--node-rank 5`. Set it to this node's zero-based index."
    )
    result = err(calc.first_error(64, 8, 8, dp=3, nnodes=2, dp_backend="ray"))
    assert "`--nnodes 2` requires `--data-parallel-backend mp`; got " in result["message"]
    assert err(calc.first_error(64, 8, 8, dp=3, nnodes=5))["values"] == {
        "nnodes": 5,
        "world_size": 24,
    }


def test_the_answer_says_when_it_assumed_the_node():
    plan = calc.summary(64, 8, 16)["node"]
    assert plan["fits"] is None and "assumed each node has the 16" in plan["note"]
    assert calc.summary(64, 8, 16, gpus_per_node="")["node"]["fits"] is None


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"nnodes": 0}, "nnodes must be between 1"),
        ({"node_rank": -1}, "node_rank must be at least 0"),
        ({"gpus_per_node": "eight"}, "gpus_per_node must be a whole number"),
        ({"gpus_per_node": 0}, "gpus_per_node must be between 1"),
        ({"backend": "torchrun"}, "backend must be one of mp, ray, uni, external_launcher"),
        ({"dp_backend": "nccl"}, "dp_backend must be one of mp, ray"),
        ({"pp": 2**20, "dp": 2}, "must be at most"),
        ({"pp": True}, "pp must be a whole number"),
    ],
)
def test_bad_launch_input_gets_a_clear_message(kwargs, fragment):
    with pytest.raises(calc.CalcInputError, match=fragment):
        calc.first_error(64, 8, 8, **kwargs)


def test_negative_node_rank_with_several_nodes_is_vllms_own_error():
    assert err(calc.first_error(64, 8, 8, nnodes=2, node_rank=-1))["id"] == calc.NODE_RANK


def test_run_takes_the_keyword_only_inputs_as_form_strings():
    response = calc.run(
        {"op": "first_error", "heads": "64", "tp": "16", "gpus_per_node": "8", "nnodes": "2"}
    )
    assert response == {"result": None}
    response = calc.run({"op": "summary", "heads": 64, "tp": 16, "gpus_per_node": " 8 "})
    assert response["result"]["first_error"]["id"] == calc.WORLD_GPUS
    assert calc.run({"op": "summary", "heads": 64, "tp": 8, "nodes": 2})["error"].endswith(
        "does not take nodes"
    )

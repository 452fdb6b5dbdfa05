"""vLLM's parallel-size rules, as vLLM 0.33.0 (commit 4ba787ec9) applies them.

The one source of truth for the calculator: the build uses it for static tables
and record checks, and the browser runs this very file in a Pyodide Web Worker.
So: standard library only, no package imports, nothing computed at import time.

Every error is reported as vLLM would raise it: the record id, the exception
class, the stage (launch, config, load, or transfer for MoRIIO), the message filled in
exactly as vLLM formats it, and the values of its placeholders.
"""

from dataclasses import dataclass

try:  # in the package
    from errorkb.projects import protocol
except ImportError:  # in the browser's worker, which is served it beside this file
    import errorkb_protocol as protocol  # type: ignore[import-not-found, no-redef]

# The shared protocol (protocol.py), by the names the rules below call it.
LIMIT = protocol.LIMIT
CalcInputError = protocol.CalcInputError
Result = protocol.Result
_int, _opt_int, _bool = protocol.whole, protocol.optional_whole, protocol.yes_no
_divisors = protocol.divisors_of


def _raise(record_id: str, stage: str, **values) -> Result:
    return protocol.raised(MESSAGES, record_id, stage, **values)


# Record ids. The three seeds are fixed; the others are the first 16 hex digits of
# sha256("vllm\0<exception>\0<template>"), stored here so import does no hashing.
HEADS_TP = "f644a7c8e4fdc46c"
Q_PER_KV_DCP = "d97d5d8528e2b364"
MORIIO_POSITIVE = "8a94eee2b843fde3"
TP_DCP = "ec286fe14c6bd36e"
PCP_DCP = "cd09495ecb370cdc"
DCP_NEEDS_TP = "d5a007f20ffc651d"
DCP_MAX = "b0d4689c64092fe0"
NOT_DIVISIBLE = "8c9939623dcb99d4"
ATTN_HEADS_KV = "23915572dd643864"
MORIIO_REMOTE_MULTIPLE = "d088ea88edc4adb6"
MORIIO_LOCAL_MULTIPLE = "4f2f0383ffb17009"
MORIIO_REPLICATED = "3816d2388527979a"
MORIIO_ACKS = "3080991b4ff33f42"
MORIIO_WRITE_MULTIPLE = "ac8dd4ee2d70dbf2"
MORIIO_WRITE_KV_POSITIVE = "a41a5e77e2553582"
MORIIO_WRITE_SHARD = "db0b01dcb862cef1"
NNODES_DP_BACKEND = "f6ec449b210a9b66"
NNODES_DIVIDE = "31841048635cd034"
NODE_RANK = "230acc43d4f8cfca"
WORLD_GPUS = "dd418736ee7fb7a3"
NNODES_EXECUTOR = "ff12640a36a84da9"

# The records first_error can raise without knowing the model's heads, and with them.
MODEL_FREE = frozenset(
    (NNODES_DP_BACKEND, NNODES_DIVIDE, NODE_RANK, WORLD_GPUS, NNODES_EXECUTOR, TP_DCP, PCP_DCP)
)
FIRST_ERRORS = MODEL_FREE | {HEADS_TP, DCP_NEEDS_TP, DCP_MAX, Q_PER_KV_DCP, NOT_DIVISIBLE}
FIRST_ERRORS |= {ATTN_HEADS_KV}

# id -> (exception, template). Templates are the messages exactly as vLLM formats
# them, with {name} for each f-string expression (its last attribute name).
MESSAGES = {
    # engine/arg_utils.py, EngineArgs.create_engine_config (before ParallelConfig exists)
    NNODES_DP_BACKEND: (
        "ValueError",
        "Invalid data-parallel launch options: `--nnodes {nnodes}` requires "
        "`--data-parallel-backend mp`; got `--data-parallel-backend {data_parallel_backend}`. "
        "Use the MP backend or set `--nnodes 1`.",
    ),
    NNODES_DIVIDE: (
        "ValueError",
        "Invalid data-parallel launch options: `--nnodes {nnodes}` must evenly divide the "
        "total world size ({world_size}). Adjust `--nnodes`, `--data-parallel-size`, "
        "`--pipeline-parallel-size`, `--tensor-parallel-size`, or "
        "`--prefill-context-parallel-size`.",
    ),
    NODE_RANK: (
        "ValueError",
        "Invalid data-parallel launch options: `--node-rank` must be between 0 and "
        "{nnodes_minus_value}; got `--node-rank {node_rank}`. Set it to this node's "
        "zero-based index.",
    ),
    # config/parallel.py, ParallelConfig.__post_init__ (runs before its after-validators)
    WORLD_GPUS: (
        "ValueError",
        "World size ({world_size}) is larger than the number of available GPUs ({gpu_count}) "
        "in this node. If this is intentional and you are using:\n- ray, set "
        "'--distributed-executor-backend ray'.\n- multiprocessing, set '--nnodes' "
        "appropriately.",
    ),
    NNODES_EXECUTOR: (
        "ValueError",
        "nnodes > 1 can only be set when distributed executor backend is mp, uni or "
        "external_launcher.",
    ),
    # config/parallel.py, ParallelConfig._validate_parallel_config
    TP_DCP: ("ValueError", "tp_size={tp} must be divisible by dcp_size={dcp}."),
    PCP_DCP: (
        "ValueError",
        "When PCP is enabled, DCP must be disabled, span the PCP axis, or span the full "
        "TP x PCP axis. Got TP={tp}, PCP={pcp}, DCP={dcp}; valid DCP sizes are "
        "{valid_dcp_sizes}.",
    ),
    # config/model.py, ModelConfig.verify_with_parallel_config
    HEADS_TP: (
        "ValueError",
        "Total number of attention heads ({total_num_attention_heads}) must be divisible "
        "by tensor parallel size ({tensor_parallel_size}).",
    ),
    DCP_NEEDS_TP: (
        "ValueError",
        "Decode context parallelism for GQA/MQA requires `--tensor-parallel-size` "
        "({tensor_parallel_size}) to be greater than the model's total number of KV heads "
        "({total_num_kv_heads}). Increase `--tensor-parallel-size` or set "
        "`--decode-context-parallel-size 1`.",
    ),
    DCP_MAX: (
        "ValueError",
        "`--decode-context-parallel-size` ({decode_context_parallel_size}) exceeds the "
        "maximum supported value ({max_dcp_size}) for `--tensor-parallel-size` "
        "({tensor_parallel_size}) and {total_num_kv_heads} model KV heads.",
    ),
    Q_PER_KV_DCP: (
        "ValueError",
        "The model's number of query heads per KV head ({num_q_per_kv}) must be divisible "
        "by `--decode-context-parallel-size` ({decode_context_parallel_size}) for GQA/MQA.",
    ),
    # distributed/utils.py ensure_divisibility, via QKVParallelLinear at model load
    NOT_DIVISIBLE: ("AssertionError", "{numerator} is not divisible by {denominator}"),
    # model_executor/layers/attention/attention.py, Attention.__init__ (per-rank heads)
    ATTN_HEADS_KV: (
        "AssertionError",
        "num_heads ({num_heads}) is not divisible by num_kv_heads ({num_kv_heads})",
    ),
    # distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py
    MORIIO_REMOTE_MULTIPLE: (
        "ValueError",
        "remote tp_size {remote_tp_size} must be a multiple of local tp_size "
        "{local_tp_size} for heterogeneous-TP P/D",
    ),
    MORIIO_LOCAL_MULTIPLE: (
        "ValueError",
        "local tp_size {local_tp_size} must be a multiple of remote tp_size "
        "{remote_tp_size} for heterogeneous-TP P/D",
    ),
    MORIIO_POSITIVE: ("ValueError", "TP sizes and total_num_kv_heads must be positive"),
    MORIIO_REPLICATED: (
        "NotImplementedError",
        "MoRIIO heterogeneous TP requires replicated KV heads on both prefill and decode. "
        "Got total_num_kv_heads={total_num_kv_heads}, local_tp_size={local_tp_size}, "
        "remote_tp_size={remote_tp_size}.",
    ),
    MORIIO_ACKS: (
        "ValueError",
        "consumer tp_size {consumer_tp_size} must be a multiple of producer tp_size "
        "{producer_tp_size} for heterogeneous-TP P/D",
    ),
    # .../moriio/moriio_tp_mapping.py, validate_write_tp_topology
    MORIIO_WRITE_MULTIPLE: (
        "ValueError",
        "MoRIIO WRITE needs one TP size to be a multiple of the other, got producer "
        "tp_size={producer_tp_size}, consumer tp_size={consumer_tp_size}",
    ),
    MORIIO_WRITE_KV_POSITIVE: ("ValueError", "total_num_kv_heads must be positive"),
    MORIIO_WRITE_SHARD: (
        "ValueError",
        "MoRIIO WRITE cannot shard {total_num_kv_heads} KV heads over tp_size={tp_size}",
    ),
}

# Calculators a record may name in its `calculator` field -> (run op, its inputs).
# tp_sizes and dcp_sizes are two views of one widget, answered by summary().
_NODE = ("pp", "dp", "gpus_per_node", "nnodes")  # where it runs: the node check's inputs
CALCULATORS = {
    "tp_sizes": ("summary", ("heads", "kv_heads", "tp", "mla", *_NODE, "gpus", "layers")),
    "dcp_sizes": ("summary", ("heads", "kv_heads", "tp", "dcp", "pcp", "mla", *_NODE)),
    "moriio": ("moriio", ("prefill_tp", "decode_tp", "kv_heads", "mode", "mla")),
}


# ---------------------------------------------------------------- input checks


def _model(heads, kv_heads, mla) -> tuple[int, int, bool]:
    """Heads, KV heads (None = MHA: one KV head per query head), MLA flag."""
    heads = _int("heads", heads)
    kv = _opt_int("kv_heads", kv_heads)
    return heads, heads if kv is None else kv, _bool("mla", mla)


# ---------------------------------------------------------------- the rules


def _parallel_config_error(tp: int, dcp: int, pcp: int) -> Result | None:
    """ParallelConfig validation: runs when the config is built, before the model check."""
    if pcp == 1:
        if tp % dcp:  # DCP reuses the TP ranks
            return _raise(TP_DCP, "config", tp=tp, dcp=dcp)
    elif dcp not in (1, pcp, tp * pcp):
        valid = sorted({1, pcp, tp * pcp})
        return _raise(PCP_DCP, "config", tp=tp, pcp=pcp, dcp=dcp, valid_dcp_sizes=valid)
    return None


def _model_config_error(heads: int, kv: int, tp: int, dcp: int, mla: bool) -> Result | None:
    """ModelConfig.verify_with_parallel_config: heads vs TP, then DCP for GQA/MQA."""
    if heads % tp:
        return _raise(HEADS_TP, "config", total_num_attention_heads=heads, tensor_parallel_size=tp)
    if dcp == 1 or mla:  # MLA shards its latent KV cache differently
        return None
    if tp <= kv:  # DCP needs KV heads replicated across TP ranks
        return _raise(DCP_NEEDS_TP, "config", tensor_parallel_size=tp, total_num_kv_heads=kv)
    if dcp > tp // kv:
        return _raise(
            DCP_MAX,
            "config",
            decode_context_parallel_size=dcp,
            max_dcp_size=tp // kv,
            tensor_parallel_size=tp,
            total_num_kv_heads=kv,
        )
    if (heads // kv) % dcp:
        return _raise(
            Q_PER_KV_DCP, "config", num_q_per_kv=heads // kv, decode_context_parallel_size=dcp
        )
    return None


def _load_error(heads: int, kv: int, tp: int) -> Result | None:
    """Model load, every worker: KV heads are split over TP, or replicated when fewer."""
    if tp >= kv and tp % kv:
        return _raise(NOT_DIVISIBLE, "load", numerator=tp, denominator=kv)
    if tp < kv and kv % tp:
        return _raise(NOT_DIVISIBLE, "load", numerator=kv, denominator=tp)
    # The attention layer then needs whole query groups per KV head on each rank.
    num_heads, num_kv = heads // tp, max(1, kv // tp)
    if num_heads % num_kv:
        return _raise(ATTN_HEADS_KV, "load", num_heads=num_heads, num_kv_heads=num_kv)
    return None


def _first(heads: int, kv: int, tp: int, dcp: int, pcp: int, mla: bool) -> Result | None:
    return (
        _parallel_config_error(tp, dcp, pcp)
        or _model_config_error(heads, kv, tp, dcp, mla)
        or (None if mla else _load_error(heads, kv, tp))
    )


@dataclass(frozen=True)
class Launch:
    """How vLLM is started: the sizes that make up the world and where it runs.

    gpus_per_node is the number of GPUs vLLM sees on the node it starts on (None: not
    known, so the node check is skipped). backend is --distributed-executor-backend
    (None when not given), dp_backend is --data-parallel-backend.
    """

    tp: int = 1
    pp: int = 1
    pcp: int = 1
    dp: int = 1
    gpus_per_node: int | None = None
    nnodes: int = 1
    node_rank: int = 0
    backend: str | None = None
    dp_backend: str = "mp"
    dp_local: int | None = None  # --data-parallel-size-local: replicas on this node

    @property
    def world_size(self) -> int:
        """ParallelConfig.world_size: the GPUs of one replica (DP is not in it)."""
        return self.pp * self.tp * self.pcp

    @property
    def total(self) -> int:
        """The GPUs of all replicas: what --nnodes must divide."""
        return self.dp * self.world_size


BACKENDS = ("mp", "ray", "uni", "external_launcher")
DP_BACKENDS = ("mp", "ray")


def _launch_error(launch: Launch) -> Result | None:
    """EngineArgs.create_engine_config's --nnodes checks, then ParallelConfig.__post_init__
    on a CUDA platform: both run before the parallel config's own validation."""
    nnodes = launch.nnodes
    if nnodes > 1:
        if launch.dp_backend != "mp":
            return _raise(
                NNODES_DP_BACKEND, "launch", nnodes=nnodes, data_parallel_backend=launch.dp_backend
            )
        if launch.total % nnodes:
            return _raise(NNODES_DIVIDE, "launch", nnodes=nnodes, world_size=launch.total)
        if not 0 <= launch.node_rank < nnodes:
            return _raise(
                NODE_RANK, "launch", nnodes_minus_value=nnodes - 1, node_rank=launch.node_rank
            )
    # Only an unset backend is checked, and only on one node (more nodes choose mp).
    if (
        launch.backend is None
        and launch.total > 1
        and nnodes == 1
        and launch.gpus_per_node is not None
        and launch.gpus_per_node < launch.world_size
    ):
        return _raise(
            WORLD_GPUS, "config", world_size=launch.world_size, gpu_count=launch.gpus_per_node
        )
    if nnodes > 1 and launch.backend == "ray":
        return _raise(NNODES_EXECUTOR, "config")
    return None


def _valid_tp(heads: int, kv: int, mla: bool, max_tp: int) -> list[int]:
    return [
        t for t in _divisors(heads) if t <= max_tp and (mla or _load_error(heads, kv, t) is None)
    ]


def _valid_dcp(heads: int, kv: int, tp: int, mla: bool, pcp: int = 1) -> list[int]:
    candidates = _divisors(tp) if pcp == 1 else sorted({1, pcp, tp * pcp})
    return [d for d in candidates if _first(heads, kv, tp, d, pcp, mla) is None]


# ---------------------------------------------------------------- public API


def divisors(n) -> list[int]:
    """Divisors of n, ascending."""
    return _divisors(_int("n", n))


def valid_tp_sizes(heads, kv_heads=None, max_tp=None, mla=False) -> list[int]:
    """TP sizes that pass the config check (heads % tp) and the load-time KV-head check."""
    heads, kv, mla = _model(heads, kv_heads, mla)
    cap = _opt_int("max_tp", max_tp)
    return _valid_tp(heads, kv, mla, LIMIT if cap is None else cap)


def suggest_tp(heads, kv_heads=None, mla=False, gpus_per_node=8) -> dict:
    """What to start instead of a TP size that fails the head checks, on one node of
    gpus_per_node GPUs: the largest valid TP size that fits it, and the pipeline parallel
    size that uses the rest of the node with it (1 when none is left)."""
    heads, kv, mla = _model(heads, kv_heads, mla)
    per_node = _int("gpus_per_node", gpus_per_node)
    tp = _valid_tp(heads, kv, mla, per_node)[-1]  # TP 1 always passes
    return {"tp": tp, "pp": per_node // tp, "gpus_per_node": per_node}


def first_error(
    heads,
    kv_heads=None,
    tp=1,
    dcp=1,
    pcp=1,
    mla=False,
    *,
    pp=1,
    dp=1,
    gpus_per_node=None,
    nnodes=1,
    node_rank=0,
    backend=None,
    dp_backend="mp",
) -> Result | None:
    """The first error vLLM raises for this configuration, or None.

    In vLLM's order: the --nnodes launch checks and the world-size check (skipped when
    gpus_per_node is None), then the parallel config, the model config and model load.
    heads=None means an unknown model: only the launch checks run.
    """
    launch = launch_inputs(tp, pp, pcp, dp, gpus_per_node, nnodes, node_rank, backend, dp_backend)
    dcp = _int("dcp", dcp)
    if heads is None:
        return _launch_error(launch) or _parallel_config_error(launch.tp, dcp, launch.pcp)
    heads, kv, mla = _model(heads, kv_heads, mla)
    return _launch_error(launch) or _first(heads, kv, launch.tp, dcp, launch.pcp, mla)


def launch_inputs(
    tp=1,
    pp=1,
    pcp=1,
    dp=1,
    gpus_per_node=None,
    nnodes=1,
    node_rank=0,
    backend=None,
    dp_backend="mp",
    dp_local=None,
) -> Launch:
    """The launch settings, checked: the errors name the input."""
    nnodes = _int("nnodes", nnodes)
    node_rank = _int("node_rank", node_rank, low=-LIMIT)
    if node_rank < 0 and nnodes == 1:  # vLLM's range check only runs with --nnodes above 1
        raise CalcInputError(f"node_rank must be at least 0, got {node_rank}")
    sizes = {name: _int(name, value) for name, value in (("tp", tp), ("pp", pp), ("pcp", pcp))}
    sizes["dp"] = _int("dp", dp)
    if sizes["tp"] * sizes["pp"] * sizes["pcp"] * sizes["dp"] > LIMIT:
        raise CalcInputError(f"dp x pp x tp x pcp must be at most {LIMIT} GPUs")
    return Launch(
        **sizes,
        gpus_per_node=_opt_int("gpus_per_node", gpus_per_node),
        nnodes=nnodes,
        node_rank=node_rank,
        backend=_choice("backend", backend, BACKENDS, optional=True),
        dp_backend=_choice("dp_backend", dp_backend, DP_BACKENDS),
        dp_local=_opt_int("dp_local", dp_local),
    )


def _choice(name: str, value, choices: tuple, optional: bool = False) -> str | None:
    text = value.strip().lower() if isinstance(value, str) else value
    if optional and text in (None, ""):
        return None
    if text not in choices:
        raise CalcInputError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return text


def _nodes_for(total: int, per_node: int) -> int:
    """The fewest nodes of per_node GPUs that hold total GPUs with --nnodes dividing it."""
    return next(k for k in _divisors(total) if k * per_node >= total)


def node_plan(launch: Launch, nodes=None) -> dict:
    """Where the workers of a launch go, and whether a machine of `nodes` nodes of
    launch.gpus_per_node GPUs holds them (fits: None when that is not known).

    vLLM has no check of its own for this beyond the world-size one: with more workers
    on a node than it has GPUs, a worker stops at start-up on an assertion that its
    local rank is out of bounds for the node's devices.
    """
    nodes = launch.nnodes if nodes is None else _int("nodes", nodes)
    per_node_gpus, total = launch.gpus_per_node, launch.total
    plan = {"world_size": launch.world_size, "gpus": total, "nnodes": launch.nnodes}
    if launch.backend in ("uni", "external_launcher"):
        return {**plan, "fits": None, "note": f"{launch.backend}: placement is not modelled"}
    if launch.backend == "ray":
        if per_node_gpus is None:
            return {**plan, "fits": None, "note": f"needs a Ray cluster with {total} GPUs"}
        have = per_node_gpus * nodes
        fits = total <= have
        return {**plan, "fits": fits, "note": f"Ray needs {total} GPUs in its cluster; {have} here"}
    per_node = -(-total // launch.nnodes)
    if launch.dp_local is not None:  # replicas placed by hand, node by node
        per_node = launch.world_size * launch.dp_local
    plan["per_node"] = per_node
    if per_node_gpus is None:
        note = f"GPUs per node not given: assumed each node has the {per_node} this needs"
        return {**plan, "fits": None, "note": note}
    if launch.nnodes > nodes:
        return {**plan, "fits": False, "note": f"needs {launch.nnodes} nodes; {nodes} here"}
    if per_node <= per_node_gpus:
        where = "one node" if launch.nnodes == 1 else f"each of {launch.nnodes} nodes"
        return {**plan, "fits": True, "note": f"uses {per_node} of {per_node_gpus} GPUs on {where}"}
    need = _nodes_for(total, per_node_gpus)
    note = (
        f"needs {per_node} GPUs on a node of {per_node_gpus} (workers past its last GPU stop "
        f"at start-up): start it on {need} nodes "
        f"(--nnodes {need}, --node-rank 0 to {need - 1}, --master-addr of node 0) "
        "or use --distributed-executor-backend ray on a Ray cluster"
    )
    return {**plan, "fits": False, "note": note}


def valid_dcp_sizes(heads, kv_heads, tp, mla=False, pcp=1) -> list[int]:
    """DCP sizes (1 included) with which this TP/PCP raises nothing; [] if TP itself fails."""
    heads, kv, mla = _model(heads, kv_heads, mla)
    return _valid_dcp(heads, kv, _int("tp", tp), mla, _int("pcp", pcp))


def _in_node(tp: int, per_node: int) -> bool:
    """A TP group that never straddles a node boundary."""
    return tp <= per_node and per_node % tp == 0


def _layout_key(entry: dict, per_node: int, layers: int | None):
    """Advice order: fewest replicas (DP only for what is left), TP inside a node,
    PP stages that split the layers evenly, then more TP rather than PP."""
    uneven = layers is not None and layers % entry["pp"] != 0
    return (entry["dp"], not _in_node(entry["tp"], per_node), uneven, -entry["tp"])


def _reason(tp, pp, dp, gpus, per_node, layers, best_tp) -> str:
    width = f"{tp * pp} GPU" + ("s" if tp * pp > 1 else "")
    copies = f"DP {dp}: {dp} copies of {width} each" if dp > 1 else f"1 copy on {width}"
    parts = [copies]
    if tp == 1:
        parts.append("no TP")
    elif _in_node(tp, per_node):
        parts.append(f"TP {tp} inside one node")
    else:
        parts.append(f"TP {tp} crosses nodes (needs a fast inter-node link)")
    if pp > 1:
        if layers is None:
            parts.append(f"PP {pp} splits the layers")
        elif layers % pp == 0:
            parts.append(f"PP {pp}: {layers // pp} of {layers} layers per stage")
        else:
            parts.append(f"PP {pp}: uneven stages for {layers} layers")
        if best_tp > tp:
            parts.append(f"TP {best_tp} could replace some PP")
    return "; ".join(parts)


def layouts(
    heads, kv_heads, gpus, layers=None, mla=False, gpus_per_node=8, limit=None
) -> list[dict]:
    """TP x PP x DP arrangements using exactly `gpus` GPUs, best advice first.

    Memory is unknown, so the order assumes the model needs as many GPUs per copy
    as possible; each entry says why it sits where it does.
    """
    heads, kv, mla = _model(heads, kv_heads, mla)
    gpus = _int("gpus", gpus)
    layers = _opt_int("layers", layers)
    per_node = _int("gpus_per_node", gpus_per_node)
    limit = _opt_int("limit", limit)
    tps = [t for t in _valid_tp(heads, kv, mla, gpus) if gpus % t == 0]
    entries = []
    for tp in tps:
        dcp = _valid_dcp(heads, kv, tp, mla)
        for pp in _divisors(gpus // tp):
            if layers is not None and pp > layers:
                break
            entries.append({"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "dcp": list(dcp)})
    entries.sort(key=lambda e: _layout_key(e, per_node, layers))
    entries = entries[:limit] if limit else entries
    for e in entries:
        width = e["tp"] * e["pp"]
        fits = [t for t in tps if width % t == 0 and _in_node(t, per_node)]
        best = max(fits, default=e["tp"])
        e["reason"] = _reason(e["tp"], e["pp"], e["dp"], gpus, per_node, layers, best)
    return entries


# ---------------------------------------------------------------- MoRIIO


def _moriio_inputs(prefill_tp, decode_tp, kv_heads, mode, mla):
    mode_name = str(mode).strip().lower() if isinstance(mode, str) else mode
    if mode_name not in ("read", "write"):
        raise CalcInputError(f"mode must be 'read' or 'write', got {mode!r}")
    return (
        _int("prefill_tp", prefill_tp),
        _int("decode_tp", decode_tp),
        # 0 is allowed: some models report no KV heads, which MoRIIO rejects.
        _int("kv_heads", kv_heads, low=0),
        mode_name,
        _bool("mla", mla),
    )


def _moriio_read_error(local: int, remote: int, kv: int, mla: bool) -> Result | None:
    """READ mode runs on the decode rank (local) reading from prefill (remote)."""
    # Rank mapping (handshake, then the read holders): one size a multiple of the other.
    if remote > local and remote % local:
        return _raise(
            MORIIO_REMOTE_MULTIPLE, "transfer", remote_tp_size=remote, local_tp_size=local
        )
    if remote < local and local % remote:
        return _raise(MORIIO_LOCAL_MULTIPLE, "transfer", local_tp_size=local, remote_tp_size=remote)
    # Block offsets: heterogeneous TP copies whole blocks, so KV heads must be replicated.
    if not mla and local != remote:
        if kv <= 0:
            return _raise(MORIIO_POSITIVE, "transfer")
        if min(local, remote) < kv:
            return _raise(
                MORIIO_REPLICATED,
                "transfer",
                total_num_kv_heads=kv,
                local_tp_size=local,
                remote_tp_size=remote,
            )
    # Release ACKs: the prefill (producer) rank counts one per decode rank it feeds.
    if local > remote and local % remote:
        return _raise(MORIIO_ACKS, "transfer", consumer_tp_size=local, producer_tp_size=remote)
    return None


def _moriio_write_error(producer: int, consumer: int, kv: int, mla: bool) -> Result | None:
    """WRITE mode: each prefill (producer) rank pushes its KV shard into decode ranks."""
    if max(producer, consumer) % min(producer, consumer):
        return _raise(
            MORIIO_WRITE_MULTIPLE, "transfer", producer_tp_size=producer, consumer_tp_size=consumer
        )
    if mla or producer == consumer:
        return None
    if kv <= 0:
        return _raise(MORIIO_WRITE_KV_POSITIVE, "transfer")
    for tp_size in (producer, consumer):
        if (tp_size <= kv and kv % tp_size) or (tp_size > kv and tp_size % kv):
            return _raise(MORIIO_WRITE_SHARD, "transfer", total_num_kv_heads=kv, tp_size=tp_size)
    return None


def moriio_first_error(prefill_tp, decode_tp, kv_heads, mode="read", mla=False) -> Result | None:
    """The first error MoRIIO disaggregated prefill/decode raises for these TP sizes."""
    prefill, decode, kv, mode, mla = _moriio_inputs(prefill_tp, decode_tp, kv_heads, mode, mla)
    if mode == "read":
        return _moriio_read_error(decode, prefill, kv, mla)
    return _moriio_write_error(prefill, decode, kv, mla)


def moriio_expected_acks(prefill_tp, decode_tp, mode="read") -> int:
    """Release ACKs a prefill rank waits for per transfer (WRITE sends exactly one)."""
    prefill, decode, _, mode, _ = _moriio_inputs(prefill_tp, decode_tp, 1, mode, False)
    if mode == "write" or decode <= prefill:
        return 1
    return decode // prefill


def moriio(prefill_tp, decode_tp, kv_heads, mode="read", mla=False) -> dict:
    """Everything the MoRIIO widget shows, in one call."""
    error = moriio_first_error(prefill_tp, decode_tp, kv_heads, mode, mla)
    return {
        "first_error": error and error.to_dict(),
        "expected_acks": None if error else moriio_expected_acks(prefill_tp, decode_tp, mode),
    }


# ---------------------------------------------------------------- command lines

# vLLM 0.33.0's flags (engine/arg_utils.py add_cli_args) -> first_error's inputs.
FLAGS = {
    "--tensor-parallel-size": "tp",
    "-tp": "tp",
    "--pipeline-parallel-size": "pp",
    "-pp": "pp",
    "--data-parallel-size": "dp",
    "-dp": "dp",
    "--decode-context-parallel-size": "dcp",
    "-dcp": "dcp",
    "--prefill-context-parallel-size": "pcp",
    "-pcp": "pcp",
    "--nnodes": "nnodes",
    "-n": "nnodes",
    "--node-rank": "node_rank",
    "-r": "node_rank",
    "--distributed-executor-backend": "backend",
    "--data-parallel-backend": "dp_backend",
    "-dpb": "dp_backend",
    "--data-parallel-size-local": "dp_local",
    "-dpl": "dp_local",
    "--model": "model",
}
# Programs that start vLLM's engine from the command line, and where their model is.
_ENTRYPOINTS = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")


def _launcher(words: list[str]) -> int | None:
    """Index of the first argument after `vllm serve` / `python -m <entrypoint>`."""
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == "vllm" and words[i + 1 : i + 2] == ["serve"]:
            return i + 2
        if word == "-m" and words[i + 1 : i + 2] and words[i + 1] in _ENTRYPOINTS:
            return i + 2
    return None


def read_command(words: list[str]) -> dict | None:
    """The parallel settings of one shell command (already split into words), or None
    when it does not start vLLM. Returns {"model", "settings", "visible_gpus"}:
    settings are launch_inputs' keywords and dcp, as written (strings), visible_gpus the
    count CUDA_VISIBLE_DEVICES leaves vLLM, when the command sets it."""
    start = _launcher(words)
    if start is None:
        return None
    visible = None
    for word in words[: start - 2]:
        name, eq, value = word.partition("=")
        if eq and name == "CUDA_VISIBLE_DEVICES":
            visible = len([v for v in value.split(",") if v.strip()])
    model, settings = None, {}
    args = words[start:]
    i = 0
    while i < len(args):
        word = args[i]
        # vLLM's parser reads --a_b as --a-b (the name only, up to a dot).
        flag, eq, value = word.partition("=")
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")
        if flag in FLAGS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            settings[FLAGS[flag]] = value
        elif i == 0 and not word.startswith("-"):
            model = word  # `vllm serve <model>`
        i += 1
    model = settings.pop("model", model)
    return {"model": model, "settings": settings, "visible_gpus": visible}


# ---------------------------------------------------------------- browser entry


def summary(
    heads,
    kv_heads=None,
    tp=None,
    dcp=1,
    pcp=1,
    mla=False,
    gpus=None,
    layers=None,
    gpus_per_node=None,
    limit=20,
    pp=1,
    dp=1,
    nnodes=1,
    node_rank=0,
    backend=None,
    dp_backend="mp",
) -> dict:
    """Everything the parallel-size widget shows, in one round-trip.

    gpus_per_node None (or empty) skips the node check; layouts then assume 8-GPU nodes.
    """
    out = {"valid_tp_sizes": valid_tp_sizes(heads, kv_heads, mla=mla)}
    if _opt_int("tp", tp) is not None:
        node = {
            "pp": pp,
            "dp": dp,
            "gpus_per_node": gpus_per_node,
            "nnodes": nnodes,
            "node_rank": node_rank,
            "backend": backend,
            "dp_backend": dp_backend,
        }
        error = first_error(heads, kv_heads, tp, dcp, pcp, mla, **node)
        out["first_error"] = error and error.to_dict()
        out["valid_dcp_sizes"] = valid_dcp_sizes(heads, kv_heads, tp, mla, pcp)
        out["node"] = node_plan(launch_inputs(tp=tp, pcp=pcp, **node))
        if _int("tp", tp) not in out["valid_tp_sizes"]:
            per_node = _opt_int("gpus_per_node", gpus_per_node)
            advice: dict = suggest_tp(heads, kv_heads, mla, per_node or 8)
            out["suggestion"] = {**advice, "assumed": per_node is None}  # 8 GPUs, not given
    if _opt_int("gpus", gpus) is not None:
        per_node = _opt_int("gpus_per_node", gpus_per_node) or 8
        every = layouts(heads, kv_heads, gpus, layers, mla, per_node)
        out["layouts_total"] = len(every)
        out["layouts"] = every[: _int("limit", limit)]
    return out


_OPS = {
    "summary": summary,
    "first_error": first_error,
    "valid_tp_sizes": valid_tp_sizes,
    "suggest_tp": suggest_tp,
    "valid_dcp_sizes": valid_dcp_sizes,
    "layouts": layouts,
    "divisors": divisors,
    "moriio": moriio,
    "moriio_first_error": moriio_first_error,
}


def run(request: dict) -> dict:
    """Worker entry: {"op": name, **kwargs} -> {"result": ...} or {"error": message}."""
    return protocol.answer(_OPS, request)

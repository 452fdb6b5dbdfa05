"""SGLang's parallel-size rules, as SGLang 0.5.23 applies them, per model: each model's
attention layer splits its heads over a TP size of its own choosing.

The one source of truth for SGLang's calculator: the build uses it for the "Your case"
tables, and the browser runs this very file in a Pyodide Web Worker. So: standard library
only, no package imports, nothing computed at import time.

In SGLang's order (python/sglang/srt/, v0.5.23):
1. argument resolution (arg_groups/parallel_hook.py): the deprecated `--enable-dp-attention`
   turns `--dp-size N` into `--attn-dp-size N`; replicas (`--dp-size`) and attention DP
   together are refused; with attention DP, `--tp-size` must be a multiple of
   `--attn-dp-size` (a bare assert);
2. `check_server_args` (arg_groups/validation_hook.py): tp_size * pp_size must be a multiple
   of `--nnodes`; data-parallel replicas (`--dp-size` above 1) run on one node only;
3. publication of the parallel layout in every worker (runtime_context.py): the MoE widths
   are floor divisions, `moe_tp_size = tp_size // ep_size`, so an `--ep-size` that does not
   divide `--tp-size` (one above it gives a width of 0) leaves `tp_size != moe_ep_size *
   moe_dp_size * moe_tp_size`, which the first override of the published layout checks
   (`override_permanently`, before the ranks are placed);
4. model load, in every worker: the attention layer splits the query heads over a TP size,
   the attention TP size `tp_size // attn_dp_size` (Qwen3, DeepSeek and their kin) or the
   full `--tp-size` (Llama, Qwen2, Mixtral, Gemma and most others), and either splits the KV
   heads (as many or more KV heads than ranks) or copies them (fewer): bare asserts in the
   layer, then the same checks with a message in its QKV projection (`divide`); which of
   these a layer makes is `attention` (below); a MoE layer splits its routed experts over
   `--ep-size` (a bare assert).

Every error is reported as SGLang raises it: the record id ("" for a bare assert, which
prints no message and so has no record), the exception, the stage, the message filled in
exactly as SGLang formats it, and the values of its placeholders.
"""

from collections.abc import Callable
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


def _bare(check: str, stage: str, size: str = "", **values) -> Result:
    """size: the code's name of the TP size an attention layer's assert divides by."""
    return Result(BARE, "AssertionError", stage, ASSERTS[check].format(size=size), values)


# Record ids: the first 16 hex digits of sha256("sglang\0<exception>\0<template>").
DP_WITH_ATTN_DP = "a814e603a3e18a65"
TP_NNODES = "2f86d4b16adf344f"
MOE_TOPOLOGY = "5f64e26cd33678d2"
DP_NODES = "3d3c4ad95cb75415"
DIVIDE = "a4198fbbff189b22"
BARE = ""  # a bare assert: no message, no record

MESSAGES = {
    DP_WITH_ATTN_DP: (
        "ValueError",
        "--dp-size {dp_size} with --attn-dp-size {attn_dp_size}: data-parallel replicas "
        "combined with attention data parallelism are not supported.",
    ),
    TP_NNODES: ("AssertionError", "tp_size must be divisible by number of nodes"),
    DP_NODES: (
        "AssertionError",
        "multi-node data-parallel replicas are not supported; use attention DP "
        "(--attn-dp-size) across nodes",
    ),
    DIVIDE: ("AssertionError", "{numerator} is not divisible by {denominator}"),
    MOE_TOPOLOGY: (
        "ValueError",
        "parallel topology is inconsistent (set by {source}):\n"
        "tp_size == moe_ep_size * moe_dp_size * moe_tp_size\n"
        "  {tp_size} != {m_ep} * {m_dp} * {m_tp} (= {m_ep_times_m_dp_times_m_tp})",
    ),
}
# What each bare assert checks, in the words of its code.
ASSERTS = {
    "tp_attn_dp": "assert cfg.tp_size % cfg.attn_dp_size == 0  (arg_groups/parallel_hook.py)",
    "heads": "assert self.total_num_heads % {size} == 0  (the model's attention layer)",
    "kv_split": "assert self.total_num_kv_heads % {size} == 0  (the attention layer)",
    "kv_copy": "assert {size} % self.total_num_kv_heads == 0  (the attention layer)",
    "experts": "assert self._num_global_routed % storage_ep_size == 0  (the fused MoE layer)",
}

# What a model's attention layer checks at load, as "<size>:<checks>": the size is "attn_tp"
# (tp_size // attn_dp_size) or "tp" (the full --tp-size); the checks are h (it asserts its
# heads divide), k (it asserts its KV heads split or copy evenly), p (its QKV projection
# checks both again, with a message). splits.json holds each architecture's, read from
# SGLang's model files by splits.py.
ATTENTION_SIZES = ("attn_tp", "tp")
ASSUMED = "tp:hkp"  # an architecture not known: Llama's layer, the kind most models use

# Calculators a page may show -> (run op, its inputs).
_SIZES = ("tp", "dp", "attn_dp", "dp_attention", "ep", "experts", "pp", "nnodes")
CALCULATORS = {  # gpus_per_node: the node the advice fits
    "tp_sizes": ("summary", ("architecture", "heads", "kv_heads", *_SIZES, "gpus_per_node")),
}
FLAGS = {  # the command-line option of each input, as SGLang spells it
    "tp": "--tp-size",
    "dp": "--dp-size",
    "attn_dp": "--attn-dp-size",
    "dp_attention": "--enable-dp-attention",
    "ep": "--ep-size",
    "pp": "--pp-size",
    "nnodes": "--nnodes",
}


# ---------------------------------------------------------------- input checks


@dataclass(frozen=True)
class Launch:
    """The sizes of a launch, after the deprecated --enable-dp-attention is resolved."""

    tp: int
    dp: int
    attn_dp: int
    ep: int
    pp: int
    nnodes: int


def launch_inputs(tp=1, dp=1, attn_dp=1, dp_attention=False, ep=1, pp=1, nnodes=1) -> Launch:
    """The sizes as resolution leaves them: `--dp-size N --enable-dp-attention` is
    `--attn-dp-size N` (when --attn-dp-size is not given too)."""
    tp, dp, attn_dp = _int("tp", tp), _int("dp", dp), _int("attn_dp", attn_dp)
    if _bool("dp_attention", dp_attention) and attn_dp == 1:
        attn_dp, dp = dp, 1
    return Launch(tp, dp, attn_dp, _int("ep", ep), _int("pp", pp), _int("nnodes", nnodes))


# ---------------------------------------------------------------- the rules


def _config_error(launch: Launch) -> Result | None:
    """Argument resolution, then check_server_args."""
    if launch.attn_dp > 1 and launch.dp > 1:
        return _raise(DP_WITH_ATTN_DP, "config", dp_size=launch.dp, attn_dp_size=launch.attn_dp)
    if launch.attn_dp > 1 and launch.tp % launch.attn_dp:
        return _bare("tp_attn_dp", "config", tp_size=launch.tp, attn_dp_size=launch.attn_dp)
    if (launch.tp * launch.pp) % launch.nnodes:
        return _raise(TP_NNODES, "config")
    if launch.dp > 1 and launch.nnodes != 1:
        return _raise(DP_NODES, "config")
    return None


def _startup_error(launch: Launch) -> Result | None:
    """Publication of the layout: MoE widths by floor division, then their product."""
    moe_tp = launch.tp // launch.ep
    if launch.ep * moe_tp != launch.tp:
        values = {"source": "override_permanently", "tp_size": launch.tp, "m_ep": launch.ep}
        values["m_dp"] = 1
        values |= {"m_tp": moe_tp, "m_ep_times_m_dp_times_m_tp": launch.ep * moe_tp}
        return _raise(MOE_TOPOLOGY, "startup", **values)
    return None


def _attention(attention) -> tuple[str, str]:
    """(size, checks) of an attention code; None is the assumed one."""
    if attention is None or (isinstance(attention, str) and not attention.strip()):
        attention = ASSUMED
    size, _, checks = str(attention).strip().partition(":")
    if size not in ATTENTION_SIZES or not checks or set(checks) - set("hkp"):
        raise CalcInputError(f"attention must be like {ASSUMED!r}, got {attention!r}")
    return size, checks


def _attention_error(heads: int, kv: int, size: int, checks: str, name: str) -> Result | None:
    """The attention layer's checks at load, on the TP size it splits over: its own bare
    asserts, then its QKV projection's divide()."""
    values = {"total_num_heads": heads, "total_num_kv_heads": kv, name: size}
    if "h" in checks and heads % size:
        return _bare("heads", "load", name, **values)
    if "k" in checks and kv >= size and kv % size:
        return _bare("kv_split", "load", name, **values)
    if "k" in checks and kv < size and size % kv:
        return _bare("kv_copy", "load", name, **values)
    if "p" not in checks:
        return None
    # divide(numerator, denominator): heads, then the KV heads split (size < kv) or copied
    for numerator, denominator in ((heads, size), (kv, size) if size < kv else (size, kv)):
        if numerator % denominator:
            return _raise(DIVIDE, "load", numerator=numerator, denominator=denominator)
    return None


def _split_size(launch: Launch, size: str) -> int:
    return launch.tp // launch.attn_dp if size == "attn_tp" else launch.tp


def _load_error(
    heads: int, kv: int, experts: int | None, launch: Launch, attention: tuple[str, str]
) -> Result | None:
    size, checks = attention
    error = _attention_error(heads, kv, _split_size(launch, size), checks, f"{size}_size")
    if error is None and experts is not None and experts % launch.ep:
        error = _bare("experts", "load", num_experts=experts, ep_size=launch.ep)
    return error


# ---------------------------------------------------------------- public API


def _model(heads, kv_heads) -> tuple[int, int]:
    """Heads and KV heads (None: as many as heads)."""
    heads = _int("heads", heads)
    kv = _opt_int("kv_heads", kv_heads)
    return heads, heads if kv is None else kv


def divisors(n) -> list[int]:
    """Divisors of n, ascending."""
    return _divisors(_int("n", n))


def first_error(
    heads,
    kv_heads=None,
    tp=1,
    dp=1,
    attn_dp=1,
    dp_attention=False,
    ep=1,
    experts=None,
    pp=1,
    nnodes=1,
    attention=None,
) -> Result | None:
    """The first error SGLang raises for this configuration, or None. heads=None means an
    unknown model: only the checks before model load run. attention: the model's attention
    layer (see ATTENTION_SIZES), None for the assumed one."""
    launch = launch_inputs(tp, dp, attn_dp, dp_attention, ep, pp, nnodes)
    experts = _opt_int("experts", experts)
    layer = _attention(attention)
    error = _config_error(launch) or _startup_error(launch)
    if error or heads is None:
        return error
    heads, kv = _model(heads, kv_heads)
    return _load_error(heads, kv, experts, launch, layer)


def valid_tp_sizes(heads, kv_heads=None, max_tp=None, attn_dp=1, attention=None) -> list[int]:
    """TP sizes that pass the attention layer's load-time checks with --attn-dp-size attn_dp
    (a TP size must then be a multiple of it). Over the attention TP size (tp // attn_dp)
    they are attn_dp times a size that passes; over the full TP size, the multiples of
    attn_dp that pass. A layer that checks only its KV heads passes any multiple of them:
    listed up to the head count."""
    heads, kv = _model(heads, kv_heads)
    attn_dp = _int("attn_dp", attn_dp)
    cap = _opt_int("max_tp", max_tp)
    size, checks = _attention(attention)
    if set(checks) & set("hp"):
        candidates = _divisors(heads)
    else:
        candidates = sorted(set(_divisors(kv)) | set(range(kv, heads + 1, kv)))
    fits = [t for t in candidates if _attention_error(heads, kv, t, checks, "tp_size") is None]
    if size == "attn_tp":
        sizes = [attn_dp * t for t in fits]
    else:
        sizes = [t for t in fits if t % attn_dp == 0]
    return [t for t in sizes if cap is None or t <= cap]


def suggest_tp(heads, kv_heads=None, gpus_per_node=8, attention=None) -> dict:
    """What to start instead of a TP size that fails the head checks, on one node of
    gpus_per_node GPUs: the largest valid --tp-size that fits it, and the --pp-size that
    uses the rest of the node with it (1 when none is left)."""
    per_node = _int("gpus_per_node", gpus_per_node)
    tp = valid_tp_sizes(heads, kv_heads, per_node, attention=attention)[-1]  # TP 1 passes
    return {"tp": tp, "pp": per_node // tp, "gpus_per_node": per_node}


def summary(
    heads,
    kv_heads=None,
    tp=None,
    dp=1,
    attn_dp=1,
    dp_attention=False,
    ep=1,
    experts=None,
    pp=1,
    nnodes=1,
    gpus_per_node=None,
    attention=None,
) -> dict:
    """Everything the widget shows, in one round-trip: the attention layer the answer
    follows (and whether it was assumed), the valid TP sizes, and for a given TP size the
    first error, and what to start instead on one node when it fails."""
    launch = launch_inputs(_opt_int("tp", tp) or 1, dp, attn_dp, dp_attention, ep, pp, nnodes)
    size, checks = _attention(attention)
    assumed = attention is None or not str(attention).strip()
    out: dict = {"attention": {"code": f"{size}:{checks}", "assumed": assumed}}
    out["valid_tp_sizes"] = valid_tp_sizes(heads, kv_heads, None, launch.attn_dp, attention)
    if _opt_int("tp", tp) is None:
        return out
    sizes = (tp, dp, attn_dp, dp_attention, ep, experts, pp, nnodes)
    error = first_error(heads, kv_heads, *sizes, attention=attention)
    out["first_error"] = error and error.to_dict()
    # At load, an error is the attention layer's or the MoE layer's (num_experts)
    if error and error.stage == "load" and "num_experts" not in error.values:
        per_node = _opt_int("gpus_per_node", gpus_per_node)
        advice = suggest_tp(heads, kv_heads, per_node or 8, attention)
        out["suggestion"] = {**advice, "assumed": per_node is None}
    return out


_OPS: dict[str, Callable[..., object]] = {
    "summary": summary,
    "first_error": first_error,
    "valid_tp_sizes": valid_tp_sizes,
    "suggest_tp": suggest_tp,
    "divisors": divisors,
}


def run(request: dict) -> dict:
    """Worker entry: {"op": name, **kwargs} -> {"result": ...} or {"error": message}."""
    return protocol.answer(_OPS, request)

"""errorkb's calculators through their public interfaces only (this oracle's authors have
not read them): `errorkb calc ... --json` for vLLM's rules (run in-process through
errorkb.cli.main, the command's own entry), `errorkb.projects.sglang.calc.first_error`
for SGLang's and `errorkb.projects.vllm.memory.estimate` for the memory estimate (their
public functions, called by signature)."""

from __future__ import annotations

import contextlib
import inspect
import io
import json


def vllm_calc(p: dict) -> dict:
    from errorkb import cli

    argv = ["calc", "--heads", str(p["heads"]), "--kv-heads", str(p.get("kv_heads") or p["heads"]),
            "--tp", str(p["tp"])]
    for key, flag in (("pp", "--pp"), ("dp", "--dp"), ("dcp", "--dcp"), ("pcp", "--pcp")):
        if p.get(key, 1) != 1:
            argv += [flag, str(p[key])]
    if p.get("mla"):
        argv.append("--mla")
    if p.get("gpus_per_node"):
        argv += ["--gpus-per-node", str(p["gpus_per_node"])]
    if p.get("nnodes", 1) != 1:
        argv += ["--nnodes", str(p["nnodes"])]
    if p.get("node_rank"):
        argv += ["--node-rank", str(p["node_rank"])]
    if p.get("backend"):
        argv += ["--backend", p["backend"]]
    argv.append("--json")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    try:
        answer = json.loads(buf.getvalue())
    except ValueError:
        return {"outcome": "error", "exception": "CalcInputError",
                "message": buf.getvalue().strip(), "id": f"exit {code}"}
    err = answer.get("first_error")
    if not err:
        return {"outcome": "ok"}
    return {"outcome": "error", "exception": err.get("exception"), "message": err.get("message"),
            "id": err.get("id", "")}


def sglang_calc(p: dict, family: str) -> dict:
    """first_error(...) for the point; the model family goes in by whichever parameter
    the calculator has for it (another engineer is adding one), else not at all."""
    from errorkb.projects.sglang import calc

    params = inspect.signature(calc.first_error).parameters
    kwargs = dict(heads=p["heads"], kv_heads=p["kv_heads"], tp=p["tp"], dp=p.get("dp", 1),
                  attn_dp=p.get("attn_dp", 1), ep=p.get("ep", 1), pp=p.get("pp", 1),
                  nnodes=p.get("nnodes", 1))
    if p.get("experts") is not None:
        kwargs["experts"] = p["experts"]
    arch = {"llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM"}[family]
    if "attention" in params:  # the architecture's attention layer, as the widget passes it
        from errorkb.projects.sglang import splits

        kwargs["attention"] = splits.load()["architectures"][arch]["attention"]
    kwargs = {k: v for k, v in kwargs.items() if k in params}
    try:
        r = calc.first_error(**kwargs)
    except Exception as exc:  # noqa: BLE001 - an input the calculator refuses
        return {"outcome": "error", "exception": type(exc).__name__, "message": str(exc),
                "id": "input"}
    if r is None:
        return {"outcome": "ok"}
    d = dict(vars(r)) if hasattr(r, "__dict__") else {
        k: getattr(r, k) for k in getattr(r, "__slots__", ())}
    return {"outcome": "error", "exception": d.get("exception"), "message": d.get("message") or "",
            "id": d.get("id") or d.get("record") or ""}


def sglang_accepts_family() -> bool:
    from errorkb.projects.sglang import calc

    params = inspect.signature(calc.first_error).parameters
    return any(n in params for n in ("architecture", "arch", "model_arch", "family",
                                     "model_family", "attention", "split"))


def memory_calc(p: dict) -> dict:
    from errorkb.projects.vllm import memory

    return memory.estimate(**p)

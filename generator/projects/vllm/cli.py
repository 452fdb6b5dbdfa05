"""`errorkb calc`: vLLM's parallel-size rules on the command line."""

import json
import sys

from errorkb.projects.vllm import calc


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def add_calc(commands) -> None:
    """The `calc` subcommand."""
    p = commands.add_parser("calc", help=HELP)
    p.add_argument("--model", help="a preset key from content/models.yaml")
    p.add_argument("--heads", type=int, help="num_attention_heads")
    p.add_argument("--kv-heads", type=int, help="num_key_value_heads (default: heads)")
    p.add_argument("--layers", type=int, help="num_hidden_layers (bounds pipeline parallelism)")
    p.add_argument("--mla", action="store_true", help="multi-head latent attention model")
    p.add_argument("--tp", type=int, help="--tensor-parallel-size to check")
    p.add_argument("--dcp", type=int, default=1, help="--decode-context-parallel-size")
    p.add_argument("--pcp", type=int, default=1, help="--prefill-context-parallel-size")
    p.add_argument("--pp", type=int, default=1, help="--pipeline-parallel-size")
    p.add_argument("--dp", type=int, default=1, help="--data-parallel-size")
    p.add_argument(
        "--gpus-per-node",
        type=int,
        help="GPUs vLLM sees on each node; checks the world size (default: not checked)",
    )
    p.add_argument("--nnodes", type=int, default=1, help="vLLM's --nnodes")
    p.add_argument("--node-rank", type=int, default=0, help="vLLM's --node-rank")
    p.add_argument(
        "--backend", choices=calc.BACKENDS, help="vLLM's --distributed-executor-backend"
    )
    p.add_argument("--gpus", type=int, help="suggest TP x PP x DP layouts for this many GPUs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_calc)


HELP = "vLLM parallel-size rules: first error, valid sizes, layouts"


def cmd_calc(args) -> int:
    # Here, not at the top: every command builds the parser, and `match` must start fast.
    from errorkb.content.model import ContentError

    try:
        model = _calc_model(args)
        answer = calc.summary(
            model["heads"],
            model.get("kv_heads"),
            args.tp,
            args.dcp,
            args.pcp,
            model.get("mla", False),
            args.gpus,
            model.get("layers"),
            gpus_per_node=args.gpus_per_node,
            pp=args.pp,
            dp=args.dp,
            nnodes=args.nnodes,
            node_rank=args.node_rank,
            backend=args.backend,
        )
        if args.json:
            print(json.dumps({"model": model, **answer}, indent=1, sort_keys=True))
        else:
            print(_calc_text(model, args, answer))
    except (calc.CalcInputError, LookupError) as exc:
        _log(f"error: {exc}")
        return 2
    except ContentError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 1
    fails = answer.get("first_error") or answer.get("node", {}).get("fits") is False
    return 1 if fails else 0


def _calc_model(args) -> dict:
    """The model's head counts: a preset from content/models.yaml, or the flags."""
    if args.model:
        from errorkb.projects.vllm import presets

        models = {m["key"]: m for m in presets.load_models(args.root)}
        if args.model not in models:
            raise LookupError(f"unknown model {args.model!r}; presets: {', '.join(models)}")
        return models[args.model]
    if args.heads is None:
        raise LookupError("give --heads (and --kv-heads for GQA/MQA) or --model")
    return {"heads": args.heads, "kv_heads": args.kv_heads, "layers": args.layers, "mla": args.mla}


def _calc_text(model: dict, args, answer: dict) -> str:
    from errorkb import urls
    from errorkb.content.load import load_site

    lines = [
        f"{model.get('name', 'model')}: {model['heads']} attention heads, "
        f"{model.get('kv_heads') or model['heads']} KV heads"
        + (", MLA" if model.get("mla") else "")
    ]
    if args.tp is not None:
        error = answer["first_error"]
        if error:
            base = load_site(args.root)["base_url"]
            lines += [
                f"ERROR ({error['stage']}): {error['exception']}: {error['message']}",
                f"  see {urls.absolute(base, urls.error(error['id']))}",
            ]
        else:
            sizes = f"TP {args.tp}, PP {args.pp}, DP {args.dp}, DCP {args.dcp}, PCP {args.pcp}"
            lines.append(f"OK: {sizes} passes every check")
        node = answer["node"]
        verdict = {True: "fits", False: "DOES NOT FIT", None: "node"}[node["fits"]]
        lines.append(f"{verdict}: {node['note']}")
        dcp_sizes = ", ".join(map(str, answer["valid_dcp_sizes"])) or "none at this TP size"
        lines.append(f"valid DCP sizes: {dcp_sizes}")
    lines.append("valid TP sizes: " + ", ".join(map(str, answer["valid_tp_sizes"])))
    if args.gpus is not None:
        lines.append(f"layouts for {args.gpus} GPUs ({answer['layouts_total']} in all):")
        for lay in answer["layouts"]:
            dcp = ", ".join(map(str, lay["dcp"]))
            lines.append(
                f"  TP {lay['tp']} x PP {lay['pp']} x DP {lay['dp']} (DCP {dcp}): {lay['reason']}"
            )
    return "\n".join(lines)

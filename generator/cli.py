"""The `errorkb` command."""

import argparse
import json
import os
import sys
from pathlib import Path

from generator.content.load import ContentError
from generator.projects.vllm.calc import BACKENDS


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _report(exc: ContentError) -> int:
    for problem in exc.problems:
        print(problem, file=sys.stderr)
    _log(f"{len(exc.problems)} problem(s) found; nothing was written")
    return 1


def cmd_check(args) -> int:
    from generator.content.load import load_content

    try:
        content = load_content(args.root)
    except ContentError as exc:
        return _report(exc)
    _log(
        f"ok: {len(content.records)} records, {len(content.guides)} guides, "
        f"{len(content.projects)} projects, {len(content.models)} models"
    )
    return 0


def cmd_build(args) -> int:
    from generator.site.build import BuildError, build

    try:
        build(args.root, args.out, log=_log)
    except ContentError as exc:
        return _report(exc)
    except BuildError as exc:
        _log(f"error: {exc}")
        return 1
    return 0


def cmd_serve(args) -> int:
    from generator.serve import serve
    from generator.site.build import BuildError, build

    out = (args.out or args.root / "site").resolve()
    failure = None
    try:
        build(args.root, out, log=_log)
    except BuildError as exc:
        _log(f"error: {exc}")
        return 1
    except ContentError as exc:
        _report(exc)
        if not out.exists():
            return 1
        _log("serving the last good site; fix the problems above and it rebuilds")
        failure = exc
    serve(args.root.resolve(), out, args.host, args.port, _log, failure)
    return 0


def cmd_new(args) -> int:
    from generator.sources.scaffold import scaffold

    try:
        path = scaffold(args.root, args.project, args.exception, args.message)
    except FileExistsError as exc:
        _log(f"error: {exc}")
        return 1
    print(path)
    return 0


def cmd_calc(args) -> int:
    import json

    from generator.projects.vllm import calc

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
        return _report(exc)
    fails = answer.get("first_error") or answer.get("node", {}).get("fits") is False
    return 1 if fails else 0


def _calc_model(args) -> dict:
    """The model's head counts: a preset from content/models.yaml, or the flags."""
    if args.model:
        from generator.content.load import load_models

        models = {m["key"]: m for m in load_models(args.root)}
        if args.model not in models:
            raise LookupError(f"unknown model {args.model!r}; presets: {', '.join(models)}")
        return models[args.model]
    if args.heads is None:
        raise LookupError("give --heads (and --kv-heads for GQA/MQA) or --model")
    return {"heads": args.heads, "kv_heads": args.kv_heads, "layers": args.layers, "mla": args.mla}


def _calc_text(model: dict, args, answer: dict) -> str:
    from generator.content.load import load_site
    from generator.site import urls

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


def cmd_match(args) -> int:
    from generator.search import engine as search

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        index = search.open_index(args.root, args.site)
    except ContentError as exc:
        return _report(exc)
    except FileNotFoundError:
        _log(f"error: no search index in {args.site}; run errorkb build first")
        return 1
    results = search.search(index, text)
    if args.json:
        print(json.dumps([r.to_json() for r in results], ensure_ascii=False, indent=2))
    for rank, result in enumerate([] if args.json else results, 1):
        kind = ("exact, tied" if result.tied else "exact") if result.exact else "similar"
        print(f"{rank}. {result.title}  [{kind}]")
        print(f"   {result.exception} · {result.project} · {result.id}")
        if result.tied:
            print("   tied: another match fits as well (the same text); source order ranks them")
        for name, value in result.values.items():
            print(f"   {name} = {value}")
        print(f"   {result.url}")
    if not results:
        _log("no matching error")
    return 0 if results else 1


def _scan_options(args) -> dict:
    """How extract and verify-sources read a source tree (options both take)."""
    names = ("include_vendored", "asserts", "exclude", "prefix", "jobs")
    return {name: getattr(args, name) for name in names}


def cmd_extract(args) -> int:
    from generator.sources.extract import ExtractError, extract

    try:
        summary = extract(
            args.root,
            args.source,
            args.project,
            args.ref,
            snippets=args.snippets,
            dry_run=args.dry_run,
            **_scan_options(args),
        )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    for line in summary.lines():
        _log(line)
    if args.dry_run:
        _log("dry run: nothing was written")
    return 0


def cmd_verify_sources(args) -> int:
    import json

    from generator.sources.extract import ExtractError
    from generator.sources.verify import verify_sources

    if args.accept_variants and not args.update:
        _log("error: --accept-variants goes with --update")
        return 2
    try:
        report = verify_sources(
            args.root,
            args.source,
            args.project,
            args.ref,
            update=args.update,
            accept_variants=args.accept_variants,
            **_scan_options(args),
        )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(report.text(verbose=args.verbose))
    return 1 if report.unresolved() else 0


def _source_options(p: argparse.ArgumentParser) -> None:
    """Options of the commands that read a source tree."""
    p.add_argument("source", type=Path, help="a source folder, a wheel or an sdist")
    p.add_argument("--ref", help="tag or commit the source is at (default: the project's ref)")
    p.add_argument(
        "--asserts", action="store_true", help="also errors raised by `assert cond, message`"
    )
    p.add_argument(
        "--include-vendored",
        action="store_true",
        help="also read vendor/, third_party/, _vendor/ and thirdparty/ folders",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip these paths (repeatable)",
    )
    p.add_argument("--prefix", default="", help="put before every path, e.g. src/")
    p.add_argument("--jobs", type=int, help="parser processes (default: one per CPU)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="errorkb", description="Error knowledge base generator.")
    top.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="project folder holding content/ and templates/ (default: .)",
    )
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="validate content/ and report every problem")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build", help="validate and build the site")
    p.add_argument("--out", type=Path, help="output folder (default: site/)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("serve", help="build, serve on 127.0.0.1 and rebuild on change")
    p.add_argument("--out", type=Path, help="output folder (default: site/)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("new", help="scaffold a record with its computed id")
    p.add_argument("--project", required=True)
    p.add_argument("--exception", required=True)
    p.add_argument("--message", required=True, help="the message template, {placeholders} named")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("match", help="find the records a pasted error message matches")
    p.add_argument("text", help="the error as pasted, log noise and all; - reads stdin")
    p.add_argument("--site", type=Path, help="read the index of this built site, not content/")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=cmd_match)

    p = sub.add_parser("calc", help="vLLM parallel-size rules: first error, valid sizes, layouts")
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
        "--backend", choices=BACKENDS, help="vLLM's --distributed-executor-backend"
    )
    p.add_argument("--gpus", type=int, help="suggest TP x PP x DP layouts for this many GPUs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_calc)

    p = sub.add_parser("extract", help="a record for every raise with a literal message")
    _source_options(p)
    p.add_argument("--project", required=True, help="the project the source is of, e.g. vllm")
    p.add_argument("--snippets", action="store_true", help="keep the raise's lines in records")
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("verify-sources", help="check records' locations against a source tree")
    _source_options(p)
    p.add_argument("--project", help="the project to check (default: the only one)")
    p.add_argument("--update", action="store_true", help="rewrite the locations of moved records")
    p.add_argument(
        "--accept-variants",
        action="store_true",
        help="with --update: add reworded messages to variants and follow them",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.add_argument("-v", "--verbose", action="store_true", help="list ok records too")
    p.set_defaults(func=cmd_verify_sources)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


def run() -> None:
    """The command's entry point: main, then exit without tearing down the interpreter,
    whose freeing a build's objects one by one is a tenth of a rebuild."""
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

"""The `errorkb` command."""

import argparse
import sys
from pathlib import Path

from generator.records import ContentError


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _report(exc: ContentError) -> int:
    for problem in exc.problems:
        print(problem, file=sys.stderr)
    _log(f"{len(exc.problems)} problem(s) found; nothing was written")
    return 1


def cmd_check(args) -> int:
    from generator.records import load_content

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
    from generator.build import build

    try:
        build(args.root, args.out, log=_log)
    except ContentError as exc:
        return _report(exc)
    return 0


def cmd_serve(args) -> int:
    from generator.build import build
    from generator.serve import serve

    out = (args.out or args.root / "site").resolve()
    try:
        build(args.root, out, log=_log)
    except ContentError as exc:
        _report(exc)
        if not out.exists():
            return 1
        _log("serving the last good site; fix the problems above and it rebuilds")
    serve(args.root.resolve(), out, args.host, args.port, _log)
    return 0


def cmd_new(args) -> int:
    from generator.scaffold import scaffold

    try:
        path = scaffold(args.root, args.project, args.exception, args.message)
    except FileExistsError as exc:
        _log(f"error: {exc}")
        return 1
    print(path)
    return 0


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
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)

"""How `vllm serve` builds its argument parser (vLLM 0.33.0's
vllm/entrypoints/cli/serve.py, `ServeSubcommand.subparser_init`): a FlexibleArgumentParser
given to `make_arg_parser` (the positional model tag, --headless, --api-server-count,
--config, --grpc, then FrontendArgs' and AsyncEngineArgs' `add_cli_args`).
`python -m vllm.entrypoints.openai.api_server` builds the same one
(vllm/entrypoints/launchers/api_server/entry.py, `main`).

Older releases built their parser elsewhere: `OLDER` (below) names, per layout, the function
of this file that builds it and its launchers and rewrites; errorkb.sources.flagdata takes the
layout of the newest `from` at or below the wheel's release (the module's own `build`,
`LAUNCHERS`, `REWRITES` and `REAL` from `FROM`).

Loaded by path in errorkb.sources.flagdump_child, with the wheel's tree first on sys.path
and heavy modules stubbed: it must import nothing of errorkb."""


def build():
    import vllm.platforms  # type: ignore[import-not-found]
    from vllm.platforms.cuda import CudaPlatform  # type: ignore[import-not-found]

    vllm.platforms._current_platform = CudaPlatform()  # what a CUDA machine detects

    from vllm.entrypoints.common.cli_args import make_arg_parser  # type: ignore[import-not-found]
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # type: ignore[import-not-found]

    return make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))


def _infer_schema(function, *args, **kwargs) -> str:
    """torch.library.infer_schema, as far as vLLM's op registry reads it: a Tensor per
    parameter, and as many Tensors returned as the annotation names."""
    import inspect

    signature = inspect.signature(function)
    params = ", ".join(f"Tensor {name}" for name in signature.parameters)
    count = max(str(signature.return_annotation).count("Tensor"), 1)
    returns = "Tensor" if count == 1 else "(" + ", ".join(["Tensor"] * count) + ")"
    return f"({params}) -> {returns}"


def _iinfo(dtype):
    """torch.iinfo, as far as vLLM's protocol reads it at import (0.7.x: a seed's bounds,
    asserted to be int64's)."""
    import types

    return types.SimpleNamespace(min=-(2**63), max=2**63 - 1, bits=64)


# What the stubbed torch must answer for vLLM's modules to import.
STUBS = {
    "torch.library.infer_schema": _infer_schema,
    "torch.iinfo": _iinfo,
    "torch.cuda.get_device_capability": lambda device=None: (9, 0),  # 0.11: an H100's
    "triton_kernels": ModuleNotFoundError,  # 0.13 on: then vllm.third_party's own copy
}

# The commands that parse with this parser: `vllm serve` (the console script), and the API
# server module run with `python -m`.
LAUNCHERS = (
    {"command": ["vllm", "serve"]},
    {"module": "vllm.entrypoints.openai.api_server"},
)
# What FlexibleArgumentParser.parse_args rewrites before argparse reads the words
# (vllm/utils/argparse_utils.py): `--a_b` as `--a-b` up to the first dot; `--x.key v`
# (and `--x.key+ v`) folded into `--x '{"key": ...}'`; `-O3`, `-O 3` and `-O=3` as
# `--optimization-level 3`.
REWRITES = ("underscores", "dotted", "optimization-level")
REAL = ()
FROM = "0.33.0"  # the oldest release read that builds its parser as `build` does

# The layouts before FROM, oldest first. Each holds from its `from` (the oldest release of it
# that was read; `read`: the releases whose launcher code was read for it) to the next one's.
OLDER = (
    # vllm/entrypoints/openai/api_server.py `parse_args()`: a plain argparse parser, the
    # module's own options and EngineArgs.add_cli_args (0.3.3), or cli_args.make_arg_parser()
    # (0.4.3). No `vllm serve` yet.
    {
        "from": "0",
        "read": ["0.3.3", "0.4.3"],
        "build": "build_api_server",
        "launchers": [{"module": "vllm.entrypoints.openai.api_server"}],
        "rewrites": [],
        "real": [],
    },
    # vllm/scripts.py `main`: `vllm serve`, a subcommand of a FlexibleArgumentParser (vllm/
    # utils.py), with a positional model tag and make_arg_parser. FlexibleArgumentParser
    # reads `--a_b` as `--a-b`, nothing more.
    {
        "from": "0.5.5",
        "read": ["0.5.5"],
        "build": "build_vllm_serve",
        "launchers": [
            {"command": ["vllm", "serve"]},
            {"module": "vllm.entrypoints.openai.api_server"},
        ],
        "rewrites": ["underscores"],
        "real": [],
    },
    # vllm/entrypoints/cli/main.py `main`: each command's `subparser_init` (serve.py's adds
    # the model tag and, by release, --config, --headless, --api-server-count, --grpc around
    # make_arg_parser). `-O3` is `-O 3`, -O being --compilation-config's short form.
    {
        "from": "0.7.3",
        "read": ["0.7.3", "0.8.5.post1"],
        "build": "build_vllm_serve",
        "launchers": [
            {"command": ["vllm", "serve"]},
            {"module": "vllm.entrypoints.openai.api_server"},
        ],
        "rewrites": ["underscores", "optimization-level"],
        "real": [],
    },
    # The same, with FlexibleArgumentParser's `--x.key value` (vllm/utils/__init__.py) and
    # `_` read as `-` up to the first dot.
    {
        "from": "0.9.2",
        "read": ["0.9.2", "0.10.2"],
        "build": "build_vllm_serve",
        "launchers": [
            {"command": ["vllm", "serve"]},
            {"module": "vllm.entrypoints.openai.api_server"},
        ],
        "rewrites": ["underscores", "dotted", "optimization-level"],
        "real": [],
    },
    # The same (FlexibleArgumentParser in vllm/utils/argparse_utils.py); the sampling
    # parameters are msgspec structs whose fields pydantic reads at import: msgspec real.
    {
        "from": "0.11.2",
        "read": ["0.11.2", "0.13.0", "0.16.0", "0.17.1", "0.19.1", "0.23.0", "0.27.1"],
        "build": "build_vllm_serve",
        "launchers": [
            {"command": ["vllm", "serve"]},
            {"module": "vllm.entrypoints.openai.api_server"},
        ],
        "rewrites": ["underscores", "dotted", "optimization-level"],
        "real": ["msgspec==0.23.0"],
    },
)


class _Built(Exception):
    """Raised by argparse's parse_known_args while a launcher's own code runs: the parser
    it built, at the moment it would parse the command line."""


def _parser_of(launch, *args):
    """The parser `launch(*args)` builds and parses with: the launcher's own code runs until
    it parses, and the parser is taken then."""
    import argparse

    def built(parser, *_args, **_kwargs):
        raise _Built(parser)

    original = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = built
    try:
        launch(*args)
    except _Built as caught:
        return caught.args[0]
    finally:
        argparse.ArgumentParser.parse_known_args = original
    raise RuntimeError(f"{launch.__qualname__} returned without parsing")


def _cuda():
    """The platform a CUDA machine detects, where vLLM detects it lazily (its
    `_current_platform`, 0.7 on; 0.5's parser does not read the platform). From 0.8 vLLM
    resolves it through its platform plugins, the first time any module reads it, which
    may be while `vllm` itself is imported: the resolver answers CUDA from the moment
    vllm.platforms is loaded."""
    import importlib.abc
    import importlib.machinery
    import sys

    class _Platforms(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname != "vllm.platforms":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                if "resolve_current_platform_cls_qualname" in vars(module):
                    cuda = "vllm.platforms.cuda.CudaPlatform"
                    module.resolve_current_platform_cls_qualname = lambda: cuda

            spec.loader.exec_module = exec_module
            return spec

    if "vllm.platforms" not in sys.modules:
        sys.meta_path.insert(0, _Platforms())
    import vllm.platforms

    if "_current_platform" in vars(vllm.platforms):
        from vllm.platforms.cuda import CudaPlatform

        vllm.platforms._current_platform = CudaPlatform()


def build_api_server():
    """`python -m vllm.entrypoints.openai.api_server` before `vllm serve`: its `parse_args()`."""
    from vllm.entrypoints.openai import api_server  # type: ignore[import-not-found]

    parser = _parser_of(api_server.parse_args)
    parser.prog = "python -m vllm.entrypoints.openai.api_server"
    return parser


def build_vllm_serve():
    """`vllm serve` as the console script builds it: a FlexibleArgumentParser for the CLI
    whose subcommand `serve` is made by vllm/entrypoints/cli/serve.py's `subparser_init`
    (0.7 on; cli/main.py's `main` does this for each command), or, before, by vllm/scripts.py's
    `main` (which runs it until it parses)."""
    import argparse
    import importlib

    _cuda()
    try:
        serve = importlib.import_module("vllm.entrypoints.cli.serve")
    except ModuleNotFoundError:
        top = _parser_of(importlib.import_module("vllm.scripts").main)
    else:
        top = serve.FlexibleArgumentParser(prog="vllm", description="vLLM CLI")
        subparsers = top.add_subparsers(required=False, dest="subparser")
        for command in serve.cmd_init():
            command.subparser_init(subparsers)
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction) and "serve" in action.choices:
            parser = action.choices["serve"]
            parser.prog = "vllm serve"
            return parser
    raise RuntimeError("the vLLM CLI has no `serve` command")

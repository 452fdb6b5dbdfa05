"""How `python -m sglang.launch_server` builds its argument parser (SGLang 0.5.23's
sglang/srt/server_args.py, `prepare_server_args`): a plain argparse.ArgumentParser given to
`ServerArgs.add_cli_args`. `sglang serve` parses with the same one, after taking out
--model-type and reading a first positional word as --model-path (sglang/cli/serve.py).

Older releases: `OLDER` (below) names, per layout, the function of this file that builds the
parser and its launchers; errorkb.sources.flagdata takes the layout of the newest `from` at or
below the wheel's release (the module's own `build`, `LAUNCHERS`, `REWRITES` and `REAL` from
`FROM`).

Loaded by path in errorkb.sources.flagdump_child, with the wheel's tree first on sys.path
and heavy modules stubbed: it must import nothing of errorkb."""

import argparse

# The commands that parse with this parser: the server module run with `python -m`, and
# `sglang serve`, which first takes out --model-type and reads a first word that is no
# option as --model-path (sglang/cli/serve.py).
LAUNCHERS = (
    {"module": "sglang.launch_server"},
    {"command": ["sglang", "serve"], "removes": ["--model-type"], "first": "--model-path"},
)
REWRITES = ()  # a plain argparse.ArgumentParser
# Packages built for real, not stubbed: the server arguments are msgspec structs.
REAL = ("msgspec==0.23.0",)
FROM = "0.5.23"  # the oldest release read that builds its parser as `build` does

# The layouts before FROM, oldest first; each holds from its `from` (the oldest release of it
# that was read; `read`: the releases whose launcher code was read for it) to the next one's.
OLDER = (
    # sglang/launch_server.py builds a plain argparse.ArgumentParser itself and gives it to
    # ServerArgs.add_cli_args (a dataclass then). No `prepare_server_args` yet.
    {
        "from": "0",
        "read": ["0.2.15"],
        "build": "build_launch_server",
        "launchers": [{"module": "sglang.launch_server"}],
        "rewrites": [],
        "real": [],
    },
    # sglang/launch_server.py runs sglang/srt/server_args.py's `prepare_server_args(argv)`:
    # a plain argparse.ArgumentParser given to ServerArgs.add_cli_args (a dataclass then).
    # No `sglang serve` yet.
    {
        "from": "0.3.6.post3",
        "read": ["0.3.6.post3", "0.4.10.post2"],
        "build": "build_prepare_server_args",
        "launchers": [{"module": "sglang.launch_server"}],
        "rewrites": [],
        "real": [],
    },
)


def build():
    from sglang.srt.server_args import ServerArgs  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def build_launch_server():
    """`python -m sglang.launch_server` before `prepare_server_args`: the plain parser its
    `__main__` block builds."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="python -m sglang.launch_server")
    ServerArgs.add_cli_args(parser)
    return parser


class _Built(Exception):
    """Raised by argparse's parse_known_args while a launcher's own code runs: the parser
    it built, at the moment it would parse the command line."""


def build_prepare_server_args():
    """`python -m sglang.launch_server` before `sglang serve`: the parser of
    `prepare_server_args`, taken when it parses."""
    import argparse

    from sglang.srt.server_args import prepare_server_args

    def built(parser, *_args, **_kwargs):
        raise _Built(parser)

    original = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = built
    try:
        prepare_server_args([])
    except _Built as caught:
        parser = caught.args[0]
        parser.prog = "python -m sglang.launch_server"
        return parser
    finally:
        argparse.ArgumentParser.parse_known_args = original
    raise RuntimeError("prepare_server_args returned without parsing")


class _Struct:
    """msgspec.Struct, as far as SGLang's kernel registry uses it at import: fields from the
    annotations, set from positional and keyword arguments; defaults stay on the class."""

    def __init_subclass__(cls, **options):
        pass

    def __init__(self, *args, **kwargs):
        classes = reversed(type(self).__mro__)
        names = [n for c in classes for n in vars(c).get("__annotations__", {})]
        for name, value in [*zip(names, args, strict=False), *kwargs.items()]:
            object.__setattr__(self, name, value)


# What the stubbed modules must answer for SGLang's modules to import, on the machine a
# launch command is written for: CUDA, no other accelerator (AttributeError: no such name).
STUBS = {
    "msgspec.Struct": _Struct,
    "torch.cuda.is_available": lambda: True,
    "torch.version.cuda": "12.9",
    "torch.version.hip": None,
    **{f"torch.{device}": AttributeError for device in ("npu", "hpu", "xpu", "mlu", "musa")},
}

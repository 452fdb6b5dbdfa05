"""How `vllm serve` builds its argument parser (vLLM 0.33.0's
vllm/entrypoints/cli/serve.py, `ServeSubcommand.subparser_init`): a FlexibleArgumentParser
given to `make_arg_parser` (the positional model tag, --headless, --api-server-count,
--config, --grpc, then FrontendArgs' and AsyncEngineArgs' `add_cli_args`).
`python -m vllm.entrypoints.openai.api_server` builds the same one
(vllm/entrypoints/launchers/api_server/entry.py, `main`).

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


# What the stubbed torch must answer for vLLM's modules to import.
STUBS = {"torch.library.infer_schema": _infer_schema}

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

"""How `vllm bench serve` builds its argument parser (vLLM 0.33.0's
vllm/entrypoints/cli/benchmark/serve.py, `BenchmarkServingSubcommand.add_cli_args`): a
FlexibleArgumentParser given to vllm/benchmarks/serve.py's `add_cli_args` (the datasets'
options, then the client's: --backend, --base-url, --host, --port, --endpoint, --request-rate,
--ready-check-timeout-sec ...). With VLLM_USE_RUST_BENCH=1 the command runs the vllm-rs binary
instead, whose parser is not Python's: not read here.

A program of vLLM's besides its server (parser.py): its data is
generator/flags/vllm-bench-<version>.json, made with `python -m errorkb.sources.flagdata
<wheel> --project vllm --program bench`.

Loaded by path in errorkb.sources.flagdump_child, with the wheel's tree first on sys.path
and heavy modules stubbed: it must import nothing of errorkb."""

LAUNCHERS = ({"command": ["vllm", "bench", "serve"]},)
# The code whose flags this parser reads (E126 reads a record's derived block from there with
# it): the serving benchmark's client (not the other benchmarks, whose parsers differ)
CODE = ("vllm/benchmarks/serve.py",)
REWRITES = ("underscores", "dotted", "optimization-level")  # FlexibleArgumentParser's
REAL = ()
FROM = "0.33.0"  # the oldest release read that builds its parser as `build` does
OLDER = ()


def build():
    import vllm.platforms  # type: ignore[import-not-found]
    from vllm.platforms.cuda import CudaPlatform  # type: ignore[import-not-found]

    vllm.platforms._current_platform = CudaPlatform()  # what a CUDA machine detects

    from vllm.benchmarks.serve import add_cli_args  # type: ignore[import-not-found]
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # type: ignore[import-not-found]

    parser = FlexibleArgumentParser(prog="vllm bench serve")
    add_cli_args(parser)
    return parser


# What the stubbed modules must answer: the engine recipe's (STUBS_OF), and for what the
# benchmark imports besides (an MoE module asserts at import that a constant of its is a
# torch.dtype)
STUBS_OF = ("parser.py",)
STUBS = {"torch.dtype": object}

"""How `vllm preload` builds its argument parser (vLLM 0.33.0's vllm/entrypoints/cli/preload.py,
`PreloadSubcommand.subparser_init`): a FlexibleArgumentParser given to
`PreloadSubcommand.add_cli_args`, which adds EngineArgs' options and then the weight-cache
daemons' own (--weight-cache-*, --seed-*). The daemons load the model as the engine will, so
every engine option is one of theirs; theirs are no `vllm serve` option.

A program of vLLM's besides its server (parser.py): its data is
generator/flags/vllm-preload-<version>.json, made with `python -m errorkb.sources.flagdata
<wheel> --project vllm --program preload`.

Loaded by path in errorkb.sources.flagdump_child, with the wheel's tree first on sys.path
and heavy modules stubbed: it must import nothing of errorkb."""

LAUNCHERS = ({"command": ["vllm", "preload"]},)
# The code whose flags this parser reads (E126 reads a record's derived block from there with
# it): the subcommand's own module, which checks the daemons' options
CODE = ("vllm/entrypoints/cli/preload.py",)
REWRITES = ("underscores", "dotted", "optimization-level")  # FlexibleArgumentParser's, as serve's
REAL = ()
FROM = "0.31.0"  # the first release with `vllm preload`, built as `build` does
OLDER = ()


def build():
    import vllm.platforms  # type: ignore[import-not-found]
    from vllm.platforms.cuda import CudaPlatform  # type: ignore[import-not-found]

    vllm.platforms._current_platform = CudaPlatform()  # what a CUDA machine detects

    from vllm.entrypoints.cli.preload import PreloadSubcommand  # type: ignore[import-not-found]
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # type: ignore[import-not-found]

    parser = FlexibleArgumentParser(prog="vllm preload")
    PreloadSubcommand.add_cli_args(parser)
    return parser


# What the stubbed torch must answer for vLLM's modules to import: the engine recipe's
STUBS_OF = ("parser.py",)

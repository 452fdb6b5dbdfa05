"""How `sglang generate` builds its argument parser (SGLang 0.5.23's sglang/cli/generate.py):
for a diffusion model, a plain argparse.ArgumentParser given to `add_multimodal_gen_generate_args`
(sglang/multimodal_gen/runtime/entrypoints/cli/generate.py): --config, --perf-dump-path,
--output-file-path, the diffusion program's own ServerArgs.add_cli_args
(sglang/multimodal_gen/runtime/server_args/server_args.py), SamplingParams.add_cli_args
(sglang/multimodal_gen/configs/sample/sampling_params.py), the options a selected pipeline's
config adds (none unless --pipeline-class-name or --model-path picks one: not read here) and
--text-encoder-configs. It parses with parse_known_args; what is left over goes to
ServerArgs.from_cli_args, which takes the per-component options (`--<component>-path`,
`--component-paths.<component>`...) and refuses the rest: those are not argparse options and
are not in the data.

The diffusion program's server (`sglang serve` on a diffusion model, sglang/cli/serve.py's
`_run_diffusion`) parses the same ServerArgs options without the sampling ones; its flags are
written here as `sglang generate`'s, the one command that takes only the diffusion program's.

A program of SGLang's besides its LLM server (parser.py): its data is
generator/flags/sglang-generate-<version>.json, made with `python -m errorkb.sources.flagdata
<wheel> --project sglang --program generate`.

Loaded by path in errorkb.sources.flagdump_child, with the wheel's tree first on sys.path
and heavy modules stubbed: it must import nothing of errorkb."""

import argparse

LAUNCHERS = ({"command": ["sglang", "generate"]},)
# The code whose flags this parser reads (E126 reads a record's derived block from there with
# it): the diffusion runtime; its tools have parsers of their own, but derive no flags.
CODE = ("sglang/multimodal_gen/",)
REWRITES = ()  # a plain argparse.ArgumentParser
# Packages built for real, not stubbed: the kernel registry it imports holds msgspec structs.
REAL = ("msgspec==0.23.0",)
FROM = "0.5.23"  # the oldest release read that builds its parser as `build` does
OLDER = ()


def build():
    import importlib.util
    from pathlib import Path

    # The kernels' JIT package checks at import that its C++ folders (include/, csrc/) are
    # beside it; the wheel has them, but only its Python files are unpacked: empty folders in
    # the unpacked tree stand in for them.
    spec = importlib.util.find_spec("sglang.kernels.jit")
    if spec is not None and spec.origin:
        for folder in ("include", "csrc"):
            (Path(spec.origin).parent / folder).mkdir(exist_ok=True)

    # srt's quantization layers, which the pipeline configs import, register their kernels
    # as torch ops at import: no part of a parser, and not possible with torch stubbed.
    import sglang.srt.utils.common as common  # type: ignore[import-not-found]

    common.direct_register_custom_op = lambda *args, **kwargs: None

    from sglang.multimodal_gen.runtime.entrypoints.cli.generate import (  # type: ignore[import-not-found]
        add_multimodal_gen_generate_args,
    )

    parser = argparse.ArgumentParser(prog="sglang generate")
    add_multimodal_gen_generate_args(parser)
    return parser


class _Struct:
    """msgspec.Struct, as far as SGLang's kernel registry uses it at import (as parser.py's)."""

    def __init_subclass__(cls, **options):
        pass

    def __init__(self, *args, **kwargs):
        classes = reversed(type(self).__mro__)
        names = [n for c in classes for n in vars(c).get("__annotations__", {})]
        for name, value in [*zip(names, args, strict=False), *kwargs.items()]:
            object.__setattr__(self, name, value)


# What the stubbed modules must answer for the diffusion program's modules to import, on the
# machine a launch command is written for: CUDA, no other accelerator.
STUBS = {
    "msgspec.Struct": _Struct,
    # srt's configs serialise a logit processor at import (`dill.dumps(cls).hex()`)
    "dill.dumps": lambda *args, **kwargs: b"",
    "torch.cuda.is_available": lambda: True,
    "torch.version.cuda": "12.9",
    # srt's layers read the GPU's compute capability at import (DeepGEMM's configurer)
    "torch.cuda.is_initialized": lambda: True,
    "torch.cuda.get_device_capability": lambda *args, **kwargs: (9, 0),
    "torch.version.hip": None,
    **{f"torch.{device}": AttributeError for device in ("npu", "hpu", "xpu", "mlu", "musa")},
}

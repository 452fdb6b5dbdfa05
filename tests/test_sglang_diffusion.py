"""Issue 43: SGLang's diffusion runtime (`sglang/multimodal_gen/`, `sglang generate`) is a
program with settings of its own (generator/projects/sglang/knowledge.py, DiffusionKnowledge):
its code traces its own server arguments (flags of `sglang generate`), the sampling parameters
its HTTP requests take, and its environment variables; never the LLM server's flags, and the
server's code never the diffusion program's. Laid out as SGLang 0.5.23's files, cut down."""

from pathlib import Path

import pytest

from errorkb.content import flags
from errorkb.content.load import load_content
from errorkb.content.model import ContentError
from errorkb.registry import wing
from errorkb.sources import explain, flagdata
from errorkb.sources import extract as ex

SERVER_ARGS = """
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    enable_lora: bool = False

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str)
        parser.add_argument("--tp-size", type=int)
        parser.add_argument("--enable-lora", action="store_true")
"""

TOY_SRT = """
def check(server_args):
    if server_args.tp_size > 8:
        raise ValueError("The toy server has too many ranks")
"""

DIFFUSION_ARGS = """
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    num_gpus: int = 1
    tp_size: int = 1
    lora_nickname: str = "default"
    pipeline_config: object = None

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str)
        parser.add_argument("--num-gpus", type=int)
        parser.add_argument("--tp-size", type=int)
        parser.add_argument("--lora-nickname", type=str)
        PipelineConfig.add_cli_args(parser)
        return parser

    def check(self):
        if self.num_gpus < self.tp_size:
            raise ValueError("The toy diffusion needs more GPUs than its TP size")
"""

PIPELINE = """
import dataclasses


@dataclasses.dataclass
class PipelineConfig:
    flow_shift: float | None = None
    vae_tiling: bool = True
    dit_config: object = None

    @staticmethod
    def add_cli_args(parser, prefix=""):
        prefix_with_dot = f"{prefix}." if prefix else ""
        parser.add_argument(
            f"--{prefix_with_dot}flow-shift",
            dest=f"{prefix_with_dot.replace('-', '_')}flow_shift",
            type=float,
        )
"""

SAMPLING = """
import dataclasses


@dataclasses.dataclass
class SamplingParams:
    prompt: str = ""
    num_frames: int = 1
    return_frames: bool = False


class WanSamplingParams(SamplingParams):
    def __post_init__(self):
        if self.num_frames % 4 != 1:
            raise ValueError("The toy Wan model takes 4k+1 frames")
"""

PROTOCOL = """
class VideoGenerationsRequest(BaseModel):
    prompt: str
    num_frames: int | None = None
    seconds: int | None = None
"""

ENVS = """
environment_variables: dict = {
    "SGLANG_DIFFUSION_TOY_CACHE": _lazy_bool("SGLANG_DIFFUSION_TOY_CACHE"),
}
"""

STAGE = """
from sglang.multimodal_gen import envs
from sglang.multimodal_gen.runtime.server_args import get_global_server_args


class ToyStage:
    def forward(self, batch, server_args):
        if server_args.pipeline_config.flow_shift is None:
            raise ValueError("The toy stage needs a flow shift")
        if batch.num_frames > 81:
            raise ValueError("The toy stage takes at most 81 frames")
        if batch.return_frames:
            raise ValueError("The toy stage returns no frames")
        if envs.SGLANG_DIFFUSION_TOY_CACHE:
            raise ValueError("The toy cache is on")
        if get_global_server_args().enable_lora:
            raise ValueError("The toy stage has no LoRA")
        if self.server_args.tp_size > 4:
            raise ValueError("The toy stage splits at most 4 ways")

    def decode(self):
        raise ValueError("The toy stage wants --num-gpus 2")

    def fallback(self):
        raise ValueError("The toy fallback: set tp_size, num_gpus, and sp_degree to 1.")
"""

API = """
@router.post("/set_lora")
async def set_lora(
    lora_nickname: str = Body(..., embed=True),
    strength: float = Body(1.0, embed=True),
):
    pass
"""

LORA = """
class ToyLoRAPipeline:
    def normalize(self, lora_nickname, strengths):
        if len(strengths) != len(lora_nickname):
            raise ValueError("Length mismatch: lora_nickname has more items than strength")


class Req:
    def check(self):
        if self.num_frames > 121:
            raise ValueError("The toy request has too many frames")
"""

TOOL = """
def main(server_args):
    if server_args.num_gpus > 1:
        raise ValueError("The toy tool runs on one GPU: drop --num-gpus")
"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("diffusion")
    files = {
        "sglang/srt/server_args.py": SERVER_ARGS,
        "sglang/srt/toy.py": TOY_SRT,
        "sglang/multimodal_gen/runtime/server_args/server_args.py": DIFFUSION_ARGS,
        "sglang/multimodal_gen/configs/pipeline_configs/base.py": PIPELINE,
        "sglang/multimodal_gen/configs/sample/sampling_params.py": SAMPLING,
        "sglang/multimodal_gen/runtime/entrypoints/openai/protocol.py": PROTOCOL,
        "sglang/multimodal_gen/envs.py": ENVS,
        "sglang/multimodal_gen/runtime/pipelines_core/stages/toy.py": STAGE,
        "sglang/multimodal_gen/tools/toy_tool.py": TOOL,
        "sglang/multimodal_gen/apps/ComfyUI_SGLDiffusion/core/toy.py": TOOL.replace("tool", "node"),
        "sglang/multimodal_gen/runtime/entrypoints/openai/common_api.py": API,
        "sglang/multimodal_gen/runtime/pipelines_core/lora/pipeline.py": LORA,
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    scan = ex.scan_tree(root, knowledge=wing("sglang").knowledge)
    return {site.template: site.derived or {} for site in scan.sites}


def settings(sites: dict[str, dict], start: str) -> list[tuple]:
    (found,) = [d for template, d in sites.items() if template.startswith(start)]
    return [
        (f["kind"], f.get("flag") or f.get("env") or f.get("key"), f.get("command", ""))
        for f in found.get("flags", [])
    ]


def test_its_server_arguments_are_flags_of_sglang_generate(sites):
    """`self.x` in its ServerArgs, `self.server_args.x`: its own options, with the command
    that takes them, linked to where its add_cli_args registers them."""
    assert settings(sites, "The toy diffusion needs") == [
        ("server-arg", "--num-gpus", "sglang generate"),
        ("server-arg", "--tp-size", "sglang generate"),
    ]
    assert settings(sites, "The toy stage splits") == [
        ("server-arg", "--tp-size", "sglang generate")
    ]


def test_its_pipeline_config_fields_set_by_an_option_are_that_option(sites):
    """`server_args.pipeline_config.flow_shift`: PipelineConfig.add_cli_args registers
    `f"--{prefix_with_dot}flow-shift"`, `--flow-shift` on the top-level parser."""
    assert settings(sites, "The toy stage needs a flow") == [
        ("server-arg", "--flow-shift", "sglang generate")
    ]


def test_its_sampling_parameters_that_requests_take_are_request_fields(sites):
    """`batch.num_frames` (a pipeline's Req hands its sampling parameters through) and
    `self.num_frames` in a model's SamplingParams: a field of the request. One the HTTP
    requests do not take (`return_frames`) is no request field."""
    assert settings(sites, "The toy stage takes at most") == [("request-field", "num_frames", "")]
    assert settings(sites, "The toy Wan model") == [("request-field", "num_frames", "")]
    assert settings(sites, "The toy stage returns") == []


def test_a_field_of_an_endpoints_body_is_a_request_field(sites):
    """/set_lora takes `lora_nickname` in its body (`Body(...)`), as does the launch
    (`--lora-nickname`): a message that names it alone is ambiguous and traces nothing (the
    launch flag would be the wrong fix for a request's lists of unequal length)."""
    assert settings(sites, "Length mismatch: lora_nickname") == []


def test_a_pipelines_req_hands_its_sampling_parameters_through(sites):
    """`self.num_frames` in `Req`, which hands its sampling parameters' fields through."""
    assert settings(sites, "The toy request has too many") == [("request-field", "num_frames", "")]


def test_its_environment_variables_are_read_as_envs_x(sites):
    assert settings(sites, "The toy cache is on") == [("env-var", "SGLANG_DIFFUSION_TOY_CACHE", "")]


def test_the_servers_flags_are_never_the_diffusion_programs(sites):
    """`--enable-lora` is the LLM server's, not a diffusion option: not traced in its code;
    the server's own code keeps its flag with no command."""
    assert settings(sites, "The toy stage has no LoRA") == []
    assert settings(sites, "The toy server has too many") == [("server-arg", "--tp-size", "")]


def test_a_flag_its_message_names_is_the_diffusion_programs(sites):
    (found,) = [d for t, d in sites.items() if t.startswith("The toy stage wants")]
    (entry,) = found["flags"]
    assert (entry["flag"], entry["command"], entry["named"]) == (
        "--num-gpus",
        "sglang generate",
        "text",
    )
    # its tools parse arguments of their own, its ComfyUI nodes take ComfyUI's: nothing is
    # named there, nor traced
    assert settings(sites, "The toy tool runs") == []
    assert settings(sites, "The toy node runs") == []


def test_a_list_of_settings_set_to_one_value_gives_that_value(sites):
    """`set tp_size, num_gpus, and sp_degree to 1` (transformer_loader.py's fallback): the
    first named gets the value, not a bare "set" (it takes a number)."""
    (found,) = [d for t, d in sites.items() if t.startswith("The toy fallback")]
    passes = {f["flag"]: f.get("passes") for f in found["flags"]}
    assert passes["--tp-size"] == {"op": "==", "value": 1}
    assert all(p in (None, {"op": "==", "value": 1}) for p in passes.values())


def test_what_to_try_names_the_command():
    entry = {
        "name": "num_gpus",
        "kind": "server-arg",
        "field": "server_args.num_gpus",
        "flag": "--num-gpus",
        "command": "sglang generate",
        "passes": {"op": ">=", "value": 2},
    }
    assert explain.to_try(entry) == "Set `--num-gpus` of `sglang generate` to at least `2`."


# E126: the diffusion program's parser -------------------------------------------------------

GENERATE = flagdata.load("sglang", "0.5.23", "generate")


def test_the_generate_parser_is_built_from_its_own_code():
    """`sglang generate`'s parser (generator/flags/sglang-generate-0.5.23.json): its own
    server arguments and sampling options, none of the LLM server's alone."""
    assert GENERATE is not None and GENERATE["prog"] == "sglang generate"
    strings = {s for option in GENERATE["options"] for s in option["strings"]}
    assert {"--num-gpus", "--num-inference-steps", "--flow-shift", "--tp-size"} <= strings
    assert "--enable-lora" not in strings and "--mem-fraction-static" not in strings
    assert GENERATE["launchers"] == [{"command": ["sglang", "generate"]}]
    assert GENERATE["code"] == ["sglang/multimodal_gen/"]


RECORD = """\
id: {id}
project: sglang
exception: ValueError
message: A toy error.
source: {{path: {path}}}
derived:
  ref: v0.5.23
  flags:
    - name: x
      kind: server-arg
      field: server_args.x
      flag: "{flag}"
{command}  try:
    - "Set `{flag}`{of} to 2."
"""


def _record(kb: Path, path: str, flag: str, command: str = "") -> None:
    content = kb / "content"
    (content / "projects" / "sglang.yaml").write_text(
        "name: SGLang\nrepo: sgl-project/sglang\nref: v0.5.23\nversion: 0.5.23\n"
    )
    (content / "errors" / "sglang").mkdir(exist_ok=True)
    text = RECORD.format(
        id="00000000000000d1",
        path=path,
        flag=flag,
        command=f"      command: {command}\n" if command else "",
        of=f" of `{command}`" if command else "",
    )
    (content / "errors" / "sglang" / "00000000000000d1.yaml").write_text(text)


def _problems(kb: Path) -> list[str]:
    flags._engine.cache_clear()
    try:
        load_content(kb)
    except ContentError as exc:
        return [str(p) for p in exc.problems]
    return []


DIFFUSION_PATH = "python/sglang/multimodal_gen/runtime/server_args/server_args.py"


def test_a_diffusion_records_flags_read_with_the_generate_parser(kb):
    _record(kb, DIFFUSION_PATH, "--num-gpus", "sglang generate")
    assert _problems(kb) == []
    # the LLM server's flag in the diffusion program's derived block is refused
    _record(kb, DIFFUSION_PATH, "--enable-lora", "sglang generate")
    found = _problems(kb)
    assert found and all("sglang generate 0.5.23's parser" in p for p in found)
    assert any("derived.flags.0.flag" in p for p in found)
    assert any("derived.try.0" in p for p in found)


def test_the_servers_records_never_take_a_diffusion_flag(kb):
    _record(kb, "python/sglang/srt/server_args.py", "--num-gpus")
    found = _problems(kb)
    assert len(found) == 2 and all("SGLang 0.5.23's parser" in p for p in found)


def test_a_command_with_no_parser_data_is_a_problem(kb):
    _record(kb, DIFFUSION_PATH, "--num-gpus", "sglang imagine")
    (found,) = _problems(kb)
    assert "E126 derived.flags.0.command: no parser data for `sglang imagine`" in found

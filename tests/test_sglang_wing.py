"""SGLang's wing: what extract knows of SGLang's code (its settings with their kinds, and the
stages of a run; generator/projects/sglang/knowledge.py) on a made-up SGLang-shaped source
tree (tests/fixtures/sglang/tree, laid out as SGLang 0.5.23), and the calculator its
divisibility pages get (SGLang's calc.py served byte for byte, with SGLang's flags)."""

import json
import re
from pathlib import Path

import pytest
import yaml

from errorkb.registry import wing
from errorkb.site.build import build
from errorkb.sources import extract as ex

TREE = Path(__file__).parent / "fixtures" / "sglang" / "tree"
REPO = Path(__file__).resolve().parent.parent
SOURCE = "https://github.com/sgl-project/sglang/blob/v9.8.7/"  # the tree's release
HEADS = "num_heads ({num_heads}) must be divisible by tp_size ({tp_size})"


@pytest.fixture(scope="module")
def sites() -> dict[str, dict]:
    """Each site's derived facts, by the start of its message."""
    scan = ex.scan_tree(TREE, knowledge=wing("sglang").knowledge, asserts=True, printed=True)
    return {site.template: site.derived for site in scan.sites}


def derived(sites, start: str) -> dict:
    found = [d for key, d in sites.items() if key.startswith(start)]
    assert len(found) == 1, (start, list(sites))
    return found[0]


def settings(found: dict) -> list[tuple[str, str, str]]:
    """(kind, what the user changes, the code's name) of each traced setting."""
    out = []
    for item in found.get("flags", []):
        handle = item.get("flag") or item.get("env") or item.get("key")
        out.append((item["kind"], handle, item["name"]))
    return out


def test_server_arguments_are_traced_through_views_widths_and_parameters(sites):
    found = derived(sites, "--dp-size {dp_size} with")  # cfg = resolving_view(server_args)
    assert settings(found) == [
        ("server-arg", "--dp-size", "dp_size"),
        ("server-arg", "--attn-dp-size", "attn_dp_size"),
    ]
    assert found["stage"] == "config-validation"
    url = found["flags"][0]["url"]
    assert url == SOURCE + "sglang/srt/arg_groups/fields/parallel.py#L20"
    # a parameter named as the size it holds; a derived width by the size the user sets
    heads = derived(sites, HEADS)
    assert settings(heads) == [("server-arg", "--tp-size", "tp_size")]
    assert "The divisor calculator lists the divisors of `num_heads`." in heads["try"]  # shown
    toy = settings(derived(sites, "Toy heads"))
    assert toy == [
        ("model-config", "num_attention_heads", "num_attention_heads"),
        ("server-arg", "--tp-size", "attn_tp_size"),
    ]
    experts = settings(derived(sites, "num_routed_experts must"))
    assert experts == [
        ("model-config", "num_routed_experts", "hf_config.num_routed_experts"),
        ("server-arg", "--ep-size", "get_parallel().moe_ep_size"),
    ]


def test_names_that_hold_a_server_argument_throughout_sglang(sites):
    found = derived(sites, "The toy pool takes pages")  # self.page_size = page_size (a param)
    assert settings(found) == [
        ("server-arg", "--page-size", "page_size"),
        ("server-arg", "--quantization", "model_config.quantization"),
    ]


def test_model_configs_getters_read_config_json(sites):
    found = derived(sites, "The toy runner needs")
    assert settings(found) == [
        ("model-config", "num_key_value_heads", "model_config.get_total_num_kv_heads()"),
        ("server-arg", "--tp-size", "server_args.tp_size"),
    ]


def test_flags_come_from_cli_name_aliases_and_the_hand_registered_ones(sites):
    found = derived(sites, "--chunked-prefill-size below 64")
    assert settings(found) == [("server-arg", "--chunked-prefill-size", "server_args.chunked")]
    found = derived(sites, "tp_size must be divisible by number of nodes")  # ServerArgs' self
    assert settings(found) == [
        ("server-arg", "--tp-size", "tp_size"),
        ("server-arg", "--nnodes", "nnodes"),
    ]
    knowledge = wing("sglang").knowledge(ex.read_tree(TREE).files)
    assert knowledge.args["enable_dp_attention"][0] == ("--enable-dp-attention",)
    assert "internal_only" not in knowledge.args and "config" not in knowledge.args
    assert knowledge.args["ep_size"][0] == ("--ep-size", "--expert-parallel-size", "--ep")


def test_environment_variables_request_fields_and_their_stages(sites):
    found = derived(sites, "The AITER toy path")
    assert settings(found) == [("env-var", "SGLANG_USE_AITER", "envs.SGLANG_USE_AITER.get()")]
    assert found["flags"][0]["url"] == SOURCE + "sglang/srt/environ.py#L7"
    assert found["stage"] == "engine-startup"  # a model's forward first runs at start-up
    found = derived(sites, "max_tokens must be at least 1")
    assert settings(found) == [("request-field", "max_tokens", "max_tokens")]
    assert found["flags"][0]["url"] == SOURCE + "sglang/srt/entrypoints/openai/protocol.py#L13"
    assert found["stage"] == "request-handling"
    inherited = derived(sites, "bootstrap_host must not be empty")
    assert settings(inherited) == [("request-field", "bootstrap_host", "request.bootstrap_host")]
    assert derived(sites, HEADS)["stage"] == "model-loading"
    assert derived(sites, "--chunked-prefill-size")["stage"] == "model-loading"


def test_a_tree_that_is_not_sglangs_has_no_settings(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    assert wing("sglang").knowledge(ex.read_tree(tmp_path / "pkg").files) is None


# ---------------------------------------------------------------- the pages


@pytest.fixture(scope="module")
def sglang_kb(tmp_path_factory):
    """The fixture knowledge base with SGLang as a project, the toy tree extracted into it."""
    from tests.conftest import make_kb

    kb = make_kb(tmp_path_factory.mktemp("sglang") / "kb")
    project = {"name": "SGLang", "repo": "sgl-project/sglang", "ref": "v9.8.7"}
    project |= {"version": "9.8.7", "description": "A serving framework."}
    (kb / "content/projects/sglang.yaml").write_text(yaml.safe_dump(project))
    (kb / "content/errors/sglang").mkdir()
    ex.extract(kb, TREE, "sglang", "v9.8.7", asserts=True, printed=True)
    build(kb)
    return kb


def record_id(kb: Path, start: str) -> str:
    for path in (kb / "content/errors/sglang").glob("*.yaml"):
        if yaml.safe_load(path.read_text())["message"].startswith(start):
            return path.stem
    raise AssertionError(start)


def test_a_head_count_page_has_sglangs_calculator(sglang_kb):
    rid = record_id(sglang_kb, HEADS)
    html = (sglang_kb / "site/errors" / rid / "index.html").read_text()
    widget = re.search(r'<div class="calc" data-calc="tp_sizes"([^>]*)>', html)
    assert widget, "no calculator on the page"
    assert 'data-inputs="heads=num_heads tp=tp_size"' in widget.group(1)
    assert re.search(r'data-src="/assets/sglang-calc\.json\?v=[0-9a-f]{10}"', widget.group(1))
    assert 'src="/assets/calc.js?v=' in html
    data = json.loads((sglang_kb / "site/assets/sglang-calc.json").read_text())
    # The calculator requests get by default, and the protocol it imports, served beside it.
    assert sorted(data["modules"]) == ["calc", "protocol"]
    assert data["modules"]["calc"].startswith("/assets/sglang-calc.py?v=")
    assert data["modules"]["protocol"].startswith("/assets/protocol.py?v=")
    served = (sglang_kb / "site/assets/sglang-calc.py").read_bytes()
    assert served == (REPO / "generator/projects/sglang/calc.py").read_bytes()
    protocol = (sglang_kb / "site/assets/protocol.py").read_bytes()
    assert protocol == (REPO / "generator/projects/protocol.py").read_bytes()
    assert data["flags"]["tp"] == "--tp-size" and data["engine"] == "SGLang"
    assert data["tp_table"]["40"] == [1, 2, 4, 5, 8, 10, 20, 40]
    assert data["tp_advice"]["40"] == [8, 1] and data["tp_advice"]["52/4"] == [4, 2]
    assert "--tensor-parallel-size" not in json.dumps(data["fields"])
    assert data["fields"]["nnodes"][1] == "--nnodes"
    # each architecture's attention layer, as read from SGLang's model files
    assert data["architectures_release"] == "0.5.23"
    assert data["architectures"]["LlamaForCausalLM"] == "tp:hkp"
    assert data["architectures"]["Qwen3ForCausalLM"] == "attn_tp:hkp"
    assert data["models"] == [  # the fixture's content/models.yaml
        {"key": "tiny", "name": "Tiny", "heads": 8, "kv_heads": 2, "layers": 4, "mla": False}
        | {"architecture": "Qwen3ForCausalLM"}
    ]


def test_another_divisor_gets_the_divisor_calculator(sglang_kb):
    rid = record_id(sglang_kb, "Toy heads")  # attention TP size: not the --tp-size itself
    html = (sglang_kb / "site/errors" / rid / "index.html").read_text()
    assert 'data-calc="' not in html
    assert "data-divisors" in html  # answered in the page's script, no Python to load
    rid = record_id(sglang_kb, "max_tokens must be at least 1")
    assert "data-divisors" not in (sglang_kb / "site/errors" / rid / "index.html").read_text()


def test_vllm_pages_keep_vllms_calculator(sglang_kb):
    data = json.loads((sglang_kb / "site/assets/calc.json").read_text())
    assert data["engine"] == "vLLM" and data["flags"]["tp"] == "--tensor-parallel-size"
    assert data["modules"]["calc"].startswith("/assets/calc.py?v=")
    assert sorted(p.name for p in (sglang_kb / "site/pyodide").iterdir())  # shipped once


@pytest.mark.slow
def test_the_calculator_answers_in_the_browser_with_sglangs_flags(sglang_kb, serve_site, page):
    """Real Chromium: an SGLang head-count page opened from a paste's values. "Your case"
    answers at once from the build's table with the largest TP size one 8-GPU node runs,
    then SGLang's calc.py answers under Pyodide; every flag is SGLang's."""
    base = serve_site(sglang_kb / "site")
    rid = record_id(sglang_kb, HEADS)
    page.goto(f"{base}/errors/{rid}/?num_heads=40&tp_size=16")
    case = page.locator("[data-your-case] [data-case-answer]")
    case.get_by_text("40 attention heads cannot be split over 16 GPUs.").wait_for()
    assert "Use --tp-size 8: the nearest to 16" in case.inner_text()
    page.locator(".calc .calc-go").click()  # Python only when asked (issue 44)
    page.wait_for_selector(".calc[data-state=answered]", timeout=90_000)
    answer = page.locator(".calc-out").inner_text()
    assert "TP 16 fails at load time: AssertionError" in answer
    assert "total_num_heads % tp_size" in answer and "Use --tp-size 8: the nearest" in answer
    assert "No architecture given: assumed" in answer and "over the full --tp-size" in answer
    page.fill("#calc0-architecture", "Qwen3ForCausalLM")
    page.fill("#calc0-attn_dp", "8")
    page.fill("#calc0-tp", "16")
    page.locator(".calc-out .calc-good").get_by_text("TP 16, ATTN DP 8: no error").wait_for()
    attention = page.locator("[data-out=attention]").inner_text()
    assert "over the attention TP size (--tp-size ÷ --attn-dp-size)" in attention
    page.fill("#calc0-architecture", "LlamaForCausalLM")
    page.locator(".calc-out").get_by_text("TP 16, ATTN DP 8 fails at load time").wait_for()
    page.fill("#calc0-attn_dp", "1")
    page.fill("#calc0-dp", "2")
    page.fill("#calc0-nnodes", "2")
    page.locator(".calc-out").get_by_text("multi-node data-parallel replicas").wait_for()
    page.fill("#calc0-dp", "1")
    page.fill("#calc0-nnodes", "1")
    page.fill("#calc0-tp", "8")
    page.locator(".calc-out .calc-good").get_by_text("TP 8: no error").wait_for()
    page.fill("#calc0-ep", "3")
    page.locator(".calc-out").get_by_text("TP 8, EP 3 fails at startup time").wait_for()
    text = page.locator("main").inner_text()
    assert "--tensor-parallel-size" not in text and "vLLM" not in text
    assert page.errors == []


OLD_SERVER_ARGS = """
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", "--model", type=str)
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, dest="tp_size")

    def check_server_args(self):
        if self.tp_size > 8:
            raise ValueError(f"tp_size {self.tp_size} is more than 8")
"""


def test_an_older_release_without_arg_groups_names_its_arguments(tmp_path):
    """SGLang 0.4 and before declare the server arguments in server_args.py alone: a check of
    that release names the flag its add_cli_args registered (what a removed record's derived
    says, as that release named it)."""
    srt = tmp_path / "sglang" / "srt"
    srt.mkdir(parents=True)
    (srt / "server_args.py").write_text(OLD_SERVER_ARGS)
    scan = ex.scan_tree(tmp_path, knowledge=wing("sglang").knowledge)
    (site,) = [s for s in scan.sites if s.template.startswith("tp_size")]
    assert ("server-arg", "--tensor-parallel-size", "tp_size") in settings(site.derived)


# Issue 43: settings read through SGLang's getters and environment readers ---------------

GETTER_ARGS = """
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    moe_a2a_backend: str = "none"
    moe_runner_backend: str = "auto"
    enable_dp_attention: bool = False
    device: str = "cuda"
    fp8_gemm_runner_backend: str = "auto"

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str)
        parser.add_argument("--moe-a2a-backend", type=str)
        parser.add_argument("--moe-runner-backend", type=str)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--device", type=str)
        parser.add_argument("--fp8-gemm-backend", dest="fp8_gemm_runner_backend")
"""

GETTERS = """
FP8_GEMM_RUNNER_BACKEND = None


def get_moe_a2a_backend() -> MoeA2ABackend:
    moe = get_flags().moe
    if moe.a2a_backend is None:
        moe.a2a_backend = MoeA2ABackend.NONE
    return moe.a2a_backend


def get_moe_runner_backend():
    return get_flags().moe.runner_backend


def is_dp_attention_enabled() -> bool:
    return get_flags().dp.enabled


def get_fp8_gemm_runner_backend():
    global FP8_GEMM_RUNNER_BACKEND
    return FP8_GEMM_RUNNER_BACKEND


def get_device():
    return _CONTEXT.config_bag("device")  # a bag of settings, not the --device value


def get_moe_tp_rank():
    return get_parallel().moe_tp_rank
"""

USES = """
from sglang.srt.layers.utils import get_moe_a2a_backend, get_moe_runner_backend
from sglang.srt.utils import get_bool_env_var, set_env_var

_LOG_INPUT = get_bool_env_var("SGLANG_TOY_LOG_INPUT")


class ToyMarlin:
    def __init__(self):
        self.use_marlin = get_moe_runner_backend().is_marlin()

    def load(self):
        if self.use_marlin:
            raise ValueError("The toy layer is not supported by Marlin")


def toy_moe(x):
    if get_moe_a2a_backend().is_deepep():
        raise ValueError("The toy MoE cannot dispatch with DeepEP")
    if get_moe_runner_backend() == "cutlass":
        raise ValueError("The toy MoE has no cutlass runner")
    if is_dp_attention_enabled():
        raise ValueError("The toy MoE runs without DP attention")
    if get_fp8_gemm_runner_backend() == "deep_gemm":
        raise ValueError("The toy GEMM has no deep_gemm path")
    if _LOG_INPUT:
        raise ValueError("The toy updater cannot log its input")
    if get_bool_env_var("SGLANG_TOY_STRICT", "false") and x < 0:
        raise ValueError("The toy check is strict")
    if get_bool_env_var("SGLANG_TOY_AITER", default="true"):
        raise ValueError("The toy AITER path is on by default")
    use_fia = get_bool_env_var("SGLANG_TOY_FIA")
    if not use_fia:
        raise ValueError("The toy path needs SGLANG_TOY_FIA=1")
    if get_device().name == "npu":
        raise ValueError("The toy device bag says npu")
    if get_moe_tp_rank() > 0:
        raise ValueError("The toy rank is not the first")
    if set_env_var("SGLANG_TOY_SET", "1"):
        raise ValueError("The toy setter set a variable")
"""


@pytest.fixture(scope="module")
def getter_sites(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("getters")
    srt = root / "sglang" / "srt"
    (srt / "layers").mkdir(parents=True)
    (srt / "server_args.py").write_text(GETTER_ARGS)
    (srt / "environ.py").write_text(
        "class Envs:\n    SGLANG_TOY_STRICT = EnvBool(False)\n", encoding="utf-8"
    )
    (srt / "layers" / "utils.py").write_text(GETTERS)
    (srt / "layers" / "toy_moe.py").write_text(USES)
    scan = ex.scan_tree(root, knowledge=wing("sglang").knowledge)
    return {site.template: site.derived or {} for site in scan.sites}


def test_a_getter_named_for_a_server_argument_reads_it(getter_sites):
    """`get_moe_a2a_backend()` returns --moe-a2a-backend (SGLang 0.5.23 layers/moe/utils.py,
    260 uses): a check on it names the flag; a question asked of its value
    (`.is_deepep()`) passes by another choice, not by leaving it unset, so no value is given."""
    found = derived(getter_sites, "The toy MoE cannot dispatch")
    assert settings(found) == [
        ("server-arg", "--moe-a2a-backend", "get_moe_a2a_backend().is_deepep()")
    ]
    assert "passes" not in found["flags"][0]
    marlin = derived(getter_sites, "The toy layer is not supported")["flags"]  # held in self.x
    assert [(f["flag"], f.get("passes")) for f in marlin] == [("--moe-runner-backend", None)]
    runner = derived(getter_sites, "The toy MoE has no cutlass")["flags"]
    assert [(f["flag"], f.get("passes")) for f in runner] == [
        ("--moe-runner-backend", {"op": "!=", "value": "cutlass"})
    ]
    dp = derived(getter_sites, "The toy MoE runs without DP")["flags"]
    assert [(f["flag"], f.get("passes")) for f in dp] == [
        ("--enable-dp-attention", {"op": "unset"})
    ]
    gemm = derived(getter_sites, "The toy GEMM")["flags"]  # a module global named for it
    assert [f["flag"] for f in gemm] == ["--fp8-gemm-backend"]


def test_a_getter_that_returns_something_else_reads_no_setting(getter_sites):
    """Look-alikes: `get_device()` is named for --device but returns a bag of settings;
    `get_moe_tp_rank()` names no server argument (a rank is not set by the user)."""
    assert "flags" not in derived(getter_sites, "The toy device bag")
    assert "flags" not in derived(getter_sites, "The toy rank")


def test_an_environment_reader_reads_its_variable(getter_sites):
    """`get_bool_env_var("SGLANG_X")` (127 uses in SGLang 0.5.23's srt), directly or held in a
    module global, is the variable; one of `Envs` is read as `envs.X` (its declaration). A
    setter of the environment (`set_env_var`) reads nothing the user set."""
    log = derived(getter_sites, "The toy updater")["flags"]
    assert [(f["kind"], f["env"], f.get("passes")) for f in log] == [
        ("env-var", "SGLANG_TOY_LOG_INPUT", {"op": "unset"})
    ]
    strict = derived(getter_sites, "The toy check is strict")["flags"]
    assert [(f["env"], f["field"]) for f in strict] == [
        ("SGLANG_TOY_STRICT", "envs.SGLANG_TOY_STRICT")
    ]
    assert "flags" not in derived(getter_sites, "The toy setter")
    # a test of presence gives way to the value the message names
    fia = derived(getter_sites, "The toy path needs")["flags"]
    assert [(f["env"], f.get("passes")) for f in fia] == [
        ("SGLANG_TOY_FIA", {"op": "==", "value": 1})
    ]
    # on by default: leaving it unset still fails; its false value passes
    aiter = derived(getter_sites, "The toy AITER path")["flags"]
    assert [(f["env"], f.get("passes")) for f in aiter] == [
        ("SGLANG_TOY_AITER", {"op": "==", "value": "false"})
    ]


def test_in_sglang_s_model_config_its_copies_of_server_arguments_are_them(tmp_path):
    """2ba506af02f81952 ("{quantization} quantization is not fully optimized yet", in
    ModelConfig._verify_quantization): ModelConfig keeps --quantization under its name, as
    `model_config.quantization` already traces from outside. Look-alike: the same
    `self.quantization` in another class is not the server argument."""
    srt = tmp_path / "sglang" / "srt"
    (srt / "configs").mkdir(parents=True)
    (srt / "server_args.py").write_text(
        GETTER_ARGS.replace(
            "    device: str", "    quantization: str = None\n    device: str"
        ).replace(
            '        parser.add_argument("--device", type=str)',
            '        parser.add_argument("--device", type=str)\n'
            '        parser.add_argument("--quantization", type=str)',
        )
    )
    code = (
        "class ModelConfig:\n"
        "    def _verify_quantization(self):\n"
        "        if self.quantization in ('gptq', 'awq'):\n"
        "            logger.warning(f'{self.quantization} is not fully optimized yet')\n"
        "\n"
        "class ToyLayer:\n"
        "    def check(self):\n"
        "        if self.quantization == 'fp8':\n"
        "            raise ValueError(f'the toy layer has no {self.quantization} path')\n"
    )
    (srt / "configs" / "model_config.py").write_text(code)
    scan = ex.scan_tree(tmp_path, knowledge=wing("sglang").knowledge, printed=True)
    found = {site.template: site.derived or {} for site in scan.sites}
    verify = derived(found, "{quantization} is not fully")
    assert settings(verify) == [("server-arg", "--quantization", "quantization")]
    assert verify["flags"][0]["passes"] == {"op": "not in", "choices": ["gptq", "awq"]}
    assert "flags" not in derived(found, "the toy layer has no")

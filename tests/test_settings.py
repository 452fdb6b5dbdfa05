"""Every kind of setting a failing value comes from, traced from the code (vLLM's knowledge of
its own tree, generator/projects/vllm/knowledge.py, on the made-up vLLM-shaped tree of
tests/fixtures/settings/tree), with the value that would pass the check (explain.passing), and
what the records' "What to try" says of them."""

import ast
from pathlib import Path

import pytest

from errorkb.registry import wing
from errorkb.sources import explain
from errorkb.sources import extract as ex

TREE = Path(__file__).parent / "fixtures" / "settings" / "tree"
DOCS = "https://docs.vllm.ai/en/v9.8.7/"


@pytest.fixture(scope="module")
def sites() -> dict[str, dict]:
    scan = ex.scan_tree(TREE, knowledge=wing("vllm").knowledge, asserts=True, printed=True)
    return {site.template: site.derived for site in scan.sites}


def derived(sites, start: str) -> dict:
    (found,) = [d for key, d in sites.items() if key.startswith(start)]
    return found


def setting(sites, start: str, kind: str) -> dict:
    (found,) = [f for f in derived(sites, start).get("flags", []) if f["kind"] == kind]
    return found


def test_an_engine_argument_has_its_flag_keyword_and_a_divisor_to_try(sites):
    tp = setting(sites, "Total number of attention heads", "engine-arg")
    assert tp["flag"] == "--tensor-parallel-size"
    assert tp["keyword"] == "LLM(tensor_parallel_size=...)"
    assert tp["url"] == f"{DOCS}configuration/engine_args.html#-tensor-parallel-size-tp"
    # the condition is `heads % tp != 0`: the value that passes is a divisor of the heads the
    # message prints, read from the paste on the page
    assert tp["passes"] == {"op": "divides", "param": "total_num_attention_heads"}


def test_a_model_config_key_comes_from_the_architecture_values_and_cannot_be_changed(sites):
    start = "Total number of attention heads"
    heads = setting(sites, start, "model-config")
    # model_arch_config.total_num_attention_heads <- getattr(hf_text_config, "num_attention_heads")
    assert heads["key"] == "num_attention_heads" and "passes" not in heads
    tries = derived(sites, start)["try"]
    assert tries[0].startswith("Set `--tensor-parallel-size` to a divisor of the ")
    assert any(
        t.startswith("`num_attention_heads` is the model's own, from its config.json, and cannot")
        and t.endswith("change `--tensor-parallel-size` instead.")
        for t in tries
    )


def test_a_bound_from_the_model_is_the_limit_to_try(sites):
    start = "max_model_len ({max_model_len}) is larger"
    assert setting(sites, start, "engine-arg")["passes"] == {
        "op": "<=",
        "param": "max_position_embeddings",
    }
    assert setting(sites, start, "model-config")["key"] == "max_position_embeddings"
    assert derived(sites, start)["try"][0] == (
        "Set `--max-model-len` to at most the `max_position_embeddings` in the message "
        "(in Python: `LLM(max_model_len=...)`)."
    )


def test_config_in_model_code_is_the_models_config_json(sites):
    start = "num_key_value_heads ({num_key_value_heads}) must be divisible"
    assert setting(sites, start, "model-config")["key"] == "num_key_value_heads"
    # tp_size is a parameter nothing traces: no other setting is claimed
    assert derived(sites, start)["try"][0] == (
        "`num_key_value_heads` is the model's own, from its config.json, and cannot be "
        "changed: change what the check compares it with where that is yours to set, or use "
        "another model."
    )


def test_request_fields_of_validators_and_serving_code_say_the_fix_is_in_the_request(sites):
    choice = setting(sites, "tool_choice must be", "request-field")
    assert choice["field"] == "ChatCompletionRequest.tool_choice" and choice["key"] == "tool_choice"
    assert choice["passes"] == {"op": "in", "choices": ["none", "auto", "required"]}
    assert derived(sites, "tool_choice must be")["try"][0] == (
        "In the request, set `tool_choice` to one of `none`, `auto`, `required`: the request "
        "is what fails, not the server's launch."
    )
    tokens = setting(sites, "max_tokens ({max_tokens}) is too large", "request-field")
    assert tokens["key"] == "max_tokens" and tokens["passes"]["op"] == "<="
    temperature = setting(sites, "temperature must be", "request-field")
    assert temperature["keyword"] == "SamplingParams(temperature=...)"
    assert temperature["passes"] == {"op": "<=", "value": 2.0}


def test_environment_variables_known_to_the_project_and_any_other(sites):
    backend = setting(sites, "Unknown toy backend", "env-var")
    assert backend["env"] == "VLLM_TOY_BACKEND"
    assert backend["url"] == f"{DOCS}configuration/env_vars.html"
    assert backend["passes"] == {"op": "in", "choices": ["auto", "toy"]}
    assert derived(sites, "Unknown toy backend")["try"][0] == (
        "Set the environment variable `VLLM_TOY_BACKEND` to one of `auto`, `toy`."
    )
    other = setting(sites, "Toy kernels are turned off", "env-var")
    assert other["env"] == "TOY_KERNELS_OFF" and other["passes"] == {"op": "!=", "value": "1"}


def passes_of(code: str) -> list[dict]:
    """The settings of a one-function module's raise, traced with a knowledge that calls
    every `cfg.x` the engine argument --x."""

    class Toy(explain.Knowledge):
        def setting(self, chain, owner):
            if len(chain) == 2 and chain[0] == "cfg":
                return explain.Setting(chain[1], "--" + chain[1], kind="engine-arg")
            return None

    (site,) = ex.scan_file("m.py", code.encode(), knowledge=Toy()).sites
    return [f.get("passes") for f in site.derived.get("flags", [])]


@pytest.mark.parametrize(
    ("test", "passes"),
    [
        ("cfg.n > 8", {"op": "<=", "value": 8}),
        ("cfg.n < -1", {"op": ">=", "value": -1}),
        ("8 < cfg.n", {"op": "<=", "value": 8}),  # the setting on the right
        ("cfg.n >= limit", {"op": "<", "param": "limit"}),  # the message prints the bound
        ("cfg.n % 16 != 0", {"op": "multiple-of", "value": 16}),
        ("heads % cfg.n", {"op": "divides", "param": "heads"}),  # `if a % b:` is a remainder
        ("cfg.n not in ('a', 'b')", {"op": "in", "choices": ["a", "b"]}),
        ("cfg.n == 'x'", {"op": "!=", "value": "x"}),
        ("cfg.n", {"op": "unset"}),
        ("cfg.n is None", {"op": "set"}),
        ("cfg.n is not None and cfg.n not in (8, 16)", {"op": "in", "choices": [8, 16]}),
        ("cfg.n > 1 or cfg.m", None),  # either may hold: neither alone is enough
    ],
)
def test_the_value_that_passes_comes_from_the_condition(test, passes):
    code = (
        f"def f(cfg, heads, limit):\n    if {test}:\n"
        "        raise ValueError(f'bad {heads} {limit}')\n"
    )
    assert passes_of(code)[0] == passes


def test_a_value_that_passes_is_said_in_words():
    assert explain.value_words({"op": "<=", "value": 4096}) == "at most `4096`"
    assert explain.value_words({"op": "divides", "param": "heads"}) == (
        "a divisor of the `heads` in the message"
    )
    assert explain.value_words({"op": "==", "value": True}) == "`true`"
    entry = {"name": "x", "kind": "engine-arg", "field": "c.mode", "flag": "--cc", "key": "mode"}
    assert explain.to_try({**entry, "passes": {"op": "!=", "value": 3}}) == (
        "Set `mode` in `--cc` to anything but `3`."
    )
    assert explain.to_try(entry) is None  # nothing computed, nothing said
    field = {"name": "t", "kind": "request-field", "field": "request.tools", "key": "tools"}
    assert explain.to_try(field) == (  # but a request field is said to be one
        "`tools` is a field of the request: the fix is in the request, not the launch."
    )
    assert explain.to_try({**field, "passes": {"op": "set"}}) == (
        "In the request, give `tools` (not empty, not false): the request is what fails, "
        "not the server's launch."
    )


def test_reads_of_keys_and_the_environment():
    def chain(code: str):
        return explain.reads(ast.parse(code, mode="eval").body)

    assert chain("cfg['heads']") == ("cfg", "heads")
    assert chain("cfg.get('heads', 0)") == ("cfg", "heads")
    assert chain("getattr(self.hf, 'experts', 0)") == ("self", "hf", "experts")
    assert chain("os.environ['CUDA_VISIBLE_DEVICES']") == ("os.environ", "CUDA_VISIBLE_DEVICES")
    assert chain("os.getenv('VLLM_X')") == ("os.environ", "VLLM_X")
    assert chain("os.environ.get('VLLM_X', '0')") == ("os.environ", "VLLM_X")
    assert chain("cfg[i]") is None
    # a reader of the environment called with the variable's name (SGLang's utils)
    assert chain("get_bool_env_var('SGLANG_X', 'false')") == ("os.environ", "SGLANG_X")
    assert chain("utils.get_int_env_var('SGLANG_N')") == ("os.environ", "SGLANG_N")
    # look-alikes: a setter, a name that is no variable's, a reader of something else
    assert chain("set_env_var('SGLANG_X', '1')") == ("set_env_var()",)
    assert chain("get_bool_env_var(name)") == ("get_bool_env_var()",)
    assert chain("get_config_value('MAX_LEN')") == ("get_config_value()",)


def test_rederive_rewrites_only_derived_blocks_and_creates_nothing(kb, capsys):
    from errorkb.cli import main

    ex.extract(kb, TREE, "demo", asserts=True, printed=True)
    folder = kb / "content/errors/demo"
    heads = next(p for p in folder.glob("*.yaml") if "Total number of attention" in p.read_text())
    text = heads.read_text()
    # derived as an older extract wrote it (no kind, no value to try), and a person's text
    stale = text[: text.index("derived:")] + (
        "solutions:\n  - Written by a person.\nderived:\n  ref: old\n  flags:\n"
        "    - {name: tp, kind: engine-arg, field: parallel_config.tensor_parallel_size, "
        "flag: --tp}\n"
    )
    heads.write_text(stale + text[text.index("analysis:") :])
    gone = next(p for p in folder.glob("*.yaml") if "Unknown toy backend" in p.read_text())
    gone.unlink()
    before = {p.name for p in folder.glob("*.yaml")}

    assert main(["--root", str(kb), "rederive", "--project", "demo", "--wheel", str(TREE)]) == 0
    assert "records: 0 created, 1 updated" in capsys.readouterr().err
    new = heads.read_text()
    assert "solutions:\n  - Written by a person.\n" in new  # a person's text is kept
    flags = __import__("yaml").safe_load(new)["derived"]["flags"]
    assert {f["kind"] for f in flags} == {"model-config", "engine-arg"}
    assert {p.name for p in folder.glob("*.yaml")} == before  # nothing created
    assert main(["--root", str(kb), "rederive", "--project", "demo", "--wheel", str(TREE)]) == 0
    assert "0 updated" in capsys.readouterr().err  # reproducible: a second run changes nothing


@pytest.fixture(scope="module")
def settings_site(tmp_path_factory):
    """The fixture knowledge base with the settings tree extracted into it, built."""
    from errorkb.site.build import build
    from tests.conftest import make_kb

    kb = make_kb(tmp_path_factory.mktemp("settings") / "kb")
    ex.extract(kb, TREE, "demo", asserts=True, printed=True)
    build(kb)
    return kb


def page(kb: Path, start: str) -> str:
    import yaml

    for path in (kb / "content/errors/demo").glob("*.yaml"):
        if yaml.safe_load(path.read_text())["message"].startswith(start):
            return (kb / "site/errors" / path.stem / "index.html").read_text()
    raise AssertionError(start)


@pytest.mark.parametrize(
    ("start", "named"),
    [
        ("tool_choice must be", "<code>tool_choice</code> (a request field)"),
        ("Unknown toy backend", "<code>VLLM_TOY_BACKEND</code></a> (an environment variable)"),
        ("max_model_len ({max", "<code>max_position_embeddings</code> (from the model&#39;s"),
        (
            "Total number of attention",
            '<code class="f">--tensor-parallel-size</code></a> (an engine argument; in Python '
            "<code>LLM(tensor_parallel_size=...)</code>)",
        ),
    ],
)
def test_a_page_names_each_settings_kind(settings_site, start, named):
    assert named in page(settings_site, start)


def test_what_to_try_and_your_case_carry_the_value_that_passes(settings_site):
    import json
    import re

    text = page(settings_site, "Total number of attention")
    section = text[text.index('id="what-to-try"') :]
    assert 'Set <code class="f">--tensor-parallel-size</code> to a divisor of the' in section
    # The page's calculator (or divisor section) answers Your case alone: no second list of
    # values beside it; the API document still carries what passes.
    assert re.search(r"data-passes=", text) is None
    assert 'id="calculator"' in text or 'id="divisors"' in text
    rid = re.search(r'<link rel="canonical" href="[^"]*/errors/([0-9a-f]{16})/"', text)
    assert rid, "the page names its id"
    doc = json.loads((settings_site / f"site/api/errors/{rid.group(1)}.json").read_text())
    assert doc["computed"]["derived"]["passes"] == [
        {
            "write": "--tensor-parallel-size {}",
            "kind": "an engine argument",
            "current": "tensor_parallel_size",
            "op": "divides",
            "param": "total_num_attention_heads",
        }
    ]


def test_a_config_class_of_the_project_checks_the_models_config_json(sites):
    layers = setting(sites, "num_layers must be at least 1", "model-config")
    assert layers["key"] == "num_layers" and "passes" not in layers  # not the user's to set


def test_what_to_try_mentions_the_divisor_calculator_only_where_it_shows(sites):
    listed = "The divisor calculator lists the divisors of `total_num_attention_heads`."
    assert listed in derived(sites, "Total number of attention heads")["try"]
    # a project whose pages have no divisor calculator (no wing: the plain Knowledge)
    code = "def f(a, b):\n    if a % b != 0:\n        raise ValueError(f'{a} by {b}')\n"
    (plain,) = ex.scan_file("m.py", code.encode(), knowledge=explain.Knowledge()).sites
    assert not any("calculator" in t for t in plain.derived["try"])
    # an expression divisor: no calculator either, in any project
    code = "def f(a, b):\n    if a % (2 * b) != 0:\n        raise ValueError(f'{a} by {b}')\n"

    class Calc(explain.Knowledge):
        divisor_calculator = True

    (expr,) = ex.scan_file("m.py", code.encode(), knowledge=Calc()).sites
    assert expr.derived["divisibility"]["divisor"] == "2 * b"
    assert not any("calculator" in t for t in expr.derived["try"])
    (named,) = ex.scan_file("m.py", code.replace("(2 * b)", "b").encode(), knowledge=Calc()).sites
    assert any("(the divisor calculator lists them)" in t for t in named.derived["try"])


@pytest.mark.parametrize(
    ("flag", "problem"),
    [
        ("{name: n, field: f, flag: --f}", "E101 derived.flags[0].kind"),
        ("{name: n, kind: env-var, field: f}", "E101 derived.flags[0].env"),
        ("{name: n, kind: request-field, field: f}", "E101 derived.flags[0].key"),
        ("{name: n, kind: engine-arg, field: f, key: k}", "E101 derived.flags[0].flag"),
        ("{name: n, kind: knob, field: f, flag: --f}", "E103 derived.flags[0].kind"),
        (
            "{name: n, kind: engine-arg, field: f, flag: --f, passes: {op: in, value: 3}}",
            "E103 derived.flags[0].passes",
        ),
    ],
)
def test_a_setting_says_its_kind_and_what_it_is_changed_with(kb, flag, problem):
    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError

    record = kb / "content/errors/demo/00000000000000a1.yaml"
    record.write_text(record.read_text() + f"derived:\n  ref: abc1234\n  flags:\n    - {flag}\n")
    with pytest.raises(ContentError) as info:
        load_content(kb)
    found = {f"{p.code} {p.field}" for p in info.value.problems}
    assert problem in found, found


@pytest.mark.parametrize(
    ("path", "function", "stage"),
    [
        ("vllm/compilation/backends.py", "VllmBackend.__call__", "engine-startup"),
        (
            "vllm/distributed/kv_transfer/kv_connector/v1/nixl.py",
            "Worker.start_load_kv",
            "request-handling",
        ),
        (
            "vllm/distributed/kv_transfer/kv_connector/v1/nixl.py",
            "Worker.register_kv_caches",
            "engine-startup",
        ),
        (
            "vllm/distributed/ec_transfer/ec_connector/base.py",
            "Connector.__init__",
            "engine-startup",
        ),
        ("vllm/distributed/weight_transfer/nccl.py", "Engine.receive_weights", "request-handling"),
        ("vllm/distributed/parallel_state.py", "init_distributed_environment", "engine-startup"),
    ],
)
def test_vllm_stages_of_transfer_and_compilation(path, function, stage):
    """Transfer connectors work while serving (their set-up at start-up), compilation runs at
    start-up: a reader of vLLM 0.33.0 found both called otherwise."""
    from errorkb.projects.vllm.knowledge import VllmKnowledge

    assert VllmKnowledge().stage(path, function) == stage

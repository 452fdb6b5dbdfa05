"""The calculator on SGLang's pages: on a divisibility error whose value is a head count and
whose divisor is the TP size, SGLang's parallel-size calculator (calc.py under Pyodide, with
SGLang's flags); on any other divisibility error between two named quantities, the divisor
calculator. /assets/sglang-calc.json is what the widgets load: the worker, SGLang's calc
module, the inputs' flags, and the build-time answers of "Your case"."""

import json
import re

from errorkb import answer, urls
from errorkb.content.model import Content, Record
from errorkb.projects.sglang import calc, splits
from errorkb.projects.vllm import presets  # content/models.yaml, shared by both engines
from errorkb.site import api
from errorkb.site.pages import fingerprint
from errorkb.sources import explain

MODULE = "sglang-calc.py"  # calc.py, served byte for byte
PROTOCOL = "protocol.py"  # what it imports, served byte for byte (the same file as vLLM's)
CALC_DATA = "sglang-calc.json"
CALCULATOR = "projects/vllm/calculator.html"  # the widget's markup is the same for both wings
DIVISORS = "projects/vllm/divisors.html"
RULES = "SGLang 0.5.23"  # whose rules the build-time answers follow
PRESET_KEYS = ("key", "name", "heads", "kv_heads", "layers", "mla", "architecture")

HEAD_COUNT = re.compile(r"heads$")  # num_heads, total_num_kv_heads (not head_dim)
KV = re.compile(r"kv|key_value", re.I)
TP_SIZE = re.compile(r"^(?:self\.)?(?:tp_size|tp|tp_world_size|tensor_parallel_size)$")

MAX_HEADS = 128  # "Your case" answers every head count up to this at once
KV_COUNTS = (1, 2, 4, 8, 16)  # the KV-head counts of grouped-query models
NODE_GPUS = 8  # the node the advice assumes when the address names none

# The inputs as SGLang's widget shows them: label and the flag or config key beside it.
FIELDS = {
    "architecture": ["Architecture", "config.json: architectures", "arch"],
    "tp": ["Tensor parallel size", "--tp-size"],
    "dp": ["Data parallel size", "--dp-size", "int", "1"],
    "attn_dp": ["Attention DP size", "--attn-dp-size", "int", "1"],
    "dp_attention": ["DP attention", "--enable-dp-attention (deprecated)", "bool"],
    "ep": ["Expert parallel size", "--ep-size", "int", "1"],
    "experts": ["MoE experts", "routed experts: num_experts, n_routed_experts"],
    "pp": ["Pipeline parallel size", "--pp-size", "int", "1"],
    "nnodes": ["Nodes", "--nnodes", "int", "1"],
    "gpus_per_node": ["GPUs per node", "the node the advice fits", "int", "8"],
}


def record_section(record: Record) -> dict | None:
    """The calculator section of an SGLang record's page, from its derived divisibility."""
    div = record.derived.get("divisibility")
    if not div or not explain.divisor_calculator_shows(div):
        return None
    names = {"value": div.get("value_param") or div["value"]}
    names["divisor"] = answer.placeholder(div.get("divisor_param") or div["divisor"], record.params)
    if HEAD_COUNT.search(div["value"]) and TP_SIZE.match(div["divisor"]):
        heads = "kv_heads" if KV.search(div["value"]) else "heads"
        inputs = {heads: names["value"], "tp": names["divisor"]}
        return {
            "template": CALCULATOR,
            "id": "calculator",
            "title": "Calculator",
            "name": "tp_sizes",
            "data": CALC_DATA,
            "inputs": {k: v for k, v in inputs.items() if v in record.params},
            "tables": [],
            "case_answers": False,  # the calculator answers Your case alone, as vLLM's does
        }
    # a divisor the model fixes is not changed; the setting named as the release's parser does
    role = api.divisor_role(record) or answer.divisor_role(record.derived)
    return {
        "template": DIVISORS,
        "id": "divisors",  # the section's anchor and its entry in the table of contents
        "title": answer.divisor_title(role, div),
        "data": CALC_DATA,
        **div,
        **names,
        **role,
        "rows": [],
        "case_answers": False,  # divisors.js answers Your case alone, as on vLLM's pages
    }


def _shapes() -> dict[str, tuple[int, int]]:
    """ "heads" (one KV head per query head) or "heads/kv" -> (heads, kv)."""
    shapes = {(h, h) for h in range(1, MAX_HEADS + 1)}
    shapes |= {(h, kv) for h in range(1, MAX_HEADS + 1) for kv in KV_COUNTS if h % kv == 0}
    return {(str(h) if kv == h else f"{h}/{kv}"): (h, kv) for h, kv in sorted(shapes)}


def calc_data(content: Content, assets: dict[str, bytes]) -> bytes:
    """/assets/sglang-calc.json: what the widgets load."""

    def url(name: str) -> str:
        return f"{urls.asset(name)}?v={fingerprint(assets[name])}"

    shapes = _shapes()
    table = splits.load()
    data = {
        "worker": url("calc-worker.js"),
        "client": url("calc-client.js"),
        "errors_url": urls.error("{}"),
        # The worker answers a request with the module it names, "calc" by default: on
        # SGLang's pages, SGLang's calc.py.
        "modules": {"protocol": url(PROTOCOL), "calc": url(MODULE)},
        "pyodide": urls.pyodide(),
        "calculators": {name: list(spec) for name, spec in calc.CALCULATORS.items()},
        "records": {
            rid: content.records[rid].title for rid in calc.MESSAGES if rid in content.records
        },
        "models": [{k: m[k] for k in PRESET_KEYS if k in m} for m in presets.models(content)],
        # Each architecture's attention layer, as calc.py takes it (splits.json), and the
        # release it was read from; calc.py assumes its ASSUMED for any other.
        "architectures": {
            name: entry["attention"] for name, entry in table["architectures"].items()
        },
        "architectures_release": table["release"],
        "fields": FIELDS,
        "engine": "SGLang",
        "rules": RULES,
        "flags": calc.FLAGS,
        "node_flags": "--node-rank and --dist-init-addr",  # what a second node needs besides
        "tp_table": {key: calc.valid_tp_sizes(h, kv) for key, (h, kv) in shapes.items()},
        "tp_advice": {
            key: [(a := calc.suggest_tp(h, kv, NODE_GPUS))["tp"], a["pp"]]
            for key, (h, kv) in shapes.items()
        },
        "advice_gpus": NODE_GPUS,
    }
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()

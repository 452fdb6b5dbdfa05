"""The calculator on vLLM's pages: static tables computed by calc.py at build time, and
/assets/calc.json, what the widget loads (its worker, calculators, presets, record titles)."""

import json
import re

from errorkb import answer, urls
from errorkb.content.model import Content, Record
from errorkb.projects.vllm import calc, cases, memory, memory_section, presets
from errorkb.site import api
from errorkb.site.pages import fingerprint
from errorkb.sources.explain import divisor_calculator_shows

CALC_DATA = "calc.json"  # what the calculator widget needs, built from content and calc.py
# The flags the widget's advice names, as vLLM spells them.
FLAGS = {"tp": "--tensor-parallel-size", "pp": "--pipeline-parallel-size", "nnodes": "--nnodes"}
TEMPLATE = "projects/vllm/calculator.html"


def record_calculator(record: Record, content: Content) -> dict | None:
    """The calculator section of a record's page: its static tables and widget inputs; for a
    record without one whose condition is a divisibility test, the divisor calculator."""
    if memory_section.wanted(record):
        return memory_section.section(record)
    spec = record.data.get("calculator")
    if not spec or spec["name"] not in calc.CALCULATORS:
        return divisor_calculator(record, content)
    return {
        "template": TEMPLATE,
        "id": "calculator",  # the section's anchor and its entry in the table of contents
        "title": "Calculator",
        "name": spec["name"],
        "data": CALC_DATA,
        "inputs": spec.get("inputs", {}),
        "tables": calc_tables(spec["name"], presets.models(content)),
        # Your case answers with the calculator (it runs the check's rules on any values),
        # not with the condition's tests or what passes: tests.js beside calc.js is over the
        # pages' budget, and the calculator's answer needs no second one.
        "case_answers": False,
    }


def calc_page(pages) -> bytes:
    """/calc/: the full calculator, the MoRIIO one and the memory estimate."""
    models = presets.models(pages.content)
    return pages.page(
        "projects/vllm/calc.html",
        urls.calc(),
        "Parallel-size calculator",
        "Valid tensor, pipeline and decode context parallel sizes for a model, "
        "and the first error vLLM raises for yours.",
        widgets=[
            {
                "id": "parallel",
                "title": "Parallel sizes",
                "name": FULL,
                "data": CALC_DATA,
                "sync": True,
                "tables": calc_tables(FULL, models),
            },
            {
                "id": "moriio",
                "title": "MoRIIO disaggregated prefill/decode",
                "name": "moriio",
                "data": CALC_DATA,
                "sync": True,
                "tables": calc_tables("moriio", models),
            },
        ],
        memory=memory_section.section(),
    )


DIVISORS_TEMPLATE = "projects/vllm/divisors.html"
# Head counts the divisor calculator answers without JavaScript: those of the presets, and
# these common ones of models outside them.
COMMON_HEADS = (12, 14, 20, 24, 48, 56, 96)
HEAD_COUNT = re.compile(r"heads$")  # num_heads, total_num_kv_heads (not head_dim)


def divisor_calculator(record: Record, content: Content) -> dict | None:
    """The divisor calculator ("valid values of `tp_size` for `heads` = 20: 1, 2, 4, 5, 10,
    20") of a record whose derived condition is `value % divisor != 0`, both named quantities
    (the valid values of `2 * world_size` are not the divisors of the value). Its static
    table of common values only where the value is a head count."""
    div = record.derived.get("divisibility")
    if not div or not divisor_calculator_shows(div):
        return None
    rows = []
    if HEAD_COUNT.search(div["value"]):
        heads = {m[k] for m in presets.models(content) for k in ("heads", "kv_heads") if k in m}
        rows = [[n, _sizes(calc.divisors(n))] for n in sorted(heads | set(COMMON_HEADS))]
    # Named as the message names them: the placeholders the address fills.
    names = {"value": div.get("value_param") or div["value"]}
    names["divisor"] = answer.placeholder(div.get("divisor_param") or div["divisor"], record.params)
    # a divisor the model fixes is not changed; the setting named as the release's parser does
    role = api.divisor_role(record) or answer.divisor_role(record.derived)
    return {
        "template": DIVISORS_TEMPLATE,
        "data": CALC_DATA,
        "id": "divisors",  # the section's anchor and its entry in the table of contents
        "title": answer.divisor_title(role, div),
        **div,
        **names,
        **role,
        "rows": [] if role["fixed"] else rows,
        # Its script answers Your case for the values (divisors.js), alone: the condition's
        # tests beside it would load tests.js over the pages' 50 KB of scripts.
        "case_answers": False,
    }


FULL = "parallel"  # the /calc/ page's widget: every input of the summary calculators


DCP_TABLE_TP = (4, 8, 16)  # TP sizes the static DCP table has a column for


MORIIO_TABLE_TP = (1, 2, 4, 8, 16)  # TP sizes the static MoRIIO table pairs up


def calculators() -> dict[str, tuple[str, tuple[str, ...]]]:
    """calc.CALCULATORS, plus the full widget of /calc/."""
    fields = []
    for op, inputs in calc.CALCULATORS.values():
        fields += [name for name in inputs if op == "summary" and name not in fields]
    return {**calc.CALCULATORS, FULL: ("summary", tuple(fields))}


def calc_data(content: Content, assets: dict[str, bytes], modules: list[str]) -> bytes:
    """/assets/calc.json: the widget's worker and URLs of the calculator modules (`modules`:
    their file names among `assets`), calculators, presets, and
    the titles of the records the calculator can name (so its answers link to them)."""

    def url(name: str) -> str:
        return f"{urls.asset(name)}?v={fingerprint(assets[name])}"

    keys = ("key", "name", "heads", "kv_heads", "layers", "mla")
    models = presets.models(content)
    data = {
        "worker": url("calc-worker.js"),
        "client": url("calc-client.js"),  # the page's side of the worker, shared by the widgets
        "errors_url": urls.error("{}"),  # where an answer's record lives
        # The calculator modules, by name (the worker runs a request's `module`).
        "modules": {name.removesuffix(".py"): url(name) for name in modules},
        "pyodide": urls.pyodide(),  # the folder the worker loads Pyodide from
        "calculators": {name: list(spec) for name, spec in calculators().items()},
        "records": {
            rid: content.records[rid].title
            for rid in [*calc.MESSAGES, *memory.RECORDS]
            if rid in content.records
        },
        "models": [{k: m[k] for k in keys if k in m} for m in models],
        "tp_table": cases.tp_table(models),  # "Your case" answers without Pyodide
        "tp_advice": cases.tp_advice(models),  # and what to start instead, on 8 GPUs
        "advice_gpus": cases.NODE_GPUS,
        "engine": "vLLM",
        "rules": "vLLM 0.33.0",  # whose rules the build-time answers follow
        "flags": FLAGS,
        "node_flags": "--node-rank and --master-addr",  # what a second node needs besides
    }
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def _model_groups(models: list[dict], key) -> list[tuple[str, dict]]:
    """Models with the same values for the calculator, as ("name, name", first model)."""
    groups: dict = {}
    for model in models:
        groups.setdefault(key(model), []).append(model)
    return [(", ".join(m["name"] for m in ms), ms[0]) for ms in groups.values()]


def _shape(model: dict) -> tuple[int, int, bool]:
    return model["heads"], model.get("kv_heads", model["heads"]), model.get("mla", False)


def _sizes(values) -> str:
    return ", ".join(map(str, values)) or "none"


NODE_GPUS = 8  # the static tables assume the common 8-GPU server


BEYOND_NODE = f"* more than one {NODE_GPUS}-GPU node: start it with --nnodes"


def _tp(tp: int) -> str:
    """A TP size, marked * when vLLM's world-size check refuses it on one 8-GPU node."""
    error = calc.first_error(None, tp=tp, gpus_per_node=NODE_GPUS)
    return f"{tp}*" if error and error.id == calc.WORLD_GPUS else str(tp)


def _pairs(pairs: list[tuple[int, int]], sizes: tuple[int, ...]) -> str:
    """(1, 2), (2, 1), (2, 4) -> "1↔2, 2→4": both directions collapse to one ↔."""
    if len(pairs) == len(sizes) * (len(sizes) - 1):
        return "all"
    out = []
    for a, b in pairs:
        if (b, a) in pairs:
            if a < b:
                out.append(f"{a}↔{b}")
        else:
            out.append(f"{a}→{b}")
    return ", ".join(out) or "none"


def calc_tables(name: str, models: list[dict]) -> list[dict]:
    """Static tables for readers without JavaScript, every cell computed by calc.py.

    A table is a caption, columns and rows; models with identical answers share a row.
    """
    tables = {
        "tp_sizes": [_tp_table],
        "dcp_sizes": [_dcp_table],
        "moriio": [_moriio_table],
        FULL: [_tp_table, _dcp_table],
    }
    return [table(models) for table in tables.get(name, [])]


def _tp_table(models: list[dict]) -> dict:
    rows = []
    for names, m in _model_groups(models, _shape):
        heads, kv, mla = _shape(m)
        sizes = _sizes(map(_tp, calc.valid_tp_sizes(heads, kv, mla=mla)))
        rows.append([names, heads, _kv_label(m), sizes])
    return {
        "caption": "Tensor parallel sizes that pass vLLM's attention-head checks (config and "
        "load); the MLP width and vocabulary must also divide, which this table does not check. "
        f"{BEYOND_NODE}",
        "columns": ["Models", "Heads", "KV heads", "Valid TP sizes"],
        "rows": rows,
    }


def _dcp_table(models: list[dict]) -> dict:
    rows = []
    for names, m in _model_groups(models, _shape):
        heads, kv, mla = _shape(m)
        valid_tp = calc.valid_tp_sizes(heads, kv, mla=mla)
        cells = [
            _sizes(calc.valid_dcp_sizes(heads, kv, tp, mla)) if tp in valid_tp else "–"
            for tp in DCP_TABLE_TP
        ]
        rows.append([names, heads, _kv_label(m), *cells])
    return {
        "caption": "Decode context parallel sizes that pass, by tensor parallel size "
        f"(–: that TP size fails by itself; {BEYOND_NODE})",
        "columns": [
            "Models",
            "Heads",
            "KV heads",
            *(f"TP {_tp(tp)}" for tp in DCP_TABLE_TP),
        ],
        "rows": rows,
    }


def _moriio_table(models: list[dict]) -> dict:
    rows = []
    for names, m in _model_groups(models, lambda m: _shape(m)[1:]):
        _, kv, mla = _shape(m)
        cells = []
        for mode in ("read", "write"):
            pairs = [
                (prefill, decode)
                for prefill in MORIIO_TABLE_TP
                for decode in MORIIO_TABLE_TP
                if prefill != decode
                and calc.moriio_first_error(prefill, decode, kv, mode, mla) is None
            ]
            cells.append(_pairs(pairs, MORIIO_TABLE_TP))
        rows.append([names, _kv_label(m), *cells])
    return {
        "caption": "Different prefill → decode TP sizes that MoRIIO accepts "
        f"(among {_sizes(MORIIO_TABLE_TP)})",
        "columns": ["Models", "KV heads", "READ", "WRITE"],
        "rows": rows,
    }


def _kv_label(model: dict) -> str:
    heads, kv, mla = _shape(model)
    return f"{kv} (MLA)" if mla else str(kv)

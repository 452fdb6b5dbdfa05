"""The setting a user changes for a divisibility check, as the engine's parser spells it at
the release the check was read from (generator/flags/<project>-<version>.json): the answer
names `--tensor-parallel-size`, never the code's `tp_size` (issue 44: "Change it to 5" about
`tp_size` told the user nothing they could type).

`divisor_setting(record)` is the divisor's role (answer.divisor_role: whether the model fixes
it, and the setting that splits the value) completed from the parser where the record's
derived flags name no setting:

- a divisor the user sets (`tp_size`, `ep_size`): the option whose dest is its name, or the
  engine's other name for it (vLLM's `tensor_parallel_size` is SGLang's `tp_size`);
- a vLLM expert-parallel size, which no option sets alone: the data × tensor parallel sizes
  (vLLM's EP group spans dp × pcp × tp ranks, distributed/parallel_state.py);
- a value that is one GPU's slice of a divisor the model fixes (`block_n`): the release's
  tensor parallel option;
- whether the divisor is a count of GPUs (`gpus`: its valid values within one node), a GPU
  group's size among them (`world_size`: answer.GPU_GROUP, never "fixed by the model").

Computed when the site is built (the API document's computed.derived.divisor, the page's
divisor section): answer.py stays a pure function of the document."""

import json
import re
from functools import cache

from errorkb import answer
from errorkb.content.flags import FOLDER, data_path

# An engine's other names for one parallel size: its code's and its parser's.
ALIASES = {
    "tp_size": ("tensor_parallel_size",),
    "tensor_parallel_size": ("tp_size",),
    "tp_world_size": ("tp_size", "tensor_parallel_size"),
    "pp_size": ("pipeline_parallel_size",),
    "pipeline_parallel_size": ("pp_size",),
    "dp_size": ("data_parallel_size",),
    "data_parallel_size": ("dp_size",),
    "ep_size": ("expert_parallel_size",),
    "moe_ep_size": ("ep_size", "expert_parallel_size"),
    "expert_parallel_size": ("ep_size",),
    "ulysses_world_size": ("ulysses_degree",),
    "dcp_size": ("decode_context_parallel_size",),
    "decode_context_parallel_size": ("dcp_size",),
}
# Sizes no one option sets: what sets them, in words the answer reads after "Change".
COMPOSED = {
    ("vllm", "ep_size"): "the expert-parallel size (--data-parallel-size × --tensor-parallel-size)",
}
TENSOR_PARALLEL = ("tensor_parallel_size", "tp_size")


# The words a message says a GPU group's size with, right before it ("the Ulysses degree
# {world_size}", "DCP world size {world_size}"): the sizes of the parser that set it.
SAID = (
    (re.compile(r"\bDCP\b|decode[- ]context[- ]parallel", re.I), ("dcp_size",)),
    (re.compile(r"\bUlysses\b", re.I), ("ulysses_degree",)),
    (re.compile(r"\bsequence[- ]parallel\b|\bSP (degree|world)", re.I), ("sp_degree",)),
    (re.compile(r"\bTP\b|tensor[- ]parallel", re.I), TENSOR_PARALLEL),
    (re.compile(r"\bPP\b|pipeline[- ]parallel", re.I), ("pipeline_parallel_size", "pp_size")),
)
# SGLang's diffusion runtime: its settings are `sglang generate`'s (its own parser data).
PROGRAMS = {("sglang", "multimodal_gen"): "generate"}


@cache
def _options(project: str, version: str, program: str = "") -> dict[str, str]:
    """dest -> the option's first long spelling, of the project's parser at a release (or
    another program's of the project: SGLang's `sglang generate`)."""
    out: dict[str, str] = {}
    names = [data_path(project, version, program)]
    for path in names:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        for option in data.get("options", []):
            spelled = [s for s in option["strings"] if s.startswith("--")]
            if spelled:
                out.setdefault(option["dest"], spelled[0])
    return out


def _version_key(version: str) -> list:
    return [int(n) if n.isdigit() else n for n in re.findall(r"\d+|[a-z]+", version)]


@cache
def _pinned(project: str) -> str:
    """The newest release with parser data (the pinned one: the data is made for it)."""
    found = [
        p.stem[len(project) + 1 :]
        for p in FOLDER.glob(f"{project}-*.json")
        if re.fullmatch(r"[\d.]+(post\d+)?", p.stem[len(project) + 1 :])
    ]
    return max(found, key=_version_key) if found else ""


def release_of(record) -> str:
    """The release whose parser reads the record's derived block: the one its block names
    (`derived.ref` v<version>), a removed record's last, else the pinned one, where there is
    data of it."""
    project = getattr(record, "project", "")
    ref = str((record.derived or {}).get("ref") or "")
    last = str((getattr(record, "versions", None) or {}).get("last") or "")
    tried = [ref[1:]] if ref.startswith("v") else []
    tried += [last] if getattr(record, "status", "") == "removed" else []
    for version in tried:
        if data_path(project, version).exists():
            return version
    return _pinned(project)


def option(project: str, version: str, name: str, program: str = "") -> str:
    """The option that sets a quantity of the code's name, as the parser spells it; ""."""
    options = _options(project, version, program) if version else {}
    for dest in (name, *ALIASES.get(name, ())):
        if dest in options:
            return options[dest]
    return ""


def divisor_setting(record) -> dict | None:
    """The role of the record's divisor (answer.divisor_role) with its setting spelled by the
    release's parser, and `gpus`: whether the divisor is a count of GPUs (its valid values
    within one node). None without a divisibility check."""
    derived = record.derived or {}
    div = derived.get("divisibility")
    if not div:
        return None
    role = dict(answer.divisor_role(derived))
    project, version = getattr(record, "project", ""), release_of(record)
    path = str(((getattr(record, "data", None) or {}).get("source") or {}).get("path") or "")
    program = next((p for (k, part), p in PROGRAMS.items() if k == project and part in path), "")
    name = answer.last_part(div.get("divisor", ""))

    def first(names) -> str:
        return next((o for o in (option(project, version, n, program) for n in names) if o), "")

    if not role["setting"]:
        if not role["fixed"]:
            role["setting"] = first([name]) or COMPOSED.get((project, name), "")
            if not role["setting"] and answer.GPU_GROUP.match(name):
                role["setting"] = first(said_size(record, div))
        elif role.get("per_rank"):
            role["setting"] = first(TENSOR_PARALLEL)
    role["gpus"] = not role["fixed"] and answer.gpu_count(div, role["setting"])
    return role


def said_size(record, div: dict) -> tuple[str, ...]:
    """The parser's names of the size a message says a GPU group's divisor is, in the words
    right before its placeholder ("must be divisible by the Ulysses degree {world_size}");
    () when the words name no one size."""
    names = getattr(record, "params", None) or {}
    hole = answer.placeholder(div.get("divisor_param") or div.get("divisor"), names)
    message = getattr(record, "message", "") or ""
    at = message.find("{" + str(hole) + "}")
    if at < 0:
        return ()
    before = message[:at].rsplit("}", 1)[-1][-60:]
    found = [names for words, names in SAID if words.search(before)]
    return found[0] if len(found) == 1 else ()

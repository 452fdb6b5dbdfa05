"""vLLM's record checks: calculator inputs (E112, of stack records too), `checks` claims run
through calc.py (E113), and example commands run on the machine their text states (E120: a
stack record's advice for vLLM too)."""

import re
import shlex

from errorkb.content import flags, template
from errorkb.content.model import Content, Problem, Record
from errorkb.projects.vllm import calc, memory, memory_section, presets

# Functions of generator/calc.py that a record's `checks` may call.
CHECK_FUNCTIONS = ("first_error", "moriio_first_error")


def record_problems(record: Record) -> list[Problem]:
    """The calculator a record names and the claims of its `checks`."""
    found = _calculator_problems(record) if "calculator" in record.data else []
    for i, check in enumerate(record.data.get("checks", [])):
        found += _check_problems(record, i, check)
    return found


def _calculator_problems(record: Record) -> list[Problem]:
    src, spec, found = record.source, record.data["calculator"], []
    known = {name: inputs for name, (_, inputs) in calc.CALCULATORS.items()}
    known[memory_section.NAME] = memory.FIELDS
    if spec["name"] not in known:
        return [
            Problem(
                src.path,
                src.line("calculator", "name"),
                "E112",
                "calculator.name",
                f"unknown calculator {spec['name']!r}; use one of: {', '.join(known)}",
            )
        ]
    inputs = known[spec["name"]]
    names = template.placeholders(record.message)
    for key, placeholder in spec.get("inputs", {}).items():
        if key not in inputs:
            why = f"{spec['name']} has no input {key!r}; inputs: {', '.join(inputs)}"
        elif placeholder not in names:
            why = f"{{{placeholder}}} is not a placeholder of message"
        else:
            continue
        line = src.line("calculator", "inputs", key)
        found.append(Problem(src.path, line, "E112", f"calculator.inputs.{key}", why))
    return found


def _check_problems(record: Record, i: int, check: dict) -> list[Problem]:
    """Run one claim of `checks` through the calculator; a false claim is a problem."""
    function = check.get("function", "first_error")
    why: str | None
    if function not in CHECK_FUNCTIONS:
        why = f"unknown function {function!r}; use one of: {', '.join(CHECK_FUNCTIONS)}"
    else:
        why = _false_claim(function, check)
    if why is None:
        return []
    return [Problem(record.path, record.source.line("checks", i), "E113", f"checks[{i}]", why)]


def _false_claim(function: str, check: dict) -> str | None:
    """Why the calculator contradicts the claim, or None when it agrees."""
    try:
        result = getattr(calc, function)(**check["given"])
    except (TypeError, calc.CalcInputError) as exc:
        return f"cannot run {function}: {exc}"
    got = result.id if result else "ok"
    if got == check["expect"]:
        return None
    said = result.message if result else "no error"
    return (
        f"claims {check['expect']} but {function}({_kwargs(check['given'])}) gives "
        f"{got}: {said}; correct the claim or the calculator"
    )


def _kwargs(given: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in given.items())


# Example commands ----------------------------------------------------------
# Each vLLM launch in a record's example fix or a guide's shell block runs through calc.py
# on the machine the text states. What the text says: a fix's `before` stops with the
# record's own error, everything else starts; a `# fails: <id>` comment on the line of a
# command or just above it says which error that one stops with.

_SHELL = {"", "bash", "sh", "shell", "console", "zsh"}


_FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)


_FAILS = re.compile(r"#\s*fails:\s*([0-9a-f]{16})\b")


_SEPARATORS = {";", "&&", "||", "|", "&", ";;"}


PLACEMENT = "more workers than GPUs on a node"


def command_problems(content: Content) -> list[Problem]:
    """E120 for every example command that vLLM would stop otherwise than its text says."""
    models = _models_by_name(presets.models(content))
    found = []
    for record in content.records.values():
        for at, fix in _example_fixes(record):
            found += _fix_problems(record, at, fix, models)
        if "calculator" in record.data and _is_stack(record, content):
            found += _calculator_problems(record)  # a stack record's, with vLLM's calculators
    for guide in content.guides:
        machine = (guide.gpus_per_node, guide.nodes)
        for match in _FENCE.finditer(guide.body):
            if match.group(2).lower() not in _SHELL:
                continue
            first = guide.body_line + guide.body[: match.start(3)].count("\n")
            for offset, words, claim in _commands(match.group(3)):
                why = _command_problem(words, claim, machine, models)
                if why:
                    found.append(Problem(guide.path, first + offset, "E120", "(code)", why))
    return found


def _is_stack(record: Record, content: Content) -> bool:
    project = content.projects.get(record.project)
    return project is not None and project.kind == "stack"


def _example_fixes(record: Record) -> list[tuple[tuple[str, ...], dict]]:
    """The record's example fixes with vLLM commands, each with where it is: its own, and
    a stack record's advice for vLLM."""
    fixes: list[tuple[tuple[str, ...], dict | None]] = [
        (("example_fix",), record.data.get("example_fix")),
        (("engines", "vllm", "example_fix"), record.engines.get("vllm", {}).get("example_fix")),
    ]
    return [(at, fix) for at, fix in fixes if fix]


def _fix_problems(record: Record, at: tuple[str, ...], fix: dict, models) -> list[Problem]:
    """E120 for the commands of one example fix: `before` must stop with the record's error
    (or the one its comment names), `after` must start."""
    found = []
    machine = (fix.get("gpus_per_node", 8), fix.get("nodes"))
    for side, default in (("before", record.id), ("after", None)):
        block = fix[side]
        if block.get("language", "") not in _SHELL:
            continue
        first = record.source.line(*at, side, "code") + ("\n" in block["code"])  # a | block
        for offset, words, claim in _commands(block["code"]):
            why = _command_problem(words, claim or default, machine, models)
            if why:
                field = ".".join((*at, side))
                found.append(Problem(record.path, first + offset, "E120", field, why))
    return found


def _models_by_name(models: list[dict]) -> dict[str, dict]:
    """Presets by their Hugging Face name and key, as a command names its model."""
    named = {}
    for model in models:
        for name in (model["key"], model.get("hf")):
            if name:
                named[name.lower()] = model
    return named


def _commands(code: str):
    """(line offset, words, claimed error id or None) of each command in a shell snippet,
    joining backslash-continued lines; separators (;, &&, |) split commands."""
    claim = None
    for start, logical in flags.logical_lines(code):
        found = _FAILS.search(logical)
        if logical.startswith("#"):
            claim = found.group(1) if found else claim
        else:
            for words in _split(logical):
                yield start, words, found.group(1) if found else claim
            claim = None


def _split(line: str) -> list[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not a command this check can read
        return []
    commands: list[list[str]] = []
    words: list[str] = []
    for token in tokens + [";"]:
        if token in _SEPARATORS:
            commands, words = commands + [words] * bool(words), []
        else:
            words.append(token)
    return commands


def _command_problem(words, expect, machine, models) -> str | None:
    """Why vLLM would not do what the text says of this command, or None."""
    read = calc.read_command(words)
    if read is None:
        return None
    gpus, nodes = machine
    if read["visible_gpus"] is not None:
        gpus = min(gpus, read["visible_gpus"])
    model = models.get((read["model"] or "").lower().rstrip("/"))
    settings = read["settings"]
    place = {k: v for k, v in settings.items() if k != "dcp"}
    rules = {k: v for k, v in settings.items() if k != "dp_local"}
    try:
        shape = model and (model["heads"], model.get("kv_heads"), model.get("mla", False))
        heads, kv, mla = shape or (None, None, False)
        result = calc.first_error(heads, kv, mla=mla, gpus_per_node=gpus, **rules)
        plan = calc.node_plan(calc.launch_inputs(gpus_per_node=gpus, **place), nodes)
    except (calc.CalcInputError, TypeError) as exc:
        return f"cannot check `{_command_text(words)}`: {exc}"
    got, said = (result.id, result.message) if result else (None, None)
    if got is None and plan["fits"] is False:
        got, said = PLACEMENT, plan["note"]
    if got == expect:
        return None
    if got is None:
        checkable = calc.MODEL_FREE if model is None else calc.FIRST_ERRORS
        if expect not in checkable:
            return None  # an error calc.py does not model, or needs the model's heads
        return f"`{_command_text(words)}` is said to fail with {expect}, but passes every check"
    said = (said or "").split("\n")[0]
    if expect is None:
        return (
            f"`{_command_text(words)}` would stop with {got}: {said} (on {gpus} GPUs per node; "
            "give the multi-node flags or state the machine: gpus_per_node, nodes)"
        )
    shown = _command_text(words)
    return f"`{shown}` is said to fail with {expect}, but stops first with {got}: {said}"


def _command_text(words: list[str]) -> str:
    text = " ".join(words)
    return text if len(text) <= 90 else text[:87] + "..."

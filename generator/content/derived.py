"""The words of a record's derived block, shared by every stage that shows one: when a check
runs (STAGES), what kind of check it is (CATEGORIES), where a setting comes from (KINDS), and
how a user writes a setting (handle, write_pattern), and how a condition names a lookup's
result it finds empty (emptied). The schema's enums, the extractor's rules, the pages, the API
and the issue bot all read them here.
"""

import ast

STAGES = {
    "argument-parsing": "argument parsing",
    "config-validation": "configuration validation",
    "model-loading": "model loading",
    "engine-startup": "engine start-up and KV-cache sizing",
    "request-handling": "request handling",
    "kernel-selection": "kernel and platform selection",
}
# What each stage means, for the rules (the wings' `stage`) and for a person labelling records
# by hand alike: where a user meets the error, judged from the code that runs the check. The
# schema's description of `derived.stage` says the same (tests/test_explain.py checks it).
STAGE_MEANS = {
    "argument-parsing": (
        "the command line or the Python keywords are read into arguments, and checked against "
        "each other where they are read (the parser, a CLI subcommand's checks of its flags)"
    ),
    "config-validation": (
        "the arguments are turned into config objects and checked (a config's post-init, a "
        "platform's or a model's fix-ups of the config, the offline LLM(...) constructor's "
        "conversion of its keywords), before any weights are read"
    ),
    "model-loading": (
        "the model is built and its weights read (a layer's or a quantization method's set-up, "
        "a checkpoint's loader, a getter the model's build calls)"
    ),
    "engine-startup": (
        "the engine is built before it serves: workers, process groups, KV-cache sizing, "
        "compilation, and the dummy forward passes of memory profiling, warm-up and graph "
        "capture; a check in a model's forward that every pass runs is dated here, since the "
        "profiling run meets it first (not in a server that neither profiles nor warms up by "
        "default, as SGLang's diffusion server: there a request meets it first)"
    ),
    "request-handling": (
        "the server serves: a request's fields and inputs are checked, and a step's batch is "
        "scheduled, built and sampled; a check of what only real requests bring (a batch's "
        "make-up, speculative rows, a session's state) and a background thread's work while "
        "serving (polls, transfers, monitors) are dated here, even where the warm-up runs the "
        "same code first"
    ),
    "kernel-selection": (
        "a kernel, an attention, MoE or all-reduce backend, or a platform path is chosen and "
        "checked against what it supports (GPU architecture, dtype, head size, block size), "
        "also where a layer's set-up refuses the backend chosen for it (a MoE backend and the "
        "checkpoint's expert dtype); also a kernel op's own checks of the arguments its caller "
        "passes"
    ),
}
CATEGORIES = {
    "divisibility": "divisibility",
    "limit": "limit or range",
    "unsupported-combination": "unsupported combination",
    "missing-dependency": "missing dependency",
    "not-implemented": "not implemented",
    "invalid-choice": "invalid choice",
    "mismatch": "shape or type mismatch",
    "not-found": "file or resource not found",
    "invariant": "internal invariant",
    "logged": "reported in the log",
    "runtime-failure": "runtime failure (a process or a connection)",
}

# What each category means, for the rules (explain.category) and a person labelling alike.
# The schema's description of `derived.category` says the same.
CATEGORY_MEANS = {
    "divisibility": "a value must divide, or be a multiple of, another",
    "limit": (
        "a value is outside a range: too large, too small, negative, not finite (also where a "
        "type test only makes the range test possible: 'must be a valid port')"
    ),
    "unsupported-combination": (
        "two or more things the user chose (settings, the model, the platform, a backend) "
        "that the code refuses together ('X is only available on CUDA platforms' too)"
    ),
    "missing-dependency": (
        "a package, module or library the code needs is not installed (also a test of the "
        "flag a guarded import set: `if not HAS_TILELANG`)"
    ),
    "not-implemented": (
        "the code has no path for this yet, as its words say ('not implemented', 'not "
        "supported yet', 'not supported for now'); a NotImplementedError saying 'X does not "
        "support Y' too, where the authors mark the pairing as not written yet"
    ),
    "invalid-choice": "a value is not one of those accepted (an unknown name, key or mode)",
    "mismatch": (
        "the shape, type, length or count of what the user supplies (a request's inputs, a "
        "checkpoint's tensors, a config's values, a model's output the parser reads) disagrees "
        "with what the code expects"
    ),
    "not-found": "a file, a model, a key or a resource is not there",
    "invariant": (
        "a state the code itself should guarantee: a contract between its own functions, an "
        "order of calls ('X requires start_prefetch()'), a shape or value it computed; no "
        "setting of the user's decides it, even where a rare case trips it (an assert whose "
        "message names the setting its test reads checks the user's value)"
    ),
    "logged": (
        "a log line that reports a state or a choice and lets the program go on; nothing failed "
        "(an info line that names a bound it chose by, 'because free memory is at least …', or "
        "prints a shape or a dtype); a warning that a check refused something and the code "
        "goes on without it ('X does not support world_size=3; falling back') is of that "
        "check's kind, and the page says the program went on"
    ),
    "runtime-failure": (
        "an operation failed while it ran, not a check of values: a process exiting, a "
        "connection, a peer, a transfer or a notification failing, a wait timing out; an error "
        "log line that reports such a failure caught is one too, and so is a warning there that "
        "a peer or its channel could not be reached, or a line at any level there that says "
        "such an operation failed and what the code does instead ('export failed on rank {r}; "
        "falling back to POSIX fd transport'); so is a call that returned a failing "
        "status ('push failed with status {ret}' for `ret != 0`)"
    ),
}

# What a record's derived `flags` trace, for the rules and a person labelling alike.
FLAGS_MEANS = (
    "the settings the raise's own condition and placeholders read, traced through its "
    "function's variables and its class's attributes to a flag, an environment variable, a "
    "request field or a config.json key, and the settings the message names in its words; not "
    "a setting that only decides, in a caller, whether this code runs at all (which parser, "
    "loader or backend is in use): the page names that where the caller's check is a record; "
    "nor what a request asks about (its prompt, messages, inputs or ids), which is no setting"
)

# The kinds of setting a failing value can come from, as a page names them.
KINDS = {
    "engine-arg": "an engine argument",
    "server-arg": "a server argument",
    "request-field": "a request field",
    "env-var": "an environment variable",
    "model-config": "from the model's config.json",
}


# The kinds of check that say a value of the user's is refused. Where a raise tests no setting
# the rules traced, whether its values are the user's or the code's own (a shape it computed)
# is not known, and blind samples found those claims right 45 times in 74 (61%), against 17 in
# 19 where a setting is traced (derived-truth 7303 to 7309, adjudicated where a reader did).
# There the knowledge base claims no kind of check, and writes no explanation or tries from one.
REFUSALS = frozenset({"limit", "mismatch", "invalid-choice", "unsupported-combination"})
_FROM_THE_KIND = ("category", "explanation", "try")


def claimed(block: dict, kind: str, level: str = "") -> dict:
    """A derived block as the knowledge base claims it (`kind`: raise, assert, log or http;
    `level`: a log line's): without the kind of check, and the explanation and tries written
    from it, where a raise refuses values no setting of the user's is traced to (REFUSALS).
    A warning or an error log line the rules call "logged" (nothing failed: their fallback
    where they see no check) keeps its explanation, which says only that it was logged and
    what that means, but claims no kind: it reports a check refused or an operation failed,
    and the rules did not see which (labelled samples: an error line's "logged" was wrong 4
    times in 4, a warning's 10 in 22, an info line's right 39 in 39). Other log lines and
    API errors keep their kind: the first say the program went on, the second answer a
    request."""
    traced = any(f.get("kind") != "model-config" for f in block.get("flags", ()))
    if block.get("category") in REFUSALS and kind in ("raise", "assert") and not traced:
        return {k: v for k, v in block.items() if k not in _FROM_THE_KIND}
    if kind == "log" and level in _FAILED_LEVELS and block.get("category") == "logged":
        return {k: v for k, v in block.items() if k != "category"}
    return block


_FAILED_LEVELS = ("warning", "error", "critical")  # levels that report a check or a failure


def handle(entry: dict) -> str:
    """What the user writes to change a setting: its flag (with the key of a JSON flag), its
    environment variable, or its key in the request body or the model's config.json."""
    if entry.get("flag"):
        return entry["flag"] + (f" '{{\"{entry['key']}\": …}}'" if entry.get("key") else "")
    return entry.get("env") or entry.get("key") or entry["field"]


def write_pattern(entry: dict) -> str:
    """How the user writes a value of the setting, `{}` for the value: `--max-model-len {}`,
    `VLLM_X={}`, `"max_tokens": {}` (in the request's JSON)."""
    if entry.get("flag") and entry.get("key"):
        return entry["flag"] + " '{\"" + entry["key"] + "\": {}}'"
    if entry.get("flag") and entry.get("command"):  # another program's: `sglang generate --x {}`
        return entry["command"] + " " + entry["flag"] + " {}"
    if entry.get("flag"):
        return entry["flag"] + " {}"
    if entry.get("env"):
        return entry["env"] + "={}"
    return '"' + entry.get("key", entry["field"]) + '": {}'


def emptied(test: ast.expr) -> ast.Name | None:
    """The name a condition finds empty, `not found` or `found is None`: how the extractor
    writes a lookup's miss into `derived.lookups`, and how the pages read it back."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name = test.operand
    elif is_none(test):
        name = test.left  # type: ignore[attr-defined]
    else:
        return None
    return name if isinstance(name, ast.Name) else None


def is_none(test: ast.expr) -> bool:
    """`x is None`."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )

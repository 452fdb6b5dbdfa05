"""The words of a record's derived block, shared by every stage that shows one: when a check
runs (STAGES), what kind of check it is (CATEGORIES), where a setting comes from (KINDS), and
how a user writes a setting (handle, write_pattern). The schema's enums, the extractor's rules,
the pages, the API and the issue bot all read them here.
"""

STAGES = {
    "argument-parsing": "argument parsing",
    "config-validation": "configuration validation",
    "model-loading": "model loading",
    "engine-startup": "engine start-up and KV-cache sizing",
    "request-handling": "request handling",
    "kernel-selection": "kernel and platform selection",
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

# The kinds of setting a failing value can come from, as a page names them.
KINDS = {
    "engine-arg": "an engine argument",
    "server-arg": "a server argument",
    "request-field": "a request field",
    "env-var": "an environment variable",
    "model-config": "from the model's config.json",
}


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
    if entry.get("flag"):
        return entry["flag"] + " {}"
    if entry.get("env"):
        return entry["env"] + "={}"
    return '"' + entry.get("key", entry["field"]) + '": {}'

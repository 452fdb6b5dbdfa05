"""content/models.yaml: model presets for vLLM's calculator (heads, KV heads, layers, MLA)."""

from pathlib import Path

from errorkb.content.load import Files, accepted_data, load_alone, schema_problems
from errorkb.content.model import Problem

_MODELS_SCHEMA = {
    "type": "object",
    "required": ["models"],
    "additionalProperties": False,
    "properties": {
        "models": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "name", "heads", "layers"],
                "additionalProperties": False,
                "properties": {
                    "key": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]*$"},
                    "name": {"type": "string"},
                    "hf": {"type": "string"},
                    "heads": {"type": "integer", "minimum": 1},
                    "kv_heads": {"type": "integer", "minimum": 1},
                    "layers": {"type": "integer", "minimum": 1},
                    "mla": {"type": "boolean"},
                    # config.json's architectures[0]: which model file SGLang runs
                    "architecture": {"type": "string", "pattern": "^[A-Za-z0-9_]+$"},
                },
            },
        }
    },
}


def load_models(root: Path) -> list[dict]:
    """Only content/models.yaml, for commands that need no records. Raises ContentError."""
    return load_alone(Path(root), load)


def load(files: Files) -> list[dict]:
    path = files.content / "models.yaml"
    if not files.exists(path):
        return []
    source = files.source(path)
    if source is None:
        return []
    problems = files.problems
    found = schema_problems(source, _MODELS_SCHEMA)
    problems += found
    if found:
        return []
    models = accepted_data(source)["models"]
    seen = set()
    for i, model in enumerate(models):
        if model["key"] in seen:
            problems.append(
                Problem(
                    source.path,
                    source.line("models", i, "key"),
                    "E106",
                    f"models[{i}].key",
                    f"duplicate model key {model['key']!r}",
                )
            )
        seen.add(model["key"])
    return models


def models(content) -> list[dict]:
    """The presets a loaded content holds."""
    return content.extras.get("vllm") or []

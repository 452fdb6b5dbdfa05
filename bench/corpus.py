"""Synthetic knowledge bases for the benchmarks: records shaped like a real project's errors.

Templates come from a seeded generator, so every run builds the same corpus. Like a real
extracted project, most records are stubs (message, exception, every raise site) and a few
are curated with prose, code and related links; files hold several errors each and
templates share prefixes ("Unsupported ...", "Expected ... got ...").
"""

import hashlib
import random
import shutil
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SCHEMA_LINE = "# yaml-language-server: $schema=../../../generator/error.schema.json"

EXCEPTIONS = (
    ["ValueError"] * 12
    + ["RuntimeError"] * 3
    + ["NotImplementedError", "AssertionError", "TypeError", "KeyError"]
)
PREFIXES = [
    "Unsupported",
    "Invalid",
    "Expected",
    "Cannot",
    "Failed to",
    "Unknown",
    "Missing",
    "The",
    "Only",
    "Could not",
]
VERBS = ["must be", "should be", "is not", "cannot be", "was not", "needs to be"]
HOLES = [
    ("int", ["4", "16", "128", "4096", "0", "-1"]),
    ("str", ["auto", "fp8", "bfloat16", "cuda", "llama", "none"]),
    ("path", ["/models/x/config.json", "./weights/model.bin"]),
    ("list", ["[1, 2, 4]", "['a', 'b']"]),
    ("float", ["0.9", "1e-05", "0.5"]),
]


def _words(rng: random.Random, n: int) -> list[str]:
    """Pronounceable made-up words: realistic token statistics, no borrowed text."""
    syllables = [
        "ka",
        "to",
        "ren",
        "mi",
        "sa",
        "lo",
        "ve",
        "dri",
        "pan",
        "qu",
        "zel",
        "mor",
        "tan",
        "bi",
        "fex",
        "gu",
        "hal",
        "jo",
        "nix",
        "pra",
        "sto",
        "wy",
        "cor",
        "del",
    ]
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    return sorted(words)


def templates(count: int, seed: int = 7) -> list[dict]:
    """`count` distinct (exception, message, params, path) entries."""
    rng = random.Random(seed)
    vocab = _words(rng, 3000)
    files = [f"pkg/{rng.choice(vocab)}/{rng.choice(vocab)}.py" for _ in range(max(1, count // 6))]
    seen, out = set(), []
    while len(out) < count:
        path = rng.choice(files)
        message, params = _message(rng, vocab)
        exception = rng.choice(EXCEPTIONS)
        if (exception, message) in seen:
            continue
        seen.add((exception, message))
        out.append({"exception": exception, "message": message, "params": params, "path": path})
    return out


def _message(rng: random.Random, vocab: list[str]) -> tuple[str, dict]:
    params: dict[str, str] = {}
    parts = [rng.choice(PREFIXES)]
    for _ in range(rng.randint(1, 4)):
        parts += rng.sample(vocab, rng.randint(1, 3))
        if rng.random() < 0.7:
            kind, _ = rng.choice(HOLES)
            name = f"{rng.choice(vocab)}_{rng.choice(vocab)}"
            params[name] = kind
            parts.append(_hole(rng, name))
        if rng.random() < 0.5:
            parts.append(rng.choice(VERBS))
    return " ".join(parts) + rng.choice([".", "", ".", "!"]), params


def _hole(rng: random.Random, name: str) -> str:
    return rng.choice([f"({{{name}}})", f"{{{name}}}", f"'{{{name}}}'", f"{name}={{{name}}}"])


def example_value(kind: str, rng: random.Random) -> str:
    return rng.choice(dict(HOLES)[kind])


def record_id(project: str, exception: str, message: str) -> str:
    return hashlib.sha256(f"{project}\0{exception}\0{message}".encode()).hexdigest()[:16]


def records(count: int, curated_share: float = 0.05, seed: int = 7) -> list[dict]:
    """Record dicts as errorkb stores them; about `curated_share` of them fully written up."""
    rng = random.Random(seed + 1)
    out = []
    for i, entry in enumerate(templates(count, seed)):
        rid = record_id("synth", entry["exception"], entry["message"])
        rec = {
            "id": rid,
            "project": "synth",
            "exception": entry["exception"],
            "message": entry["message"],
            "params": {name: {"type": kind} for name, kind in entry["params"].items()},
            "source": {
                "path": entry["path"],
                "line": rng.randint(10, 3000),
                "function": f"Thing{i % 97}.method_{i % 13}",
            },
            "analysis": {"method": "extracted", "ref": "v1.0.0", "date": "2026-11-01"},
        }
        if rng.random() < 0.3:
            rec["source"]["sites"] = [{"path": entry["path"], "line": rng.randint(10, 3000)}]
        if rng.random() < curated_share:
            _curate(rec, rng)
        out.append(rec)
    ids = [r["id"] for r in out]
    for rec in out:
        if "meaning" in rec:
            rec["related"] = sorted(set(rng.sample(ids, 3)) - {rec["id"]})
    return out


def _curate(rec: dict, rng: random.Random) -> None:
    rec.update(
        {
            "title": " ".join(rec["message"].split()[:8])[:100],
            "summary": f"Raised when the {rec['exception']} check of this code path fails.",
            "meaning": "The value **does not fit**: the code checks it before doing any work.\n\n"
            "See `the option` for what is accepted.",
            "trigger": "Starting with a setting that the check rejects.",
            "situations": ["A configuration copied from another setup.", "A typo in a flag."],
            "solutions": [
                "Pick a supported value (see the list in the message).",
                "Remove the flag to use the default.",
            ],
            "example_fix": {
                "note": "Use a supported value.",
                "before": {"language": "bash", "code": "tool run --mode bad"},
                "after": {"language": "bash", "code": "tool run --mode auto"},
            },
            "prevention": "Validate settings before launching.",
            "updated": f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}",
        }
    )


def write_kb(root: Path, recs: list[dict]) -> Path:
    """A knowledge-base folder: these records, a project, site settings, the real templates."""
    if root.exists():
        shutil.rmtree(root)
    errors = root / "content" / "errors" / "synth"
    errors.mkdir(parents=True)
    (root / "content" / "projects").mkdir()
    (root / "content" / "site.yaml").write_text(
        "title: Synthetic KB\nbase_url: https://kb.example.org\nrepo: example/kb\n"
    )
    (root / "content" / "projects" / "synth.yaml").write_text(
        "name: Synth\nrepo: example/synth\nref: v1.0.0\n"
    )
    for rec in recs:
        body = yaml.safe_dump(rec, sort_keys=False, allow_unicode=True, width=100)
        (errors / f"{rec['id']}.yaml").write_text(f"{SCHEMA_LINE}\n{body}")
    shutil.copytree(REPO / "templates", root / "templates")
    (root / "node_modules").symlink_to(REPO / "node_modules")
    return root


def noisy_instance(rec: dict, rng: random.Random) -> tuple[str, dict]:
    """A pasted log line for a record: values filled in, with log noise around it."""
    values = {name: example_value(p["type"], rng) for name, p in rec.get("params", {}).items()}
    message = rec["message"]
    for name, value in values.items():
        message = message.replace("{" + name + "}", value)
    noise = rng.choice(
        [
            "{exc}: {msg}",
            "(EngineCore pid=7935) ERROR 11-01 09:43:08 [mod.py:1560] {exc}: {msg}",
            'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
            "    run()\n{exc}: {msg}",
            "{msg}",
            "{exc}: {msg}\nERROR 11-01 09:43:09 [proc.py:150] Worker died unexpectedly",
        ]
    )
    return noise.format(exc=rec["exception"], msg=message), values


# --- real-world pastes of real records ---------------------------------------------------

PASTE_SHAPES = [
    "log line",  # a vLLM log prefix and the exception name
    "cut",  # cut anywhere after a few words, even inside a value
    "ellipsis",  # cut, ending in "..." or "…"
    "no period",  # the closing punctuation dropped
    "first sentence",  # the sentences after the first dropped
    "case",  # all lower or upper case
    "hard wrap",  # a terminal's width, words cut
    "box",  # a rich panel's frame around wrapped lines
    "tuple",  # a multi-argument exception's tuple repr
    "raise line",  # only the raise statement of a traceback
    "variant",  # an older wording, with log noise
]
_ANY_VALUES = ["auto", "'fp8'", "[1, 2, 4]", "torch.bfloat16", "/models/llama/config.json", "None"]
_VLLM_PREFIX = "(EngineCore_DP0 pid=1508) ERROR 11-01 09:43:08 [core.py:708] "


def fill_value(kind: str, rng: random.Random) -> str:
    """A value such as a program prints for a placeholder of this type."""
    return {
        "int": lambda: str(rng.choice([0, 2, 3, 7, 16, 128, 4096])),
        "float": lambda: rng.choice(["0.9", "1e-05", "2.5"]),
        "bool": lambda: rng.choice(["True", "False"]),
        "path": lambda: "/models/llama/config.json",
        "text": lambda: "CUDA driver initialization failed, you might not have a CUDA gpu.",
    }.get(kind, lambda: rng.choice(_ANY_VALUES))()


def real_paste(rec: dict, shape: str, rng: random.Random) -> str | None:
    """A paste of a record's message in one of PASTE_SHAPES, or None when the message
    cannot take that shape (one sentence, no placeholder to cut a raise line at...)."""
    from errorkb.content import template

    types = {name: p.get("type", "any") for name, p in rec.get("params", {}).items()}
    names = template.placeholders(rec["message"])
    values = {name: fill_value(types.get(name, "any"), rng) for name in names}
    message = template.squash(template.fill(rec["message"], values))
    exc = rec["exception"]
    words = message.split(" ")
    if shape == "log line":
        return f"{_VLLM_PREFIX}{exc}: {message}"
    if shape in ("cut", "ellipsis"):
        if len(words) < 8:
            return None
        cut = " ".join(words[: rng.randint(max(5, len(words) // 2), len(words) - 1)])
        cut = cut[: len(cut) - rng.randint(0, min(3, len(words[-1])))]
        return f"{exc}: {cut}" + (rng.choice(["...", "…", " ..."]) if shape == "ellipsis" else "")
    if shape == "no period":
        return f"{exc}: {message[:-1]}" if message[-1:] in ".!" and len(words) >= 4 else None
    if shape == "first sentence":
        first, sep, rest = message.partition(". ")
        return f"{exc}: {first}." if sep and rest and len(first.split()) >= 4 else None
    if shape == "case":
        return f"{exc}: " + (message.lower() if rng.random() < 0.5 else message.upper())
    if shape in ("hard wrap", "box"):
        text = f"{exc}: {message}"
        width = rng.randint(50, 80)
        if len(text) <= width:
            return None
        if shape == "hard wrap":
            return "\n".join(text[i : i + width] for i in range(0, len(text), width))
        lines = _soft_wrap(text, width)
        return "\n".join(f"│ {line.ljust(width)} │" for line in lines)
    if shape == "tuple":
        if len(words) < 6:
            return None
        cuts = sorted(rng.sample(range(2, len(words) - 1), 2))
        bounds = zip([0, *cuts], [*cuts, len(words)], strict=True)
        parts = [" ".join(words[a:b]) + " " for a, b in bounds]
        parts[-1] = parts[-1].rstrip()
        return f"{exc}: (" + ", ".join(repr(p) for p in parts) + ")"
    if shape == "raise line":
        head = rec["message"].split("{")[0] if "{" in rec["message"] else rec["message"][:80]
        if len(head.split()) < 4:
            return None
        body = head.replace("\\", "\\\\").replace('"', '\\"')
        return (
            "Traceback (most recent call last):\n"
            f'  File "/usr/lib/python3.12/site-packages/{rec["source"]["path"]}", line '
            f'{rec["source"].get("line", 1)}, in check\n    raise {exc}(f"{body}"'
        )
    if shape == "variant":
        if not rec.get("variants"):
            return None
        variant = template.fill(rng.choice(rec["variants"]), values)
        return f"{_VLLM_PREFIX}{exc}: {template.squash(variant)}"
    raise ValueError(shape)


def _soft_wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def negatives() -> list[str]:
    """Errors of other programs (CUDA, NCCL, torch, numpy, Python itself), as pasted."""
    import json

    return json.loads((REPO / "tests" / "fixtures" / "search" / "negatives.json").read_text())

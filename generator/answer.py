"""The answer for a user's values: what their values mean for the check that printed the
message, and what to change, to what. One answer for the terminal (`errorkb match`), the
bot and the JSON they print; the error page computes the same in the browser (try.js,
divisors.js, tests.js), from the same facts of the record:

- its divisibility (`derived.divisibility`): the valid values of a divisor the user sets,
  nearest either side of theirs (a GPU count within one node, 8 GPUs assumed until they
  give theirs); of a divisor the model fixes (a checkpoint's `block_n`), never that divisor
  but the setting that splits the value (`--tp-size`) and by how much;
- the settings that would pass (`computed.derived.passes`);
- the check's condition tested on the values (`computed.derived.tests`, api.case_tests):
  which of its parts fail, the values of the settings they compare that pass, the settings
  it compares with constants; else, in one line, why nothing is computed (`why_not`).

Pure functions over the record's JSON document (api.py's) and the values search found."""

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

NODE_GPUS = 8  # the node the advice assumes until the user gives theirs (gpus_per_node)
MAX_DIVIDEND = 10_000_000  # beyond, listing divisors is not worth the wait (try.js's too)
MAX_SHOWN = 12
MAX_NAMED = 40  # a longer list is shown by its count alone (members.js's listed alike)
GPU_COUNT = re.compile(
    r"(tensor|pipeline|data|expert|context)[-_]parallel[-_]size|--(tp|pp|dp|ep|attn-dp)-size\b"
)
# A parallel size among the record's settings: what cuts a weight or the heads into slices.
PARALLEL = re.compile(r"(^|[-_])(tp|pp|ep|dp|tensor|pipeline|expert)[-_]")
# A GPU group's size no setting of the record names (`world_size`): a count of GPUs, not the
# model's (errorkb/settings.py names its setting where the release's parser has one).
GPU_GROUP = re.compile(
    r"^(world_size|world|num_gpus|num_ranks|tp_world_size|seq_world_size|sp_world_size"
    r"|ulysses_world_size|get_tp_world_size\(\)|[a-z_]*_tp_size|[a-z_]*_ep_size)$"
)
# A generic helper's divisor (`ensure_divisibility(numerator, denominator)`): whether it is
# a setting or the model's depends on the caller (vLLM passes heads and the TP size, or the TP
# size and the KV heads), so neither is said.
GENERIC = re.compile(r"^(denominator|divisor|den|[abdmnxy])$")
# A value that is one rank's slice ("output_partition_size", "local_heads").
PER_RANK = re.compile(r"partition|per_rank|local|shard|per_gpu", re.I)
# An old wording's hole named after the expression it prints (template.page_name).
_EXPRESSION = re.compile(r"_(?:div|times|pow|mod|mul|plus|minus)_")


def last_part(name: str) -> str:
    return str(name or "").split(".")[-1]


def divisor_role(derived: dict) -> dict:
    """Of a divisibility check: whether its divisor is a setting the user chooses
    (`fixed`: False), and when the model fixes it, the setting that splits the value
    (`setting`: "--tp-size", or "" when no setting of the record does)."""
    div = derived.get("divisibility") or {}
    if GENERIC.match(last_part(div.get("divisor", ""))):
        return {"fixed": False, "setting": "", "unknown": True}
    settings = [f for f in derived.get("flags") or [] if f.get("kind") != "model-config"]
    names = {last_part(f.get(k, "")) for f in settings for k in ("name", "field")} - {""}
    divisor = last_part(div.get("divisor", ""))
    if (
        divisor in names
        or GPU_COUNT.search(divisor)
        or re.fullmatch(r"(tp|pp|dp|ep)(_size)?", divisor)
        or GPU_GROUP.match(divisor)
    ):
        mine = [
            f for f in settings if divisor in (last_part(f.get("name")), last_part(f.get("field")))
        ]
        return {"fixed": False, "setting": mine[0].get("flag", "") if mine else ""}
    splits = [f for f in settings if PARALLEL.search(f.get("name", "") + " " + f.get("flag", ""))]
    per_rank = bool(PER_RANK.search(div.get("value", "")))
    setting = splits[0].get("flag") or splits[0].get("name") if splits and per_rank else ""
    return {"fixed": True, "setting": setting or "", "per_rank": per_rank}


def _number(values: dict, name: str | None) -> float | None:
    if not name or name not in values:
        return None
    try:
        n = float(str(values[name]).strip())
    except ValueError:
        return None
    return n if math.isfinite(n) else None


def _whole(n: float | None) -> int | None:
    return int(n) if n is not None and n == int(n) else None


def _node(values: dict) -> tuple[int, bool]:
    """The GPUs of one node and whether the user gave it (else 8, assumed)."""
    given = _whole(_number(values, "gpus_per_node"))
    return (given, True) if given and given > 0 else (NODE_GPUS, False)


def _nearest(candidates: list[int], current: int | None) -> list[int]:
    if current is None:
        return candidates[:MAX_SHOWN]
    below = [c for c in candidates if c < current]
    above = [c for c in candidates if c > current]
    return ([below[-1]] if below else []) + ([above[0]] if above else [])


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def placeholder(name: str | None, names) -> str | None:
    """A quantity's name among the message's placeholders (or the paste's values): itself,
    or the one placeholder that ends it (`GPTQ_MARLIN_MIN_THREAD_K` printed as
    `{min_thread_k}`). The pages' widgets read the address by this name."""
    if not name or name in names:
        return name
    tail = [k for k in names if len(k) > 2 and last_part(name).lower().endswith(k.lower())]
    return tail[0] if len(tail) == 1 else name


def gpu_count(div: dict, setting: str = "", dname: str = "") -> bool:
    """Whether a divisibility check's divisor is a count of GPUs (its valid values within
    one node): a parallel size by its name or its setting's, or a GPU group's size."""
    shown = last_part(div.get("divisor", ""))
    return bool(
        GPU_COUNT.search(f"{div.get('divisor', '')} {dname} {setting}")
        or re.fullmatch(r"(tp|pp|dp|ep)(_size)?", shown)
        or GPU_GROUP.match(shown)
    )


def _divisibility(derived: dict, values: dict, found: dict | None = None) -> dict | None:
    """`found`: the divisor's role as the site computed it (computed.derived.divisor:
    errorkb/settings.py, its setting spelled by the release's parser); else read from the
    derived block alone."""
    div = derived.get("divisibility") or {}
    if not div:
        return None
    vname = placeholder(div.get("value_param") or div.get("value"), values)
    dname = placeholder(div.get("divisor_param") or div.get("divisor"), values)
    value = _whole(_number(values, vname))
    divisor = _whole(_number(values, dname))
    if value is None or value < 1 or value > MAX_DIVIDEND:
        return None
    role = found or divisor_role(derived)
    shown_d, shown_v = div.get("divisor"), div.get("value")
    if divisor and value % divisor == 0:
        return {
            "verdict": f"{shown_d} = {divisor} divides {shown_v} = {value}: this check passes "
            "with these values; the paste may hold others, or another check printed it.",
            "computed": True,
        }
    if role["fixed"] or role.get("unknown"):
        if not divisor:
            return None
        verdict = (
            f"{shown_v} = {value} is not a multiple of {shown_d} = {divisor} "
            f"({value / divisor:g} × {divisor})."
        )
        if role.get("unknown"):
            return {
                "verdict": verdict,
                "computed": True,
                "why_not": "the check is a shared helper: which value is a setting depends on "
                "the code that calls it",
            }
        if not role["setting"] and not role.get("per_rank"):
            return {
                "verdict": verdict + f" {shown_d} is fixed by the model, and no setting of "
                "the engine changes either value here.",
                "computed": True,
                "why_not": "both values come from the model",
            }
        factor = divisor // math.gcd(value, divisor)
        setting = role["setting"] or "the tensor parallel size"
        example = "" if 8 % factor else f", e.g. 8 → {8 // factor}"
        change = (
            f"Change {setting}, not {shown_d} (the checkpoint fixes it): divide it by "
            f"{factor}{example}. Each GPU then holds {value * factor} = "
            f"{value * factor // divisor} × {divisor}."
        )
        return {
            "verdict": verdict,
            "change": change,
            "setting": setting,
            "factor": factor,
            "computed": True,
        }
    valid = _divisors(value)
    gpus = role["gpus"] if "gpus" in role else gpu_count(div, role.get("setting", ""), dname or "")
    node, given = _node(values)
    fit = [d for d in valid if d <= node] if gpus else valid
    near = _nearest(fit, divisor)
    flag = role.get("setting") or ""
    named = setting_named(flag, shown_d or "")
    out = {
        "verdict": f"Valid values of {named} for {shown_v} = {value}: "
        + ", ".join(map(str, valid[:40]))
        + ("…" if len(valid) > 40 else ""),
        "valid": valid,
        "computed": True,
    }
    if flag:
        out["setting"] = flag
    if near and divisor:
        where = f" (within one {node}-GPU node{'' if given else ', assumed'})" if gpus else ""
        tried = " or ".join(map(str, near))
        what = flag or (f"the GPU count {shown_d}" if gpus else shown_d)
        out["change"] = (
            f"Change {what} {divisor} to {tried}, the nearest that divide {value}{where}."
        )
        out["nearest"] = near
    return out


def divisor_title(role: dict, div: dict) -> str:
    """The divisor section's title (both wings): what to change of a divisor the model fixes,
    the valid values of one the user sets, by its option."""
    if role["fixed"]:
        return "What to change"
    if role.get("unknown"):
        return f"{div['value']} and {div['divisor']}"
    return f"Valid values of {setting_named(role.get('setting') or '', div['divisor'])}"


def setting_named(setting: str, divisor: str) -> str:
    """A divisor the user sets, named as the answer names it: its option and the code's
    name (`--tp-size (tp_size)`), the words of a size no one option sets, else the name."""
    if setting.startswith("-"):
        same = setting.lstrip("-").replace("-", "_") == divisor
        return setting if same or not divisor else f"{setting} ({divisor})"
    return setting or divisor


def values_to_try(item: dict, values: dict) -> list[str]:
    """try.js's valuesToTry: the values of one setting that pass, as text."""
    bound = item["value"] if "value" in item else _number(values, item.get("param"))
    current = _number(values, item.get("current"))
    whole = _whole(bound) if isinstance(bound, (int, float)) else None
    op = item.get("op")
    if op in ("<=", ">=", "=="):
        return [] if bound is None else [f"{bound:g}" if isinstance(bound, float) else str(bound)]
    if op == "<":
        return [str(whole - 1)] if whole is not None else []
    if op == ">":
        return [str(whole + 1)] if whole is not None else []
    if op == "in":
        return [str(c) for c in item.get("choices", [])[:MAX_SHOWN]]
    if op == "divides":
        if whole is None or whole < 1 or whole > MAX_DIVIDEND:
            return []
        found = _divisors(whole)
        if GPU_COUNT.search(item.get("write", "")):
            found = [d for d in found if d <= _node(values)[0]]
        return [str(d) for d in _nearest(found, _whole(current))]
    if op == "multiple-of":
        cur = _whole(current)
        if whole is None or whole < 1 or cur is None:
            return []
        down = cur // whole * whole
        return [str(m) for m in (down, down + whole) if m > 0 and m != cur]
    return []


_HOLDS = {
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "%": lambda a, b: b != 0 and a % b != 0,
}


def _relation(spec: dict | None, values: dict) -> dict | None:
    if not spec:
        return None

    def side(s):
        return s if isinstance(s, (int, float)) else _number(values, s)

    a, b = side(spec.get("left")), side(spec.get("right"))
    if a is None or b is None or spec.get("op") not in _HOLDS:
        return None
    holds = _HOLDS[spec["op"]](a, b)
    text = f"{spec['left']} {spec['op']} {spec['right']}"
    if holds:
        return {"verdict": f"With these values the check that raises it holds: {text}."}
    return {
        "verdict": f"With these values the check that raises it ({text}) does not hold: the "
        "paste may hold other values, or another check printed the message."
    }


# What a raise test's parts say, and what passes instead: raised when `left op right`.
_ORDER_WORDS = {
    ">": "is greater than",
    ">=": "is at least",
    "<": "is less than",
    "<=": "is at most",
    "==": "equals",
    "!=": "differs from",
}
_WORDS = {
    **_ORDER_WORDS,
    "%": "is not a multiple of",
    "in": "is among",
    "not in": "is not among",
    "none in": "has no item among",
    "some in": "has an item among",
    "truthy": "is not empty",
    "falsy": "is empty",
    **{"v" + op: word for op, word in _ORDER_WORDS.items()},
}
# A test of two collections the message prints (api._any_member): whether an item of the
# first is in the second.
_ANY = ("none in", "some in")
_VERDICT = (*_ANY, "or")  # parts whose answer is the verdict alone


def fmt(n: float) -> str:
    """A number as the page prints it (try.js's fmt): an integer whole, else 6 digits."""
    r = float(f"{n:.6g}")
    return str(int(r)) if r == int(r) else repr(r)


def _bound(op: str, side: str, a, b) -> str:
    """What values of one side (`left`/`right`) make `a op b` false, in words: "at most 6048";
    of a membership test, the left side's ("one of awq, gptq"); of text, the other's text."""
    if op in ("in", "not in"):
        listed = _listed(b)
        return f"one of {listed}" if op == "not in" else f"none of {listed}"
    if isinstance(a, str) or isinstance(b, str):
        shown = str(b if side == "left" else a)
        return shown if op == "!=" else f"anything but {shown}"
    whole = a == int(a) and b == int(b)
    if op in ("==", "!="):
        shown = fmt(b if side == "left" else a)
        return shown if op == "!=" else f"anything but {shown}"
    # The other side's value, and whether the passing side must stay below it.
    other, below = (b, op in (">", ">=")) if side == "left" else (a, op in ("<", "<="))
    if op in (">", "<"):  # a > b passes at a <= b
        return f"at most {fmt(other)}" if below else f"at least {fmt(other)}"
    if whole:  # a >= b passes only at a < b
        return f"at most {fmt(other - 1)}" if below else f"at least {fmt(other + 1)}"
    return f"below {fmt(other)}" if below else f"above {fmt(other)}"


def handle_of(write: str) -> str:
    """A setting as its pattern writes it, without the value: `--max-model-len`, `VLLM_X`;
    a key of a JSON option with … for the value (`--speculative-config '{"k": …}'`)."""
    if not write.endswith("{}"):
        return write.replace("{}", "…")
    return re.sub(r"(: | |=)?\{\}$", "", write)


def _side(side: object, values: dict) -> float | None:
    """A test's side: a number, a placeholder's value, or a GPU's compute capability from
    its two placeholders ({"major", "minor"}: 7 and 5 are 75, as the code compares it)."""
    if isinstance(side, dict):
        major, minor = _number(values, side.get("major")), _number(values, side.get("minor"))
        return None if major is None or minor is None else major * 10 + minor
    return _number(values, side) if isinstance(side, str) else side  # type: ignore[return-value]


def _named(side: object, value) -> str:
    if isinstance(side, dict):
        return f"compute capability {value / 10:.1f}"
    if isinstance(value, list):  # the code's own collection, or the one the message prints
        return _listed(value) if isinstance(side, list) else f"{side} ({_listed(value)})"
    shown = value if isinstance(value, str) else fmt(value)
    return shown if not isinstance(side, str) else f"{side} = {shown}"


def _listed(items: list) -> str:
    """A list as the answer shows it: whole, its first MAX_SHOWN and its count, or only its
    count past MAX_NAMED (a registry's hundreds of names tell the user nothing)."""
    if len(items) > MAX_NAMED:
        return f"{len(items)} names"
    more = f", … {len(items)} in all" if len(items) > MAX_SHOWN else ""
    return ", ".join(items[:MAX_SHOWN]) + more


# A value as the message prints it: `'awq'`, `"awq"` or awq. A collection: a list, tuple, set
# or dict's keys as Python prints them (`['awq', 'gptq']`, `dict_keys([...])`); None when cut
# short (a paste that ends inside it) or not one: what is missing may hold the value.
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_WRAPPED = re.compile(r"(?:dict_keys|set|frozenset)\((.*)\)", re.S)
_COLLECTION = re.compile(r"([\[({])(.*)([\])}])", re.S)


def _text(values: dict, name: object) -> str | None:
    if not isinstance(name, str) or name not in values:
        return None
    text = str(values[name]).strip()
    quoted = _QUOTED.fullmatch(text)
    return next(g for g in quoted.groups() if g is not None) if quoted else text


def _among(values: dict, right: object) -> list | None:
    """The collection of a membership test: the code's own (a list), or the one the message
    prints."""
    return right if isinstance(right, list) else _collection(values, right)


def _member(text: str | None, among: list | None) -> bool | None:
    """Whether a printed value is one of the collection's items: as a number among numbers,
    else as printed; None when a number is compared with text (nothing is said)."""
    if text is None or among is None:
        return None
    if all(isinstance(c, int | float) and not isinstance(c, bool) for c in among):
        n = _number({"v": text}, "v")
        return None if n is None else n in among
    return text in [str(c) for c in among]


def _collection(values: dict, name: object) -> list[str] | None:
    if not isinstance(name, str) or name not in values:
        return None
    text = str(values[name]).strip()
    wrapped = _WRAPPED.fullmatch(text)
    found = _COLLECTION.fullmatch(wrapped[1] if wrapped else text)
    if not found or "([{".index(found[1]) != ")]}".index(found[3]):
        return None
    inner = found[2].strip()
    items = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(inner)]
    rest = _QUOTED.sub("", inner).replace(",", "").strip()
    return items if items and not rest else None  # quoted names only: no numbers, no dict


def _shown(test: dict, side: str, value: float) -> str:
    """A side in words; the number a capability is compared with as the GPU's (80: 8.0)."""
    other = test.get("right" if side == "left" else "left")
    return f"{value / 10:.1f}" if isinstance(other, dict) else _named(test[side], value)


# A setting the condition compares with a constant (`dtype == torch.bfloat16`, `not
# self.allow_auto_truncate`): raised only with it so; what passes, whatever the values.
def _setting_way(test: dict) -> tuple[str, str]:
    """(when it raises, how to pass) in words."""
    name, op, value = handle_of(test["setting"]), test["op"], test.get("value")
    listed = ", ".join(map(str, value[:MAX_SHOWN])) if isinstance(value, list) else str(value)
    return {
        "==": (f"{name} is {listed}", f"set {name} to anything but {listed}"),
        "!=": (f"{name} is not {listed}", f"set {name} to {listed}"),
        "in": (f"{name} is one of {listed}", f"set {name} to anything but {listed}"),
        "not in": (f"{name} is none of {listed}", f"set {name} to one of {listed}"),
        "on": (f"{name} is on", f"turn {name} off"),
        "off": (f"{name} is off", f"turn {name} on"),
    }[op]


def _modulo_change(test: dict, a: int, b: int, values: dict) -> str:
    """A divisibility test (a % b != 0 raises): the nearest passing values of the side the
    user sets, either side of theirs; the divisor a GPU count within one node."""
    ways = []
    written = test.get("set") or {}
    if "right" in written and 0 < a <= MAX_DIVIDEND:
        found, where = _divisors(a), ""
        if GPU_COUNT.search(written["right"]):
            node, given = _node(values)
            found = [d for d in found if d <= node]
            where = f" (within one {node}-GPU node{'' if given else ', assumed'})"
        near = _nearest(found, b)
        if near:
            ways.append(" or ".join(written["right"].replace("{}", str(d)) for d in near) + where)
    if "left" in written and b > 0:
        down = a // b * b
        near = [m for m in (down, down + b) if m > 0 and m != a]
        ways += [" or ".join(written["left"].replace("{}", str(m)) for m in near)] if near else []
    return " or ".join(ways)


def _scaled(t: dict, a: float, b: float, values: dict) -> list[str]:
    """Of a failing part no setting decides: a setting the message prints that one side is
    a multiple of in the user's values (requested 19.84 GiB = 0.9 × 22.05 GiB total), and the
    value of the setting that passes: that side's passing bound over the multiplier, to two
    decimals inward ("set --gpu-memory-utilization to at most 0.89")."""
    out = []
    for name, how in (t.get("scale") or {}).items():
        u = _number(values, name)
        if not u or u <= 0 or u > 1:
            continue  # a fraction of a whole (a utilization), as the scaled side is of another
        for k, v in (("left", a), ("right", b)):
            if not isinstance(t[k], str):
                continue
            by = [n for n in how["by"] if (_number(values, n) or 0) > 0]
            fit = [
                n for n in by if abs(v - u * (_number(values, n) or 0)) <= 0.001 * abs(v) + 0.011
            ]
            if not fit:
                continue
            words, number = _bound(t["op"], k, a, b).rsplit(" ", 1)
            limit = float(number) / (_number(values, fit[0]) or 1)
            down = words in ("at most", "below")
            limit = (math.floor if down else math.ceil)(limit * 100) / 100
            if limit <= 0 or limit > 1:
                break  # no fraction of the whole passes: what holds the rest is the matter
            out.append(
                f"set {handle_of(how['write'])} to {'at most' if down else 'at least'} "
                f"{fmt(limit)} ({t[k]} is {name} × {fit[0]} in your values)"
            )
            break
    return out


def _tie(test: dict, values: dict) -> bool:
    """Whether an order test's sides are equal as printed and one was printed with decimals
    (rounded): which is larger is not in the paste."""
    if test.get("op") not in ("<", "<=", ">", ">="):
        return False
    a, b = _side(test["left"], values), _side(test["right"], values)
    sides = [test[k] for k in ("left", "right") if isinstance(test[k], str)]
    rounded = any(re.search(r"[.eE]", str(values.get(s, ""))) for s in sides)
    return a is not None and a == b and rounded


# A value as Python prints it when it is false: None, zero, an empty text or collection.
_FALSY = {"", "None", "False", "''", '""', "[]", "()", "{}", "set()", "frozenset()"}
_FALSY |= {"dict_keys([])", "dict_values([])", "dict_items([])"}


def truth(text: str | None) -> bool | None:
    """Whether a printed value is true in Python: false as None, 0, empty; None (nothing
    said) for an object's own repr (`<...>`, `tensor(...)`), whose truth is its class's."""
    if text is None:
        return None
    text = text.strip()
    if text in _FALSY:
        return False
    if text.startswith("<") or re.match(r"\w+\(", text):
        return None
    n = _number({"v": text}, "v")
    return text != "" if n is None else n != 0


# A version as printed (`0.1.1`, `v2.4.0`, `0.0.9.post2`, `2.5.1+cu121`): its release's
# numbers and what follows (the local part `+cu121` aside).
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)([-_.+]?[a-z][a-z0-9._+-]*)?", re.I)


def version_order(a: str | None, b: str | None) -> int | None:
    """-1, 0 or 1 as version a is older, the same or newer than b; None when the text does
    not say (not versions, or one release with different tags: rc, post, dev)."""
    matched = [_VERSION.fullmatch(v.strip()) if v is not None else None for v in (a, b)]
    found = [m for m in matched if m is not None]
    if len(found) < 2:
        return None
    releases = [[int(n) for n in m[1].split(".")] for m in found]
    for r in releases:
        while len(r) > 1 and r[-1] == 0:
            r.pop()
    if releases[0] != releases[1]:
        return -1 if releases[0] < releases[1] else 1
    tags = [(m[2] or "").split("+")[0] for m in found]
    return 0 if tags[0] == tags[1] else None


_ORDERED = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
}


def _tried(test: dict, values: dict) -> tuple[dict, Any, Any, bool] | None:
    """One part of a condition on the values: (the part, its sides' values, whether it
    holds), or None when the values decide nothing."""
    if test["op"] in ("truthy", "falsy"):  # a printed value alone: raised when (not) empty
        text = _text(values, test["left"])
        true = truth(text)
        return None if true is None else (test, text, None, true == (test["op"] == "truthy"))
    if test["op"].startswith("v"):  # two printed versions
        old, new = _text(values, test["left"]), _text(values, test["right"])
        order = version_order(old, new)
        return None if order is None else (test, old, new, _ORDERED[test["op"][1:]](order))
    if test["op"] in _ANY:  # two collections the message prints, both whole
        items, among = _collection(values, test["left"]), _collection(values, test["right"])
        if items is None or among is None:
            return None
        return test, items, among, any(i in among for i in items) == (test["op"] == "some in")
    if test["op"] in ("in", "not in"):  # a value the message prints, in a collection
        text, among = _text(values, test["left"]), _among(values, test["right"])
        member = _member(text, among)
        if text is None or among is None or member is None:
            return None
        printed = [c if isinstance(c, str) else fmt(c) for c in among]
        return test, text, printed, member == (test["op"] == "in")
    a: Any = _side(test["left"], values)
    b: Any = _side(test["right"], values)
    if (a is None or b is None) and test["op"] in ("==", "!="):
        # two values the message prints that are not numbers (a method's name): the
        # code compares them as the message prints them
        if not isinstance(test["left"], str) or not isinstance(test["right"], str):
            return None
        a, b = _text(values, test["left"]), _text(values, test["right"])
    if a is None or b is None:
        return None
    if test["op"] == "%" and (b == 0 or a != int(a) or b != int(b)):
        return None
    if a == b and _tie(test, values):
        return None  # equal as printed, rounded: which is larger is not in the paste
    if isinstance(a, str) or isinstance(b, str):
        return test, a, b, (a == b) == (test["op"] == "==")
    holds = {
        ">": a > b,
        ">=": a >= b,
        "<": a < b,
        "<=": a <= b,
        "==": a == b,
        "!=": a != b,
        "%": test["op"] == "%" and b != 0 and a % b != 0,
    }[test["op"]]
    return test, a, b, holds


def _tests(groups: list[list[dict]], values: dict) -> dict | None:
    """The derived condition tested on the values (api.case_tests): of the first condition
    with a part the values test or a setting it compares, whether it holds (the check
    raises) and, when it does, what passes: the values of each part's sides the user sets,
    by their setting, and the settings the condition compares with constants."""
    for group in groups:
        ways = [_setting_way(t) for t in group if "setting" in t]
        tried: list[tuple[dict, Any, Any, bool]] = []  # a part, its sides' values, whether it holds
        for test in (t for t in group if "setting" not in t):
            if test["op"] == "or":  # raised when one of its alternatives holds
                subs = [_tried(x, values) for x in test["any"]]
                hold = [x for x in subs if x and x[3]]
                if hold or all(subs):
                    tried.append((test, hold or subs, None, bool(hold)))
                continue
            one = _tried(test, values)
            if one:
                tried.append(one)
        if not tried and not ways:
            continue
        said = [_said(t, a, b) for t, a, b, _ in tried]
        passing = [i for i, (*_, holds) in enumerate(tried) if not holds]
        if passing:
            return {
                "verdict": f"With your values this check passes: {said[passing[0]]} is false. "
                "The paste may hold other values, or another check printed the message.",
                "computed": True,
            }
        changes = []
        for t, a, b, _ in tried:
            if t["op"] == "or":
                # alternatives (a range: x < 0 or x >= n): each that holds must not; said
                # where one setting decides each of them, else the verdict alone
                per = [_part_changes(x[0], x[1], x[2], values) for x in a]
                if per and all(len(p) == 1 for p in per):
                    changes.append(" and ".join(p[0] for p in per))
                continue
            changes += _part_changes(t, a, b, values)
        changes += [how for _, how in ways]
        if tried:
            verdict = "With your values the check fails: " + "; ".join(said) + "."
        else:
            verdict = "It is raised only when " + "; ".join(when for when, _ in ways) + "."
        out = {"verdict": verdict, "computed": True}
        free = [x for x in tried if not x[0].get("set") and x[0]["op"] not in ("%", *_VERDICT)]
        if changes:
            out["change"] = "To pass it, " + ", or ".join(changes) + "."
            if free and all(
                isinstance(free[0][0].get(k, ""), str | int | float) for k in ("left", "right")
            ):
                t, a, b, _ = free[0]  # a part no setting decides: its values that pass too
                sides = _passing_sides(t, a, b)
                out["change"] = f"{out['change']} It also passes with {' or '.join(sides)}."
            return out
        t, a, b, _ = tried[0]
        if t["op"] == "%":
            out["why_not"] = "no setting the check names changes these values"
            return out
        if t["op"] in _VERDICT:
            return out  # the verdict alone: which items the code takes is its own list
        if isinstance(t["left"], dict) or isinstance(t.get("right"), dict):
            side = "left" if isinstance(t["left"], dict) else "right"
            words, number = _bound(t["op"], side, a, b).rsplit(" ", 1)
            shown = f"{float(number) / 10:.1f}"
            out["change"] = f"It passes on a GPU of compute capability {words} {shown}."
            return out
        out["change"] = "It passes with " + " or ".join(_passing_sides(t, a, b)) + "."
        return out
    return None


def _part_changes(t: dict, a, b, values: dict) -> list[str]:
    """What passes one failing part of a condition: the nearest passing values of a
    divisibility's side the user sets, each set side's passing bound, or a setting that
    scales a side (_scaled)."""
    if t["op"] == "%":
        found = _modulo_change(t, int(a), int(b), values)
        return [f"set {found}"] if found else []
    out = []
    written = t.get("set") or {}
    for side in ("left", "right"):
        if side in written:
            bound = _bound_of(t, side, a, b)
            to = "" if bound.startswith(("below", "above")) else "to "
            out.append(f"set {handle_of(written[side])} {to}{bound}")
    return out if written else _scaled(t, a, b, values)


def _passing_sides(t: dict, a, b) -> list[str]:
    """Each side's values that pass a part, in words; of a membership test, the value's
    alone (the collection is what the code accepts)."""
    sides = ("left",) if t["op"] in ("in", "not in") else ("left", "right")
    return [f"{t[k]} {_bound_of(t, k, a, b)}" for k in sides if isinstance(t.get(k), str)]


def _said(t: dict, a, b) -> str:
    """A part of the condition on the values, in words; of alternatives (`or`), those that
    hold when one does, else all."""
    if t["op"] == "or":
        return " or ".join(_said(*x[:3]) for x in a)
    if "right" not in t:  # a printed value alone
        return f"{_shown(t, 'left', a)} {_word(t)}"
    return f"{_shown(t, 'left', a)} {_word(t)} {_shown(t, 'right', b)}"


def _one(t: dict) -> bool:
    """A membership in the code's own collection of one item: a printed value compared with
    a text (`task_option == 'score'`), said as `is`."""
    return t["op"] in ("in", "not in") and isinstance(t["right"], list) and len(t["right"]) == 1


def _word(t: dict) -> str:
    if _one(t):
        return "is" if t["op"] == "in" else "is not"
    return _WORDS[t["op"]]


def _bound_of(t: dict, side: str, a, b) -> str:
    """_bound, and of a text the code compares with, that text or anything but it; of a
    printed value alone, empty or not; of versions, which pass."""
    if _one(t):
        return f"anything but {b[0]}" if t["op"] == "in" else str(b[0])
    if "right" not in t:
        return "empty" if t["op"] == "truthy" else "not empty"
    if t["op"].startswith("v"):
        op = t["op"][1:]
        if op in ("==", "!="):
            return _bound(op, side, a, b)
        other, below = (b, op[0] == ">") if side == "left" else (a, op[0] == "<")
        if len(op) == 1:  # a < b passes at a >= b
            return f"{'at most' if below else 'at least'} {other}"
        return f"{'older' if below else 'newer'} than {other}"
    return _bound(t["op"], side, a, b)


def page_values(values: dict) -> dict:
    """The values under the names the page reads (an old wording's `x_div_GiB_bytes`: `x`)."""
    out = dict(values)
    for name, value in values.items():
        out.setdefault(_EXPRESSION.split(name, maxsplit=1)[0], value)
    return out


def renamed(values: dict, renames: dict | None) -> dict:
    """The values of an older wording's placeholders also under the names the tests read
    (computed.derived.renames: `GiB` is `free_memory_gib`), where the paste has none of
    those names itself."""
    out = dict(values)
    for old, new in (renames or {}).items():
        if old in values and new not in values:
            out[new] = values[old]
    return out


def _tested_names(groups: list[list[dict]]) -> set[str]:
    """The placeholders the tests compare (case.js's testedNames)."""
    flat = [x for group in groups for t in group for x in [t, *t.get("any", [])]]
    sides = [t.get(k) for t in flat for k in ("left", "right")]
    return {
        n
        for s in sides
        for n in ((s or {}).values() if isinstance(s, dict) else [s])
        if isinstance(n, str)
    }


def why_not(derived: dict, computed: dict) -> str:
    """Why nothing is computed from the values, in a few words (the page's one line)."""
    condition = derived.get("condition") or ""
    if computed.get("tests"):
        return (
            "the values its condition compares settle nothing in your paste (one missing, not "
            "numbers, or equal once rounded)"
        )
    if condition:
        shown = condition if len(condition) <= 90 else condition[:89] + "…"
        return f"its condition ({shown}) compares no value the message prints"
    if derived.get("unconditional"):
        return "the check raises whenever the code reaches it, whatever the values"
    if derived.get("quantities"):
        return "its condition is too long to test on the values"
    return "the site has no condition of this check to test the values on"


def answer(doc: dict, values: dict, today_doc: dict | None = None) -> dict | None:
    """What the page answers for these values (the record's JSON document; of an old wording,
    `today_doc`, the check printed today that took over, whose answer its page shows when
    its own derived block answers nothing): {"lines": [...], "computed": bool, ...}; when
    nothing can be computed, one line that says why (`why_not`). None without values."""
    if not values:
        return None
    values = page_values({k: str(v) for k, v in values.items()})
    values = renamed(values, ((doc.get("computed") or {}).get("derived") or {}).get("renames"))
    docs = [d for d in (doc, today_doc) if d]
    if not doc.get("derived") and today_doc:
        docs = [today_doc]
    if not docs:  # no document to answer from (the bot could not fetch the page's JSON)
        return None
    values, note = registered(docs[0], values)
    for one in docs:
        said = _answer(one, values)
        if said["computed"]:
            said["lines"] += [note] if note and one is docs[0] else []
            return said
    derived = docs[0].get("derived") or {}
    said = _answer(docs[0], values)
    computed = (docs[0].get("computed") or {}).get("derived") or {}
    reason = said.get("why_not") or why_not(derived, computed)
    if computed.get("tests") and not _tested_names(computed["tests"]) & set(values):
        reason = "the wording you pasted prints none of the values its condition compares"
    cut = [
        t["right"]
        for group in computed.get("tests") or []
        for t in group
        if t["op"] in ("in", "not in", *_ANY)
        and isinstance(t.get("right"), str)
        and t["right"] in values
    ]
    if cut and _collection(values, cut[0]) is None:
        reason = (
            f"{cut[0]} in your paste is cut short (or not a list of names): what is missing "
            "may hold the value"
        )
    said["why_not"] = reason
    said["lines"].append(f"No answer computed from these values: {reason}.")
    return said


def registered(doc: dict, values: dict) -> tuple[dict, str]:
    """The values, with the collection a test reads that the paste does not print whole (or
    prints cut short) taken from the engine's registry at the page's release
    (computed.derived.registry: vLLM's architectures), and the line that says so; else the
    values as they are and no line."""
    reg = ((doc.get("computed") or {}).get("derived") or {}).get("registry") or {}
    name, items = reg.get("name"), reg.get("items")
    if not name or not items or _collection(values, name) is not None:
        return values, ""
    known, ends = set(items), reg.get("suffixes") or []
    named = {w for v in values.values() for w in re.findall(r"[A-Za-z_]\w*", str(v))}
    loaded = sorted(w for w in named - known if converted(w, known, ends))
    return {**values, name: repr([*items, *loaded])}, reg.get("note", "") + counted(
        len(items), loaded
    )


def counted(known: int, loaded: list[str]) -> str:
    """What the registry's line adds when the user's names join the registered ones, so
    that its count and the answer's agree (the line says 415 registered, the answer 416
    names: registry.js's counted alike)."""
    if not loaded:
        return ""
    return f" With yours: {known + len(loaded)} names, {', '.join(loaded)} among them."


def converted(name: str, known: set[str], suffixes: list[str]) -> bool:
    """Whether the engine loads an architecture it does not register as a registered one of
    the same name with another ending (vLLM's ModelRegistry._normalize_arch: the first
    ending of its list the name has, swapped for each; members.js's converted)."""
    end = next((s for s in suffixes if name.endswith(s)), None)
    return end is not None and any(name.replace(end, s) in known for s in suffixes if s != end)


def _js_number(n: float) -> str:
    """A number as JavaScript prints it (String(n)), for the values memory.js prints."""
    return str(int(n)) if n == int(n) and abs(n) < 1e21 else repr(n)


def _to_fixed(n: float) -> str:
    """JavaScript's n.toFixed(2): the exact value, a tie rounded away from zero."""
    return str(Decimal(n).quantize(Decimal("0.01"), ROUND_HALF_UP))


def kv_figures(figures: dict | None, values: dict) -> dict | None:
    """The answer from a KV cache check's own figures (computed.derived.figures: the
    placeholders of --max-model-len and the GiB needed and available), as the page's memory
    section says it (memory.js's fromTheError): the cache a request needs grows with its
    length, so the longest that fits is the length × available / needed, down to a multiple
    of 256. None when the values lack one of them."""
    if not figures:
        return None
    got = [_number(values, figures.get(k)) for k in ("max_model_len", "needed", "available")]
    length, needed, had = got
    if length is None or needed is None or had is None or length <= 0 or needed <= 0 or had < 0:
        return None
    fits = math.floor(length * had / needed / 256) * 256
    shown = [_js_number(n) for n in (length, needed, had)]
    verdict = (
        f"One request of {shown[0]} tokens needs {shown[1]} GiB of KV cache; {shown[2]} GiB is "
        "left for it."
    )
    more = (
        f"give the KV cache {_to_fixed(needed - had)} GiB more per GPU: a higher "
        "--gpu-memory-utilization, more GPUs (--tensor-parallel-size), or --kv-cache-dtype fp8 "
        "(half the cache)."
    )
    if fits > 0:
        change = f"Change --max-model-len {shown[0]} to --max-model-len {fits} or less, or {more}"
    else:
        change = f"Nothing fits the KV cache: {more}"
    source = "Computed from the message's figures: the cache a request needs grows with its length."
    return {"lines": [verdict, change, source], "change": change, "computed": True}


def _answer(doc: dict, values: dict) -> dict:
    derived = doc.get("derived") or {}
    computed = (doc.get("computed") or {}).get("derived") or {}
    figured = kv_figures(computed.get("figures"), values)
    if figured:  # the page's memory section answers alone where it does
        return figured
    out: dict = {"lines": [], "computed": False}
    div = _divisibility(derived, values, computed.get("divisor"))
    if div:
        out["lines"] += [line for line in (div.get("verdict"), div.get("change")) if line]
        out["computed"] = bool(div.get("computed"))
        for key in ("change", "setting", "factor", "nearest", "why_not"):
            if key in div:
                out[key] = div[key]
        if div.get("computed"):
            return out
    tests = _tests(computed.get("tests") or [], values)
    if tests:
        out["lines"] += [line for line in (tests.get("verdict"), tests.get("change")) if line]
        out["computed"] = True
        for key in ("change", "why_not"):
            if key in tests:
                out[key] = tests[key]
        if "passes" in tests["verdict"]:
            return out  # what would pass it is beside the point
    if not div or "change" not in div:
        for item in computed.get("passes") or []:
            found = values_to_try(item, values)
            if found and not tests:
                tried = " or ".join(item["write"].replace("{}", v) for v in found)
                out["lines"].append(f"To pass this check: {tried}.")
                out["computed"] = True
    if not out["lines"]:
        rel = _relation(computed.get("relation"), values)
        if rel:
            out["lines"].append(rel["verdict"])
    return out

"""What every engine's calculator shares: the error it reports, the checks of its inputs and
the worker's entry, one file beside each calculator.

The build imports it as errorkb.projects.protocol; the browser's Pyodide worker is served it
beside the calculators and imports it as errorkb_protocol (calc-worker.js writes each module
as errorkb_<name>.py). So, like the calculators: standard library only, no package imports,
nothing computed at import time.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

LIMIT = 2**20  # upper bound for every size: keeps each answer instant, never a hang


class CalcInputError(ValueError):
    """An input the calculator cannot use; the message names the input."""


@dataclass(frozen=True)
class Result:
    """The first error an engine raises for a configuration, as it prints it: the record id
    ("" for a bare assert, which prints no message and so has no record), the exception, the
    stage its calculator names, the message filled in, and its placeholders' values."""

    id: str
    exception: str
    stage: str
    message: str
    values: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "exception": self.exception,
            "stage": self.stage,
            "message": self.message,
            "values": dict(self.values),
        }


def raised(messages: dict, record_id: str, stage: str, **values) -> Result:
    """The error of a record of `messages` (id -> (exception, template)), filled in."""
    exception, template = messages[record_id]
    return Result(record_id, exception, stage, template.format(**values), values)


def whole(name: str, value, low: int = 1, high: int = LIMIT) -> int:
    """A whole number in [low, high]; decimal strings allowed (URL query values)."""
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isascii() and digits.isdigit()):
            raise CalcInputError(f"{name} must be a whole number, got {value!r}")
        if len(digits) > 12:
            raise CalcInputError(f"{name} must be at most {high}, got {value!r}")
        value = int(text)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise CalcInputError(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise CalcInputError(f"{name} must be between {low} and {high}, got {value}")
    return value


def optional_whole(name: str, value, low: int = 1, high: int = LIMIT) -> int | None:
    """None (or an empty form field) means 'not given'."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return whole(name, value, low, high)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def yes_no(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise CalcInputError(f"{name} must be true or false, got {value!r}")


def divisors_of(n: int) -> list[int]:
    """All divisors of n, ascending, in O(sqrt n)."""
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i * i != n:
                large.append(n // i)
        i += 1
    return small + large[::-1]


def _to_json(value):
    return value.to_dict() if isinstance(value, Result) else value


def answer(ops: dict[str, Callable[..., object]], request: dict) -> dict:
    """A calculator's worker entry: {"op": name, **kwargs} -> {"result": ...} or {"error":
    message}, the op one of `ops`, its arguments checked against the function's."""
    if not isinstance(request, dict):
        return {"error": "request must be an object with an 'op'"}
    args = dict(request)
    op = args.pop("op", None)
    fn = ops.get(op) if isinstance(op, str) else None
    if fn is None:
        return {"error": f"unknown op {op!r}; expected one of {', '.join(ops)}"}
    code = fn.__code__
    known = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    unknown = sorted(set(args) - set(known))
    if unknown:
        return {"error": f"{op} does not take {', '.join(unknown)}"}
    defaults = fn.__defaults__ or ()
    missing = [n for n in known[: code.co_argcount - len(defaults)] if n not in args]
    if missing:
        return {"error": f"{op} needs {', '.join(missing)}"}
    try:
        return {"result": _to_json(fn(**args))}
    except CalcInputError as exc:
        return {"error": str(exc)}

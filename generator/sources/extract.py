"""`errorkb extract`: stub records for every `raise` with a literal message in a source tree.

A source tree is a folder, a wheel or an sdist. Each `raise X(<message>)` whose message is a
string, an f-string, an implicit or `+` concatenation, a %-format or a `.format()` call (or a
local variable or module constant holding one) becomes a *site*: exception, message template,
path, line, enclosing qualname. Sites with the same exception and the same message shape are one
error and get one record; records that already exist are matched and only their location is
rewritten, never their curated text.

The template is the message as the program prints it, each `{expr}` turned into a readable,
unique `{name}` hole and literal braces written `{{`/`}}`. Format specs and conversions
(`{x:.2f}`, `{x!r}`, `%5d`) become a plain hole: the printed text differs from the template only
in the shape of the value (digits, quotes), never in its literal text. Exceptions whose `__str__`
is not the message itself (`KeyError` quotes it) are written with the bare message too: it is
what the user pastes after stripping the quotes, and what search looks for.
"""

import ast
import builtins
import contextlib
import copy
import json
import os
import posixpath
import re
import stat
import string
import sys
import tarfile
import time
import warnings
import zipfile
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import partial
from pathlib import Path
from typing import IO

import yaml

from errorkb.content import template
from errorkb.content.derived import claimed
from errorkb.content.load import (
    SCHEMA_LINE,
    load_content,
    parse_yaml,
    path_problem,
    record_fields,
)
from errorkb.content.model import Content, Record
from errorkb.registry import wing
from errorkb.sources import explain
from errorkb.sources import named as said
from errorkb.sources.scaffold import new_id

# Folders skipped unless --include-vendored: code copied from other projects.
VENDORED = frozenset({"vendor", "third_party", "_vendor", "thirdparty"})
# Test code, always skipped: it raises to check the program, not to tell its users.
TESTS = re.compile(r"(?:^|/)(?:tests?/|conftest\.py$|test_[^/]*\.py$|[^/]*_test\.py$)")
# Folders never worth parsing in a checkout.
_PRUNED = frozenset({"__pycache__", "node_modules", "site-packages"})

# Limits on what a source may cost: it may be an archive made to exhaust memory or time.
# One file, by its header and as read (headers lie). Parsing takes about 100 times a file's
# size in memory (a 17 MB file: 1.9 GB); vLLM's biggest, gpu_model_runner.py (7,800 lines), is
# about 400 KB.
MAX_FILE_BYTES = 2 * 2**20
# All the files of a source, held in memory together: about 4 times vLLM's 45 MB.
MAX_TOTAL_BYTES = 200 * 2**20
# Sites in one file: vLLM's busiest file holds about 200 records' sites; explaining a site
# costs time in proportion to its function, so thousands in one function take minutes.
MAX_SITES_PER_FILE = 2_000
# A message's characters: vLLM's longest is about 1,500; a record must stay a small file.
MAX_MESSAGE_CHARS = 4_000
# New records one run makes: SGLang, the largest project, has about 18,500; the limits above
# still let a source raise 100 files x 1,999 messages, a content/ of 200,000 files to build.
MAX_NEW_RECORDS = 50_000

# Why a raise statement gave no site, in the order the summary lists them.
SKIP_REASONS = {
    "re-raise": "bare `raise` or raising an existing exception object",
    "no-message": "`raise X`, `raise X()` or no message argument",
    "factory-call": "exception built by a function call; its class is unknown",
    "non-literal": "message computed at run time (a parameter, str(e), a call, ...)",
    "no-literal-text": "message with no letter or digit outside its placeholders",
    "bad-format": "%-format or .format() that does not fit its arguments",
    "too-long": f"message over {MAX_MESSAGE_CHARS:,} characters",
}

LOGGER_STYLE_TAG = "logger-style-args"

# Keyword arguments that carry the message when there is no positional one
# (`HTTPException(status_code=400, detail="...")`).
_MESSAGE_KEYWORDS = ("message", "msg", "detail", "reason", "description")
# Keyword arguments an exception does not print: an HTTP error's status and headers (its
# detail is what the client reads).
_UNPRINTED = ("status_code", "headers")
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<conv>.?)",
    re.S,
)
_INT_CONV, _FLOAT_CONV = set("diouxX"), set("eEfFgG")
_WS = re.compile(r"\s+")
HOLE = "\x00"
# Parse in a process pool above this many bytes of source (vLLM: 45 MB, 3,000 files).
PARALLEL_BYTES = 4_000_000


class ExtractError(Exception):
    """Extraction cannot go on; the message says why."""


class SourceError(ExtractError):
    """The source tree cannot be read, or the project is unknown."""


# Sites -------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """One raise statement with a literal message."""

    exception: str
    template: str
    path: str
    line: int
    function: str = ""
    snippet: str = ""
    tags: tuple[str, ...] = ()
    types: tuple[tuple[str, str], ...] = ()  # placeholder -> int / float / any
    kind: str = "raise"  # or "assert", "log" (a logger call), "http" (an API error response)
    level: str = ""  # of a log: warning, error, info, critical
    guard: str = ""  # the condition that leads to it (the innermost `if`, or the assert's test)
    derived: dict | None = field(default=None, compare=False)  # explain.derive, without ref
    cut: bool = False  # the message goes on past the template, in a way the code does not show
    former: str = ""  # the template the scanner read before SCAN_FORMAT 6, where it differs

    @property
    def key(self) -> tuple[str, str]:
        return match_key(self.exception, self.template)

    def place(self) -> dict:
        out = {"path": self.path, "line": self.line}
        if self.function:
            out["function"] = self.function
        return out


def match_key(exception: str, message: str) -> tuple[str, str]:
    """What two templates share when they are the same error printed the same way.

    Placeholder names do not count (`{tp}` and `{tp_size}` print alike), runs of white space are
    one space, and quotes hugging a hole belong to the hole (`'{name}'` prints like `{name!r}`).
    """
    parts: list[str] = []
    for seg in template.parse(message):
        parts.append(HOLE if isinstance(seg, template.Hole) else seg)
    for i in range(1, len(parts) - 1):
        if parts[i] != HOLE or parts[i - 1] == HOLE or parts[i + 1] == HOLE:
            continue
        before, after = parts[i - 1], parts[i + 1]
        if before[-1:] in ("'", '"') and after[:1] == before[-1:]:
            parts[i - 1], parts[i + 1] = before[:-1], after[1:]
    return exception, _WS.sub(" ", "".join(parts)).strip()


# Message forms -----------------------------------------------------------------


class _BadFormat(Exception):
    pass


@dataclass
class _Hole:
    expr: ast.AST | None  # the expression printed, or None when only a name is known
    hint: str = ""  # a name to use when there is no expression
    type: str = ""  # int or float when the format says so


_Parts = list  # of str | _Hole


def _spec_type(spec: str) -> str:
    spec = spec.strip()
    if spec[-1:] in "bdoxXn" and spec:
        return "int"
    if spec[-1:] in "eEfFgG%" and spec:
        return "float"
    return ""


def _constant_text(node: ast.expr | None) -> str | None:
    """The text of a format spec that has no nested fields."""
    if node is None:
        return ""
    if isinstance(node, ast.JoinedStr):
        texts = [str(v.value) for v in node.values if isinstance(v, ast.Constant)]
        if len(texts) == len(node.values):
            return "".join(texts)
    return None


# An f-string's conversions (!s, !r, !a, none) by their number in the AST.
_CONVERSIONS: dict[int, Callable[[object], object]] = {
    -1: lambda v: v,
    115: str,
    114: repr,
    97: ascii,
}


def _formatted(value: ast.FormattedValue) -> str | _Hole:
    """One `{expr!c:spec}` of an f-string: a hole, or literal text for a constant."""
    spec = _constant_text(value.format_spec)
    if isinstance(value.value, ast.Constant) and spec is not None:
        const = value.value.value
        try:
            return format(_CONVERSIONS[value.conversion](const), spec)
        except (TypeError, ValueError):
            pass
    kind = _spec_type(spec or "") if value.conversion == -1 else ""
    return _Hole(value.value, type=kind)


class _Messages:
    """Turns a message expression into literal text and holes, resolving simple variables."""

    def __init__(self, scopes: list["_Scope"]):
        self.scopes = scopes
        # Whole messages (SCAN_FORMAT 6): a `sep.join([...])` of literal pieces is read. False:
        # read as before, for a site's `former` template.
        self.whole = True
        # The value a variable holds where the message is built, read from the statements
        # before it (_Reach); None: not known.
        self.override: dict[str, _Parts | None] = {}
        # The module's functions that return a message built from their arguments
        # (`def _make_log_backend(name): return f"Using {name} backend"`), by name.
        self.formatters: dict[str, Relay] = {}

    def parts(self, node: ast.AST, depth: int = 0) -> _Parts | None:
        """Literal parts and holes, or None when the message is not a string form."""
        if depth > 8:
            return None
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            # An f-string's parts are its literal texts and its {fields}; a plain `{name}` of
            # a variable that holds a message form is that form's text.
            out: _Parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(v.value)
                elif isinstance(v, ast.FormattedValue):
                    inner = self._spliced(v, depth)
                    out += inner if inner is not None else [_formatted(v)]
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.parts(node.left, depth + 1)
            right = self.parts(node.right, depth + 1)
            if left is None and right is None:
                return None
            return (left if left is not None else [_Hole(node.left)]) + (
                right if right is not None else [_Hole(node.right)]
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            fmt = self.literal(node.left, depth + 1)
            return None if fmt is None else _percent(fmt, self.items(node.right) or node.right)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            fmt = self.literal(node.func.value, depth + 1)
            return None if fmt is None else _str_format(fmt, node.args, node.keywords)
        if self.whole and isinstance(node, ast.Call):
            formatter = (
                self.formatters.get(node.func.id) if isinstance(node.func, ast.Name) else None
            )
            bound = None if formatter is None else _bound(formatter, node)
            if formatter is not None and bound is not None:
                # The message the function returns, with the call's arguments in it.
                built = _Substitute(bound).visit(copy.deepcopy(formatter.outcomes[0][2]))
                return self.parts(built, depth + 1)
            return self._join(node, depth)
        if isinstance(node, ast.Name):
            if node.id in self.override:
                known = self.override[node.id]
                return None if known is None else list(known)
            value = self.resolve(node.id)
            return None if value is None else self.parts(value, depth + 1)
        return None

    def _spliced(self, field: ast.FormattedValue, depth: int) -> _Parts | None:
        """The text of `{name}` in an f-string when the variable holds a message form
        (`scope = f"Field '{name}'"`), printed as is (no conversion, no format spec)."""
        if not (
            self.whole
            and isinstance(field.value, ast.Name | ast.Constant | ast.JoinedStr)
            and field.conversion == -1
            and field.format_spec is None
        ):
            return None
        # A literal spliced in (`f"{'x'}"`: an argument read into a message a helper or an
        # exception class builds) is its text.
        return self.parts(field.value, depth + 1)

    def _join(self, node: ast.Call, depth: int) -> _Parts | None:
        """`", ".join(["a", f"b {x}"])`: the pieces of a literal list (or tuple, or a variable
        holding one) with the separator between them."""
        func = node.func
        if _func_name(node) != "join" or not isinstance(func, ast.Attribute):
            return None
        sep = self.literal(func.value, depth + 1)
        if sep is None or len(node.args) != 1 or node.keywords:
            return None
        items: ast.AST | None = node.args[0]
        if isinstance(items, ast.Name) and items.id not in self.override:
            name, items = items.id, self.resolve(items.id)
            if items is not None and self.mutated(name):
                return None  # a list appended to: its items are not those it started with
        if not isinstance(items, ast.List | ast.Tuple) or not items.elts:
            return None
        out: _Parts = []
        for i, elt in enumerate(items.elts):
            if isinstance(elt, ast.Starred):
                return None
            if i:
                out.append(sep)
            piece = self.parts(elt, depth + 1)
            out += piece if piece is not None else [_Hole(elt)]
        return out

    def literal(self, node: ast.AST, depth: int) -> str | None:
        """A plain string constant, directly or through a variable."""
        if isinstance(node, ast.Name) and node.id in self.override:
            known = self.override[node.id]
            if known and all(isinstance(p, str) for p in known):
                return "".join(known)
            return None
        if isinstance(node, ast.Name) and depth <= 8:
            value = self.resolve(node.id)
            return None if value is None else self.literal(value, depth + 1)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return None

    def items(self, node: ast.expr) -> ast.Tuple | None:
        """The literal tuple or list a variable is assigned once and never changed in place
        (`args = (a, b)` before `msg % args` or `logger.warning(msg, *args)`), as a tuple."""
        if not isinstance(node, ast.Name) or node.id in self.override or self.mutated(node.id):
            return None
        value = self.resolve(node.id)
        if isinstance(value, ast.Tuple | ast.List) and not any(
            isinstance(e, ast.Starred) for e in value.elts
        ):
            return ast.Tuple(elts=list(value.elts), ctx=ast.Load())
        return None

    def spread(self, fmt: str, args: list[ast.expr]) -> list[ast.expr] | None:
        """A logger call's arguments with its one `*x` spread over the conversions it fills:
        x's items where the code shows them (items), else `x[0]`, `x[1]`, ...; None when
        they cannot fill the format (two spreads, too many arguments)."""
        spreads = [i for i, a in enumerate(args) if isinstance(a, ast.Starred)]
        if len(spreads) != 1:
            return None if spreads else args
        at = spreads[0]
        value = args[at].value  # type: ignore[attr-defined]
        wanted = len(_percent_specs(fmt)[1]) - (len(args) - 1)
        known = self.items(value)
        if known is not None:
            fill: list[ast.expr] = list(known.elts)
        elif isinstance(value, ast.Name | ast.Attribute):  # a name the holes are named after
            fill = [ast.Subscript(value=value, slice=ast.Constant(k)) for k in range(wanted)]
        else:
            return None
        if wanted < 1 or len(fill) != wanted:
            return None
        return [*args[:at], *fill, *args[at + 1 :]]

    def mutated(self, name: str) -> bool:
        """Whether the nearest scope that binds the name changes it in place
        (`name.append(x)`, `name[i] = x`, `name += [x]`)."""
        for scope in reversed(self.scopes):
            if name in scope.bindings():
                return name in scope.mutated()
        return False

    def resolve(self, name: str) -> ast.AST | None:
        """The value of a variable assigned exactly once, in the nearest scope that binds it."""
        for scope in reversed(self.scopes):
            found = scope.bindings().get(name)
            if found is not None:
                return found[0] if len(found) == 1 else None
        return None


# Messages built in a variable ---------------------------------------------------

# Statements _Reach may read for one message, and the values of a variable it keeps (one per
# way through the `if`s before the raise): past them the message is left as before.
REACH_STATEMENTS = 2_000
REACH_VALUES = 8


class _GiveUp(Exception):
    pass


def _binds(node: ast.AST, name: str) -> bool:
    """Whether a statement assigns the name anywhere in it (not in nested functions)."""
    todo = [node]
    while todo:
        cur = todo.pop()
        if isinstance(cur, ast.Name) and cur.id == name and isinstance(cur.ctx, ast.Store):
            return True
        if cur is not node and isinstance(
            cur, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
        ):
            continue
        todo.extend(ast.iter_child_nodes(cur))
    return False


def _ends(block: list) -> bool:
    """A block whose last statement leaves it for good: the message is not built through it."""
    return bool(block) and isinstance(block[-1], ast.Raise | ast.Return)


def _parts_key(parts: "_Parts | None") -> tuple:
    if parts is None:
        return (None,)
    return tuple(
        p if isinstance(p, str) else (ast.dump(p.expr) if p.expr else "", p.hint) for p in parts
    )


class _Reach:
    """The values a variable can hold at a statement, read from the statements before it in
    its function: `msg = ...`, `msg += ...` (also in `if` branches and once through a loop
    body), never run. A value is literal parts and holes, or None where the code does not
    show it (a parameter, a call's result)."""

    def __init__(self, messages: "_Messages", name: str):
        self.messages = messages
        self.name = name
        self.budget = REACH_STATEMENTS

    def before(self, frames: list[list]) -> list:
        values: list = [None]
        for statements, at in frames:
            values = self.block(statements[:at], values)
            if not values:
                raise _GiveUp  # not reached with the variable set
        return values

    def block(self, statements: list, values: list) -> list:
        for stmt in statements:
            values = self.stmt(stmt, values)
            if not values:
                return []
        return values

    def stmt(self, stmt: ast.stmt, values: list) -> list:
        self.budget -= 1
        if self.budget < 0:
            raise _GiveUp
        name = self.name
        if isinstance(stmt, ast.Raise | ast.Return):
            return []
        if not _binds(stmt, name) and not (
            isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and stmt.name == name
        ):
            return values
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
        ):
            return self._unique([self.value(stmt.value, v) for v in values])
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.value is not None
        ):
            return self._unique([self.value(stmt.value, v) for v in values])
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            if not isinstance(stmt.op, ast.Add):
                return [None]
            return self._unique([self.add(v, stmt.value) for v in values])
        if isinstance(stmt, ast.If):
            body = [] if _ends(stmt.body) else self.block(stmt.body, values)
            other = [] if _ends(stmt.orelse) else self.block(stmt.orelse, values)
            return self._unique(body + other)
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            if not isinstance(stmt, ast.While) and _binds(stmt.target, name):
                return [None]
            # Once through the body, as far as the code shows (an `if` in it that skips the
            # append keeps the value as it was too).
            once = self.block(stmt.body, values)
            return self.block(stmt.orelse, self._unique(once or values))
        if isinstance(stmt, ast.With | ast.AsyncWith):
            if any(i.optional_vars and _binds(i.optional_vars, name) for i in stmt.items):
                return [None]
            return self.block(stmt.body, values)
        if isinstance(stmt, ast.Try | ast.TryStar):
            done = self.block(stmt.body, values)
            done = self.block(stmt.orelse, done) if done else done
            # A handler: as if the body failed before it changed the variable.
            for handler in stmt.handlers:
                if not _ends(handler.body):
                    done = done + self.block(handler.body, values)
            done = self._unique(done)
            return self.block(stmt.finalbody, done) if done else done
        if isinstance(stmt, ast.Match):
            out: list = []
            for case in stmt.cases:
                if not _ends(case.body):
                    out += self.block(case.body, values)
            return self._unique(out)
        return [None]  # bound otherwise: unpacked, imported, a `with ... as`, a def

    def value(self, expr: ast.expr, current) -> "_Parts | None":
        override = self.messages.override
        had, saved = self.name in override, override.get(self.name)
        override[self.name] = current
        try:
            return self.messages.parts(expr)
        except _BadFormat:
            return None
        finally:
            if had:
                override[self.name] = saved
            else:
                del override[self.name]

    def add(self, current, expr: ast.expr) -> "_Parts | None":
        right = self.value(expr, current)
        if current is None and right is None:
            return None
        left = current if current is not None else [_Hole(ast.Name(self.name))]
        return list(left) + (right if right is not None else [_Hole(expr)])

    @staticmethod
    def _unique(values: list) -> list:
        seen: dict = {}
        for value in values:
            seen.setdefault(_parts_key(value), value)
        return list(seen.values())


def _percent_specs(fmt: str) -> tuple[_Parts, list[tuple[str, str]]]:
    """The literal parts of a %-format with an index per conversion, and the conversions:
    (key, conversion) each, a `*` width or precision being one of its own."""
    specs: list[tuple[str, str]] = []
    parts: _Parts = []
    pos = 0
    while (at := fmt.find("%", pos)) >= 0:
        parts.append(fmt[pos:at])
        match = _PERCENT.match(fmt, at)
        assert match is not None  # every part of the pattern is optional
        conv = match.group("conv")
        if conv == "%":
            parts.append("%")
        elif conv and conv in "diouxXeEfFgGcrsab":
            for star in ("width", "prec"):
                if match.group(star) == "*":
                    specs.append(("*", ""))
            specs.append((match.group("key"), conv))
            parts.append(len(specs) - 1)
        else:
            raise _BadFormat(f"bad conversion at {at}")
        pos = match.end()
    parts.append(fmt[pos:])
    return parts, specs


def _percent(fmt: str, rhs: ast.expr) -> _Parts:
    """`"..." % args`: holes for the conversions, `%%` as `%`."""
    parts, specs = _percent_specs(fmt)
    keyed = [key for key, _ in specs if key not in (None, "*")]
    values: dict = {}
    if keyed:
        mapping: dict[str, ast.expr] = {}
        if isinstance(rhs, ast.Dict):
            names = [
                k.value
                for k in rhs.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
            if len(names) == len(rhs.keys):
                mapping = dict(zip(names, rhs.values, strict=True))
        for i, (key, _) in enumerate(specs):
            if key in mapping:
                values[i] = _Hole(mapping[key])
            elif isinstance(rhs, ast.Dict) and None not in rhs.keys:  # no **spread in it
                raise _BadFormat(f"no key {key!r}")
            else:
                values[i] = _Hole(None, hint=key or "value")
    else:
        if isinstance(rhs, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in rhs.elts):
            args = list(rhs.elts)
            if len(args) != len(specs):
                raise _BadFormat("argument count")
        elif len(specs) == 1 and not isinstance(rhs, ast.Tuple):
            args = [rhs]
        else:
            args = [ast.Subscript(value=rhs, slice=ast.Constant(i)) for i in range(len(specs))]
        values = {i: _Hole(arg) for i, arg in enumerate(args)}
    out: _Parts = []
    for part in parts:
        if isinstance(part, int):
            conv = specs[part][1]
            if specs[part][0] == "*":
                continue
            hole = values[part]
            hole.type = "int" if conv in _INT_CONV else "float" if conv in _FLOAT_CONV else ""
            out.append(hole)
        elif part:
            out.append(part)
    return out


_FIELD_REST = re.compile(r"\.([^.[]+)|\[([^\]]+)\]")


def _str_format(fmt: str, args: list, keywords: list) -> _Parts:
    """`"...".format(...)`: holes for the fields, following `.attr` and `[key]` of a field."""
    formatter = string.Formatter()
    try:
        items = list(formatter.parse(fmt))
    except ValueError as exc:
        raise _BadFormat(str(exc)) from exc
    starred = any(isinstance(a, ast.Starred) for a in args)
    kwargs = {k.arg: k.value for k in keywords if k.arg}
    double_star = any(k.arg is None for k in keywords)
    out: _Parts = []
    auto = 0
    for literal, field_name, spec, conv in items:
        if literal:
            out.append(literal)
        if field_name is None:
            continue
        first = re.split(r"[.[]", field_name, maxsplit=1)[0]
        rest = field_name[len(first) :]
        expr, hint = None, first
        if first == "" or first.isdigit():
            index = auto if first == "" else int(first)
            auto += first == ""
            if index < len(args) and not any(isinstance(a, ast.Starred) for a in args[: index + 1]):
                expr = args[index]
            elif not starred:
                raise _BadFormat(f"no argument {index}")
            else:
                hint = "value"
        elif first in kwargs:
            expr = kwargs[first]
        elif not double_star:
            raise _BadFormat(f"no argument {first!r}")
        for attr, key in _FIELD_REST.findall(rest):
            if expr is None:
                hint = attr or key
                continue
            if attr:
                expr = ast.Attribute(value=expr, attr=attr)
            else:
                expr = ast.Subscript(
                    value=expr, slice=ast.Constant(int(key) if key.isdigit() else key)
                )
        for _, nested, _, _ in formatter.parse(spec or ""):
            auto += nested == ""
        out.append(_Hole(expr, hint=hint, type="" if conv else _spec_type(spec or "")))
    return out


# Placeholder names ------------------------------------------------------------

# Attributes too generic to name a value alone: `x.shape` is `x_shape`.
_GENERIC_ATTRS = frozenset(
    {"shape", "dtype", "device", "value", "values", "name", "names", "size", "type", "id"}
    | {"data", "keys", "items", "ndim", "numel", "dim", "len", "length", "count", "kind"}
)
# Calls that print their argument: `str(x)` is named after x.
TRANSPARENT_CALLS = frozenset(
    {"str", "repr", "int", "float", "bool", "list", "tuple", "set", "frozenset", "sorted"}
    | {"dict", "ascii", "format", "reversed", "iter", "item", "tolist", "lower", "upper"}
    | {"strip", "lstrip", "rstrip", "cpu", "numpy", "copy", "detach"}
)
# Calls that compute something from their argument: `len(x)` is `len_x`.
_DERIVED_CALLS = frozenset(
    {"len", "sum", "min", "max", "abs", "round", "any", "all", "hex", "bin", "oct", "id", "hash"}
)
_OP_WORDS = {
    ast.Add: "plus",
    ast.Sub: "minus",
    ast.Mult: "times",
    ast.Div: "div",
    ast.FloorDiv: "div",
    ast.Mod: "mod",
    ast.Pow: "pow",
}
_RENAMED = {"e": "error", "err": "error", "exc": "error", "ex": "error"}


def _raw_name(node: ast.AST | None) -> str:
    """A readable name for the value an expression prints."""
    match node:
        case ast.Name(id=name):
            return name
        case ast.Attribute(value=inner, attr="__name__" | "__qualname__"):
            if isinstance(inner, ast.Call) and _func_name(inner) == "type" and inner.args:
                base = _raw_name(inner.args[0])
                return "class_name" if base in ("self", "cls") else base + "_type"
            if isinstance(inner, ast.Attribute) and inner.attr == "__class__":
                base = _raw_name(inner.value)
                return "class_name" if base in ("self", "cls") else base + "_type"
            base = _raw_name(inner)
            return "class_name" if base in ("self", "cls") else base + "_name"
        case ast.Attribute(value=inner, attr=attr):
            if attr.strip("_") in _GENERIC_ATTRS or attr == "__class__":
                return _qualify(_raw_name(inner), attr)
            return attr
        case ast.Subscript(value=inner, slice=key):
            base = _raw_name(inner)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value:
                return key.value if re.fullmatch(r"\w+", key.value) else base
            if isinstance(key, ast.Constant) and isinstance(key.value, int):
                return f"{base}_{key.value}"
            if isinstance(key, ast.UnaryOp) and isinstance(key.operand, ast.Constant):
                return f"{base}_last" if key.operand.value == 1 else base
            if isinstance(key, ast.Name):
                return f"{base}_{key.id}"
            return base
        case ast.Call(func=func, args=args, keywords=keywords):
            fname = _func_name(node)
            first = args[0] if args else None
            if isinstance(func, ast.Attribute) and fname == "join" and first is not None:
                return _raw_name(first)
            named = args[1] if fname == "getattr" and len(args) > 1 else first
            if fname in ("get", "pop", "getattr") and isinstance(named, ast.Constant):
                return str(named.value)
            if fname == "type" and first is not None:
                return _raw_name(first) + "_type"
            if fname in _DERIVED_CALLS and first is not None:
                return f"{fname}_{_raw_name(first)}"
            if fname in TRANSPARENT_CALLS:
                if first is not None:
                    return _raw_name(first)
                if isinstance(func, ast.Attribute):
                    return _raw_name(func.value)
            fmt_like = fname.lstrip("_").startswith(("format", "fmt", "pretty", "human", "to_str"))
            if fmt_like and len(args) == 1 and not keywords:
                return _raw_name(first)
            bare = fname.lstrip("_")
            bare = bare[4:] if bare.startswith("get_") and len(bare) > 4 else bare
            if isinstance(func, ast.Attribute) and (
                bare in _GENERIC_ATTRS or bare in _DERIVED_CALLS
            ):
                return _qualify(_raw_name(func.value), bare)
            return bare
        case ast.BinOp(left=left, op=op, right=right):
            lname, rname = _raw_name(left), _raw_name(right)
            word = _OP_WORDS.get(type(op))
            name = f"{lname}_{word}_{rname}" if word and lname and rname else lname or rname
            return name if len(name) <= 40 else lname
        case ast.UnaryOp(operand=operand) | ast.Starred(value=operand) | ast.Await(value=operand):
            return _raw_name(operand)
        case ast.BoolOp(values=values):
            return _raw_name(values[0])
        case ast.IfExp(body=body):
            return _raw_name(body)
        case ast.NamedExpr(target=target):
            return _raw_name(target)
        case ast.ListComp(generators=gens) | ast.SetComp(generators=gens):
            return _raw_name(gens[0].iter)
        case ast.GeneratorExp(generators=gens) | ast.DictComp(generators=gens):
            return _raw_name(gens[0].iter)
        case ast.List() | ast.Tuple() | ast.Set() | ast.Dict():
            return "values"
        case ast.JoinedStr() | ast.Constant(value=str()):
            return "text"
    return "value"


def expression_name(node: ast.AST) -> str:
    """The placeholder name the extractor gives a hole that prints this expression
    (`len(items)` is `len_items`, `a - 1` is `a_minus_value`), before any `_2` that keeps
    names unique in one template."""
    return _clean(_raw_name(node))


def _qualify(base: str, attr: str) -> str:
    """`x.shape` is `x_shape`; `self.shape` is `shape`."""
    return attr if base in ("", "self", "cls", "value") else f"{base}_{attr}"


def _func_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _clean(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]+", "_", name)
    name = re.sub(r"_+", "_", name).strip("_")
    name = _RENAMED.get(name, name)
    if not name:
        return "value"
    return name if not name[0].isdigit() else "n" + name


class _Namer:
    """Unique names within one template; the same expression keeps one name."""

    def __init__(self):
        self.by_expr: dict[str, str] = {}
        self.taken: set[str] = set()

    def name(self, hole: _Hole) -> str:
        key = ast.dump(hole.expr) if hole.expr is not None else "hint:" + hole.hint
        if key not in self.by_expr:
            base = _clean(_raw_name(hole.expr) if hole.expr is not None else hole.hint)
            name, n = base, 1
            while name in self.taken:
                n += 1
                name = f"{base}_{n}"
            self.taken.add(name)
            self.by_expr[key] = name
        return self.by_expr[key]


def _build(parts: _Parts) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The template text and the type of each placeholder."""
    namer = _Namer()
    out, types = [], dict[str, str]()
    for part in parts:
        if isinstance(part, str):
            out.append(part.replace("{", "{{").replace("}", "}}"))
            continue
        name = namer.name(part)
        kind = part.type or _expr_type(part.expr)
        types[name] = kind if types.get(name, kind) == kind else ""
        out.append("{" + name + "}")
    return "".join(out), tuple((n, t or "any") for n, t in types.items())


# Names that hold a count or size wherever vLLM uses them: tp_size, num_heads, max_model_len.
_INT_NAME = re.compile(r"(?:num|n)_\w+|\w+_(?:size|len|count)")
# An exception caught and printed, a reason: free text, a sentence of its own.
_ERROR_NAMES = frozenset({"e", "err", "exc", "ex", "error", "exception", "reason", "msg"})


def _expr_type(expr: ast.AST | None) -> str:
    """A placeholder's type where the code makes it clear: len(), int(), integer
    arithmetic and count-like names are int, float() float, a caught exception text."""
    match expr:
        case ast.Call() if _func_name(expr) in ("len", "int"):
            return "int"
        case ast.Call() if _func_name(expr) == "float":
            return "float"
        case ast.Call(args=[arg]) if _func_name(expr) == "str":
            return _expr_type(arg) if _expr_type(arg) == "text" else ""
        case ast.BinOp(op=ast.FloorDiv()):
            return "int"
        case ast.BinOp(left=left, op=ast.Add() | ast.Sub() | ast.Mult() | ast.Mod(), right=right):
            sides = {_expr_type(left), _expr_type(right)}
            return "int" if sides == {"int"} else ""
        case ast.Constant(value=int() as value) if not isinstance(value, bool):
            return "int"
        case ast.Name(id=name) if name in _ERROR_NAMES:
            return "text"
        case ast.Name(id=name) | ast.Attribute(attr=name) if _INT_NAME.fullmatch(name):
            return "int"
    return ""


def _repr_body(text: str, quote: str) -> str:
    """The inside of repr(text) when repr uses this quote character."""
    out = []
    for ch in text:
        if ch in ("\\", quote):
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif not ch.isprintable():
            out.append(repr(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def _logger_tuple(parts: _Parts, extra: list) -> _Parts:
    """`raise X("... %s", x)`: the exception prints its args tuple, `%s` and all."""
    literal = "".join(p for p in parts if isinstance(p, str))
    quote = '"' if "'" in literal and '"' not in literal else "'"
    out: _Parts = ["(" + quote]
    out += [_repr_body(p, quote) if isinstance(p, str) else p for p in parts]
    out.append(quote)
    for arg in extra:
        out.append(", ")
        if isinstance(arg, ast.Constant):
            out.append(repr(arg.value))
        else:
            out.append(_Hole(arg))
    out.append(")")
    return out


def _args_tuple(items: list[_Parts | None], args: list) -> _Parts | None:
    """`X("a ", f"b {x}", 3)`: the repr of the arguments' tuple, as BaseException prints it;
    None when no argument is a string form."""
    if all(item is None for item in items):
        return None
    out: _Parts = ["("]
    for i, (item, arg) in enumerate(zip(items, args, strict=True)):
        if i:
            out.append(", ")
        if item is None:
            out.append(repr(arg.value) if isinstance(arg, ast.Constant) else _Hole(arg))
            continue
        literal = "".join(p for p in item if isinstance(p, str))
        quote = '"' if "'" in literal and '"' not in literal else "'"
        out += [quote, *(_repr_body(p, quote) if isinstance(p, str) else p for p in item), quote]
    out.append(",)" if len(args) == 1 else ")")
    return out


# Exceptions whose str() is the repr of their arguments' tuple when given more than one (the
# OSError family prints "[Errno n] text" instead, KeyError a single key's repr).
_TUPLE_PRINTING = frozenset(
    {"Exception", "ValueError", "RuntimeError", "TypeError", "NotImplementedError"}
    | {"AssertionError", "AttributeError", "IndexError", "KeyError", "LookupError"}
    | {"ImportError", "ModuleNotFoundError", "ArithmeticError", "ZeroDivisionError"}
    | {"OverflowError", "RecursionError", "MemoryError", "BufferError", "EOFError"}
    | {"NameError", "UnboundLocalError", "StopIteration", "SystemError", "ReferenceError"}
)


def _plain_subclasses(module: ast.Module, known: set[str]) -> set[str]:
    """The module's classes that subclass one that prints its arguments' tuple and define
    neither `__init__` nor `__str__` (or `__repr__`): they print it too."""
    found: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in stmt.bases}
        own = {s.name for s in stmt.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
        if bases & (known | found) and not own & {"__init__", "__str__", "__repr__", "__new__"}:
            found.add(stmt.name)
    return found


_LOGGER_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0+]*(?:\d+|\*)?(?:\.\d*)?[hlL]?[diouxXeEfFgGcrsa]")


def _has_percent(parts: _Parts) -> bool:
    """Whether the literal text has a %-conversion (a space flag does not count: `50% of`)."""
    text = "".join(p for p in parts if isinstance(p, str)).replace("%%", "")
    return _LOGGER_SPEC.search(text) is not None


# The scanner ------------------------------------------------------------------


# Methods that change a list in place.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


class _Scope:
    """Names bound in a function or module body (not in nested functions or classes)."""

    def __init__(self, node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
        self.node = node
        self._bindings: dict[str, list] | None = None
        self._mutated: set[str] | None = None

    def mutated(self) -> set[str]:
        """The names whose value this scope changes in place: a method that mutates a list,
        an item or slice assigned, an augmented assignment."""
        if self._mutated is None:
            found = set()
            for node in ast.walk(self.node):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.attr in _MUTATORS
                ):
                    found.add(node.func.value.id)
                elif (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.ctx, ast.Store | ast.Del)
                    and isinstance(node.value, ast.Name)
                ):
                    found.add(node.value.id)
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    found.add(node.target.id)
            self._mutated = found
        return self._mutated

    def bindings(self) -> dict[str, list]:
        """name -> the values assigned to it; None stands for a binding that is not `x = ...`."""
        if self._bindings is None:
            found: dict[str, list] = defaultdict(list)
            node = self.node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                    if arg is not None:
                        found[arg.arg].append(None)
            folds: dict[int, ast.AST | None] = {}
            _fold_appends(node.body, folds)
            for stmt in node.body:
                _bind(stmt, found, folds)
            self._bindings = found
        return self._bindings


def _fold_appends(statements: list, folds: dict[int, ast.AST | None]) -> None:
    """`msg = "..."` followed at once by `msg += f"..."` (one or more) in the same block is one
    value, the sum: folds maps the assignment to it and each `+=` to None (not a binding).
    Nested blocks too, not nested functions or classes."""
    for i, stmt in enumerate(statements):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                _fold_appends(block, folds)
        for handler in getattr(stmt, "handlers", ()):
            _fold_appends(handler.body, folds)
        for case in getattr(stmt, "cases", ()):
            _fold_appends(case.body, folds)
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            continue
        name, value = stmt.targets[0].id, stmt.value
        for later in statements[i + 1 :]:
            if not (
                isinstance(later, ast.AugAssign)
                and isinstance(later.op, ast.Add)
                and isinstance(later.target, ast.Name)
                and later.target.id == name
            ):
                break
            value = ast.BinOp(value, ast.Add(), later.value)
            folds[id(later)] = None
        if value is not stmt.value:
            folds[id(stmt)] = value


def _bind(node: ast.AST, found: dict, folds: dict[int, ast.AST | None] | None = None) -> None:
    folds = folds if folds is not None else {}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        found[node.name].append(None)
        return
    if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return
    if isinstance(node, ast.AugAssign) and id(node) in folds:
        return  # a `+=` folded into the assignment before it
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                value = folds.get(id(node), node.value)
                found[target.id].append(value if len(node.targets) == 1 else None)
            else:
                _bind_target(target, found)
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        if node.value is not None:
            found[node.target.id].append(node.value)
    elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor | ast.NamedExpr):
        _bind_target(node.target, found)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        _bind_target(node.optional_vars, found)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        found[node.name].append(None)
    elif isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            found[(alias.asname or alias.name).split(".")[0]].append(None)
    elif isinstance(node, ast.Global | ast.Nonlocal):
        for name in node.names:
            found[name] += [None, None]
    elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        found[node.name].append(None)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            _bind_target(target, found)
    for child in ast.iter_child_nodes(node):
        _bind(child, found, folds)


def _bind_target(target: ast.AST, found: dict) -> None:
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            found[node.id].append(None)


_OWN_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def reaching(scope: ast.AST, name: str, site: ast.stmt) -> ast.AST | None:
    """The value of a local bound more than once in its function where only one assignment
    comes before the site (`backend = envs.X`, `if backend != "auto": ...`, then `backend =
    "mnnvl"` further down): that assignment's value, for tracing a setting (never for a
    message's text). None where another binding may reach the site: a parameter, a second
    binding before it, a loop around the site that binds the name, an unpacking."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    a = scope.args
    if any(
        arg.arg == name
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        if arg
    ):
        return None
    line = getattr(site, "lineno", 0)
    binders: list[ast.AST] = []  # the statements (or names) that bind it
    loops: list[ast.For | ast.AsyncFor | ast.While] = []  # loops around the site
    todo: list[ast.AST] = list(scope.body)
    while todo:
        node = todo.pop()
        if isinstance(node, _OWN_SCOPE):
            if getattr(node, "name", None) == name:
                binders.append(node)
            continue
        if isinstance(node, _LOOPS) and node.lineno <= line <= (node.end_lineno or 0):
            loops.append(node)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            binders.append(node)
        elif isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return None
        elif (isinstance(node, ast.ExceptHandler) and node.name == name) or (
            isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name
        ):
            binders.append(node)
        todo.extend(ast.iter_child_nodes(node))
    if any(
        loop.lineno <= getattr(b, "lineno", 0) <= (loop.end_lineno or 0)
        for loop in loops
        for b in binders
    ):
        return None
    before = [b for b in binders if getattr(b, "lineno", line) < line]
    if len(binders) < 2 or len(before) != 1 or not isinstance(before[0], ast.Name):
        return None
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and node.targets == [before[0]]:
            return node.value
        if isinstance(node, ast.AnnAssign) and node.target is before[0]:
            return node.value
    return None


def _early_return(stmt: ast.stmt) -> bool:
    """`if t: ... return` without else, or a loop whose only statement is one; or `if t:
    ... raise`, a bare re-raise (an except handler that gives up when t: what follows in it
    runs only when t does not hold)."""
    if isinstance(stmt, ast.For) and not stmt.orelse and len(stmt.body) == 1:
        stmt = stmt.body[0]
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    last = stmt.body[-1]
    return isinstance(last, ast.Return) or (isinstance(last, ast.Raise) and last.exc is None)


def _raising_if(stmt: ast.stmt) -> bool:
    """`if t: ... raise X(...)` without else: what follows in its block runs only when t did
    not hold (an unguarded raise after it is reached past it)."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    last = stmt.body[-1]
    return isinstance(last, ast.Raise) and last.exc is not None


# Statements that hold statements (functions and classes apart).
_COMPOUND = (
    ast.If | ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith | ast.Try | ast.TryStar
) | ast.Match


# Messages relayed through a helper or an exception class --------------------------------


@dataclass(frozen=True)
class Relay:
    """A function or an exception class the message goes through before it is printed: a
    module helper whose parameter is the whole message of a raise or a log line
    (`def raise_error_or_warn(obj, strict, name, message): raise ValueError(message)` or
    `logger.warning(message)`), or an exception class that builds its message from its
    arguments in `__init__` or `__str__` (`raise LoRAAdapterNotFoundError(name, path)`).
    `params`: the positional parameters (without `self`), `keywords` the keyword-only ones;
    `outcomes`: (kind, exception or log level, the message in terms of the parameters)."""

    name: str
    path: str
    params: tuple[str, ...]
    keywords: tuple[str, ...]
    outcomes: tuple[tuple[str, str, ast.expr], ...]


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[list, list]:
    a = fn.args
    positional = [x.arg for x in [*a.posonlyargs, *a.args]]
    if method and positional:
        positional = positional[1:]
    return positional, [x.arg for x in a.kwonlyargs]


def _own_statements(body: list) -> Iterator[ast.stmt]:
    """A function's statements, nested blocks included, not those of functions or classes
    defined in it."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _OWN_SCOPE):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", ()):
            yield from _own_statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _own_statements(case.body)


def _once(body: list, names: set[str]) -> dict[str, ast.expr]:
    """The locals a function assigns exactly once (`msg = f"..."`), by name; parameters and
    names assigned more than once are left out."""
    # A store is counted once for the statement that holds it and once more for each block
    # around it (a name assigned in a branch or a loop counts twice or more: not once), read
    # in one walk of the function rather than a walk of each statement.
    seen: Counter = Counter()
    value: dict[str, ast.expr] = {}

    def count(node: ast.AST, times: int) -> None:
        if times:
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    seen[n.id] += times

    def block(stmts: list, outer: int) -> None:
        for stmt in stmts:
            if isinstance(stmt, _OWN_SCOPE):
                count(stmt, outer)  # read by the blocks around it only
                continue
            times = outer + 1
            for name, child in ast.iter_fields(stmt):
                if name in ("body", "orelse", "finalbody") and isinstance(child, list):
                    block(child, times)
                elif name == "handlers":
                    for handler in child:
                        if handler.type is not None:
                            count(handler.type, times)
                        block(handler.body, times)
                elif name == "cases":
                    for case in child:
                        count(case.pattern, times)
                        if case.guard is not None:
                            count(case.guard, times)
                        block(case.body, times)
                elif isinstance(child, list):
                    for item in child:
                        if isinstance(item, ast.AST):
                            count(item, times)
                elif isinstance(child, ast.AST):
                    count(child, times)
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                value[stmt.targets[0].id] = stmt.value
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                value[stmt.target.id] = stmt.value

    block(body, 0)
    return {k: v for k, v in value.items() if seen[k] == 1 and k not in names}


class _Substitute(ast.NodeTransformer):
    """Replaces names (and `self.x` attributes) by expressions."""

    def __init__(self, names: dict[str, ast.expr], attrs: dict[str, ast.expr] | None = None):
        self.names, self.attrs = names, attrs or {}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return copy.deepcopy(self.names[node.id])
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr in self.attrs
            and isinstance(node.ctx, ast.Load)
        ):
            return copy.deepcopy(self.attrs[node.attr])
        self.generic_visit(node)
        return node


def _expanded(expr: ast.expr, local: dict[str, ast.expr], attrs=None) -> ast.expr:
    """The expression with the function's once-assigned locals (and `self.x` set in
    `__init__`) replaced by their values, twice over (`msg = f"..."; text = msg`)."""
    out = copy.deepcopy(expr)
    for _ in range(2):
        out = _Substitute(local, attrs).visit(out)
    return out


def _free_names(expr: ast.expr) -> set[str]:
    """The names an expression reads, but not those it calls (`len`, `str`)."""
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    return {
        n.id
        for n in ast.walk(expr)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called
    }


def _helper_relay(fn: ast.FunctionDef | ast.AsyncFunctionDef, path: str) -> Relay | None:
    """A module function one of whose parameters is the whole message of a raise or of a
    log line in its body (after its once-assigned locals are read)."""
    positional, keywords = _params(fn, method=False)
    params = set(positional) | set(keywords)
    if not params:
        return None
    local: dict[str, ast.expr] | None = None  # read only when a message is a local
    outcomes = []
    for stmt in _own_statements(fn.body):
        if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call):
            exception = _func_name(stmt.exc)
            args = stmt.exc.args
            if not exception.lstrip("_")[:1].isupper() or len(args) != 1 or stmt.exc.keywords:
                continue
            kind, name, message = "raise", exception, args[0]
        elif (call := _printing_call(stmt)) is not None and _func_name(call) in _LOG_LEVELS:
            if len(call.args) != 1:
                continue
            kind, name, message = "log", _LOG_LEVELS[_func_name(call)], call.args[0]
        else:
            continue
        if not isinstance(message, ast.Name):
            continue  # only a name can stand for a parameter (itself, or a local set to it)
        if message.id in params:
            whole: ast.expr = ast.Name(message.id, ast.Load())
        else:
            local = _once(fn.body, params) if local is None else local
            whole = _expanded(message, local)
        if isinstance(whole, ast.Name) and whole.id in params:
            outcomes.append((kind, name, whole))
    if not outcomes:
        return None
    return Relay(fn.name, path, tuple(positional), tuple(keywords), tuple(outcomes))


def _class_relay(cls: ast.ClassDef, path: str) -> Relay | None:
    """An exception class whose message is built from its `__init__`'s arguments: what its
    `__str__` returns, else what `__init__` passes to `super().__init__`, in terms of
    those arguments (`self.x` read as what `__init__` assigns it)."""
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name[:2] == "__"}
    init = methods.get("__init__")
    if init is None or not cls.name.lstrip("_")[:1].isupper():
        return None
    if "__str__" not in methods and not any(_super_init(s) for s in _own_statements(init.body)):
        return None  # no message built here (most classes: `super().__init__()`)
    positional, keywords = _params(init, method=True)
    params = set(positional) | set(keywords)
    local = _once(init.body, params | {"self"})
    attrs: dict[str, ast.expr] = {}
    counted: Counter = Counter()
    message = None
    for stmt in _own_statements(init.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                counted[target.attr] += 1
                attrs[target.attr] = _expanded(stmt.value, local)
        if _super_init(stmt) and message is None:
            message = _expanded(stmt.value.args[0], local)  # type: ignore[attr-defined]
    attrs = {k: v for k, v in attrs.items() if counted[k] == 1}
    text = methods.get("__str__")
    if text is not None:
        body = text.body[1:] if _is_docstring(text.body[0]) else text.body
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        message = _expanded(body[0].value, _once(text.body, {"self"}), attrs)
    if message is None or _free_names(message) - params:
        return None
    if isinstance(message, ast.Name):
        return None  # the argument is the message: as the raise site reads it already
    if not any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip()
        for n in ast.walk(message)
    ):
        return None
    outcome = ("raise", cls.name, message)
    return Relay(cls.name, path, tuple(positional), tuple(keywords), (outcome,))


def _super_init(stmt: ast.stmt) -> bool:
    """Whether a statement is `super().__init__(message)`, one argument."""
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "__init__"
        and isinstance(value.func.value, ast.Call)
        and _func_name(value.func.value) == "super"
        and len(value.args) == 1
    )


def _all_statements(body: list) -> Iterator[ast.stmt]:
    """Every statement of a block, those of nested blocks, functions and classes included
    (a function is defined only by a statement: expressions are not walked)."""
    for stmt in body:
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from _all_statements(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _all_statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _all_statements(case.body)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def formatters(module: ast.Module, path: str) -> dict[str, Relay]:
    """The functions of a module (nested ones too) whose body is one `return` of a message
    form built from their parameters (`return f"Using {backend_name} backend for FP8 MoE"`),
    by name; a name defined twice is left out."""
    found: dict[str, Relay | None] = {}
    for node in _all_statements(module.body):
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            continue
        body = node.body[1:] if _is_docstring(node.body[0]) and len(node.body) > 1 else node.body
        value = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        if not isinstance(value, ast.JoinedStr | ast.BinOp):
            continue
        positional, keywords = _params(node, method=False)
        texts = [
            n
            for n in ast.walk(value)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip()
        ]
        if not texts or not positional or _free_names(value) - set(positional) - set(keywords):
            continue
        relay = Relay(node.name, path, tuple(positional), tuple(keywords), (("return", "", value),))
        found[node.name] = None if node.name in found else relay
    return {name: relay for name, relay in found.items() if relay is not None}


def module_relays(module: ast.Module, path: str) -> dict[str, Relay]:
    """The helpers and exception classes of a module that relay a message (`Relay`)."""
    found: dict[str, Relay] = {}
    for node in module.body:
        relay = None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            relay = _helper_relay(node, path)
        elif isinstance(node, ast.ClassDef):
            relay = _class_relay(node, path)
        if relay is not None:
            found[relay.name] = relay
    return found


def _imported(module: ast.Module) -> dict[str, str]:
    """The names a module imports with `from x import name` (as they are called there), with
    the path of the module they come from (`sglang/srt/utils`; "" for a relative import)."""
    out = {}
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            base = "" if node.level else (node.module or "").replace(".", "/")
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = alias.name + "\x00" + base
    return out


def _bound(relay: Relay, call: ast.Call) -> dict[str, ast.expr] | None:
    """The call's arguments by the relay's parameter names; a parameter not given stays a
    placeholder of its own name. None when the call's arguments cannot be matched
    (`*args`, `**kwargs`, more than the parameters)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(relay.params):
        return None
    bound: dict[str, ast.expr] = dict(zip(relay.params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        if keyword.arg in relay.params or keyword.arg in relay.keywords:
            bound[keyword.arg] = keyword.value
    for name in (*relay.params, *relay.keywords):
        bound.setdefault(name, ast.Name(name, ast.Load()))
    return bound


def _defined_in(path: str, module: str) -> bool:
    """Whether a file is the module, or in the package, an import names."""
    return f"/{path}".endswith(f"/{module}.py") or f"/{module}/" in f"/{path}"


def _shape(relay: Relay) -> str:
    return repr((relay.params, relay.keywords)) + "".join(
        kind + name + ast.dump(message) for kind, name, message in relay.outcomes
    )


def _defined(module: ast.Module) -> set[str]:
    """The functions and classes a module defines at its top level."""
    return {
        n.name
        for n in module.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _resolve(spec: str, table: dict[str, list[Relay]]) -> Relay | None:
    """The relay an import (`_imported`'s spec) names: the one defined in the module it
    imports from (or a package above it), None when none, or several that differ."""
    name, base = spec.split("\x00")
    fits = [r for r in table.get(name, ()) if not base or _defined_in(r.path, base)]
    return fits[0] if len({_shape(r) for r in fits}) == 1 else None


def pick_relays(
    module: ast.Module,
    path: str,
    table: dict[str, list[Relay]],
    own: dict[str, Relay] | None = None,
) -> dict[str, Relay]:
    """The relays a module can call by name: its own (`own`, else read), and those it
    imports by name from the module that defines them (or from a package above it); a name
    two modules define differently is left out unless the import says which."""
    out: dict[str, Relay] = dict(module_relays(module, path) if own is None else own)
    defined = _defined(module)
    for local, spec in _imported(module).items():
        if local in defined:
            continue
        relay = _resolve(spec, table)
        if relay is not None:
            out[local] = relay
    return out


class _TooManySites(Exception):
    """A file has more sites than MAX_SITES_PER_FILE."""


class _Scanner:
    """Finds the raise statements of a module, with their enclosing qualname and scopes.

    A raise is a statement, so only statement lists are walked, never expressions: that is
    most of the time saved over a full `ast.NodeVisitor` walk.
    """

    def __init__(
        self,
        path: str,
        lines: list[str] | None,
        asserts: bool = True,
        printed: bool | str = False,
        knowledge: explain.Knowledge | None = None,
        table: "dict[str, list[Relay]] | None" = None,
    ):
        self.path = path
        self.knowledge = knowledge  # None: no explanation derived (verify-sources)
        self.guards: list[tuple[str, object]] = []  # what encloses the statement, in its function
        self.exits: list[ast.stmt] = []  # `if t: return` before it in its blocks
        # `if t: raise X(...)` before it in its blocks: what an unguarded raise is reached past
        self.raised: list[ast.stmt] = []
        self.owners: list[ast.ClassDef] = []
        self.attrs: dict[int, explain.Attrs] = {}  # per class of this module: its self.x
        self.calls: dict[str, set[str]] = {}  # function -> what it calls (with knowledge)
        self.lines = lines  # source lines, for snippets
        self.with_asserts = asserts
        self.with_printed = bool(printed)  # logger calls and API error responses too
        self.with_debug = printed == DEBUG  # and DEBUG log lines (history: a demoted line)
        self.qualname: list[str] = []
        self.scopes: list[_Scope] = []
        self.messages = _Messages(self.scopes)
        self.sites: list[Site] = []
        self.skipped: Counter = Counter()
        self.refused: list[tuple[str, str]] = []  # messages over the limit: (path:line, why)
        self.seen = 0
        self.asserts = 0  # assert statements with a message
        # The statement lists that lead to the one read, each with its position in it, and
        # where the current function's begin: what _Reach reads a variable's value from.
        self.frames: list[list] = []
        self.frame_base = 0
        self.tuple_classes = set(_TUPLE_PRINTING)  # and this module's plain subclasses of them
        # Raises that restate an exception they caught, with their context and the `try`
        # they follow: their category is that of the raises they restate (_restated).
        self.tries: dict[int, ast.stmt] = {}  # an except handler -> its try statement
        self.restating: list[tuple[explain.Context, dict, ast.stmt, set[str]]] = []
        # An error log line's context and derived block, by its statement: when a raise
        # follows it at once, the line reports that raise's refusal (_log_before_raise).
        self.logged: dict[int, list[tuple[explain.Context, dict]]] = {}
        self.helpers: dict[str, tuple[ast.expr, frozenset[str]]] = {}  # explain.helpers
        # Helpers and exception classes that relay a message (`Relay`): the module's own, and
        # with `table` (every module's, by name) those it imports by name.
        self.table = table
        self.relays: dict[str, Relay] = {}
        self.own_relays: dict[str, Relay] = {}
        self.wants: set[str] = set()  # names this module calls as a statement or raises
        self.imports: dict[str, str] = {}  # the names it imports, not defined (`_imported`)

    def module(self, node: ast.Module) -> None:
        self.helpers = explain.helpers(node)
        self.messages.formatters = formatters(node, self.path)
        self.own_relays = module_relays(node, self.path)
        self.relays = (
            pick_relays(node, self.path, self.table, self.own_relays)
            if self.table
            else dict(self.own_relays)
        )
        self.imports = {n: spec for n, spec in _imported(node).items() if n not in _defined(node)}
        self.scopes.append(_Scope(node))
        self.tuple_classes |= _plain_subclasses(node, self.tuple_classes)
        self._body(node.body)
        self._restated()

    def _restated(self) -> None:
        """Give a raise that restates an exception it caught from this module's own code
        (`except ValueError as e: raise RuntimeError(f"validation failed: {e}")`) the category
        of the raises it restates, when they are all of one kind: the check is theirs. Only
        where the `try` calls nothing but functions of this module that raise."""
        own = {site.function.rsplit(".", 1)[-1] for site in self.sites}
        for ctx, derived, statement, caught in self.restating:
            called = {
                _func_name(n).rsplit(".", 1)[-1]
                for block in statement.body  # type: ignore[attr-defined]
                for n in ast.walk(block)
                if isinstance(n, ast.Call)
            }
            # Only a `try` that calls nothing but this module's raising code, caught by name:
            # an `except Exception` or a library's call may restate anything.
            if not called or called - own or caught & {"Exception", "BaseException"}:
                continue
            kinds = {
                site.derived["category"]
                for site in self.sites
                if site.derived is not None
                and site.kind in ("raise", "assert")
                and site.function.rsplit(".", 1)[-1] in called
                and site.exception in caught
            }
            if len(kinds) == 1:
                explain.recategorize(ctx, derived, kinds.pop())

    def _log_before_raise(self, previous: ast.stmt, raised: list) -> None:
        """An error log line just before a raise (`logger.error("Failed to convert ...")`,
        then `raise ValueError("Invalid 'kv_transfer_config' provided")`) reports the refusal
        the raise makes, not a state the program goes on from: it takes the raise's category
        (derived.CATEGORY_MEANS), when the raise's is one and says more than an invariant."""
        lines = self.logged.get(id(previous))
        kinds = {s.derived.get("category") for s in raised if s.derived is not None}
        if not lines or len(kinds) != 1:
            return
        kind = kinds.pop()
        if kind in (None, "logged", "invariant"):
            return
        # ... when the raise's words or its class say so, not only the shape of its test
        # (`finish_reason == "error"` then "Internal server error": no choice was refused)
        said = explain.said_category(kind)
        if not all(said(site.template, site.exception) for site in raised):
            return
        for ctx, derived in lines:
            if ctx.level in ("error", "critical") and derived.get("category") == "logged":
                explain.recategorize(ctx, derived, kind)

    def _body(self, statements: list) -> None:
        mark, raised = len(self.exits), len(self.raised)
        frame = [statements, 0]
        self.frames.append(frame)
        for at, stmt in enumerate(statements):
            frame[1] = at
            if isinstance(stmt, ast.Raise):
                self.seen += 1
                before = len(self.sites)
                reason = self._raise(stmt)
                if reason:
                    self.skipped[reason] += 1
                if at:
                    self._log_before_raise(statements[at - 1], self.sites[before:])
            elif isinstance(stmt, ast.Assert) and stmt.msg is not None and self.with_asserts:
                self.asserts += 1
                self._add(stmt, "AssertionError", stmt.msg, [], "assert")
            elif self.with_printed and (call := _printing_call(stmt, self.with_debug)):
                self._printed(stmt, call)
            elif (
                isinstance(stmt, ast.Expr | ast.Return | ast.Assign)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)
            ):
                self.wants.add(stmt.value.func.id)
                relay = self.relays.get(stmt.value.func.id)
                if relay is not None and relay.outcomes[0][1] != relay.name:
                    self._relayed(stmt, relay, stmt.value)
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.qualname.append(stmt.name)
                if self.knowledge is not None:
                    self.calls[".".join(self.qualname)] = {
                        _func_name(n) for n in ast.walk(stmt) if isinstance(n, ast.Call)
                    }
                self.scopes.append(_Scope(stmt))
                outer = (self.guards, self.exits, self.raised)
                self.guards, self.exits, self.raised = [], [], []
                base, self.frame_base = self.frame_base, len(self.frames)
                self._body(stmt.body)
                self.frame_base = base
                self.guards, self.exits, self.raised = outer
                self.scopes.pop()
                self.qualname.pop()
            elif isinstance(stmt, ast.ClassDef):
                self.qualname.append(stmt.name)
                self.owners.append(stmt)
                self._body(stmt.body)
                self.owners.pop()
                self.qualname.pop()
            elif isinstance(stmt, _COMPOUND):
                self._compound(stmt)
            if _early_return(stmt):
                self.exits.append(stmt)  # what follows runs only when it did not return
            elif _raising_if(stmt):
                self.raised.append(stmt)  # what follows runs only when it did not raise
        del self.exits[mark:]
        del self.raised[raised:]
        self.frames.pop()

    def _compound(self, stmt: ast.stmt) -> None:
        """The blocks of a compound statement, each under the guard that leads into it."""
        blocks: list[tuple[tuple[str, object] | None, list]] = []
        if isinstance(stmt, ast.If):
            blocks = [(("if", stmt), stmt.body), (("else", stmt), stmt.orelse)]
        elif isinstance(stmt, ast.While):
            blocks = [(("while", stmt), stmt.body), (None, stmt.orelse)]
        elif isinstance(stmt, ast.Match):
            blocks = [(("case", (stmt, case)), case.body) for case in stmt.cases]
        else:
            blocks = [(None, getattr(stmt, name, [])) for name in ("body", "orelse", "finalbody")]
            blocks += [(("except", h), h.body) for h in getattr(stmt, "handlers", ())]
            self.tries.update((id(h), stmt) for h in getattr(stmt, "handlers", ()))
        for guard, body in blocks:
            if guard:
                self.guards.append(guard)
            self._body(body)
            if guard:
                self.guards.pop()

    def _printed(self, node: ast.stmt, call: ast.Call) -> None:
        """A logger call or an API error response: a site of kind log or http."""
        name = _func_name(call)
        if name in _HTTP_ERRORS:
            message, _ = self._message_arg(call)
            kind_arg = call.args[1] if len(call.args) > 1 else None
            for keyword in call.keywords:
                kind_arg = keyword.value if keyword.arg == "err_type" else kind_arg
            err = kind_arg.value if isinstance(kind_arg, ast.Constant) else "BadRequestError"
            if message is not None and isinstance(err, str) and err.isidentifier():
                self._add(node, err, message, [], "http")
            return
        if not call.args or isinstance(call.args[0], ast.Starred):
            return
        level = _LOG_LEVELS.get(name, DEBUG)
        message, extra = call.args[0], call.args[1:]
        starred = any(isinstance(a, ast.Starred) for a in extra)
        fmt = self.messages.literal(message, 0) if extra else None
        parts = None
        try:
            spread = None if fmt is None else self.messages.spread(fmt, list(extra))
            if fmt is not None and spread is not None:
                parts = _percent(fmt, ast.Tuple(elts=spread))
        except _BadFormat:
            pass
        if parts is not None:
            # Read before SCAN_FORMAT 9 with its `*args` left out: its former template.
            former = self._former(message, []) if starred else None
            self._add_parts(node, level.upper(), parts, [], "log", level, former)
        elif not extra or starred:
            # The format as written where its arguments cannot be read into it.
            self._add(node, level.upper(), message, [], "log", level)

    def _raise(self, node: ast.Raise) -> str:
        """Add the site of a raise statement; or say why it has none."""
        exc = node.exc
        if exc is None:
            return "re-raise"
        if not isinstance(exc, ast.Call):
            name = exc.attr if isinstance(exc, ast.Attribute) else getattr(exc, "id", "")
            return "no-message" if name.lstrip("_")[:1].isupper() else "re-raise"
        exception = _func_name(exc)
        if not exception.lstrip("_")[:1].isupper():
            return "factory-call"
        message, extra = self._message_arg(exc)
        if isinstance(exc.func, ast.Name):
            self.wants.add(exception)
            relay = self.relays.get(exception)
            bound = None if relay is None else _bound(relay, exc)
            if relay is not None and bound is not None and relay.outcomes[0][1] == relay.name:
                # The message the class builds from its arguments, with them in it.
                built = _Substitute(bound).visit(copy.deepcopy(relay.outcomes[0][2]))
                before = (message, extra) if message is not None else None
                return self._add(node, exception, built, [], "raise", was=before)
        if message is None:
            return "no-message"
        args = exc.args
        if (
            len(args) > 1
            and exception in self.tuple_classes
            and not any(isinstance(a, ast.Starred) for a in args)
            and not (extra and args[-len(extra) - 1] is message and self._percent_style(message))
        ):
            # `RuntimeError("a ", f"b {x}")` prints its arguments' tuple: "('a ', 'b 1')".
            return self._add(node, exception, ast.Tuple(elts=list(args)), [], "raise")
        # Keyword arguments to an exception whose printing the code does not show
        # (`VLLMValidationError(msg, parameter="n")` prints "msg (parameter=n)"): cut.
        printed = [k.arg for k in exc.keywords if k.arg not in (*_MESSAGE_KEYWORDS, *_UNPRINTED)]
        cut = bool(printed) and exception not in self.tuple_classes
        return self._add(node, exception, message, extra, "raise", cut=cut)

    def _relayed(self, stmt: ast.stmt, relay: "Relay", call: ast.Call) -> None:
        """A call of a helper that raises or logs the message it is given: a site for each
        way it prints it, read at the call (`raise_error_or_warn(self, strict, "n", msg)`)."""
        bound = _bound(relay, call)
        if bound is None:
            return
        for kind, name, param in relay.outcomes:
            key = param.id if isinstance(param, ast.Name) else ""
            message = bound.get(key)
            if message is None or isinstance(message, ast.Name) and message.id == key:
                continue  # not given: the helper's own placeholder
            if kind == "raise":
                raised = ast.Raise(exc=ast.Call(ast.Name(name, ast.Load()), [message], []))
                self._add(ast.copy_location(raised, stmt), name, message, [], "raise")
            elif self.with_printed:
                logged = ast.Call(
                    ast.Attribute(ast.Name("logger", ast.Load()), name, ast.Load()), [message], []
                )
                line = ast.copy_location(ast.Expr(logged), stmt)
                self._add(line, name.upper(), message, [], "log", name)

    def _percent_style(self, message: ast.AST) -> bool:
        """A message with %-conversions and arguments after it (logger style): tagged as such."""
        try:
            parts = self.messages.parts(message)
        except _BadFormat:
            return False
        return parts is not None and _has_percent(parts)

    def _add(
        self,
        node: ast.stmt,
        exception: str,
        message: ast.AST | _Parts,
        extra: list,
        kind: str,
        level: str = "",
        cut: bool = False,
        was: tuple[ast.AST, list] | None = None,
    ):
        """Add a site for this message (an expression, or parts already read); or say why
        there is none. A message built in a variable along several ways (`if` branches that
        append to it) is a site for each way. `was`: the message and arguments read before
        (SCAN_FORMAT 8: the raise's own argument, where its class builds the message)."""
        if isinstance(message, list):
            return self._add_parts(node, exception, message, extra, kind, level, cut=cut)
        former = self._former(*(was or (message, extra)))
        ways = self._ways(message)
        reasons = []
        for override in ways:
            self.messages.override = override
            try:
                parts = self._message_parts(message)
            except _BadFormat:
                reasons.append("bad-format")
                continue
            finally:
                self.messages.override = {}
            if parts is None:
                reasons.append("non-literal")
                continue
            reasons.append(self._add_parts(node, exception, parts, extra, kind, level, former, cut))
        return "" if "" in reasons else reasons[0]

    def _message_parts(self, message: ast.AST) -> _Parts | None:
        if isinstance(message, ast.Tuple):
            return _args_tuple([self._arg_parts(elt) for elt in message.elts], message.elts)
        return self.messages.parts(message)

    def _arg_parts(self, arg: ast.AST) -> _Parts | None:
        try:
            return self.messages.parts(arg)
        except _BadFormat:
            return None

    def _former(self, message: ast.AST, extra: list) -> _Parts | None:
        """The message as read before SCAN_FORMAT 6 (no tuple, no variable built along
        several ways, no joined list): a site's `former` template, which keeps its record."""
        if isinstance(message, ast.Tuple):
            # Read as the first string argument then, with the rest as logger arguments.
            for i, elt in enumerate(message.elts):
                self.messages.whole = False
                try:
                    parts = self.messages.parts(elt)
                except _BadFormat:
                    return None
                finally:
                    self.messages.whole = True
                if parts is not None:
                    rest = message.elts[i + 1 :]
                    return _logger_tuple(parts, rest) if rest and _has_percent(parts) else parts
            return None
        self.messages.whole = False
        try:
            return self.messages.parts(message)
        except _BadFormat:
            return None
        finally:
            self.messages.whole = True

    def _ways(self, message: ast.AST) -> list[dict]:
        """The values of the variables the message is built from, one mapping per way the
        code can build it; [{}] when none needs reading from the statements before it."""
        if len(self.scopes) < 2:
            return [{}]
        scope = self.scopes[-1]
        names = []
        for node in ast.walk(message):
            if (
                isinstance(node, ast.Name)
                and node.id not in names
                and len(scope.bindings().get(node.id, ())) > 1
            ):
                names.append(node.id)
        ways: list[dict] = [{}]
        for name in names[:3]:
            try:
                values = _Reach(self.messages, name).before(self.frames[self.frame_base :])
            except (_GiveUp, RecursionError):
                continue
            if any(value is None for value in values):
                # A way where the code does not show the value (a parameter, a loop's item, a
                # call's result): the variable is a placeholder, as before, whose text holds
                # whatever the other ways give it.
                continue
            ways = [{**way, name: v} for way in ways for v in values][:REACH_VALUES]
        return ways

    def _add_parts(
        self,
        node: ast.stmt,
        exception: str,
        parts: _Parts,
        extra: list,
        kind: str,
        level: str = "",
        former: _Parts | None = None,
        cut: bool = False,
    ) -> str:
        tags: tuple[str, ...] = ()
        if extra and _has_percent(parts):
            parts, tags = _logger_tuple(parts, extra), (LOGGER_STYLE_TAG,)
        elif extra and kind == "raise":
            # More arguments to an exception whose printing the code does not show: it may
            # print them all (as a tuple), or the first alone.
            cut = True
        items = self._joined(parts)
        for item in items:  # each error collected in a list, as printed when it is alone
            self._add_parts(node, exception, item, [], kind, level)
        literal = "".join(p for p in parts if isinstance(p, str))
        if not any(ch.isalnum() for ch in literal):
            return "" if items else "no-literal-text"
        if len(literal) > MAX_MESSAGE_CHARS:
            why = f"a message of {len(literal):,} characters, over the {MAX_MESSAGE_CHARS:,} limit"
            self.refused.append((f"{self.path}:{node.lineno}", why))
            return "too-long"
        if len(self.sites) >= MAX_SITES_PER_FILE:
            raise _TooManySites
        text, types = _build(parts)
        was = ""
        if former is not None and former != parts:
            if extra and _has_percent(former):
                former = _logger_tuple(former, extra)
            was = _build(former)[0]
            was = "" if was == text else was
        snippet = ""
        if self.lines is not None:
            snippet = _dedent(self.lines[node.lineno - 1 : node.end_lineno])
        derived = None
        if self.knowledge is not None:
            try:
                derived = self._explain(node, exception, text, parts, kind, level)
            except (LookupError, TypeError, ValueError, AttributeError):
                # An older release's code that explain's rules do not expect (history scans
                # every release): the site stands, unexplained, and the scan goes on.
                self.skipped["not-derived"] += 1
        self.sites.append(
            Site(
                exception=exception,
                template=text,
                path=self.path,
                line=node.lineno,
                function=".".join(self.qualname),
                snippet=snippet,
                tags=tags,
                types=types,
                kind=kind,
                level=level,
                guard=_site_guard(node, self.guards),
                derived=derived,
                cut=cut,
                former=was,
            )
        )
        return ""

    def _joined(self, parts: _Parts) -> list[_Parts]:
        """For a message that joins a list of errors (`"; ".join(errors)`, `errors = []`
        and `errors.append(...)` in the same function): the message with each error
        appended to it, where the error has a literal form."""
        for i, part in enumerate(parts):
            expr = part.expr if isinstance(part, _Hole) else None
            if not (
                isinstance(expr, ast.Call)
                and _func_name(expr) == "join"
                and len(expr.args) == 1
                and isinstance(expr.args[0], ast.Name)
            ):
                continue
            name = expr.args[0].id
            start = self.messages.resolve(name)
            # An empty list, or one a call returns (`errors = self._validate()`): the errors
            # this function appends to it are each printed alone.
            empty = isinstance(start, ast.List) and not start.elts
            started = empty or isinstance(start, ast.Call)
            if not started or len(self.scopes) < 2:
                return []
            out = []
            for call in ast.walk(self.scopes[-1].node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append"
                    and isinstance(call.func.value, ast.Name)
                    and call.func.value.id == name
                    and len(call.args) == 1
                ):
                    try:
                        item = self.messages.parts(call.args[0])
                    except _BadFormat:
                        continue
                    if item is not None:
                        out.append(parts[:i] + item + parts[i + 1 :])
            return out
        return []

    def _attrs(self, owner: ast.ClassDef | None) -> explain.Attrs:
        if id(owner) not in self.attrs:
            self.attrs[id(owner)] = explain.Attrs(owner)
        return self.attrs[id(owner)]

    def _explain(
        self, node: ast.stmt, exception: str, text: str, parts: _Parts, kind: str, level: str
    ) -> dict:
        """What explain derives from this site in its context (guards, class, locals)."""
        owner = self.owners[-1] if self.owners else None
        namer = _Namer()
        named = [(namer.name(p), p.expr) for p in parts if isinstance(p, _Hole)]  # as _build
        holes = [(name, expr) for name, expr in named if expr is not None]
        context = explain.Context(
            node=node,
            exception=exception,
            message=text,
            function=".".join(self.qualname),
            path=self.path,
            guards=list(self.guards),
            # A raise nothing guards is reached only past the raises before it in its blocks.
            exits=list(self.exits) if self.guards or self.exits else list(self.raised),
            owner=owner,
            attrs=self._attrs(owner),
            holes=holes,
            resolve=self._resolver(node),
            knowledge=(self.knowledge or explain.Knowledge()).program(self.path),
            kind=kind,
            level=level,
            module=self.scopes[0].node if self.scopes else None,  # type: ignore[arg-type]
            helpers=self.helpers,
        )
        derived = explain.derive(context)
        if kind == "log" and derived.get("category") == "logged":
            self.logged.setdefault(id(node), []).append((context, derived))
        restated = explain.restated(context)
        if restated is not None and derived["category"] == "invariant":
            handler, caught = restated
            if id(handler) in self.tries:
                self.restating.append((context, derived, self.tries[id(handler)], caught))
        return derived

    def _resolver(self, site: ast.stmt) -> Callable[[str], ast.AST | None]:
        """A local's value for explain: assigned once in its scope, or the one assignment
        before the site (`reaching`)."""
        scope = self.scopes[-1].node if self.scopes else None
        resolve = self.messages.resolve

        def value(name: str) -> ast.AST | None:
            found = resolve(name)
            return found if found is not None or scope is None else reaching(scope, name, site)

        return value

    def _message_arg(self, call: ast.Call) -> tuple[ast.AST | None, list]:
        """The message argument, and the positional arguments after it."""
        args = call.args
        if args:
            for i, arg in enumerate(args):
                if isinstance(arg, ast.Starred):
                    break
                try:
                    if self.messages.parts(arg) is not None:
                        return arg, args[i + 1 :]
                except _BadFormat:
                    return arg, args[i + 1 :]
            return args[0], args[1:]
        for keyword in call.keywords:
            if keyword.arg in _MESSAGE_KEYWORDS:
                return keyword.value, []
        return None, []


# Logger methods that print at a level users see by default, and the level they print at.
_LOG_LEVELS = {
    **{f"{name}{once}": name for name in ("info", "warning", "error") for once in ("", "_once")},
    "warn": "warning",
    "exception": "error",
    "critical": "critical",
    "fatal": "critical",
}
# A log line at DEBUG is not shown by default: only `errorkb history` reads them (`printed`
# set to DEBUG), to tell a line demoted to DEBUG from one no longer printed.
DEBUG = "debug"
_DEBUG = frozenset({"debug", "debug_once"})
# Functions that turn a message into an error response of the OpenAI-compatible server.
_HTTP_ERRORS = frozenset({"create_error_response", "create_streaming_error_response"})
PRINTED_KINDS = ("log", "http")  # the site kinds `printed` reads: logger calls, API error responses


def _printing_call(stmt: ast.stmt, debug: bool = False) -> ast.Call | None:
    """The logger call or error response a statement makes: `logger.warning(...)`,
    `return self.create_error_response(...)`, `yield ...`, `x = await ...`; with `debug`,
    `logger.debug(...)` too."""
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, ast.Expr | ast.Return | ast.Assign | ast.AnnAssign):
        return None
    while isinstance(value, ast.Await | ast.Yield):
        value = value.value
    if not isinstance(value, ast.Call):
        return None
    name = _func_name(value)
    if name in _HTTP_ERRORS:
        return value
    func = value.func
    if (name in _LOG_LEVELS or (debug and name in _DEBUG)) and isinstance(func, ast.Attribute):
        owner = _raw_name(func.value).lower()
        if owner.endswith("logger") or owner in ("log", "_log"):
            return value
    return None


def _site_guard(node: ast.stmt, guards: list[tuple[str, object]]) -> str:
    """The condition that leads to a site, for lineage: an assert's test, else the innermost
    enclosing `if` or `while` of its function (negated in an `else`)."""
    if isinstance(node, ast.Assert):
        return _guard_text(node.test)
    for kind, stmt in reversed(guards):
        if kind in ("if", "while", "else") and isinstance(stmt, ast.If | ast.While):
            text = _guard_text(stmt.test)
            return "not " + text if kind == "else" else text
    return ""


def _guard_text(test: ast.expr) -> str:
    """A condition as one line of code, cut to a readable length."""
    text = _WS.sub(" ", ast.unparse(test))
    return text if len(text) <= 200 else text[:199] + "…"


def _dedent(lines: list[str]) -> str:
    lines = [line.rstrip() for line in lines]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines) + "\n"


@dataclass
class FileScan:
    path: str
    sites: list[Site] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    seen: int = 0
    asserts: int = 0
    error: str = ""
    calls: dict[str, set[str]] = field(default_factory=dict)  # function -> names it calls
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path or path:line, why)
    uses: "Uses | None" = None  # with knowledge: what caught_by_callers needs
    relays: dict[str, "Relay"] = field(default_factory=dict)  # the module's own (`Relay`)
    # The names it calls as a statement or raises that it imports by name (`_imported`'s
    # spec): another module's relay read there is a reason to scan it again.
    wants: dict[str, str] = field(default_factory=dict)


def scan_file(
    path: str,
    data: bytes,
    snippets: bool = False,
    asserts: bool = True,
    printed: bool | str = False,
    knowledge: explain.Knowledge | None = None,
    table: "dict[str, list[Relay]] | None" = None,
) -> FileScan:
    """The sites of one Python file; those of `assert` statements, logger calls and API
    error responses too if asked; with what explain derives of each when given a project's
    knowledge."""
    result = FileScan(path)
    if b"raise" not in data and not (asserts and b"assert" in data) and not printed:
        return result
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, filename=path)
        lines = data.decode("utf-8", "replace").splitlines() if snippets else None
        scanner = _Scanner(path, lines, asserts, printed, knowledge, table)
        scanner.module(tree)
    except (SyntaxError, ValueError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    except RecursionError:
        result.error = "expressions nested too deeply to read"
        return result
    except _TooManySites:
        result.refused = [(path, f"has over {MAX_SITES_PER_FILE:,} sites, the limit per file")]
        return result
    result.sites, result.skipped, result.refused = scanner.sites, scanner.skipped, scanner.refused
    result.seen, result.asserts = scanner.seen, scanner.asserts
    result.calls = scanner.calls
    result.relays = scanner.own_relays
    result.wants = {n: spec for n, spec in scanner.imports.items() if n in scanner.wants}
    if knowledge is not None:
        # too deep to walk: no uses, and caught_by_callers marks nothing in this tree
        with contextlib.suppress(RecursionError):
            result.uses = file_uses(tree)
    return result


def _scan_batch(
    batch: list[tuple[str, bytes]],
    snippets: bool,
    asserts: bool,
    printed: bool | str,
    knowledge=None,
    table=None,
) -> list[FileScan]:
    return [
        scan_file(path, data, snippets, asserts, printed, knowledge, table) for path, data in batch
    ]


# Raises their callers catch ------------------------------------------------------------


@dataclass
class Uses:
    """How one file uses names: every load of a name (`f`, `x.f`, in a call or not: a
    function passed as a value may be called anywhere), the calls of a name made inside a
    `try` of the calling function with the handlers around them (innermost first), the
    index each call of a name is subscripted with (`f(x)[0]`, or None), and the bases of the
    file's classes (by last name)."""

    loads: Counter = field(default_factory=Counter)
    caught: dict[str, list[tuple[str, tuple]]] = field(default_factory=dict)
    picked: dict[str, list[int | None]] = field(default_factory=dict)
    bases: dict[str, set[str]] = field(default_factory=dict)


RAISES, PASSES, DROPS = "raises", "passes", "drops"
_TRACEBACK = re.compile(
    r"(?i)exception$|traceback|exc_info|print_exc|format_exc|print_last"
)  # what a handler does with the error


def _fate(handler: ast.ExceptHandler) -> tuple[frozenset[str], object]:
    """The last names of what a handler catches (a bare `except`: BaseException), and what
    it does with the error: RAISES (a `raise` anywhere in it), PASSES (it logs the traceback
    or uses the error in any other way than below: the message goes on), DROPS (it never
    reads the error), or the positions of a returned tuple that hold the error (`return
    False, str(e)`): the message goes on only where a caller reads them."""
    types = [] if handler.type is None else [handler.type]
    if isinstance(handler.type, ast.Tuple):
        types = handler.type.elts
    names = frozenset(
        t.id if isinstance(t, ast.Name) else t.attr
        for t in types
        if isinstance(t, ast.Name | ast.Attribute)
    ) or (frozenset() if types else frozenset({"BaseException"}))
    used: set[int] = set()
    returned: set[int] = set()
    spared: set[int] = set()  # the error's uses in a returned tuple
    stack: list[ast.AST] = list(handler.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Raise):
            return names, RAISES
        if isinstance(node, ast.Call) and (
            _TRACEBACK.search(_func_name(node)) or any(k.arg == "exc_info" for k in node.keywords)
        ):
            # the traceback, with the message, goes to a log (`logger.exception(...)`,
            # `traceback.format_exc()`, sglang's `get_exception_traceback()`)
            return names, PASSES
        if isinstance(node, ast.Name) and node.id == handler.name:
            used.add(id(node))
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            for at, elt in enumerate(node.value.elts):
                inside = [n for n in ast.walk(elt) if isinstance(n, ast.Name)]
                if any(n.id == handler.name for n in inside):
                    returned.add(at)
                    spared.update(id(n) for n in inside)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    if used - spared:
        return names, PASSES
    return names, frozenset(returned) if returned else DROPS


def file_uses(tree: ast.Module) -> Uses:
    """What the callers rule (caught_by_callers) needs of one file."""
    uses = Uses()

    def visit(node: ast.AST, qual: list[str], held: tuple) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for sub in (*node.decorator_list, *getattr(node, "bases", ())):
                visit(sub, qual, held)
            if isinstance(node, ast.ClassDef):
                uses.bases.setdefault(node.name, set()).update(
                    b.id if isinstance(b, ast.Name) else b.attr
                    for b in node.bases
                    if isinstance(b, ast.Name | ast.Attribute)
                )
            inner = [*qual, node.name]
            # A `try` around a definition does not catch what its body raises later.
            fresh = held if isinstance(node, ast.ClassDef) else ()
            for sub in node.body:
                visit(sub, inner, fresh)
            return
        if isinstance(node, ast.Lambda):
            visit(node.body, qual, ())
            return
        if isinstance(node, ast.Try | ast.TryStar):
            handlers = tuple(_fate(h) for h in node.handlers)
            for sub in node.body:
                visit(sub, qual, (handlers, *held))
            for sub in (*node.handlers, *node.orelse, *node.finalbody):
                visit(sub, qual, held)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses.loads[node.id] += 1
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            uses.loads[node.attr] += 1
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call):
            index = node.slice
            name = _func_name(node.value)
            if name and isinstance(index, ast.Constant) and type(index.value) is int:
                uses.picked.setdefault(name, []).append(index.value)
        if isinstance(node, ast.Call) and held and qual:
            name = _func_name(node)
            if name:
                uses.caught.setdefault(name, []).append((".".join(qual), held))
        for sub in ast.iter_child_nodes(node):
            visit(sub, qual, held)

    for stmt in tree.body:
        visit(stmt, [], ())
    return uses


def _lineage(exception: str, bases: dict[str, set[str]]) -> set[str]:
    """The last names of an exception class and of its bases: Python's own classes by their
    MRO, the tree's by its class statements (a name defined twice: the bases of both)."""
    found: set[str] = set()
    todo = [exception]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        builtin = getattr(builtins, name, None)
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            found.update(c.__name__ for c in builtin.__mro__)
        todo.extend(bases.get(name, ()))
    if "BaseException" not in found:
        found |= {"Exception", "BaseException"}  # a library's class, bases unread: these
    return found


def caught_by_callers(sites: Iterable[Site], results: list[tuple[str, Uses]]) -> int:
    """Mark the raises that never reach the user: the function that raises is called only
    where a `try` of the calling function catches the exception (its class or a base) and
    neither raises again nor passes the error on (a log of it or its traceback, a response
    made of it); a handler that returns the error's text in a tuple counts when every call
    of the catching function takes another item of it (`check(...)[0]`). Every load of the
    function's name in the tree must be such a call (a name passed as a value, or called
    from module code, may raise anywhere); a name also another function's counts all their
    loads, so a doubt leaves the site as it was. Raises only (not asserts or logs), of a
    named function. Returns how many sites it marked."""
    loads: Counter = Counter()
    caught: dict[str, list[tuple[str, str, tuple]]] = defaultdict(list)
    picked: dict[str, list[int | None]] = defaultdict(list)
    bases: dict[str, set[str]] = defaultdict(set)
    for path, uses in results:
        loads.update(uses.loads)
        for name, made in uses.caught.items():
            caught[name] += [(path, function, held) for function, held in made]
        for name, indexes in uses.picked.items():
            picked[name] += indexes
        for name, of in uses.bases.items():
            bases[name] |= of

    def kept(held: tuple, lineage: set[str], function: str) -> bool:
        """Whether the innermost handler that catches it goes on without its message."""
        for handlers in held:
            for names, fate in handlers:
                if not names & lineage or fate == RAISES:
                    continue  # not this one; a handler that raises again: the next try out
                if fate == DROPS:
                    return True
                if fate == PASSES:
                    return False
                # returned in a tuple: every call of the function takes another item
                name = function.rsplit(".", 1)[-1]
                took = picked.get(name, [])
                return len(took) == loads[name] > 0 and not set(took) & fate
        return False

    marked = 0
    for site in sites:
        if site.kind != "raise" or site.derived is None or not site.function:
            continue
        parts = site.function.split(".")
        name = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        if name.startswith("__"):
            continue
        calls = caught.get(name, [])
        if not calls or len(calls) != loads[name]:
            continue
        lineage = _lineage(site.exception, bases)
        if not all(kept(held, lineage, function) for _, function, held in calls):
            continue
        where = sorted({f"{function} ({posixpath.basename(path)})" for path, function, _ in calls})
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        site.derived["reaches"] = False
        site.derived["caught"] = (
            f"Every call of {name} in this release is inside a try that catches "
            f"{site.exception} and goes on without its message: {shown}."
        )
        marked += 1
    return marked


# Reading a source tree ----------------------------------------------------------


@dataclass
class Tree:
    """The Python files of a source tree, with repository paths."""

    files: list[tuple[str, bytes]]
    vendored: int = 0  # files skipped in vendored folders
    tests: int = 0  # test files skipped
    excluded: int = 0  # files skipped by --exclude
    refused: list[tuple[str, str]] = field(default_factory=list)  # files not read, and why
    size: int = 0  # bytes read

    def take(self, path: str, declared: int, opener: Callable[[], IO[bytes]]) -> None:
        """Add a file of `declared` bytes (as its header says) within the limits, or say why
        not; `opener` opens it for reading."""
        room = min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.size)
        if declared > MAX_FILE_BYTES:
            self.refuse(path, f"is {_size(declared)}, over the {_size(MAX_FILE_BYTES)} limit")
        elif declared > room:
            self.refuse(path, f"takes the source over the {_size(MAX_TOTAL_BYTES)} limit")
        elif (data := self._read(path, opener, room)) is not None:
            self.size += len(data)
            self.files.append((path, data))

    def _read(self, path: str, opener: Callable[[], IO[bytes]], room: int) -> bytes | None:
        try:
            with opener() as handle:
                data = handle.read(room + 1)  # never more, whatever the header says
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError) as exc:
            self.refuse(path, f"cannot be read: {exc}")
            return None
        if len(data) > room:
            self.refuse(path, f"holds more than its header says, over the {_size(room)} left")
            return None
        return data

    def refuse(self, path: str, why: str) -> None:
        self.refused.append((path, why))


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def read_tree(
    source: Path, prefix: str = "", include_vendored: bool = False, exclude: Iterable[str] = ()
) -> Tree:
    """Read the .py files of a folder, a wheel (.whl/.zip) or an sdist (.tar.gz).

    Paths are repository paths: a folder that is itself a package (has `__init__.py`) keeps its
    name (`vllm/config/model.py` from `.../src/vllm`); an sdist loses its `name-version/` folder.
    """
    source = Path(source)
    tree = Tree([])
    exclude = list(exclude)
    prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
    if prefix and (problem := path_problem(prefix[:-1])):
        raise SourceError(f"--prefix {prefix[:-1]!r}: {problem[0]}; {problem[1]}")

    def keep(rel: str) -> bool:
        if not include_vendored and VENDORED & set(rel.split("/")[:-1]):
            tree.vendored += 1
            return False
        if TESTS.search(rel):
            tree.tests += 1
            return False
        if any(fnmatch(rel, pattern) for pattern in exclude):
            tree.excluded += 1
            return False
        return True

    if source.is_dir():
        _read_folder(source, prefix, keep, tree)
    elif source.is_file() and zipfile.is_zipfile(source):
        _read_zip(source, prefix, keep, tree)
    elif source.is_file() and tarfile.is_tarfile(source):
        _read_tar(source, prefix, keep, tree)
    elif not source.exists():
        raise SourceError(f"{source} does not exist")
    else:
        raise SourceError(f"{source} is not a folder, a wheel or an sdist")
    tree.files.sort()
    return tree


def _read_folder(root: Path, prefix: str, keep: Callable[[str], bool], tree: Tree) -> None:
    base = root.parent if (root / "__init__.py").is_file() else root
    real = os.path.realpath(base)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _PRUNED)
        for name in sorted(files):
            path = Path(folder, name)
            rel = path.relative_to(base).as_posix()
            if not name.endswith(".py"):
                continue
            _refuse_unsafe(root, rel)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):  # never followed: a target in the tree is read itself
                if os.path.commonpath([real, os.path.realpath(path)]) != real:
                    _refuse(root, rel, f"is a link to {os.path.realpath(path)}, outside the tree")
            elif not stat.S_ISREG(info.st_mode):  # opening a pipe or a device may block forever
                tree.refuse(prefix + rel, "is not a regular file (a pipe, socket or device)")
            elif keep(prefix + rel):
                tree.take(prefix + rel, info.st_size, partial(_open_binary, path))


def _open_binary(path: Path) -> IO[bytes]:
    return open(path, "rb")


def _strip_top(names: list[str]) -> int:
    """Length of a folder that every member lies in (an sdist's `name-version/`), or 0."""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        top = tops.pop()
        if "-" in top:
            return len(top) + 1
    return 0


def _member(name: str) -> str:
    """An archive member's name as a path: `./` and a folder's trailing `/` dropped, and
    "" for the archive's own top folder `.`."""
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    return "" if name == "." else name


def _refuse_unsafe(archive: Path, name: str) -> None:
    """Refuse a whole archive or tree for one unsafe name: it was made to write or
    record paths outside the tree (`../`, `/etc/...`), and no part of it is trusted."""
    if problem := path_problem(name, longest=None):
        _refuse(archive, name, problem[0])


def _refuse(archive: Path, name: str, why: str) -> None:
    raise SourceError(
        f"{archive}: member {name!r}: {why}; refusing the whole source: "
        "every member must be a relative path inside it"
    )


def _named_badly(tree: Tree, path: str) -> bool:
    """Skip, with its reason, a file whose path no record could name (a name over the
    length limit); a data file's long name does not matter, as it is never read."""
    problem = path_problem(path)
    if problem:
        tree.refuse(path, problem[0])
    return problem is not None


def _link_escapes(name: str, target: str) -> bool:
    """Whether a link at `name` pointing to `target` resolves outside the archive."""
    if target.startswith("/") or "\\" in target:
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return resolved == ".." or resolved.startswith("../")


def _read_zip(path: Path, prefix: str, keep: Callable[[str], bool], tree: Tree) -> None:
    with zipfile.ZipFile(path) as archive:
        names = []
        for info in archive.infolist():
            name = _member(info.filename)
            if not name:
                continue
            _refuse_unsafe(path, name)
            if stat.S_ISLNK(info.external_attr >> 16):
                with archive.open(info) as link:  # a link's data is its target: a short path
                    target = link.read(4096).decode("utf-8", "replace")
                if _link_escapes(name, target):
                    _refuse(path, name, f"is a link to {target!r}, outside the archive")
            elif name.endswith(".py"):
                names.append((name, info))
        cut = 0 if path.suffix == ".whl" else _strip_top([n for n, _ in names])
        for name, info in names:
            if _named_badly(tree, prefix + name[cut:]):
                continue
            if keep(prefix + name[cut:]):
                tree.take(prefix + name[cut:], info.file_size, partial(archive.open, info))


def _read_tar(path: Path, prefix: str, keep: Callable[[str], bool], tree: Tree) -> None:
    with tarfile.open(path) as archive:
        members = []
        for member in archive.getmembers():
            name = _member(member.name)
            if not name:
                continue
            _refuse_unsafe(path, name)
            if member.issym() and _link_escapes(name, member.linkname):
                _refuse(path, name, f"is a link to {member.linkname!r}, outside the archive")
            if member.islnk() and path_problem(_member(member.linkname)):
                _refuse(path, name, f"is a hard link to {member.linkname!r}, outside the archive")
            if member.isfile() and name.endswith(".py"):  # links and pipes are never opened
                members.append((name, member))
        cut = _strip_top([n for n, _ in members])
        for name, member in members:
            if _named_badly(tree, prefix + name[cut:]):
                continue
            if keep(prefix + name[cut:]):
                tree.take(prefix + name[cut:], member.size, partial(_tar_file, archive, member))


def _tar_file(archive: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    """A regular file's data (extractfile gives None only for other kinds of member)."""
    handle = archive.extractfile(member)
    assert handle is not None, member.name
    return handle


# Scanning a tree ------------------------------------------------------------------


class Progress:
    """A progress bar on a terminal; silent otherwise."""

    def __init__(self, total: int, label: str, stream=None, enabled: bool | None = None):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._drawn = -1.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._drawn > 0.1 or self.done >= self.total):
            self._drawn = now
            width = 30
            filled = width * self.done // max(self.total, 1)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


@dataclass
class Scan:
    """Every site of a tree, and what was skipped."""

    sites: list[Site]
    files: int
    seen: int  # raise statements
    skipped: Counter
    asserts: int  # assert statements with a message
    vendored: int
    tests: int
    excluded: int
    unparsable: list[tuple[str, str]]
    seconds: float
    refused: list[tuple[str, str]] = field(default_factory=list)  # over the limits: (where, why)
    paths: list[str] = field(default_factory=list)  # every file scanned


def scan_tree(
    source: Path,
    *,
    prefix: str = "",
    include_vendored: bool = False,
    exclude: Iterable[str] = (),
    snippets: bool = False,
    asserts: bool = True,
    printed: bool | str = False,
    jobs: int | None = None,
    progress: bool | None = None,
    knowledge: Callable[[list[tuple[str, bytes]]], explain.Knowledge] | None = None,
) -> Scan:
    """Parse every Python file of a tree, in a process pool when that pays.

    Files without a `raise` are parsed only for their `assert` statements, when asked.
    With `knowledge` (what a project knows, read from the tree's files), each site gets what
    explain derives of it.
    """
    start = time.monotonic()
    tree = read_tree(source, prefix, include_vendored, exclude)
    known = knowledge(tree.files) if knowledge else None
    jobs = jobs or os.cpu_count() or 1
    bar = Progress(len(tree.files), "scanning", enabled=progress)
    size = sum(len(data) for _, data in tree.files)
    results: list[FileScan] = []
    if jobs > 1 and size > PARALLEL_BYTES:
        # Big files first, spread over the batches, so that no worker has a long tail.
        files = sorted(tree.files, key=lambda f: -len(f[1]))
        batches = [(files[i::64], snippets, asserts, printed, known) for i in range(64)]
        for batch in _parallel(_scan_batch, batches, jobs):
            results += batch
            bar.advance(len(batch))
    else:
        for path, data in tree.files:
            results.append(scan_file(path, data, snippets, asserts, printed, known))
            bar.advance()
    bar.close()
    results = _relay_again(results, tree.files, snippets, asserts, printed, known, jobs)
    sites: list[Site] = []
    skipped: Counter = Counter()
    seen = asserted = 0
    for res in results:
        sites += res.sites
        skipped.update(res.skipped)
        seen += res.seen
        asserted += res.asserts
    sites.sort(key=lambda s: (s.path, s.line, s.exception, s.template))
    if known is not None:
        calls = {(r.path, name): called for r in results for name, called in r.calls.items()}
        explain.stages_from_callers(sites, calls, known)
        # Only when every parsed file was read for its uses (a file skipped for having no
        # `raise` may call without catching).
        read = [(r.path, r.uses) for r in results if r.uses is not None]
        if len(read) == sum(1 for r in results if not r.error and not r.refused):
            caught_by_callers(sites, read)
    return Scan(
        sites=sites,
        files=len(tree.files),
        seen=seen,
        skipped=skipped,
        asserts=asserted,
        vendored=tree.vendored,
        tests=tree.tests,
        excluded=tree.excluded,
        unparsable=sorted((r.path, r.error) for r in results if r.error),
        seconds=time.monotonic() - start,
        refused=tree.refused + sorted(refused for r in results for refused in r.refused),
        paths=[path for path, _ in tree.files],
    )


def _relay_again(
    results: list[FileScan],
    files: list[tuple[str, bytes]],
    snippets: bool,
    asserts: bool,
    printed: bool | str,
    known,
    jobs: int,
) -> list[FileScan]:
    """Scan again the files that call, as a statement, a helper of another module that
    raises or logs the message it is given, or raise an exception class of another module
    that builds its message from its arguments (`Relay`): now with the relays it imports.
    Only a file that imports one by name and calls it is scanned again (`FileScan.wants`),
    given only the relays it needs."""
    table: dict[str, list[Relay]] = defaultdict(list)
    for res in results:
        for name, relay in res.relays.items():
            table[name].append(relay)
    again: dict[str, dict[str, list[Relay]]] = {}
    for res in results:
        needed = [spec for spec in res.wants.values() if _resolve(spec, table) is not None]
        if needed:
            names = {spec.split("\x00")[0] for spec in needed}
            again[res.path] = {name: table[name] for name in names}
    if not again:
        return results
    todo = [(path, data) for path, data in files if path in again]
    redone: list[FileScan] = []
    if jobs > 1 and sum(len(data) for _, data in todo) > PARALLEL_BYTES:
        batches = []
        for i in range(min(16, len(todo))):
            part = todo[i::16]
            needs = {k: v for path, _ in part for k, v in again[path].items()}
            batches.append((part, snippets, asserts, printed, known, needs))
        for batch in _parallel(_scan_batch, batches, jobs):
            redone += batch
    else:
        redone = [
            scan_file(path, data, snippets, asserts, printed, known, again[path])
            for path, data in todo
        ]
    by_path = {res.path: res for res in redone}
    return [by_path.get(res.path, res) for res in results]


def _parallel(function: Callable, batches: list[tuple], jobs: int) -> Iterable:
    """function(*batch) for each batch in a process pool, results as they come."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(jobs) as pool:
        futures = [pool.submit(function, *batch) for batch in batches if batch[0]]
        for future in as_completed(futures):
            yield future.result()


def group_sites(sites: Iterable[Site]) -> dict[tuple[str, str], list[Site]]:
    """Sites of the same error: one list per (exception, message shape), sorted by place."""
    groups: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for site in sites:
        groups[site.key].append(site)
    out = {}
    for key, found in groups.items():
        found.sort(key=lambda s: (s.path, s.line))
        seen, unique = set(), []
        for site in found:
            if (site.path, site.line) not in seen:
                seen.add((site.path, site.line))
                unique.append(site)
        out[key] = unique
    return dict(sorted(out.items(), key=lambda kv: (kv[1][0].path, kv[1][0].line, kv[0])))


# Records ------------------------------------------------------------------------


class RecordIndex:
    """Existing records of a project, by the keys of their message and variants."""

    def __init__(self, content: Content, project: str):
        self.records = {i: r for i, r in content.records.items() if r.project == project}
        self.aliases = {a: i for a, i in content.aliases.items() if i in self.records}
        self.by_key: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
        for rid, record in self.records.items():
            self.by_key[match_key(record.exception, record.message)].append((0, rid))
            for variant in record.data.get("variants", []):
                text, exception = variant_text(variant, record.exception)
                self.by_key[match_key(exception, text)].append((1, rid))
        # Records of `assert` messages, log lines and API error responses: the tree's asserts
        # and logger calls must be read to find them.
        self.has_asserts = any(r.exception == "AssertionError" for r in self.records.values())
        self.has_printed = any(r.kind in PRINTED_KINDS for r in self.records.values())

    def find(self, key: tuple[str, str], new: str) -> tuple[str, int, list[str]]:
        """(record id, 0 for its message / 1 for a variant, other candidates); id '' if none."""
        found = sorted(set(self.by_key.get(key, [])))
        if found:
            best = found[0]
            others = [rid for prio, rid in found[1:] if prio == best[0] and rid != best[1]]
            return best[1], best[0], others
        rid = self.aliases.get(new, new)
        if rid in self.records:
            return rid, 0, []
        return "", 0, []


def variant_text(variant: str | dict, exception: str) -> tuple[str, str]:
    """A variant's text and the exception it is raised as (the record's, unless it says)."""
    if isinstance(variant, str):
        return variant, exception
    return variant["message"], variant.get("exception", exception)


@dataclass
class Assignment:
    matched: dict[str, list[Site]]  # record id -> its sites
    fresh: list[list[Site]]  # the sites of each error without a record
    warnings: list[str]
    errors: int  # errors considered (exception + message shape)


def assign(
    groups: dict[tuple[str, str], list[Site]],
    index: RecordIndex,
    project: str,
    asserts: bool = False,
    printed: bool = False,
) -> Assignment:
    """Which record each error belongs to. A record's sites are those of its message first,
    then those of its variants.

    Errors raised only by `assert` statements count as errors without a record only when
    `asserts` is true, log lines and API error responses only when `printed` is; they always
    find the records that already exist for them.
    """
    creates = {"raise", *(["assert"] if asserts else []), *(PRINTED_KINDS if printed else [])}
    found: dict[str, list[tuple[int, list[Site]]]] = defaultdict(list)
    fresh: list[list[Site]] = []
    warnings: list[str] = []
    errors = 0
    for key, sites in groups.items():
        first = sites[0]
        rid, prio, others = index.find(key, new_id(project, first.exception, first.template))
        if others:
            warnings.append(
                f"{first.exception}: {first.template!r} matches records {rid} and "
                f"{', '.join(others)}; {rid} takes it"
            )
        if rid:
            found[rid].append((prio, sites))
        elif any(site.kind in creates for site in sites):
            fresh.append(sites)
        else:
            continue
        errors += 1
    matched = {}
    for rid, pairs in sorted(found.items()):
        best = min(prio for prio, _ in pairs)
        sites = sorted((s for prio, ss in pairs if prio == best for s in ss), key=_place)
        sites += sorted((s for prio, ss in pairs if prio != best for s in ss), key=_place)
        matched[rid] = sites
    return Assignment(matched, fresh, warnings, errors)


def _place(site: Site) -> tuple[str, int]:
    return site.path, site.line


def location(
    sites: list[Site], ref: str, default_ref: str, old: dict | None, snippets: bool
) -> dict:
    """A record's `source`: the first site and the others in `sites`.

    A record that names no ref keeps naming none while the ref is the project's; new records
    always name theirs, so that a later change of the project's ref does not move their lines.
    """
    first = sites[0]
    src: dict = {"path": first.path, "line": first.line}
    if first.function:
        src["function"] = first.function
    if old is None or "ref" in old or ref != default_ref:
        src["ref"] = ref
    if snippets and first.snippet:
        src["snippet"] = first.snippet
    elif old and "snippet" in old:
        src["snippet"] = old["snippet"]
    if len(sites) > 1:
        src["sites"] = [site.place() for site in sites[1:]]
    return src


# Writing YAML -----------------------------------------------------------------------
#
# Records are small mappings of strings, integers and lists, so they are written here
# directly (fast, and the same bytes whatever the PyYAML version); every text is read back
# and compared, and PyYAML writes whatever this simple writer cannot.

_PLAIN_FIRST = set("-?:,[]{}#&*!|>'\"%@`") | {" "}
_RESOLVER = yaml.resolver.Resolver()


def _plain(text: str) -> bool:
    """Whether YAML reads this string back unquoted, as the same string."""
    return (
        text != ""
        and text[0] not in _PLAIN_FIRST
        and text == text.strip()
        and text.isprintable()
        and ": " not in text
        and " #" not in text
        and not text.endswith(":")
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
    )


def _block(text: str, pad: str) -> list[str] | None:
    """A literal block (`|` or `|-`) for multi-line text, or None when it would not fit."""
    body = text[:-1] if text.endswith("\n") else text
    lines = body.split("\n")
    if not lines[0] or lines[0][0] == " " or body.endswith("\n"):
        return None
    if any(line != line.rstrip() or not line.isprintable() for line in lines):
        return None
    head = "|" if text.endswith("\n") else "|-"
    return [head] + [pad + line if line else "" for line in lines]


def _scalar(value) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # with a dot, as YAML 1.1 reads a float: 1.0e-05, not 1e-05
        text = repr(value)
        return text if "." in text or "e" not in text else text.replace("e", ".0e")
    return value if _plain(value) else _quoted(value)


def _quoted(text: str) -> str:
    """A double-quoted scalar; JSON's escapes are YAML's, and YAML breaks lines at NEL etc."""
    return "".join(
        ch
        if ch.isprintable()
        else f"\\u{ord(ch):04x}"
        if ord(ch) < 0x10000
        else f"\\U{ord(ch):08x}"
        for ch in json.dumps(text, ensure_ascii=False)
    )


def _emit(data: dict, indent: int = 0) -> list[str]:
    pad = " " * indent
    out = []
    for key, value in data.items():
        head = f"{pad}{_scalar(key)}:"
        if isinstance(value, dict) and value:
            out += [head, *_emit(value, indent + 2)]
        elif isinstance(value, list) and value:
            out.append(head)
            for item in value:
                if isinstance(item, dict) and item:
                    lines = _emit(item, indent + 4)
                    out += [f"{pad}  - {lines[0].lstrip()}", *lines[1:]]
                else:
                    out.append(f"{pad}  - {_scalar(item)}")
        elif isinstance(value, str) and "\n" in value and (block := _block(value, pad + "  ")):
            out += [f"{head} {block[0]}", *block[1:]]
        elif isinstance(value, dict | list):
            out.append(f"{head} {json.dumps(value)}")
        else:
            out.append(f"{head} {_scalar(value)}")
    return out


class _Dumper(yaml.SafeDumper):
    """PyYAML in the records' style, for what _emit cannot write: lists indented under keys."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def dump_yaml(data: dict) -> str:
    """YAML for a mapping: stable, and read back exactly as written."""
    text = "\n".join(_emit(data)) + "\n"
    if _load(text) == data:
        return text
    for unicode in (True, False):
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=unicode, width=100)
        if _load(text) == data:
            return text
    raise ExtractError(f"cannot write {data.get('id', data)!r} as YAML that reads back the same")


def _load(text: str):
    source = parse_yaml(text, "(new)", [])
    return None if source is None else source.data


def _render_batch(project: str, groups: list[list[Site]], ref: str, snippets: bool) -> list:
    return [new_record(project, sites, ref, snippets) for sites in groups]


def derived(sites: list[Site], ref: str) -> dict:
    """A record's `derived`: what explain found at its first site, marked with the ref, as the
    knowledge base claims it (derived.claimed); not reaching the user only when no site of it
    does (caught_by_callers)."""
    out = {"ref": ref, **(sites[0].derived or {})}
    if any((site.derived or {}).get("reaches", True) for site in sites):
        out.pop("reaches", None)
        out.pop("caught", None)
    return claimed(out, sites[0].kind, sites[0].level)


def new_record(project: str, sites: list[Site], ref: str, snippets: bool) -> tuple[str, str]:
    """(id, file text) of a stub record for one error."""
    first = sites[0]
    rid = new_id(project, first.exception, first.template)
    data: dict = {"id": rid, "project": project, "exception": first.exception}
    if first.kind != "raise":
        data["kind"] = first.kind
    if first.level:
        data["level"] = first.level
    data["message"] = first.template
    if any(site.cut for site in sites):
        data["message_cut"] = True
    if first.types:
        data["params"] = {name: {"type": kind} for name, kind in first.types}
    data["source"] = location(sites, ref, "", None, snippets)
    data["derived"] = derived(sites, ref)
    tags = sorted({tag for site in sites for tag in site.tags})
    if tags:
        data["tags"] = tags
    data["analysis"] = {"method": "extracted", "ref": ref}
    ordered = {name: data[name] for name in record_fields() if name in data}
    return rid, f"{SCHEMA_LINE}\n{dump_yaml(ordered)}"


def replace_field(record: Record, text: str, name: str, value) -> str:
    """The record's file text with one top-level field rewritten (None: taken out) and every
    other byte kept."""
    lines = text.splitlines(keepends=True)
    tops = sorted((line, keys[0]) for keys, line in record.source.lines.items() if len(keys) == 1)
    if value is None and name not in record.data:
        return text
    block = "" if value is None else dump_yaml({name: value})
    if name in record.data:
        start = record.source.lines[(name,)] - 1
        later = [line - 1 for line, key in tops if line - 1 > start]
        end = later[0] if later else len(lines)
        # Blank lines and comments before the next field stay where they are.
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
    else:
        after = _fields_after(name)
        later = [line - 1 for line, key in tops if key in after]
        start = end = min(later) if later else len(lines)
        if lines and not lines[-1].endswith("\n") and start == len(lines):
            lines[-1] += "\n"
    new = "".join(lines[:start]) + block + "".join(lines[end:])
    want = {**record.data, name: value}
    order = _order(record.data, name)
    if value is None:
        del want[name]
        order.remove(name)
    if _load(new) != want or list(_load(new)) != order:
        raise ExtractError(f"{record.path}: cannot rewrite `{name}` without touching other fields")
    return new


def rewrite(record: Record, text: str, **fields) -> str:
    """The record's file text with these top-level fields rewritten, one after the other."""
    for name, value in fields.items():
        text = replace_field(record, text, name, value)
        record = reread(record.path, text)
    return text


def reread(path: str, text: str) -> Record:
    """A record's text read anew (replace_field has read it back already: it is one)."""
    source = parse_yaml(text, path, [])
    if source is None or not isinstance(source.data, dict):
        raise ExtractError(f"{path}: rewritten, it is no record")
    return Record(source, source.data)


def _order(data: dict, name: str) -> list[str]:
    if name in data:
        return list(data)
    after = _fields_after(name)
    keys = list(data)
    for i, key in enumerate(keys):
        if key in after:
            return keys[:i] + [name] + keys[i:]
    return keys + [name]


def _fields_after(name: str) -> list[str]:
    """The fields that follow this one in a record, in the schema's order: where a field a
    file lacks goes."""
    fields = record_fields()
    return fields[fields.index(name) + 1 :] if name in fields else []


def write_text(path: Path, text: str) -> None:
    """Replace a file atomically: a killed run leaves the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# The command ----------------------------------------------------------------------


@dataclass
class Summary:
    scan: Scan
    templates: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matched: int = 0
    seconds: float = 0.0

    asserts: bool = False

    def lines(self) -> list[str]:
        scan = self.scan
        extracted = sum(site.kind == "raise" for site in scan.sites)
        out = [
            f"scanned {scan.files} Python files in {scan.seconds:.1f} s"
            + (f" ({scan.vendored} in vendored folders skipped)" if scan.vendored else "")
            + (f" ({scan.tests} test files skipped)" if scan.tests else "")
            + (f" ({scan.excluded} excluded)" if scan.excluded else ""),
            f"raise statements seen: {scan.seen}",
            f"  with a literal message: {extracted}",
            f"  skipped: {sum(scan.skipped.values())}",
        ]
        for reason, why in SKIP_REASONS.items():
            if scan.skipped[reason]:
                out.append(f"    {reason}: {scan.skipped[reason]} ({why})")
        if self.asserts:
            literal = sum(site.kind == "assert" for site in scan.sites)
            out.append(
                f"assert statements with a message: {scan.asserts} ({literal} literal, "
                f"{scan.asserts - literal} skipped)"
            )
        printed = Counter(site.kind for site in scan.sites if site.kind in PRINTED_KINDS)
        if printed:
            out.append(f"log lines: {printed['log']}, API error responses: {printed['http']}")
        if scan.unparsable:
            out.append(f"files that do not parse: {len(scan.unparsable)}")
            out += [f"  {path}: {error}" for path, error in scan.unparsable[:10]]
        out += refused_lines(scan.refused)
        out.append(f"distinct errors (exception + message): {self.templates}")
        if self.matched:
            out.append(f"existing records matched: {self.matched}")
        out.append(
            f"records: {len(self.created)} created, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged"
        )
        out += [f"warning: {w}" for w in self.warnings]
        out.append(f"done in {self.seconds:.1f} s")
        return out


def refused_lines(refused: list[tuple[str, str]], most: int = 10) -> list[str]:
    """What was not read for being over a limit: a line each, the first `most` of them."""
    out = [f"skipped {where}: {why}" for where, why in refused[:most]]
    if len(refused) > most:
        out.append(f"skipped {len(refused) - most} more over the limits")
    return out


def assign_tree(
    content: Content,
    project: str,
    source: Path,
    *,
    asserts: bool = False,
    printed: bool = False,
    **scan,
):
    """Scan a source tree and assign every error it raises to a record of the project:
    (the scan, the project's records, the assignment)."""
    index = RecordIndex(content, project)
    found = scan_tree(
        source,
        asserts=asserts or index.has_asserts,
        printed=printed or index.has_printed,
        **scan,
    )
    return found, index, assign(group_sites(found.sites), index, project, asserts, printed)


def project_ref(content: Content, project: str) -> str:
    if project not in content.projects:
        known = ", ".join(content.projects) or "none"
        raise SourceError(f"unknown project {project!r}; projects: {known}")
    return content.projects[project].ref


def extract(
    root: Path,
    source: Path,
    project: str,
    ref: str | None = None,
    *,
    snippets: bool = False,
    include_vendored: bool = False,
    exclude: Iterable[str] = (),
    prefix: str = "",
    asserts: bool = False,
    printed: bool = False,
    jobs: int | None = None,
    dry_run: bool = False,
    progress: bool | None = None,
) -> Summary:
    """Write or update one record per error raised in the tree; return what was done."""
    start = time.monotonic()
    root = Path(root)
    content = load_content(root)
    default_ref = project_ref(content, project)
    ref = ref or default_ref
    known = wing(content.projects[project].wing_key)
    scan, index, done = assign_tree(
        content,
        project,
        source,
        asserts=asserts,
        printed=printed,
        snippets=snippets,
        prefix=prefix,
        include_vendored=include_vendored,
        exclude=exclude,
        jobs=jobs,
        progress=progress,
        knowledge=lambda files: known.knowledge(files) or explain.Knowledge(),
    )
    matched, fresh = done.matched, done.fresh[:MAX_NEW_RECORDS]
    scan.refused += _over_new_records(done.fresh[MAX_NEW_RECORDS:])
    summary = Summary(scan, done.errors, warnings=done.warnings, asserts=asserts)
    summary.matched = len(matched)
    writes: list[tuple[Path, str]] = []
    folder = root / "content" / "errors" / project
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(fresh) > 500:
        batches = [(project, fresh[i :: jobs * 4], ref, snippets) for i in range(jobs * 4)]
        rendered = sorted(r for batch in _parallel(_render_batch, batches, jobs) for r in batch)
    else:
        rendered = _render_batch(project, fresh, ref, snippets)
    for rid, text in rendered:
        writes.append((folder / f"{rid}.yaml", text))
        summary.created.append(rid)
    for rid, sites in matched.items():
        record = index.records[rid]
        old = record.data["source"]  # the mapping rewritten
        new = {"source": location(sites, ref, default_ref, old, snippets)}
        new["derived"] = derived(sites, ref)
        changed = {name: value for name, value in new.items() if record.data.get(name) != value}
        if not changed:
            summary.unchanged.append(rid)
            continue
        path = root / record.path
        writes.append((path, rewrite(record, path.read_text(encoding="utf-8"), **changed)))
        summary.updated.append(rid)
    if not dry_run:
        bar = Progress(len(writes), "writing", enabled=progress)
        for path, text in writes:
            write_text(path, text)
            bar.advance()
        bar.close()
    summary.seconds = time.monotonic() - start
    return summary


def _over_new_records(left: list[list[Site]]) -> list[tuple[str, str]]:
    """A line for each file whose errors, past MAX_NEW_RECORDS, get no record (an error
    raised in several files is told of its first)."""
    why = f"its errors past the first {MAX_NEW_RECORDS:,} new records of a run are not written"
    files = dict.fromkeys(sites[0].path for sites in left)
    return [(path, why) for path in files]


def rederive(
    root: Path,
    content: Content,
    source: Path,
    project: str,
    *,
    jobs: int | None = None,
    dry_run: bool = False,
    progress: bool | None = None,
) -> Summary:
    """Rewrite the `derived` block of every record the release at `source` (the wheel of the
    project's pinned `version`) still raises, as today's code derives it; create no record and
    touch no other field, so re-running it after others' content is merged changes only what
    the code says. Scanned as `errorkb history` scans a release: raises, asserts, log lines,
    API error responses, at the project's `source_prefix`, without its `source_exclude`."""
    start = time.monotonic()
    ref = project_ref(content, project)
    known = wing(content.projects[project].wing_key)
    where = content.projects[project]
    read: list[explain.Knowledge] = []

    def knowledge(files):
        read.append(known.knowledge(files) or explain.Knowledge())
        return read[-1]

    scan, index, done = assign_tree(
        content,
        project,
        source,
        asserts=True,
        printed=True,
        prefix=where.source_prefix,
        exclude=where.source_exclude,
        jobs=jobs,
        progress=progress,
        knowledge=knowledge,
    )
    summary = Summary(scan, done.errors, warnings=done.warnings, asserts=True)
    summary.matched = len(done.matched)
    writes: list[tuple[Path, str]] = []
    for rid, sites in done.matched.items():
        record = index.records[rid]
        new = derived(sites, ref)
        if record.data.get("derived") == new:
            summary.unchanged.append(rid)
            continue
        path = Path(root) / record.path
        writes.append((path, rewrite(record, path.read_text(encoding="utf-8"), derived=new)))
        summary.updated.append(rid)
    # A removed record's derived block is its last release's; the settings its own message
    # names are the pinned release's where they still are (said.with_named).
    for record in content.records.values():
        if record.project != project or record.status != "removed" or not read:
            continue
        named = said.with_named(record, read[-1])
        if named is None:
            continue
        path = Path(root) / record.path
        writes.append((path, rewrite(record, path.read_text(encoding="utf-8"), derived=named)))
        summary.updated.append(record.id)
    if not dry_run:
        for path, text in writes:
            write_text(path, text)
    summary.seconds = time.monotonic() - start
    return summary

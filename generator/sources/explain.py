"""What the code says about an error: derived, for every extracted record, from its raise site.

`extract` hands each raise (or assert) statement over with its context: the guards it sits in
(`if`/`elif`/`else`/`while`/`except`/`case`, and early returns before it), the enclosing class,
a resolver for local variables and the message's placeholders with the expressions they print.
From that this module derives

- `condition`: when it is raised, as short code (the guards combined, negated where the raise is
  in an `else` or after an early return); over `MAX_CONDITION` characters, the quantities it
  checks instead; `unconditional` when nothing guards it in its function;
- `flags`: the user-facing settings behind the placeholders and the condition's variables,
  traced through local variables and `self.*` attributes, asked of the project's `Knowledge`;
- `category`, and our own short explanation and first things to try with the names filled in;
- `title`: the message without its placeholders, short;
- `divisibility`: the value and divisor of a divisibility test, for the divisor calculator.

Nothing here names a project: what a project's settings and stages are is its wing's
`Knowledge` (generator/projects/<key>/).
"""

import ast
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from functools import lru_cache

from errorkb.content import template
from errorkb.content.derived import emptied, handle, is_none
from errorkb.sources import named as said

# A model's methods that run while it is built (PyTorch models' conventions, whatever the
# project): the wings date them to model loading wherever their file is.
MODEL_INIT = re.compile(
    r"(^|\.)(__init__|_?\w*load\w*weight\w*|weight_loader\w*|_init_\w*|create_weights"
    r"|process_weights\w*)$"
)
# Functions that warm a server up before it takes requests (whatever the project): the wings
# date them to start-up even where their module serves requests.
WARMUP = re.compile(r"(^|[._])_?\w*warm_?up\w*$", re.I)
MAX_CONDITION = 120  # longer conditions are summarised by the quantities they check


# What a project knows of its own source -------------------------------------------


@dataclass(frozen=True)
class Setting:
    """A user-facing setting: where the code reads it, what kind of setting it is, and what the
    user writes to change it (a flag, a keyword, a key of a JSON object, a variable), its docs."""

    field: str  # where the code reads it, e.g. parallel_config.tensor_parallel_size
    flag: str = ""  # engine and server arguments: e.g. --tensor-parallel-size
    url: str = ""
    key: str = ""  # the key inside a JSON object: a JSON flag's, the request body's, config.json's
    _: KW_ONLY
    kind: str  # a key of KINDS
    keyword: str = ""  # an engine argument's keyword in Python, e.g. LLM(tensor_parallel_size=)
    env: str = ""  # an environment variable's name
    # A flag of another program of the project than its engine or server, with an argument
    # parser of its own: the command that takes it (SGLang's `sglang generate`).
    command: str = ""

    def entry(self, name: str) -> dict:
        """The record's `derived.flags` item of this setting, read as `name` in the code."""
        out = {"name": name, "kind": self.kind, "field": self.field}
        for key in ("flag", "command", "keyword", "key", "env", "url"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


class Knowledge:
    """A project's settings and stages, as its wing reads them from the tree being extracted.
    This base knows nothing: a project without a wing gets conditions, categories and titles."""

    # Whether the project's pages offer the divisor calculator (where a divisibility test's
    # value and divisor are both named: `divisor_calculator_shows`); "What to try" says so.
    divisor_calculator = False

    def setting(self, chain: tuple[str, ...], owner: str) -> Setting | None:
        """The setting an attribute chain reads (`("self", "parallel_config", "tp")`, a call as
        `"name()"`), in a method of class `owner` ("" outside a class)."""
        return None

    def stage(self, path: str, function: str) -> str | None:
        """Where in a run code at this path and function runs: a key of STAGES."""
        return None

    # The release's parser (generator/flags/<project>-<version>.json), when there is its data:
    # option string -> its entry (nargs, type, choices). The wings fill it in.
    parser: dict[str, dict] = {}

    def named(self, word: str) -> list[Setting]:
        """The settings a word of a message names: a flag as written (`--max-model-len`, in
        its `_` form, `--no-x`, a JSON flag's `--x.key`) or a setting's name (`max_model_len`,
        `VLLM_X`, a request field); every one that fits (more than one: the word is ambiguous)."""
        return []

    def settings_apply(self, path: str) -> bool:
        """Whether the settings `named` knows are those of the program the code at this path
        runs in (not a separate tool's with a parser of its own)."""
        return True

    def program(self, path: str) -> "Knowledge":
        """What is known of the settings of the program the code at this path runs in: this,
        or the knowledge of another program of the project with settings of its own (SGLang's
        diffusion runtime, `sglang generate`). Its stages are this one's."""
        return self

    def option(self, flag: str) -> dict | None:
        """The parser's entry of an option string; None without the release's parser data."""
        return self.parser.get(flag)

    def choosing(self, value: str) -> list[str]:
        """The options (each by its first string) one of whose choices is this value."""
        seen: dict[str, None] = {}
        for option in self.parser.values():
            if value in [str(c) for c in option.get("choices") or ()]:
                seen.setdefault(option["strings"][0])
        return list(seen)

    def environment(self, name: str) -> Setting | None:
        """An environment variable the message calls one, when it is none of the project's."""
        return Setting("os.environ", kind="env-var", env=name) if _ENV_NAME.match(name) else None

    def dispatches(self, path: str, function: str) -> bool:
        """Whether this function runs a whole command (a CLI's subcommand, a server's main):
        what it calls runs at every stage, so its own stage dates none of its callees."""
        return False

    def undated(self, path: str, function: str) -> bool:
        """Whether no stage of a run applies to this code (a separate program's, or the
        shutdown's): it gets none, not even from its callers, and dates none of its callees."""
        return False

    def shutdown(self, path: str, function: str) -> bool:
        """Whether this function closes or shuts down (undated): what it calls may run then,
        so it disagrees with every stage its callees' other callers give."""
        return False

    def by_default(self, path: str, function: str) -> frozenset[str]:
        """The stages that may replace the one `stage` gives, where that is only its module's
        default (code that is set up at one stage and used at another): where every caller of
        the function is of one of these, the callers' stage is the function's. Empty: the
        stage is the code's own."""
        return frozenset()


# The context extract hands over -------------------------------------------------------


@dataclass
class Context:
    """A raise statement (or an assert, a logger call, an API error response) in its
    function, as the scanner saw it."""

    node: ast.stmt  # the Raise, Assert, or the statement of the call
    exception: str
    message: str  # the template
    function: str  # qualname
    path: str
    guards: list[tuple[str, object]]  # (if/else/while/except/case, its node), outermost first
    exits: list[ast.stmt]  # early returns before the raise: `if t: return`, or in a for loop
    owner: ast.ClassDef | None  # the enclosing class
    holes: list[tuple[str, ast.AST]]  # placeholder -> the expression it prints
    resolve: Callable[[str], ast.AST | None]  # a local's single value
    knowledge: Knowledge = field(default_factory=Knowledge)
    attrs: "Attrs | None" = None  # the owner's `self.x = ...`, shared by its raise sites
    kind: str = "raise"  # or "assert", "log", "http", as a record's `kind`
    level: str = ""  # of a log line
    module: ast.Module | None = None  # the file's module: its constants and functions
    # The module's one-line functions: name -> (what they return, their own names): helpers
    helpers: dict[str, tuple[ast.expr, frozenset[str]]] = field(default_factory=dict)


# Conditions -----------------------------------------------------------------------------

_INVERSE: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _truthy(test: ast.expr) -> ast.expr:
    """`if a % b:` is `a % b != 0`: say it the way people read it."""
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod):
        return ast.Compare(test, [ast.NotEq()], [ast.Constant(0)])
    return test


def negate(test: ast.expr) -> ast.expr:
    """The test that holds when `test` does not, written without a leading `not` if it can be."""
    test = _truthy(test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _truthy(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return ast.Compare(test.left, [_INVERSE[type(test.ops[0])]()], test.comparators)
    if isinstance(test, ast.BoolOp):
        other = ast.Or() if isinstance(test.op, ast.And) else ast.And()
        return ast.BoolOp(other, [negate(v) for v in test.values])
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod):
        return ast.Compare(test, [ast.Eq()], [ast.Constant(0)])
    return ast.UnaryOp(ast.Not(), test)


def _guard_tests(ctx: Context) -> list[tuple[int, ast.expr]]:
    """The tests of the guards that enclose the raise, outermost first, with their lines."""
    placed: list[tuple[int, ast.expr]] = []
    guards = ctx.guards
    for i, (kind, node) in enumerate(guards):
        nxt = guards[i + 1] if i + 1 < len(guards) else None
        if kind in ("if", "while") and isinstance(node, ast.If | ast.While):
            if isinstance(node.test, ast.Constant) and node.test.value is True:
                continue  # `while True:` says nothing of when
            placed.append((node.lineno, _truthy(node.test)))
        elif kind == "else" and isinstance(node, ast.If):
            # An elif: the earlier test is left out only when the elif's own test implies
            # it failed (`x == 'a'` ... `elif x == 'b'`); else both are said.
            inner = nxt[1] if nxt and nxt[0] == "if" and node.orelse == [nxt[1]] else None
            if isinstance(inner, ast.If) and _exclusive(node.test, inner.test):
                continue
            placed.append((node.lineno, negate(node.test)))
        elif kind == "except" and isinstance(node, ast.ExceptHandler):
            caught = ast.unparse(node.type) if node.type is not None else "an exception"
            placed.append((node.lineno, ast.Name(f"{caught} was raised")))
        elif kind == "case" and isinstance(node, tuple):
            placed.append((node[1].pattern.lineno, _case(*node)))
    return placed


def _tests(ctx: Context) -> list[ast.expr]:
    """What must hold for the raise to run, in the order the code tests it: the enclosing
    guards and the early returns before it (a branch that leads away from the raise, negated:
    said always, not only when nothing else guards it), then an assert's own test."""
    placed = _guard_tests(ctx) + [(exit.lineno, _exit_test(exit)) for exit in ctx.exits]
    out = [test for _, test in sorted(placed, key=lambda pair: pair[0])]
    if isinstance(ctx.node, ast.Assert):
        out.append(negate(ctx.node.test))
    return out


def _own(ctx: Context) -> ast.expr | None:
    """The raise's own test, which its category is read from: an assert's, else its innermost
    guard's; the last early return's only when nothing else guards it (else they are context)."""
    if isinstance(ctx.node, ast.Assert):
        return negate(ctx.node.test)
    guards = [test for _, test in _guard_tests(ctx)]
    # An environment switch that only says "raise rather than warn" (`if envs.STRICT.get():`)
    # is not what is checked: the guard around it is.
    while len(guards) > 1 and _env_switch(guards[-1]):
        guards.pop()
    if guards:
        return guards[-1]
    return _exit_test(ctx.exits[-1]) if ctx.exits else None


def _env_switch(test: ast.expr) -> bool:
    """Whether a test is an environment variable read alone (`envs.X.get()`, `os.environ.get
    ("X")`, negated or not)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    parts = [word for part in reads(test) or () for word in part.split(".")]
    return any(_ENV_NAME.match(word) and "_" in word for word in parts)


def _exclusive(earlier: ast.expr, later: ast.expr) -> bool:
    """Whether `later` holding means `earlier` did not: both compare the same expression
    for equality with (or membership in) literals, and no literal is in both."""

    def values(test: ast.expr) -> tuple[str, set] | None:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
            return ast.dump(test.left), {right.value}
        if (
            isinstance(op, ast.In)
            and isinstance(right, ast.Tuple | ast.List | ast.Set)
            and all(isinstance(e, ast.Constant) for e in right.elts)
        ):
            return ast.dump(test.left), {e.value for e in right.elts}  # type: ignore[attr-defined]
        return None

    a, b = values(earlier), values(later)
    return a is not None and b is not None and a[0] == b[0] and not (a[1] & b[1])


def _exit_test(exit: ast.stmt) -> ast.expr:
    """What holds after an early exit was not taken: `if t: return` -> not t; a loop
    `for x in xs: if t: return` -> no x satisfies t."""
    if isinstance(exit, ast.If):
        return negate(exit.test)
    assert isinstance(exit, ast.For) and isinstance(exit.body[0], ast.If)
    found = ast.GeneratorExp(exit.body[0].test, [ast.comprehension(exit.target, exit.iter, [], 0)])
    return ast.UnaryOp(ast.Not(), ast.Call(ast.Name("any"), [found], []))


def _case(match: ast.Match, case: ast.match_case) -> ast.expr:
    """A `case` as a test: `x == value`; the wildcard as no earlier value matching."""
    subject = match.subject
    pattern = case.pattern
    if isinstance(pattern, ast.MatchValue):
        return ast.Compare(subject, [ast.Eq()], [pattern.value])
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
        earlier = [c.pattern for c in match.cases[: match.cases.index(case)]]
        values = [p.value for p in earlier if isinstance(p, ast.MatchValue)]
        if values and len(values) == len(earlier):
            tests: list[ast.expr] = [ast.Compare(subject, [ast.NotEq()], [v]) for v in values]
            return tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
    return ast.Name(f"{_text(subject)} matches {ast.unparse(pattern)}")


def _combined(tests: list[ast.expr]) -> ast.expr | None:
    if not tests:
        return None
    flat: list[ast.expr] = []
    for test in tests:
        is_and = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
        flat += test.values if is_and else [test]  # type: ignore[attr-defined]
    return flat[0] if len(flat) == 1 else ast.BoolOp(ast.And(), flat)


def _text(node: ast.AST) -> str:
    return re.sub(r"\s+", " ", ast.unparse(node))


def _chain(node: ast.AST) -> tuple[str, ...] | None:
    """`a.b.c` as ("a", "b", "c"); a call as "name()"; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        inner = _chain(node.func)
        if inner is None:
            return None
        parts.append(".".join(inner) + "()")
    else:
        return None
    return tuple(reversed(parts))


_NOT_QUANTITIES = frozenset(
    {"self", "cls", "None", "True", "False", "len", "isinstance", "hasattr", "getattr"}
    | {"any", "all", "min", "max", "sum", "int", "str", "float", "type", "set", "list"}
    | {"dict", "tuple", "bool", "bytes", "object", "frozenset", "complex"}  # types, not values
)


def quantities(expr: ast.AST | None) -> list[str]:
    """The variables and attributes an expression reads (not the functions it calls)."""
    if expr is None:
        return []
    found: list[str] = []
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    inner = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute | ast.Subscript)}
    for node in ast.walk(expr):
        if id(node) in called or id(node) in inner:
            continue
        if isinstance(node, ast.Name | ast.Attribute) and (chain := _chain(node)):
            if chain[0] in ("self", "cls"):
                chain = chain[1:]
            text = ".".join(chain)
            if text and text not in _NOT_QUANTITIES and _variable(text) and text not in found:
                found.append(text)
    if not found:  # only calls: name what they are called on (`source.name.isdigit()`)
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                chain = _chain(node.func.value)
                text = ".".join(chain[1:] if chain and chain[0] == "self" else chain or ())
                if text and _variable(text) and text not in found:
                    found.append(text)
    return found


def checked(own: ast.expr | None, condition: ast.expr | None) -> list[str]:
    """What a long condition checks, for its summary: the raise's own test's quantities
    first (the outer guards and early returns are context), each key it reads
    (`data.get("logprobs")`: `data['logprobs']`) and each question asked of an object
    (`request.is_streaming()`), with the names they read."""
    found: list[str] = []
    for expr in (own, condition):
        for node in ast.walk(expr) if expr is not None else ():
            text = ""
            read = _read(node) if isinstance(node, ast.Call | ast.Subscript) else None
            if read and (chain := _chain(read[0])):
                text = ".".join(chain[1:] if chain[0] in ("self", "cls") else chain)
                text = f"{text}[{read[1]!r}]" if text else ""
            elif (
                isinstance(node, ast.Call)
                and not node.args
                and not node.keywords
                and isinstance(node.func, ast.Attribute)
                and (chain := _chain(node.func))
                and len(chain) > 1
            ):
                text = ".".join(chain[1:] if chain[0] in ("self", "cls") else chain) + "()"
                text = text if "." in text and _variable(text.replace("()", "")) else ""
            if text and text not in found:
                found.append(text)
        found += [name for name in quantities(expr) if name not in found]
    return found


def _variable(text: str) -> bool:
    """Not a constant (UPPER) nor a class (CamelCase) nor a call."""
    first = text.split(".")[0]
    return not first.isupper() and not first[:1].isupper() and "()" not in text


# Settings ------------------------------------------------------------------------------


class Attrs:
    """`self.x = value` assignments of a class, for tracing `self.x` to where it comes from;
    read on first use, once per class."""

    def __init__(self, owner: ast.ClassDef | None):
        self.owner = owner
        self._values: dict[str, list[ast.AST]] | None = None

    def value(self, name: str) -> ast.AST | None:
        if self._values is None:
            self._values = {}
            for node in ast.walk(self.owner) if self.owner else ():
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        chain = _chain(target)
                        if chain and len(chain) == 2 and chain[0] == "self":
                            self._values.setdefault(chain[1], []).append(node.value)
        found = self._values.get(name, [])
        return found[0] if len(found) == 1 else None


def _substitute(node: ast.AST, ctx: Context, attrs: Attrs) -> ast.AST | None:
    """The expression with its root variable (or `self.x`) replaced by the value assigned to it."""
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return attrs.value(node.attr)
        inner = _substitute(node.value, ctx, attrs)
        return ast.Attribute(inner, node.attr) if isinstance(inner, ast.expr) else None
    if isinstance(node, ast.Name):
        value = ctx.resolve(node.id)
        return value if isinstance(value, ast.expr) else None
    return None


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*$")
_ENVIRON = {("os", "environ"), ("os", "getenv"), ("environ",)}


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _read(node: ast.AST) -> tuple[ast.AST, str] | None:
    """A read of a named key: `x["k"]`, `x.get("k", ...)`, `getattr(x, "k", ...)` as (x, "k")."""
    if isinstance(node, ast.Subscript) and (key := _key(node.slice)):
        return node.value, key
    if isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        func = node.func
        key = _key(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr in ("get", "getenv") and key:
            return (func.value if func.attr == "get" else func), key
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(node.args) > 1:
            key = _key(node.args[1])
            return (node.args[0], key) if key else None
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
        key = _key(node.left)  # "k" in x
        return (node.comparators[0], key) if key else None
    return None


# A project's own reader of an environment variable, called with the variable's name:
# SGLang's `get_bool_env_var("SGLANG_X")`, `get_int_env_var`, `_optional_env_str("X")`.
_ENV_GETTER = re.compile(r"(?i)^(?!_?(set|update|pop|del|unset|clear))\w*env\w*$")
_ENV_VARIABLE = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+$")


def _env_read(node: ast.AST) -> str | None:
    """The variable a call of an environment reader reads: `get_bool_env_var("SGLANG_X",
    "false")` -> "SGLANG_X" (the first argument, a name in capitals with an underscore)."""
    if not (isinstance(node, ast.Call) and node.args and (key := _key(node.args[0]))):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return key if _ENV_GETTER.match(name) and _ENV_VARIABLE.match(key) else None


def reads(node: ast.AST) -> tuple[str, ...] | None:
    """What an expression reads, as an attribute chain: `a.b.c` as ("a", "b", "c"), a key read
    as one more part (`cfg["heads"]`, `getattr(cfg, "heads", 0)`: ("cfg", "heads")), an
    environment variable as ("os.environ", "NAME") (also through a reader of the
    environment: `get_bool_env_var("NAME")`), a call as "name()"; None for the rest."""
    if env := _env_read(node):
        return ("os.environ", env)
    found = _read(node)
    if found is None:
        return _chain(node)
    base, key = found
    chain = _chain(base)
    if chain in _ENVIRON:
        return ("os.environ", key)
    return (*chain, key) if chain else None


_CONVERSIONS = frozenset({"int", "float", "bool", "str"})


def _converted(node: ast.AST | None) -> bool:
    """`int(x)`, `float(x)`: a value converted to a type, whose setting is x's."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CONVERSIONS
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    )


def trace(expr: ast.AST, ctx: Context, attrs: Attrs) -> Setting | None:
    """The setting an expression reads, through up to six local or `self.` assignments; an
    environment variable the project knows nothing of is one all the same."""
    owner = ctx.owner.name if ctx.owner else ""
    node: ast.AST | None = expr
    for _ in range(6):
        while _converted(node):  # `int(config.heads_per_ngram)`: the same setting's value
            node = node.args[0]  # type: ignore[union-attr]
        if node is None:
            return None
        chain = reads(node)
        if chain:
            found = ctx.knowledge.setting(chain, owner)
            if found:
                return found
            if chain[0] == "os.environ" and len(chain) == 2 and _ENV_NAME.match(chain[1]):
                return Setting("os.environ", kind="env-var", env=chain[1])
        node = _substitute(node, ctx, attrs)
    return None


def helpers(module: ast.Module) -> dict[str, tuple[ast.expr, frozenset[str]]]:
    """A module's functions whose body is one `return` (after a docstring), by name: what
    they return, and the names that are their own (parameters), which the caller's code does
    not know. `def _should_skip_check(pkg): return pkg in _PKGS and envs.SGLANG_SKIP.get()`."""
    found = {}
    for node in module.body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            continue
        body = node.body[1:] if _docstring(node.body[0]) else node.body
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            a = node.args
            own = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            found[node.name] = (body[0].value, frozenset(own))
    return found


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(_key(stmt.value), str)


def _helped(condition: ast.expr, ctx: Context) -> list[ast.AST]:
    """The condition's calls of the module's one-line functions (`helpers`), each replaced by
    what it returns: a setting read there is read by the check (not through the function's
    own parameters, which are the caller's values)."""
    out: list[ast.AST] = []
    for node in ast.walk(condition):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            returned, own = ctx.helpers.get(node.func.id, (None, frozenset()))
            for inner in ast.walk(returned) if returned is not None else ():
                chain = (
                    reads(inner) if isinstance(inner, ast.Name | ast.Attribute | ast.Call) else None
                )
                if chain and chain[0].split("(")[0] not in own:
                    out.append(inner)
    return out


def flags(ctx: Context, condition: ast.expr | None) -> list[dict]:
    """The settings behind the placeholders and the condition's quantities (and those of the
    module's one-line functions it calls), each once."""
    attrs = ctx.attrs or Attrs(ctx.owner)
    named: list[tuple[str, ast.AST]] = list(ctx.holes)
    if condition is not None:
        for node in ast.walk(condition):
            readable = isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
            if readable and reads(node):
                named.append((_short(node), node))
            elif isinstance(node, ast.Compare) and (found := _read(node)):  # "k" in x
                named.append((f"{_short(found[0])}[{found[1]!r}]", node))
        named += [(_short(node), node) for node in _helped(condition, ctx)]
    out: list[dict] = []
    seen: set[tuple[str, ...]] = set()
    read = [pair for held, node in named for pair in _alternatives(held, node, ctx)]
    for name, expr in read:
        if isinstance(expr, ast.Call) and not reads(expr):
            continue
        setting = trace(expr, ctx, attrs)
        if setting is None:
            continue
        same = (setting.kind, setting.flag, setting.key, setting.env)
        if same not in seen:
            seen.add(same)
            out.append(setting.entry(name))
    # The settings the message names in its own words (`Use --enable-lora`), that the code
    # does not show (named.py).
    requests = said.requests_handled(ctx.kind, ctx.knowledge.stage(ctx.path, ctx.function))
    for entry in said.entries(ctx.message, ctx.knowledge, requests, ctx.path):
        if not any(said.same(entry, s) for s in _settings_of(out)):
            entry.pop("passes", None)  # given by passing(), after the condition's
            out.append(entry)
    return out


def _alternatives(name: str, node: ast.AST, ctx: Context) -> list[tuple[str, ast.AST]]:
    """A name and what it reads; a local that takes the first of several values given
    (`n = cfg.max_num_active_seqs or cfg.max_num_seqs`) reads each of them."""
    value = ctx.resolve(node.id) if isinstance(node, ast.Name) else None
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return [(name, node)] + [(name, v) for v in value.values if reads(v)]
    return [(name, node)]


def _settings_of(entries: list[dict]) -> list[Setting]:
    keys = ("field", "flag", "url", "key")
    return [
        Setting(*(e.get(k, "") for k in keys), kind=e["kind"], env=e.get("env", ""))
        for e in entries
    ]


def _short(node: ast.AST) -> str:
    text = _text(node)
    return text[5:] if text.startswith("self.") else text


# Values that pass ---------------------------------------------------------------------

# The raise's comparison -> what the setting on its left must be instead for the check to pass.
_PASSING = {
    ast.Lt: ">=",
    ast.LtE: ">",
    ast.Gt: "<=",
    ast.GtE: "<",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.In: "not in",
    ast.NotIn: "in",
}
_MIRROR = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
MAX_BOUND = 60  # a bound written as code longer than this says nothing at a glance


def _bound(node: ast.AST, ctx: Context) -> dict | None:
    """A comparison's other side as the value to try: a constant, the placeholder that prints
    it (its value is in the user's message), choices, or short code."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand.value if isinstance(node.operand, ast.Constant) else None
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return {"value": -inner}
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bool):
        finite = not isinstance(node.value, float) or math.isfinite(node.value)
        return {"value": node.value} if finite else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if (
            values
            and len(values) == len(node.elts)
            and all(type(v) in (int, float, str) for v in values)
        ):
            return {"choices": values}
        return None
    param = _param_of(node, ctx)
    if param:
        return {"param": param}
    text = _short(node)
    return {"expr": text} if len(text) <= MAX_BOUND else None


def _changeable(expr: ast.AST, ctx: Context, attrs: Attrs) -> Setting | None:
    setting = trace(expr, ctx, attrs)
    return setting if setting is not None and setting.kind != "model-config" else None


_FALSE = frozenset({"", "0", "false", "no", "off", "none"})


def _env_default(test: ast.AST, ctx: Context, attrs: Attrs) -> str | None:
    """For a reader of the environment (`get_bool_env_var("X", default="true")`, also held in
    a variable) whose default is not false: "bool" for a switch, "" for another reader;
    None for the rest (unset, the variable is false)."""
    node: ast.AST | None = test
    for _ in range(6):
        if node is None or isinstance(node, ast.Call):
            break
        node = _substitute(node, ctx, attrs)
    if not (isinstance(node, ast.Call) and _env_read(node)):
        return None
    given = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "default")]
    default = given[0] if given else None
    if not isinstance(default, ast.Constant) or str(default.value).lower() in _FALSE:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return "bool" if "bool" in name.lower() else ""


def _asks_value(test: ast.AST, ctx: Context, attrs: Attrs) -> bool:
    """`get_backend().is_deepep()`, also held in a variable (`self.use_marlin =
    get_moe_runner_backend().is_marlin()`): a question asked of a value a call returns;
    whether it holds says nothing of the setting's presence (what passes is another choice)."""
    node: ast.AST | None = test
    for _ in range(6):
        if node is None or isinstance(node, ast.Call):
            break
        node = _substitute(node, ctx, attrs)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Call)
    )


def _passes(test: ast.expr, ctx: Context, attrs: Attrs) -> tuple[Setting, dict] | None:
    """A setting this test reads and a value of it that makes the test false, as far as the
    test alone says: {"op": "<=", "value": 8} (or "param", "expr", "choices"), "divides" or
    "multiple-of" for a remainder, "set" or "unset" for a test of presence."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if _asks_value(test.operand, ctx, attrs):
            return None
        setting = _changeable(test.operand, ctx, attrs)
        return (setting, {"op": "set"}) if setting else None
    if not isinstance(test, ast.Compare):
        if _asks_value(test, ctx, attrs):
            return None
        setting = _changeable(test, ctx, attrs) if reads(test) else None
        if setting and (default := _env_default(test, ctx, attrs)) is not None:
            # on by default: unset it still fails; a switch is turned off by its false value
            return (setting, {"op": "==", "value": "false"}) if default == "bool" else None
        return (setting, {"op": "unset"}) if setting else None
    if len(test.ops) != 1:
        return None
    left, op, right = test.left, type(test.ops[0]), test.comparators[0]
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod) and op is ast.NotEq:
        value, divisor = left.left, left.right
        for side, other, relation in ((divisor, value, "divides"), (value, divisor, "multiple-of")):
            setting = _changeable(side, ctx, attrs)
            bound = _bound(other, ctx) if setting else None
            if setting and bound and "choices" not in bound:
                return setting, {"op": relation, **bound}
        return None
    if op in (ast.Is, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
        setting = _changeable(left, ctx, attrs)
        return (setting, {"op": "set" if op is ast.Is else "unset"}) if setting else None
    if op not in _PASSING:
        return None
    setting = _changeable(left, ctx, attrs)
    if setting is None and op in _MIRROR:
        left, right, op = right, left, _MIRROR[op]
        setting = _changeable(left, ctx, attrs)
    bound = _bound(right, ctx) if setting else None
    if setting is None or bound is None or ("choices" in bound) != (op in (ast.In, ast.NotIn)):
        return None
    return setting, {"op": _PASSING[op], **bound}


def passing(ctx: Context, condition: ast.expr | None, found: list[dict]) -> None:
    """Give each setting of `found` that a test of the condition bounds the value that would
    pass (its `passes`); the tests of an `and` are each enough to change."""
    attrs = ctx.attrs or Attrs(ctx.owner)
    tests = list(conjuncts(condition)) if condition else []
    # A guard whose other branch raises (`if x >= 0: ... else: raise`): its opposite leads
    # into that raise, so it passes nothing, and what else passes must keep it (`!= 0` -> `> 0`).
    into_raise = _into_raise(ctx)
    kept = [t for t in tests if _text(_truthy(t)) in into_raise]
    tests = [t for t in tests if _text(_truthy(t)) not in into_raise]
    results = [
        None if found_ and found_[0].kind == "request-field" and _reaches_in(t, tests) else found_
        for t in tests
        for found_ in [_passes(_truthy(t), ctx, attrs)]
    ]
    results = [_within(r, kept, ctx, attrs) if r else r for r in results]
    # A bound says more than presence: `x is not None and x not in (8, 16)` -> one of 8, 16.
    results.sort(key=lambda r: r is not None and r[1]["op"] in ("set", "unset"))
    for setting, passes in filter(None, results):
        for entry in found:
            if "passes" not in entry and setting.entry(entry["name"]) == entry:
                entry["passes"] = passes
                break

    # What the message's own words say passes (`--pp-size must be 1`, `Use --enable-lora`),
    # for a setting the condition gives no value of.
    # A test of presence alone (`if not use_fia:`: set it) gives way to the value the message
    # names (`ASCEND_USE_FIA=1`).
    def open_(entry: dict) -> bool:
        return "passes" not in entry or entry["passes"] == {"op": "set"}

    if not any(open_(entry) for entry in found) or not ctx.knowledge.settings_apply(ctx.path):
        return
    requests = said.requests_handled(ctx.kind, ctx.knowledge.stage(ctx.path, ctx.function))
    for hit in said.scan(ctx.message, ctx.knowledge, requests):
        value = said.message_passes(ctx.message, hit, ctx.knowledge)
        for entry in found:
            if value and open_(entry) and said.same(entry, hit.setting):
                entry["passes"] = value


def _into_raise(ctx: Context) -> set[str]:
    """The tests (as text) of the guards around the raise whose other branch raises: an `if`
    with an `else` that raises, an `else` (an `elif`) of an `if` whose body raises."""
    out: set[str] = set()
    for kind, node in ctx.guards:
        if kind == "if" and isinstance(node, ast.If) and _raises(node.orelse):
            out.add(_text(_truthy(node.test)))
        elif kind == "else" and isinstance(node, ast.If) and _raises(node.body):
            out.add(_text(negate(node.test)))
    return out


def _raises(block: list[ast.stmt]) -> bool:
    return any(isinstance(stmt, ast.Raise) for stmt in block)


# A value other than v that must also keep `x >= v` (or `x <= v`) true: the strict bound.
_STRICT = {"<": ">", ">": "<"}


def _within(
    result: tuple[Setting, dict], kept: list[ast.expr], ctx: Context, attrs: Attrs
) -> tuple[Setting, dict]:
    """A passing value narrowed by the guards it must keep true (their opposite raises):
    `x != 0` under `x >= 0` is `x > 0`."""
    setting, passes = result
    if passes.get("op") != "!=" or "value" not in passes:
        return result
    for test in kept:
        other = _passes(_truthy(test), ctx, attrs)  # the value that would raise instead
        same = other and other[0] == setting and other[1].get("value") == passes["value"]
        if same and other[1]["op"] in _STRICT:  # type: ignore[index]
            return setting, {**passes, "op": _STRICT[other[1]["op"]]}  # type: ignore[index]
    return result


def _reaches_in(test: ast.expr, tests: list[ast.expr]) -> bool:
    """Whether a test of presence (`x is not None`, `x`) only lets another test of the same
    `and` read inside its value (`x.stop`): the other test is what fails, so for a field of
    the request, leaving `x` out is no fix (an engine's `--kv-transfer-config` left unset
    still is one: the features are incompatible)."""
    inner = test.operand if isinstance(test, ast.UnaryOp) else test
    if isinstance(inner, ast.Compare) and isinstance(inner.ops[0], ast.Is | ast.IsNot):
        inner = inner.left
    if not isinstance(inner, ast.Name | ast.Attribute) or isinstance(test, ast.UnaryOp):
        return False
    prefix = _text(inner)
    return any(
        isinstance(node, ast.Attribute) and _text(node.value) == prefix
        for other in tests
        if other is not test
        for node in ast.walk(other)
    )


# Divisibility -------------------------------------------------------------------------


def conjuncts(test: ast.expr) -> Iterable[ast.expr]:
    """The tests that all hold when `test` does: itself, or the parts of an `and`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            yield from conjuncts(value)
    else:
        yield test


def divisibility(condition: ast.expr | None, ctx: Context) -> dict | None:
    """The value and divisor of the first `a % b != 0` (or `== 0` negated) test that holds
    whenever the error is raised, with the placeholders that print them, when there are any.
    A remainder test inside an `or` (`n > limit or n % b != 0`) may be false when it is
    raised, so it says nothing."""
    if condition is None:
        return None
    for node in conjuncts(condition):
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.NotEq | ast.Gt)
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Mod)
            and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value == 0
        ):
            value, divisor = node.left.left, node.left.right
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return None  # "%s" % x: a format, not a remainder
            out = {"value": _short(value), "divisor": _short(divisor)}
            for key, expr in (("value_param", value), ("divisor_param", divisor)):
                param = _param_of(expr, ctx)
                if param:
                    out[key] = param
            return out
    return None


_NAME = re.compile(r"[A-Za-z_][\w.]*")  # a setting or a quantity, not an expression of one


def divisor_calculator_shows(div: dict) -> bool:
    """Whether a page offers the divisor calculator for this divisibility test: only when
    value and divisor are both named quantities (the valid values of `2 * world_size` are not
    the divisors of the value)."""
    return all(_NAME.fullmatch(div[k]) for k in ("value", "divisor"))


def _param_of(expr: ast.AST, ctx: Context) -> str | None:
    """The placeholder that prints this expression, directly or through a local variable."""
    want = {ast.dump(expr)}
    if isinstance(expr, ast.Name) and (value := ctx.resolve(expr.id)) is not None:
        want.add(ast.dump(value))
    for name, hole in ctx.holes:
        if ast.dump(hole) in want:
            return name
        value = ctx.resolve(hole.id) if isinstance(hole, ast.Name) else None
        if value is not None and ast.dump(value) in want:
            return name
    return None


# Categories ---------------------------------------------------------------------------

_WORDS = {
    "missing-dependency": re.compile(
        r"\b(pip install|is not installed|not installed|please install|install(?:ed)? (?:it|the)"
        r"|requires? (?:the )?`?[\w.-]+`? (?:package|library|module)|no module named|"
        r"failed to import|could not import|cannot import|import error"
        # ("`prompt_logprobs` are not available when `stream=True`": a combination, below)
        # ("... is not available in encoder-only mode", "... in {timeout_s} seconds": a mode
        # or a wait, never a package)
        r"|(?:is|are) not available(?! (?:when|with|together|if|unless|while|in combination"
        r"|in [^.;]*?\b(?:mode|seconds|pipeline))\b)"
        r"|requires? (?:triton|cuda|flashinfer|deepgemm|deep_gemm)\b)\b",
        re.I,
    ),
    # ... and "not supported yet", "not yet supported", "not supported for now": the authors
    # mark a path not written yet (derived.CATEGORY_MEANS)
    "not-implemented": re.compile(
        r"\b(not (?:yet )?implemented|unimplemented|not yet support(?:ed)?"
        r"|not supported (?:yet|for now)"
        # "Currently assuming bias is 1D": the other case is not written
        r"|currently assum\w*"
        # "V2 offload does not support cpu_offload_gb yet"
        r"|(?:does not|doesn't|do not|don't) support\b[^.;]*?\byet)\b",
        re.I,
    ),
    "not-found": re.compile(
        r"\b(not found|does not exist|doesn't exist|no such file|cannot find|could not find"
        r"|couldn't find|missing file|not exist|no \w+(?: \w+)? found|failed to find|missing"
        r"|(?:could not|cannot|can't|couldn't|failed to|unable to) open"
        r"|not writable|not readable|permission denied|is a directory|is not a file"
        r"|no (?:usable |cached |prebuilt |valid )+(?:build|artifact|file|checkpoint)s?)\b",
        re.I,
    ),
    "divisibility": re.compile(r"\b(divisible|multiple of|evenly divide|divides)\b", re.I),
    "mismatch": re.compile(
        # (not a flag's last word: "--qsa-indexer-dtype fp8_e4m3 requires an SM90 GPU")
        r"\b((?<!-)shape|(?<!-)dtype|mismatch|mis-match|(?<!\{)mismatched|does not match"
        r"|doesn't match|do not match|don't match"
        r"|must match|same length"
        r"|same size|same number|expected type|must be an? (?:instance|list|dict|tuple|str"
        r"|string|int|integer|bool|float|tensor)|expect(?:s|ed)? .*\b(?:got|received)"
        r"|but only|rank-\d"
        r"|inconsistent|different|must have \d+ dim|out of sync|disagrees?|not equal|equality"
        r"|(?:invalid|bad|wrong|corrupt(?:ed)?) (?:[\w-]+ )?(?:digest|checksum|hash)"
        # the checkpoint lacks tensors the model class built from its config has
        r"|not (?:initialized|loaded) from (?:the )?checkpoint"
        # "matrices must be NVFP4 or BF16, got {other}": a dtype said, another found
        r"|must be (?:an? )?(?:(?:torch\.)?(?:bf16|fp16|fp32|fp8|nvfp4|mxfp4|bfloat16|float16"
        r"|float32|int8|int4|uint8|int32|int64)(?:_e4m3fn)?(?:,| or| and|/)? ?)+[^.;]*\bgot)\b",
        re.I,
    ),
    "unsupported-combination": re.compile(
        r"\b(not supported (?:with|when|for(?! now\b)|together|in combination|on|in|by)"
        r"|cannot be used with"
        r"|can't be used with|can only be used with|incompatible|not compatible|together with"
        r"|mutually exclusive|only supported (?:with|when|for|on)|is only supported|requires?"
        r"|only supports?|not available (?:for|with|when|on|in)(?! [^.;]*?\bseconds\b)"
        r"|(?:does not|doesn't) support `?--"
        # "The optimized moe_wna16_gemm kernel is only available on CUDA platforms"
        r"|(?:is|are) only available (?:for|with|when|on|in)"
        r"|(?:does not|doesn't) support\b"
        r"|must be (?:specified|used|set|given|provided|passed|enabled) (?:together )?with"
        r"(?! (?:\w+ )?(?:caution|care)\b)"
        r"|when using\b[^.;]*?,[^.;]*\b(?:must|should|needs? to|has to)"
        r"|(?:must|should|needs? to|has to|cannot|can't)\b[^.;]*\bwhen using)\b",
        re.I,
    ),
    "invalid-choice": re.compile(
        r"\b(unknown|unrecognized|unrecognised|invalid|must be one of|choose from|"
        r"supported (?:values|options|types|methods|backends) (?:are|is)|not a valid|"
        r"unsupported|not supported|expected one of|not valid|does not support"
        r"|removed (?:\w+ )?(?:argument|option|flag|parameter)s?|no longer (?:supported|accepted)"
        r"|(?:cannot|can't|must not) (?:have|contain) duplicate"
        r"|duplicate (?:values|entries|keys))\b",
        re.I,
    ),
    "limit": re.compile(
        r"\b(must be (?:positive|non-negative|greater|less|smaller|larger|at least|at most"
        r"|between|in \[|in the range|>|<)|exceeds?|too (?:large|small|long|many|few|big)"
        r"|out of range|larger than|greater than|smaller than|less than|at least|at most"
        r"|maximum|minimum|cannot exceed|not enough|insufficient|no available memory"
        r"|(?:must|should) be (?:a )?finite|not (?:a )?finite|out of memory)",
        re.I,
    ),
    # Something failed while it ran, not a check of values: a process exiting, a connection
    # or a peer failing, a wait timing out.
    # Settings that exclude each other: "exactly one of a, b or c must be given", "cannot
    # specify both 'a' and 'b'" (read before a test of lengths or membership says otherwise).
    "exclusive": re.compile(
        r"\b(exactly one of|only one of|at most one of|one and only one of|not both"
        r"|(?:cannot|can't|can ?not|must not|may not|should not) (?:\w+ )?(?:specify|set|use"
        r"|pass|provide|give|have|enable) both)\b",
        re.I,
    ),
    "runtime-failure": re.compile(
        r"\b(connectivity|connection (?:refused|failed|reset|closed|lost|error|timed out)"
        r"|(?:failed to|could not|cannot|can't|couldn't|unable to) connect"
        # (a peer unreachable, not the code's "should be unreachable", "unreachable code path")
        r"|(?<!should be )unreachable(?! (?:code|branch|path|state)\b)"
        r"|(?:process|server|worker|subprocess|scheduler|detokenizer) (?:has )?"
        r"(?:exited|died|crashed|terminated|was killed)|exited (?:unexpectedly|with (?:code"
        r"|status|exit code))|timed out|not available in [^.;]*?\bseconds"
        r"|(?:transfer|handshake|rpc)(?: \w+)? (?:failed|failures?)"
        # a background loop that died on an earlier error, met by each later request
        r"|(?:loop|engine|thread) has (?:already )?(?:errored|died|crashed)|errored already)\b",
        re.I,
    ),
}
_ORDER_EXCEPTIONS = {
    "ImportError": "missing-dependency",
    "ModuleNotFoundError": "missing-dependency",
    "NotImplementedError": "not-implemented",
    "FileNotFoundError": "not-found",
    "IsADirectoryError": "not-found",
    "NotADirectoryError": "not-found",
    "ConnectionError": "runtime-failure",
    "ConnectionRefusedError": "runtime-failure",
    "ConnectionResetError": "runtime-failure",
    "BrokenPipeError": "runtime-failure",
    "TimeoutError": "runtime-failure",
    "ChildProcessError": "runtime-failure",
}


def said_category(kind: str) -> Callable[[str, str], bool]:
    """Whether a message's words (or its exception's class) name this category."""
    words = _WORDS.get(kind)

    def said(message: str, exception: str) -> bool:
        by_class = _ORDER_EXCEPTIONS.get(exception) == kind
        return by_class or bool(words is not None and words.search(message))

    return said


def _compares(condition: ast.expr | None) -> set[type]:
    if condition is None:
        return set()
    return {type(op) for n in ast.walk(condition) if isinstance(n, ast.Compare) for op in n.ops}


def _calls(condition: ast.expr | None) -> set[str]:
    if condition is None:
        return set()
    return {
        (_chain(n.func) or ("",))[-1]
        for n in ast.walk(condition)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)
    }


_SHAPELY = frozenset({"shape", "ndim", "dtype", "size", "dim", "numel", "device"})
_SIZE_NAME = re.compile(r"_(size|bytes|numel|shape|ndim)$")


def _shape_test(test: ast.expr | None) -> bool:
    """Whether a test compares sizes, shapes, dtypes or lengths (`x.shape != y.shape`)."""
    for node in ast.walk(test) if test is not None else ():
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
        ):
            for side in (node.left, *node.comparators):
                chain = _chain(side.func if isinstance(side, ast.Call) else side) or ()
                last = chain[-1].rstrip("()") if chain else ""
                if last in _SHAPELY or (isinstance(side, ast.Call) and last == "len"):
                    return True
                sides = (node.left, *node.comparators)
                variables = not any(
                    isinstance(c, ast.Constant)
                    or (isinstance(c, ast.UnaryOp) and isinstance(c.operand, ast.Constant))
                    for c in sides
                )
                if variables and not isinstance(side, ast.Call) and _SIZE_NAME.search(last):
                    return True  # `previous_end != file_size`: two sizes disagree
    return False


_COUNT_NAME = re.compile(r"^(?:num|n)_\w+|_(?:count|len|length)$")


def _counts_differ(test: ast.expr | None) -> bool:
    """`num_actual_tokens != num_expected_tokens`: two counts, neither a literal, that
    disagree (every side a count by its name)."""
    for node in ast.walk(test) if test is not None else ():
        if not (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.NotEq)
        ):
            continue  # (`prompt_len == max_prompt_len`: a count at its bound, a limit)
        names = []
        for side in (node.left, node.comparators[0]):
            chain = _chain(side) or ()
            names.append(chain[-1] if chain and not isinstance(side, ast.Constant) else "")
        bound = any(re.search(r"(^|_)(max|min|limit)(_|$)", name) for name in names)
        if not bound and all(name and _COUNT_NAME.search(name) for name in names):
            return True
    return False


def _constant_compare(test: ast.expr | None) -> bool:
    """Whether a test compares something with == or != against a literal."""
    return any(
        isinstance(n, ast.Compare)
        and any(isinstance(op, ast.Eq | ast.NotEq) for op in n.ops)
        and any(isinstance(c, ast.Constant) for c in (n.left, *n.comparators))
        for n in (ast.walk(test) if test is not None else ())
    )


def _type_guards(test: ast.expr | None) -> bool:
    """Whether every isinstance test only guards what a conjunction tests next against a literal:
    `isinstance(part, dict) and part.get("type") == "input_image"` refuses a value, not a type."""
    typed = [
        n
        for n in (ast.walk(test) if test is not None else ())
        if isinstance(n, ast.Call) and (_chain(n.func) or ("",))[-1] in ("isinstance", "issubclass")
    ]
    guarding = {
        id(value)
        for n in (ast.walk(test) if test is not None else ())
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And)
        for value in n.values
    }
    negated = {  # `not (isinstance(x, T) and x.dim() == 2)`: the type is what fails
        id(n)
        for u in (ast.walk(test) if test is not None else ())
        if isinstance(u, ast.UnaryOp) and isinstance(u.op, ast.Not)
        for n in ast.walk(u.operand)
    }
    return (
        bool(typed)
        and all(id(n) in guarding and id(n) not in negated for n in typed)
        and _constant_compare(test)
        and not _shape_test(test)
    )


def _range_guarded(test: ast.expr | None) -> bool:
    """`not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536`: the
    type tests only make sure the value can be compared with the range's literal bounds, the
    check is of the range (a limit). Not where a type test is of another value, nor without
    a range compared with a literal."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return False
    typed: set[str] = set()
    ranged: set[str] = set()
    for value in test.values:
        inner = value.operand if isinstance(value, ast.UnaryOp) else value
        if isinstance(inner, ast.Call) and _chain(inner.func) == ("isinstance",) and inner.args:
            typed.add(_text(inner.args[0]))
            continue
        if not isinstance(inner, ast.Compare) or not all(
            isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in inner.ops
        ):
            return False
        sides = [inner.left, *inner.comparators]
        if not any(isinstance(side, ast.Constant) for side in sides):
            return False
        ranged.update(_text(side) for side in sides if not isinstance(side, ast.Constant))
    return bool(typed) and bool(ranged) and typed <= ranged


def _types_only(test: ast.expr | None) -> bool:
    """`not isinstance(a, float) or not isinstance(b, float)`: a test of values' types and
    nothing else (no class's choice, `issubclass`, nor a literal compared)."""
    if isinstance(test, ast.BoolOp):
        return all(_types_only(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _types_only(test.operand)
    return isinstance(test, ast.Call) and _chain(test.func) == ("isinstance",)


def _is_not(test: ast.expr) -> bool:
    """`not x`, `not self.x`: a test that a value was not given."""
    return (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Name | ast.Attribute)
    )


# A message asking for one of the values tested (`not a and not b`): "a or b must be provided".
_ASKED = re.compile(r"\b(must be (?:provided|given|specified|set)|(?:is|are) required)\b", re.I)
_REQUIRED_WITH = re.compile(r"\b(?:is|are) required (?:when|if|with)\b", re.I)
_REGISTERED = re.compile(r"\balready (?:been )?registered\b", re.I)
# "Duplicate layer name: {name}" raised when the name is already a key of a table the code
# fills itself (`name in self.config.static_forward_context`): registered twice.
_DUPLICATE_NAME = re.compile(r"\bduplicate (?:[\w-]+ )?(?:name|prefix|key)\b", re.I)
# What says a count's bottom was reached ("cannot be empty", "too short", "a size of 0"), not
# that something was not found or given ("No plugins installed", "no frames").
_EMPTY_SAID = re.compile(r"\b(empty|too short|(?:of|be|is|was) 0\b|zero)", re.I)
# A count or a length: `prompt_len`, `num_tokens`, `len(x)`, `x.numel()`, `tokens_count`.
_COUNTED = re.compile(r"(^|_)(len|length|num|count|size|numel|n)(_|$)|^num\w*|\w*_count$")
_DUPLICATES = re.compile(
    r"\b((?:cannot|can't|must not|may not) (?:have|contain) duplicate|duplicate (?:values|entries"
    r"|items))\b",
    re.I,
)


def _registry_test(test: ast.expr | None) -> bool:
    """`name in self.table` or `name in config.table`: a look-up in a table held by an object
    (the code's own registry), not in a literal list of choices."""
    return any(
        isinstance(n, ast.Compare)
        and len(n.ops) == 1
        and isinstance(n.ops[0], ast.In)
        and isinstance(n.comparators[0], ast.Attribute)
        for n in (ast.walk(test) if test is not None else ())
    )


def _zero_count(test: ast.expr | None) -> bool:
    """`prompt_len == 0`, `len(x) == 0`, `num_tokens == 0`: a count tested against nothing,
    the bottom of a range (a limit), not one of a set of values."""
    for n in ast.walk(test) if test is not None else ():
        if not (
            isinstance(n, ast.Compare)
            and len(n.ops) == 1
            and isinstance(n.ops[0], ast.Eq)
            and isinstance(n.comparators[0], ast.Constant)
            and type(n.comparators[0].value) is int
            and n.comparators[0].value == 0
        ):
            continue
        left = n.left
        if isinstance(left, ast.Call) and _text(left.func) in ("len", "numel"):
            return True
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute):
            left = left.func  # x.numel()
        name = left.attr if isinstance(left, ast.Attribute) else getattr(left, "id", "")
        if name and _COUNTED.search(name):
            return True
    return False


def _import_flags(module: ast.Module | None) -> frozenset[str]:
    """The module's names that say whether an import worked: set in a `try:` whose handler
    catches ImportError (`try: import tilelang; HAS_TILELANG = True` / `except ImportError:
    HAS_TILELANG = False`), or to `importlib.util.find_spec(...) is not None`."""
    names: set[str] = set()
    for stmt in module.body if module is not None else ():
        if isinstance(stmt, ast.Try) and any(
            h.type is not None
            and any(t in _text(h.type) for t in ("ImportError", "ModuleNotFoundError", "Exception"))
            for h in stmt.handlers
        ):
            tried = [*stmt.body, *(n for h in stmt.handlers for n in h.body), *stmt.orelse]
            imports = any(isinstance(n, ast.Import | ast.ImportFrom) for n in stmt.body)
            flags = [
                node
                for node in tried
                if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, bool)
            ]
            for node in flags if imports else ():
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.Assign) and "find_spec" in _calls(stmt.value):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _import_failed(test: ast.expr | None, ctx: "Context") -> bool:
    """`not HAS_TILELANG`, `HAS_X is False`: a test that a guarded import failed."""
    if test is None:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name = test.operand
    elif (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is | ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is False
    ):
        name = test.left
    else:
        return False
    return isinstance(name, ast.Name) and name.id in _import_flags(ctx.module)


def _asks_supported(test: ast.expr | None) -> bool:
    """`not is_supported`, `not backend_supports_x()`: a test of what is supported here."""
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return False
    inner = test.operand.func if isinstance(test.operand, ast.Call) else test.operand
    last = (_chain(inner) or ("",))[-1].rstrip("()")
    return bool(re.fullmatch(r"_?(?:is_\w*)?supported|_?\w*_supported|_?\w*supports?_\w+", last))


# "run the encode stage first", "call init_buffer() first": an order of the code's own calls.
_CALL_FIRST = re.compile(
    r"\b(?:call|run)\s+(?:the\s+)?[`']?[\w.]+(?:\(\))?[`']?(?:\s+stage)?\s+first\b"
    # "X requires start_prefetch() and finalize_prefetch()": calls of its own functions made
    # before (not "requires torch>=2.4" nor "requires --enable-x": a package, a setting)
    # (a module's function, "requires torch.mps.recommended_max_memory() from Torch >= 2.13",
    # is a dependency's)
    r"|\brequires?\s+(?:calling\s+)?[`']?[A-Za-z_]\w*\(\)",
    re.I,
)
# The status a call returned (`ret`, `rc`, `status`, `proc.returncode`, `exist_ret`) ...
_STATUS_NAME = re.compile(
    r"^(?:\w+_)?(?:ret|rc|retval|ret_?code|ret_value|status|status_code|returncode|result|err"
    r"|error|error_?code)$"
)


def _status_test(test: ast.expr | None) -> bool:
    """`ret != 0`, `status != CUresult.CUDA_SUCCESS`, `result.returncode != 0`, `not 200 <=
    response.status < 300`: the status an operation returned, tested against success."""
    for node in ast.walk(test) if test is not None else ():
        if not isinstance(node, ast.Compare) or any(
            isinstance(op, ast.In | ast.NotIn | ast.Is | ast.IsNot) for op in node.ops
        ):
            continue
        sides = [node.left, *node.comparators]
        named = [s for s in sides if _STATUS_NAME.match((_chain(s) or ("",))[-1])]
        others = [s for s in sides if not any(s is n for n in named)]
        success = all(
            (isinstance(s, ast.Constant) and type(s.value) is int)
            or re.search(r"(?:SUCCESS|_OK|^OK)$", (_chain(s) or ("",))[-1])
            for s in others
        )
        if named and others and success:
            return True
    return False


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_OUTSIDE = re.compile(r"\b(?:outside|out of (?:range|bounds))\b", re.I)
_FLAG_SAID = re.compile(r"(?<![\w-])--[a-z][\w-]*|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_INTERNAL = re.compile(r"\b(should (?:not|never) happen|unreachable|this is a bug)\b", re.I)
# What an assert's own words say it checks, a support matrix or a bound, whatever its test
# reads: "SM100 forward with head_dim=256 does not support learnable_sink", "start_layer
# should be greater than or equal to len(...)". The words, not the assert, name the kind.
_ASSERT_SAYS = re.compile(
    r"\b(?:(?:does not|doesn't|do not|don't) support|not supported (?:with|when|for|on|in|by)"
    r"|only supports?|is only supported|(?:greater|less|larger|smaller) than(?: or equal to)?"
    r"|at (?:least|most))\b",
    re.I,
)
_BOUND_SAID = re.compile(r"\bsupport\b[^.;]*?(?:[<>]=?\s*[\d{]|\d+\s*(?:[KMGT]i?B|bytes))", re.I)


def _user_settings_read(tests: list[ast.expr], found: list[dict]) -> set[str]:
    """The settings the user sets that the tests read (traced, not named by the message)."""
    read = {_short(node) for test in tests for node in ast.walk(test) if reads(node)}
    return {
        f["name"]
        for f in found
        if f.get("kind") in _USER_KINDS and not f.get("named") and f["name"] in read
    }


def _subset_test(test: ast.expr | None) -> bool:
    """`a <= b.keys()`, `set(a) >= {...}`: a comparison of sets, a test of membership."""
    for node in ast.walk(test) if test is not None else ():
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
        ):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Set | ast.SetComp):
                    return True
                name = (_chain(side.func) or ("",))[-1] if isinstance(side, ast.Call) else ""
                ranged = isinstance(side, ast.Call) and any(  # set(range(n)): a range
                    isinstance(a, ast.Call) and _chain(a.func) == ("range",) for a in side.args
                )
                if name in ("keys", "set", "frozenset") and not ranged:
                    return True
    return False


def _names_variable(found: list[dict]) -> bool:
    """Whether the message names an environment variable of the project's: an assert that
    speaks of a variable the user sets checks its value, not the code's own state."""
    return any(f.get("kind") == "env-var" and f.get("named") == "text" for f in found)


def _names_read_setting(text: str, tests: list[ast.expr], found: list[dict]) -> bool:
    """Whether an assert's test reads a setting the user sets (traced from the code) and its
    message names that setting by its own name ("Dummy run with {n} tokens exceeds
    max_num_batched_tokens ({m})" for `n > self.max_num_tokens`, the scheduler's
    max_num_batched_tokens): it checks the user's value, wherever it runs, not only the code's
    own state."""
    read = {_short(node) for test in tests for node in ast.walk(test) if reads(node)}
    words = _PLACEHOLDER.sub("{}", text)  # a placeholder prints the variable, names nothing
    for f in found:
        if f.get("kind") not in _USER_KINDS or f.get("named") or f["name"] not in read:
            continue
        names = {str(f.get("field", "")).rsplit(".", 1)[-1], str(f.get("env", ""))}
        names |= {str(f.get("flag", "")).lstrip("-").replace("-", "_")}
        if any(
            len(n) > 3 and "_" in n and re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", words)
            for n in names
        ):
            return True
    return False


# The kinds of setting a user sets: an assert that reads one, where the configuration is
# checked (not in code that runs later, whose asserts guard its own state), checks what the
# user asked for.
_USER_KINDS = frozenset({"engine-arg", "server-arg", "env-var", "request-field"})
_CONFIGURING = frozenset({"argument-parsing", "config-validation"})


def _reads_user_setting(tests: list[ast.expr], found: list[dict]) -> bool:
    """Whether the tests read a setting the user sets (one of `found` traced from the code,
    not only named by the message's words)."""
    read = {_short(node) for test in tests for node in ast.walk(test) if reads(node)}
    return any(
        f.get("kind") in _USER_KINDS and not f.get("named") and f["name"] in read for f in found
    )


# Exceptions an operation raises when it fails as it runs (not a check of values): an error
# log line in a handler of one of these, saying what failed, reports a runtime failure.
_BROAD = frozenset(
    {"Exception", "BaseException", "RuntimeError", "OSError", "IOError", "ConnectionError"}
    | {"TimeoutError", "socket.error", "zmq.ZMQError", "ZMQError"}
)
_FAILED = re.compile(r"\b(fail(?:ed|ure|s)?|errors?)\b", re.I)
# ... of what a process, a connection or a peer does (what the category's explanation says to
# look at), not a parser's or a loader's failure on a value (a tool call, a grammar, a file).
_TRANSPORT = re.compile(
    r"\b(send|sent|sender|recv|receiv\w*|notif\w*|publish\w*|transfers?|xfer|handshake"
    r"|connect\w*|peers?|heartbeat|sockets?|rpc|remote|worker|(?<!to )process|thread|actor"
    r"|subscri\w*|shards?|background|transport|prefetch\w*"
    r"|engine ?core|server)\b",
    re.I,
)
_ERROR_LEVELS = frozenset({"error", "exception", "critical"})
_QUIET_LEVELS = frozenset({"info", "debug"})  # lines that report, printed or not by default
# ... and a warning that something could not reach or hear a peer ("could not subscribe to the
# event channel of consumer shard {addr}; retrying"): it failed as it ran and was caught.
# ... and a line there that says an operation on a peer failed and what the code does instead
# ("FABRIC handle export failed on rank {rank}; falling back to POSIX fd transport"): it
# failed as it ran, whatever the level the authors print the fallback at.
_FELL_BACK = re.compile(r"\b(?:falling|fall|fell) back\b|\bretrying\b", re.I)
_COULD_NOT = re.compile(
    r"\b(?:could not|couldn't|unable to|cannot) (?:connect|reach|subscribe|contact|send|receive)"
    r"\w*\b",
    re.I,
)


def _failure_caught(ctx: Context) -> bool:
    """An error log line, in the handler of a failure caught (`except Exception:`), that says
    a process, a connection or a peer failed: "Failed to notify KV sender of abort"
    (derived.CATEGORY_MEANS); or a warning there that one could not be reached (_COULD_NOT)."""
    warned = ctx.level == "warning" and _COULD_NOT.search(ctx.message)
    warned = warned or (
        ctx.level in ("warning", "info")
        and _FAILED.search(ctx.message)
        and _FELL_BACK.search(ctx.message)
    )
    if not warned and (ctx.level not in _ERROR_LEVELS or not _FAILED.search(ctx.message)):
        return False
    if not _TRANSPORT.search(ctx.message):
        return False
    handler = next((node for kind, node in reversed(ctx.guards) if kind == "except"), None)
    if not isinstance(handler, ast.ExceptHandler):
        return False
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_text(t) in _BROAD for t in types)


# What an informational line names a value by, saying nothing disagrees: "feature shape:
# {shape}", "dtype={dtype}" (a warning "with dtype {a} into a parameter with dtype {b}" does).
_LOG_NOUNS = frozenset({"shape", "dtype"})
_LOOKUPS = frozenset({"get", "pop", "find", "lookup"})


def _log_says(words: re.Pattern, text: str, level: str) -> bool:
    """Whether a log line's words name a category: at info or debug, a noun a line reports a
    value by (a shape, a dtype) names none."""
    quiet = level in _QUIET_LEVELS
    return any(not (quiet and m.group(0).lower() in _LOG_NOUNS) for m in words.finditer(text))


def _says_none(ctx: Context, own: ast.expr | None) -> bool:
    """A line that says "no <name>" where its test finds a look-up's result missing
    (`session = self._sessions.get(peer)`, `if session is None`): the look-up missed."""
    name = emptied(own) if own is not None and is_none(own) else None
    value = ctx.resolve(name.id) if name is not None else None
    if name is None or not isinstance(value, ast.Call):
        return False
    if (_chain(value.func) or ("",))[-1] not in _LOOKUPS:
        return False
    words = name.id.replace("_", " ")
    return bool(re.search(rf"\bno (?:such )?{re.escape(words)}s?\b", ctx.message, re.I))


def category(
    ctx: Context, tests: list[ast.expr], div: dict | None, found: list[dict] | None = None
) -> str:
    """The kind of check: from the exception, the message's words, then the raise's own test
    (the innermost guard; the outer ones and early returns are context), in that order. An
    assert is an internal invariant unless its test reads a setting the user sets (`found`:
    the settings traced) in code that checks the configuration."""
    text = ctx.message
    own = _own(ctx) if tests else None
    caught = {
        _text(node.type)
        for kind, node in ctx.guards
        if kind == "except" and isinstance(node, ast.ExceptHandler) and node.type is not None
    }
    if ctx.exception in ("ImportError", "ModuleNotFoundError") or any(
        "ImportError" in c or "ModuleNotFoundError" in c for c in caught
    ):
        return "missing-dependency"
    if ctx.kind == "log":  # a log line's test says when it is printed; its words say what
        says = (cat for cat, words in _WORDS.items() if _log_says(words, text, ctx.level))
        said = next(says, None)
        if said == "limit" and ctx.level in _QUIET_LEVELS:
            said = None  # "because minimum available memory is {x} GiB": a state, reported
        if said is None and _says_none(ctx, own):  # "NO SESSION for peer" for `session is None`
            return "not-found"
        return said or ("runtime-failure" if _failure_caught(ctx) else "logged")
    if ctx.exception in _ORDER_EXCEPTIONS and ctx.exception != "NotImplementedError":
        return _ORDER_EXCEPTIONS[ctx.exception]
    if _WORDS["missing-dependency"].search(text) or _import_failed(own, ctx):
        return "missing-dependency"
    if div is not None or _WORDS["divisibility"].search(text):
        return "divisibility"
    if _WORDS["not-implemented"].search(text):
        return "not-implemented"
    if ctx.exception == "NotImplementedError":  # "A is not compatible with B" says more
        combination = _WORDS["unsupported-combination"].search(text)
        # ("X is not supported by Y", "Y does not support X": Y lacks X, not written yet)
        said = combination.group(0).lower() if combination else ""
        if combination and not (said.endswith(" by") or said.endswith("support")):
            return "unsupported-combination"
        return "not-implemented"
    configuring = ctx.knowledge.stage(ctx.path, ctx.function) in _CONFIGURING
    if ctx.exception == "AssertionError" and not (
        _ASSERT_SAYS.search(text)
        or (configuring and _reads_user_setting(tests, found or []))
        or _names_variable(found or [])
        or _names_read_setting(text, tests, found or [])
    ):
        return "invariant"
    if _REGISTERED.search(text):  # the same name registered twice: the code's own doing
        return "invariant"
    if _DUPLICATE_NAME.search(text) and _registry_test(own):
        return "invariant"
    if _DUPLICATES.search(text):  # a list of the user's with a value twice
        return "invalid-choice"
    if _WORDS["exclusive"].search(text):
        return "unsupported-combination"
    if _WORDS["runtime-failure"].search(text):
        return "runtime-failure"
    # "Mooncake EC push to {session} failed with status {ret}" for `ret != 0`: an operation
    # that failed as it ran and said so in its status, not a value outside a set
    if _FAILED.search(text) and _status_test(own):
        return "runtime-failure"
    if _CALL_FIRST.search(text):  # "cond-frame latent missing (run the encode stage first)"
        return "invariant"
    calls = _calls(own)
    if _WORDS["not-found"].search(text) or calls & {"exists", "isfile", "isdir", "is_file"}:
        return "not-found"
    if _WORDS["mismatch"].search(text) or _shape_test(own) or _counts_differ(own):
        return "mismatch"
    # "--weight-cache-master-port is required when the daemons span nodes": a flag left out
    # with another choice of the user's (not "vision_grid_thw is required when pixel_values
    # is provided", two things the code's own processor hands over)
    flagged = _FLAG_SAID.search(text) or _reads_user_setting(tests, found or [])
    if _REQUIRED_WITH.search(text) and flagged and not _INTERNAL.search(text):
        return "unsupported-combination"
    if said_so := _WORDS["unsupported-combination"].search(text):
        # "X only supports 'a' and 'b'" tested as membership: a value outside a list
        # ... and "method 'x' is not supported by this model", "X does not support 'y'",
        # tested the same way (or against a constant)
        said = said_so.group(0).lower()
        only = said.startswith("only support") or said.endswith(" by")
        membership = _compares(own) & {ast.In, ast.NotIn}
        # "Only support per-tensor scaling factor" tested as `not isinstance(k_scale, float)`:
        # the type of what was loaded is not the one the code takes
        if said.startswith("only support") and _types_only(own):
            return "mismatch"
        if said.endswith("support") and (membership or _constant_compare(own)):
            return "invalid-choice"
        # "doesn't support feature dim >= 64KB", tested as a range: a limit
        ranged = _compares(own) & {ast.Lt, ast.LtE, ast.Gt, ast.GtE}
        if said.endswith("support") and ranged and _BOUND_SAID.search(text):
            return "limit"
        return "invalid-choice" if only and membership else "unsupported-combination"
    if _range_guarded(own):  # "must be a valid port" for `not isinstance(p, int) or ...`
        return "limit"
    if (ctx.exception == "TypeError" and tests) or (
        calls & {"isinstance", "issubclass"} and not _type_guards(own)
    ):
        return "mismatch"
    compares = _compares(own)
    if calls & {"isfinite", "isnan", "isinf"}:  # NaN or infinity: outside every range
        return "limit"
    if compares & {ast.In, ast.NotIn} or _subset_test(own):
        return "invalid-choice"
    # A test of a range is a limit, even when the message calls the value invalid ("Invalid
    # h_bar: h_bar * w_bar must be >= min_pixels and <= max_pixels").
    if compares & {ast.Lt, ast.LtE, ast.Gt, ast.GtE}:
        return "limit"
    if _asks_supported(own):  # `not is_supported`: what this platform or kernel lacks
        return "unsupported-combination"
    if _status_failed(own):  # `result != 0` of a library's call: it failed as it ran
        return "runtime-failure"
    # (where the words say a value is outside a range, its placeholder's name is no word of
    # the message: "{side} block id {invalid} is outside [0, {n})" prints the id found outside
    # the range, it calls no choice invalid; "keys {unknown} are not allowed" does)
    if _WORDS["invalid-choice"].search(
        _PLACEHOLDER.sub("{}", text) if _OUTSIDE.search(text) else text
    ):
        return "invalid-choice"
    if _WORDS["limit"].search(text):
        return "limit"
    if _zero_count(own) and _EMPTY_SAID.search(text):  # "The prompt cannot be empty"
        return "limit"  # for `prompt_len == 0`: below 1
    if ctx.exception == "KeyError" or _constant_compare(own):
        return "invalid-choice"
    # `not a and not b` (in one test or nested) with "a or b must be provided": neither given
    unset = own.values if isinstance(own, ast.BoolOp) and isinstance(own.op, ast.And) else tests
    if len(unset) > 1 and all(_is_not(v) for v in unset) and _ASKED.search(text):
        return "not-found"
    if isinstance(own, ast.BoolOp) and isinstance(own.op, ast.And) and len(own.values) > 1:
        if all(is_none(v) for v in own.values):  # none of the ways to find it was given
            return "not-found"
        return "unsupported-combination"
    # `if not a: return` then `if b:`, the message naming a flag or a variable ("drop --b")
    two = len(_user_settings_read(tests, found or [])) > 1
    if two and _FLAG_SAID.search(text) and not _INTERNAL.search(text):
        return "unsupported-combination"
    return "invariant"


# The names a call's status code goes by (`result = lib.ncclX(...)`, a process's returncode).
_STATUS = re.compile(r"^_?(result|ret|rc|status|err|errno|ret_?code|return_?code|exit_?code)$")


def _status_failed(test: ast.expr | None) -> bool:
    """`result != 0`, `proc.returncode != 0`: a status code that is not success."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    right, left = test.comparators[0], test.left
    if not (isinstance(test.ops[0], ast.NotEq) and isinstance(right, ast.Constant)):
        return False
    name = left.id if isinstance(left, ast.Name) else getattr(left, "attr", "")
    return right.value == 0 and not isinstance(right.value, bool) and bool(_STATUS.match(name))


def restated(ctx: Context) -> tuple[ast.ExceptHandler, set[str]] | None:
    """When the raise restates an exception it caught (`except ValueError as e: raise
    RuntimeError(f"... {e}")`): the handler, and the names of the exceptions it catches."""
    handler = next((node for kind, node in reversed(ctx.guards) if kind == "except"), None)
    if not isinstance(handler, ast.ExceptHandler) or not handler.name or handler.type is None:
        return None
    printed = {n.id for _, hole in ctx.holes for n in ast.walk(hole) if isinstance(n, ast.Name)}
    if handler.name not in printed:
        return None
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    caught = {chain[-1] for t in types if (chain := _chain(t))}
    return handler, caught


def recategorize(ctx: Context, out: dict, cat: str) -> None:
    """Give a derived mapping another category, with the explanation and tries of it."""
    out["category"] = cat
    found = out.get("flags", [])
    # What is compared is the restated check's, which the message prints: no names of ours.
    out["explanation"], out["try"] = explain(cat, ctx, [], found, out.get("divisibility"))


# Explanations --------------------------------------------------------------------------


def _code(name: str) -> str:
    return f"`{name}`"


def _shown(value: object) -> str:
    """A value as the user would write it: `auto`, `8`, `true`."""
    if isinstance(value, bool):
        return _code(str(value).lower())
    return _code(str(value))


_OP_WORDS = {
    "<=": "at most {}",
    "<": "below {}",
    ">=": "at least {}",
    ">": "above {}",
    "==": "{}",
    "!=": "anything but {}",
    "in": "one of {}",
    "not in": "none of {}",
    "divides": "a divisor of {}",
    "multiple-of": "a multiple of {}",
}


def value_words(passes: dict) -> str:
    """The value that passes, in words: "at most `4096`", "a divisor of the
    `total_num_heads` in the message", "one of `auto`, `fp8`"."""
    if "value" in passes:
        bound = _shown(passes["value"])
    elif "param" in passes:
        bound = f"the `{passes['param']}` in the message"
    elif "choices" in passes:
        bound = ", ".join(_shown(c) for c in passes["choices"])
    else:
        bound = _code(passes["expr"])
    return _OP_WORDS[passes["op"]].format(bound)


def to_try(entry: dict) -> str | None:
    """What to try with one setting, said for its kind, with the value that passes; a request
    field is said to be one even when no value can be computed."""
    passes = entry.get("passes")
    what, kind = _code(handle(entry)), entry.get("kind", "")
    if not passes:
        if kind == "request-field":
            return f"{what} is a field of the request: the fix is in the request, not the launch."
        return None
    if entry.get("flag") and entry.get("key"):  # a key of an option's JSON object
        what = f"`{entry['key']}` in `{entry['flag']}`"
    if entry.get("command"):  # another program's option: the command that takes it
        what = f"{what} of `{entry['command']}`"
    op = passes["op"]
    if kind == "request-field":
        presence = {"set": f"give {what} (not empty, not false)", "unset": f"leave {what} out"}
        change = presence.get(op)
        change = change or f"set {what} to {value_words(passes)}"
        return f"In the request, {change}: the request is what fails, not the server's launch."
    where = "the environment variable " if kind == "env-var" else ""
    if op == "set":
        return f"Set {where}{what}."
    if op == "unset":
        return f"Leave {where}{what} unset."
    python = f" (in Python: `{entry['keyword']}`)" if entry.get("keyword") else ""
    return f"Set {where}{what} to {value_words(passes)}{python}."


def _fixed(found: list[dict]) -> list[str]:
    """What the model's config.json sets: said once, with what to change instead."""
    keys = [_code(f["key"]) for f in found if f.get("kind") == "model-config"]
    if not keys:
        return []
    others = [_code(handle(f)) for f in found if f.get("passes")]
    instead = (
        f"change {' or '.join(dict.fromkeys(others))} instead"
        if others
        else "change what the check compares it with where that is yours to set, or use "
        "another model"
    )
    what = " and ".join(dict.fromkeys(keys))
    return [f"{what} is the model's own, from its config.json, and cannot be changed: {instead}."]


def _setting_words(found: list[dict], names: Iterable[str]) -> str:
    """The settings behind these names, as `--a` or `--b`; "" when none are."""
    wanted = set(names)
    picked = [_code(handle(f)) for f in found if f["name"] in wanted or not wanted]
    return " or ".join(dict.fromkeys(picked))


def explain(
    cat: str, ctx: Context, names: list[str], found: list[dict], div: dict | None
) -> tuple[str, list[str]]:
    """Our short explanation of the category and the first things to try, names filled in."""
    function = ctx.function.rsplit(".", 1)[-1] or "this code"
    what = ", ".join(_code(n) for n in names[:4]) or "the values in the message"
    flag_text = _setting_words(found, [])
    computed = [line for line in map(to_try, found) if line] + _fixed(found)
    if cat == "divisibility" and div and div["divisor"].isdigit():
        a, b = _code(div["value"]), div["divisor"]
        return (
            f"{a} must be a multiple of {b} here, and it is not.",
            computed
            or [
                f"Use a value of {a} that is a multiple of {b}; the message shows the one used.",
                f"If {a} comes from the model's configuration, this model or its quantized "
                "variant is not supported on this path: try another backend or variant.",
            ],
        )
    if cat == "divisibility" and div:
        a, b = _code(div["value"]), _code(div["divisor"])
        setting = _setting_words(found, [div["divisor"], div.get("divisor_param", "")])
        text = (
            f"{a} must be an exact multiple of {b}, typically because {a} is split into {b} "
            "equal parts (one per GPU or group). Here the division leaves a remainder."
        )
        shows = ctx.knowledge.divisor_calculator and divisor_calculator_shows(div)
        if computed:
            tries = [f"The divisor calculator lists the divisors of {a}."] if shows else []
        else:
            listed = " (the divisor calculator lists them)" if shows else ""
            tries = [f"Choose a {b} that divides {a} exactly{listed}."]
        if setting and not computed:
            tries.append(f"{b} comes from {setting}: set it to one of those divisors.")
        if not any(f.get("kind") == "model-config" for f in found):
            tries.append(
                f"If {a} comes from the model's configuration, it cannot be changed: fit {b} to it."
            )
        return text, [*computed, *tries]
    texts = {
        "divisibility": (
            f"Two of the values ({what}) must divide evenly, and they do not.",
            ["Pick sizes that divide each other exactly; the message shows the values used."],
        ),
        "limit": (
            f"A value is outside the range this check allows: it compares {what} against a bound.",
            [
                "Compare the value in the message with the limit it names and bring it "
                "inside the range.",
                "If the limit follows from other settings (memory, model length, batch size), "
                "raising one of those can help as well.",
            ],
        ),
        "unsupported-combination": (
            f"Two features or settings that work on their own cannot be used together here "
            f"(the check looks at {what}).",
            [
                "Turn off one of the features named in the message, or change one of the "
                "settings it names.",
                "Check the release notes of a newer version: combinations are often added later.",
            ],
        ),
        "missing-dependency": (
            "An optional package this feature needs is not installed, or failed to import.",
            [
                "Install the package the message names, in the same environment, at a version "
                "this release supports.",
                "If it is installed, import it by hand in that environment to see why it fails "
                "(a CUDA or compiler mismatch is common).",
            ],
        ),
        "not-implemented": (
            f"This path exists but has no implementation for your case (in `{function}`): "
            "a model, layer or backend does not provide it.",
            [
                "Use a configuration the message says is supported, or another backend or model.",
                "Search the project's issues for the feature; it may come in a later release.",
            ],
        ),
        "invalid-choice": (
            f"A value is not one of the choices this code knows (it checks {what}).",
            [
                "Check the spelling and case of the value in the message.",
                "Use one of the values the message or the documentation lists; a plug-in may "
                "need to be installed to add a choice.",
            ],
        ),
        "mismatch": (
            f"Two things that must agree in shape, size or type do not ({what}).",
            [
                "Compare the values in the message: usually a model file, adapter or input "
                "does not belong with the rest.",
                "Make sure the checkpoint, its config and any adapters come from the same model.",
            ],
        ),
        "not-found": (
            "A file, model, or other resource the code looks for is not where it looks.",
            [
                "Check the path or name in the message, and that it is readable from where "
                "the program runs.",
                "For a model on a hub, check the name, the revision and your access token.",
            ],
        ),
        "runtime-failure": (
            f"Something failed while the program ran (in `{function}`): a process it depends "
            "on exited, or a connection or a peer failed. No value was checked here.",
            [
                "Read the lines before it, and the log of the process or service that failed: "
                "they say why (a crash, an out-of-memory kill, a refused or lost connection).",
                "Check that the addresses, ports and credentials the message names are "
                "reachable from this machine, then retry.",
            ],
        ),
        "invariant": (
            f"An internal consistency check failed in `{function}`: the code reached a state "
            "its authors did not expect.",
            [
                "Try the latest release: such checks often point at bugs that are fixed later.",
                "If it persists, report it with your full command and the traceback.",
            ],
        ),
    }
    text, tries = texts.get(cat, ("", []))
    if cat == "mismatch" and ctx.knowledge.stage(ctx.path, ctx.function) == "request-handling":
        # what disagrees is in the request (its fields, its inputs), not a checkpoint's files
        tries = [
            "Compare the request's values in the message with what it says is expected: "
            "their type, their shape, or the names they must match.",
            "Check the request against the API's schema for this release.",
        ]
    computed = [line for line in map(to_try, found) if line] + _fixed(found)
    if computed:
        tries = [*computed, *tries]
    elif flag_text and cat in ("limit", "unsupported-combination", "invalid-choice"):
        tries = [f"The settings involved: {flag_text}.", *tries]
    if ctx.kind == "log":
        return _logged(ctx, cat, text, tries, flag_text)
    if ctx.kind == "http":
        lead = "The server answers the request with this error and keeps running. "
        return lead + text, ["Fix the request (its parameters or their values).", *tries]
    return text, tries


# What a log line means depends on its level more than on its test.
_LOG_LEADS = {
    "info": "An informational line: the program logs it and goes on; nothing failed.",
    "warning": (
        "A warning: the program logs it and goes on, perhaps on a slower or fallback path, "
        "or without a setting you gave."
    ),
    "error": (
        "An error reported in the log, not raised here: the lines after it say whether the "
        "program recovered, retried or shut down."
    ),
}


def _logged(ctx: Context, cat: str, text: str, tries: list[str], flag_text: str):
    level = "error" if ctx.level in ("error", "critical", "exception") else ctx.level
    lead = _LOG_LEADS.get(level, _LOG_LEADS["info"])
    if cat == "logged":
        text, tries = "", [f"The settings involved: {flag_text}."] if flag_text else []
    if level == "error":
        tries = [*tries, "Read the log lines before it for the first failure: often the cause."]
    else:
        tries = ["If what it says is what you meant, nothing needs doing.", *tries[:2]]
    return f"{lead} {text}".strip(), tries


# Everything at once --------------------------------------------------------------------


# A message about the request at hand ("Watermarking is enabled for this request, but the engine
# has no watermark configuration"): the check runs while serving, whatever class holds it.
_THIS_REQUEST = re.compile(r"\b(?:this|the current) request\b", re.I)
_CAPTURING = frozenset({"is_current_stream_capturing", "is_capturing", "is_graph_capturing"})


def _capturing(tests: list[ast.expr]) -> bool:
    """Whether a raise is reached only while a CUDA graph is being captured: one of its tests
    (or a conjunct of one) is `torch.cuda.is_current_stream_capturing()`, not negated."""
    for test in tests:
        for part in conjuncts(test):
            if isinstance(part, ast.Call) and (_chain(part.func) or ("",))[-1] in _CAPTURING:
                return True
    return False


def derive(ctx: Context) -> dict:
    """The `derived` mapping of the record of this raise site (extract adds its `ref`)."""
    tests = _tests(ctx)
    condition = _combined(tests)
    out: dict = {}
    fallback = f"{ctx.exception} in {ctx.function or ctx.path}"
    out["title"] = template.title(ctx.message) or fallback
    names = quantities(condition)
    if condition is None:
        out["unconditional"] = True
    else:
        text = _text(condition)
        parts, printed = compares(ctx, condition)
        if len(text) <= MAX_CONDITION:
            out["condition"] = text
        else:
            summary = checked(_own(ctx), condition)
            out["quantities"] = summary[:8] or ["(see the source)"]
            if parts:
                out["compares"] = parts
        if printed:
            out["printed"] = printed
        spelled, lookups = collections(ctx, condition)
        if spelled:
            out["collections"] = spelled
        if lookups:
            out["lookups"] = lookups
    found = flags(ctx, condition)
    passing(ctx, condition, found)
    if found:
        out["flags"] = found
    stage = ctx.knowledge.stage(ctx.path, ctx.function)
    if stage == "config-validation" and _THIS_REQUEST.search(ctx.message):
        stage = "request-handling"  # a config's method the engine calls for each request
    if not stage and _capturing(tests):
        stage = "engine-startup"  # only while a CUDA graph is captured: at start-up
    if stage:
        out["stage"] = stage
    div = divisibility(condition, ctx)
    cat = category(ctx, tests, div, found)
    out["category"] = cat
    out["explanation"], out["try"] = explain(cat, ctx, names, found, div)
    if div:
        out["divisibility"] = div
    return out


def compares(ctx: Context, condition: ast.expr) -> tuple[list[str], dict[str, str]]:
    """Of the condition's `and` parts, the comparisons of a value the message prints (a side
    that is the expression a placeholder prints, or a name a placeholder is named after), as
    code; and each such expression printed under another name, with its placeholder
    (`capability < quant_config.get_min_capability()` with the message's `{min_capability}`).
    What the pages test on the user's values (api.case_tests)."""
    holes = {_text(expr): name for name, expr in ctx.holes if name}
    names = set(holes.values())
    for name, expr in ctx.holes:  # a local printed that holds what the condition compares
        value = ctx.resolve(expr.id) if name and isinstance(expr, ast.Name) else None
        if isinstance(value, ast.expr):
            holes.setdefault(_text(value), name)
    is_and = isinstance(condition, ast.BoolOp) and isinstance(condition.op, ast.And)
    kept: list[str] = []
    printed: dict[str, str] = {}
    # each comparison with the part it stands in (an alternative of `a or b` is one)
    pairs = [
        (part, one)
        for part in (condition.values if is_and else [condition])  # type: ignore[attr-defined]
        for one in (
            part.values if isinstance(part, ast.BoolOp) and isinstance(part.op, ast.Or) else [part]
        )
    ]
    for whole, part in pairs:
        if not isinstance(part, ast.Compare) or len(part.ops) != 1:
            continue
        if isinstance(part.ops[0], ast.Is | ast.IsNot):
            continue  # `x is not None`: no value to test
        left = part.left
        sides = [part.comparators[0]]
        sides += [left.left, left.right] if isinstance(left, ast.BinOp) else [left]
        hit = False
        for side in sides:
            text, chain = _text(side), _chain(side)
            last = chain[-1] if chain else ""
            same = _same_as(side, ctx)
            if (
                text not in holes
                and last not in names
                and same is not None
                and _text(same) in holes  # a local or property that holds a printed value
            ):
                printed[text] = holes[_text(same)]
                hit = True
                continue
            if text in holes and holes[text] != last:
                printed[text] = holes[text]
            hit = hit or text in holes or last in names
        if hit and _text(whole) not in kept:
            kept.append(_text(whole))
    return kept, printed


def _same_as(node: ast.AST, ctx: Context, depth: int = 0) -> ast.AST | None:
    """What a side of the condition holds where the code says it in one place: a local
    assigned once (`max_input_tokens = self.max_input_tokens`), a property or argument-less
    method of the enclosing class whose every return but `return None` returns the same
    expression (`return self.max_total_tokens`); followed on, at most three steps."""
    if depth > 3:
        return None
    found: ast.AST | None = None
    if isinstance(node, ast.Name):
        found = ctx.resolve(node.id)
    elif isinstance(node, ast.Attribute | ast.Call):
        target = node.func if isinstance(node, ast.Call) else node
        if isinstance(node, ast.Call) and (node.args or node.keywords):
            return None
        owner = ctx.owner
        if (
            owner is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            found = _returned(owner, target.attr, isinstance(node, ast.Call))
    if not isinstance(found, ast.expr):
        return None
    return _same_as(found, ctx, depth + 1) or found


def _returned(owner: ast.ClassDef, name: str, called: bool) -> ast.expr | None:
    """The one expression a method of the class returns (a property read, or a method
    called without arguments), `return None` aside; None when it returns others."""
    for stmt in owner.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name != name:
            continue
        is_property = any(
            isinstance(d, ast.Name) and d.id == "property" for d in stmt.decorator_list
        )
        if is_property == called or len(stmt.args.args) != 1:
            return None
        found = {
            _text(n.value): n.value
            for n in _own_nodes(stmt)
            if isinstance(n, ast.Return)
            and n.value is not None
            and not (isinstance(n.value, ast.Constant) and n.value.value is None)
        }
        return next(iter(found.values())) if len(found) == 1 else None
    return None


def _own_nodes(func: ast.FunctionDef) -> Iterable[ast.AST]:
    """The nodes of a function, its nested functions and classes left out."""
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


# Collections the code spells out ---------------------------------------------------------

MAX_ITEMS = 100  # a longer constant is not carried to the pages (their bytes)


def collections(ctx: Context, condition: ast.expr) -> tuple[dict[str, list], dict[str, dict]]:
    """Of the condition's `and` parts, what the pages need to test a printed value's
    membership where the code holds the collection in a name: `x not in SUPPORTED` (a
    constant of the module or class, a local assigned one, or what a function of the module
    or a method of the class returns as a literal), as {code: items}; and `not found` /
    `found is None` where `found = TABLE.get(key)` looks a key up in a constant dict whose
    values are all truthy (classes, functions): raised exactly when key is not among its
    keys, as {found: {"key": code, "in": items}}."""
    is_and = isinstance(condition, ast.BoolOp) and isinstance(condition.op, ast.And)
    spelled: dict[str, list] = {}
    lookups: dict[str, dict] = {}
    for part in condition.values if is_and else [condition]:  # type: ignore[attr-defined]
        if (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], ast.In | ast.NotIn)
            and isinstance(part.comparators[0], ast.Name | ast.Attribute | ast.Call)
        ):
            items = _items(_literal(part.comparators[0], ctx))
            if items:
                spelled[_text(part.comparators[0])] = items
            continue
        name = emptied(part)
        if name is None:
            continue
        value = ctx.resolve(name.id)
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Name | ast.Attribute)
        ):
            continue
        table = _literal(value.func.value, ctx)
        if isinstance(table, ast.Dict) and all(_truthy_value(v) for v in table.values):
            items = _items(table)
            if items:
                lookups[name.id] = {"key": _text(value.args[0]), "in": items}
    return spelled, lookups


def _truthy_value(node: ast.expr | None) -> bool:
    """A dict's value that is always true: a class or function by name, a lambda, a
    non-empty literal."""
    if isinstance(node, ast.Name | ast.Attribute | ast.Lambda):
        return not (isinstance(node, ast.Name) and node.id in ("None", "False"))
    return isinstance(node, ast.Constant) and bool(node.value)


def _items(node: ast.AST | None) -> list | None:
    """A literal collection's items (a dict's keys), constants alone; None for anything
    else or over MAX_ITEMS."""
    elts = (
        node.keys
        if isinstance(node, ast.Dict)
        else node.elts
        if isinstance(node, ast.List | ast.Tuple | ast.Set)
        else None
    )
    if not elts or len(elts) > MAX_ITEMS:
        return None
    out = []
    for e in elts:
        if not (isinstance(e, ast.Constant) and type(e.value) in (str, int, float)):
            return None
        out.append(e.value)
    return out


def _literal(node: ast.AST | None, ctx: Context, depth: int = 0) -> ast.AST | None:
    """The literal collection an expression holds: itself, a local or module constant
    assigned it once, a class attribute of the enclosing class (`self.TABLE`, `Cls.TABLE`),
    `.keys()` of one, or what a function of the module or a method of the class returns
    when its body is that return alone."""
    if node is None or depth > 3:
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return node
    changed = _changed(ctx.module) if ctx.module is not None else frozenset()
    if isinstance(node, ast.Name):
        if node.id in changed:
            return None  # filled or changed in place somewhere in the module
        return _literal(ctx.resolve(node.id), ctx, depth + 1)
    owner = ctx.owner
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        mine = node.value.id in ("self", "cls") or (
            owner is not None and node.value.id == owner.name
        )
        if not mine or "." + node.attr in changed:
            return None
        return _literal(_class_value(owner, node.attr), ctx, depth + 1)
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "keys":
        found = _literal(func.value, ctx, depth + 1)
        return found if isinstance(found, ast.Dict) else None
    body: list | None = None
    if isinstance(func, ast.Name) and ctx.module is not None:
        body = _def_body(ctx.module.body, func.id)
    elif (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and owner
        and func.value.id in ("self", "cls", owner.name)
    ):
        body = _def_body(owner.body, func.attr)
    if body and len(body) == 1 and isinstance(body[0], ast.Return):
        return _literal(body[0].value, ctx, depth + 1)
    return None


_CHANGES = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update"}
    | {"setdefault", "add", "discard", "popitem", "__setitem__", "__delitem__"}
)


@lru_cache(maxsize=4)
def _changed(module: ast.Module) -> frozenset[str]:
    """The names (`X`) and attributes (`.X`) the module changes in place anywhere: a
    method that fills or empties them, an item assigned or deleted, `+=`, `global X`. A
    collection so changed is not the literal it was assigned."""
    found: set[str] = set()

    def name(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        return "." + node.attr if isinstance(node, ast.Attribute) else None

    for node in ast.walk(module):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value if node.func.attr in _CHANGES else None
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            target = node.value
        elif isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Global):
            found.update(node.names)
        changed = name(target) if target is not None else None
        if changed:
            found.add(changed)
    return frozenset(found)


def _class_value(owner: ast.ClassDef | None, name: str) -> ast.AST | None:
    """A class attribute assigned once in the class body."""
    found = [
        stmt.value
        for stmt in (owner.body if owner else [])
        if isinstance(stmt, ast.Assign | ast.AnnAssign)
        and stmt.value is not None
        and any(
            isinstance(t, ast.Name) and t.id == name
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        )
    ]
    return found[0] if len(found) == 1 else None


def _def_body(statements: list, name: str) -> list | None:
    """The body of the function of that name among these statements, its docstring left
    out; None when there is none or more than one."""
    found = [
        s
        for s in statements
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name
    ]
    if len(found) != 1:
        return None
    body = found[0].body
    doc = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return body[1:] if doc else body


# Stages from the call graph ------------------------------------------------------------

MAX_CALLERS = 30  # a name called from more places is too common to say where it runs
MAX_DEPTH = 3  # calls followed up from a site towards code whose stage is known
VALIDATOR = re.compile(r"^_?(validate|check|verify)_\w+$")
UNDATED = ""  # what code no stage applies to reaches: a stage of its own that is none


def stages_from_callers(
    sites: Iterable, calls: dict[tuple[str, str], set[str]], knowledge: Knowledge
) -> None:
    """Give a site whose module says nothing of its stage the stage of the code that runs it:
    follow its callers up (at most MAX_DEPTH calls) to functions whose stage the wing knows
    (an argument parser, a config's validation, a model's loader, start-up, the serving loop, a
    kernel's choice). When every such function reached is of one stage, the site is of that
    stage; when they disagree (a helper called both while the engine starts and per request),
    the site gets none: a stage left out is better than a guess. `calls`: (path, function) ->
    the names it calls; a function is called by its last name, a constructor by its class."""
    callers: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for place, names in calls.items():
        for name in names:
            callers[name].append(place)
    memo: dict[tuple[str, str, int], frozenset[str]] = {}

    def reached(path: str, function: str, depth: int) -> frozenset[str]:
        """The stages of the dated code that runs this function, up to `depth` calls away."""
        key = (path, function, depth)
        if key not in memo:
            memo[key] = frozenset()  # a recursion in the graph ends here
            known = knowledge.stage(path, function)
            if knowledge.undated(path, function):
                # A separate program's code dates nothing of the server's; the shutdown's does:
                # what it calls may run then, so it disagrees with every stage (UNDATED).
                shutdown = knowledge.shutdown(path, function)
                memo[key] = frozenset({UNDATED}) if shutdown else frozenset()
            elif known and depth < MAX_DEPTH and knowledge.dispatches(path, function):
                memo[key] = frozenset()  # a caller that runs everything dates nothing
            elif known and (instead := knowledge.by_default(path, function)):
                # A module's default: callers all of a stage it may give way to say better.
                up = _callers(path, function, depth, strict=True)
                if up == {"engine-startup", "kernel-selection"} and up <= instead:
                    # (a layer's op called from its forward and from a platform's path, a
                    # kernel's choice: the start-up's forward pass meets it first)
                    up = frozenset({"engine-startup"})
                memo[key] = up if len(up) == 1 and up <= instead else frozenset({known})
            else:
                memo[key] = frozenset({known}) if known else _callers(path, function, depth)
        return memo[key]

    def _callers(path: str, function: str, depth: int, strict: bool = False) -> frozenset[str]:
        parts = function.split(".")
        name = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        if name.startswith("__") and name.endswith("__"):
            return frozenset()  # `x[i] = v` runs __setitem__: no call names it
        found = callers.get(name, [])
        if name.startswith("_") and not name.startswith("__"):
            # A private name is its module's own: where the module calls it, only those
            # calls are its (another module's `_compare` is another function).
            # (strict: only those, when a module's default is to give way to them)
            found = [place for place in found if place[0] == path] or ([] if strict else found)
        if depth == 0 or not found or len(found) > MAX_CALLERS:
            return frozenset()
        return frozenset().union(*(reached(path, caller, depth - 1) for path, caller in found))

    def stage_of(path: str, function: str) -> str | None:
        stages = reached(path, function, MAX_DEPTH)
        return next(iter(stages)) if len(stages) == 1 and UNDATED not in stages else None

    for site in sites:
        if site.derived is not None and knowledge.undated(site.path, site.function):
            site.derived.pop("stage", None)
        elif site.derived is not None and (
            "stage" not in site.derived or knowledge.by_default(site.path, site.function)
        ):
            stage = stage_of(site.path, site.function)
            if stage:
                site.derived["stage"] = stage
        elif site.derived is not None and site.derived["stage"] == "request-handling":
            # A validator in a module that serves requests, called only from start-up code
            # (a parser's check of the tokenizer, called while the server is built), runs
            # at start-up.
            name = site.function.rsplit(".", 1)[-1]
            found = callers.get(name, [])
            stages = {knowledge.stage(path, caller) for path, caller in found}
            if (
                VALIDATOR.search(name)
                and 0 < len(found) <= MAX_CALLERS
                and stages == {"engine-startup"}
            ):
                site.derived["stage"] = "engine-startup"

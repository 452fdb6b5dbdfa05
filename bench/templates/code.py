"""The template bench against the code itself (issue 42, item 6): for a random sample of raise
sites of each engine (300 each, vLLM 0.33.0 and SGLang 0.5.23 from the pinned wheels), what the
code prints, computed from its own message expression with stand-in values, against the
template `errorkb extract` reads at that line and the template of the record that cites it.

    python bench/templates/code.py [--per 300] [--seed code-check] [-v]

What the code prints is computed, never run: the raise's message expression is read from the
syntax tree and folded by a small interpreter of string expressions alone (literals, f-strings,
implicit and `+` concatenation, `%` and `.format()` formatting, `"sep".join([...])` of literal
items, `a if c else b`, a local variable or module constant assigned the message before the
raise, across branches). Anything else (a name it cannot follow, an attribute, a call) is a
stand-in value, which prints as a unique mark whatever the format spec or conversion asks
(`{x:.2f}`, `%5d`, `{x!r}`): a template's hole. Nothing of the scanned code is executed.

A multi-argument exception prints its arguments as a tuple, as Python does; each message the
raise can print (one per branch or conditional) is a template with a hole per stand-in. That
set is compared with the extractor's templates at the site, the way records match
(`extract.match_key`: hole names and runs of white space do not count, quotes hugging a hole
belong to it): whole and correct when the two sets are equal and no template is marked cut.
The failures are classed: missed (the code prints text, no template), cut (a template stops
where the code's message goes on), a hole for text or text for a hole, other text, extra (a
template where the code prints only run-time values), and sites whose message this bench cannot
compute (keyword arguments of a custom exception, a star argument).

The records' side: the record whose source (or one of its sites) is that line, its message
compared the same way.

Measured (seed "code-check", 300 sites each; about five minutes): vLLM 0.33.0, 285 of 300
whole and correct (95.0%); SGLang 0.5.23, 293 of the 298 it computes (98.3%; 2 not computable:
a class built from keyword arguments, an expression nested too deeply). The failures, each
explained: VLLMValidationError's `__str__` appends "(parameter=..., value=...)" (8 sites, all
marked cut, as they should be); Starlette's HTTPException prints "400: detail" where the bench
takes a tuple (1; the extractor reads the detail, right); a module constant printed as a hole
(5: "The max size is 128", "only 232448 B available", "1 to 10 reference images",
backbone_type='cosmos3_multiview'); a text chosen among literals read as one hole (4: "for
AR"/"for RS", a core's name, " since {reason}" or nothing, ", failed frontend proc(s): {}" or
nothing); a conditional expression whose literal branch is missed (1: `str(e) if e else "a
Ulysses peer is unsupported"`); a project class of its own `__init__` given two arguments (1);
and one where the extractor reads further than the bench (m2n_common.py:797, its message built
across branches). Records citing a sampled site: vLLM 285 of 305 carry a message the code
prints, SGLang 290 of 295 (the rest: the same sites, and a helper's raise whose prefix its
callers pass).
"""

import argparse
import ast
import json
import random
import re
import string
import sys
from collections import Counter
from itertools import product
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import PINNED, project_tree, raises  # noqa: E402
from errorkb.sources import extract as ex  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
MAX_ALTERNATIVES = 16  # messages one expression may print, at most (branches multiply)


class Unknown(Exception):
    """The message cannot be computed from the code alone."""


class Stub:
    """A stand-in value: prints as a unique mark, whatever the spec or conversion."""

    count = 0

    def __init__(self) -> None:
        Stub.count += 1
        self.mark = f"\u27e6{Stub.count}\u27e7"

    def __str__(self) -> str:
        return self.mark

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return self.mark

    def __getattr__(self, name: str) -> "Stub":
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()

    def __getitem__(self, key) -> "Stub":
        return Stub()


def text(value) -> str:
    return value.mark if isinstance(value, Stub) else str(value)


class Formatter(string.Formatter):
    """str.format with stand-ins for what the code passes (or a mapping it unpacks)."""

    def get_value(self, key, args, kwargs):
        if isinstance(key, int):
            return args[key] if key < len(args) else Stub()
        return kwargs.get(key, Stub())

    def convert_field(self, value, conversion):
        if isinstance(value, Stub) or conversion is None:
            return value
        return {"r": repr, "s": str, "a": ascii}[conversion](value)

    def format_field(self, value, format_spec):
        if isinstance(value, Stub) or "\u27e6" in format_spec:
            return text(value)
        return format(value, format_spec)


PERCENT = re.compile(
    r"%(\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])"
)


class StubMap(dict):
    def __missing__(self, key):
        return Stub()


def percent(fmt: str, rhs):
    """fmt % rhs, each conversion as %s (a stand-in prints its mark)."""

    def plain(m: re.Match) -> str:
        if m[2] == "%":
            return "%%"
        if m[2] in "rsa" and not isinstance(rhs, Stub):
            return m[0]
        return f"%{m[1] or ''}s"

    shape = PERCENT.sub(plain, fmt)
    if isinstance(rhs, Stub):
        holes = len([m for m in PERCENT.finditer(fmt) if m[2] != "%"])
        named = any(m[1] for m in PERCENT.finditer(fmt))
        rhs = StubMap() if named else tuple(Stub() for _ in range(holes))
        if holes == 1 and not named:
            rhs = rhs[0]
    try:
        return shape % rhs
    except (TypeError, ValueError, KeyError) as exc:
        raise Unknown(f"% formatting: {exc}") from exc


class Interpreter:
    """Folds a message expression of one raise into the messages it can print."""

    def __init__(self, module: ast.Module, parents: dict, raise_node: ast.Raise):
        self.module = module
        self.parents = parents
        self.site = raise_node
        self.depth = 0

    def alternatives(self, node: ast.AST) -> list:
        self.depth += 1
        try:
            if self.depth > 40:
                raise Unknown("nested too deeply")
            out = self.values(node)
        finally:
            self.depth -= 1
        # (one alternative per distinct text, at most so many)
        seen, kept = set(), []
        for v in out:
            key = text(v) if not isinstance(v, Stub) else "\u27e6stub\u27e7"
            if key not in seen:
                seen.add(key)
                kept.append(v)
        return kept[:MAX_ALTERNATIVES]

    def values(self, node: ast.AST) -> list:
        if isinstance(node, ast.Constant):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            pieces = [self.formatted(v) for v in node.values]
            return ["".join(combo) for combo in product(*pieces)]
        if isinstance(node, ast.BinOp):
            left, right = self.alternatives(node.left), self.alternatives(node.right)
            return [self.binop(node.op, a, b) for a, b in product(left, right)]
        if isinstance(node, ast.IfExp):
            return self.alternatives(node.body) + self.alternatives(node.orelse)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        return [Stub()]

    def formatted(self, node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant):
            return [str(node.value)]
        assert isinstance(node, ast.FormattedValue)
        specs = [""]
        if node.format_spec is not None:
            specs = [text(s) for s in self.alternatives(node.format_spec)]
        out = []
        for value in self.alternatives(node.value):
            if isinstance(value, Stub):
                out.append(value.mark)
                continue
            conv = {ord("r"): repr, ord("s"): str, ord("a"): ascii}.get(node.conversion)
            value = conv(value) if conv else value
            for spec in specs:
                if "\u27e6" in spec:
                    out.append(Stub().mark)
                    continue
                try:
                    out.append(format(value, spec))
                except (TypeError, ValueError):
                    out.append(Stub().mark)
        return out

    def binop(self, op: ast.operator, a, b):
        if isinstance(op, ast.Add):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return a + b
            if isinstance(a, str) or isinstance(b, str):
                return text(a) + text(b)
            return Stub()
        if isinstance(op, ast.Mod) and isinstance(a, str):
            return percent(a, b)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            try:
                if isinstance(op, ast.Mult):
                    return a * b
                if isinstance(op, ast.Sub):
                    return a - b
                if isinstance(op, ast.Pow) and abs(b) < 64:
                    return a**b
                if isinstance(op, ast.FloorDiv):
                    return a // b
            except (ArithmeticError, ValueError):
                return Stub()
        if isinstance(op, ast.Mult) and isinstance(a, str) and isinstance(b, int) and b < 200:
            return a * b
        return Stub()

    def call(self, node: ast.Call) -> list:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format", "join"):
            receivers = self.alternatives(func.value)
            if all(isinstance(r, str) for r in receivers):
                if func.attr == "format":
                    return self.format_call(receivers, node)
                return self.join_call(receivers, node)
        if isinstance(func, ast.Name) and func.id == "str" and len(node.args) == 1:
            return [
                v if isinstance(v, (str, Stub)) else str(v) for v in self.alternatives(node.args[0])
            ]
        return [Stub()]

    def format_call(self, receivers: list[str], node: ast.Call) -> list:
        if any(isinstance(a, ast.Starred) for a in node.args):
            args_alts = [[Stub() for _ in range(20)]]
        else:
            args_alts = [list(c) for c in product(*[self.alternatives(a) for a in node.args])]
        kwargs = StubMap()
        for kw in node.keywords:
            if kw.arg is not None:
                found = self.alternatives(kw.value)
                kwargs[kw.arg] = found[0] if len(found) == 1 else Stub()
        out = []
        for fmt, args in product(receivers, args_alts):
            try:
                out.append(Formatter().vformat(fmt, args, kwargs))
            except (ValueError, IndexError, KeyError, AttributeError, TypeError) as exc:
                raise Unknown(f".format: {exc}") from exc
        return out

    def join_call(self, receivers: list[str], node: ast.Call) -> list:
        if len(node.args) != 1 or not isinstance(node.args[0], (ast.List, ast.Tuple)):
            return [Stub()]
        items = node.args[0].elts
        if any(isinstance(e, ast.Starred) for e in items):
            return [Stub()]
        alts = [self.alternatives(e) for e in items]
        return [sep.join(text(v) for v in combo) for sep in receivers for combo in product(*alts)]

    # --- a name: the message assigned before the raise, or a module's constant ----------

    def name(self, node: ast.Name) -> list:
        scope = self.enclosing(self.site)
        found = self.assigned(scope, node.id) if scope is not None else None
        if found is not None:
            # A local that holds a message (text in every branch); one that holds a number,
            # None or a run-time value in some branch is a value (a count set to 0, then
            # counted)
            return found if all(isinstance(v, str) for v in found) else [Stub()]
        found = self.module_constant(node.id)
        return found if found is not None else [Stub()]

    def enclosing(self, node: ast.AST):
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None

    def chain(self, node: ast.AST) -> list:
        """The statement lists (with which branch) that hold this node, outermost first."""
        out = []
        while node in self.parents:
            parent = self.parents[node]
            for fld in ("body", "orelse", "finalbody", "handlers"):
                if node in getattr(parent, fld, []) or []:
                    out.append((id(parent), fld))
            node = parent
        return out[::-1]

    def assigned(self, scope: ast.AST, name: str) -> list | None:
        """The messages a local variable holds at the raise: each assignment before it, in
        source order; one on the raise's own path replaces the others, one in a branch
        beside it is one more alternative; `+=` adds to each."""
        site_line = self.site.lineno
        site_chain = self.chain(self.site)
        statements = []
        for stmt in ast.walk(scope):
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                named = any(isinstance(t, ast.Name) and t.id == name for t in targets)
                if named and stmt.lineno < site_line and stmt.value is not None:
                    statements.append(stmt)
        if not statements:
            return None
        statements.sort(key=lambda s: (s.lineno, s.col_offset))
        current: list = []
        for stmt in statements:
            chain = self.chain(stmt)
            on_path = chain == site_chain[: len(chain)]
            values = self.alternatives(stmt.value)
            if isinstance(stmt, ast.AugAssign):
                grown = [self.binop(stmt.op, a, b) for a, b in product(current or [""], values)]
                current = grown if on_path else current + grown
            else:
                current = values if on_path else current + values
            current = current[:MAX_ALTERNATIVES]
        return current

    def module_constant(self, name: str) -> list | None:
        for stmt in self.module.body:
            named = isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            )
            if named and isinstance(stmt.value, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                return self.alternatives(stmt.value)
        return None


def exception_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def printed(module: ast.Module, parents: dict, node: ast.Raise) -> list[str]:
    """The templates of the messages this raise can print (a hole per stand-in)."""
    call = node.exc
    assert isinstance(call, ast.Call)
    if not call.args:
        raise Unknown("keyword arguments only (the class builds its message)")
    if any(isinstance(a, ast.Starred) for a in call.args):
        raise Unknown("a star argument")
    interp = Interpreter(module, parents, node)
    alts = [interp.alternatives(a) for a in call.args]
    out = []
    for combo in product(*alts):
        if len(combo) == 1:
            message = text(combo[0])
        else:  # str() of an exception of several arguments: their tuple's repr
            message = (
                "(" + ", ".join(v.mark if isinstance(v, Stub) else repr(v) for v in combo) + ")"
            )
        out.append(as_template(message))
        if len(out) >= MAX_ALTERNATIVES:
            break
    return out


def as_template(message: str) -> str:
    body = message.replace("{", "{{").replace("}", "}}")
    return re.sub("\u27e6(\\d+)\u27e7", lambda m: "{v" + m[1] + "}", body)


def own_text(tmpl: str) -> bool:
    """Whether a template has text of its own (not only holes, None and punctuation)."""
    return bool(re.search(r"[A-Za-z]{2}", re.sub(r"\{v\d+\}|\bNone\b", "", tmpl)))


def parent_map(tree: ast.AST) -> dict:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def custom_classes(files: list[tuple[str, bytes]]) -> set[str]:
    """Exception classes of the project that define their own __str__ or __init__."""
    out = set()
    for _, data in files:
        if b"class " not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                if names & {"__str__", "__init__", "__repr__"}:
                    out.add(node.name)
    return out


SOURCE = re.compile(
    r"^(?:source:\n  path: (\S+)\n  line: (\d+)|    - path: (\S+)\n      line: (\d+))", re.M
)


def records_by_line(project: str) -> dict[tuple[str, int], list[Path]]:
    out: dict[tuple[str, int], list[Path]] = {}
    for path in (ROOT / "content" / "errors" / project).glob("*.yaml"):
        body = path.read_text(encoding="utf-8")
        for m in SOURCE.finditer(body):
            where = (m[1] or m[3], int(m[2] or m[4]))
            out.setdefault(where, []).append(path)
    return out


def spans(general: str, specific: str) -> bool:
    """Whether a template with holes prints the other (its holes taking any text, one of the
    other's holes among it)."""
    parts = [re.escape(p) for p in general.split(ex._HOLE)]
    return re.fullmatch("(?:.*?)".join(parts), specific, re.S) is not None


def classify(want: set, got: set, cut: bool) -> str:
    if got == want and not cut:
        return "whole and correct"
    if not want:
        return "extra: a template where the code prints only run-time values"
    if not got:
        return "missed: no template, the code prints text"
    if cut:
        return "marked cut: the code's message goes on in a way the template cannot show"
    if any(w.startswith(g) and w != g for g in got for w in want):
        return "cut: the template stops where the code's message goes on"
    if all(any(spans(g, w) for g in got) for w in want):
        return "a hole where the code prints a constant or a text it chooses"
    if all(any(spans(w, g) for w in want) for g in got):
        return "text where the bench sees a value (the extractor follows a name further)"
    if got & want:
        return "some: of several messages, some read, some not or others"
    return "other text"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per", type=int, default=300)
    parser.add_argument("--seed", default="code-check")
    parser.add_argument("-v", action="store_true", help="show each failure")
    args = parser.parse_args()
    for project in PINNED:
        files = project_tree(project).files
        customs = custom_classes(files)
        by_line = records_by_line(project)
        found = []
        data_of = {}
        for path, data in files:
            lines = [node.lineno for node in raises(data)]
            if lines:
                data_of[path] = data
                found += [(path, n) for n in lines]
        found.sort()
        picked = sorted(random.Random(f"{args.seed}:{project}").sample(found, args.per))
        tally: Counter = Counter()
        records: Counter = Counter()
        failures = []
        for path in sorted({p for p, _ in picked}):
            data = data_of[path]
            tree = ast.parse(data)
            parents = parent_map(tree)
            nodes = {  # the raise statements of this tree (parents maps its nodes)
                n.lineno: n
                for n in ast.walk(tree)
                if isinstance(n, ast.Raise)
                and isinstance(n.exc, ast.Call)
                and (n.exc.args or n.exc.keywords)
            }
            scan = ex.scan_file(path, data, asserts=False)
            sites: dict[int, list] = {}
            for site in scan.sites:
                if site.kind == "raise":
                    sites.setdefault(site.line, []).append(site)
            for line in [n for p, n in picked if p == path]:
                node = nodes[line]
                name = exception_name(node.exc)
                tally["sites"] += 1
                try:
                    templates = printed(tree, parents, node)
                except Unknown as why:
                    tally[f"not computable: {str(why).split(':')[0]}"] += 1
                    continue
                want = {ex.match_key(name, t)[1] for t in templates if own_text(t)}
                got_sites = sites.get(line, [])
                got = {s.key[1] for s in got_sites}
                cut = any(s.cut for s in got_sites)
                verdict = classify(want, got, cut)
                if name in customs and verdict != "whole and correct":
                    verdict += " (a class of the project's own with __init__/__str__)"
                tally["computed"] += 1
                tally["with text in the code"] += bool(want)
                tally[verdict] += 1
                if verdict != "whole and correct":
                    failures.append((path, line, name, verdict, sorted(want), sorted(got)))
                # The record that cites this line: its message against the code's
                for rec_path in by_line.get((path, line), []) if want else []:
                    rec = yaml.safe_load(rec_path.read_text(encoding="utf-8"))
                    if rec.get("status") == "removed":
                        continue
                    key = ex.match_key(rec.get("exception", ""), rec.get("message", ""))[1]
                    records["records citing a sampled site"] += 1
                    good = key in want and not rec.get("message_cut")
                    records["their message is one the code prints"] += good
                    if not good and args.v:
                        print(
                            f"  record {rec_path.stem} at {path}:{line}: {key!r} / {sorted(want)}"
                        )
        print(f"\n{project} ({PINNED[project]}): {args.per} raise sites sampled")
        for key, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {key}: {n}")
        share = tally["whole and correct"] / max(tally["computed"], 1)
        print(f"  whole and correct, of the sites computed: {share:.1%}")
        for key, n in records.items():
            print(f"  {key}: {n}")
        if args.v:
            for path, line, name, verdict, want, got in failures:
                print(f"- {path}:{line} {name}: {verdict}")
                print(f"    code:      {json.dumps(want)[:400]}")
                print(f"    extracted: {json.dumps(got)[:400]}")


if __name__ == "__main__":
    main()

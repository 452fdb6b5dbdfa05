"""Which check is which across releases: one lineage per check, with its wordings.

The same message shape (exception and template, `extract.match_key`) in two releases is the
same check. When a check stops being printed in a release, it is compared with the checks that
are newer than it and still printed: one that raises the same exception, from the same function
or under the same condition on the same quantities, in similar words, is the same check
reworded (its old wording becomes a variant); one that only guards the same quantities took
over (`superseded_by`): in its function, in the release the old one goes, or naming the same
settings; a check printed side by side with the old one for releases is a sibling, never the
one that took over, unless nothing is printed from the old one's file any more and it says much
the same about the same quoted setting (V1's check for V0's worker). Where a function (by its
qualified name) lost one check and gained one in the same release, the new one took over when
their words are alike enough, whatever it raises now. Two wordings printed by one release are
two checks: a merge that joined them is undone (`parted`). Every comparison past a floor is
logged with its features, so that the decisions can be read and checked by hand.
"""

import ast
import keyword
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from errorkb.content import template
from errorkb.sources.explain import conjuncts
from errorkb.sources.extract import DEBUG, HOLE, Site, group_sites

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
# The settings a message names: `quoted`, --flags, snake_case names, ENV_VARS.
_NAMED = re.compile(
    r"`([^`\s]+)`|--([a-z][\w-]+)|\b([a-z]+(?:_[a-z0-9]+)+)\b|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"
)
# Words of four letters or more that say nothing of what a message is about.
_COMMON = frozenset(
    _WORD.findall(
        "with that this than when will must only have been does from your into also were which"
        " there their should would could using used after before other"
    )
)
# Names in conditions that say nothing about what is checked.
_NOISE = frozenset({"self", "cls", "isinstance", "len", "getattr", "hasattr", "str", "int"})


@dataclass
class Wording:
    """One message shape of a check, and the releases that print it."""

    key: tuple[str, str]
    sites: list[Site]  # where it is printed, in the last release that prints it
    first: str
    last: str
    first_index: int  # the releases' positions, oldest 0
    last_index: int

    @property
    def site(self) -> Site:
        return self.sites[0]

    @property
    def template(self) -> str:
        return self.site.template


@dataclass(eq=False)
class Lineage:
    """One check through the releases: its wordings, oldest first."""

    wordings: list[Wording]
    first_index: int  # the first release that prints it
    superseded_by: "Lineage | None" = None
    absorbed: bool = False  # merged into another lineage as its older wordings
    demoted: bool = False  # its log line is printed at DEBUG now: not gone

    @property
    def current(self) -> Wording:
        """The wording printed last (of two printed to the end, the newer one)."""
        return max(self.wordings, key=lambda w: (w.last_index, w.first_index))

    @property
    def first(self) -> str:
        return min(self.wordings, key=lambda w: w.first_index).first

    @property
    def last(self) -> str:
        return max(self.wordings, key=lambda w: w.last_index).last

    @property
    def last_index(self) -> int:
        return max(w.last_index for w in self.wordings)


@dataclass
class Features:
    """What identifies a check in the code: where, under what condition, on what quantities."""

    exception: str
    kind: str
    literal: str  # the template's literal text, holes as one mark
    tokens: tuple[str, ...]  # its words and signs, what texts are compared by
    words: frozenset[str]
    functions: frozenset[str]  # enclosing functions' own names
    paths: frozenset[str]
    guards: frozenset[str]
    guard_names: frozenset[str]
    holes: frozenset[str]
    names: frozenset[str] = frozenset()  # the settings its words name, as `max_model_len`
    qualified: frozenset[str] = frozenset()  # its functions' qualified names (`Class.method`)
    settings: frozenset[str] = frozenset()  # the names it quotes, flags, environment variables
    tested: frozenset[str] = frozenset()  # the names its conditions test, word by word
    # The comparisons its guard makes (the innermost `if`, the assert's test), read from
    # their syntax (`guard_atoms`): what the check tests, whatever file it moved to
    atoms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, wording: Wording, common: frozenset[str] = frozenset()) -> "Features":
        """A wording's features; a function name in `common` (`__init__`, `forward`: found
        in many files) says where only with its file."""
        sites = wording.sites
        literal = wording.key[1]
        guards = frozenset(_norm_guard(s.guard) for s in sites if s.guard)
        names = {n for g in guards for n in _IDENT.findall(g)}
        return cls(
            exception=wording.key[0],
            kind="assert" if sites[0].kind == "assert" else sites[0].kind,
            literal=literal,
            tokens=tuple(_TOKEN.findall(literal)),
            words=frozenset(w.lower() for w in _WORD.findall(literal)),
            functions=frozenset(_where(s, common) for s in sites if s.function),
            paths=frozenset(s.path for s in sites),
            guards=guards,
            guard_names=frozenset(n for n in names if n not in _NOISE and not keyword.iskeyword(n)),
            holes=frozenset(
                n for s in sites for n in template.placeholders(s.template) if n != "value"
            ),
            names=named(literal),
            qualified=frozenset(qualified(s) for s in sites if s.function),
            settings=named(literal, quoted=True),
            tested=frozenset(
                n
                for s in sites
                for n in _IDENT.findall(s.guard)
                if n not in _NOISE and not keyword.iskeyword(n)
            ),
            atoms=frozenset(
                atom for s in sites for atom in guard_atoms(s.guard, holds=s.kind == "assert")
            ),
        )


def qualified(site: Site) -> str:
    """A site's function by its qualified name (`AriaProjector.forward`); a module-level
    function with its file, since its bare name says less."""
    return site.function if "." in site.function else f"{site.path}:{site.function}"


def owner_class(site: Site) -> str:
    """The class whose method a site is in (`AriaProjector`), or ''."""
    return site.function.rpartition(".")[0]


def named(text: str, quoted: bool = False) -> frozenset[str]:
    """The settings a message names (`gpu_memory_utilization`, --max-model-len,
    VLLM_CPU_KVCACHE_SPACE), spelled alike: lower case, dashes as underscores. `quoted`:
    only those it marks as a setting (in backquotes, a flag, an environment variable), not
    every snake_case word (a variable's name)."""
    out = set()
    for match in _NAMED.finditer(text):
        if quoted and match.group(3):
            continue
        name = next(g for g in match.groups() if g)
        out.add(name.strip("-").replace("-", "_").lower())
    return frozenset(out)


@dataclass
class _Cache:
    """Features of wordings, computed again only when a newer release printed them."""

    common: list[frozenset[str]] = field(default_factory=list)  # per release
    found: dict[int, tuple[int, Features]] = field(default_factory=dict)  # by id(wording)

    def features(self, wording: Wording) -> Features:
        found = self.found.get(id(wording))
        if found is None or found[0] != wording.last_index:
            common = self.common[wording.last_index]
            found = self.found[id(wording)] = (wording.last_index, Features.of(wording, common))
        return found[1]


def _where(site: Site, common: frozenset[str]) -> str:
    name = site.function.rsplit(".", 1)[-1]
    return f"{site.path}:{name}" if name in common else name


def common_functions(sites: list[Site], files: int = 4) -> frozenset[str]:
    """Function names that print messages in this many files or more."""
    paths: dict[str, set[str]] = defaultdict(set)
    for site in sites:
        paths[site.function.rsplit(".", 1)[-1]].add(site.path)
    return frozenset(name for name, found in paths.items() if len(found) >= files)


# The guard's syntax ------------------------------------------------------------------

# The names a value is reached through that say nothing of which value it is: `self.`,
# `cls.`, argparse's `args.`, the server's or a config's own (`server_args.`, `config.`, `cfg.`:
# a setting checked in the scheduler, then in the arguments' validation)
_OWNERS = frozenset({"self", "cls", "args", "server_args", "config", "cfg"})


@lru_cache(maxsize=1 << 15)
def guard_atoms(text: str, holds: bool = False) -> frozenset[str]:
    """The comparisons a condition makes, each in one spelling: its `and`-ed parts, `a > b`,
    `b < a` and `not a <= b` all `>|a|b`, `a != b` and `b != a` both `!=|a|b`, `x is not None`
    `is not|None|x`; a value reached through `self.`, `args.` or an object they hold by its
    last name (`self.model_runner.max_running_requests` is `max_running_requests`). A part
    that compares nothing (a flag, a call) is kept as its text, `!` before it when negated.
    `holds`: the text is what must hold (an assert's test): each of its parts failing is a
    way to fail, so each part is read negated and the atoms say when the check refuses, as a
    raise's guard does. Empty when the text is no Python expression."""
    if not text.strip():
        return frozenset()
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    out = set()
    for part in conjuncts(tree):
        atom = _atom(part, holds)
        if atom:
            out.add(atom)
    return frozenset(out)


# Each comparison and its negation; an order by its greater side first.
_NEGATED = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_SPELLED = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def _atom(node: ast.AST, negated: bool = False) -> str:
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, negated = node.operand, not negated
    try:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _NEGATED:
            left, right = _value(node.left), _value(node.comparators[0])
            op = type(node.ops[0])
            if negated:
                op = _NEGATED[op]
            if op in (ast.Lt, ast.LtE):  # a < b is b > a
                left, right = right, left
                op = ast.Gt if op is ast.Lt else ast.GtE
            if op in (ast.Gt, ast.GtE):
                return f"{'>' if op is ast.Gt else '>='}|{left}|{right}"
            if op in (ast.In, ast.NotIn):
                return f"{_SPELLED[op]}|{left}|{right}"
            a, b = sorted((left, right))
            return f"{_SPELLED[op]}|{a}|{b}"
        return ("!" if negated else "") + _value(node)
    except (ValueError, RecursionError):
        return ""


def _value(node: ast.AST) -> str:
    return ast.unparse(_Owners().visit(_copy(node))).replace(" ", "")


def _copy(node: ast.AST) -> ast.AST:
    return ast.parse(ast.unparse(node), mode="eval").body


class _Owners(ast.NodeTransformer):
    """`self.a.b` -> `b`: a value held by the object, by its own name."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        root: ast.AST = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in _OWNERS:
            return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
        if (
            isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and not node.value.args
            and not node.value.keywords
            and node.value.func.id.startswith("get_")
        ):  # held by an object a getter returns (`get_parallel().dp_size`): by its own name
            return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
        return self.generic_visit(node)


def telling_atoms(atoms: frozenset[str]) -> frozenset[str]:
    """The atoms that compare something (`=|0|x`), not a bare flag or call."""
    return frozenset(a for a in atoms if "|" in a)


def _same_name(a: str, b: str) -> bool:
    """Two spellings of one value: equal, or one the other with a word put before or after
    it (`ngram_prompt_lookup_min` and `prompt_lookup_min`, `cuda_device_count()` and
    `cuda_device_count_stateless()`); a call's parentheses do not count."""
    a, b = a.removesuffix("()"), b.removesuffix("()")
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) < 6 or not re.fullmatch(r"\w+", short) or not re.fullmatch(r"\w+", long):
        return False
    return long.endswith("_" + short) or long.startswith(short + "_")


def _alike(a: str, b: str) -> bool:
    """Two atoms that make the same comparison on two named values spelled alike."""
    op, _, sides = a.partition("|")
    op2, _, sides2 = b.partition("|")
    if op != op2 or not sides:
        return False
    x, y = sides.split("|", 1)
    u, v = sides2.split("|", 1)
    if not all(re.fullmatch(r"[a-z_]\w*(?:\(\))?", s) for s in (x, y, u, v)):
        return False  # two named values (variables, settings), not a constant
    pairs = [((x, u), (y, v))]
    if op not in (">", ">="):  # an order's sides keep their places; the others any way
        pairs.append(((x, v), (y, u)))
    return any(
        all(_same_name(a, b) for a, b in pair) and len({_longer(a, b) for a, b in pair} - {0}) <= 1
        for pair in pairs
    )


def _longer(old: str, new: str) -> int:
    """Which of two spellings of a value is the longer: 1 the old, -1 the new, 0 neither."""
    return (len(old) > len(new)) - (len(old) < len(new))


def guard_evidence(old: "Features", new: "Features") -> str:
    """What the two checks' guards share: `same` when they make the same comparisons (and,
    where those only hold values against constants, test the same flags beside them),
    `part` when the comparisons of one are all comparisons of the other (a test split or
    joined with another), `alike` when one comparison of two named values is made on values
    spelled alike (a prefix dropped, a suffix added), else ''."""
    mine, theirs = telling_atoms(old.atoms), telling_atoms(new.atoms)
    if mine and mine == theirs:
        if not any(specific(a) for a in mine) and old.atoms != new.atoms:
            # a value against a constant (`max_loras_per_batch > 0`), the rest of the test
            # another (one asserted it with `lora_paths is None or disable_radix_cache`)
            return "part"
        return "same"
    if mine & theirs and (mine <= theirs or theirs <= mine):
        return "part"
    if any(_alike(a, b) for a in mine for b in theirs):
        return "alike"
    return ""


_NAME = re.compile(r"[A-Za-z_]\w*")


def _bounds(atoms: frozenset[str]) -> set[tuple[str, bool]]:
    """The named values an order refuses, each with its side: True when the check refuses
    it above the other side (`>|x|1`: x too large), False when below (`>|n|x`: x too
    small)."""
    out = set()
    for atom in telling_atoms(atoms):
        op, _, sides = atom.partition("|")
        if op not in (">", ">=") or "|" not in sides:
            continue
        high, low = sides.split("|", 1)
        for side, above in ((high, True), (low, False)):
            if _NAME.fullmatch(side) and side != "None":
                out.add((side, above))
    return out


def opposite_bounds(old: "Features", new: "Features") -> bool:
    """Whether the two guards bound one value from opposite sides and nothing else alike:
    the old check refused it too large, the new one too small (vLLM 0.6.6's "fewer
    placeholder tokens than inputs" under `placeholder_token_count < len(repeat_count)`,
    where 0.5.5 warned of more than one under `placeholder_token_count > 1`): the other
    end of the range, a sibling, not the same refusal."""
    if telling_atoms(old.atoms) & telling_atoms(new.atoms):
        return False
    mine, theirs = _bounds(old.atoms), _bounds(new.atoms)
    same = any(_same_name(a, b) and x == y for a, x in mine for b, y in theirs)
    other = any(_same_name(a, b) and x != y for a, x in mine for b, y in theirs)
    return other and not same


def _own_values(feats: "Features") -> set[str]:
    """The values a check's guard tests that its words name (`embed_is_patch` in
    "Incorrect type of embed_is_patch" under `not isinstance(embed_is_patch, ...)`): what
    it is about, by a name that says which value (a word with `_`, six letters or more).
    Named in its own words, not only as a value it prints: a generic check printing what it
    refuses (`{v1_async_sched_incompat}`) may print the old check's very name."""
    said = feats.names | feats.words
    return {
        n
        for n in feats.tested
        if "_" in n.strip("_") and len(n) >= 6 and n not in _NOISE and n.lower() in said
    }


def other_value(old: "Features", new: "Features") -> bool:
    """Whether each check tests and names a value of its own the other neither tests nor
    names, their guards sharing no comparison: Molmo's "Incorrect type of embed_is_patch"
    and "Incorrect type of img_patch_id" are two checks of two inputs, however alike their
    words."""
    if telling_atoms(old.atoms) & telling_atoms(new.atoms) or old.guards & new.guards:
        return False
    mine, theirs = _own_values(old), _own_values(new)
    if not mine or not theirs:
        return False
    seen_new = new.tested | new.names | new.holes
    seen_old = old.tested | old.names | old.holes
    return not any(_named_alike(a, b) for a in mine for b in seen_new) and not any(
        _named_alike(a, b) for a in theirs for b in seen_old
    )


def _named_alike(a: str, b: str) -> bool:
    """One value by two names: spelled alike (`_same_name`), or ending in the same two
    words, a plural's s aside (`diff_sampling_param` and `default_sampling_params`, the
    chat defaults renamed)."""
    if _same_name(a, b):
        return True
    x = [w.removesuffix("s") for w in a.lower().split("_") if w]
    y = [w.removesuffix("s") for w in b.lower().split("_") if w]
    return len(x) >= 2 and len(y) >= 2 and x[-2:] == y[-2:]


def tested_apart(old: "Features", new: "Features") -> bool:
    """Whether both guards test named values and none by a name alike."""
    mine = {n for n in old.tested if n not in _NOISE}
    theirs = {n for n in new.tested if n not in _NOISE}
    return bool(mine and theirs) and not any(_same_name(a, b) for a in mine for b in theirs)


def guards_apart(old: "Features", new: "Features") -> bool:
    """Whether both guards are known and make other comparisons, none shared nor alike,
    on names mostly their own (`Comparison.guard` under a half): SGLang's NVFP4 assert
    that a weight scale's dim divides by 16 and the later one that it equals the expected
    block count. A presence test (`query_num is not None`, a lookup's result) says too
    little of what is tested: Aria's `patch_to_query_dict.get(...)` asserted present, then
    `num_patches not in patch_to_query_dict`, is one check."""
    mine, theirs = telling_atoms(old.atoms), telling_atoms(new.atoms)
    if not mine or not theirs or mine & theirs or old.guards & new.guards:
        return False
    if not any(map(specific, mine)) or not any(map(specific, theirs)):
        return False
    if any(_alike(a, b) for a in mine for b in theirs):
        return False
    if any(_telling_hole(n) for n in old.tested & new.tested):
        return False  # a value by a telling name tested by both (`_CANCEL_DRAIN_TIMEOUT_S`)
    return _jaccard(old.guard_names, new.guard_names) < 0.5


def specific(atom: str) -> bool:
    """Whether a comparison says which value it tests beyond a flag checked against a
    constant (`x is None`, `bits != 4` are made in many places): an expression on a side
    (`raw[value_start]`, `head_dim_v % alignment`, a call), or two named values compared."""
    _, _, sides = atom.partition("|")
    if not sides:
        return False
    parts = sides.split("|", 1)
    if any(re.search(r"[%\[(+*/-]", side) for side in parts):
        return True
    return all(re.fullmatch(r"[a-z_]\w*", side) and side != "None" for side in parts)


def _norm_guard(text: str) -> str:
    return re.sub(r"\b(?:self|cls)\.", "", text).replace(" ", "")


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class Comparison:
    old: Features
    new: Features
    text: float
    place: float
    guard: float
    holes: float
    swapped_name: bool = False  # the texts differ in one name only: "CPU" for "OpenVINO"
    retyped: bool = False  # another exception type or kind
    named: float = 0.0  # the settings both texts name (Jaccard), when they name two or more
    appeared: bool = False  # the new check first printed in the release the old one is gone
    unique: bool = False  # and the only check of that release in the old one's very words
    alongside: bool = False  # the new check was printed side by side with the old one
    # In the release the old check is gone, its function lost it alone and gained the new
    # one alone: one check of that function in place of another
    one_for_one: bool = False
    file_gone: bool = False  # nothing is printed from the old check's file any more
    nocase: float = 0.0  # `text` in lower case (computed for `loose` comparisons only)
    kept: float = 0.0  # the share of the old text's telling words the new one has (`loose`)
    renamed: bool = False  # the one name swapped is its class's, renamed with its method
    guarded: bool = False  # the new text names every value the old one's condition tested
    faint: bool = False  # compared only for sharing its function and condition: few words alike
    releveled: bool = False  # a log line at another level in its own function: reworded only
    atoms: str = ""  # what the guards share (`guard_evidence`): same, alike or ''
    moved: str = ""  # the new check is in a method of the old one's name ("method") or class
    inherited: bool = False  # the old one's method is gone from its class, which still prints
    new_method: bool = False  # the new check's function printed nothing in the release before
    # the one name swapped is a setting's, and the guard tests the new name where the old one
    # tested the old (`dcp_kv_cache_interleave_size` to `cp_kv_cache_interleave_size`)
    setting_renamed: bool = False
    # the share of the old text's placeholders the new one prints, by name or a name grown
    # (`profiler` in `profiler_type`)
    carried: float = 0.0
    # the old guard refused one value of a name (`shard_id != 'w2'`, a fall-through) that the
    # new one refuses with others (`shard_id not in ('w1', 'w2', 'w3')`)
    covers: bool = False
    # a setting the old text names (`MOONCAKE_CONFIG_PATH`) is tested by the new guard, under
    # its name or a longer one (`SGLANG_HICACHE_MOONCAKE_CONFIG_PATH`)
    setting_tested: bool = False
    # nothing is printed from the old check's function (by its qualified name) any more
    function_gone: bool = False
    # the new check is the only one its function (by its qualified name, the old one's)
    # gained in the release the old one went
    sole_gain: bool = False

    @property
    def score(self) -> float:
        return self.text + 0.5 * self.guard + 0.3 * self.place + 0.3 * self.holes

    @property
    def exact(self) -> bool:
        """The same words: the exception type, kind or place may have changed."""
        return self.old.literal == self.new.literal

    def same_check(self) -> bool:
        """The same check, reworded, moved or retyped (ValueError to TypeError)."""
        if self.faint:
            return False
        if self.swapped_name:
            # A sibling check about another thing (backend, field, mode), unless the thing
            # is the class that prints it, renamed: its method under the new name, first
            # printed in the release the old one went
            return self.renamed and self.appeared and not self.alongside and self.text >= 0.8
        long = len(self.old.literal) >= 20 and len(self.new.literal) >= 20
        if self.exact:  # the same words copied into another model or parser are another check
            # ... unless they appear, alone, in the very release the old ones are gone:
            # moved (and retyped) with them, not copied.
            return self.place > 0 or self.guard >= 0.5 or (self.appeared and self.unique)
        if self.alongside and not self.sure_twin():
            # Printed side by side with the old wording for releases, in other words: two
            # checks ("best_of must be greater than or equal to n" beside "min_tokens must be
            # greater than or equal to 0" in `SamplingParams._verify_args`), unless it is a
            # copy of it, tested alike (`sure_twin`)
            return False
        if self.retyped:  # another exception in other words: the same check only in its
            # own function, on the same values, in much the same words
            return (
                not self.swapped_name
                and self.place == 1
                and self.text >= 0.6
                and max(self.guard, self.holes) >= 0.5
            )
        return (
            (self.text >= 0.9 and long and max(self.place, self.guard, self.holes) > 0)
            or (self.text >= 0.6 and self.place >= 0.5)
            or (self.text >= 0.6 and self.guard >= 0.5 and self.holes >= 0.5)
            or (self.text >= 0.85 and self.guard >= 0.5)
            or (self.text >= 0.5 and self.guard >= 0.6 and self.holes >= 0.5 and self.place > 0)
        )

    def sure_twin(self) -> bool:
        """A copy of the old wording printed beside it, reworded a little: under the same
        condition in much the same words, or in its function in nearly the very words, or
        there on the same values printed alike."""
        return (
            (self.guard >= 0.5 and self.text >= 0.8)
            or (self.place == 1 and self.text >= 0.9)
            or (self.place == 1 and self.guard >= 0.5 and self.holes == 1 and self.text >= 0.6)
        )

    def took_over(self, moved: bool = True) -> bool:
        """A different check that took the old one's place: in the same function (or the
        same file, under the same guard), in words or on quantities much alike. Only on
        strong evidence: a sibling check elsewhere (the same text for another backend or
        model) is no successor, and no link is better than a wrong one."""
        fresh = self.appeared and not self.alongside
        if self.swapped_name and self.setting_renamed and fresh and self.file_gone:
            return True  # a value renamed in its words and its guard alike, moved out of a
            # file that prints nothing any more ("bootstrap_duration={..} < 0 or ..." from
            # metrics/collector.py, then "bootstrap_queue_duration={..} < 0 or ..." from
            # observability/req_time_stats.py under the same test of the renamed value)
        if self.swapped_name and not self.old.paths & self.new.paths:
            return False  # the same words about another name in another file: a sibling
        if self.guards_other():
            return False
        if moved and self.moved_with_words():
            return True
        if self.swapped_name and self.setting_renamed and self.appeared and not self.alongside:
            return True  # a setting renamed in its words and in its guard alike
        # a line logged at another level takes over as a retyped check would: only where
        # the evidence allows another exception
        retyped = self.retyped or self.releveled
        same_values = self.place == 1 and self.guard >= 0.5 and not self.swapped_name
        if self.by_guard():
            return True
        if self.covers and self.place == 1 and self.holes == 1 and not retyped:
            # A fall-through gone from its function, where the check printed beside it all
            # along refuses that value among others, printing the same values: what is left
            # of the refusal ("Expected shard_id w1,w2 or w3 but got {shard_id}" under
            # `shard_id != 'w2'`, and "shard_id must be ['w1','w2','w3'] ..." under
            # `shard_id not in ('w1', 'w2', 'w3')`)
            return True
        own = bool(self.old.qualified & self.new.qualified)  # its very function, not a namesake
        if self.setting_tested and own and fresh and not self.swapped_name:
            # Appeared in its function in the release the old one went, testing the setting
            # the old text told the user to set, under a longer name: whatever it raises now
            # ("The environment variable 'MOONCAKE_CONFIG_PATH' is not set.", then a
            # RuntimeError under `not envs.SGLANG_HICACHE_MOONCAKE_CONFIG_PATH.is_set()`)
            return True
        if fresh and not retyped and not self.swapped_name and self.extends():
            return True
        if same_values and fresh and self.guard == 1 and (self.kept >= 0.5 or self.one_for_one):
            # Appeared in its function, in the release the old one went, under the very same
            # condition, keeping the old text's telling words in a longer message ("Abort
            # request {rid}", then "Request is disconnected ... Abort request obj.rid={rid}")
            return True
        if self.faint:
            return False  # few words alike: only the rule above may link them
        apart = guards_apart(self.old, self.new) and self.text < 0.5
        # a log line become a refusal (or a refusal a log line) on values of its own: vLLM
        # 0.10.2's "Invalid attention backend" under `selected_backend is None`, where
        # "Using BlocksparseFlashAttention backend." was logged under `is_blocksparse`
        logged = (self.old.kind == "log") != (self.new.kind == "log")
        apart = apart or (logged and self.text < 0.5 and tested_apart(self.old, self.new))
        if (
            self.one_for_one
            and not self.swapped_name
            and not apart
            and (self.nocase >= 0.4 or self.kept >= 0.5)
        ):
            # Where one check vanished from a function, the one that appeared there in the
            # same release, in words much alike or keeping half the old one's telling words:
            # its exception may have changed (an assert became a KeyError), its words with it
            # (not where both guards are known and test other things, in few words alike)
            return True
        if self.sole_gain and fresh and not self.swapped_name and self.folded():
            return True
        if self.place == 1 and fresh and self.guarded and self.text >= 0.3:
            # Appeared in its function when the old one went, naming every value the old
            # check's condition tested: the same rule over more values, reworded
            return True
        if same_values and self.appeared and self.text >= 0.4:
            # Appeared in the same function, in the release the old one went, under the same
            # guard, in words much alike: the same values checked, whatever it raises now
            return True
        # Much the same words, telling the user to change the same setting, on a value of the
        # same name: in the release the old one went, or printed beside it by the code that
        # replaced its file (V1's check for V0's worker)
        shared = bool(self.old.settings & self.new.settings) and self.holes > 0
        replaced = self.file_gone and not self.old.paths & self.new.paths
        close = self.text >= 0.6 and not retyped and not self.swapped_name
        if shared and close and (self.appeared or replaced):
            return True
        if self.named >= 0.5 and self.holes > 0 and self.text >= 0.2 and not retyped:
            # Wholly new words that name the same settings, on a value of the same name:
            # the check that tells the user to change the same thing
            return True
        if retyped:
            return False
        if self.alongside:
            # Printed side by side with the old one for releases: a sibling that guarded
            # something else all along (EPLB for another MoE method, the float of the
            # integer's warning in another parser), not the one that took its place
            return False
        if self.place == 1:
            # in few words alike, only where the guards do not test other things
            weak = not guards_apart(self.old, self.new)
            return (
                self.text >= 0.5
                or self.guard >= 0.5
                or (weak and self.text >= 0.3 and self.holes >= 0.5)
                or (weak and self.appeared and self.text >= 0.3 and self.same_opening())
            )
        if self.place == 0.5:
            return self.guard >= 0.5 and self.text >= 0.5
        # Elsewhere: the same quantities guarded, in other words
        return self.guard >= 0.6 and self.holes > 0

    def guards_other(self) -> bool:
        """Whether the guards say the new check refuses something else, whatever its
        words: the other end of the old value's range (`opposite_bounds`), or another value
        its words name and its guard tests (`other_value`). A check of a value renamed in
        words and guard alike (`setting_renamed`) is the same value."""
        if self.setting_renamed:
            return False
        return opposite_bounds(self.old, self.new) or other_value(self.old, self.new)

    def folded(self) -> bool:
        """Folded into the one check its function gained: both print a value by the same
        name (`is_sym`, `poll`) that both conditions test ("Marlin does not support
        is_sym = {is_sym}" under `is_sym not in GPTQ_MARLIN_SUPPORTED_SYM`, then
        "Unsupported quantization config: bits={weight_bits}, sym={is_sym}" under
        `(weight_bits, is_sym) not in TYPE_MAP` in `GPTQMarlinConfig.__init__`)."""
        shared = self.old.holes & self.new.holes & self.old.tested & self.new.tested
        return any(("_" in name or len(name) >= 6) and name not in _NOISE for name in shared)

    def moved_with_words(self) -> bool:
        """Moved, keeping its words: first printed in the release the old one went (not
        printed beside it before), the same exception, nearly every telling word of the old
        text kept (two or more) and every value it printed, in words much alike, near its
        old place (its function, its file, the file or function it left gone, its package);
        or refusing, with the old words, the value the old guard refused among others
        (`attention_backend != 'fa3'`, then `attention_backend not in {'fa3', 'aiter'}`).
        A check copied into a new file beside the old one still printed is no successor:
        the old one is gone only when it moved."""
        if not self.appeared or self.alongside or self.retyped or self.swapped_name:
            return False
        telling = [w for w in self.old.words if len(w) >= 4 and w not in _COMMON]
        if len(telling) < 3 and not (self.file_gone and self._tests_grown()):
            return False  # two words ("Unknown backend: {backend}") say too little alone,
            # unless in place of a file gone the guard tests the old value, its name grown
            # (`_gemm_rs is not None`, then `_gemm_rs_ar is not None`)
        # kept as whole words: `activation` is not kept by `use_activation`
        if sum(w in self.new.words for w in telling) < 0.85 * len(telling):
            return False
        if self.old.holes and self.carried < 1:
            return False
        if self.covers:
            return True
        near = self.place > 0 or self.file_gone or self.function_gone or _nearby(self)
        return near and self.text >= 0.6

    def _tests_grown(self) -> bool:
        """Whether the new guard tests a value the old guard tested (eight letters or more),
        under its name or a longer one."""
        return any(
            _same_name(a, b) for a in self.old.tested if len(a) >= 8 for b in self.new.tested
        )

    def by_guard(self) -> bool:
        """Took over on the evidence of the guard itself, wherever the new check is: the
        same comparisons (`atoms`), first printed in the release the old one went, with its
        values or words (a check moved into a shared helper: "Inkling tool call args must be
        a JSON object" under `raw[value_start] != '{'`, then "member {key} must be ..." under
        the very same test); the same comparison on values spelled alike (a prefix dropped:
        `ngram_prompt_lookup_min > ngram_prompt_lookup_max`, then `prompt_lookup_min >
        prompt_lookup_max`), near it or in place of a file gone; a method moved to another
        class or a class's check moved to another method, in much the same words; a method
        a class no longer has, whose words its namesake in another class prints (inherited);
        and a twin printed beside it by its class, testing the very same comparisons."""
        if self.swapped_name:
            return False
        fresh = self.appeared and not self.alongside
        tests = self.atoms in ("same", "part")
        told = any(specific(a) for a in telling_atoms(self.old.atoms) & self.new.atoms)
        # in its function (not under only a precondition it shared with a sibling)
        kept = not self.lost_test() or self.text >= 0.5
        in_place = fresh and tests and self.place == 1
        if in_place and kept and (self.atoms == "same" or self.text >= 0.2):
            return True
        if fresh and self.place == 1 and self.old.guards & self.new.guards and self.text >= 0.3:
            return True  # the very same guard in its function ("Using CPU MLA backend." under
            # `use_mla`, then "MLA is not supported on CPU." under it)
        worded = self.text >= 0.6 or (self.holes > 0 and told)
        moved = self.moved == "class" or (self.moved == "method" and self.new_method)
        if fresh and tests and (self.place == 0.5 or moved) and worded:
            return True  # in its file or class, or its method moved where it is new
        if fresh and self.atoms == "same" and told and (self.text >= 0.5 or self.holes > 0):
            return True  # a telling test moved elsewhere (into a shared helper)
        near = self.place > 0 or bool(self.moved) or self.file_gone
        if self.atoms == "alike" and fresh and near and (self.holes > 0 or self.text >= 0.4):
            return True
        alike = self.text >= 0.8 or (self.text >= 0.6 and self.holes > 0)
        if self.moved == "method" and self.new_method and fresh and alike:
            return True  # its method moved to another class, where it prints for the first time
        # a method's name printed from a few files only: `create_weights` and
        # `execute_model`, printed by many classes, say nothing of a moved method
        rare = any(":" not in name for name in self.old.functions)
        if self.moved == "method" and self.new_method and fresh and self.atoms == "same" and rare:
            return True  # its method moved to another class, where it prints for the first
            # time, making the very same test (`TokenizerManager.init_weights_update_group`
            # asserting `self.server_args.dp_size == 1`, then the mixin's method of that name
            # asserting `get_parallel().dp_size == 1`), whatever it says now
        if self.inherited and self.text >= 0.5 and not self.retyped:
            return True
        if fresh and self.atoms == "same":
            shared = telling_atoms(self.old.atoms) & self.new.atoms
            ordered = [a for a in shared if a.startswith(">") or specific(a)]
            values = {v.removesuffix("()").lower() for a in ordered for v in a.split("|")[1:]}
            if values & self.old.names & self.new.names:
                return True  # the same comparison on a setting both texts name (`assert
                # schedule_conservativeness >= 0` moved from the scheduler to the arguments);
                # a bound or two values, not a presence test (`x is not None` in a sibling)
            if self.old.holes and self.carried == 1 and self.text >= 0.3:
                return True  # the same comparison, printing the same values ("Invalid
                # profiler value of {profiler}", then "Unknown profiler type: {profiler_type}")
        if self.carries():
            return True
        if (
            self.moved == "class"
            and fresh
            and self.file_gone
            and self.text >= 0.6
            and not self.retyped
            and (self.old.words <= self.new.words or self.new.words <= self.old.words)
        ):
            return True  # its class moved to another file, the words printed by another of
            # its methods ("[gpu_id={gpu_id}] Init nccl begin." in `__init__`, then "Init
            # nccl begin." in `init_torch_distributed`)
        return self.twin()

    def lost_test(self) -> bool:
        """Whether the new guard makes only some of the old one's comparisons, the one
        that told what the old check was about gone: a sibling under the same precondition
        (vLLM 0.10.2's "Connectors do not specify a kv cache layout" under `kv_config is
        not None`, where "Unable to detect current VLLM config" also tested
        `model_config is None`, and moved with that test into the Nixl connector). A test
        kept on a value the old words name is what the old check was about (the outer test
        moved up: `num_speculative_tokens is None`, kept of `speculative_model is not None
        and num_speculative_tokens is None`)."""
        mine, theirs = telling_atoms(self.old.atoms), telling_atoms(self.new.atoms)
        if not theirs or not theirs < mine:
            return False
        said = self.old.names | self.old.holes | self.old.words
        kept = {v for a in theirs for v in a.split("|")[1:] if _NAME.fullmatch(v) and v != "None"}
        return not any(v.rpartition(".")[2].lower() in said for v in kept)

    def carries(self) -> bool:
        """First printed in the release the old one went, near it (its function, file or
        class; in place of a file gone, only a line of four values or more), printing four
        in five of the old text's placeholders by their names, a telling one among them
        (`num_running_reqs`, not `name`), in words much alike, or keeping half its telling
        words around three values or more: the same line reworded around the same values
        (SGLang's "Decode batch. #running-req: {num_running_reqs}, ..." from the scheduler's
        mixin, then from its metrics reporter with more fields). A value or two printed in
        place of a file gone says too little: many checks print `{port_str}` or
        `{exception_traceback}`."""
        fresh = self.appeared and not self.alongside
        same = self.old.holes & self.new.holes  # by the very same names
        # in place of a file gone, only a line of many values (a periodic stats line): one
        # or two values a file gone printed are printed by many others ("{port_str}")
        near = self.place > 0 or bool(self.moved) or (self.file_gone and len(same) >= 4)
        if not fresh or not near or self.retyped or len(same) < 0.8 * len(self.old.holes):
            return False
        own_class = self.moved == "class" and kept_words(self.old, self.new) >= 0.6
        if len(same) < 2 and not self.old.qualified & self.new.qualified and not own_class:
            return False  # one value printed elsewhere in its file says too little (in
            # another method of its own class, keeping most of its telling words, it says
            # which line took over: SGLang's `HostKVCache` allocation line, moved from
            # `__init__` to `_allocate_host_buffer`)
        if not any(_telling_hole(h) for h in same):
            return False
        return self.text >= 0.4 or (len(same) >= 3 and kept_words(self.old, self.new) >= 0.5)

    def extends(self) -> bool:
        """The old text grown: the same opening, every word of it kept, much alike, printing
        as many values ("Invalid forward mode: {forward_mode}", then "Invalid forward mode
        for eager runner: {mode}")."""
        return (
            self.text >= 0.75
            and self.same_opening()
            and self.old.words <= self.new.words
            and len(self.old.holes) == len(self.new.holes) >= 1
        )

    def twin(self) -> bool:
        """A twin its class printed beside it, making the very same test, that still does."""
        same = self.atoms == "same" and self.moved == "class" and self.text >= 0.2
        return same and self.alongside and not self.retyped

    def same_opening(self) -> bool:
        """Both texts open with the same three words ("Transformers modeling backend only
        supports images" and "... does not support audio inputs"): what the check is about."""
        old, new = _WORD.findall(self.old.literal), _WORD.findall(self.new.literal)
        return len(old) >= 3 and [w.lower() for w in old[:3]] == [w.lower() for w in new[:3]]

    def row(self, decision: str, release: str) -> dict:
        return {
            "release": release,
            "decision": decision,
            "exception": self.old.exception,
            "old": self.old.literal,
            "new": self.new.literal,
            "old_where": sorted(self.old.functions) + sorted(self.old.paths)[:1],
            "new_where": sorted(self.new.functions) + sorted(self.new.paths)[:1],
            "old_guard": sorted(self.old.guards)[:1],
            "new_guard": sorted(self.new.guards)[:1],
            "text": round(self.text, 2),
            "place": self.place,
            "guard": round(self.guard, 2),
            "holes": round(self.holes, 2),
            "named": round(self.named, 2),
            "appeared": self.appeared,
            "alongside": self.alongside,
            "one_for_one": self.one_for_one,
            "nocase": round(self.nocase, 2),
            "kept": round(self.kept, 2),
            "file_gone": self.file_gone,
            "atoms": self.atoms,
            "moved": self.moved,
            "inherited": self.inherited,
        }


def compare(
    old: Features, new: Features, loose: bool = False, force: bool = False
) -> Comparison | None:
    """The features two checks share; None when they cannot be one: another kind or
    exception type, unless in the very same words. `loose`: one check in place of another
    in its function, where far fewer words in common are worth comparing. `force`: compared
    whatever they share (the guards' evidence is weighed apart, `compare_guard`)."""
    retyped = old.kind != new.kind or old.exception != new.exception
    # loose: words alike by their stems too ("connector" and "connectors", "KV transfer
    # params" and "kv_transfer_params")
    stems = _stems(old.words) & _stems(new.words) if loose else set()
    if not old.words & new.words and not stems and not force:
        return None
    if old.functions & new.functions and not _namesakes(old, new):
        place = 1.0
    elif old.paths & new.paths:
        place = 0.5
    else:
        place = 0.0
    releveled = retyped and old.kind == new.kind == "log" and place == 1
    if releveled:
        retyped = False  # a log line's level changed in its own function (INFO to WARNING)
    if retyped and old.literal != new.literal and place < 1 and not force:
        return None  # another exception in other words, elsewhere: another check
    guard = 1.0 if old.guards & new.guards else _jaccard(old.guard_names, new.guard_names)
    both = old.names & new.names
    names = _jaccard(old.names, new.names) if len(both) >= 2 else 0.0
    if (
        not place
        and guard < 0.5
        and names < 0.5
        and _jaccard(old.words, new.words) < 0.25
        and not force
    ):
        return None  # nothing in common but a few words: not worth comparing the texts
    matcher = SequenceMatcher(None, old.tokens, new.tokens, autojunk=False)
    floor = 0.15 if loose else 0.2 if names >= 0.5 else 0.3
    if matcher.quick_ratio() < floor and len(stems) < 2 and not force:
        return None
    text, holes = matcher.ratio(), _jaccard(old.holes, new.holes)
    pair = _swapped_pair(matcher, old.tokens, new.tokens)
    found = Comparison(old, new, text, place, guard, holes, pair is not None, retyped, names)
    found.renamed = pair is not None and _renamed_owner(old, new, pair)
    found.setting_renamed = pair is not None and _renamed_setting(old, new, pair)
    found.releveled = releveled
    found.guarded = _guard_named(old, new)
    found.carried = carried(old, new)
    found.covers = covers(old, new)
    found.setting_tested = setting_tested(old, new)
    if loose:
        lower = SequenceMatcher(None, _lower(old.tokens), _lower(new.tokens), autojunk=False)
        found.nocase = lower.ratio()
        found.kept = kept_words(old, new)
    return found


def _namesakes(old: Features, new: Features) -> bool:
    """Whether the two checks share a function only by a name many classes give a method
    (`__init__`, `forward`), in methods of other classes: SGLang's `HostKVCache.__init__`
    and a paged pool's `__init__` in the same file are two functions, not one place."""
    mine, theirs = _methods(old.qualified), _methods(new.qualified)
    if not mine or not theirs or mine & theirs or old.qualified & new.qualified:
        return False
    shared = {f.rpartition(":")[2] for f in old.functions & new.functions}
    return bool(shared) and shared <= _GENERIC_METHODS


def _nearby(found: "Comparison") -> bool:
    """Whether the new check's file is in the old one's folder or a folder holding it
    (`quark/schemes/quark_ocp_mx.py` and `quark/quark.py`): the same package."""
    for a in found.old.paths:
        for b in found.new.paths:
            x = a.removeprefix("python/").rpartition("/")[0]
            y = b.removeprefix("python/").rpartition("/")[0]
            # a top folder (vllm/model_executor/, sglang/srt/) says nothing: three levels
            deep = min(x.count("/"), y.count("/")) >= 2
            if deep and (x == y or x.startswith(y + "/") or y.startswith(x + "/")):
                return True
    return False


def kept_words(old: Features, new: Features) -> float:
    """The share of the old text's telling words (four letters or more, not common) the new
    text has, by their stems."""
    telling = {w for w in old.words if len(w) >= 4 and w not in _COMMON}
    theirs = _stems(new.words)
    kept = [w for w in telling if _stems(frozenset([w])) <= theirs]
    return len(kept) / len(telling) if telling else 0.0


def _carried_hole(name: str, theirs: frozenset[str]) -> bool:
    return any(name == other or _same_name(name, other) for other in theirs)


def _telling_hole(name: str) -> bool:
    """A placeholder whose name says which value it is (`chat_template_arg`), not `name`."""
    return "_" in name and len(name) >= 8


def carried(old: Features, new: Features) -> float:
    """The share of the old text's placeholders the new text prints, by the same name or a
    name grown (`profiler` and `profiler_type`)."""
    if not old.holes:
        return 0.0
    return sum(_carried_hole(h, new.holes) for h in old.holes) / len(old.holes)


def carries_holes(old: Features, new: Features) -> bool:
    """Whether the new text prints four in five of the old one's values by their names, a
    telling one among them (`Comparison.carries`)."""
    same = old.holes & new.holes
    return len(same) >= 0.8 * len(old.holes) and any(_telling_hole(h) for h in same)


def _constants(text: str) -> frozenset[str] | None:
    """The constants a side of a comparison spells (`'w2'`, `('w1', 'w2')`), or None."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, (tuple, list, set, frozenset)):
        return frozenset(repr(v) for v in value) or None
    return frozenset([repr(value)])


def covers(old: Features, new: Features) -> bool:
    """Whether the old guard refuses a name's value or values (`shard_id != 'w2'`, `x not in
    ('a',)`) that the new guard refuses among more (`shard_id not in ('w1', 'w2', 'w3')`)."""
    refused: list[tuple[str, frozenset[str]]] = []
    for atom in telling_atoms(old.atoms):
        op, _, sides = atom.partition("|")
        if op not in ("!=", "not in") or "|" not in sides:
            continue
        x, y = sides.split("|", 1)
        if op == "!=":
            refused += [(a, c) for a, b in ((x, y), (y, x)) if (c := _constants(b))]
        elif op == "not in" and (c := _constants(y)):
            refused.append((x, c))
    for atom in telling_atoms(new.atoms):
        op, _, sides = atom.partition("|")
        if op != "not in" or "|" not in sides:
            continue
        x, y = sides.split("|", 1)
        values = _constants(y)
        if values and any(
            x == name and re.fullmatch(r"[A-Za-z_][\w.]*", name) and mine < values
            for name, mine in refused
        ):
            return True
    return False


def setting_tested(old: Features, new: Features) -> bool:
    """Whether the new guard tests a setting the old text names (quoted, a flag, an
    environment variable), under that name or a longer one."""
    theirs = {n.lower() for n in new.tested if len(n) >= 6}
    return any(_same_name(mine, other) for mine in old.settings if "_" in mine for other in theirs)


def _stems(words: frozenset[str]) -> set[str]:
    """Words' parts (a snake_case name's words), a plural's final s taken off."""
    out = set()
    for word in words:
        for part in word.split("_"):
            if len(part) >= 2:
                out.add(part[:-1] if len(part) > 4 and part.endswith("s") else part)
    return out


def same_condition(old: Features, new: Features) -> bool:
    """Whether two checks are printed by the same function under the very same condition."""
    return bool(old.functions & new.functions and old.guards & new.guards)


def compare_faint(old: Features, new: Features) -> Comparison | None:
    """Two checks of one function under the very same condition, compared though their
    words have too little in common to be compared otherwise (`Comparison.faint`)."""
    if not same_condition(old, new):
        return None
    found = compare(old, new, loose=True)
    if found is not None:
        found.faint = True
    return found


# Method names too common to say that a check moved with its method.
_GENERIC_METHODS = frozenset(
    {"__init__", "__post_init__", "__call__", "forward", "apply", "run", "main", "validate"}
)


def _methods(qualified: frozenset[str]) -> frozenset[str]:
    """Methods by their class and name (`FusedMoE.weight_loader`), not module functions."""
    return frozenset(q for q in qualified if ":" not in q and "." in q)


def moved_with(old: Features, new: Features) -> str:
    """Whether the new check is in a method of the old one's name in another class
    ("method": `CPUExecutor.initialize_cache` and `ExecutorBase.initialize_cache`), or in
    another method of the old one's class ("class"); '' else."""
    mine, theirs = _methods(old.qualified), _methods(new.qualified)
    if mine & theirs:
        return ""
    names = {q.rpartition(".")[2] for q in mine} - _GENERIC_METHODS
    if names & {q.rpartition(".")[2] for q in theirs}:
        return "method"
    owners = {q.rpartition(".")[0].rsplit(".", 1)[-1] for q in mine}
    if owners & {q.rpartition(".")[0].rsplit(".", 1)[-1] for q in theirs}:
        return "class"
    return ""


def base_of(old: Features, new: Features) -> bool:
    """Whether the new check's class is named as a base of the old one's (`Worker` of
    `XPUWorker`): the method the subclass no longer has is the base's, inherited."""
    mine = {q.rpartition(".")[0].rsplit(".", 1)[-1] for q in _methods(old.qualified)}
    theirs = {q.rpartition(".")[0].rsplit(".", 1)[-1] for q in _methods(new.qualified)}
    return any(a != b and len(b) >= 4 and a.endswith(b) for a in mine for b in theirs)


def compare_guard(old: Features, new: Features) -> Comparison | None:
    """Two checks compared on what their guards test and where their methods went, whatever
    their words and exceptions (`Comparison.by_guard`); None when neither says anything."""
    atoms, moved = guard_evidence(old, new), moved_with(old, new)
    if not atoms and not moved and not carries_holes(old, new):
        return None
    found = compare(old, new, loose=True, force=True)
    if found is not None:
        found.atoms, found.moved = atoms, moved
    return found


def _lower(tokens: tuple[str, ...]) -> list[str]:
    return [t.lower() for t in tokens]


def _swapped_pair(
    matcher: SequenceMatcher, a: tuple[str, ...], b: tuple[str, ...]
) -> tuple[str, str] | None:
    """The one token two token lists differ in, when that token names a thing; else None."""
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changes) != 1 or changes[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changes[0]
    if i2 - i1 != 1 or j2 - j1 != 1:
        return None
    pair = (a[i1], b[j1])
    if pair[1] == HOLE:
        return None  # the name became a value printed ("# GPU blocks" then "# {device_name}
        # blocks", from the executors' shared base): the same line made general, no other thing
    if pair[0].lower() == pair[1].lower():
        return None  # the same name in other capitals ("VLLM" -> "vLLM"): no other thing
    if any(re.fullmatch(r"\w*(?:[A-Z]\w*[A-Z]|_|[A-Z]{2})\w*", t) for t in pair):
        return pair
    return None


def _renamed_owner(old: Features, new: Features, pair: tuple[str, str]) -> bool:
    """Whether the one name two texts differ in is the name of the class whose method
    prints them, renamed with it: `MuseGlimmerToolParser._tool_channel_text` printing
    "MuseGlimmer: ..." became `MuseToolParser._tool_channel_text` printing "Muse: ...".
    The same method of the class under its new name: the same check, not a sibling."""
    before, after = pair
    if not _family(before) or _family(before) != _family(after):
        return False  # another model or backend (Bamba for Lfm2Moe, HPU for Tree)
    for a in old.qualified:
        owner, _, method = a.rpartition(".")
        if not owner or ":" in a or before not in owner.rsplit(".", 1)[-1]:
            continue
        renamed = owner.replace(before, after)
        if f"{renamed}.{method}" in new.qualified:
            return True
    return False


def _renamed_setting(old: Features, new: Features, pair: tuple[str, str]) -> bool:
    """Whether the one name two texts differ in is a setting's or a variable's (snake_case:
    `tpu_commons`, `dcp_kv_cache_interleave_size`), and the old guard, that name replaced by
    the new one, is the new guard (`not USE_TPU_COMMONS`, `not USE_TPU_INFERENCE`): the same
    test of a value renamed, not a sibling test of another value."""
    before, after = (name.lower() for name in pair)
    if "_" not in before or "_" not in after:
        return False
    a, b = before.split("_"), after.split("_")
    if a[0] != b[0] and a[-1] != b[-1]:
        return False  # another value, not one renamed (`ngram_prompt_lookup_min` for `..._max`)
    theirs = {g.lower() for g in new.guards}
    if any(before in g.lower() and g.lower().replace(before, after) in theirs for g in old.guards):
        return True
    # ... or the guard tests it by the new name's own last words (`schedule_policy` in the
    # text, `self.policy` in the guard), its old name wholly in the old guard
    for g in old.guards:
        low = g.lower()
        if before not in low:
            continue
        shape = re.escape(low).replace(re.escape(before), r"([a-z_]\w*)")
        for other in theirs:
            found = re.fullmatch(shape, other)
            if found and len(set(found.groups())) == 1 and _same_name(found.group(1), after):
                return True
    return False


def _family(name: str) -> str:
    """A class name's first word, what it is named after: `Mistral` of `MistralToolParser`,
    `Muse` of `MuseGlimmer`, `Quark` of `QuarkW4A4MXFP4`; '' when shorter than 3 letters."""
    found = re.match(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+\d*", name)
    return found.group().lower() if found and len(found.group()) >= 3 else ""


def _guard_named(old: Features, new: Features) -> bool:
    """Whether the new text names every value the old check's condition tested (two or
    more): "regex and json_schema cannot be both set" under `regex is not None and
    json_schema is not None`, and "Only one of regex, json_schema, or ebnf can be set"."""
    names = {n.lower() for n in old.tested if len(n) >= 4}
    return len(names) >= 2 and names <= new.words


@dataclass
class History:
    """Every check of every release scanned, as lineages."""

    releases: list[str]
    lineages: list[Lineage] = field(default_factory=list)
    log: list[dict] = field(default_factory=list)  # every identity decision, with its features

    def live(self) -> list[Lineage]:
        return [lin for lin in self.lineages if not lin.absorbed]


def build(releases: Iterable[tuple[str, list[Site]]]) -> History:
    """The lineages of the checks of these releases (oldest first)."""
    history = History([])
    by_key: dict[tuple[str, str], Wording] = {}
    owner: dict[int, Lineage] = {}  # id(wording) -> its lineage
    born: dict[int, Lineage] = {}  # id(wording) -> the lineage it started
    alive: set[Lineage] = set()
    cache = _Cache()  # every wording is kept by `by_key`, so ids are never reused
    earlier: set[str] = set()  # the functions the release before printed from
    for index, (version, sites) in enumerate(releases):
        history.releases.append(version)
        quiet: dict[str, list[Site]] = {}  # DEBUG lines by their words: they start no check
        for key, found in group_sites(s for s in sites if s.level == DEBUG).items():
            quiet.setdefault(key[1], found)
        sites = [s for s in sites if s.level != DEBUG]
        cache.common.append(common_functions(sites))
        printed_now: list[tuple[int, Wording]] = []  # with the last release that printed it
        for key, found in group_sites(sites).items():
            wording = by_key.get(key)
            if wording is None:
                wording = Wording(key, found, version, version, index, index)
                by_key[key] = wording
                lineage = Lineage([wording], index)
                owner[id(wording)] = born[id(wording)] = lineage
                history.lineages.append(lineage)
            printed_now.append((wording.last_index, wording))
            wording.sites, wording.last, wording.last_index = found, version, index
        _part_side_by_side(history, printed_now, owner, born, version)
        now = {owner[id(wording)] for _, wording in printed_now}
        gone = sorted((lin for lin in alive if lin not in now), key=_order)
        for lin in gone:  # a log line demoted to DEBUG is still printed: the same check
            cur = lin.current
            if cur.site.kind == "log" and cur.key[1] in quiet:
                cur.sites, cur.last, cur.last_index = quiet[cur.key[1]], version, index
                lin.demoted = True
                now.add(lin)
        gone = [lin for lin in gone if lin not in now]
        covering = _by_function(
            [s for s in sites if by_key[s.key].first_index < index]  # printed beside it
        )
        for lin in gone:  # a wording a template of its function prints whole: still printed,
            covered = _cover(lin.current, covering)  # an older wording of that template's check
            if covered is not None:
                _absorb(history, lin, owner[id(by_key[covered])], owner, version, "covered")
        gone = [lin for lin in gone if not lin.absorbed]
        printed = {site.path for site in sites} | {
            s.path for found in quiet.values() for s in found
        }
        classes = {owner_class(s) for s in sites} | {
            owner_class(s) for found in quiet.values() for s in found
        }
        _follow(history, gone, now, version, owner, cache, printed, classes, earlier)
        alive = {owner[id(lin.wordings[0])] for lin in now}
        earlier = {qualified(s) for s in sites if s.function}
    return history


def _fullest_of_one_raise(pairs: list) -> dict[tuple[int, tuple[str, int]], Lineage]:
    """For each old check and each raise statement among its candidates, the candidate with
    the fullest wording there. A message with an optional part (vLLM's KV-cache check adds
    "the estimated maximum model length is N" when N > 0) reads as two templates at one
    line: one check, so the old wording that one of them took over for goes to the one that
    says the most, though the shorter one's fewer words score higher."""
    fullest: dict[tuple[int, tuple[str, int]], Lineage] = {}
    for _, old, new, _ in pairs:
        key = (id(old), _raised_at(new))
        if key not in fullest or len(new.current.template) > len(fullest[key].current.template):
            fullest[key] = new
    return fullest


def _raised_at(lin: Lineage) -> tuple[str, int]:
    return (lin.current.site.path, lin.current.site.line)


def _by_function(sites: list[Site]) -> dict[str, list[Site]]:
    """A release's sites whose templates have placeholders, by qualified function."""
    out: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        if site.function and "{" in site.template:
            out[qualified(site)].append(site)
    return out


def _cover(wording: Wording, covering: dict[str, list[Site]]) -> tuple[str, str] | None:
    """The key of a template printed by the wording's function (its exception, its kind)
    that prints the wording's whole text, a placeholder standing for the part that varies:
    "VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid/mamba models", read once from a
    list of literal pieces, printed now by "... does not yet support: {unsupported}", which
    the release before printed beside it: one site read two ways. The template must say
    most of the wording in its own words. None when there is none."""
    text = wording.template
    for name in sorted({qualified(s) for s in wording.sites if s.function}):
        for site in covering.get(name, []):
            if site.key == wording.key or (site.exception, site.kind) != (
                wording.key[0],
                wording.site.kind,
            ):
                continue
            literal = "".join(seg for seg in template.parse(site.template) if isinstance(seg, str))
            if len(literal) < 20 or len(literal) < 0.4 * len(text):
                continue
            if _pattern(site.template).fullmatch(text):
                return site.key
    return None


def _absorb(
    history: History,
    old: Lineage,
    new: Lineage,
    owner: dict[int, Lineage],
    version: str,
    why: str,
) -> None:
    """Merge a check gone in this release into the one that prints it now: its wordings
    become the new one's older wordings."""
    new.wordings = sorted(old.wordings + new.wordings, key=lambda w: w.first_index)
    new.first_index = min(new.first_index, old.first_index)
    for wording in old.wordings:
        owner[id(wording)] = new
    old.absorbed, old.superseded_by = True, new
    history.log.append(
        {
            "release": version,
            "decision": "same",
            "old": old.current.key[1],
            "new": new.current.key[1],
            "why": why,
        }
    )


@lru_cache(maxsize=1 << 14)
def _pattern(message: str) -> re.Pattern:
    parts = [
        ".+?" if isinstance(seg, template.Hole) else re.escape(seg)
        for seg in template.parse(message)
    ]
    return re.compile("".join(parts), re.S)


def _part_side_by_side(
    history: History,
    printed: list[tuple[int, Wording]],
    owner: dict[int, Lineage],
    born: dict[int, Lineage],
    version: str,
) -> None:
    """Two wordings of one lineage printed by one release are two checks, printed at two
    places: an older wording merged into a check, printed again beside it. The merge that
    joined them is undone (the wording that was printed last before stays with the lineage),
    and the check it took back stands alone again."""
    while True:
        by_lineage: dict[int, list[tuple[int, Wording]]] = defaultdict(list)
        for before, wording in printed:
            by_lineage[id(owner[id(wording)])].append((before, wording))
        clash = next((ws for ws in by_lineage.values() if len(ws) > 1), None)
        if clash is None:
            return
        clash.sort(key=lambda pair: (-pair[0], pair[1].first_index, pair[1].key))
        keep = clash[0][1]
        for _, wording in clash[1:] + clash[:1]:
            other = keep if wording is not keep else clash[1][1]
            if _unmerge(history, wording, other, owner, born, version):
                break
        else:
            return  # no merge joined them (cannot happen: each lineage starts with one)


def _unmerge(
    history: History,
    wording: Wording,
    keep: Wording,
    owner: dict[int, Lineage],
    born: dict[int, Lineage],
    version: str,
) -> bool:
    """Take the lineage `wording` started (with whatever merged into it) out of the
    lineages it was merged into, up to the last one that does not hold `keep`."""
    chain = [born[id(wording)]]
    while chain[-1].absorbed and chain[-1].superseded_by is not None:
        chain.append(chain[-1].superseded_by)
    free = None
    for lin in chain[:-1]:
        if keep not in lin.wordings:
            free = lin
    if free is None:
        return False
    moved = {id(w) for w in free.wordings}
    for lin in chain[chain.index(free) + 1 :]:
        lin.wordings = [w for w in lin.wordings if id(w) not in moved]
        lin.first_index = min(w.first_index for w in lin.wordings)
    for w in free.wordings:
        owner[id(w)] = free
    into = free.superseded_by
    free.absorbed, free.superseded_by = False, None
    history.log.append(
        {
            "release": version,
            "decision": "parted",
            "old": free.current.key[1],
            "new": into.current.key[1] if into is not None else "",
            "why": "both printed by this release",
        }
    )
    return True


def _order(lineage: Lineage) -> tuple:
    """A lineage's place in a stable order, so that the same scans pair checks alike."""
    return lineage.first_index, lineage.wordings[0].key


def _follow(
    history: History,
    gone: list[Lineage],
    now: set[Lineage],
    version: str,
    owner: dict,
    cache: _Cache,
    printed: set[str] = frozenset(),  # type: ignore[assignment]
    classes: set[str] = frozenset(),  # type: ignore[assignment]
    earlier: set[str] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Pair the checks gone in this release with newer checks that took their place
    (`printed`: the files this release prints from; `earlier`: the functions the release
    before printed from)."""
    if not gone:
        return
    index = len(history.releases) - 1
    lost: dict[str, list[Lineage]] = defaultdict(list)  # by qualified function
    for old in gone:
        for name in cache.features(old.current).qualified:
            lost[name].append(old)
    gained: dict[str, list[Lineage]] = defaultdict(list)
    for lin in sorted(now, key=_order):
        if lin.first_index == index:
            for name in cache.features(lin.current).qualified:
                gained[name].append(lin)
    oldest = min(old.first_index for old in gone)
    candidates: dict[tuple[str, str], list[tuple[Lineage, Features]]] = defaultdict(list)
    for lin in sorted(now, key=_order):
        if lin.first_index > oldest:  # only a newer check can take an old one's place
            feats = cache.features(lin.current)
            candidates[(feats.kind, feats.exception)].append((lin, feats))
            candidates[("", feats.literal)].append((lin, feats))  # retyped in the same words
            for where in feats.functions:  # retyped in other words, in its own function
                candidates[("@", where)].append((lin, feats))
        elif lin.current.sites[0].guard and " in " in lin.current.sites[0].guard:
            feats = cache.features(lin.current)  # ... or a refusal beside it all along that
            for where in feats.functions:  # covers its fall-through (`covers`)
                candidates[("@", where)].append((lin, feats))
    functions = {q for lin in now for q in cache.features(lin.current).qualified}
    pairs = []
    for old in gone:
        feats = cache.features(old.current)
        same_type = candidates.get((feats.kind, feats.exception), [])
        seen = {id(lin) for lin, _ in same_type}
        words = candidates.get(("", feats.literal), [])
        others = words + [c for w in feats.functions for c in candidates.get(("@", w), [])]
        retyped = []
        for c in others:
            if id(c[0]) not in seen:
                seen.add(id(c[0]))
                retyped.append(c)
        for new, new_feats in same_type + retyped:
            if new.first_index <= old.first_index and not (
                feats.functions & new_feats.functions and covers(feats, new_feats)
            ):
                continue  # not newer: the two were printed side by side all along (but
                # where the old refusal was a fall-through the other covers: `covers`)
            one_for_one = any(
                lost[name] == [old] and gained[name] == [new]
                for name in feats.qualified & new_feats.qualified
            )
            found = compare(feats, new_feats, loose=one_for_one)
            if not one_for_one and found and found.text < (0.2 if found.named >= 0.5 else 0.3):
                found = None
            if found is None:
                found = compare_faint(feats, new_feats)
            if found is None:
                continue
            found.one_for_one = one_for_one
            # a namesake method in its file, where its own class prints nothing any more: the
            # class renamed (`TorchSDPABackendImpl` to `CPUAttentionBackendImpl`)
            namesake = found.place < 1 and _namesakes(feats, new_feats)
            if (
                namesake
                and feats.paths & new_feats.paths
                and not any(owner_class(s) in classes for s in old.current.sites)
            ):
                found.place = 1.0
            # a class renamed prints nothing under its old name any more
            found.renamed = found.renamed and not any(
                owner_class(s) in classes for s in old.current.sites
            )
            found.file_gone = not feats.paths & printed
            found.function_gone = not feats.qualified & functions
            found.sole_gain = any(
                gained[name] == [new] for name in feats.qualified & new_feats.qualified
            )
            found.appeared = new.first_index == index
            found.alongside = new.first_index <= old.last_index
            # ... and the only copy of those words: no more sites than the old check had
            found.unique = len(words) == 1 and len(new.current.sites) <= len(old.current.sites)
            found.atoms = guard_evidence(feats, new_feats)
            found.moved = moved_with(feats, new_feats)
            pairs.append((found.score, old, new, found))
    pairs.sort(key=lambda p: (-p[0], _order(p[1]), _order(p[2])))
    taken: set[Lineage] = set()
    merged: set[Lineage] = set()
    for _, old, new, found in pairs:
        if old in merged or new in taken or not found.same_check():
            continue
        merged.add(old)
        taken.add(new)
        history.log.append(found.row("same", version))
        new.wordings = sorted(old.wordings + new.wordings, key=lambda w: w.first_index)
        new.first_index = min(new.first_index, old.first_index)
        for wording in old.wordings:
            owner[id(wording)] = new
        old.absorbed, old.superseded_by = True, new
    judged: set[Lineage] = set()
    best: dict[Lineage, Comparison] = {}
    # the same check found elsewhere but taken by another: only a check that took over in
    # the old one's own function is followed then (a sibling of another function in the
    # same file that copied its words is no reason to leave its own function's successor)
    elsewhere: set[Lineage] = set()
    fullest = _fullest_of_one_raise(pairs)  # of a raise that took over, its fullest wording
    # a check moved keeping its words (`Comparison.moved_with_words`) takes over only one for
    # one: where two old checks kept the words of one new check ("Capture draft cuda graph
    # end" and "Capture draft extend cuda graph end"), or one old check those of two, the
    # words do not say which
    moves = [
        (old, new)
        for _, old, new, found in pairs
        if old not in merged and not found.same_check() and found.moved_with_words()
    ]
    deferred: dict[Lineage, tuple[Lineage, Comparison]] = {}
    by_old = defaultdict(set)
    by_new = defaultdict(set)
    for old, new in moves:
        by_old[id(old)].add(id(new))
        by_new[id(new)].add(id(old))
    for _, old, new, found in pairs:  # each check not followed: its best candidate that
        if old in merged or old in judged:  # took over, else the best one, logged
            continue
        best.setdefault(old, found)
        if old in elsewhere and not found.old.qualified & found.new.qualified:
            continue
        if found.same_check():
            if (
                found.place == 1
                and found.guard >= 0.5
                and found.appeared
                and not found.alongside
                and new in taken
            ):
                # Two wordings of its function gone in this release under one condition, one
                # new one in their place: the one merged into it, the other took over by it
                # (a sibling under another test, "For Gemma 2, we downcast ..." beside "For
                # HPU, we cast ...", took over nothing) ("reconstructed
                # serializable fn from standalone compile artifacts" grown by its counts
                # beside another line of that function, in `deserialize_compile_artifacts`)
                judged.add(old)
                old.superseded_by = new
                history.log.append(found.row("superseded", version))
                continue
            if found.place == 1:
                judged.add(old)
            else:
                elsewhere.add(old)
            history.log.append(found.row("same-but-taken", version))
        elif found.took_over(moved=False):
            judged.add(old)
            old.superseded_by = fullest[(id(old), _raised_at(new))]
            history.log.append(found.row("superseded", version))
        elif len(by_old[id(old)]) == len(by_new[id(new)]) == 1 and found.moved_with_words():
            deferred.setdefault(old, (new, found))
    judged |= elsewhere  # the same check found elsewhere: not sought by its guard
    left = [old for old in gone if old not in merged and old not in judged]
    for old, (new, found) in _by_guard(left, now, index, cache, printed, classes, earlier):
        judged.add(old)
        old.superseded_by = new
        history.log.append(found.row("superseded", version))
        best.pop(old, None)
    # moved keeping its words: only where no other rule, by words or by guard, found a check
    # that took over (the KV cache's host pool line went on in its own words elsewhere, not
    # in the Mamba pool's)
    for old, (new, found) in deferred.items():
        if old not in judged:
            judged.add(old)
            old.superseded_by = fullest[(id(old), _raised_at(new))]
            history.log.append(found.row("superseded", version))
            best.pop(old, None)
    for old, found in best.items():
        if old not in judged:
            history.log.append(found.row("different", version))


def _moved_place(found: Comparison) -> None:
    """The same method of the same class, in another file, where the old file prints
    nothing any more: moved with its class (`FusedMoE.weight_loader` from fused_moe/ to
    fused_moe_triton/), the same place."""
    if (
        found.place < 1
        and found.file_gone
        and _methods(found.old.qualified) & _methods(found.new.qualified)
    ):
        found.place = 1.0


def _keys(feats: Features) -> set[tuple[str, str]]:
    """What a check is found by in the guard pass: its comparisons, the words of the values
    they compare (for values spelled alike), its methods' names and classes."""
    out: set[tuple[str, str]] = set()
    for atom in telling_atoms(feats.atoms):
        out.add(("atom", atom))
        op, _, sides = atom.partition("|")
        for side in sides.split("|"):
            words = side.removesuffix("()").split("_")
            if re.fullmatch(r"[A-Za-z_]\w*", side.removesuffix("()")) and len(words) > 1:
                out.add(("first", op + words[0]))
                out.add(("last", op + words[-1]))
    for name in _methods(feats.qualified):
        owner, _, method = name.rpartition(".")
        if method not in _GENERIC_METHODS:
            out.add(("method", method))
        out.add(("class", owner.rsplit(".", 1)[-1]))
    for hole in feats.holes:  # a value printed by name (`Comparison.carries`)
        if _telling_hole(hole):
            out.add(("hole", hole))
    return out


def _by_guard(
    left: list[Lineage],
    now: set[Lineage],
    index: int,
    cache: _Cache,
    printed: set[str],
    classes: set[str],
    earlier: set[str],
) -> list[tuple[Lineage, tuple[Lineage, Comparison]]]:
    """The checks gone in this release that no check took over by its words, each with the
    one that took over by its guard (`Comparison.by_guard`): the best of those, one each."""
    if not left:
        return []
    functions = {q for lin in now for q in cache.features(lin.current).qualified}
    found_by: dict[tuple[str, str], list[Lineage]] = defaultdict(list)
    for lin in sorted(now, key=_order):
        keys = _keys(cache.features(lin.current))
        if lin.first_index != index:  # printed before: a namesake method inherited, a twin
            keys = {k for k in keys if k[0] in ("method", "atom")}
        for key in keys:
            found_by[key].append(lin)
    out = []
    for old in left:
        feats = cache.features(old.current)
        kept = any(owner_class(s) in classes for s in old.current.sites if owner_class(s))
        gone_here = not feats.qualified & functions
        seen: set[int] = set()
        best: tuple[tuple, Lineage, Comparison] | None = None
        for key in sorted(_keys(feats)):
            for new in found_by.get(key, []):
                if id(new) in seen or new is old:
                    continue
                seen.add(id(new))
                new_feats = cache.features(new.current)
                found = compare_guard(feats, new_feats)
                if found is None:
                    continue
                found.file_gone = not feats.paths & printed
                found.appeared = new.first_index == index
                found.alongside = new.first_index <= old.last_index
                found.inherited = found.moved == "method" and kept and gone_here
                found.inherited = found.inherited and base_of(feats, new_feats)
                found.new_method = not new_feats.qualified & earlier
                _moved_place(found)
                if not found.by_guard() or (
                    new.first_index <= old.first_index and not (found.twin() or found.inherited)
                ):
                    continue  # not newer: only a twin that made the same test beside it
                rank = (found.atoms == "same", found.atoms == "alike", found.score)
                if best is None or rank > best[0]:
                    best = (rank, new, found)
        if best is not None:
            out.append((old, (best[1], best[2])))
    return out

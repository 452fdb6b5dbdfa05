"""The static JSON API: one document per error, lists, the schema and its OpenAPI description.

The error document is also what the HTML page is rendered from, so the page and
the API can never disagree.
"""

import ast
import copy
import json
import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache

import orjson

from errorkb import registry as wing_registry
from errorkb import settings, urls
from errorkb.answer import gpu_count, handle_of, why_not
from errorkb.answer import placeholder as _placeholder
from errorkb.content import template
from errorkb.content.derived import CATEGORIES, KINDS, STAGES, emptied, handle, write_pattern
from errorkb.content.load import EACH, load_schema, markdown_fields
from errorkb.content.model import LIVES, Content, Record
from errorkb.content.successors import answer, first_after, lives_on, release_key
from errorkb.site import markup, paging
from errorkb.site.linking import Links, resolve, same_file, same_function
from errorkb.sources.extract import TRANSPARENT_CALLS, expression_name


def error_document(record: Record, content: Content, links: Links) -> dict:
    """The record's fields, its markdown as HTML, and values computed from other records."""
    base = content.site["base_url"]
    project = content.projects[record.project]
    where = record.location
    ref = record.ref or project.ref
    nearby, in_file = same_file(links, record)
    in_function, in_function_count = same_function(links, record)
    if not record.curated:
        # Listed once: the page shows these under the function (a curated page does not) and
        # same_file as it is; repeating them weighed 12 MB over the site's documents.
        listed = {r.id for r in in_function}
        nearby = [r for r in nearby if r.id not in listed]
    doc = {
        "$schema": urls.absolute(base, urls.schema()),
        "schema_version": urls.SCHEMA_VERSION,
        **record.data,
        "url": urls.absolute(base, urls.error_json(record.id)),
        "html_url": urls.absolute(base, urls.error(record.id)),
        "modified": record.modified,
        "html": _html_fields(record),
        "computed": {
            "title": record.title,
            "status": record.status,
            "curated": record.curated,
            "project": {"key": project.key, "name": project.name, "repo": project.repo},
            "ref": ref,
            "source_url": urls.github_blob(project.repo, ref, where.path, where.line),
            "sites": [
                {**_present(site), "url": urls.github_blob(project.repo, ref, site.path, site.line)}
                for site in record.sites
            ],
            "placeholders": template.placeholders(record.message),
            "history": history(record, content, base),
            "removed": removed(record, content, base),
            "related": _listed(links, links.related[record.id], base),
            "engines": _engines(record, content, base),
            "referenced_by": _listed(links, links.referenced_by.get(record.id, []), base),
            "twins": _listed(links, links.twins.get(record.id, []), base),
            "same_file": _listed(links, nearby, base),
            "same_file_count": in_file,
            "same_function": [{**_summary(r, base), "line": r.location.line} for r in in_function],
            "same_function_count": in_function_count,
            "file_html_url": urls.absolute(base, urls.source_file(project.key, where.path)),
            "guides": [
                {
                    "slug": g.slug,
                    "title": g.title,
                    "html_url": urls.absolute(base, urls.guide(g.slug)),
                }
                for g in links.guides.get(record.id, [])
            ],
            "edit_url": urls.github_edit(content.site["repo"], content.site["branch"], record.path),
            "reported": record.reported,
            "reported_count": record.met,
        },
    }
    if record.derived:
        # of a removed record, the check printed today that took over: its settings name
        # the record's own by today's names too, its message its placeholders (renames)
        live, _ = answer(content, record)
        today = live.derived.get("flags", []) if live is not None else []
        doc["computed"]["derived"] = derived_document(record, today, live)
        role = doc["computed"]["derived"].get("divisor")
        if role and record.derived.get("try"):
            doc["html"]["derived_try"] = [markup.markdown(t) for t in divisor_try(record, role)]
    return doc


_CHOOSE = re.compile(r"Choose a `(.+?)` that divides `(.+?)` exactly")
_FIT = re.compile(r"If `(.+?)` comes from the model's configuration, it cannot be changed: fit `")


def divisor_try(record: Record, role: dict) -> list[str]:
    """The derived block's What to try, the divisor's role applied (settings.divisor_setting):
    a divisor the model fixes is never the one to choose (the setting that splits the value
    is, or none is), and one the user sets is named by its option too."""
    div = record.derived["divisibility"]
    value, divisor, setting = div["value"], div["divisor"], role.get("setting") or ""
    out = []
    for line in record.derived["try"]:
        chosen = _CHOOSE.match(line)
        if role["fixed"] and _FIT.match(line):
            continue  # the value is the one the model fixes too: nothing to fit
        if role["fixed"] and chosen:
            if setting or role.get("per_rank"):
                how = f"`{setting}`" if setting.startswith("-") else setting
                line = (
                    f"`{divisor}` is fixed by the model or the checkpoint, not a setting: "
                    f"`{value}` is one GPU's slice, so change {how or 'the tensor parallel size'} "
                    f"instead, until `{value}` is a whole multiple of `{divisor}`."
                )
            else:
                line = (
                    f"`{divisor}` and `{value}` both come from the model or the kernel, not "
                    "from a setting: no setting of the engine changes them here."
                )
        elif chosen and setting.startswith("-"):
            line = line.replace(f"Choose a `{divisor}`", f"Choose a `{setting}` (`{divisor}`)", 1)
        out.append(line)
    return out


def derived_document(
    record: Record, today: list[dict] | None = None, live: Record | None = None
) -> dict:
    """computed.derived: the derived block's keys in words (_derived_labels), and what the
    page and errorkb/answer.py turn values into an answer with: the condition as a relation
    they can test (case_relation), the settings with a value that passes (values_to_try),
    the older wordings' placeholders by the names the tests read (renames; of a removed
    record, also by the names of `live`, the check printed today that took over)."""
    out = _derived_labels(record.derived, today)
    renames = wording_renames(record, live)
    if renames:
        out["renames"] = renames
    relation = case_relation(record)
    if relation:
        out["relation"] = relation
    passes = values_to_try(record)
    if passes:
        out["passes"] = passes
    project = getattr(record, "project", None)
    figures = wing_registry.wing(project).figures(record) if project else None
    if figures:
        out["figures"] = figures
    tests = case_tests(record)
    divisor = divisor_role(record, tests) if hasattr(record, "data") else None
    if divisor:
        out["divisor"] = divisor
    if tests:
        out["tests"] = tests
        found = registry(record)
        read = [t.get("right") for group in tests for t in group]
        if found and found["name"] in read:
            out["registry"] = found
    elif not passes and not record.derived.get("divisibility") and not figures:
        out["why_not"] = why_not(record.derived, out)  # nothing turns values into an answer
    return out


def answer_placeholder(name: str, record: Record) -> str:
    """A quantity's placeholder among the record's (answer.placeholder)."""
    names = {n for text in record.messages for n in template.placeholders(text)}
    return _placeholder(name, names) or name


def divisor_role(record: Record, tests: list[list[dict]] | None = None) -> dict | None:
    """The divisor's role of a divisibility check (settings.divisor_setting), as the
    condition's tests have it where they know better: a divisor they test as a setting
    (`prefix_len % ps`, `ps` printed as --page-size's value) is that setting's, never
    "fixed by the model" beside a test that says to set it (two answers that disagree)."""
    role = settings.divisor_setting(record)
    if not role or not role["fixed"]:
        return role
    div = record.derived["divisibility"]
    shown = answer_placeholder(div.get("divisor_param") or div["divisor"], record)
    for group in case_tests(record) if tests is None else tests:
        for t in group:
            written = (t.get("set") or {}).get("right")
            if t.get("op") == "%" and written and t.get("right") in (shown, div["divisor"]):
                setting = handle_of(written)
                return {"fixed": False, "setting": setting, "gpus": gpu_count(div, setting)}
    return role


def registry(record: Record) -> dict | None:
    """The model architectures the record's engine registers (its wing's `architectures`,
    read from its registry's code), where the record's check is printed by that release:
    {"release", "name" (the local the code holds them in), "items", "suffixes", "note",
    "asset" (the page's copy)}."""
    project = getattr(record, "project", None)
    # A wing by the project's key: no project names another wing today (content/projects).
    wing = wing_registry.wing(project) if project else None
    table = wing.architectures() if wing else None
    last = (record.data.get("versions") or {}).get("last")
    if not wing or not table or not table.get("held_as") or last != table.get("release"):
        return None
    return {
        "release": table["release"],
        "name": table["held_as"][0],
        "items": table["architectures"],
        "suffixes": table.get("suffixes") or [],
        "note": wing.architectures_note(table),
        "asset": wing.architectures_asset(),
    }


def wording_renames(record: Record, live: Record | None = None) -> dict[str, str]:
    """Each placeholder of the record's older wordings that prints what a placeholder of its
    message prints, by its place in both (template.aligned): old name -> the name the tests
    read. Of a removed record, its wordings' placeholders onto the message of the check
    printed today (`live`) too. A name two wordings place differently maps to nothing."""
    pairs = [(old, record.message) for old in record.messages if old != record.message]
    if live is not None:
        pairs += [(old, live.message) for old in record.messages if old != live.message]
    found: dict[str, set[str]] = {}
    placed_in: dict[str, set[str]] = {}  # an old wording -> its names placed in a message
    for old, new in pairs:
        placed = template.aligned(old, new)
        placed_in.setdefault(old, set()).update(placed, template.placeholders(new))
        for name, other in placed.items():
            if template.page_name(name, {other}) != other:  # else the page's own already
                found.setdefault(name, set()).add(other)
    # printed by a wording where it stands for nothing of the messages the tests read
    loose = {n for old, ok in placed_in.items() for n in template.placeholders(old) if n not in ok}
    # A name two wordings use for different things (vLLM's {token_num}: the prompt's tokens
    # in one, prompt and completion in another) maps to nothing: a paste may be of either.
    return {
        name: next(iter(o))
        for name, o in sorted(found.items())
        if len(o) == 1 and name not in loose
    }


def values_to_try(record: Record) -> list[dict]:
    """The settings with a value that passes (derived.flags' `passes`), as the page computes
    it from the values in its address: how the setting is written (`write`, {} for the
    value), its kind in words, and `current`, the placeholder that prints its value."""
    names = set(template.placeholders(record.message))
    out = []
    for entry in record.derived.get("flags", []):
        if "passes" in entry:
            last = re.split(r"[.\[]", entry["name"])[-1]
            out.append(
                {
                    "write": write_pattern(entry),
                    "kind": KINDS.get(entry.get("kind", ""), ""),
                    "current": last if last in names else "",
                    **entry["passes"],
                }
            )
    return out


def _engines(record: Record, content: Content, base: str) -> list[dict]:
    """A stack record's advice per engine, in the record's order: the engine's key and name,
    and its own records the advice names (their titles, for links)."""
    out = []
    for key, advice in record.engines.items():
        engine = content.projects.get(key)
        related = [resolve(content, r) for r in advice.get("related", [])]
        out.append(
            {
                "key": key,
                "name": engine.name if engine else key,
                "related": [_summary(r, base) for r in related],
            }
        )
    return out


def history(record: Record, content: Content, base: str) -> dict | None:
    """The record through the releases scanned: introduced in, each wording and the releases
    that print it (newest first), removed after, and the record that took over; None when the
    record was never followed through releases."""
    if record.versions is None:
        return None
    raised_as = [None] + [
        v.get("exception") if isinstance(v, dict) else None for v in record.data.get("variants", [])
    ]  # a variant's own exception: the check retyped
    current, *older = [
        {"message": text, "first": seen["first"], "last": seen["last"]}
        | ({"exception": exception} if exception else {})
        for (text, seen), exception in zip(record.wordings, raised_as, strict=True)
        if seen is not None
    ]
    older.sort(key=lambda w: release_key(w["last"]), reverse=True)
    wordings = [current, *older]
    first = min((w["first"] for w in wordings), key=release_key)
    successor = content.records.get(record.superseded_by or "")
    return {
        "introduced": first,
        "last": record.versions["last"],
        "removed": record.status == "removed",
        "wordings": wordings,
        "superseded_by": _summary(successor, base) if successor else None,
    }


def removed(record: Record, content: Content, base: str) -> dict | None:
    """For a removed record: the last release that printed it (`after`), the first release
    scanned after that (`since`: None when unknown), the record of the check that took
    over (`successor`, when one is known); and its answer: the releases that printed its
    wordings (`printed`), the check printed today that took over, `superseded_by` followed
    through removed records (`today`: its summary, message and the first release printing
    that message), else the first release that prints none of it, the release to upgrade
    to (`upgrade`). None for a record still printed."""
    if record.status != "removed":
        return None
    last = (record.versions or {}).get("last")
    scanned = content.projects[record.project].releases_scanned
    sid = record.superseded_by or ""
    successor = content.records.get(content.aliases.get(sid, sid))
    live, upgrade = answer(content, record)
    since = first_after(scanned, last)
    today = None
    if live is not None:
        # The first release printing today's wording in place of this one.
        begun = [v for v in ((live.versions or {}).get("first"), since) if v]
        today = {
            **_summary(live, base),
            "message": live.message,
            "since": max(begun, key=release_key) if begun else None,
        }
    return {
        "after": last,
        "since": since,
        "successor": _summary(successor, base) if successor else None,
        "printed": _printed(record),
        "today": today,
        "upgrade": upgrade,
        "lives": lives_on(content, record),
    }


def _printed(record: Record) -> dict | None:
    """The releases that printed any of a record's wordings, {first, last}; None when it
    was never followed through releases."""
    seen = [s for _, s in record.wordings if s is not None]
    if not seen:
        return None
    return {
        "first": min((s["first"] for s in seen), key=release_key),
        "last": max((s["last"] for s in seen), key=release_key),
    }


def answer_document(record: Record, content: Content) -> dict:
    """What the page of an old wording shows of the check printed today that took over
    (`record`): its fields, its Markdown as HTML, and the computed values its explanation,
    Your case and calculator need. Not a whole document: the page links the check's own."""
    base = content.site["base_url"]
    computed: dict = {
        "title": record.title,
        "status": record.status,
        "curated": record.curated,
        "project": {"key": record.project, "name": content.projects[record.project].name},
    }
    if record.derived:
        computed["derived"] = derived_document(record)
    return {
        **record.data,
        "html_url": urls.absolute(base, urls.error(record.id)),
        "html": _html_fields(record),
        "computed": computed,
    }


def _derived_labels(derived: dict, today: list[dict] | None = None) -> dict:
    """What the derived stage and category keys mean, in words, and each setting as the user
    writes it with its kind in words; with `today`, the flags of the check printed today
    that took over from this removed record: a setting it names otherwise (the same field
    or name, another handle: renamed since) has today's handle beside it."""
    out: dict = {}
    if derived.get("stage") in STAGES:
        out["stage"] = STAGES[derived["stage"]]
    if derived.get("category") in CATEGORIES:
        out["category"] = CATEGORIES[derived["category"]]
    if derived.get("flags"):
        out["settings"] = [
            {"handle": handle(f), "kind": KINDS.get(f.get("kind", ""), "")}
            | _renamed(f, today or [])
            for f in derived["flags"]
        ]
    return out


def _renamed(flag: dict, today: list[dict]) -> dict:
    """{"today": handle} when today's flags hold this setting (the same field, else the same
    name) under another handle; else {}."""
    for key in ("field", "name"):
        same = [f for f in today if flag.get(key) and f.get(key) == flag[key]]
        if same:
            now = handle(same[0])
            return {"today": now} if now != handle(flag) else {}
    return {}


_OPS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def _comparison(node: ast.expr | None) -> tuple[ast.expr, str, ast.expr] | None:
    """One comparison of a condition as (left, symbol, right): a comparison of _OPS, or
    `a % b != 0` as (a, "%", b), left not a multiple of right; None for anything else."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, type(node.ops[0]), node.comparators[0]
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod):
        if op is not ast.NotEq or not (isinstance(right, ast.Constant) and right.value == 0):
            return None
        return left.left, "%", left.right
    return (left, _OPS[op], right) if op in _OPS else None


def case_relation(record: Record) -> dict | None:
    """The derived condition as a relation the page can test on the values in its address:
    {"left", "op", "right"}, each side a placeholder's name or an integer, op a comparison or
    "%" (left is not a multiple of right). None unless the condition is one such test over
    the message's own placeholders (a name matches by its last part: `self.tp_size` is
    `tp_size`)."""
    compared = _comparison(_condition(record.derived.get("condition") or ""))
    if compared is None:
        return None
    left, symbol, right = compared
    names = set(template.placeholders(record.message))
    sides = [_side(side, names) for side in (left, right)]
    if None in sides or not any(isinstance(side, str) for side in sides) or sides[0] == sides[1]:
        return None
    return {"left": sides[0], "op": symbol, "right": sides[1]}


# A quantity the code holds in one unit and the message prints in another: `free_memory`
# (bytes) printed as `{free_memory_gib}`. Two sides compare only in the same unit.
_UNITS = ("_gib", "_gb", "_mib", "_mb", "_kib", "_kb", "_bytes")


def case_tests(record: Record) -> list[list[dict]]:
    """The derived conditions (the record's, then its old wordings' own) as tests the page
    and errorkb/answer.py run on the values in the address: per condition, its comparisons of
    the message's values (a condition is raised when all of its `and` parts hold; each
    comparison that can be tested is one test): {"left", "op", "right"}, a side a
    placeholder's name or a number, op a comparison or "%" (left is not a multiple of right);
    `set`: the sides the user sets, each as they write it (`--max-model-len {}`). A name
    matches a placeholder by its last part, or by that part and a unit (`free_memory` is
    `{free_memory_gib}`, when the other side is in the same unit)."""
    names = {n for text in record.messages for n in template.placeholders(text)}
    params = record.data.get("params") or {}
    whole = frozenset(
        n for n, p in params.items() if isinstance(p, dict) and p.get("type") == "int"
    )
    renamed = frozenset(wording_renames(record))  # an older wording's, read by today's names
    blocks = [record.derived] + [
        v["derived"]
        for v in record.data.get("variants", [])
        if isinstance(v, dict) and v.get("derived")
    ]
    near = beside(record.messages, [f for block in blocks for f in block.get("flags", [])])
    groups, seen = [], set()
    for block in blocks:
        # a condition too long to quote: its comparisons of printed values (`compares`)
        test = _condition(block.get("condition") or " and ".join(block.get("compares") or []))
        printed = block.get("printed") or {}
        parts = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        settings = {
            part: write_pattern(f)
            for f in block.get("flags", [])
            if f.get("kind") != "model-config"
            for part in (_last(f.get("name", "")), _last(f.get("field", "")))
            if part
        }
        # a placeholder the message prints right after a setting's name prints its value
        # (`--dsa-triton-union {union}`, `prefill_schedule_interval={x}`): that setting
        # (of any wording's block: a setting is the same one in every wording)
        settings.update({p: w for p, w in near.items() if p not in settings})
        spelled = (block.get("collections") or {}, block.get("lookups") or {})
        held = (
            set((registry(record) or {}).get("name", "").split())
            if block is record.derived
            else set()
        )
        group = [
            t
            for t in (
                _test(p, names | held, settings, printed, whole, renamed, spelled)
                for p in parts
                if p
            )
            if t
        ]
        key = json.dumps(group, sort_keys=True)
        if group and key not in seen:
            seen.add(key)
            groups.append(group)
    return groups


_BESIDE = r"(?:\s*=\s*|\s+\(?|\s*\()[`'\"]?\{(\w+)\}"  # `--x {v}`, `x={v}`, `x ({v})`


def beside(messages: list[str], flags: list[dict]) -> dict[str, str]:
    """The placeholders a message prints a setting's value in: right after the setting as
    the user writes it or as the code names it (`--x {v}`, `--x={v}`, `x={v}`, `x ({v})`,
    quoted or not), where the message names it before one value only; or, in a message that
    starts with the setting and says it must be something, the one value it says it got
    (`--x must be positive, got {v}`): placeholder -> how the setting is written
    (derived.write_pattern). A placeholder two settings claim is neither's."""
    found: dict[str, set[str]] = {}
    for f in flags:
        if f.get("kind") == "model-config":
            continue
        named = (f.get("flag"), f.get("env"), f.get("name"), _last(f.get("field") or ""))
        spelled = {str(s) for s in named if s and re.fullmatch(r"[-\w.]{3,}", str(s))}
        for message in messages:
            for s in spelled:
                if s not in message:
                    continue  # neither pattern can match: spare the search
                after, must_got = _setting_patterns(s)
                # named before two values (`page_size={a} ... ori page_size={b}`): which?
                right = list(after.finditer(message))
                must = must_got.match(message)
                one = len(template.placeholders(message)) == 1
                for m in ([right[0]] if len(right) == 1 else []) + ([must] if one else []):
                    if m:
                        found.setdefault(m[1], set()).add(write_pattern(f))
    return {p: next(iter(w)) for p, w in found.items() if len(w) == 1}


@lru_cache(maxsize=1 << 12)
def _setting_patterns(setting: str) -> tuple[re.Pattern, re.Pattern]:
    """beside's two patterns for a setting: its value right after it, and `<setting> must
    ... got {v}`. Compiled once a process: the same settings recur over thousands of
    records, more patterns than re's own cache keeps (compiling them again and again cost
    a cold build 2 s)."""
    at = r"(?<![-\w.])" + re.escape(setting) + r"(?![-\w])"
    must = r"`?" + at + r"`? must\b.*\bgot:? [`'\"]?\{(\w+)\}"
    return re.compile(at + _BESIDE), re.compile(must)


def _last(name: str) -> str:
    return re.split(r"[.\[]", name.strip("-").replace("-", "_"))[-1]


def _test(
    node: ast.expr,
    names: set[str],
    settings: dict[str, str],
    printed: dict | None = None,
    whole: frozenset[str] = frozenset(),
    renamed: frozenset[str] = frozenset(),
    spelled: tuple[dict, dict] = ({}, {}),
) -> dict | None:
    """One comparison of a condition as a test of the values (case_tests), else None; or a
    setting the condition compares with a constant ({"setting", "op", "value"}: raised only
    with it so), or the GPU's compute capability the message prints in two placeholders.
    `spelled`: the collections the code holds in a name, and its lookups of a key in one
    (derived.collections, derived.lookups)."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        # alternatives, each a test of printed values: raised when one of them holds
        subs = [_test(v, names, settings, printed, whole, renamed, spelled) for v in node.values]
        if all(s and "setting" not in s and s["op"] != "or" for s in subs):
            return {"op": "or", "any": subs}
        return None
    capability = _capability(node, names)
    if capability:
        return capability
    collections, lookups = spelled
    looked = _lookup(node, lookups)
    if looked is not None:  # `not found` where found = TABLE.get(key): key not in TABLE
        node = looked
    way = _setting_test(node, names, settings, collections)
    if way:
        return way
    member = _membership(node, names, settings, collections, printed) or _any_member(node, names)
    if member:
        return member
    found = _truthiness(node, names, printed) or _versions(node, names, printed)
    if found:
        return found
    compared = _comparison(node)
    if compared is None:
        return None
    left, symbol, right = compared
    sides = [_unit_side(side, names, printed) for side in (left, right)]
    if None in sides or not any(isinstance(side[0], str) for side in sides):  # type: ignore[index]
        return None
    (a, ua, ca), (b, ub, cb) = sides  # type: ignore[misc]
    if ua != ub:
        return None  # bytes against GiB, or a constant in the code's unit
    if a == b:
        return None  # two values of one name (`block.size < size`): the message prints one
    out: dict = {"left": a, "op": symbol, "right": b}
    written = {
        k: settings[c] if c in settings else settings[str(p)]
        for k, c, p in (("left", ca, a), ("right", cb, b))
        if c in settings or (isinstance(p, str) and p in settings)
    }
    if written:
        out["set"] = written
    elif symbol in (">", ">=", "<", "<=") and isinstance(a, str) and isinstance(b, str):
        # A setting the message prints beside them, which may scale a side (the memory
        # requested is --gpu-memory-utilization × the total): answer.py checks on the
        # values whether it does, by which other value (`by`).
        # Not a whole number (a fraction scales); an old wording's `x_div_GiB_bytes` is the
        # page's `x` (answer.page_values), and its renamed ones today's: each named once.
        shown = {n for n in names if template.page_name(n, names - {n}) == n} - renamed
        scale = {
            n: {"write": settings[n], "by": sorted(shown - {n, a, b})}
            for n in sorted(shown)
            if n in settings and n not in (a, b) and n not in whole
        }
        if scale:
            out["scale"] = scale
    return out


def _printed_name(node: ast.expr, names: set[str], printed: dict | None) -> str | None:
    """The placeholder a name or attribute of the condition prints as: its own last part,
    or the one `printed` gives the expression (unparsed only where there is one: unparsing
    every part of every condition took 2% of a cold build), or the name the extractor gives
    a computed side."""
    shown = printed.get(re.sub(r"\s+", " ", ast.unparse(node))) if printed else None
    shown = shown if shown in names else _named_as(node, names)
    if shown in names:
        return shown
    if isinstance(node, ast.Name | ast.Attribute):
        last = node.id if isinstance(node, ast.Name) else node.attr
        return last if last in names else None
    return None


def _whole_name(node: ast.expr) -> bool:
    """Whether the extractor's name of the expression says all of it, so that two
    expressions of one name print one value: names and attributes; `len(x)` and the like of
    one such argument; a call without arguments named after its function; `.get('key')`;
    `x[0]`, `x['key']`; `a - b` of two such (not `a - 1`: a number is named `value`,
    whichever it is)."""
    if isinstance(node, ast.Name | ast.Attribute):
        return True
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and _whole_name(node.value)
    if isinstance(node, ast.BinOp):
        return _whole_name(node.left) and _whole_name(node.right)
    if not isinstance(node, ast.Call) or node.keywords:
        return False
    func, args = node.func, node.args
    if not args:  # named after the function, not one that changes what it is called on
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return called not in _NAMED_BY_WHAT_THEY_ARE_CALLED_ON
    if isinstance(func, ast.Name) and func.id in ("len", "sum", "min", "max", "abs"):
        return len(args) == 1 and _whole_name(args[0])
    first = args[0]
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("get", "pop")
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
    )


# Calls without arguments that the extractor names after what they are called on, not after
# themselves (`x.strip()` prints as `x`): their name is not the whole expression's.
_NAMED_BY_WHAT_THEY_ARE_CALLED_ON = TRANSPARENT_CALLS | {"keys", "values", "items"}

# Names the extractor gives an expression it cannot name better: they say nothing of which.
_VAGUE = frozenset({"value", "values", "text"})


def _named_as(node: ast.expr, names: set[str]) -> str | None:
    """The placeholder the message prints this computed expression in, by the name the
    extractor gives a hole that prints it (`len(items)` is `{len_items}`): what `printed`
    says of conditions derived before it was kept (an old release's cached scan). A name
    or attribute is matched by its last part elsewhere; a vague name matches nothing."""
    if not isinstance(node, ast.Call | ast.BinOp | ast.Subscript) or not _whole_name(node):
        return None
    name = expression_name(node)
    return name if name in names and name not in _VAGUE else None


def _truthiness(node: ast.expr, names: set[str], printed: dict | None) -> dict | None:
    """A part that is a printed value alone (`remaining`: the arguments nobody parsed;
    `not kv_cache_groups`): raised when the value is not empty ("truthy"), or when it is
    ("falsy"); answer.py reads the value as Python printed it."""
    negated, inner = _unnegated(node)
    name = _printed_name(inner, names, printed)
    return {"left": name, "op": "falsy" if negated else "truthy"} if name else None


# The calls that read a version text (`packaging.version.parse`, `Version`, pkg_resources').
_VERSION_CALLS = {"parse", "Version", "parse_version", "LooseVersion", "StrictVersion"}


def _versions(node: ast.expr, names: set[str], printed: dict | None) -> dict | None:
    """`pkg_version.parse(installed_version) < pkg_version.parse(min_version)` where the
    message prints both versions: a version comparison ("v<"), which answer.py decides where
    the two releases differ, or both read alike."""
    compared = _comparison(node)
    if compared is None:
        return None
    left, symbol, right = compared
    sides = []
    for side in (left, right):
        if not isinstance(side, ast.Call) or len(side.args) != 1 or side.keywords:
            return None
        call = side.func
        called = call.id if isinstance(call, ast.Name) else getattr(call, "attr", "")
        if called not in _VERSION_CALLS:
            return None
        sides.append(_printed_name(side.args[0], names, printed))
    if None in sides or sides[0] == sides[1]:
        return None
    return {"left": sides[0], "op": "v" + symbol, "right": sides[1]}


def _lookup(node: ast.expr, lookups: dict) -> ast.expr | None:
    """`not found` or `found is None` where the code looked a key up in a constant dict
    (derived.lookups): the membership test it stands for, `key not in [...]`."""
    name = emptied(node)
    found = lookups.get(name.id) if name is not None else None
    if not isinstance(found, dict):
        return None
    key = _condition(found.get("key") or "")
    items = found.get("in")
    if not isinstance(key, ast.Name | ast.Attribute) or not isinstance(items, list):
        return None
    listed = ast.List([ast.Constant(i) for i in items], ast.Load())
    return ast.Compare(key, [ast.NotIn()], [listed])


def _membership(
    node: ast.expr,
    names: set[str],
    settings: dict[str, str],
    collections: dict | None = None,
    printed: dict | None = None,
) -> dict | None:
    """`quantization not in supported_quantization` where the message prints both: the value
    and the collection it must (or must not) be in, as the code held them (a dict printed by
    its keys, `{d.keys()}`, holds what `in d` tests). The values decide it where the printed
    collection is whole (answer.py)."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    op = {ast.In: "in", ast.NotIn: "not in"}.get(type(node.ops[0]))
    left, right = node.left, node.comparators[0]
    text = isinstance(right, ast.Constant) and isinstance(right.value, str)
    if text and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        # a printed value compared with a text (`task_option == 'score'`): one of [that]
        op = "in" if isinstance(node.ops[0], ast.Eq) else "not in"
        right = ast.List([right], ast.Load())
    if not op or not isinstance(left, ast.Name | ast.Attribute):
        return None
    a = left.id if isinstance(left, ast.Name) else left.attr
    a = (printed or {}).get(ast.unparse(left), a)  # printed under another name (`{type}`)
    choices = _choices(right) or _spelled(right, collections)
    if choices is not None and a in names:  # a collection the code spells out
        out: dict = {"left": a, "op": op, "right": choices}
        if a in settings and not any(str(c).startswith("torch.") for c in choices):
            out["set"] = {"left": settings[a]}  # (a dtype is not written as torch prints it)
        return out
    if not isinstance(right, ast.Name | ast.Attribute):
        return None
    b = right.id if isinstance(right, ast.Name) else right.attr
    b = b if b in names else b + "_keys" if b + "_keys" in names else ""
    if a not in names or not b or a == b:
        return None
    out = {"left": a, "op": op, "right": b}
    if a in settings:
        out["set"] = {"left": settings[a]}
    return out


def _unnegated(node: ast.expr) -> tuple[bool, ast.expr]:
    """Whether a test is `not ...`, and what it negates (else the test itself)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True, node.operand
    return False, node


def _any_member(node: ast.expr, names: set[str]) -> dict | None:
    """`not any(arch in supported for arch in architectures)` where the message prints both
    collections: raised when none of the first's items is in the second ("none in"); without
    `not`, when one is ("some in"). The values decide it where both printed are whole."""
    negated, call = _unnegated(node)
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "any"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.GeneratorExp | ast.ListComp)
        and len(call.args[0].generators) == 1
    ):
        return None
    gen = call.args[0]
    loop, test = gen.generators[0], gen.elt
    if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name):
        return None
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and isinstance(test.left, ast.Name)
        and test.left.id == loop.target.id
    ):
        return None
    sides = [loop.iter, test.comparators[0]]
    found = [
        _last(ast.unparse(s)) if isinstance(s, ast.Name | ast.Attribute) else "" for s in sides
    ]
    a, b = found[0], found[1] if found[1] in names else found[1] + "_keys"
    if a not in names or b not in names or a == b:
        return None
    return {"left": a, "op": "none in" if negated else "some in", "right": b}


def _spelled(node: ast.expr, collections: dict | None) -> list | None:
    """The items of a collection the code holds in a name (derived.collections)."""
    found = (collections or {}).get(re.sub(r"\s+", " ", ast.unparse(node)))
    return found if isinstance(found, list) and found else None


def _choices(node: ast.expr) -> list | None:
    """A literal collection of the condition (`(64, 128, 256)`, `{'fl2va', 'ref2va'}`), its
    items as printed: numbers, strings, torch dtypes as `torch.float16`; None for anything
    else (an enum's members print as the enum chooses)."""
    if not isinstance(node, ast.Tuple | ast.List | ast.Set) or not node.elts:
        return None
    out: list = []
    for e in node.elts:
        if isinstance(e, ast.Constant) and type(e.value) in (int, float, str):
            out.append(e.value)
        elif (
            isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "torch"
        ):
            out.append(f"torch.{e.attr}")
        else:
            return None
    return out


def _capability(node: ast.expr, names: set[str]) -> dict | None:
    """`not current_platform.has_device_capability(80)` with the message's
    `{compute_capability_0}.{compute_capability_1}`: the GPU's capability is below 8.0."""
    negated, call = _unnegated(node)
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "has_device_capability"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Constant)
        and type(call.args[0].value) is int
    ):
        return None
    major = sorted(n for n in names if n.endswith("capability_0"))
    minor = [n[:-1] + "1" for n in major if n[:-1] + "1" in names]
    if not minor:
        return None
    side = {"major": minor[0][:-1] + "0", "minor": minor[0]}
    return {"left": side, "op": "<" if negated else ">=", "right": call.args[0].value}


def _constant(node: ast.expr) -> object:
    """A constant the code compares a setting with: a literal, an enum's member by its name
    (`_Backend.FLASH_ATTN`), a torch dtype (`torch.bfloat16`: bfloat16); a tuple or list of
    them; else None (`args.model` is another value, not a constant)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float):
        return node.value
    if isinstance(node, ast.Attribute) and (
        node.attr.isupper() or (isinstance(node.value, ast.Name) and node.value.id == "torch")
    ):
        return node.attr
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        found = [_constant(e) for e in node.elts]
        return None if None in found or any(isinstance(f, list) for f in found) else found
    return None


def _setting_test(
    node: ast.expr, names: set[str], settings: dict[str, str], collections: dict | None = None
) -> dict | None:
    """A part of the condition over one setting alone, which the message does not print:
    `dtype == torch.bfloat16` (raised only with it so), `not self.allow_auto_truncate`."""

    def setting(n: ast.expr) -> str | None:
        if not isinstance(n, ast.Name | ast.Attribute):
            return None
        last = n.id if isinstance(n, ast.Name) else n.attr
        return settings.get(last) if last not in names else None

    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        write = setting(node.operand)
        return {"setting": write, "op": "off"} if write else None
    if setting(node):
        return {"setting": setting(node), "op": "on"}
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    ops = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "=="}
    op = ops.get(type(node.ops[0]))
    write, value = setting(node.left), _constant(node.comparators[0])
    if op and op.endswith("in") and not isinstance(value, list):  # a collection the code names
        value = _spelled(node.comparators[0], collections)
    if not op or not write or value is None or isinstance(value, list) != op.endswith("in"):
        return None
    return {"setting": write, "op": op, "value": value}


def _unit_side(
    node: ast.expr, names: set[str], printed: dict | None = None
) -> tuple[object, str, str] | None:
    """A side of a test: (a placeholder's name or a number, its unit suffix, the code's
    name), else None; an expression the message prints under another name (`printed`:
    `quant_config.get_min_capability()` is `{min_capability}`) is that placeholder."""
    shown = (printed or {}).get(re.sub(r"\s+", " ", ast.unparse(node)))
    shown = shown if shown in names else _named_as(node, names)
    if shown in names:
        return shown, "", shown
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _unit_side(node.operand, names)
        return (-inner[0], "", "") if inner and isinstance(inner[0], int | float) else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value, "", ""
    if isinstance(node, ast.Name | ast.Attribute):
        last = node.id if isinstance(node, ast.Name) else node.attr
        if last in names:
            return last, "", last
        for unit in _UNITS:
            if last + unit in names:
                return last + unit, unit, last
    return None


@lru_cache(maxsize=1 << 14)
def _condition(text: str) -> ast.expr | None:
    """A condition's expression (read, never changed), parsed once: a condition recurs in
    each release's twin of a record."""
    # "RuntimeError was raised": the extractor's words for an except branch, not Python.
    text = re.sub(r"\b[\w.]+ was raised\b", "_raised", text)
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    # `(x := f()) > y` compares x: an assignment expression is the name it binds, which
    # is the value it holds (and the name the message prints it by)
    return _Unbound().visit(tree)


class _Unbound(ast.NodeTransformer):
    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        return ast.Name(id=node.target.id, ctx=ast.Load())


def _side(node: ast.expr, names: set[str]) -> str | int | None:
    """A placeholder's name or an integer constant, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name | ast.Attribute):
        last = node.id if isinstance(node, ast.Name) else node.attr
        return last if last in names else None
    return None


def _present(value: object) -> dict:
    """A dataclass's fields that have a value, as the record's file would hold them."""
    return {k: v for k, v in vars(value).items() if v is not None}


def _html_fields(record: Record) -> dict:
    """Every Markdown field the record has, rendered: html.<field> (a list for a list field,
    html.<field>_<part> for a part of an object field), and html.params.<name> for each
    placeholder's `about`, rendered inline as it is shown in a line of a table; and
    html.engines.<engine>, the same of each engine's advice."""
    out = _html_of(record.data, markdown_fields())
    if record.engines:
        advice_fields = markdown_fields("engine_advice")
        out["engines"] = {e: _html_of(a, advice_fields) for e, a in record.engines.items()}
    params = {
        name: markup.markdown_inline(param.about)
        for name, param in record.params.items()
        if param.about is not None
    }
    if params:
        out["params"] = params
    return out


def _html_of(data: dict, fields: list[tuple[str, ...]]) -> dict[str, object]:
    """The Markdown fields of data rendered, each under its path joined by _."""
    out: dict[str, object] = {}
    for path in fields:
        value = _rendered(data, path)
        if value is not None:
            out["_".join(name for name in path if name != EACH)] = value
    return out


def _rendered(value: object, path: tuple[str, ...]) -> object:
    """The Markdown at `path` in value as HTML (a list where the path passes a list), or
    None where the value has no such field."""
    if not path:
        return markup.markdown(value) if isinstance(value, str) else None
    if path[0] == EACH:
        return [_rendered(item, path[1:]) for item in value] if isinstance(value, list) else None
    if isinstance(value, dict) and path[0] in value:
        return _rendered(value[path[0]], path[1:])
    return None


def _listed(links: Links, records: list[Record], base: str) -> list[dict]:
    """How a document lists these records: each one's summary made once a build and shared
    by every document that lists it (a fifth of making the documents went to them)."""
    made = links.summaries
    return [made.get(r.id) or made.setdefault(r.id, _summary(r, base)) for r in records]


def _summary(record: Record, base: str) -> dict:
    """How other documents refer to a record."""
    out = {
        "id": record.id,
        "project": record.project,
        "exception": record.exception,
        "title": record.title,
        "url": urls.absolute(base, urls.error_json(record.id)),
        "html_url": urls.absolute(base, urls.error(record.id)),
    }
    if record.summary:
        out["summary"] = record.summary
    return out


def dumps(doc: object) -> bytes:
    """Stable JSON: sorted keys, so the same content gives the same bytes. Compact: tools
    parse it and browsers pretty-print it (and a third smaller). orjson writes the same bytes
    as json.dumps(ensure_ascii=False, sort_keys=True) 3.4x faster, straight to UTF-8."""
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def record_files(rid: str, doc: dict) -> list[tuple[str, bytes]]:
    """A record's JSON document."""
    return [(urls.error_json(rid), dumps(doc))]


def api_files(content: Content, links: Links) -> Iterator[tuple[str, bytes]]:
    """The files under /api/ that are not one record's document."""
    for alias in sorted(content.aliases):
        yield urls.error_json(alias), alias_file(content, links, alias)
    for key in content.projects:
        yield from project_files(content, links, key).items()
    yield from site_api_files(content, links)


def alias_file(content: Content, links: Links, alias: str) -> bytes:
    """The document of an alias: its record's, saying which alias it was asked by."""
    doc = error_document(content.records[content.aliases[alias]], content, links)
    return dumps({**doc, "alias": alias})


def project_files(content: Content, links: Links, key: str) -> dict[str, bytes]:
    """A project's document, in its pages (paging.project_page_urls)."""
    pages = paging.project_pages(
        project_document(content, links, key), key, content.site["base_url"]
    )
    return {url: dumps(page) for url, page in pages}


def site_api_files(content: Content, links: Links) -> Iterator[tuple[str, bytes]]:
    """The index of the API, its schemas and its not-found answer."""
    base = content.site["base_url"]
    yield urls.api_index(), dumps(index_document(content, links))
    yield urls.schema(), dumps(error_document_schema(base))
    yield urls.record_schema(), dumps(record_schema(base))
    yield urls.openapi(), dumps(openapi_document(base))
    not_found = {
        "schema_version": urls.SCHEMA_VERSION,
        "status": 404,
        "error": "not found",
        "index": urls.absolute(base, urls.api_index()),
    }
    yield urls.api_not_found(), dumps(not_found)


def index_document(content: Content, links: Links) -> dict:
    base = content.site["base_url"]
    return {
        "schema_version": urls.SCHEMA_VERSION,
        "title": content.site["title"],
        "count": len(content.records),
        "projects": [
            {
                "key": key,
                "name": project.name,
                "repo": project.repo,
                "count": sum(len(recs) for recs in links.by_file.get(key, {}).values()),
                "url": urls.absolute(base, urls.project_json(key)),
                "html_url": urls.absolute(base, urls.project(key)),
            }
            for key, project in content.projects.items()
        ],
        "guides": [
            {"slug": g.slug, "title": g.title, "html_url": urls.absolute(base, urls.guide(g.slug))}
            for g in content.guides
        ],
        "schema": urls.absolute(base, urls.schema()),
        "record_schema": urls.absolute(base, urls.record_schema()),
        "openapi": urls.absolute(base, urls.openapi()),
    }


def project_document(content: Content, links: Links, key: str) -> dict:
    base = content.site["base_url"]
    project = content.projects[key]
    files = links.by_file.get(key, {})
    return {
        "schema_version": urls.SCHEMA_VERSION,
        "key": key,
        "name": project.name,
        "repo": project.repo,
        "ref": project.ref,
        "releases_scanned": project.releases_scanned,
        "count": sum(len(recs) for recs in files.values()),
        "errors": [project_row(rec, path, base) for path, recs in files.items() for rec in recs],
    }


def project_row(record: Record, path: str, base: str) -> dict:
    """A record's line in its project's document."""
    return {
        **_summary(record, base),
        "path": path,
        "line": record.location.line,
        "modified": record.modified,
    }


def with_row(page: bytes, record: Record, base: str) -> bytes:
    """A page of a project's document (its bytes) with the record's line made anew: an edit
    of what the line shows of it changes nothing else in the page."""
    doc = json.loads(page)
    doc["errors"] = [
        project_row(record, row["path"], base) if row["id"] == record.id else row
        for row in doc["errors"]
    ]
    return dumps(doc)


def record_schema(base_url: str) -> dict:
    """The record schema as the site publishes it, identified by its address there."""
    return {**load_schema(), "$id": urls.absolute(base_url, urls.record_schema())}


def error_document_schema(base_url: str) -> dict:
    """JSON Schema of an error document: the record schema plus the computed fields. The one
    schema of /api/errors/<id>.json: published on its own, and the OpenAPI file's
    ErrorDocument."""
    schema = copy.deepcopy(load_schema())
    own_url = urls.absolute(base_url, urls.schema())
    schema["$id"] = own_url
    schema["title"] = "errorkb error document"
    schema["description"] = (
        "What /api/errors/<id>.json holds: an error record (its schema: "
        f"{urls.absolute(base_url, urls.record_schema())}), its markdown rendered to HTML, "
        "and values computed from other records."
    )
    url = {"type": "string", "format": "uri"}
    summary = {"type": "object", "required": ["id", "title", "url", "html_url"]}
    schema["required"] += [
        "$schema",
        "schema_version",
        "url",
        "html_url",
        "modified",
        "html",
        "computed",
    ]
    schema["properties"].update(
        {
            "$schema": {"const": own_url, "description": "this schema"},
            "schema_version": {"const": urls.SCHEMA_VERSION},
            "url": url,
            "html_url": url,
            "modified": {"type": ["string", "null"]},
            "alias": {
                "$ref": "#/$defs/id",
                "description": "the former id this copy is served under",
            },
            "html": {
                "type": "object",
                "description": "markdown fields rendered to HTML",
                "additionalProperties": True,
            },
            "computed": {
                "type": "object",
                "required": ["title", "project", "source_url", "related", "edit_url"],
                "properties": {
                    "title": {"type": "string"},
                    "curated": {
                        "type": "boolean",
                        "description": "explained by a person (meaning, trigger or solutions); "
                        "false for a record only extracted from the source",
                    },
                    "source_url": url,
                    "edit_url": url,
                    "file_html_url": {
                        **url,
                        "description": "the page of every error raised in the record's file",
                    },
                    "related": {"type": "array", "items": summary},
                    "reported": {
                        "type": "array",
                        "description": "the record's reported threads, the most useful "
                        "first: closed with the fix said, then closed, then open",
                        "items": {"type": "object", "required": ["url", "title", "state"]},
                    },
                    "reported_count": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "how many public threads reported it (demand)",
                    },
                    "engines": {
                        "type": "array",
                        "description": "a stack record's advice per serving engine (its "
                        "engines field), in order: the engine and its records the advice names",
                        "items": {
                            "type": "object",
                            "required": ["key", "name", "related"],
                            "properties": {
                                "key": {"type": "string"},
                                "name": {"type": "string"},
                                "related": {"type": "array", "items": summary},
                            },
                        },
                    },
                    "referenced_by": {"type": "array", "items": summary},
                    "twins": {
                        "type": "array",
                        "description": "records of other projects that print the same message "
                        "(one project carries the other's code)",
                        "items": summary,
                    },
                    "same_file": {
                        "type": "array",
                        "description": "other errors raised nearest in the same file, the "
                        "few nearest; but for a record not curated, those same_function lists",
                        "items": summary,
                    },
                    "same_file_count": {"type": "integer", "minimum": 0},
                    "same_function": {
                        "type": "array",
                        "description": "errors raised in the same function, the nearest few",
                        "items": {
                            **summary,
                            "properties": {"line": {"type": ["integer", "null"]}},
                        },
                    },
                    "same_function_count": {"type": "integer", "minimum": 0},
                    "removed": {
                        "type": ["object", "null"],
                        "description": "for status removed: no release since `since` prints "
                        "it (null: no later release was scanned); `after`, the last that does "
                        "(null when unknown); `successor`, the check that took over, if known. "
                        "The answer for a user of a release that printed it: `today`, the "
                        "check printed today that took over (superseded_by followed through "
                        "removed records), else `upgrade`, the first release that prints none "
                        "of this message (upgrading is one fix: no later check is known to "
                        "have taken it over); `lives`, where a reader found the check still "
                        "made without a record to lead to: printed (the same message, where "
                        "errorkb's scan does not find it) or unrecorded (with a message no record "
                        "holds), and upgrading does not stop it",
                        "required": [
                            "after",
                            "since",
                            "successor",
                            "printed",
                            "today",
                            "upgrade",
                            "lives",
                        ],
                        "properties": {
                            "after": {"type": ["string", "null"]},
                            "since": {"type": ["string", "null"]},
                            "successor": {"oneOf": [summary, {"type": "null"}]},
                            "printed": {
                                "type": ["object", "null"],
                                "description": "the releases that printed its wordings",
                                "required": ["first", "last"],
                                "properties": {
                                    "first": {"type": "string"},
                                    "last": {"type": "string"},
                                },
                            },
                            "today": {
                                "oneOf": [
                                    {
                                        **summary,
                                        "required": [*summary["required"], "message", "since"],
                                        "properties": {
                                            "message": {
                                                "type": "string",
                                                "description": "what the check prints today",
                                            },
                                            "since": {
                                                "type": ["string", "null"],
                                                "description": "the first release "
                                                "printing it in place of this wording",
                                            },
                                        },
                                    },
                                    {"type": "null"},
                                ],
                            },
                            "upgrade": {
                                "type": ["string", "null"],
                                "description": "with no check today: the release to upgrade "
                                "to (null when a check took over, when the check lives on, or "
                                "when no later release was scanned)",
                            },
                            "lives": {"enum": [*LIVES, None]},
                        },
                    },
                    "derived": {
                        "type": "object",
                        "description": "the derived stage and category in words, and the "
                        "settings (derived.flags, in the same order) as the user writes them",
                        "properties": {
                            "stage": {"type": "string"},
                            "category": {"type": "string"},
                            "passes": {
                                "type": "array",
                                "description": "settings with a value that would pass the "
                                "check (derived.flags' passes), as the page computes them: "
                                "`write` with {} for the value, `kind` in words, `current` "
                                "the placeholder that prints the setting's value",
                                "items": {
                                    "type": "object",
                                    "required": ["write", "kind", "current", "op"],
                                },
                            },
                            "settings": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["handle", "kind"],
                                    "properties": {
                                        "handle": {
                                            "type": "string",
                                            "description": "the flag, variable or key to change",
                                        },
                                        "kind": {
                                            "type": "string",
                                            "description": "its kind in words ('a request "
                                            "field'); empty when not known",
                                        },
                                        "today": {
                                            "type": "string",
                                            "description": "of a removed record: how the "
                                            "check printed today names the setting, when "
                                            "renamed since",
                                        },
                                    },
                                },
                            },
                            "relation": {
                                "type": "object",
                                "description": "the condition as one test of the message's "
                                "placeholders (or integers): left op right; op % means left "
                                "is not a multiple of right",
                                "required": ["left", "op", "right"],
                                "properties": {
                                    "left": {"type": ["string", "integer"]},
                                    "op": {"enum": [">", ">=", "<", "<=", "==", "!=", "%"]},
                                    "right": {"type": ["string", "integer"]},
                                },
                            },
                            "tests": {
                                "type": "array",
                                "description": "the derived conditions (the record's, then "
                                "its old wordings' own) as tests of the values: per "
                                "condition, its `and` parts that compare the message's "
                                "placeholders (left op right, a side a placeholder, a number "
                                "or a GPU's compute capability {major, minor}; op in / not "
                                "in: the left placeholder's value in the collection the "
                                "right one prints, or in the code's own (an array); none in, "
                                "some in: whether an item of the collection the left one "
                                "prints is in the one the right prints; == "
                                "and != compare values that are not numbers as printed; "
                                "`set`: the "
                                "sides the user sets, as written with {} for the value; "
                                "`scale`: settings the message prints that may scale a side, "
                                "by which other placeholder), or a setting compared with a "
                                "constant (setting, op, value; op on/off: raised when set, "
                                "unset); or: alternatives (`any`, each a test), of which one "
                                "holding is enough. The check raises when all parts hold",
                                "items": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["op"],
                                        "properties": {
                                            "left": {"type": ["string", "number", "object"]},
                                            "op": {
                                                "enum": [
                                                    ">",
                                                    ">=",
                                                    "<",
                                                    "<=",
                                                    "==",
                                                    "!=",
                                                    "%",
                                                    "in",
                                                    "not in",
                                                    "none in",
                                                    "some in",
                                                    "or",
                                                    "on",
                                                    "off",
                                                    "truthy",
                                                    "falsy",
                                                    "v<",
                                                    "v<=",
                                                    "v>",
                                                    "v>=",
                                                    "v==",
                                                    "v!=",
                                                ]
                                            },
                                            "right": {
                                                "type": ["string", "number", "object", "array"]
                                            },
                                            "set": {"type": "object"},
                                            "scale": {"type": "object"},
                                            "setting": {"type": "string"},
                                            "value": {},
                                            "any": {"type": "array"},
                                        },
                                    },
                                },
                            },
                            "renames": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "description": "generated, never written by hand: each "
                                "placeholder of an older wording (or, of a removed record, of "
                                "its own wording) that prints what a placeholder the tests "
                                "read prints, by its place in the two messages: old name -> "
                                "that name. The tests run on a paste of the older wording "
                                "through it",
                            },
                            "figures": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "description": "generated from the engine's wing, never "
                                "written by hand: the placeholders of the message's own "
                                "figures the answer computes from (a KV cache check's "
                                "`max_model_len`, `needed` and `available` GiB: the longest "
                                "--max-model-len that fits), as the page's section does",
                            },
                            "registry": {
                                "type": "object",
                                "required": ["release", "name", "items"],
                                "description": "generated from the code, never written by "
                                "hand: the collection a test reads by `name` that the message "
                                "does not print whole (the model architectures the engine "
                                "registers, at `release`, and `suffixes`: the endings it "
                                "converts between, so that a name it loads as a registered "
                                "one with another ending counts too); the answer tests the "
                                "values on it, and `note` says so",
                            },
                            "divisor": {
                                "type": "object",
                                "required": ["fixed", "setting", "gpus"],
                                "description": "generated, never written by hand: of a "
                                "divisibility check, its divisor's role: `fixed` when the "
                                "model fixes it (a checkpoint's block size: never the thing "
                                "to change); `setting`, the option the user changes as the "
                                "release's parser spells it (--tensor-parallel-size, not "
                                "tp_size; of a fixed divisor, the one that splits the value), "
                                "empty when no option sets it; `gpus` when it counts GPUs "
                                "(its valid values within one node)",
                                "properties": {
                                    "fixed": {"type": "boolean"},
                                    "setting": {"type": "string"},
                                    "per_rank": {"type": "boolean"},
                                    "gpus": {"type": "boolean"},
                                    "unknown": {
                                        "type": "boolean",
                                        "description": "a shared helper's divisor "
                                        "(ensure_divisibility's denominator): which value is a "
                                        "setting depends on its caller, so none is offered",
                                    },
                                },
                            },
                            "why_not": {
                                "type": "string",
                                "description": "why no answer is computed from values, when "
                                "nothing of the record's turns them into one",
                            },
                        },
                    },
                },
            },
        }
    )
    return schema


def openapi_document(base_url: str) -> dict:
    """OpenAPI 3.1 description of the static files under /api/."""

    def get(summary: str, ref: str, params: list | None = None) -> dict:
        op = {
            "summary": summary,
            "responses": {
                "200": {
                    "description": "OK",
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}
                    },
                },
                "404": {
                    "description": f"No such file; the body of {urls.api_not_found()}",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NotFound"}}
                    },
                },
            },
        }
        if params:
            op["parameters"] = params
        return {"get": op}

    rid = {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
    }
    project = {"name": "project", "in": "path", "required": True, "schema": {"type": "string"}}
    page = {"name": "page", "in": "path", "required": True, "schema": {"type": "integer"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "errorkb static API",
            "version": str(urls.SCHEMA_VERSION),
            "description": "Read-only JSON files, generated with the site.",
        },
        "servers": [{"url": base_url.rstrip("/")}],
        "paths": {
            urls.error_json("{id}"): get(
                "One error record, with computed values", "ErrorDocument", [rid]
            ),
            urls.api_index(): get("Counts, projects and guides", "Index"),
            urls.project_json("{project}"): get(
                "The errors of a project, first page", "Project", [project]
            ),
            urls.project_json_page("{project}", "{page}"): get(
                "A later page of a project's errors (see next)", "Project", [project, page]
            ),
            urls.schema(): get("JSON Schema of an error document (ErrorDocument)", "AnyObject"),
            urls.record_schema(): get("JSON Schema of a record in content/", "AnyObject"),
        },
        "components": {
            "schemas": {
                # The published schema itself, by reference: one copy, one truth.
                "ErrorDocument": {
                    "$ref": posixpath.relpath(urls.schema(), posixpath.dirname(urls.openapi()))
                },
                "Index": {
                    "type": "object",
                    "required": ["schema_version", "count", "projects"],
                    "properties": {"count": {"type": "integer"}, "projects": {"type": "array"}},
                },
                "Project": {
                    "type": "object",
                    "required": ["schema_version", "key", "count", "errors"],
                    "properties": {
                        "count": {"type": "integer"},
                        "page": {"type": "integer"},
                        "pages": {"type": "integer"},
                        "per_page": {"type": "integer"},
                        "next": {"type": ["string", "null"], "format": "uri"},
                        "errors": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["id", "title", "url", "html_url"],
                            },
                        },
                    },
                },
                "NotFound": {
                    "type": "object",
                    "required": ["status", "error"],
                    "properties": {"status": {"const": 404}, "error": {"type": "string"}},
                },
                "AnyObject": {"type": "object"},
            }
        },
    }

"""Engine outcomes against errorkb's calculators: the tallies the oracle prints.

Standard library only (the fast test imports it). An engine outcome is {"outcome": "ok"} or
{"outcome": "error", "exception", "message", "where", ["wrapped"]}; a calculator answer is
{"outcome": "ok"} or {"outcome": "error", "exception", "message", "id"}.

A point is an agreement on an error only when the calculator names the very error the engine
raises: the same message, filled in, character for character (for a bare assert, which
prints no message, the same empty message at the same check). Everything else is a
disagreement of one of three kinds.
"""

from __future__ import annotations

from collections import Counter, defaultdict

KINDS = ("ok/ok", "error/same", "error/other", "error/calc-ok", "ok/calc-error")


def kind(engine: dict, calc: dict) -> str:
    if engine["outcome"] == "ok":
        return "ok/ok" if calc["outcome"] == "ok" else "ok/calc-error"
    if calc["outcome"] == "ok":
        return "error/calc-ok"
    if calc.get("message", "") == engine.get("message", ""):
        return "error/same"
    if engine.get("assert") and calc.get("exception") == "AssertionError" and \
            calc.get("message", "").split("  (")[0].strip() == engine["assert"]:
        return "error/same"  # a bare assert: the calculator quotes the very statement
    return "error/other"


def exception_matches(engine: dict, calc: dict) -> bool:
    """The calculator's exception is the one raised: the class the engine raised, or for
    a ValueError pydantic wraps (vLLM's config validators) the wrapped class."""
    return calc.get("exception") in (engine.get("exception"), engine.get("wrapped"))


def rule_of(engine: dict, calc: dict) -> str:
    """The rule a point tests: the engine's raise site, else the calculator's error."""
    if engine["outcome"] == "error":
        return engine.get("where") or engine.get("exception", "?")
    if calc["outcome"] == "error":
        return "calc:" + (calc.get("id") or calc.get("message", "")[:40])
    return "ok"


def tally(rows: list[dict]) -> dict:
    """rows: {"point", "family", "engine", "calc"} -> totals, per rule and per family."""
    total: Counter = Counter()
    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_family: dict[str, Counter] = defaultdict(Counter)
    exc_mismatch = 0
    wrapped = 0
    for row in rows:
        k = kind(row["engine"], row["calc"])
        total[k] += 1
        per_rule[rule_of(row["engine"], row["calc"])][k] += 1
        per_family[row["family"]][k] += 1
        if k == "error/same" and not exception_matches(row["engine"], row["calc"]):
            exc_mismatch += 1
        if k == "error/same" and row["engine"].get("wrapped") and \
                row["calc"].get("exception") != row["engine"]["exception"]:
            wrapped += 1
    return {"points": len(rows), "total": dict(total),
            "per_rule": {r: dict(c) for r, c in sorted(per_rule.items())},
            "per_family": {f: dict(c) for f, c in sorted(per_family.items())},
            "same_error_other_exception": exc_mismatch,
            "same_error_user_sees_wrapper": wrapped}


def disagreements(rows: list[dict], limit: int = 10, raising_only: bool = False) -> list[dict]:
    out = []
    for row in rows:
        k = kind(row["engine"], row["calc"])
        if k in ("ok/ok", "error/same"):
            continue
        if raising_only and row["engine"]["outcome"] != "error":
            continue
        out.append({"kind": k, **row})
        if len(out) >= limit:
            break
    return out


def format_report(title: str, result: dict, first: list[dict]) -> str:
    lines = [f"== {title}: {result['points']} points"]
    lines.append("   " + "  ".join(f"{k} {result['total'].get(k, 0)}" for k in KINDS))
    if result["same_error_other_exception"]:
        lines.append(f"   same message, other exception class named: "
                     f"{result['same_error_other_exception']}")
    if result.get("same_error_user_sees_wrapper"):
        lines.append(f"   same error, which the user sees wrapped in pydantic's ValidationError "
                     f"(the calculator names the inner class): "
                     f"{result['same_error_user_sees_wrapper']}")
    lines.append("   per family:")
    for fam, c in result["per_family"].items():
        lines.append(f"     {fam:<14} " + "  ".join(f"{k} {c.get(k, 0)}" for k in KINDS))
    lines.append("   per rule:")
    for rule, c in result["per_rule"].items():
        lines.append(f"     {rule[:60]:<60} " + "  ".join(
            f"{k} {c[k]}" for k in KINDS if c.get(k)))
    if first:
        lines.append("   first disagreements:")
        for d in first:
            e, c = d["engine"], d["calc"]
            lines.append(f"     [{d['kind']}] {d['family']} {d['point']}")
            lines.append(f"        engine: {e.get('exception', 'ok')} {e.get('where', '')} "
                         f"{e.get('message', '')[:160]!r}")
            lines.append(f"        calc:   {c.get('exception', 'ok')} {c.get('id', '')} "
                         f"{c.get('message', '')[:160]!r}")
    return "\n".join(lines)

"""The issue bot: an issue's body in, the known errors it holds out, only when sure.

`extract` finds the places of a Markdown body that hold error text, tier-1 search
(generator.search.engine) matches each message in them, and only an exact or partial
match that no other record ties with is kept: a generic or similar one is a guess, and a
guess in someone's issue costs more than silence. `comment` writes what is found as a
GitHub comment; `github` posts it.
"""

from dataclasses import dataclass

from errorkb.search import engine
from errorkb.triage import extract
from errorkb.triage.site import Site

LIMIT = 3  # errors a comment names at most
TIERS = {"exact": ("exact",), "partial": ("exact", "partial")}
# Records of log lines are named by their level. Below ERROR a line is progress or advice,
# never what an issue is about; an error's log line often only announces the traceback
# that follows ("EngineCore failed to start."), so it is named only when no exception is.
QUIET_LEVELS = {"DEBUG", "INFO", "WARNING", "WARN", "NOTICE"}
LOG_LEVELS = {"ERROR", "CRITICAL", "FATAL", "EXCEPTION"}


@dataclass
class Finding:
    result: engine.Result
    quote: str  # the message as the body has it (cleaned of log noise)
    document: dict | None  # the record's JSON document, when the site has it
    page: str  # the record's page, absolute, with the values in its address
    final: bool  # the error a traceback ends in
    position: tuple[int, int] = (0, 0)  # (candidate, message) in the body
    # Of an old wording: the document and page of the check printed today that took over
    today: dict | None = None
    today_page: str = ""
    # The wrapper's line the body shows after this error ("Engine core initialization
    # failed. See root cause above"), named as its follow-on
    followed_by: "Finding | None" = None


def triage(
    body: str, site: Site, minimum: str = "partial", hint: str = "", runs: str | None = None
) -> list[Finding]:
    """The known errors of a body, at most LIMIT, the one a traceback ends in first (but a
    wrapper's line after the error it follows, which names it). `hint` is text that names
    the project (the repository the issue is in, "owner/name"); the engine whose
    repository it is, or `runs` (an engine's key), is the one a message both engines print
    is about: the strongest hint."""
    programs = site.index.meta.get("programs", {})
    named = engine.named_projects(body[: extract.MAX_BODY] + "\n" + hint, site.index.meta["hints"])
    key = runs or engine_of_repo(hint, programs)
    found: dict[str, Finding] = {}
    for n, candidate in enumerate(extract.candidates(body)):
        blocks = engine.clean(candidate.text)
        for m, block in enumerate(blocks):
            result = _sure(site, _query(block), TIERS[minimum], named, key)
            if result and result.id not in found:
                final = candidate.traceback and m == len(blocks) - 1
                document, page = site.document(result.id), site.page(result)
                finding = Finding(result, block.text, document, page, final, (n, m))
                if result.today:
                    finding.today = site.document(result.today["id"])
                    finding.today_page = site.page_url.replace("{}", result.today["id"])
                found[result.id] = finding
    raised = [f for f in found.values() if f.result.exception not in LOG_LEVELS]
    ranked = sorted(
        raised or found.values(), key=lambda f: (f.result.wrapper, not f.final, f.position)
    )
    wrappers = [f for f in found.values() if f.result.wrapper]
    if ranked and wrappers and not ranked[0].result.wrapper:
        ranked[0].followed_by = wrappers[0]
        ranked = [f for f in ranked if f is not wrappers[0]]
    return ranked[:LIMIT]


def engine_of_repo(repo: str, programs: dict[str, dict]) -> str | None:
    """The key of the engine whose repository this is ("vllm-project/vllm"), or None."""
    for program in programs.values():
        if program.get("engine") and repo and program.get("repo", "").lower() == repo.lower():
            return program["key"]
    return None


def _query(block: engine.Block) -> str:
    """A message block as a paste of its own: its exception named, as it was pasted."""
    if block.source or not block.exception:
        return block.text
    return f"{block.exception}: {block.text}"


def _sure(site: Site, query: str, tiers: tuple[str, ...], named: set[str], key: str | None):
    """The record a message is, when search is sure of it: its best result is an exact
    or partial match and no other fits as well. Of a message two projects print, the copy
    of the engine `key` (the issue's repository), else of the project the body names."""
    results = engine.search(site.index, query, engine=key)
    if not results or results[0].match not in tiers or results[0].tied:
        return None
    if results[0].exception in QUIET_LEVELS:
        return None
    best = results[0]
    programs = site.index.meta.get("programs", {})
    keyed = {name for name, p in programs.items() if key and p.get("key") == key}
    if best.project in keyed or (not keyed and best.project in named):
        return best
    for twin in best.also:
        if twin["project"] in keyed:
            lead = engine.Result(**{**best.__dict__, "also": []})
            lead.id, lead.project = twin["id"], twin["project"]
            return lead
    # The same message printed by two projects: the one the issue is about.
    for twin in best.also:
        if twin["project"] in named:
            lead = engine.Result(**{**best.__dict__, "also": []})
            lead.id, lead.project = twin["id"], twin["project"]
            return lead
    return best

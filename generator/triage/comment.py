"""The bot's comment: a line per error, then why each page was chosen, folded.

It is Markdown that GitHub renders, and part of it comes from the issue: every text of the
user's (the message, its values) goes into a code span, where GitHub renders neither HTML,
links nor @mentions; our own texts (titles, summaries) are escaped as text.
"""

import re
from urllib.parse import urlsplit

from errorkb import answer
from errorkb.answer import divisor_role
from errorkb.content import template
from errorkb.content.derived import KINDS, handle
from errorkb.triage import Finding

MARKER = "<!-- errorkb-triage -->"  # how the bot finds its own comment again
QUOTE_CHARS = 160  # of the user's message, quoted in the details
VALUE_CHARS = 60
MAX_DIVIDEND = 10**6  # a value whose divisors the comment lists at most

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def render(findings: list[Finding]) -> str | None:
    """The comment for what was found, or None when nothing was."""
    if not findings:
        return None
    head = "This looks like a known error" + ("s" if len(findings) > 1 else "") + ":"
    lines = [MARKER, head, "", *(f"- {line(f)}" for f in findings), ""]
    lines += ["<details><summary>Why this page</summary>", ""]
    lines += [f"- {why(f)}" for f in findings]
    lines += [
        "",
        "</details>",
        "",
        "<sub>Posted by errorkb's issue bot, which speaks only when the message matches a "
        "page's wording. Not your error? Say so, and a maintainer will look.</sub>",
    ]
    return "\n".join(lines) + "\n"


def line(f: Finding) -> str:
    """[Title](page with the values) · `Exception` · releases · of an old wording, today's
    check or the release to upgrade to: the answer for the values."""
    doc = f.document or {}
    title = (doc.get("computed") or {}).get("title") or f.result.title
    parts = [f"[{text(title)}]({page_url(f)})", code(f.result.exception)]
    releases = printed_by(f)
    if releases:
        parts.append(releases)
    took_over = today(f)
    if took_over:
        parts.append(took_over)
    out = " · ".join(parts)
    answer = answer_for(doc, f.result.values, f.today)
    out = f"{out}: {answer}" if answer else out
    then = f.followed_by
    if then:
        title = ((then.document or {}).get("computed") or {}).get("title") or then.result.title
        out += f" (then [{text(title)}]({page_url(then)}), which only says this error happened)"
    return out


def today(f: Finding) -> str:
    """Of an old wording: the check printed today that took over, linked, or the release
    that no longer refuses it (the page answers with either)."""
    removed = ((f.document or {}).get("computed") or {}).get("removed") or {}
    took_over = removed.get("today") or f.result.today
    if took_over and f.today_page:
        return f"today: [{text(took_over['title'])}]({link_target(f.today_page)})"
    upgrade = removed.get("upgrade") or f.result.upgrade
    if upgrade:
        return f"not printed since {text(upgrade)}: upgrading is one fix"
    if removed.get("lives"):
        return "later releases still make this check: upgrading does not stop it"
    return ""


def why(f: Finding) -> str:
    """Which text of the issue matched the page, how, and the values it holds."""
    r = f.result
    if r.match == "exact":
        how = "is the page's message"
    elif r.match == "generic":  # named only when raised with its own exception (triage)
        how = (
            f"is all of the page's short message, raised as its own {code(r.exception)}, "
            "and no other page's message fits"
        )
    elif r.match == "similar":  # named only as a title that is the message without values
        how = "is the page's message without its values"
    else:
        how = f"matches {r.how}"
    out = f"{code(matched_part(f.quote, (f.document or {}).get('message')), QUOTE_CHARS)} {how}"
    if r.values:
        out += " (" + ", ".join(f"{code(k)} = {code(v)}" for k, v in r.values.items()) + ")"
    summary = (f.document or {}).get("summary") or r.summary
    if f.cut:  # a wrapper's line named alone: its traceback was cut before its error
        summary = (
            "This line only says that an error happened: the last line of its traceback, "
            "which this issue does not show, names it. " + (text(summary) if summary else "")
        ).strip()
        return out + ". " + summary
    return out + (f". {text(summary)}" if summary else ".")


HEAD_CHARS = 24  # of a message's literal start, looked for in the user's text


def matched_part(quote: str, message: str | None) -> str:
    """The part of the user's text that the page's message fits: from where the message's
    literal start is, so that the user's own words before it ("T4 fails: Bfloat16 is only
    supported ...", a title) are not quoted as the page's message. The whole text when its
    start is not found (a cut start, a message that opens with a value)."""
    first = template.parse(message or "")[:1]
    head = first[0][:HEAD_CHARS].strip() if first and isinstance(first[0], str) else ""
    at = quote.lower().find(head.lower()) if len(head) >= 8 else -1
    return quote[at:] if at > 0 else quote


def page_url(f: Finding) -> str:
    """The page on the site, with the values in its address (the page opens with them):
    absolute, from the index (a relative link would lead into github.com)."""
    return link_target(f.page)


def printed_by(f: Finding) -> str:
    """The releases that print the wording the issue has, in words."""
    if f.result.wording:
        return text(f.result.wording)
    computed = (f.document or {}).get("computed") or {}
    project = (computed.get("project") or {}).get("name", f.result.project)
    message = (f.document or {}).get("message")
    for wording in (computed.get("history") or {}).get("wordings") or []:
        if wording.get("message") == message:
            first, last = wording["first"], wording["last"]
            return text(f"{project} {first}" + ("" if first == last else f" to {last}"))
    return ""


def answer_for(doc: dict, values: dict[str, str], today_doc: dict | None = None) -> str:
    """What the page answers for these values: the valid ones of a divisibility check, and
    the setting to change (of an old wording without a derived block of its own, those of
    `today_doc`, the check printed today that took over; a setting renamed since with
    today's name beside it)."""
    derived = doc.get("derived") or (today_doc or {}).get("derived") or {}
    labels = ((doc.get("computed") or {}).get("derived") or {}).get("settings") or []
    renamed = {s["handle"]: s["today"] for s in labels if doc.get("derived") and s.get("today")}
    out = []
    div = derived.get("divisibility") or {}
    value = values.get(div.get("value_param") or div.get("value") or "", "")
    shared = answer.answer(doc, values, today_doc) or {}
    if value.isdigit() and divisor_role(derived)["fixed"]:
        # A divisor the model fixes (a checkpoint's block_n) is never the thing to change.
        out += [text(line) for line in shared.get("lines", [])]
    elif value.isdigit() and 0 < int(value) <= MAX_DIVIDEND:
        n = int(value)
        valid = ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)
        accepted = f"{code(div['divisor'])} values this check accepts"
        out.append(f"{accepted} for {code(div['value'])} = {n}: {valid}")
        out += [text(shared["change"])] if shared.get("change") else []
    settings = [f for f in derived.get("flags") or [] if f.get("kind") != "model-config"]
    if settings:
        names = [_setting(setting, renamed.get(handle(setting), "")) for setting in settings[:2]]
        out.append("set with " + " or ".join(names))
    return "; ".join(out)


def _setting(setting: dict, today: str = "") -> str:
    """The setting as the user writes it, linked to its docs, with its kind in words (and
    today's name, when renamed since the user's release)."""
    url = setting.get("url") or ""
    name = code(handle(setting))
    linked = f"[{name}]({link_target(url)})" if urlsplit(url).scheme == "https" else name
    about = [KINDS.get(setting.get("kind", ""), "")] + ([f"today {code(today)}"] if today else [])
    about = [a for a in about if a]
    return f"{linked} ({'; '.join(about)})" if about else linked


def code(value: str, limit: int = VALUE_CHARS) -> str:
    """A code span that holds any text: one line, cut to `limit`, fenced by more backticks
    than it holds in a row."""
    value = _CONTROL.sub(" ", str(value)).strip()
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    ticks = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def text(value: str) -> str:
    """Our own text as Markdown text: its punctuation escaped, no mention, one line."""
    value = _SPECIAL.sub(r"\\\1", _CONTROL.sub(" ", value))
    return value.replace("@", "@\u2060")  # a word joiner: no one is notified


def link_target(url: str) -> str:
    """A URL as a Markdown link's target: nothing in it ends or breaks the link."""
    return re.sub(r"[\s()<>\[\]`]", lambda m: f"%{ord(m[0]):02X}", url)

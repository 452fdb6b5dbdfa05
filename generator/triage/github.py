"""The GitHub side of the bot: one comment per issue, kept up to date.

Stdlib only (urllib), so the action needs nothing but errorkb. It reads what Actions
provides: GITHUB_API_URL (so tests point it at a fake API), GITHUB_TOKEN (the workflow's
own, with `issues: write`) and GITHUB_REPOSITORY. Rate limits (403 or 429 with
Retry-After or an exhausted quota) and 5xx answers are retried a bounded number of times;
then the run gives up with a line saying why.
"""

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlencode

from errorkb.triage.comment import MARKER

ATTEMPTS = 3  # tries of one request
MAX_WAIT = 60  # seconds one retry waits at most; a longer limit is not waited out
TIMEOUT = 20
MAX_PAGES = 10  # of 100 comments each: the bot's comment is among an issue's first
MAX_ISSUES = 1000  # a dry run reads at most this many issues (10 pages)
USER_AGENT = "errorkb-triage"
# Who the workflow's own token posts as: that token may not ask GET /user (HTTP 403).
ACTIONS_LOGIN = "github-actions[bot]"
_sleep = time.sleep  # tests record the waits instead


class GitHubError(Exception):
    """A request that did not succeed, after its retries: the message says which and why."""


@dataclass
class Answer:
    status: int
    body: object


class GitHub:
    def __init__(self, api_url: str, token: str, repo: str):
        self.api = api_url.rstrip("/")
        self.token = token
        self.repo = repo
        self.requests = 0
        self._login: str | None = None

    @classmethod
    def from_env(cls) -> "GitHub":
        missing = [k for k in ("GITHUB_TOKEN", "GITHUB_REPOSITORY") if not os.environ.get(k)]
        if missing:
            raise GitHubError(f"{' and '.join(missing)} not set: posting needs them")
        api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
        return cls(api, os.environ["GITHUB_TOKEN"], os.environ["GITHUB_REPOSITORY"])

    @classmethod
    def reading(cls, repo: str) -> "GitHub":
        """A client that only reads `repo`'s issues: GITHUB_TOKEN when set (a higher rate
        limit, or a private repository), else none (a public one's issues need none)."""
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise GitHubError(f"--repo {repo!r}: give the repository as OWNER/NAME")
        api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
        return cls(api, os.environ.get("GITHUB_TOKEN", ""), repo)

    def request(self, method: str, path: str, body: dict | None = None) -> Answer:
        for attempt in range(1, ATTEMPTS + 1):
            answer, wait, why = self._once(method, path, body)
            if wait is None:
                return answer
            if attempt == ATTEMPTS or wait > MAX_WAIT:
                raise GitHubError(f"{method} {path}: {why}; gave up after {attempt} attempt(s)")
            _sleep(wait)
        raise AssertionError("unreachable")

    def _once(self, method: str, path: str, body: dict | None):
        """(answer, None) when done, or (None, seconds to wait, why) when worth a retry."""
        request = urllib.request.Request(
            self.api + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Accept": "application/vnd.github+json",
                **({"Authorization": f"Bearer {self.token}"} if self.token else {}),
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": USER_AGENT,
                **({"Content-Type": "application/json"} if body is not None else {}),
            },
        )
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return Answer(response.status, _json(response.read())), None, ""
        except urllib.error.HTTPError as exc:
            return self._failed(exc)
        except OSError as exc:  # refused, reset, timed out
            return None, 2, f"no answer ({exc})"

    def _failed(self, exc: urllib.error.HTTPError):
        status, headers = exc.code, exc.headers
        retry_after = headers.get("Retry-After", "")
        limited = status == 429 or (
            status == 403 and (retry_after or headers.get("X-RateLimit-Remaining") == "0")
        )
        if limited:
            wait = _wait(retry_after, headers.get("X-RateLimit-Reset", ""))
            return None, wait, f"rate-limited (HTTP {status}, retry after {wait} s)"
        if status >= 500:
            return None, 2, f"HTTP {status} from GitHub"
        return Answer(status, _json(exc.read())), None, ""

    # --- a repository's issues (the dry run) ------------------------------------------------

    def issues(self, since: str) -> Iterator[dict]:
        """The repository's issues (pull requests left out) updated since a date, newest
        first: at most MAX_ISSUES."""
        query = {"state": "all", "since": iso_since(since), "sort": "created"}
        query |= {"direction": "desc", "per_page": "100"}
        read = 0
        for page in range(1, MAX_ISSUES // 100 + 1):
            path = f"/repos/{self.repo}/issues?{urlencode({**query, 'page': page})}"
            answer = self._ok(self.request("GET", path), "list issues")
            items = answer.body if isinstance(answer.body, list) else []
            for item in items:
                if isinstance(item, dict) and "pull_request" not in item:
                    read += 1
                    yield item
            if len(items) < 100 or read >= MAX_ISSUES:
                return

    # --- the issue's comment --------------------------------------------------------------

    def login(self) -> str:
        """Who the token posts as: a personal token's user, else the Actions bot. Asked
        once, and only when a comment holds the marker (a new issue costs no request)."""
        if self._login is None:
            answer = self.request("GET", "/user")
            if answer.status == 403:  # "Resource not accessible by integration"
                self._login = ACTIONS_LOGIN
            else:
                user = self._ok(answer, "who the token is").body
                login = user.get("login") if isinstance(user, dict) else None
                if not isinstance(login, str) or not login:
                    raise GitHubError("who the token is: GET /user named no login")
                self._login = login
        return self._login

    def bot_comment(self, issue: int) -> dict | None:
        """The bot's comment on the issue: one that starts with the marker, posted by the
        token's own user. Another's comment is never taken for it, marker or not."""
        for page in range(1, MAX_PAGES + 1):
            path = f"/repos/{self.repo}/issues/{issue}/comments?per_page=100&page={page}"
            answer = self._ok(self.request("GET", path), "list comments")
            comments = answer.body if isinstance(answer.body, list) else []
            for comment in comments:
                if _marked(comment) and _author(comment) == self.login():
                    return comment
            if len(comments) < 100:
                return None
        return None

    def post(self, issue: int, body: str) -> None:
        self._ok(
            self.request("POST", f"/repos/{self.repo}/issues/{issue}/comments", {"body": body})
        )

    def update(self, comment_id: int, body: str) -> None:
        path = f"/repos/{self.repo}/issues/comments/{comment_id}"
        self._ok(self.request("PATCH", path, {"body": body}))

    def delete(self, comment_id: int) -> None:
        self._ok(self.request("DELETE", f"/repos/{self.repo}/issues/comments/{comment_id}"))

    def label(self, issue: int, name: str, on: bool) -> None:
        if on:
            path = f"/repos/{self.repo}/issues/{issue}/labels"
            self._ok(self.request("POST", path, {"labels": [name]}))
        else:  # not there (404) is as good as taken off
            path = f"/repos/{self.repo}/issues/{issue}/labels/{quote(name, safe='')}"
            self._ok(self.request("DELETE", path), also=(404,))

    def _ok(self, answer: Answer, what: str = "", also: tuple[int, ...] = ()) -> Answer:
        if answer.status >= 300 and answer.status not in also:
            message = answer.body.get("message", "") if isinstance(answer.body, dict) else ""
            raise GitHubError(f"{what or 'request'}: HTTP {answer.status} {message}".strip())
        return answer


ISSUE_ACTIONS = ("opened", "edited", "reopened")


def sync(gh: GitHub, event: "Event", comment: str | None, label: str = "") -> str:
    """The issue's bot comment made to say `comment`: posted, updated, deleted (None: the
    error is gone from the body) or left alone; on a comment's event, only ever posted
    (the bot speaks once: the issue's body is what it keeps answering). Returns what was
    done, in a word."""
    if comment is None and (event.action == "opened" or event.name != "issues"):
        return "nothing"  # no comment of ours to delete: no request at all
    existing = gh.bot_comment(event.issue)
    if comment is None:
        if not existing:
            return "nothing"
        gh.delete(existing["id"])
        if label:
            gh.label(event.issue, label, on=False)
        return "deleted"
    if existing and (existing.get("body") == comment or event.name != "issues"):
        return "unchanged"
    if existing:
        gh.update(existing["id"], comment)
    else:
        gh.post(event.issue, comment)
    if label:
        gh.label(event.issue, label, on=True)
    return "updated" if existing else "posted"


def iso_since(date: str) -> str:
    """A date or time as the API's `since` takes it (2025-01-31 -> 2025-01-31T00:00:00Z);
    ValueError when it is neither."""
    try:
        when = datetime.fromisoformat(date.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--since {date!r}: give a date, 2025-01-31, or a time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _marked(comment: object) -> bool:
    return isinstance(comment, dict) and str(comment.get("body", "")).startswith(MARKER)


def _author(comment: dict) -> object:
    user = comment.get("user")
    return user.get("login") if isinstance(user, dict) else None


def _wait(retry_after: str, reset: str) -> int:
    """Seconds to wait: Retry-After's, else until the quota resets, else a minute."""
    if retry_after.strip().isdigit():
        return int(retry_after)
    if reset.strip().isdigit():
        return max(1, int(reset) - int(time.time()))
    return MAX_WAIT


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


@dataclass
class Event:
    """What an `issues` or `issue_comment` event says: the text to read and where it is."""

    name: str  # "issues" or "issue_comment"
    action: str  # opened, edited, ...
    issue: int
    text: str
    repo: str = ""
    title: str = ""  # the issue's, on an issue's event: read as its body is


def read_event(payload: dict) -> Event:
    """The event of a payload; ValueError when it is no issue's or comment's."""
    issue = payload.get("issue")
    if not isinstance(issue, dict) or not isinstance(issue.get("number"), int):
        raise ValueError("the event holds no issue")
    repo = (payload.get("repository") or {}).get("full_name") or ""
    action = str(payload.get("action") or "")
    comment = payload.get("comment")
    if isinstance(comment, dict):
        text = _body(comment)
        if text.startswith(MARKER):  # the bot's own comment: nothing to answer
            text = ""
        return Event("issue_comment", action, issue["number"], text, repo)
    title = issue.get("title")
    title = title if isinstance(title, str) else ""
    return Event("issues", action, issue["number"], _body(issue), repo, title)


def _body(item: dict) -> str:
    body = item.get("body")
    return body if isinstance(body, str) else ""

"""A local preview server: serves site/, rebuilds when content or templates change.

It answers as soon as the content is loaded: until the first build has swapped in, each
page is rendered on request (generator/site/ondemand.py), while the build runs in the
background at a lower priority.

It sends the headers the site's _headers file gives static hosts, answers only with files
inside the site, applies the site's _redirects as Netlify does and sends an address written
in capitals to its lower case (a malformed path gets a 400, anything else missing a 404),
and while the last build failed, shows why at the top of every page it serves.
"""

import functools
import html
import io
import mimetypes
import os
import re
import sys
import threading
import time
import traceback
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from errorkb import urls
from errorkb.content.load import ParseCache
from errorkb.content.model import ContentError
from errorkb.progress import QUIET, Progress
from errorkb.site.build import CACHE_DIR, Plan
from errorkb.site.ondemand import OnDemand
from errorkb.site.pages import headers_for
from errorkb.site.publish import BuildError
from errorkb.site.quick import build_site, prepare_spare

POLL_SECONDS = 0.5
SETTLE_SECONDS, SETTLE_LOOKS = 0.1, 20  # a change is built once it holds still this long
IDLE_TIMEOUT = 30.0  # s: a connection that sends nothing for this long is closed
WATCHED = ("content", "templates")

# The banner's stylesheet: served by `serve` only, never part of a site. The policy allows
# no inline style, so the banner cannot carry its own.
PROBLEMS_CSS_URL = "/_errorkb/problems.css"
PROBLEMS_CSS = b"""\
.errorkb-problems{position:sticky;top:0;z-index:2147483647;max-height:45vh;overflow:auto;
margin:0;padding:.75rem 1rem;background:#2b0b0e;color:#ffe4e6;border-bottom:4px solid #e11d48;
font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;text-align:left}
.errorkb-problems h2{margin:0 0 .5rem;font:inherit;font-weight:bold;color:#fecdd3}
.errorkb-problems pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font:inherit}
.errorkb-problems details{margin-top:.5rem;color:#fda4af}
"""

mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("application/atom+xml", ".xml")


class BuildStatus:
    """Whether the last build failed, and why: what every served page shows until one works."""

    def __init__(self):
        self.failure: tuple[list[str], str] | None = None  # problem lines, traceback
        self.pending: OnDemand | None = None  # the site until its first build swaps in

    def failed(self, lines: list[str], detail: str = "") -> None:
        self.failure = (lines, detail)

    def succeeded(self) -> None:
        self.failure = None
        self.pending = None

    def banner(self) -> bytes:
        failure = self.failure  # one read: the watcher thread may replace it meanwhile
        if failure is None:
            return b""
        lines, detail = failure
        parts = [
            f'<link rel="stylesheet" href="{PROBLEMS_CSS_URL}">',
            '<div class="errorkb-problems" role="alert">',
            "<h2>The last build failed: this is the last good site. "
            "Fix these and save to rebuild.</h2>",
            f"<pre>{html.escape(chr(10).join(lines))}</pre>",
        ]
        if detail:
            parts.append(f"<details><summary>Traceback</summary><pre>{html.escape(detail)}</pre>")
            parts.append("</details>")
        parts.append("</div>")
        return "\n".join(parts).encode()


class BadPath(ValueError):
    """A URL path no browser sends for a page: not UTF-8, a NUL, a '..' or '\\'."""


def plain_path(url_path: str) -> str:
    """A URL path unquoted, below the site's own path where it has one; BadPath unless it
    is a plain path."""
    try:
        path = unquote(url_path, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadPath("not UTF-8") from exc
    if "\0" in path or "\\" in path or ".." in path.split("/"):
        raise BadPath("not a plain path")
    below = urls.prefix()  # a site below its host's root: its files are the folder's
    if below and (path + "/").startswith(below + "/"):
        path = path[len(below) :] or "/"
    return path


def site_file(site: Path, url_path: str) -> Path | None:
    """The file or folder inside `site` that a URL path names, or None. Symbolic links are
    followed only where they stay inside the site."""
    parts = plain_path(url_path).split("/")
    root = site.resolve()
    try:
        target = root.joinpath(*parts).resolve()
        if target.is_relative_to(root) and (target.is_file() or target.is_dir()):
            return target
    except (OSError, RuntimeError):  # too long, a link loop
        pass
    return None


class Redirects:
    """A _redirects file's rules, applied as Netlify does where no file answers: the first
    rule that matches wins; `:name` stands for one segment of the address, a closing `*` for
    the rest of it (`:splat`); a trailing slash does not count."""

    def __init__(self, text: str):
        # The short links are thousands of plain addresses: looked up, not walked.
        self.exact: dict[str, tuple[int, str, int]] = {}  # source -> (line, target, status)
        self.patterns: list[tuple[int, list[str], str, int]] = []
        for order, fields in enumerate(row.split() for row in text.splitlines()):
            if len(fields) < 2 or fields[0].startswith("#"):
                continue
            source, target, status = fields[0], fields[1], int(fields[2]) if fields[2:] else 301
            if ":" in source or "*" in source:
                self.patterns.append((order, _segments(source), target, status))
            else:
                self.exact.setdefault(_unslashed(source), (order, target, status))

    def find(self, path: str) -> tuple[str, int] | None:
        """(target, status) of the first rule that matches the address `path`, or None."""
        exact = self.exact.get(_unslashed(path))
        asked = _segments(path)
        for line, source, target, status in self.patterns:
            if exact is not None and exact[0] < line:
                break
            if (values := _match(source, asked)) is not None:
                return re.sub(r":(\w+)", lambda m: values.get(m[1], m[0]), target), status
        return None if exact is None else exact[1:]


def _unslashed(path: str) -> str:
    return path.rstrip("/") or "/"


def _segments(path: str) -> list[str]:
    return _unslashed(path).split("/")


def _match(source: list[str], asked: list[str]) -> dict[str, str] | None:
    """The values of a rule's placeholders in an address, or None when it does not match."""
    values = {}
    for i, part in enumerate(source):
        if part == "*" and i == len(source) - 1:
            values["splat"] = "/".join(asked[i:])
            return values
        if i >= len(asked) or not (part.startswith(":") or part == asked[i]):
            return None
        if part.startswith(":"):
            values[part[1:]] = asked[i]
    return values if len(asked) == len(source) else None


def redirects(site: Path) -> Redirects:
    """The site's _redirects rules; read again when the file changes."""
    path = site / urls.output_path(urls.redirects_file())
    try:
        st = path.stat()
    except OSError:
        return Redirects("")
    return _read_redirects(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=2)
def _read_redirects(path: Path, mtime_ns: int, size: int) -> Redirects:
    return Redirects(path.read_text(encoding="utf-8"))


class BuiltFiles:
    """The built site's files by their address, as `other_form` reads them."""

    def __init__(self, site: Path):
        self.site = site

    def has(self, url_path: str) -> bool:
        return site_file(self.site, url_path) is not None

    def read(self, url_path: str) -> bytes | None:
        target = site_file(self.site, url_path)
        try:
            return target.read_bytes() if target is not None else None
        except OSError:  # a folder, or a file a build removed since
            return None

    def rules(self) -> Redirects:
        return redirects(self.site)


class PendingFiles:
    """The files of the site its first build is making, by their address, likewise."""

    def __init__(self, pending: OnDemand):
        self.pending = pending

    def has(self, url_path: str) -> bool:
        return self.pending.locate(plain_path(url_path).lstrip("/")) is not None

    def read(self, url_path: str) -> bytes | None:
        return self.pending.get(plain_path(url_path).lstrip("/"))

    def rules(self) -> Redirects:
        return _rules_of(self.pending.get(urls.output_path(urls.redirects_file())) or b"")


@functools.lru_cache(maxsize=2)
def _rules_of(text: bytes) -> Redirects:
    return Redirects(text.decode())


def other_form(files: BuiltFiles | PendingFiles, url_path: str) -> tuple[int, str] | None:
    """How the site answers an address that no file has: (3xx, where to) to redirect,
    (status, a file's address) to send that file, or None. The address in lower case first,
    where that answers (the site writes every address so; ids are typed in capitals too),
    then its rule in _redirects."""
    lower = url_path.lower()
    if lower != url_path and (files.has(lower) or other_form(files, lower)):
        return 301, lower
    found = files.rules().find(url_path)
    if found is None:
        return None
    target, status = found
    # A rewrite to no file is not applied, as `netlify dev` does: the address stays missing.
    return (status, target) if status // 100 == 3 or files.has(target) else None


_BODY_TAG = re.compile(rb"<body\b[^>]*>", re.IGNORECASE)


def with_banner(page: bytes, banner: bytes) -> bytes:
    """The page with the banner first in its body."""
    if not banner:
        return page
    found = _BODY_TAG.search(page)
    at = found.end() if found else 0
    return page[:at] + banner + page[at:]


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the types and headers a static host would send, the site's 404
    pages, and the failed build's banner on every HTML page."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".xml": "application/xml",
    }

    def send_head(self):
        url_path, mark, query = self.path.split("#", 1)[0].partition("?")
        if url_path == PROBLEMS_CSS_URL:
            return self._send_body(200, "text/css; charset=utf-8", PROBLEMS_CSS)
        pending = self._pending()
        if pending is not None:
            return self._send_rendered(pending, url_path, mark + query)
        site = Path(self.directory)
        try:
            target = site_file(site, url_path)
            if target is not None and target.is_dir():
                if not url_path.endswith("/"):
                    return self._redirect(url_path + "/" + mark + query)
                target = site_file(site, url_path + "index.html")
        except BadPath as exc:
            self.send_error(400, f"Bad path: {exc}")
            return None
        if target is None:
            return self._other_form(BuiltFiles(site), url_path, mark + query)
        try:
            body = target.read_bytes() if target is not None else None
        except OSError:  # a folder, or a file a build removed since
            body = None
        if body is None:
            self.send_error(404)
            return None
        ctype = self.guess_type(str(target))
        return self._send_body(200, ctype, body)

    def _send_rendered(self, pending: OnDemand, url_path: str, query: str):
        """A file of the site not built yet, rendered if need be."""
        try:
            path = plain_path(url_path).lstrip("/")
        except BadPath as exc:
            self.send_error(400, f"Bad path: {exc}")
            return None
        path += "index.html" if path == "" or path.endswith("/") else ""
        found = pending.locate(path)
        if found is not None and found != path:  # a folder: its slash form
            return self._redirect(url_path + "/" + query)
        if found is None:
            return self._other_form(PendingFiles(pending), url_path, query)
        body = pending.body(path)
        if body is None:
            self.send_error(404)
            return None
        return self._send_body(200, self.guess_type("/" + path), body)

    def _other_form(self, files: BuiltFiles | PendingFiles, url_path: str, query: str):
        """An address no file answers: redirected, rewritten or not found (other_form)."""
        answer = other_form(files, url_path)
        if answer is None:
            self.send_error(404)
            return None
        status, where = answer
        if status // 100 == 3:
            return self._redirect(where + query, status)
        body = files.read(where)
        if body is None:  # a folder, or a file a build removed since
            self.send_error(404)
            return None
        return self._send_body(status, self.guess_type(where), body)

    def _send_body(self, code: int, ctype: str, body: bytes):
        if ctype.startswith("text/html"):
            body = with_banner(body, self._banner())
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)  # what send_head's callers copy out and close

    def _redirect(self, location: str, status: int = 301):
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return None

    def _banner(self) -> bytes:
        status = getattr(self.server, "status", None)
        return status.banner() if status else b""

    def _pending(self) -> OnDemand | None:
        status = getattr(self.server, "status", None)
        return status.pending if status else None

    def send_error(self, code, message=None, explain=None):
        if code != 404:
            return super().send_error(code, message, explain)
        api = self.path.startswith(urls.api())
        page = urls.output_path(urls.api_not_found() if api else urls.not_found())
        pending = self._pending()
        try:
            body = pending.get(page) if pending else (Path(self.directory) / page).read_bytes()
        except OSError:
            body = None
        if body is None:
            return super().send_error(code, message, explain)
        ctype = "application/json" if api else "text/html; charset=utf-8"
        sent = self._send_body(404, ctype, body)
        if self.command != "HEAD":
            self.wfile.write(sent.getvalue())

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        path = getattr(self, "path", "/")  # unset when the request line itself is bad
        for name, value in headers_for(path.split("?", 1)[0]).items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format, *args):
        pass

    def setup(self):
        # A socket timeout: a connection left idle (or a request sent byte by byte) would
        # otherwise hold its thread forever. StreamRequestHandler applies it.
        self.timeout = getattr(self.server, "idle_timeout", IDLE_TIMEOUT)
        super().setup()


class SiteServer(ThreadingHTTPServer):
    """The HTTP server, holding the state of the builds that its pages show."""

    # The listen(2) backlog: connections the kernel holds until they are accepted. The
    # default of 5 dropped a burst of a page's requests, or a few hundred clients'.
    request_queue_size = 1024
    status: "BuildStatus"
    idle_timeout: float

    def handle_error(self, request, client_address):
        """A client that hangs up or stalls mid-answer is the client's business: no
        traceback on the terminal of the person previewing."""


def make_server(
    site_dir: Path, host: str = "127.0.0.1", port: int = 8000, idle_timeout: float = IDLE_TIMEOUT
) -> SiteServer:
    handler = functools.partial(SiteHandler, directory=str(site_dir))
    server = SiteServer((host, port), handler)
    server.status = BuildStatus()
    server.idle_timeout = idle_timeout
    return server


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every file under the watched folders, by its time and size. Linked folders are not
    walked (a link loop would never end); a link that cannot be followed is an entry too,
    so that making or mending one rebuilds."""
    stamps: dict[str, tuple] = {}
    for folder in WATCHED:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            linked = [name for name in dirnames if os.path.islink(os.path.join(dirpath, name))]
            for name in filenames + linked:
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                    stamps[path] = (st.st_mtime_ns, st.st_size)
                except OSError as exc:
                    stamps[path] = ("unreadable", exc.errno)
    return stamps


class Watcher:
    """Rebuilds when a watched file changes. No error stops it: each is reported, on the
    terminal and on every page served, and the next change rebuilds."""

    def __init__(self, root: Path, out: Path, log, status: BuildStatus, progress: Progress = QUIET):
        self.root, self.out, self.log, self.status = root, out, log, status
        self.progress = progress
        self.cache = ParseCache(root / CACHE_DIR / "parse")  # parsed records stay in memory
        self.watch_error: str | None = None  # reported once, not on every poll
        self.seen: dict | None = self._look()

    def poll(self) -> None:
        """One look at the sources; a rebuild once they changed and hold still."""
        now = self._look()
        if now is None or now == self.seen:
            return
        # A file caught mid-write (an editor writing in place, a git checkout) would be built
        # from half its text, and fail, or take the full build: wait until a look finds
        # what the last one did.
        for _ in range(SETTLE_LOOKS):
            time.sleep(SETTLE_SECONDS)
            again = self._look()
            if again is None or again == now:
                break
            now = again
        self.seen = now
        self.rebuild()

    def rebuild(self, plan: Plan | None = None) -> None:
        """A build (from `plan` if given, else from the sources), its failure reported."""
        try:
            build_site(self.root, self.out, self.log, self.cache, plan, self.progress)
        except ContentError as exc:
            n = len(exc.problems)
            self.log(f"{exc}\nbuild refused ({n} problems); serving the last good site")
            self.status.failed([str(p) for p in exc.problems])
        except BuildError as exc:
            self.log(f"error: {exc}; serving the last good site")
            self.status.failed([f"error: {exc}"])
        except Exception as exc:
            self._report(f"build crashed: {type(exc).__name__}: {exc}")
        else:
            self.status.succeeded()
            self._prepare_spare()

    def _prepare_spare(self) -> None:
        """The next rebuild's spare site, made while the writer reads this one."""
        try:
            prepare_spare(self.out)
        except Exception as exc:  # only the next rebuild is slower: it makes the spare itself
            self.log(f"could not prepare the spare site ({type(exc).__name__}: {exc})")

    def _look(self) -> dict | None:
        """The snapshot, or None when it cannot be taken (reported, and the next one that
        can is taken as a change: edits may have been missed)."""
        try:
            now = _snapshot(self.root)
        except Exception as exc:
            line = f"cannot watch {self.root}: {type(exc).__name__}: {exc}"
            if line != self.watch_error:
                self._report(line)
            self.watch_error, self.seen = line, None
            return None
        self.watch_error = None
        return now

    def _report(self, line: str) -> None:
        detail = traceback.format_exc()
        self.log(f"{line}\n{detail}serving the last good site; the next change rebuilds")
        self.status.failed([line], detail)


def watch(watcher: Watcher, stop: threading.Event, plan: Plan | None = None) -> None:
    """Build from `plan` first if given, then rebuild on every change; at a lower priority
    than the server's threads, which render the pages asked for meanwhile."""
    _lower_priority()
    if plan is not None:
        watcher.rebuild(plan)
    while not stop.wait(POLL_SECONDS):
        watcher.poll()


def _lower_priority() -> None:
    """Make the calling thread, and the processes it forks, yield the CPU to the others.
    (Linux keeps a nice value per thread; elsewhere it would slow the whole server.)"""
    if sys.platform.startswith("linux"):
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + 10)


def serve(
    root: Path,
    out: Path,
    host: str,
    port: int,
    log,
    failure: ContentError | None = None,
    plan: Plan | None = None,
    progress: Progress = QUIET,
) -> None:
    """Serve `out` and build it from `plan`, rendering pages on request meanwhile, then
    rebuild it from `root` on change; `failure`: why the content could not be loaded."""
    server = make_server(out, host, port)
    if failure is not None:
        server.status.failed([str(p) for p in failure.problems])
    if plan is not None:
        server.status.pending = OnDemand(plan, out)
    stop = threading.Event()
    watcher = Watcher(root, out, log, server.status, progress)
    threading.Thread(target=watch, args=(watcher, stop, plan), daemon=True).start()
    log(f"serving {out} at http://{host}:{server.server_address[1]}/ (Ctrl+C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()

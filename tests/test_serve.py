"""The preview server: hostile paths get a clean 400 or 404, every response carries the
site's headers, and the watcher survives any error, showing failed builds on every page."""

import asyncio
import concurrent.futures
import http.client
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from errorkb import serve as serve_module
from errorkb import urls
from errorkb.serve import Watcher, make_server, watch
from errorkb.site.build import build, load_plan
from errorkb.site.ondemand import OnDemand
from errorkb.site.pages import CONTENT_SECURITY_POLICY
from tests.conftest import REPO, serve_in_thread, spare_holds_live

A1 = "00000000000000a1"
RECORD = f"content/errors/demo/{A1}.yaml"
WAIT = 60  # s: a rebuild of the fixture takes about one; the machine is shared


def raw_get(port: int, target: bytes) -> tuple[int, bytes, bytes]:
    """Status, head and body of a GET sent byte for byte as given."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(1 << 16):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1."), f"connection dropped for {target[:80]!r}"
    return int(head.split()[1]), head, body


def get(port: int, path: str, method: str = "GET") -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request(method, path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@pytest.fixture
def server():
    """Start the preview server on a folder; stopped after the test."""
    started = []

    def start(site: Path):
        srv = make_server(site, "127.0.0.1", 0)
        serve_in_thread(srv)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


# ---------------------------------------------------------------- hostile paths


@pytest.fixture
def hostile_site(tmp_path, fixture_site):
    """A few pages of the fixture site, with links out of it and a link loop inside."""
    site = tmp_path / "site"
    for name in ("index.html", "404.html", "api/404.json", f"api/errors/{A1}.json"):
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture_site / name, site / name)
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "passwd").write_text("root:x:0:0:SECRET\n")
    (site / "out").symlink_to(secret)
    (site / "passwd").symlink_to(secret / "passwd")
    (site / "loop").symlink_to("loop")
    (site / "inner").mkdir()
    (site / "inner/index.html").symlink_to(secret / "passwd")  # a page linked out
    (site / "api/loop").symlink_to("../api")  # stays inside: fine, but walks in circles
    return site


HOSTILE = [
    (b"/%00", 400),
    (b"/errors/%00/index.html", 400),
    (b"/api/%00.json", 400),
    (b"/%ff", 400),
    (b"/errors/%c3%28/", 400),  # bad UTF-8 sequence
    (b"/%ed%a0%80", 400),  # an encoded surrogate: not UTF-8 either
    (b"/..%2f..%2fetc/passwd", 400),
    (b"/%2e%2e/%2e%2e/%2e%2e/etc/passwd", 400),
    (b"/../../../etc/passwd", 400),
    (b"/..%5c..%5cetc%5cpasswd", 400),
    (b"/out/passwd", 404),  # a link out of the site
    (b"/out/", 404),
    (b"/passwd", 404),
    (b"/inner/", 404),
    (b"/inner/index.html", 404),
    (b"/loop", 404),
    (b"/loop/index.html", 404),
    (b"//etc/passwd", 404),
    (b"/" + b"a" * 5000, 404),  # longer than a file name may be
    (b"/" + b"a/" * 3000 + b"index.html", 404),  # longer than a path may be
    (b"/" + b"%41" * 20000, 404),
    (b"/nowhere?%00=%ff", 404),  # the query is not a path
]


@pytest.mark.parametrize("target,status", HOSTILE, ids=lambda v: repr(v)[:40])
def test_malformed_and_escaping_paths_get_a_clean_answer(
    target, status, hostile_site, server, capsys
):
    port = server(hostile_site).server_address[1]
    got, head, body = raw_get(port, target)
    assert got == status
    assert b"SECRET" not in body
    assert b"Content-Security-Policy: " + CONTENT_SECURITY_POLICY.encode() in head
    assert get(port, "/")[0] == 200  # still serving
    assert "Traceback" not in capsys.readouterr().err


def test_a_request_line_too_long_for_http_gets_414_not_a_dropped_connection(
    hostile_site, server, capsys
):
    port = server(hostile_site).server_address[1]
    assert raw_get(port, b"/" + b"a" * 70_000)[0] == 414
    assert "Traceback" not in capsys.readouterr().err


def test_links_inside_the_site_are_followed(hostile_site, server):
    port = server(hostile_site).server_address[1]
    status, headers, body = get(port, f"/api/loop/errors/{A1}.json")
    assert status == 200 and body.startswith(b"{")
    status, headers, _ = get(port, "/api/loop?x=1")
    assert (status, headers["Location"]) == (301, "/api/loop/?x=1")  # a folder: its slash form


# ---------------------------------------------------------------- headers


def parse_headers_file(text: str) -> list[tuple[str, dict[str, str]]]:
    """A _headers file as Netlify and Cloudflare Pages read it."""
    rules: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if line and not line[0].isspace():
            rules.append((line, {}))
        elif line.strip():
            name, _, value = line.strip().partition(": ")
            rules[-1][1][name] = value
    return rules


def host_headers(rules, path: str) -> dict[str, str]:
    """What such a host sends for a path: every rule whose pattern matches, in order."""
    out = {}
    for pattern, headers in rules:
        if path == pattern or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            out.update(headers)
    return out


RESPONSES = [
    ("GET", "/", 200),
    ("HEAD", "/", 200),
    ("GET", f"/errors/{A1}/", 200),
    ("GET", f"/errors/{A1}", 301),
    ("GET", "/assets/style.css", 200),
    ("GET", f"/api/errors/{A1}.json", 200),
    ("GET", f"/api/errors/{A1}", 200),  # no extensionless twin: the .json file answers it
    ("GET", f"/api/errors/{A1.upper()}.json", 301),  # to the address in lower case
    ("GET", "/e/00000000/", 301),  # a prefix several ids share: the 404 page there lists them
    ("GET", "/errors/00000000/", 404),
    ("GET", "/api/schema/error.json", 200),
    ("GET", "/api/nowhere.json", 404),
    ("GET", "/nowhere/", 404),
    ("GET", "/%00", 400),
    ("POST", "/", 501),
]


def test_every_response_has_the_headers_of_the_sites_headers_file(fixture_site, server):
    rules = parse_headers_file((fixture_site / "_headers").read_text())
    assert host_headers(rules, "/")["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "object-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src 'self' 'wasm-unsafe-eval';" in CONTENT_SECURITY_POLICY
    port = server(fixture_site).server_address[1]
    for method, path, status in RESPONSES:
        got, headers, _ = get(port, path, method)
        assert got == status, path
        expected = host_headers(rules, path)
        assert {k: headers.get(k) for k in expected} == expected, path
        api = path.startswith("/api/")
        assert (headers.get("Access-Control-Allow-Origin") == "*") == api, path
    _, headers, _ = get(port, f"/api/errors/{A1}.json")
    assert headers["Content-Type"] == "application/json"


# ---------------------------------------------------------------- the watcher


def wait_until(check, what: str):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def page(port: int, path: str = f"/errors/{A1}/") -> str:
    return get(port, path)[2].decode()


BANNER = 'class="errorkb-problems"'


@pytest.fixture
def watched(kb, server, monkeypatch):
    """The fixture kb, built, served, and watched by a watcher thread (as `serve` runs them)."""
    monkeypatch.setattr(serve_module, "POLL_SECONDS", 0.05)
    build(kb)
    srv = server(kb / "site")
    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch, args=(Watcher(kb, kb / "site", lines.append, srv.status), stop)
    )
    thread.start()
    yield kb, srv.server_address[1], lines, thread
    stop.set()
    thread.join()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_failed_build_shows_its_problems_on_every_page_until_a_build_succeeds(watched):
    kb, port, lines, _ = watched
    record = kb / RECORD
    edit(record, "updated:", "<b>odd</b>: 1\nupdated:")  # an unknown field, with markup
    wait_until(lambda: BANNER in page(port), "the banner")
    line = record.read_text().splitlines().index("<b>odd</b>: 1") + 1
    problem = f"{RECORD}:{line}: E102 &lt;b&gt;odd&lt;/b&gt;: unknown field"
    for path in ("/", f"/errors/{A1}/", "/projects/demo/", "/calc/", "/nowhere/"):
        body = page(port, path)
        assert BANNER in body and problem in body, path
        assert "<b>odd</b>" not in body
        assert body.index(BANNER) < body.index('<a class="skip"'), path  # first in the body
    css = get(port, serve_module.PROBLEMS_CSS_URL)
    assert css[0] == 200 and css[1]["Content-Type"].startswith("text/css")
    assert b".errorkb-problems{" in css[2]
    api = get(port, f"/api/errors/{A1}.json")[2]
    assert b"errorkb-problems" not in api  # only HTML gets the banner
    assert any("E102" in line and "build refused" in line for line in lines)

    edit(record, "<b>odd</b>: 1\n", "")
    edit(record, "title: Widget count", "title: Widget total")
    wait_until(lambda: BANNER not in page(port), "the banner to go")
    assert "Widget total not divisible" in page(port)


def test_an_unexpected_error_in_a_build_is_reported_and_the_watcher_goes_on(watched, monkeypatch):
    kb, port, lines, thread = watched
    real_build = serve_module.build_site

    def crash(*args, **kwargs):
        raise KeyError("a bug in the generator")

    monkeypatch.setattr(serve_module, "build_site", crash)
    edit(kb / RECORD, "title: Widget count", "title: Widget sum")
    wait_until(lambda: "build crashed" in page(port), "the crash banner")
    body = page(port)
    assert "build crashed: KeyError: &#x27;a bug in the generator&#x27;" in body
    assert "<summary>Traceback</summary>" in body and "in crash" in body
    report = next(line for line in lines if "build crashed" in line)
    assert report.splitlines()[0] == "build crashed: KeyError: 'a bug in the generator'"
    assert "Traceback (most recent call last)" in report
    assert thread.is_alive()

    monkeypatch.setattr(serve_module, "build_site", real_build)
    edit(kb / RECORD, "title: Widget sum", "title: Widget product")
    wait_until(lambda: "Widget product not divisible" in page(port), "the next rebuild")
    # The banner goes when the build returns, a moment after its pages are in place.
    wait_until(lambda: BANNER not in page(port), "the banner to go")


@pytest.mark.slow
def test_an_error_while_watching_is_reported_once_and_watching_resumes(watched, monkeypatch):
    kb, port, lines, thread = watched
    real_snapshot = serve_module._snapshot

    def broken(root):
        raise OSError(40, "Too many levels of symbolic links", str(root / "content"))

    monkeypatch.setattr(serve_module, "_snapshot", broken)
    wait_until(lambda: "cannot watch" in page(port), "the watch banner")
    time.sleep(0.5)  # ten polls, all failing
    assert len([line for line in lines if "cannot watch" in line]) == 1
    assert "Too many levels of symbolic links" in page(port)

    # Edited while unwatched: picked up as soon as watching works again.
    edit(kb / RECORD, "title: Widget count", "title: Widget tally")
    monkeypatch.setattr(serve_module, "_snapshot", real_snapshot)
    # The site is swapped in before the server forgets the failure: the banner goes after.
    wait_until(lambda: "Widget tally not divisible" in page(port), "the rebuild")
    wait_until(lambda: BANNER not in page(port), "the banner gone")
    assert thread.is_alive()


def test_symlink_loops_in_content_do_not_stop_the_watcher(watched):
    kb, port, lines, thread = watched
    folder = kb / "content/errors/demo"
    (folder / "loop.yaml").symlink_to("loop.yaml")
    (folder / "again").symlink_to(".")
    (kb / "content/guides/other.md").symlink_to("/nonexistent/other.md")
    wait_until(lambda: BANNER in page(port), "the banner")
    assert "content/errors/demo/loop.yaml" in page(port)
    assert thread.is_alive()
    for name in ("loop.yaml", "again"):
        (folder / name).unlink()
    (kb / "content/guides/other.md").unlink()
    edit(kb / RECORD, "title: Widget count", "title: Widget amount")
    wait_until(lambda: "Widget amount not divisible" in page(port), "the rebuild")
    wait_until(lambda: BANNER not in page(port), "the banner gone")


@pytest.mark.slow
def test_errorkb_serve_end_to_end(kb, unused_port):
    """The command itself: a first build that fails is shown, a template that crashes the
    build is reported with its traceback, and each fix is picked up."""
    build(kb)
    edit(kb / RECORD, "exception: ValueError", "exception: Value Error")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "errorkb", "--root", str(kb), "serve"]
    proc = subprocess.Popen(
        [*command, "--port", str(unused_port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def up():
            try:
                return get(unused_port, "/")[0] == 200
            except OSError:
                return False

        wait_until(up, "the server")
        assert "E103 exception" in page(unused_port)
        edit(kb / RECORD, "exception: Value Error", "exception: ValueError")
        wait_until(lambda: BANNER not in page(unused_port), "the fixed build")

        edit(kb / "templates/error.html", "{% block main %}", "{% block main %}{{ 1 // 0 }}")
        wait_until(lambda: "build crashed" in page(unused_port), "the crash")
        assert "ZeroDivisionError" in page(unused_port)
        edit(kb / "templates/error.html", "{{ 1 // 0 }}", "")
        wait_until(lambda: BANNER not in page(unused_port), "the rebuild")
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "build crashed: ZeroDivisionError: integer division or modulo by zero" in err
    assert "Traceback (most recent call last)" in err


# ---------------------------------------------------------------- load


async def _status(port: int) -> int:
    """One GET on its own connection; its status, or the error that ended it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        head = await reader.readline()
        await reader.read()
        return int(head.split()[1])
    finally:
        writer.close()


async def _burst(port: int, count: int) -> list:
    """`count` GETs at once: every connection is opened before the server accepts one."""
    jobs = (asyncio.wait_for(_status(port), 15) for _ in range(count))
    return await asyncio.gather(*jobs, return_exceptions=True)


def test_500_concurrent_requests_are_all_answered(fixture_site, server):
    port = server(fixture_site).server_address[1]
    # In a thread of its own: a browser test before may leave Playwright's loop running here.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answers = pool.submit(asyncio.run, _burst(port, 500)).result()
    failed = Counter(repr(a) for a in answers if a != 200)
    assert not failed, f"of 500 requests, not answered 200: {dict(failed)}"


def test_an_idle_connection_is_closed_after_the_timeout(fixture_site):
    srv = make_server(fixture_site, "127.0.0.1", 0, idle_timeout=0.5)
    serve_in_thread(srv)
    try:
        with socket.create_connection(srv.server_address[:2], timeout=5) as idle:
            start = time.monotonic()
            assert idle.recv(1) == b""  # sends nothing: closed by the server, not by the 5 s
            assert 0.4 < time.monotonic() - start < 4
        assert get(srv.server_address[1], "/")[0] == 200  # and the server goes on
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_short_link_is_a_real_redirect_that_keeps_the_values(kb, server):
    """/e/<8 hex>/ is a line of _redirects, served as the hosts that read it do."""
    records = kb / "content/errors/demo"
    rid = "abcdef0123456789"
    text = (records / "00000000000000b2.yaml").read_text()
    (records / f"{rid}.yaml").write_text(
        text.replace("00000000000000b2", rid, 1).replace("line: 30", "line: 60")
    )
    build(kb)
    assert f"/e/abcdef01/ /errors/{rid}/ 301" in (kb / "site/_redirects").read_text()
    port = server(kb / "site").server_address[1]
    status, headers, _ = get(port, "/e/abcdef01/?count=7")
    assert (status, headers["Location"]) == (301, f"/errors/{rid}/?count=7")
    assert not (kb / "site/e").exists(), "no folder a short link"


# ---------------------------------------------------------------- before the first build


@pytest.fixture
def held_build(kb, server, monkeypatch):
    """The fixture kb loaded and served as `serve` does, its first build held until the test
    sets the event it gets."""
    release = threading.Event()
    real_build = serve_module.build_site

    def held(*args, **kwargs):
        assert release.wait(WAIT)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(serve_module, "build_site", held)
    plan = load_plan(kb)
    srv = server(kb / "site")
    srv.status.pending = OnDemand(plan, kb / "site")
    stop = threading.Event()
    watcher = Watcher(kb, kb / "site", lambda line: None, srv.status)
    thread = threading.Thread(target=watch, args=(watcher, stop, plan))
    thread.start()
    yield kb, srv, release
    release.set()
    stop.set()
    thread.join()


BEFORE_BUILD = [
    "/",
    f"/errors/{A1}/",
    f"/errors/{A1}",
    f"/api/errors/{A1}.json",
    f"/api/errors/{A1}",
    f"/errors/{A1.upper()}/",  # to the page's address in lower case
    f"/api/errors/{A1}0",  # the API's JSON 404: a rewrite to no file is not applied
    f"/cards/{A1}.png",
    "/api/schema/error.json",
    "/projects/demo/",
    "/assets/style.css",
    "/nowhere/",
    "/api/nowhere.json",
    "/%00",
]


@pytest.mark.slow
def test_pages_are_answered_before_the_first_build_with_the_bytes_it_writes(held_build):
    kb, srv, release = held_build
    port = srv.server_address[1]
    before = {path: get(port, path) for path in BEFORE_BUILD}
    assert not (kb / "site").exists() and srv.status.pending is not None
    assert [before[path][0] for path in BEFORE_BUILD[:3]] == [200, 200, 301]
    assert b"Widget count not divisible" in before[f"/errors/{A1}/"][2]

    release.set()
    wait_until(lambda: srv.status.pending is None, "the first build")
    assert (kb / "site/index.html").is_file()
    for path in BEFORE_BUILD:
        status, headers, body = get(port, path)
        assert before[path][0] == status, path
        assert before[path][1].get("Content-Type") == headers.get("Content-Type"), path
        assert before[path][1].get("Location") == headers.get("Location"), path
        assert before[path][2] == body, path
    written = (kb / "site" / f"api/errors/{A1}.json").read_bytes()
    assert before[f"/api/errors/{A1}.json"][2] == written


def test_before_the_build_current_files_of_the_last_site_are_served_and_stale_ones_rendered(
    kb, monkeypatch
):
    build(kb)
    edit(kb / RECORD, "title: Widget count", "title: Widget tally")
    plan = load_plan(kb)
    pending = OnDemand(plan, kb / "site")
    rendered = []
    real_outputs = plan.record_outputs

    def counted(record, part):
        rendered.append((record.id, part))
        return real_outputs(record, part)

    monkeypatch.setattr(plan, "record_outputs", counted)
    assert b"Widget tally not divisible" in pending.get(f"errors/{A1}/index.html")
    other = "00000000000000d4"  # raised in another file, unrelated to A1: unchanged
    built = (kb / "site" / f"errors/{other}/index.html").read_bytes()
    assert pending.get(f"errors/{other}/index.html") == built
    assert rendered == [(A1, "page")]  # the other page was current in site/
    # So with a producer's output: the other record's source file's page, at the key of
    # what it declares it shows, is read from site/, not rendered.
    drawn = []
    real_file_page = plan.pages.source_file
    monkeypatch.setattr(plan.pages, "source_file", lambda *a: drawn.append(a) or real_file_page(*a))
    raised_in = plan.content.records[other].location.path
    file_page = urls.output_path(urls.source_file("demo", raised_in))
    assert pending.get(file_page) == (kb / "site" / file_page).read_bytes()
    assert drawn == []
    assert pending.get("nowhere/index.html") is None
    for full_text in ("pagefind/pagefind.js", "pagefind-newer/pages.json"):  # the last build's
        assert pending.get(full_text) == (kb / "site" / full_text).read_bytes()


@pytest.mark.slow
def test_an_edit_of_prose_while_serving_takes_the_quick_rebuild(watched):
    """The writer's loop: after the first full build, an edit of what the error means is
    on its page after a rebuild that read only that record (and the records it shows)."""
    kb, port, lines, _ = watched
    edit(kb / RECORD, "title: Widget count", "title: Widget total")  # a full build
    wait_until(lambda: "Widget total not divisible" in page(port), "the full rebuild")
    # Then, while the writer reads, the next rebuild's spare is made to hold the live site.
    wait_until(lambda: spare_holds_live(kb), "the spare made ready")
    edit(kb / RECORD, "meaning: |\n", "meaning: |\n  Said anew while serving.\n")
    wait_until(lambda: "Said anew while serving." in page(port), "the quick rebuild")
    assert "the prose of 1 record changed" in lines[-1], lines[-3:]


def test_a_change_is_built_once_the_files_hold_still(kb, monkeypatch):
    """A record caught mid-write (emptied by an editor writing in place, then filled) is
    built once, from its whole text: the watcher looks again until two looks agree."""
    record = kb / RECORD
    whole = record.read_text()
    watcher = Watcher(kb, kb / "site", lambda line: None, None)
    monkeypatch.setattr(serve_module, "SETTLE_SECONDS", 0)
    writes = iter([lambda: None, lambda: record.write_text(whole + "summary: Filled in.\n")])
    real_look = watcher._look

    def look():  # the editor writes on between looks: first nothing, then the rest
        next(writes, lambda: None)()
        return real_look()

    built = []
    monkeypatch.setattr(watcher, "_look", look)
    monkeypatch.setattr(watcher, "rebuild", lambda: built.append(record.read_text()))
    record.write_text("")  # the editor's truncation, seen by the next poll
    watcher.poll()
    assert built == [whole + "summary: Filled in.\n"]
    watcher.poll()
    assert len(built) == 1  # nothing changed since

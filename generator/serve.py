"""A local preview server: serves site/, rebuilds when content or templates change."""

import functools
import mimetypes
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from generator.build import CACHE_DIR, BuildError, build
from generator.records import ContentError, ParseCache

POLL_SECONDS = 0.5

mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("application/atom+xml", ".xml")


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the types a static host would send, and the site's 404 pages."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".xml": "application/xml",
    }

    def guess_type(self, path):
        # Extensionless API files (/api/errors/<id>) are JSON.
        if "/api/" in str(path).replace("\\", "/") and not Path(str(path)).suffix:
            return "application/json"
        return super().guess_type(path)

    def send_error(self, code, message=None, explain=None):
        if code != 404:
            return super().send_error(code, message, explain)
        api = self.path.startswith("/api/")
        page = Path(self.directory) / ("api/404.json" if api else "404.html")
        if not page.exists():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "application/json" if api else "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):
        pass


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    handler = functools.partial(SiteHandler, directory=str(site_dir))
    return ThreadingHTTPServer((host, port), handler)


def _snapshot(root: Path) -> dict[str, float]:
    stamps = {}
    for folder in ("content", "templates"):
        for path in (root / folder).rglob("*"):
            if path.is_file():
                stamps[str(path)] = path.stat().st_mtime_ns
    return stamps


def watch(root: Path, out: Path, log, stop: threading.Event) -> None:
    """Rebuild whenever a file under content/ or templates/ changes."""
    seen = _snapshot(root)
    cache = ParseCache(root / CACHE_DIR / "parse")  # parsed records stay in memory
    while not stop.wait(POLL_SECONDS):
        now = _snapshot(root)
        if now == seen:
            continue
        seen = now
        try:
            build(root, out, log=log, cache=cache)
        except ContentError as exc:
            log(f"{exc}\nbuild refused ({len(exc.problems)} problems); serving the last good site")
        except BuildError as exc:
            log(f"error: {exc}; serving the last good site")


def serve(root: Path, out: Path, host: str, port: int, log) -> None:
    server = make_server(out, host, port)
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(root, out, log, stop), daemon=True)
    watcher.start()
    log(f"serving {out} at http://{host}:{server.server_address[1]}/ (Ctrl+C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()

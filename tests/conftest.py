import fcntl
import json
import os
import pickle
import re
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest
import yaml

from errorkb.content.model import Content
from errorkb.search import engine
from errorkb.search import index as search_index
from errorkb.serve import make_server
from errorkb.site import publish
from errorkb.site.build import CACHE_DIR, BuildResult, Plan, build, load_plan
from errorkb.sources import explain, extract

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "kb"


# Compiled templates, shared by every knowledge base a test makes: compiling them is most of
# a fixture build. Each entry is keyed by its template's name and source (pages.py), so an
# edited template compiles anew, and written by a rename, so test processes may share them.
COMPILED = Path(tempfile.gettempdir()) / f"errorkb-tests-{os.getuid()}" / "templates"


def derived_of(code: str, path: str = "m.py", knowledge=None) -> dict[str, dict]:
    """Each site's derived block, by its message, in one file of made-up code (no callers)."""
    scan = extract.scan_file(
        path, code.encode(), printed=True, knowledge=knowledge or explain.Knowledge()
    )
    return {site.template: site.derived or {} for site in scan.sites}


def make_kb(path: Path, fill=None) -> Path:
    """A knowledge-base folder: the fixture content (or what `fill(path)` puts in content/)
    and the real templates."""
    if fill is None:
        shutil.copytree(FIXTURE / "content", path / "content")
    else:
        fill(path)
    shutil.copytree(REPO / "templates", path / "templates")
    return share_compiled(path)


def share_compiled(kb: Path) -> Path:
    """The knowledge base, its compiled templates taken from (and added to) the shared ones."""
    COMPILED.mkdir(parents=True, exist_ok=True)
    (kb / CACHE_DIR).mkdir(parents=True, exist_ok=True)
    if not (kb / CACHE_DIR / "templates").is_symlink():
        (kb / CACHE_DIR / "templates").symlink_to(COMPILED)
    return kb


def fresh_copy(kb: Path, dest: Path) -> Path:
    """kb's content and templates in a new knowledge base with no cache or site: what a cold
    build of it makes is the reference an incremental build is held to. Compiled templates
    are shared: they are keyed by their source."""
    for item in ("content", "templates"):
        shutil.copytree(kb / item, dest / item)
    return share_compiled(dest)


def spare_holds_live(kb: Path) -> bool:
    """Whether kb's spare site holds what its live site does, but the full-text index (the
    next build makes that)."""
    live = publish.read_keys(kb / "site", kb / "site")
    trees = tuple(u.removesuffix(publish.TREE) for u in live if u.endswith(publish.TREE))
    spare = publish.read_keys(kb / ".site-spare", kb / "site")
    return bool(live) and spare == {u: e for u, e in live.items() if not u.startswith(trees)}


SEED = "f644a7c8e4fdc46c"  # vLLM's attention heads record: its calculator and example fix
SEEDS = [SEED, "d97d5d8528e2b364", "8a94eee2b843fde3"]
STUBS = 3  # unexplained records from the seed's source file


def small_vllm_kb(path: Path) -> Path:
    """content/ with the seed records, every record they relate to or check against, and a
    few unexplained records raised in the seed's file."""
    real = REPO / "content"
    for name in ("site.yaml", "models.yaml", "projects/vllm.yaml"):
        (path / "content" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(real / name, path / "content" / name)
    records = real / "errors" / "vllm"
    wanted, todo = set(), list(SEEDS)
    while todo:
        rid = todo.pop()
        if rid in wanted:
            continue
        wanted.add(rid)
        data = yaml.safe_load((records / f"{rid}.yaml").read_text())
        todo += data.get("related", [])
        todo += [c["expect"] for c in data.get("checks", []) if c["expect"] != "ok"]
    seed_file = yaml.safe_load((records / f"{SEED}.yaml").read_text())["source"]["path"]
    stubs = []
    for record in sorted(records.glob("*.yaml")):
        text = record.read_text()
        explained = re.search(r"(?m)^(meaning|trigger|solutions|related):", text)
        if f"  path: {seed_file}\n" in text and not explained:
            stubs.append(record.stem)
            if len(stubs) == STUBS:
                break
    assert len(stubs) == STUBS
    wanted.update(stubs)
    (path / "content" / "errors" / "vllm").mkdir(parents=True)
    for rid in wanted:
        shutil.copy(records / f"{rid}.yaml", path / "content" / "errors" / "vllm")
    return share_compiled(path)


@pytest.fixture
def kb(tmp_path) -> Path:
    return make_kb(tmp_path / "kb")


@pytest.fixture(scope="session")
def fixture_build(tmp_path_factory) -> BuildResult:
    """The fixture knowledge base, built once and checked (its report: `problems`)."""
    return build(make_kb(tmp_path_factory.mktemp("fixture") / "kb"), checked=True)


@pytest.fixture(scope="session")
def fixture_site(fixture_build) -> Path:
    return fixture_build.out


@pytest.fixture(scope="session")
def real_plan() -> Plan:
    """The repository's own content, loaded once a session through the parse cache the
    builds keep (read-only for the tests that share it)."""
    return load_plan(REPO)


@pytest.fixture(scope="session")
def real_content(real_plan: Plan) -> Content:
    return real_plan.content


@pytest.fixture(scope="session")
def real_build(tmp_path_factory, request) -> BuildResult:
    """The repository's own content, built once a session into a temporary folder and
    checked. Under xdist the first worker to ask builds it, in a folder every worker sees,
    while the others wait on a lock, then read its result."""
    shared = session_folder(tmp_path_factory) / "real"
    shared.mkdir(exist_ok=True)
    result_file = shared / "result.pickle"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result_file.exists():
            return pickle.loads(result_file.read_bytes())
        plan = request.getfixturevalue("real_plan")
        result = build(REPO, shared / "site", plan=plan, checked=True)
        result_file.write_bytes(pickle.dumps(result))
        return result


def session_folder(tmp_path_factory) -> Path:
    """The temporary folder of this test session: under xdist, the one the workers' own
    folders are in."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def real_site(real_build) -> Path:
    return real_build.out


@pytest.fixture(scope="session")
def real(real_content: Content):
    """The repository's content and its tier-1 index, built in memory."""
    files = search_index.site_index(real_content)
    return real_content, files, engine.Index(files.__getitem__)


def serve_in_thread(server) -> None:
    """Serve in a daemon thread that looks for shutdown() every 20 ms: at serve_forever's
    default of 0.5 s, each test that stops a server waited half a second for it."""
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()


@pytest.fixture(scope="session")
def serve_site():
    """Serve a built site on 127.0.0.1 with the preview server; returns its base URL."""
    servers = []

    def start(site: Path) -> str:
        server = make_server(site, "127.0.0.1", 0)
        serve_in_thread(server)
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page that records every request it makes and every script error. No service
    worker: requests it answered would pass by page.route (test_landing_browser tests it)."""
    context = browser.new_context(service_workers="block")
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.requests = []
    pg.errors = []
    pg.on("request", lambda req: pg.requests.append(req.url))
    pg.on("pageerror", lambda err: pg.errors.append(str(err)))
    yield pg
    context.close()


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SEARCH_RECORDS = Path(__file__).parent / "fixtures" / "search"


def make_search_kb(path: Path) -> Path:
    """The fixture knowledge base with the records that tests/search_cases.json searches for."""
    make_kb(path)
    for record in SEARCH_RECORDS.glob("*.yaml"):
        shutil.copy(record, path / "content" / "errors" / "demo")
    return path


@pytest.fixture(scope="session")
def search_kb(tmp_path_factory) -> Path:
    """The search fixture knowledge base, built once (its site is search_kb / "site")."""
    root = make_search_kb(tmp_path_factory.mktemp("search") / "kb")
    build(root)
    return root


STACK = Path(__file__).parent / "fixtures" / "stack" / "content"


def make_stack_kb(path: Path) -> Path:
    """The fixture knowledge base with two engines (a few vLLM and SGLang records) and two
    stack projects (torch, NCCL) whose records give advice per engine."""
    make_kb(path)
    shutil.copytree(STACK, path / "content", dirs_exist_ok=True)
    return path


R3 = Path(__file__).parent / "fixtures" / "r3" / "content"


def make_r3_kb(path: Path) -> Path:
    """Two engines' copies of messages, a wrapper and its cause, a backticked template and
    the threads they were met in (content/most-met/): tests/search_r3_cases.json's."""
    return make_kb(path, lambda kb: shutil.copytree(R3, kb / "content"))


@pytest.fixture
def stack_kb(tmp_path) -> Path:
    return make_stack_kb(tmp_path / "kb")


# 300 real vLLM 0.33.0 messages, filled with plausible values and pasted with log noise: the
# template, values and raise site of each (the shapes real pastes take besides are in
# tests/search_cases.json and bench/search's real-world section).
CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "vllm-dev-instances.jsonl"


def corpus_rows() -> list[dict]:
    """Real vLLM error messages as pasted from logs, with their templates."""
    return [json.loads(line) for line in CORPUS.read_text().splitlines()]


SLOW_FIXTURES = {"real_plan", "real_content", "real_build", "real_site", "real", "browser", "page"}


def pytest_collection_modifyitems(items):
    """Tests that build or scan the real content, or drive Chromium, are `slow`: make
    test-fast leaves them to make test. (A test may name its site as a parameter.)"""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        used |= {value for value in params.values() if isinstance(value, str)}
        if SLOW_FIXTURES & used:
            item.add_marker(pytest.mark.slow)

"""The MkDocs plugin (generator/mkdocs/) in real `mkdocs build` runs with Material, and the
example site in Chromium. The browser tests build the example's own mkdocs.yml on a small
vLLM knowledge base (the seed records, what they relate to, a few unexplained ones); only
test_example_builds_strict builds the full content, as the example is meant to be built."""

import functools
import json
import logging
import os
import pickle
import re
import shutil
import subprocess
import sys
import tomllib
import traceback
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from mkdocs.__main__ import cli as mkdocs_cli

from errorkb.serve import SiteHandler
from errorkb.site import check
from tests.conftest import SEED, STUBS, serve_in_thread, small_vllm_kb

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "mkdocs-material"
PASTE = (
    "ERROR 11-30 09:12:44 [core.py:708] ValueError: Total number of attention heads (40) "
    "must be divisible by tensor parallel size (3)."
)
LOAD = 60_000  # ms: Pyodide's cold start


def entry_point_path(tmp: Path) -> Path:
    """A folder declaring pyproject.toml's `mkdocs.plugins` entry points, for a checkout
    whose install predates them (pip records entry points at install time)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    points = project["entry-points"]["mkdocs.plugins"]
    info = tmp / "errorkb_mkdocs_test-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: errorkb-mkdocs-test\nVersion: 0\n")
    lines = [f"{name} = {target}" for name, target in points.items()]
    (info / "entry_points.txt").write_text("[mkdocs.plugins]\n" + "\n".join(lines) + "\n")
    return tmp


def example(tmp: Path, content: Path | None = None, **overrides) -> Path:
    """The example site in tmp: its docs, and its mkdocs.yml with the plugin pointed at
    `content` (the real content when None) and any settings overridden."""
    site = tmp / "example"
    shutil.copytree(EXAMPLE / "docs", site / "docs")
    config = (EXAMPLE / "mkdocs.yml").read_text()
    content = content or REPO / "content"
    config = config.replace("content: ../../content", f"content: {content}")
    for key, value in overrides.items():
        config = re.sub(rf"(?m)^{key}: .*$", f"{key}: {value}", config)
    (site / "mkdocs.yml").write_text(config)
    return site / "mkdocs.yml"


def mkdocs_build(config: Path, out: Path, tmp: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` as its own process: forked from this one, where MkDocs,
    Material and the plugin are imported already (a fresh interpreter took 0.4 s of each
    build to import them), with its own environment, output and exit code."""
    env = {
        "PYTHONPATH": f"{REPO}:{entry_point_path(tmp / 'ep')}",
        "NO_MKDOCS_2_WARNING": "1",
        "PATH": "/usr/bin:/bin",
    }
    args = ["build", "--strict", "-f", str(config), "-d", str(out)]
    streams = [tmp / ".mkdocs-stdout", tmp / ".mkdocs-stderr"]
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            _run_mkdocs(args, env, streams)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    stdout, stderr = (s.read_text(errors="replace") for s in streams)
    return subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), stdout, stderr)


def _run_mkdocs(args: list[str], env: dict[str, str], streams: list[Path]) -> None:
    """In the forked child: MkDocs' command line as `python -m mkdocs` runs it."""
    for fd, path in zip((1, 2), streams, strict=True):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    # pytest holds sys.stdout and sys.stderr: write to the files themselves
    sys.stdout = os.fdopen(1, "w", closefd=False)
    sys.stderr = os.fdopen(2, "w", closefd=False)
    os.environ.clear()
    os.environ.update(env)
    sys.path[:0] = env["PYTHONPATH"].split(":")
    logging.shutdown()
    logging.root.handlers.clear()
    mkdocs_cli.main(args=args, prog_name="mkdocs", standalone_mode=True)


def built(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    return small_vllm_kb(tmp_path_factory.mktemp("kb"))


@pytest.fixture(scope="module")
def file_urls(tmp_path_factory, kb) -> Path:
    """The example as configured (pages as .html, under /server/), on the small content;
    the site's folder is www/server, so that www is the host's root."""
    tmp = tmp_path_factory.mktemp("file-urls")
    out = tmp / "www" / "server"
    built(mkdocs_build(example(tmp, kb / "content"), out, tmp))
    return out


@pytest.fixture(scope="module")
def directory_urls(tmp_path_factory, kb) -> Path:
    """The same with directory URLs, at the host's root."""
    tmp = tmp_path_factory.mktemp("dir-urls")
    out = tmp / "www"
    config = example(
        tmp, kb / "content", use_directory_urls="true", site_url="https://docs.example.org/"
    )
    built(mkdocs_build(config, out, tmp))
    return out


# ---------------------------------------------------------------- builds


@pytest.mark.slow
def test_record_pages_sit_in_materials_frame_with_our_sections(file_urls):
    page = (file_urls / "errors" / f"{SEED}.html").read_text()
    assert 'class="md-header' in page and 'class="md-tabs' in page
    assert 'data-md-component="palette"' in page or "md-header__option" in page
    assert "<title>Attention heads not divisible by tensor parallel size - Inference" in page
    canonical = f'<link rel="canonical" href="https://docs.example.org/server/errors/{SEED}.html">'
    assert canonical in page
    for section in ("message", "meaning", "source", "solutions", "calculator"):
        assert f'<section id="{section}"' in page, section
    # The frame's own links climb to the site root from the record's folder.
    assert 'href="../getting-started/installation.html"' in page
    assert 'href="../assets/stylesheets/main.' in page
    # The "Errors" tab is the current one on every record page.
    tab = re.search(r'<li class="md-tabs__item md-tabs__item--active">\s*<a href="([^"]+)"', page)
    assert tab and tab[1] == "../errors/index.html"
    assert "ERRORKB-FRAME" not in page and "_errorkb_frame" not in page


def test_unexplained_records_get_an_admonition(file_urls, kb):
    stubs = [
        p.stem
        for p in (kb / "content/errors/vllm").glob("*.yaml")
        if "meaning:" not in p.read_text() and "solutions:" not in p.read_text()
    ]
    assert len(stubs) >= STUBS
    for rid in stubs:
        derived = "\nderived:" in (kb / f"content/errors/vllm/{rid}.yaml").read_text()
        title = "Not reviewed yet" if derived else "Not explained yet"  # said from the code
        page = (file_urls / "errors" / f"{rid}.html").read_text()
        assert '<div class="admonition info" id="not-explained" role="note">' in page
        assert f'<p class="admonition-title">{title}</p>' in page
    assert "not-explained" not in (file_urls / "errors" / f"{SEED}.html").read_text()


def test_api_and_search_index_with_the_sites_urls(file_urls, kb):
    doc = json.loads((file_urls / "api/errors" / f"{SEED}.json").read_text())
    assert doc["html_url"] == f"https://docs.example.org/server/errors/{SEED}.html"
    assert doc["url"] == f"https://docs.example.org/server/api/errors/{SEED}.json"
    assert not (file_urls / "api/errors" / SEED).exists()
    index = json.loads((file_urls / "api/index.json").read_text())
    assert index["count"] == len(list((kb / "content/errors/vllm").glob("*.yaml")))
    assert json.loads((file_urls / "errors/search/index.json").read_text())
    calc = json.loads((file_urls / "errors/assets/calc.json").read_text())
    assert calc["pyodide"] == "/server/errors/pyodide/"
    assert calc["errors_url"] == "/server/errors/{}.html"
    assert (file_urls / "errors/pyodide/pyodide.asm.wasm").is_file()


def test_explained_records_are_in_materials_search(file_urls):
    docs = json.loads((file_urls / "search/search_index.json").read_text())["docs"]
    seed = [d for d in docs if d["location"].startswith(f"errors/{SEED}.html")]
    assert seed and seed[0]["title"] == "Attention heads not divisible by tensor parallel size"
    assert "tensor parallel" in " ".join(d["text"] for d in seed)
    assert not [d for d in docs if "_errorkb_frame" in d["location"]]
    assert not (file_urls / ".errorkb-manifest.json").exists()
    assert any(d["location"] == "getting-started/installation.html" for d in docs)


@pytest.mark.slow
@pytest.mark.parametrize("style", ["file_urls", "directory_urls"])
def test_every_internal_link_resolves(style, request):
    """Material's pages as well as ours, so from the disk: the checks of build --check on
    the facts of every page and stylesheet of the host's site."""
    site = request.getfixturevalue(style)
    host_root = site.parent if style == "file_urls" else site
    pages = check.scan(host_root)
    assert len(pages) > 10
    assert list(check.link_problems(pages, check.files_under(host_root))) == []


def test_directory_urls(directory_urls):
    page = (directory_urls / "errors" / SEED / "index.html").read_text()
    canonical = f'<link rel="canonical" href="https://docs.example.org/errors/{SEED}/">'
    assert canonical in page
    assert 'href="../../getting-started/installation/"' in page
    doc = json.loads((directory_urls / "api/errors" / f"{SEED}.json").read_text())
    assert doc["html_url"] == f"https://docs.example.org/errors/{SEED}/"


@pytest.mark.slow
def test_a_bad_record_fails_the_build_with_its_code(tmp_path, kb):
    content = shutil.copytree(kb / "content", tmp_path / "kb" / "content")
    record = content / "errors/vllm" / f"{SEED}.yaml"
    text = record.read_text()
    record.write_text(text.replace("\nmessage:", "\nmesage:", 1))
    line = text.split("\nmessage:")[0].count("\n") + 2
    result = mkdocs_build(example(tmp_path, content), tmp_path / "out", tmp_path)
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert f"ERROR   -  content/errors/vllm/{SEED}.yaml:{line}: E102 mesage:" in log
    assert re.search(rf"ERROR   -  content/errors/vllm/{SEED}\.yaml:\d+: E101 message:", log)
    assert "errorkb: 2 problems" in log
    assert not (tmp_path / "out" / "errors").exists()


def test_content_must_be_a_content_folder(tmp_path, kb):
    result = mkdocs_build(example(tmp_path, kb / "content" / "errors"), tmp_path / "out", tmp_path)
    assert result.returncode != 0
    assert "must be a knowledge base's content/ folder" in result.stdout + result.stderr


# ---------------------------------------------------------------- the host's own files

FIXTURE_KB = REPO / "tests" / "fixtures" / "kb" / "content"


def host_site(tmp: Path, docs: dict[str, str], path: str = "errors") -> Path:
    """A small Material site with these docs (name -> text) and the fixture knowledge base
    as its errors section, at a sub-path with pages as .html files."""
    for name, text in {"index.md": "# Host\n", **docs}.items():
        (tmp / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "docs" / name).write_text(text)
    config = tmp / "mkdocs.yml"
    config.write_text(
        "site_name: Host\n"
        "site_url: https://docs.example.org/server/\n"
        "use_directory_urls: false\n"
        "theme:\n  name: material\n"
        "plugins:\n  - search\n  - errorkb:\n"
        f"      content: {FIXTURE_KB}\n"
        f"      path: {json.dumps(path)}\n"
    )
    return config


@pytest.mark.parametrize(
    "host_file, url",
    [
        ("errors/calc.md", "/server/errors/calc.html"),
        ("errors/guides.md", "/server/errors/guides.html"),
        ("api/openapi.json", "/server/api/openapi.json"),
        ("sw.js", "/sw.js"),  # at the root, whatever the site's path
        # A page named only when rendered: the writer refuses it, after MkDocs' build.
        (
            "errors/projects/demo/files/demo/parallel.py.md",
            "/server/errors/projects/demo/files/demo/parallel.py.html",
        ),
    ],
)
@pytest.mark.slow
def test_a_host_file_at_an_address_of_ours_stops_the_build(tmp_path, host_file, url):
    text = "# Host page\n" if host_file.endswith(".md") else "host file\n"
    out = tmp_path / "site"
    result = mkdocs_build(host_site(tmp_path, {host_file: text}), out, tmp_path)
    log = result.stdout + result.stderr
    assert result.returncode != 0, log
    ours = url.removeprefix("/server").lstrip("/")
    assert f"errorkb: docs/{host_file} and errorkb's {url} are both {ours} in the site" in log
    assert "Traceback" not in log
    # Not replaced: the build stopped before MkDocs wrote it, or it is still the host's.
    written = out / ours
    assert not written.exists() or text.strip("# \n") in written.read_text()


def test_the_writer_never_replaces_a_file_that_is_not_ours(tmp_path):
    from errorkb.site.publish import OccupiedError, Writer

    (tmp_path / "sw.js").write_text("host")
    writer = Writer(tmp_path, {}, None, {}, frozenset({"sw.js"}))
    with pytest.raises(OccupiedError) as raised:
        writer.write("/sw.js", b"ours", "key")
    assert (tmp_path / "sw.js").read_text() == "host"
    # Raised in a worker, it reaches the build pickled.
    again = pickle.loads(pickle.dumps(raised.value))
    assert (again.path, again.url, str(again)) == ("sw.js", "/sw.js", str(raised.value))


@pytest.mark.parametrize(
    "path, why",
    [
        ("../x", "must name a folder inside the site"),
        ("a/../b", "must name a folder inside the site"),
        ("/abs", "must be relative to the site's root"),
        ("a\\b", "must separate folders with /"),
        ("a b", "may hold only letters, digits"),
    ],
)
def test_a_bad_path_option_is_a_clear_error(tmp_path, path, why):
    result = mkdocs_build(host_site(tmp_path, {}, path=path), tmp_path / "site", tmp_path)
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"errorkb: path {path!r} {why}" in log
    assert "Traceback" not in log


@pytest.mark.slow
def test_a_host_site_with_pages_of_its_own_in_the_section_builds(tmp_path):
    docs = {
        "errors/index.md": "# Our errors\n",
        "errors/faq.md": "# FAQ\n",
        "api/usage.md": "# API\n",
    }
    out = tmp_path / "site"
    built(mkdocs_build(host_site(tmp_path, docs), out, tmp_path))
    assert "Our errors" in (out / "errors/index.html").read_text()
    assert "FAQ" in (out / "errors/faq.html").read_text()
    assert 'class="calc' in (out / "errors/calc.html").read_text()
    assert json.loads((out / "api/openapi.json").read_text())["openapi"]


@pytest.mark.slow
def test_example_builds_strict(tmp_path, real_content):
    """examples/mkdocs-material exactly as committed: the full content."""
    out = tmp_path / "site"
    built(mkdocs_build(EXAMPLE / "mkdocs.yml", out, tmp_path))
    records = {p.stem for p in (REPO / "content/errors").rglob("*.yaml")}
    aliases = set(real_content.aliases)  # a merged record's former ids: redirect pages
    pages = {p.stem for p in (out / "errors").glob("*.html")}
    assert pages - records - aliases == {"index", "guides", "calc", "tags"}
    assert records <= pages
    assert (out / "errors/projects/vllm.html").is_file()
    assert (out / "getting-started/multi-gpu.html").is_file()


# ---------------------------------------------------------------- Chromium


class Handler(SiteHandler):
    """The preview server's file types, without errorkb's own Content-Security-Policy
    (Material's pages carry inline scripts; the host site sets its own headers)."""

    def end_headers(self):
        SimpleHTTPRequestHandler.end_headers(self)


@pytest.fixture(scope="module")
def host(file_urls):
    httpd = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(file_urls.parent))
    )
    serve_in_thread(httpd)
    yield f"http://127.0.0.1:{httpd.server_address[1]}/server/"
    httpd.shutdown()
    httpd.server_close()


def on_this_host(page):
    hosts = {urlsplit(url).hostname for url in page.requests if not url.startswith("data:")}
    assert hosts == {"127.0.0.1"}, [u for u in page.requests if "127.0.0.1" not in u]


def test_error_page_in_chromium_palette_switches_both(page, host):
    page.goto(host + f"errors/{SEED}.html")
    assert page.locator(".md-header").is_visible()
    assert page.locator(".md-tabs__item--active").inner_text().strip() == "Errors"
    assert page.locator("article.error h1").inner_text().startswith("Attention heads")
    box = page.locator("#message")
    colors = "(e) => [e, document.body].map((x) => getComputedStyle(x).backgroundColor)"
    before = box.evaluate(colors)
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    # The toggle goes round: system preference (light here), light, dark.
    for _ in range(3):
        page.locator("label.md-header__button[for^=__palette]:visible").first.click()
        if page.evaluate("document.body.dataset.mdColorScheme") == "slate":
            break
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    after = box.evaluate(colors)
    assert after[0] != before[0] and after[1] != before[1]  # Material's page and our box
    # Material's code copy buttons on our code blocks.
    assert page.locator("#example-fix pre .md-code__button, #example-fix .md-clipboard").count()
    on_this_host(page)
    assert page.errors == []


OTHER_SEEDS = {  # pasted as a log shows them -> the record
    "ValueError: The model's number of query heads per KV head (7) must be divisible by "
    "`--decode-context-parallel-size` (2) for GQA/MQA.": "d97d5d8528e2b364",
    "ValueError: TP sizes and total_num_kv_heads must be positive": "8a94eee2b843fde3",
}


def test_paste_box_finds_the_seed_and_fills_its_calculator(page, host):
    page.goto(host + "errors/index.html")
    for paste, rid in OTHER_SEEDS.items():
        page.fill("#q-errors", paste)
        first = page.locator("[data-search-results] a").first
        page.locator(f"[data-search-results] a[href*='{rid}']").first.wait_for(timeout=15_000)
        assert rid in first.get_attribute("href")
    page.fill("#q-errors", PASTE)
    hit = page.locator(f"[data-search-results] a[href*='{SEED}']").first
    hit.wait_for(timeout=15_000)
    url = urlsplit(hit.get_attribute("href"))
    assert url.path == f"/server/errors/{SEED}.html"
    assert parse_qs(url.query) == {
        "total_num_attention_heads": ["40"],
        "tensor_parallel_size": ["3"],
    }
    hit.click()
    page.wait_for_url(re.compile(rf"/server/errors/{SEED}\.html\?"))
    assert page.locator("[data-your-case]").is_visible()
    assert page.input_value("#calc0-heads") == "40"
    page.click(".calc-go")
    widget = page.locator(".calc").first
    page.locator(".calc[data-state=answered], .calc[data-state=failed]").wait_for(timeout=LOAD)
    assert widget.get_attribute("data-state") == "answered", widget.inner_text()
    assert widget.locator("[data-out=valid-tp]").inner_text() == "1, 2, 4, 5, 8, 10, 20, 40"
    record = urlsplit(widget.locator(".calc-out a.calc-record").get_attribute("href"))
    assert record.path == f"/server/errors/{SEED}.html"
    on_this_host(page)
    assert page.errors == []


# ---------------------------------------------------------------- the URL scheme


@pytest.mark.parametrize(
    "directory_urls, page, search",
    [
        (True, "/docs/errors/{}/", "/docs/errors/search/"),
        (False, "/docs/errors/{}.html", "/docs/errors/search/index.html"),
    ],
)
def test_url_scheme_inside_a_host_site(directory_urls, page, search):
    from errorkb import urls

    old = urls.configure("/docs/", "errors", directory_urls)
    try:
        assert urls.error(SEED) == page.format(SEED)
        assert urls.error_json(SEED) == f"/docs/api/errors/{SEED}.json"  # the API stays at /api/
        assert urls.search("x y") == search + "?q=x+y"
        assert urls.search_index() == "/docs/errors/search/index.json"
        assert urls.asset("calc.js") == "/docs/errors/assets/calc.js"
        assert urls.pyodide() == "/docs/errors/pyodide/"
        assert urls.project("vllm") == page.format("projects/vllm")
        # output_path is the inverse: the file below the host site's folder.
        expected = f"errors/{SEED}/index.html" if directory_urls else f"errors/{SEED}.html"
        assert urls.output_path(urls.error(SEED) + "?a=1#x") == expected
        assert urls.output_path(urls.search()) == "errors/search/index.html"
        assert urls.output_path("/docsy/x.html") == "docsy/x.html"  # not the prefix: kept
    finally:
        urls.restore(old)
    assert urls.error(SEED) == f"/errors/{SEED}/" and urls.output_path("/api/") == "api/index.html"


# ---------------------------------------------------------------- light and native in the host


def toc_entries(page: str, nav: str) -> list[tuple[str, str]]:
    """(anchor, text) of a table of contents: ours (`nav.toc`) or Material's (secondary)."""
    pattern = (
        r'<nav class="toc".*?</nav>'
        if nav == "ours"
        else r'<nav class="md-nav md-nav--secondary".*?</nav>'
    )
    block = re.search(pattern, page, re.S)
    assert block, nav
    links = re.findall(r'<a href="#([^"]*)"[^>]*>(.*?)</a>', block[0], re.S)
    return [(anchor, re.sub(r"<[^>]+>|\s+", " ", text).strip()) for anchor, text in links]


def test_tables_of_contents_list_the_sections_with_names(file_urls):
    """Ours and Material's right-hand one: every entry named, and its anchor on the page (a
    divisibility record's calculator section had an empty entry)."""
    pages = sorted((file_urls / "errors").glob("*.html"))
    seen_divisors = False
    for path in pages:
        page = path.read_text()
        if 'class="error"' not in page:
            continue
        material = toc_entries(page, "material")
        assert material, path.name  # Material's table of contents is filled from ours
        if '<nav class="toc"' in page:
            assert material == toc_entries(page, "ours"), path.name
        assert "your-case" not in dict(material)  # hidden until the address has values
        for anchor, text in material:
            assert anchor and text, (path.name, anchor, text)
            assert f'id="{anchor}"' in page, (path.name, anchor)
        seen_divisors |= ("divisors", "Valid values of tp_size") in material or any(
            a == "divisors" for a, _ in material
        )
    assert seen_divisors
    assert "ERRORKB-FRAME-TOC" not in page and "errorkb-frame-toc" not in page


def test_record_page_toc_names_the_seeds_sections(file_urls):
    page = (file_urls / "errors" / f"{SEED}.html").read_text()
    names = [text for _, text in toc_entries(page, "material")]
    assert names[:3] == ["Solutions", "Example fix", "What it means"]  # what to change first
    assert "Calculator" in names and "Source" in names


def test_materials_search_text_has_no_button_labels(file_urls):
    docs = json.loads((file_urls / "search/search_index.json").read_text())["docs"]
    text = " ".join(d["text"] for d in docs if d["location"].startswith(f"errors/{SEED}.html"))
    assert "ValueError: <code>Total number of attention heads" in text
    assert "Copy" not in text


def test_no_link_makes_material_fetch_a_sitemap_that_is_not_there(file_urls):
    """Material fetches <href>/sitemap.xml for every <link rel=alternate> (the JSON's
    made it ask for api/errors/sitemap.xml); and no paste box names a Pagefind bundle."""
    for path in (file_urls / "errors").rglob("*.html"):
        page = path.read_text()
        for link in re.findall(r'<link[^>]*rel="alternate"[^>]*>', page):
            href = re.search(r'href="([^"]+)"', link)[1]
            assert (path.parent / href).resolve().joinpath("sitemap.xml").is_file(), link
        assert "data-pagefind=" not in page, path
    assert not (file_urls / "errors" / "pagefind").exists()


def test_the_hosts_sitemap_is_an_index_that_lists_ours(file_urls):
    index = (file_urls / "sitemap.xml").read_text()
    locs = re.findall(r"<sitemap><loc>([^<]+)</loc>", index)
    assert locs == [
        "https://docs.example.org/server/sitemap-docs.xml",
        "https://docs.example.org/server/errors/sitemap.xml",
    ]
    import gzip

    assert gzip.decompress((file_urls / "sitemap.xml.gz").read_bytes()).decode() == index
    docs = (file_urls / "sitemap-docs.xml").read_text()
    assert "https://docs.example.org/server/getting-started/installation.html" in docs
    ours = (file_urls / "errors" / "sitemap.xml").read_text()
    assert f"https://docs.example.org/server/errors/{SEED}.html" in ours


def test_what_no_framed_page_uses_is_not_written(file_urls):
    """Cards (no page names them without the `cards` option), the service worker (no page
    registers it), `_redirects` and the 404 page's id lists (the 404 page is the host's)."""
    site = file_urls.parent  # the host's root
    written = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert not [p for p in written if p.endswith(".png") and "/assets/images/" not in p]
    assert not [p for p in written if p.endswith(("sw.js", "_redirects"))]
    assert not [p for p in written if "/api/ids/" in p]
    assert "og:image" not in (file_urls / "errors" / f"{SEED}.html").read_text()


# Long titles make a navigation heavy with few pages: MkDocs' time grows with the square of
# the pages (1,000 took 33 s), its bytes only with their titles.
_LONG_TITLE = "an object of the API reference, with the long name real APIs give theirs " * 3


def big_nav_host(tmp: Path, pages: int, cards: bool = False) -> Path:
    """A Material site whose API reference has `pages` pages in nested sections (as vLLM's
    docs keep theirs), with the fixture knowledge base as its errors section."""
    docs = {"index.md": "# Host\n"}
    nav = []
    for group in range(pages // 50):
        entries = []
        for n in range(50):
            name = f"api/module_{group}/object_{n}.md"
            docs[name] = f"# Object {group}.{n}\n\nAn object of the API.\n"
            entries.append(f"          - Object {n}, {_LONG_TITLE}: {name}")
        nav.append(f"      - Module {group}:\n" + "\n".join(entries))
    for name, text in docs.items():
        (tmp / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "docs" / name).write_text(text)
    config = tmp / "mkdocs.yml"
    config.write_text(
        "site_name: Host\nsite_url: https://docs.example.org/en/latest/\n"
        "theme:\n  name: material\n  features: [navigation.tabs, navigation.sections]\n"
        f"plugins:\n  - search\n  - errorkb:\n      content: {FIXTURE_KB}\n"
        f"      cards: {json.dumps(cards)}\n"
        "nav:\n  - Home: index.md\n  - API:\n" + "\n".join(nav) + "\n  - Errors: errors/index.md\n"
    )
    return config


@pytest.mark.slow
def test_record_pages_carry_the_errors_section_of_a_big_navigation(tmp_path):
    """Pruned as Material's navigation.prune does: a record page stays small however many
    pages the host's navigation has; the host's own pages keep theirs."""
    out = tmp_path / "site"
    # 100 pages: each host page then carries over 60 KB of navigation, over the budget a
    # record page keeps to.
    built(mkdocs_build(big_nav_host(tmp_path, 100), out, tmp_path))
    host_page = (out / "index.html").read_text()
    assert host_page.count("api/module_") >= 100  # MkDocs' own page: the whole navigation
    assert len(host_page.encode()) > 1.5 * 40_000
    record = sorted(FIXTURE_KB.glob("errors/*/*.yaml"))[0].stem
    page = (out / "errors" / record / "index.html").read_text()
    assert len(page.encode()) < 40_000, len(page.encode())
    assert page.count("api/module_") <= 2  # the API tab's first page only
    frame = page.split('<div class="errorkb"')[0].rstrip()  # Material's indentation is not kept
    assert not re.search(r"\n[ \t]*\n|\n[ \t]+<", frame)
    assert 'href="../../api/module_0/object_0/"' in page
    assert re.search(r'md-nav__link[^>]*href="\.\./\.\./errors/', page) or "../../errors/" in page
    assert not list((out / "errors").rglob("*.png"))


@pytest.mark.slow
def test_the_cards_option_writes_cards_in_the_section_and_names_them(tmp_path):
    out = tmp_path / "site"
    built(mkdocs_build(big_nav_host(tmp_path, 50, cards=True), out, tmp_path))
    cards = {p.relative_to(out).as_posix() for p in out.rglob("*.png")}
    assert cards - {"assets/images/favicon.png"}  # Material's own
    assert all(c.startswith("errors/cards/") for c in cards - {"assets/images/favicon.png"})
    pages = [p.read_text() for p in (out / "errors").glob("*/index.html")]
    images = {m for page in pages for m in re.findall(r'og:image" content="([^"]+)"', page)}
    assert images
    for url in images:
        assert url.startswith("https://docs.example.org/en/latest/errors/cards/")
        assert (out / url.removeprefix("https://docs.example.org/en/latest/")).is_file()


def test_api_paging_links_keep_the_sites_sub_path():
    from errorkb import urls
    from errorkb.site import paging

    old = urls.configure("/en/latest/", "errors", False)
    try:
        doc = {"errors": [{"id": f"{n:016x}"} for n in range(paging.PER_PAGE * 2 + 1)]}
        pages = dict(paging.project_pages(doc, "vllm", "https://docs.vllm.ai"))
        assert list(pages) == [
            "/en/latest/api/projects/vllm.json",
            "/en/latest/api/projects/vllm/2.json",
            "/en/latest/api/projects/vllm/3.json",
        ]
        first = pages["/en/latest/api/projects/vllm.json"]
        assert first["next"] == "https://docs.vllm.ai/en/latest/api/projects/vllm/2.json"
        assert urls.output_path("/en/latest/api/projects/vllm/2.json") == "api/projects/vllm/2.json"
        assert urls.id_list("ab") == "/en/latest/api/ids/ab.json"
        assert urls.card(SEED) == f"/en/latest/errors/cards/{SEED}.png"
        assert urls.search("x") == "/en/latest/errors/search/index.html?q=x"
    finally:
        urls.restore(old)


def test_enter_in_the_paste_box_opens_our_search_not_materials_dialog(page, host):
    """Material opens its search dialog on any address with `q`: ours is `error`."""
    page.goto(host + "errors/index.html")
    words = "nothing like this was ever printed by anyone"
    page.fill("#q-errors", words)
    page.press("#q-errors", "Enter")
    page.wait_for_url(re.compile(r"/server/errors/search/index\.html\?error="))
    assert parse_qs(urlsplit(page.url).query) == {"error": [words]}
    page.locator("[data-search-results]:visible").first.wait_for(timeout=15_000)
    assert page.input_value("#q-page") == words
    page.wait_for_timeout(500)  # Material's scripts have read the address by now
    assert not page.locator("#__search").is_checked()  # its dialog stays closed
    on_this_host(page)
    assert page.errors == []


def test_record_and_search_pages_request_nothing_missing(page, host):
    """No 404: not api/errors/sitemap.xml (Material, for a rel=alternate), not pagefind.js."""
    missing = []
    page.on("response", lambda r: r.status >= 400 and missing.append((r.status, r.url)))
    page.goto(host + f"errors/{SEED}.html")
    page.wait_for_load_state("networkidle")
    page.goto(host + "errors/search/index.html?" + urlencode({"error": PASTE}))
    page.locator(f"[data-search-results] a[href*='{SEED}']").first.wait_for(timeout=15_000)
    page.fill("#q-page", "tensor parallel")
    page.wait_for_load_state("networkidle")
    assert missing == []
    assert not [url for url in page.requests if "pagefind" in url or "sitemap" in url]


def test_the_paste_boxs_button_shows_its_icon(page, host):
    page.goto(host + f"errors/{SEED}.html")
    button = page.locator("form:has(#q-top) > button.search-icon")
    icon = button.evaluate(
        "(b) => { const s = getComputedStyle(b, '::before');"
        " return [s.maskImage || s.webkitMaskImage, s.width, s.backgroundColor]; }"
    )
    assert "search.svg" in icon[0] and icon[1] not in ("0px", "auto"), icon
    assert button.bounding_box()["width"] > 10


@pytest.mark.parametrize("width", [390, 1280])
def test_record_page_fits_the_width_in_materials_frame(page, host, width):
    """Nothing of ours runs past the article: the example fix at 1280 px, the params table
    at 390 px (the rules errorkb's own stylesheet has, in material.css too)."""
    page.set_viewport_size({"width": width, "height": 900})
    for rid in (SEED, "d97d5d8528e2b364"):
        page.goto(host + f"errors/{rid}.html")
        overflow = page.evaluate(
            """() => {
              const article = document.querySelector('.md-content__inner').getBoundingClientRect();
              const ours = document.querySelectorAll(
                '#example-fix figure, #example-fix pre, .params, .params dd, .message-box');
              return [...ours].filter((e) => e.getBoundingClientRect().right > article.right + 1)
                .map((e) => e.className || e.tagName);
            }"""
        )
        assert overflow == [], (rid, overflow)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), rid


DOCS_SITE = REPO / "tests" / "fixtures" / "docs-site"


@pytest.mark.slow
def test_a_docs_site_configured_like_vllms_builds_strict_with_awesome_nav(tmp_path):
    """tests/fixtures/docs-site: vLLM's Material features, an announcement from custom_dir,
    and mkdocs-awesome-nav making the navigation from docs/.nav.yml (`nav:` is ignored)."""
    site = shutil.copytree(DOCS_SITE, tmp_path / "docs-site")
    config = site / "mkdocs.yml"
    config.write_text(config.read_text().replace("content: CONTENT", f"content: {FIXTURE_KB}"))
    out = tmp_path / "www" / "en" / "latest"  # the host's root is www
    result = mkdocs_build(config, out, tmp_path)
    built(result)
    assert "WARNING" not in result.stdout + result.stderr
    record = sorted(FIXTURE_KB.glob("errors/*/*.yaml"))[0].stem
    page = (out / "errors" / f"{record}.html").read_text()
    tab = re.search(r'md-tabs__item--active">\s*<a href="([^"]+)"[^>]*>\s*([^<]*?)\s*</a>', page)
    assert tab and tab.groups() == ("../errors/index.html", "Errors")  # .nav.yml's section
    assert "A new release is out" in page  # the host's announcement
    assert 'class="md-content__button md-icon"' not in page  # no edit link of the host's
    assert len(page.encode()) < 40_000
    pages = check.scan(tmp_path / "www")
    assert list(check.link_problems(pages, check.files_under(tmp_path / "www"))) == []
    canonical = (
        f'<link rel="canonical" href="https://docs.example.org/en/latest/errors/{record}.html">'
    )
    assert canonical in page


def test_the_frames_whitespace_is_collapsed_but_not_in_pre_or_textarea():
    from errorkb.mkdocs.frame import _collapsed

    html = (
        "<div>\n    <pre>a\n    b</pre>\n\n  <textarea>x\n\n  y</textarea>  \n"
        "  <p>c\n   d</p>\n</div>"
    )
    expected = "<div>\n<pre>a\n    b</pre>\n<textarea>x\n\n  y</textarea>\n<p>c\nd</p>\n</div>"
    assert _collapsed(html) == expected

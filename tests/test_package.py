"""errorkb as people install it: a wheel that carries its templates, Pyodide fetched from the
npm registry with its hash checked, and a plugin that says what it lacks before MkDocs works.
The slow tests build the wheel and use it in a fresh virtual environment outside any checkout."""

import base64
import functools
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from errorkb import owned, resources
from errorkb.projects import pyodide
from tests.conftest import serve_in_thread

REPO = Path(__file__).resolve().parent.parent
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb" / "content"


def tarball(files: dict[str, bytes]) -> bytes:
    """An npm tarball: the files under package/."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, body in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    return out.getvalue()


def integrity(body: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(body).digest()).decode()


@pytest.fixture
def registry(tmp_path):
    """A local npm registry: put(version, tarball bytes) makes the tarball downloadable."""
    root = tmp_path / "registry"
    httpd = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    )
    serve_in_thread(httpd)

    def put(version: str, body: bytes) -> None:
        path = root / "pyodide" / "-" / f"pyodide-{version}.tgz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)

    put.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    yield put
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def no_pyodide(tmp_path, monkeypatch):
    """No node_modules anywhere, an empty download cache."""
    monkeypatch.setattr(resources, "checkout_node_modules", lambda: tmp_path / "no-checkout")
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


FILES = {name: f"{name} of a test tarball".encode() for name in pyodide.FILES}


def test_fetch_unpacks_the_pinned_tarball_where_the_build_looks(
    tmp_path, registry, no_pyodide, monkeypatch
):
    body = tarball({**FILES, "README.md": b"not a core file"})
    monkeypatch.setattr(pyodide, "pinned", lambda: ("1.2.3", integrity(body)))
    registry("1.2.3", body)
    with pytest.raises(pyodide.PyodideError, match="run `errorkb fetch-pyodide`"):
        pyodide.find(tmp_path)
    folder = pyodide.fetch(registry=registry.url, log=lambda line: None)
    assert folder == no_pyodide / "pyodide" / "1.2.3"
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name != owned.MARKER} == FILES
    assert owned.is_ours(folder) and pyodide.find(tmp_path) == folder


def _user_files(folder: Path) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("mine")
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "more.txt").write_text("mine too")
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("where", ["mydir", "."])
def test_fetch_into_a_folder_of_user_files_refuses_and_leaves_it_whole(
    tmp_path, registry, no_pyodide, monkeypatch, capsys, where
):
    """`--into mydir` (or `.` in a project) held someone's files: nothing is deleted, one
    line says why, and nothing is downloaded."""
    from errorkb.cli import main

    body = tarball(FILES)
    monkeypatch.setattr(pyodide, "pinned", lambda: ("1.2.3", integrity(body)))
    registry("1.2.3", body)
    project = tmp_path / "project"
    mine = _user_files(project / "mydir")
    (project / "README.md").write_text("the project")
    monkeypatch.chdir(project)
    assert main(["fetch-pyodide", "--into", where, "--registry", registry.url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds files errorkb did not write" in err
    assert "downloading" not in err and "Traceback" not in err
    folder = project / where
    assert {str(p.relative_to(project / "mydir")): p.read_bytes()
            for p in (project / "mydir").rglob("*") if p.is_file()} == mine
    assert (project / "README.md").read_text() == "the project"
    assert not any(p.name.startswith(".pyodide-") for p in folder.parent.iterdir())


def test_fetch_replaces_its_own_folder_by_rename(tmp_path, registry, no_pyodide, monkeypatch):
    body = tarball(FILES)
    monkeypatch.setattr(pyodide, "pinned", lambda: ("1.2.3", integrity(body)))
    registry("1.2.3", body)
    into = tmp_path / "vendor" / "pyodide"
    first = pyodide.fetch(into, registry=registry.url, log=lambda line: None)
    (first / "stale.js").write_text("left by an older fetch")
    inode = first.stat().st_ino
    again = pyodide.fetch(into, registry=registry.url, log=lambda line: None)
    assert again == into and into.stat().st_ino != inode  # a new folder, renamed in
    assert sorted(p.name for p in into.iterdir()) == sorted([*FILES, owned.MARKER])
    assert [p.name for p in into.parent.iterdir()] == ["pyodide"]  # nothing parked is left


def test_fetch_refuses_a_tarball_whose_hash_is_not_the_locks(
    tmp_path, registry, no_pyodide, monkeypatch
):
    body = tarball(FILES)
    monkeypatch.setattr(pyodide, "pinned", lambda: ("1.2.3", integrity(body + b"x")))
    registry("1.2.3", body)
    with pytest.raises(pyodide.PyodideError, match="is not the tarball package-lock.json pins"):
        pyodide.fetch(registry=registry.url, log=lambda line: None)
    assert not no_pyodide.exists() or not any(no_pyodide.rglob("*.wasm"))


def test_fetch_command_says_why_a_download_failed(tmp_path, registry, no_pyodide, capsys):
    from errorkb.cli import main

    assert main(["fetch-pyodide", "--registry", registry.url]) == 1  # nothing served
    err = capsys.readouterr().err
    assert "errorkb fetch-pyodide: could not download http://127.0.0.1:" in err
    assert "HTTP Error 404" in err and "Traceback" not in err


def test_the_lock_pins_pyodide_with_a_sha512():
    version, pinned = pyodide.pinned()
    lock = json.loads((REPO / "package.json").read_text())
    assert version == lock["dependencies"]["pyodide"]
    assert pinned.startswith("sha512-") and len(base64.b64decode(pinned[7:])) == 64


def test_the_plugin_says_pyodide_is_missing_before_mkdocs_builds(tmp_path, no_pyodide, caplog):
    """In on_config: MkDocs has not started (no site folder, no page built)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, PluginError

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Host\n")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: Host\ntheme:\n  name: material\n"
        f"plugins:\n  - errorkb:\n      content: {FIXTURE_KB}\n"
    )
    config = load_config(str(tmp_path / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    with pytest.raises(PluginError, match=r"errorkb: Pyodide .* is missing: run `errorkb fetch"):
        config.plugins.on_config(config)
    # and a whole build stops at the same place, before MkDocs' own work
    with pytest.raises(Abort):
        build(load_config(str(tmp_path / "mkdocs.yml"), site_dir=str(tmp_path / "site")))
    assert [r.message for r in caplog.records if "fetch-pyodide" in r.message]
    assert not [r for r in caplog.records if "Building documentation" in r.message]
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """errorkb's wheel, as `pip wheel .` makes it in a checkout (once: 5 s)."""
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("errorkb-*.whl")
    return wheel


@pytest.mark.slow  # building the wheel: 5 s
def test_the_wheel_carries_the_templates_and_the_lock(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {
        f"errorkb/templates/{p.relative_to(REPO / 'templates').as_posix()}"
        for p in (REPO / "templates").rglob("*")
        if p.is_file()
    }
    assert templates <= names
    assert "errorkb/npm/package-lock.json" in names and "errorkb/error.schema.json" in names
    assert not [n for n in names if n.startswith("generator/")]  # the import package is errorkb
    assert wheel.stat().st_size < 1_000_000  # no Pyodide inside: fetched on demand


# ---------------------------------------------------------------- outside any checkout


def _npm_cached_tarball() -> Path | None:
    """The pinned tarball in npm's own cache (`npm ci` put it there), if it is."""
    digest = base64.b64decode(pyodide.pinned()[1].removeprefix("sha512-")).hex()
    path = Path.home() / ".npm/_cacache/content-v2/sha512" / digest[:2] / digest[2:4] / digest[4:]
    return path if path.is_file() else None


@pytest.mark.slow
def test_pip_install_outside_a_checkout_builds_serves_and_runs_the_plugin(
    tmp_path, registry, wheel
):
    """A wheel (`pip wheel .`) in a fresh venv, used from an empty folder holding only
    content/: build, serve, and the plugin; Pyodide fetched from a registry by the command."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, system_site_packages=False)
    python = env_dir / "bin" / "python"
    # The dependencies come from this test's own environment (no index needed): a .pth
    # file adds its site-packages after the new venv's own, where errorkb itself goes.
    ours = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir())
    theirs = next((env_dir / "lib").glob("python3*/site-packages"))
    (theirs / "zz-deps.pth").write_text(str(ours) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "work"
    shutil.copytree(FIXTURE_KB, work / "content")
    env = {
        "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "ERRORKB_CACHE": str(tmp_path / "cache"),
        "NO_MKDOCS_2_WARNING": "1",
    }

    def run(*args, check=True):
        done = subprocess.run(
            [str(env_dir / "bin" / args[0]), *args[1:]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert not check or done.returncode == 0, done.stdout + done.stderr
        return done

    where = run("python", "-c", "import errorkb, sys; print(errorkb.__file__)").stdout
    assert where.startswith(str(theirs)), where  # the wheel's, not the checkout's
    assert run("python", "-c", "import generator", check=False).returncode != 0

    # Without Pyodide: one clear line, no traceback, nothing built.
    failed = run("errorkb", "build", check=False)
    assert failed.returncode == 1 and "run `errorkb fetch-pyodide`" in failed.stderr
    assert "Traceback" not in failed.stderr and not (work / "site").exists()

    real = _npm_cached_tarball()
    if real is None:
        pytest.skip("the pinned Pyodide tarball is not in npm's cache (run npm ci)")
    registry(pyodide.pinned()[0], real.read_bytes())
    run("errorkb", "fetch-pyodide", "--registry", registry.url)

    run("errorkb", "build")
    record = sorted(FIXTURE_KB.glob("errors/*/*.yaml"))[0].stem
    page = (work / "site" / "errors" / record / "index.html").read_text()
    assert '<link rel="stylesheet" href="/assets/style.' in page
    assert (work / "site" / "pyodide" / "pyodide.asm.wasm").stat().st_size > 1_000_000

    # serve: answers a page on a port of its own
    serve = subprocess.Popen(
        [str(env_dir / "bin" / "errorkb"), "serve", "--port", "0", "--out", str(work / "served")],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = _served_url(serve)
        import urllib.request

        with urllib.request.urlopen(url + "api/index.json", timeout=60) as response:
            assert json.loads(response.read())["count"] == len(
                list(FIXTURE_KB.rglob("errors/*/*.yaml"))
            )
    finally:
        serve.terminate()
        serve.wait(timeout=30)

    # the plugin, from the installed entry point
    (work / "docs").mkdir()
    (work / "docs" / "index.md").write_text("# Host\n")
    (work / "mkdocs.yml").write_text(
        "site_name: Host\nsite_url: https://docs.example.org/\ntheme:\n  name: material\n"
        "plugins:\n  - search\n  - errorkb\nnav:\n  - Home: index.md\n  - Errors: errors/index.md\n"
    )
    done = run("python", "-m", "mkdocs", "build", "--strict", "-d", str(work / "docs-site"))
    assert "errorkb:" in done.stderr
    assert (work / "docs-site" / "errors" / "index.html").is_file()
    assert (work / "docs-site" / "errors" / "pyodide" / "pyodide.asm.wasm").is_file()
    assert len(list((work / "docs-site" / "api" / "errors").glob("*.json"))) > 3


def _served_url(process: subprocess.Popen) -> str:
    """The address `errorkb serve` prints once it listens."""
    assert process.stdout is not None
    for line in process.stdout:
        if "http://127.0.0.1:" in line:
            start = line.index("http://127.0.0.1:")
            return line[start:].split()[0].rstrip("/") + "/"
    raise AssertionError("errorkb serve ended without serving")

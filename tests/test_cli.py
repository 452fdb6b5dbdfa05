"""The errorkb command: check, build, new and serve, as a user runs them."""

import errno
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from errorkb import cli
from errorkb.site.build import build
from errorkb.sources.scaffold import new_id


def errorkb(kb, *args, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), *args],
        capture_output=True,
        text=True,
        **kwargs,
    )


def test_check_passes_on_valid_content(kb):
    result = errorkb(kb, "check")
    assert result.returncode == 0
    assert "ok: 4 records, 1 guides, 1 projects, 1 models" in result.stderr


def test_check_lists_every_problem_and_fails(kb):
    a1 = kb / "content/errors/demo/00000000000000a1.yaml"
    a1.write_text(a1.read_text().replace("tags: [config]", "tagz: [config]"))
    (kb / "content/errors/demo/00000000000000b2.yaml").write_text("id: [\n")
    result = errorkb(kb, "check")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert any(
        line.startswith("content/errors/demo/00000000000000a1.yaml:") and " E102 tagz: " in line
        for line in lines
    )
    assert any(
        line.startswith("content/errors/demo/00000000000000b2.yaml:2: E100") for line in lines
    )
    assert lines[-1] == "2 problem(s) found; nothing was written"


def test_build_refuses_bad_content_and_writes_nothing(kb):
    (kb / "content/errors/demo/00000000000000b2.yaml").write_text("id: nope\n")
    result = errorkb(kb, "build")
    assert result.returncode == 1 and "E105 id" in result.stderr
    assert not (kb / "site").exists()


def test_new_scaffolds_a_record_with_its_id(kb):
    message = "Bolt size ({size}) is too large"
    result = errorkb(
        kb, "new", "--project", "demo", "--exception", "ValueError", "--message", message
    )
    assert result.returncode == 0
    rid = new_id("demo", "ValueError", message)
    path = kb / f"content/errors/demo/{rid}.yaml"
    assert result.stdout.strip() == str(path)
    data = yaml.safe_load(path.read_text())
    assert data["id"] == rid and data["message"] == message and "size" in data["params"]
    assert path.read_text().startswith("# yaml-language-server: $schema=")
    assert errorkb(kb, "check").returncode == 0  # the scaffold is a valid record
    again = errorkb(
        kb, "new", "--project", "demo", "--exception", "ValueError", "--message", message
    )
    assert again.returncode == 1 and "already exists" in again.stderr


def test_new_id_is_sha256_of_project_exception_message():
    assert (
        new_id("vllm", "ValueError", "x")
        == (__import__("hashlib").sha256(b"vllm\0ValueError\0x").hexdigest()[:16])
    )


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


@pytest.mark.slow
def test_serve_builds_serves_and_rebuilds_on_change(kb, unused_port):
    proc = subprocess.Popen(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "serve", "--port", str(unused_port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{unused_port}"
    try:
        page = _wait_for(lambda: _get(f"{base}/errors/00000000000000b2/"))
        assert "Group size must be positive" in page
        record = kb / "content/errors/demo/00000000000000b2.yaml"
        record.write_text(record.read_text() + "title: Group size is not positive\n")
        _wait_for(
            lambda: "Group size is not positive" in _get(f"{base}/errors/00000000000000b2/") or None
        )
        record.write_text("id: [broken\n")  # a bad edit keeps the last good site up
        page = _wait_for(
            lambda: (p := _get(f"{base}/errors/00000000000000b2/")) and "E100" in p and p
        )  # the failed build's problems shown over the last good page
        assert "Group size is not positive" in page
        api = urllib.request.urlopen(f"{base}/api/errors/00000000000000a1.json", timeout=5)
        assert api.headers["Content-Type"] == "application/json"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "E100" in proc.stderr.read()


def _wait_for(probe, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while True:
        try:
            result = probe()
            if result:
                return result
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.1)


def test_calc_prints_the_first_error_with_its_record_link(kb):
    result = errorkb(kb, "calc", "--heads", "40", "--kv-heads", "8", "--tp", "3")
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:3] == [
        "ERROR (config): ValueError: Total number of attention heads (40) must be divisible by "
        "tensor parallel size (3).",
        "  see https://kb.example.org/errors/f644a7c8e4fdc46c/",
    ]
    assert "valid TP sizes: 1, 2, 4, 8, 40" in result.stdout


def test_calc_says_ok_and_lists_layouts_for_a_preset(kb):
    ok = errorkb(kb, "calc", "--model", "tiny", "--tp", "4", "--gpus", "8")
    assert ok.returncode == 0, ok.stderr
    assert "OK: TP 4, PP 1, DP 1, DCP 1, PCP 1 passes every check" in ok.stdout
    assert "layouts for 8 GPUs" in ok.stdout and "TP 8 x PP 1 x DP 1" in ok.stdout


def test_calc_json_and_bad_input(kb):
    result = errorkb(
        kb, "calc", "--heads", "48", "--kv-heads", "8", "--tp", "48", "--dcp", "4", "--json"
    )
    assert json.loads(result.stdout)["first_error"]["id"] == "d97d5d8528e2b364"
    bad = errorkb(kb, "calc", "--heads", "0")
    assert bad.returncode == 2 and "heads must be between 1 and" in bad.stderr
    unknown = errorkb(kb, "calc", "--model", "nope")
    assert unknown.returncode == 2 and "presets: tiny" in unknown.stderr


@pytest.mark.slow
def test_calc_checks_the_node_first_when_told_its_gpus(kb):
    import json

    model = ("calc", "--heads", "48", "--kv-heads", "8", "--tp", "16", "--dcp", "3")
    assumed = errorkb(kb, *model)
    assert "ValueError: tp_size=16 must be divisible by dcp_size=3." in assumed.stdout
    assert "node: GPUs per node not given: assumed each node has the 16" in assumed.stdout
    node = errorkb(kb, *model, "--gpus-per-node", "8")
    assert node.returncode == 1
    assert "ERROR (config): ValueError: World size (16) is larger than" in node.stdout
    assert "/errors/dd418736ee7fb7a3/" in node.stdout
    assert "DOES NOT FIT: needs 16 GPUs on a node of 8" in node.stdout
    two = errorkb(kb, *model, "--gpus-per-node", "8", "--nnodes", "2", "--node-rank", "1")
    assert "tp_size=16 must be divisible by dcp_size=3." in two.stdout
    assert "fits: uses 8 of 8 GPUs on each of 2 nodes" in two.stdout
    rank = errorkb(kb, *model, "--gpus-per-node", "8", "--nnodes", "2", "--node-rank", "2")
    assert "`--node-rank` must be between 0 and 1; got `--node-rank 2`" in rank.stdout

    replicas = errorkb(
        kb, "calc", "--model", "tiny", "--tp", "8", "--dp", "2", "--gpus-per-node", "8", "--json"
    )
    answer = json.loads(replicas.stdout)
    assert replicas.returncode == 1 and answer["first_error"] is None
    assert answer["node"]["fits"] is False and answer["node"]["gpus"] == 16
    ray = errorkb(
        kb,
        "calc",
        "--model",
        "tiny",
        "--tp",
        "4",
        "--pp",
        "4",
        "--backend",
        "ray",
        "--gpus-per-node",
        "8",
    )
    assert "DOES NOT FIT: Ray needs 16 GPUs in its cluster; 8 here" in ray.stdout
    bad = errorkb(kb, "calc", "--model", "tiny", "--tp", "4", "--gpus-per-node", "0")
    assert bad.returncode == 2 and "gpus_per_node must be between 1" in bad.stderr


# Hostile input to match: every line answered, never a traceback ---------------------------


def match_bytes(site, *args, stdin: bytes, env=None):
    """errorkb match against a built site, stdin and stdout as bytes (their real encoding)."""
    return subprocess.run(
        [sys.executable, "-m", "errorkb", "match", "--site", str(site), *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
    )


def strict_json(line: bytes):
    """A line as a strict JSON reader takes it: UTF-8, no NaN or Infinity."""
    return json.loads(line.decode("utf-8"), parse_constant=_refuse)


def _refuse(name):
    raise AssertionError(f"{name} is not JSON")


# C: Python reads stdin with surrogateescape; C.UTF-8 (any UTF-8 locale): strictly.
LOCALES = ["C", "C.UTF-8"]


@pytest.mark.parametrize("locale", LOCALES)
def test_match_batch_answers_every_line_after_a_hostile_one(fixture_site, locale):
    lines = [
        b"[" * 200_000,  # nested deeper than any parser recurses
        b'"\\udcff"',  # a lone surrogate, escaped
        b'{"text": "x", "id": "\\ud800"}',  # one in the id echoed back
        b'{"text": "x", "id": NaN}',
        b'{"text": "x", "id": -Infinity}',
        b'{"text": "x", "id": 1e999}',  # a float that overflows to inf
        b'"\xff\xfe not UTF-8"',  # replaced, then answered
        b'{"text": "x", "id": ' + b"[" * 900 + b"]" * 900 + b"}",  # deep, but parsable
        b"{not json",
        b'{"text": "last", "id": 7}',
    ]
    env = {**os.environ, "LC_ALL": locale}
    out = match_bytes(fixture_site, "--batch", stdin=b"\n".join(lines) + b"\n", env=env)
    assert b"Traceback" not in out.stderr and out.returncode == 0, out.stderr[-2000:]
    answers = [strict_json(line) for line in out.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert answers[0] == {"line": 1, "error": "nested too deep"}
    assert "results" in answers[1]
    assert answers[2]["id"] == "\ud800"  # the id comes back as it was sent
    for number in (4, 5, 6):
        assert answers[number - 1] == {"line": number, "error": "a number that is not finite"}
    assert "results" in answers[6] and "results" in answers[7]
    assert "error" in answers[8] and answers[8]["line"] == 9
    assert answers[-1]["id"] == 7 and "results" in answers[-1]


@pytest.mark.parametrize("locale", LOCALES)
def test_match_reads_random_bytes_on_stdin_without_a_traceback(fixture_site, locale):
    noise = random.Random(20).randbytes(4000) + b"\xed\xa0\x80\xff\x00"
    env = {**os.environ, "LC_ALL": locale}
    out = match_bytes(fixture_site, "-", stdin=noise, env=env)
    assert out.returncode in (0, 1) and b"Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.stderr.endswith(b"\n") and out.stdout.decode("utf-8") is not None


def site_files(site):
    return {path: path.read_bytes() for path in site.rglob("*") if path.is_file()}


def test_a_full_disk_stops_the_build_with_one_clear_line(kb, monkeypatch, capsys):
    build(kb)
    old = site_files(kb / "site")
    record = kb / "content/errors/demo/00000000000000b2.yaml"
    record.write_text(record.read_text() + "title: Group size is not positive\n")

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)  # the system call every output file is written by
    code = cli.main(["--root", str(kb), "build"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert re.fullmatch(
        r"errorkb build: the disk is full writing \S+/\.site-spare/\S+: "
        r"free some space; the previous site is unchanged",
        err.splitlines()[-1],
    )
    assert site_files(kb / "site") == old
    build(kb)  # space freed: the next build recovers the half-written spare
    page = kb / "site/errors/00000000000000b2/index.html"
    assert "Group size is not positive" in page.read_text()

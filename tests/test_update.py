"""errorkb update and .github/workflows/update.yml, end to end: a made-up project, `toykit`,
whose two releases (wheels made here) are served by a PEP 503 index on 127.0.0.1, scanned into
a small knowledge base by the workflow's own steps, run in bash as Actions runs them, with
`git push` and `gh` stubbed to record their arguments.

1.0.0 -> 1.1.0: a check added (check_dtype), one reworded (check_batch), one moved to another
file (load), one removed (check_mode), one whose condition changed (check_workers), and one
left as it was (check_heads)."""

import base64
import functools
import hashlib
import http.server
import io
import os
import re
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from errorkb import cli
from errorkb.sources import history, update
from tests.conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "update.yml"
PROJECT = "toykit"

HEADS = """
def check_heads(heads, tp):
    if heads % tp != 0:
        raise ValueError(f"heads ({heads}) must be divisible by tp ({tp}).")
"""
MODE = """
def check_mode(mode):
    if mode not in ("fast", "slow"):
        raise ValueError(f"Unknown mode {mode!r}; expected fast or slow.")
"""
LOAD = """
def load(path):
    if not path.endswith(".bin"):
        raise RuntimeError(f"Cannot load {path}: only .bin checkpoints are supported.")
"""
BATCH_OLD = "batch size {batch} is larger than the limit {limit}."
BATCH_NEW = "batch size {batch} is larger than the maximum batch size {limit}."
DTYPE = "dtype {dtype} is not supported; use float16 or bfloat16."


def batch(message: str) -> str:
    return f"""
def check_batch(batch, limit):
    if batch > limit:
        raise ValueError(f"{message}")
"""


def workers(condition: str) -> str:
    return f"""
def check_workers(workers):
    if {condition}:
        raise ValueError(f"workers must be between 1 and 64, got {{workers}}.")
"""


RELEASES = {
    "1.0.0": {
        "toykit/__init__.py": "",
        "toykit/config.py": HEADS + batch(BATCH_OLD) + MODE + workers("workers < 1"),
        "toykit/loader.py": LOAD,
    },
    "1.1.0": {
        "toykit/__init__.py": "",
        "toykit/config.py": HEADS
        + batch(BATCH_NEW)
        + workers("workers < 1 or workers > 64")
        + f"""
def check_dtype(dtype):
    if dtype not in ("float16", "bfloat16"):
        raise TypeError(f"{DTYPE}")
""",
        "toykit/storage/__init__.py": "",
        "toykit/storage/files.py": LOAD,
    },
}


# A wheel and an index of our own ---------------------------------------------------------


def make_wheel(version: str, files: dict[str, str]) -> tuple[str, bytes]:
    """A valid pure-Python wheel of toykit: its files, METADATA, WHEEL and RECORD (hashes)."""
    dist = f"{PROJECT}-{version}.dist-info"
    entries = dict(files)
    entries[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: {version}\n"
        "Summary: A project made up for errorkb's tests.\n"
    )
    entries[f"{dist}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: errorkb-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    rows = []
    for name, body in entries.items():
        digest = hashlib.sha256(body.encode()).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        rows.append(f"{name},sha256={b64},{len(body.encode())}")
    entries[f"{dist}/RECORD"] = "\n".join([*rows, f"{dist}/RECORD,,"]) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in entries.items():
            archive.writestr(name, body)
    return f"{PROJECT}-{version}-py3-none-any.whl", buffer.getvalue()


class LocalIndex:
    """A PEP 503 simple index served on 127.0.0.1 from a folder; releases published in turn."""

    def __init__(self, folder: Path):
        self.folder = folder
        (folder / "files").mkdir(parents=True)
        handler = functools.partial(_Quiet, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"
        self.published: list[str] = []

    def publish(self, version: str) -> None:
        name, data = make_wheel(version, RELEASES[version])
        (self.folder / "files" / name).write_bytes(data)
        self.published.append(name)
        links = "".join(
            f'<a href="../../files/{n}#sha256='
            f'{hashlib.sha256((self.folder / "files" / n).read_bytes()).hexdigest()}">{n}</a>\n'
            for n in self.published
        )
        page = self.folder / "simple" / PROJECT / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
        (self.folder / "simple" / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="{PROJECT}/">{PROJECT}</a></body></html>\n'
        )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def pip_env(index: LocalIndex, cache: Path) -> dict[str, str]:
    """pip asks our index alone, with a cache of its own; errorkb's cache is `cache`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_INDEX_URL=index.url,
        PIP_CONFIG_FILE=os.devnull,
        PIP_CACHE_DIR=str(cache.parent / "pip"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        ERRORKB_CACHE=str(cache),
    )
    return env


def make_kb(path: Path) -> Path:
    """A knowledge base holding toykit alone, no release scanned yet, in a git repository."""
    content = path / "content"
    (content / "projects").mkdir(parents=True)
    (content / "errors" / PROJECT).mkdir(parents=True)
    (content / "site.yaml").write_text(
        "title: Toy KB\ntagline: Errors of a made-up project\n"
        "base_url: https://kb.example.org\nrepo: example/kb\n"
    )
    (content / "projects" / f"{PROJECT}.yaml").write_text(
        "name: ToyKit\nrepo: example/toykit\n"
        "# The commit record locations are pinned to unless a record names its own.\n"
        "ref: abc1234\ndescription: A project made up for the tests.\n"
    )
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "content")
    git(path, "commit", "-q", "-m", "toykit")
    return path


def git(where: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(
        ["git", *args], cwd=where, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


# The workflow's steps, run as Actions runs them --------------------------------------------


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def stubs(folder: Path) -> Path:
    """A bin folder: `errorkb` (this checkout's, on the tests' Python), `gh` and a `git` whose
    `push` only writes down its arguments (in folder/calls), each call a line."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    calls = folder / "calls"
    path = os.pathsep.join(sys.path)
    scripts = {
        "errorkb": f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -m errorkb "$@"\n',
        # `gh pr list` answers $OPEN_PR: the number of a pull request open from the branch.
        "gh": (
            f'#!/bin/sh\necho "gh $*" >> "{calls}"\n'
            'if [ "$1 $2" = "pr list" ] && [ -n "$OPEN_PR" ]; then echo "$OPEN_PR"; fi\n'
        ),
        "git": (
            "#!/bin/sh\n"
            f'if [ "$1" = push ]; then echo "git $*" >> "{calls}"; exit 0; fi\n'
            'exec /usr/bin/git "$@"\n'
        ),
    }
    for name, script in scripts.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    return bin_dir


_EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def expression(expr: str, outputs: dict[str, dict[str, str]]) -> str:
    """The few expressions the workflow's run steps use: a step's output, the token."""
    found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
    if found:
        return outputs.get(found[1], {}).get(found[2], "")
    assert expr == "github.token", f"an expression this test does not know: {expr}"
    return "t0ken"


def condition(test: str, outputs: dict[str, dict[str, str]]) -> bool:
    found = re.fullmatch(r"(steps\.[\w-]+\.outputs\.[\w-]+) == '([^']*)'", test.strip())
    assert found, f"an if: this test does not know: {test}"
    return expression(found[1], outputs) == found[2]


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """A fresh runner: the workflow's `run` steps in order, in bash -eo pipefail, in the
    checkout (its `uses` steps are the checkout and the Python setup: done already, or a
    saving, the cache). Returns what each run did: the update step's output, the calls."""
    base = tmp_path_factory.mktemp("runner")
    bin_dir = stubs(base)

    def run(kb: Path, env: dict[str, str], temp: Path) -> dict:
        temp.mkdir(parents=True)
        outputs: dict[str, dict[str, str]] = {}
        calls = base / "calls"
        calls.unlink(missing_ok=True)
        logs = []
        for step in workflow()["jobs"]["update"]["steps"]:
            if "run" not in step or step["name"] == "Install errorkb":
                continue
            if "if" in step and not condition(step["if"], outputs):
                continue
            assert "${{" not in step["run"], "expressions reach scripts through env only"
            out_file = temp / f"output-{step.get('id', 'x')}"
            out_file.write_text("")
            step_env = {
                k: _EXPR.sub(lambda m: expression(m[1], outputs), str(v))
                for k, v in step.get("env", {}).items()
            }
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=kb,
                env={
                    **env,
                    **step_env,
                    "PATH": f"{bin_dir}:/usr/bin:/bin",
                    "RUNNER_TEMP": str(temp),
                    "GITHUB_OUTPUT": str(out_file),
                    "HOME": str(base),
                },
                capture_output=True,
                text=True,
                timeout=600,
            )
            logs.append(done.stderr)
            assert done.returncode == 0, f"{step['name']}:\n{done.stdout}\n{done.stderr}"
            if "id" in step:
                outputs[step["id"]] = dict(
                    line.split("=", 1) for line in out_file.read_text().splitlines()
                )
        body = temp / "update.md"
        return {
            "outputs": outputs.get("update", {}),
            "calls": calls.read_text().splitlines() if calls.exists() else [],
            "body": body.read_text() if body.exists() else "",
            "log": "\n".join(logs),
        }

    run.bin = bin_dir  # type: ignore[attr-defined]
    run.calls = base / "calls"  # type: ignore[attr-defined]
    return run


def records(kb: Path) -> dict[str, dict]:
    return {
        p.stem: yaml.safe_load(p.read_text())
        for p in sorted((kb / "content" / "errors" / PROJECT).glob("*.yaml"))
    }


def by_message(kb: Path) -> dict[str, dict]:
    """Every record by the start of each of its wordings."""
    out = {}
    for data in records(kb).values():
        for wording in [data["message"], *data.get("variants", [])]:
            text = wording if isinstance(wording, str) else wording["message"]
            out[text[:12]] = data
    return out


def project_file(kb: Path) -> dict:
    return yaml.safe_load((kb / "content" / "projects" / f"{PROJECT}.yaml").read_text())


EXPLANATION = "meaning: |\n  Written by a person.\nsolutions:\n  - Lower the batch size.\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, runner):
    """toykit's first scan, `errorkb update --project toykit` with 1.0.0 alone on the index;
    then, two records explained by hand and 1.1.0 published, a weekly run of the workflow on a
    fresh runner (an empty errorkb cache); then, its pull request merged, another: nothing new."""
    base = tmp_path_factory.mktemp("update")
    index = LocalIndex(base / "index")
    kb = make_kb(base / "kb")
    index.publish("1.0.0")
    temp = base / "temp1"
    temp.mkdir()
    done = subprocess.run(
        ["errorkb", "update", "--project", PROJECT, "--report", str(temp / "update.md")],
        cwd=kb,
        env={**pip_env(index, base / "cache1"), "PATH": f"{runner.bin}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    first = {"log": done.stderr, "body": (temp / "update.md").read_text()}
    first["records"] = records(kb)
    first["project"] = project_file(kb)
    # Committed, then a person explains two checks: one that will change, one that will not.
    git(kb, "add", "content")
    git(kb, "commit", "-q", "-m", "toykit 1.0.0")
    for start in ("batch size {", "heads ({head"):
        path = kb / "content" / "errors" / PROJECT / f"{by_message(kb)[start[:12]]['id']}.yaml"
        path.write_text(path.read_text() + EXPLANATION)
    git(kb, "commit", "-q", "-am", "explained by hand")
    before = records(kb)
    index.publish("1.1.0")
    second = runner(kb, pip_env(index, base / "cache2"), base / "temp2")
    second["before"] = before
    second["records"] = records(kb)
    second["project"] = project_file(kb)
    second["diff"] = git(kb, "diff", "--stat", "main", "HEAD")
    git(kb, "switch", "-q", "main")
    git(kb, "merge", "-q", "--ff-only", second["outputs"]["branch"])
    third = runner(kb, pip_env(index, base / "cache3"), base / "temp3")
    third["status"] = git(kb, "status", "--porcelain")
    third["branch"] = git(kb, "branch", "--show-current").strip()
    return {"kb": kb, "index": index, "first": first, "second": second, "third": third}


# The workflow file ----------------------------------------------------------------------------


def test_the_workflow_runs_weekly_and_by_hand_with_the_rights_a_pull_request_needs():
    flow = workflow()
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"schedule", "workflow_dispatch"}
    (cron,) = triggers["schedule"]
    assert len(cron["cron"].split()) == 5 and cron["cron"].split()[-1] != "*"  # weekly
    assert flow["permissions"] == {"contents": "write", "pull-requests": "write"}
    steps = flow["jobs"]["update"]["steps"]
    update_step = next(s for s in steps if s.get("id") == "update")
    args = cli.parser().parse_args(update_step["run"].split()[1:])
    assert args.func is cli.cmd_update and args.report is not None
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "~/.cache/errorkb/*/scans"


# Run 1: a first release ---------------------------------------------------------------------


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_a_first_scan_takes_the_release_whole(runs):
    first = runs["first"]
    assert "toykit: new on the index: 1.0.0" in first["log"]
    assert first["project"]["releases_scanned"] == ["1.0.0"]
    assert (first["project"]["version"], first["project"]["ref"]) == ("1.0.0", "v1.0.0")
    assert len(first["records"]) == 5
    assert all("status" not in r and "derived" in r for r in first["records"].values())
    assert first["body"].startswith("# New releases: toykit 1.0.0\n")
    assert "Scanned (its first scan): 1.0.0." in first["body"]
    assert "| added | 5 |" in first["body"] and "| removed | 0 |" in first["body"]


# Run 2: a new release, on a fresh runner ------------------------------------------------------


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_the_second_run_scans_only_the_new_release_as_new(runs):
    second = runs["second"]
    assert "toykit: new on the index: 1.1.0" in second["log"]
    assert "1.0.0" not in second["log"].split("new on the index:")[1].splitlines()[0]
    # The cache was empty: history scanned 1.0.0 again for the lineage, and found 1.1.0
    # scanned by update (which scans the new releases alone first).
    assert re.search(
        r"^toykit 1\.0\.0: 3 files, 5 sites \(5 raise.*; [\d.]+ s$", second["log"], re.M
    )
    assert re.search(r"^toykit 1\.1\.0: 4 files, 5 sites \(5 raise.*; cached$", second["log"], re.M)
    assert second["project"]["releases_scanned"] == ["1.0.0", "1.1.0"]
    assert (second["project"]["version"], second["project"]["ref"]) == ("1.1.0", "v1.1.0")
    assert second["outputs"]["title"] == "New releases: toykit 1.1.0"
    assert second["outputs"]["branch"] == "errorkb-update/toykit-1.1.0"
    assert second["calls"][0] == (
        "git push --force origin HEAD:refs/heads/errorkb-update/toykit-1.1.0"
    )
    assert second["calls"][2].startswith("gh pr create --head errorkb-update/toykit-1.1.0 ")


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_the_content_changes_as_the_release_did(runs):
    second, kb = runs["second"], runs["kb"]
    now = by_message(kb)
    added = now[DTYPE[:12]]
    assert added["id"] not in second["before"] and added["exception"] == "TypeError"
    assert added["versions"] == {"first": "1.1.0", "last": "1.1.0"}
    reworded = now[BATCH_NEW[:12]]
    assert reworded is now[BATCH_OLD[:12]] or reworded["id"] == now[BATCH_OLD[:12]]["id"]
    wordings = update.printed_in(reworded, "1.0.0"), update.printed_in(reworded, "1.1.0")
    assert wordings == ([BATCH_OLD], [BATCH_NEW])
    assert "Written by a person." in reworded["meaning"]  # the person's text kept
    moved = now["Cannot load "]
    assert moved["source"]["path"] == "toykit/storage/files.py"
    assert moved["source"]["ref"] == "v1.1.0"
    assert moved["versions"] == {"first": "1.0.0", "last": "1.1.0"}
    removed = now["Unknown mode"]
    assert removed["status"] == "removed" and removed["versions"]["last"] == "1.0.0"
    assert removed["source"]["path"] == "toykit/config.py"  # where 1.0.0 raised it
    heads = now["heads ({head"]
    assert heads["source"]["ref"] == "v1.1.0" and heads["derived"]["ref"] == "v1.1.0"
    workers_ = now["workers must"]
    assert workers_["derived"]["condition"] == "workers < 1 or workers > 64"
    assert len(second["records"]) == 6


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_the_report_lists_each_change_and_the_explained_records_that_need_a_person(runs):
    body, kb = runs["second"]["body"], runs["kb"]
    now = by_message(kb)
    ids = {
        name: now[start]["id"]
        for name, start in (
            ("added", DTYPE[:12]),
            ("reworded", BATCH_NEW[:12]),
            ("moved", "Cannot load "),
            ("removed", "Unknown mode"),
            ("condition", "workers must"),
            ("heads", "heads ({head"),
        )
    }
    assert body.startswith("# New releases: toykit 1.1.0\n\n## toykit 1.1.0\n")
    assert "Scanned since 1.0.0: 1.1.0." in body
    for kind, count in (
        ("added", 1),
        ("reworded", 1),
        ("moved", 1),
        ("removed", 1),
        ("merged into another record", 0),
        ("condition changed", 1),
    ):
        assert f"| {kind} | {count} |" in body
    sections = dict(
        (head.split(" (")[0], text)
        for head, text in (part.split("\n", 1) for part in body.split("\n### ")[1:])
    )
    assert f"`{ids['added']}`" in sections["Added"] and f"`{DTYPE}`" in sections["Added"]
    assert f"`{ids['reworded']}`" in sections["Reworded"]
    assert f"`{BATCH_OLD}` → `{BATCH_NEW}`" in sections["Reworded"]
    assert "`toykit/loader.py (load)` → `toykit/storage/files.py (load)`" in sections["Moved"]
    assert f"`{ids['removed']}`" in sections["Removed"] and ": gone" in sections["Removed"]
    confirm = sections["Removed checks to confirm in content/lineage/toykit.yaml"]
    assert f"```yaml\n{ids['removed']}: gone  # " in confirm, "a line ready for the file"
    assert "`workers < 1` → `workers < 1 or workers > 64`" in sections["Condition changed"]
    person = sections["Explained records whose check changed: a person must look"]
    assert person.strip() == (
        f"- [ ] `{ids['reworded']}` Batch size is larger than the maximum batch size"
        " (explained): reworded"
    ), "the explained record that did not change is not listed"
    person_head = "Explained records whose check changed: a person must look"
    expected = {
        "added": ["Added"],
        "reworded": [person_head, "Reworded"],
        "moved": ["Moved"],
        "removed": ["Removed", "Removed checks to confirm in content/lineage/toykit.yaml"],
        "condition": ["Condition changed"],
        "heads": [],
    }
    for kind, rid in ids.items():
        assert [name for name, text in sections.items() if rid in text] == expected[kind], kind
    assert "`errorkb verify-sources` against 1.1.0: 3 ok, 2 moved, 1 gone" in body
    assert "Active records verify-sources does not find" not in body


# Run 3: nothing new ------------------------------------------------------------------------


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_a_run_with_nothing_new_says_so_and_opens_no_pull_request(runs):
    third = runs["third"]
    assert "toykit: nothing new (newest held: 1.1.0)" in third["log"]
    assert third["outputs"] == {
        "new": "false",
        "title": "No new release",
        "branch": "errorkb-update/none",
    }
    assert third["calls"] == []  # no push, no pull request
    assert third["body"] == (
        "# No new release\n\nEvery release on the index is held already (toykit 1.1.0).\n"
    )
    assert third["status"] == "" and third["branch"] == "main"  # nothing written


def test_a_pull_request_open_for_the_same_releases_gets_the_new_commit_and_no_twin(
    runner, tmp_path
):
    kb = make_kb(tmp_path / "kb")
    (kb / "content" / "errors" / PROJECT / "x.yaml").write_text("id: x\n")
    (step,) = [
        s
        for s in workflow()["jobs"]["update"]["steps"]
        if s.get("id") != "update" and "run" in s and s["name"] != "Install errorkb"
    ]
    runner.calls.unlink(missing_ok=True)
    env = {
        "PATH": f"{runner.bin}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "RUNNER_TEMP": str(tmp_path),
        "TITLE": "New releases: toykit 1.1.0",
        "BRANCH": "errorkb-update/toykit-1.1.0",
        "GH_TOKEN": "t0ken",
        "OPEN_PR": "7",
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=kb,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert runner.calls.read_text().splitlines() == [
        "git push --force origin HEAD:refs/heads/errorkb-update/toykit-1.1.0",
        "gh pr list --head errorkb-update/toykit-1.1.0 --state open --json number --jq .[].number",
    ]
    assert "pull request #7 from errorkb-update/toykit-1.1.0 is open" in done.stdout
    assert git(kb, "log", "-1", "--format=%s %an").strip() == (
        "New releases: toykit 1.1.0 github-actions[bot]"
    )
    assert "content/errors/toykit/x.yaml" in git(kb, "show", "--name-only", "--format=")


# The command alone -------------------------------------------------------------------------


@pytest.mark.slow  # the module's runs: two releases scanned end to end (12 s)
def test_dry_run_names_the_new_releases_from_the_index_it_is_given(
    runs, tmp_path, monkeypatch, capsys
):
    kb = make_kb(tmp_path / "kb")
    path = kb / "content" / "projects" / f"{PROJECT}.yaml"
    path.write_text(path.read_text() + 'releases_scanned: ["1.0.0"]\n')
    for name in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(name)
    for name, value in pip_env(runs["index"], tmp_path / "cache").items():
        if name != "PIP_INDEX_URL":
            monkeypatch.setenv(name, value)
    argv = ["--root", str(kb), "update", "--project", PROJECT, "--dry-run"]
    code = cli.main(argv + ["--index-url", runs["index"].url])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "toykit: new on the index: 1.1.0" in err
    assert out == (
        "# New releases: toykit 1.1.0\n\n## toykit 1.1.0\n\n"
        "New on the index since 1.0.0: 1.1.0 (dry run: none scanned).\n"
    )
    assert project_file(kb)["releases_scanned"] == ["1.0.0"]  # nothing written
    assert not any((kb / "content" / "errors" / PROJECT).iterdir())
    assert "PIP_INDEX_URL" not in os.environ  # pip's setting only while it ran


@pytest.mark.parametrize(
    ("held", "available", "every", "new"),
    [
        ([], ["0.9", "1.0.0", "1.0.1"], False, ["0.9", "1.0.1"]),
        (["1.0.0"], ["1.0.0", "1.1.0rc1"], False, []),
        (["1.0.0"], ["1.0.0", "1.0.1", "1.1.0", "1.1.1"], False, ["1.0.1", "1.1.1"]),
        (["1.0.0"], ["1.0.0", "1.0.1", "1.1.0", "1.1.1"], True, ["1.0.1", "1.1.0", "1.1.1"]),
        (["0.9", "1.1.0"], ["0.9", "1.0.0", "1.1.0"], False, []),  # older ones are not new
    ],
)
def test_new_releases_are_those_after_the_newest_held(held, available, every, new):
    assert update.new_releases(held, history.sort_versions(available), every) == new


def test_pinning_keeps_every_other_line():
    text = 'name: X\n# the ref\nref: abc\nversion: 0.33.0\nreleases_scanned: ["0.33.0"]\n'
    assert update.with_pin(text, "0.34.0", "v0.34.0") == (
        'name: X\n# the ref\nref: "v0.34.0"\nversion: "0.34.0"\nreleases_scanned: ["0.33.0"]\n'
    )
    assert update.with_pin("name: X\n", "1.0", "v1.0") == 'name: X\nversion: "1.0"\nref: "v1.0"\n'


def test_merges_returns_and_successors_are_reported_and_explained_ones_flagged():
    def rec(message, **fields):
        return {
            "message": message,
            "versions": {"first": "1.0.0", "last": "1.1.0"},
            "source": {"path": "a.py", "line": 1, "function": "f"},
            **fields,
        }

    old = {
        "twin": rec("the same check, kept twice", meaning="A person's text."),
        "back": rec("printed again", status="removed"),
        "gone": rec("gone for good", solutions=["Upgrade."]),
    }
    new = {
        "back": rec("printed again"),
        "gone": rec("gone for good", status="removed", superseded_by="next", solutions=["x"]),
    }
    after = SimpleNamespace(
        records={rid: SimpleNamespace(title=f"Title of {rid}", data=d) for rid, d in new.items()},
        aliases={"twin": "back"},
    )
    found = update.ProjectUpdate(PROJECT, PROJECT, ["1.0.0"], new=["1.1.0"])
    update.classify(found, old, new, after, "1.0.0", "1.1.0")
    kinds = {k: [(c.id, c.detail) for c in v] for k, v in found.changes.items() if v}
    assert kinds == {
        "added": [("back", "printed again in 1.1.0: `printed again`")],
        "removed": [("gone", "superseded by `next`")],
        "merged": [("twin", "into `back`")],
    }
    assert [(kind, c.id) for kind, c in found.need_a_person()] == [
        ("removed", "gone"),
        ("merged", "twin"),
    ]
    body = update.markdown([found])
    assert "- [ ] `gone` Title of gone (explained): removed\n" in body
    assert "### Merged into another record (1)\n\n- `twin` the same check, kept twice" in body

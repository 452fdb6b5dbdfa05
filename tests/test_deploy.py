"""The GitHub Pages workflow (.github/workflows/pages.yml), run as far as it runs here: its
build step on the fixture knowledge base, and the artifact it uploads held to what Pages
takes (only files and folders, no symbolic or hard links, under 1 GB)."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"


def build_command(flow: dict) -> list[str]:
    """The build job's `errorkb build` step, as arguments."""
    lines = [
        line
        for step in flow["jobs"]["build"]["steps"]
        for line in step.get("run", "").splitlines()
    ]
    return shlex.split(next(line for line in lines if line.strip().startswith("errorkb build")))


def test_the_workflow_deploys_with_only_the_permissions_pages_needs():
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages"))
    assert build_command(flow)[-1] == upload["with"]["path"], "it uploads the folder it built"


def test_its_build_step_makes_an_artifact_pages_takes(kb):
    args = build_command(yaml.safe_load(WORKFLOW.read_text()))
    assert args[0] == "errorkb"
    done = subprocess.run(
        [sys.executable, "-m", "errorkb", *args[1:]], cwd=kb, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    site = kb / args[-1]
    total, inodes = 0, set()
    for folder, dirs, files in os.walk(site):
        for name in dirs + files:
            path = Path(folder) / name
            assert not path.is_symlink(), path
            if path.is_file():
                st = path.stat()
                assert st.st_nlink == 1, f"{path} is a hard link"
                assert st.st_ino not in inodes
                inodes.add(st.st_ino)
                total += st.st_size
    assert total < 1_000_000_000
    for page in ("index.html", "404.html", "_headers", "_redirects", "sitemap.xml"):
        assert (site / page).is_file(), page

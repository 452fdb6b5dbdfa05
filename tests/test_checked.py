"""Issue 40, item 5: every explained record of the real content names the release of its
project that its text was checked against (`checked.release`), and records checked against
vLLM's or SGLang's pinned release carry the fingerprint of their check, so that
`errorkb verify-sources` can say when the code changed since (tests/test_extract.py)."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parent.parent
EXPLAINED = re.compile(r"^(meaning|trigger|solutions):", re.M)
CHECKED = re.compile(r"^checked:\n  release: (\S+)\n(?:  check: ([0-9a-f]{12})\n)?", re.M)


def _projects() -> dict[str, dict]:
    return {
        path.stem: yaml.safe_load(path.read_text())
        for path in (ROOT / "content/projects").glob("*.yaml")
    }


def test_every_explained_record_names_the_release_it_was_checked_against():
    projects = _projects()
    missing, unknown = [], []
    for path in sorted((ROOT / "content/errors").glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        if not EXPLAINED.search(text):
            continue
        found = CHECKED.search(text)
        if found is None:
            missing.append(str(path.relative_to(ROOT)))
            continue
        project = projects[path.parent.name]
        scanned = [str(v) for v in project.get("releases_scanned", [])]
        release = found.group(1).strip("'\"")
        if release != str(project["version"]) and scanned and release not in scanned:
            unknown.append(f"{path.relative_to(ROOT)}: {release}")
    assert missing == [], f"{len(missing)} explained records without checked: {missing[:5]}"
    assert unknown == [], unknown[:5]

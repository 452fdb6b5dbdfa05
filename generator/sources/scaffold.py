"""`errorkb new`: a new record file with its id computed once."""

import hashlib
from pathlib import Path

import yaml

from errorkb.content import template
from errorkb.content.load import SCHEMA_LINE


def new_id(project: str, exception: str, message: str) -> str:
    """First 16 hex digits of sha256(project NUL exception NUL message)."""
    return hashlib.sha256(f"{project}\0{exception}\0{message}".encode()).hexdigest()[:16]


def scaffold(root: Path, project: str, exception: str, message: str) -> Path:
    """Write content/errors/<project>/<id>.yaml; refuse to overwrite an existing record."""
    rid = new_id(project, exception, message)
    path = Path(root) / "content" / "errors" / project / f"{rid}.yaml"
    if path.exists():
        raise FileExistsError(f"{path} already exists: this error has a record")
    record: dict[str, object] = {
        "id": rid,
        "project": project,
        "exception": exception,
        "message": message,
    }
    names = template.placeholders(message)
    if names:
        record["params"] = {
            name: {"type": "str", "about": "TODO: what it is, where to find it"} for name in names
        }
    record["source"] = {"path": "TODO/path/in/repo.py"}
    body = yaml.safe_dump(record, sort_keys=False, allow_unicode=True, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{SCHEMA_LINE}\n{body}", encoding="utf-8")
    return path

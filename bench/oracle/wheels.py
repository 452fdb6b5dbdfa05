"""Where the pinned wheels are, their Python files unpacked, and the engine subprocess."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = {"vllm": "0.33.0", "sglang": "0.5.23"}


def wheel_dirs() -> list[str]:
    dirs = [os.environ.get("ORACLE_WHEELS", ""), "/work/wheels"]
    cache = os.environ.get("ERRORKB_CACHE") or os.path.expanduser("~/.cache/errorkb")
    dirs += [cache, os.path.join(cache, "vllm"), os.path.join(cache, "sglang")]
    return [d for d in dirs if d and os.path.isdir(d)]


def find_wheel(project: str) -> str | None:
    for d in wheel_dirs():
        hits = sorted(glob.glob(os.path.join(d, f"{project}-{PINS[project]}-*.whl")))
        if hits:
            return hits[0]
    return None


def unpacked(project: str) -> str:
    """The wheel's .py files under /tmp/oracle-<project>-<version>/ (unpacked once)."""
    wheel = find_wheel(project)
    if wheel is None:
        raise SystemExit(f"no {project}=={PINS[project]} wheel in {wheel_dirs()}: "
                         f"pip download {project}=={PINS[project]} --no-deps "
                         "--only-binary :all: -d /work/wheels")
    target = f"/tmp/oracle-{project}-{PINS[project]}"
    stamp = os.path.join(target, ".unpacked")
    if not os.path.exists(stamp):
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.endswith(".py") and name.startswith(f"{project}/"):
                    z.extract(name, target)
        open(stamp, "w").close()
    return target


def run_engine(script: str, wheel_dir: str, points: list[dict], timeout: int = 1800) -> list:
    """The engine's answers for `points`, from `script` in a subprocess (no network is
    used: the engine code is only imported and its checks called)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLLM_", "SGLANG_", "SGL_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, os.path.join(HERE, script), wheel_dir],
                          input=json.dumps(points), capture_output=True, text=True,
                          timeout=timeout, env=env, cwd="/tmp")
    if proc.returncode != 0:
        raise RuntimeError(f"{script} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def write_golden(folder: str, name: str, rows: list[dict], every: int = 10) -> None:
    """One JSON line per point (every `every`th point of the grid, to keep the files
    small): the point, its family and what the engine does."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.jsonl"), "w", encoding="utf-8") as f:
        for r in rows[::every]:
            keep = {"point": r["point"], "family": r["family"], "engine": r["engine"]}
            f.write(json.dumps(keep, sort_keys=True, separators=(",", ":")) + "\n")

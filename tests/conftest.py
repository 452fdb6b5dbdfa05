import shutil
from pathlib import Path

import pytest

from generator.build import build

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "kb"


def make_kb(path: Path) -> Path:
    """A knowledge-base folder: the fixture content and the real templates."""
    shutil.copytree(FIXTURE / "content", path / "content")
    shutil.copytree(REPO / "templates", path / "templates")
    return path


@pytest.fixture
def kb(tmp_path) -> Path:
    return make_kb(tmp_path / "kb")


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory) -> Path:
    """The fixture knowledge base, built once."""
    root = make_kb(tmp_path_factory.mktemp("fixture") / "kb")
    build(root)
    return root / "site"


@pytest.fixture(scope="session")
def real_site(tmp_path_factory) -> Path:
    """The repository's own content, built once into a temporary folder."""
    out = tmp_path_factory.mktemp("real") / "site"
    build(REPO, out)
    return out

"""One generator, many projects: a second project with no wing of its own lives beside the
first, its errors are found, a message both print shows both, labelled, and only the project
whose wing has a calculator gets one."""

import json
import re
from pathlib import Path

import pytest

from errorkb.content.load import load_content
from errorkb.search import engine as search
from errorkb.search import index as search_index
from errorkb.site.build import build

SHARED = "Widget count ({count}) must be divisible by group size ({group_size})."
OWN = "Gearbox ratio {ratio} is outside the range the other tool accepts"


def write_record(folder: Path, rid: str, message: str, path: str, line: int) -> None:
    record = {
        "id": rid,
        "project": "other",
        "exception": "ValueError",
        "message": message,
        "params": {
            name: {"type": "int" if name != "ratio" else "float"}
            for name in re.findall(r"\{(\w+)\}", message)
        },
        "source": {"path": path, "line": line},
    }
    (folder / f"{rid}.yaml").write_text(json.dumps(record))  # JSON is YAML


@pytest.fixture(scope="module")
def two_projects(tmp_path_factory) -> Path:
    from tests.conftest import make_kb

    kb = make_kb(tmp_path_factory.mktemp("two") / "kb")
    (kb / "content/projects/other.yaml").write_text("name: Other\nrepo: example/other\nref: v2.0\n")
    folder = kb / "content/errors/other"
    folder.mkdir()
    write_record(folder, "0000000000000a01", SHARED, "other/widgets.py", 12)
    write_record(folder, "0000000000000a02", OWN, "other/gears.py", 40)
    build(kb)
    return kb


def test_an_error_of_the_second_project_lands_on_its_record(two_projects):
    index = search_index.open_index(two_projects, two_projects / "site")
    [top, *_] = search.search(
        index, "ValueError: Gearbox ratio 3.5 is outside the range the other tool accepts"
    )
    assert (top.id, top.project, top.match, top.values) == (
        "0000000000000a02",
        "Other",
        "exact",
        {"ratio": "3.5"},
    )


def test_a_message_both_projects_print_is_one_result_naming_both(two_projects):
    index = search_index.open_index(two_projects, two_projects / "site")
    paste = "ValueError: Widget count (10) must be divisible by group size (4)."

    def lead(text: str) -> list[str]:
        top = search.search(index, text)[0]
        assert top.exact and not top.tied
        return [top.project, *(other["project"] for other in top.also)]

    assert sorted(lead(paste)) == ["Demo", "Other"]
    # A paste that names its project (a traceback's path) leads with that project's record.
    named = 'File "/usr/lib/python3/site-packages/other/widgets.py", line 12\n' + paste
    assert lead(named) == ["Other", "Demo"]
    assert lead('File "/srv/demo/widgets.py", line 42\n' + paste) == ["Demo", "Other"]


def test_only_the_project_with_a_calculator_wing_gets_one(two_projects):
    site = two_projects / "site"
    other = (site / "errors/0000000000000a01/index.html").read_text()
    demo_calc = (site / "errors/00000000000000d4/index.html").read_text()
    assert 'class="calc"' not in other and 'class="calc"' in demo_calc
    assert (site / "projects/other/index.html").exists()
    assert (site / "api/projects/other.json").exists()
    index = json.loads((site / "search/index.json").read_text())
    assert index["hints"]["Other"] == "(?!)"  # no wing: no logger line of its own
    assert "CRITICAL" in index["hints"]["Demo"]  # the vLLM wing's logger line


def test_a_project_without_a_wing_has_no_extras(two_projects):
    content = load_content(two_projects)
    assert content.projects["other"].wing_key == "other"
    assert set(content.extras) == {"vllm"}  # the demo project uses vLLM's wing


def test_each_twin_page_links_the_other_project_s_page(two_projects):
    """a1 (Demo) and a01 (Other) print the same message: each page says so, with a switch to
    the other's page, and each JSON document lists the other."""
    site = two_projects / "site"
    pairs = [
        ("00000000000000a1", "0000000000000a01", "Other", "Demo"),
        ("0000000000000a01", "00000000000000a1", "Demo", "Other"),
    ]
    for rid, other, name, own in pairs:
        page = (site / f"errors/{rid}/index.html").read_text()
        # Above the fold: what it is, and the switch to the other engine's page
        assert f"Printed by {own} and {name} from the same code." in page
        assert f'<a href="/errors/{other}/">{name}</a>' in page
        assert f'<a href="/errors/{rid}/" aria-current="page">{own}</a>' in page
        doc = json.loads((site / f"api/errors/{rid}.json").read_text())
        assert [t["id"] for t in doc["computed"]["twins"]] == [other]
    own = json.loads((site / "api/errors/0000000000000a02.json").read_text())
    assert own["computed"]["twins"] == []

"""A source path's names are counted in UTF-8 bytes, as the file system that holds the site's
page of each source file counts them: a name `errorkb check` takes builds, and one byte more
is refused on its line."""

import pytest

from errorkb.content.load import MAX_NAME_BYTES, load_content
from errorkb.content.model import ContentError
from errorkb.site.build import build

A1 = "content/errors/demo/00000000000000a1.yaml"
EMOJI = "\U0001f600"  # 4 bytes in UTF-8
CJK = "\u6f22"  # 3 bytes
AT_LIMIT = {"emoji": EMOJI * 62 + "ab", "cjk": CJK * 83 + "a"}
OVER = {"emoji": EMOJI * 62 + "abc", "cjk": CJK * 83 + "ab"}


def place(kb, name: str, where: str = "source") -> None:
    """The record's source file (or another site of it) named `name`."""
    record = kb / A1
    text = record.read_text()
    if where == "source":
        text = text.replace("path: demo/widgets.py", f'path: "demo/{name}"')
    else:
        text = text.replace(
            "function: Grouper.split\n",
            f'function: Grouper.split\n  sites:\n    - path: "demo/{name}"\n',
        )
    record.write_text(text)


@pytest.mark.parametrize("name", AT_LIMIT.values(), ids=AT_LIMIT)
def test_a_name_at_the_byte_limit_passes_check_and_builds(kb, name):
    assert len(name.encode()) == MAX_NAME_BYTES
    place(kb, name)
    build(kb)
    assert (kb / "site" / "projects" / "demo" / "files" / "demo" / name / "index.html").is_file()


@pytest.mark.parametrize("where", ["source", "site"])
@pytest.mark.parametrize("name", OVER.values(), ids=OVER)
def test_a_name_one_byte_over_is_refused_on_its_line(kb, name, where):
    place(kb, name, where)
    with pytest.raises(ContentError) as caught:
        load_content(kb)
    (problem,) = caught.value.problems
    field, line = ("source.path", 20) if where == "source" else ("source.sites[0].path", 24)
    assert str(problem).startswith(f"{A1}:{line}: E115 {field}: ")
    assert str(problem).endswith(
        "is not a path inside the repository: it has a name of 251 bytes in UTF-8; names over"
        " 250 bytes are refused (the site writes a file of each name): correct it"
    )

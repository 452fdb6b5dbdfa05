"""The loader and validator: every problem code, with file, line and field."""

import re
from pathlib import Path

import pytest

from errorkb.content.load import load_content
from errorkb.content.model import CODES, ContentError

A1 = "content/errors/demo/00000000000000a1.yaml"
B2 = "content/errors/demo/00000000000000b2.yaml"
D4 = "content/errors/demo/00000000000000d4.yaml"


def problems_of(kb) -> list[str]:
    with pytest.raises(ContentError) as info:
        load_content(kb)
    return [str(p) for p in info.value.problems]


def edit(kb, rel: str, old: str, new: str) -> None:
    path = kb / rel
    text = path.read_text()
    assert old in text, f"fixture lacks {old!r}"
    path.write_text(text.replace(old, new, 1))


def line_of(kb, rel: str, needle: str) -> int:
    for number, line in enumerate((kb / rel).read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_fixture_is_valid(kb):
    content = load_content(kb)
    assert sorted(content.records) == [
        "00000000000000a1",
        "00000000000000b2",
        "00000000000000c3",
        "00000000000000d4",
    ]
    assert content.aliases == {"00000000000000ff": "00000000000000a1"}
    assert [g.slug for g in content.guides] == ["grouping"]
    assert content.records["00000000000000a1"].data["updated"] == "2026-11-02"  # dates stay text


# (code, file, old text, new text, field, the line holding this text)
CASES = [
    ("E100", A1, "summary: The widgets", "summary: [The widgets", "(file)", None),
    ("E101", B2, "exception: RuntimeError\n", "", "exception", "id:"),
    ("E102", A1, "tags: [config]", "tag: [config]", "tag", "tag:"),
    ("E103", A1, "line: 42", "line: forty-two", "source.line", "line: forty-two"),
    ("E103", A1, "method: human", "method: guessed", "analysis.method", "analysis:"),
    # a summary is plain text (a page's description, a link preview): backticks would show
    ("E103", A1, "summary: The widgets", "summary: The `widgets`", "summary", "summary:"),
    (
        "E104",
        A1,
        "related: [00000000000000b2]",
        "related: [00000000000000b3]",
        "related[0]",
        "related:",
    ),
    ("E105", A1, "id: 00000000000000a1", "id: 00000000000000A1", "id", "id:"),
    ("E105", A1, "id: 00000000000000a1", "id: 00000000000000a9", "id", "id:"),
    (
        "E106",
        B2,
        "updated: 2026-10-01",
        "updated: 2026-10-01\naliases: [00000000000000a1]",
        "aliases[0]",
        "aliases:",
    ),
    (
        "E107",
        A1,
        "  group_size:\n    type: int\n    about: The `--group-size` flag.\n",
        "",
        "params",
        "message:",
    ),
    ("E108", A1, "params:\n", "params:\n  spare:\n    type: int\n", "params.spare", "spare:"),
    ("E109", A1, "project: demo", "project: nodemo", "project", "project:"),
    (
        "E110",
        B2,
        "updated: 2026-10-01",
        "updated: 2026-10-01\nupdated: 2026-10-02",
        "updated",
        "updated: 2026-10-02",
    ),
    ("E112", D4, "name: tp_sizes", "name: tp_size", "calculator.name", "name: tp_size"),
    ("E112", D4, "tp: size}", "tp: sizes}", "calculator.inputs.tp", "inputs:"),
    ("E112", D4, "{heads: heads", "{cores: heads", "calculator.inputs.cores", "inputs:"),
    ("E113", D4, "heads: 40, tp: 4}", "heads: 40, tp: 6}", "checks[0]", "tp: 6"),
    ("E113", D4, "heads: 40, tp: 4}", "heads: 0, tp: 4}", "checks[0]", "heads: 0"),
]


@pytest.mark.parametrize(("code", "rel", "old", "new", "field", "needle"), CASES)
def test_each_problem_names_file_line_code_and_field(kb, code, rel, old, new, field, needle):
    edit(kb, rel, old, new)
    found = problems_of(kb)
    line = line_of(kb, rel, needle) if needle else None
    where = str(line) if line else r"\d+"
    pattern = rf"^{re.escape(rel)}:{where}: {code} {re.escape(field)}: .+"
    assert any(re.match(pattern, p) for p in found), found


def test_file_that_is_not_a_mapping(kb):
    (kb / B2).write_text("- just\n- a list\n")
    assert f"{B2}:1: E111 (file): the file must be a YAML mapping of field: value" in problems_of(
        kb
    )


def test_missing_site_settings(kb):
    (kb / "content/site.yaml").unlink()
    assert any(p.startswith("content/site.yaml:1: E114") for p in problems_of(kb))


def test_guide_naming_an_unknown_record(kb):
    edit(
        kb,
        "content/guides/grouping.md",
        "errors: [00000000000000a1]",
        "errors: [00000000000000a1, 0000000000000999]",
    )
    assert "content/guides/grouping.md:4: E104 errors[1]" in " ".join(problems_of(kb))


def test_every_problem_is_reported_at_once(kb):
    edit(kb, A1, "tags: [config]", "tag: [config]")
    edit(kb, B2, "project: demo", "project: other")
    (kb / "content/errors/demo/00000000000000d4.yaml").write_text("id: [unclosed\n")
    codes = {p.split(": ")[1].split()[0] for p in problems_of(kb)}
    assert {"E102", "E109", "E100"} <= codes


def test_problem_lines_carry_a_fix(kb):
    edit(kb, A1, "related: [00000000000000b2]", "related: [00000000000000b3]")
    (problem,) = problems_of(kb)
    assert "unknown id '00000000000000b3'" in problem and "use the id of a record" in problem


def test_codes_are_documented():
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for code in CODES:
        assert f"| {code} |" in readme, code


def test_schema_line_points_at_the_schema(kb):
    first = (kb / A1).read_text().splitlines()[0]
    target = first.split("$schema=")[1]
    assert (kb / "content/errors/demo" / target).resolve().name == "error.schema.json"


def test_unknown_field_in_nested_object(kb):
    edit(kb, A1, "  function: Grouper.split\n", "  function: Grouper.split\n  colour: red\n")
    assert f"{A1}:{line_of(kb, A1, 'colour:')}: E102 source.colour" in " ".join(problems_of(kb))


def test_wrong_type_names_expected_type(kb):
    edit(kb, A1, "situations:\n", "situations: several\nx_situations:\n")
    text = "\n".join(problems_of(kb))
    assert re.search(r"E103 situations: \"several\" is not of type array", text), text


def test_parse_cache_reuses_unchanged_files_and_rereads_edited_ones(kb, tmp_path):
    from errorkb.content.load import ParseCache

    cache_dir = tmp_path / "parse"
    cache = ParseCache(cache_dir)
    first = load_content(kb, cache)
    cache.save()
    warm = ParseCache(cache_dir)
    assert set(warm.entries) == {f"content/errors/demo/{n}.yaml" for n in first.records}
    edit(kb, B2, "summary: A group size", "summary: The group size")
    second = load_content(kb, warm)
    assert second.records["00000000000000b2"].data["summary"].startswith("The group size")
    edit(kb, B2, "updated: 2026-10-01", "updated: 2026-10-01\nupdated: 2026-10-02")
    assert any(" E110 " in p for p in problems_of_cached(kb, warm))  # problems are cached too


def test_the_parse_cache_keeps_a_file_for_each_shard_that_holds_records(kb, tmp_path):
    """A small knowledge base fills a few of the 256 shards: an empty shard has no file, and
    a shard its records left loses its file."""
    from errorkb.content.load import ParseCache

    cache_dir = tmp_path / "parse"
    cache = ParseCache(cache_dir)
    first = load_content(kb, cache)
    cache.save()
    files = {p.name for p in cache_dir.glob("*.pickle")}
    assert 0 < len(files) <= len(first.records)
    moved = kb / B2
    moved.write_text(moved.read_text().replace("path: ", "path: elsewhere/", 1))
    warm = ParseCache(cache_dir)
    load_content(kb, warm)
    warm.save()
    shards = {f"{warm._shard(rel, entry[1])}.pickle" for rel, entry in warm.entries.items()}
    assert {p.name for p in cache_dir.glob("*.pickle")} == shards
    assert len(ParseCache(cache_dir).entries) == len(first.records)


def problems_of_cached(kb, cache) -> list[str]:
    with pytest.raises(ContentError) as info:
        load_content(kb, cache)
    return [str(p) for p in info.value.problems]


def test_a_damaged_parse_cache_is_ignored(kb, tmp_path):
    from errorkb.content.load import ParseCache

    cache_dir = tmp_path / "parse"
    cache = ParseCache(cache_dir)
    load_content(kb, cache)
    cache.save()
    shards = sorted(cache_dir.glob("*.pickle"), key=lambda path: path.stat().st_size)
    shards[-1].write_bytes(b"not a pickle")  # the largest: it holds some records
    cache = ParseCache(cache_dir)
    assert 0 < len(cache.entries) < 4
    assert len(load_content(kb, cache).records) == 4
    cache.save()
    assert len(ParseCache(cache_dir).entries) == 4  # the damaged shard was rewritten


VLLM = Path(__file__).resolve().parent.parent / "content" / "errors" / "vllm"


def test_prompt_length_records_say_where_each_message_comes_from():
    """Checked against vLLM 0.33.0: in the server a prompt of exactly max_model_len tokens
    fails on max_tokens 0 (api_utils.get_max_tokens, SamplingParams._verify_args), and text
    or token-id prompts over it on the renderer's check (TokenizeParams._token_len_check),
    so neither record is the server's HTTP 400, and their examples use the LLM class."""
    import yaml

    exact = yaml.safe_load((VLLM / "a838f923a7406068.yaml").read_text())
    longer = yaml.safe_load((VLLM / "0af9937ed8b071bd.yaml").read_text())
    assert "max_tokens must be at least 1, got 0." in exact["meaning"]
    assert "18cd136ffb2c100b" in exact["related"]
    assert {"494d98bad51fd73e", "767d1a446ef8c22e"} <= set(longer["related"])
    for record in (exact, longer):
        assert "HTTP 400" not in record["summary"]
        example = record["example_fix"]
        assert example["before"]["language"] == "python" and "LLM(" in example["before"]["code"]


def test_the_schema_checkers_code_is_cached_and_a_broken_cache_made_again(tmp_path, monkeypatch):
    import fastjsonschema

    from errorkb.content import load

    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
    load._compiled(schema)({"id": "x"})
    (cached,) = (tmp_path / "cache" / "schemas").iterdir()
    made = cached.read_bytes()
    cached.write_bytes(b"\x00 not marshal")
    check = load._compiled(schema)
    with pytest.raises(fastjsonschema.JsonSchemaException):
        check({"id": 1})
    assert cached.read_bytes() == made
    # A cache that cannot be written (a file where its folder should be) only costs time.
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "file" / "cache"))
    with pytest.raises(fastjsonschema.JsonSchemaException):
        load._compiled(schema)({})


def test_a_related_former_id_names_the_live_record(kb):
    # 00000000000000ff is a1's former id: it still resolves, but the list should say a1.
    edit(kb, B2, "related: [00000000000000a1]", "related: [00000000000000ff]")
    (problem,) = problems_of(kb)
    assert "E104 related[0]" in problem
    assert "'00000000000000ff' is a former id of '00000000000000a1'" in problem

"""errorkb extract and verify-sources, on a source tree of our own (tests/fixtures/extract)."""

import ast
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from errorkb.content import template
from errorkb.content.load import SCHEMA_LINE, load_content
from errorkb.sources import extract as ex
from errorkb.sources.scaffold import new_id
from errorkb.sources.verify import verify_sources

TREE = Path(__file__).parent / "fixtures" / "extract" / "tree"
DEMO = "demo"  # the fixture knowledge base's project (tests/fixtures/kb), ref abc1234


def line_of(path: str, needle: str) -> int:
    """The line of the first occurrence of needle in a fixture file."""
    for number, line in enumerate((TREE / path).read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture(scope="module")
def scan():
    return ex.scan_tree(TREE)


def by_function(scan, path="demo/forms.py") -> dict[str, ex.Site]:
    return {s.function: s for s in scan.sites if s.path == path}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def record_of(kb: Path, exception: str, message: str) -> dict:
    return load(kb / f"content/errors/{DEMO}/{new_id(DEMO, exception, message)}.yaml")


def digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# Message forms --------------------------------------------------------------------

FORMS = {
    "plain": ("ValueError", "A plain message"),
    "attribute_chain": (
        "ValueError",
        "Total heads ({total_num_attention_heads}) must be even",
    ),
    "implicit": ("TypeError", "First part, then {a} and finally {b}."),
    "percent_tuple": ("ValueError", "Model {name} has {count} layers (100%)"),
    "percent_single": ("OSError", "Cannot open {path}"),
    "percent_mapping": ("ValueError", "Bad {key}: {ratio}"),
    "str_format": ("ValueError", "Got {len_items} of {total} items"),
    "str_format_named": ("LookupError", "User {user_name} has no key {key}"),
    "format_specs": ("ValueError", "Ratio {ratio} too high for size {size}"),
    "conversions": ("ValueError", "Unknown name {name}, did you mean {name_2}?"),
    "nested_quotes": ("ValueError", 'Missing "{name}" in the registry ({cfg_0})'),
    "literal_braces": ("ValueError", "Expected {{'a': 1}}, got {x}"),
    "braces_in_plain_string": ("ValueError", "Use {{name}} placeholders, not {{0}}"),
    "self_documenting": ("ValueError", "len(a)={len_a} does not match b={b}."),
    "raise_from": ("RuntimeError", "Cannot read {path}: {error}"),
    "variable": ("ValueError", "Too many items: {n}"),
    "module_constant": ("RuntimeError", "Limit reached; raise the limit in settings.toml"),
    "concatenation": ("ValueError", "No kernel fits. Reasons: {reasons}"),
    "logger_style": ("ValueError", "('Method %s is deprecated', {method})"),
    "keyword_detail": ("HTTPException", "Missing 'method' in request body"),
    "errno_first": ("OSError", "Failed to map {path}"),
    "same_expression_twice": ("ValueError", "{a_size} vs {b_size}, again {a_size}"),
    "colliding_names": ("ValueError", "First {limit}, second {limit_2}"),
    "fetch": ("ConnectionError", "Cannot fetch {url}"),
}


@pytest.mark.parametrize("function", FORMS)
def test_every_message_form_becomes_its_template(scan, function):
    site = by_function(scan)[f"Loader.{function}"]
    assert (site.exception, site.template) == FORMS[function]


def test_templates_follow_the_template_model(scan):
    for site in scan.sites:
        names = [name for name, _ in site.types]
        assert template.placeholders(site.template) == names
        assert all(name.isidentifier() for name in names)


def test_sites_have_the_raise_line_and_the_enclosing_qualname(scan):
    sites = by_function(scan)
    assert sites["Loader.implicit"].line == line_of("demo/forms.py", "raise TypeError(")
    assert sites["Loader.raise_from"].line == line_of("demo/forms.py", "raise RuntimeError(f")
    assert "Loader.outer.inner" in sites
    assert "Outer.Inner.method" in sites
    module_level = sites[""]
    assert module_level.template == "Module-level guard failed"
    assert module_level.place() == {"path": "demo/forms.py", "line": 10}


def test_placeholder_types_come_from_format_specs(scan):
    sites = by_function(scan)
    assert dict(sites["Loader.format_specs"].types) == {"ratio": "float", "size": "int"}
    assert dict(sites["Loader.percent_tuple"].types) == {"name": "any", "count": "int"}
    assert dict(sites["Loader.str_format"].types) == {"len_items": "int", "total": "any"}


def test_logger_style_arguments_are_tagged(scan):
    site = by_function(scan)["Loader.logger_style"]
    assert site.tags == (ex.LOGGER_STYLE_TAG,)
    assert all(not s.tags for s in scan.sites if s is not site)


@pytest.mark.parametrize(
    ("expression", "name"),
    [
        ("self.model_arch_config.total_num_attention_heads", "total_num_attention_heads"),
        ("x.shape", "x_shape"),
        ("self.shape", "shape"),
        ("type(model).__name__", "model_type"),
        ("type(self).__name__", "class_name"),
        ("self.__class__.__name__", "class_name"),
        ("len(items)", "len_items"),
        ("', '.join(sorted(names))", "names"),
        ("cfg['model_type']", "model_type"),
        ("args[0]", "args_0"),
        ("parts[-1]", "parts_last"),
        ("str(e)", "error"),
        ("tp // kv", "tp_div_kv"),
        ("get_tp_group()", "tp_group"),
        ("self._private", "private"),
        ("format_gib(free_memory)", "free_memory"),
        ("name or '<root>'", "name"),
        ("[type(c) for c in options]", "options"),
        ("getattr(cfg, 'hidden_size', 0)", "hidden_size"),
        ("x.size(0)", "x_size"),
    ],
)
def test_placeholder_names_are_readable(expression, name):
    found = ex.scan_file("m.py", f'raise ValueError(f"value {{{expression}}}")'.encode())
    assert found.sites[0].template == f"value {{{name}}}"


# Skipped raises -------------------------------------------------------------------


def test_skipped_raises_are_counted_by_reason():
    found = ex.scan_file("demo/skipped.py", (TREE / "demo/skipped.py").read_bytes())
    assert found.sites == []
    assert found.seen == 12
    assert dict(found.skipped) == {
        "re-raise": 2,
        "no-message": 3,
        "non-literal": 4,
        "factory-call": 1,
        "no-literal-text": 1,
        "bad-format": 1,
    }


def test_unparsable_files_are_reported(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    (tree / "demo" / "broken.py").write_text("def f(:\n    raise ValueError('x')\n")
    scan = ex.scan_tree(tree)
    assert [path for path, _ in scan.unparsable] == ["demo/broken.py"]
    assert "SyntaxError" in scan.unparsable[0][1]


def test_vendored_folders_are_skipped_unless_asked(scan):
    assert scan.vendored == 4
    assert not [s for s in scan.sites if "Vendored" in s.template]
    everything = ex.scan_tree(TREE, include_vendored=True)
    vendored = sorted(s.path for s in everything.sites if "Vendored" in s.template)
    assert vendored == [
        "demo/_vendor/lib.py",
        "demo/third_party/lib.py",
        "demo/thirdparty/lib.py",
        "demo/vendor/lib.py",
    ]


def test_test_code_is_skipped_but_names_that_only_look_alike_are_not(tmp_path):
    raising = 'def f():\n    raise ValueError("Raised in {}")\n'
    names = [
        "pkg/tests/unit/check.py",
        "pkg/multimodal/test/helpers.py",
        "pkg/conftest.py",
        "pkg/sub/test_ipc.py",
        "pkg/sub/ipc_test.py",
        "pkg/latest.py",
        "pkg/testing.py",
        "pkg/contest.py",
        "pkg/attest/run.py",
    ]
    for name in names:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(raising.replace("{}", name))
    scan = ex.scan_tree(tmp_path, jobs=1)
    kept = sorted(s.path for s in scan.sites)
    assert kept == ["pkg/attest/run.py", "pkg/contest.py", "pkg/latest.py", "pkg/testing.py"]
    assert scan.tests == 5


def test_exclude_patterns_skip_files():
    scan = ex.scan_tree(TREE, exclude=["demo/forms.py"])
    assert scan.excluded == 1
    assert not [s for s in scan.sites if s.path == "demo/forms.py"]


# Source trees ---------------------------------------------------------------------


def test_a_package_folder_keeps_its_name_in_paths(scan):
    package = ex.scan_tree(TREE / "demo")
    assert package.sites == scan.sites


def test_wheels_and_sdists_give_the_same_sites(tmp_path, scan):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in sorted(TREE.rglob("*.py")):
            archive.write(path, path.relative_to(TREE).as_posix())
        archive.writestr("demo-1.0.dist-info/METADATA", "Name: demo\n")
    sdist = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for path in sorted(TREE.rglob("*.py")):
            archive.add(path, "demo-1.0/" + path.relative_to(TREE).as_posix())
        info = tarfile.TarInfo("demo-1.0/PKG-INFO")
        info.size = 11
        archive.addfile(info, io.BytesIO(b"Name: demo\n"))
    assert ex.scan_tree(wheel).sites == scan.sites
    assert ex.scan_tree(sdist).sites == scan.sites


def test_a_missing_source_is_an_error(tmp_path):
    with pytest.raises(ex.SourceError):
        ex.scan_tree(tmp_path / "nope")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ex.SourceError):
        ex.scan_tree(tmp_path / "notes.txt")


def test_the_process_pool_gives_the_same_sites(monkeypatch, scan):
    monkeypatch.setattr(ex, "PARALLEL_BYTES", 0)
    assert ex.scan_tree(TREE, jobs=2).sites == scan.sites


# Matching -------------------------------------------------------------------------


def test_match_key_ignores_names_spacing_and_quotes_around_holes():
    key = ex.match_key("ValueError", "Unknown model {name} in  {path}")
    assert ex.match_key("ValueError", "Unknown model '{model}' in {p}") == key
    assert ex.match_key("ValueError", "Unknown model {a}\nin {b}") == key
    assert ex.match_key("TypeError", "Unknown model {name} in {path}") != key
    assert ex.match_key("ValueError", "Unknown model {name} at {path}") != key


# Records --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    st.lists(st.text(max_size=8), max_size=3),
)
def test_written_yaml_reads_back_as_written(message, variants):
    data = {
        "id": "0123456789abcdef",
        "message": message,
        "variants": variants,
        "source": {"path": message or "x.py", "line": 3, "sites": [{"path": "y.py", "line": 1}]},
    }
    assert yaml.load(ex.dump_yaml(data), Loader=yaml.SafeLoader) == data


def test_duplicates_across_files_make_one_record(kb):
    ex.extract(kb, TREE, DEMO)
    plain = record_of(kb, "ValueError", "A plain message")
    assert plain["source"]["path"] == "demo/dupes.py"
    assert plain["source"]["line"] == line_of("demo/dupes.py", 'raise ValueError("A plain')
    assert plain["source"]["function"] == "again"
    assert plain["source"]["sites"] == [
        {"path": "demo/dupes.py", "line": 11, "function": "again"},
        {"path": "demo/forms.py", "line": 15, "function": "Loader.plain"},
    ]
    # The same text raised as another exception is another error.
    assert record_of(kb, "TypeError", "A plain message")["source"]["path"] == "demo/dupes.py"
    # Same message, other placeholder names: one error; the first site's names are kept.
    items = record_of(kb, "ValueError", "Too many items: {count}")
    assert [s["path"] for s in items["source"]["sites"]] == ["demo/forms.py"]
    other_names = new_id(DEMO, "ValueError", "Too many items: {n}")
    assert not (kb / f"content/errors/demo/{other_names}.yaml").exists()


def test_new_records_are_stubs_that_pass_check(kb):
    summary = ex.extract(kb, TREE, DEMO, "v2.0")
    load_content(kb)  # raises on any problem
    path = kb / f"content/errors/{DEMO}/{new_id(DEMO, 'OSError', 'Cannot open {path}')}.yaml"
    text = path.read_text()
    assert text.startswith(SCHEMA_LINE + "\n")
    data = load(path)
    assert data.pop("derived")["ref"] == "v2.0"  # tests/test_explain.py checks the rest
    assert data == {
        "id": path.stem,
        "project": DEMO,
        "exception": "OSError",
        "message": "Cannot open {path}",
        "params": {"path": {"type": "any"}},
        "source": {
            "path": "demo/forms.py",
            "line": line_of("demo/forms.py", 'raise OSError("Cannot open'),
            "function": "Loader.percent_single",
            "ref": "v2.0",
        },
        "analysis": {"method": "extracted", "ref": "v2.0"},
    }
    logger = record_of(kb, "ValueError", "('Method %s is deprecated', {method})")
    assert logger["tags"] == [ex.LOGGER_STYLE_TAG]
    assert summary.scan.seen == 47
    # One record per wording, except 00000000000000a1, whose variant is raised too.
    records = len(summary.created) + len(summary.updated) + len(summary.unchanged)
    assert records == summary.templates - 1
    for rid in summary.created:
        assert "snippet" not in load(kb / f"content/errors/demo/{rid}.yaml")["source"]


def test_extract_is_stable(kb):
    ex.extract(kb, TREE, DEMO)
    before = digest(kb / "content")
    again = ex.extract(kb, TREE, DEMO)
    assert again.created == again.updated == []
    assert digest(kb / "content") == before


def test_merging_never_overwrites_curated_fields(kb):
    errors = kb / "content/errors/demo"
    old = {p.name: p.read_text() for p in errors.glob("*.yaml")}
    summary = ex.extract(kb, TREE, DEMO)
    # d4's site is where it was: only what is derived from the code is added.
    assert sorted(summary.updated) == ["00000000000000a1", "00000000000000b2", "00000000000000d4"]
    # Not raised in the tree: left alone (verify-sources reports it).
    assert (errors / "00000000000000c3.yaml").read_text() == old["00000000000000c3.yaml"]
    d4 = load(errors / "00000000000000d4.yaml")
    assert d4.pop("derived")["ref"] == "abc1234"
    assert d4 == yaml.safe_load(old["00000000000000d4.yaml"])

    a1_old, a1_new = old["00000000000000a1.yaml"], (errors / "00000000000000a1.yaml").read_text()
    # Every byte outside the source block is kept: comments, styles, curated text.
    head = a1_old[: a1_old.index("source:\n")]
    tail = a1_old[a1_old.index("trigger:") :]
    assert a1_new.startswith(head) and a1_new.endswith(tail)
    old_data, new_data = yaml.safe_load(a1_old), yaml.safe_load(a1_new)
    assert {k: v for k, v in new_data.items() if k not in ("source", "derived")} == {
        k: v for k, v in old_data.items() if k != "source"
    }
    # The message's site first, the variant's after; the curated snippet stays.
    assert new_data["source"] == {
        "path": "demo/widgets.py",
        "line": line_of("demo/widgets.py", "raise ValueError("),
        "function": "Grouper.split",
        "snippet": old_data["source"]["snippet"],
        "sites": [{"path": "demo/widgets.py", "line": 22, "function": "Grouper.check"}],
    }
    b2 = load(errors / "00000000000000b2.yaml")
    assert b2["message"] == "Group size must be positive, got {group_size}"
    assert b2["source"] == {"path": "demo/widgets.py", "line": 9, "function": "Grouper.__init__"}
    load_content(kb)


def test_an_existing_record_is_matched_by_a_variant(kb):
    a1 = kb / "content/errors/demo/00000000000000a1.yaml"
    # A record that only knows the variant's wording still gets its site.
    a1.write_text(
        a1.read_text().replace(
            "message: Widget count ({count}) must be divisible by group size ({group_size}).",
            "message: Widget count ({count}) is bad ({group_size}).",
        )
    )
    ex.extract(kb, TREE, DEMO)
    source = load(a1)["source"]
    assert (source["line"], source["function"]) == (22, "Grouper.check")


def test_an_existing_record_is_matched_by_its_id_after_its_text_was_corrected(kb):
    rid = new_id(DEMO, "OSError", "Cannot open {path}")
    path = kb / f"content/errors/demo/{rid}.yaml"
    path.write_text(
        f"{SCHEMA_LINE}\nid: {rid}\nproject: demo\nexception: OSError\n"
        "message: Cannot open the file {path}  # corrected by hand\n"
        "source: {path: demo/old.py}\n"
    )
    summary = ex.extract(kb, TREE, DEMO)
    assert rid in summary.updated
    record = load(path)
    assert record["message"] == "Cannot open the file {path}"
    assert record["source"]["function"] == "Loader.percent_single"


def test_progress_bar_draws_on_a_terminal():
    out = io.StringIO()
    bar = ex.Progress(3, "scanning", stream=out, enabled=True)
    for _ in range(3):
        bar.advance()
    bar.close()
    assert out.getvalue().endswith("scanning [" + "#" * 30 + "] 3/3\n")
    quiet = io.StringIO()
    ex.Progress(3, "scanning", stream=quiet).advance()
    assert quiet.getvalue() == ""


def test_snippets_only_when_asked(kb):
    ex.extract(kb, TREE, DEMO, snippets=True)
    record = record_of(kb, "TypeError", "First part, then {a} and finally {b}.")
    assert record["source"]["snippet"] == (
        'raise TypeError(\n    "First part, "\n    f"then {a} "\n'
        '    "and finally "\n    f"{b}."\n)\n'
    )
    load_content(kb)


def test_asserts_only_when_asked(kb):
    rid = new_id(DEMO, "AssertionError", "x must be positive, got {x}")
    ex.extract(kb, TREE, DEMO)
    assert not (kb / f"content/errors/demo/{rid}.yaml").exists()
    summary = ex.extract(kb, TREE, DEMO, asserts=True)
    assert summary.created == [rid]


PRINTED = """\
import logging
logger = logging.getLogger(__name__)

def pick_backend(cfg):
    if cfg.window is not None:
        logger.warning("Sliding window is not supported with %s; falling back.", cfg.backend)
    if not cfg.ready:
        logger.error("Worker %d stopped answering", cfg.rank)
    raise ValueError(f"no backend for {cfg.dtype}")
"""


def test_log_lines_only_when_asked_and_then_explained_as_logged(kb, tmp_path):
    tree = tmp_path / "tree" / "demo"
    tree.mkdir(parents=True)
    (tree / "backends.py").write_text(PRINTED)
    warn = new_id(DEMO, "WARNING", "Sliding window is not supported with {backend}; falling back.")
    error = new_id(DEMO, "ERROR", "Worker {rank} stopped answering")
    raised = new_id(DEMO, "ValueError", "no backend for {cfg_dtype}")
    assert ex.extract(kb, tree.parent, DEMO).created == [raised]  # no log lines unasked
    created = ex.extract(kb, tree.parent, DEMO, printed=True).created
    assert sorted(created) == sorted([warn, error])
    record = load(kb / f"content/errors/demo/{warn}.yaml")
    assert (record["kind"], record["level"]) == ("log", "warning")
    derived = record["derived"]
    assert derived["condition"] == "cfg.window is not None"
    assert derived["category"] == "unsupported-combination"  # from its words
    assert derived["explanation"].startswith("A warning: the program logs it and goes on")
    assert derived["try"][0] == "If what it says is what you meant, nothing needs doing."
    logged = load(kb / f"content/errors/demo/{error}.yaml")["derived"]
    # not "an internal invariant failed", nor "logged" (nothing failed): an error line claims
    # no kind the rules did not see (derived.claimed)
    assert "category" not in logged
    assert logged["condition"] == "not cfg.ready"
    assert logged["try"][-1].startswith("Read the log lines before it")
    # Records of log lines exist now: a plain extract reads logger calls to keep them found.
    again = ex.extract(kb, tree.parent, DEMO)
    assert not again.created and {warn, error} <= set(again.unchanged)
    load_content(kb)  # the written records pass the schema


def test_dry_run_writes_nothing(kb):
    before = digest(kb / "content")
    summary = ex.extract(kb, TREE, DEMO, dry_run=True)
    assert summary.created and digest(kb / "content") == before


def test_unknown_project_is_an_error(kb):
    with pytest.raises(ex.SourceError, match="unknown project"):
        ex.extract(kb, TREE, "nope")


# verify-sources ---------------------------------------------------------------------


@pytest.fixture
def changed_tree(tmp_path) -> Path:
    """The fixture tree one release later: a raise moved, one reworded, one removed."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    widgets = tree / "demo/widgets.py"
    widgets.write_text(widgets.read_text().replace("class Grouper:", "\n\nclass Grouper:"))
    forms = tree / "demo/forms.py"
    text = forms.read_text()
    text = text.replace("Inner failure for {x}", "Inner failure while handling {x}")
    text = text.replace('raise ConnectionError(f"Cannot fetch {url}")', "return url")
    forms.write_text(text)
    return tree


def findings(report) -> dict[str, str]:
    return {f.id: f.status for f in report.findings}


def test_verify_sources_reports_ok_moved_reworded_and_gone(kb, changed_tree):
    ex.extract(kb, TREE, DEMO)
    inner = new_id(DEMO, "ValueError", "Inner failure for {x}")
    fetch = new_id(DEMO, "ConnectionError", "Cannot fetch {url}")
    report = verify_sources(kb, changed_tree, DEMO)
    status = findings(report)
    assert status["00000000000000a1"] == status["00000000000000b2"] == "moved"
    assert status["00000000000000d4"] == "ok"
    assert status["00000000000000c3"] == "gone"
    assert status[inner] == "reworded"
    assert status[fetch] == "gone"
    assert report.counts() == {
        "ok": len(status) - 5,
        "moved": 2,
        "reworded": 1,
        "gone": 2,
        "not-checked": 0,
    }
    moved = next(f for f in report.findings if f.id == "00000000000000b2")
    assert (moved.line, moved.new["line"]) == (9, 11)
    reworded = next(f for f in report.findings if f.id == inner)
    assert reworded.variant == "Inner failure while handling {x}"
    assert reworded.similarity > 0.6
    assert report.unrecorded == 0
    text = report.text()
    assert "moved     00000000000000b2  demo/widgets.py:9 -> demo/widgets.py:11" in text
    assert "now: Inner failure while handling {x}" in text
    assert report.unresolved() == 5


def test_verify_sources_update_rewrites_locations_only(kb, changed_tree):
    ex.extract(kb, TREE, DEMO)
    inner = new_id(DEMO, "ValueError", "Inner failure for {x}")
    b2 = kb / "content/errors/demo/00000000000000b2.yaml"
    b2_old = b2.read_text()
    report = verify_sources(kb, changed_tree, DEMO, update=True)
    assert sorted(f.id for f in report.findings if f.updated) == sorted(
        f.id for f in report.findings if f.status == "moved"
    )
    assert b2.read_text() == b2_old.replace("  line: 9\n", "  line: 11\n")
    again = verify_sources(kb, changed_tree, DEMO)
    assert findings(again)["00000000000000b2"] == "ok"
    assert findings(again)[inner] == "reworded"

    verify_sources(kb, changed_tree, DEMO, update=True, accept_variants=True)
    record = load(kb / f"content/errors/demo/{inner}.yaml")
    assert record["message"] == "Inner failure for {x}"
    assert record["variants"] == ["Inner failure while handling {x}"]
    final = findings(verify_sources(kb, changed_tree, DEMO))
    assert final[inner] == "ok"
    assert sorted(i for i, s in final.items() if s != "ok") == sorted(
        ["00000000000000c3", new_id(DEMO, "ConnectionError", "Cannot fetch {url}")]
    )
    load_content(kb)


def test_verify_sources_skips_records_of_other_languages(kb):
    b2 = kb / "content/errors/demo/00000000000000b2.yaml"
    b2.write_text(b2.read_text().replace("demo/widgets.py", "rust/src/widgets.rs"))
    status = findings(verify_sources(kb, TREE, DEMO))
    assert status["00000000000000b2"] == "not-checked"


# The command ------------------------------------------------------------------------


def errorkb(kb, *args):
    return subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_the_commands(kb, changed_tree):
    result = errorkb(kb, "extract", str(TREE), "--project", DEMO, "--ref", "abc1234")
    assert result.returncode == 0, result.stderr
    assert "raise statements seen: 47" in result.stderr
    assert "    re-raise: 2 (" in result.stderr
    assert "records: " in result.stderr and " created, 3 updated, 0 unchanged" in result.stderr
    assert errorkb(kb, "check").returncode == 0

    result = errorkb(kb, "verify-sources", str(TREE))
    assert result.returncode == 1  # 00000000000000c3 is gone
    assert "gone      00000000000000c3  demo/registry.py" in result.stdout

    result = errorkb(kb, "verify-sources", str(changed_tree), "--json")
    report = json.loads(result.stdout)
    assert report["counts"]["moved"] == 2 and report["counts"]["reworded"] == 1
    assert result.returncode == 1

    result = errorkb(kb, "verify-sources", str(changed_tree), "--accept-variants")
    assert result.returncode == 2

    result = errorkb(kb, "extract", str(kb / "nope"), "--project", DEMO)
    assert result.returncode == 1 and "does not exist" in result.stderr


def test_a_message_built_with_plus_equals_is_read_whole():
    """Issue 40: SGLang 0.5.23 builds its unbalanced-memory error as `msg = "..."` then
    `msg += f"..."` and raises (or logs) `msg`: both sites are found, with the whole text."""
    code = (
        "def check(pre, local):\n"
        "    if pre < local * 0.9:\n"
        '        msg = "The memory capacity is unbalanced. "\n'
        '        msg += f"{pre=}, {local=}"\n'
        "        if strict():\n"
        "            raise RuntimeError(msg)\n"
        "        else:\n"
        "            logger.warning(msg)\n"
        "def later(x):\n"
        '    msg = "Value was "\n'
        "    log(msg)\n"
        '    msg += f"{x}"\n'
        "    raise ValueError(msg)\n"
    )
    sites = ex.scan_file("m.py", code.encode(), printed=True).sites
    whole = "The memory capacity is unbalanced. pre={pre}, local={local}"
    assert [(s.kind, s.exception, s.template) for s in sites] == [
        ("raise", "RuntimeError", whole),
        ("log", "WARNING", whole),
        ("raise", "ValueError", "Value was {x}"),
    ]  # `later`: the `+=` is not right after the assignment; read from the statements before
    # the raise (SCAN_FORMAT 6), msg has one value there


def test_verify_sources_reports_explained_records_whose_check_changed(kb, tmp_path):
    """Issue 40, item 5: an explained record names the release it was checked against and the
    fingerprint of its check then; verify-sources reports it when the check differs (another
    guarding test), not when the raise only moved."""
    from errorkb.sources.verify import fingerprint

    scan = ex.scan_tree(TREE, snippets=True)
    (site,) = [s for s in scan.sites if s.template.startswith("Heads ({")]
    d4 = kb / "content/errors/demo/00000000000000d4.yaml"
    stamp = f"checked:\n  release: 1.0.0\n  check: {fingerprint(site)}\n"
    d4.write_text(d4.read_text().replace("updated: 2026-09-01\n", stamp + "updated: 2026-09-01\n"))
    assert load_content(kb).records["00000000000000d4"].checked["release"] == "1.0.0"

    same = verify_sources(kb, TREE, DEMO)
    assert same.changed_checks() == []
    moved = tmp_path / "moved"
    shutil.copytree(TREE, moved)
    parallel = moved / "demo/parallel.py"
    parallel.write_text("\n\n" + parallel.read_text())  # the same check, two lines lower
    assert verify_sources(kb, moved, DEMO).changed_checks() == []

    changed = tmp_path / "changed"
    shutil.copytree(TREE, changed)
    parallel = changed / "demo/parallel.py"
    text = parallel.read_text()
    assert "if HEADS % SIZE:" in text
    parallel.write_text(text.replace("if HEADS % SIZE:", "if HEADS % (SIZE * 2):"))
    report = verify_sources(kb, changed, DEMO)
    assert [f.id for f in report.changed_checks()] == ["00000000000000d4"]
    assert "changed   00000000000000d4" in report.text()
    assert "explained against demo 1.0.0" in report.text()
    assert report.to_json()["check_changed"] == ["00000000000000d4"]
    assert report.unresolved() >= 1


# Messages relayed through a helper, an exception class or a function that builds them -------


def _relay_tree(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, str], ex.Site]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "pkg" / "__init__.py").touch()
    scan = ex.scan_tree(tmp_path / "pkg", printed=True, jobs=1, progress=False)
    return {(site.path, site.exception): site for site in scan.sites}


def test_a_message_given_to_a_helper_that_raises_or_warns_is_read_at_the_call(tmp_path):
    sites = _relay_tree(
        tmp_path,
        {
            "utils/common.py": (
                "import logging\n"
                "logger = logging.getLogger(__name__)\n"
                "def raise_error_or_warn(obj, strict, counter_name, message):\n"
                "    if strict:\n"
                "        raise ValueError(message)\n"
                "    else:\n"
                "        logger.warning(message)\n"
            ),
            "utils/__init__.py": "from .common import raise_error_or_warn\n",
            "checker.py": (
                "from pkg.utils import raise_error_or_warn\n"
                "def check(pool, strict):\n"
                "    if pool.free != pool.size:\n"
                "        msg = (\n"
                '            "req_to_token_pool memory leak detected!"\n'
                '            f"available_size={pool.free}, total_size={pool.size}"\n'
                "        )\n"
                '        raise_error_or_warn(pool, strict, "count", msg)\n'
            ),
        },
    )
    text = "req_to_token_pool memory leak detected!available_size={free}, total_size={pool_size}"
    raised = sites[("pkg/checker.py", "ValueError")]
    warned = sites[("pkg/checker.py", "WARNING")]
    assert raised.template == warned.template == text
    assert raised.kind == "raise" and warned.kind == "log" and warned.level == "warning"
    assert raised.line == warned.line == 8 and raised.function == "check"
    # the helper's own `raise ValueError(message)` has no text of its own: no site
    assert not any(path == "pkg/utils/common.py" for path, _ in sites)


def test_a_helper_of_the_same_name_elsewhere_is_not_taken_for_it(tmp_path):
    sites = _relay_tree(
        tmp_path,
        {
            "a.py": "def fail(message):\n    raise ValueError(message)\n",
            "b.py": "def fail(message):\n    raise RuntimeError(message)\n",
            "c.py": "from pkg.a import fail\ndef f(x):\n    if x:\n        fail('x is set')\n",
            "d.py": "def fail(message):\n    print(message)\ndef g(x):\n    fail('no raise')\n",
        },
    )
    assert sites[("pkg/c.py", "ValueError")].template == "x is set"
    assert ("pkg/c.py", "RuntimeError") not in sites
    assert not any(path == "pkg/d.py" for path, _ in sites)


def test_a_message_an_exception_class_builds_is_read_at_the_raise(tmp_path):
    sites = _relay_tree(
        tmp_path,
        {
            "exceptions.py": (
                "class LoRAAdapterNotFoundError(Exception):\n"
                "    def __init__(self, lora_name, lora_path):\n"
                '        message = f"Loading lora {lora_name} failed: No adapter found for '
                '{lora_path}"\n'
                "        self.message = message\n"
                "    def __str__(self):\n"
                "        return self.message\n"
                "class TransferError(Exception):\n"
                "    def __init__(self, room, reason):\n"
                '        super().__init__(f"TransferError(room={room}): {reason}")\n'
            ),
            "manager.py": (
                "from pkg.exceptions import LoRAAdapterNotFoundError, TransferError\n"
                "def load(request):\n"
                "    if not request.found:\n"
                "        raise LoRAAdapterNotFoundError(request.lora_name, request.lora_path)\n"
                "    if request.bad:\n"
                '        raise TransferError(request.room, "Failed to send")\n'
            ),
        },
    )
    lora = sites[("pkg/manager.py", "LoRAAdapterNotFoundError")]
    assert lora.template == "Loading lora {lora_name} failed: No adapter found for {lora_path}"
    assert lora.line == 4 and not lora.cut
    assert sites[("pkg/manager.py", "TransferError")].template == (
        "TransferError(room={room}): Failed to send"
    )


def test_a_message_a_function_of_the_module_returns_is_read_whole(tmp_path):
    sites = _relay_tree(
        tmp_path,
        {
            "oracle.py": (
                "import logging\n"
                "logger = logging.getLogger(__name__)\n"
                "def select(backend):\n"
                "    def _make_log_backend(backend_name: str):\n"
                '        return f"Using {backend_name} backend for FP8 MoE"\n'
                "    if backend == 1:\n"
                '        logger.info(_make_log_backend("FlashInfer TRTLLM"))\n'
                "    raise ValueError(_make_log_backend(backend) + ' is unknown')\n"
            ),
        },
    )
    assert sites[("pkg/oracle.py", "INFO")].template == (
        "Using FlashInfer TRTLLM backend for FP8 MoE"
    )
    raised = sites[("pkg/oracle.py", "ValueError")]
    assert raised.template == "Using {backend} backend for FP8 MoE is unknown"


def test_only_a_file_that_imports_a_relay_and_calls_it_is_scanned_again(tmp_path, monkeypatch):
    scanned: list[str] = []
    real = ex.scan_file

    def counting(path, *args, **kwargs):
        scanned.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ex, "scan_file", counting)
    sites = _relay_tree(
        tmp_path,
        {
            "a.py": "def fail(message):\n    raise ValueError(message)\n",
            "c.py": "from pkg.a import fail\ndef f(x):\n    if x:\n        fail('x is set')\n",
            # the same name, not imported: a function of its own or of another module
            "d.py": "def g(x):\n    fail('not ours')\n",
            "e.py": "from pkg.a import fail\ndef h(x):\n    return x\n",  # imported, not called
        },
    )
    assert sites[("pkg/c.py", "ValueError")].template == "x is set"
    assert Counter(scanned) == Counter(
        {"pkg/__init__.py": 1, "pkg/a.py": 1, "pkg/c.py": 2, "pkg/d.py": 1, "pkg/e.py": 1}
    )


def test_a_local_is_read_as_its_value_only_when_assigned_once_outside_any_block():
    fn = ast.parse(
        "def f(a, b):\n"
        "    msg = f'{a} failed'\n"
        "    if b:\n"
        "        other = 'x'\n"
        "    twice = 1\n"
        "    twice = 2\n"
        "    for item in b:\n"
        "        pass\n"
        "    def inner():\n"
        "        hidden = 3\n"
        "    a = 'param'\n"
    ).body[0]
    assert set(ex._once(fn.body, {"a", "b"})) == {"msg"}


def test_a_loggers_spread_arguments_fill_its_conversions():
    """Issue 42 (vLLM 601af3e10ad92f27, SGLang 9bf7323fbbb120ea): `logger.info(fmt, *xs)`
    and `msg % args` fill the format from the tuple the code shows (`args = (a, b)`), else
    from `xs[0]`, `xs[1]`...; the template never keeps a `%s`. The reading before keeps the
    record (`former`). Two spreads stay as written."""
    code = (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "def a(self, op_name, cap, elapsed):\n"
        "    logger.info('all-reduce for %d-%d tokens', *self.tokens)\n"
        "    logger.warning('hpc.%s is unavailable on sm%s%s.', op_name, *cap)\n"
        "    logger.info('CC %d.%d in %.0f s', *cap, elapsed)\n"
        "    logger.info('two %s %s', *cap, *cap)\n"
        "def b(backend, event, fn_name):\n"
        "    message = '%s %s during inference: %s.'\n"
        "    args = (backend, event, fn_name)\n"
        "    if event:\n"
        "        raise RuntimeError(message % args)\n"
        "    logger.warning(message, *args)\n"
    )
    sites = ex.scan_file("m.py", code.encode(), printed=True).sites
    assert [(s.template, s.former) for s in sites] == [
        ("all-reduce for {tokens_0}-{tokens_1} tokens", "all-reduce for %d-%d tokens"),
        ("hpc.{op_name} is unavailable on sm{cap_0}{cap_1}.", "hpc.%s is unavailable on sm%s%s."),
        ("CC {cap_0}.{cap_1} in {elapsed} s", "CC %d.%d in %.0f s"),
        ("two %s %s", ""),
        ("{backend} {event} during inference: {fn_name}.", ""),
        ("{backend} {event} during inference: {fn_name}.", "%s %s during inference: %s."),
    ]

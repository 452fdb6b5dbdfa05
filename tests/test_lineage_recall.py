"""Lineage with recall (issue 41, item 2): a check renamed with its class, reworded under the
very same condition, widened to name more values, logged at another level, reworded in
words alike only by their stems, or still printed by a template of its function is followed
to the check that prints it now; the look-alikes beside each are not."""

import yaml

from errorkb.content.load import load_content
from errorkb.content.model import Record, Source
from errorkb.sources import chronicle, lineage
from errorkb.sources.extract import Site

ELSEWHERE = Site("ValueError", "unrelated", "b.py", 1, "f")


def at(message: str, function: str, guard: str = "", exc: str = "ValueError", **kw) -> Site:
    path = kw.pop("path", "vllm/" + function.split(".")[0].lower() + ".py")
    return Site(exc, message, path, kw.pop("line", 10), function, guard=guard, **kw)


def gone(found: lineage.History, start: str) -> lineage.Lineage:
    (lin,) = [lin for lin in found.lineages if lin.current.template.startswith(start)]
    return lin


# A class renamed ------------------------------------------------------------------------

MUSE_OLD = at(
    "MuseGlimmer: ATEM markup with no channel framing; is skip_special_tokens enabled?",
    "MuseGlimmerToolParser._tool_channel_text",
    "_MSG_HEADER_RE.search(text) is None",
    exc="WARNING",
    path="vllm/tool_parsers/muse_glimmer_tool_parser.py",
    kind="log",
)
MUSE_NEW = at(
    "Muse: ATEM markup with no channel framing; is skip_special_tokens enabled?",
    "MuseToolParser._tool_channel_text",
    "_MSG_HEADER_RE.search(text) is None",
    exc="WARNING",
    path="vllm/tool_parsers/muse_tool_parser.py",
    kind="log",
)


def test_the_name_of_a_renamed_class_in_its_methods_words_is_the_same_check():
    found = lineage.build([("1", [MUSE_OLD, ELSEWHERE]), ("2", [MUSE_NEW, ELSEWHERE])])
    old = gone(found, "MuseGlimmer:")
    assert old.absorbed and old.superseded_by.current.template == MUSE_NEW.template


def test_a_sibling_class_whose_old_namesake_still_prints_is_no_rename():
    # the old class still prints (another message): the new class is a sibling beside it
    kept = at(
        "Glimmer stays", "MuseGlimmerToolParser.other", exc="WARNING", kind="log", path="x.py"
    )
    found = lineage.build([("1", [MUSE_OLD, kept]), ("2", [MUSE_NEW, kept])])
    old = gone(found, "MuseGlimmer:")
    assert not old.absorbed and old.superseded_by is None


# The very same condition ----------------------------------------------------------------

ABORT_GUARD = "request is not None and await request.is_disconnected()"
ABORT_OLD = at("Abort request {rid}", "TokenizerManager._wait_one_response", ABORT_GUARD)
ABORT_NEW = at(
    "Request is disconnected from the client side (type 1). Abort request obj.rid={rid}",
    "TokenizerManager._wait_one_response",
    ABORT_GUARD,
    line=20,
)


def test_a_longer_message_under_the_very_same_condition_in_its_function_took_over():
    found = lineage.build([("1", [ABORT_OLD, ELSEWHERE]), ("2", [ABORT_NEW, ELSEWHERE])])
    old = gone(found, "Abort request")
    assert old.superseded_by is not None and not old.absorbed
    assert old.superseded_by.current.template == ABORT_NEW.template


def test_the_same_condition_printed_beside_it_all_along_is_no_successor():
    found = lineage.build([("1", [ABORT_OLD, ABORT_NEW]), ("2", [ABORT_NEW])])
    assert gone(found, "Abort request").superseded_by is None


def test_few_words_alike_under_another_condition_link_nothing():
    other = at(
        "Request is disconnected from the client side (type 1). Abort request obj.rid={rid}",
        "TokenizerManager._wait_one_response",
        "self.closed",
        line=20,
    )
    also = at("Finish: obj={obj}", "TokenizerManager._wait_one_response", "self.log", line=30)
    found = lineage.build([("1", [ABORT_OLD, ELSEWHERE]), ("2", [other, also, ELSEWHERE])])
    assert gone(found, "Abort request").superseded_by is None


# Every value the old condition tested, named ---------------------------------------------

REGEX_OLD = at(
    "regex and json_schema cannot be both set.",
    "SamplingParams.verify",
    "self.regex is not None and self.json_schema is not None",
)
REGEX_NEW = at(
    "Only one of regex, json_schema, or ebnf can be set.",
    "SamplingParams.verify",
    "sum((x is not None for x in grammars)) > 1",
    line=20,
)
TOP_K = at("top_k must be at least 1, got {top_k}.", "SamplingParams.verify", "top_k < 1", line=5)


def test_a_check_naming_every_value_the_old_condition_tested_took_over():
    found = lineage.build([("1", [REGEX_OLD, TOP_K]), ("2", [REGEX_NEW, TOP_K])])
    old = gone(found, "regex and")
    assert old.superseded_by is not None
    assert old.superseded_by.current.template == REGEX_NEW.template


def test_naming_the_values_is_not_enough_for_a_check_printed_beside_it():
    found = lineage.build([("1", [REGEX_OLD, REGEX_NEW]), ("2", [REGEX_NEW])])
    assert gone(found, "regex and").superseded_by is None


def test_the_tested_names_are_read_word_by_word():
    feats = lineage.Features.of(lineage.Wording(REGEX_OLD.key, [REGEX_OLD], "1", "1", 0, 0))
    assert {"regex", "json_schema"} <= feats.tested


# A log line's level ---------------------------------------------------------------------


def test_a_log_line_reworded_at_another_level_in_its_function_is_the_same_check():
    where = ("Scheduler.update_running_batch", "not batch.check_decode_mem()")
    old = at(
        "KV cache pool is full. Retract requests. #retracted_reqs: {n}, #new_token_ratio: {a}"
        " -> {b}",
        *where,
        exc="INFO",
        kind="log",
    )
    new = at(
        "{msg_prefix}#retracted_reqs: {n}, #new_tokens_gained: {g}, #new_token_ratio: {a} -> {b}",
        *where,
        exc="WARNING",
        kind="log",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert gone(found, "KV cache pool").absorbed


def test_another_level_elsewhere_is_still_another_check():
    old = at("Cache pool is full, retracting {n} requests", "A.f", "x", exc="INFO", kind="log")
    new = at("The cache pool is full, retracting {n} requests", "B.g", "y", exc="ERROR", kind="log")
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert not gone(found, "Cache pool").absorbed


# Words alike by their stems -------------------------------------------------------------


def test_one_check_for_another_in_its_function_in_words_alike_by_their_stems_took_over():
    where = "MultiConnector._aggregate_request_finished"
    old = at("Only one connector can produce KV transfer params", where, "params is not None")
    new = at("Key clash in kv_transfer_params from multiple connectors: {clashes}", where, "c")
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    old_lin = gone(found, "Only one connector")
    assert old_lin.superseded_by is not None
    assert old_lin.superseded_by.current.template == new.template


def test_stems_alone_link_nothing_where_the_function_gained_two_checks():
    where = "MultiConnector._aggregate_request_finished"
    old = at("Only one connector can produce KV transfer params", where, "params is not None")
    new = at("Key clash in kv_transfer_params from multiple connectors: {clashes}", where, "c")
    two = at("Connectors disagree", where, "d", line=30)
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, two, ELSEWHERE])])
    assert gone(found, "Only one connector").superseded_by is None


# Still printed by a template of its function --------------------------------------------

V2 = "VllmConfig._validate_v2_model_runner"
V2_ONE = at("VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid/mamba models", V2, "x")
V2_ANY = at("VLLM_USE_V2_MODEL_RUNNER does not yet support: {unsupported}", V2, "x")


def test_a_wording_a_template_of_its_function_prints_whole_is_that_checks_older_wording():
    found = lineage.build([("1", [V2_ONE, V2_ANY]), ("2", [V2_ANY])])
    old = gone(found, "VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid")
    assert old.absorbed and old.superseded_by.current.template == V2_ANY.template
    assert [row["why"] for row in found.log if row.get("why")] == ["covered"]


def test_a_new_template_that_would_print_it_is_not_proof_it_is_printed():
    found = lineage.build([("1", [V2_ONE, ELSEWHERE]), ("2", [V2_ANY, ELSEWHERE])])
    assert not [row for row in found.log if row.get("why") == "covered"]


def test_a_template_saying_little_of_its_own_covers_nothing():
    bare = at("Error: {e}", V2, "x")
    found = lineage.build([("1", [V2_ONE, bare]), ("2", [bare])])
    assert not gone(found, "VLLM_USE_V2_MODEL_RUNNER").absorbed


# The explained way of one site ----------------------------------------------------------


def _record(rid: str, method: str, line: int = 77) -> Record:
    data = {
        "id": rid,
        "project": "demo",
        "exception": "ValueError",
        "message": f"message {rid}",
        "status": "active",
        "source": {"path": "vllm/v1/core/kv_cache_planning.py", "line": line},
        "analysis": {"method": method},
    }
    return Record(Source(f"content/errors/demo/{rid}.yaml", data), data)


def test_an_old_wording_leads_to_the_way_of_its_site_a_person_explained():
    records = {
        "plain": _record("plain", "extracted"),
        "explained": _record("explained", "ai-assisted"),
        "elsewhere": _record("elsewhere", "extracted", line=5),
    }
    assert chronicle.explained_ways(records) == {"plain": "explained"}


def test_two_explained_ways_of_one_site_are_left_as_they_are():
    records = {
        "plain": _record("plain", "extracted"),
        "a": _record("a", "ai-assisted"),
        "b": _record("b", "human"),
    }
    assert chronicle.explained_ways(records) == {}


def test_tidy_reads_the_quantities_a_removed_record_tested_when_it_kept_no_condition():
    assert chronicle._guard({"derived": {"condition": "a > b", "quantities": ["x"]}}) == "a > b"
    assert chronicle._guard({"derived": {"quantities": ["envs.X", "p.size"]}}) == "envs.X, p.size"
    assert chronicle._guard({}) == ""


def test_a_class_of_another_family_in_the_same_words_is_no_rename():
    """Bamba's model gone and Lfm2Moe's new in one release, both saying "... currently does
    not support prefix caching": two models, not one renamed."""
    old = at(
        "Bamba currently does not support prefix caching",
        "BambaForCausalLM.__init__",
        "cache_config.enable_prefix_caching",
        path="vllm/models/bamba.py",
    )
    new = at(
        "Lfm2Moe currently does not support prefix caching",
        "Lfm2MoeForCausalLM.__init__",
        "cache_config.enable_prefix_caching",
        path="vllm/models/lfm2_moe.py",
    )
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    assert not gone(found, "Bamba").absorbed and gone(found, "Bamba").superseded_by is None


def test_a_line_logged_at_another_level_takes_over_nothing_in_other_words():
    where = ("VllmConfig.__post_init__", "")
    old = at(
        "Sequence parallelism is not supported with pipeline parallelism. Disabling sequence"
        " parallelism.",
        *where,
        exc="WARNING",
        kind="log",
    )
    new = at(
        "full_cuda_graph is not supported with cascade attention. Disabling cascade attention.",
        *where,
        exc="INFO",
        kind="log",
        line=30,
    )
    also = at("Another line", *where, exc="INFO", kind="log", line=40)
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, also, ELSEWHERE])])
    was = gone(found, "Sequence parallelism")
    assert was.superseded_by is None


# Tidy keeps what the records prove ------------------------------------------------------


def _write(kb, rid: str, message: str, function: str, versions: tuple, **extra) -> None:
    data = {
        "id": rid,
        "project": "demo",
        "exception": "WARNING",
        "kind": "log",
        "level": "warning",
        "message": message,
        "versions": {"first": versions[0], "last": versions[1]},
        "source": {"path": f"demo/{rid}.py", "line": 3, "function": function},
        "analysis": {"method": "extracted", "ref": "v1.0"},
        **extra,
    }
    text = "# yaml-language-server: $schema=../../../generator/error.schema.json\n"
    path = kb / "content" / "errors" / "demo" / f"{rid}.yaml"
    path.write_text(text + yaml.safe_dump(data, sort_keys=False))


def _tidy_renamed(kb, still_printed: bool) -> dict:
    old, new = "00000000000000a1", "00000000000000a2"
    _write(
        kb,
        old,
        "MuseGlimmer: ATEM markup with no channel framing.",
        "MuseGlimmerToolParser._tool_channel_text",
        ("1.0", "1.0"),
        status="removed",
        superseded_by=new,
    )
    _write(
        kb,
        new,
        "Muse: ATEM markup with no channel framing.",
        "MuseToolParser._tool_channel_text",
        ("2.0", "2.0"),
    )
    if still_printed:
        _write(kb, "00000000000000a3", "Glimmer stays", "MuseGlimmerToolParser.x", ("1.0", "2.0"))
    project = kb / "content" / "projects" / "demo.yaml"
    project.write_text(project.read_text() + 'releases_scanned: ["1.0", "2.0"]\n')
    chronicle.tidy(kb, load_content(kb), "demo")
    return yaml.safe_load((kb / "content" / "errors" / "demo" / f"{old}.yaml").read_text())


def test_tidy_keeps_the_link_to_the_check_of_a_class_renamed(kb):
    assert _tidy_renamed(kb, still_printed=False).get("superseded_by") == "00000000000000a2"


def test_tidy_drops_it_when_the_old_class_still_prints(kb):
    assert "superseded_by" not in _tidy_renamed(kb, still_printed=True)


def test_a_line_logged_at_another_level_still_takes_over_one_for_one():
    """The evidence that lets a retyped check take over (its function lost it alone and
    gained the new one alone) holds for a line logged at another level too."""
    where = ("ModelOptFp4Config.__init__", "is_checkpoint_nvfp4_serialized")
    old = at(
        "Detected nvfp4 checkpoint. Please note that the format is experimental.",
        *where,
        exc="WARNING",
        kind="log",
    )
    new = at("Detected nvfp4 checkpoint.", *where, exc="INFO", kind="log")
    found = lineage.build([("1", [old, ELSEWHERE]), ("2", [new, ELSEWHERE])])
    was = gone(found, "Detected nvfp4 checkpoint. Please")
    assert was.superseded_by is not None or was.absorbed

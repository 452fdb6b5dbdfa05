"""Every wording explains itself in the release that printed it: `derived` of removed records
and variants from `errorkb history` and its backfill; lines demoted to DEBUG and errors joined
from a list a call returned are not gone."""

from pathlib import Path

import yaml

from errorkb.content.load import load_content
from errorkb.sources import chronicle, explain, lineage
from errorkb.sources.extract import DEBUG, Site, scan_file, scan_tree
from errorkb.sources.scaffold import new_id

RELEASES = Path(__file__).parent / "fixtures" / "history"
DEMO = "demo"
R1_HEADS = (
    "Total number of attention heads ({num_heads}) must be divisible by "
    "tensor parallel size ({tp_size})."
)
R1_SWAP = "Too large swap space. {swap_space} GiB out of the {total_memory} GiB total"


def sites(name: str, knowledge: bool = True) -> list[Site]:
    known = (lambda files: explain.Knowledge()) if knowledge else None
    return scan_tree(RELEASES / name / "vllm", printed=DEBUG, progress=False, knowledge=known).sites


def built(knowledge: bool = True) -> lineage.History:
    return lineage.build([("1.0", sites("r1", knowledge)), ("2.0", sites("r2", knowledge))])


def record(kb: Path, rid: str) -> dict:
    return yaml.safe_load((kb / "content" / "errors" / DEMO / f"{rid}.yaml").read_text())


def by_start(kb: Path, found: lineage.History) -> dict[str, str]:
    index = chronicle.RecordIndex(load_content(kb), DEMO)
    ids, _ = chronicle.assign_ids(found, index, DEMO)
    return {lin.current.template[:30]: rid for lin, rid in ids.items()}


def test_history_writes_the_derived_of_a_removed_record_and_of_each_variant(kb):
    found = built()
    chronicle.write(kb, load_content(kb), DEMO, found)
    swap = record(kb, by_start(kb, found)[R1_SWAP[:30]])
    assert swap["status"] == "removed"
    assert swap["derived"]["ref"] == "v1.0" and swap["derived"]["condition"]
    variants = [
        v
        for path in (kb / "content" / "errors" / DEMO).glob("*.yaml")
        for v in yaml.safe_load(path.read_text()).get("variants", [])
        if isinstance(v, dict) and v["message"] == R1_HEADS
    ]
    (variant,) = variants
    assert variant["derived"]["ref"] == "v1.0" and variant["derived"]["condition"]
    load_content(kb)  # the schema takes a variant's derived


def test_backfill_rescans_only_the_last_release_of_each_old_wording_and_writes_derived(kb):
    chronicle.write(kb, load_content(kb), DEMO, built(knowledge=False))
    content = load_content(kb)
    removed = [r for r in content.records.values() if r.project == DEMO and r.status == "removed"]
    assert removed and not any("derived" in r.data for r in removed)
    assert chronicle.backfill_releases(content, DEMO) == ["1.0"]
    done = chronicle.backfill(kb, content, DEMO, {"1.0": sites("r1")}, lambda v: f"v{v}")
    assert done.derived == len(removed) and done.variants >= 1 and not done.missing
    content = load_content(kb)
    for r in removed:
        assert content.records[r.id].data["derived"]["ref"] == "v1.0"
    again = chronicle.backfill(kb, content, DEMO, {"1.0": sites("r1")}, lambda v: f"v{v}")
    assert not again.records  # a second run changes nothing


def test_errors_appended_to_a_list_a_call_returned_are_each_a_message():
    code = b"""
class P:
    def validate(self, cfg):
        error_msg = self._validate_features()
        if self.r > cfg.max_lora_rank:
            error_msg.append(
                f"LoRA rank {self.r} is greater than max_lora_rank {cfg.max_lora_rank}."
            )
        if error_msg:
            raise ValueError(f"{' '.join(error_msg)}")
"""
    found = [s.template for s in scan_file("p.py", code).sites]
    assert found == ["LoRA rank {r} is greater than max_lora_rank {max_lora_rank}."]


def test_a_log_line_demoted_to_debug_is_not_removed():
    def line(level: str) -> Site:
        text = "Cache hit rate {rate}."
        return Site(level.upper(), text, "m.py", 3, "f", kind="log", level=level)

    found = lineage.build([("1.0", [line("warning")]), ("2.0", [line(DEBUG)])])
    (lin,) = found.live()
    assert lin.last == "2.0" and lin.demoted and lin.current.site.level == DEBUG
    only_debug = lineage.build([("1.0", [line(DEBUG)])])
    assert not only_debug.live()  # a DEBUG line starts no check


# Lineage: recall ------------------------------------------------------------------------

KV_OLD = (
    "The model's max seq len ({max_model_len}) is larger than the maximum number of tokens "
    "that can be stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` "
    "or decreasing `max_model_len` when initializing the engine."
)
KV_NEW = (
    "To serve at least one request with the models's max seq len ({max_model_len}), "
    "({needed_memory} GiB KV cache is needed, which is larger than the available KV cache "
    "memory ({available_memory} GiB). Try increasing `gpu_memory_utilization` or decreasing "
    "`max_model_len` when initializing the engine."
)


def raise_at(message: str, path: str, function: str, guard: str, exc: str = "ValueError") -> Site:
    return Site(exc, message, path, 10, function, guard=guard)


def test_the_kv_cache_check_of_engine_v0_is_taken_over_by_v1s_in_wholly_new_words():
    old = raise_at(
        KV_OLD,
        "vllm/worker/worker.py",
        "raise_if_cache_size_invalid",
        "max_model_len > max_seq_len",
    )
    new = raise_at(
        KV_NEW,
        "vllm/v1/core/kv_cache_utils.py",
        "check_enough_kv_cache_memory",
        "needed_memory > available_memory",
    )
    other = raise_at("Unknown Shard Id {shard_id}", "vllm/a.py", "load", "shard_id not in ids")
    found = lineage.build(
        [("0.6", [old, other]), ("0.7", [old, new, other]), ("0.11", [new, other])]
    )
    (was,) = [lin for lin in found.lineages if lin.current.template == KV_OLD]
    assert was.superseded_by is not None and was.superseded_by.current.template == KV_NEW
    assert not was.absorbed  # another check that took over, not the same one reworded


def test_the_same_words_retyped_and_moved_when_the_old_ones_go_are_one_check():
    text = "'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}."
    old = raise_at(text, "vllm/entrypoints/openai/serving_engine.py", "_validate_input", "a > b")
    new = raise_at(
        text,
        "vllm/entrypoints/openai/engine/serving.py",
        "_check",
        "x > y",
        exc="VLLMValidationError",
    )
    found = lineage.build([("0.13", [old]), ("0.14", [new])])
    (lin,) = found.live()
    assert {w.key[0] for w in lin.wordings} == {"ValueError", "VLLMValidationError"}


def test_a_look_alike_copied_elsewhere_is_another_check():
    text = "Unknown Shard Id {shard_id}"
    a = raise_at(text, "vllm/models/a.py", "load_a", "shard_id not in ids")
    b = raise_at(text, "vllm/models/b.py", "load_b", "name not in params", exc="KeyError")
    c = raise_at(text, "vllm/models/c.py", "load_c", "k not in weights", exc="KeyError")
    found = lineage.build([("1", [a]), ("2", [b, c])])
    (old,) = [lin for lin in found.lineages if lin.current.site.path.endswith("a.py")]
    assert not old.absorbed  # copied into two models: neither is shown to be the moved one


def test_a_lineage_whose_id_is_another_records_alias_makes_no_stub(kb):
    """A check merged into another record (`errorkb tidy`: its id kept as an alias) that a
    later history follows apart again is that record's, not a new file under its old id."""
    text = "when using `logprob_token_ids`, `logprobs` must be set to true."
    merged = new_id(DEMO, "ValueError", text)
    (kb / "content" / "errors" / DEMO / "00000000000000aa.yaml").write_text(
        yaml.safe_dump(
            {
                "id": "00000000000000aa",
                "project": DEMO,
                "exception": "VLLMValidationError",
                "message": text,
                "variants": [{"message": text, "exception": "ValueError"}],
                "source": {"path": "vllm/protocol.py", "line": 10, "function": "check"},
                "aliases": [merged],
            }
        )
    )
    old = raise_at(text, "vllm/batch.py", "check_batch", "a")
    new = raise_at(text, "vllm/protocol.py", "check", "b", exc="VLLMValidationError")
    found = lineage.build([("1.0", [old, new]), ("2.0", [new])])
    assert len(found.live()) == 2  # printed side by side: two checks
    index = chronicle.RecordIndex(load_content(kb), DEMO)
    ids, _ = chronicle.assign_ids(found, index, DEMO)
    assert list(ids.values()) == ["00000000000000aa"]
    chronicle.write(kb, load_content(kb), DEMO, found)
    assert not (kb / "content" / "errors" / DEMO / f"{merged}.yaml").exists()
    load_content(kb)  # no id used twice


def test_a_sibling_printed_alongside_did_not_take_over():
    """The same guard in another parser, printed side by side with the old check for
    releases, is a sibling: when the old one goes, it did not take its place."""
    guard = "param_type.startswith('int')"
    old = raise_at(
        "Parsed value '{v}' of parameter '{p}' is not an integer in tool '{t}'.",
        "vllm/tool_parsers/seed_oss.py",
        "convert_param_value",
        guard,
        exc="WARNING",
    )
    sibling = raise_at(
        "Parsed value '{v}' is not an integer, degenerating to string.",
        "vllm/tool_parsers/step3p5.py",
        "_convert_param_value",
        guard,
        exc="WARNING",
    )
    found = lineage.build([("1", [old]), ("2", [old, sibling]), ("3", [sibling])])
    (was,) = [lin for lin in found.lineages if lin.current.site.path.endswith("seed_oss.py")]
    assert was.superseded_by is None and not was.absorbed


def test_a_check_opening_with_the_same_words_in_its_function_as_the_old_goes_took_over():
    """A refusal narrowed in its own function ("only supports images" -> "does not support
    audio inputs"), in the release the old wording goes, took its place; the same opening
    words printed side by side would not."""
    where = ("vllm/models/transformers/multimodal.py", "MultiModalMixin.get_mrope_input_positions")
    old = raise_at(
        "Transformers modeling backend only supports images.",
        *where,
        "any(kwargs)",
        exc="NotImplementedError",
    )
    new = raise_at(
        "Transformers modeling backend does not support audio inputs in M-RoPE models.",
        *where,
        "kwargs.get('audio_feature_lengths')",
        exc="NotImplementedError",
    )
    found = lineage.build([("1", [old]), ("2", [new])])
    (was,) = [lin for lin in found.lineages if lin.current.template.endswith("images.")]
    assert was.superseded_by is not None and not was.absorbed
    found = lineage.build([("1", [old, new]), ("2", [new])])
    (was,) = [lin for lin in found.lineages if lin.current.template.endswith("images.")]
    assert was.superseded_by is None


def test_a_name_recapitalised_is_the_same_check_not_a_sibling():
    """ "Current VLLM config is not set." -> "Current vLLM config is not set.": one token
    changed, but only in its capitals: the same check reworded, not a check about another
    thing (as "CPU" -> "OpenVINO" would be)."""
    where = ("vllm/config.py", "get_current_vllm_config", "_current_vllm_config is None")
    old = raise_at("Current VLLM config is not set.", *where, exc="WARNING")
    new = raise_at("Current vLLM config is not set.", *where, exc="WARNING")
    found = lineage.build([("1", [old]), ("2", [new])])
    (lin,) = found.live()
    assert len(lin.wordings) == 2

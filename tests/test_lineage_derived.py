"""Every wording explains itself in the release that printed it: `derived` of removed records
and variants from `errorkb history` and its backfill; lines demoted to DEBUG and errors joined
from a list a call returned are not gone."""

from pathlib import Path

import yaml

from errorkb.content.load import load_content
from errorkb.sources import chronicle, explain, lineage
from errorkb.sources.extract import DEBUG, Site, scan_file, scan_tree

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
    code = b'''
class P:
    def validate(self, cfg):
        error_msg = self._validate_features()
        if self.r > cfg.max_lora_rank:
            error_msg.append(
                f"LoRA rank {self.r} is greater than max_lora_rank {cfg.max_lora_rank}."
            )
        if error_msg:
            raise ValueError(f"{' '.join(error_msg)}")
'''
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

"""The table of SGLang's attention layers per architecture (generator/projects/sglang/
splits.json), and the reader that writes it from SGLang's model files (splits.py): re-run on
a made-up tree of model files shaped as SGLang 0.5.23's, it gives the committed shape."""

from pathlib import Path

from errorkb.projects.sglang import calc, splits
from errorkb.projects.vllm import presets

TREE = Path(__file__).parent / "fixtures" / "sglang" / "splits-tree"
REPO = Path(__file__).resolve().parent.parent


def test_the_reader_finds_each_architectures_attention_layer():
    found = splits.table(TREE)
    assert found == {
        "release": "9.8.7",
        "architectures": {
            # only its KV heads asserted, and no projection
            "CohereForCausalLM": {"attention": "tp:k", "layer": "qwen3:CohereAttention"},
            "LlamaForCausalLM": {"attention": "tp:hkp", "layer": "llama:LlamaAttention"},
            # a subclass in another file, named through its module
            "MistralForCausalLM": {"attention": "tp:hkp", "layer": "llama:LlamaAttention"},
            # its own decoder layer, handed to the Llama-shaped base model, beats the default
            "Qwen3ForCausalLM": {"attention": "attn_tp:h", "layer": "qwen3:Qwen3Attention"},
            # the vision tower's own head check is left out
            "Qwen3VLForConditionalGeneration": {
                "attention": "attn_tp:h",
                "layer": "qwen3:Qwen3Attention",
            },
            # PickedForCausalLM picks its language model from the config: not listed
        },
    }


def test_the_committed_table_is_the_readers_output_for_sglang_0_5_23():
    table = splits.load()
    assert table["release"] == "0.5.23"
    assert splits.SPLITS.read_text() == splits.dump(table)  # as the reader writes it
    for code in {entry["attention"] for entry in table["architectures"].values()}:
        calc.first_error(8, 8, tp=2, attention=code)  # every code is one calc.py takes


def test_the_families_of_the_models_users_meet_most():
    found = {name: entry["attention"] for name, entry in splits.load()["architectures"].items()}
    for name in ("LlamaForCausalLM", "Qwen2ForCausalLM", "MixtralForCausalLM"):
        assert found[name] == "tp:hkp", name
    for name in ("Gemma2ForCausalLM", "Gemma3ForConditionalGeneration", "MistralForCausalLM"):
        assert found[name] == "tp:hkp", name
    assert found["Qwen3ForCausalLM"] == found["Qwen3MoeForCausalLM"] == "attn_tp:hkp"
    assert found["DeepseekV3ForCausalLM"] == "attn_tp:h"  # MLA: no KV heads to split


def test_the_presets_of_the_models_users_meet_most_name_a_known_architecture():
    models = {m["key"]: m for m in presets.load_models(REPO)}
    known = splits.load()["architectures"]
    for key in ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "qwen2.5-72b", "qwen3-8b"):
        assert models[key]["architecture"] in known, key
    for key in ("qwen3-32b", "qwen3-235b-a22b", "mixtral-8x7b", "deepseek-v3", "gemma-2-27b"):
        assert models[key]["architecture"] in known, key
    assert known[models["gemma-3-27b"]["architecture"]]["attention"] == "tp:hkp"
    assert all(m["architecture"] in known for m in models.values())

"""E126: every flag written in content parses with its engine's own argument parser
(generator/content/flags.py), against the parser data of generator/flags/ (made from each
release's wheel by errorkb.sources.flagdata, which the freshness tests re-run when the wheel
is at hand)."""

import os
from pathlib import Path

import pytest

from errorkb import resources
from errorkb.content import flags
from errorkb.content.load import load_content
from errorkb.content.model import ContentError
from errorkb.sources import flagdata

REPO = Path(__file__).resolve().parent.parent
VLLM = flags.Engine.of("vLLM", flagdata.load("vllm", "0.33.0") or {})
SGLANG = flags.Engine.of("SGLang", flagdata.load("sglang", "0.5.23") or {})
ENGINES = {"vllm": VLLM, "sglang": SGLANG}


def problems(code: str, engine=None) -> list[tuple[int, str]]:
    return list(flags.code_problems(engine, code, ENGINES))


def test_a_command_that_parses_has_no_problem():
    code = (
        "vllm serve Qwen/Qwen3-8B -tp 4 --max-model-len 8192 --dtype bfloat16 "
        "--enable-prefix-caching --no-enforce-eager --gpu-memory-utilization=0.9"
    )
    assert problems(code) == []


def test_an_unknown_flag_is_named_with_the_closest_real_ones():
    ((line, why),) = problems("vllm serve m --max-modle-len 4096")
    assert line == 0
    assert why == (
        "`--max-modle-len` is not an option of vLLM 0.33.0's parser; "
        "did you mean --max-model-len or --max-log-len?"
    )


def test_an_ambiguous_prefix_lists_its_candidates():
    ((_, why),) = problems("python -m sglang.launch_server --model-path m --cuda-graph-max-bs 32")
    assert why == (
        "`--cuda-graph-max-bs` is an ambiguous prefix in SGLang 0.5.23's parser (it could be "
        "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill); write the full name"
    )
    # a unique prefix parses, as argparse abbreviates (allow_abbrev is True in both engines)
    assert problems("python -m sglang.launch_server --cuda-graph-max-bs-d 32") == []


def test_flag_equals_value_is_read_as_argparse_reads_it():
    assert problems("vllm serve m --dtype=float16 --max-model-len=4k") == []
    ((_, why),) = problems("vllm serve m --dtype=fp16")
    assert why.startswith(
        "`--dtype fp16`: invalid choice in vLLM 0.33.0's parser; choose from auto, bfloat16,"
    )
    ((_, why),) = problems("vllm serve m --enforce-eager=true")
    assert why == "`--enforce-eager=true`: --enforce-eager takes no value in vLLM 0.33.0's parser"
    assert problems("vllm serve m --dtype <dtype>") == []  # a placeholder is not checked


def test_negative_forms_are_the_parsers_own():
    # BooleanOptionalAction's --no-x, and vLLM's --enable-x / --disable-x pairs
    assert problems("vllm serve m --no-enable-prefix-caching --disable-prefix-caching") == []
    ((_, why),) = problems("vllm serve m --no-trust-remote-coed")
    assert "`--no-trust-remote-coed` is not an option" in why
    ((_, why),) = problems("python -m sglang.launch_server --model-path m --no-enable-eplb")
    assert "`--no-enable-eplb` is not an option of SGLang 0.5.23's parser" in why


def test_continuation_lines_and_environment_prefixes():
    code = (
        "# fails: 0000000000000000\n"
        "CUDA_VISIBLE_DEVICES=0,1 VLLM_LOGGING_LEVEL=DEBUG vllm serve m \\\n"
        "  --tensor-parallel-size 2 \\\n"
        "  --max-num-seqs 8 \\\n"
        "  --kv-cache-dtyp fp8\n"
        "curl localhost:8000/v1/models && vllm serve m --bogus 1\n"
    )
    found = problems(code)
    assert [line for line, _ in found] == [1, 5]
    assert "`--kv-cache-dtyp`" in found[0][1] and "`--bogus`" in found[1][1]


def test_vllms_parser_rewrites_come_first():
    # FlexibleArgumentParser: --a_b is --a-b, --x.key is --x's JSON, -O3 the optimization level
    code = "vllm serve m --max_model_len 4096 --compilation-config.mode 3 -O3 -O 2"
    assert problems(code) == []
    # SGLang's plain argparse reads --tp_size as no option
    ((_, why),) = problems("python -m sglang.launch_server --model-path m --tp_size 2")
    assert "`--tp_size` is not an option of SGLang 0.5.23's parser" in why


def test_other_programs_flags_are_not_read():
    code = (
        "pip install --upgrade vllm\n"
        "docker run --gpus all --ipc=host vllm/vllm-openai --model m\n"
        "torchrun --nproc-per-node 8 train.py --foo\n"
        "python benchmark.py --tensor-parallel-sise 2\n"
    )
    assert problems(code) == []


def test_vllm_preload_reads_with_its_own_parser():
    """`vllm preload` (0.31.0 on) parses the engine's options and its daemons' own
    (generator/flags/vllm-preload-0.33.0.json): a daemon option is refused by `vllm serve`."""
    preload = flags.Engine.of("vLLM", flagdata.load("vllm", "0.33.0", "preload") or {})
    engines = {**ENGINES, "vllm preload": preload}
    ok = "vllm preload --model m -tp 8 --nnodes 2 --weight-cache-master-port 29600"
    assert list(flags.code_problems(None, ok, engines)) == []
    typo = "vllm preload --model m --weight-cache-master-prt 29600"
    assert [p for _, p in flags.code_problems(None, typo, engines)]
    serve = "vllm serve m --weight-cache-master-port 29600"
    assert [p for _, p in flags.code_problems(None, serve, engines)]


def test_vllm_bench_serve_reads_with_its_own_parser():
    """`vllm bench serve`'s client options (generator/flags/vllm-bench-0.33.0.json) are no
    engine's: read with the benchmark's parser, refused in `vllm serve`."""
    bench = flags.Engine.of("vLLM", flagdata.load("vllm", "0.33.0", "bench") or {})
    engines = {**ENGINES, "vllm bench": bench}
    ok = "vllm bench serve --model m --base-url http://h:8000 --ready-check-timeout-sec 900"
    assert list(flags.code_problems(None, ok, engines)) == []
    bare = "vllm bench serve --model m --ready-check-timeout-sec"
    assert [p for _, p in flags.code_problems(None, bare, engines)]
    assert [p for _, p in flags.code_problems(None, "vllm serve m --base-url x", engines)]


def test_sglang_serve_reads_its_positional_model_and_model_type():
    assert problems("sglang serve Qwen/Qwen3-8B --model-type llm --tp-size 2") == []
    ((_, why),) = problems("sglang serve Qwen/Qwen3-8B --tp-sise 2")
    assert "did you mean --tp-size or" in why


def test_prose_mentions_are_the_records_engines():
    text = "Lower `--max-model-len 8192`, or set `--kv-cache-dtype fp8`; keep `-AWQ` models."
    assert list(flags.text_problems(VLLM, text, ENGINES)) == []
    text = "Lower `--max-model-lenght`, or\nuse `--cuda-graph-max-bs 8`."
    found = list(flags.text_problems(SGLANG, text, ENGINES))
    assert [line for line, _ in found] == [0, 1]
    # without the record's engine (a guide), only commands are read
    assert list(flags.text_problems(None, "`--max-model-lenght`", ENGINES)) == []


RECORD = """\
id: 00000000000000f1
project: vllm
exception: ValueError
message: A demo error.
source: {path: vllm/x.py}
solutions:
  - Start with `--enable-prefix-caching`.
  - Or lower `--max-modle-len`.
example_fix:
  before:
    language: bash
    code: vllm serve m --max-model-len 4096
  after:
    language: bash
    code: |
      vllm serve m \\
        --max-model-len 2048 \\
        --dtype=fp16
"""


def test_a_refused_flag_stops_the_check_with_its_file_and_line(kb):
    content = kb / "content"
    (content / "projects" / "vllm.yaml").write_text(
        "name: vLLM\nrepo: vllm-project/vllm\nref: v0.33.0\nversion: 0.33.0\n"
    )
    (content / "errors" / "vllm").mkdir()
    (content / "errors" / "vllm" / "00000000000000f1.yaml").write_text(RECORD)
    with pytest.raises(ContentError) as caught:
        load_content(kb)
    found = [str(p) for p in caught.value.problems]
    path = "content/errors/vllm/00000000000000f1.yaml"
    assert found[0] == (
        f"{path}:8: E126 solutions.1: `--max-modle-len` is not an option of vLLM 0.33.0's "
        "parser; did you mean --max-model-len or --max-log-len?"
    )
    assert found[1].startswith(
        f"{path}:16: E126 example_fix.after.code: `--dtype fp16`: invalid choice in vLLM "
        "0.33.0's parser; choose from "
    )
    assert len(found) == 2


# The release a record was checked against ------------------------------------------------

OLD = """\
id: 00000000000000f2
project: vllm
exception: ValueError
message: An old error.
source: {path: vllm/x.py}
solutions:
  - Lower `--swap-space` to 4, or move to `--guided-decoding-backend outlines`.
example_fix:
  before:
    language: bash
    code: vllm serve m --swap-space 16
  after:
    language: bash
    code: vllm serve m --swap-space 4 --num-lookahead-slots 2
checked:
  release: 0.10.2
"""


def _vllm_kb(kb: Path, record: str, name: str = "00000000000000f2") -> None:
    content = kb / "content"
    (content / "projects" / "vllm.yaml").write_text(
        "name: vLLM\nrepo: vllm-project/vllm\nref: v0.33.0\nversion: 0.33.0\n"
    )
    (content / "errors" / "vllm").mkdir(exist_ok=True)
    (content / "errors" / "vllm" / f"{name}.yaml").write_text(record)


def _problems(kb: Path) -> list[str]:
    try:
        load_content(kb)
    except ContentError as exc:
        return [str(p) for p in exc.problems]
    return []


def test_a_record_checked_at_an_old_release_reads_its_flags_with_that_parser(kb):
    # --swap-space, --guided-decoding-backend and --num-lookahead-slots are vLLM 0.10.2's,
    # gone by 0.33.0: the text was checked against 0.10.2, so they parse
    _vllm_kb(kb, OLD)
    assert _problems(kb) == []
    # without the checked release the pinned parser reads them, and refuses each
    _vllm_kb(kb, OLD.replace("checked:\n  release: 0.10.2\n", ""))
    found = _problems(kb)
    assert len(found) == 5
    assert all("of vLLM 0.33.0's parser" in line for line in found)


def test_a_flag_the_old_release_lacks_is_refused_naming_that_release(kb):
    _vllm_kb(kb, OLD.replace("--num-lookahead-slots 2", "--attention-backend FLASHINFER"))
    assert _problems(kb) == [
        "content/errors/vllm/00000000000000f2.yaml:14: E126 example_fix.after.code: "
        "`--attention-backend` is not an option of vLLM 0.10.2's parser"
    ]


def test_a_sentence_that_names_another_release_reads_with_its_parser(kb):
    text = (
        "  - In 0.33.0 the backend is chosen with `--attention-backend`; in 0.10.2 with an"
        " environment variable.\n"
        "  - Then set `--attention-backend`.\n"
    )
    _vllm_kb(kb, OLD.replace("solutions:\n", "solutions:\n" + text))
    # the first sentence names 0.33.0 before the flag; the second names no release
    assert [line.split(" E126 ")[1] for line in _problems(kb)] == [
        "solutions.1: `--attention-backend` is not an option of vLLM 0.10.2's parser"
    ]


def test_a_command_the_old_release_did_not_have_is_refused(kb):
    record = OLD.replace("release: 0.10.2", "release: 0.4.3")
    record = record.replace(" --num-lookahead-slots 2", "")
    record = record.replace(", or move to `--guided-decoding-backend outlines`", "")
    _vllm_kb(kb, record)
    why = (
        "`vllm serve` is not a command of vLLM 0.4.3 (it starts with "
        "`python -m vllm.entrypoints.openai.api_server`)"
    )
    assert [line.split(" E126 ")[1] for line in _problems(kb)] == [
        f"example_fix.before.code: {why}",
        f"example_fix.after.code: {why}",
    ]


def test_a_checked_release_without_parser_data_is_a_problem(kb):
    _vllm_kb(kb, OLD.replace("release: 0.10.2", "release: 0.10.1"))
    (line,) = _problems(kb)
    assert ":16: E126 checked.release: no parser data for vLLM 0.10.1" in line
    assert "python -m errorkb.sources.flagdata <wheel> --project vllm" in line


REMOVED = """\
id: 00000000000000f3
project: vllm
exception: ValueError
message: Set num_speculative_tokens.
source: {path: vllm/x.py}
versions: {first: 0.4.3, last: 0.4.3}
status: removed
derived:
  ref: v0.4.3
  flags:
    - name: num_speculative_tokens
      kind: engine-arg
      field: speculative_config.num_speculative_tokens
      flag: "--num-speculative-tokens"
    - name: num_speculative_tokens
      kind: engine-arg
      field: speculative_config.num_speculative_tokens
      flag: "--spec-tokens"
      named: placeholder
  try:
    - Lower `--num-speculative-tokens`.
"""


def test_a_removed_records_derived_flags_are_its_last_releases(kb):
    # --num-speculative-tokens is 0.4.3's (gone by 0.33.0); the entry said.with_named added
    # (`named`) is the pinned release's name for the setting, read with the pinned parser
    _vllm_kb(kb, REMOVED, "00000000000000f3")
    assert _problems(kb) == []
    wrong = REMOVED.replace('flag: "--num-speculative-tokens"', 'flag: "--spec-tokens"')
    _vllm_kb(kb, wrong, "00000000000000f3")
    (line,) = _problems(kb)
    assert line.endswith(
        "E126 derived.flags.0.flag: `--spec-tokens` is not an option of vLLM 0.4.3's parser"
    )
    # a last release without parser data: its derived flags are not read (as before)
    _vllm_kb(kb, wrong.replace("0.4.3, last: 0.4.3", "0.4.1, last: 0.4.2"), "00000000000000f3")
    assert _problems(kb) == []


def test_a_removed_records_flag_its_last_release_named_is_read_with_that_releases_parser(kb):
    # history writes what the last release's code said: a setting the message names (`named`)
    # as 0.4.3 named it, its url in 0.4.3's code; 0.33.0's parser has dropped the flag
    url = "https://github.com/vllm-project/vllm/blob/{}/vllm/config.py#L1"
    named = (
        "    - name: num_speculative_tokens\n"
        "      kind: engine-arg\n"
        "      field: speculative_config.num_speculative_tokens\n"
        '      flag: "--num-speculative-tokens"\n'
        f"      url: {url.format('v0.4.3')}\n"
        "      named: text\n"
        "  try:\n"
    )
    record = REMOVED.replace("  try:\n", named, 1)
    _vllm_kb(kb, record, "00000000000000f3")
    assert _problems(kb) == []
    # the same entry without a url (explain writes none where it knows no source line)
    _vllm_kb(kb, record.replace(f"      url: {url.format('v0.4.3')}\n", ""), "00000000000000f3")
    assert _problems(kb) == []
    # a named entry neither release's parser takes; its url in the pinned code says it is
    # said.with_named's: the pinned parser's words
    wrong = record.replace("v0.4.3/vllm", "v0.33.0/vllm")
    wrong = wrong.replace(
        '"--num-speculative-tokens"\n      url', '"--num-speculative-tokenz"\n      url'
    )
    _vllm_kb(kb, wrong, "00000000000000f3")
    (line,) = _problems(kb)
    assert (
        "E126 derived.flags.2.flag: `--num-speculative-tokenz` is not an option of vLLM "
        "0.33.0's parser" in line
    ), line


def test_a_record_back_from_removed_is_read_with_the_release_its_derived_block_names(kb):
    # `history` found the wording again in the newest release: the record is active, and its
    # derived block is still its last release's (`ref: v0.4.3`) until `errorkb rederive`
    back = REMOVED.replace("status: removed\n", "").replace("last: 0.4.3", "last: 0.33.0")
    _vllm_kb(kb, back, "00000000000000f3")
    assert _problems(kb) == []
    # rederived, the block is the pinned code's: read with the pinned parser
    _vllm_kb(kb, back.replace("ref: v0.4.3", "ref: v0.33.0"), "00000000000000f3")
    assert [line.split(" E126 ")[1].split(":")[0] for line in _problems(kb)] == [
        "derived.flags.0.flag",
        "derived.try.0",
    ]


# The real content ------------------------------------------------------------------------


@pytest.mark.slow  # loads and checks all of content/ (about 45 s)
def test_the_real_content_has_no_refused_flag():
    try:
        content = load_content(REPO)
    except ContentError as exc:
        pytest.fail("\n".join(map(str, exc.problems)))
    # not vacuous: the example fixes launch the engines often
    launches = 0
    for record in content.records.values():
        for side in ("before", "after"):
            code = (record.data.get("example_fix") or {}).get(side, {}).get("code", "")
            for _, words in flags.commands(code):
                launches += flags._launch_of(words, ENGINES) is not None
    assert launches >= 60


# The recipes by release -------------------------------------------------------------------


@pytest.mark.parametrize(
    "project, release, build, launchers",
    [
        ("vllm", "0.3.3", "build_api_server", ["vllm.entrypoints.openai.api_server"]),
        ("vllm", "0.4.3", "build_api_server", ["vllm.entrypoints.openai.api_server"]),
        ("vllm", "0.5.5", "build_vllm_serve", ["vllm serve", "vllm.entrypoints.openai.api_server"]),
        (
            "vllm",
            "0.10.2",
            "build_vllm_serve",
            ["vllm serve", "vllm.entrypoints.openai.api_server"],
        ),
        (
            "vllm",
            "0.27.1",
            "build_vllm_serve",
            ["vllm serve", "vllm.entrypoints.openai.api_server"],
        ),
        ("vllm", "0.33.0", "build", ["vllm serve", "vllm.entrypoints.openai.api_server"]),
        ("vllm", "0.40.0", "build", ["vllm serve", "vllm.entrypoints.openai.api_server"]),
        ("sglang", "0.3.6.post3", "build_prepare_server_args", ["sglang.launch_server"]),
        ("sglang", "0.4.10.post2", "build_prepare_server_args", ["sglang.launch_server"]),
        ("sglang", "0.5.23", "build", ["sglang.launch_server", "sglang serve"]),
    ],
)
def test_each_release_is_built_the_way_its_launcher_builds_it(project, release, build, launchers):
    facts = flagdata._recipe_facts(flagdata.recipe(project))
    chosen = flagdata.layout(facts, release)
    assert chosen["build"] == build
    named = [o.get("module") or " ".join(o["command"]) for o in chosen["launchers"]]
    assert named == launchers


def test_vllms_rewrites_follow_its_flexible_parser():
    facts = flagdata._recipe_facts(flagdata.recipe("vllm"))
    rewrites = {
        v: list(flagdata.layout(facts, v)["rewrites"]) for v in ("0.4.3", "0.5.5", "0.7.3", "0.9.2")
    }
    assert rewrites == {
        "0.4.3": [],  # a plain argparse parser
        "0.5.5": ["underscores"],  # FlexibleArgumentParser: --a_b is --a-b
        "0.7.3": ["underscores", "optimization-level"],  # and -O3 is -O 3
        "0.9.2": ["underscores", "dotted", "optimization-level"],  # and --x.key value
    }
    # each layout names the releases read for it, all at or above its `from`
    for entry in facts["OLDER"]:
        assert entry["read"] and all(
            flagdata.Version(r) >= flagdata.Version(entry["from"]) for r in entry["read"]
        )


# The data's freshness: regenerated from the wheel when it is at hand ----------------------


def _wheel(name: str, version: str) -> Path | None:
    folders = [os.environ.get("ERRORKB_WHEELS", ""), str(resources.user_cache() / "wheels")]
    for folder in filter(None, folders):
        found = sorted(Path(folder).glob(f"{name}-{version}-*.whl"))
        if found:
            return found[0]
    return None


def _data(stem: str) -> tuple[str, str, str]:
    """(project, program, version) of a data file: `sglang-0.5.23`, `sglang-generate-0.5.23`."""
    project, rest = stem.split("-", 1)
    program, _, version = rest.partition("-") if rest[0].isalpha() else ("", "", rest)
    return project, program, version


DATA = sorted(_data(p.stem) for p in flags.FOLDER.glob("*.json"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "project, program, version", DATA, ids=["-".join(filter(None, d)) for d in DATA]
)
def test_the_parser_data_is_what_the_wheel_builds(project, program, version):
    wheel = _wheel(project, version)
    if wheel is None:
        pytest.skip(
            f"no {project}-{version} wheel in $ERRORKB_WHEELS or the cache's wheels/: "
            f"pip download {project}=={version} --no-deps --only-binary :all: -d <folder>"
        )
    made = flagdata.render(flagdata.dump(wheel, project, program))
    assert made == flagdata.path(project, version, program).read_text(encoding="utf-8")


def test_an_engines_advice_on_a_stack_record_reads_with_its_checked_release(tmp_path):
    from tests.conftest import make_stack_kb

    kb = make_stack_kb(tmp_path / "kb")
    oom = kb / "content" / "errors" / "torch" / "aec1c60254c32faa.yaml"
    text = oom.read_text()
    old = text.replace(
        "    related: [df0e813b3de60b27]\n",
        "    related: [df0e813b3de60b27]\n    checked: {release: 0.10.2}\n",
        1,
    ).replace("--tensor-parallel-size 4", "--tensor-parallel-size 4 --swap-space 8")
    # --swap-space is vLLM 0.10.2's (gone by 0.33.0): the advice says it was checked there
    oom.write_text(old)
    assert _problems(kb) == []
    # by default, the engine's pinned parser
    oom.write_text(old.replace("    checked: {release: 0.10.2}\n", ""))
    (line,) = _problems(kb)
    assert line.split(" E126 ")[1] == (
        "engines.vllm.example_fix.after.code: `--swap-space` is not an option of vLLM "
        "0.33.0's parser"
    )


BENCH = """\
id: 00000000000000f3
project: vllm
exception: ValueError
message: A benchmark's error.
source: {path: vllm/benchmarks/serve.py}
solutions:
  - Use `--dataset-name custom` with `--dataset-path prompts.jsonl`.
"""


def test_a_message_of_another_program_is_written_with_that_programs_flags(kb):
    """A `vllm bench` message (its code under vllm/benchmarks/): the person's advice names the
    benchmark's flags, read with its own parser, not the server's."""
    _vllm_kb(kb, BENCH, "00000000000000f3")
    assert _problems(kb) == []
    _vllm_kb(kb, BENCH.replace("--dataset-path", "--dataset-paht"), "00000000000000f3")
    assert [line.split(" E126 ")[1][:60] for line in _problems(kb)] == [
        "solutions.0: `--dataset-paht` is not an option of vllm bench"
    ]

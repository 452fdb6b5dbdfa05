"""Stack projects (#23): libraries the engines run on (torch, NCCL), whose records give
advice per serving engine in `engines:`, checked against the engines' own records."""

import json
import re
from pathlib import Path

import pytest

from errorkb.content.load import load_content
from tests.test_records import edit, line_of, problems_of

OOM = "content/errors/torch/aec1c60254c32faa.yaml"
NCCL = "content/errors/nccl/e9d6a3197f91ce80.yaml"
VLLM_CACHE = "df0e813b3de60b27"
SGLANG_MEMORY = "246d2acc4005c317"


def test_stack_projects_and_their_advice_per_engine_load(stack_kb):
    content = load_content(stack_kb)
    kinds = {key: p.kind for key, p in content.projects.items()}
    assert kinds == {
        "demo": "engine",
        "nccl": "stack",
        "sglang": "engine",
        "torch": "stack",
        "vllm": "engine",
    }
    oom = content.records["aec1c60254c32faa"]
    assert list(oom.engines) == ["vllm", "sglang"]
    assert oom.engine_related == [VLLM_CACHE, SGLANG_MEMORY]
    assert "--mem-fraction-static" in oom.engines["sglang"]["solutions"][0]


# (what is wrong, file, old text, new text, code, field, the line the problem is on)
BAD = [
    (
        "an engine key that is no project",
        OOM,
        "  sglang:\n    solutions:",
        "  sglangg:\n    solutions:",
        "E109",
        "engines.sglangg",
        "sglangg:",
    ),
    (
        "an engine key that names a stack project",
        OOM,
        "  sglang:\n    solutions:",
        "  nccl:\n    solutions:",
        "E125",
        "engines.nccl",
        "  nccl:",
    ),
    (
        "a related id that does not exist",
        OOM,
        f"related: [{VLLM_CACHE}]",
        "related: [00000000000000e9]",
        "E104",
        "engines.vllm.related[0]",
        "related: [00000000000000e9]",
    ),
    (
        "a related id of the other engine",
        OOM,
        f"related: [{VLLM_CACHE}]",
        f"related: [{SGLANG_MEMORY}]",
        "E125",
        "engines.vllm.related[0]",
        f"    related: [{SGLANG_MEMORY}]",
    ),
    (
        "an unknown field in an engine's advice",
        NCCL,
        "  sglang:\n    solutions:",
        "  sglang:\n    flags: [--tp 8]\n    solutions:",
        "E102",
        "engines.sglang.flags",
        "flags:",
    ),
    (
        "related ids that are not a list",
        OOM,
        f"related: [{SGLANG_MEMORY}]",
        f"related: {SGLANG_MEMORY}",
        "E103",
        "engines.sglang.related",
        f"related: {SGLANG_MEMORY}",
    ),
    (
        "advice per engine in an engine's own record",
        f"content/errors/sglang/{SGLANG_MEMORY}.yaml",
        "solutions:\n",
        "engines:\n  vllm: {solutions: [Lower --gpu-memory-utilization.]}\nsolutions:\n",
        "E125",
        "engines",
        "engines:",
    ),
    (
        "a vLLM command of the advice that vLLM would stop (16 GPUs on a node of 8)",
        OOM,
        "--tensor-parallel-size 4",
        "--tensor-parallel-size 16",
        "E120",
        "engines.vllm.example_fix.after",
        "--tensor-parallel-size 16",
    ),
    (
        "a calculator that does not exist",
        OOM,
        "name: memory",
        "name: memroy",
        "E112",
        "calculator.name",
        "name: memroy",
    ),
    (
        "a project of an unknown kind",
        "content/projects/nccl.yaml",
        "kind: stack",
        "kind: library",
        "E103",
        "kind",
        "kind:",
    ),
]


@pytest.mark.parametrize(("what", "rel", "old", "new", "code", "field", "needle"), BAD)
def test_bad_engine_advice_is_named_with_file_line_and_field(
    stack_kb, what, rel, old, new, code, field, needle
):
    edit(stack_kb, rel, old, new)
    found = problems_of(stack_kb)
    line = line_of(stack_kb, rel, needle)
    pattern = rf"^{re.escape(rel)}:{line}: {code} {re.escape(field)}: .+"
    assert any(re.match(pattern, p) for p in found), (what, found)


def test_the_problem_says_which_engines_there_are(stack_kb):
    edit(stack_kb, OOM, "  sglang:\n    solutions:", "  sglangg:\n    solutions:")
    (problem,) = problems_of(stack_kb)
    assert "unknown engine 'sglangg'" in problem and "demo, sglang, vllm" in problem


def test_a_one_project_site_keeps_only_its_own_links(stack_kb):
    torch = load_content(stack_kb).only("torch")
    advice = torch.records["aec1c60254c32faa"].engines
    assert advice["vllm"]["related"] == [] and advice["sglang"]["related"] == []
    assert advice["vllm"]["solutions"]  # the advice stays, only links to absent pages go


# ---------------------------------------------------------------- search

OOM_PASTE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a "
    "total capacity of 79.10 GiB of which 1.12 GiB is free. Including non-PyTorch memory, "
    "this process has 77.97 GiB memory in use."
)
VLLM_FRAME = (
    "(EngineCore_DP0 pid=2817) ERROR 11-02 10:12:31 [core.py:708] EngineCore failed to start.\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 263\n'
)
SGLANG_LINE = (
    "[2025-11-02 10:12:31 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
)


@pytest.fixture(scope="module")
def stack_index(tmp_path_factory):
    from errorkb.search import index as search_index
    from tests.conftest import make_stack_kb

    return search_index.open_index(make_stack_kb(tmp_path_factory.mktemp("stack") / "kb"))


@pytest.mark.parametrize(
    ("before", "engine"),
    [(VLLM_FRAME, "vllm"), (SGLANG_LINE, "sglang"), ("", ""), (VLLM_FRAME + SGLANG_LINE, "")],
)
def test_a_stack_paste_lands_on_its_record_with_the_engine_it_names(stack_index, before, engine):
    from errorkb.search.engine import search

    [top, *_] = search(stack_index, before + OOM_PASTE)
    assert (top.id, top.project, top.match, top.engine) == (
        "aec1c60254c32faa",
        "PyTorch",
        "exact",  # the template's sentences, all there; what the paste adds after is let be
        engine,
    )
    assert top.values["total"] == "79.10 GiB"
    assert top.url.endswith(f"&engine={engine}") if engine else "engine=" not in top.url


def test_an_engine_records_result_never_carries_an_engine(stack_index):
    from errorkb.search.engine import search

    paste = VLLM_FRAME + (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )
    [top, *_] = search(stack_index, paste)
    assert (top.id, top.match, top.engine) == (VLLM_CACHE, "exact", "")


def test_a_stack_fit_is_no_copy_of_an_engine_fit_that_starts_alike(stack_index):
    """PyTorch's OOM and vLLM's sampler warm-up OOM both start "CUDA out of memory": fits
    alike, but no copy of one message, so the engine the user runs does not fold PyTorch's
    into vLLM's `also`; the exception the paste names ranks PyTorch's first."""
    from errorkb.search.engine import search

    results = search(stack_index, "torch.OutOfMemoryError: CUDA out of memory", "vllm")
    assert [(r.id, r.match, r.tied) for r in results[:2]] == [
        ("aec1c60254c32faa", "partial", False),
        ("3c0e5a1f7b2d9e64", "partial", False),
    ]
    assert results[1].also == []


def test_an_engines_wrapper_ranks_after_the_stack_error_it_holds(stack_index):
    """vLLM's "Exception in worker ... while processing method ...: {error}" fits the whole
    line and shows more text than the cut OOM; the OOM says what went wrong, so it leads."""
    from errorkb.search.engine import search

    paste = (
        "Exception in worker VllmWorkerProcess while processing method init_device: "
        "CUDA out of memory. Tried to allocate 20.00 MiB"
    )
    results = search(stack_index, paste)
    assert [(r.id, r.match) for r in results[:2]] == [
        ("aec1c60254c32faa", "partial"),
        ("5a1e0c4d2b9f8e71", "exact"),
    ]
    assert results[0].values == {"size": "20.00 MiB"}
    # Alone, with nothing to wrap, the engine's line is the answer.
    [top, *_] = search(stack_index, "Exception in worker W while processing method m: boom")
    assert (top.id, top.match) == ("5a1e0c4d2b9f8e71", "exact")


@pytest.mark.parametrize(
    ("paste", "program"),
    [
        (
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "NCCL",
        ),
        (
            "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
            "PyTorch",
        ),
        (
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, "
            "Required: 98304, Hardware limit: 65536.",
            "triton",
        ),
        (
            'Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/'
            'flashinfer/jit/core.py", line 120, in build\nRuntimeError: Ninja build failed.',
            "flashinfer",
        ),
        ("RuntimeError: the sprockets of the gearbox are worn out", None),
    ],
)
def test_the_report_link_names_the_program_it_guesses(stack_index, paste, program):
    from urllib.parse import parse_qs, urlsplit

    from errorkb.search.engine import report_url

    title = parse_qs(urlsplit(report_url(stack_index, paste)).query)["title"][0]
    assert title.startswith(f"{program or 'Unknown'} error: "), title


# ---------------------------------------------------------------- pages


@pytest.fixture(scope="module")
def stack_site(tmp_path_factory):
    from errorkb.site.build import build
    from tests.conftest import make_stack_kb

    result = build(make_stack_kb(tmp_path_factory.mktemp("stack-site") / "kb"), checked=True)
    assert result.problems == []
    return result.out


def headings(html: str) -> list[str]:
    return re.findall(r'<h2><a class="anchor" href="#([\w-]+)">', html)


@pytest.mark.slow
def test_a_stack_page_gives_each_engines_advice_then_what_any_engine_can_do(stack_site):
    html = (stack_site / "errors/aec1c60254c32faa/index.html").read_text()
    assert headings(html)[:4] == ["in-vllm", "in-sglang", "solutions", "meaning"]
    vllm = html[html.index('id="in-vllm"') : html.index('id="in-sglang"')]
    assert '<code class="f">--gpu-memory-utilization</code>' in vllm
    assert "--mem-fraction-static" not in vllm
    assert 'class="before-after"' in vllm and "Llama-3.1-70B-Instruct" in vllm  # its example fix
    assert f'href="/errors/{VLLM_CACHE}/"' in vllm  # vLLM's own record of the trouble
    assert ">Whatever the engine<" in html and 'id="related"' not in html  # not listed twice
    assert 'id="memory"' in html  # vLLM's memory estimate, from the engine's wing


def test_an_engine_record_links_back_to_the_stack_record_that_names_it(stack_site):
    for rid in (VLLM_CACHE, SGLANG_MEMORY):
        html = (stack_site / f"errors/{rid}/index.html").read_text()
        related = html[html.index('id="related"') :]
        assert 'href="/errors/aec1c60254c32faa/"' in related, rid


def test_the_api_document_names_the_engines_and_their_records(stack_site):
    doc = json.loads((stack_site / "api/errors/aec1c60254c32faa.json").read_text())
    engines = doc["computed"]["engines"]
    assert [(e["key"], e["name"]) for e in engines] == [("vllm", "vLLM"), ("sglang", "SGLang")]
    assert [r["id"] for r in engines[0]["related"]] == [VLLM_CACHE]
    solution = doc["html"]["engines"]["sglang"]["solutions"][0]
    assert '<code class="f">--mem-fraction-static</code>' in solution
    back = json.loads((stack_site / f"api/errors/{VLLM_CACHE}.json").read_text())
    assert "aec1c60254c32faa" in [r["id"] for r in back["computed"]["related"]]


def test_the_memory_estimate_is_served_with_its_build_time_table(stack_site):
    from errorkb.projects.vllm import memory

    served = (stack_site / "assets/memory.py").read_bytes()
    assert served == Path(memory.__file__).read_bytes()
    config = json.loads((stack_site / "assets/calc.json").read_text())
    assert config["modules"]["memory"].startswith("/assets/memory.py?v=")
    html = (stack_site / "errors/aec1c60254c32faa/index.html").read_text()
    assert 'data-inputs="gpu_gib=total"' in html
    # TP 1: 131.5 GB of weights on an 80 GiB GPU; TP 4: it starts
    assert "<td>1<td>131.5 GiB<td>–<td>–<td>CUDA out of memory while loading" in html
    assert re.search(r"<td>4<td>32\.9 GiB<td>38\.7 GiB<td>[\d,]+<td>starts", html)


@pytest.mark.slow
def test_the_markdown_export_carries_the_advice_per_engine(stack_kb, tmp_path):
    from tests.test_export import export, front_matter

    done = export(stack_kb, tmp_path / "docs")
    assert done.returncode == 0, done.stderr
    _, body = front_matter(tmp_path / "docs/errors/aec1c60254c32faa.md")
    heads = re.findall(r"^## (.+)$", body, re.M)
    assert heads.index("In vLLM") < heads.index("In SGLang") < heads.index("Whatever the engine")
    assert "Related errors" not in heads  # its two are under their engines
    assert f"- [No GPU memory left for the KV cache]({VLLM_CACHE}.md)" in body
    _, back = front_matter(tmp_path / f"docs/errors/{VLLM_CACHE}.md")
    assert "- [CUDA out of memory](aec1c60254c32faa.md)" in back


def test_vllms_older_log_prefix_is_stripped_so_the_exception_leads():
    """vLLM's logger printed `ERROR 05-07 05:58:46 core.py:291]` before it put the file in
    brackets: stripped as a prefix, the exception line starts a block, and the engine's own
    closing line ("Got fatal signal ...") is no longer matched as the paste's error."""
    from errorkb.search import rules
    from errorkb.search.engine import clean, context

    ctx = context(rules.carried())
    paste = (
        'ERROR 05-07 05:58:46 core.py:291]     raise AssertionError("Torch not compiled with '
        'CUDA enabled")\n'
        "ERROR 05-07 05:58:46 core.py:291] AssertionError: Torch not compiled with CUDA enabled\n"
        "ERROR 05-07 05:58:46 core.py:291] \n"
        "CRITICAL 05-07 05:58:46 core_client.py:191] Got fatal signal from worker processes, "
        "shutting down. See stack trace above for root cause issue."
    )
    found = clean(paste, ctx.rules, ctx.settings)
    errors = [(b.exception, b.text) for b in found if not b.beside]
    assert errors[-1] == ("AssertionError", "Torch not compiled with CUDA enabled")
    assert not any("fatal signal" in text for _, text in errors)
    # Read after the errors, as a line beside them (its fits rank after theirs), if at all.
    assert all(b.beside for b in found if "fatal signal" in b.text)


def test_the_menu_names_the_engines_and_the_home_page_lists_the_stack_apart(stack_site):
    """Every page's menu lists the engines, and the stack's libraries behind one link to the
    home page's section of them (their names on every page cost the real site 13 MB)."""
    page = (stack_site / "errors/aec1c60254c32faa/index.html").read_text()
    nav = page[page.index('<nav aria-label="Site">') : page.index("</nav>")]
    listed = re.findall(r'<a href="/projects/([\w-]+)/">', nav)
    assert listed and "torch" not in listed and {"vllm", "sglang"} <= set(listed)
    assert '<a href="/#stack">Stack</a>' in nav
    home = (stack_site / "index.html").read_text()
    stack = home[home.index('<section class="section" id="stack">') :]
    assert 'href="/projects/torch/"' in stack.split("</section>")[0]
    engines = home[home.index('id="projects"') : home.index('id="stack"')]
    assert 'href="/projects/torch/"' not in engines and 'href="/projects/vllm/"' in engines


def test_the_report_title_is_the_error_not_the_wrapper_line_read_beside_it(stack_index):
    """Search reads the last lines beside a paste's errors (ranked after them); the report's
    title is still the error's own message (match.js alike: test_stack_browser)."""
    from urllib.parse import parse_qs, urlsplit

    from errorkb.search.engine import report_url

    paste = VLLM_FRAME + "triton.runtime.errors.OutOfResources: out of resource: shared memory"
    title = parse_qs(urlsplit(report_url(stack_index, paste)).query)["title"][0]
    assert title.startswith("triton error: out of resource: shared memory"), title


def test_a_stack_message_quoted_whole_in_prose_is_a_fragment_of_its_record(stack_index):
    """A stack record's text is another program's, of common words: no run of them among
    other words makes a fragment, but a span the paste quotes whole that is such a run
    does (its words are a message, not values)."""
    from errorkb.search.engine import search

    prose = 'While hacking multi-token decoding, error "an illegal memory access was encountered"'
    [top, *_] = search(stack_index, prose + " is reported")
    assert (top.id, top.match) == ("aec1c60254c32fb1", "partial")
    unquoted = search(stack_index, prose.replace('"', "") + " is reported")
    assert all(r.match == "similar" for r in unquoted if r.id == "aec1c60254c32fb1")

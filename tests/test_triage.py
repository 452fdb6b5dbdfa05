"""The issue bot: what it reads in a body, what it says, and how it talks to GitHub.

The GitHub side runs against a fake REST API on 127.0.0.1 that records every request and
keeps the issue's comments, reached through GITHUB_API_URL as in Actions."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from errorkb import cli
from errorkb import triage as triage_module
from errorkb.search import engine
from errorkb.search import rules as search_rules
from errorkb.serve import make_server
from errorkb.site.build import build
from errorkb.triage import comment, extract, github, triage
from errorkb.triage import site as sites
from tests.conftest import REPO, make_kb, serve_in_thread

# The rules of this errorkb, as an index built by it carries them (the bot reads an index's)
CTX = engine.context(search_rules.carried())
READING = extract.reading(CTX.rules)
HOW = CTX.how


def candidates(body: str, title: str = "") -> list[extract.Candidate]:
    return extract.candidates(body, READING, title)


ISSUE = 7
TEMPLATE = """### Your current environment

<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
PyTorch version: 2.5.1
```
</details>

### 🐛 Describe the bug

<!-- paste the error here -->
Running `demo split` fails:

```
Traceback (most recent call last):
  File "/usr/lib/demo/widgets.py", line 42, in split
    raise ValueError(...)
ValueError: Widget count ({count}) must be divisible by group size ({size}).
```
"""


def body(count=10, size=3) -> str:
    return TEMPLATE.format(count=count, size=size)


@pytest.fixture(scope="module")
def site(fixture_site):
    return sites.from_folder(fixture_site)


# --- reading a body ---------------------------------------------------------------------


def test_candidates_are_the_code_and_error_lines_not_the_template():
    found = candidates(body() + "\n**RuntimeError: Group size must be positive, got 0** then")
    texts = [c.text for c in found]
    assert any(c.text.startswith("Traceback") and c.traceback for c in found)
    assert "RuntimeError: Group size must be positive, got 0" in texts
    assert not any("Describe the bug" in t or "paste the error" in t for t in texts)


ENV_DUMP = """Collecting environment information...
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
WARNING 08-03 23:03:20 _custom_ops.py:15] Failed to import from vllm._C with ImportError('x')
ValueError: Widget count (10) must be divisible by group size (3).
[pip3] torch==2.5.1
"""


def test_the_environment_dump_is_never_read_fenced_or_not():
    fenced = f"### Your current environment\n\n```text\n{ENV_DUMP}```\n\nNo error here."
    assert candidates(fenced) == []
    bare = f"### Your current environment\n\n{ENV_DUMP}\n### 🐛 Describe the bug\n\nIt hangs."
    assert candidates(bare) == []


def test_an_error_in_a_prose_section_counts_whatever_the_section():
    error = "RuntimeError: Group size must be positive, got 0"
    text = f"### 🚀 The feature, motivation and pitch\n\n{error}"
    assert [c.text for c in candidates(text)] == [
        "RuntimeError: Group size must be positive, got 0"
    ]


def test_the_title_is_a_candidate_without_its_template_tags():
    found = candidates("", "[Bug][ROCm]: `RuntimeError: Group size must be positive, got 0`")
    assert [(c.text, c.kind, c.in_title) for c in found] == [
        ("RuntimeError: Group size must be positive, got 0", "title", True)
    ]
    assert candidates("", "[Bug]: ") == []


def test_quotes_and_log_lines_in_prose():
    text = (
        'It throws a "Widget count (10) must be divisible by group size (3)." error, '
        'then "a phrase".\n'
        "[2025-06-26 07:25:31 DP4 TP4] Watchdog timeout (self.watchdog_timeout=300)"
    )
    found = [(c.kind, c.text) for c in candidates(text)]
    assert ("quote", "Widget count (10) must be divisible by group size (3).") in found
    assert (
        "text",
        "[2025-06-26 07:25:31 DP4 TP4] Watchdog timeout (self.watchdog_timeout=300)",
    ) in found
    assert not any(t == "a phrase" for _, t in found)  # too few words to be a message


def test_the_title_names_the_error_the_body_does_not_show(site):
    title = "[Bug]: ValueError: Widget count (10) must be divisible by group size (3)."
    found = triage("### Your current environment\n\nvllm 0.4.3", site, title=title)
    assert [f.result.id for f in found] == ["00000000000000a1"]
    assert found[0].in_title
    quoted = "[Bug] I get a 'Widget count (10) must be divisible by group size (3).' error"
    assert [f.result.id for f in triage("", site, title=quoted)] == ["00000000000000a1"]


def test_an_engine_s_repository_is_never_answered_with_another_engine_s_page(site, monkeypatch):
    programs = site.index.meta["programs"]
    assert programs["Demo"]["engine"] and programs["Demo"]["repo"] == "example/demo"
    other = {"key": "other", "engine": True, "repo": "example/other"}
    monkeypatch.setitem(site.index.meta, "programs", {**programs, "Other": other})
    title = "[Bug]: ValueError: Widget count (10) must be divisible by group size (3)."

    def named(repo: str) -> list[str]:
        return [f.result.id for f in triage("", site, hint=repo, title=title)]

    assert named("example/demo") == ["00000000000000a1"]
    assert named("example/other") == []  # Demo's page answers for Demo, not for Other
    assert named("someone/app") == ["00000000000000a1"]  # a repository of no engine


def test_a_title_may_hold_a_message_among_the_user_s_words(site):
    def named(title: str) -> list[str]:
        return [f.result.id for f in triage("", site, title=title)]

    assert named("[Bug]: Widget count (10) must be divisible by group size (3) on 4 GPUs") == [
        "00000000000000a1"  # all of the message but its full stop, then the user's words
    ]
    assert named("[Bug] demo 1.2 on ROCm; Group size must be positive, got 0") == [
        "00000000000000b2"  # a clause of its own
    ]
    assert named("[Bug]: Group size must be positive when splitting widgets") == []  # its start
    assert named("[Bug]: Widget count (10) must be divisible on 4 GPUs") == []


LOGGED = """```
ERROR 10-26 11:35:32 demo.py:267] Group size must be positive, got 0
ERROR 10-26 11:35:32 demo.py:267] Traceback (most recent call last):
ERROR 10-26 11:35:32 demo.py:267]   File "/usr/lib/demo/run.py", line 429, in run
ERROR 10-26 11:35:32 demo.py:267]     returned.check_returncode()
ERROR 10-26 11:35:32 demo.py:267] subprocess.CalledProcessError: Command 'demo' returned 1.
```"""


def test_an_error_log_line_is_named_when_nothing_known_was_raised(site):
    assert [f.result.id for f in triage(LOGGED, site)] == ["00000000000000b2"]
    (candidate,) = candidates(LOGGED)
    assert extract.logged_errors(candidate, READING) == [
        LOGGED.split("\n")[1]
    ]  # no frame, no header
    raised = LOGGED.replace(
        "subprocess.CalledProcessError: Command 'demo' returned 1.",
        "ValueError: Widget count (10) must be divisible by group size (3).",
    )
    assert [f.result.id for f in triage(raised, site)] == ["00000000000000a1"]


def test_a_warning_beside_a_known_exception_is_not_named(site, monkeypatch):
    """An exception the body shows is the issue's subject: a warning after it is context."""

    def sure(site, query, tiers, named, key, kind="code", releases=None):
        if "Widget" in query:
            return engine.Result("a1", "t", "ValueError", "Demo", "", "exact", "", {})
        if "Skipping" in query:
            return engine.Result("w1", "t", "WARNING", "Demo", "", "exact", "", {})
        return None

    monkeypatch.setattr("errorkb.triage._sure", sure)
    raised = "```\nValueError: Widget count (10) must be divisible by group size (3).\n```\n"
    warned = "Then it warns:\n```\nWARNING Skipping post-processing for request 7\n```\n"
    assert [f.result.id for f in triage(raised + warned, site)] == ["a1"]
    assert [f.result.id for f in triage(warned, site)] == ["w1"]  # the warning alone


def test_a_message_the_paste_goes_on_past_is_a_tie_with_a_longer_one(site, monkeypatch):
    """'... on Github.' fits all of a short message whose paste goes on; another message of
    the same exception fits it whole ('... on Github. See stack trace above ...'): silent."""
    from errorkb.triage import _sure

    more = engine.Result("s1", "t", "DeadError", "Demo", "", "partial", HOW["more"], {})
    other = HOW["message"] + HOW["case"]
    longer = engine.Result("s2", "t", "DeadError", "Demo", "", "partial", other, {})
    elsewhere = engine.Result("s3", "t", "WARNING", "Demo", "", "partial", HOW["more"], {})
    run = engine.Result("s4", "t", "DeadError", "Demo", "", "partial", HOW["fragment"], {})
    wrapping = engine.Result(**{**run.__dict__, "wrapper": True})
    found = {"tie": [more, longer], "apart": [more, elsewhere], "run": [more, run]}
    found["wrapped"] = [more, wrapping]  # "... for theactual cause": the wrapper's words
    monkeypatch.setattr("errorkb.triage.engine.search", lambda index, q, **_: found[q])
    assert _sure(site, "tie", ("exact", "partial"), {"Demo"}, None) is None
    assert _sure(site, "apart", ("exact", "partial"), {"Demo"}, None) is more
    assert _sure(site, "run", ("exact", "partial"), {"Demo"}, None) is more
    assert _sure(site, "wrapped", ("exact", "partial"), {"Demo"}, None) is None


def test_a_raise_statement_quoted_with_no_error_said_is_code_read(site):
    code = (
        "\n```\nif count % size:\n    raise ValueError(\n"
        '        f"Widget count ({count}) must be divisible by group size ({size}).")\n```\n'
    )
    read = "### 🚀 The feature\n\nIn the widgets code I see this block:" + code
    assert triage(read, site) == []
    hit = "### 🚀 The feature\n\nWith 10 widgets this raises an error:" + code
    assert [f.result.id for f in triage(hit, site)] == ["00000000000000a1"]
    assert extract.says_error("", "[Feature]: widgets fail to split")
    assert not extract.says_error("### 🐛 Describe the bug\n\nPlease add widgets.\n")


def _announced(site, monkeypatch, wrapper: bool, last: str) -> list[str]:
    """What triage names of a log whose first line announces a traceback, with search's
    answers made up: the announcing line is an ERROR record's (or a wrapper's), `last`
    the traceback's last line, an error of a record (a1) or of none."""

    def sure(site, query, tiers, named, key, kind="code", releases=None):
        if query.startswith("Initialization failed"):
            result = engine.Result("e5", "t", "ERROR", "Demo", "", "partial", "prefix", {})
            result.wrapper = wrapper
            return result
        return (
            engine.Result("a1", "t", "ValueError", "Demo", "", "exact", "", {})
            if ("Widget" in query)
            else None
        )

    monkeypatch.setattr("errorkb.triage._sure", sure)
    log = (
        "```\n[2025-10-22 10:29:28] Initialization failed. warmup error: Traceback (most recent "
        'call last):\n  File "/usr/lib/demo/warmup.py", line 9, in warmup\n' + last + "\n```"
    )
    return [f.result.id for f in triage(log, site)]


def test_a_line_that_announces_a_traceback_is_named_when_nothing_after_it_is(site, monkeypatch):
    cut = "    assert res.status_code == 200, f"
    assert _announced(site, monkeypatch, False, cut) == ["e5"]  # the traceback was cut
    unknown = "OSError: [Errno 111] Connection refused"
    assert _announced(site, monkeypatch, False, unknown) == ["e5"]  # its error has no record
    known = "ValueError: Widget count (10) must be divisible by group size (3)."
    assert _announced(site, monkeypatch, False, known) == ["a1"]  # the error itself
    # A wrapper's line ("Scheduler hit an exception: Traceback ...") only says that
    # something failed: named on its own only when its traceback was cut before the error
    # and the issue shows no other error-like line (its page says where the error is)
    assert _announced(site, monkeypatch, True, cut) == ["e5"]
    assert _announced(site, monkeypatch, True, unknown) == []  # that error may be the cause
    assert _announced(site, monkeypatch, True, known) == ["a1"]


def test_a_title_that_is_a_flattened_log_is_read_whole():
    title = '[Bug] Scheduler hit an exception: Traceback (most recent call last):   File "x.py"'
    assert extract.title_spans(title) == []


def test_a_part_of_a_title_is_not_named_where_a_value_was_cut():
    from errorkb.triage import _edged

    prefix = HOW["prefix"]
    cut = engine.Result("x", "t", "ValueError", "vLLM", "", "partial", prefix, {"expr": "25"})
    assert _edged(cut, "Attempted to assign 25", HOW)  # the message goes on after the value
    opening = engine.Result("x", "t", "ValueError", "vLLM", "", "exact", "", {"option": "V2"})
    assert _edged(opening, "V2 does not yet support ngram", HOW)  # any word would open it
    whole = engine.Result("x", "t", "ValueError", "vLLM", "", "exact", "", {"group_size": "0"})
    assert not _edged(whole, "Group size must be positive, got 0", HOW)  # its last value ends it


def test_a_title_whose_message_start_ends_in_a_value_is_not_named():
    from errorkb.triage import _speaks

    text = "Support for Qwen3-Next with tensor parallel size 16"
    title = extract.Candidate(text, "title", False, True)
    block = engine.clean(text, CTX.rules, CTX.settings)[0]
    values = {"tensor_parallel_size": "16"}
    start = engine.Result(
        "x", "t", "AssertionError", "vLLM", "", "partial", "a prefix of the message", values
    )
    assert not _speaks(
        start, title, block, lone=False, how=HOW
    )  # "... must be greater than ..." cut
    sentence = engine.Result(
        "x", "t", "AssertionError", "vLLM", "", "partial", HOW["sentence"], values
    )
    assert _speaks(sentence, title, block, lone=False, how=HOW)


def _result(level: str) -> "engine.Result":
    return engine.Result("x", "t", level, "vLLM", "", "exact", "the message", {})


def test_a_line_below_error_is_named_only_as_the_subject():
    from errorkb.triage import _speaks

    block = engine.clean("No available block found in 60 second.", CTX.rules, CTX.settings)[0]
    title = extract.Candidate("No available block found in 60 second.", "title", False, True)
    code = extract.Candidate("WARNING ... No available block found in 60 second.", "code", False)
    quote = extract.Candidate("No available block found in 60 second.", "quote", False)
    assert _speaks(_result("WARNING"), title, block, lone=False, how=HOW)
    assert _speaks(_result("INFO"), title, block, lone=False, how=HOW)
    start = engine.Result("x", "t", "INFO", "SGLang", "", "partial", HOW["prefix"], {})
    assert not _speaks(
        start, title, block, lone=False, how=HOW
    )  # "... when using fa3 as attention backend"
    assert _speaks(_result("WARNING"), code, block, lone=True, how=HOW)
    assert not _speaks(
        _result("WARNING"), code, block, lone=False, how=HOW
    )  # one line among others
    assert not _speaks(_result("INFO"), code, block, lone=True, how=HOW)
    assert not _speaks(_result("WARNING"), quote, block, lone=True, how=HOW)
    assert _speaks(_result("ValueError"), code, block, lone=False, how=HOW)
    run = HOW["fragment"]
    fragment = engine.Result("x", "t", "WARNING", "vLLM", "", "partial", run, {})
    assert not _speaks(
        fragment, title, block, lone=True, how=HOW
    )  # a run of its words: not the subject
    raised = engine.Result("x", "t", "ValueError", "vLLM", "", "partial", run, {})
    assert not _speaks(
        raised, title, block, lone=False, how=HOW
    )  # a title that asks about a message
    assert _speaks(raised, code, block, lone=False, how=HOW)
    # ...but a title that is the record's own (its message without the values) is it
    own = "Waiting for creating a placement group of specs for seconds"
    titled = engine.Result("x", own, "INFO", "vLLM", "", "partial", run, {})
    said = engine.clean(own + ".", CTX.rules, CTX.settings)[0]
    assert _speaks(
        titled, extract.Candidate(own + ".", "title", False, True), said, lone=False, how=HOW
    )


def test_warnings_in_a_block_the_prose_says_warns_are_the_subject():
    """vllm#11842: "it warns that:" above a block of two WARNING lines: they are what the
    issue is about, though neither is the body's lone error-like line."""
    from errorkb.triage import _speaks

    lines = "WARNING 01-08 18:59:14 a.py:1] First.\nWARNING 01-08 18:59:32 b.py:2] Second."
    said = candidates(f"When I run it, it warns that:\n\n```text\n{lines}\n```\n")
    plain = candidates(f"When I run it:\n\n```text\n{lines}\n```\n")
    assert [c.warned for c in said] == [True] and [c.warned for c in plain] == [False]
    block = engine.clean(lines, CTX.rules, CTX.settings)[0]
    assert _speaks(_result("WARNING"), said[0], block, lone=False, how=HOW)
    assert not _speaks(_result("WARNING"), plain[0], block, lone=False, how=HOW)
    assert not _speaks(_result("INFO"), said[0], block, lone=False, how=HOW)


def test_a_quote_is_named_when_it_is_all_of_a_message_s_first_sentence(site):
    whole = 'It says "Widget count (10) must be divisible by group size (3)" and stops.'
    assert [f.result.id for f in triage(whole, site)] == ["00000000000000a1"]
    start = 'It says "Widget count (10) must be divisible by" and stops.'
    assert triage(start, site) == []


def test_the_lone_line_is_the_body_s_one_error_like_line_however_often_repeated():
    from errorkb.triage import _lone

    repeated = "\n".join(
        f"(VllmWorkerProcess pid={pid}) WARNING 11-26 13:07:36 shm_broadcast.py:391] "
        "No available block found in 60 second. "
        for pid in (1, 2, 3)
    )
    assert _lone(candidates(f"```\n{repeated}\n```", "[Bug]: it hangs"), READING)
    other = repeated + "\nINFO 11-26 13:07:40 metrics.py:1] Avg prompt throughput: 0.0 tokens/s"
    assert not _lone(candidates(f"```\n{other}\n```"), READING)


def test_lines_of_one_message_with_other_values_are_one_lone_line():
    # triage holdout9 vllm#23796: the same warning for three modules, each a line of its own
    from errorkb.triage import _lone

    lines = "\n".join(
        f"WARNING 08-28 05:21:34 [models.py:472] Widget {name} will be ignored."
        for name in ("a.proj", "b.proj", "c.proj")
    )
    found = candidates(f"```\n{lines}\n```")
    assert not _lone(found, READING)
    assert _lone(found, READING, lambda lines: len(lines) == 3)  # one record sure of all
    assert not _lone(found, READING, lambda lines: False)


def test_a_quote_its_sentence_calls_a_warning_is_warned():
    # triage holdout9 vllm#30859: 'vLLM prints a warning "Current vLLM config is not set."'
    text = (
        'If the code calls it, vLLM prints a warning "Current widget config is not set." and '
        'goes on. Then it says "Widget count must be positive" and stops.'
    )
    assert [(c.text, c.warned) for c in candidates(text)] == [
        ("Current widget config is not set.", True),
        ("Widget count must be positive", False),
    ]


def test_a_template_s_placeholder_is_no_error_like_line():
    from errorkb.triage import _lone

    line = "WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with X('y')"
    text = f"```text\nThe output of `python collect_env.py`\n```\n{line}\n\n### Bug\n\n{line}"
    assert _lone(candidates(text), READING)


def test_three_backticks_around_one_line_are_inline_code():
    text = "- error\n  ```RuntimeError: Group size must be positive, got 0```\n- then this"
    assert [(c.kind, c.text) for c in candidates(text)] == [
        ("inline", "RuntimeError: Group size must be positive, got 0")
    ]


def test_the_user_s_release_is_the_version_right_after_an_engine_s_name():
    from errorkb.triage import said_releases

    programs = {"vLLM": {"engine": True}, "SGLang": {"engine": True}, "PyTorch": {}}
    assert said_releases("vllm 0.4.3 on torch 2.3", programs) == {"vLLM": "0.4.3"}
    assert said_releases("vLLM Version    : 0.9.0.1", programs) == {"vLLM": "0.9.0.1"}
    assert said_releases("sglang==0.4.3.post2", programs) == {"SGLang": "0.4.3.post2"}
    assert said_releases("vLLM API server version 0.5.0.post1", programs) == {"vLLM": "0.5.0.post1"}
    assert said_releases("vllm gpu version, cuda 12.8", programs) == {}  # CUDA's


def test_the_error_a_traceback_ends_in_comes_first(site):
    text = "Also saw `RuntimeError: Group size must be positive, got 0` earlier.\n\n" + body()
    found = triage(text, site)
    assert [f.result.id for f in found] == ["00000000000000a1", "00000000000000b2"]
    assert found[0].final and found[0].result.values == {"count": "10", "group_size": "3"}


def test_no_error_no_comment(site, fixture_site, capsys, monkeypatch):
    assert triage("### 🚀 The feature\n\nPlease support `widgets` in `demo`.", site) == []
    monkeypatch.setattr("sys.stdin", _Stdin("Just a question, no error."))
    assert cli.main(["triage", "--site", str(fixture_site)]) == 1
    assert capsys.readouterr().out == ""


def test_min_exact_leaves_a_partial_match_out(site):
    cut = "```\nValueError: Widget count (10) must be divisible by group\n```"
    assert [f.result.match for f in triage(cut, site)] == ["partial"]
    assert triage(cut, site, minimum="exact") == []


# --- the comment -------------------------------------------------------------------------


def test_comment_links_the_page_with_the_values(fixture_site, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", _Stdin(body()))
    assert cli.main(["triage", "--site", str(fixture_site)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(comment.MARKER)
    page = "https://kb.example.org/errors/00000000000000a1/?count=10&group_size=3"
    assert f"]({page})" in out
    assert "<details><summary>Why this page</summary>" in out
    assert out.count("\n- ") == 2  # a line per error, a reason per error


def test_json_for_tools(fixture_site, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", _Stdin(body()))
    assert cli.main(["triage", "--site", str(fixture_site), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["comment"].startswith(comment.MARKER)
    assert [e["id"] for e in doc["errors"]] == ["00000000000000a1"]


def test_answer_for_the_values_of_a_divisibility_check():
    doc = {
        "derived": {
            "divisibility": {"value": "heads", "divisor": "tp", "value_param": "heads"},
            "flags": [{"flag": "--tensor-parallel-size", "url": "https://docs.example/tp"}],
        }
    }
    answer = comment.answer_for(doc, {"heads": "12", "tp": "5"})
    assert "for `heads` = 12: 1, 2, 3, 4, 6, 12" in answer
    assert "[`--tensor-parallel-size`](https://docs.example/tp)" in answer


def test_answer_names_the_kind_of_setting_to_change_and_never_a_config_json_key():
    flags = [
        {"name": "n", "kind": "model-config", "field": "hf_config.n", "key": "num_heads"},
        {"name": "m", "kind": "request-field", "field": "request.max_tokens", "key": "max_tokens"},
        {"name": "e", "kind": "env-var", "field": "envs.VLLM_X", "env": "VLLM_X"},
    ]
    answer = comment.answer_for({"derived": {"flags": flags}}, {})
    assert answer == (
        "set with `max_tokens` (a request field) or `VLLM_X` (an environment variable)"
    )


HOSTILE = [
    "<script>alert(1)</script>",
    "@octocat",
    "[click](https://evil.example)",
    "'@octocat [click](https://evil.example) </details>'",
    "``x```",
]


def widget_error(name: str) -> str:
    """The fixture record whose own text holds HTML, with a value of the user's."""
    return f"```\nKeyError: unknown widget <img src=x onerror=alert(1)> {name}\n```"


@pytest.mark.parametrize("value", HOSTILE)
def test_user_text_stays_inside_code_spans(site, value):
    out = comment.render(triage(widget_error(value), site))
    plain = comment.render(triage(widget_error("plain"), site))
    assert out and plain and "00000000000000c3" in out
    # What GitHub renders as text (outside code spans and link targets) is the same
    # whatever the user wrote, and our own text's HTML is escaped.
    assert _outside_code(out) == _outside_code(plain)
    assert "\\<img src=x onerror=alert\\(1\\)\\>" in out


def test_a_body_of_html_and_a_body_of_a_megabyte(site):
    html = (
        "<details><summary>log</summary>\n\n<pre>\n"
        + body()
        + "\n</pre></details><script>x</script>"
    )
    assert [f.result.id for f in triage(html, site)] == ["00000000000000a1"]
    huge = "INFO noise line\n" * 70_000 + body()
    assert len(huge) > 1_000_000
    out = comment.render(triage(huge, site))  # the error is past the part read: no claim
    assert out is None or "00000000000000a1" in out


def _outside_code(markdown: str) -> str:
    """The comment without its code spans and link targets: what GitHub renders as text."""
    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown)
    return re.sub(r"\]\([^)]*\)", "]", text)


class _Stdin:
    def __init__(self, text: str):
        self.text = text

    def read(self) -> str:
        return self.text


# --- the GitHub side ---------------------------------------------------------------------


class FakeGitHub(ThreadingHTTPServer):
    """Issue comments and labels of one repository, and every request made. The token is
    the workflow's own (`login` None: it may not ask GET /user, and posts as the Actions
    bot) or a person's (`login`: theirs)."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.login: str | None = None
        self.requests: list[tuple[str, str, object]] = []
        self.comments: dict[int, dict] = {}
        self.labels: set[str] = set()
        self.failures: list[tuple[int, dict]] = []  # answers given before any real one
        self.next_id = 100
        self.issues: list[dict] = []  # the repository's issues, newest first

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def user(self) -> dict:
        """Who the token posts as."""
        if self.login is None:
            return {"login": github.ACTIONS_LOGIN, "type": "Bot"}
        return {"login": self.login, "type": "User"}

    def add(self, body: str, user: dict) -> dict:
        self.next_id += 1
        self.comments[self.next_id] = {"id": self.next_id, "body": body, "user": user}
        return self.comments[self.next_id]


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def log_message(self, *args):  # quiet
        pass

    def _answer(self, status: int, body=None, headers=None):
        raw = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        fake = self.server
        fake.requests.append((self.command, self.path, body))
        assert self.headers["Authorization"] == "Bearer t0ken"
        if fake.failures:
            status, headers = fake.failures.pop(0)
            return self._answer(status, {"message": "slow down"}, headers)
        base = f"/repos/org/repo/issues/{ISSUE}"
        path = self.path.split("?")[0]
        if self.command == "GET" and path == "/user":
            if fake.login is None:
                return self._answer(403, {"message": "Resource not accessible by integration"})
            return self._answer(200, fake.user)
        if self.command == "GET" and path == "/repos/org/repo/issues":
            query = dict(part.split("=", 1) for part in self.path.split("?")[1].split("&"))
            page, size = int(query["page"]), int(query["per_page"])
            return self._answer(200, fake.issues[(page - 1) * size : page * size])
        if self.command == "GET" and path == base + "/comments":
            return self._answer(200, list(fake.comments.values()))
        if self.command == "POST" and path == base + "/comments":
            return self._answer(201, fake.add(body["body"], fake.user))
        if self.command == "POST" and path == base + "/labels":
            fake.labels |= set(body["labels"])
            return self._answer(200, [])
        match = re.fullmatch(r"/repos/org/repo/issues/comments/(\d+)", path)
        if match and int(match[1]) in fake.comments:
            if self.command == "PATCH":
                fake.comments[int(match[1])]["body"] = body["body"]
                return self._answer(200, fake.comments[int(match[1])])
            if self.command == "DELETE":
                del fake.comments[int(match[1])]
                return self._answer(204)
        if self.command == "DELETE" and path.startswith(base + "/labels/"):
            name = unquote(path.rsplit("/", 1)[1])
            if name in fake.labels:
                fake.labels.discard(name)
                return self._answer(200, [])
        return self._answer(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = do_DELETE = _handle


@pytest.fixture
def api(monkeypatch):
    fake = FakeGitHub()
    serve_in_thread(fake)
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    fake.waits = []
    monkeypatch.setattr(github, "_sleep", fake.waits.append)
    yield fake
    fake.shutdown()
    fake.server_close()


def run_event(tmp_path, fixture_site, action: str, text, *extra: str) -> int:
    event = tmp_path / "event.json"
    issue = {"number": ISSUE, "title": "[Bug]: split fails", "body": text}
    event.write_text(json.dumps({"action": action, "issue": issue}))
    return cli.main(
        ["triage", "--event", str(event), "--site", str(fixture_site), "--post", *extra]
    )


def test_the_title_of_an_opened_issue_is_read(api, tmp_path, fixture_site):
    event = tmp_path / "event.json"
    title = "[Bug]: ValueError: Widget count (10) must be divisible by group size (3)."
    issue = {"number": ISSUE, "title": title, "body": "### 🐛 Describe the bug\n\nSee title."}
    event.write_text(json.dumps({"action": "opened", "issue": issue}))
    args = ["triage", "--event", str(event), "--site", str(fixture_site), "--post"]
    assert cli.main(args) == 0
    (posted,) = api.comments.values()
    assert "count=10" in posted["body"]


def _issue(number: int, title: str, body: str, **more) -> dict:
    url = f"https://github.com/org/repo/issues/{number}"
    return {"number": number, "title": title, "body": body, "html_url": url, **more}


def test_a_dry_run_reads_recent_issues_and_posts_nothing(api, fixture_site, capsys):
    api.issues = [
        _issue(9, "[Bug]: split fails", body(10, 3)),
        _issue(8, "[Feature]: widgets in demo", "### 🚀 The feature\n\nPlease."),
        _issue(6, "Fix split", body(10, 3), pull_request={"url": "..."}),  # a PR: skipped
        _issue(5, "[Bug]: RuntimeError: Group size must be positive, got 0", None),
    ]
    args = ["triage", "--repo", "org/repo", "--since", "2025-01-31", "--site", str(fixture_site)]
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "#9 " in out and "#8 " in out and "#5 " in out and "#6 " not in out
    assert out.count("would name:") == 2 and out.count("would say nothing") == 1
    assert "count=10" in out
    assert "3 issue(s) of org/repo since 2025-01-31; would comment on 2; posted nothing" in (
        captured.err
    )
    assert {method for method, _, _ in api.requests} == {"GET"}
    (listing,) = api.requests
    assert "since=2025-01-31T00%3A00%3A00Z" in listing[1] and "state=all" in listing[1]


def test_a_dry_run_pages_through_the_issues(api, fixture_site, capsys):
    api.issues = [_issue(n, "[Usage]: how?", "A question.") for n in range(250, 0, -1)]
    args = ["triage", "--repo", "org/repo", "--since", "2025-01-31T12:00:00+02:00"]
    assert cli.main([*args, "--site", str(fixture_site), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 250
    assert len(api.requests) == 3
    assert "since=2025-01-31T10%3A00%3A00Z" in api.requests[0][1]


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--since", "last week"], "--since 'last week': give a date"),
        (["--since", "2025-01-31", "--post"], "no --event, no --post"),
        ([], "--repo needs --since DATE"),
    ],
)
def test_a_dry_run_s_mistakes_are_one_line(api, fixture_site, capsys, extra, says):
    args = ["triage", "--repo", "org/repo", "--site", str(fixture_site), *extra]
    assert cli.main(args) in (1, 2)
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert api.requests == []


def test_opened_edited_then_fixed(api, tmp_path, fixture_site):
    assert (
        run_event(tmp_path, fixture_site, "opened", body(10, 3), "--label", "errorkb: matched") == 0
    )
    assert [r[0] for r in api.requests] == ["GET", "POST", "POST"]  # list, comment, label
    (first,) = api.comments.values()
    assert first["body"].startswith(comment.MARKER) and "count=10" in first["body"]
    assert api.labels == {"errorkb: matched"}

    api.requests.clear()
    assert run_event(tmp_path, fixture_site, "edited", body(12, 5)) == 0
    (edited,) = api.comments.values()
    assert edited["id"] == first["id"] and "count=12" in edited["body"]
    assert [r[0] for r in api.requests] == ["GET", "GET", "PATCH"]  # comments, /user, edit

    api.requests.clear()
    assert run_event(tmp_path, fixture_site, "edited", body(12, 5)) == 0
    assert [r[0] for r in api.requests] == ["GET", "GET"]  # the same comment: left alone

    api.requests.clear()
    gone = "### Describe the bug\n\nFixed it myself, thanks."
    assert run_event(tmp_path, fixture_site, "edited", gone, "--label", "errorkb: matched") == 0
    assert api.comments == {} and api.labels == set()
    assert [r[0] for r in api.requests] == ["GET", "GET", "DELETE", "DELETE"]


TOKENS = {"the workflow's token": None, "a personal token": "alice"}


@pytest.mark.parametrize("login", TOKENS.values(), ids=list(TOKENS))
def test_each_edit_updates_the_one_comment_whoever_the_token_is(api, tmp_path, fixture_site, login):
    api.login = login
    assert run_event(tmp_path, fixture_site, "opened", body(10, 3)) == 0
    for count in (12, 14):
        assert run_event(tmp_path, fixture_site, "edited", body(count, 5)) == 0
    (only,) = api.comments.values()
    assert only["user"] == api.user and "count=14" in only["body"]
    assert [r[0] for r in api.requests].count("POST") == 1


@pytest.mark.parametrize("login", TOKENS.values(), ids=list(TOKENS))
def test_anothers_comment_with_the_marker_is_never_edited_or_deleted(
    api, tmp_path, fixture_site, login
):
    api.login = login
    spoofs = [
        api.add(comment.MARKER + "\nI am the bot", {"login": "mallory", "type": "User"}),
        api.add(comment.MARKER + "\nSo am I", {"login": "other-app[bot]", "type": "Bot"}),
    ]
    if login:  # the Actions bot's own comment, seen by a person's token: not its own either
        spoofs.append(api.add(comment.MARKER + "\nold", {"login": github.ACTIONS_LOGIN}))
    kept = [dict(c) for c in spoofs]
    assert run_event(tmp_path, fixture_site, "edited", body(12, 5)) == 0
    (own,) = [c for c in api.comments.values() if c not in kept]
    gone = "### Describe the bug\n\nFixed it myself, thanks."
    assert run_event(tmp_path, fixture_site, "edited", gone) == 0
    assert list(api.comments.values()) == kept
    changes = [r[:2] for r in api.requests if r[0] != "GET"]
    assert changes == [
        ("POST", f"/repos/org/repo/issues/{ISSUE}/comments"),
        ("DELETE", f"/repos/org/repo/issues/comments/{own['id']}"),
    ]


def test_a_token_gets_asked_who_it_is_once_a_run(api, tmp_path, fixture_site):
    api.login = "alice"
    api.add(comment.MARKER + "\nI am the bot", {"login": "mallory", "type": "User"})
    api.add(comment.MARKER + "\nSo am I", {"login": "mallory", "type": "User"})
    assert run_event(tmp_path, fixture_site, "edited", body()) == 0
    assert [r[1] for r in api.requests].count("/user") == 1


def test_a_body_with_no_error_makes_no_request(api, tmp_path, fixture_site):
    assert run_event(tmp_path, fixture_site, "opened", "Please add a widget feature.") == 0
    assert api.requests == []


@pytest.mark.parametrize("status", [429, 403])
def test_rate_limits_are_retried_a_few_times_then_given_up(
    api, tmp_path, fixture_site, capsys, status
):
    api.failures = [(status, {"Retry-After": "1"})] * 10
    assert run_event(tmp_path, fixture_site, "opened", body()) == 0  # the workflow never fails
    assert len(api.requests) == github.ATTEMPTS
    assert api.waits == [1] * (github.ATTEMPTS - 1)
    log = capsys.readouterr().err
    assert "::warning::errorkb triage:" in log and "rate-limited" in log
    assert f"gave up after {github.ATTEMPTS} attempt(s)" in log


def test_a_5xx_answer_then_success(api, tmp_path, fixture_site):
    api.failures = [(502, {})]
    assert run_event(tmp_path, fixture_site, "opened", body()) == 0
    assert len(api.comments) == 1 and api.waits == [2]


def test_a_long_rate_limit_is_not_waited_out(api, tmp_path, fixture_site, capsys):
    api.failures = [(429, {"Retry-After": str(github.MAX_WAIT + 1)})]
    assert run_event(tmp_path, fixture_site, "opened", body()) == 0
    assert len(api.requests) == 1 and api.waits == []
    assert "gave up after 1 attempt(s)" in capsys.readouterr().err


def test_an_event_it_cannot_read_fails_nothing(api, tmp_path, fixture_site, capsys):
    event = tmp_path / "event.json"
    event.write_bytes(b"\xff{not json")
    args = ["triage", "--event", str(event), "--site", str(fixture_site), "--post"]
    assert cli.main(args) == 0
    assert api.requests == [] and "::warning::" in capsys.readouterr().err


def test_the_bot_never_answers_its_own_comment(api, tmp_path, fixture_site):
    event = tmp_path / "event.json"
    own = {"body": comment.render(triage(body(), sites.from_folder(fixture_site)))}
    event.write_text(json.dumps({"action": "created", "issue": {"number": ISSUE}, "comment": own}))
    assert cli.main(["triage", "--event", str(event), "--site", str(fixture_site), "--post"]) == 0
    assert api.requests == []


# --- a published site ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The fixture knowledge base as published at a local address (its base_url): the
    address."""
    tmp = tmp_path_factory.mktemp("published")
    server = local_host(tmp / "site")
    base = f"http://127.0.0.1:{server.server_address[1]}"
    kb = make_kb(tmp / "kb")
    settings = kb / "content" / "site.yaml"
    settings.write_text(settings.read_text().replace("https://kb.example.org", base))
    build(kb, tmp / "site")
    yield base
    server.shutdown()
    server.server_close()


def local_host(folder) -> ThreadingHTTPServer:
    """A server of what will be in the folder (the port is known before the site is built)."""
    server = make_server(folder, "127.0.0.1", 0)
    serve_in_thread(server)
    return server


def links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)]*)\)", markdown)


def test_index_over_http_is_cached(published, tmp_path):
    base = published
    first = sites.from_url(base + "/search/index.json", tmp_path)
    assert [f.result.id for f in triage(body(), first)] == ["00000000000000a1"]
    kept = len(list(next(tmp_path.iterdir()).iterdir()))
    assert kept > 2  # the index, its shards and the record's document
    second = sites.from_url(base + "/search/index.json", tmp_path)
    assert [f.document["id"] for f in triage(body(), second) if f.document] == ["00000000000000a1"]


def test_an_unreachable_site_is_a_clear_error(tmp_path, unused_port):
    with pytest.raises(sites.SiteError, match="127.0.0.1"):
        sites.from_url(f"http://127.0.0.1:{unused_port}/search/index.json", tmp_path)


@pytest.mark.slow
def test_a_site_under_a_sub_path_is_read_and_linked_there(tmp_path):
    """A Material site at /server/ (as vLLM's docs are at /en/latest/), the knowledge base
    its errors/ section: the documents come from its API and the links are absolute."""
    from tests.test_mkdocs import built, host_site, mkdocs_build

    server = local_host(tmp_path / "www")
    base = f"http://127.0.0.1:{server.server_address[1]}/server/"
    config = host_site(tmp_path / "docs", {})
    config.write_text(config.read_text().replace("https://docs.example.org/server/", base))
    built(mkdocs_build(config, tmp_path / "www" / "server", tmp_path))
    try:
        site = sites.from_url(base + "errors/search/index.json", tmp_path / "cache")
        found = triage(body(), site)
    finally:
        server.shutdown()
        server.server_close()
    assert [f.document and f.document["id"] for f in found] == ["00000000000000a1"]
    page = base + "errors/00000000000000a1.html?count=10&group_size=3"
    assert links(comment.render(found)) == [page]


# --- the rules it matches by: the index's ---------------------------------------------

# A logger's line no installed wing knows, and the message of the fixture's a1 after it
OTHER_LOG = "MYLOG[7] "
OTHER_PASTE = OTHER_LOG + "ValueError: Widget count (10) must be divisible by group size (3)."
SAID = "the message, as this site's own rules say"


def _site_with_other_rules(fixture_site, folder: Path) -> Path:
    """The fixture site, its index built (as if) by another errorkb: another log prefix
    among its rules, other words for an exact fit, one result a query at most."""
    shutil.copytree(fixture_site, folder)
    path = folder / "search" / "index.json"
    index = json.loads(path.read_text())
    mark = r"MYLOG\[\d+\] ?"
    index["rules"]["prefix"] = f"(?:(?:{mark})|{index['rules']['prefix'][3:]}"
    index["rules"]["line_mark"] = f"(?:(?:{mark})|{index['rules']['line_mark'][3:]}"
    index["how"]["message"] = SAID
    index["query"]["results"] = 1
    path.write_text(json.dumps(index))
    return folder


def test_search_and_the_bot_match_by_the_index_s_rules_not_the_installed_ones(
    fixture_site, tmp_path, capsys
):
    """A bot (or `errorkb match`) of one release reading a site built by another matches by
    the rules the site's index carries, as the site's own search (match.js) does."""
    from errorkb.search import index as search_index

    assert not CTX.rules.prefix.match(OTHER_LOG)[0]  # the installed rules: no log prefix
    ours = engine.search(search_index.open_index(tmp_path, fixture_site), OTHER_PASTE)
    assert ours[0].how != SAID and len(ours) > 1  # by the rules it was built with
    other = _site_with_other_rules(fixture_site, tmp_path / "other")
    # errorkb match: the prefix is a log's, the exception line fits exactly, said as the
    # index says it, and one result only
    assert cli.main(["match", "--site", str(other), "--json", OTHER_PASTE]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["match"], r["how"]) for r in found] == [("00000000000000a1", "exact", SAID)]
    assert found[0]["values"] == {"count": "10", "group_size": "3"}
    # the bot: the same, from the body of an issue, by the same rules
    body = f"### Describe the bug\n\n```\n{OTHER_PASTE}\n```\n"
    (finding,) = triage(body, sites.from_folder(other))
    assert (finding.result.id, finding.result.how) == ("00000000000000a1", SAID)
    assert finding.quote == "Widget count (10) must be divisible by group size (3)."


# --- an index it cannot read --------------------------------------------------------------


def _index_with(fixture_site, **changes) -> bytes:
    index = json.loads((fixture_site / "search" / "index.json").read_text())
    index.update(changes)
    return json.dumps({k: v for k, v in index.items() if v is not None}).encode()


def _rules(fixture_site) -> dict:
    return json.loads((fixture_site / "search" / "index.json").read_text())["rules"]


BAD_INDEXES = {
    "an empty object": (lambda site: b"{}", "no format version"),
    "a list": (lambda site: b"[1,2,3]", "no format version"),
    "a string": (lambda site: b'"x"', "no format version"),
    "not JSON": (lambda site: b"{not json", "not JSON"),
    "nested 100k deep": (lambda site: b"[" * 100_000 + b"]" * 100_000, "not JSON"),
    "another format": (lambda site: _index_with(site, version=1), "format 1; this errorkb"),
    "a version of another type": (lambda site: _index_with(site, version="2"), "no format"),
    "rules it lacks": (
        lambda site: _index_with(site, rules={"prefix": "x"}),
        "its rules do not compile (KeyError",
    ),
    "a rule that is no pattern": (
        lambda site: _index_with(site, rules={**_rules(site), "exception": "("}),
        "its rules do not compile (error",
    ),
    "no settings": (lambda site: _index_with(site, query=None), "'query' is no table"),
    "no shards": (lambda site: _index_with(site, shards=None), "'shards' is no power of two"),
    "shards as text": (lambda site: _index_with(site, shards="8"), "'shards'"),
    "shards as a bool": (lambda site: _index_with(site, shards=True), "'shards'"),
    "no page": (lambda site: _index_with(site, page=0), "'page' is no count"),
    "a words URL of another type": (lambda site: _index_with(site, words_url=[1]), "'words_url'"),
    "a relative page URL": (
        lambda site: _index_with(site, page_url="/errors/{}/"),
        "'page_url' is no absolute http(s) URL",
    ),
    "a page URL without the id": (
        lambda site: _index_with(site, page_url="https://kb.example.org/"),
        "no place for the record's id",
    ),
    "no API base": (lambda site: _index_with(site, api_base=None), "'api_base'"),
    "an API base without a host": (
        lambda site: _index_with(site, api_base="https:///api/"),
        "'api_base'",
    ),
    "an API base of a broken address": (
        lambda site: _index_with(site, api_base="http://[::1/api/"),
        "'api_base'",
    ),
    "hints as a list": (lambda site: _index_with(site, hints=[]), "'hints'"),
    "a hint that is no pattern": (lambda site: _index_with(site, hints={"Demo": "("}), "'hints'"),
    "programs of another shape": (
        lambda site: _index_with(site, programs={"Demo": {"key": 1}}),
        "'programs'",
    ),
}


@pytest.fixture
def bad_site(tmp_path, fixture_site, request):
    """The fixture site with its index.json replaced by one of BAD_INDEXES: (folder, why)."""
    make, why = BAD_INDEXES[request.param]
    folder = tmp_path / "site"
    (folder / "search").mkdir(parents=True)
    (folder / "search" / "index.json").write_bytes(make(fixture_site))
    return folder, why


def _one_line_error(err: str, why: str, prefix: str = "") -> None:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{prefix}errorkb triage: ") and why in err, err


@pytest.mark.parametrize("bad_site", list(BAD_INDEXES), indirect=True)
def test_an_index_it_cannot_read_is_one_line_and_exit_2(bad_site, capsys, monkeypatch):
    folder, why = bad_site
    monkeypatch.setattr("sys.stdin", _Stdin(body()))
    assert cli.main(["triage", "--site", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    _one_line_error(err, why)


@pytest.mark.parametrize("bad_site", list(BAD_INDEXES), indirect=True)
def test_posting_from_an_index_it_cannot_read_fails_the_run_and_asks_nothing(
    bad_site, api, tmp_path, capsys
):
    folder, why = bad_site
    assert run_event(tmp_path, folder, "opened", body()) == 2
    assert api.requests == []
    _one_line_error(capsys.readouterr().err, why, "::error::")


def test_a_published_index_it_cannot_read_is_one_line_too(published, tmp_path, capsys):
    with pytest.raises(sites.BadIndex, match="not JSON"):  # the site's 404 page
        sites.from_url(published + "/search/", tmp_path)


# --- the GitHub Action: errorkb installed alone (action.yml's install step, no dependency) --

# Runs errorkb's command line in a Python that can import nothing but the standard library
# and errorkb itself: what the action's `pip install --no-deps` leaves it.
STDLIB_ONLY = textwrap.dedent(
    """
    import sys

    class NoThirdParty:
        def find_spec(self, name, path=None, target=None):
            top = name.partition(".")[0]
            if top not in sys.stdlib_module_names and top != "errorkb":
                raise ModuleNotFoundError(f"No module named {name!r} (stdlib only)")

    sys.meta_path.insert(0, NoThirdParty())
    from errorkb import cli
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def test_triage_imports_nothing_but_the_standard_library(fixture_site):
    run = subprocess.run(
        [sys.executable, "-c", STDLIB_ONLY, "triage", "--site", str(fixture_site)],
        input=body(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "00000000000000a1" in run.stdout


# --- action.yml's steps, run as Actions runs them ---------------------------------------

ACTION = REPO / "action.yml"


def step(name: str) -> dict:
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    (found,) = [s for s in steps if s.get("name") == name]
    return found


def run_step(name: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The step's script as Actions runs a `shell: bash` step."""
    script = step(name)["run"]
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def stub_errorkb(tmp_path) -> dict[str, str]:
    """A PATH whose `errorkb` writes its arguments to tmp_path/argv, a line each."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "errorkb"
    stub.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path / 'argv'}\n")
    stub.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


TRIAGE_ENV = {
    "GITHUB_EVENT_PATH": "event.json",
    "ERRORKB_SITE": "https://docs.example.org/en/latest/errors/",
    "ERRORKB_MIN": "partial",
    "ERRORKB_LABEL": "errorkb: matched",
}


def test_the_action_runs_a_command_errorkb_has(tmp_path):
    done = run_step("Triage the issue", {**TRIAGE_ENV, **stub_errorkb(tmp_path)})
    assert done.returncode == 0, done.stderr
    argv = (tmp_path / "argv").read_text().splitlines()
    args = cli.parser().parse_args(argv)
    assert args.func is cli.cmd_triage and args.post and args.label == "errorkb: matched"
    assert args.index == "https://docs.example.org/en/latest/errors/search/index.json"
    assert args.event == "event.json" and args.min == "partial"
    triage = step("Triage the issue")
    assert set(triage["env"]) >= {"GITHUB_TOKEN"} and "${{" not in triage["run"]


def test_the_action_has_no_default_site_and_says_so_in_one_line(tmp_path):
    site = yaml.safe_load(ACTION.read_text())["inputs"]["site-url"]
    assert site["required"] is True and "default" not in site
    done = run_step(
        "Triage the issue", {**TRIAGE_ENV, "ERRORKB_SITE": "", **stub_errorkb(tmp_path)}
    )
    assert done.returncode == 1 and not (tmp_path / "argv").exists()
    assert done.stdout.startswith("::error::") and done.stdout.count("\n") == 1
    assert "site-url" in done.stdout


@pytest.mark.slow
def test_the_action_installs_errorkb_alone_and_answers_an_issue(tmp_path, published, api):
    """A fresh venv, errorkb installed by the action's own step (the checkout as
    GITHUB_ACTION_PATH) and nothing else, then its triage step against a published site
    and a fake GitHub API."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The test's own PYTHONPATH (this checkout's code, on the test venv's packages) stays out.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
    installed = run_step("Install errorkb", {**env, "GITHUB_ACTION_PATH": str(REPO)})
    assert installed.returncode == 0, installed.stderr
    listed = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "list", "--format=json"],
        capture_output=True,
        check=True,
        text=True,
    )
    assert {p["name"] for p in json.loads(listed.stdout)} <= {"errorkb", "pip", "setuptools"}

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "opened", "issue": {"number": ISSUE, "body": body()}}))
    done = run_step(
        "Triage the issue",
        {
            **env,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_API_URL": api.url,
            "GITHUB_TOKEN": "t0ken",
            "GITHUB_REPOSITORY": "org/repo",
            "ERRORKB_CACHE": str(tmp_path / "cache"),
            "ERRORKB_SITE": published + "/",
            "ERRORKB_MIN": "partial",
            "ERRORKB_LABEL": "",
        },
    )
    assert done.returncode == 0, done.stderr
    (posted,) = api.comments.values()
    assert posted["body"].startswith(comment.MARKER)
    assert f"]({published}/errors/00000000000000a1/?count=10&group_size=3)" in posted["body"]


def test_an_older_check_fitting_a_title_part_alike_is_no_tie():
    """A part of a title that today's message and a check no longer printed both start alike
    ("capture cuda graph failed": SGLang's and its 0.3 wording's) names today's."""
    from errorkb.triage import _older

    def result(today=None, upgrade=""):
        return engine.Result(
            "x", "t", "E", "p", "", "partial", "how", {}, "", today=today, upgrade=upgrade
        )

    assert _older(result(today={"id": "y", "title": "T"})) and _older(result(upgrade="0.4.0"))
    assert not _older(result())


def _fake_site(monkeypatch, answers: dict[str, list["engine.Result"]]):
    """A site whose search answers each query from `answers` (nothing for any other)."""
    from types import SimpleNamespace

    monkeypatch.setattr(engine, "search", lambda index, text, **_: answers.get(text, []))
    return SimpleNamespace(index=SimpleNamespace(context=lambda: CTX))


def test_a_retyped_message_among_a_title_s_words_is_not_named(monkeypatch):
    """vllm#7912: "Confirm tool calling is not supported and ..." fits "Tool '{tool_name}'
    is not supported" without its quotes, and still does without the title's first word:
    a sentence of the user's, its unquoted value one of the user's words."""
    from errorkb.triage import _retyped_among

    retyped = HOW["message"] + HOW["quotes"]
    title = "Confirm tool calling is not supported and more"
    fit = engine.Result("t1", "t", "KeyError", "vLLM", "", "partial", retyped, {"x": "calling"})
    site = _fake_site(monkeypatch, {"tool calling is not supported and more": [fit]})
    assert _retyped_among(site, title, fit, None)
    alone = "Tool calling is not supported"
    assert not _retyped_among(_fake_site(monkeypatch, {}), alone, fit, None)
    exact = engine.Result("t1", "t", "KeyError", "vLLM", "", "exact", HOW["message"], {})
    assert not _retyped_among(site, title, exact, None)  # as printed: the title names it
    # Other letter case only: the user's words frame the message ("No Cuda GPUs are
    # available when running vLLM on Ray"), it stays named
    cased = engine.Result(
        "t1", "t", "KeyError", "vLLM", "", "partial", HOW["message"] + HOW["case"], {}
    )
    assert not _retyped_among(site, title, cased, None)


def test_a_part_of_a_title_that_fits_tied_messages_is_not_named(monkeypatch):
    """sglang#1953: the title is a message three records print (a warning, an error and an
    exception): its first sentence is a removed warning's whole message, no answer."""
    from errorkb.triage import _tied_title

    text = "Detected errors during sampling! NaN in the logits."
    tied = engine.Result("w", "t", "WARNING", "SGLang", "", "exact", "the message", {}, tied=True)
    site = _fake_site(monkeypatch, {text: [tied]})
    assert _tied_title(site, f"[Bug] {text}", None)
    sure = engine.Result("w", "t", "WARNING", "SGLang", "", "exact", "the message", {})
    assert not _tied_title(_fake_site(monkeypatch, {text: [sure]}), f"[Bug] {text}", None)


def test_a_title_s_part_ends_before_the_user_s_comma():
    """vllm#787: "Aborted due to the lack of CPU swap space, but there is enough RAM and
    swap": the run before the comma is the message's first sentence without its full stop."""
    spans = [c.text for c in extract.title_spans("Aborted due to lack of swap, but there is RAM")]
    assert "Aborted due to lack of swap" in spans
    assert not any(span.endswith(",") for span in spans)


def test_older_wordings_of_one_check_printed_today_are_one_lineage():
    from errorkb.triage import _lineage

    def older(rid: str, today: str | None) -> "engine.Result":
        result = engine.Result(rid, "t", "ValueError", "vLLM", "", "partial", HOW["prefix"], {})
        result.today = {"id": today, "title": "t"} if today else None
        return result

    assert _lineage(older("o1", "n1"), older("o2", "n1"))  # its page answers for both
    assert not _lineage(older("o1", "n1"), older("o2", "n2"))
    assert not _lineage(older("o1", None), older("o2", None))  # two removed checks: a tie
    # vllm#5976: the same words, printed by a copy whose check is gone (the OpenVINO worker):
    # the wording whose check lives on answers; not where the text shows other values
    gone = older("o3", None)
    gone.upgrade = "0.8.5.post1"
    assert _lineage(older("o1", "n1"), gone)
    assert not _lineage(gone, older("o1", "n1"))
    gone.values = {"max_model_len": "8192"}
    assert not _lineage(older("o1", "n1"), gone)


def test_a_cut_in_a_quoted_value_that_closed_is_no_fit():
    """sglang#24843: "think_end_token '</think>' must encode to exactly one token ..." fits
    the start of "think_end_token '{think_end_token}' could not be encoded ..." only with
    its value running past its closing quote: another message."""
    from errorkb.triage import _closed_past

    text = "think_end_token '</think>' must encode to exactly one token."
    ran = engine.Result("a", "t", "ValueError", "SGLang", "", "partial", HOW["prefix"], {})
    ran.values = {"think_end_token": "</think>' must encode to exactly one token."}
    assert _closed_past(text, ran)
    cut = engine.Result("a", "t", "ValueError", "SGLang", "", "partial", HOW["prefix"], {})
    cut.values = {"think_end_token": "</think"}
    assert not _closed_past("think_end_token '</think", cut)  # cut inside it: a fit


def test_a_title_s_message_start_among_the_user_s_words_is_not_named(monkeypatch):
    """sglang#18550: "Error instead of silent Triton fallback when `--kv-cache-dtype
    fp8_e5m2` ..." holds the start of a message in the middle of the user's sentence; a
    message's start after a colon ("... appears: Quantization scheme is not supported")
    opens a part of the title, and is named."""
    from errorkb.triage import _retyped_among

    fit = engine.Result("k", "t", "ValueError", "SGLang", "", "partial", HOW["prefix"], {})
    among = "Error instead of fallback when --kv-cache-dtype fp8_e5m2 is set"
    site = _fake_site(monkeypatch, {among: [fit], among.split(" ", 1)[1]: [fit]})
    assert _retyped_among(site, among, fit, None)
    said = "an error appears: Quantization scheme is not supported"
    answers = {said: [fit], "error appears: Quantization scheme is not supported": [fit]}
    answers["Quantization scheme is not supported"] = [fit]
    assert not _retyped_among(_fake_site(monkeypatch, answers), said, fit, None)


def test_a_log_line_is_searched_with_its_level():
    """A WARNING line's text that an exception prints too: its level names the logger's
    record (llm-d#597: "Unknown vLLM environment variable detected: X")."""
    from errorkb.triage import _query

    block = engine.Block(None, False, ["Unknown vLLM environment variable detected: X"])
    block.level = "WARNING"
    assert _query(block) == "WARNING Unknown vLLM environment variable detected: X"
    raised = engine.Block("ValueError", True, ["Unknown vLLM environment variable detected: X"])
    assert _query(raised) == "ValueError: Unknown vLLM environment variable detected: X"


def test_a_title_that_is_a_record_s_title_without_values_is_named():
    """vllm#28997: "AssertionError: local_world_size must be less than or equal to the
    number of visible devices" is the record's title, its message without the values."""
    from errorkb.triage import _retitled

    def result(rid: str, title: str) -> "engine.Result":
        return engine.Result(rid, title, "AssertionError", "vLLM", "", "similar", "how", {})

    said = "local_world_size must be less than or equal to the number of visible devices"
    best, other = result("a", said), result("b", "head_dim must be less than 256")
    assert _retitled([best, other], f"AssertionError: {said}")
    assert not _retitled([best, result("c", said)], said)  # two records titled so: a tie
    assert not _retitled([result("d", "Not supported")], "Not supported")  # too short
    # once a person titled the page in words of their own, its message without the values
    titled = result("a", "One node's share of the model needs more devices than it can see")
    titled.message = f"{said.replace('local_world_size', 'local_world_size ({n})')}."
    assert _retitled([titled, other], f"AssertionError: {said}")


def test_a_title_s_part_that_names_its_exception_has_no_rival_of_another():
    from errorkb.triage import _named_apart

    def result(exception: str) -> "engine.Result":
        return engine.Result("x", "t", exception, "torch", "", "partial", HOW["sentence"], {})

    oom, log = result("torch.OutOfMemoryError"), result("ERROR")
    assert _named_apart("torch.OutOfMemoryError: CUDA out of memory.", oom, log)
    assert not _named_apart("CUDA out of memory.", oom, log)
    assert not _named_apart("torch.OutOfMemoryError: CUDA out of memory.", oom, oom)


def _fit(rid: str, match: str, how: str, exception: str, tied: bool = False) -> engine.Result:
    return engine.Result(rid, "", exception, "vLLM", "", match, HOW[how], {}, tied=tied)


def _named_short(site, monkeypatch, text: str, *results, minimum="partial") -> list[str]:
    """What the bot names of a traceback ending in `text`, with search's answers made up."""
    monkeypatch.setattr(engine, "search", lambda index, query, **_: list(results))
    body = f'```\nTraceback (most recent call last):\n  File "x.py", line 1, in f\n{text}\n```'
    return [f.result.id for f in triage(body, site, minimum=minimum)]


def test_a_short_message_is_sure_when_raised_with_its_own_exception_and_nothing_else_fits(
    site, monkeypatch
):
    short = _fit("a", "generic", "generic", "AssertionError")
    other = _fit("b", "similar", "similar", "ValueError")
    said = "AssertionError: expected running sequences"
    assert _named_short(site, monkeypatch, said, short, other) == ["a"]
    dotted = "vllm.errors.AssertionError: expected running sequences"
    assert _named_short(site, monkeypatch, dotted, short) == ["a"]
    # a partial-tier answer: --min exact leaves it out
    assert _named_short(site, monkeypatch, said, short, minimum="exact") == []
    # No exception said, another exception said, or another record that fits: unsure
    assert _named_short(site, monkeypatch, "expected running sequences", short) == []
    other_exception = "ValueError: expected running sequences"
    assert _named_short(site, monkeypatch, other_exception, short) == []
    rival = _fit("c", "generic", "generic", "AssertionError")
    assert _named_short(site, monkeypatch, said, short, rival) == []
    tied = _fit("a", "generic", "generic", "AssertionError", tied=True)
    assert _named_short(site, monkeypatch, said, tied) == []
    # A message Python prints itself for any code, a loose fit: never sure
    python = _fit("d", "generic", "generic", "AttributeError")
    none = "AttributeError: 'NoneType' object has no attribute 'cpu'"
    assert _named_short(site, monkeypatch, none, python) == []
    loose = _fit("e", "generic", "loose", "ValueError")
    assigned = "ValueError: Attempted to assign 2 + 2 = 4 tokens"
    assert _named_short(site, monkeypatch, assigned, loose) == []


def test_a_logger_s_bars_with_a_level_and_its_name_are_a_prefix():
    for line in (
        "2023-12-27 11:25:36 | ERROR | stderr | ValueError: x",
        "2025-04-29 22:14:28.456 | ERROR    | app.main:run:42 - ValueError: x",
    ):
        match = READING.prefix.match(line)
        assert match and line[match.end() :] == "ValueError: x"


def test_a_short_message_s_comment_says_why_it_is_named_all_the_same():
    result = _fit("ee3b791d8cedce58", "generic", "generic", "AssertionError")
    quote = "expected running sequences"
    finding = triage_module.Finding(result, quote, None, "https://x/e/", True)
    reason = comment.why(finding)
    assert "raised as its own `AssertionError`" in reason
    assert "may not be this one" not in reason


def test_a_wrapper_named_alone_says_its_traceback_was_cut():
    result = _fit("fcffffc99b2615a1", "partial", "prefix", "ERROR")
    result.wrapper = True
    quote = "Scheduler hit an exception:"
    finding = triage_module.Finding(result, quote, None, "https://x/e/", False, cut=True)
    assert "which this issue does not show" in comment.why(finding)
    finding.cut = False
    assert "which this issue does not show" not in comment.why(finding)


def test_why_quotes_only_the_part_of_a_title_the_message_fits():
    """A title's own words before the message ("T4 fails: ...") are not quoted as the page's
    message; a text whose start is cut, or a message opening with a value, is quoted whole."""
    from errorkb.triage.comment import matched_part

    message = "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. {x}"
    title = "T4 fails: Bfloat16 is only supported on GPUs with compute capability of at least 8.0"
    assert matched_part(title, message) == title[len("T4 fails: ") :]
    assert matched_part("only supported on GPUs with compute", message) == (
        "only supported on GPUs with compute"
    )
    assert matched_part("x: 12 is bad", "{n} is bad") == "x: 12 is bad"
    assert matched_part(title, None) == title


def test_a_title_named_as_the_message_without_its_values_says_so():
    """vllm#28997: search ranks such a title "similar" (its values are gone); the comment says
    what was matched, not "matches shares rare words"."""
    result = _fit("233261ebde35a4e0", "similar", "similar", "AssertionError")
    quote = "local_world_size must be less than or equal to the number of visible devices"
    reason = comment.why(triage_module.Finding(result, quote, None, "https://x/e/", True))
    assert "is the page's message without its values" in reason
    assert "shares rare words" not in reason

"""Whole messages (issue 42, item 2): however the code builds a message, the template is the
whole of what the program prints. Each case runs the code it scans and checks the template
against the printed message, formatted with the values the case passes."""

import re
import textwrap

import pytest

from errorkb.content import template
from errorkb.sources import extract as ex


def sites(code: str) -> list[ex.Site]:
    code = textwrap.dedent(code)
    return ex.scan_file("demo.py", code.encode(), asserts=True).sites


def printed(code: str, call: str) -> str:
    """What the program prints: the message of the exception the call raises."""
    scope: dict = {}
    exec(textwrap.dedent(code), scope)  # the test's own code, never a scanned project's
    try:
        exec(call, scope)
    except Exception as exc:  # noqa: BLE001 - any exception the case raises
        return str(exc)
    raise AssertionError(f"{call} raised nothing")


def fits(site: ex.Site, message: str) -> bool:
    """Whether the printed message is the template with some values in its holes."""
    pieces = [
        "(.*?)" if isinstance(seg, template.Hole) else re.escape(seg)
        for seg in template.parse(site.template)
    ]
    return re.fullmatch("".join(pieces), message, re.S) is not None


CASES = [
    # (code, call, how many sites)
    (
        """
        def check(cap):
            raise RuntimeError(
                "Quantization scheme is not supported for ",
                f"the current GPU. Min capability: {cap}. ",
                f"Current capability: {cap - 5}.",
            )
        """,
        "check(80)",
    ),
    (
        """
        def check(rank, most):
            msg = f"LoRA rank {rank} is greater than "
            msg += f"max_lora_rank {most}."
            if rank > 512:
                msg += " Ranks over 512 are not supported."
            raise ValueError(msg)
        """,
        "check(600, 64)",
    ),
    (
        """
        def check(rank, most):
            if rank > most:
                msg = "LoRA rank %d is greater than max_lora_rank %d." % (rank, most)
            else:
                msg = "LoRA rank {} is not a power of two.".format(rank)
            raise ValueError(msg)
        """,
        "check(600, 64)",
    ),
    (
        """
        def check(name, shape):
            msg = "Weight {name} has shape {shape}, "
            msg += "which the kernel does not support."
            if shape:
                msg = "Note: " + msg
            raise ValueError(msg.format(name=name, shape=shape))
        """,
        "check('w', (1, 2))",
    ),
    (
        """
        def check(a, b):
            raise ValueError(" ".join(["Cannot combine", f"{a} with {b}.", "Choose one."]))
        """,
        "check('x', 'y')",
    ),
    (
        """
        def check(missing):
            msg = "Missing weights:"
            for name in missing:
                msg += f" {name},"
            msg += " in the checkpoint."
            raise KeyError(msg)
        """,
        "check(['a'])",
    ),
    (
        """
        class ConfigError(ValueError):
            pass

        def check(x):
            raise ConfigError("Bad value ", x)
        """,
        "check('q')",
    ),
    (
        """
        def check(x):
            assert x > 1, ("x must be over 1, ", f"got {x}")
        """,
        "check(0)",
    ),
]


@pytest.mark.parametrize("code, call", CASES)
def test_the_template_is_the_whole_printed_message(code, call):
    found = sites(code)
    message = printed(code, call).strip("'") if "KeyError" in code else printed(code, call)
    assert found, "no site"
    assert any(fits(site, message) for site in found), (message, [s.template for s in found])
    assert not any(site.cut for site in found)


def test_a_tuple_template_is_the_tuple_python_prints():
    (site,) = sites(CASES[0][0])
    assert site.template == (
        "('Quantization scheme is not supported for ', 'the current GPU. Min capability: "
        "{cap}. ', 'Current capability: {cap_minus_value}.')"
    )
    # Before SCAN_FORMAT 6 it was read as the first argument alone: its former template.
    assert site.former == "Quantization scheme is not supported for "


def test_each_way_through_the_branches_is_a_site():
    found = sites(CASES[1][0])
    assert sorted(s.template for s in found) == [
        "LoRA rank {rank} is greater than max_lora_rank {most}.",
        "LoRA rank {rank} is greater than max_lora_rank {most}. Ranks over 512 are not supported.",
    ]


def test_a_message_that_does_not_change_has_no_former_template():
    (site,) = sites(
        """
        def check(n):
            raise ValueError(f"{n} is not divisible by 8")
        """
    )
    assert site.former == "" and not site.cut


def test_more_arguments_to_an_unknown_exception_mark_the_template_cut():
    (site,) = sites(
        """
        from somewhere import ApiError

        def check(code):
            raise ApiError("The request failed", code)
        """
    )
    assert site.template == "The request failed" and site.cut


def test_a_message_the_code_does_not_show_is_still_skipped():
    code = """
        def check(make):
            msg = make()
            if make:
                msg = make(1)
            raise ValueError(msg)
        """
    assert sites(code) == []


def test_reading_a_variable_has_a_budget():
    # A function of many statements that rebind the message: read up to the budget, no more.
    body = "".join(f"    msg = 'step {i}'\n    msg += '.'\n" for i in range(1_500))
    tail = "    if msg:\n        msg += 'x'\n    raise ValueError(msg)\n"
    code = f"def check():\n    msg = ''\n{body}{tail}"
    assert ex.scan_file("demo.py", code.encode()).sites == []


# Records keep their identity ----------------------------------------------------------

CUT_RECORD = """\
# yaml-language-server: $schema=../../../generator/error.schema.json
id: {rid}
project: demo
exception: RuntimeError
message: "Quantization scheme is not supported for "
meaning: |
  Prose a person wrote, which must stay **as it is**.
source:
  path: demo/quant.py
  line: 3
"""

QUANT = """
def check(cap, current):
    if current < cap:
        raise RuntimeError(
            "Quantization scheme is not supported for ",
            f"the current GPU. Min capability: {cap}. ",
            f"Current capability: {current}.",
        )
"""


def test_a_record_whose_template_is_read_whole_keeps_its_id_and_prose(kb):
    """The record of a template read cut short before (SCAN_FORMAT 5) is the check's record
    still: its message is rewritten whole, its id and prose kept, no new record made."""
    import yaml

    from errorkb.content.load import load_content
    from errorkb.sources import chronicle, lineage
    from errorkb.sources.scaffold import new_id

    old = "Quantization scheme is not supported for "
    rid = new_id("demo", "RuntimeError", old)
    path = kb / "content" / "errors" / "demo" / f"{rid}.yaml"
    path.write_text(CUT_RECORD.format(rid=rid))
    scanned = ex.scan_file("demo/quant.py", QUANT.encode()).sites
    found = lineage.build([("1.0", scanned), ("2.0", scanned)])
    done = chronicle.write(kb, load_content(kb), "demo", found)
    data = yaml.safe_load(path.read_text())
    assert data["message"] == scanned[0].template and data["message"].startswith("('Quant")
    assert "Prose a person wrote, which must stay **as it is**." in path.read_text()
    assert data.get("status", "active") == "active" and "message_cut" not in data
    assert rid in done.updated and not done.created
    assert set(data["params"]) == {"cap", "current"}
    # A second run changes nothing: the record holds the whole template now.
    again = chronicle.write(kb, load_content(kb), "demo", found)
    assert rid in again.unchanged and not again.created


def test_a_cut_template_is_marked_on_its_record_and_never_exact(kb):
    from errorkb.content.load import load_content
    from errorkb.search import engine
    from errorkb.search import index as search_index
    from errorkb.sources import chronicle, lineage

    code = """
from somewhere import ApiError

def check(code):
    raise ApiError("The request to the model server failed with code", code)
"""
    scanned = ex.scan_file("demo/api.py", code.encode()).sites
    found = lineage.build([("1.0", scanned)])
    done = chronicle.write(kb, load_content(kb), "demo", found)
    (rid,) = done.created
    content = load_content(kb)
    assert content.records[rid].message_cut
    (entry,) = [e for e in search_index.entries(content) if e.record == rid]
    assert entry.document()["cut"] is True
    paste = "ApiError: ('The request to the model server failed with code', 503)"

    def tier() -> str:
        (found,) = [r for r in engine.search(search_index.open_index(kb), paste) if r.id == rid]
        return found.match

    assert tier() == "partial"  # the paste goes on past the cut template: never exact
    path = kb / content.records[rid].path
    path.write_text(path.read_text().replace("message_cut: true\n", ""))
    assert tier() == "exact"  # the same fit, were the template whole


def test_a_message_built_in_a_try_has_the_handler_s_way_too():
    code = """
        def load(flag):
            msg = "Using the fast kernel."
            try:
                if flag:
                    raise ImportError("none")
                msg += " Compiled with dynamo."
            except ImportError as err:
                msg += f" Could not compile ({err}): slower."
            raise RuntimeError(msg)
        """
    found = sites(code)
    for flag in (False, True):
        message = printed(code, f"load({flag})")
        assert any(fits(site, message) for site in found), (message, found)


def test_a_joined_list_appended_to_is_not_read_as_its_first_items():
    code = """
        def find(roots):
            searched = ["hgcc on PATH"]
            for root in roots:
                searched.append(root)
            raise RuntimeError("hgcc was not found. Searched: " + ", ".join(searched))
        """
    (site,) = sites(code)
    assert fits(site, printed(code, "find(['/opt', '/usr'])"))
    assert site.template == "hgcc was not found. Searched: {searched}"


def test_keyword_arguments_an_exception_may_print_mark_the_template_cut():
    found = sites(
        """
        from errors import ValidationError
        from fastapi import HTTPException

        def check(n):
            if n < 0:
                raise ValidationError(f"n={n} must not be negative.", parameter="n", value=n)
            if n > 9:
                raise HTTPException(status_code=400, detail=f"n={n} is over 9.")
            raise ImportError(f"n={n} is odd", name="n")
        """
    )
    assert [(s.template, s.cut) for s in found] == [
        ("n={n} must not be negative.", True),
        ("n={n} is over 9.", False),  # the client reads the detail alone
        ("n={n} is odd", False),  # a builtin exception prints its message alone
    ]


def test_a_variable_the_code_does_not_show_along_one_way_stays_a_placeholder():
    code = """
        def load(weights, params):
            for name in weights:
                if name == "lm_head.weight":
                    name = "model.embed_tokens.weight"
                if name not in params:
                    raise ValueError(f"Unexpected weight: {name}")
        """
    (site,) = sites(code)
    assert site.template == "Unexpected weight: {name}" and site.former == ""

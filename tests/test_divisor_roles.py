"""Every divisibility page of both wings (issue 44 item 2): a divisor the model fixes is
never offered as the thing to change, neither by the answer (the page's divisor section,
the terminal, the JSON) nor by the derived What to try; a divisor the user sets is named by
its option as the release's parser spells it; no test of the condition says to set a divisor
the role says the model fixes (two answers on one page that disagree)."""

import re

from errorkb.answer import answer, placeholder
from errorkb.site import api


def test_no_divisibility_page_offers_a_fixed_divisor_or_contradicts_its_tests(real_content):
    checked, problems = 0, []
    for record in real_content.records.values():
        div = (record.derived or {}).get("divisibility")
        if not div:
            continue
        checked += 1
        derived = api.derived_document(record)
        role = derived["divisor"]
        names = set(record.params)
        value = placeholder(div.get("value_param") or div["value"], names)
        divisor = placeholder(div.get("divisor_param") or div["divisor"], names)
        said = answer(
            {**record.data, "computed": {"derived": derived}}, {value: "100", divisor: "3"}
        )
        text = " ".join((said or {}).get("lines", []))
        named = re.escape(div["divisor"])
        if role["fixed"]:
            if re.search(rf"Change {named}\b|Valid values of {named}\b", text):
                problems.append((record.id, "offers the fixed divisor", text))
            tries = api.divisor_try(record, role) if record.derived.get("try") else []
            problems += [(record.id, "What to try offers it", t) for t in tries if "Choose a" in t]
            for t in (t for group in derived.get("tests", []) for t in group):
                sets = "right" in (t.get("set") or {})
                if t["op"] == "%" and sets and t.get("right") in (divisor, div["divisor"]):
                    problems.append((record.id, "a test sets the fixed divisor", str(t)))
        elif said and said.get("change") and role["setting"].startswith("-"):
            named_option = role["setting"] in said["change"]
            problems += [] if named_option else [(record.id, "the option is not named", text)]
    assert checked > 800
    assert problems == []

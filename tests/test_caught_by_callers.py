"""Issue 40 (writers' reports): a raise whose every caller catches it never reaches the user
(8ecba2469083f2bf: verify_marlin_supports_shape's ValueError, caught by its only caller
check_marlin_supports_shape, which returns a bool). Made-up trees shaped like the release's
code, and look-alikes that must stay as they are."""

from pathlib import Path

from errorkb.sources import explain
from errorkb.sources import extract as ex

VERIFY = (
    "class ShapeError(ValueError):\n"
    "    pass\n"
    "\n"
    "def verify_shape(n, k):\n"
    "    if n % k != 0:\n"
    "        raise ValueError(f'n = {n} is not divisible by k = {k}')\n"
    "\n"
    "def verify_own(n):\n"
    "    if n < 0:\n"
    "        raise ShapeError(f'n = {n} is negative')\n"
)
CHECK = (
    "from .verify import verify_shape, verify_own\n"
    "\n"
    "def check_shape(n, k):\n"
    "    try:\n"
    "        verify_shape(n, k)\n"
    "    except ValueError as e:\n"
    "        return False, str(e)\n"
    "    return True, None\n"
    "\n"
    "def check_own(n):\n"
    "    try:\n"
    "        verify_own(n)\n"
    "    except (KeyError, Exception):\n"
    "        return False\n"
    "    return True\n"
    "\n"
    "def supports(n, k):\n"
    "    return check_shape(n, k)[0]\n"
)


def _scan(root: Path, files: dict[str, str]) -> dict[str, dict]:
    for path, code in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code, encoding="utf-8")
    known = explain.Knowledge()
    scan = ex.scan_tree(root, knowledge=lambda _files: known, printed=True, jobs=1)
    return {site.template: site.derived or {} for site in scan.sites}


def test_a_raise_every_caller_catches_does_not_reach_the_user(tmp_path):
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": CHECK})
    shape = found["n = {n} is not divisible by k = {k}"]
    assert shape["reaches"] is False
    assert "check_shape (check.py)" in shape["caught"]
    # the class's base (ValueError) read from the tree, caught by its base Exception
    assert found["n = {n} is negative"]["reaches"] is False


def test_a_caller_that_raises_again_lets_it_reach(tmp_path):
    check = CHECK.replace("return False, str(e)", "raise RuntimeError(f'bad shape: {e}')")
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": check})
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]


def test_one_caller_that_does_not_catch_lets_it_reach(tmp_path):
    other = "from .verify import verify_shape\n\ndef load(n):\n    verify_shape(n, 8)\n"
    files = {"pkg/verify.py": VERIFY, "pkg/check.py": CHECK, "pkg/load.py": other}
    found = _scan(tmp_path, files)
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]
    assert found["n = {n} is negative"]["reaches"] is False


def test_a_caller_that_passes_the_message_on_lets_it_reach(tmp_path):
    """The message goes on in a log line, a log of the traceback, an error response, or the
    returned tuple's item a caller reads (the run goes on, but the text reaches the user)."""
    shape = "n = {n} is not divisible by k = {k}"
    for handler in (
        "logger.warning('bad shape: %s', e); return False, None",
        "logger.exception('bad shape'); return False, None",
        "logger.warning('bad shape', exc_info=True); return False, None",
        "return self.create_error_response(e)",
        "tb = get_exception_traceback(); logger.error(tb); return False, None",
        "traceback.print_exc(); return False, None",
    ):
        check = CHECK.replace("return False, str(e)", handler)
        found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": check})
        assert "reaches" not in found[shape], handler
    reads = CHECK.replace("check_shape(n, k)[0]", "check_shape(n, k)[1]")
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": reads})
    assert "reaches" not in found[shape]
    unpacked = CHECK.replace("check_shape(n, k)[0]", "check_shape(n, k)")
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": unpacked})
    assert "reaches" not in found[shape]


def test_a_handler_of_another_class_or_a_name_passed_as_a_value_lets_it_reach(tmp_path):
    check = CHECK.replace("except ValueError as e:", "except KeyError as e:")
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": check})
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]
    passed = "from .verify import verify_shape\n\nCHECKS = [verify_shape]\n"
    files = {"pkg/verify.py": VERIFY, "pkg/check.py": CHECK, "pkg/table.py": passed}
    found = _scan(tmp_path, files)
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]


def test_a_try_around_a_definition_does_not_catch_its_calls(tmp_path):
    check = (
        "from .verify import verify_shape\n"
        "\n"
        "def outer():\n"
        "    try:\n"
        "        def later(n):\n"
        "            return verify_shape(n, 8)\n"
        "    except ValueError:\n"
        "        return None\n"
        "    return later\n"
    )
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY, "pkg/check.py": check})
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]


def test_a_function_nobody_calls_is_left_as_it_was(tmp_path):
    found = _scan(tmp_path, {"pkg/verify.py": VERIFY})
    assert "reaches" not in found["n = {n} is not divisible by k = {k}"]


def test_a_record_reaches_the_user_when_any_of_its_sites_does():
    caught = {"title": "t", "reaches": False, "caught": "Every call of f ..."}
    quiet = ex.Site("ValueError", "m", "a.py", 1, "f", derived=dict(caught))
    loud = ex.Site("ValueError", "m", "b.py", 2, "g", derived={"title": "t"})
    assert ex.derived([quiet], "v1")["reaches"] is False
    both = ex.derived([quiet, loud], "v1")
    assert "reaches" not in both and "caught" not in both and both["title"] == "t"


UNREACHED = """\
id: 00000000000000c7
project: demo
exception: ValueError
message: n = {n} is not divisible by k = {k}
source:
  path: pkg/verify.py
  function: verify_shape
derived:
  ref: v9.8.7
  title: n is not divisible by k
  condition: n % k != 0
  category: divisibility
  explanation: "`n` must be an exact multiple of `k`."
  reaches: false
  caught: >-
    Every call of verify_shape in this release is inside a try that catches ValueError and
    goes on without its message: check_shape (check.py).
"""


def test_the_page_says_it_does_not_reach_the_user(tmp_path):
    from errorkb.site.build import build
    from tests.conftest import make_kb

    kb = make_kb(tmp_path / "kb")
    (kb / "content/errors/demo/00000000000000c7.yaml").write_text(UNREACHED)
    build(kb)
    html = (kb / "site/errors/00000000000000c7/index.html").read_text()
    section = html[html.index('id="from-the-code"') :]
    assert "<dt>Reaches you<dd>no, in this release: Every call of verify_shape" in section

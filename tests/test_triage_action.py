"""The issue bot as the GitHub Action runs it: errorkb installed alone (action.yml's install
step, no dependency), then `errorkb triage --post` against a published site."""

import subprocess
import sys
import textwrap

BODY = "```\nValueError: Widget count (10) must be divisible by group size (3).\n```\n"

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
        input=BODY,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "00000000000000a1" in run.stdout

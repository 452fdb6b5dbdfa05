"""SGLang's wing: what its logs put before a message (so that a paste's noise is stripped and
its lines point at SGLang's records), what `extract` knows of its code (its settings and their
kinds, the stage each module runs in), and its parallel-size rules (calc.py, run by the build
and, under Pyodide, by the browser) in the calculator of its divisibility errors."""

from pathlib import Path

from errorkb.projects import protocol, pyodide
from errorkb.projects.sglang import calc
from errorkb.registry import Wing


class Sglang(Wing):
    key = "sglang"

    def log_prefixes(self):
        # SGLang's logger: [2025-01-02 10:11:12 DP1 TP0] or, in older releases, the time
        # alone: [14:26:31] and [14:26:31 TP0]
        return [r"\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?: (?:DP|PP|TP|EP)\d+)*\] ?"]

    def issue_titles(self):
        # .github/ISSUE_TEMPLATE: title "[Bug] ", "[Feature] " (no colon, unlike vLLM's)
        return r"\[(?:Bug|Feature)\] (?!:)"

    def wrappers(self):
        # The scheduler's and detokenizer's lines that carry the traceback of the real error
        return [r"^(?:Scheduler|DetokenizerManager|TokenizerManager) hit an exception"]

    def record_section(self, record, content):
        from errorkb.projects.sglang import tables

        return tables.record_section(record)

    def assets(self, content, assets):
        from errorkb.projects.sglang import tables

        module = {  # run as they are by Pyodide: the calculator and the protocol it imports
            tables.MODULE: Path(calc.__file__).read_bytes(),
            tables.PROTOCOL: Path(protocol.__file__).read_bytes(),
        }
        data = tables.calc_data(content, {**assets, **module})
        return {**module, tables.CALC_DATA: data, **archs_asset()}

    def architectures(self):
        from errorkb.projects.sglang import archs

        return archs.table()

    def architectures_note(self, table):
        name, n = table["held_as"][0], len(table["architectures"])
        return (
            f"{name} is taken as the {n} architectures SGLang {table['release']} registers "
            "(the EntryClass of each model file), read from its code. A model file that fails "
            'to import is left out, logged before as "Ignore import error when loading …", as '
            "is one SGLANG_DISABLED_MODEL_ARCHS names; the release you ran may register "
            "fewer, a plug-in package more."
        )

    def architectures_asset(self):
        from errorkb.projects.sglang import archs

        return archs.ASSET

    def vendored(self, root):
        return pyodide.vendored(root)

    def knowledge(self, files):
        from errorkb.projects.sglang import knowledge

        return knowledge.read(files)


WING = Sglang()


def archs_asset() -> dict[str, bytes]:
    """/assets/sglang-archs.json: the architectures SGLang registers (archs.json), which an
    error page whose Your case reads them fetches when the paste does not print them whole."""
    import json

    from errorkb.projects.sglang import archs

    table = archs.table()
    if not table:
        return {}
    return {archs.ASSET: json.dumps(table, separators=(",", ":")).encode()}

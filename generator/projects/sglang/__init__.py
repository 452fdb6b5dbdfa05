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
        return {**module, tables.CALC_DATA: tables.calc_data(content, {**assets, **module})}

    def vendored(self, root):
        return pyodide.vendored(root)

    def knowledge(self, files):
        from errorkb.projects.sglang import knowledge

        return knowledge.read(files)


WING = Sglang()

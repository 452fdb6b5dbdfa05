"""vLLM's wing: its parallel-size rules (calc.py, run by the build and, under Pyodide, by
the browser), the checks they make of records and example commands, model presets, the
calculator on record pages and at /calc/, and its `errorkb calc` command."""

import json
from pathlib import Path

from errorkb import urls
from errorkb.projects import protocol, pyodide
from errorkb.projects.vllm import calc, memory
from errorkb.registry import Wing

# The modules behind the hooks import YAML, the schema and Jinja: they load on first use,
# so that `errorkb match`, which asks only for log prefixes, stays quick.

# The calculator in the browser: the calculator modules served byte for byte (each pure
# standard library, run by the build and, under that name, by the browser's worker), with
# Pyodide's files (projects/pyodide.py). protocol.py is what every engine's calculator shares.
CALC_MODULES = (protocol, calc, memory)


class Vllm(Wing):
    key = "vllm"

    def load(self, files):
        from errorkb.projects.vllm import presets

        return presets.load(files)

    def describe(self, extra) -> str:
        return f"{len(extra or [])} models"

    def record_problems(self, record):
        from errorkb.projects.vllm import checks

        return checks.record_problems(record)

    def content_problems(self, content):
        from errorkb.projects.vllm import checks

        return checks.command_problems(content)

    def record_section(self, record, content):
        from errorkb.projects.vllm import tables

        return tables.record_calculator(record, content)

    def pages(self, pages):
        from errorkb.projects.vllm import tables

        yield urls.calc(), tables.calc_page(pages)

    def sitemap(self):
        return [urls.calc()]

    def nav(self):
        return [("Calculator", urls.calc())]

    def assets(self, content, assets):
        from errorkb.projects.vllm import tables

        modules = {Path(m.__file__).name: Path(m.__file__).read_bytes() for m in CALC_MODULES}
        data = tables.calc_data(content, {**assets, **modules}, list(modules))
        return {**modules, tables.CALC_DATA: data, **archs_asset()}

    def log_prefixes(self):
        # vLLM's logger: ERROR 11-01 09:43:08 [model.py:1560], in older releases without the
        # opening bracket (ERROR 05-07 05:58:46 core.py:291]); its processes' names:
        # (EngineCore_DP0 pid=1508), (APIServer pid=1), (VllmWorker TP1 pid=413)
        return [
            r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?"
            r" (?:\[[^\]\n]*\]|[\w.-]+:\d+\]) ?",
            r"\((?:EngineCore|APIServer|VllmWorker)[^()\n]*pid=\d+\) ?",
        ]

    def issue_titles(self):
        # .github/ISSUE_TEMPLATE: title "[Bug]: ", "[Usage]: ", "[Installation]: "...
        return (
            r"\[(?:Bug|Usage|Installation|Feature|Performance|Doc|Misc|New Model|RFC"
            r"|CI Failure)\]: "
        )

    def wrappers(self):
        # The engine core's and the workers' lines after the real error, in every release
        return [
            r"See root cause above",
            r"See stack trace (?:\(above\) )?for (?:the )?root cause",
            r"stack trace above for (?:the )?(?:root|actual) cause",
            r"^Worker failed with error",
            r"^EngineCore (?:failed to start|encountered an issue|encountered a fatal error"
            r"|hit an exception)",
            r"^WorkerProc (?:failed to start|hit an exception|initialization failed)",
            # multiproc_worker_utils (0.5-0.7): the worker's error after a colon, or after it
            r"^Exception in worker \S+ while processing method",
        ]

    def vendored(self, root):
        return pyodide.vendored(root)

    def architectures(self):
        from errorkb.projects.vllm import archs

        return archs.table()

    def architectures_note(self, table):
        name, n = table["held_as"][0], len(table["architectures"])
        return (
            f"{name} is taken as the {n} architectures vLLM {table['release']} registers, read "
            "from its code, and the names it loads as one of them with another ending (a "
            "...ForSequenceClassification as its ...ForCausalLM). It also tries the "
            "Transformers backend before this error; the release you ran may register fewer, "
            "a plug-in more."
        )

    def architectures_asset(self):
        from errorkb.projects.vllm import archs

        return archs.ASSET

    def figures(self, record):
        from errorkb.projects.vllm import memory

        found = memory.RECORDS.get(getattr(record, "id", "")) or {}
        return dict(found) if {"max_model_len", "needed", "available"} <= set(found) else None

    def knowledge(self, files):
        from errorkb.projects.vllm import knowledge

        return knowledge.read(files)

    def add_commands(self, commands):
        from errorkb.projects.vllm import cli

        cli.add_calc(commands)


WING = Vllm()


def archs_asset() -> dict[str, bytes]:
    """/assets/vllm-archs.json: the architectures vLLM registers (archs.json), which an error
    page whose Your case reads them fetches when the paste does not print them whole."""
    from errorkb.projects.vllm import archs

    table = archs.table()
    if not table:
        return {}
    return {archs.ASSET: json.dumps(table, separators=(",", ":")).encode()}

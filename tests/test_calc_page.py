"""The calculator at build time: static tables, the widget's markup and data, /calc/,
calc.py served byte for byte, and Pyodide's files copied from node_modules."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from errorkb import resources
from errorkb.cli import main as cli_main
from errorkb.content import successors
from errorkb.projects import pyodide
from errorkb.projects.vllm import calc, memory
from errorkb.projects.vllm import tables as pages
from errorkb.site.build import build
from errorkb.site.publish import BuildError

REPO = Path(__file__).resolve().parent.parent
SEED = "f644a7c8e4fdc46c"


class Tables(HTMLParser):
    """The calculator sections of a page: their widget attributes and table cells."""

    def __init__(self):
        super().__init__()
        self.widgets: list[dict] = []
        self.tables: list[dict] = []
        self.scripts: list[str] = []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and "data-calc" in attrs:
            self.widgets.append(attrs)
        elif tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        elif tag == "table" and self.widgets and not self.tables_done():
            self.tables.append({"caption": "", "rows": []})
        elif tag == "caption" and self.tables:
            self._cell = "caption"
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self.tables[-1]["rows"][-1].append("")
            self._cell = "cell"

    def handle_endtag(self, tag):
        if tag in ("table", "caption"):
            self._cell = None
        if tag == "div" and self.widgets:
            self._closed = len(self.widgets)

    def tables_done(self) -> bool:
        """Tables after a widget's </div> are not the widget's static tables."""
        return getattr(self, "_closed", 0) == len(self.widgets)

    def handle_data(self, data):
        if self._cell == "caption":
            self.tables[-1]["caption"] += data
        elif self._cell == "cell":
            self.tables[-1]["rows"][-1][-1] += data.strip()


def parse(path: Path) -> Tables:
    return parse_html(path.read_text(encoding="utf-8"))


def parse_html(html: str) -> Tables:
    parser = Tables()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def models(real_content) -> dict[str, dict]:
    """The model presets of content/models.yaml, by name."""
    return {m["name"]: m for m in real_content.extras["vllm"]}


def shape(model: dict) -> tuple[int, int, bool]:
    return model["heads"], model.get("kv_heads", model["heads"]), model.get("mla", False)


def table_models(cell: str, by_name: dict) -> list[dict]:
    """The models a row names, longest names first so "Llama 3.1 70B" is not "Llama 3.1 7"."""
    found = [by_name[name] for name in sorted(by_name, key=len, reverse=True) if name in cell]
    assert found, cell
    return found


# ---------------------------------------------------------------- error pages


def test_seed_page_has_a_static_tp_table_computed_by_calc(real_site, models):
    page = parse(real_site / f"errors/{SEED}/index.html")
    assert len(page.widgets) == 1
    widget = page.widgets[0]
    assert widget["data-calc"] == "tp_sizes"
    assert widget["data-inputs"] == "heads=total_num_attention_heads tp=tensor_parallel_size"
    assert re.fullmatch(r"/assets/calc\.json\?v=[0-9a-f]{10}", widget["data-src"])
    assert any(re.fullmatch(r"/assets/calc\.js\?v=[0-9a-f]{10}", s) for s in page.scripts)
    [table] = page.tables
    header, *rows = table["rows"]
    assert header == ["Models", "Heads", "KV heads", "Valid TP sizes"]
    by_name = models
    covered = set()
    for names, heads, kv, sizes in rows:
        for model in table_models(names, by_name):
            covered.add(model["name"])
            h, k, mla = shape(model)
            assert (int(heads), kv) == (h, f"{k} (MLA)" if mla else str(k))
            assert sizes == ", ".join(map(_marked, calc.valid_tp_sizes(h, k, mla=mla)))
    assert covered == set(by_name), "every model of models.yaml is in the table"
    qwen = next(r for r in rows if "Qwen2.5 32B" in r[0])
    assert "Qwen3 14B" in qwen[0]
    assert qwen[1:] == ["40", "8", "1, 2, 4, 8, 40*"]
    assert "* more than one 8-GPU node: start it with --nnodes" in table["caption"]


def _marked(tp: int) -> str:
    """A TP size as the tables show it: marked * above one 8-GPU node."""
    return f"{tp}*" if tp > 8 else str(tp)


def test_dcp_and_moriio_tables_are_computed_by_calc(real_site, models):
    by_name = models
    dcp_page = parse(real_site / "errors/d97d5d8528e2b364/index.html")
    [table] = dcp_page.tables
    header, *rows = table["rows"]
    assert header[3:] == [f"TP {_marked(tp)}" for tp in pages.DCP_TABLE_TP]
    assert header[-1] == "TP 16*"
    for row in rows:
        for model in table_models(row[0], by_name):
            heads, kv, mla = shape(model)
            valid_tp = calc.valid_tp_sizes(heads, kv, mla=mla)
            for tp, cell in zip(pages.DCP_TABLE_TP, row[3:], strict=True):
                want = calc.valid_dcp_sizes(heads, kv, tp, mla) if tp in valid_tp else None
                assert cell == ("–" if want is None else ", ".join(map(str, want)))

    moriio_page = parse(real_site / "errors/3816d2388527979a/index.html")
    assert moriio_page.widgets[0]["data-calc"] == "moriio"
    [table] = moriio_page.tables
    header, *rows = table["rows"]
    assert header == ["Models", "KV heads", "READ", "WRITE"]
    llama = next(r for r in rows if "Llama 3.1 8B" in r[0])
    assert llama[1:] == ["8", "8↔16", "all"]
    for row in rows:
        model = table_models(row[0], by_name)[0]
        _, kv, mla = shape(model)
        for mode, cell in zip(("read", "write"), row[2:], strict=True):
            if cell in ("all", "none"):
                ok = cell == "all"
                for p in pages.MORIIO_TABLE_TP:
                    for d in pages.MORIIO_TABLE_TP:
                        if p != d:
                            assert (calc.moriio_first_error(p, d, kv, mode, mla) is None) == ok
                continue
            for pair in cell.split(", "):
                a, b = map(int, re.split("[↔→]", pair))
                assert calc.moriio_first_error(a, b, kv, mode, mla) is None
                if "↔" in pair:
                    assert calc.moriio_first_error(b, a, kv, mode, mla) is None


def test_every_record_with_a_calculator_has_the_section_and_others_have_none(
    real_site, real_content
):
    for rid, record in real_content.records.items():
        if record.project == "sglang":
            continue  # SGLang's wing draws its own from the code (tests/test_sglang_wing.py)
        html = (real_site / f"errors/{rid}/index.html").read_text(encoding="utf-8")
        # An old wording's page answers with the check printed today: its calculator too.
        shown = successors.live_successor(real_content, record) or record
        spec = shown.data.get("calculator")
        if not spec and "data-calc" not in html and "/assets/calc.js" not in html:
            continue  # no widget and no script, without parsing 14,000 pages (28 s)
        page = parse_html(html)
        assert len(page.widgets) == (1 if spec else 0), rid
        assert any("/assets/calc.js" in s for s in page.scripts) == bool(spec), rid
        if spec:
            assert page.widgets[0]["data-calc"] == spec["name"]
            mapped = dict(p.split("=") for p in page.widgets[0].get("data-inputs", "").split())
            assert mapped == spec.get("inputs", {})
            assert page.tables, rid


def test_no_inline_scripts_or_styles_on_calculator_pages(real_site):
    for url in (f"errors/{SEED}/index.html", "calc/index.html"):
        html = (real_site / url).read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), url
        assert " style=" not in html and "<style" not in html, url


def test_fixture_record_maps_its_own_placeholders(fixture_site):
    page = parse(fixture_site / "errors/00000000000000d4/index.html")
    assert page.widgets[0]["data-inputs"] == "heads=heads tp=size"
    header, row = page.tables[0]["rows"]
    assert row == ["Tiny", "8", "2", "1, 2, 4, 8"]


def test_calc_json_advises_sizes_that_fit_one_node(fixture_site):
    """ "Your case" without Pyodide reads calc.py's advice from calc.json: for 52 heads the
    largest TP size on one 8-GPU node (4, with PP 2), never 13."""
    data = json.loads((fixture_site / "assets/calc.json").read_text())
    assert data["advice_gpus"] == 8
    assert data["tp_advice"]["52"] == [4, 2]
    for key, (tp, pp) in data["tp_advice"].items():
        assert tp in data["tp_table"][key] and tp * pp <= 8, key


# ---------------------------------------------------------------- served files


def test_calc_module_is_served_byte_identical(real_site):
    module = REPO / "generator/projects/vllm/calc.py"
    assert (real_site / "assets/calc.py").read_bytes() == module.read_bytes()


def test_pyodide_core_files_are_copied_byte_identical(real_site):
    source = REPO / "node_modules" / "pyodide"
    lock = json.loads((REPO / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/pyodide"]["version"] == "314.0.7"
    assert json.loads((source / "package.json").read_text())["version"] == "314.0.7"
    for name in pyodide.FILES:
        assert (real_site / "pyodide" / name).read_bytes() == (source / name).read_bytes(), name
    assert sorted(p.name for p in (real_site / "pyodide").iterdir()) == sorted(pyodide.FILES)


def test_calc_json_points_at_fingerprinted_files_that_exist(real_site, models):
    data = json.loads((real_site / "assets/calc.json").read_text())
    for url, name in ((data["worker"], "calc-worker.js"), (data["modules"]["calc"], "calc.py")):
        path, _, version = url.partition("?v=")
        assert path == f"/assets/{name}" and re.fullmatch("[0-9a-f]{10}", version)
        assert (real_site / path.lstrip("/")).exists()
    assert data["calculators"]["tp_sizes"] == ["summary", list(calc.CALCULATORS["tp_sizes"][1])]
    assert set(data["calculators"]["parallel"][1]) == {
        name for op, names in calc.CALCULATORS.values() if op == "summary" for name in names
    }
    assert data["records"][SEED] == "Attention heads not divisible by tensor parallel size"
    assert set(data["records"]) <= set(calc.MESSAGES) | set(memory.RECORDS)
    assert set(memory.RECORDS) <= set(data["records"])  # the memory estimate links them
    for rid in data["records"]:
        assert (real_site / f"errors/{rid}/index.html").exists()
    assert {m["name"] for m in data["models"]} == set(models)


def test_worker_imports_pyodide_from_the_site(real_site):
    worker = (real_site / "assets/calc-worker.js").read_text()
    assert json.loads((real_site / "assets/calc.json").read_text())["pyodide"] == "/pyodide/"
    assert "pyodideUrl}pyodide.mjs" in worker
    assert "wasm-unsafe-eval" in worker  # the clear message under a strict CSP
    for script in ("calc.js", "calc-ask.js", "calc-worker.js"):
        text = (real_site / "assets" / script).read_text()
        assert "https://" not in text and "cdn" not in text.lower(), script


# ---------------------------------------------------------------- /calc/


def test_calc_page_has_both_widgets_and_is_linked(real_site, real_content):
    page = parse(real_site / "calc/index.html")
    assert [w["data-calc"] for w in page.widgets] == ["parallel", "moriio"]
    assert all("data-sync" in w for w in page.widgets)
    captions = [t["caption"] for t in page.tables]
    assert len(captions) == 3 and "Tensor parallel" in captions[0]
    base = real_content.site["base_url"].rstrip("/")
    assert f"{base}/calc/" in (real_site / "sitemap.xml").read_text()
    home = (real_site / "index.html").read_text()
    assert 'href="/calc/"' in home.split("</header>")[0]


# ---------------------------------------------------------------- build without Pyodide


def test_build_without_pyodide_says_run_fetch_pyodide(kb, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(resources, "checkout_node_modules", lambda: tmp_path / "nowhere")
    monkeypatch.setenv("ERRORKB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(BuildError, match="run `errorkb fetch-pyodide`"):
        build(kb)
    assert not (kb / "site").exists() and not list(kb.glob(".site-*"))
    assert cli_main(["--root", str(kb), "build"]) == 1
    err = capsys.readouterr().err
    version = pyodide.pinned()[0]
    assert f"Pyodide {version} (the calculator's Python in the browser) is missing" in err
    assert f"{tmp_path}/cache/pyodide/{version}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("value", "divisor", "shown", "rows"),
    [
        ("total_num_heads", "tp_size", True, True),  # a head count: the common ones
        ("hidden_size", "world_size", True, False),  # its own values only, from the address
        ("hidden_size", "2 * self.world_size", False, False),  # 5dc640fb683a96e8
    ],
)
def test_divisor_table_only_for_head_counts(value, divisor, shown, rows):
    from types import SimpleNamespace

    record = SimpleNamespace(
        derived={"divisibility": {"value": value, "divisor": divisor}}, params={}
    )
    content = SimpleNamespace(extras={"vllm": [{"heads": 52, "kv_heads": 4}]})
    section = pages.divisor_calculator(record, content)
    assert (section is not None) == shown
    assert bool(section and section["rows"]) == rows
    if rows:
        assert [52, "1, 2, 4, 13, 26, 52"] in section["rows"]

"""A catalogue of bad inputs, as careless writers and attackers make them.

Each case in tests/fixtures/bad/<case>/ holds files laid over the fixture knowledge base
(paths from its root), optional `links.txt` (`link -> target` per line: symbolic links,
which git and tools walking the repository should not meet as real ones) and `remove.txt`
(files to delete), and `expected.txt`: the exact problem lines `errorkb check` prints.
"""

import io
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
import yaml

from errorkb import cli
from errorkb.content.load import load_content, load_schema, parse_yaml, path_problem
from errorkb.content.model import ContentError
from errorkb.site.build import build
from errorkb.sources import extract as ex
from tests.conftest import make_kb

BAD = Path(__file__).parent / "fixtures" / "bad"
CASES = sorted(p.name for p in BAD.iterdir() if p.is_dir())
SPECS = {"expected.txt", "links.txt", "remove.txt"}


def apply_case(case: str, root: Path) -> list[str]:
    """Lay a case over the knowledge base at root; return its expected problem lines."""
    folder = BAD / case
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and str(rel) not in SPECS:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / rel)
    for line in _lines(folder / "remove.txt"):
        (root / line).unlink()
    for line in _lines(folder / "links.txt"):
        link, target = line.split(" -> ")
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / link)
    return _lines(folder / "expected.txt")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def problems_of(root: Path) -> list[str]:
    with pytest.raises(ContentError) as caught:
        load_content(root)
    return [str(p) for p in caught.value.problems]


def snapshot(folder: Path) -> dict:
    """Every entry of a folder with what a write would change: inode, size, mtime."""
    found = {}
    for path in [folder, *folder.rglob("*")]:
        st = path.lstat()
        found[str(path.relative_to(folder))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def test_the_catalogue_is_big_enough():
    assert len(CASES) >= 40
    for case in CASES:
        assert (BAD / case / "expected.txt").is_file(), case


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_on_its_line(case, fixture_site, tmp_path):
    root = make_kb(tmp_path / "kb")
    # Hard links: a copy in no time, and a build writing into the site shows in any of them.
    shutil.copytree(fixture_site, root / "site", symlinks=True, copy_function=os.link)
    before = snapshot(root / "site")
    expected = apply_case(case, root)
    assert problems_of(root) == expected
    with pytest.raises(ContentError):
        build(root)
    assert snapshot(root / "site") == before


# Bombs and floods: answered in well under a second, without reading them whole ------------

RECORD = "content/errors/demo/00000000000000e1.yaml"
HEAD = "id: 00000000000000e1\nproject: demo\nexception: ValueError\nmessage: boom\n"


def alias_bomb() -> str:
    """Ten levels of nine aliases: 9**10 strings once expanded, in 650 bytes."""
    lines = [HEAD.rstrip("\n"), 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines + ["meaning: *a9"]) + "\n"


def test_an_alias_bomb_is_refused_at_once(kb):
    (kb / RECORD).write_text(alias_bomb())
    start = time.perf_counter()
    lines = problems_of(kb)
    assert time.perf_counter() - start < 1
    assert lines == [f"{RECORD}:5: E116 (file): anchor &a0: " + lines[0].split(": anchor &a0: ")[1]]


ANCHORS = [
    "k: !!str &a x\n",
    "- &a x\n",
    "? &a x\n: 1\n",
    "[&a x, *a]\n",
    "{&a x: 1}\n",
    '{"k":*a}\n',
    "---\n&a x\n",
    "\ufeff&a x\n",
    "&a\nk: v\n",
    "k:\t&a x\n",
    "k: [x,&a y]\n",
    "k: {a: 1,*b : 2}\n",
    "'k': &a v\n",
]
NOT_ANCHORS = ["k: |\n  &a in a block\n", "k: a&b *c\n", 'k: "*a"\n', "k: '&a'\n", "k: R&D\n"]


@pytest.mark.parametrize("text", ANCHORS + NOT_ANCHORS)
def test_anchors_are_found_wherever_yaml_allows_them(text):
    """The quick text test that spares most files the event scan never misses an anchor."""
    problems = []
    parse_yaml(text, "x.yaml", problems)
    assert [p.code for p in problems] == (["E116"] if text in ANCHORS else [])


def test_a_50_mb_record_is_refused_without_reading_it(kb):
    with open(kb / RECORD, "w") as file:
        file.write(HEAD + "source: {path: demo/x.py}\nmeaning: |\n")
        file.write(("  " + "x" * 98 + "\n") * (50 * 1024 * 1024 // 100))
    tracemalloc.start()
    start = time.perf_counter()
    lines = problems_of(kb)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 1
    assert peak < 5 * 1024 * 1024  # the file was never read into memory
    assert len(lines) == 1 and lines[0].startswith(f"{RECORD}:1: E117 (file): 52,")
    assert "over the limit of 256 KB per file" in lines[0]


def test_the_size_limit_is_set_in_site_yaml(kb):
    (kb / RECORD).write_text(HEAD + "source: {path: demo/x.py}\nmeaning: |\n" + "  frob\n" * 50000)
    assert "E117" in problems_of(kb)[0]
    site = kb / "content/site.yaml"
    site.write_text(site.read_text() + "max_file_kb: 1024\n")
    assert load_content(kb).records["00000000000000e1"].data["meaning"].startswith("frob\n")


def test_the_cli_answers_bombs_at_once(kb):
    (kb / RECORD).write_text(alias_bomb())
    big = kb / "content/errors/demo/00000000000000e2.yaml"
    with open(big, "wb") as file:
        file.truncate(50 * 1024 * 1024)  # 50 MB of NUL bytes
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.perf_counter() - start < 5  # interpreter start included
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in lines[:-1]] == ["E116 (file)", "E117 (file)"]
    assert lines[-1] == "2 problem(s) found; nothing was written"


# Files in content/ that cannot be used ---------------------------------------------


def test_a_pipe_in_content_is_reported_not_opened(kb):
    os.mkfifo(kb / RECORD)
    os.mkfifo(kb / "content/models.yaml.new")  # a stray pipe beside the top-level files
    (kb / "content/models.yaml").unlink()
    os.mkfifo(kb / "content/models.yaml")
    signal.alarm(10)  # opening a pipe for reading would block forever
    try:
        lines = problems_of(kb)
    finally:
        signal.alarm(0)
    assert lines == [
        f"{RECORD}:1: E119 (file): is not a regular file (a pipe, socket or device); remove it",
        "content/models.yaml:1: E119 (file): is not a regular file (a pipe, socket or device); "
        "remove it",
    ]


def test_links_within_content_are_followed(kb):
    shared = kb / "content/shared"
    shared.mkdir()
    a1 = kb / "content/errors/demo/00000000000000a1.yaml"
    a1.rename(shared / a1.name)
    os.symlink("../../shared/00000000000000a1.yaml", a1)
    assert load_content(kb).records["00000000000000a1"].path == str(a1.relative_to(kb))


def test_editor_swap_and_backup_files_are_ignored(kb):
    folder = kb / "content/errors/demo"
    (folder / ".00000000000000a1.yaml.swp").write_bytes(b"b0VIM 9.0\0\xff")
    (folder / "00000000000000a1.yaml~").write_text("id: [broken\n")
    (kb / "content/guides/.#grouping.md").write_text("lock")
    assert len(load_content(kb).records) == 4


def test_guides_in_crlf_with_a_bom_load(kb):
    guide = kb / "content/guides/grouping.md"
    text = guide.read_text()
    guide.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    (loaded,) = load_content(kb).guides
    assert loaded.title == "Grouping widgets" and "\r" not in loaded.body


# Paths: one rule, in the schema (for editors) and in Python (for the message) -----------

PATHS = {
    "vllm/config/model.py": True,
    "setup.py": True,
    "a b/ünïcode.py": True,
    "...": True,
    "..hidden/x.py": True,
    "x~/y.py": True,
    "../x.py": False,
    "a/../../x.py": False,
    "..": False,
    "/etc/passwd": False,
    "//server/share/x.py": False,
    "a\\b.py": False,
    "..\\..\\x.py": False,
    "C:/x.py": False,
    "c:x.py": False,
    "a//b.py": False,
    "a/": False,
    "./a.py": False,
    "a/./b.py": False,
    ".": False,
    "~/x.py": False,
    "a/~root/x.py": False,
    "a\0b.py": False,
    "a.py\n": False,
    "a\tb.py": False,
    "a\x1b[31m.py": False,
    "a\x7f.py": False,
}


@pytest.mark.parametrize("path", PATHS)
def test_the_schema_pattern_and_the_checker_agree_on_paths(path):
    pattern = re.compile(load_schema()["$defs"]["path"]["pattern"])
    assert bool(pattern.search(path)) is PATHS[path]
    assert (path_problem(path) is None) is PATHS[path]


# Archives: extract refuses a source with an unsafe member name -------------------------

GOOD = b"def f(n):\n    raise ValueError(f'bad value {n}')\n"


def make_zip(path: Path, members: dict[str, bytes], links: dict[str, str] = {}) -> Path:  # noqa: B006
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def make_tar(path: Path, members: dict[str, bytes], links: dict[str, tuple] = {}) -> Path:  # noqa: B006
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, (kind, target) in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            archive.addfile(info)
    return path


UNSAFE_NAMES = [
    "../../../../tmp/PWNED/evil.py",
    "/tmp/PWNED/evil.py",
    "demo\\..\\..\\evil.py",
    "demo/../../evil.py",
    "C:/Windows/evil.py",
    "demo/\x1b[2Jevil.py",
]


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_a_wheel_with_an_unsafe_name_is_refused(tmp_path, name):
    wheel = make_zip(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/ok.py": GOOD, name: GOOD})
    with pytest.raises(ex.SourceError, match="refusing the whole source") as caught:
        ex.scan_tree(wheel)
    assert repr(name) in str(caught.value)


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_an_sdist_with_an_unsafe_name_is_refused(tmp_path, name):
    sdist = make_tar(tmp_path / "demo-1.0.tar.gz", {"demo-1.0/demo/ok.py": GOOD, name: GOOD})
    with pytest.raises(ex.SourceError, match="refusing the whole source") as caught:
        ex.scan_tree(sdist)
    assert repr(name) in str(caught.value)


def test_a_long_member_name_skips_that_file_only(tmp_path):
    # SGLang's wheels hold tuning files named after the GPU (122 characters): never read,
    # they must not refuse the wheel; a .py of such a name is skipped, as no record can name it
    long = "E=161,N=192,device_name=" + "x" * 100
    wheel = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {"demo/ok.py": GOOD, f"demo/configs/{long}.json": b"{}", f"demo/{long}.py": GOOD},
    )
    scan = ex.scan_tree(wheel, progress=False)
    assert [site.path for site in scan.sites] == ["demo/ok.py"]
    assert refused(scan) == [f"skipped demo/{long}.py: it has a name of 127 characters"]


@pytest.mark.parametrize(
    "link",
    [
        (tarfile.SYMTYPE, "../../../etc/passwd"),
        (tarfile.SYMTYPE, "/etc/passwd"),
        (tarfile.LNKTYPE, "../etc/passwd"),
    ],
)
def test_an_sdist_with_a_link_out_of_it_is_refused(tmp_path, link):
    sdist = make_tar(
        tmp_path / "demo-1.0.tar.gz", {"demo-1.0/demo/ok.py": GOOD}, {"demo-1.0/demo/x.py": link}
    )
    with pytest.raises(ex.SourceError, match="member 'demo-1.0/demo/x.py': is a (hard )?link"):
        ex.scan_tree(sdist)


def test_a_wheel_with_a_link_out_of_it_is_refused(tmp_path):
    wheel = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {"demo/ok.py": GOOD},
        {"demo/x.py": "../../../../etc/passwd"},
    )
    with pytest.raises(ex.SourceError, match="outside the archive"):
        ex.scan_tree(wheel)


def test_links_inside_an_archive_and_dot_slash_names_are_fine(tmp_path):
    sdist = make_tar(
        tmp_path / "demo-1.0.tar.gz",
        {"./demo-1.0/demo/ok.py": GOOD},
        {"./demo-1.0/demo/same.py": (tarfile.SYMTYPE, "ok.py")},
    )
    wheel = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl", {"demo/ok.py": GOOD}, {"demo/same.py": "ok.py"}
    )
    for source in (sdist, wheel):
        assert [(s.path, s.line) for s in ex.scan_tree(source).sites] == [("demo/ok.py", 2)]


def test_a_tree_with_a_link_out_of_it_is_refused(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo/ok.py").write_bytes(GOOD)
    (tmp_path / "secret.py").write_bytes(GOOD)
    os.symlink(tmp_path / "secret.py", tmp_path / "demo/evil.py")
    with pytest.raises(ex.SourceError, match="'evil.py': is a link to .*secret.py, outside"):
        ex.scan_tree(tmp_path / "demo")


def test_extract_refuses_a_hostile_sdist_and_writes_nothing(kb, tmp_path):
    sdist = make_tar(
        tmp_path / "demo-1.0.tar.gz",
        {"demo-1.0/demo/ok.py": GOOD, "demo-1.0/../../../../../../tmp/PWNED/evil.py": GOOD},
    )
    before = snapshot(kb / "content")
    result = subprocess.run(
        [sys.executable, "-m", "errorkb", "--root", str(kb), "extract", str(sdist)]
        + ["--project", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "refusing the whole source" in result.stderr and "Traceback" not in result.stderr
    assert snapshot(kb / "content") == before


def test_an_unsafe_prefix_is_refused(tmp_path):
    wheel = make_zip(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/ok.py": GOOD})
    with pytest.raises(ex.SourceError, match="--prefix '../up'"):
        ex.scan_tree(wheel, prefix="../up")


# Archives made to exhaust memory or time: limits, each a line naming the file ---------


def refused(scan: ex.Scan) -> list[str]:
    return ex.refused_lines(scan.refused, most=100)


def test_a_wheel_of_huge_members_is_skipped_without_reading_them(tmp_path):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("demo/ok.py", GOOD)
        for i in range(4):  # 64 MB of zeros each, 64 KB compressed, written as a stream
            with archive.open(zipfile.ZipInfo(f"demo/m{i}.py"), "w") as member:
                for _ in range(64):
                    member.write(bytes(2**20))
    tracemalloc.start()
    start = time.perf_counter()
    scan = ex.scan_tree(wheel)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 2 and peak < 10 * 2**20  # nothing of them was decompressed
    assert [s.path for s in scan.sites] == ["demo/ok.py"]
    assert refused(scan) == [
        f"skipped demo/m{i}.py: is 64 MB, over the 2 MB limit" for i in range(4)
    ]


def test_a_member_longer_than_its_header_says_is_not_read_past_it(tmp_path):
    size = 3 * 2**20 + 1  # over the limit, its header rewritten to say 100 bytes
    wheel = make_zip(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/ok.py": GOOD})
    with zipfile.ZipFile(wheel, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("demo/big.py", bytes(size))
    data = wheel.read_bytes()
    assert data.count(size.to_bytes(4, "little")) == 2  # the local and the central header
    wheel.write_bytes(data.replace(size.to_bytes(4, "little"), (100).to_bytes(4, "little")))
    scan = ex.scan_tree(wheel)
    assert [s.path for s in scan.sites] == ["demo/ok.py"]
    assert refused(scan) == [
        "skipped demo/big.py: cannot be read: Bad CRC-32 for file 'demo/big.py'"
    ]


def test_the_files_of_a_source_are_read_up_to_a_total(tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "MAX_TOTAL_BYTES", 2**20)
    padded = GOOD + b"#" * 400_000
    wheel = make_zip(
        tmp_path / "demo-1.0-py3-none-any.whl", {f"demo/m{i}.py": padded for i in range(3)}
    )
    scan = ex.scan_tree(wheel)
    assert [s.path for s in scan.sites] == ["demo/m0.py", "demo/m1.py"]
    assert refused(scan) == ["skipped demo/m2.py: takes the source over the 1 MB limit"]


def test_one_run_makes_records_up_to_a_limit_naming_the_files_past_it(kb, tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "MAX_NEW_RECORDS", 3)
    tree = tmp_path / "tree"
    (tree / "demo").mkdir(parents=True)
    for name in "abc":  # two errors a file, six in all
        raises = [f"raise ValueError('{name} is bad number {i}')\n" for i in range(2)]
        (tree / "demo" / f"{name}.py").write_text("".join(raises))
    summary = ex.extract(kb, tree, "demo", jobs=1)
    assert len(summary.created) == 3
    assert len(list((kb / "content/errors/demo").glob("*.yaml"))) == 4 + 3
    why = "its errors past the first 3 new records of a run are not written"
    lines = summary.lines()
    assert [line for line in lines if line.startswith("skipped")] == [
        f"skipped demo/b.py: {why}",
        f"skipped demo/c.py: {why}",
    ]


@pytest.mark.slow
def test_thousands_of_raises_in_a_file_stop_at_the_limit(tmp_path):
    (tmp_path / "demo").mkdir()
    body = "".join(
        f"    if n == {i}:\n        raise ValueError('bad value {i}')\n" for i in range(20_000)
    )
    (tmp_path / "demo/many.py").write_text("def f(n):\n" + body)
    (tmp_path / "demo/huge.py").write_text("".join(f"raise E('{i}')\n" for i in range(250_000)))
    (tmp_path / "demo/ok.py").write_bytes(GOOD)
    start = time.perf_counter()
    scan = ex.scan_tree(tmp_path / "demo", asserts=True, printed=True, jobs=1)
    assert time.perf_counter() - start < 10  # the old scanner took minutes and gigabytes
    assert [s.path for s in scan.sites] == ["ok.py"]
    assert refused(scan) == [
        "skipped huge.py: is 4 MB, over the 2 MB limit",
        "skipped many.py: has over 2,000 sites, the limit per file",
    ]


def test_a_message_over_the_limit_is_skipped_and_the_file_still_read(tmp_path):
    (tmp_path / "demo").mkdir()
    long = "x" * 50_000
    (tmp_path / "demo/x.py").write_text(
        f"def f(n):\n    raise ValueError('{long}')\n" + GOOD.decode()
    )
    scan = ex.scan_tree(tmp_path / "demo")
    assert [(s.path, s.line) for s in scan.sites] == [("x.py", 4)]
    assert refused(scan) == ["skipped x.py:2: a message of 50,000 characters, over the 4,000 limit"]
    assert scan.skipped["too-long"] == 1


def test_expressions_nested_too_deeply_are_a_line_not_a_crash(kb, tmp_path, capsys):
    def chain(depth: int) -> str:  # `a + a + ...` in an annotation and in a message
        deep = "a" + " + a" * depth
        return f"class EngineArgs:\n    x: {deep}\n    def f(self, a):\n        raise E({deep})\n"

    files = {"engine/arg_utils.py": 20_000, "config/model.py": 600, "x.py": 20_000}
    for name, depth in files.items():  # vLLM's wing reads the first two in our process
        (tmp_path / "vllm" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vllm" / name).write_text(chain(depth))
    (tmp_path / "vllm/ok.py").write_bytes(GOOD)
    argv = ["--root", str(kb), "extract", str(tmp_path), "--project", "demo", "--dry-run"]
    assert cli.main(argv) == 0  # the demo project uses vLLM's wing
    err = capsys.readouterr().err
    assert "files that do not parse: 2" in err and "records: 1 created" in err
    assert "  vllm/x.py: expressions nested too deeply to read" in err


def test_a_pipe_named_like_a_python_file_is_skipped_not_opened(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo/ok.py").write_bytes(GOOD)
    os.mkfifo(tmp_path / "demo/x.py")
    signal.alarm(10)  # opening a pipe for reading would block forever
    try:
        scan = ex.scan_tree(tmp_path / "demo")
    finally:
        signal.alarm(0)
    assert [s.path for s in scan.sites] == ["ok.py"]
    assert refused(scan) == ["skipped x.py: is not a regular file (a pipe, socket or device)"]


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: 0o17\nc: 0x1F\nd: 1_000\ne: 190:20:30\n",  # YAML 1.1's integers
        "a: yes\nb: Off\nc: ~\nd: null\ne: .inf\nf: -.NaN\ng: 1e3\nh: '1'\n",
        "a: 2026-11-30\nb: '2026-11-30'\n",  # dates stay text (no timestamp resolver)
        "a: {b: [1, {c: d}], e: []}\nf: |\n  two\n  lines\n",
        "<<: {a: 1}\nb: 2\n",  # a merge key
        "1: one\n2.5: two\nnull: three\n",  # keys that are not strings
        "a: !!binary aGk=\nb: !!str 12\nc: !!int '7'\n",  # explicit tags
        "a: 1\na: 2\n",  # twins: the last wins
        "- a\n- 1\n",
        "just text\n",
        "a:\nb: ''\nc: +1\nd: -2.5\ne: 0b101\nf: .5\ng: 'yes'\nh: No\n",  # empty, signs
    ],
)
def test_records_parse_to_what_pyyaml_builds(text):
    """parse_yaml builds plain documents itself, and resolves scalars' types itself (for
    speed); whatever a file holds, the data is what PyYAML's own pure-Python safe loader
    (dates kept as text) makes of it."""

    class Reference(yaml.SafeLoader):
        yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in found if not tag.endswith(":timestamp")]
            for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }

    expected = yaml.load(text, Loader=Reference)
    data = parse_yaml(text, "x.yaml", []).data
    assert data == expected
    assert [type(v) for v in _leaves(data)] == [type(v) for v in _leaves(expected)]  # 1 == 1.0


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in (k, *_leaves(v))]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]

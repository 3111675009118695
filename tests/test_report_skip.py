"""``afr report`` with nothing changed skips the build (afr_cli/publish/build_keys.py): a second
run does not call the build, and any change to what the build reads or wrote (a store's export, a
page's hand-written prose, an output edited or deleted, a file outside the declared folders that
the build opened) makes the next run a full one, whose files are the bytes a cold build writes.

The expensive step is counted, never timed: ``build.write_all`` (and ``build.stale_outputs`` for
``--check``) are wrapped by a counter. The scratch root holds two small committed exports, as
tests/test_report_context.py's does; each test has its own export cache folder."""

from __future__ import annotations

import lzma
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from afr_cli.cli import app
from afr_cli.commands import report as report_command
from afr_cli.publish import build, build_keys

REPO = Path(__file__).resolve().parents[1]
STORES = ("satrf_softmax/none", "satrf_softmax/standard")
PLAIN, HTML, SITE, CHECK = (
    build_keys.Mode("build"),
    build_keys.Mode("build", html=True),
    build_keys.Mode("site"),
    build_keys.Mode("check"),
)


def _root(tmp_path: Path) -> Path:
    """A scratch results root holding two small committed stores (their exports only)."""
    root = tmp_path / "results"
    for store in STORES:
        shutil.copytree(REPO / "results" / store / "export", root / store / "export")
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _checkout_left_out(monkeypatch) -> None:
    """The digest without the checkout's own folders (afr_cli/, docs/, configs/ ...): other sessions
    edit this checkout while the suite runs, and each edit is rightly a rebuild, which would make
    these tests' "skipped" flaky. What they test is the scratch root and the trace; that the
    checkout's folders are digested is test_the_digest_holds_afrs_own_folders'."""
    real_declared = build_keys.declared
    project = build_keys.PROJECT_ROOT.resolve()
    monkeypatch.setattr(build_keys, "declared", lambda root: real_declared(root)[:3])
    real_ignored = build_keys._ignored
    monkeypatch.setattr(build_keys, "_ignored", lambda path: path.is_relative_to(project) or real_ignored(path))


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """The build's expensive steps counted (the real ones still run), in a cache of this test's own."""
    monkeypatch.setenv("AFR_EXPORT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(build_keys.FULL_ENV, raising=False)
    _checkout_left_out(monkeypatch)
    counted: Counter[str] = Counter()
    for name in ("write_all", "stale_outputs"):
        real = getattr(build, name)

        def wrapper(*args, _real=real, _name=name, **kwargs):
            counted[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(build, name, wrapper)
    return counted


def _report(root: Path, html: bool = False) -> list[Path] | None:
    """``afr report [--html] --root ROOT``'s build: the files written, None when it was skipped."""
    return report_command._built(root, None, None, html, False, False)


@pytest.mark.slow
def test_a_second_run_skips_the_build_and_says_so_in_one_line(tmp_path, calls):
    root = _root(tmp_path)
    assert _report(root, html=True)  # the first run builds everything, the site included
    assert calls["write_all"] == 1
    built = _files(root)
    assert _report(root, html=True) is None  # nothing changed: not built again
    assert _report(root) is None  # a full --html build answers for the build without the site
    assert report_command._built(root, None, None, False, False, True) is None  # and for --site-only
    assert calls["write_all"] == 1 and _files(root) == built
    result = CliRunner().invoke(app, ["report", "--root", str(root)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [build_keys.NOTHING_CHANGED.format(root=root)]
    assert calls["write_all"] == 1
    # a restricted view is its own kind of run: built once, then skipped
    view = report_command._built(root, ["satrf_softmax/none"], 1, False, False, False)
    assert view and calls["write_all"] == 2
    assert report_command._built(root, ["satrf_softmax/none"], 1, False, False, False) is None
    assert calls["write_all"] == 2


@pytest.mark.slow
def test_a_second_check_is_answered_from_its_record_and_a_change_is_checked_again(tmp_path, calls):
    root = _root(tmp_path)
    _report(root, html=True)
    assert report_command._checked(root) == [] and calls["stale_outputs"] == 1
    assert report_command._checked(root) == [] and calls["stale_outputs"] == 1  # known: not regenerated
    summary = root / "satrf_softmax" / "none" / "summary.md"
    summary.write_text(summary.read_text() + "edited\n")
    assert report_command._checked(root) == [f"{summary.as_posix()}: stale"]
    assert calls["stale_outputs"] == 2
    assert report_command._checked(root) == [f"{summary.as_posix()}: stale"]  # a stale answer is kept too
    assert calls["stale_outputs"] == 2


def _edit_store(root: Path) -> None:
    """One score of one store's export changed (a new result for the same cell)."""
    path = root / STORES[0] / "export" / "results.csv.xz"
    text = lzma.open(path, "rt", encoding="utf-8").read()
    lines = text.splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[4] = repr(float(cells[4]) - 0.1)  # the first row's r2
    lines[1] = ",".join(cells)
    with lzma.open(path, "wt", encoding="utf-8") as handle:
        handle.write("".join(lines))


def _edit_prose(root: Path) -> None:
    """A sentence of the paper page's hand-written prose changed (outside its generated blocks)."""
    page = root / "satrf" / "page.md"
    if not page.is_file():  # a cold build starts from the committed page, as the copy did
        page.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "afr_cli" / "papers" / "satrf" / "page.md", page)
    text = page.read_text(encoding="utf-8")
    assert "Attention and self-attention weights" in text
    page.write_text(text.replace("Attention and self-attention weights", "Both kinds of weights", 1), encoding="utf-8")


def _edit_output(root: Path) -> None:
    summary = root / STORES[0] / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")


def _delete_output(root: Path) -> None:
    (root / STORES[1] / "summary.csv").unlink()


@pytest.mark.slow
def test_each_change_rebuilds_and_the_result_is_the_bytes_of_a_cold_build(tmp_path, calls, monkeypatch):
    root = _root(tmp_path)
    _report(root)
    assert _report(root) is None and calls["write_all"] == 1
    for edit in (_edit_store, _edit_prose, _edit_output, _delete_output):
        edit(root)
        assert _report(root) is not None, edit.__name__  # rebuilt ...
        assert _report(root) is None, edit.__name__  # ... and current again
    assert calls["write_all"] == 5
    rebuilt = _files(root)
    # a cold full build of the same inputs (both edited inputs, no output) at the same path
    root.rename(tmp_path / "rebuilt")
    root = _root(tmp_path)
    _edit_store(root)
    _edit_prose(root)
    monkeypatch.setenv(build_keys.FULL_ENV, "1")
    _report(root)
    assert calls["write_all"] == 6
    assert _files(root) == rebuilt


# -- the record's rules, on a stand-in build (no report is computed) ---------------------------------
@pytest.fixture
def fake_build(monkeypatch, tmp_path):
    """``build.write_all`` replaced by a stand-in that writes one output and runs ``extra`` (a list
    of callables the test fills): what a real build would read or do while it runs."""
    monkeypatch.setenv("AFR_EXPORT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(build_keys.FULL_ENV, raising=False)
    _checkout_left_out(monkeypatch)
    extra: list = []
    counted: Counter[str] = Counter()

    def write_all(root, *args, **kwargs):
        counted["write_all"] += 1
        out = Path(root) / "out.txt"
        out.write_text("built\n")
        for step in extra:
            step()
        return [out]

    monkeypatch.setattr(build, "write_all", write_all)
    return counted, extra


def test_a_file_the_build_read_outside_the_declared_folders_is_in_the_record(tmp_path, fake_build):
    counted, extra = fake_build
    root = tmp_path / "results"
    root.mkdir()
    outside = tmp_path / "elsewhere" / "notes.txt"  # beside nothing the record declares
    outside.parent.mkdir()
    outside.write_text("one\n")
    extra.append(lambda: outside.read_text() if outside.is_file() else None)
    assert _report(root) == [root / "out.txt"]
    assert _report(root) is None and counted["write_all"] == 1
    outside.write_text("two\n")  # only the trace knows the build read it
    assert _report(root) is not None and counted["write_all"] == 2
    outside.unlink()
    assert _report(root) is not None and counted["write_all"] == 3


def test_an_input_changed_by_someone_else_while_the_build_ran_is_not_recorded(tmp_path, fake_build):
    counted, extra = fake_build
    root = tmp_path / "results"
    (root / "store").mkdir(parents=True)
    data = root / "store" / "data.csv"
    data.write_text("a\n")
    # another process writes the store while the first build runs: played by a write the audit
    # hook does not see (a write of the build itself is traced as its own)
    extra.append(lambda: _unseen(lambda: data.write_text("b\n")) if counted["write_all"] == 1 else None)
    _report(root)
    assert build_keys.remembered(root, PLAIN) is None  # not recorded: the next run builds again
    assert _report(root) is not None and counted["write_all"] == 2
    assert _report(root) is None and counted["write_all"] == 2


def _unseen(step) -> None:
    """``step()`` with the audit hook's trace set aside, as if another process did it."""
    saved, build_keys._Tracing.active = build_keys._Tracing.active, None
    try:
        step()
    finally:
        build_keys._Tracing.active = saved


@pytest.mark.parametrize("env", [("AFR_REPORT_FULL", "1"), ("AFR_EXPORT_CACHE", "off")])
def test_a_forced_run_or_the_cache_off_is_always_a_full_build(tmp_path, fake_build, monkeypatch, env):
    counted, _ = fake_build
    root = tmp_path / "results"
    root.mkdir()
    _report(root)
    monkeypatch.setenv(*env)
    assert _report(root) is not None and _report(root) is not None
    assert counted["write_all"] == 3


def test_an_unreadable_cache_record_or_an_unwritable_cache_is_a_full_build(tmp_path, fake_build, monkeypatch):
    counted, _ = fake_build
    root = tmp_path / "results"
    root.mkdir()
    _report(root)
    for path in (tmp_path / "cache" / build_keys.KIND).rglob("*"):
        if path.is_file():
            path.write_bytes(b"damaged")
    assert _report(root) is not None and counted["write_all"] == 2  # a damaged record: rebuilt
    monkeypatch.setenv("AFR_EXPORT_CACHE", str(tmp_path / "out.txt-is-a-file" / "x"))
    (tmp_path / "out.txt-is-a-file").write_text("")  # the cache folder cannot be made
    assert _report(root) is not None and _report(root) is not None
    assert counted["write_all"] == 4


def test_the_digest_holds_afrs_own_folders(tmp_path, monkeypatch):
    """Outside the tests above, the digest holds afr's package (code, paper folders and pages) and
    the project's pages, configs and datasets: an edit to any of them is another snapshot."""
    root = tmp_path / "results"
    root.mkdir()
    tops = build_keys.declared(root)
    project = build_keys.PROJECT_ROOT.resolve()
    assert root.resolve() in tops and (tmp_path / "README.md") in tops and (tmp_path / "docs") in tops
    assert {build_keys.PACKAGE_DIR.resolve(), project / "docs", project / "configs", project / "README.md"} <= set(tops)
    package = tmp_path / "afr_cli"  # a stand-in package: the real one is not edited by a test
    (package / "papers" / "satrf").mkdir(parents=True)
    (package / "papers" / "satrf" / "paper.yaml").write_text("title: one\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled")
    monkeypatch.setattr(build_keys, "PACKAGE_DIR", package)
    before = build_keys.snapshot(root)
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled again")  # derived: not an input
    assert build_keys.snapshot(root) == before
    (package / "papers" / "satrf" / "paper.yaml").write_text("title: two\n")
    assert build_keys.snapshot(root) != before

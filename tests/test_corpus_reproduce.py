"""``afr reproduce`` refuses before it computes: every defect of a paper folder or of
``--root`` is found before the first unit runs, as a real ``afr`` subprocess: exit 2, one line on
stderr starting with 'error:', no traceback, and nothing written (the directory's listing and
every file's bytes compared before and after, the paper folder and where the root would go).

Each case starts from the toy paper of docs/adding-a-paper.md (tests/test_reproduce.py reads it
from the page) and breaks one thing. Without the checks, most of these ran the toy's units, wrote
the store and the reports, and then failed (a traceback or exit 2) or wrote outside the root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from afr_forkserver import Invocation, run_afr_forked
from test_reproduce import write_toy

pytestmark = pytest.mark.slow

RUN = ("--jobs", "1", "--quiet", "--no-site")


def _yaml(folder: Path, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in the toy's paper.yaml."""
    path = folder / "paper.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _paper(change: Callable[[Path], object]) -> Callable[[Path], tuple[str, ...]]:
    """A case that breaks the toy folder with ``change`` and reproduces it into tmp/root."""

    def setup(tmp: Path) -> tuple[str, ...]:
        folder = write_toy(tmp)
        change(folder)
        return ("reproduce", str(folder), "--root", str(tmp / "root"), *RUN)

    return setup


def _root(value: Callable[[Path], str]) -> Callable[[Path], tuple[str, ...]]:
    """A case with a sound toy folder and a bad ``--root``."""

    def setup(tmp: Path) -> tuple[str, ...]:
        folder = write_toy(tmp)
        (tmp / "a-file").write_text("not a directory\n")
        return ("reproduce", str(folder), "--root", value(tmp), *RUN)

    return setup


def _latin1(folder: Path) -> None:
    path = folder / "paper.yaml"
    path.write_bytes(path.read_text(encoding="utf-8").replace("A toy paper", "A toy papér").encode("latin-1"))


def _published(folder: Path, text: str) -> None:
    (folder / "published.csv").write_text(text, encoding="utf-8")


def _with_study(folder: Path, function: str = "rows") -> None:
    """The toy with a study (a function of its studies.py) declared in its data file."""
    _yaml(folder, "experiments:\n", f'studies:\n  - {{name: {function}, block: "study:toy:rows"}}\nexperiments:\n')
    (folder / "studies.py").write_text("def rows(root):\n    raise RuntimeError('never called by a refusal')\n")


def _study_then_bad_config(folder: Path) -> None:
    """A sound study (its file imported by the checks) and a config refused afterwards."""
    _with_study(folder)
    (folder / "toy.yaml").write_text((folder / "toy.yaml").read_text() + "colour: red\n")


@dataclass
class Case:
    """A defect: ``setup(tmp)`` builds the files and returns afr's arguments; ``needles`` must be in
    the one line."""

    name: str
    setup: Callable[[Path], tuple[str, ...]]
    needles: tuple[str, ...] = ()


TABLES = 'tables:\n  "1": {caption: "R² on Friedman 1"}'
CASES = [
    Case("paper-yaml-latin-1", _paper(_latin1), ("paper.yaml", "UTF-8")),
    Case(
        "order-not-a-number", _paper(lambda f: _yaml(f, "order: 90", "order: first")), ("order", "'first'", "integer")
    ),
    Case("tables-given-as-a-list", _paper(lambda f: _yaml(f, TABLES, 'tables: ["1"]')), ("tables", "mapping")),
    Case(
        "unknown-top-key", _paper(lambda f: _yaml(f, "reps: 2\n", "reps: 2\ncolour: red\n")), ("colour: unknown key",)
    ),
    Case("reps-not-a-number", _paper(lambda f: _yaml(f, "reps: 2\n", "reps: two\n")), ("reps", "'two'")),
    Case("models-not-a-list", _paper(lambda f: _yaml(f, "models: [rf, eps-abrf]", "models: rf")), ("models", "a list")),
    Case("id-leaves-the-root", _paper(lambda f: _yaml(f, "id: toy", "id: ../toy")), ("id", "'../toy'")),
    Case(
        "claim-unknown-test",
        _paper(lambda f: _yaml(f, "test: wins", "test: winz")),
        ("paper.yaml: claims: t1-beats-forest: test: 'winz'", "allowed: wins"),
    ),
    Case(
        "claim-unknown-report",
        _paper(lambda f: _yaml(f, "    report: toy\n", "    report: nope\n")),
        ("t1-beats-forest", "report: 'nope'"),
    ),
    Case("claim-without-its-columns", _paper(lambda f: _yaml(f, "    a: [RF, rf]\n", "")), ("t1-beats-forest",)),
    Case("published-csv-missing", _paper(lambda f: (f / "published.csv").unlink()), ("published", "published.csv")),
    Case(
        "published-csv-without-value",
        _paper(lambda f: _published(f, "paper,table,base,dataset,model,metric\ntoy,1,RF,Friedman1,rf,r2\n")),
        ("published.csv", "'value'"),
    ),
    Case(
        "published-value-not-a-number",
        _paper(lambda f: _published(f, "paper,table,base,dataset,model,metric,value\ntoy,1,RF,Friedman1,rf,r2,high\n")),
        ("published.csv", "line 2", "'high'"),
    ),
    Case(
        "report-table-not-published",
        _paper(lambda f: _yaml(f, 'tables: ["toy:1"]', 'tables: ["toy:7"]')),
        ("reports: toy: tables", "toy:7"),
    ),
    Case(
        "experiment-out-leaves-the-root",
        _paper(lambda f: _yaml(f, "{config: toy.yaml, reps: 2", "{config: toy.yaml, out: ../x, reps: 2")),
        ("experiments[0]: out: '../x'",),
    ),
    Case(
        "experiment-out-absolute",
        _paper(lambda f: _yaml(f, "{config: toy.yaml, reps: 2", "{config: toy.yaml, out: /tmp/x, reps: 2")),
        ("experiments[0]: out", "absolute"),
    ),
    Case(
        "experiment-config-missing",
        _paper(lambda f: _yaml(f, "{config: toy.yaml", "{config: nowhere.yaml")),
        ("experiments[0]: config: 'nowhere.yaml'",),
    ),
    Case(
        "experiment-config-invalid",
        _paper(lambda f: (f / "toy.yaml").write_text((f / "toy.yaml").read_text() + "colour: red\n")),
        ("toy.yaml", "colour"),
    ),
    Case(
        "report-name-leaves-the-root",
        _paper(lambda f: _yaml(f, "  - name: toy\n", "  - name: ../x\n")),
        ("reports[0]: name: '../x'",),
    ),
    Case(
        "report-store-leaves-the-root",
        _paper(lambda f: _yaml(f, "stores: [toy_run]", "stores: [../toy_run]")),
        ("reports[0]: stores: '../toy_run'",),
    ),
    Case(
        "output-stdout-leaves-the-root",
        _paper(lambda f: _yaml(f, '"{root}/toy/summary-std.md"', '"{root}/../summary-std.md"')),
        ("outputs[0]: stdout",),
    ),
    Case(
        "output-stdout-not-under-the-root",
        _paper(lambda f: _yaml(f, '"{root}/toy/summary-std.md"', '"summary.md"')),
        ("outputs[0]: stdout: 'summary.md'",),
    ),
    Case(
        "output-out-leaves-the-root",
        _paper(lambda f: _yaml(f, "--std]", '--std, --out, "{root}/../x.md"]')),
        ("outputs[0]: afr: --out",),
    ),
    Case(
        "page-outside-the-folder",
        _paper(lambda f: _yaml(f, "page: page.md", "page: ../page.md")),
        ("page", "'../page.md'"),
    ),
    Case(
        "study-not-a-function",
        _paper(lambda f: _with_study(f, "nowhere")),
        ("studies.py", "nowhere", "no such function"),
    ),
    Case("study-checked-then-config-refused", _paper(_study_then_bad_config), ("toy.yaml", "colour")),
    Case("root-empty", _root(lambda t: ""), ("--root", "empty")),
    Case("root-is-a-file", _root(lambda t: str(t / "a-file")), ("--root", "a-file", "is a file")),
    Case("root-below-a-file", _root(lambda t: str(t / "a-file" / "results")), ("--root", "a-file", "cannot be made")),
]


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path below root: a file's bytes, None for a directory."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@dataclass
class Outcome:
    proc: object
    before: dict[str, bytes | None]
    after: dict[str, bytes | None]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    """Every case set up in a directory of its own, run as a child of one fork server (each in its
    own directory, two at a time), then its directory compared with the snapshot taken before."""
    prepared = []
    for case in CASES:
        tmp = tmp_path_factory.mktemp(case.name)
        args = case.setup(tmp)
        prepared.append((case, tmp, args, _snapshot(tmp)))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    procs = run_afr_forked([Invocation(tuple(args), tmp, env) for _, tmp, args, _ in prepared], jobs=2)
    return {case.name: Outcome(proc, before, _snapshot(tmp)) for (case, tmp, _, before), proc in zip(prepared, procs)}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_a_bad_paper_folder_or_root_is_refused_before_anything_runs(case: Case, outcomes: dict[str, Outcome]):
    outcome = outcomes[case.name]
    proc = outcome.proc
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in case.needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Friedman1 / RF" not in proc.stdout, "a unit ran before the refusal"
    assert outcome.after == outcome.before, "a refused reproduction must leave every file as it was"


def test_the_corpus_is_large_and_its_names_are_unique():
    assert len(CASES) >= 15 and len({c.name for c in CASES}) == len(CASES)

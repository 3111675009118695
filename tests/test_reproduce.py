"""``afr reproduce``: every paper folder plans; a toy paper folder outside the package (the one
docs/adding-a-paper.md shows, read from that page) is reproduced end to end; a store no paper
declares leaves nothing for git to show."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, assert_one_line_error, run_afr

from afr_cli.catalogue.knowledge import papers

DOC = ROOT / "docs" / "adding-a-paper.md"


def doc_files() -> dict[str, str]:
    """The toy paper's files as the doc prints them: 'File `toy_paper/NAME`:' then a fenced block."""
    text = DOC.read_text(encoding="utf-8")
    found = dict(re.findall(r"File `toy_paper/([\w.]+)`:\n\n```\w*\n(.*?)```", text, re.S))
    assert set(found) == {"paper.yaml", "published.csv", "toy.yaml", "page.md"}, sorted(found)
    return found


def write_toy(where: Path) -> Path:
    folder = where / "toy_paper"
    folder.mkdir(parents=True)
    for name, body in doc_files().items():
        (folder / name).write_text(body, encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("paper_id", [p.id for p in papers()])
def test_every_paper_plans_its_experiments(paper_id):
    proc = run_afr("reproduce", paper_id, "--plan")
    assert proc.returncode == 0, proc.stderr
    experiments = next(p for p in papers() if p.id == paper_id).experiments
    assert experiments
    for spec in experiments:
        row = next(line for line in proc.stdout.splitlines() if f"results/{spec.store()} " in line)
        assert re.search(r"\s(\d+)\s+(\d+)\s", row), row  # stored and missing counts
    assert re.search(rf"{len(experiments)} experiments?: \d+ units stored, \d+ missing", proc.stdout), proc.stdout


@pytest.mark.slow
def test_a_toy_paper_folder_is_reproduced_end_to_end(tmp_path):
    folder = write_toy(tmp_path)
    page_before = (folder / "page.md").read_text()
    root = tmp_path / "results"
    planned = run_afr("reproduce", str(folder), "--root", str(root), "--plan")
    assert planned.returncode == 0, planned.stderr
    row = next(line for line in planned.stdout.splitlines() if "toy_run" in line)
    # nothing stored, 2 units missing, priced from the committed stores' measured cost, which it names
    assert re.search(r"\s0\s+2\s+(?:< )?[\d.]+ CPU-min \(from .*committed", row), row
    assert not root.exists()  # --plan runs nothing

    proc = run_afr("reproduce", str(folder), "--root", str(root), "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    store = root / "toy_run"
    assert (store / "store.sqlite").is_file() and (store / "export" / "manifest.json").is_file()
    from afr_cli.store import load_results

    assert sorted(load_results(store)["rep"].unique()) == [0, 1]
    beside = (root / "toy" / "paper-toy-1.md").read_text()
    assert "0.600" in beside and "0.700" in beside  # the published cells, ours beside them
    assert "eps-abrf" in beside and "Friedman1" in beside
    assert "std" in (root / "toy" / "summary-std.md").read_text().lower()  # the declared output
    ledger = (root / "toy" / "claims.md").read_text()
    assert "t1-beats-forest" in ledger and re.search(r"\*\*(reproduces|partly|does not)\*\*", ledger)
    page = (root / "toy" / "page.md").read_text()
    assert "1 claims, judged by `afr report`" in page and "t1-beats-forest" not in page_before
    assert (folder / "page.md").read_text() == page_before  # a scratch root leaves the folder's page alone
    assert (root / "site" / "toy.html").is_file()

    again = run_afr("reproduce", str(folder), "--root", str(root), "--plan")  # resumable: nothing left
    row = next(line for line in again.stdout.splitlines() if "toy_run" in line)
    assert re.search(r"\s2\s+0\s+-", row), row


def test_a_target_that_is_nothing_is_a_one_line_error(tmp_path):
    assert_one_line_error(run_afr("reproduce", "no_such_paper", "--plan"), "no_such_paper", "satrf", "paper.yaml")
    assert_one_line_error(run_afr("reproduce", "--plan"), "no target")
    assert_one_line_error(run_afr("reproduce", "satrf", "--plan", "--datasets", "Nowhere"), "--datasets", "Nowhere")
    assert_one_line_error(run_afr("reproduce", str(tmp_path), "--plan"), "not a paper folder")
    folder = write_toy(tmp_path)
    (folder / "paper.yaml").write_text((folder / "paper.yaml").read_text() + "colour: red\n")
    assert_one_line_error(run_afr("reproduce", str(folder), "--plan"), "paper.yaml: colour: unknown key")


@pytest.mark.slow
def test_a_store_no_paper_declares_leaves_nothing_for_git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, capture_output=True, text=True, check=True)  # noqa: E731
    git("init", "-q")
    git("add", ".gitignore")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore")
    config = write_toy(tmp_path) / "toy.yaml"
    proc = run_afr("run", str(config), "--jobs", "1", "--quiet", "--out", "results/mine", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "results" / "mine" / "store.sqlite").is_file()
    assert not (repo / "results" / "mine" / "export").exists()  # not a reference store: no export
    assert git("status", "--porcelain", "--untracked-files=all").stdout == ""
    # a reference store's export and the reports are not ignored
    reference = ["results/abrf_rf/export/grid.csv.xz", "results/abrf/compare.md"]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *reference], cwd=repo, capture_output=True, text=True
    )
    assert ignored.stdout == ""


def test_the_timing_section_is_replaced_not_appended(tmp_path):
    from afr_cli.reproduction.pipeline import TIMES_BEGIN, TIMES_END, times_section, write_times

    readme = tmp_path / "README.md"
    readme.write_text("# Results\n\nkept above\n")
    write_times(readme, times_section([("satrf: one", 75.0), ("two", 3.0)], 2, "afr reproduce --all"))
    first = readme.read_text()
    assert first.startswith("# Results\n\nkept above\n") and "| satrf: one | 1.2 min |" in first
    assert "| **total** | **1.3 min** |" in first and "`afr reproduce --all`" in first
    readme.write_text(first + "\nkept below\n")
    write_times(readme, times_section([("three", 1.0)], 1, "afr reproduce --all"))
    text = readme.read_text()
    assert text.count(TIMES_BEGIN) == 1 and text.count(TIMES_END) == 1
    assert "| three |" in text and "| satrf: one |" not in text and text.endswith("kept below\n")


def test_an_output_that_fails_is_reported_and_the_others_still_run(tmp_path):
    from afr_cli.catalogue.knowledge import OutputSpec
    from afr_cli.reproduction.pipeline import Target, draw_outputs

    good = OutputSpec((("models",),), stdout="{root}/out/models.txt")
    bad = OutputSpec((("models", "--no-such-option"),), stdout="{root}/out/never.md")
    paper = type("P", (), {"outputs": (bad, good), "data_file": "toy/paper.yaml"})()
    lines = []
    failed = draw_outputs([Target(paper, ())], tmp_path, None, echo=lines.append)
    assert len(failed) == 1 and failed[0].startswith(
        "toy/paper.yaml: outputs[0]: `afr models --no-such-option` exited 2"
    )
    assert not (tmp_path / "out" / "never.md").exists()  # nothing half-written
    assert "eps-abrf" in (tmp_path / "out" / "models.txt").read_text()


def test_every_committed_store_and_report_store_is_declared_by_a_paper_folder():
    """What .gitignore no longer lists follows from the folders: every committed export and every
    store a report reads is an experiment of some paper folder."""
    from afr_cli.catalogue.knowledge import reference_stores, reports

    declared = set(reference_stores())
    committed = {
        str(p.parent.parent.relative_to(ROOT / "results")) for p in (ROOT / "results").glob("**/export/manifest.json")
    }
    assert committed and committed <= declared, sorted(committed - declared)
    assert {s for r in reports() for s in r.stores} <= declared


def test_a_folder_outside_the_package_joins_the_papers(tmp_path, monkeypatch):
    from afr_cli.catalogue import knowledge
    from afr_cli.catalogue.published import published_table
    from afr_cli.errors import AfrInputError

    knowledge.forget_added_folders()
    try:
        folder = write_toy(tmp_path)
        toy = knowledge.add_paper_folder(folder)
        assert toy.id == "toy" and toy.page == folder.resolve() / "page.md"
        assert [e.config for e in toy.experiments] == [folder.resolve() / "toy.yaml"]  # the folder's own config
        assert toy.experiments[0].store() == "toy_run" and "toy" in [p.id for p in knowledge.papers()]
        assert list(published_table("toy:1")["value"]) == [0.6, 0.7]
        assert knowledge.add_paper_folder(folder) == toy  # twice: a no-op
        twin = tmp_path / "twin"
        shutil.copytree(folder, twin)
        with pytest.raises(AfrInputError, match="id: 'toy' is already the id of"):
            knowledge.add_paper_folder(twin)
        assert len([p for p in knowledge.papers() if p.id == "toy"]) == 1  # the refused folder left no trace
    finally:
        knowledge.forget_added_folders()
    assert "toy" not in [p.id for p in knowledge.papers()]


@pytest.mark.slow
def test_the_plan_follows_reps_and_datasets_and_projects_compute_from_stored_units():
    proc = run_afr("reproduce", "larf", "--plan", "--reps", "120", "--datasets", "Wine")
    assert proc.returncode == 0, proc.stderr
    rows = {
        line.split("  ")[0].strip() + "|" + line.split("results/")[1].split()[0]: line
        for line in proc.stdout.splitlines()
        if "results/" in line
    }
    assert re.search(r"\s1100\s+20\s+[\d.]+ CPU-min", rows["larf|larf_rf"])  # Wine, 1 base, reps 100-119
    assert "skipped: none of --datasets" in rows["larf|larf_leave_self_out"]


def test_with_datasets_an_output_drawn_for_another_dataset_is_skipped_and_said(tmp_path):
    from afr_cli.catalogue.knowledge import OutputSpec
    from afr_cli.reproduction.pipeline import Target, draw_outputs

    other = OutputSpec((("table", "--results", "{root}/nowhere", "--dataset", "Wine"),), stdout="{root}/out/wine.md")
    chosen = OutputSpec((("models",),), stdout="{root}/out/models.txt")
    paper = type("P", (), {"outputs": (other, chosen), "data_file": "toy/paper.yaml"})()
    lines = []
    failed = draw_outputs([Target(paper, ())], tmp_path, None, echo=lines.append, datasets=["Yacht"])
    assert failed == [] and lines[0] == "skipped toy/paper.yaml: outputs[0]: it draws Wine, not among --datasets"
    assert (tmp_path / "out" / "models.txt").is_file() and not (tmp_path / "out" / "wine.md").exists()
    # without --datasets it would run, but the store it reads is not under the root (a partial
    # target): skipped in one line naming the store, not a failure after the run
    lines.clear()
    assert draw_outputs([Target(paper, ())], tmp_path, None, echo=lines.append) == []
    assert (
        lines[0] == f"skipped toy/paper.yaml: outputs[0]: {tmp_path} lacks the store it reads, {tmp_path / 'nowhere'}"
    )


def test_a_study_failing_on_a_partial_scratch_root_is_skipped_but_raises_under_results(tmp_path, monkeypatch):
    """`afr reproduce satrf --datasets Concrete --root DIR` once crashed with a traceback: a study
    indexed a dataset the scratch stores do not hold. Under a scratch root it is left out and said;
    under the checkout's results/ a failing study still raises. A results/ in another working
    directory is a scratch root (it once counted as the checkout's, and the papers' studies failed there)."""
    from afr_cli.catalogue.knowledge import ExperimentSpec, Study
    from afr_cli.publish import studies
    from afr_cli.publish.context import ReportContext

    def lacks_a_dataset(paper, study, ctx, refresh=False):
        raise KeyError("Diabetes")

    monkeypatch.setattr(studies, "study_frame", lacks_a_dataset)
    monkeypatch.setattr(studies, "has_results", lambda directory: True)  # the paper's store is under every root
    paper = type(
        "P",
        (),
        {
            "id": "toy",
            "experiments": (ExperimentSpec(Path("toy.yaml"), 1, out="s"),),
            "studies": (Study(paper="toy", name="tail", function="tail", block="toy:tail"),),
        },
    )()
    said = []
    assert studies.study_blocks((paper,), ReportContext(tmp_path / "scratch"), echo=said.append) == ({}, [])
    assert said == [
        f"skipped study toy:toy:tail: the stores under {tmp_path / 'scratch'} lack what it reads (KeyError: 'Diabetes')"
    ]
    monkeypatch.chdir(tmp_path)
    said.clear()
    assert studies.study_blocks((paper,), ReportContext(Path("results")), echo=said.append) == ({}, [])
    assert len(said) == 1
    with pytest.raises(KeyError):
        studies.study_blocks((paper,), ReportContext(ROOT / "results"), echo=said.append)


def test_only_the_roots_own_papers_studies_run(tmp_path, monkeypatch):
    """A root holding none of a paper's stores runs none of its studies: every `afr reproduce --root R`
    of a toy paper once printed two 'skipped study larf:...' lines (LARF's studies read files R never had)."""
    from afr_cli.catalogue.knowledge import ExperimentSpec, Study
    from afr_cli.publish import studies
    from afr_cli.publish.context import ReportContext

    ran = []
    monkeypatch.setattr(studies, "study_frame", lambda paper, study, ctx, refresh=False: ran.append(paper.id))
    study = Study(paper="x", name="s", function="s", block="x:s")
    held = type(
        "P", (), {"id": "held", "experiments": (ExperimentSpec(Path("c.yaml"), 1, out="mine"),), "studies": (study,)}
    )()
    other = type(
        "P", (), {"id": "other", "experiments": (ExperimentSpec(Path("c.yaml"), 1, out="theirs"),), "studies": (study,)}
    )()
    monkeypatch.setattr(studies, "has_results", lambda directory: Path(directory).name == "mine")
    said = []
    assert [p.id for p in studies.own_papers((held, other), tmp_path)] == ["held"]
    studies.study_blocks((held, other), ReportContext(tmp_path), echo=said.append)
    assert ran == ["held"] and said == []


def test_the_checkouts_results_is_the_project_root_from_any_working_directory(tmp_path, monkeypatch):
    from afr_cli.publish.pages import is_project_results

    monkeypatch.chdir(tmp_path)
    assert is_project_results(ROOT / "results")
    assert not is_project_results(Path("results"))  # a user's ./results elsewhere: a scratch root


def test_the_root_is_refused_in_one_line_when_empty_a_file_or_below_a_file(tmp_path):
    from afr_cli.errors import AfrInputError
    from afr_cli.reproduction.checks import check_root

    (tmp_path / "f").write_text("x")
    for value, needle in (
        ("", "empty"),
        ("  ", "empty"),
        (str(tmp_path / "f"), "is a file"),
        (str(tmp_path / "f" / "deeper" / "r"), "cannot be made"),
    ):
        with pytest.raises(AfrInputError, match=needle):
            check_root(value)
    assert check_root(str(tmp_path / "new" / "r")) == tmp_path / "new" / "r"  # creatable: fine
    assert not (tmp_path / "new").exists()  # and nothing made by checking


def test_a_report_missing_a_store_under_the_root_is_skipped_in_one_line(tmp_path, monkeypatch):
    from afr_cli.catalogue.knowledge import Report
    from afr_cli.publish import frames

    both = Report("both", "toy", ("a", "b"), ())
    half = Report("half", "toy", ("a", "c"), ())
    none = Report("none", "toy", ("c", "d"), ())
    monkeypatch.setattr(frames, "report_by_name", lambda: {r.name: r for r in (both, half, none)})
    monkeypatch.setattr(frames, "has_results", lambda directory: Path(directory).name in ("a", "b"))
    said = []
    assert [r.name for r in frames.chosen_reports(None, tmp_path, said.append)] == ["both"]
    assert said == [f"skipped report half: {tmp_path} lacks its store {tmp_path / 'c'}"]  # "none" is not this root's
    said.clear()
    assert frames.chosen_reports(["none"], tmp_path, said.append) == []  # named: said even with no store there
    assert said == [f"skipped report none: {tmp_path} lacks its stores {tmp_path / 'c'}, {tmp_path / 'd'}"]
    assert [r.name for r in frames.chosen_reports(None)] == ["both", "half", "none"]  # no root: every report


def _two_experiment_toy(tmp_path: Path) -> Path:
    """The toy paper with a second experiment (Friedman 2, its own store) in the same report."""
    folder = write_toy(tmp_path)
    text = (folder / "paper.yaml").read_text()
    text = text.replace("stores: [toy_run]", "stores: [toy_run, toy_two]")
    text = text.replace(
        '  - {config: toy.yaml, reps: 2, label: "eps-ABRF on Friedman 1"}',
        '  - {config: toy.yaml, reps: 2, label: "eps-ABRF on Friedman 1"}\n'
        '  - {config: two.yaml, reps: 1, label: "Friedman 2"}',
    )
    (folder / "paper.yaml").write_text(text)
    (folder / "two.yaml").write_text(
        (folder / "toy.yaml")
        .read_text()
        .replace("name: toy_run", "name: toy_two")
        .replace("[Friedman1]", "[Friedman2]")
    )
    return folder


@pytest.mark.slow
def test_a_partial_target_builds_what_it_can_and_skips_a_report_in_one_line_from_any_directory(tmp_path):
    """`--datasets` leaves one of a report's two stores unmade: the run exits 0, its store is
    readable, the report is skipped in one line naming the missing store, and run from a directory
    that is not the checkout (default root ./results) no other paper's study runs."""
    folder = _two_experiment_toy(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = run_afr("reproduce", str(folder), "--datasets", "Friedman1", "--jobs", "1", "--quiet", "--no-site", cwd=work)
    assert proc.returncode == 0, proc.stderr
    root = work / "results"
    from afr_cli.store import load_results

    assert sorted(load_results(root / "toy_run")["rep"].unique()) == [0, 1] and not (root / "toy_two").exists()
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("skipped")]
    assert lines == [f"skipped report toy: results lacks its store {Path('results') / 'toy_two'}"], lines
    assert "skipped study" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (root / "toy" / "paper-toy-1.md").exists()  # the skipped report wrote nothing

"""The project-level generated blocks (afr_cli/publish/project_blocks.py): the numbers docs/ and
results/README.md quote about the whole project come from the committed files, render the same
from a copy of the results root, and sit in pages that `afr report` scans."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from afr_cli.catalogue.printed_tests import recompute_published_ttests
from afr_cli.publish.context import ReportContext
from afr_cli.publish.pages import BEGIN, page_files
from afr_cli.publish.project_blocks import (
    COMPUTE_BLOCK,
    PREPROCESSING_BLOCK,
    SIZES_BLOCK,
    TTESTS_BLOCK,
    compute_block,
    export_sizes_block,
    preprocessing_block,
    preprocessing_notes_block,
    project_blocks,
    published_ttests_block,
)
from afr_cli.store.status import store_status

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"


def test_every_project_block_is_quoted_by_a_scanned_page(monkeypatch):
    monkeypatch.chdir(REPO)  # the project's own results root: its pages, never scratch copies
    pages = page_files(Path("results"))
    assert REPO / "docs" / "reproduction.md" in [p.resolve() for p in pages]
    assert (REPO / "results" / "README.md") in [p.resolve() for p in pages]
    text = "".join(p.read_text(encoding="utf-8") for p in pages)
    for name in project_blocks(ReportContext(RESULTS)):
        assert BEGIN.format(name=name) in text, name


def test_the_ttests_block_has_every_published_test_and_the_count():
    tests = recompute_published_ttests()
    block = published_ttests_block()
    assert block.startswith(f"{int(tests['agrees'].sum())} of {len(tests)} published t-tests reproduce")
    assert len([line for line in block.splitlines() if re.match(r"\| (satrf|larf|agboost):", line)]) == len(tests)


def test_sizes_and_compute_render_the_same_from_a_copy_of_the_root(tmp_path):
    root = tmp_path / "elsewhere"
    for name in ("abrf_rf", "dm_soft"):
        shutil.copytree(RESULTS / name / "export", root / name / "export")
    sizes = export_sizes_block(root)
    assert str(tmp_path) not in sizes
    assert sizes.splitlines()[2].startswith("| abrf_rf ") and sizes.splitlines()[3].startswith("| dm_soft ")
    compute = compute_block(ReportContext(root))
    rows = [line for line in compute.splitlines()[2:] if not line.startswith("| **all**")]
    assert [line.split("|")[3].strip() for line in rows] == ["abrf_rf", "dm_soft"]
    minutes = [float(line.split("|")[6]) for line in rows]
    status = store_status(root / "abrf_rf")  # stored at the declared 100 repetitions
    recorded, source = status.recorded_compute()
    assert minutes[0] == round(recorded, 1) and rows[0].split("|")[7].strip() == source
    if source == "CPU":  # recorded process time, not the wall seconds beside it
        assert minutes[0] == round(status.cpu_minutes, 1) and status.cpu_units == status.units
    total = re.search(r"\*\*([\d.]+)\*\*", compute.splitlines()[-1]).group(1)
    assert abs(float(total) - sum(minutes)) < 0.11


def test_the_preprocessing_block_quotes_the_committed_report_and_is_absent_without_it(tmp_path):
    block = preprocessing_block(RESULTS)
    report = (RESULTS / "fidelity" / "preprocessing.md").read_text(encoding="utf-8")
    totals = [line for line in report.splitlines() if line.startswith("| none ")][0]
    assert totals in block
    assert preprocessing_block(tmp_path) is None
    assert PREPROCESSING_BLOCK not in project_blocks(ReportContext(tmp_path))
    assert {TTESTS_BLOCK, SIZES_BLOCK, COMPUTE_BLOCK} <= set(project_blocks(ReportContext(tmp_path)))


def test_the_preprocessing_notes_come_from_the_studys_committed_cells():
    notes = preprocessing_notes_block(Path(__file__).resolve().parents[1] / "results")
    assert "the lead rests on 4 printed values, all RF" in notes
    assert "raw against standardised is 3-0, p = 0.25" in notes and "6-0, p = 0.031" in notes
    assert "4 of the 6 wins are on Concrete" in notes

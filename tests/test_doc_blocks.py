"""The generated blocks behind docs/'s numbers: the code's constants
(afr_cli/publish/code_blocks.py), the export format's size records (format_blocks.py) and the
fidelity checks of docs/reproduction.md (fidelity_blocks.py). Each renders what its source holds
(a module constant, a record, a committed report or export), and sits on the page that names it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd

from afr_cli.publish.bench_blocks import time_block
from afr_cli.publish.code_blocks import (
    EXPORT_CONSTANTS,
    LIMIT_CONSTANTS,
    SOLVER_CONSTANTS,
    code_blocks,
    regress_constants_block,
    solver_constants_block,
)
from afr_cli.publish.context import ReportContext
from afr_cli.publish.fidelity_blocks import (
    RAW_FEATURES_BLOCK,
    REP_COUNT_BLOCK,
    fidelity_blocks,
    raw_features_block,
    rep_count_block,
)
from afr_cli.publish.format_blocks import FORMATS_BLOCK, format_blocks
from afr_cli.publish.pages import BEGIN
from afr_cli.solvers import dense_qp
from afr_cli.store.bench_records import TRANSCRIBED, write_record
from afr_cli.tables import regress

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
DOCS = REPO / "docs"


def _docs_text() -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


def test_every_block_sits_on_a_page_and_every_constant_is_named_there():
    text = _docs_text()
    names = [*code_blocks(RESULTS), *format_blocks(RESULTS), *fidelity_blocks(ReportContext(RESULTS))]
    assert FORMATS_BLOCK in names and REP_COUNT_BLOCK in names and RAW_FEATURES_BLOCK in names
    for name in names:
        assert BEGIN.format(name=name) in text, name
    for constant in (*SOLVER_CONSTANTS, *LIMIT_CONSTANTS, *EXPORT_CONSTANTS):
        assert f"`{constant.name}`" in text, constant.name  # the prose names it; the block shows its value


def test_the_constants_block_shows_the_modules_values(monkeypatch):
    assert "| `afr_cli.solvers.dense_qp.DAQP_RIDGE` | 1e-9 |" in solver_constants_block()
    monkeypatch.setattr(dense_qp, "DAQP_RIDGE", 2.5e-8)
    assert "| `afr_cli.solvers.dense_qp.DAQP_RIDGE` | 2.5e-8 |" in solver_constants_block()


def test_the_regress_block_counts_the_golden_files_and_shows_the_tolerances():
    block = regress_constants_block(RESULTS)
    for name in ("golden.csv", "golden_agboost.csv"):
        assert f"`results/regress/{name}`: {len(pd.read_csv(RESULTS / 'regress' / name))} golden values" in block
    assert f"| {regress.BASELINE_TOLERANCE:g} | absolute |" in block
    assert f"| {regress.TOLERANCES['mae'][1] * 100:g} % | relative |" in block


def test_the_formats_block_renders_every_record_row(tmp_path):
    assert format_blocks(tmp_path) == {}
    write_record(
        tmp_path,
        "formats",
        "a",
        "afr export --grid-digits 3",
        {"rows": [["x → y", "2 MB", "1 MB", ""]]},
        date="2026-01-01 00:00 UTC",
        source=TRANSCRIBED,
        host={"cores": 2},
        note="as quoted",
    )
    block = format_blocks(tmp_path)[FORMATS_BLOCK]
    assert "| x → y | 2 MB | 1 MB | — |" in block
    assert "`afr export --grid-digits 3`, 2026-01-01 00:00 UTC; transcribed: as quoted" in block


def test_a_time_record_without_wall_time_shows_a_dash():
    record = {"command": "afr regress", "result": {"wall_s": None, "cpu_s": 240.0}}
    assert "| `afr regress` | — | 4.0 |" in time_block([record])


def _summary(path: Path, dataset: str, model: str) -> float:
    rows = pd.read_csv(path)
    return float(
        rows[(rows.dataset == dataset) & (rows.base == "RF") & (rows.model == model) & (rows.metric == "r2")][
            "mean"
        ].iloc[0]
    )


def test_the_rep_count_block_agrees_with_the_committed_summaries():
    block = rep_count_block(ReportContext(RESULTS))
    all_reps = _summary(RESULTS / "satrf_rf" / "summary.csv", "Friedman2", "rf")
    ten = _summary(RESULTS / "satrf_rf" / "summary-reps10.csv", "Friedman2", "rf")
    assert f"RF {all_reps:.3f} on Friedman 2" in block and f"{ten:.3f} over repetitions 0-9" in block
    assert "printed 0.841" in block  # SAT-RF Table 2's RF on Friedman 2


def test_the_raw_features_block_agrees_with_the_committed_reports_and_summaries():
    block = raw_features_block(ReportContext(RESULTS))
    for scaling, word in (("none", "is"), ("standard", "against")):
        cells = pd.concat(
            pd.read_csv(RESULTS / "satrf_softmax" / scaling / f"paper-satrf-{t}.csv") for t in range(2, 8)
        )
        cells = cells[(cells.model == "softmax") & (cells.metric == "r2")]
        assert len(cells) == 66
        assert re.search(rf"{word} {cells['diff'].abs().mean():.3f}", block), scaling
    for dataset, shown in (("Friedman3", "Friedman 3"), ("Sparse", "Sparse"), ("Airfoil", "Airfoil")):
        standard = _summary(RESULTS / "larf_rf" / "summary-reps10.csv", dataset, "em-w-larf")
        assert re.search(rf"{shown} \d\.\d{{3}} \(paper \d\.\d{{3}}, standardised {standard:.3f}\)", block), dataset


def test_the_raw_features_block_is_left_out_where_a_root_lacks_a_dataset_it_quotes(monkeypatch):
    """A reproduction on a subset of the datasets (afr reproduce --datasets) holds no Friedman 3 say:
    the block is left out instead of ending the report in a KeyError."""
    from afr_cli.publish import fidelity_blocks as blocks

    assert raw_features_block(ReportContext(RESULTS)) is not None
    monkeypatch.setattr(blocks, "LARF_DATASETS", (*blocks.LARF_DATASETS, "Nowhere"))
    assert raw_features_block(ReportContext(RESULTS)) is None
    monkeypatch.undo()
    table, datasets = blocks.SOFTMAX_SHOWN
    monkeypatch.setattr(blocks, "SOFTMAX_SHOWN", (table, (*datasets, "Nowhere")))
    assert raw_features_block(ReportContext(RESULTS)) is None


def test_the_fidelity_blocks_leave_out_what_a_root_lacks(tmp_path):
    assert fidelity_blocks(ReportContext(tmp_path)) == {}
    shutil.copytree(RESULTS / "satrf_rf", tmp_path / "satrf_rf")
    assert list(fidelity_blocks(ReportContext(tmp_path))) == [REP_COUNT_BLOCK]

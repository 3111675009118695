"""The numbers the Decision Machines and LARF pages quoted in prose, now studies of their folders
(afr_cli/papers/dm/studies.py, afr_cli/papers/larf/studies.py): each is computed from the committed
stores and reports, equals what the page typed by hand before, and is what the page shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import committed_study_blocks

from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.publish.frames import compute_words
from afr_cli.publish.pages import blocks_in
from afr_cli.store.status import store_status

RESULTS = Path(__file__).resolve().parents[1] / "results"


def recorded(store: str) -> str:
    """A committed store's compute as the studies word it (recorded CPU, else wall)."""
    return compute_words(*store_status(RESULTS / store).recorded_compute())


REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dm_blocks() -> dict[str, str]:
    return committed_study_blocks("dm")


@pytest.fixture(scope="module")
def larf_blocks() -> dict[str, str]:
    return committed_study_blocks("larf")


def _page(paper_id: str) -> dict[str, str]:
    return blocks_in((REPO / "afr_cli" / "papers" / paper_id / "page.md").read_text(encoding="utf-8"))


def test_dm_soft_comparisons_are_the_ones_the_page_typed(dm_blocks):
    table = dm_blocks["study:dm:soft_comparisons"]
    # every stored repetition (the page's former hand-typed table) and repetitions 0-9 (its aside)
    assert "| the forest | RF | all 100 | +0.047 | 0.011 | [+0.014, +0.081] | 10 / 0 / 1 (worse on Wine) |" in table
    assert "| the forest | ERT | all 100 | +0.055 | 0.013 | [+0.015, +0.096] | 8 / 2 / 1 (worse on Diabetes) |" in table
    assert "| eps-ABRF | RF | all 100 | +0.022 | 0.054 |" in table
    assert (
        "| eps-ABRF | ERT | all 100 | +0.006 | 0.23 | [-0.004, +0.016] | 5 / 4 / 2 (worse on Sparse, Airfoil) |"
        in table
    )
    assert (
        "| the forest | RF | 0-9 | +0.040 | 0.02 |" in table and "| the forest | ERT | 0-9 | +0.044 | 0.02 |" in table
    )
    assert "| eps-ABRF | RF | 0-9 | +0.023 | 0.12 |" in table and "| eps-ABRF | ERT | 0-9 | +0.006 | 0.35 |" in table


def test_dm_soft_store_and_solves(dm_blocks):
    text = dm_blocks["study:dm:store_solves"]
    assert text.startswith("`results/dm_soft` holds 100 repetitions of 11 datasets: ")
    assert f"100 repetitions of 11 datasets: 2,200 units, {recorded('dm_soft')} (`afr status results/dm_soft`)" in text
    assert "246,343 of its 246,400 QPs were solved by DAQP; 57 failed" in text
    assert "(9 to CLARABEL, 48 to PIQP), no solve failed" in text


def test_larf_prose_studies_give_the_numbers_the_page_typed(larf_blocks):
    assert (
        f"record {recorded('larf_rf')} and {recorded('larf_ert')} (RF, ERT"
        in larf_blocks["study:larf:compute_per_base"]
    )
    holm = larf_blocks["study:larf:holm_family"]
    assert "over its 19 rows" in holm and "15 rows have p < 0.05 alone, 4 after the adjustment" in holm
    assert "(p = 0.00445 and 0.0133) becomes 0.067 and 0.13" in holm
    assert (
        "p = 0.042 (was 0.143 without the correction; Iman-Davenport p = 0.034, was 0.14)"
        in larf_blocks["study:larf:table9_ties"]
    )
    ties = larf_blocks["study:larf:table9_ties"]
    assert "Nemenyi finds no pair apart there" in ties
    assert "Each of the other 11 Friedman verdicts (the tables' groups, ours and the paper's) stays on the same" in ties
    abrf = larf_blocks["study:larf:larf_vs_abrf"]
    assert "The paper's p = 0.00067 / 0.00029 rest on a LARF column about 0.035 above ours" in abrf
    assert "4 of 11 cells within 0.02 on RF" in abrf and "(+0.0205 RF, +0.0097 ERT)" in abrf
    assert "+0.028 (p = 0.0045) and +0.022 (p = 0.013)" in abrf and "58 % and 57 % of the paper's effect" in abrf


@pytest.mark.parametrize("paper_id, fixture", [("dm", "dm_blocks"), ("larf", "larf_blocks")])
def test_the_pages_show_the_studies_as_computed(paper_id, fixture, request):
    computed, shown = request.getfixturevalue(fixture), _page(paper_id)
    for name, body in computed.items():
        assert shown.get(name, "").strip() == body.strip(), name


def test_the_larf_page_shows_the_recorded_unit_where_the_two_solvers_disagree():
    """``afr bench unit configs/larf_rf.yaml --dataset Regression --rep 34 --against OSQP --record``:
    the |ΔR²| between AUTO's and OSQP's answers the page typed (0.498) is the record's, rendered."""
    name = "bench:unit:larf_rf-Regression-rep34-OSQP"
    record = json.loads((REPO / "results" / "bench" / "unit" / "larf_rf-Regression-rep34-OSQP.json").read_text())
    assert round(record["result"]["max_abs_dr2_between"], 3) == 0.498
    assert _page("larf")[name].strip() == bench_blocks(REPO / "results")[name].strip()


def test_larf_regen_under_auto_diffs_the_kept_osqp_rows_against_the_stores(larf_blocks):
    """The moves the page once typed from ``afr diff OLD NEW`` (up to 0.50 R² in one repetition,
    cell means -0.037 and -0.028, leave-self-out 3.0e-8), now computed from the kept OSQP rows; and
    the same diff as ``afr diff`` gives on the stores (``diff_frames`` is ``diff_stores``' core)."""
    table = larf_blocks["study:larf:regen_under_auto"]
    assert "| larf_rf | 100 | 77 | 27 | 0.5 (Regression em-w-larf) | -0.037 (Regression em-larf) | 2-84 |" in table
    assert "| larf_ert | 100 | 77 | 31 | 0.52 (Regression em-larf) | -0.028 (Sparse em-w-larf) | 2-89 |" in table
    assert "| larf_leave_self_out | 20 | 9 | 0 | 3e-08 (Friedman3 em-larf-loo) |" in table
    assert "\\|ΔR²\\|" in table.splitlines()[0]  # the bars of the header are escaped: the columns stay put


def test_diff_frames_on_a_store_against_itself_moves_nothing():
    from afr_cli.store import open_existing
    from afr_cli.store.diff import diff_frames, diff_stores

    rows = open_existing(REPO / "results" / "larf_leave_self_out").frame("results")
    cells = diff_frames(rows, rows.copy()).cells
    assert (cells.max_abs == 0).all() and (cells.params_changed == 0).all() and len(cells) == 9
    same = diff_stores(REPO / "results" / "larf_leave_self_out", REPO / "results" / "larf_leave_self_out").cells
    assert same.equals(cells)


def test_the_larf_small_sets_sentence_counts_the_gap_column(larf_blocks):
    """ "Over every stored repetition ... stays below the paper's number on all 3 sets" is counted
    from the table's "gap, all" column (it was typed as "over all 100 repetitions ... on all three sets")."""
    block = larf_blocks["study:larf:small_sets"]
    lines = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| dataset")]
    gaps = [float(line.strip("|").split("|")[-1]) for line in lines]
    reps = {line.strip("|").split("|")[6].strip() for line in lines}
    below = sum(g < 0 for g in gaps)
    assert len(gaps) == 3 and reps == {"100"}
    from afr_cli.publish.page_words import how_many

    assert (
        f"Over every stored repetition (100 per set) our mean stays below the paper's number on {how_many(below, 3)} "
        "sets" in block
    )


def test_the_tie_correction_sentence_counts_what_crosses_the_level():
    """The LARF page's "every other Friedman verdict stays on the same side" was typed; it is now
    counted from the tests, so a verdict the correction moves is named instead."""
    import pandas as pd

    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.context import load_studies

    text = load_studies(paper("larf")).table9_ties_text
    row = {"group": "", "metric": "r2", "alpha": 0.05, "models": 4, "Nemenyi pairs apart": 0}
    row.update({"Iman-Davenport p": 0.03, "Iman-Davenport p without the correction": 0.1})
    frame = pd.DataFrame(
        [
            {**row, "table": "larf:9", "side": "paper", "p": 0.2, "p without the correction": 0.3},
            {**row, "table": "larf:8", "side": "ours", "p": 0.04, "p without the correction": 0.06},
            {**row, "table": "larf:8", "side": "paper", "p": 0.001, "p without the correction": 0.002},
        ]
    )
    words = text(frame)
    assert "do not differ significantly, p = 0.2" in words and "sits less easily" not in words
    assert "Of the other 2 Friedman verdicts, the correction moves 1 across the level: larf:8 (ours)." in words

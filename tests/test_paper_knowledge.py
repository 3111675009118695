"""The papers' data files (afr_cli/papers/*/paper.yaml): tables, aliases, parameter rows, axes, reports."""

from __future__ import annotations

import pandas as pd
import pytest

from afr_cli.errors import AfrInputError
from afr_cli.papers import published_table
from afr_cli.papers.knowledge import paper, param_rows, parse_paper, reports, table_info
from afr_cli.stats import ttest_sources


def test_every_claim_report_and_ttest_of_the_data_files_is_well_formed():
    known_reports = {r.name for r in reports()}
    for pid in ("satrf", "larf", "agboost", "robust_rf"):
        p = paper(pid)
        assert p.claims, pid
        for claim in p.claims:
            assert claim["quote"] and claim["test"] in ("wins", "best", "ttest", "equal", "surface_peak",
                                                        "figure_wins", "gain_contrast", "not_checked")
            assert claim["test"] != "not_checked" or claim["reason"].strip(), claim["id"]
            assert claim.get("report", "store") in known_reports | {"store"}, claim["id"]
        for report in p.reports:
            for spec in report.papers:
                published_table(spec)  # every table a report names exists
    assert len(ttest_sources()) == 9


def test_agboost_and_robust_tables_answer_to_their_arabic_numbers():
    assert table_info("agboost:2").spec == "agboost:II" and table_info("AGBOOST:3").spec == "agboost:III"
    assert table_info("robust_rf:1").spec == "robust_rf:I"
    assert len(published_table("agboost:2")) == len(published_table("agboost:II"))
    assert {"eps_opt", "delta_opt"} <= set(published_table("agboost:III").metric)
    assert param_rows()["delta_opt"] == "delta" and param_rows()["eps_opt"] == "eps"


def test_a_bad_data_file_is_a_one_line_error_naming_the_key():
    with pytest.raises(AfrInputError, match="x.yaml: colour: unknown key; allowed:"):
        parse_paper({"id": "x", "published": "x.csv", "colour": "red"}, "x.yaml")
    with pytest.raises(AfrInputError, match="x.yaml: published: missing"):
        parse_paper({"id": "x"}, "x.yaml")


def test_a_new_familys_parameter_gets_its_opt_column_without_code_changes(monkeypatch):
    from afr_cli import models
    from afr_cli.models.base import MIXING, Param
    from afr_cli.tables import summary_wide

    class Wobble(models.EpsABRFFamily):
        name, summary = "wobble", "eps-ABRF with a wobble"
        params = (*models.EpsABRFFamily.params, Param("wobble", MIXING, 0.5, 0.0, 1.0))

    monkeypatch.setitem(models.FAMILIES, "wobble", Wobble())
    rows = [{"dataset": "Wine", "base": "RF", "model": "mine", "rep": r, "r2": 0.4, "mae": 1.0, "rmse": 1.0,
             "params": {"eps": 0.5, "wobble": w}, "selection": "inner-cv"} for r, w in enumerate((0.1, 0.9, 0.9))]
    wide = summary_wide(pd.DataFrame(rows), "r2")
    assert list(wide["wobble_opt (mine)"]) == [0.9]


def test_robust_table_groups_ours_by_training_fraction_and_noise():
    from afr_cli.tables import paper_comparison, summary_long

    rows = [{"dataset": "Boston", "base": "RF", "model": m, "rep": r, "r2": 0.8, "mae": 3.0, "rmse": rmse + r * 0.01,
             "params": {}, "selection": "inner-cv", "train_fraction": frac, "noise_eta": eta}
            for m in ("rf", "robust-rf-a0.2") for r in range(2) for frac in (0.15, 0.95) for eta in (0.0, 0.5)
            for rmse in [4.7 if m == "rf" else 4.6]]
    results = pd.DataFrame(rows)
    long = summary_long(results)
    assert {"train_fraction", "noise_eta"} <= set(long.columns) and len(long) == 2 * 4 * 3
    cells = paper_comparison(results, "robust_rf:1")
    hit = cells[(cells.dataset == "Boston [train_fraction=15, noise_eta=0]") & (cells.model == "rf")].iloc[0]
    assert hit["ours"] == pytest.approx(4.705) and hit["published"] == 4.787
    missing = cells[cells.dataset == "Boston [train_fraction=25, noise_eta=0]"]
    assert missing["ours"].isna().all()
    from afr_cli.tables import compare_models

    paired = compare_models(results, "rf", "robust-rf-a0.2", "rmse").bases[0]
    assert len(paired.per_dataset) == 4 and paired.record.wins and not paired.record.losses


def test_a_report_compares_on_its_papers_own_metric():
    assert {r.name: r.compare_metric for r in reports()}["robust_rf"] == "rmse"  # Table I prints RMSE
    assert {r.name: r.compare_metric for r in reports()}["satrf"] == "r2"
    with pytest.raises(AfrInputError, match="x.yaml: reports: compare_metric: 'auc' is not allowed; allowed: r2, mae, rmse"):
        parse_paper({"id": "x", "order": 9, "title": "t", "text": "t", "published": "x.csv", "reps": 1,
                     "models": [], "bases": [], "reports": [{"name": "x", "stores": [], "compare_metric": "auc"}]},
                    "x.yaml")

"""Summaries, rendering, published-table comparison and B-against-A tests on small built frames."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from afr_cli.analysis.stats import paired_ttest, wilcoxon_test
from afr_cli.errors import AfrInputError
from afr_cli.tables import (
    BEST_TEST_NOTE,
    compare_models,
    mode_value,
    paper_comparison,
    render_model_comparison,
    render_paper_comparison,
    render_summary,
    summary_long,
    summary_wide,
)
from afr_cli.tables.compare import comparison_dict

# (dataset, model) -> r2 per rep; mae is 100 × (1 − r2) so lower error goes with higher r2.
R2 = {
    ("Wine", "rf"): [0.43, 0.44, 0.45],
    ("Wine", "eps-abrf"): [0.42, 0.42, 0.42],
    ("Diabetes", "rf"): [0.40, 0.41, 0.42],
    ("Diabetes", "eps-abrf"): [0.42, 0.43, 0.44],
}
EPS = [0.25, 0.5, 0.25]
TAU = [10.0, 1.0, 0.1]


def _results(base: str = "RF", selection: str = "inner-cv", r2=R2) -> pd.DataFrame:
    rows = []
    for (dataset, model), values in r2.items():
        for rep, value in enumerate(values):
            params = {"eps": EPS[rep], "tau": TAU[rep]} if model != "rf" else {}
            rows.append(
                {
                    "dataset": dataset,
                    "base": base,
                    "model": model,
                    "rep": rep,
                    "r2": value,
                    "mae": 100 * (1 - value),
                    "rmse": 120 * (1 - value),
                    "params": params,
                    "selection": selection,
                }
            )
    return pd.DataFrame(rows)


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=False)


def test_summary_long_values_and_order():
    long = summary_long(_results())
    assert list(long.columns) == ["dataset", "base", "model", "metric", "mean", "std", "n_reps"]
    assert list(long["dataset"].unique()) == ["Diabetes", "Wine"]  # paper order, not input order
    assert list(long["model"].unique()) == ["rf", "eps-abrf"]
    row = long[(long["dataset"] == "Diabetes") & (long["model"] == "rf") & (long["metric"] == "r2")].iloc[0]
    assert row["mean"] == pytest.approx(0.41) and row["std"] == pytest.approx(0.01) and row["n_reps"] == 3
    assert len(long) == 2 * 2 * 3


def test_unknown_datasets_sort_after_known_alphabetically():
    r2 = {("Zeta", "rf"): [0.1], ("Airfoil", "rf"): [0.2], ("Alpha", "rf"): [0.3], ("Diabetes", "rf"): [0.4]}
    assert list(summary_wide(_results(r2=r2), "r2")["dataset"]) == ["Diabetes", "Airfoil", "Alpha", "Zeta"]


def test_mode_ties_go_to_the_smallest():
    assert mode_value([0.25, 0.5, 0.25]) == 0.25
    assert mode_value([10.0, 1.0, 0.1]) == 0.1


def test_summary_wide_columns_and_params():
    wide = summary_wide(_results(), "r2")
    assert list(wide.columns) == ["dataset", "rf", "eps-abrf", "eps_opt (eps-abrf)", "tau_opt (eps-abrf)"]
    diabetes = wide[wide["dataset"] == "Diabetes"].iloc[0]
    assert diabetes["eps-abrf"] == pytest.approx(0.43)
    assert diabetes["eps_opt (eps-abrf)"] == 0.25 and diabetes["tau_opt (eps-abrf)"] == 0.1
    with_std = summary_wide(_results(), "r2", with_std=True)
    assert with_std.loc[with_std["dataset"] == "Diabetes", "rf"].item() == "0.410 ± 0.010"


def test_summary_wide_groups_columns_by_base():
    both = pd.concat([_results("RF"), _results("ERT")], ignore_index=True)
    columns = list(summary_wide(both, "r2").columns)
    assert columns[:5] == ["dataset", "rf (RF)", "eps-abrf (RF)", "eps_opt (eps-abrf, RF)", "tau_opt (eps-abrf, RF)"]
    assert columns[5] == "rf (ERT)"


def test_render_bolds_the_best_per_row():
    md = render_summary(_results(), "r2", "md")
    diabetes = next(line for line in md.splitlines() if line.startswith("| Diabetes"))
    assert "**0.430**" in diabetes and "**0.410**" not in diabetes and "0.410" in diabetes
    wine = next(line for line in md.splitlines() if line.startswith("| Wine"))
    assert "**0.440**" in wine
    mae = render_summary(_results(), "mae", "md")  # lower is better: eps-abrf on Diabetes
    assert "**57.00**" in next(line for line in mae.splitlines() if line.startswith("| Diabetes"))
    latex = render_summary(_results(), "r2", "latex")
    assert r"\textbf{0.430}" in latex and r"\begin{tabular}" in latex


def test_best_test_selection_is_noted():
    assert BEST_TEST_NOTE not in render_summary(_results(), "r2", "md")
    assert BEST_TEST_NOTE in render_summary(_results(selection="best-test"), "r2", "md")


def test_summary_csv_is_the_long_form():
    csv = render_summary(_results(), None, "csv")
    assert csv.splitlines()[0] == "dataset,base,model,metric,mean,std,n_reps"
    assert len(_csv(csv)) == 12
    assert set(_csv(render_summary(_results(), "mae", "csv"))["metric"]) == {"mae"}


def _satrf9_results() -> pd.DataFrame:
    r2 = {("Diabetes", "eps-abrf"): [0.42, 0.43, 0.44], ("Wine", "eps-abrf"): [0.39, 0.40, 0.41]}
    return pd.concat([_results("RF", r2=r2), _results("ERT", r2={("Diabetes", "eps-abrf"): [0.44]})], ignore_index=True)


def test_paper_comparison_cells():
    comparison = paper_comparison(_satrf9_results(), "satrf:9")
    assert list(comparison.columns) == ["dataset", "model", "metric", "ours", "published", "diff", "within_tol"]
    assert len(comparison) == 44
    cell = comparison[(comparison["dataset"] == "Diabetes") & (comparison["model"] == "eps-abrf (RF)")].iloc[0]
    assert cell["published"] == 0.424 and cell["ours"] == pytest.approx(0.43)
    assert cell["diff"] == pytest.approx(0.006) and cell["within_tol"] is True
    wine = comparison[(comparison["dataset"] == "Wine") & (comparison["model"] == "eps-abrf (RF)")].iloc[0]
    assert wine["diff"] == pytest.approx(0.40 - 0.423) and wine["within_tol"] is False
    missing = comparison[(comparison["dataset"] == "Diabetes") & (comparison["model"] == "sat-rf (RF)")].iloc[0]
    assert math.isnan(missing["ours"]) and math.isnan(missing["diff"]) and missing["within_tol"] is None
    assert paper_comparison(_satrf9_results(), "satrf:9", tol=0.05).loc[wine.name, "within_tol"] is True


def test_paper_comparison_csv_and_wide_views():
    comparison = paper_comparison(_satrf9_results(), "satrf:9")
    csv = render_paper_comparison(comparison, "satrf:9", "csv")
    assert csv.splitlines()[0] == "dataset,model,metric,ours,published,diff,within_tol"
    missing = _csv(csv).query("dataset == 'Diabetes' and model == 'sat-rf (RF)'").iloc[0]
    assert (missing["ours"], missing["diff"], missing["within_tol"]) == ("", "", "")
    md = render_paper_comparison(comparison, "satrf:9", "md")
    wine = next(line for line in md.splitlines() if line.startswith("| Wine"))
    assert "-0.023*" in wine and "0.423" in wine and "n/a" in wine


def test_paper_comparison_reports_agreement_per_column():
    # Diabetes RF eps-abrf: ours 0.4243 rounds to the printed 0.424; Wine 0.40 vs 0.423 does not
    r2 = {("Diabetes", "eps-abrf"): [0.4242, 0.4244], ("Wine", "eps-abrf"): [0.40]}
    md = render_paper_comparison(paper_comparison(_results("RF", r2=r2), "satrf:9"), "satrf:9", "md")
    block = md.split("R²: agreement per column")[1]
    row = next(line for line in block.splitlines() if line.startswith("| eps-abrf (RF)"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == ["2", "1", "1", f"{((0.4243 - 0.424) + (0.40 - 0.423)) / 2:+.4f}"]


def test_compare_one_model_across_bases():
    rf = _results("RF", r2={("Diabetes", "larf"): [0.40, 0.42], ("Wine", "larf"): [0.30]})
    ert = _results("ERT", r2={("Diabetes", "larf"): [0.45], ("Wine", "larf"): [0.36]})
    comparison = compare_models(pd.concat([rf, ert], ignore_index=True), "larf:RF", "larf:ERT")
    (only,) = comparison.bases
    assert only.base == "RF vs ERT" and only.ttest.n == 2
    # paired on the repetition both bases hold (rep 0): RF's second Diabetes repetition has no partner
    assert only.ttest.mean_diff == pytest.approx(((0.45 - 0.40) + (0.36 - 0.30)) / 2) and only.reps == (1, 1)
    with pytest.raises(AfrInputError, match="unknown base 'GBM'"):
        compare_models(rf, "larf:RF", "larf:GBM")
    with pytest.raises(AfrInputError, match="MODEL:BASE"):
        compare_models(rf, "larf:RF", "larf")


def test_paper_comparison_params_and_relative_error_tolerance():
    r2 = {("Diabetes", "sat-rf-y"): [0.42, 0.43, 0.44], ("Diabetes", "rf"): [0.5507, 0.5508, 0.5509]}
    comparison = paper_comparison(_results(r2=r2), "satrf:2").set_index(["dataset", "model", "metric"])
    eps = comparison.loc[("Diabetes", "sat-rf-y", "eps_opt")]  # published 0: ours is the mode 0.25
    assert eps["ours"] == 0.25 and eps["published"] == 0.0 and eps["within_tol"] is False
    mae = comparison.loc[("Diabetes", "rf", "mae")]  # ours 44.92, published 44.92
    assert mae["ours"] == pytest.approx(44.92) and mae["within_tol"] is True
    wrong = _results(r2={("Diabetes", "rf"): [0.50]})  # mae 50.0: 11 % above 44.92
    assert (
        paper_comparison(wrong, "satrf:2")
        .set_index(["dataset", "model", "metric"])
        .loc[("Diabetes", "rf", "mae"), "within_tol"]
        is False
    )


def test_paper_comparison_tree_count_columns():
    ours = _results("RF@400", r2={("Diabetes", "rf"): [0.418]})
    comparison = paper_comparison(ours, "larf:8")
    cell = comparison[(comparison["dataset"] == "Diabetes") & (comparison["model"] == "rf@400")].iloc[0]
    assert cell["ours"] == pytest.approx(0.418) and cell["diff"] == pytest.approx(0.0)


def test_generic_forest_model_matches_the_papers_baseline_columns():
    ours = pd.concat(
        [_results("ERT@700", r2={("Diabetes", "forest"): [0.45]}), _results("RF", r2={("Diabetes", "forest"): [0.41]})]
    )
    trees = paper_comparison(ours, "larf:9")
    cell = trees[(trees["dataset"] == "Diabetes") & (trees["model"] == "ert@700")].iloc[0]
    assert cell["ours"] == pytest.approx(0.45)
    base = paper_comparison(ours, "larf:3")
    cell = base[(base["dataset"] == "Diabetes") & (base["model"] == "rf") & (base["metric"] == "r2")].iloc[0]
    assert cell["ours"] == pytest.approx(0.41) and cell["published"] == pytest.approx(0.416)


def test_satrf_softmax_columns_map_to_each_variants_softmax_model():
    ours = pd.concat(
        [_results(r2={("Diabetes", "softmax-y"): [0.5]}), _results(r2={("Diabetes", "softmax-yx"): [0.3]})]
    )
    for spec, expected in (("satrf:2", 0.5), ("satrf:6", 0.3)):
        table = paper_comparison(ours, spec)
        cell = table[(table["dataset"] == "Diabetes") & (table["model"] == "softmax") & (table["metric"] == "r2")]
        assert cell.iloc[0]["ours"] == pytest.approx(expected)


def test_compare_models_numbers():
    result = compare_models(_results(), "rf", "eps-abrf")
    assert [c.base for c in result.bases] == ["RF"]
    block = result.bases[0]
    diffs = block.per_dataset.set_index("dataset")["eps-abrf − rf"]
    assert diffs["Diabetes"] == pytest.approx(0.02) and diffs["Wine"] == pytest.approx(-0.02)
    expected = paired_ttest([0.43, 0.42], [0.41, 0.44])
    assert block.ttest.mean_diff == pytest.approx(0.0) and block.ttest.p == pytest.approx(expected.p)
    assert block.wilcoxon == pytest.approx(wilcoxon_test([0.43, 0.42], [0.41, 0.44]))
    csv = render_model_comparison(result, "csv")
    assert csv.splitlines()[0] == (
        "base,metric,a,b,n,mean_diff,t,p,p_holm,ci_low,ci_high,cohen_dz,wilcoxon_stat,"
        "wilcoxon_p,rank_biserial,wins,ties,losses,rope,p_a_better,p_equivalent,p_b_better"
    )
    tests = _csv(csv).iloc[0]
    assert (tests["wins"], tests["ties"], tests["losses"]) == (1, 0, 1)
    assert tests["p_holm"] == pytest.approx(tests["p"])  # one base: a family of one
    assert block.record.wins == ("Diabetes",) and block.record.losses == ("Wine",) and block.record.ties == ()
    md = render_model_comparison(result, "md")
    assert "eps-abrf against rf" in md
    assert "eps-abrf better than rf on 1 of 2 datasets at the printed precision (0 ties, 1 losses): loses on Wine" in md
    with pytest.raises(AfrInputError, match="unknown model 'nope'"):
        compare_models(_results(), "rf", "nope")
    with pytest.raises(AfrInputError, match="two different models"):
        compare_models(_results(), "rf", "rf")


def test_compare_models_pairs_the_repetitions_both_models_hold():
    """A store extended further for one model must not give that model means over other splits."""
    extended = _results(
        r2={
            ("Diabetes", "rf"): [0.40, 0.42, 0.90, 0.90],
            ("Diabetes", "eps-abrf"): [0.43, 0.45],
            ("Wine", "rf"): [0.40, 0.41, 0.90],
            ("Wine", "eps-abrf"): [0.42, 0.44, 0.43],
        }
    )
    comparison = compare_models(extended, "rf", "eps-abrf")
    block = comparison.bases[0]
    diffs = block.per_dataset.set_index("dataset")["eps-abrf − rf"]
    assert diffs["Diabetes"] == pytest.approx(0.03)  # reps 0-1 only: rf's reps 2-3 have no partner
    assert diffs["Wine"] == pytest.approx((0.42 + 0.44 + 0.43 - 0.40 - 0.41 - 0.90) / 3)
    assert block.reps == (2, 3)
    assert "over the 2 to 3 repetitions (splits) both models hold" in render_model_comparison(comparison, "md")


def test_best_counts_per_base_group_with_ties_in_paper_and_ours():
    from afr_cli.tables import best_counts

    rows = [
        ("D1", "a (RF)", 0.50, 0.5004),
        ("D1", "b (RF)", 0.40, 0.5001),  # ours: a tie at 3 decimals
        ("D2", "a (RF)", 0.30, 0.20),
        ("D2", "b (RF)", 0.30, 0.25),  # paper: a tie
        ("D1", "a (ERT)", 0.10, 0.90),
        ("D1", "b (ERT)", 0.20, 0.10),  # another base competes apart
        ("D3", "a (RF)", 0.90, float("nan")),
        ("D3", "b (RF)", 0.10, 0.5),
    ]  # no value of ours: skipped
    part = pd.DataFrame([{"dataset": d, "model": m, "metric": "r2", "published": p, "ours": o} for d, m, p, o in rows])
    counts = best_counts(part).set_index("model")
    assert counts.loc["a (RF)"].tolist() == [2, 1] and counts.loc["b (RF)"].tolist() == [1, 2]
    assert counts.loc["a (ERT)"].tolist() == [0, 1] and counts.loc["b (ERT)"].tolist() == [1, 0]
    mae = best_counts(part.assign(metric="mae")).set_index("model")
    assert mae.loc["a (ERT)"].tolist() == [1, 0]  # lower error is better
    assert best_counts(part.assign(metric="eps_opt")).empty


def test_win_record_counts_at_printed_precision_and_lower_error_is_better():
    from afr_cli.tables import WinRecord

    table = pd.DataFrame(
        {"dataset": ["D1", "D2", "D3", "D4"], "a": [0.4101, 0.5, 0.6, None], "b": [0.4104, 0.52, 0.58, 0.3]}
    )
    r2 = WinRecord.count(table, "a", "b", "r2")
    assert (r2.wins, r2.ties, r2.losses) == (("D2",), ("D1",), ("D3",))  # D4 has no A: not counted
    mae = WinRecord.count(table, "a", "b", "mae")
    assert (mae.wins, mae.ties, mae.losses) == (("D3",), (), ("D1", "D2"))  # 0.4101 vs 0.4104 differ at 4 digits


def _write_store(directory, frame: pd.DataFrame) -> None:
    from afr_cli.store import ResultsStore, UnitRecord

    store = ResultsStore(directory)
    store.create({"name": "test"})
    for (dataset, base, rep), unit in frame.groupby(["dataset", "base", "rep"]):
        rows = [
            {
                "model": r["model"],
                "r2": r["r2"],
                "mae": r["mae"],
                "rmse": r["rmse"],
                "params": r["params"],
                "selection": r["selection"],
                "cv_score": None,
                "solver_status": {},
                "seconds": 0.0,
            }
            for r in unit.to_dict("records")
        ]
        store.write_unit(UnitRecord(dataset, base, int(rep), 0, 10, 5, 0.0, 0.0, rows, []))


def test_table_command_on_stores(tmp_path, capsys):
    from afr_cli.commands.table import table as _table

    _write_store(tmp_path / "rf", _results("RF"))
    _write_store(tmp_path / "ert", _results("ERT"))
    dirs = [tmp_path / "rf", tmp_path / "ert"]
    _table(
        results_dirs=dirs,
        metric=None,
        fmt="csv",
        with_std=False,
        paper="satrf:9",
        tol=None,
        selection="stored",
        reps=None,
        compare=("rf", "eps-abrf"),
    )
    comparison, tests = capsys.readouterr().out.split("\n\n")
    assert comparison.splitlines()[0] == "dataset,model,metric,ours,published,diff,within_tol"
    assert "Diabetes,eps-abrf (ERT),r2,0.43,0.441,-0.011,True" in comparison
    assert tests.splitlines()[0].startswith("base,metric,a,b,n,mean_diff")
    assert [line.split(",")[0] for line in tests.splitlines()[1:]] == ["RF", "ERT"]

    _table(
        results_dirs=dirs,
        metric=None,
        fmt="md",
        with_std=True,
        paper=None,
        tol=None,
        selection="stored",
        reps=None,
        compare=None,
    )
    md = capsys.readouterr().out
    assert "eps-abrf (RF) |" in md and "0.430 ± 0.010" in md

    _table(
        results_dirs=dirs[:1],
        metric=None,
        fmt="csv",
        with_std=False,
        paper=None,
        tol=None,
        selection="stored",
        reps=2,
        compare=None,
    )
    first_two = _csv(capsys.readouterr().out)
    wine_rf = first_two[(first_two.dataset == "Wine") & (first_two.model == "rf") & (first_two.metric == "r2")]
    assert wine_rf.iloc[0]["n_reps"] == 2 and wine_rf.iloc[0]["mean"] == pytest.approx(0.435)


def test_best_test_results_pick_the_point_with_the_best_mean_test_score():
    from afr_cli.tables import best_test_results

    rows = []
    # point eps=0.5 wins on mean test R² (0.6 vs 0.55) although eps=0 wins rep 0
    for rep, (a, b) in enumerate([(0.7, 0.6), (0.4, 0.6)]):
        for eps, score in ((0.0, a), (0.5, b)):
            rows.append(
                {
                    "dataset": "Wine",
                    "base": "RF",
                    "model": "eps-abrf",
                    "rep": rep,
                    "point": {"eps": eps},
                    "cv_r2": 0.0,
                    "cv_mae": 0.0,
                    "test_r2": score,
                    "test_mae": 1 - score,
                    "test_rmse": 1.0,
                }
            )
    out = best_test_results(pd.DataFrame(rows))
    assert list(out.r2) == [0.6, 0.6] and all(p == {"eps": 0.5} for p in out.params)
    assert set(out.selection) == {"best-test"}
    by_mae = best_test_results(pd.DataFrame(rows), select_by="mae")
    assert list(best_test_results(pd.DataFrame()).columns) == list(out.columns)
    assert list(by_mae.mae) == pytest.approx([0.4, 0.4])


def test_fixed_parameters_get_no_opt_column():
    frame = _results()
    assert "tau_opt (eps-abrf)" in summary_wide(frame, "r2").columns
    frame["params"] = [dict(p, tau=1.0) if p else p for p in frame["params"]]  # tau fixed at 1
    wide = summary_wide(frame, "r2")
    assert "eps_opt (eps-abrf)" in wide.columns
    assert "tau_opt (eps-abrf)" not in wide.columns


def test_paper_comparisons_say_which_repetitions_they_average():
    from afr_cli.tables import repetitions_note as _repetitions_note

    def reps(counts: dict) -> pd.DataFrame:
        return pd.DataFrame([{"dataset": d, "base": "RF", "rep": r} for d, n in counts.items() for r in range(n)])

    assert _repetitions_note(reps({"Wine": 10, "Yacht": 10}), None) == "Repetitions 0-9 of each dataset (10)."
    more = _repetitions_note(reps({"Wine": 20, "Yacht": 20}), None)
    assert more.startswith("Repetitions 0-19 of each dataset (20);") and "--reps 10" in more
    assert _repetitions_note(reps({"Wine": 20, "Yacht": 20}), 20) == "Repetitions 0-19 of each dataset (20)."
    assert _repetitions_note(reps({"Wine": 20, "Yacht": 50}), None).startswith(
        "Uneven: 20 to 50 repetitions per dataset and base;"
    )


def test_best_test_is_one_grid_point_over_the_repetitions_in_view():
    # --reps truncates first, then one point is chosen over what is left: on rep 0 alone eps=0
    # wins (0.7 vs 0.6); over reps 0-1 eps=0.5 does (0.6 vs 0.55); a stored best-test row (the
    # protocol's selection: best-test) is re-selected the same way, never read per repetition
    from afr_cli.tables import results_in_view

    grid, stored = [], []
    for rep, (a, b) in enumerate([(0.7, 0.6), (0.4, 0.6)]):
        for eps, score in ((0.0, a), (0.5, b)):
            grid.append(
                {
                    "dataset": "Wine",
                    "base": "RF",
                    "model": "eps-abrf",
                    "rep": rep,
                    "point": {"eps": eps},
                    "cv_r2": 0.0,
                    "cv_mae": 0.0,
                    "test_r2": score,
                    "test_mae": 1 - score,
                    "test_rmse": 1.0,
                }
            )
        stored.append(
            {
                "dataset": "Wine",
                "base": "RF",
                "model": "eps-abrf",
                "rep": rep,
                "r2": float("nan"),
                "mae": float("nan"),
                "rmse": float("nan"),
                "params": {},
                "selection": "best-test",
            }
        )
    grid, stored = pd.DataFrame(grid), pd.DataFrame(stored)
    one = results_in_view(stored, grid, "stored", reps=1)
    assert list(one.r2) == [0.7] and one.params.iloc[0] == {"eps": 0.0}
    two = results_in_view(stored, grid, "stored", reps=None)
    assert list(two.r2) == [0.6, 0.6] and all(p == {"eps": 0.5} for p in two.params)
    asked = results_in_view(stored.assign(selection="inner-cv", r2=0.1), grid, "best-test", reps=2)
    pd.testing.assert_frame_equal(asked.reset_index(drop=True), two.reset_index(drop=True))


@pytest.mark.slow
def test_table_and_report_agree_on_best_test_with_reps(tmp_path, capsys):
    # `afr table --selection best-test --reps N` and `afr report --reps N` give the same best-test
    # numbers: both go through one definition
    import yaml
    from conftest import run_afr

    from afr_cli.commands.table import table as _table
    from afr_cli.publish.context import ReportContext

    cfg = {
        "name": "abrf_rf",
        "seed": 3,
        "protocol": {"reps": 3},
        "datasets": ["Sparse", "Friedman1"],
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5, 1.0], "tau": [0.1, 10]}},
        ],
    }
    config = tmp_path / "abrf_rf.yaml"
    config.write_text(yaml.safe_dump(cfg))
    assert run_afr("run", str(config), "--out", str(tmp_path / "abrf_rf"), "-q", "--jobs", "1").returncode == 0
    _table(
        results_dirs=[tmp_path / "abrf_rf"],
        metric="r2",
        fmt="csv",
        with_std=False,
        paper=None,
        tol=None,
        selection="best-test",
        reps=2,
        compare=None,
    )
    table = _csv(capsys.readouterr().out)
    frames = ReportContext(tmp_path).report_frames("abrf", 2, "best-test")
    ours = summary_long(frames)
    ours = ours[ours.metric == "r2"].reset_index(drop=True)
    assert list(table["mean"]) == pytest.approx(list(ours["mean"]), abs=1e-6)
    assert set(table.n_reps) == {2}


def test_repetitions_note_labels_the_inferred_protocol_beside_the_stated_count():
    from afr_cli.tables import repetitions_note

    results = pd.DataFrame({"dataset": ["D"] * 100, "base": ["DT"] * 100, "rep": range(100)})
    note = repetitions_note(results, None, published_reps=10, stated_reps=100)
    assert note.startswith("Repetitions 0-99 of each dataset (100); the paper states 100 repetitions")
    assert "--reps 10 compares on those (inferred)" in note
    assert "the papers' cells are means over their 10 splits" in repetitions_note(results, None, published_reps=10)


# ------------------------------------------------------------ comparisons never mix


def _pair_frame(nan_at=(), reps: int = 4) -> pd.DataFrame:
    """rf and b on Wine and Boston (base RF), b 0.0625 better on every repetition (exact in binary);
    b's R² NaN at each (dataset, rep) of ``nan_at``."""
    rows = []
    for d, dataset in enumerate(("Wine", "Boston")):
        for rep in range(reps):
            for model, step in (("rf", 0.0), ("b", 0.0625)):
                r2 = math.nan if model == "b" and (dataset, rep) in nan_at else 0.5 + step + rep / 64 + d / 8
                rows.append(
                    {
                        "dataset": dataset,
                        "base": "RF",
                        "model": model,
                        "rep": rep,
                        "r2": r2,
                        "mae": 1.0 - step + rep / 128,
                        "rmse": 1.0,
                        "params": {},
                        "selection": "inner-cv",
                    }
                )
    return pd.DataFrame(rows)


def test_a_repetition_with_a_nan_score_is_dropped_for_both_models_and_counted():
    from afr_cli.tables.pairing import paired_repetitions

    frame = _pair_frame(nan_at={("Wine", 1), ("Boston", 0), ("Boston", 1), ("Boston", 2), ("Boston", 3)})
    kept, dropped = paired_repetitions(frame, "rf", "b", "r2")
    assert sorted(kept.loc[kept["dataset"] == "Wine", "rep"].unique()) == [0, 2, 3]
    assert (kept["model"] == "rf").sum() == (kept["model"] == "b").sum() == 3
    assert dropped["RF"].by_dataset == {"Wine": 1, "Boston": 4} and dropped["RF"].left_out == ("Boston",)
    comparison = compare_models(frame, "rf", "b")
    base = comparison.bases[0]
    wine = base.per_dataset.set_index("dataset").loc["Wine"]
    assert wine["rf"] == pytest.approx((0.5 + 0 / 64 + 0.5 + 2 / 64 + 0.5 + 3 / 64) / 3)  # rf over b's three too
    assert wine["b − rf"] == 0.0625 and base.reps == (3, 3)
    text = render_model_comparison(comparison, "md")
    assert (
        "each dataset's means over the 3 repetitions (splits) both models hold; 5 repetitions where rf's or b's "
        "R² is undefined (NaN) dropped for both models (Wine 1, Boston 4); left out of the tests, no repetition "
        "with both scores defined: Boston"
    ) in text
    assert comparison_dict(comparison)["bases"][0]["dropped"] == {
        "repetitions": 5,
        "by_dataset": {"Wine": 1, "Boston": 4},
        "left_out": ["Boston"],
    }
    nothing = comparison_dict(compare_models(_pair_frame(), "rf", "b"))["bases"][0]
    assert "dropped" not in nothing  # nothing dropped: as before


def test_json_says_b_minus_a_for_every_difference_and_inf_apart_from_null():
    out = comparison_dict(compare_models(_pair_frame(), "rf", "b", "mae"))
    assert out["difference"] == "b - a"
    for row in out["bases"][0]["datasets"]:
        bayes = row["correlated_ttest"]
        assert row["b_minus_a"] == -0.0625 and bayes["mean"] == -0.0625  # b's MAE lower: b - a < 0
        assert bayes["ci_low"] <= bayes["mean"] <= bayes["ci_high"] and bayes["p_b_better"] == 1.0
    ttest = out["bases"][0]["ttest"]
    # the same difference everywhere (sd 0): t, p and d_z are undefined (null), never an infinite t with p = 0
    assert ttest["mean_diff"] == -0.0625 and ttest["t"] is None and ttest["p"] is None
    r2 = comparison_dict(compare_models(_pair_frame(), "rf", "b", "r2"))["bases"][0]
    assert r2["ttest"]["t"] is None and r2["effect_sizes"]["cohen_dz"] is None
    from afr_cli.tables.compare import _json_numbers

    assert _json_numbers([math.inf, -math.inf, math.nan]) == ["inf", "-inf", None]  # the two never read alike
    one = comparison_dict(compare_models(_pair_frame(reps=1), "rf", "b"))["bases"][0]["datasets"][0]["correlated_ttest"]
    assert one["mean"] == 0.0625 and one["ci_low"] is None  # one repetition: no interval (undefined, null)


def test_stores_apart_refuse_a_model_in_two_stores_and_different_splits():
    from afr_cli.tables.stores import SPLIT, STORE, check_one_store_per_model, check_same_splits

    frame = _pair_frame()
    a = frame[frame["model"] == "rf"].assign(**{STORE: "A", SPLIT: "rep-index seeding, split seed 0"})
    b = frame[frame["model"] == "b"].assign(**{STORE: "B", SPLIT: "rep-index seeding, split seed 0"})
    check_one_store_per_model(pd.concat([a, b]))
    check_same_splits(pd.concat([a, b]), "rf", "b")
    with pytest.raises(AfrInputError, match=r"model 'rf' \(base RF, Wine\) is in A and B"):
        check_one_store_per_model(pd.concat([a, b, a.assign(**{STORE: "B"})]))
    check_one_store_per_model(pd.concat([a, b, b.assign(model="c"), b.assign(model="c", **{STORE: "A"})]), {"rf", "b"})
    with pytest.raises(AfrInputError, match=r"not run on the same splits \(Wine, repetition 0"):
        check_same_splits(pd.concat([a, b.assign(**{SPLIT: "derived seeding, split seed 7"})]), "rf", "b")
    check_one_store_per_model(frame)  # one store: no columns, nothing to check


@pytest.mark.parametrize("tol", [math.nan, -1.0, math.inf])
def test_tol_is_refused_like_rope(tol):
    with pytest.raises(AfrInputError, match="--tol"):
        paper_comparison(_results(), "satrf:9", tol=tol)
    assert paper_comparison(_results(), "satrf:9", tol=0.0)["within_tol"].notna().any()


def test_the_summary_counts_the_repetitions_of_the_metric_it_shows():
    frame = _pair_frame(nan_at={("Wine", 1), ("Wine", 2), ("Wine", 3), ("Boston", 1), ("Boston", 2), ("Boston", 3)})
    assert render_summary(frame, "r2", "md").startswith("R²: mean over 1–4 reps")  # rf over 4, b over 1
    only_b = frame[frame["model"] == "b"]
    assert render_summary(only_b, "r2", "md").startswith("R²: mean over 1 reps")  # not 1–4: MAE's 4 are not R²'s
    assert render_summary(only_b, "mae", "md").startswith("MAE: mean over 4 reps")


def test_latex_aligns_number_columns_right_and_ours_reads_at_the_papers_precision():
    from afr_cli.tables.format import format_as_printed, grid

    out = grid(
        ["dataset", "ours", "paper", "note"], [["Wine", "0.111", "+0.9*", "a"], ["Yacht", "n/a", "1.2", "b"]], "latex"
    )
    assert r"\begin{tabular}{lrrl}" in out
    bold = grid(["dataset", "rf"], [["Wine", r"\textbf{0.404 $\pm$ 0.078}"]], "latex", escaped=True)
    assert r"\begin{tabular}{lr}" in bold
    assert format_as_printed(1 / 9, "0.111", "0.111111") == "0.111"  # AGBoost's parameter, as the paper prints it
    assert format_as_printed(111.72, "111.7", "111.72") == "111.7" and format_as_printed(45.0, "45", "45.00") == "45"
    assert format_as_printed(0.5, "—", "0.500") == "0.500"  # no printed number: the column's own format
    assert format_as_printed(10.0, "0.01", "10", param=True) == "10"  # a parameter: short, at most the decimals
    assert format_as_printed(1 / 9, "0.111", "0.111111", param=True) == "0.111"


def _agboost_eps(eps_by_dataset: dict[str, float]) -> pd.DataFrame:
    """AGBoost (DT base) with one repetition per dataset choosing the given eps."""
    rows = [
        {"dataset": d, "base": "DT", "model": "agboost", "rep": 0, "r2": 0.5, "mae": 1.0, "rmse": 1.2}
        | {"params": {"eps": eps, "delta": 1.0}, "selection": "inner-cv"}
        for d, eps in eps_by_dataset.items()
    ]
    return pd.DataFrame(rows)


def test_a_parameter_agrees_when_ours_rounds_to_the_printed_value_at_the_columns_decimals():
    from afr_cli.tables.agreement import AS_PRINTED, MISS, agreement, param_agrees

    # AGBoost prints eps_opt at 3 decimals: our 1/9 is the paper's 0.111, not a miss of +0.000111
    assert param_agrees(1 / 9, "0.111", 3) and agreement(1 / 9, "0.111", "eps_opt", is_param=True) == AS_PRINTED
    assert not param_agrees(0.1, "0.111", 3) and agreement(0.1, "0.111", "eps_opt", is_param=True) == MISS
    # a printed '1' among '0.25's is the grid value 1: our 0.75 does not round to it at 2 decimals
    assert not param_agrees(0.75, "1", 2) and param_agrees(1.0, "1", 2) and param_agrees(0.0, "0.000", 0)
    assert agreement(0.75, "1", "gamma_opt", is_param=True, places=2) == MISS
    assert not param_agrees(float("nan"), "0.111") and not param_agrees(0.1, "—")
    comparison = paper_comparison(_agboost_eps({"Wine": 1 / 9, "Concrete": 0.8, "Yacht": 1.0}), "agboost:II")
    eps = comparison[comparison["metric"] == "eps_opt"].set_index("dataset")
    assert eps.loc["Wine", "within_tol"] is True and eps.loc["Yacht", "within_tol"] is True
    assert eps.loc["Concrete", "within_tol"] is False  # 0.8 against the printed 0.889
    md = render_paper_comparison(comparison, "agboost:II", "md")
    wine = next(line for line in md.split("eps_opt")[1].splitlines() if line.startswith("| Wine"))
    assert [c.strip() for c in wine.strip("|").split("|")][1:4] == ["0.111", "0.111", "0.000"]
    # SAT-RF's gamma_opt column prints 0, 0.25, ..., 1: ours 0.25 against Diabetes' printed 0 stays a miss
    rows = _results(r2={("Diabetes", "sat-rf-y"): [0.42]}).assign(params=[{"eps": 0.0, "gamma": 0.25}])
    satrf = paper_comparison(rows, "satrf:2").set_index(["dataset", "model", "metric"])
    assert satrf.loc[("Diabetes", "sat-rf-y", "eps_opt"), "within_tol"] is True
    assert satrf.loc[("Diabetes", "sat-rf-y", "gamma_opt"), "within_tol"] is False
    md = render_paper_comparison(paper_comparison(rows, "satrf:2"), "satrf:2", "md")
    counts = next(line for line in md.split("gamma_opt: agreement per column")[1].splitlines() if "sat-rf-y" in line)
    assert [c.strip() for c in counts.strip("|").split("|")][1:4] == ["1", "0", "0"]  # cells, as printed, within


def test_markdown_aligns_number_columns_right_and_reads_each_column_at_one_precision():
    from afr_cli.tables.format import column_decimals, grid

    out = grid(
        ["dataset", "ours", "paper", "note"], [["Wine", "0.111", "+0.9*", "a"], ["Yacht", "n/a", "**1.2**", "b"]], "md"
    )
    rule = out.splitlines()[1]
    assert [cell[-1] for cell in rule.strip("|").split("|")] == ["-", ":", ":", "-"]
    assert column_decimals(["1", "0.25", "—", "0.5"]) == 2 and column_decimals(["n/a"]) is None
    # the paper prints R² for satrf:9's RF column at 3 decimals; ours and Δ read at 3 in every row
    md = render_paper_comparison(paper_comparison(_satrf9_results(), "satrf:9"), "satrf:9", "md")
    table = md.split("\n\n")[1].splitlines()
    assert [cell[-1] for cell in table[1].strip("|").split("|")][:4] == ["-", ":", ":", ":"]  # RF ours|paper|Δ
    diabetes = [c.strip() for c in next(line for line in table if line.startswith("| Diabetes")).strip("|").split("|")]
    ours, paper, delta = diabetes[1:4]
    places = len(paper.partition(".")[2])
    assert len(ours.partition(".")[2]) == places and len(delta.rstrip("*").partition(".")[2]) == places

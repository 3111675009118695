"""``afr plot curve``: learning-curve tables against pandas, the PNG, and its one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.errors import AfrInputError
from afr_cli.figures.curves import curve_figure, curve_table

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        {
            "dataset": "D",
            "base": "RF",
            "model": m,
            "rep": r,
            "train_fraction": f,
            "noise_eta": e,
            "rmse": rng.uniform(1, 2),
            "r2": 0.5,
            "mae": 1.0,
            "selection": "inner-cv",
        }
        for m in ("rf", "robust")
        for f in (0.15, 0.5)
        for e in (0.0, 0.5)
        for r in range(4)
    ]
    return pd.DataFrame(rows)


def test_curve_table_is_the_mean_and_std_over_reps():
    df = _frame()
    curves = curve_table(df, "D", ["rf", "robust"], "rmse", 0.5)
    part = df[(df.model == "robust") & (df.train_fraction == 0.5) & (df.noise_eta == 0.5)].rmse
    row = curves.table[(curves.table.model == "robust") & (curves.table.train_fraction == 0.5)].iloc[0]
    assert row["mean"] == pytest.approx(part.mean()) and row["std"] == pytest.approx(part.std())
    assert row["reps"] == 4 and len(curves.table) == 4
    fig = curve_figure(curves)
    styles = [line.get_linestyle() for line in fig.axes[0].get_lines()]
    assert styles == ["-.", "-"]  # the reference dash-dot, the robust model solid
    bands = fig.axes[0].collections  # each model's mean ± std as two dotted outlines, unfilled
    assert len(bands) == 4 and all(b.get_linestyle()[0][1] is not None for b in bands)
    assert all(len(b.get_facecolor()) == 0 or not b.get_facecolor()[:, 3].any() for b in bands)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"dataset": "E"}, "--dataset"),
        ({"models": ["rf", "nope"]}, "--model"),
        ({"noise_eta": 0.3}, "--noise-eta"),
        ({"metric": "mse"}, "--metric"),
    ],
)
def test_curve_table_errors_name_what_is_allowed(kwargs, needle):
    args = {"dataset": "D", "models": ["rf"], "metric": "rmse", "noise_eta": 0.0, **kwargs}
    with pytest.raises(AfrInputError, match=needle):
        curve_table(_frame(), **args)


def test_plot_curve_command(tmp_path):
    config = {
        "name": "tiny_curve",
        "seed": 1,
        "datasets": ["Diabetes"],
        "preprocess": {"scale": "none"},
        "protocol": {"reps": 2, "train_fractions": [0.2, 0.6], "noise_eta": [0, 0.5], "select_by": "rmse"},
        "bases": [{"kind": "rf", "n_estimators": 5, "min_samples_leaf": 3}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "robust", "family": "robust-rf", "grid": {"eps": [0, 1], "lam": [0, 1]}},
        ],
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    proc = run_afr("run", str(tmp_path / "c.yaml"), "--jobs", "1", "--out", str(tmp_path / "s"), "-q")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "f.png"
    for selection in ("stored", "best-test"):
        proc = run_afr(
            "plot",
            "curve",
            "--results",
            str(tmp_path / "s"),
            "--dataset",
            "Diabetes",
            "--model",
            "rf",
            "--model",
            "robust",
            "--noise-eta",
            "0.5",
            "--selection",
            selection,
            "--out",
            str(out),
        )
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes()[:8] == PNG_MAGIC and "0.600" not in proc.stderr
    assert "selection best-test" in proc.stdout
    # under best-test the robust model can never be worse than the plain forest: eps = 0 is in the grid
    from afr_cli.store import load_grid, load_results
    from afr_cli.tables import best_test_results

    best = best_test_results(load_grid(tmp_path / "s"), "rmse")
    rf = load_results(tmp_path / "s").query("model == 'rf'")
    ours = best[best.model == "robust"].groupby(["train_fraction", "noise_eta"]).rmse.mean()
    theirs = rf.groupby(["train_fraction", "noise_eta"]).rmse.mean()
    assert len(ours) == 4 and (ours <= theirs + 1e-12).all()
    bad = run_afr(
        "plot", "curve", "--results", str(tmp_path / "s"), "--dataset", "Diabetes", "--model", "xx", "--out", str(out)
    )
    assert_one_line_error(bad, "--model", "robust")

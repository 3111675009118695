"""``afr plot surface``: a tiny SAT-RF-yx store, the mean table against pandas, the PNG, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import assert_one_line_error, run_afr

from afr_cli.errors import AfrInputError
from afr_cli.figures.plots import choose_base, surface_figure, surface_table
from afr_cli.store import load_grid

TINY = """\
name: tiny_surface
seed: 1
data_seed: 0
protocol: {reps: 2, test_fraction: 0.2, inner_folds: 2, selection: inner-cv, select_by: r2}
datasets: [Sparse]
bases:
  - {kind: rf, n_estimators: 5, min_samples_leaf: 5, max_features: 1.0}
models:
  - {id: rf, family: forest}
  - {id: yx, family: sat-rf-yx, params: {gamma: 0.0, kappa: 1.0}, grid: {tau: [0.5, 2.0], eps: [0.0, 1.0]}}
  - {id: yx-kg, family: sat-rf-yx, params: {eps: 0.0, tau: 1.0}, grid: {kappa: [0.5, 2.0], gamma: [0.0, 1.0]}}
solver: OSQP
"""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.slow  # every test here uses a store made by a real `afr run`


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plot")
    (root / "tiny.yaml").write_text(TINY)
    proc = run_afr("run", str(root / "tiny.yaml"), "--jobs", "1", "--out", str(root / "store"), "-q")
    assert proc.returncode == 0, proc.stderr
    return root / "store"


def _expected(grid: pd.DataFrame, column: str) -> pd.DataFrame:
    """The mean over reps per (eps, tau), computed independently of afr_cli.figures.plots."""
    rows = grid[(grid.dataset == "Sparse") & (grid.model == "yx")]
    wide = rows.assign(tau=[p["tau"] for p in rows.point], eps=[p["eps"] for p in rows.point])
    return wide.pivot_table(index="eps", columns="tau", values=column, aggfunc="mean")


def test_surface_writes_png_and_table_is_the_mean_over_reps(store, tmp_path):
    out = tmp_path / "figs" / "surface.png"
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(store),
        "--dataset",
        "Sparse",
        "--model",
        "yx",
        "--x",
        "tau",
        "--y",
        "eps",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and out.read_bytes()[:8] == PNG_MAGIC
    assert "2 reps" in proc.stdout and "gamma=0" in proc.stdout
    assert f"wrote {out.resolve()} (created the directory {out.parent.resolve()})" in proc.stdout

    grid = load_grid(store)
    for metric, score in (("r2", "test"), ("mae", "cv")):
        s = surface_table(grid, "Sparse", "yx", "tau", "eps", metric, score)
        expected = _expected(grid, f"{score}_{metric}")
        assert s.table.shape == (2, 2)
        assert list(s.table.index) == [0.0, 1.0] and list(s.table.columns) == [0.5, 2.0]
        np.testing.assert_allclose(s.table.to_numpy(), expected.to_numpy(), rtol=1e-12)
        assert (s.reps, s.base, s.fixed) == (2, "RF@5", {"gamma": 0.0, "kappa": 1.0})
    fig = surface_figure(s)
    title = fig.axes[0].get_title()
    for needle in ("Sparse", "yx", "RF@5", "inner-CV", "MAE", "2 reps"):
        assert needle in title
    assert len(fig.axes[0].texts) == 4  # one annotation per cell


def test_two_panels_side_by_side_make_one_figure(store, tmp_path):
    out = tmp_path / "fig.png"
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(store),
        "--dataset",
        "Sparse",
        "--model",
        "yx",
        "--x",
        "tau",
        "--y",
        "eps",
        "--model",
        "yx-kg",
        "--x",
        "kappa",
        "--y",
        "gamma",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert "yx on RF@5" in proc.stdout and "yx-kg on RF@5" in proc.stdout
    grid = load_grid(store)
    fig = surface_figure(
        surface_table(grid, "Sparse", "yx", "tau", "eps"), surface_table(grid, "Sparse", "yx-kg", "kappa", "gamma")
    )
    panels = [ax for ax in fig.axes if ax.get_xlabel() in ("tau", "kappa")]
    assert [ax.get_ylabel() for ax in panels] == ["eps", "gamma"]
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(store),
        "--dataset",
        "Sparse",
        "--model",
        "yx",
        "--model",
        "yx-kg",
        "--x",
        "tau",
        "--y",
        "eps",
        "--out",
        str(tmp_path / "bad.png"),
    )
    assert_one_line_error(proc, "--model/--x/--y", "2 --model, 1 --x, 1 --y")
    assert not (tmp_path / "bad.png").exists()


def test_bad_param_is_one_line_error_naming_allowed(store, tmp_path):
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(store),
        "--dataset",
        "Sparse",
        "--model",
        "yx",
        "--x",
        "kapa",
        "--y",
        "eps",
        "--out",
        str(tmp_path / "x.png"),
    )
    assert_one_line_error(proc, "--x", "kapa", "eps", "gamma", "kappa", "tau")
    assert not (tmp_path / "x.png").exists()


def test_unknown_model_and_missing_store_are_one_line_errors(store, tmp_path):
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(store),
        "--dataset",
        "Sparse",
        "--model",
        "sat-rf",
        "--x",
        "tau",
        "--y",
        "eps",
        "--out",
        str(tmp_path / "x.png"),
    )
    assert_one_line_error(proc, "--model", "sat-rf", "rf, yx, yx-kg")
    proc = run_afr(
        "plot",
        "surface",
        "--results",
        str(tmp_path / "nowhere"),
        "--dataset",
        "Sparse",
        "--model",
        "yx",
        "--x",
        "tau",
        "--y",
        "eps",
        "--out",
        str(tmp_path / "x.png"),
    )
    assert_one_line_error(proc, "--results", "nowhere", "not a results store")


def test_pure_errors_unknown_dataset_and_a_third_varying_param(store):
    grid = load_grid(store)
    with pytest.raises(AfrInputError, match="allowed: Sparse"):
        surface_table(grid, "Wine", "yx", "tau", "eps")
    with pytest.raises(AfrInputError, match=r"also varies tau \(0.5, 2\)"):
        surface_table(grid, "Sparse", "yx", "kappa", "eps")
    with pytest.raises(AfrInputError, match="two different"):
        surface_table(grid, "Sparse", "yx", "eps", "eps")
    with pytest.raises(AfrInputError, match="--metric"):
        surface_table(grid, "Sparse", "yx", "tau", "eps", metric="rmse")


def test_choose_base_takes_the_only_base_and_names_the_choices():
    """Surfaces and curves pick their base alike: the only one, or the one named, else one line."""
    assert choose_base(["RF"], None, "Wine") == "RF"
    assert choose_base(["ERT", "RF"], "RF", "Wine") == "RF"
    with pytest.raises(AfrInputError, match=r"^--base: sat-rf-y on Wine has several bases; choose one of ERT, RF$"):
        choose_base(["ERT", "RF"], None, "sat-rf-y on Wine")
    with pytest.raises(AfrInputError, match=r"^--base: 'GBM' is not a base of Wine; allowed: ERT, RF$"):
        choose_base(["ERT", "RF"], "GBM", "Wine")

"""``afr plot weights``: AGBoost's trained w_t and mean softmax attention over the iterations."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.errors import AfrInputError
from afr_cli.figures.plots import weight_curves

TINY = """\
name: tiny_weights
protocol: {reps: 2, seeding: rep-index}
datasets: [Friedman1]
bases:
  - {kind: gbm-dt, id: DT, n_estimators: 12, learning_rate: 0.2, max_depth: 2}
models:
  - {id: gbm, family: forest}
  - {id: agboost, family: agboost, grid: {delta: [0.0001, 0.5, 1.0], eps: [0.0, 0.5]}}
"""


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def test_weight_curves_are_distributions_over_the_iterations(config):
    c = weight_curves(load_experiment(config), "agboost", "Friedman1", 1, "delta", {"eps": 0.5})
    assert c.values == (0.0001, 0.5, 1.0) and c.weights.shape == c.attention.shape == (3, 12)
    assert c.fixed == {"eps": 0.5}
    np.testing.assert_allclose(c.weights.sum(axis=1), 1.0, atol=1e-6)
    assert c.weights.min() >= -1e-8 and not np.allclose(c.weights[0], 1 / 12)  # trained, not uniform
    np.testing.assert_allclose(c.attention.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(c.attention[0], 1 / 12, atol=1e-3)  # delta -> 0: uniform attention
    assert np.abs(c.attention[2] - 1 / 12).max() > 1e-3


@pytest.mark.slow
def test_weights_figure_and_errors(config, tmp_path):
    out = tmp_path / "w.png"
    proc = run_afr(
        "plot", "weights", "--config", str(config), "--dataset", "Friedman1", "--at", "eps=0.5", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "delta=0.5: w_t max" in proc.stdout
    assert_one_line_error(
        run_afr("plot", "weights", "--config", str(config), "--dataset", "Friedman1", "--out", str(out)),
        "--at",
        "eps (0, 0.5)",
        "--at eps=VALUE",
    )
    exp = load_experiment(config)
    with pytest.raises(AfrInputError, match="gbm \\(forest\\) has no softmax attention"):
        weight_curves(exp, "gbm", "Friedman1", 0, "delta", {})
    with pytest.raises(AfrInputError, match="'eps' is not a design parameter of agboost; allowed: delta"):
        weight_curves(exp, "agboost", "Friedman1", 0, "eps", {})

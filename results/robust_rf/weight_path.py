"""The path of the robust RF's tree weights w as lambda varies (Boston, one split, gamma = 15 %).

One forest (100 trees, min_samples_leaf = 1, as configs/robust_rf_boston.yaml) and the
pessimistic costs of its trees (alpha = 0.05, bootstrap leaf statistics); for eps in {0.5, 1}
and each lambda the weights from the shared solver layer: the largest weight, how many trees sit
at the lower bound (1 - eps)/T, the effective number of trees 1 / sum w^2, and the test RMSE.
Run:  PYTHONPATH=. python results/robust_rf/weight_path.py   (writes weight_path.csv and .png here)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.data import load_dataset
from afr_cli.ensembles import get_ensemble
from afr_cli.features import LeafStatistics
from afr_cli.models.robust import RobustRFFamily, weight_bounds, weights_problem
from afr_cli.protocol import derive_seed, split_indices
from afr_cli.solve import solve

HERE = Path(__file__).parent
LAMBDAS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)


def main() -> None:
    X, y = load_dataset("Boston", 0)
    train, test = split_indices(len(y), 0.85, derive_seed(2019, "Boston", 0, 15.0))
    forest = get_ensemble("rf").fit(X[train], y[train], 0, n_estimators=100, min_samples_leaf=1, max_features=1.0)
    stats = LeafStatistics(forest, X[train], y[train])
    family = RobustRFFamily()
    feats = family.features(stats.rows(), {"alpha": 0.05})
    query = family.features(stats.rows(X[test]), {"alpha": 0.05})
    c = family.costs(feats, y[train])
    rows, curves = [], {}
    for eps in (0.5, 1.0):
        lo, _ = weight_bounds(len(c), eps)
        for lam in LAMBDAS:
            w = solve(weights_problem(c, eps, lam)).theta
            pred = query.z @ w
            rows.append({"eps": eps, "lam": lam, "max_w": w.max(), "at_lower_bound": int((w <= lo + 1e-6).sum()),
                         "effective_trees": 1.0 / float(w @ w), "objective": float(c @ w + lam * w @ w),
                         "test_rmse": float(np.sqrt(np.mean((y[test] - pred) ** 2)))})
            if eps == 1.0:
                curves[lam] = np.sort(w)[::-1]
    rf = float(np.sqrt(np.mean((y[test] - forest.predict(X[test])) ** 2)))
    table = pd.DataFrame(rows)
    table.to_csv(HERE / "weight_path.csv", index=False, float_format="%.6g")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"plain RF (eps = 0, w = 1/T): test RMSE {rf:.4f}; costs c: min {c.min():.4f}, "
          f"mean {c.mean():.4f}, max {c.max():.4f} (scaled by n std(y))")
    _figure(curves, c)


def _figure(curves: dict, c: np.ndarray) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for lam, w in curves.items():
        ax.plot(np.arange(1, len(w) + 1), w, label=f"lambda = {lam:g}")
    ax.axhline(1 / len(c), color="grey", linestyle=":", label="1/T (plain RF)")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("tree, by decreasing weight")
    ax.set_ylabel("w")
    ax.set_title("Robust RF weights as lambda varies (Boston, gamma = 15 %, eps = 1, alpha = 0.05)", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.savefig(HERE / "weight_path.png", dpi=110)


if __name__ == "__main__":
    main()

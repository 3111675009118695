"""Search for the paper's RF setting from its RF column ONLY (Table I, Boston, noise-free and eta = 0.5).

Plain scikit-learn RandomForestRegressor, no robust weights anywhere. For each setting: 30 random
splits per training fraction (seeded by (setting-independent) rep index), RMSE on the rest, and the
same forests scored on test features with N(0, (0.5 sigma_j)^2) noise (sigma_j on the training part).
Run:  PYTHONPATH=. python results/robust_rf/rf_search.py > results/robust_rf/rf_search.csv
      (the search: 30 reps at gamma 15/75/95 %), and a check of chosen settings on all nine
      fractions:  ... rf_search.py --reps 100 --gammas all msl1 depth4-mf1/3 > rf_check.csv
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from afr_cli.data import load_dataset
from afr_cli.protocol import derive_seed

SEARCH_GAMMAS = (0.15, 0.75, 0.95)
ALL_GAMMAS = (0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)
SETTINGS = {  # name -> RandomForestRegressor keyword arguments (100 trees unless said)
    "msl1": {},
    "msl3": {"min_samples_leaf": 3},
    "msl5": {"min_samples_leaf": 5},
    "msl10": {"min_samples_leaf": 10},
    "mf1/3": {"max_features": 1 / 3},
    "mf-sqrt": {"max_features": "sqrt"},
    "depth3": {"max_depth": 3},
    "depth4": {"max_depth": 4},
    "depth5": {"max_depth": 5},
    "depth6": {"max_depth": 6},
    "depth8": {"max_depth": 8},
    "no-bootstrap": {"bootstrap": False},
    "10 trees": {"n_estimators": 10},
    "msl5-depth6": {"min_samples_leaf": 5, "max_depth": 6},
    "leaves16": {"max_leaf_nodes": 16},
    "leaves32": {"max_leaf_nodes": 32},
    "msl4": {"min_samples_leaf": 4},
    "msl5-mf1/3": {"min_samples_leaf": 5, "max_features": 1 / 3},
    "msl3-mf1/3": {"min_samples_leaf": 3, "max_features": 1 / 3},
    "depth3-mf1/3": {"max_depth": 3, "max_features": 1 / 3},
    "depth4-mf1/3": {"max_depth": 4, "max_features": 1 / 3},
    "depth4-sqrt": {"max_depth": 4, "max_features": "sqrt"},
    "depth5-mf1/3": {"max_depth": 5, "max_features": 1 / 3},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--gammas", choices=("search", "all"), default="search")
    parser.add_argument("settings", nargs="*", choices=[*SETTINGS, []])
    args = parser.parse_args()
    X, y = load_dataset("Boston", 0, "documented")
    n = len(y)
    print("setting,train_fraction,noise_eta,rmse_mean,rmse_std,reps")
    for name in args.settings or list(SETTINGS):
        kw = {"n_estimators": 100, **SETTINGS[name]}
        for gamma in SEARCH_GAMMAS if args.gammas == "search" else ALL_GAMMAS:
            clean, noisy = [], []
            for rep in range(args.reps):
                rng = np.random.default_rng(derive_seed(2019, "Boston", rep, int(round(gamma * 100))))
                perm = rng.permutation(n)
                n_tr = int(round(gamma * n))
                tr, te = perm[:n_tr], perm[n_tr:]
                rf = RandomForestRegressor(random_state=rep, n_jobs=1, **kw).fit(X[tr], y[tr])
                sigma = X[tr].std(axis=0, ddof=1)
                Xn = X[te] + rng.normal(size=X[te].shape) * (0.5 * sigma)
                clean.append(np.sqrt(np.mean((y[te] - rf.predict(X[te])) ** 2)))
                noisy.append(np.sqrt(np.mean((y[te] - rf.predict(Xn)) ** 2)))
            for eta, vals in ((0, clean), (0.5, noisy)):
                print(f"{name},{round(gamma * 100)},{eta},{np.mean(vals):.3f},{np.std(vals):.3f},{args.reps}", flush=True)


if __name__ == "__main__":
    main()

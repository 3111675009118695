"""The fast tree path against scikit-learn's own, on a real dataset's split, in one run.

For each ensemble (RF-100, ERT-100, GBM-DT-200, GBM-ERT-200 and one DT, the papers' defaults
otherwise), fitted on the scaled 80 % training split of repetition 0 (Concrete: n = 824): CPU
seconds of ``fit`` and of ``apply`` (the training rows and the 20 % test rows, as the protocol's
leaf statistics apply them) on each path, timed alternately over ``repeats`` rounds, the ratios,
and whether trees, leaf ids and predictions came out byte for byte the same."""

from __future__ import annotations

import time

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from afr_cli.data import load_dataset
from afr_cli.ensembles import FittedEnsemble, get_ensemble
from afr_cli.ensembles.tree_path import FAST, SKLEARN, TREE_PATHS, use_tree_path

ENSEMBLES = (
    ("RF-100", "rf", {"n_estimators": 100}),
    ("ERT-100", "ert", {"n_estimators": 100}),
    ("GBM-DT-200", "gbm-dt", {"n_estimators": 200}),
    ("GBM-ERT-200", "gbm-ert", {"n_estimators": 200}),
    ("DT", "dt", {}),
)


def split_rows(dataset: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scaled training rows, their targets and the scaled test rows of repetition ``seed``."""
    X, y = load_dataset(dataset, 1, "none")
    train, test = train_test_split(np.arange(len(y)), test_size=0.2, random_state=seed)
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), y[train], scaler.transform(X[test])


def fingerprint(fitted: FittedEnsemble, X_train: np.ndarray, X_test: np.ndarray) -> bytes:
    """Every tree's arrays, the leaf ids and predictions of both row sets, as one byte string."""
    parts = []
    for tree in fitted.trees:
        t = tree.tree_
        parts += [t.children_left, t.children_right, t.feature, t.threshold, t.value, t.n_node_samples]
    for X in (X_train, X_test):
        leaves = fitted.apply(X)
        parts += [leaves, np.array(leaves.flags.f_contiguous), fitted.predict(X)]
    return b"".join(np.ascontiguousarray(p).tobytes() for p in parts)


def _one(kind: str, params: dict, X: np.ndarray, y: np.ndarray, Xq: np.ndarray, repeats: int, seed: int) -> dict:
    ensemble = get_ensemble(kind)
    cpu = {path: {"fit": 0.0, "apply": 0.0} for path in TREE_PATHS}
    prints = {}
    for _ in range(repeats):
        for path in TREE_PATHS:
            with use_tree_path(path):
                c0 = time.process_time()
                fitted = ensemble.fit(X, y, seed, **params)
                c1 = time.process_time()
                fitted.apply(X)
                fitted.apply(Xq)
                c2 = time.process_time()
            cpu[path]["fit"] += c1 - c0
            cpu[path]["apply"] += c2 - c1
            prints.setdefault(path, fingerprint(fitted, X, Xq))
    return {
        "kind": kind,
        **{path: {k: round(v, 4) for k, v in cpu[path].items()} for path in TREE_PATHS},
        "fit_ratio": round(cpu[SKLEARN]["fit"] / max(cpu[FAST]["fit"], 1e-9), 2),
        "apply_ratio": round(cpu[SKLEARN]["apply"] / max(cpu[FAST]["apply"], 1e-9), 2),
        "identical": prints[FAST] == prints[SKLEARN],
    }


def run(dataset: str = "Concrete", repeats: int = 3, seed: int = 0) -> dict:
    """Fit and apply CPU seconds of both tree paths per ensemble, summed over ``repeats`` rounds."""
    X, y, Xq = split_rows(dataset, seed)
    rows = {label: _one(kind, params, X, y, Xq, repeats, seed) for label, kind, params in ENSEMBLES}
    return {
        "dataset": dataset,
        "rep": seed,
        "n_train": len(y),
        "n_test": len(Xq),
        "repeats": repeats,
        "ensembles": rows,
    }

"""The solver benchmark's problems, each built as a protocol unit builds it: a real dataset's
80 % training split (repetition 0, papers' rep-index seeding, standard scaling), a forest fitted
on it, the family's features, and the training problem at one grid point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from afr_cli.data import load_dataset
from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import get_family
from afr_cli.solvers.solve import Problem


@dataclass(frozen=True)
class Shape:
    """One benchmarked problem: a family at one grid point on a forest of ``trees`` trees."""

    name: str
    family: str
    trees: int
    design: dict
    mixing: dict
    loss: str = "l2"


SHAPES = (
    Shape("eps-abrf T=100", "eps-abrf", 100, {"tau": 1.0}, {"eps": 0.5}),
    Shape("sat-rf-y w+v", "sat-rf-y", 100, {"tau": 1.0, "kappa": 1.0}, {"eps": 0.5, "gamma": 0.5}),
    Shape(
        "sat-rf-y2 two heads",
        "sat-rf-y2",
        100,
        {"tau": 1.0, "kappa1": 1.0, "kappa2": 1.0},
        {"eps": 0.5, "gamma1": 0.5, "gamma2": 0.5},
    ),
    Shape("larf eps-w T+M", "em-w-larf", 100, {"tau0": 1.0, "M": 20}, {"varsigma": 1e-3}),
    Shape("larf 1000 trees", "em-w-arf", 1000, {"M": 5}, {"varsigma": 1e-3}),
    Shape("eps-abrf L1", "eps-abrf", 100, {"tau": 1.0}, {"eps": 0.5}, loss="l1"),
)


def training_rows(dataset: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The scaled 80 % training rows of repetition ``seed`` (train_test_split(random_state=seed))."""
    X, y = load_dataset(dataset, 1, "none")
    train, _ = train_test_split(np.arange(len(y)), test_size=0.2, random_state=seed)
    return StandardScaler().fit_transform(X[train]), y[train]


def build(shape: Shape, X: np.ndarray, y: np.ndarray, seed: int = 0, mixing: dict | None = None) -> Problem:
    """The shape's training problem on (X, y); ``mixing`` overrides the shape's mixing values."""
    family = get_family(shape.family)
    stats = LeafStatistics(get_ensemble("rf").fit(X, y, seed, n_estimators=shape.trees), X, y)
    feats = family.features(stats.rows(), shape.design)
    return family.training_problem(feats, y, mixing or shape.mixing)

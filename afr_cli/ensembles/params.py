"""Parameters shared by the tree ensembles (scikit-learn's names and the papers' defaults)."""

from __future__ import annotations

from afr_cli.core.params import ENSEMBLE, FeaturesParam, Param

MAX_TREES = 100_000  # a declared bound: a size in the quintillions is refused, not run until killed
N_ESTIMATORS = Param("n_estimators", ENSEMBLE, 100, 1, MAX_TREES, integer=True, doc="number of trees")
MIN_SAMPLES_LEAF = Param(
    "min_samples_leaf", ENSEMBLE, 10, 1, None, integer=True, doc="fewest training rows in a leaf (the papers: 10)"
)
MAX_FEATURES = FeaturesParam("max_features", ENSEMBLE, 1.0, doc="features tried per split (1.0 = all)")
MAX_DEPTH = Param(
    "max_depth",
    ENSEMBLE,
    None,
    1,
    None,
    integer=True,
    choices=(None,),
    doc="deepest level of a tree (null = unlimited)",
)

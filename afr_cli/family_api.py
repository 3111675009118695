"""The building blocks of a model family of one's own: the public API a plugin imports.

A family is a subclass of :class:`Family` with a ``name``, a ``summary``, its hyperparameters
(``params``, each a :class:`Param` of kind ``DESIGN`` (changes the features) or ``MIXING``
(only rescales them)) and three methods:

- ``features(rows, design)``: what the family needs from a :class:`RowTensors` (the keys
  ``rows.keys`` A_k(x), values ``rows.values`` B_k(x), distances ``rows.key_sqdist`` of the
  rows to their leaves' keys), cached on the rows with ``rows.memo`` so every grid point and
  model of a fold shares it;
- ``training_problem(feats, y, mixing)``: a :class:`LinearAttentionProblem` (y ~ r + Phi theta
  under :class:`LinearConstraints`, loss l2 or l1), a :class:`QuadraticProblem` or a
  :class:`LinearProblem`, solved by afr's shared solver layer; None when nothing is trained;
- ``predict(feats, mixing, theta)``: predictions for the rows behind ``feats``.

The protocol, the store, the tables and the scikit-learn estimator do the rest. Name the file in
a config's ``plugins: [my_family.py]`` and use ``family: <name>``; see
docs/tutorial-own-family.md for a family written, run on a CSV and compared with eps-ABRF.

Every object here has a docstring in one style: what it is on the first line, then what it
holds or returns and why.
"""

from __future__ import annotations

from afr_cli.core.params import DESIGN, MIXING, Param
from afr_cli.ensembles import AVERAGE, BOOSTED
from afr_cli.ensembles.leaf_statistics import LeafStatistics, RowTensors, softmax_neg
from afr_cli.models.abrf import EpsABRFFamily, SoftmaxFeatures, softmax_features
from afr_cli.models.base import EPS, TAU, Family, uniform
from afr_cli.solvers.problems import (
    ConstraintBuilder,
    LinearAttentionProblem,
    LinearConstraints,
    LinearProblem,
    QuadraticProblem,
    simplex_constraints,
)

__all__ = [
    # what a family is, and its hyperparameters
    "Family",
    "Param",
    "DESIGN",
    "MIXING",
    "EPS",
    "TAU",
    "AVERAGE",
    "BOOSTED",
    # the rows a family attends over: leaf statistics, keys, values, distances
    "LeafStatistics",
    "RowTensors",
    # softmax features
    "softmax_neg",
    "softmax_features",
    "SoftmaxFeatures",
    "uniform",
    # the problems the solver layer accepts, and their constraints
    "LinearAttentionProblem",
    "QuadraticProblem",
    "LinearProblem",
    "LinearConstraints",
    "ConstraintBuilder",
    "simplex_constraints",
    # a complete family to subclass or read
    "EpsABRFFamily",
]

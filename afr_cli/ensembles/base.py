"""What every base ensemble is: parameters and a fit, and what a fitted one exposes to the families.

A fitted ensemble is a list of scikit-learn trees with an intercept and one weight per tree,
``predict(X) == intercept + sum_t tree_weights[t] * trees[t].predict(X)``, plus a declaration
of the leaf values B the attention families use:

- ``training-mean`` (forests, a single tree): the mean training target of the rows in the leaf,
  over every row the ensemble was fit on (not a tree's bootstrap sample), as the authors' code;
- ``own``: T * tree_weights[t] * the tree's own leaf value (a GBM: T * learning_rate * h_t, the
  AGBoost paper's eq 11), so that the uniform attention 1/T gives back the ensemble's prediction.

``structure`` says how trees combine: ``average`` (a forest: the prediction is a convex
combination of leaf values, intercept 0) or ``boosted`` (an intercept plus a sum of steps).
Families declare which structures they can attend over.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from afr_cli.core.params import Param
from afr_cli.errors import AfrInputError

TRAINING_MEAN, OWN = "training-mean", "own"
AVERAGE, BOOSTED = "average", "boosted"


class FittedEnsemble:
    """Fitted trees (scikit-learn tree estimators, in order), their weights and the intercept.

    ``model`` is the fitted scikit-learn ensemble behind it when there is one (the RF/ERT forest,
    the single tree), whose own ``predict`` and ``apply`` are then used as they are. ``fast``: the
    ensemble was fitted on the fast tree path (``afr_cli.ensembles.tree_path``), and applies and
    predicts on it too: X validated once and each tree's ``tree_`` called directly, in the order
    and layout scikit-learn's own calls give (``afr_cli.ensembles.fast_trees``), the same bytes.
    """

    def __init__(
        self,
        trees: list,
        tree_weights: np.ndarray,
        intercept: float = 0.0,
        leaf_values: str = TRAINING_MEAN,
        structure: str = AVERAGE,
        model: Any = None,
        fast: bool = False,
    ):
        if leaf_values not in (TRAINING_MEAN, OWN):
            raise ValueError(f"leaf_values must be {TRAINING_MEAN!r} or {OWN!r}, got {leaf_values!r}")
        self.trees = list(trees)
        self.tree_weights = np.asarray(tree_weights, dtype=float)
        if self.tree_weights.shape != (len(self.trees),):
            raise ValueError(
                f"{len(self.trees)} trees need {len(self.trees)} tree weights, got shape {self.tree_weights.shape}"
            )
        self.intercept = float(intercept)
        self.leaf_values = leaf_values
        self.structure = structure
        self.model = model
        self.fast = fast

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Node id of the leaf each row of X reaches in each tree, shape (n, T)."""
        if self.fast:
            # scikit-learn's internals, imported where a fitted ensemble is used: a config's check
            # reads the ensembles' parameters and must not import scikit-learn
            from afr_cli.ensembles import fast_trees as ft

            X32 = ft.rows_for_trees(self.model if self.model is not None else self.trees[0], X)
            if ft.is_forest(self.model):
                return ft.forest_leaves(self.trees, X32)
            return ft.stacked_leaves(self.trees, X32)
        if self.model is not None and hasattr(self.model, "apply"):
            leaves = self.model.apply(X)
            return leaves.reshape(len(leaves), -1)
        return np.column_stack([tree.apply(X) for tree in self.trees])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The ensemble's own prediction (the tables' GBM / RF / ERT column)."""
        if self.fast:
            from afr_cli.ensembles import fast_trees as ft

            X32 = ft.rows_for_trees(self.model if self.model is not None else self.trees[0], X)
            if ft.is_forest(self.model):
                return ft.forest_predict(self.trees, X32)
            if self.model is not None:
                return ft.tree_predict(self.model, X32)
            pred = np.full(len(X), self.intercept)
            for weight, tree in zip(self.tree_weights, self.trees):
                pred += weight * ft.tree_predict(tree, X32)
            return pred
        if self.model is not None:
            return self.model.predict(X)
        pred = np.full(len(X), self.intercept)
        for weight, tree in zip(self.tree_weights, self.trees):
            pred += weight * tree.predict(X)
        return pred

    def own_leaf_values(self) -> list[np.ndarray]:
        """Per tree, T * weight * the tree's value at every node (the ``own`` leaf values)."""
        T = self.n_trees
        return [T * w * tree.tree_.value[:, 0, 0] for w, tree in zip(self.tree_weights, self.trees)]


class Ensemble(ABC):
    """A kind of base ensemble: its name, parameters and how to fit it with a seed."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    structure: ClassVar[str] = AVERAGE

    @abstractmethod
    def fit(self, X: np.ndarray, y: np.ndarray, seed: int | None, **params: Any) -> FittedEnsemble:
        """Fit on (X, y) with every random choice drawn from ``seed``; missing params take defaults."""

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.params)

    @classmethod
    def with_defaults(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        return {p.name: params.get(p.name, p.default) for p in cls.params}

    @classmethod
    def check_params(cls, params: Mapping[str, Any], where: str) -> dict[str, Any]:
        """Every parameter checked against its domain and defaults filled in; an unknown name is
        an AfrInputError listing this ensemble's parameters (``where`` prefixes the key)."""
        names = cls.param_names()
        for key in params:
            if key not in names:
                raise AfrInputError(
                    f"{where}.{key}: unknown key; allowed for kind {cls.name}: {', '.join(('id', 'kind') + names)}"
                )
        return {
            p.name: p.check(params[p.name], f"{where}.{p.name}") if p.name in params else p.default for p in cls.params
        }

    @classmethod
    def default_id(cls, params: Mapping[str, Any]) -> str:
        """Label in stores and tables: the name in capitals, with @T when the tree count is not
        the default (RF, ERT, RF@400, DT, GBM-DT)."""
        label = cls.name.upper()
        defaults = {p.name: p.default for p in cls.params}
        if (
            "n_estimators" in defaults
            and params.get("n_estimators", defaults["n_estimators"]) != defaults["n_estimators"]
        ):
            label += f"@{params['n_estimators']}"
        return label


class SklearnClass:
    """A class attribute naming a scikit-learn class, imported when first read.

    The registry's ensembles declare their scikit-learn class (``RandomForest.sklearn_class``), but
    importing scikit-learn imports scipy.stats; validating a config only reads names and parameters,
    so the class is looked up when an ensemble is fit. A subclass may still set a class itself.
    """

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __get__(self, instance: object, owner: type | None = None) -> type:
        return getattr(importlib.import_module(self.module), self.name)

"""The registry of base ensembles: rf, ert, dt, gbm-dt, gbm-ert, or ``module:Class`` of one's own.

Configs (``bases: [{kind: NAME, ...}]``), the protocol and the scikit-learn estimators all look
ensembles up here; nothing else in the engine names one.
"""

from __future__ import annotations

from afr_cli.core.names import hint
from afr_cli.core.plugin_registry import import_plugin
from afr_cli.ensembles.adapters import from_fitted
from afr_cli.ensembles.base import AVERAGE, BOOSTED, OWN, TRAINING_MEAN, Ensemble, FittedEnsemble
from afr_cli.ensembles.gbm import BoostedExtraTrees, BoostedTrees
from afr_cli.ensembles.random_forests import ExtraTrees, RandomForest
from afr_cli.ensembles.tree import DecisionTree
from afr_cli.errors import AfrInputError

ENSEMBLES: dict[str, Ensemble] = {
    e.name: e for e in (RandomForest(), ExtraTrees(), DecisionTree(), BoostedTrees(), BoostedExtraTrees())
}


def get_ensemble(name: str, where: str = "kind") -> Ensemble:
    """The registered ensemble called ``name``, or one of the user's own named ``module:Class``
    (an Ensemble subclass importable by every worker); otherwise an AfrInputError listing what
    is allowed."""
    if isinstance(name, str) and name in ENSEMBLES:
        return ENSEMBLES[name]
    if isinstance(name, str) and ":" in name:
        return import_plugin(name, Ensemble, where, "an ensemble", "params and fit")
    raise AfrInputError(
        f"{where}: unknown ensemble {name!r}; {hint(str(name), ENSEMBLES)}allowed: {', '.join(ENSEMBLES)}, "
        "or module:Class for an ensemble of your own"
    )


def ensembles_help() -> list[tuple[str, str, str]]:
    """(ensemble, summary, parameters) rows for ``afr models``."""
    return [
        (e.name, e.summary, "; ".join(f"{p.name} ({p.allowed()}, default {p.show_default()})" for p in e.params))
        for e in ENSEMBLES.values()
    ]


__all__ = [
    "AVERAGE",
    "BOOSTED",
    "ENSEMBLES",
    "Ensemble",
    "FittedEnsemble",
    "OWN",
    "TRAINING_MEAN",
    "ensembles_help",
    "from_fitted",
    "get_ensemble",
]

"""Model families (the papers' models) and their scikit-learn estimators.

``FAMILIES`` is the registry configs name families from. The SAT-RF families are declared by name
and built from ``afr_cli.models.satrf`` when first looked up, and the estimators (``EpsABRF``,
``LARF``, ``AGBoost``, ``SATRF``, ``RobustRF``, ...) are imported when first asked for: each
subclasses scikit-learn's BaseEstimator, and importing scikit-learn imports scipy.stats, which
``afr validate`` (a config checked against the families' parameters) must not pay for.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

from afr_cli.core.plugin_registry import import_plugin
from afr_cli.dm import DecisionMachine
from afr_cli.errors import AfrInputError
from afr_cli.models.abrf import EpsABRFFamily
from afr_cli.models.agboost import AGBoostFamily, NonParamFamily
from afr_cli.models.base import Family, Param
from afr_cli.models.dm_soft import DMSoftFamily
from afr_cli.models.larf import LARF_FAMILIES, LEAVE_SELF_OUT_FAMILIES
from afr_cli.models.plain import ForestFamily
from afr_cli.models.robust import ROBUST_FAMILIES


class _Declared:
    """A family not built yet: ``module.factory(*args)`` builds it."""

    def __init__(self, module: str, factory: str, *args: Any):
        self.module, self.factory, self.args = module, factory, args

    def build(self) -> Family:
        return getattr(importlib.import_module(self.module), self.factory)(*self.args)


class FamilyRegistry(MutableMapping):
    """name -> Family, in registration order; a declared family is built when first looked up
    (``name in``, iterating names and ``len`` build nothing)."""

    def __init__(self) -> None:
        self._held: dict[str, Family | _Declared] = {}

    def declare(self, name: str, module: str, factory: str, *args: Any) -> None:
        self._held[name] = _Declared(module, factory, *args)

    def __getitem__(self, name: str) -> Family:
        held = self._held[name]
        if isinstance(held, _Declared):
            held = self._held[name] = held.build()
        return held

    def __setitem__(self, name: str, family: Family) -> None:
        self._held[name] = family

    def __delitem__(self, name: str) -> None:
        del self._held[name]

    def __contains__(self, name: object) -> bool:
        return name in self._held

    def __iter__(self) -> Iterator[str]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


# Registered families, by the name configs use in `family:`.
FAMILIES = FamilyRegistry()
FAMILIES.update({f.name: f for f in (ForestFamily(), EpsABRFFamily())})
FAMILIES.update(LARF_FAMILIES)  # the ten LARF variants: eps-arf ... em-w-larf
FAMILIES.update(LEAVE_SELF_OUT_FAMILIES)  # em-w-larf-loo, em-larf-loo (an experiment of ours)
for _name, _variant, _heads in (
    ("sat-rf-y", "y", 1),
    ("sat-rf-x", "x", 1),
    ("sat-rf-yx", "yx", 1),
    ("sat-rf-y2", "y", 2),
):
    FAMILIES.declare(_name, "afr_cli.models.satrf", "satrf_family", _variant, _heads)
FAMILIES[DMSoftFamily.name] = DMSoftFamily()  # dm-soft: soft Decision-Machine trees (an extension)
FAMILIES.update({f.name: f for f in (AGBoostFamily(), NonParamFamily())})  # over boosted ensembles
FAMILIES.update({f.name: f for f in ROBUST_FAMILIES.values()})  # robust-rf, robust-rf-train

# The estimators, imported when first asked for (the module docstring says why).
_ESTIMATORS = {
    "AGBoost": "afr_cli.models.regressors",
    "AGBoostOnFitted": "afr_cli.models.regressors",
    "AttentionForestRegressor": "afr_cli.models.estimator",
    "EpsABRF": "afr_cli.models.regressors",
    "LARF": "afr_cli.models.regressors",
    "RobustRF": "afr_cli.models.robust_estimator",
    "SATRF": "afr_cli.models.regressors",
}


def __getattr__(name: str) -> Any:
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def readings_help() -> list[tuple[str, str, str, str, str]]:
    """(families, what, the paper's text, the authors' code, where in the code) rows: every place
    a registered family's authors' code computes another model than the text (``reading: code``)."""
    groups: dict[tuple, list[str]] = {}
    for name in FAMILIES:
        family = FAMILIES[name]
        if family.code_differences and any(p.name == "reading" for p in family.params):
            groups.setdefault((family.code_source, family.code_differences), []).append(name)
    rows = []
    for (source, differences), names in groups.items():
        label = names[0] if len(names) == 1 else f"{names[0]} ... {names[-1]} ({len(names)})"
        for diff in differences:
            rows.append((label, diff.what, diff.text, diff.code, f"{source} {diff.where}"))
    return rows


def get_family(name: str, where: str = "family") -> Family:
    """The registered family called ``name``, or a family of the user's own named ``module:Class``
    (a Family subclass importable by every worker: installed, or on PYTHONPATH); otherwise an
    AfrInputError listing what is allowed."""
    if name in FAMILIES:
        return FAMILIES[name]
    if ":" in name:
        return import_plugin(name, Family, where, "a family", "features, training_problem and predict")
    raise AfrInputError(
        f"{where}: unknown model family {name!r}; allowed: {', '.join(FAMILIES)}, "
        "or module:Class for a family of your own"
    )


__all__ = [
    "AGBoost",
    "AGBoostOnFitted",
    "DecisionMachine",
    "EpsABRF",
    "FAMILIES",
    "Family",
    "LARF",
    "LARF_FAMILIES",
    "Param",
    "RobustRF",
    "SATRF",
    "get_family",
]

"""The families' registry builds a declared family only when it is looked up: the SAT-RF
families are declared by name so that checking a config that names none of them imports neither
``afr_cli.models.satrf`` nor, through its estimator, scikit-learn. A declared name must be the
name the built family gives itself, and the estimators stay importable from ``afr_cli.models``."""

from __future__ import annotations

import pytest

from afr_cli import models
from afr_cli.models import FAMILIES, FamilyRegistry


def test_every_declared_family_is_built_under_the_name_it_gives_itself():
    for name in FAMILIES:
        assert FAMILIES[name].name == name
    assert list(FAMILIES)[:2] == ["forest", "eps-abrf"] and list(FAMILIES)[-2:] == ["robust-rf", "robust-rf-train"]


def test_names_and_membership_build_nothing_a_lookup_builds_once():
    built = []

    registry = FamilyRegistry()
    registry.declare("counted", __name__, "_build", built)
    assert "counted" in registry and list(registry) == ["counted"] and len(registry) == 1
    assert built == []
    family = registry["counted"]
    assert registry.get("counted") is family and built == [family]
    del registry["counted"]
    assert "counted" not in registry and registry.get("counted") is None


def _build(built: list) -> object:
    family = type("Counted", (), {"name": "counted"})()
    built.append(family)
    return family


@pytest.mark.parametrize("name", ["EpsABRF", "LARF", "AGBoost", "AGBoostOnFitted", "SATRF", "RobustRF"])
def test_the_estimators_are_exported_when_asked_for(name):
    from sklearn.base import BaseEstimator

    assert issubclass(getattr(models, name), BaseEstimator)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        models.Nope  # noqa: B018

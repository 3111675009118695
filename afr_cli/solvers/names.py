"""Checks of a solver and loss name against the solver layer's lists, shared by configs and the
scikit-learn estimators, so an unknown name is an error everywhere and never a silent fallback."""

from __future__ import annotations

from typing import Any

from afr_cli.errors import AfrInputError
from afr_cli.solvers.solve import LOSSES, SOLVERS


def check_solver(value: Any, where: str, error: type[AfrInputError] = AfrInputError) -> str:
    """The solver name as the solver layer spells it (case-insensitive match), or ``error``
    naming ``where`` and the allowed names (``afr_cli.solvers.solve.SOLVERS``, whatever it holds)."""
    by_folded = {name.casefold(): name for name in SOLVERS}
    if not isinstance(value, str) or value.casefold() not in by_folded:
        raise error(f"{where}: {value!r} is not allowed; allowed: {', '.join(SOLVERS)}")
    return by_folded[value.casefold()]


def check_loss(value: Any, where: str, error: type[AfrInputError] = AfrInputError) -> str:
    """The loss name, or ``error`` naming ``where`` and the allowed losses (``afr_cli.solvers.solve.LOSSES``)."""
    if value not in LOSSES:
        raise error(f"{where}: {value!r} is not allowed; allowed: {', '.join(LOSSES)}")
    return value

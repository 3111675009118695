"""The one error type users see: a bad input, reported in one line with exit code 2."""

from __future__ import annotations

import importlib
from types import ModuleType


class AfrInputError(Exception):
    """A user's input (file, key, value) is not acceptable; the message is one line.

    The CLI prints ``error: <message>`` to stderr and exits with code 2, no traceback.
    Messages name the file, the key and what is allowed, e.g.
    ``configs/x.yaml: models[1].grid.eps: 1.5 is outside [0, 1]``.
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class RunFailed(AfrInputError):
    """A run could not go on (a storage fault, a plugin failing in a unit): one line naming the
    file or the unit and the cause, exit code 1. Every unit stored before it is whole."""

    exit_code = 1


class SolverError(RuntimeError):
    """Every solver tried for an attention problem failed: there are no weights to use."""


class InvalidParameterError(AfrInputError, ValueError):
    """An estimator's hyperparameter is not acceptable: raised at ``fit``, as scikit-learn does
    (a ValueError), with the same one-line message a config with that value gets."""


class RunInterrupted(Exception):
    """Ctrl-C stopped a run: the message says how many units are stored and how to resume."""

    exit_code = 130


def require(module: str, purpose: str) -> ModuleType:
    """Import a dependency that only some commands need, or a one-line error saying how to get it
    (an install made with --no-deps, or a trimmed environment, may lack it)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AfrInputError(
            f"{purpose} needs the Python package {module!r}, which is not installed: pip install {module}"
        ) from None

"""Plugins named ``module:Class`` in a config or estimator: import once, check the class, instantiate;
and what guards any plugin's code wherever it runs (an exit attempt refused, its predictions checked)."""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from afr_cli.errors import AfrInputError

_IMPORTED: dict[tuple[str, type], object] = {}


def import_plugin(spec: str, base: type, where: str, what: str, hint: str) -> object:
    """An instance of the class ``module:Class`` (a concrete subclass of ``base`` with a string
    ``name``), imported once per process; otherwise a one-line AfrInputError. ``what`` names the
    plugin in messages ("a family", "an ensemble"), ``hint`` says what the class must provide."""
    key = (spec, base)
    if key in _IMPORTED:
        return _IMPORTED[key]
    module_name, _, class_name = spec.partition(":")
    try:
        with exit_refused():
            module = importlib.import_module(module_name)
    except (Exception, SystemExit) as err:  # any import-time failure, an exit attempt too, is the module's
        raise AfrInputError(
            f"{where}: cannot import module {module_name!r} ({said(err)}); "
            f"{what} of your own must be importable (installed, on PYTHONPATH, or its file "
            "named in the config's plugins:)"
        ) from None
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, base)) or inspect.isabstract(cls):
        raise AfrInputError(
            f"{where}: {spec!r} is not a concrete subclass of {base.__module__.rsplit('.', 1)[0]}."
            f"{base.__name__} ({hint}; see README, 'A model of your own')"
        )
    if not isinstance(getattr(cls, "name", None), str):
        raise AfrInputError(f"{where}: {spec!r} has no class attribute name (a string naming it)")
    try:
        with exit_refused():
            _IMPORTED[key] = cls()
    except (Exception, SystemExit) as err:
        raise AfrInputError(
            f"{where}: {spec!r} failed on construction ({said(err)}); {what} of your own "
            f"must be constructible with no arguments"
        ) from None
    return _IMPORTED[key]


class _ExitAttempt(SystemExit):
    """os._exit called by a plugin (turned into an error we can report)."""


@contextmanager
def exit_refused() -> Iterator[None]:
    """While a plugin is imported, built or run (a unit), ``os._exit`` raises instead of ending the
    process (sys.exit already raises SystemExit): a plugin must never end afr with no word and exit 0."""
    hard_exit = os._exit

    def refuse(code: int) -> None:
        raise _ExitAttempt(code)

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = hard_exit


def said(err: BaseException, when: str = "while being imported or built") -> str:
    """A plugin's or loader's exception in a few words (its type and first line), or its exit
    attempt with ``when`` saying at which call it came ("while being imported", "when afr called it")."""
    if isinstance(err, SystemExit):
        call = "os._exit" if isinstance(err, _ExitAttempt) else "exit"
        return f"it called {call}({err.code!r}) {when}"
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def exit_said(err: BaseException) -> str:
    """How a plugin's exception or exit attempt inside a unit is named in a message."""
    return ("raised " if not isinstance(err, SystemExit) else "") + said(err, "inside the unit")


class WrongPredictions(ValueError):
    """A family's ``predict`` returned something other than one number per row: the
    family's fault (its author's contract), reported in one line naming it."""

    def __init__(self, family: str, message: str):
        super().__init__(message)
        self.family = family

    def __reduce__(self):  # pickled whole from a worker (the default would call it with the message alone)
        return type(self), (self.family, str(self))


def checked_predictions(family: str, pred: object, rows: int) -> np.ndarray:
    """``pred`` as a float array of shape (rows,), or WrongPredictions naming ``family``: a
    (rows, 1) column or any other shape would broadcast against the target and fail deep in
    the scoring (or, worse, score the wrong numbers)."""
    try:
        out = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongPredictions(
            family,
            f"predict returned {type(pred).__name__}, not numbers; a family's predict "
            f"must return an array of shape ({rows},)",
        ) from None
    if out.shape != (rows,):
        raise WrongPredictions(
            family,
            f"predict returned shape {out.shape}; a family's predict must return one "
            f"prediction per row, shape ({rows},)",
        )
    return out

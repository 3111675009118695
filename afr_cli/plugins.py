"""Plugins named ``module:Class`` in a config or estimator: import once, check the class, instantiate."""

from __future__ import annotations

import importlib
import inspect

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
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as err:  # any import-time failure, an exit attempt too, is the module's
        raise AfrInputError(f"{where}: cannot import module {module_name!r} ({_said(err)}); "
                            f"{what} of your own must be importable (installed, or on PYTHONPATH)") from None
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, base)) or inspect.isabstract(cls):
        raise AfrInputError(f"{where}: {spec!r} is not a concrete subclass of {base.__module__.rsplit('.', 1)[0]}."
                            f"{base.__name__} ({hint}; see README, 'A model of your own')")
    if not isinstance(getattr(cls, "name", None), str):
        raise AfrInputError(f"{where}: {spec!r} has no class attribute name (a string naming it)")
    try:
        _IMPORTED[key] = cls()
    except (Exception, SystemExit) as err:
        raise AfrInputError(f"{where}: {spec!r} failed on construction ({_said(err)}); {what} of your own "
                            f"must be constructible with no arguments") from None
    return _IMPORTED[key]


def _said(err: BaseException) -> str:
    """An exception in a few words: its type and first line (an exit attempt says so)."""
    if isinstance(err, SystemExit):
        return f"it called exit({err.code!r}) while being imported or built"
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__

"""A config's ``plugins:``: Python files or modules imported before anything else is checked.

``plugins: [my_family.py]`` (a path relative to the config) or ``plugins: [my_pkg.families]``
(an importable module). Importing one registers every concrete ``Family`` and ``Ensemble``
subclass it defines under its ``name``, so ``family: l1-abrf`` works in that config without
PYTHONPATH, as does ``family: my_family:L1ABRF`` or ``loader: my_family:load``.

A file plugin carries its source text: the runner's workers (loky processes, Dask workers on
other machines) import it from that text when they first run a unit, so they need no copy of
the file nor a shared filesystem.

A dataset's ``loader: my_data:load`` whose ``my_data.py`` sits beside the config needs no
``plugins:`` entry: :func:`beside_config` makes it one, read and imported as if it were listed.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from afr_cli.core.plugin_registry import exit_refused, said
from afr_cli.core.quiet_interrupt import doing
from afr_cli.ensembles import ENSEMBLES, Ensemble
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, Family


@dataclass(frozen=True)
class PluginSource:
    """One ``plugins:`` entry: ``module`` is the name it is imported as (a file's stem);
    ``path`` and ``code`` are the file's location and source (None for an importable module)."""

    entry: str
    module: str
    path: str | None = None
    code: str | None = None


def parse_plugins(node: Any, src: str, config_dir: Path) -> tuple[PluginSource, ...]:
    """The config's ``plugins`` list, each file read (not yet imported)."""
    if node is None:
        return ()
    if not isinstance(node, list) or not all(isinstance(v, str) and v for v in node):
        raise AfrInputError(
            f"{src}: plugins: must be a list of Python files (relative to the config) "
            "or module names, e.g. [my_family.py]"
        )
    out = []
    for i, entry in enumerate(node):
        where = f"{src}: plugins[{i}]"
        if entry.endswith(".py") or "/" in entry:
            path = config_dir / entry
            try:
                code = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                reason = getattr(err, "strerror", None) or str(err)
                raise AfrInputError(
                    f"{where}: cannot read {str(path)!r} ({reason}); paths are relative to the config file"
                ) from None
            stem = path.stem
            if not stem.isidentifier():
                raise AfrInputError(
                    f"{where}: {path.name!r}: the file name must be a Python identifier "
                    "(it is the module name, as in family: {stem}:Class)"
                )
            out.append(PluginSource(entry, stem, str(path.resolve()), code))
        else:
            out.append(PluginSource(entry, entry))
    stems = [p.module for p in out]
    if len(set(stems)) != len(stems):
        raise AfrInputError(f"{src}: plugins: two entries import as the same module name")
    return tuple(out)


def beside_config(module: str, config_dir: Path, listed: tuple[PluginSource, ...]) -> PluginSource | None:
    """The file ``module.py`` beside the config as a plugin (a loader's module found without
    ``plugins:``), or None when it is not there or ``plugins:`` already imports that module."""
    if not module.isidentifier() or any(p.module == module for p in listed):
        return None
    path = config_dir / f"{module}.py"
    if not path.is_file():
        return None
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise AfrInputError(f"{path}: cannot read the loader's module ({reason})") from None
    return PluginSource(path.name, module, str(path.resolve()), code)


def defines_classes(plugin: PluginSource) -> bool:
    """Whether the imported plugin defines a family or ensemble of its own (which workers need)."""
    module = sys.modules.get(plugin.module)
    return module is not None and any(
        issubclass(cls, (Family, Ensemble)) and cls.__module__ == module.__name__
        for _, cls in inspect.getmembers(module, inspect.isclass)
    )


def activate(plugins: tuple[PluginSource, ...], src: str = "config", label: str | None = None) -> None:
    """Import every plugin (once per process) and register the families and ensembles it defines;
    ``label`` names a plugin in messages instead of ``plugins[i]`` (a loader's file beside the config)."""
    for i, plugin in enumerate(plugins):
        where = f"{src}: {label}" if label else f"{src}: plugins[{i}]"
        with doing(f"importing {where} ({plugin.entry})"):
            module = _import(plugin, where)
            _register(module, where)


def _import(plugin: PluginSource, where: str) -> ModuleType:
    held = sys.modules.get(plugin.module)
    if plugin.code is None:
        if held is not None:
            return held
        try:
            with exit_refused():
                return importlib.import_module(plugin.module)
        except (Exception, SystemExit) as err:  # the user's module: any failure, an exit too, in one line
            raise AfrInputError(
                f"{where}: cannot import module {plugin.module!r} ({said(err, 'while being imported')}); "
                "a module plugin must be installed; name a .py file to import it from a path"
            ) from None
    if held is not None:
        if getattr(held, "__file__", None) == plugin.path or getattr(held, "__afr_plugin__", None) == plugin.code:
            return held
        raise AfrInputError(
            f"{where}: a module named {plugin.module!r} is already imported (from "
            f"{getattr(held, '__file__', 'built in')}); rename {plugin.entry}"
        )
    spec = importlib.util.spec_from_loader(plugin.module, loader=None, origin=plugin.path)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = plugin.path
    module.__afr_plugin__ = plugin.code
    sys.modules[plugin.module] = module  # before running it: dataclasses and pickling look it up
    try:
        with exit_refused():  # sys.exit and os._exit while imported are the plugin's failure, never afr's exit
            exec(compile(plugin.code, plugin.path, "exec"), module.__dict__)
    except (Exception, SystemExit) as err:
        del sys.modules[plugin.module]
        frames = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == plugin.path]
        line = frames[-1] if frames else getattr(err, "lineno", None)  # where in the plugin it failed
        at = f" (line {line})" if line else ""
        reason = said(err, "while being imported") if isinstance(err, SystemExit) else f"{type(err).__name__}: {err}"
        raise AfrInputError(f"{where}: {plugin.entry}{at} failed to import: {reason}") from None
    return module


def _register(module: ModuleType, where: str) -> None:
    """Put the module's own concrete Family and Ensemble subclasses into the registries."""
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module.__name__ or inspect.isabstract(cls):
            continue
        for base, registry, what in ((Family, FAMILIES, "family"), (Ensemble, ENSEMBLES, "ensemble")):
            if not issubclass(cls, base) or not isinstance(vars(cls).get("name"), str):
                continue  # only a class that names itself is registered (a subclass may inherit a name)
            held = registry.get(cls.name)
            if held is None:
                registry[cls.name] = _construct(cls, what, where)
            elif type(held) is not cls:
                raise AfrInputError(
                    f"{where}: {what} name {cls.name!r} of {module.__name__}.{cls.__name__} is "
                    f"already taken by {type(held).__module__}.{type(held).__name__}; "
                    "give the class another name"
                )


def _construct(cls: type, what: str, where: str) -> object:
    """An instance of a plugin's class, or one line naming the class and its name: a constructor
    that raises or tries to exit is the plugin's fault, found when the config is read."""
    try:
        with exit_refused():
            return cls()
    except (Exception, SystemExit) as err:
        raise AfrInputError(
            f"{where}: {what} {cls.name!r} ({cls.__module__}.{cls.__name__}) failed on construction "
            f"({said(err, 'while being built')}); a {what} of your own must be constructible with "
            "no arguments"
        ) from None

"""A plugin (a family or ensemble of the user's own, named ``module:Class`` or by the name a
``plugins:`` file registers) that raises or tries to exit inside a unit: the unit is recorded as
failed and the run ends with one line naming the unit, the plugin and the call.

An exception raised by afr's own code in a unit is a bug of afr and keeps its traceback; one
with a frame in a plugin's module is the plugin's, reported in one line naming the call afr made
into it and the line that failed, since its author can reproduce it from the unit's name. An exit attempt
(``sys.exit``, ``os._exit``) inside a unit is never afr's: it is always one line, never the process's silent exit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType

from afr_cli.config.experiment import Experiment
from afr_cli.core.plugin_registry import WrongPredictions, exit_said
from afr_cli.ensembles import ENSEMBLES
from afr_cli.errors import RunFailed
from afr_cli.models import FAMILIES


class UnitFailed(RunFailed):
    """A plugin raised while a unit was computed (pickled from the worker with its message)."""


def _module_file(module_name: str) -> str | None:
    path = getattr(sys.modules.get(module_name), "__file__", None)
    return str(Path(path).resolve()) if path else None


def _is_afr(cls: type) -> bool:
    return cls.__module__ == "afr_cli" or cls.__module__.startswith("afr_cli.")


def plugin_files(exp: Experiment) -> dict[str, str]:
    """Each plugin source file the experiment runs (resolved path) -> how a message names it: a
    ``module:Class`` family or base kind by its spec, a registered family or ensemble of the user's
    own by its name and class, a ``plugins:`` file by its entry."""
    files: dict[str, str] = {}
    for plugin in exp.plugins:  # least specific first: a class's name below takes the file over
        path = plugin.path or _module_file(plugin.module)
        if path:
            files[str(Path(path).resolve())] = repr(plugin.entry)
    named = [(m.family, FAMILIES) for m in exp.models if m.family] + [(b.kind, ENSEMBLES) for b in exp.bases]
    for name, registry in named:
        if ":" in name:
            path = _module_file(name.partition(":")[0])
            if path:
                files[path] = repr(name)
            continue
        held = registry.get(name)
        if held is not None and not _is_afr(type(held)):
            path = _module_file(type(held).__module__)
            if path:
                files[path] = f"{name!r} ({type(held).__module__}.{type(held).__name__})"
    return files


def plugin_names(exp: Experiment) -> list[str]:
    """How messages name every plugin the experiment uses (empty when it uses none)."""
    return list(dict.fromkeys(plugin_files(exp).values()))


def _plugin_frames(files: dict[str, str], tb: TracebackType | None) -> list[tuple[str, str, int]]:
    """(the plugin's name, the function: ``Class.method`` or ``function``, the line) of every frame
    of ``tb`` in one of ``files``, outermost first."""
    found = []
    while tb is not None:
        frame = tb.tb_frame
        label = files.get(str(Path(frame.f_code.co_filename).resolve()))
        if label:
            owner = frame.f_locals.get("self")
            name = frame.f_code.co_name
            found.append((label, f"{type(owner).__name__}.{name}" if owner is not None else name, tb.tb_lineno))
        tb = tb.tb_next
    return found


def failing_plugin(exp: Experiment, err: BaseException) -> str | None:
    """The plugin and the call afr made into it (its outermost frame in ``err``'s traceback), with
    the line that failed (the deepest frame in a plugin), or None when no frame is a plugin's."""
    files = plugin_files(exp)
    if not files:
        return None
    frames = _plugin_frames(files, err.__traceback__)
    if not frames:
        return None
    (label, call, line), (_, inner, inner_line) = frames[0], frames[-1]  # the call afr made; where it failed
    where = f"line {line}" if len(frames) == 1 else f"line {line}; failed in {inner}, line {inner_line}"
    return f"{label} in {call} ({where})"


def unit_failure(exp: Experiment, unit: str, err: BaseException) -> UnitFailed | None:
    """The one-line failure of ``unit`` when a plugin raised ``err`` or anything tried to exit, or
    None when afr itself raised (a bug of afr, kept with its traceback)."""
    if isinstance(err, WrongPredictions):
        return _failed(unit, f"plugin {_family_name(exp, err.family)}: {err}")
    spec = failing_plugin(exp, err)
    if spec is None:
        if not isinstance(err, SystemExit):
            return None
        used = plugin_names(exp)  # an exit from outside a plugin's file (C code, a library it called)
        spec = f"of {', '.join(used)}" if used else "(afr's own code)"
        return _failed(unit, f"code {spec}: {exit_said(err)}")
    return _failed(unit, f"plugin {spec}: {exit_said(err)}")


def _family_name(exp: Experiment, family: str) -> str:
    held = FAMILIES.get(family)
    if held is not None and ":" not in family:
        return f"{family!r} ({type(held).__module__}.{type(held).__name__})"
    return repr(family)


def _failed(unit: str, what: str) -> UnitFailed:
    return UnitFailed(
        f"unit {unit} failed: {what}; the unit is not stored, the units stored before it are kept, "
        "and rerunning the command resumes"
    )


def worker_died(where: str, experiments: list[Experiment]) -> RunFailed:
    """A worker process ended abruptly (a signal, out of memory, a plugin ending its process from
    C code): one line naming the plugins it may have been running."""
    used = list(dict.fromkeys(name for exp in experiments for name in plugin_names(exp)))
    suspects = f"; its units run the plugin{'s' * (len(used) > 1)} {', '.join(used)}" if used else ""
    return RunFailed(
        f"{where}: a worker process died while computing a unit (killed by a signal, out of memory, or a "
        f"plugin ending its process){suspects}; the units stored so far are whole, and rerunning the "
        "same command resumes"
    )

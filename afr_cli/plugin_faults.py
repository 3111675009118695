"""A plugin (a family or ensemble of the user's own, ``module:Class``) that raises inside a unit:
the unit is recorded as failed and the run ends with one line naming the unit and the plugin.

An exception raised by afr's own code in a unit is a bug of afr and keeps its traceback; one
whose deepest frames lie in a plugin's module is the plugin's, reported in one line, since its
author can reproduce it from the unit's name.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from afr_cli.config import Experiment
from afr_cli.errors import RunFailed
from afr_cli.plugins import exit_said


class UnitFailed(RunFailed):
    """A plugin raised while a unit was computed (pickled from the worker with its message)."""


def plugin_specs(exp: Experiment) -> list[str]:
    """The ``module:Class`` plugins an experiment uses: families of its models, kinds of its bases."""
    specs = [m.family for m in exp.models if m.family and ":" in m.family]
    specs += [b.kind for b in exp.bases if ":" in b.kind]
    return list(dict.fromkeys(specs))


def failing_plugin(exp: Experiment, err: BaseException) -> str | None:
    """The plugin whose module holds the deepest frame of ``err``'s traceback, or None."""
    files: dict[str, str] = {}
    for spec in plugin_specs(exp):
        module = sys.modules.get(spec.partition(":")[0])
        path = getattr(module, "__file__", None)
        if path:
            files[str(Path(path).resolve())] = spec
    if not files:
        return None
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        spec = files.get(str(Path(frame.filename).resolve()))
        if spec:
            return spec
    return None


def unit_failure(exp: Experiment, unit: str, err: BaseException) -> UnitFailed | None:
    """The one-line failure of ``unit`` when a plugin raised ``err``, or None when afr itself did."""
    spec = failing_plugin(exp, err)
    if spec is None:
        return None
    return UnitFailed(f"unit {unit} failed: plugin {spec!r}: {exit_said(err)}; the unit is not stored, the units "
                      f"stored before it are kept, and rerunning the command resumes")

"""What a summary table reads from its stores beside the results: the config's dataset order,
and one-line warnings where the numbers say less than they seem to.

- The datasets of a store come in the order its config lists them (the manifest keeps the
  config), several stores' in the order given, each name once.
- Trees that barely split: a tree cannot have more leaves than its training rows allow under the
  base's ``min_samples_leaf``, nor more than ``2**max_depth`` or ``max_leaf_nodes`` (the tree
  parameters the registered ensembles share; an ensemble without them is not judged). The bound
  is computed from what the store records, the base's parameters in the manifest and each unit's
  ``n_train``: where the median unit allows at most ``FEW_LEAVES`` leaves per tree, every
  attention weight has almost nothing to choose between, and the table says so.
- Models that tie: three or more models with exactly the same score on every repetition of a
  dataset and base are named (they most often point to the same cause).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from afr_cli.data.registry import canonical_name
from afr_cli.errors import AfrInputError
from afr_cli.store import open_existing
from afr_cli.tables.format import model_key

FEW_LEAVES = 2  # at most this many leaves per tree: the trees barely split
TIED_MODELS = 3  # this many models or more with identical scores on every repetition are named


def _manifest_and_units(directory: str | Path) -> tuple[dict, pd.DataFrame]:
    reader = open_existing(directory)
    return reader.manifest() or {}, reader.frame("units")


def config_datasets(config: Mapping[str, Any]) -> list[str]:
    """The dataset names of a stored config, in its order (registered names spelt canonically)."""
    names = []
    for entry in config.get("datasets") or []:
        if isinstance(entry, Mapping):
            name = entry.get("name")
        else:
            try:
                name = canonical_name(str(entry))
            except AfrInputError:
                name = str(entry)
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def dataset_order(dirs: Iterable[str | Path]) -> tuple[str, ...]:
    """The datasets in the order the stores' configs list them (first store first)."""
    order: list[str] = []
    for directory in dirs:
        manifest, _ = _manifest_and_units(directory)
        order += [n for n in config_datasets(manifest.get("config") or {}) if n not in order]
    return tuple(order)


def leaf_bound(params: Mapping[str, Any], n_train: float) -> float:
    """The most leaves a tree with these parameters can have on ``n_train`` rows (inf: no bound)."""
    bound = math.inf
    leaf = params.get("min_samples_leaf")
    if isinstance(leaf, int | float) and not isinstance(leaf, bool) and leaf > 0:
        per_leaf = math.ceil(leaf * n_train) if isinstance(leaf, float) and leaf < 1 else int(leaf)
        bound = min(bound, max(1, n_train // max(per_leaf, 1)))
    depth = params.get("max_depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth >= 0:
        bound = min(bound, 2**depth)
    nodes = params.get("max_leaf_nodes")
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 0:
        bound = min(bound, nodes)
    return bound


def _base_params(config: Mapping[str, Any]) -> dict[str, dict]:
    """Each registered base of the config by its id: its parameters with the kind's defaults."""
    from afr_cli.ensembles import ENSEMBLES

    out = {}
    for item in config.get("bases") or []:
        if not isinstance(item, Mapping) or item.get("kind") not in ENSEMBLES:
            continue
        ensemble = ENSEMBLES[item["kind"]]
        params = ensemble.with_defaults({k: v for k, v in item.items() if k not in ("id", "kind")})
        out[str(item.get("id", ensemble.default_id(params)))] = params
    return out


def barely_split(directory: str | Path) -> list[str]:
    """One warning per (dataset, base) of the store whose trees allow at most FEW_LEAVES leaves."""
    manifest, units = _manifest_and_units(directory)
    bases = _base_params(manifest.get("config") or {})
    lines = []
    for (dataset, base), group in units.groupby(["dataset", "base"], sort=False):
        params = bases.get(base)
        if params is None:
            continue
        rows = float(group["n_train"].median())
        bound = leaf_bound(params, rows)
        if bound <= FEW_LEAVES:
            given = ", ".join(
                f"{k} {params[k]}" for k in ("min_samples_leaf", "max_depth", "max_leaf_nodes") if params.get(k)
            )
            lines.append(
                f"warning: {dataset} / {base}: the trees barely split: at most {int(bound)} leaves per tree "
                f"({rows:g} training rows, {given}); the attention models have almost nothing to weigh"
            )
    return lines


def ties(results: pd.DataFrame, metric: str = "r2") -> list[str]:
    """One warning per (dataset, base) where TIED_MODELS or more models score exactly alike on
    every repetition."""
    if metric not in results.columns:
        return []
    lines = []
    for (dataset, base), group in results.groupby(["dataset", "base"], sort=False):
        by_model = group.sort_values("rep").groupby("model", sort=False)[metric].apply(tuple)
        same: dict[tuple, list[str]] = {}
        for model, scores in by_model.items():
            same.setdefault(scores, []).append(str(model))
        for models in same.values():
            if len(models) >= TIED_MODELS:
                lines.append(
                    f"warning: {dataset} / {base}: {len(models)} models score exactly alike on every "
                    f"repetition ({', '.join(sorted(models, key=model_key))}): their differences are not measured here"
                )
    return lines


def table_warnings(dirs: Iterable[str | Path], results: pd.DataFrame, metric: str = "r2") -> list[str]:
    """Every warning of the stores ``dirs`` and their ``results`` (one line each)."""
    lines = [line for directory in dirs for line in barely_split(directory)]
    return lines + ties(results, metric)

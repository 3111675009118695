"""Rows from several stores in one table (``afr table --results A --results B``): each store's
rows stay its own.

- A model held by two of the stores on the same (base, dataset, axes) cell is refused in one line:
  pooling the two would count each split twice (or mix two split schemes) and call the mean one
  over twice the repetitions.
- When a comparison takes A from one store and B from another, their repetitions are paired only
  if the two stores made the same splits (seeding, split seed, training and test sizes, and the
  same data: a synthetic set's draw, a file's bytes); otherwise it is refused in one line, since
  repetition i of one store is not repetition i of the other.

``tag_rows`` adds the two columns these checks read (the store, the split's identity); frames
without them (one store, or a report's own frame) pass through unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.data.registry import DATASETS
from afr_cli.errors import AfrInputError
from afr_cli.store import axis_names, open_existing

STORE = "store"  # column: the --results directory a row was read from
SPLIT = "split"  # column: what made the repetition's split, comparable across stores


def _data_identity(dataset: str, config: dict, data: dict) -> str:
    """What fixes a dataset's rows beyond its name: a file's or loader's hash, a synthetic set's
    draw (data_seed and noise); a registered real-data set is fixed by the registry."""
    if dataset in data:
        return f"data {data[dataset].get('sha256', '?')}"
    spec = DATASETS.get(dataset)
    if spec is not None and (spec.generator or "").startswith("make_"):
        return f"data_seed {config.get('data_seed', 0)}, noise {config.get('synthetic_noise', 'documented')}"
    return ""


def split_identities(directory: str | Path) -> pd.DataFrame:
    """Per stored unit (dataset, base, axes, rep) of ``directory``: the identity of its split."""
    reader = open_existing(directory)
    manifest = reader.manifest()
    config = manifest.get("config") or {}
    data = manifest.get("data") or {}
    seeding = (config.get("protocol") or {}).get("seeding", "derived")
    units = reader.frame("units")
    keys = ["dataset", "base", *[a for a in axis_names() if a in units.columns], "rep"]
    identity = [
        f"{seeding} seeding, split seed {seed}, {n_train}/{n_test} rows"
        + (f", {extra}" if (extra := _data_identity(dataset, config, data)) else "")
        for dataset, seed, n_train, n_test in units[["dataset", "split_seed", "n_train", "n_test"]].itertuples(
            index=False
        )
    ]
    return units[keys].assign(**{SPLIT: identity})


def tag_rows(results: pd.DataFrame, directory: str | Path) -> pd.DataFrame:
    """``results`` of the store in ``directory`` with its STORE and SPLIT columns."""
    splits = split_identities(directory)
    keys = [k for k in splits.columns if k != SPLIT and k in results.columns]
    tagged = results.merge(splits[keys + [SPLIT]], on=keys, how="left", validate="many_to_one")
    return tagged.assign(**{STORE: str(directory)})


def check_one_store_per_model(results: pd.DataFrame, models: set[str] | None = None) -> None:
    """Refuse in one line a model (of ``models``; None: every one) that two stores hold on the
    same (base, dataset, axes) cell."""
    if STORE not in results.columns:
        return
    rows = results if models is None else results[results["model"].isin(models)]
    cell = ["model", "base", "dataset", *[a for a in axis_names() if a in rows.columns]]
    stores = rows.groupby(cell, sort=False)[STORE].unique()
    twice = stores[stores.map(len) > 1]
    if twice.empty:
        return
    (model, base, dataset, *_), held = next(iter(twice.items()))
    raise AfrInputError(
        f"--results: model {model!r} (base {base}, {dataset}) is in {' and '.join(held)}; a table keeps each "
        f"store's rows apart and would pool the two; allowed: each model in one of the stores given "
        f"(drop one --results)"
    )


def check_same_splits(results: pd.DataFrame, a: str, b: str) -> None:
    """Refuse in one line a comparison whose A and B rows come from stores that split differently
    (on a (base, dataset, repetition) both hold)."""
    if SPLIT not in results.columns:
        return
    keys = ["base", "dataset", "rep"]
    sides = [
        results.loc[results["model"] == m, [*keys, STORE, SPLIT]].fillna({SPLIT: ""}).drop_duplicates(keys)
        for m in (a, b)
    ]
    pairs = sides[0].merge(sides[1], on=keys, suffixes=("_a", "_b"))
    differ = pairs[pairs[f"{SPLIT}_a"] != pairs[f"{SPLIT}_b"]]
    if differ.empty:
        return
    first = differ.iloc[0]
    raise AfrInputError(
        f"--compare: {a} ({first[f'{STORE}_a']}) and {b} ({first[f'{STORE}_b']}) were not run on the same "
        f"splits ({first['dataset']}, repetition {first['rep']}: {first[f'{SPLIT}_a']} against "
        f"{first[f'{SPLIT}_b']}); allowed: two models of one store, or of stores with the same seed, seeding, "
        f"test fraction and data"
    )

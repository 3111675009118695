"""Text (categorical) columns of a data file turned into numbers, as a dataset entry's ``encode:`` says.

``encode: onehot`` (or ``ordinal``) encodes every text feature column; a mapping
``encode: {rank: onehot, discipline: ordinal, grade: [low, mid, high]}`` encodes the columns it
names, a list giving the ordinal codes' order. The categories of a column are its distinct values
over the whole file (every row, before any split or ``missing: drop-rows``, never the target),
sorted (numerically when every value is a number, else as text), so a category that a test
split holds is never unseen. A missing cell is no category: in a one-hot column it is a row of
zeros, in an ordinal column a missing value (the entry's ``missing:`` decides). The record of
each encoding (kind and categories) goes into the dataset's identity in the store's manifest, so
a changed encoding is another dataset for the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from afr_cli.data.checks import non_numeric_columns
from afr_cli.errors import AfrInputError

ENCODINGS = ("onehot", "ordinal")
# The suggestion of ``afr datasets info``: two categories make one 0/1 column (ordinal), up to
# this many one 0/1 column each (one-hot); more are most often names or ids, suggested dropped.
SUGGEST_ONEHOT_UP_TO = 20

Spec = str | tuple[tuple[str, str | tuple[str, ...]], ...]


def parse_encode(value: Any, where: str) -> Spec:
    """The entry's ``encode:`` value, checked: ``onehot``/``ordinal`` for every text column, or
    a mapping column -> ``onehot``, ``ordinal`` or a list of its categories in order."""
    allowed = f"allowed: {', '.join(ENCODINGS)}, or a mapping column: onehot | ordinal | [categories in order]"
    if isinstance(value, str):
        if value not in ENCODINGS:
            raise AfrInputError(f"{where}: {value!r} is not allowed; {allowed}")
        return value
    if not isinstance(value, Mapping) or not value:
        raise AfrInputError(f"{where}: must be onehot, ordinal or a non-empty mapping; {allowed}")
    items = []
    for column, kind in value.items():
        if isinstance(kind, list):
            if not kind or len(set(map(str, kind))) != len(kind):
                raise AfrInputError(f"{where}.{column}: must list each category once (the ordinal order)")
            items.append((str(column), tuple(str(k) for k in kind)))
        elif kind in ENCODINGS:
            items.append((str(column), kind))
        else:
            raise AfrInputError(f"{where}.{column}: {kind!r} is not allowed; {allowed}")
    return tuple(items)


@dataclass(frozen=True)
class EncodedFrame:
    """The feature columns with every encoded column replaced by its numbers (``columns`` in
    order) and the record of each encoding for the manifest (column -> kind and categories)."""

    frame: pd.DataFrame
    columns: list[str]
    record: dict[str, dict[str, Any]]


def text_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` that are not numbers (nor booleans), as the checks find them."""
    return [name for name, _, _ in non_numeric_columns(frame)]


def categories(column: pd.Series) -> list[str]:
    """A column's distinct non-missing values as text, sorted numerically when all are numbers."""
    values = column.dropna()
    labels = {_label(v) for v in values}
    numbers = pd.to_numeric(pd.Series(sorted(labels)), errors="coerce")
    if len(labels) and not numbers.isna().any():
        return [label for _, label in sorted(zip(numbers, sorted(labels), strict=True))]
    return sorted(labels)


def _label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def encode_features(
    frame: pd.DataFrame, features: Sequence[str], target: str, spec: Spec | None, where: str
) -> EncodedFrame:
    """``frame[features]`` with the columns ``spec`` names encoded (categories from every row of
    ``frame``); a column it names that is the target, not a feature, or not in the file is one line."""
    if spec is None:
        return EncodedFrame(frame[list(features)], list(features), {})
    if isinstance(spec, str):
        chosen: dict[str, str | tuple[str, ...]] = dict.fromkeys(text_columns(frame[list(features)]), spec)
    else:
        chosen = dict(spec)
        for column in chosen:
            if column == target:
                raise AfrInputError(f"{where}: encode: {column!r} is the target; the target must be numbers")
            if column not in features:
                names = ", ".join(map(str, frame.columns))
                raise AfrInputError(
                    f"{where}: encode: {column!r} is not a feature column (dropped, or not in the "
                    f"file; columns: {names})"
                )
    parts, columns, record = [], [], {}
    for name in features:
        kind = chosen.get(name)
        if kind is None:
            parts.append(frame[[name]])
            columns.append(name)
            continue
        block, record[name] = _encode_column(frame[name], name, kind, where)
        parts.append(block)
        columns.extend(block.columns)
    out = pd.concat(parts, axis=1) if parts else frame[[]]
    return EncodedFrame(out, columns, record)


def _encode_column(
    column: pd.Series, name: str, kind: str | tuple[str, ...], where: str
) -> tuple[pd.DataFrame, dict[str, Any]]:
    labels = column.map(lambda v: None if pd.isna(v) else _label(v))
    if isinstance(kind, tuple):
        cats = list(kind)
        unknown = labels.notna() & ~labels.isin(cats)
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0]) + 1
            raise AfrInputError(
                f"{where}: encode: column {name!r}: {labels.iloc[row - 1]!r} (row {row}) is not in its "
                f"list [{', '.join(cats)}]; add it to the list in its place in the order"
            )
        kind_name = "ordinal"
    else:
        cats, kind_name = categories(column), kind
    if kind_name == "ordinal":
        codes = labels.map({c: float(i) for i, c in enumerate(cats)}).astype(np.float64)
        return pd.DataFrame({name: codes.to_numpy()}, index=column.index), {"as": "ordinal", "categories": cats}
    block = pd.DataFrame(
        {f"{name}={c}": (labels == c).to_numpy(dtype=np.float64) for c in cats},
        index=column.index,
    )
    return block, {"as": "onehot", "categories": cats}


def suggestion(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """What ``afr datasets info`` proposes for text ``columns``: (column -> onehot | ordinal, the
    columns to drop). Two categories make one 0/1 column; up to SUGGEST_ONEHOT_UP_TO one-hot;
    more (names, ids) are dropped."""
    encode, drop = {}, []
    for name in columns:
        k = len(categories(frame[name]))
        if k <= 2:
            encode[name] = "ordinal"
        elif k <= SUGGEST_ONEHOT_UP_TO:
            encode[name] = "onehot"
        else:
            drop.append(name)
    return encode, drop


def spec_text(spec: Mapping[str, str | Sequence[str]]) -> str:
    """An ``encode:`` mapping as the flow-style YAML of a config entry."""
    return (
        "{" + ", ".join(f"{k}: {v if isinstance(v, str) else '[' + ', '.join(v) + ']'}" for k, v in spec.items()) + "}"
    )

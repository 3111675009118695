"""Checks on a dataset read from a user's file or loader, each a one-line AfrInputError.

Each message names the file (or loader), the column and, where it applies, the first bad row,
and says what to do. Rows are counted from 1 over the data rows (the header is not a row).
They run before a run opens its store, so a bad file leaves nothing written.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from afr_cli.errors import AfrInputError

MIN_TEST_ROWS = 2  # R² of a test set needs two rows
MIN_FOLD_ROWS = 2  # ... and so does every inner validation fold


def check_unique_columns(names: Sequence[str], where: str) -> None:
    """Two columns with one name would make ``target``, ``features`` and ``drop`` ambiguous."""
    counts = Counter(str(n) for n in names)
    dup = [n for n in counts if counts[n] > 1]
    if dup:
        raise AfrInputError(
            f"{where}: column {dup[0]!r}: the name is used by {counts[dup[0]]} columns; "
            "column names must be unique (rename one in the file)"
        )


def check_named_columns(names: Sequence[str], where: str) -> None:
    """Every header cell names its column: an unnamed one is most often a row index written with
    the data, which must not become a feature."""
    for j, name in enumerate(names):
        if not str(name).strip():
            raise AfrInputError(
                f"{where}: column {j + 1} has no name in the header (a row index written with the "
                "data?); name it, or write the file without the index (pandas: index=False)"
            )


def check_has_rows(rows: int, where: str) -> None:
    """A file with a header and no data rows has nothing to split (and no column a type)."""
    if rows == 0:
        raise AfrInputError(f"{where}: a header and no data rows; expected at least one row of values under it")


def check_columns_exist(wanted: Sequence[str], names: Sequence[str], where: str, key: str) -> None:
    """Every column ``key`` names (target, features, drop) is a column of the file."""
    for name in wanted:
        if name not in names:
            raise AfrInputError(f"{where}: {key}: no column {name!r}; columns: {', '.join(map(str, names))}")


def non_numeric_columns(frame: pd.DataFrame) -> list[tuple[str, int, object]]:
    """(column, first bad row counted from 1, its value) of every column that is not numbers
    (or booleans): a cell that does not parse as a number makes the column text."""
    found = []
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
            continue
        as_numbers = pd.to_numeric(col, errors="coerce")
        bad = col.notna() & as_numbers.isna()
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 1 if bad.any() else 1
        found.append((str(name), row, col.iloc[row - 1]))
    return found


def check_numeric(frame: pd.DataFrame, where: str, target: str, drop: Sequence[str] = ()) -> None:
    """Every column is numbers (or booleans). A text target is named first; otherwise every text
    feature column is named in the one line, with the one ``drop:`` list that removes them all
    (the entry's own ``drop`` columns kept in it)."""
    found = non_numeric_columns(frame)
    for name, row, value in found:
        if name == target:
            raise AfrInputError(
                f"{where}: column {name!r}: not numeric (row {row}: {value!r}); the target must be numbers"
            )
    if len(found) == 1:
        name, row, value = found[0]
        raise AfrInputError(
            f"{where}: column {name!r}: not numeric (row {row}: {value!r}); encode it "
            f"(encode: {{{name}: onehot}}, or ordinal) or drop it (drop: [{', '.join(combined_drop(drop, [name]))}]); "
            "`afr datasets info FILE --target COL` suggests the entry"
        )
    if found:
        listed = ", ".join(f"{name!r} (row {row}: {value!r})" for name, row, value in found)
        names = [name for name, _, _ in found]
        raise AfrInputError(
            f"{where}: {len(found)} columns are not numeric: {listed}; encode them (encode: onehot, or "
            f"a mapping column: onehot | ordinal) or drop them (drop: [{', '.join(combined_drop(drop, names))}]); "
            "`afr datasets info FILE --target COL` suggests the entry"
        )


def combined_drop(drop: Sequence[str], more: Sequence[str]) -> list[str]:
    """The entry's ``drop`` columns followed by ``more`` (each once): the one list that fixes all."""
    return list(dict.fromkeys([*drop, *more]))


def check_finite(
    frame: pd.DataFrame,
    where: str,
    fix: str = "remove or fill those rows, or drop the column",
    row_numbers: Sequence[int] | None = None,
) -> None:
    """No missing (NaN, empty cell) or infinite value in any column. ``row_numbers`` are the
    frame's rows as counted in the file (from 1) when rows were dropped before this check."""
    values = frame.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    rows, cols = np.nonzero(bad)
    first = int(np.argmin(rows * values.shape[1] + cols))
    row, col = int(rows[first]), int(cols[first])
    kind = "missing value (NaN or empty cell)" if np.isnan(values[row, col]) else f"infinite value ({values[row, col]})"
    count = int(bad[:, col].sum())
    at = int(row_numbers[row]) if row_numbers is not None else row + 1
    if not np.isnan(values[row, col]):
        fix = "fix it in the file or drop the column"
    raise AfrInputError(f"{where}: column {frame.columns[col]!r}: {kind} at row {at} ({count} in the column); {fix}")


# The largest magnitude a value may have: R², the scaling and the attention problems square
# values and sum the squares over the rows, which must stay far below float64's 1.8e308.
MAX_MAGNITUDE = 1e100


def magnitude_problem(frame: pd.DataFrame, row_numbers: Sequence[int] | None = None) -> str | None:
    """The first value of ``frame`` (finite numbers) above MAX_MAGNITUDE in size, as the words of
    a one-line problem (column, row, value, what is allowed and the fix), or None."""
    values = np.abs(frame.to_numpy(dtype=np.float64))
    big = values > MAX_MAGNITUDE
    if not big.any():
        return None
    rows, cols = np.nonzero(big)
    first = int(np.argmin(rows * values.shape[1] + cols))
    row, col = int(rows[first]), int(cols[first])
    at = int(row_numbers[row]) if row_numbers is not None else row + 1
    largest = float(values[:, col].max())
    scale = 10 ** int(np.ceil(np.log10(largest)))
    return (
        f"column {frame.columns[col]!r}: {frame.iat[row, col]:.6g} at row {at} ({int(big[:, col].sum())} in the "
        f"column) is too large; the allowed magnitude is {MAX_MAGNITUDE:g} (R² and the models square the "
        f"values); divide the column by a power of ten in the file (e.g. by {scale:.0e})"
    )


def check_magnitude(frame: pd.DataFrame, where: str, row_numbers: Sequence[int] | None = None) -> None:
    """No value above MAX_MAGNITUDE in size: its square would overflow and every model fail."""
    problem = magnitude_problem(frame, row_numbers)
    if problem:
        raise AfrInputError(f"{where}: {problem}")


def rows_with_missing(frame: pd.DataFrame) -> np.ndarray:
    """A boolean mask of the rows with a missing value (NaN or an empty cell) in any column."""
    return np.isnan(frame.to_numpy(dtype=np.float64)).any(axis=1)


def check_target_varies(y: np.ndarray, where: str, target: str) -> None:
    """A constant target leaves R² undefined (its variance is zero) and nothing to learn."""
    if len(y) and np.all(y == y[0]):
        raise AfrInputError(
            f"{where}: target {target!r}: constant (every row is {y[0]:g}); R² is undefined; "
            "choose another target column"
        )


def smallest_training_rows(n: int, test_fractions: Sequence[float]) -> tuple[int, int]:
    """(training rows, test rows) of the protocol's smallest training split of ``n`` rows.

    Counted as the protocol splits (test = round(fraction n), at least 1) and as scikit-learn's
    train_test_split does for rep-index seeding (test = ceil(fraction n)); the smaller
    training part of the two is the one that must suffice."""
    train, test = n, n
    for fraction in test_fractions:
        for n_test in (max(1, int(round(fraction * n))), math.ceil(fraction * n)):
            train, test = min(train, n - n_test), min(test, n_test)
    return train, test


def rows_needed(test_fractions: Sequence[float], inner_folds: int) -> int:
    """The fewest rows whose smallest split leaves two test rows and two rows per inner fold."""
    n = 1
    while True:
        train, test = smallest_training_rows(n, test_fractions)
        if test >= MIN_TEST_ROWS and train >= MIN_FOLD_ROWS * inner_folds:
            return n
        n += 1


def check_enough_rows(n: int, test_fractions: Sequence[float], inner_folds: int, where: str) -> None:
    """Enough rows for the protocol: two test rows, and two rows in each of the ``inner_folds``
    validation folds of the smallest training split."""
    need = rows_needed(test_fractions, inner_folds)
    if n < need:
        train, _ = smallest_training_rows(n, test_fractions)
        raise AfrInputError(
            f"{where}: {n} rows; the protocol needs at least {need}: its smallest training "
            f"split (test fraction {max(test_fractions):g}) holds {max(train, 0)} rows, and "
            f"{inner_folds} inner folds need {MIN_FOLD_ROWS} rows each (plus "
            f"{MIN_TEST_ROWS} test rows)"
        )


SMALL_ROWS = 50  # below this many rows a dataset is named with a warning: its test split is a handful of rows


def small_data_warning(n: int, test_fractions: Sequence[float], where: str) -> str | None:
    """One line warning that ``n`` rows are few (None from SMALL_ROWS rows up): each repetition's
    test split holds only a handful of rows, so its R² swings widely and one number says little."""
    if n >= SMALL_ROWS:
        return None
    _, test = smallest_training_rows(n, test_fractions)
    return (
        f"warning: {where}: only {n} rows (fewer than {SMALL_ROWS}): a test split holds {test} rows, so one "
        "repetition's R² swings widely (it can fall below 0); run many repetitions and read the spread"
    )

"""Every problem of a data file at once, and the one dataset entry that fixes what an entry can.

A run stops at the first problem of a file (one line, exit 2); ``afr datasets info FILE`` uses
this module instead, so a file with three text columns and missing values is named in one
round: each problem as a line, then the ``{name, file, target, encode, drop, missing}`` entry with
every fix an entry can make combined (each text column in ``encode:``, one 0/1 column for two
categories and one-hot up to afr_cli.data.encode's limit, more, names or ids, in one ``drop:``
list with the columns already dropped; ``missing: drop-rows`` when rows hold a missing value).
Problems no entry can fix (a text or constant target, an infinite value, too few rows) are named
as such.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.data.checks import (
    SMALL_ROWS,
    check_columns_exist,
    combined_drop,
    magnitude_problem,
    non_numeric_columns,
    rows_needed,
    small_data_warning,
)
from afr_cli.data.encode import SUGGEST_ONEHOT_UP_TO, Spec, encode_features, spec_text, suggestion
from afr_cli.data.files import read_data_file

SUGGEST = SUGGEST_ONEHOT_UP_TO
DEFAULT_TEST_FRACTIONS = (0.2,)  # the default protocol: one 80/20 split ...
DEFAULT_INNER_FOLDS = 3  # ... with 3 inner folds


@dataclass
class Survey:
    """What afr would read from a file once the suggested entry is used, and what is wrong now.

    ``problems`` are one line each, with the entry as given; ``unfixable`` counts those no entry
    key fixes; ``drop`` and ``missing`` are the fixed entry's values; ``X``/``y`` the data read
    with them (None when the target itself is unusable)."""

    path: Path
    sha256: str
    target: str
    columns: list[str]
    drop: list[str]
    missing: str
    rows_in_file: int
    encode: dict = field(default_factory=dict)
    rows_dropped: int = 0
    problems: list[str] = field(default_factory=list)
    unfixable: int = 0
    warning: str | None = None
    y: np.ndarray | None = None

    def entry(self) -> str:
        """The config entry that reads the file with every fix an entry can make."""
        text = f"{{name: NAME, file: {self.path.name}, target: {self.target}"
        if self.encode:
            text += f", encode: {spec_text(self.encode)}"
        if self.drop:
            text += f", drop: [{', '.join(self.drop)}]"
        if self.missing != "error":
            text += f", missing: {self.missing}"
        return text + "}"


def survey_file(
    path: Path,
    target: str,
    sep: str | None = None,
    drop: tuple[str, ...] = (),
    missing: str = "error",
    encode: Spec | None = None,
) -> Survey:
    """Read ``path`` and list every problem of reading it with ``target``, ``drop``, ``missing``
    and ``encode``.

    A file that cannot be read as a table, or a named column that is not in it, is still one
    AfrInputError (nothing else can be said about it)."""
    where = str(path)
    data, frame = read_data_file(path, sep, target)
    names = [str(c) for c in frame.columns]
    check_columns_exist(drop, names, where, "drop")
    keep = [n for n in names if n != target and n not in drop]
    if not non_numeric_columns(frame[[target]]):
        encoded = encode_features(frame, keep, target, encode, where)
        frame = pd.concat([encoded.frame, frame[[target]]], axis=1)
        keep = encoded.columns
        given = dict(encode) if isinstance(encode, tuple) else dict.fromkeys(encoded.record, encode)
    else:
        given = {}
    survey = Survey(Path(path), hashlib.sha256(data).hexdigest(), target, keep, list(drop), missing, len(frame), given)
    text = {name: (row, value) for name, row, value in non_numeric_columns(frame[keep + [target]])}
    target_ok = target not in text
    if not target_ok:
        row, value = text.pop(target)
        _unfixable(survey, f"the target {target!r} is not numeric (row {row}: {value!r}); choose a numeric target")
    if text:
        listed = ", ".join(f"{name!r} (row {row}: {value!r})" for name, (row, value) in text.items())
        more, dropped = suggestion(frame, list(text))
        how = []
        if more:
            how.append(
                f"encoded as numbers by encode: in the entry below ({_kinds(more)}), or drop "
                f"{'them' if len(more) > 1 else 'it'} instead"
            )
        if dropped:
            how.append(
                f"dropped by the entry below ({', '.join(dropped)}: more than {SUGGEST} categories, names or ids?)"
            )
        survey.problems.append(
            f"{len(text)} non-numeric column{'s' if len(text) > 1 else ''}: {listed}; {'; '.join(how)}"
        )
        survey.encode = {**survey.encode, **more}
        survey.drop = combined_drop(drop, dropped)
        encoded = encode_features(frame, keep, target, tuple(more.items()) or None, where)
        frame = pd.concat([encoded.frame, frame[[target]]], axis=1)
        survey.columns = [n for n in encoded.columns if n not in dropped]
    if not survey.columns:
        _unfixable(survey, f"no numeric feature column (columns: {', '.join(names)})")
    if survey.columns:
        _values(survey, frame, target_ok)
    return survey


def _kinds(encode: dict[str, str]) -> str:
    """How the suggestion encodes its columns, in words."""
    onehot = [k for k, v in encode.items() if v == "onehot"]
    ordinal = [k for k, v in encode.items() if v == "ordinal"]
    parts = []
    if ordinal:
        parts.append(f"{', '.join(ordinal)}: two categories, one 0/1 column")
    if onehot:
        parts.append(f"{', '.join(onehot)}: one 0/1 column per category")
    return "; ".join(parts)


def _unfixable(survey: Survey, problem: str) -> None:
    survey.problems.append(problem)
    survey.unfixable += 1


def _values(survey: Survey, frame: pd.DataFrame, target_ok: bool) -> None:
    """Missing and infinite values of the columns used, then the rows left and the target."""
    used = survey.columns + ([survey.target] if target_ok else [])
    values = frame[used].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    nan = np.isnan(values)
    gone = nan.any(axis=1)
    if gone.any():
        counts = ", ".join(f"{used[j]} {int(nan[:, j].sum())}" for j in np.flatnonzero(nan.any(axis=0)))
        survey.rows_dropped = int(gone.sum())
        if survey.missing == "error":
            survey.problems.append(
                f"{survey.rows_dropped} of {len(values)} rows have a missing value (NaN or empty "
                f"cell; by column: {counts}); missing: drop-rows in the entry below leaves them out"
            )
            survey.missing = "drop-rows"
    inf = np.isinf(values[~gone])
    if inf.any():
        counts = ", ".join(f"{used[j]} {int(inf[:, j].sum())}" for j in np.flatnonzero(inf.any(axis=0)))
        _unfixable(survey, f"infinite values (by column: {counts}); fix them in the file or drop the column")
    finite = values[~gone]
    if not inf.any() and (big := magnitude_problem(pd.DataFrame(finite, columns=used))):
        _unfixable(survey, big)
    if not target_ok:
        return
    y = values[~gone, -1]
    survey.y = y
    if len(y) == 0:
        _unfixable(survey, "no row is left without a missing value; drop the emptiest columns")
        return
    if np.all(y == y[0]):
        _unfixable(survey, f"the target {survey.target!r} is constant (every row is {y[0]:g}); R² is undefined")
    need = rows_needed(DEFAULT_TEST_FRACTIONS, DEFAULT_INNER_FOLDS)
    if len(y) < need:
        _unfixable(survey, f"{len(y)} rows: fewer than the default protocol needs ({need})")
    elif len(y) < SMALL_ROWS:
        survey.warning = small_data_warning(len(y), DEFAULT_TEST_FRACTIONS, str(survey.path))

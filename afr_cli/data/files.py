"""Datasets of the user's own: a CSV, TSV or Parquet file, or a loader function returning (X, y).

A config's ``datasets:`` entry is a registered name, ``{name, file, target}`` (with optional
``sep``, ``features`` or ``drop``, and ``missing: drop-rows`` to leave out the rows with a missing
value; the path relative to the config file) or ``{name, loader: module:function}``.
``parse_entry`` reads that entry; ``load_source`` reads the data, runs the checks of
``afr_cli.data.checks`` and returns the arrays with their identity: the file's sha256 (or, for a
loader, the sha256 of its arrays), rows and columns, which the store's manifest records (with
the count of rows left out for a missing value) so a changed file cannot silently extend a store.

The name seeds the splits exactly as a registered dataset's name does. Files are read once, in
the process that runs ``afr``; workers (local or Dask) receive the arrays, never the path.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import importlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from afr_cli.core.names import hint
from afr_cli.data.checks import (
    check_columns_exist,
    check_finite,
    check_has_rows,
    check_magnitude,
    check_named_columns,
    check_numeric,
    check_target_varies,
    check_unique_columns,
    rows_with_missing,
)
from afr_cli.data.encode import Spec, encode_features, parse_encode
from afr_cli.data.registry import DATASETS, canonical_name
from afr_cli.errors import AfrInputError

FILE_KEYS = ("name", "file", "target", "sep", "features", "drop", "missing", "encode")
# What a file entry does with a row holding a missing value (NaN, an empty cell) in a column it uses:
# stop with an error naming it (the default), or leave the row out (counted in the manifest).
MISSING = ("error", "drop-rows")
MISSING_FIX = (
    "add missing: drop-rows to the dataset entry to leave those rows out, fill them in the file, or drop the column"
)
LOADER_KEYS = ("name", "loader")
SEPARATORS = (",", ";", "\t", "|")
PARQUET_MAGIC = b"PAR1"


@dataclass(frozen=True)
class FileDataset:
    """A dataset read from a CSV/TSV or Parquet file.

    ``path`` is where the file is (the config's directory joined with what it says), ``given``
    the path as the config wrote it (recorded in the manifest); ``sep`` None means detected."""

    name: str
    path: Path
    given: str
    target: str
    sep: str | None = None
    features: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    missing: str = "error"
    encode: Spec | None = None

    @property
    def where(self) -> str:
        return str(self.path)


@dataclass(frozen=True)
class LoaderDataset:
    """A dataset returned by ``module:function`` (called with no arguments, returning (X, y));
    ``config_dir`` is where a ``module.py`` beside the config is looked for (named in messages)."""

    name: str
    loader: str
    config_dir: str = "."

    @property
    def module(self) -> str:
        return self.loader.partition(":")[0]

    @property
    def function(self) -> str:
        return self.loader.partition(":")[2]

    def import_fix(self) -> str:
        """What to do when the loader's module cannot be imported: the exact places afr looks."""
        beside = Path(self.config_dir) / f"{self.module.replace('.', '/')}.py"
        return (
            f"put {beside} beside the config (found without plugins:), list its path under plugins:, "
            "or install the module"
        )

    @property
    def where(self) -> str:
        return f"loader {self.loader}"


DatasetSource = FileDataset | LoaderDataset


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset's arrays (X float64 (n, m), y float64 (n,)) and its identity for the manifest."""

    X: np.ndarray
    y: np.ndarray
    identity: dict[str, Any]


def parse_entry(item: Any, where: str, config_dir: Path) -> str | DatasetSource:
    """One ``datasets:`` entry: a registered name (returned canonical) or a file or loader source.

    ``where`` prefixes messages (``config.yaml: datasets[0]``); file paths are taken relative
    to ``config_dir``."""
    if not isinstance(item, dict):
        try:
            return canonical_name(str(item))
        except AfrInputError:
            raise AfrInputError(
                f"{where}: unknown dataset {item!r}; {hint(str(item), DATASETS)}allowed: {', '.join(DATASETS)}, or "
                "{name: NAME, file: PATH, target: COLUMN} or {name: NAME, loader: module:function}"
            ) from None
    name = item.get("name")
    if not isinstance(name, str) or not name.strip() or "/" in name or has_control(name):
        raise AfrInputError(
            f"{where}.name: {name!r} is not allowed; a non-empty string without '/' or control "
            "characters (it names the dataset in the store and tables, and seeds its splits)"
        )
    if name in DATASETS or _is_registered(name):
        raise AfrInputError(f"{where}.name: {name!r} is a registered dataset; give your data another name")
    if "file" in item and "loader" in item:
        raise AfrInputError(f"{where}: give file or loader, not both")
    if "loader" in item:
        _only(item, LOADER_KEYS, where)
        loader = item["loader"]
        module, _, function = loader.partition(":") if isinstance(loader, str) else ("", "", "")
        if not module or not function.isidentifier():
            raise AfrInputError(f"{where}.loader: must be module:function (a function returning (X, y))")
        return LoaderDataset(name, loader, str(config_dir))
    if "file" not in item:
        raise AfrInputError(f"{where}: a dataset mapping needs file (with target) or loader")
    _only(item, FILE_KEYS, where)
    given = item["file"]
    if not isinstance(given, str) or not given:
        raise AfrInputError(f"{where}.file: must be a path (relative to the config file)")
    path = config_dir / given
    if not path.is_file():
        raise AfrInputError(f"{where}.file: no such file {str(path)!r} (paths are relative to the config file)")
    target = item.get("target")
    if not isinstance(target, str) or not target:
        raise AfrInputError(f"{where}.target: missing (required): the name of the column to predict")
    sep = item.get("sep")
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
        raise AfrInputError(f"{where}.sep: {sep!r} is not allowed; one character, e.g. ',' ';' or '\\t'")
    if "features" in item and "drop" in item:
        raise AfrInputError(f"{where}: give features or drop, not both")
    features = _names(item, "features", where) if "features" in item else None
    drop = _names(item, "drop", where) if "drop" in item else ()
    missing = item.get("missing", "error")
    if missing not in MISSING:
        raise AfrInputError(
            f"{where}.missing: {missing!r} is not allowed; allowed: {', '.join(MISSING)} "
            "(drop-rows leaves out every row with a missing value in a column it uses)"
        )
    encode = parse_encode(item["encode"], f"{where}.encode") if "encode" in item else None
    return FileDataset(name, path, given, target, sep, features, drop, missing, encode)


def has_control(name: str) -> bool:
    """Whether ``name`` holds a control character (C0, DEL or C1: NUL, TAB, newline ...), which a
    dataset's name must not: it labels table rows and file names, and would break them."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name)


def _is_registered(name: str) -> bool:
    try:
        canonical_name(name)
    except AfrInputError:
        return False
    return True


def _only(item: dict, allowed: tuple[str, ...], where: str) -> None:
    for key in item:
        if key not in allowed:
            raise AfrInputError(f"{where}.{key}: unknown key; allowed: {', '.join(allowed)}")


def _names(item: dict, key: str, where: str) -> tuple[str, ...]:
    value = item[key]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise AfrInputError(f"{where}.{key}: must be a non-empty list of column names")
    return tuple(value)


def load_source(source: DatasetSource) -> LoadedDataset:
    """The checked arrays and identity of a file or loader dataset (one-line errors otherwise)."""
    if isinstance(source, LoaderDataset):
        return _call_loader(source)
    return read_file_dataset(
        source.path,
        source.target,
        source.sep,
        source.features,
        source.drop,
        source.given,
        source.missing,
        source.encode,
    )


def read_data_file(path: Path, sep: str | None, target: str) -> tuple[bytes, pd.DataFrame]:
    """The file's bytes and its table, with the checks every reading of a data file starts with:
    readable, a table, at least one row, and the ``target`` column present (one line each)."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise AfrInputError(f"{where}: cannot read the data file ({err.strerror})") from None
    frame = read_table(data, where, sep, Path(path).suffix.lower())
    check_has_rows(len(frame), where)
    check_columns_exist([target], [str(c) for c in frame.columns], where, "target")
    return data, frame


def read_file_dataset(
    path: Path,
    target: str,
    sep: str | None = None,
    features: tuple[str, ...] | None = None,
    drop: tuple[str, ...] = (),
    given: str | None = None,
    missing: str = "error",
    encode: Spec | None = None,
) -> LoadedDataset:
    """X from the feature columns (all but the target and ``drop``, or ``features``), y from
    ``target``; every check of afr_cli.data.checks applied, the file's bytes hashed as read.
    ``encode`` turns text columns into numbers (afr_cli.data.encode; recorded in the identity).
    ``missing="drop-rows"`` leaves out each row with a missing value in those columns, and the
    identity counts them (``rows_dropped``)."""
    where = str(path)
    data, frame = read_data_file(path, sep, target)
    names = [str(c) for c in frame.columns]
    for key, wanted in (("features", features or ()), ("drop", drop)):
        check_columns_exist(wanted, names, where, key)
    if features is not None and target in features:
        raise AfrInputError(f"{where}: features: lists the target {target!r}; the target cannot be a feature")
    keep = list(features) if features is not None else [n for n in names if n != target and n not in drop]
    if not keep:
        raise AfrInputError(f"{where}: no feature columns left (columns: {', '.join(names)}; target {target!r})")
    encoded = encode_features(frame, keep, target, encode, where)
    keep = encoded.columns
    used = pd.concat([encoded.frame, frame[[target]]], axis=1)
    check_numeric(used, where, target, drop)
    row_numbers = np.arange(1, len(used) + 1)
    dropped = 0
    if missing == "drop-rows":
        gone = rows_with_missing(used)
        dropped = int(gone.sum())
        if dropped == len(used):
            raise AfrInputError(
                f"{where}: missing: drop-rows: every one of the {len(used)} rows has a missing value "
                f"in a column used ({', '.join(keep + [target])}); drop the emptiest columns"
            )
        used, row_numbers = used[~gone], row_numbers[~gone]
    check_finite(used, where, MISSING_FIX, row_numbers)
    check_magnitude(used, where, row_numbers)
    X = np.ascontiguousarray(used[keep].to_numpy(dtype=np.float64))
    y = np.ascontiguousarray(used[target].to_numpy(dtype=np.float64))
    check_target_varies(y, where, target)
    identity = {
        "file": given if given is not None else str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "rows": int(X.shape[0]),
        "columns": keep,
        "target": target,
    }
    if missing == "drop-rows":
        identity["rows_dropped"] = dropped
    if encoded.record:
        identity["encode"] = encoded.record
    return LoadedDataset(X, y, identity)


def read_table(data: bytes, where: str, sep: str | None = None, suffix: str = "") -> pd.DataFrame:
    """A Parquet file (recognised by its magic bytes) or delimited text (``sep``, else detected)
    as a DataFrame, after checking its column names are unique."""
    if data[:4] == PARQUET_MAGIC:
        return _read_parquet(data, where)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise AfrInputError(f"{where}: not a UTF-8 text file nor Parquet (byte {err.start}: {err.reason})") from None
    if not text.strip():
        raise AfrInputError(f"{where}: the file is empty; expected a header line and rows")
    sep = sep or detect_separator(text, suffix)
    try:
        header = next(csv.reader(io.StringIO(text), delimiter=sep))
        check_named_columns(header, where)
        check_unique_columns([h.strip() for h in header], where)
        frame = pd.read_csv(io.StringIO(text), sep=sep, skipinitialspace=True)
    except (pd.errors.ParserError, csv.Error, ValueError) as err:
        raise AfrInputError(
            f"{where}: cannot parse as {_sep_name(sep)}-separated text "
            f"({' '.join(str(err).split())}); give sep: if it is another delimiter"
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_parquet(data: bytes, where: str) -> pd.DataFrame:
    import pyarrow.parquet as pq  # heavy: only for Parquet files

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as err:  # pyarrow raises several types for a damaged file
        raise AfrInputError(f"{where}: cannot read as Parquet ({type(err).__name__}: {err})") from None
    check_unique_columns(table.column_names, where)
    return table.to_pandas()


def detect_separator(text: str, suffix: str = "") -> str:
    """The delimiter of delimited text: the one csv.Sniffer finds among , ; TAB |, else TAB for
    a .tsv file and ',' otherwise."""
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(SEPARATORS)).delimiter
    except csv.Error:
        return "\t" if suffix == ".tsv" else ","


def _sep_name(sep: str) -> str:
    return {"\t": "TAB", ",": "comma", ";": "semicolon", "|": "pipe"}.get(sep, repr(sep))


def _call_loader(source: LoaderDataset) -> LoadedDataset:
    where = source.where
    try:
        module = importlib.import_module(source.module)
    except Exception as err:  # the user's module: any failure is theirs, reported in one line
        raise AfrInputError(f"{where}: cannot import it ({type(err).__name__}: {err}); {source.import_fix()}") from None
    function = loader_function(module, source)
    try:
        result = function()
    except Exception as err:
        raise AfrInputError(f"{where}: raised {type(err).__name__}: {err}") from None
    try:
        X, y = result
        X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
        y = np.ascontiguousarray(np.asarray(y, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise AfrInputError(f"{where}: must return (X, y) of numbers ({err})") from None
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise AfrInputError(f"{where}: returned X {X.shape} and y {y.shape}; expected X (n, m) and y (n,)")
    columns = [f"x{j}" for j in range(X.shape[1])]
    arrays = pd.DataFrame(np.column_stack([X, y]), columns=columns + ["y"])
    check_finite(arrays, where)
    check_magnitude(arrays, where)
    check_target_varies(y, where, "y")
    return LoadedDataset(
        X,
        y,
        {"loader": source.loader, "sha256": array_sha256(X, y), "rows": int(X.shape[0]), "columns": int(X.shape[1])},
    )


def loader_function(module: Any, source: LoaderDataset) -> Any:
    """The loader's function in its imported module; a name the module lacks (a typo) is one line
    naming the module's file and the functions it does define, the closest first."""
    function = getattr(module, source.function, None)
    if callable(function):
        return function
    own = sorted(
        name
        for name, value in vars(module).items()
        if callable(value) and not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    )
    close = difflib.get_close_matches(source.function, own, n=1)
    hint = f"did you mean {source.module}:{close[0]}? " if close else ""
    listed = ", ".join(own) if own else "none"
    origin = getattr(module, "__file__", None) or "built in"
    what = "is not a function" if function is not None else "not found"
    raise AfrInputError(
        f"{source.where}: {source.function!r} {what} in module {source.module!r} ({origin}); {hint}"
        f"the functions it defines: {listed}"
    )


def array_sha256(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 of the float64 arrays with their shapes: a loader's data identity."""
    h = hashlib.sha256()
    for a in (X, y):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()

"""The committed form of a results store: a deterministic, compressed export beside it.

``<dir>/export/`` holds ``manifest.json`` (the store's manifest, the export's format and every
table's columns) and one xz-compressed CSV per table (``units``, ``results``, ``grid``): rows
sorted by key, floats written with ``repr`` (the shortest text that reads back to the same
float), parameters one column each (``params.eps``, ``point.tau``) instead of JSON strings. The
xz format holds no time stamp or file name, so exporting unchanged data gives the same bytes, and
store -> export -> store gives the same rows (the grid's test scores to ``grid_digits``, below).
(xz, not gzip: the grid scores are near-random
digits, and xz's larger window makes the LARF grids 22 % smaller; README, "The results store".) Columns the code does
not know (added by a later schema) are carried by their declared SQLite type.

The grid's test scores (``test_r2``, ``test_mae``, ``test_rmse``; one row per grid point, read
by best-test tables and surfaces) are written to ``grid_digits`` = 7 significant digits, a
relative 5e-8, far below any printed digit; they are most of the export, and the rounding
keeps ``results/`` within its 30 MB budget (README, "The results store").
Every other value, the selected rows' scores among them, is exact; ``grid_digits=0`` keeps the
grid exact too, and the working store always is.

Two groups of grid columns are left out unless asked for: the inner-CV scores (``cv_r2``,
``cv_mae``; ``grid_cv``) and the per-solve log (``solves``: solver, status, objective, ms per
stage; ``grid_solves``). Reports, best-test tables, test-score surfaces and ``afr status`` read
neither, and either would add more than half to the size of the grids, which are most of the
export (README, "The results store"). The working store keeps both.
"""

from __future__ import annotations

import csv
import io
import json
import lzma
import os
import sqlite3
from contextlib import closing
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.store.cache import cached, content_key, source_of
from afr_cli.store.schema import (
    JSON_COLUMNS,
    OPTIONAL_COLUMNS,
    STORE_FILE,
    TABLES,
    axis_defaults,
    axis_names,
    create_tables_sql,
    with_optional_columns,
)
from afr_cli.store.writer import ResultsStore

EXPORT_DIR = "export"
EXPORT_MANIFEST = "manifest.json"
FORMAT = "afr-export/1"
PARAM_COLUMNS = {"results": "params", "grid": "point"}  # dicts written as one column per key
GRID_OPTIONAL = {"grid_cv": ("cv_r2", "cv_mae"), "grid_solves": ("solves",)}  # left out unless kept
GRID_ROUNDED = ("test_r2", "test_mae", "test_rmse")  # to grid_digits significant digits
GRID_DIGITS = 7  # a first export's (and a pre-rounding export's) grid_digits; 0 = exact
NULL_TEXT = r"\N"  # a NULL in a text column ('' stays the empty string)
TABLE_SUFFIX = ".csv.xz"


@lru_cache(maxsize=1)
def decoder_fingerprint() -> bytes:
    """The source of the modules a decoded frame depends on (and the versions of the libraries
    that build and pickle it): part of its cache key, so other code never reads an old entry."""
    return (
        source_of("afr_cli.store.export", "afr_cli.store.schema", "afr_cli.store.cache")
        + f"\0pandas {pd.__version__}\0numpy {np.__version__}".encode()
    )


def has_export(directory: str | Path) -> bool:
    """Whether ``directory`` holds a committed export (its manifest)."""
    return (Path(directory) / EXPORT_DIR / EXPORT_MANIFEST).is_file()


def _kind(declared: str) -> str:
    """SQLite's type affinity of a declared column type: int, real, text or json (anything else)."""
    declared = declared.upper()
    if "INT" in declared:
        return "int"
    if any(t in declared for t in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if any(t in declared for t in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "json"


def rounded(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits, as an export writes a grid score (0: exact)."""
    return float(f"{float(value):.{digits}g}") if digits else float(value)


def _cell(value, kind: str, digits: int = 0) -> str:
    if value is None:
        return NULL_TEXT if kind == "text" else ""
    if kind == "real":
        return repr(rounded(value, digits))
    if kind == "int":
        return str(int(value))
    if kind == "text":
        return value
    return json.dumps(value)


def _value(cell: str, kind: str):
    if kind == "text":
        return None if cell == NULL_TEXT else cell
    if cell == "":
        return None
    if kind == "real":
        return float(cell)
    if kind == "int":
        return int(cell)
    return json.loads(cell)


def _param_cell(value) -> str:
    """A parameter value as a cell: a string as itself unless it would read back as JSON (then
    quoted, as is the empty string, which would read back as "no value"), anything else as JSON
    (numbers keep their exact text: 1 stays 1, 0.25 stays 0.25)."""
    if isinstance(value, str) and value:
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, sort_keys=True)


def _param_value(cell: str):
    try:
        return json.loads(cell)
    except ValueError:
        return cell


def _csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return lzma.compress(text.getvalue().encode("utf-8"), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)


def _export_table(store: ResultsStore, table: str, kept: dict[str, bool], grid_digits: int) -> tuple[bytes, dict]:
    """One table's compressed CSV bytes and its description for manifest.json."""
    columns = store.columns(table)
    rounded = set(GRID_ROUNDED) if table == "grid" else set()
    left_out = (
        {c for option, cols in GRID_OPTIONAL.items() if not kept[option] for c in cols} if table == "grid" else set()
    )
    rows = store.rows(table)
    left_out |= _empty_optional(table, columns, rows)
    keep = [i for i, (name, _) in enumerate(columns) if name not in left_out]
    dict_col = PARAM_COLUMNS.get(table)
    dict_index = next((i for i, (name, _) in enumerate(columns) if name == dict_col), None)
    decoded = [json.loads(r[dict_index]) for r in rows] if dict_index is not None else []
    if any(not isinstance(d, dict) for d in decoded):
        raise AfrInputError(f"{store.path}: {table}.{dict_col}: a value is not a JSON object")
    param_keys = sorted({k for d in decoded for k in d})
    header, body = [], []
    for i in keep:
        name = columns[i][0]
        header += [f"{name}.{k}" for k in param_keys] if i == dict_index else [name]
    kinds = [_kind(columns[i][1]) for i in keep]
    digits = [grid_digits if columns[i][0] in rounded else 0 for i in keep]
    for n, row in enumerate(rows):
        line = []
        for i, kind, d in zip(keep, kinds, digits):
            if i == dict_index:
                params = decoded[n]
                line += [_param_cell(params[k]) if k in params else "" for k in param_keys]
            else:
                line.append(_cell(row[i], kind, d))
        body.append(line)
    description = {"rows": len(rows), "columns": [[columns[i][0], columns[i][1]] for i in keep]}
    if dict_index is not None:
        description["as_columns"] = {dict_col: param_keys}
    return _csv_bytes(header, body), description


def _empty_optional(table: str, columns: list[tuple[str, str]], rows: list[tuple]) -> set[str]:
    """The table's optional columns (``schema.OPTIONAL_COLUMNS``) no row holds a value in: left
    out, so a store from before them (its rows NULL there) exports the same bytes as before."""
    optional = {name for name, _ in OPTIONAL_COLUMNS[table]}
    return {name for i, (name, _) in enumerate(columns) if name in optional and all(row[i] is None for row in rows)}


def export_store(
    directory: str | Path, grid_cv: bool | None = None, grid_solves: bool | None = None, grid_digits: int | None = None
) -> list[Path]:
    """Write (or refresh) ``directory/export/`` from the store; returns the files whose bytes
    changed (none when the data did not). ``grid_cv``/``grid_solves`` None keep the existing
    export's choice (no, for a first export); ``grid_digits`` None likewise (GRID_DIGITS)."""
    directory = Path(directory)
    store = ResultsStore(directory)
    if not store.exists():
        raise AfrInputError(f"{directory}: no results store here (expected {STORE_FILE}) to export")
    previous = ExportedStore(directory).meta() if has_export(directory) else {}
    kept = {
        option: bool(previous.get(option)) if asked is None else asked
        for option, asked in (("grid_cv", grid_cv), ("grid_solves", grid_solves))
    }
    if grid_digits is None:
        grid_digits = int(previous.get("grid_digits", GRID_DIGITS))
    if not 0 <= grid_digits <= 17:
        raise AfrInputError(
            f"grid_digits: {grid_digits} is not allowed; allowed: 1-17 significant digits, or 0 (exact)"
        )
    files, tables = {}, {}
    for table in TABLES:
        files[f"{table}{TABLE_SUFFIX}"], tables[table] = _export_table(store, table, kept, grid_digits)
    meta = {"format": FORMAT, **kept, "grid_digits": grid_digits, "tables": tables, "manifest": store.manifest()}
    files[EXPORT_MANIFEST] = (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    out = directory / EXPORT_DIR
    try:
        out.mkdir(exist_ok=True)
        changed = []
        for name, data in files.items():
            path = out / name
            if path.is_file() and path.read_bytes() == data:
                continue
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
            changed.append(path)
    except OSError as err:
        raise AfrInputError(f"{err.filename or out}: cannot write the export ({err.strerror})") from None
    return changed


class ExportedStore:
    """The read side of an export: the same ``frame``, ``manifest`` and unit keys as a store (both
    satisfy ``afr_cli.store.reader.ResultsReader``)."""

    source = "export"

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.path = self.directory / EXPORT_DIR

    def meta(self) -> dict:
        return self._parsed_meta(self.meta_bytes())

    def meta_bytes(self) -> bytes:
        """manifest.json as stored (a one-line error when it cannot be read)."""
        file = self.path / EXPORT_MANIFEST
        try:
            return file.read_bytes()
        except OSError as err:
            raise AfrInputError(f"{file}: unreadable export manifest ({err})") from None

    def _parsed_meta(self, data: bytes) -> dict:
        file = self.path / EXPORT_MANIFEST
        try:
            meta = json.loads(data.decode("utf-8"))
        except ValueError as err:  # UnicodeDecodeError and JSONDecodeError both
            raise AfrInputError(f"{file}: unreadable export manifest ({err})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise AfrInputError(f"{file}: not an afr export (format must be {FORMAT})")
        return meta

    def manifest(self) -> dict:
        return self.meta()["manifest"]

    def columns(self, table: str) -> list[tuple[str, str]]:
        return [tuple(c) for c in self.meta()["tables"][table]["columns"]]

    def rows(self, table: str) -> list[tuple]:
        """The table's rows as a store returns them, but with the parameter column as dicts."""
        description = self.meta()["tables"][table]
        return self._rows_from(table, description, self.table_bytes(table))

    def table_bytes(self, table: str) -> bytes:
        """The table's compressed file as stored (a one-line error when it cannot be read)."""
        file = self.path / f"{table}{TABLE_SUFFIX}"
        try:
            return file.read_bytes()
        except OSError as err:
            raise AfrInputError(f"{file}: unreadable export table ({err})") from None

    def _rows_from(self, table: str, description: dict, data: bytes) -> list[tuple]:
        """The rows of ``table`` decoded from its compressed bytes ``data``."""
        file = self.path / f"{table}{TABLE_SUFFIX}"
        try:
            with lzma.open(io.BytesIO(data), "rt", encoding="utf-8", newline="") as handle:
                lines = list(csv.reader(handle))
        except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError, csv.Error) as err:
            raise AfrInputError(f"{file}: unreadable export table ({err})") from None
        if not lines:
            raise AfrInputError(f"{file}: empty export table (no header)")
        header, body = lines[0], lines[1:]
        try:
            return self._decode(header, body, description)
        except (ValueError, KeyError, IndexError) as err:
            raise AfrInputError(f"{file}: malformed export table ({err})") from None

    @staticmethod
    def _decode(header: list[str], body: list[list[str]], description: dict) -> list[tuple]:
        as_columns = description.get("as_columns", {})
        slots = []  # per table column: (kind, index) or (None, [(key, index), ...]) for a dict column
        for name, declared in description["columns"]:
            if name in as_columns:
                slots.append((None, [(k, header.index(f"{name}.{k}")) for k in as_columns[name]]))
            else:
                slots.append((_kind(declared), header.index(name)))
        param_cache: dict[str, object] = {}
        out = []
        for line in body:
            row = []
            for kind, where in slots:
                if kind is None:
                    params = {}
                    for key, i in where:
                        cell = line[i]
                        if cell != "":
                            if cell not in param_cache:
                                param_cache[cell] = _param_value(cell)
                            params[key] = param_cache[cell]
                    row.append(params)
                else:
                    row.append(_value(line[where], kind))
            out.append(tuple(row))
        if len(out) != description["rows"]:
            raise ValueError(f"{len(out)} rows, the manifest says {description['rows']}")
        return out

    def done_units(self) -> set[tuple[str, str, int]]:
        return {(r[0], r[1], r[2]) for r in self.rows("units")}

    def done_unit_keys(self) -> set[tuple]:
        """(dataset, base, *axes, rep), as ``ResultsStore.done_unit_keys``."""
        names = [c[0] for c in self.columns("units")]
        defaults = axis_defaults(self.manifest())
        at = [names.index(a) if a in names else None for a in axis_names()]
        return {
            (r[0], r[1], *(r[i] if i is not None else d for i, d in zip(at, defaults)), r[2])
            for r in self.rows("units")
        }

    def frame(self, table: str) -> pd.DataFrame:
        """One table as a DataFrame, JSON columns decoded: the same frame a store gives. Decoded
        once per content: later calls (in any process) read it from the export cache
        (``afr_cli.store.cache``), keyed by the bytes of the manifest and the table's file."""
        raw_meta = self.meta_bytes()
        description = self._parsed_meta(raw_meta)["tables"][table]
        data = self.table_bytes(table)
        key = content_key("frame", table, raw_meta, data, decoder_fingerprint())
        return cached("frames", key, lambda: self._decoded_frame(table, description, data))

    def _decoded_frame(self, table: str, description: dict, data: bytes) -> pd.DataFrame:
        names = [c[0] for c in description["columns"]]
        df = pd.DataFrame.from_records(self._rows_from(table, description, data), columns=names, coerce_float=True)
        for col in JSON_COLUMNS:
            if col in df:
                df[col] = df[col].map(lambda v: json.loads(v) if isinstance(v, str) else v)
        return with_optional_columns(table, df)


def seed_store(directory: str | Path) -> ResultsStore:
    """Build ``directory/store.sqlite`` from its export (a fresh clone extending a committed
    experiment). Built aside and renamed into place, so a failure leaves no store behind."""
    directory = Path(directory)
    export, store = ExportedStore(directory), ResultsStore(directory)
    tmp = directory / (STORE_FILE + ".seeding")
    tmp.unlink(missing_ok=True)
    try:
        with closing(sqlite3.connect(tmp)) as conn, conn:
            conn.executescript(create_tables_sql())
            conn.executemany(
                "INSERT INTO manifest VALUES (?, ?)",
                [(k, json.dumps(v, default=str)) for k, v in export.manifest().items()],
            )
            for table in TABLES:
                columns = export.columns(table)
                present = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                for name, declared in columns:
                    if name not in present:  # a column of a later schema: carried as it came
                        conn.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {declared}')
                dict_col = PARAM_COLUMNS.get(table)
                # an export from before the protocol axes: its units at its config's axis values
                extra = [
                    (a, v)
                    for a, v in zip(axis_names(), axis_defaults(export.manifest()))
                    if a not in {name for name, _ in columns}
                ]
                rows = [
                    tuple(
                        json.dumps(v, sort_keys=True) if name == dict_col else v for (name, _), v in zip(columns, row)
                    )
                    + tuple(v for _, v in extra)
                    for row in export.rows(table)
                ]
                names = ", ".join(f'"{name}"' for name in [n for n, _ in columns] + [a for a, _ in extra])
                marks = ", ".join("?" * (len(columns) + len(extra)))
                conn.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        os.replace(tmp, store.path)
    except (OSError, sqlite3.Error) as err:
        tmp.unlink(missing_ok=True)
        raise AfrInputError(f"{store.path}: cannot seed the store from {export.path} ({err})") from None
    finally:
        tmp.unlink(missing_ok=True)
    return store

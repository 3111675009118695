"""Storage faults in one line naming the file and the cause: a full disk, a file-size limit, a
read-only file system, a file that is not a store, a store whose tables lack a column.

Writes go through SQLite transactions (one per unit), so a fault leaves every stored unit whole
and nothing of the unit being written; the next run resumes from exactly what is stored. These
helpers only turn the fault into a message instead of a 40-line ``sqlite3.OperationalError``.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from afr_cli.errors import RunFailed
from afr_cli.store.schema import TABLES, required_columns

# The columns a results store's tables must have to be read and extended (``schema.required_columns``:
# the declared columns without those later versions added, which opening a store for a run adds).
# tests/test_fault_corpus.py checks this against a store afr creates.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "manifest": ("key", "value"),
    **{table: required_columns(table) for table in TABLES},
}

_CAUSES = (  # (text in SQLite's message or errno, the cause in words)
    ("disk is full", "the disk is full"),
    ("readonly", "the file or its file system is read-only"),
    ("read-only", "the file or its file system is read-only"),
    ("disk i/o error", "a disk I/O error (a full disk or a file-size limit?)"),
    ("not a database", "not a results store (damaged, or another kind of file)"),
    ("malformed", "the store is damaged"),
    ("no such table", "not an afr results store"),
    ("has no column", "the store's schema lacks a column"),
    ("no column named", "the store's schema lacks a column"),
    ("locked", "the store is locked by another process"),
)
_ERRNO_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EFBIG: "the file-size limit was reached",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EDQUOT: "the disk quota is exceeded",
}


def cause_of(err: BaseException) -> str:
    """A storage exception's cause in a few words."""
    if isinstance(err, OSError) and err.errno in _ERRNO_CAUSES:
        return _ERRNO_CAUSES[err.errno]
    text = str(err).lower()
    for needle, cause in _CAUSES:
        if needle in text:
            return f"{cause} ({err})"
    return str(getattr(err, "strerror", None) or err)


@contextmanager
def storage_faults(path: str | Path, doing: str) -> Iterator[None]:
    """Turn a SQLite or OS error inside the block into one line: ``PATH: cannot DOING: CAUSE``;
    the run then ends with exit code 1 (the stored units are whole; a rerun resumes)."""
    try:
        yield
    except (sqlite3.Error, OSError) as err:
        where = getattr(err, "filename", None) or path
        raise RunFailed(
            f"{where}: cannot {doing}: {cause_of(err)}; the units stored so far are whole, "
            f"and rerunning the same command resumes after the fault is fixed"
        ) from None


def missing_column(columns_of) -> tuple[str, str] | None:
    """The first (table, column) of REQUIRED_COLUMNS that ``columns_of(table)`` (a store's
    ``columns``: [(name, type), ...]) lacks, or None when the schema is complete."""
    for table, required in REQUIRED_COLUMNS.items():
        if table == "manifest":
            continue  # read by every store access already; a missing manifest fails there
        have = {name for name, _ in columns_of(table)}
        for column in required:
            if column not in have:
                return table, column
    return None

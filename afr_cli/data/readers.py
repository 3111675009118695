"""Parsers for the raw UCI file formats, one per registry ``format`` value, from bytes in memory.

Parsing the bytes that were just checksummed (not re-opening the file) means what is read is
exactly what was verified.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pandas as pd

from afr_cli.errors import require


def _semicolon_header(data: bytes) -> pd.DataFrame:
    """Wine: ';'-separated, one quoted header line."""
    return pd.read_csv(io.BytesIO(data), sep=";")


def _whitespace(data: bytes) -> pd.DataFrame:
    """Boston, Yacht: runs of spaces, no header; blank lines and padding are skipped."""
    return pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None)


def _excel(data: bytes) -> pd.DataFrame:
    """Concrete: Excel 97-2003 workbook, first sheet, one header row.

    Read with xlrd directly: pandas has deprecated its xlrd engine, and xlrd is what reads .xls.
    """
    xlrd = require("xlrd", "reading Concrete's .xls file")
    sheet = xlrd.open_workbook(file_contents=data).sheet_by_index(0)
    rows = [sheet.row_values(i) for i in range(sheet.nrows)]
    return pd.DataFrame(rows[1:], columns=rows[0] if rows else None)


def _tab(data: bytes) -> pd.DataFrame:
    """Airfoil: TAB-separated, no header, CRLF line ends."""
    return pd.read_csv(io.BytesIO(data), sep="\t", header=None)


READERS: dict[str, Callable[[bytes], pd.DataFrame]] = {
    "semicolon_header": _semicolon_header,
    "whitespace": _whitespace,
    "excel": _excel,
    "tab": _tab,
}
